"""YaneuraOu's classic NNUE file format (``nn.bin``): read, check and write.

Layout (little endian throughout):

- header: uint32 version 0x7AF32F16, uint32 hash (feature transformer hash ^ network hash),
  uint32 length + the architecture string, e.g.
  ``Features=HalfKP(Friend)[125388->256x2],Network=AffineTransform[1<-32](ClippedReLU[32](
  AffineTransform[32<-32](ClippedReLU[32](AffineTransformSparseInput[32<-512](InputSlice[512(0:512)])))))``
- feature transformer: uint32 hash, int16 biases[H], int16 weights[F][H]
- network: uint32 hash, then for each affine layer from the input side: int32 biases[out],
  int8 weights[out][in padded to a multiple of 32]

Forward pass (see reference.py): each perspective's accumulator (bias + the weight rows of its
active features, int16) is clipped to 0..127, the side to move's half first; every hidden
affine layer is followed by ClippedReLU ``clamp(x >> 6, 0, 127)``; the last layer's int32
output divided by FV_SCALE (16 by default) is the evaluation.

Older YaneuraOu writes ``AffineTransform`` where newer writes ``AffineTransformSparseInput``
for the first layer: same parameters, same hash, both are read.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .features import FEATURE_SETS

VERSION = 0x7AF32F16
WEIGHT_SCALE_BITS = 6  # ClippedReLU shift
MAX_SIMD_WIDTH = 32  # input dimensions of affine layers are padded to this
DEFAULT_FV_SCALE = 16
_FEATURE_HASH = {"HalfKP(Friend)": 0x5D69D5B9 ^ 1, "K+P": None}  # K+P: combined below
_K_HASH, _P_HASH = 0xD3CEE169, 0x764CFB4B
_M32 = 0xFFFFFFFF

# the short names YaneuraOu's architecture headers use
SHORT_NAMES = {"HalfKP(Friend)": "halfkp", "K+P": "kp"}


class NNUEFormatError(ValueError):
    """A file that is not a network this engine can read; the message says why."""


def padded(n: int) -> int:
    return (n + MAX_SIMD_WIDTH - 1) // MAX_SIMD_WIDTH * MAX_SIMD_WIDTH


def feature_hash(feature_set: str) -> int:
    if feature_set == "K+P":  # FeatureSet<K, P>: head ^ (tail << 1) ^ (tail >> 31)
        return (_K_HASH ^ ((_P_HASH << 1) & _M32) ^ (_P_HASH >> 31)) & _M32
    return _FEATURE_HASH[feature_set]


def network_hash(half: int, l1: int, l2: int) -> int:
    """Hash of InputSlice -> Affine(l1) -> ClippedReLU -> Affine(l2) -> ClippedReLU -> Affine(1)."""

    def affine(prev: int, out: int) -> int:
        h = (0xCC03DAE4 + out) & _M32
        return h ^ (prev >> 1) ^ ((prev << 31) & _M32)

    def relu(prev: int) -> int:
        return (0x538D24C7 + prev) & _M32

    h = 0xEC42E90D ^ (2 * half)  # InputSlice[2H(0:2H)]
    return affine(relu(affine(relu(affine(h, l1)), l2)), 1)


def architecture_string(feature_set: str, half: int, l1: int, l2: int) -> str:
    n = FEATURE_SETS[feature_set]
    return (
        f"Features={feature_set}[{n}->{half}x2],Network=AffineTransform[1<-{l2}]"
        f"(ClippedReLU[{l2}](AffineTransform[{l2}<-{l1}](ClippedReLU[{l1}]"
        f"(AffineTransformSparseInput[{l1}<-{2 * half}](InputSlice[{2 * half}(0:{2 * half})])))))"
    )


_ARCH_RE = re.compile(
    r"Features=(?P<fs>[^\[]+)\[(?P<n>\d+)->(?P<h>\d+)x2\],"
    r"Network=AffineTransform\[1<-(?P<a>\d+)\]\(ClippedReLU\[(?P<b>\d+)\]\("
    r"AffineTransform\[(?P<c>\d+)<-(?P<d>\d+)\]\(ClippedReLU\[(?P<e>\d+)\]\("
    r"AffineTransform(?:SparseInput)?\[(?P<f>\d+)<-(?P<g>\d+)\]\("
    r"InputSlice\[(?P<i>\d+)\(0:(?P<j>\d+)\)\]\)\)\)\)\)$"
)


def parse_architecture(text: str) -> tuple[str, int, int, int]:
    """(feature set, H, L1, L2) of an architecture string; NNUEFormatError if unsupported."""
    m = _ARCH_RE.match(text)
    shown = text if len(text) <= 120 else text[:117] + "..."
    if not m:
        raise NNUEFormatError(
            f"unsupported architecture {shown!r}; supported: HalfKP(Friend) or K+P features "
            f"with Hx2-L1-L2 ClippedReLU layers (halfkp_256x2-32-32, kp_256x2-32-32)"
        )
    fs = m["fs"]
    if fs not in FEATURE_SETS:
        raise NNUEFormatError(
            f"unsupported feature set {fs!r} in architecture {shown!r}; supported: {', '.join(FEATURE_SETS)}"
        )
    half, l2, l1 = int(m["h"]), int(m["a"]), int(m["f"])
    consistent = (
        int(m["n"]) == FEATURE_SETS[fs]
        and int(m["b"]) == l2
        and int(m["c"]) == l2
        and int(m["d"]) == l1
        and int(m["e"]) == l1
        and int(m["g"]) == 2 * half
        and int(m["i"]) == 2 * half
        and int(m["j"]) == 2 * half
    )
    if not consistent or min(half, l1, l2) < 1:
        raise NNUEFormatError(f"inconsistent dimensions in architecture {shown!r}")
    return fs, half, l1, l2


@dataclass
class Network:
    """A network's parameters, as stored in the file.

    ft_bias int16[H]; ft_weight int16[F, H] (row = one feature); biases[k] int32[out_k] and
    weights[k] int8[out_k, padded(in_k)] for the three affine layers from the input side.
    """

    feature_set: str
    ft_bias: np.ndarray
    ft_weight: np.ndarray
    biases: list[np.ndarray]
    weights: list[np.ndarray]
    architecture: str = ""  # header string: kept as read, built from the shapes if empty
    source: str = field(default="", compare=False)  # file it was read from

    def __post_init__(self) -> None:
        if not self.architecture:
            self.architecture = architecture_string(self.feature_set, self.half_dimensions, *self.hidden)
        self.validate()

    @property
    def half_dimensions(self) -> int:
        return int(self.ft_bias.shape[0])

    @property
    def hidden(self) -> tuple[int, int]:
        return int(self.biases[0].shape[0]), int(self.biases[1].shape[0])

    @property
    def name(self) -> str:
        """YaneuraOu's name of the architecture, e.g. 'halfkp_256x2-32-32'."""
        l1, l2 = self.hidden
        return f"{SHORT_NAMES[self.feature_set]}_{self.half_dimensions}x2-{l1}-{l2}"

    @property
    def hash(self) -> int:
        return (feature_hash(self.feature_set) ^ (2 * self.half_dimensions)) ^ network_hash(
            self.half_dimensions, *self.hidden
        )

    def validate(self) -> None:
        """Check dtypes and shapes against the architecture; NNUEFormatError if wrong."""
        if self.feature_set not in FEATURE_SETS:
            raise NNUEFormatError(f"unknown feature set {self.feature_set!r}")
        h = self.half_dimensions
        l1, l2 = (int(b.shape[0]) for b in self.biases[:2])
        want = [
            ("ft_bias", self.ft_bias, np.int16, (h,)),
            ("ft_weight", self.ft_weight, np.int16, (FEATURE_SETS[self.feature_set], h)),
        ]
        ins = (2 * h, l1, l2)
        outs = (l1, l2, 1)
        if len(self.biases) != 3 or len(self.weights) != 3:
            raise NNUEFormatError("a network has exactly three affine layers")
        for k in range(3):
            want.append((f"biases[{k}]", self.biases[k], np.int32, (outs[k],)))
            want.append((f"weights[{k}]", self.weights[k], np.int8, (outs[k], padded(ins[k]))))
        for label, arr, dtype, shape in want:
            if arr.dtype != dtype or arr.shape != shape:
                raise NNUEFormatError(
                    f"{label}: expected {np.dtype(dtype).name}{list(shape)}, "
                    f"got {arr.dtype.name}{list(arr.shape)}"
                )
        if parse_architecture(self.architecture) != (self.feature_set, h, l1, l2):
            raise NNUEFormatError(
                f"architecture string {self.architecture!r} does not match "
                f"the parameters ({self.feature_set}, {h}x2-{l1}-{l2})"
            )


