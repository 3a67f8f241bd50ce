"""The NNUE trainer: decoded records and feature indices equal the engine's definitions,
the quantised export equals the model within quantisation, a tiny end-to-end run writes a
loadable nn.bin, resuming equals an unbroken run, bad input is refused with a clear error.

tests/data/training holds 600 self-play positions in 3 shards, made by
`python scripts/gensfen.py --out tests/data/training --positions 600 --shard-size 200
--seed 11 --depth 5 --workers 1`.
"""

import os
import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from usi_engine.nnue import read_network, random_network
from usi_engine.nnue.features import active_features, FEATURE_SETS
from usi_engine.nnue import reference
from usi_engine.position import Position
from usi_engine.training.data import psv
from usi_engine.training.learn import dataset as ds
from usi_engine.training.learn.export import to_network, from_network
from usi_engine.training.learn.model import NNUE
from usi_engine.training.learn.trainer import TrainConfig, train, target, loss_fn

# one thread: on a small shared machine torch's thread pool spins against the other processes
torch.set_num_threads(1)

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data" / "training"
SCRIPT = REPO / "scripts" / "train_nnue.py"


def fixture_positions():
    return ds.load_positions(ds.shard_files([str(DATA)]))


def playout_positions(count, seed):
    """Positions from random playouts of our own Position (many pieces in hand)."""
    rng = random.Random(seed)
    boards, hands, sides = [], [], []
    while len(sides) < count:
        pos = Position()
        for _ in range(rng.randrange(20, 160)):
            moves = pos.legal_moves()
            if not moves:
                break
            pos.push(rng.choice(moves))
        if pos.arrays.st[2] < 0 or pos.arrays.st[3] < 0:
            continue
        boards.append(pos.arrays.board.copy())
        hands.append(pos.arrays.hands.copy())
        sides.append(pos.side_to_move())
    return np.array(boards), np.array(hands), np.array(sides, np.int8)


# --- data --------------------------------------------------------------------------------


def test_decoded_records_equal_our_positions():
    files = ds.shard_files([str(DATA)])
    records = np.concatenate([psv.read_records(f) for f in files])
    pos = ds.decode(records)
    assert len(pos) == 600
    for i in range(0, 600, 7):
        ours = Position(psv.record_sfen(records[i]))
        assert np.array_equal(pos.boards[i], ours.arrays.board)
        assert np.array_equal(pos.hands[i], ours.arrays.hands)
        assert pos.side[i] == ours.side_to_move()
        assert pos.score[i] == records[i]["score"] and pos.result[i] == records[i]["game_result"]


def mirror_sfen(sfen):
    """The SFEN with files 1 <-> 9: every rank written backwards, one cell at a time (a '+'
    stays in front of its letter; runs of '1' are valid SFEN)."""
    board, rest = sfen.split(" ", 1)
    ranks = []
    for rank in board.split("/"):
        cells = []
        for token in re.findall(r"\+?[A-Za-z]|\d", rank):
            cells += ["1"] * int(token) if token.isdigit() else [token]
        ranks.append("".join(reversed(cells)))
    return "/".join(ranks) + " " + rest


def test_mirrored_positions_are_the_mirrored_sfens():
    files = ds.shard_files([str(DATA)])
    records = np.concatenate([psv.read_records(f) for f in files])[:120]
    pos = ds.decode(records)
    both = ds.with_mirrors(pos)
    assert len(both) == 240
    for i in range(0, 120, 5):
        theirs = Position(mirror_sfen(psv.record_sfen(records[i])))
        assert np.array_equal(both.boards[120 + i], theirs.arrays.board)
        assert np.array_equal(both.hands[120 + i], theirs.arrays.hands)
        assert both.side[120 + i] == theirs.side_to_move()
        assert (both.score[120 + i], both.result[120 + i]) == (pos.score[i], pos.result[i])
        assert np.array_equal(both.boards[i], pos.boards[i])


