"""The USI option table: declarations, parsing of `setoption` values, engine.cfg merge.

Cheap to import (standard library only): the option table is needed to answer
`usi`, which must not wait for numba.

engine.cfg is an INI file:

    [options]
    USI_Hash = 256
    NetworkDelay2 = 300
    NullMove = false      ; a search switch (check option)

    [engine]
    log = false           ; true, or a file path: write a debug log

Values in [options] replace the built-in defaults (so they are what `usi`
declares); a GUI's `setoption` still overrides them.
"""

from __future__ import annotations

import configparser
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from ..search.switches import SWITCHES

CHECK, SPIN, COMBO, STRING, FILENAME, BUTTON = "check", "spin", "combo", "string", "filename", "button"

# The button that forgets the transposition table and the histories.  USI option names
# have no spaces (GUIs such as ShogiHome split `option` lines on them and drop the line),
# so it is declared as Fairy-Stockfish's USI mode does; `setoption name Clear Hash`, the
# chess spelling, is still accepted.
CLEAR_HASH = "Clear_Hash"

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


def ascii_clean(text: str, limit: int = 80) -> str:
    """Make untrusted text safe to echo in an `info string`: printable ASCII, bounded length."""
    out = "".join(c if 32 <= ord(c) < 127 else "?" for c in str(text))
    if len(out) > limit:
        out = out[:limit] + "..."
    return out


@dataclass
class Option:
    name: str
    type: str
    default: object
    min: int | None = None
    max: int | None = None
    vars: tuple[str, ...] = ()
    value: object = None
    tunable: bool = False  # a search constant: declared at `usi` only in tuning mode
    aliases: tuple[str, ...] = ()  # other names `setoption` accepts (never declared)

    def __post_init__(self) -> None:
        if " " in self.name:
            raise ValueError(f"option name {self.name!r} has a space: GUIs drop such options")
        if self.value is None:
            self.value = self.default

    def usi_line(self) -> str:
        line = f"option name {self.name} type {self.type}"
        if self.type == BUTTON:
            return line
        if self.type == CHECK:
            line += " default " + ("true" if self.default else "false")
        elif self.type == SPIN:
            line += f" default {self.default} min {self.min} max {self.max}"
        elif self.type == COMBO:
            line += f" default {self.default}" + "".join(f" var {v}" for v in self.vars)
        else:
            line += " default " + (str(self.default) if str(self.default) != "" else "<empty>")
        return line

    def parse(self, text: str | None) -> object:
        """Convert a `setoption` / engine.cfg value; ValueError says what is wrong."""
        raw = "" if text is None else text.strip()
        if self.type == BUTTON:
            return None  # pressed: the protocol runs its action
        if self.type == CHECK:
            low = raw.lower()
            if low in _TRUE:
                return True
            if low in _FALSE:
                return False
            raise ValueError(f"option {self.name}: expected true or false, got '{ascii_clean(raw)}'")
        if self.type == SPIN:
            try:
                num = int(raw)
            except ValueError:
                raise ValueError(
                    f"option {self.name}: expected an integer, got '{ascii_clean(raw)}'"
                ) from None
            if not (self.min <= num <= self.max):
                raise ValueError(f"option {self.name}: {num} out of range [{self.min}, {self.max}]")
            return num
        if self.type == COMBO:
            for v in self.vars:
                if v.lower() == raw.lower():
                    return v
            raise ValueError(f"option {self.name}: '{ascii_clean(raw)}' is not one of {', '.join(self.vars)}")
        if raw == "<empty>":
            return ""
        return raw


