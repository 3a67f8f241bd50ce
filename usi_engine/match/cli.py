"""Command line of ``usi-engine match``: engines, config files, flags -> MatchConfig."""

from __future__ import annotations

import argparse
import configparser
import datetime as dt
import json
import os
import shlex
import shutil
import sys
from typing import Any, Mapping, Optional, Sequence

from ..cluster import ClusterError
from ..interrupt import stop_on_signals
from ..progress import StatusLine
from .play import run_match
from .config import (
    EngineSpec,
    MatchConfig,
    Opening,
    TimeControl,
    load_openings,
    random_openings,
    unique_names,
)
from .records import GameRecord
from .results import MatchResult
from .stats import Sprt, parse_pentanomial

TC_KEYS = {"time": "time_ms", "inc": "inc_ms", "byoyomi": "byoyomi_ms", "nodes": "nodes", "depth": "depth"}

DESCRIPTION = """\
Play a match between USI engines and report W-L-D, Elo with a 95% interval, LOS and
(optionally) an SPRT decision.  Two engines play a match, more a round robin (or a
gauntlet of the first against the others).  Each opening is played twice with colours
swapped.  Records (CSA and KIF), USI logs and summary.json go to --out.
"""

EPILOG = """\
engine keys (--engine KEY=VALUE ...):
  cmd=CMD              command line (quote it if it has spaces; split like a shell)
  name=NAME            display name (default: from the command)
  dir=DIR              working directory of the engine
  option.NAME=VALUE    sent as 'setoption name NAME value VALUE'
  ponder=true|false    think on the opponent's time (default: --ponder)
  time= inc= byoyomi= nodes= depth=   this engine's limits (override the flags)

config file (--config): JSON {"engines": [{"cmd": ..., "options": {...}, ...}],
"games": 100, "byoyomi": 1000, ...} or INI with a [match] section of flag values and
one [engine NAME] section per engine holding the engine keys above.  Flags given on
the command line win over the file; --engine engines are added after the file's.

examples:
  usi-engine match --engine cmd="python -m usi_engine" name=new \\
                   --engine cmd="python -m usi_engine" name=old dir=../old \\
                   --games 200 --byoyomi 1000 --random-openings 8 --sprt 0 10
  usi-engine match --engine cmd=usi-engine --engine cmd=../shared/opponents/gnushogi-usi \\
                   --games 10 --byoyomi 1000
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="usi-engine match",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--engine",
        action="append",
        nargs="+",
        metavar="KEY=VALUE",
        default=[],
        help="an engine: cmd=CMD [name=NAME] [dir=DIR] [option.NAME=VALUE ...] "
        "[byoyomi=MS time=MS inc=MS nodes=N depth=N]; repeat for each engine",
    )
    p.add_argument("--config", metavar="FILE", help="INI or JSON file with engines and settings")
    p.add_argument("--games", type=int, help="games per pair of engines (default 10)")
    p.add_argument(
        "--concurrency", type=int, help=f"games played at the same time (default: cores = {os.cpu_count()})"
    )
    p.add_argument("--byoyomi", type=int, metavar="MS", help="byoyomi per move in ms")
    p.add_argument("--time", type=int, metavar="MS", help="main time per game in ms")
    p.add_argument("--inc", type=int, metavar="MS", help="Fischer increment per move in ms")
    p.add_argument("--nodes", type=int, metavar="N", help="node limit per move (go nodes N)")
    p.add_argument("--depth", type=int, metavar="N", help="depth limit per move (go depth N)")
    p.add_argument(
        "--margin",
        type=int,
        metavar="MS",
        help="extra time allowed before a move loses on time (default 300)",
    )
    p.add_argument(
        "--hang-timeout",
        type=int,
        metavar="MS",
        help="after the time is up, wait this long after 'stop' before an engine "
        "counts as hung and is killed (default 5000)",
    )
    p.add_argument(
        "--move-timeout",
        type=int,
        metavar="MS",
        help="longest move with no clock (nodes/depth only) (default 60000)",
    )
    p.add_argument(
        "--ready-timeout",
        type=float,
        metavar="S",
        help="wait for usiok/readyok, e.g. numba compilation (default 120)",
    )
    p.add_argument(
        "--openings", metavar="FILE", help="openings, one per line: startpos|sfen SFEN|SFEN [moves ...]"
    )
    p.add_argument(
        "--opening-start",
        type=int,
        metavar="N",
        help="begin with the N-th opening (from 1) and wrap around: a continued "
        "test (--sprt-prior) starts where its earlier runs stopped",
    )
    p.add_argument(
        "--random-openings",
        type=int,
        metavar="PLIES",
        help="random balanced openings of PLIES random legal moves",
    )
    p.add_argument("--max-moves", type=int, metavar="N", help="draw after N plies (default 256)")
    p.add_argument(
        "--sprt",
        nargs="+",
        type=float,
        metavar="X",
        help="ELO0 ELO1 [ALPHA BETA]: stop when the SPRT of the first engine "
        "decides (alpha = beta = 0.05 by default)",
    )
    p.add_argument(
        "--sprt-prior",
        metavar="PAIRS",
        help="pair counts N-N-N-N-N of earlier runs of the same test, as the progress "
        "line prints them: the SPRT adds them to this run's, so a test stopped "
        "at --games goes on where it was",
    )
    p.add_argument(
        "--gauntlet",
        action="store_true",
        default=None,
        help="with 3+ engines: the first plays each other (default round robin)",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        help="directory for games/, logs/, summary.json (default match-results/<date-time>)",
    )
    p.add_argument("--seed", type=int, help="seed of the random openings")
    p.add_argument("--event", help="event name written to the records")
    p.add_argument(
        "--ponder",
        action="store_true",
        default=None,
        help="engines think on the opponent's time as in a GUI: USI_Ponder=true, "
        "'go ponder' on the engine's ponder move after its bestmove, "
        "'ponderhit' when the opponent plays it (the clock runs from there), "
        "else 'stop', the answer discarded, and a normal 'go'",
    )
    p.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="play the games on a Ray cluster: ADDRESS of its head (host:6379 or "
        "ray://host:10001), 'auto' (the cluster 'ray start' made here) or "
        "'local' (a new one on this machine); see docs/scaling.md",
    )
    p.add_argument(
        "--ray-working-dir",
        metavar="DIR",
        help="with --ray: ship DIR to every node; engines run there (so "
        'cmd="python -m usi_engine" runs this checkout on each node)',
    )
    p.add_argument(
        "--ray-cpus-per-game",
        type=float,
        metavar="N",
        help="with --ray: CPUs a game reserves on its node (default 1)",
    )
    p.add_argument("--quiet", action="store_true", default=None, help="no progress line")
    return p


DEFAULTS: dict[str, Any] = {
    "games": 10,
    "margin": 300,
    "hang_timeout": 5000,
    "move_timeout": 60000,
    "ready_timeout": 120.0,
    "max_moves": 256,
    "gauntlet": False,
    "quiet": False,
    "event": "usi_engine match",
    "ponder": False,
}


def parse_engine_tokens(tokens: Sequence[str]) -> dict[str, str]:
    """``["cmd=x y", "option.Hash=64"]`` -> dict; errors on tokens without ``=``."""
    fields: dict[str, str] = {}
    for token in tokens:
        key, sep, value = token.partition("=")
        if not sep:
            raise ValueError(f"engine argument {token!r} is not KEY=VALUE")
        fields[key.strip()] = value
    return fields


def default_name(cmd: Sequence[str]) -> str:
    """A name from the command: first word that is not an interpreter or a flag."""
    for word in cmd:
        base = os.path.basename(word)
        if word.startswith("-") or base.startswith("python"):
            continue
        return os.path.splitext(base)[0] or base
    return "engine"


def engine_from_fields(fields: Mapping[str, Any], flags: Mapping[str, Any]) -> EngineSpec:
    """An EngineSpec from engine keys; missing limits come from the global ``flags``."""
    if "cmd" not in fields:
        raise ValueError(f"engine without cmd=: {dict(fields)}")
    raw = fields["cmd"]
    cmd = list(raw) if isinstance(raw, list) else shlex.split(str(raw))
    options = {k[len("option.") :]: str(v) for k, v in fields.items() if k.startswith("option.")}
    options.update({str(k): str(v) for k, v in dict(fields.get("options", {})).items()})
    tc = TimeControl(
        **{attr: int(fields.get(key, flags.get(key) or 0) or 0) for key, attr in TC_KEYS.items()}
    )
    cwd = fields.get("dir")
    ponder = _truth(fields.get("ponder", flags.get("ponder", False)))
    return EngineSpec(
        cmd, str(fields.get("name") or default_name(cmd)), options, tc, str(cwd) if cwd else None, ponder
    )


def _truth(value: Any) -> bool:
    """A boolean from a flag, a JSON value or an INI/engine-key string."""
    if isinstance(value, str):
        if value.lower() in ("1", "true", "yes", "on"):
            return True
        if value.lower() in ("0", "false", "no", "off", ""):
            return False
        raise ValueError(f"not a boolean: {value!r} (true or false)")
    return bool(value)


def load_config(path: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(global settings, engine key dicts) of a JSON or INI config file."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if text.lstrip().startswith("{"):
        data = json.loads(text)
        engines = data.pop("engines", [])
        return {k.replace("-", "_"): v for k, v in data.items()}, engines
    ini = configparser.ConfigParser(interpolation=None)
    ini.optionxform = str  # keep option names' case
    ini.read_string(text)
    settings: dict[str, Any] = {}
    engines = []
    for section in ini.sections():
        if section == "match":
            settings = {k.replace("-", "_"): _ini_value(k, v) for k, v in ini[section].items()}
        elif section.startswith("engine"):
            fields = dict(ini[section])
            fields.setdefault("name", section[len("engine") :].strip() or "")
            engines.append(fields)
    return settings, engines


def _ini_value(key: str, value: str) -> Any:
    if key == "sprt":
        return [float(x) for x in value.split()]
    if value.lower() in ("true", "yes", "on"):
        return True
    if value.lower() in ("false", "no", "off"):
        return False
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def merged_settings(args: argparse.Namespace) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Flags over config file over defaults; engine key dicts from both."""
    settings: dict[str, Any] = dict(DEFAULTS)
    engines: list[dict[str, Any]] = []
    if args.config:
        try:
            file_settings, engines = load_config(args.config)
        except OSError as exc:
            raise ValueError(f"{args.config}: {exc.strerror or exc}") from None
        except (ValueError, configparser.Error) as exc:  # JSON, INI or UTF-8 errors
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ValueError(f"{args.config}: not a match config ({first[:200]})") from None
        if not file_settings and not engines:
            raise ValueError(f"{args.config}: empty config (no settings, no engine)")
        settings.update(file_settings)
    settings.update({k: v for k, v in vars(args).items() if v is not None and k not in ("engine", "config")})
    engines += [parse_engine_tokens(tokens) for tokens in args.engine]
    if not any(settings.get(k) for k in TC_KEYS) and not any(any(e.get(k) for k in TC_KEYS) for e in engines):
        settings["byoyomi"] = 1000  # nothing given: 1 s per move
    return settings, engines


