"""The maintainer's merge helper (`infx merge PR`)."""
