"""The engine's name and version, in one place: the `id` lines of `usi`, the Python API's
`Engine.name`, the package's `__version__` and the installed distribution (pyproject.toml
reads it from here) all take them from this module."""

__version__ = "0.3.0"
ENGINE_NAME = "usi_engine"
ENGINE_AUTHOR = "usi_engine developers"
