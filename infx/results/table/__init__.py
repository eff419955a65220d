"""The results table: what a row is, how rows are keyed, matched and named, and which metrics
are judged. Pure, and imported by every other results package."""
