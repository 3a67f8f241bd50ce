"""Command line entry point: `usi-engine` and `python -m usi_engine`.

    usi-engine [--config PATH] [--warmup] [--debug]
    usi-engine COMMAND [...]            (the table SUBCOMMANDS: analyse, match, bench, ...)

--config PATH   engine.cfg to read (also: env USI_ENGINE_CONFIG); default: engine.cfg
                at the repository root next to the package, if present
--warmup        compile the numba code (fills numba's cache) and exit
--debug         keep stderr (normally redirected to the log file or discarded)
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

from .server.options import Options

REPO_CFG = Path(__file__).resolve().parent.parent / "engine.cfg"

# Every subcommand, in the order `usi-engine --help` lists them: word -> (module, one line
# for --help).  `usi-engine WORD ...` imports the module only then and runs its main(argv)
# with the rest of the line, so the engine itself (no word) starts without any of them.
# scripts/*.py are wrappers of these (tests/test_docs.py checks both lists).
_C = "usi_engine.commands."
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    # games: analysis, books, matches
    "analyse": ("usi_engine.analysis.cli", "judge every move of a game record (also usi-engine-analyse)"),
    "makebook": (
        "usi_engine.book.makebook",
        "build an opening book (.db) from records or the engine's search",
    ),
    "match": ("usi_engine.match.cli", "engine-vs-engine matches: Elo, SPRT, ponder, Ray"),
    "tune": (
        "usi_engine.match.tunecli",
        "SPSA tuning of the search's constants by game pairs, local or on Ray",
    ),
    "make-openings": (
        _C + "make_openings",
        "a suite of balanced openings for matches, judged by any USI engine",
    ),
    "cshogi-match": (_C + "cshogi_match", "the same match refereed by cshogi's match client"),
    "soak": (_C + "soak", "many short games, then an audit of every USI exchange"),
    "clock-use": (_C + "clock_use", "how much of its clock each engine used, from a match's logs"),
    "move-times": (_C + "move_times", "relay, engine and server time of each move, from a match's logs"),
    "score-gap": (_C + "score_gap", "how a match was lost: score collapses and disagreements"),
    # training data and networks
    "gensfen": (_C + "gensfen", "self-play training positions (PackedSfenValue shards)"),
    "rescore": (_C + "rescore", "training positions scored again by another USI engine"),
    "distill": (_C + "distill", "pretraining positions labelled by the hand-made evaluation"),
    "train": (_C + "train", "train an NNUE network and export nn.bin"),
    # measuring and checking the engine
    "bench": (_C + "bench", "the search benchmark and its node-count signature"),
    "nnue-bench": (_C + "nnue_bench", "the search and the evaluator's parts with a network"),
    "node-rate": (_C + "node_rate", "node rate and depth beside another USI engine, same positions"),
    "move-quality": (_C + "move_quality", "moves at equal nodes, judged by a deeper search"),
    "perft": (_C + "perft", "perft, divide, the perft suite, comparison with cshogi"),
    "make-perft-suite": (_C + "make_perft_suite", "rebuild the perft suite of the tests"),
    "mate": (_C + "mate", "the tsume set: mate-solver benchmark and oracle"),
    "experiments": (_C + "experiments", "the classic search techniques, on against off"),
    "compile-profile": (_C + "compile_profile", "what numba compiles on a cold start, and how long"),
    "perf-profile": (_C + "perf_profile", "where the search spends its time (Linux perf)"),
    "fuzz": (_C + "fuzz", "the fuzz tests with a long budget: cases tried and failures per reader"),
}


def commands_epilog() -> str:
    """The text after the options in `usi-engine --help`: every way to start the command."""
    rows = [
        ("usi-engine", "the USI engine: reads USI commands on stdin (register it in a GUI)"),
        ("usi-engine --warmup", "compile the numba code once (fills its cache) and exit"),
    ]
    rows += [(f"usi-engine {word}", what) for word, (_, what) in SUBCOMMANDS.items()]
    width = max(len(name) for name, _ in rows) + 2
    lines = ["commands (usi-engine COMMAND --help for each one's options):"]
    lines += [f"  {name:<{width}}{what}" for name, what in rows]
    lines += ["", "documentation: README.md and docs/ in the repository"]
    return "\n".join(lines)


def find_config(cli_path: str | None) -> tuple[Path | None, str | None]:
    """The engine.cfg to use, and an error message if an explicitly named one is missing."""
    explicit = cli_path or os.environ.get("USI_ENGINE_CONFIG") or None
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            return None, f"config file not found: {path} (using built-in defaults)"
        return path, None
    if REPO_CFG.is_file():
        return REPO_CFG, None
    return None, None


def build_options(config: Path | None) -> Options:
    options = Options.create()
    if config is not None:
        options.load_cfg(config)
    tuning = os.environ.get("USI_ENGINE_TUNING", options.engine_settings.get("tuning", ""))
    options.tuning = tuning.strip().lower() in ("1", "true", "yes", "on")
    return options


def _log_target(options: Options):
    """engine.cfg [engine] log = true|false|PATH, overridden by env USI_ENGINE_LOG."""
    raw = os.environ.get("USI_ENGINE_LOG", options.engine_settings.get("log", "")).strip()
    if not raw or raw.lower() in ("0", "false", "no", "off"):
        return None
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    return Path(raw).expanduser()


def _silence_stderr(log) -> None:
    """Nothing goes to stderr in normal operation: send fd 2 to the log or to /dev/null."""
    try:
        sys.stderr.flush()
        target = log.file()
        if target is not None:
            target.flush()
            os.dup2(target.fileno(), 2)
        else:
            fd = os.open(os.devnull, os.O_WRONLY)
            os.dup2(fd, 2)
            os.close(fd)
    except OSError:
        pass


class _Quiet:
    """Output that drops the `info string` lines a warmup has no one to show to."""

    @staticmethod
    def info(text: str) -> None:
        pass


def warmup(config: str | None = None, quiet: bool = False) -> int:
    """Do exactly what the first `isready` does (compile, or load from numba's cache, every
    function a game uses), then exit: the GUI's first `isready` then finds the cache full."""
    from .server.backend import Backend

    options = build_options(find_config(config)[0])
    backend = Backend(options, _Quiet(), log=lambda text: None)
    backend.ensure_ready(idle=True)
    backend.wait_for_mate_solver()
    if not quiet:
        print("usi_engine: numba code compiled and cached")
    return 0


