"""The version, in one place: pyproject.toml's packaging metadata reads it from here, and so does
the code (``pysparksources.__version__``, the workers' import probe). It imports nothing, so any
module can read it without importing the package's ``__init__`` and forming a cycle."""

__version__ = "0.1.0"
