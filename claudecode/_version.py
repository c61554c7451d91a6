"""The package version, the one place it is spelled."""

__version__ = "0.1.0"
