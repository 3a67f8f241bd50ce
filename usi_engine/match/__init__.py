"""Engine-vs-engine matches between USI engines (``scripts/match.py``).

* :mod:`.referee` -- rules and adjudication of one game (python-shogi is the oracle);
* :mod:`.stats` -- Elo, confidence interval, LOS, SPRT;
* :mod:`.usiproc` -- a USI engine subprocess with deadlines on every answer;
* :mod:`.records` -- CSA and KIF game records;
* :mod:`.runner` -- game loop, clocks, openings, concurrent scheduling, summary;
* :mod:`.cli` -- the command line of ``scripts/match.py``.
"""
