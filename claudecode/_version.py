"""The package version, the one place it is spelled."""

__version__ = "0.2.0"