@pytest.mark.parametrize("feature_set", ["HalfKP(Friend)", "K+P"])
def test_feature_indices_equal_the_engine_definition(feature_set):
    fix = fixture_positions()
    boards, hands, sides = playout_positions(150, 3)
    boards = np.concatenate([boards, fix.boards])
    hands = np.concatenate([hands, fix.hands])
    assert hands.sum() > 500  # hand features are exercised
    pad = FEATURE_SETS[feature_set]
    for persp in (0, 1):
        got = ds.feature_indices(feature_set, boards, hands, np.full(len(boards), persp))
        for b in range(len(boards)):
            row = sorted(int(x) for x in got[b] if x != pad)
            assert row == active_features(feature_set, boards[b], hands[b], persp), b


def test_feature_indices_refuse_a_missing_king():
    board = np.zeros((1, 81), np.int8)
    board[0, 40] = 8  # black king only
    with pytest.raises(ValueError, match="HalfKP needs the perspective's king"):
        ds.feature_indices("HalfKP(Friend)", board, np.zeros((1, 2, 8), np.int8), np.array([1]))
    with pytest.raises(ValueError, match="unknown feature set 'HalfKA'"):
        ds.feature_indices("HalfKA", board, np.zeros((1, 2, 8), np.int8), np.array([0]))


def test_target_mixes_score_and_result():
    score = torch.tensor([0.0, 600.0, -600.0])
    result = torch.tensor([1.0, 0.0, -1.0])
    assert torch.allclose(target(score, result, 1.0, 600.0), torch.sigmoid(score / 600.0))
    assert torch.allclose(target(score, result, 0.0, 600.0), torch.tensor([1.0, 0.5, 0.0]))
    mixed = target(score, result, 0.25, 600.0)
    assert torch.allclose(mixed, 0.25 * torch.sigmoid(score / 600.0) + 0.75 * torch.tensor([1.0, 0.5, 0.0]))
    # with lambda 1 the loss is smallest when the prediction is the teacher's score
    losses = [
        float(loss_fn(torch.tensor([p]), torch.tensor([300.0]), torch.tensor([0.0]), 1.0, 600.0))
        for p in (0.0, 200.0, 300.0, 400.0)
    ]
    assert min(losses) == losses[2]


def test_score_factor_scales_before_the_score_limit():
    """A teacher's centipawns brought to ours: every score times the factor, then the limit."""
    from usi_engine.training.learn.trainer import load_split

    files = ds.shard_files([str(DATA)])
    raw = ds.load_positions(files).score.astype(np.int64)
    cfg = TrainConfig(data=[str(DATA)], out="unused", score_limit=300, score_factor=0.5)
    scaled = load_split(files, cfg).score.astype(np.int64)
    expected = np.rint(raw * 0.5)
    expected = expected[np.abs(expected) <= 300]
    assert np.array_equal(scaled, expected)
    assert len(scaled) > np.count_nonzero(np.abs(raw) <= 300)  # the limit came after
    plain = load_split(files, TrainConfig(data=[str(DATA)], out="unused", score_limit=300)).score
    assert np.array_equal(plain, raw[np.abs(raw) <= 300])


def test_score_factor_for_a_folder_scales_only_its_shards(tmp_path):
    """Two teachers in one run: the shards under one folder take their own factor, the
    others --score-factor's, in file order."""
    from usi_engine.commands.train import parse_args
    from usi_engine.training.learn.trainer import load_split

    shard = ds.shard_files([str(DATA)])[0]
    records = psv.read_shard(shard)
    for name in ("ours", "gps"):
        (tmp_path / name).mkdir()
        psv.write_records(str(tmp_path / name / "shard_00000.bin"), records)
    files = ds.shard_files([str(tmp_path / "ours"), str(tmp_path / "gps")])
    a = parse_args([*files, "--out", "unused", "--score-factor-for", f"{tmp_path / 'gps'}=0.5"])
    assert a.score_factor_for == [(str(tmp_path / "gps"), 0.5)]
    cfg = TrainConfig(data=files, out="unused", score_limit=30000, score_factors=tuple(a.score_factor_for))
    raw = ds.load_positions([shard]).score.astype(np.int64)
    scores = load_split(files, cfg).score.astype(np.int64)
    assert np.array_equal(scores, np.concatenate([raw, np.rint(raw * 0.5)]))
    # a later entry for the same shard wins; a factor for a file alone works too
    later = TrainConfig(
        data=files, out="unused", score_limit=30000, score_factors=((str(tmp_path), 2.0), (files[1], 0.25))
    )
    assert np.array_equal(
        load_split(files, later).score, np.concatenate([np.rint(raw * 2.0), np.rint(raw * 0.25)])
    )


