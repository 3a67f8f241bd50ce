"""The NNUE network in PyTorch (float), and its exact mapping to YaneuraOu's integers.

Float and integer networks correspond as follows (format.py has the integer forward pass):

- feature transformer: accumulator = bias + sum of the active rows; the float activation
  1.0 is the integer 127 (``ClippedReLU`` clips the int16 accumulator to 0..127), so the
  int16 weights and biases are the float ones times 127.
- hidden affine layers: int8 weights are the float ones times 64 (the ``>> 6`` of
  ClippedReLU), int32 biases times 127 * 64; the float range of a weight is therefore
  [-128/64, 127/64].
- output layer: the engine's evaluation is ``raw / FV_SCALE`` centipawns; the model's output
  times OUTPUT_SCALE is centipawns, so weights are scaled by FV_SCALE * OUTPUT_SCALE / 127
  and the bias by FV_SCALE * OUTPUT_SCALE.

`clip_()` keeps every parameter inside what these integer types can hold, after each step.

Factorisation (HalfKP only): a HalfKP row (king square, piece) is seen in training as the
sum of its own row and a shared row of the piece alone (the "P" factor), so what a piece
is worth wherever the king stands is learnt from every position instead of only those with
the king on that square.  The export folds the factor into each king's rows
(`folded_ft_weight`), so the file is an ordinary HalfKP network.
"""

from __future__ import annotations

import torch
from torch import nn

from ...nnue.features import FEATURE_SETS, FE_END
from ...nnue.format import DEFAULT_FV_SCALE, WEIGHT_SCALE_BITS

ACTIVATION_ONE = 127  # the integer that float activation 1.0 becomes
HIDDEN_WEIGHT_SCALE = 1 << WEIGHT_SCALE_BITS
OUTPUT_SCALE = 600.0  # centipawns per unit of the model's output
INT16_MAX, INT8_MAX = 32767, 127


def output_weight_scale(fv_scale: int = DEFAULT_FV_SCALE) -> float:
    return fv_scale * OUTPUT_SCALE / ACTIVATION_ONE


class NNUE(nn.Module):
    """``feature_set``: "HalfKP(Friend)" or "K+P"; architecture ``{half}x2-{l1}-{l2}``;
    ``factorized``: train HalfKP with the shared piece factor (see the module's docstring)."""

    def __init__(
        self,
        feature_set: str = "K+P",
        half: int = 256,
        l1: int = 32,
        l2: int = 32,
        fv_scale: int = DEFAULT_FV_SCALE,
        factorized: bool = False,
    ) -> None:
        super().__init__()
        if feature_set not in FEATURE_SETS:
            raise ValueError(f"unknown feature set {feature_set!r}; known: {', '.join(FEATURE_SETS)}")
        self.feature_set, self.half, self.l1_size, self.l2_size = feature_set, half, l1, l2
        self.fv_scale = fv_scale
        if factorized and feature_set != "HalfKP(Friend)":
            raise ValueError("only HalfKP networks have a piece factor to train")
        self.factorized = factorized
        n = FEATURE_SETS[feature_set]
        # row n is the padding of the fixed-width index batches: never read, never trained
        self.ft = nn.EmbeddingBag(n + 1, half, mode="sum", padding_idx=n)
        self.ft_bias = nn.Parameter(torch.full((half,), 0.5))
        self.l1 = nn.Linear(2 * half, l1)
        self.l2 = nn.Linear(l1, l2)
        self.out = nn.Linear(l2, 1)
        with torch.no_grad():
            # about 38 active rows: keep the sum's spread inside the 0..1 ClippedReLU range
            self.ft.weight.uniform_(-0.05, 0.05)
            self.ft.weight[n].zero_()
        if factorized:
            # starts at zero: the sum begins as the unfactorised network
            self.ft_p = nn.EmbeddingBag(FE_END + 1, half, mode="sum", padding_idx=FE_END)
            with torch.no_grad():
                self.ft_p.weight.zero_()
        self.clip_()

    def config(self) -> dict:
        return {
            "feature_set": self.feature_set,
            "half": self.half,
            "l1": self.l1_size,
            "l2": self.l2_size,
            "fv_scale": self.fv_scale,
            "factorized": self.factorized,
        }

    def _accumulate(self, idx: torch.Tensor) -> torch.Tensor:
        acc = self.ft(idx)
        if self.factorized:
            pad = self.ft.weight.shape[0] - 1
            acc = acc + self.ft_p(torch.where(idx == pad, FE_END, idx % FE_END))
        return acc

    def folded_ft_weight(self) -> torch.Tensor:
        """The feature rows as the file holds them: with the piece factor added to every
        king square's rows (no padding row)."""
        w = self.ft.weight[:-1]
        if self.factorized:
            kings = w.shape[0] // FE_END
            w = w + self.ft_p.weight[:FE_END].repeat(kings, 1)
        return w

    def forward(self, us: torch.Tensor, them: torch.Tensor) -> torch.Tensor:
        """Centipawns from the side to move's view; `us`/`them`: int[B, k] feature indices
        of the side to move's and the other side's perspective."""
        a = torch.cat([self._accumulate(us), self._accumulate(them)], dim=1) + self.ft_bias.repeat(2)
        x = torch.clamp(a, 0.0, 1.0)
        x = torch.clamp(self.l1(x), 0.0, 1.0)
        x = torch.clamp(self.l2(x), 0.0, 1.0)
        return self.out(x)[:, 0] * OUTPUT_SCALE

    @torch.no_grad()
    def clip_(self) -> None:
        """Keep parameters inside the ranges their integer types allow after quantisation."""
        ft_lim = INT16_MAX / ACTIVATION_ONE
        self.ft.weight.clamp_(-ft_lim, ft_lim)
        self.ft_bias.clamp_(-ft_lim, ft_lim)
        for layer in (self.l1, self.l2):
            layer.weight.clamp_(-128 / HIDDEN_WEIGHT_SCALE, INT8_MAX / HIDDEN_WEIGHT_SCALE)
            layer.bias.clamp_(
                -(2**31) / (ACTIVATION_ONE * HIDDEN_WEIGHT_SCALE),
                (2**31 - 1) / (ACTIVATION_ONE * HIDDEN_WEIGHT_SCALE),
            )
        s = output_weight_scale(self.fv_scale)
        self.out.weight.clamp_(-128 / s, INT8_MAX / s)
