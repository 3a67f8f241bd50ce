"""Joining or starting a Ray cluster: the one place the project calls ``ray.init``.

Matches (``--ray``), SPSA tuning and gensfen all connect through :func:`connect`, so two
rules hold everywhere:

* **A local cluster stays on this machine.**  ``--ray local`` starts a one-machine
  cluster.  Ray would otherwise take the machine's network address as the node's address
  even when told ``127.0.0.1``: its GCS, raylet and workers then listen on every interface
  and talk to each other over the network address.  Ray's single-machine switch
  (:data:`LOOPBACK_SWITCH`, the mode Ray uses on macOS and Windows) makes every listener
  and every connection use the loopback address; :func:`connect` sets it and then checks
  the sockets of the processes it started (:func:`exposed_sockets`), refusing to go on if
  any of them is reachable from outside.
* **A cluster named by address is joined with its token.**  Ray clusters started by
  ``ray start`` require an authentication token (Ray 2.5x and later), and Ray turns token
  mode on for a driver only when it finds the cluster by itself (``auto``).  For an
  explicit ``HOST:PORT`` :func:`connect` turns it on when a token is at hand
  (``RAY_AUTH_TOKEN``, the file named by ``RAY_AUTH_TOKEN_PATH``, or ``~/.ray/auth_token``)
  and, when the cluster still refuses, says which token it tried and how to give the
  right one.

Ray is imported only inside these functions: without ``--ray`` nothing of Ray is loaded.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Optional

LOCAL = "local"  # start a private one-machine cluster for this run
AUTO = "auto"  # join the cluster that `ray start` made on this machine

# Ray's switch for single-machine clusters: with "0", Ray's node address is the loopback
# address (ray._private.services.get_node_ip_address).  Read once when Ray is imported,
# and inherited by the processes Ray starts.
LOOPBACK_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
AUTH_MODE = "RAY_AUTH_MODE"
TOKEN_ENV = "RAY_AUTH_TOKEN"
TOKEN_PATH_ENV = "RAY_AUTH_TOKEN_PATH"
TOKEN_HELP = "docs/scaling.md#authentication-tokens"


class ClusterError(RuntimeError):
    """The cluster could not be joined or started as asked; the message says what to do."""


# --- a private local cluster -------------------------------------------------------------
def keep_local_clusters_on_loopback() -> None:
    """Make every cluster Ray starts from this process (and its children) loopback-only.

    Works before and after ``import ray``: the switch is read into a module constant at
    import, so a loaded Ray gets the constant set as well.
    """
    os.environ[LOOPBACK_SWITCH] = "0"
    constants = sys.modules.get("ray._private.ray_constants")
    if constants is not None:
        constants.ENABLE_RAY_CLUSTER = False


@dataclass(frozen=True)
class Socket:
    """One TCP socket of a process: its state, local and remote address."""

    pid: int
    state: str  # "listen" or "established"
    local: tuple[str, int]
    remote: tuple[str, int]

    def __str__(self) -> str:
        return (
            f"pid {self.pid} {self.state} {self.local[0]}:{self.local[1]}"
            f" -> {self.remote[0]}:{self.remote[1]}"
        )


_TCP_STATES = {"0A": "listen", "01": "established"}


def _decode_address(text: str, v6: bool) -> tuple[str, int]:
    """An address of /proc/net/tcp{,6}: hex of the host in host byte order, then the port."""
    host, port = text.split(":")
    raw = bytes.fromhex(host)
    if v6:  # four 32-bit words, each in host (little-endian) order
        raw = b"".join(struct.pack("<I", struct.unpack(">I", raw[i : i + 4])[0]) for i in range(0, 16, 4))
        return socket.inet_ntop(socket.AF_INET6, raw), int(port, 16)
    return socket.inet_ntoa(struct.pack("<I", int(host, 16))), int(port, 16)


def _socket_inodes(pids: Iterable[int]) -> dict[int, int]:
    """Socket inode -> pid for the open sockets of `pids` (processes that went away skipped)."""
    owner = {}
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                owner[int(target[8:-1])] = pid
    return owner


def tcp_sockets(pids: Iterable[int]) -> list[Socket]:
    """The listening and established TCP sockets of `pids`, read from /proc (Linux)."""
    owner = _socket_inodes(pids)
    found = []
    for table, v6 in (("/proc/net/tcp", False), ("/proc/net/tcp6", True)):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            state, inode = _TCP_STATES.get(fields[3]), int(fields[9])
            if state and inode in owner:
                found.append(
                    Socket(
                        owner[inode], state, _decode_address(fields[1], v6), _decode_address(fields[2], v6)
                    )
                )
    return found


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1, or an IPv4-mapped loopback address (::ffff:127.0.0.1)."""
    address = ipaddress.ip_address(host)
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


def exposed(sock: Socket) -> bool:
    """Whether the socket listens beyond loopback or talks to a non-loopback address."""
    if sock.state == "listen":
        return not is_loopback(sock.local[0])  # 0.0.0.0 and :: are every interface
    return not (is_loopback(sock.local[0]) and is_loopback(sock.remote[0]))


