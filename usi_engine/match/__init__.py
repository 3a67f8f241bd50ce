"""Engine-vs-engine matches between USI engines (``scripts/match.py``).

* :mod:`.referee` -- rules and adjudication of one game (python-shogi is the oracle);
* :mod:`.stats` -- pentanomial and trinomial Elo intervals, LOS, SPRT;
* :mod:`.usiproc` -- a USI engine subprocess with deadlines on every answer;
* :mod:`.records` -- CSA and KIF game records;
* :mod:`.runner` -- game loop, clocks, openings, concurrent scheduling, summary;
* :mod:`.cli` -- the command line of ``scripts/match.py``;
* :mod:`.raycluster` -- the games on a Ray cluster (``--ray``; the only module importing ray);
* :mod:`.spsa` -- SPSA's arithmetic and checkpoint (fishtest's form);
* :mod:`.tune`, :mod:`.tunecli` -- SPSA tuning by game pairs (``scripts/tune.py``).
"""
