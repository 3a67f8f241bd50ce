"""Run the fuzz properties of tests/test_fuzz_*.py with a long budget and print, per reader,
how many cases were tried and how many properties failed (a failure prints Hypothesis's
smallest failing example).

    usi-engine fuzz                         # 2,000 examples per property
    usi-engine fuzz --examples 20000 --only records psv nnue
    usi-engine fuzz --examples 500 --only usi          # the live-engine properties

The default test run (pytest) tries 40 examples per property; docs/reliability.md holds
the figures of the long runs.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from . import REPO

SUITES = {
    "records": "test_fuzz_records.py",
    "psv": "test_fuzz_psv.py",
    "nnue": "test_fuzz_nnue.py",
    "usi": "test_fuzz_usi.py",
}


class Outcomes:
    """A pytest plugin that keeps each test's outcome."""

    def __init__(self) -> None:
        self.failed: list[str] = []
        self.passed = 0

    def pytest_runtest_logreport(self, report) -> None:
        if report.when == "call":
            if report.failed:
                self.failed.append(report.nodeid)
            elif report.passed:
                self.passed += 1


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="usi-engine fuzz", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--examples",
        type=int,
        default=2000,
        help="examples per property (default 2000; "
        "the live-engine properties take a half and a quarter of it)",
    )
    p.add_argument(
        "--only",
        nargs="+",
        choices=sorted(SUITES),
        default=sorted(SUITES),
        help="which readers to fuzz (default: all)",
    )
    a = p.parse_args(argv)
    if not (REPO / "tests" / "fuzzing.py").is_file():
        print(
            f"fuzz: runs the tests of a checkout of the repository; there is no {REPO / 'tests'}",
            file=sys.stderr,
        )
        return 2
    os.environ["USI_ENGINE_FUZZ_EXAMPLES"] = str(a.examples)  # read by tests/fuzzing.py
    os.chdir(REPO)
    import pytest

    outcomes = Outcomes()
    files = [str(REPO / "tests" / SUITES[name]) for name in a.only]
    t0 = time.monotonic()
    pytest.main(["-q", "-p", "no:cacheprovider"] + files, plugins=[outcomes])
    cases = sys.modules["fuzzing"].CASES if "fuzzing" in sys.modules else {}
    print(f"\n{a.examples} examples per property, {time.monotonic() - t0:.0f} s")
    print(f"{'reader':<20} {'cases tried':>12}")
    for reader, count in sorted(cases.items()):
        print(f"{reader:<20} {count:>12,}")
    print(f"{'total':<20} {sum(cases.values()):>12,}")
    print(f"properties: {outcomes.passed} held, {len(outcomes.failed)} failed")
    for nodeid in outcomes.failed:
        print(f"  FAILED {nodeid}")
    return 1 if outcomes.failed else 0


if __name__ == "__main__":
    sys.exit(main())
