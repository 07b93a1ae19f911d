"""Reference kernels: element-wise arithmetic, comparisons, logic, activations, Cast and selection."""

from __future__ import annotations

import math

import numpy as np

from gebench import ir

from .reference import KernelContext, register_kernel, round_to_bf16

__all__: list[str] = []


def _float_like(x: np.ndarray) -> np.ndarray:
    """``x`` itself when floating, else as float32 (for transcendental ops on integer inputs)."""
    return x if x.dtype.kind in "fc" else x.astype(np.float32)


def _same_dtype(result: np.ndarray, like: np.ndarray) -> np.ndarray:
    return result.astype(like.dtype, copy=False) if result.dtype != like.dtype else result


# ------------------------------------------------------------------------------------ binary arithmetic
@register_kernel(["Add", "AddV2"])
def _add(ctx: KernelContext, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    if x1.dtype == np.bool_ and x2.dtype == np.bool_:
        return np.logical_or(x1, x2)
    if x1.dtype.kind == "O":
        return np.char.add(x1.astype(str), x2.astype(str)).astype(object)
    return _same_dtype(np.add(x1, x2), x1)


@register_kernel("Sub")
def _sub(ctx: KernelContext, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    return _same_dtype(np.subtract(x1, x2), x1)


@register_kernel("Mul")
def _mul(ctx: KernelContext, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    if x1.dtype == np.bool_:
        return np.logical_and(x1, x2)
    return _same_dtype(np.multiply(x1, x2), x1)


def _int_div_trunc(x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    """C-style integer division (truncation toward zero), as the device kernels compute it."""
    q = np.floor_divide(x1, x2)
    fix = (np.remainder(x1, x2) != 0) & ((x1 < 0) != (x2 < 0))
    return q + fix.astype(q.dtype)


@register_kernel(["RealDiv", "Div"])
def _div(ctx: KernelContext, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    if x1.dtype.kind in "iu":
        with np.errstate(divide="ignore", invalid="ignore"):
            return _same_dtype(_int_div_trunc(x1, x2), x1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _same_dtype(np.divide(x1, x2), x1)


@register_kernel("FloorDiv")
def _floor_div(ctx: KernelContext, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return _same_dtype(np.floor_divide(x1, x2), x1)


@register_kernel(["FloorMod", "Mod"])
def _mod(ctx: KernelContext, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        if int(ctx.attr("fmod", 0)) or (ctx.op_type == "Mod" and x1.dtype.kind == "f"):
            return _same_dtype(np.fmod(x1, x2), x1)
        return _same_dtype(np.mod(x1, x2), x1)


@register_kernel("Pow")
def _pow(ctx: KernelContext, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if x1.dtype.kind in "iu":
            return np.power(x1.astype(np.float64), x2.astype(np.float64)).astype(x1.dtype)
        return _same_dtype(np.power(x1, x2.astype(x1.dtype)), x1)


@register_kernel("Maximum")
def _maximum(ctx: KernelContext, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    return _same_dtype(np.maximum(x1, x2), x1)


@register_kernel("Minimum")
def _minimum(ctx: KernelContext, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    return _same_dtype(np.minimum(x1, x2), x1)


@register_kernel("SquaredDifference")
def _squared_difference(ctx: KernelContext, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    d = np.subtract(x1, x2)
    return _same_dtype(d * d, x1)


@register_kernel("AccumulateNV2")
def _accumulate(ctx: KernelContext, *xs: np.ndarray) -> np.ndarray:
    total = xs[0]
    for x in xs[1:]:
        total = np.add(total, x)
    return _same_dtype(np.asarray(total), xs[0])


@register_kernel("Muls")
def _muls(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return _same_dtype(x * np.asarray(float(ctx.attr("value")), dtype=x.dtype if x.dtype.kind == "f" else np.float64), x)


@register_kernel("Adds")
def _adds(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return _same_dtype(x + np.asarray(float(ctx.attr("value")), dtype=x.dtype if x.dtype.kind == "f" else np.float64), x)


# ------------------------------------------------------------------------------------ comparisons, logic
def _compare(fn):  # noqa: ANN001, ANN202 - tiny factory
    def kernel(ctx: KernelContext, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
        return np.asarray(fn(x1, x2), dtype=np.bool_)

    return kernel


register_kernel("Equal")(_compare(np.equal))
register_kernel("NotEqual")(_compare(np.not_equal))
register_kernel("Less")(_compare(np.less))
register_kernel("LessEqual")(_compare(np.less_equal))
register_kernel("Greater")(_compare(np.greater))
register_kernel("GreaterEqual")(_compare(np.greater_equal))
register_kernel("LogicalAnd")(_compare(np.logical_and))
register_kernel("LogicalOr")(_compare(np.logical_or))
register_kernel("LogicalXor")(_compare(np.logical_xor))


@register_kernel("LogicalNot")
def _logical_not(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return np.logical_not(x)


@register_kernel("BitwiseAnd")
def _bitwise_and(ctx: KernelContext, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    return np.bitwise_and(x1, x2)


@register_kernel("BitwiseOr")
def _bitwise_or(ctx: KernelContext, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    return np.bitwise_or(x1, x2)


@register_kernel("BitwiseXor")
def _bitwise_xor(ctx: KernelContext, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    return np.bitwise_xor(x1, x2)


@register_kernel("Invert")
def _invert(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return np.invert(x)


@register_kernel(["IsNan"])
def _isnan(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return np.isnan(x)


@register_kernel(["IsInf"])
def _isinf(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    pos = bool(ctx.attr("detect_positive", 1))
    neg = bool(ctx.attr("detect_negative", 1))
    return (np.isposinf(x) & pos) | (np.isneginf(x) & neg)


# ------------------------------------------------------------------------------------ unary math
def _unary(fn, *, float_only: bool = True):  # noqa: ANN001, ANN202 - tiny factory
    def kernel(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
        src = _float_like(x) if float_only else x
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            out = fn(src)
        return _same_dtype(np.asarray(out), x) if x.dtype.kind in "fc" or not float_only else np.asarray(out)

    return kernel


def _erf(x: np.ndarray) -> np.ndarray:
    """Error function, vectorised (numpy has none).

    |x| < 0.5: Taylor series to 14 terms (relative error ~1e-16); elsewhere Abramowitz-Stegun 7.1.26
    (absolute error below 1.5e-7, relative below 3e-7 there since |erf| > 0.5).
    """
    xd = np.asarray(x, dtype=np.float64)
    ax = np.abs(xd)
    small = ax < 0.5
    out = np.empty_like(xd)
    xs = xd[small]
    x2 = xs * xs
    term = xs.copy()
    acc = xs.copy()
    for n in range(1, 14):
        term = term * (-x2) / n
        acc = acc + term / (2 * n + 1)
    out[small] = acc * (2.0 / math.sqrt(math.pi))
    xl = xd[~small]
    al = np.abs(xl)
    t = 1.0 / (1.0 + 0.3275911 * al)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    out[~small] = np.sign(xl) * (1.0 - poly * np.exp(-al * al))
    return out


def _sigmoid(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.where(x >= 0, 1.0 / (1.0 + np.exp(-np.abs(x))), np.exp(-np.abs(x)) / (1.0 + np.exp(-np.abs(x))))


for _name, _fn in {
    "Sqrt": np.sqrt,
    "Rsqrt": lambda x: 1.0 / np.sqrt(x),
    "Sin": np.sin, "Cos": np.cos, "Tan": np.tan,
    "Asin": np.arcsin, "Acos": np.arccos, "Atan": np.arctan,
    "Sinh": np.sinh, "Cosh": np.cosh, "Asinh": np.arcsinh, "Acosh": np.arccosh, "Atanh": np.arctanh,
    "Tanh": np.tanh, "Sigmoid": _sigmoid, "Erf": _erf,
    "Softplus": lambda x: np.logaddexp(0, x),
    "Softsign": lambda x: x / (1 + np.abs(x)),
    "Mish": lambda x: x * np.tanh(np.logaddexp(0, x)),
    "Reciprocal": lambda x: 1.0 / x,
    "Square": np.square,
}.items():
    register_kernel(_name)(_unary(_fn))

for _name, _fn in {
    "Neg": np.negative, "Abs": np.abs, "Floor": np.floor, "Ceil": np.ceil, "Sign": np.sign, "Round": np.round,
}.items():
    register_kernel(_name)(_unary(_fn, float_only=False))


@register_kernel("Exp")
def _exp(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    base = float(ctx.attr("base", -1.0))
    scale = float(ctx.attr("scale", 1.0))
    shift = float(ctx.attr("shift", 0.0))
    xf = _float_like(x)
    with np.errstate(over="ignore"):
        z = xf * scale + shift if (scale != 1.0 or shift != 0.0) else xf
        out = np.exp(z) if base <= 0 else np.power(base, z)
    return _same_dtype(np.asarray(out), xf)


@register_kernel("Log")
def _log(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    base = float(ctx.attr("base", -1.0))
    scale = float(ctx.attr("scale", 1.0))
    shift = float(ctx.attr("shift", 0.0))
    xf = _float_like(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = xf * scale + shift if (scale != 1.0 or shift != 0.0) else xf
        out = np.log(z) if base <= 0 else np.log(z) / math.log(base)
    return _same_dtype(np.asarray(out), xf)


# ------------------------------------------------------------------------------------ activations
@register_kernel("Relu")
def _relu(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return np.maximum(x, np.zeros((), x.dtype))


@register_kernel("Relu6")
def _relu6(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return np.clip(x, 0, 6).astype(x.dtype)


@register_kernel("LeakyRelu")
def _leaky_relu(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    slope = float(ctx.attr("negative_slope", 0.0))
    return np.where(x >= 0, x, x * np.asarray(slope, x.dtype)).astype(x.dtype)


@register_kernel("PRelu")
def _prelu(ctx: KernelContext, x: np.ndarray, weight: np.ndarray) -> np.ndarray:
    try:
        w = np.broadcast_to(weight, np.broadcast_shapes(x.shape, weight.shape))
    except ValueError:
        # GE also accepts a 1-D per-channel weight for channel axis 1
        w = weight.reshape((-1,) + (1,) * (x.ndim - 2))
    return np.where(x >= 0, x, x * w).astype(x.dtype)


@register_kernel("Elu")
def _elu(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    alpha = float(ctx.attr("alpha", 1.0))
    scale = float(ctx.attr("scale", 1.0))
    input_scale = float(ctx.attr("input_scale", 1.0))
    with np.errstate(over="ignore"):
        neg = alpha * (np.exp(np.minimum(x, 0) * input_scale) - 1)
    return (scale * np.where(x > 0, x, neg)).astype(x.dtype)


@register_kernel("Selu")
def _selu(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    alpha = float(ctx.attr("alpha", 1.67326319217681884765625))
    gamma = float(ctx.attr("gamma", 1.05070102214813232421875))
    return (gamma * np.where(x > 0, x, alpha * (np.exp(np.minimum(x, 0)) - 1))).astype(x.dtype)


@register_kernel("Celu")
def _celu(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    alpha = float(ctx.attr("alpha", 1.0))
    return (np.maximum(x, 0) + np.minimum(0, alpha * (np.exp(np.minimum(x, 0) / alpha) - 1))).astype(x.dtype)


@register_kernel("HardSigmoid")
def _hard_sigmoid(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    alpha = float(ctx.attr("alpha", 0.16666666))
    beta = float(ctx.attr("beta", 0.5))
    return np.clip(alpha * x + beta, 0, 1).astype(x.dtype)


@register_kernel("HardSwish")
def _hard_swish(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return (x * np.clip(x / 6.0 + 0.5, 0, 1)).astype(x.dtype)


@register_kernel("ThresholdedRelu")
def _thresholded_relu(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    alpha = float(ctx.attr("alpha", 1.0))
    return np.where(x > alpha, x, 0).astype(x.dtype)


@register_kernel("Swish")
def _swish(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    scale = float(ctx.attr("scale", 1.0))
    return (x * _sigmoid(scale * x)).astype(x.dtype)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _gelu_tanh(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))


def _gelu_erf(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


@register_kernel("Gelu")
def _gelu(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    # GE's Gelu is the tanh approximation (GeluV2 with approximate="none" is the exact one)
    return _gelu_tanh(x.astype(np.float64)).astype(x.dtype)


@register_kernel("GeluV2")
def _gelu_v2(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    mode = str(ctx.attr("approximate", "none"))
    fn = _gelu_tanh if mode == "tanh" else _gelu_erf
    return fn(x.astype(np.float64)).astype(x.dtype)


@register_kernel("FastGelu")
def _fast_gelu(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    xd = x.astype(np.float64)
    return (xd * _sigmoid(1.702 * xd)).astype(x.dtype)


@register_kernel(["Identity", "TensorMove", "Snapshot", "StopGradient", "IdentityN"])
def _identity(ctx: KernelContext, *xs: np.ndarray) -> list[np.ndarray]:
    return list(xs)


@register_kernel("Dropout")
def _dropout(ctx: KernelContext, x: np.ndarray, *rest: np.ndarray | None) -> list[np.ndarray]:
    # inference: the identity; a second output (mask) is all true
    return [x, np.ones(x.shape, dtype=np.bool_)]


# ------------------------------------------------------------------------------------ Cast, clip, select
def _dtype_of_attr(value: object) -> ir.DataType:
    return ir.DataType(int(value))


@register_kernel("Cast")
def _cast(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    dst = _dtype_of_attr(ctx.attr("dst_type"))
    if dst == ir.DataType.DT_UNDEFINED:
        raise ctx.error("dst_type is DT_UNDEFINED (28): the source type has no GE equivalent")
    if dst == ir.DataType.DT_BF16:
        return round_to_bf16(x.astype(np.float32))
    want = ir.numpy_dtype(dst)
    if x.dtype.kind == "O":
        if want.kind == "b":
            return np.array([str(v).lower() in ("true", "1") for v in x.ravel()]).reshape(x.shape)
        return np.array([float(v) for v in x.ravel()]).astype(want).reshape(x.shape)
    if want.kind == "O":
        return np.array([_format_number(v) for v in x.ravel()], dtype=object).reshape(x.shape)
    if want.kind in "iu" and x.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            return np.trunc(x).astype(want)
    return x.astype(want)


def _format_number(v: object) -> str:
    if isinstance(v, (float, np.floating)):
        return repr(float(v)) if math.isfinite(v) else ("NaN" if math.isnan(v) else ("INF" if v > 0 else "-INF"))
    return str(v)


@register_kernel("CastLike")
def _cast_like(ctx: KernelContext, x: np.ndarray, target: np.ndarray) -> np.ndarray:
    if ctx.node.num_inputs > 1 and ctx.input_desc(1).dtype == ir.DataType.DT_BF16:
        return round_to_bf16(x.astype(np.float32))
    if x.dtype.kind == "f" and target.dtype.kind in "iu":
        with np.errstate(invalid="ignore"):
            return np.trunc(x).astype(target.dtype)
    return x.astype(target.dtype)


@register_kernel("ClipByValue")
def _clip(ctx: KernelContext, x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.minimum(np.maximum(x, lo.astype(x.dtype)), hi.astype(x.dtype)).astype(x.dtype)


@register_kernel("SelectV2")
def _select_v2(ctx: KernelContext, cond: np.ndarray, then: np.ndarray, other: np.ndarray) -> np.ndarray:
    out = np.where(cond.astype(np.bool_), then, other)
    return out.astype(then.dtype, copy=False)


@register_kernel("Select")
def _select(ctx: KernelContext, cond: np.ndarray, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    c = cond.astype(np.bool_)
    if c.ndim == 1 and x1.ndim > 1 and c.shape[0] == x1.shape[0]:
        # TF-style Select: a vector condition picks whole rows
        c = c.reshape((-1,) + (1,) * (x1.ndim - 1))
    return np.where(c, x1, x2).astype(x1.dtype, copy=False)