def make_sprt(values: Optional[Sequence[float]], prior: Any = None) -> Optional[Sprt]:
    """The SPRT of ``--sprt`` and ``--sprt-prior`` (N-N-N-N-N, or a list from a JSON config)."""
    if not values:
        if prior:
            raise ValueError("--sprt-prior needs --sprt")
        return None
    if len(values) not in (2, 4):
        raise ValueError("--sprt takes ELO0 ELO1 [ALPHA BETA]")
    if not prior:
        return Sprt(*values)
    if isinstance(prior, (list, tuple)):
        return Sprt(*values, prior=tuple(int(c) for c in prior))
    return Sprt(*values, prior=parse_pentanomial(str(prior)))


def command_problem(cmd: Sequence[str], cwd: Optional[str] = None) -> Optional[str]:
    """Why an engine command cannot start here (None when it can): its program is missing,
    not executable, or not on PATH; or its working directory is missing."""
    if not cmd:
        return "empty engine command"
    if cwd and not os.path.isdir(cwd):
        return f"{cwd}: no such working directory"
    program = cmd[0]
    if os.path.dirname(program):
        path = program if os.path.isabs(program) or not cwd else os.path.join(cwd, program)
        if not os.path.isfile(path):
            return f"{program}: no such file"
        if not os.access(path, os.X_OK):
            return f"{program}: not executable"
        return None
    if shutil.which(program) is None:
        return f"{program}: command not found"
    return None


