"""The numba world: integers and arrays only, compiled with `types.jit` (njit, cached, no refcounting)."""