def builtin_options() -> list[Option]:
    """The engine's own options (the search switches follow: search/switches.py)."""
    return [
        Option("USI_Hash", SPIN, 24, 1, 65536),  # 24 MB: 2^20 entries of 16 bytes
        Option("MateHash", SPIN, 64, 1, 65536),  # MB for the df-pn table of the mate solver
        Option("USI_Ponder", CHECK, False),
        Option("Threads", SPIN, 1, 1, 256),
        Option("MultiPV", SPIN, 1, 1, 500),
        Option(CLEAR_HASH, BUTTON, None, aliases=("Clear Hash",)),  # forget the TT and the histories
        Option("ConsiderationMode", CHECK, False),  # analysis: report a stopped iteration's lines
        Option("NetworkDelay", SPIN, 60, 0, 10000),
        Option("NetworkDelay2", SPIN, 120, 0, 10000),
        Option("MinimumThinkingTime", SPIN, 100, 0, 100000),
        Option("SlowMover", SPIN, 100, 1, 1000),
        Option(
            "RoundUpToFullSecond", CHECK, True
        ),  # whole-second clocks: think to just before the next second
        Option("ResignValue", SPIN, 99999, 0, 99999),
        Option("DrawValue", SPIN, -2, -30000, 30000),
        Option("MaxMovesToDraw", SPIN, 0, 0, 100000),
        Option("EnteringKingRule", COMBO, "CSA27", vars=("none", "CSA24", "CSA27")),
        Option("DebugLog", CHECK, False),
        Option(
            "EvalDir", STRING, "<internal>"
        ),  # folder of nn.bin; <internal>: the shipped network, handmade: none
        Option("FV_SCALE", SPIN, 16, 1, 128),  # network output / FV_SCALE = centipawns
    ]


def book_options() -> list[Option]:
    """The opening book's options: YaneuraOu's names and defaults (usi_engine/book,
    docs/book.md), except that BookFile is a path, and no_book (no book) by default."""
    return [
        Option("BookFile", STRING, "no_book"),  # absolute, or relative to BookDir
        Option("BookDir", STRING, "book"),
        Option("BookMoves", SPIN, 16, 0, 10000),  # use the book up to this ply
        Option("BookIgnoreRate", SPIN, 0, 0, 100),
        Option("BookEvalDiff", SPIN, 30, 0, 99999),
        Option("BookEvalBlackLimit", SPIN, 0, -99999, 99999),
        Option("BookEvalWhiteLimit", SPIN, -140, -99999, 99999),
        Option("BookDepthLimit", SPIN, 16, 0, 99999),
        Option("BookOnTheFly", CHECK, False),
        Option("ConsiderBookMoveCount", CHECK, False),
        Option("BookPvMoves", SPIN, 8, 1, 246),
        Option("IgnoreBookPly", CHECK, False),
        Option("FlippedBook", CHECK, True),
    ]


def tunable_options() -> list[Option]:
    """core/params.py's constants as `Tune_<Name>` spin options (pure Python, no numba)."""
    from ..core.params import PARAMS
    from .tunables import option_name

    return [Option(option_name(p), SPIN, p.default, p.lo, p.hi, tunable=True) for p in PARAMS]


def switch_option(name: str, default: int) -> Option:
    """A search switch (search/switches.py): a check option for 0/1, a spin otherwise."""
    if default in (0, 1):
        return Option(name, CHECK, bool(default))
    lo = min(0, int(default))
    hi = max(1000, int(default) * 4)
    return Option(name, SPIN, int(default), lo, hi)


