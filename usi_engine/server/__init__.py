"""The USI server: what a GUI talks to over stdin and stdout.

`protocol.py` reads the commands, `engine.py` (:class:`UsiEngine`) keeps the game and runs
one `go` at a time (`job.py`), `options.py` declares and parses the options, `timeman.py`
turns a clock into a budget. Nothing here imports numba before `isready`: `backend.py`
sets up the search (usi_engine/search/) at the first `isready`.
"""
