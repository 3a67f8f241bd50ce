"""nn.bin files damaged: truncated, bits flipped, bytes overwritten, random bytes.  Loading
gives an NNUEFormatError (a ValueError) naming the file and the problem, or, when only
weights were hit, a network of the same architecture: the header, the sizes and the three
hashes let no structural damage through.

The file is real: tests/data/nnue/kp_256x2-32-32/nn.bin, in YaneuraOu's format.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzing import CASES, byte_mutation, fuzz_settings
from usi_engine.core.network import load_eval_dir
from usi_engine.nnue import NNUEFormatError, read_network
from usi_engine.nnue.format import network_bytes, parse_network, write_network

NN_BIN = Path(__file__).resolve().parent / "data" / "nnue" / "kp_256x2-32-32" / "nn.bin"
ORIGINAL = NN_BIN.read_bytes()
NET = parse_network(ORIGINAL)
ARCH_END = 12 + len(NET.architecture.encode("ascii"))
FT_HASH_AT = ARCH_END  # uint32 before the biases
NET_HASH_AT = ARCH_END + 4 + 2 * NET.half_dimensions * (1 + NET.ft_weight.shape[0])


def load_or_refuse(data: bytes, source: str = "fuzzed.bin"):
    """The property: NNUEFormatError naming the source, or a network whose structure (header,
    hashes, size) is the original's."""
    CASES["nn.bin"] += 1
    try:
        net = parse_network(data, source)
    except NNUEFormatError as exc:
        assert str(exc).startswith(source + ": "), exc
        return None
    assert len(data) == len(ORIGINAL)
    structure = [(0, ARCH_END), (FT_HASH_AT, FT_HASH_AT + 4), (NET_HASH_AT, NET_HASH_AT + 4)]
    assert all(data[a:b] == ORIGINAL[a:b] for a, b in structure)
    assert (net.name, net.architecture) == (NET.name, NET.architecture)
    assert network_bytes(net) == data  # read exactly as stored: no silent garbage
    return net


@fuzz_settings()
@given(data=st.data())
def test_damaged_network(data):
    load_or_refuse(byte_mutation(ORIGINAL, data.draw))


@fuzz_settings()
@given(at=st.integers(0, FT_HASH_AT + 3), junk=st.binary(min_size=1, max_size=4))
def test_damaged_header(at, junk):
    """Damage where the structure is: the header, the architecture string, the first hash."""
    buf = bytearray(ORIGINAL)
    buf[at : at + len(junk)] = junk
    if buf[: FT_HASH_AT + 4] != ORIGINAL[: FT_HASH_AT + 4]:
        assert load_or_refuse(bytes(buf)) is None


@fuzz_settings(0.5)
@given(raw=st.binary(max_size=4096))
def test_random_bytes(raw):
    assert load_or_refuse(raw) is None


def test_every_truncation_is_refused_with_its_size():
    for size in (0, 3, 12, ARCH_END - 1, ARCH_END + 2, len(ORIGINAL) // 2, len(ORIGINAL) - 1):
        with pytest.raises(NNUEFormatError, match=rf"^x\.bin: truncated: {size} bytes, .* needs \d+$"):
            parse_network(ORIGINAL[:size], "x.bin")


def test_damaged_file_in_evaldir_names_it(tmp_path):
    (tmp_path / "nn.bin").write_bytes(ORIGINAL[:1000])
    with pytest.raises(NNUEFormatError, match="truncated") as err:
        load_eval_dir(str(tmp_path))
    assert str(tmp_path / "nn.bin") in str(err.value)


def test_write_network_leaves_no_torn_file(tmp_path):
    """The writer goes through a temporary name: the file is the old one or the new one."""
    path = tmp_path / "nn.bin"
    write_network(NET, path)
    assert path.read_bytes() == ORIGINAL
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nn.bin"]
    assert np.array_equal(read_network(path).ft_weight, NET.ft_weight)
