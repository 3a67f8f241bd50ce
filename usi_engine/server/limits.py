"""What the machine lets the engine use: memory for its tables, cores for its threads.

A GUI may offer USI_Hash up to 64 GB and Threads up to 256 whatever the machine has.  Taken
literally, a hash larger than the memory fails to allocate (or, below the memory but above
what is free, sends the machine into swap), and threads beyond the cores only share them.
The engine takes what fits, says so in an `info string`, and keeps working.

Cheap to import (standard library only).
"""

from __future__ import annotations

import os
from pathlib import Path

# the tables may take this share of the memory: the rest is the process itself, the OS and
# whatever else the machine runs (a GUI, the opponent engine)
TABLE_SHARE = 0.5
_CGROUP_FILES = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def _physical_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None  # not POSIX: no limit known


def _cgroup_bytes() -> int | None:
    """A container's memory limit (cgroup v2 or v1), None when there is none."""
    for name in _CGROUP_FILES:
        try:
            text = Path(name).read_text().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 1 << 60:  # v1 writes a huge number for 'none'
            return int(text)
    return None


def _address_space_left() -> int | None:
    """Room left under `ulimit -v` (RLIMIT_AS), None when unlimited."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft == resource.RLIM_INFINITY:
            return None
        used = int(Path("/proc/self/statm").read_text().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (ImportError, OSError, ValueError, IndexError):
        return None
    return max(0, soft - used)


def memory_mb() -> int | None:
    """Memory this process may use, in MB: the least of the physical memory, the container's
    limit and the address space left under RLIMIT_AS; None when nothing is known."""
    known = [b for b in (_physical_bytes(), _cgroup_bytes(), _address_space_left()) if b]
    return min(known) // (1 << 20) if known else None


def fit_tables(hash_mb: int, mate_mb: int, memory: int | None) -> tuple[int, int, list[str]]:
    """(USI_Hash, MateHash) that fit in TABLE_SHARE of `memory` MB, and a message for each
    one reduced.  The mate table gets at most a quarter of that share."""
    if memory is None:
        return hash_mb, mate_mb, []
    budget = max(2, int(memory * TABLE_SHARE))
    mate = min(mate_mb, max(1, budget // 4))
    fitted = min(hash_mb, max(1, budget - mate))
    notes = []
    if fitted < hash_mb:
        notes.append(
            f"USI_Hash {hash_mb} MB does not fit in this machine's memory ({memory} MB): using {fitted} MB"
        )
    if mate < mate_mb:
        notes.append(
            f"MateHash {mate_mb} MB does not fit in this machine's memory ({memory} MB): using {mate} MB"
        )
    return fitted, mate, notes


def cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS tells)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def fit_threads(threads: int, available: int) -> tuple[int, list[str]]:
    """Search threads for `available` cores: more only share the cores (Lazy SMP gains
    nothing from a thread that waits for a core), so the engine uses one per core."""
    if threads <= available:
        return threads, []
    return available, [f"Threads {threads} is more than the {available} cores here: using {available}"]