def test_score_factor_for_a_path_without_shards_is_refused(tmp_path):
    """A mistyped folder would leave its teacher's centipawns unscaled: the run stops first."""
    cfg = TrainConfig(
        data=[str(DATA)], out=str(tmp_path / "net"), epochs=1, score_factors=((str(tmp_path / "gsp"), 0.87),)
    )
    with pytest.raises(ValueError, match="score factor for .*gsp: names no shard"):
        train(cfg)
    assert not (tmp_path / "net" / "nn.bin").exists()


def test_score_factor_for_refuses_a_bad_value(capsys):
    from usi_engine.commands.train import parse_args

    for bad in ("runs/gps", "runs/gps=", "=0.5", "runs/gps=-1", "runs/gps=x"):
        with pytest.raises(SystemExit):
            parse_args(["data", "--out", "unused", "--score-factor-for", bad])
        assert "expected PATH=FACTOR with a positive FACTOR" in capsys.readouterr().err


# --- export ------------------------------------------------------------------------------


@pytest.mark.parametrize("feature_set", ["K+P", "HalfKP(Friend)"])
def test_integer_network_survives_the_float_model(feature_set):
    net = random_network(feature_set, seed=4, half=32 if feature_set != "K+P" else 256)
    back = to_network(from_network(net))
    assert back.architecture == net.architecture
    assert np.array_equal(back.ft_weight, net.ft_weight) and np.array_equal(back.ft_bias, net.ft_bias)
    for k in range(3):
        assert np.array_equal(back.biases[k], net.biases[k])
        assert np.array_equal(back.weights[k], net.weights[k])


# --- training ----------------------------------------------------------------------------


def small_config(out, **kw):
    base = dict(
        data=[str(DATA)],
        out=str(out),
        feature_set="K+P",
        epochs=1,
        batch_size=128,
        lr=2e-3,
        seed=3,
        device="cpu",
    )
    base.update(kw)
    return TrainConfig(**base)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """K+P 256x2-32-32 trained for three epochs on the fixture."""
    out = tmp_path_factory.mktemp("kp")
    summary = train(small_config(out, epochs=3), show_progress=False, log=lambda s: None)
    return out, summary


def test_tiny_run_writes_a_loadable_network(trained):
    out, summary = trained
    net = read_network(out / "nn.bin")
    assert net.name == "kp_256x2-32-32"
    assert summary["train_positions"] + summary["val_positions"] <= 600
    assert summary["val_files"] == [str(DATA / "shard_00002.bin")]
    hist = summary["history"]
    assert [h["epoch"] for h in hist] == [0, 1, 2, 3]
    assert hist[-1]["train_loss"] < hist[1]["train_loss"]
    assert (out / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "checkpoint.pt").exists() and (out / "history.json").exists()
    best = min(hist[1:], key=lambda h: h["val_loss"])["epoch"]
    assert read_network(out / "best" / "nn.bin").name == "kp_256x2-32-32"
    assert ((out / "best" / "nn.bin").read_bytes() == (out / "nn.bin").read_bytes()) == (best == 3)


