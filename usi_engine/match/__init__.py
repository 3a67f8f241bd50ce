"""Engine-vs-engine matches between USI engines (``usi-engine match``).

* :mod:`.referee` -- rules and adjudication of one game (python-shogi is the oracle);
* :mod:`.stats` -- pentanomial and trinomial Elo intervals, LOS, SPRT;
* :mod:`.records` -- CSA and KIF game records;
* :mod:`.config` -- time controls, engines, openings (files and random), the match's settings;
* :mod:`.schedule` -- who plays whom, in game pairs sharing an opening;
* :mod:`.game` -- one game: clocks, ``go``, the players' processes, pondering, the game loop;
* :mod:`.results` -- per-pair statistics, the progress line, the report, summary.json, records on disk;
* :mod:`.runner` -- the match: tables playing the scheduled games concurrently;
* :mod:`.play` -- the choice between this machine (:mod:`.runner`) and a Ray cluster;
* :mod:`.cli` -- the command line of ``usi-engine match``;
* :mod:`.raycluster` -- the games on a Ray cluster (``--ray``; the only module importing ray);
* :mod:`.spsa` -- SPSA's arithmetic and checkpoint (fishtest's form);
* :mod:`.tune`, :mod:`.tunecli` -- SPSA tuning by game pairs (``usi-engine tune``);
* :mod:`.openings` -- opening suites judged by an engine (``usi-engine make-openings``).

The USI engine subprocess with deadlines on every answer is :mod:`usi_engine.usiproc`.
"""
