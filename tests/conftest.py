"""Shared fixtures: a USI subprocess driver and ONE warmed-up engine per test session;
and the test tiers: the markers of every module and test named in TIERS.

numba compiles once per fresh clone (at the first `isready`), which can take minutes,
so protocol tests share the `engine` fixture instead of starting their own process.
Set USI_ENGINE_CMD (a shell-style command line) to test another executable.
"""

from __future__ import annotations

import ast
import os
import queue
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

# Any Ray cluster a test starts stays on this machine's loopback address (docs/scaling.md):
# set before a test module imports Ray, which reads it once.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

REPO = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent
ISREADY_TIMEOUT = float(os.environ.get("USI_ENGINE_ISREADY_TIMEOUT", "900"))


def engine_command() -> list[str]:
    custom = os.environ.get("USI_ENGINE_CMD")
    if custom:
        return shlex.split(custom)
    return [sys.executable, "-u", "-m", "usi_engine"]


class UsiProcess:
    """A USI engine subprocess: write lines, read lines with timestamps and timeouts."""

    def __init__(self, cmd: list[str] | None = None, cwd: Path = REPO, env: dict | None = None) -> None:
        self.started = time.monotonic()
        full_env = dict(os.environ)
        full_env.update(env or {})
        self.proc = subprocess.Popen(
            cmd or engine_command(),
            cwd=cwd,
            env=full_env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue = queue.Queue()
        self.stderr_chunks: list[bytes] = []
        self.transcript: list[str] = []
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        for raw in iter(self.proc.stdout.readline, b""):
            self.lines.put((time.monotonic(), raw))
        self.lines.put((time.monotonic(), None))

    def _read_stderr(self) -> None:
        for chunk in iter(lambda: self.proc.stderr.read1(4096), b""):
            self.stderr_chunks.append(chunk)

    def send(self, line: str | bytes) -> float:
        data = line if isinstance(line, bytes) else line.encode("utf-8")
        if not data.endswith(b"\n"):
            data += b"\n"
        self.transcript.append("< " + data.decode("utf-8", "replace").rstrip("\n"))
        self.proc.stdin.write(data)
        self.proc.stdin.flush()
        return time.monotonic()

    def readline(self, timeout: float) -> tuple[float, str]:
        """(timestamp, line) with the raw bytes checked to be ASCII; AssertionError on timeout/EOF."""
        try:
            stamp, raw = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(
                f"no output within {timeout}s; transcript tail:\n" + "\n".join(self.transcript[-15:])
            ) from None
        if raw is None:
            self.lines.put((stamp, None))
            raise AssertionError(
                "engine closed stdout; transcript tail:\n" + "\n".join(self.transcript[-15:])
            )
        assert all(b < 128 for b in raw), f"non-ASCII output: {raw!r}"
        assert raw.endswith(b"\n")
        line = raw.decode("ascii").rstrip("\r\n")
        self.transcript.append("> " + line)
        return stamp, line

    def read_until(self, prefix: str, timeout: float = 30.0) -> tuple[float, list[str]]:
        """Lines up to and including the first one starting with `prefix`; (its timestamp, lines)."""
        deadline = time.monotonic() + timeout
        out = []
        while True:
            stamp, line = self.readline(max(0.01, deadline - time.monotonic()))
            out.append(line)
            if (
                line == prefix
                or line.startswith(prefix + " ")
                or (prefix.endswith(" ") and line.startswith(prefix))
            ):
                return stamp, out

    def no_output(self, seconds: float) -> list[str]:
        """Collect whatever arrives within `seconds` (used to check for absence of lines)."""
        out = []
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return out
            try:
                stamp, raw = self.lines.get(timeout=left)
            except queue.Empty:
                return out
            if raw is None:
                self.lines.put((stamp, None))
                return out
            line = raw.decode("ascii", "replace").rstrip("\r\n")
            self.transcript.append("> " + line)
            out.append(line)

    def sync(self, timeout: float = 30.0) -> list[str]:
        """isready/readyok: everything printed before is returned (and so consumed)."""
        self.send("isready")
        return self.read_until("readyok", timeout)[1][:-1]

    def stderr_text(self) -> str:
        return b"".join(self.stderr_chunks).decode("utf-8", "replace")

    def quit(self, timeout: float = 5.0) -> float:
        """Send quit; seconds until the process exited."""
        t0 = time.monotonic()
        try:
            self.send("quit")
        except (BrokenPipeError, OSError):
            pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return float("inf")
        return time.monotonic() - t0

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def run_python(code: str, cache_dir=None, timeout: float = ISREADY_TIMEOUT) -> subprocess.CompletedProcess:
    """`python -c code` from the repository, on the numba cache `cache_dir` if given."""
    env = None if cache_dir is None else {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir)}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=timeout, env=env
    )