def test_exported_network_agrees_with_the_model(trained):
    """The engine's integer forward pass (reference.py) on the validation positions is the
    float model's evaluation within quantisation."""
    out, summary = trained
    net = read_network(out / "nn.bin")
    model = from_network(net)
    val = ds.load_positions(summary["val_files"])
    us = torch.from_numpy(ds.feature_indices("K+P", val.boards, val.hands, val.side))
    them = torch.from_numpy(ds.feature_indices("K+P", val.boards, val.hands, 1 - val.side))
    ckpt = torch.load(out / "checkpoint.pt", weights_only=False)
    trained_model = NNUE("K+P")
    trained_model.load_state_dict(ckpt["model"])
    with torch.no_grad():
        f_trained = trained_model(us, them).numpy()
        f_quant = model(us, them).numpy()
    ints = np.array(
        [reference.evaluate(net, val.boards[i], val.hands[i], int(val.side[i])) for i in range(len(val))]
    )
    records = psv.read_records(summary["val_files"][0])
    engine = np.array([Position(psv.record_sfen(r)).evaluate(net) for r in records])
    assert np.array_equal(engine, ints)  # the engine's numba evaluation
    assert np.std(ints) > 20  # the network says something
    assert np.abs(f_quant - ints).max() <= 12  # rounding of activations only
    assert np.abs(f_trained - ints).mean() <= 6
    assert np.corrcoef(f_trained, ints)[0, 1] > 0.99


def test_resume_equals_an_unbroken_run(trained, tmp_path):
    out, _ = trained
    train(small_config(tmp_path, epochs=2), show_progress=False, log=lambda s: None)
    train(
        small_config(tmp_path, epochs=3, resume=str(tmp_path / "checkpoint.pt")),
        show_progress=False,
        log=lambda s: None,
    )
    assert (tmp_path / "nn.bin").read_bytes() == (out / "nn.bin").read_bytes()


def assert_engine_agrees_with_halfkp_model(model, net, val_file, count=60):
    """The engine's evaluation with `net` is the float `model`'s within quantisation."""
    records = psv.read_records(val_file)[:count]
    pos = ds.decode(records)
    us = torch.from_numpy(ds.feature_indices("HalfKP(Friend)", pos.boards, pos.hands, pos.side))
    them = torch.from_numpy(ds.feature_indices("HalfKP(Friend)", pos.boards, pos.hands, 1 - pos.side))
    with torch.no_grad():
        floats = model(us, them).numpy()
    engine = np.array([Position(psv.record_sfen(r)).evaluate(net) for r in records])
    assert np.abs(floats - engine).max() <= 12


def test_a_widened_network_evaluates_exactly_as_the_narrow_one_and_trains_on(tmp_path):
    """widen(): halfkp_16x2 into 32x2 with the new columns read by zero weights: the exported
    wider file evaluates every position exactly as the narrow one, training from it starts
    at the narrow network's loss, and the new columns learn."""
    from usi_engine.nnue import write_network
    from usi_engine.training.learn.export import widen

    narrow = random_network("HalfKP(Friend)", seed=7, half=16)
    wide_net = to_network(widen(from_network(narrow), 32))
    assert wide_net.name == "halfkp_32x2-32-32"
    records = psv.read_records(DATA / "shard_00002.bin")[:60]
    sfens = [psv.record_sfen(r) for r in records]
    narrow_evals = [Position(s).evaluate(narrow) for s in sfens]
    assert [Position(s).evaluate(wide_net) for s in sfens] == narrow_evals
    assert len(set(narrow_evals)) > 10
    assert np.count_nonzero(wide_net.ft_weight[:, 16:]) > 0  # the new columns are not dead

    write_network(narrow, tmp_path / "narrow.bin")
    runs = {}
    for half in (16, 32):
        cfg = small_config(
            tmp_path / f"h{half}",
            feature_set="HalfKP(Friend)",
            half=half,
            batch_size=128,
            init=str(tmp_path / "narrow.bin"),
        )
        runs[half] = train(cfg, show_progress=False, log=lambda s: None)
    start = [runs[h]["history"][0] for h in (16, 32)]
    assert start[0]["val_loss"] == pytest.approx(start[1]["val_loss"], abs=1e-6)
    trained = torch.load(tmp_path / "h32" / "checkpoint.pt", weights_only=False)["model"]
    assert float(trained["l1.weight"][:, 16:32].abs().sum()) > 0  # read by the first layer now
    assert read_network(tmp_path / "h32" / "nn.bin").name == "halfkp_32x2-32-32"
    with pytest.raises(ValueError, match="cannot narrow a 16x2 network to 8x2"):
        train(
            small_config(
                tmp_path / "h8", feature_set="HalfKP(Friend)", half=8, init=str(tmp_path / "narrow.bin")
            )
        )
    with pytest.raises(ValueError, match="hidden layers are not 16-32"):
        train(
            small_config(
                tmp_path / "l16",
                feature_set="HalfKP(Friend)",
                half=32,
                l1=16,
                init=str(tmp_path / "narrow.bin"),
            )
        )
    assert not (tmp_path / "h8" / "nn.bin").exists()


