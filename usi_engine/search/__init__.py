"""The Python driver around the numba core: the searcher, its network and the mate solver.

`searcher.py` owns the core's arrays and runs iterative deepening over them; `factory.py`
builds a searcher with its options and network (the one way to make one); `tsume.py`
answers `go mate`;
`switches.py` declares the search's switches (a plain module: the options read it before
numba loads). Nothing here imports the USI server, the matches or the tools.
"""