def descendants(pid: int) -> list[int]:
    """`pid`'s child processes, their children, and so on (read from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def exposed_sockets(pids: Optional[Iterable[int]] = None) -> list[Socket]:
    """Sockets of `pids` (default: this process and everything it started) that are
    reachable from outside this machine or talk to another address than loopback."""
    if pids is None:
        pids = [os.getpid(), *descendants(os.getpid())]
    return [s for s in tcp_sockets(pids) if exposed(s)]


def _check_private() -> None:
    if not os.path.isdir("/proc/net"):
        return  # not Linux: Ray's loopback mode is its default there
    leaks = exposed_sockets()
    if leaks:
        import ray

        ray.shutdown()
        shown = "; ".join(str(s) for s in leaks[:5])
        raise ClusterError(
            f"the local Ray cluster is reachable from outside this machine "
            f"({shown}); it was shut down. Is {LOOPBACK_SWITCH} overridden?"
        )


# --- tokens -------------------------------------------------------------------------------
def token_source() -> Optional[str]:
    """Where this driver's Ray token comes from, or None when it has none."""
    if os.environ.get(TOKEN_ENV, "").strip():
        return f"${TOKEN_ENV}"
    named = os.environ.get(TOKEN_PATH_ENV)
    if named:
        return named if Path(named).expanduser().is_file() else None
    default = Path.home() / ".ray" / "auth_token"
    return str(default) if default.is_file() else None


def use_token_if_present() -> Optional[str]:
    """Turn on Ray's token mode when a token is at hand and the mode is not set by the
    user; returns the token's source.  Must run before ``ray.init``."""
    source = token_source()
    if source is None or os.environ.get(AUTH_MODE):
        return source
    os.environ[AUTH_MODE] = "token"
    if "ray" in sys.modules:
        # Ray reads the mode into its C++ config at import: load it again.
        from ray._raylet import Config

        Config.initialize("")
    return source


def _reachable(address: str, timeout: float = 3.0) -> bool:
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        return True  # not HOST:PORT (e.g. ray://...): let Ray judge it
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            return True
    except OSError:
        return False


def _refused_message(address: str, source: Optional[str]) -> str:
    if source is None:
        return (
            f"could not join the Ray cluster at {address}: it asks for an authentication "
            f"token and this machine has none (${TOKEN_ENV}, ${TOKEN_PATH_ENV} or "
            f"~/.ray/auth_token). On the head node run `ray get-auth-token` and here "
            f"`export {TOKEN_ENV}=<that token>` (see {TOKEN_HELP})"
        )
    return (
        f"could not join the Ray cluster at {address} with the token from {source}: the "
        f"cluster refused it. Use the head node's token (`ray get-auth-token` there) in "
        f"${TOKEN_ENV} (see {TOKEN_HELP})"
    )


# --- connecting ---------------------------------------------------------------------------
def connect(
    address: str, num_cpus: Optional[int] = None, runtime_env: Optional[dict[str, Any]] = None
) -> bool:
    """Join the cluster at `address`, or start one: ``local`` starts a private
    one-machine cluster (loopback only, checked), ``auto`` joins the one ``ray start``
    made here, anything else (``HOST:PORT``, ``ray://HOST:PORT``) is joined with this
    machine's token.  Returns True when this call connected (the caller then calls
    ``ray.shutdown()`` at the end), False when Ray was connected already.

    Raises :class:`ClusterError` with what to do when the cluster cannot be joined.
    """
    if address == LOCAL:
        keep_local_clusters_on_loopback()
    import ray

    if ray.is_initialized():
        return False
    kwargs: dict[str, Any] = {"log_to_driver": False, "configure_logging": False}
    if runtime_env:
        kwargs["runtime_env"] = runtime_env
    if address == LOCAL:
        ray.init(
            address=LOCAL, num_cpus=num_cpus, include_dashboard=False, _node_ip_address="127.0.0.1", **kwargs
        )
        _check_private()
        return True
    source = None if address == AUTO else use_token_if_present()
    if address != AUTO and not _reachable(address):
        raise ClusterError(
            f"nothing answers at {address}: is `ray start --head` running "
            f"there, and is the port open to this machine?"
        )
    refused = (ConnectionError, getattr(ray.exceptions, "AuthenticationError", ConnectionError))
    try:
        ray.init(address=address, **kwargs)
    except refused as exc:
        if address == AUTO:
            raise ClusterError(
                f"no Ray cluster to join on this machine ({exc}); start one "
                f"with `ray start --head` or use --ray local"
            ) from exc
        raise ClusterError(_refused_message(address, source)) from exc
    return True


# the folder holding the usi_engine package this process imported (a checkout, or
# site-packages): what Ray's workers put first on their path
PACKAGE_ROOT = str(Path(__file__).resolve().parents[1])


def package_path_env(root: str = PACKAGE_ROOT) -> dict[str, Any]:
    """A runtime_env that puts `root` (default: the folder holding this ``usi_engine``) first
    on the workers' PYTHONPATH, so their tasks import the same package as the driver."""
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    return {"env_vars": {"PYTHONPATH": path}}