def _file_size(fs: str, half: int, l1: int, l2: int, arch_len: int) -> int:
    n = 12 + arch_len + 4 + 2 * half + 2 * FEATURE_SETS[fs] * half + 4
    for out, inp in ((l1, 2 * half), (l2, l1), (1, l2)):
        n += 4 * out + out * padded(inp)
    return n


def parse_network(data: bytes, source: str = "<bytes>") -> Network:
    """Decode the bytes of an nn.bin file; NNUEFormatError says what is wrong."""

    def need(n: int, what: str) -> None:
        if len(data) < n:
            raise NNUEFormatError(f"{source}: truncated: {len(data)} bytes, {what} needs {n}")

    need(12, "the header")
    version, file_hash, arch_len = np.frombuffer(data, "<u4", 3, 0).tolist()
    if version != VERSION:
        raise NNUEFormatError(
            f"{source}: not a YaneuraOu NNUE file: version 0x{version:08X}, expected 0x{VERSION:08X}"
        )
    if arch_len > 4096:
        raise NNUEFormatError(f"{source}: architecture string of {arch_len} bytes is not plausible")
    need(12 + arch_len, "the architecture string")
    try:
        arch = data[12 : 12 + arch_len].decode("ascii")
    except UnicodeDecodeError:
        raise NNUEFormatError(f"{source}: the architecture string is not ASCII") from None
    try:
        fs, half, l1, l2 = parse_architecture(arch)
    except NNUEFormatError as e:
        raise NNUEFormatError(f"{source}: {e}") from None
    size = _file_size(fs, half, l1, l2, arch_len)
    need(size, f"architecture {SHORT_NAMES[fs]}_{half}x2-{l1}-{l2}")
    if len(data) > size:
        raise NNUEFormatError(
            f"{source}: {len(data) - size} unexpected bytes after the network "
            f"({len(data)} bytes, {SHORT_NAMES[fs]}_{half}x2-{l1}-{l2} needs {size})"
        )
    offset = 12 + arch_len

    def take(dtype: str, count: int) -> np.ndarray:
        nonlocal offset
        arr = np.frombuffer(data, dtype, count, offset)
        offset += arr.nbytes
        return arr

    want_ft = feature_hash(fs) ^ (2 * half)
    want_net = network_hash(half, l1, l2)
    ft_hash = int(take("<u4", 1)[0])
    ft_bias = take("<i2", half).astype(np.int16)
    ft_weight = take("<i2", FEATURE_SETS[fs] * half).astype(np.int16).reshape(-1, half)
    net_hash = int(take("<u4", 1)[0])
    biases, weights = [], []
    for out, inp in ((l1, 2 * half), (l2, l1), (1, l2)):
        biases.append(take("<i4", out).astype(np.int32))
        weights.append(take("i1", out * padded(inp)).astype(np.int8).reshape(out, padded(inp)))
    for label, got, want in (
        ("feature transformer", ft_hash, want_ft),
        ("network", net_hash, want_net),
        ("file", file_hash, want_ft ^ want_net),
    ):
        if got != want:
            raise NNUEFormatError(
                f"{source}: {label} hash 0x{got:08X} does not match "
                f"{SHORT_NAMES[fs]}_{half}x2-{l1}-{l2} (expected 0x{want:08X})"
            )
    return Network(fs, ft_bias, ft_weight, biases, weights, arch, source)