def _suggestion(word: str) -> str:
    """The hint after an unknown word: the subcommand it most likely meant, and where the
    list is."""
    import difflib

    close = difflib.get_close_matches(word, SUBCOMMANDS, n=1)
    meant = f"did you mean 'usi-engine {close[0]}'? " if close else ""
    return f" ({meant}usi-engine --help lists the commands)"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] and argv[0] in SUBCOMMANDS:
        import importlib

        return importlib.import_module(SUBCOMMANDS[argv[0]][0]).main(argv[1:])
    parser = argparse.ArgumentParser(
        prog="usi-engine",
        description="USI shogi engine",
        epilog=commands_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--config", metavar="PATH", help="engine.cfg to read (env USI_ENGINE_CONFIG)")
    parser.add_argument("--warmup", action="store_true", help="compile the numba code and exit")
    parser.add_argument("--debug", action="store_true", help="keep stderr for debugging")
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}{_suggestion(unknown[0])}")

    if args.warmup:
        return warmup(args.config)

    warnings.simplefilter("ignore")
    from .server.protocol import Log, UsiProtocol

    config, error = find_config(args.config)
    options = build_options(config)
    messages = [error] if error else []
    target = _log_target(options)
    log = Log()
    if target is not None:
        log.enable(None if target is True else target)
    if not args.debug:
        _silence_stderr(log)
    log.write(f"start, config {config}")

    proto = UsiProtocol(options, log=log, messages=messages)
    try:
        proto.run(hard_exit_after=0.5)
    except KeyboardInterrupt:
        pass
    finally:
        log.write("exit")
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
    # worker threads may sit inside numba code: leave without waiting for them
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
