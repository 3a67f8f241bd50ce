"""Quantise the PyTorch model into YaneuraOu's integers (and back), written and read with
the engine's own nn.bin writer and reader (usi_engine.nnue.format)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from ...nnue.format import Network, padded, write_network
from .model import NNUE, ACTIVATION_ONE, HIDDEN_WEIGHT_SCALE, output_weight_scale


def _round(t: torch.Tensor, scale: float, dtype, lo: int, hi: int) -> np.ndarray:
    x = np.rint(t.detach().cpu().double().numpy() * scale)
    return np.clip(x, lo, hi).astype(dtype)


def _padded_weights(w: torch.Tensor, scale: float) -> np.ndarray:
    q = _round(w, scale, np.int8, -128, 127)
    out = np.zeros((q.shape[0], padded(q.shape[1])), np.int8)
    out[:, : q.shape[1]] = q
    return out


def to_network(model: NNUE) -> Network:
    """The integer network of a model (see model.py for the scales)."""
    ft_weight = _round(model.folded_ft_weight(), ACTIVATION_ONE, np.int16, -32768, 32767)
    ft_bias = _round(model.ft_bias, ACTIVATION_ONE, np.int16, -32768, 32767)
    hidden_bias = ACTIVATION_ONE * HIDDEN_WEIGHT_SCALE
    out_w = output_weight_scale(model.fv_scale)
    i32 = (-(2**31), 2**31 - 1)
    biases = [
        _round(model.l1.bias, hidden_bias, np.int32, *i32),
        _round(model.l2.bias, hidden_bias, np.int32, *i32),
        _round(model.out.bias, out_w * ACTIVATION_ONE, np.int32, *i32),
    ]
    weights = [
        _padded_weights(model.l1.weight, HIDDEN_WEIGHT_SCALE),
        _padded_weights(model.l2.weight, HIDDEN_WEIGHT_SCALE),
        _padded_weights(model.out.weight, out_w),
    ]
    return Network(model.feature_set, ft_bias, np.ascontiguousarray(ft_weight), biases, weights)


def export(model: NNUE, path: str | Path) -> Network:
    """Write the model as an nn.bin file; returns the integer network written."""
    net = to_network(model)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_network(net, path)
    return net


def from_network(net: Network, fv_scale: int = 16, factorized: bool = False) -> NNUE:
    """A float model equal to an integer network (to go on training from an nn.bin); with
    `factorized`, the piece factor starts at zero on top of the file's rows."""
    h, (l1, l2) = net.half_dimensions, net.hidden
    model = NNUE(net.feature_set, h, l1, l2, fv_scale, factorized)
    out_w = output_weight_scale(fv_scale)
    with torch.no_grad():
        model.ft.weight[:-1] = torch.from_numpy(net.ft_weight.astype(np.float32) / ACTIVATION_ONE)
        model.ft_bias[:] = torch.from_numpy(net.ft_bias.astype(np.float32) / ACTIVATION_ONE)
        ins = (2 * h, l1, l2)
        layers = (model.l1, model.l2, model.out)
        scales = (HIDDEN_WEIGHT_SCALE, HIDDEN_WEIGHT_SCALE, out_w)
        bias_scales = (ACTIVATION_ONE * HIDDEN_WEIGHT_SCALE,) * 2 + (out_w * ACTIVATION_ONE,)
        for k, layer in enumerate(layers):
            layer.weight[:] = torch.from_numpy(net.weights[k][:, : ins[k]].astype(np.float32) / scales[k])
            layer.bias[:] = torch.from_numpy(net.biases[k].astype(np.float32) / bias_scales[k])
    return model


def widen(model: NNUE, half: int, seed: int = 1) -> NNUE:
    """The same evaluation in a network with `half` feature-transformer columns a side.

    The model's columns are copied into the first ones of each half; the new columns start
    as a fresh network's do (small random rows, so their activations differ and can learn),
    and the first hidden layer reads them with zero weights, so the wider network evaluates
    exactly as the narrower one until training moves it.  A wider network is thus trained
    onward from a shipped one (--init) instead of from nothing."""
    h = model.half
    if half < h:
        raise ValueError(f"cannot narrow a {h}x2 network to {half}x2")
    with torch.random.fork_rng(devices=[]):  # the caller's random state is left as it was
        torch.manual_seed(seed)
        wide = NNUE(model.feature_set, half, model.l1_size, model.l2_size, model.fv_scale, model.factorized)
    with torch.no_grad():
        wide.ft.weight[:, :h] = model.ft.weight
        wide.ft_bias[:h] = model.ft_bias
        if model.factorized:
            wide.ft_p.weight[:, :h] = model.ft_p.weight
        wide.l1.weight.zero_()
        wide.l1.weight[:, :h] = model.l1.weight[:, :h]  # the side to move's half
        wide.l1.weight[:, half : half + h] = model.l1.weight[:, h:]  # the other side's
        wide.l1.bias[:] = model.l1.bias
        for name in ("l2", "out"):
            getattr(wide, name).load_state_dict(getattr(model, name).state_dict())
    return wide
