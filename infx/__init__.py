"""infx: CI toolkit for GPU inference benchmark repositories."""

__version__ = "0.2.0"
