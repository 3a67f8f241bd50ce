"""usi_engine: a shogi engine with a numba-compiled core, speaking USI.

Importing this package is cheap: nothing here imports numba. The heavy parts
(`usi_engine.core`, `usi_engine.position`, `usi_engine.searcher`) are imported
lazily, so that a GUI's `usi` is answered at once.
"""

__version__ = "0.1.0"
ENGINE_NAME = "usi_engine"
ENGINE_AUTHOR = "usi_engine developers"
