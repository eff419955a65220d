"""The GitHub edge: Actions environment files and (later) the REST API client."""