def read_network(path: str | Path) -> Network:
    """Read an nn.bin file; NNUEFormatError (a ValueError) names the file and the problem."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise NNUEFormatError(f"{path}: no such file") from None
    except OSError as e:
        raise NNUEFormatError(f"{path}: cannot read: {e.strerror or e}") from None
    return parse_network(data, str(path))


def network_bytes(net: Network) -> bytes:
    """The file image of a network (exactly what read_network reads back)."""
    net.validate()
    arch = net.architecture.encode("ascii")
    h1, h2 = net.hidden
    ft_hash = feature_hash(net.feature_set) ^ (2 * net.half_dimensions)
    nt_hash = network_hash(net.half_dimensions, h1, h2)
    parts = [
        np.array([VERSION, ft_hash ^ nt_hash, len(arch)], "<u4").tobytes(),
        arch,
        np.array([ft_hash], "<u4").tobytes(),
        net.ft_bias.astype("<i2").tobytes(),
        net.ft_weight.astype("<i2").tobytes(),
        np.array([nt_hash], "<u4").tobytes(),
    ]
    for b, w in zip(net.biases, net.weights):
        parts += [b.astype("<i4").tobytes(), w.astype("i1").tobytes()]
    return b"".join(parts)


def write_network(net: Network, path: str | Path) -> None:
    """Write `net` as an nn.bin file YaneuraOu reads.  The bytes go to a temporary name
    first: a writer killed midway leaves the previous file whole, never a torn one."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(network_bytes(net))
    os.replace(tmp, path)


def random_network(
    feature_set: str = "HalfKP(Friend)", seed: int = 0, half: int = 256, l1: int = 32, l2: int = 32
) -> Network:
    """A network with random weights whose activations spread over the whole clipped range
    (for tests and benchmarks; it plays no shogi)."""
    if feature_set in ("halfkp", "kp"):
        feature_set = {"halfkp": "HalfKP(Friend)", "kp": "K+P"}[feature_set]
    rng = np.random.default_rng(seed)
    n = FEATURE_SETS[feature_set]
    ft_bias = rng.integers(-40, 100, half).astype(np.int16)
    ft_weight = rng.integers(-24, 25, (n, half)).astype(np.int16)
    biases, weights = [], []
    for out, inp in ((l1, 2 * half), (l2, l1), (1, l2)):
        biases.append(rng.integers(-4000, 8000, out).astype(np.int32))
        w = np.zeros((out, padded(inp)), np.int8)
        w[:, :inp] = rng.integers(-128 if out > 1 else -60, 128 if out > 1 else 61, (out, inp))
        weights.append(w)
    return Network(feature_set, ft_bias, ft_weight, biases, weights)
