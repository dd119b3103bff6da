"""zen: a supervisor for many AI coding agents on one machine."""

__version__ = "0.1.0"