def test_the_default_architecture_is_the_init_networks(tmp_path):
    from usi_engine.commands.train import default_arch
    from usi_engine.nnue import write_network

    assert default_arch(None) == "kp_256x2-32-32"
    write_network(random_network("HalfKP(Friend)", seed=1, half=16), tmp_path / "nn.bin")
    assert default_arch(str(tmp_path / "nn.bin")) == "halfkp_16x2-32-32"
    (tmp_path / "bad.bin").write_bytes(b"not a network")
    with pytest.raises(SystemExit, match=r"--init .*bad\.bin: "):
        default_arch(str(tmp_path / "bad.bin"))


def test_halfkp_one_epoch_end_to_end(tmp_path):
    # a narrow transformer keeps the test quick; the feature path is the full HalfKP one
    summary = train(
        small_config(tmp_path, feature_set="HalfKP(Friend)", half=16, batch_size=256),
        show_progress=False,
        log=lambda s: None,
    )
    net = read_network(tmp_path / "nn.bin")
    assert net.name == "halfkp_16x2-32-32"
    assert np.count_nonzero(net.ft_weight) > 0
    assert len(summary["history"]) == 2
    model = from_network(net)
    assert_engine_agrees_with_halfkp_model(model, net, summary["val_files"][0])


def test_factorized_halfkp_folds_the_piece_factor_into_the_file(tmp_path):
    """The shared piece factor is trained and folded into every king square's rows: the
    exported file evaluates what the factorised float model evaluates, within quantisation."""
    summary = train(
        small_config(tmp_path, feature_set="HalfKP(Friend)", half=16, batch_size=128, factorized=True),
        show_progress=False,
        log=lambda s: None,
    )
    ckpt = torch.load(tmp_path / "checkpoint.pt", weights_only=False)
    model = NNUE("HalfKP(Friend)", 16, factorized=True)
    model.load_state_dict(ckpt["model"])
    assert ckpt["model_config"]["factorized"] is True
    assert float(model.ft_p.weight.detach().abs().sum()) > 0  # the factor learnt something
    net = read_network(tmp_path / "nn.bin")
    assert net.name == "halfkp_16x2-32-32"  # an ordinary HalfKP file
    folded = model.folded_ft_weight().detach().numpy() * 127
    assert np.abs(net.ft_weight - folded).max() <= 0.5 + 1e-3
    assert_engine_agrees_with_halfkp_model(model, net, summary["val_files"][0])


def test_mirror_doubles_the_training_positions_not_the_validation(tmp_path):
    plain = train(small_config(tmp_path / "a", epochs=1), show_progress=False, log=lambda s: None)
    mirrored = train(
        small_config(tmp_path / "b", epochs=1, mirror=True), show_progress=False, log=lambda s: None
    )
    assert mirrored["train_positions"] == 2 * plain["train_positions"]
    assert mirrored["val_positions"] == plain["val_positions"]
    assert mirrored["config"]["mirror"] is True


def test_factorize_needs_halfkp():
    with pytest.raises(ValueError, match="only HalfKP networks have a piece factor"):
        NNUE("K+P", factorized=True)


