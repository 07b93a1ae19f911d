"""Reference kernels: recurrent layers CommonLSTM and CommonGRU (ONNX LSTM/GRU semantics and attrs,
which GE's ONNX plugins pass through). One loop iteration per time step; each step is a batched
matrix product."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .reference import KernelContext, register_kernel

__all__: list[str] = []

_Act = Callable[[np.ndarray], np.ndarray]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _activation(name: str, alpha: float | None, beta: float | None) -> _Act:
    key = name.lower()
    if key == "sigmoid":
        return _sigmoid
    if key == "tanh":
        return np.tanh
    if key == "relu":
        return lambda x: np.maximum(x, 0)
    if key == "leakyrelu":
        a = 0.01 if alpha is None else alpha
        return lambda x: np.where(x >= 0, x, a * x)
    if key == "thresholdedrelu":
        a = 1.0 if alpha is None else alpha
        return lambda x: np.where(x > a, x, 0)
    if key == "scaledtanh":
        a, b = (1.0 if alpha is None else alpha), (1.0 if beta is None else beta)
        return lambda x: a * np.tanh(b * x)
    if key == "hardsigmoid":
        a, b = (0.2 if alpha is None else alpha), (0.5 if beta is None else beta)
        return lambda x: np.clip(a * x + b, 0, 1)
    if key == "elu":
        a = 1.0 if alpha is None else alpha
        return lambda x: np.where(x >= 0, x, a * (np.exp(np.minimum(x, 0)) - 1))
    if key == "softsign":
        return lambda x: x / (1 + np.abs(x))
    if key == "softplus":
        return lambda x: np.logaddexp(0, x)
    if key == "affine":
        a, b = (1.0 if alpha is None else alpha), (0.0 if beta is None else beta)
        return lambda x: a * x + b
    raise ValueError(f"unknown recurrent activation {name!r}")


_NEEDS_ALPHA = {"leakyrelu", "thresholdedrelu", "scaledtanh", "hardsigmoid", "elu", "affine"}
_NEEDS_BETA = {"scaledtanh", "hardsigmoid", "affine"}


def _activations(ctx: KernelContext, defaults: Sequence[str], num_dirs: int) -> list[list[_Act]]:
    names = [str(n) for n in ctx.attr("activations", [])] or list(defaults) * num_dirs
    if len(names) == len(defaults):
        names = names * num_dirs
    alphas = [float(v) for v in ctx.attr("activation_alpha", [])]
    betas = [float(v) for v in ctx.attr("activation_beta", [])]
    acts: list[_Act] = []
    for name in names:
        key = name.lower()
        a = alphas.pop(0) if key in _NEEDS_ALPHA and alphas else None
        b = betas.pop(0) if key in _NEEDS_BETA and betas else None
        acts.append(_activation(name, a, b))
    k = len(defaults)
    return [acts[d * k:(d + 1) * k] for d in range(num_dirs)]


def _directions(ctx: KernelContext) -> list[bool]:
    """One entry per direction: True when it runs backwards."""
    direction = str(ctx.attr("direction", "forward"))
    return {"forward": [False], "reverse": [True], "bidirectional": [False, True]}[direction]


def _prepare(ctx: KernelContext, x: np.ndarray, seq_lens: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, int]:
    layout = int(ctx.attr("layout", 0))
    xs = np.swapaxes(x, 0, 1) if layout == 1 else x  # -> seq, batch, input
    seq, batch = xs.shape[:2]
    lens = np.full(batch, seq, dtype=np.int64) if seq_lens is None else seq_lens.astype(np.int64).reshape(batch)
    return xs, lens, layout


def _time_order(t_count: int, reverse: bool, lens: np.ndarray) -> list[np.ndarray]:
    """Per step, the time index each batch element reads (reverse runs backwards within its own length)."""
    steps = []
    for s in range(t_count):
        steps.append(np.maximum(lens - 1 - s, 0) if reverse else np.full(lens.shape, s))
    return steps


def _finish(ctx: KernelContext, ys: np.ndarray, states: list[np.ndarray], layout: int, dtype: np.dtype) -> list[np.ndarray]:
    """ys: seq, dirs, batch, H; states: each dirs, batch, H."""
    if layout == 1:
        ys = np.transpose(ys, (2, 0, 1, 3))
        states = [np.swapaxes(s, 0, 1) for s in states]
    return [ys.astype(dtype)] + [s.astype(dtype) for s in states]


@register_kernel("CommonLSTM")
def _lstm(ctx: KernelContext, x: np.ndarray, w: np.ndarray, r: np.ndarray, b: np.ndarray | None = None,
          seq_lens: np.ndarray | None = None, h0: np.ndarray | None = None, c0: np.ndarray | None = None,
          p: np.ndarray | None = None) -> list[np.ndarray]:
    hidden = int(ctx.attr("hidden_size", r.shape[-1]))
    clip = ctx.attr("clip", None)
    input_forget = int(ctx.attr("input_forget", 0))
    xs, lens, layout = _prepare(ctx, x.astype(np.float64), seq_lens)
    seq, batch = xs.shape[:2]
    dirs = _directions(ctx)
    acts = _activations(ctx, ("Sigmoid", "Tanh", "Tanh"), len(dirs))
    if layout == 1:
        h0 = None if h0 is None else np.swapaxes(h0, 0, 1)
        c0 = None if c0 is None else np.swapaxes(c0, 0, 1)
    ys = np.zeros((seq, len(dirs), batch, hidden))
    hs, cs = [], []
    for d, reverse in enumerate(dirs):
        f, g, hact = acts[d]
        wd, rd = w[d].astype(np.float64), r[d].astype(np.float64)
        bias = np.zeros(8 * hidden) if b is None else b[d].astype(np.float64)
        bsum = bias[:4 * hidden] + bias[4 * hidden:]
        peep = np.zeros(3 * hidden) if p is None else p[d].astype(np.float64)
        pi, po, pf = peep[:hidden], peep[hidden:2 * hidden], peep[2 * hidden:]
        h = np.zeros((batch, hidden)) if h0 is None else h0[d].astype(np.float64)
        c = np.zeros((batch, hidden)) if c0 is None else c0[d].astype(np.float64)
        for s, t in enumerate(_time_order(seq, reverse, lens)):
            active = (s < lens)[:, None]
            xt = xs[t, np.arange(batch)]
            gates = xt @ wd.T + h @ rd.T + bsum
            if clip is not None:
                gates = np.clip(gates, -float(clip), float(clip))
            gi, go, gf, gc = np.split(gates, 4, axis=1)
            i = f(gi + pi * c)
            fg = 1 - i if input_forget else f(gf + pf * c)
            c_new = fg * c + i * g(gc)
            o = f(go + po * c_new)
            h_new = o * hact(c_new)
            h = np.where(active, h_new, h)
            c = np.where(active, c_new, c)
            ys[t, d, np.arange(batch)] = np.where(active, h_new, 0)
        hs.append(h)
        cs.append(c)
    return _finish(ctx, ys, [np.stack(hs), np.stack(cs)], layout, x.dtype)


@register_kernel("CommonGRU")
def _gru(ctx: KernelContext, x: np.ndarray, w: np.ndarray, r: np.ndarray, b: np.ndarray | None = None,
         seq_lens: np.ndarray | None = None, h0: np.ndarray | None = None) -> list[np.ndarray]:
    hidden = int(ctx.attr("hidden_size", r.shape[-1]))
    clip = ctx.attr("clip", None)
    linear_before_reset = int(ctx.attr("linear_before_reset", 0))
    xs, lens, layout = _prepare(ctx, x.astype(np.float64), seq_lens)
    seq, batch = xs.shape[:2]
    dirs = _directions(ctx)
    acts = _activations(ctx, ("Sigmoid", "Tanh"), len(dirs))
    if layout == 1 and h0 is not None:
        h0 = np.swapaxes(h0, 0, 1)
    ys = np.zeros((seq, len(dirs), batch, hidden))
    hs = []
    for d, reverse in enumerate(dirs):
        f, g = acts[d]
        wd, rd = w[d].astype(np.float64), r[d].astype(np.float64)
        bias = np.zeros(6 * hidden) if b is None else b[d].astype(np.float64)
        wb, rb = bias[:3 * hidden], bias[3 * hidden:]
        h = np.zeros((batch, hidden)) if h0 is None else h0[d].astype(np.float64)
        for s, t in enumerate(_time_order(seq, reverse, lens)):
            active = (s < lens)[:, None]
            xt = xs[t, np.arange(batch)]
            xw = xt @ wd.T + wb
            xz, xr, xh = np.split(xw, 3, axis=1)
            rz, rr, rh = np.split(rd, 3, axis=0)
            bz, br, bh = np.split(rb, 3)
            pre_z, pre_r = xz + h @ rz.T + bz, xr + h @ rr.T + br
            if clip is not None:
                pre_z, pre_r = np.clip(pre_z, -float(clip), float(clip)), np.clip(pre_r, -float(clip), float(clip))
            z, rg = f(pre_z), f(pre_r)
            pre_h = xh + (rg * (h @ rh.T + bh) if linear_before_reset else (rg * h) @ rh.T + bh)
            if clip is not None:
                pre_h = np.clip(pre_h, -float(clip), float(clip))
            h_new = (1 - z) * g(pre_h) + z * h
            h = np.where(active, h_new, h)
            ys[t, d, np.arange(batch)] = np.where(active, h_new, 0)
        hs.append(h)
    return _finish(ctx, ys, [np.stack(hs)], layout, x.dtype)