def start_ready_engine(env: dict | None = None, timeout: float = ISREADY_TIMEOUT) -> UsiProcess:
    eng = UsiProcess(env=env)
    eng.send("usi")
    eng.read_until("usiok", 30)
    eng.send("isready")
    eng.read_until("readyok", timeout)
    return eng


@pytest.fixture(scope="session")
def engine():
    """One engine process for the session, past `usi` and `isready` (numba compiled/loaded),
    and past the mate solver's compile, which follows `readyok` in the background: the
    mate probe of a search is skipped until it is done."""
    eng = start_ready_engine()
    eng.send("position sfen 4k4/9/4P4/9/9/9/9/9/4K4 b G 1")
    eng.send("go mate 60000")
    eng.read_until("checkmate", ISREADY_TIMEOUT)
    yield eng
    seconds = eng.quit()
    assert seconds < 1.0, f"quit took {seconds:.2f}s"
    assert eng.stderr_text() == "", f"engine wrote to stderr:\n{eng.stderr_text()[:2000]}"


# --- test tiers (docs/testing.md) ---------------------------------------------------------
# The markers (declared in pyproject.toml) of a whole module ("test_ray") or of one test
# function with all its parametrizations ("test_search::test_never_returns_an_illegal_move").
# A test named nowhere is unmarked: it runs in the fast tier, `pytest -m "not slow"`.
# slow: more than about 1.5 s on its own on the 2-core development machine (or a cold
# compile, a cluster, training); subprocess: starts processes (the engine through USI, the
# fixture engines, scripts, another interpreter); torch, ray: needs that package.
TIERS: dict[str, tuple[str, ...]] = {
    "test_startup": ("slow", "subprocess"),
    "test_precompile": ("slow", "subprocess"),
    "test_ray": ("slow", "ray", "subprocess"),
    "test_training": ("slow", "torch"),
    "test_protocol": ("subprocess",),
    "test_node_rate::test_two_engines_side_by_side": ("slow", "subprocess"),
    "test_nnue::test_a_search_does_not_depend_on_what_the_accumulators_held_before": ("slow",),
    "test_node_rate::test_fixed_depth_reports_nodes_per_depth": ("slow", "subprocess"),
    "test_node_rate::test_a_kill_ends_the_engines": ("slow", "subprocess"),
    "test_cshogi_match": ("subprocess",),
    "test_gensfen_stop": ("slow", "subprocess"),
    "test_workers": ("subprocess",),
    "test_score_gap": ("subprocess",),
    "test_analysis::test_command_line_with_another_engine_and_a_broken_record": ("subprocess",),
    "test_analysis::test_an_engine_that_dies_costs_only_its_positions": ("subprocess",),
    "test_api::test_import_is_lazy_and_names_resolve": ("subprocess",),
    "test_api::test_client_with_our_engine": ("slow", "subprocess"),
    "test_api::test_docs_api_examples_run": ("slow",),
    "test_api::test_module_examples_run": ("slow",),
    "test_classic::test_legal_moves_with_each_technique": ("slow",),
    "test_distill::test_bad_settings_are_refused": ("subprocess",),
    "test_gensfen::test_same_seed_same_bytes_with_two_worker_processes": ("slow", "subprocess"),
    "test_gensfen::test_teacher_engine_labels_through_usi": ("slow", "subprocess"),
    "test_gensfen::test_a_teacher_searches_the_opening_with_its_opening_limit": ("subprocess",),
    "test_gensfen::test_ray_local_cluster_makes_the_same_shards": ("slow", "ray", "subprocess"),
    "test_jit::test_a_cache_older_than_the_sources_is_emptied": ("slow", "subprocess"),
    "test_match::test_random_vs_random_match": ("subprocess",),
    "test_match::test_round_robin_and_gauntlet": ("slow", "subprocess"),
    "test_match::test_crashing_engine_loses_and_is_restarted": ("subprocess",),
    "test_match::test_hanging_engine_loses_and_is_killed": ("slow", "subprocess"),
    "test_match::test_slow_engine_loses_on_time_but_keeps_its_process": ("subprocess",),
    "test_match::test_a_slow_log_disk_costs_no_game_on_time": ("slow", "subprocess"),
    "test_match::test_engine_answers_adjudicated": ("slow", "subprocess"),
    "test_match::test_an_engine_that_never_starts_stops_the_match": ("subprocess",),
    "test_match::test_a_missing_engine_stops_the_match": ("subprocess",),
    "test_match::test_an_engine_that_started_once_loses_when_a_restart_fails": ("subprocess",),
    "test_match::test_the_cli_exits_1_when_an_engine_never_starts": ("subprocess",),
    "test_match::test_sprt_stops_match_early": ("slow", "subprocess"),
    "test_match::test_sprt_prior_counts_earlier_runs": ("subprocess",),
    "test_match::test_interrupt_keeps_finished_games": ("subprocess",),
    "test_match::test_ponder_hits_charge_the_clock_from_ponderhit": ("slow", "subprocess"),
    "test_match::test_ponder_misses_are_stopped_and_answered_afresh": ("subprocess",),
    "test_match::test_no_ponder_on_an_illegal_ponder_move_or_without_the_flag": ("subprocess",),
    "test_match::test_cli_end_to_end": ("subprocess",),
    "test_match::test_script_help": ("subprocess",),
    "test_match::test_writing_records_loads_no_numba": ("subprocess",),
    "test_book_apery::test_yaneuraou_plays_the_same_moves_from_an_apery_book": ("slow", "subprocess"),
    "test_book_apery::test_engine_plays_an_apery_book_move_over_usi": ("subprocess",),
    "test_match::test_our_engine_against_itself_and_a_random_mover": ("slow", "subprocess"),
    "test_match::test_our_engine_ponders": ("slow", "subprocess"),
    "test_movegen::test_random_legal_moves_match_python_shogi": ("slow",),
    "test_movegen::test_random_is_legal_agrees_with_generation": ("slow",),
    "test_movegen::test_random_gives_check_agrees_with_doing_the_move": ("slow",),
    "test_movegen::test_random_zobrist_do_undo": ("slow",),
    "test_movepick::test_picker_yields_every_legal_move_once": ("slow",),
    "test_nnue::test_incremental_accumulators_equal_refresh": ("slow",),
    "test_nnue::test_numba_equals_numpy_reference_on_random_positions": ("slow",),
    "test_nnue::test_usi_evaldir_fv_scale_and_eval_command": ("slow", "subprocess"),
    "test_options::test_switches_are_read_without_importing_numba": ("subprocess",),
    "test_protocol::test_games_against_random_mover_and_self": ("slow",),
    "test_protocol::test_cshogi_match_runner": ("slow",),
    "test_protocol::test_go_limits": ("slow",),
    "test_protocol::test_go_without_isready_then_quit_mid_search": ("slow",),
    "test_protocol::test_go_right_after_every_bestmove_in_a_ponder_game": ("slow",),
    "test_protocol::test_warmup_flag_compiles_and_exits": ("slow",),
    "test_protocol::test_ponder_hit_and_miss": ("slow",),
    "test_rescore::test_a_real_engine_rescores_through_usi_and_a_rerun_keeps_the_files": (
        "slow",
        "subprocess",
    ),
    "test_search::test_never_returns_an_illegal_move": ("slow",),
    "test_search::test_a_setting_under_test_changes_the_tree": ("slow",),
    "test_timeman::test_main_time_spending_curve": ("slow",),
    "test_tunables::test_importing_tunables_does_not_import_numba": ("subprocess",),
    "test_tunables_protocol::test_usi_tunables_declares_the_table_and_tuning_mode": ("subprocess",),
    "test_tune::test_tuning_moves_towards_the_optimum_and_resumes": ("slow",),
    "test_tune::test_params_patch_for_the_table": ("subprocess",),
    "test_protocol::test_answers_after_a_ponder_keep_the_relay_reserve": ("slow",),
    "test_openings_suite::test_another_usi_engine_judges_through_the_script": ("slow", "subprocess"),
    "test_openings_suite::test_an_engine_that_names_it_usi_multipv_gets_its_lines": ("subprocess",),
    "test_move_times": ("subprocess",),
    "test_html_report": ("subprocess",),
    "test_makebook::test_search_grows_the_book_and_resumes": ("slow", "subprocess"),
    "test_makebook::test_propagate_command_on_a_book_with_a_loop": ("slow", "subprocess"),
    "test_makebook::test_yaneuraou_plays_the_same_moves_from_our_book": ("slow", "subprocess"),
    "test_makebook::test_records_counts_moves_with_min_count_and_winners": ("slow", "subprocess"),
    "test_makebook::test_two_workers_write_the_same_book_as_one": ("slow", "subprocess"),
    "test_makebook::test_ctrl_c_with_workers_saves_the_book_and_a_rerun_goes_on": ("slow", "subprocess"),
    "test_makebook::test_a_failing_worker_is_an_error_not_a_hang": ("slow", "subprocess"),
    "test_makebook::test_ray_local_cluster_writes_the_same_book": ("slow", "ray", "subprocess"),
    "test_book::test_engine_plays_the_book_move_at_once": ("slow", "subprocess"),
    "test_book::test_consider_book_move_count": ("slow",),
    "test_fuzz_usi": ("subprocess",),
    "test_limits": ("subprocess",),
    "test_refusals::test_exit_status": ("subprocess",),
    "test_resume": ("slow", "subprocess", "torch"),
    "test_cli": ("subprocess",),
    "test_fuzz_book::test_a_killed_search_leaves_a_whole_book_and_a_rerun_goes_on": ("slow", "subprocess"),
    "test_fuzz_book::test_propagate_refuses_a_file_that_is_no_book": ("subprocess",),
    "test_fuzz_book::test_records_refuses_files_that_are_no_records": ("subprocess",),
}


def stale_tier_entries(tests: Path = TESTS) -> list[str]:
    """The TIERS keys that name no module or no test function of tests/ (a renamed or
    removed test would otherwise drop out of its tier without a word)."""
    stale = []
    for key in TIERS:
        module, _, function = key.partition("::")
        path = tests / f"{module}.py"
        if not path.is_file():
            stale.append(key)
            continue
        if function:
            tree = ast.parse(path.read_text(encoding="utf-8"))
            names = {
                node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            }
            if function not in names:
                stale.append(key)
    return stale


def pytest_sessionstart(session):
    stale = stale_tier_entries()
    if stale:
        raise pytest.UsageError("tests/conftest.py TIERS names tests that do not exist: " + ", ".join(stale))


def pytest_collection_modifyitems(config, items):
    for item in items:
        module = item.path.stem
        function = getattr(item, "originalname", item.name)
        for key in (module, f"{module}::{function}"):
            for name in TIERS.get(key, ()):
                item.add_marker(getattr(pytest.mark, name))
