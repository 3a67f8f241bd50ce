"""The numba world: integers and arrays only, compiled with @njit(cache=True)."""