@dataclass
class Options:
    """Case-insensitive option table, in declaration order."""

    _table: dict[str, Option] = field(default_factory=dict)
    _aliases: dict[str, str] = field(default_factory=dict)  # lower-case alias -> key
    switch_names: list[str] = field(default_factory=list)
    # engine.cfg entries that name no option (reported at the first isready: report_pending)
    pending_cfg: dict[str, str] = field(default_factory=dict)
    # [engine] section of engine.cfg
    engine_settings: dict[str, str] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    # tuning mode: `usi` also declares the Tune_ options (engine.cfg [engine] tuning = true,
    # USI_ENGINE_TUNING=1, or a tuner's `usi_tunables`); setoption accepts them always
    tuning: bool = False

    @classmethod
    def create(cls, switches: Mapping[str, int] | None = None) -> "Options":
        """The engine's options: built-in, book, tunables (declared in tuning mode), then
        the search switches, `switches` (default: search/switches.py's) in their order."""
        opts = cls()
        for opt in builtin_options() + book_options() + tunable_options():
            opts.add(opt)
        for name, default in (SWITCHES if switches is None else switches).items():
            opts.add(switch_option(name, int(default)))
            opts.switch_names.append(name)
        return opts

    def add(self, opt: Option) -> None:
        self._table[opt.name.lower()] = opt
        for alias in opt.aliases:
            self._aliases[alias.lower()] = opt.name.lower()

    def _key(self, name: str) -> str:
        key = name.strip().lower()
        return self._aliases.get(key, key)

    def __contains__(self, name: str) -> bool:
        return self._key(name) in self._table

    def get_option(self, name: str) -> Option:
        return self._table[self._key(name)]

    def __getitem__(self, name: str) -> object:
        return self._table[self._key(name)].value

    def all(self) -> list[Option]:
        return list(self._table.values())

    def usi_lines(self) -> list[str]:
        return [opt.usi_line() for opt in self._table.values() if self.tuning or not opt.tunable]

    def search_params(self) -> list[int]:
        """The Tune_ values in core/params.py's order (the Searcher's `search_params`)."""
        return [int(opt.value) for opt in self._table.values() if opt.tunable]

    def set(self, name: str, value: str | None) -> Option:
        """Apply `setoption`; ValueError (old value kept) for unknown names or bad values.
        Returns the option (a button's caller runs its action)."""
        key = self._key(name)
        if key not in self._table:
            raise ValueError(f"unknown option {ascii_clean(name.strip())}")
        opt = self._table[key]
        if value is None and opt.type not in (STRING, FILENAME, BUTTON):
            raise ValueError(f"option {opt.name}: missing value")
        opt.value = opt.parse(value)
        return opt

    def switches(self) -> dict[str, int]:
        return {name: int(self[name]) for name in self.switch_names}

    # --- engine.cfg -----------------------------------------------------
    def _apply_default(self, name: str, raw: str) -> None:
        opt = self._table[name.lower()]
        try:
            parsed = opt.parse(raw)
        except ValueError as exc:
            self.messages.append(f"engine.cfg: {exc}")
            return
        opt.default = parsed
        opt.value = parsed

    def load_cfg(self, path: str | Path) -> None:
        """Merge an engine.cfg; problems become `messages` (reported as info strings)."""
        parser = configparser.ConfigParser(inline_comment_prefixes=(";", "#"), interpolation=None)
        parser.optionxform = str  # keep the case of option names for messages
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                parser.read_file(fh)
        except OSError as exc:
            self.messages.append(
                f"engine.cfg: cannot read {ascii_clean(str(path), 200)}: {ascii_clean(exc.strerror or exc)}"
            )
            return
        except configparser.Error as exc:
            self.messages.append(f"engine.cfg: {ascii_clean(str(exc).splitlines()[0], 200)}")
            return
        for section in parser.sections():
            low = section.lower()
            if low == "options":
                for name, raw in parser.items(section):
                    if name.lower() in self._table:
                        self._apply_default(name, raw)
                    else:
                        self.pending_cfg[name.lower()] = raw
            elif low == "engine":
                for name, raw in parser.items(section):
                    self.engine_settings[name.lower()] = raw.strip()
            else:
                self.messages.append(f"engine.cfg: unknown section [{ascii_clean(section)}]")

    def report_pending(self) -> list[str]:
        """engine.cfg names that match no option (called once the switch list is final)."""
        out = [f"engine.cfg: unknown option {ascii_clean(name)}" for name in self.pending_cfg]
        self.pending_cfg.clear()
        return out

    def take_messages(self) -> list[str]:
        out, self.messages = self.messages, []
        return out
