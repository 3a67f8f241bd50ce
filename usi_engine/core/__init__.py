"""The numba world: integers and arrays only, compiled with `jit` (core/jit.py: njit, cached, no refcounting, once per function)."""