def make_openings(settings: Mapping[str, Any]) -> list[Opening]:
    needed = max(1, (int(settings["games"]) + 1) // 2)
    if settings.get("openings"):
        return load_openings(str(settings["openings"]))
    if settings.get("random_openings"):
        return random_openings(needed, int(settings["random_openings"]), settings.get("seed"))
    return [Opening()]


def opening_start(settings: Mapping[str, Any]) -> int:
    """The index of ``--opening-start N`` (N counts from 1)."""
    value = settings.get("opening_start")
    n = 1 if value is None else int(value)
    if n < 1:
        raise ValueError(f"--opening-start counts from 1, got {n}")
    return n - 1


def concurrency(settings: Mapping[str, Any]) -> int:
    """Games at once: the flag, else the cores here (0 with --ray: the cluster's CPUs)."""
    if settings.get("concurrency"):
        return int(settings["concurrency"])
    return 0 if settings.get("ray") else (os.cpu_count() or 1)


def build_config(args: argparse.Namespace) -> tuple[MatchConfig, bool]:
    """The MatchConfig of the command line (and whether to be quiet)."""
    settings, engine_fields = merged_settings(args)
    if len(engine_fields) < 2:
        raise ValueError("need at least two engines (--engine cmd=... twice, or --config)")
    engines = [engine_from_fields(e, settings) for e in engine_fields]
    for spec, name in zip(engines, unique_names(e.name for e in engines)):
        spec.name = name
    out_dir = settings.get("out") or os.path.join(
        "match-results", dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    )
    config = MatchConfig(
        engines=engines,
        games=int(settings["games"]),
        concurrency=concurrency(settings),
        openings=make_openings(settings),
        max_moves=int(settings["max_moves"]),
        margin_ms=int(settings["margin"]),
        hang_timeout_ms=int(settings["hang_timeout"]),
        move_timeout_ms=int(settings["move_timeout"]),
        ready_timeout_s=float(settings["ready_timeout"]),
        gauntlet=bool(settings["gauntlet"]),
        opening_start=opening_start(settings),
        sprt=make_sprt(settings.get("sprt"), settings.get("sprt_prior")),
        out_dir=str(out_dir),
        event=str(settings["event"]),
        ray_address=settings.get("ray") or None,
        ray_working_dir=settings.get("ray_working_dir") or None,
        ray_cpus_per_game=float(settings.get("ray_cpus_per_game") or 1.0),
    )
    return config, bool(settings["quiet"])


class Progress(StatusLine):
    """The live progress line on stderr (redrawn in place on a terminal; elsewhere a line
    per game, naming the game)."""

    def __call__(self, result: MatchResult, game: GameRecord) -> None:
        if self.quiet:
            return
        line = result.progress_line()
        assert game.outcome is not None
        self.show(
            line,
            f"{line}  (game {game.index}: {game.black} vs {game.white} "
            f"{game.outcome.result_str} {game.outcome.reason.value})",
        )


def describe(config: MatchConfig) -> str:
    where = f", on Ray at {config.ray_address}" if config.ray_address else ""
    games_at_once = config.concurrency or "cluster CPUs"
    lines = [
        f"Match: {len(config.engines)} engines, {config.games} games per pair, "
        f"{len(config.openings)} openings, concurrency {games_at_once}{where}"
    ]
    for e in config.engines:
        opts = " ".join(f"{k}={v}" for k, v in e.options.items())
        ponder = ", ponder" if e.ponder else ""
        lines.append(f"  {e.name}: {' '.join(e.cmd)} [{e.tc.describe()}{ponder}] {opts}".rstrip())
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        config, quiet = build_config(args)
    except (ValueError, OSError) as exc:
        parser.exit(2, f"match.py: error: {exc}\n")  # one line, nothing written
    if not config.ray_address:  # on a cluster the engines start on other machines
        for spec in config.engines:
            problem = command_problem(spec.cmd, spec.cwd)
            if problem is not None:
                parser.exit(2, f"match.py: error: engine {spec.name}: {problem}\n")
    print(describe(config), flush=True)
    # Ctrl-C (and SIGTERM) stop the match but keep the finished games.
    progress = Progress(quiet)
    try:
        with stop_on_signals():
            result = run_match(config, progress)
    except ClusterError as exc:
        progress.done()
        print(f"match: {exc}", file=sys.stderr)
        return 2
    progress.done()
    print(result.report())
    print(f"Records, logs and summary.json in {config.out_dir}")
    if result.not_started:
        return 1
    return 130 if result.interrupted else 0