def test_cli_refuses_bad_input(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    one = tmp_path / "one"
    one.mkdir()
    (one / "a.bin").write_bytes((DATA / "shard_00000.bin").read_bytes())
    r = subprocess.run(
        [sys.executable, str(SCRIPT), str(one), "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 2
    assert "need at least two shards (the last is held out for validation) or --val" in r.stderr
    r = subprocess.run(
        [sys.executable, str(SCRIPT), str(DATA), "--out", str(tmp_path / "o"), "--arch", "kp_256-32"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode != 0 and "expected e.g. kp_256x2-32-32" in r.stderr
    r = subprocess.run(
        [sys.executable, str(SCRIPT), str(DATA), "--out", str(tmp_path / "o"), "--factorize"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 2 and "only HalfKP networks have a piece factor to train" in r.stderr
    assert not (tmp_path / "o" / "nn.bin").exists()


# --- a wider network, in YaneuraOu's own build for its architecture -----------------------

YANEURAOU_HALFKP256 = REPO.parent / "shared" / "opponents" / "yaneuraou" / "YaneuraOu-nnue-halfkp256"


def yaneuraou_evals(binary: Path, eval_dir: Path, sfens: list[str]) -> list[int]:
    """YaneuraOu's static evaluation (`e`: `eval = N`, side to move's view) of each SFEN
    with the network of `eval_dir`."""
    script = [
        "usi",
        f"setoption name EvalDir value {eval_dir}",
        "setoption name Threads value 1",
        "setoption name USI_Hash value 16",
        "isready",
    ]
    for sfen in sfens:
        script += [f"position sfen {sfen}", "e"]
    run = subprocess.run(
        [str(binary)], input="\n".join(script + ["quit"]) + "\n", capture_output=True, text=True, timeout=120
    )
    values = [int(m.group(1)) for m in re.finditer(r"^eval = (-?\d+)", run.stdout, re.M)]
    assert len(values) == len(sfens), run.stdout[-2000:]
    return values


def test_a_wider_halfkp_network_exports_exactly_and_loads_in_yaneuraou(tmp_path):
    """halfkp_256x2-32-32, YaneuraOu's standard shape, trained one epoch: the engine's
    evaluation equals the numpy reference exactly and the float model within quantisation,
    and YaneuraOu's build for that shape loads the file and evaluates every position the
    same."""
    summary = train(
        small_config(tmp_path, feature_set="HalfKP(Friend)", half=256, batch_size=256),
        show_progress=False,
        log=lambda s: None,
    )
    net = read_network(tmp_path / "nn.bin")
    assert net.name == "halfkp_256x2-32-32"
    assert_engine_agrees_with_halfkp_model(from_network(net), net, summary["val_files"][0])
    records = psv.read_records(summary["val_files"][0])[:40]
    sfens = [psv.record_sfen(r) for r in records]
    ours = [Position(s).evaluate(net) for s in sfens]
    positions = ds.decode(records)
    assert ours == [
        reference.evaluate(net, positions.boards[i], positions.hands[i], int(positions.side[i]))
        for i in range(len(records))
    ]
    assert len(set(ours)) > 10  # the network tells positions apart
    if not YANEURAOU_HALFKP256.exists():
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"{YANEURAOU_HALFKP256} is missing")
        pytest.skip(f"{YANEURAOU_HALFKP256} is not here")
    assert yaneuraou_evals(YANEURAOU_HALFKP256, tmp_path, sfens) == ours


YANEURAOU_HALFKP64 = REPO.parent / "shared" / "opponents" / "yaneuraou" / "YaneuraOu-nnue-halfkp64"


def test_the_shipped_network_evaluates_the_same_in_yaneuraous_build():
    """The shipped nn.bin (halfkp_64x2-32-32) in YaneuraOu's build for that shape: the same
    static evaluation as ours on 40 positions of the training fixture."""
    from usi_engine.core.network import shipped_network_path

    path = shipped_network_path()
    net = read_network(path)
    records = psv.read_records(str(DATA / "shard_00002.bin"))[:40]
    sfens = [psv.record_sfen(r) for r in records]
    ours = [Position(s).evaluate(net) for s in sfens]
    assert len(set(ours)) > 10
    if not YANEURAOU_HALFKP64.exists():
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"{YANEURAOU_HALFKP64} is missing")
        pytest.skip(f"{YANEURAOU_HALFKP64} is not here")
    assert yaneuraou_evals(YANEURAOU_HALFKP64, path.parent, sfens) == ours
