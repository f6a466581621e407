"""The package version: the one place it is written (pyproject reads it through hatch)."""

__version__ = "0.1.0"
