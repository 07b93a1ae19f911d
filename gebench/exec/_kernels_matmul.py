"""Reference kernels: matrix products (MatMul family, BatchMatMul family, GEMM) and Einsum."""

from __future__ import annotations

import numpy as np

from .reference import KernelContext, register_kernel

__all__: list[str] = []


def _swap_last(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2) if x.ndim >= 2 else x


def _matmul(x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    if x1.dtype.kind in "iub" or x2.dtype.kind in "iub":
        # integer products accumulate in int32 on the device (int8 in, int32 out)
        out_type = np.result_type(x1.dtype, x2.dtype)
        acc = np.int64 if out_type.kind in "iu" else out_type
        res = np.matmul(x1.astype(acc), x2.astype(acc))
        return res.astype(np.int32) if out_type.itemsize < 4 and out_type.kind in "iu" else res.astype(out_type)
    return np.matmul(x1, x2)


def _add_bias(y: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    return y if bias is None else (y + bias).astype(y.dtype, copy=False)


@register_kernel(["MatMul", "MatMulV2", "MatMulV3"])
def _mat_mul(ctx: KernelContext, x1: np.ndarray, x2: np.ndarray, bias: np.ndarray | None = None,
             offset_w: np.ndarray | None = None) -> np.ndarray:
    if bool(ctx.attr("transpose_x1", False)):
        x1 = _swap_last(x1)
    if bool(ctx.attr("transpose_x2", False)):
        x2 = _swap_last(x2)
    return _add_bias(_matmul(x1, x2), bias)


@register_kernel(["BatchMatMul", "BatchMatMulV2", "BatchMatMulV3"])
def _batch_mat_mul(ctx: KernelContext, x1: np.ndarray, x2: np.ndarray, bias: np.ndarray | None = None,
                   offset_w: np.ndarray | None = None) -> np.ndarray:
    if bool(ctx.attr("adj_x1", False)):
        x1 = _swap_last(x1)
    if bool(ctx.attr("adj_x2", False)):
        x2 = _swap_last(x2)
    return _add_bias(_matmul(x1, x2), bias)


@register_kernel("GEMM")
def _gemm(ctx: KernelContext, a: np.ndarray, b: np.ndarray, c: np.ndarray | None,
          alpha: np.ndarray | None, beta: np.ndarray | None) -> np.ndarray:
    """y = alpha * op(a) @ op(b) + beta * c; alpha and beta are (scalar or 1-element) tensors."""
    if bool(ctx.attr("transpose_a", False)):
        a = _swap_last(a)
    if bool(ctx.attr("transpose_b", False)):
        b = _swap_last(b)
    y = _matmul(a, b)
    if alpha is not None:
        y = y * np.asarray(alpha).reshape(()).astype(y.dtype)
    if c is not None:
        cc = c if beta is None else c * np.asarray(beta).reshape(()).astype(c.dtype)
        y = y + cc
    return y.astype(a.dtype if a.dtype.kind == "f" else y.dtype, copy=False)


@register_kernel("Einsum")
def _einsum(ctx: KernelContext, *xs: np.ndarray) -> np.ndarray:
    equation = str(ctx.attr("equation")).replace(" ", "")
    out = np.einsum(equation, *xs, optimize=len(xs) > 2)
    return np.asarray(out).astype(xs[0].dtype, copy=False)


@register_kernel("MatrixDeterminant")
def _matrix_determinant(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return np.linalg.det(x).astype(x.dtype)
