"""Inference of matrix products, convolutions, pooling and normalisations.

Expected shapes come from numpy: ``np.matmul`` on zero arrays, and for windows a sliding-window view over a
padded array (independent of the closed-form rule the implementation uses).
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

from gebench import ops
from gebench.ir import DataType, Format

try:  # tests/ is a package in some checkouts and a plain directory in others
    from tests.test_ops_support import Builder, infer_one
except ModuleNotFoundError:
    from test_ops_support import Builder, infer_one  # type: ignore[no-redef]


def _window_count(size: int, k: int, stride: int, pad: tuple[int, int], dil: int = 1) -> int:
    padded = np.zeros(size + pad[0] + pad[1])
    return sliding_window_view(padded, dil * (k - 1) + 1)[::stride].shape[0]


@pytest.mark.parametrize(("a", "b"), [((2, 3), (3, 4)), ((5, 2, 3), (3, 7)), ((2, 1, 4, 3), (6, 3, 2)), ((3,), (3, 4)),
                                      ((4, 3), (3,)), ((1, 8, 16), (16, 4))])
def test_batch_matmul_v2_matches_numpy(a, b):
    n = infer_one("BatchMatMulV2", a, b)
    assert n.outputs[0].shape == np.matmul(np.zeros(a), np.zeros(b)).shape


@pytest.mark.parametrize("op", ["BatchMatMul", "BatchMatMulV2", "BatchMatMulV3"])
def test_batch_matmul_adjoints(op):
    a, b = (2, 5, 3), (2, 4, 5)
    n = infer_one(op, a, b, attrs={"adj_x1": True, "adj_x2": True})
    expected = np.matmul(np.zeros(a).swapaxes(-1, -2), np.zeros(b).swapaxes(-1, -2)).shape
    assert n.outputs[0].shape == expected


@pytest.mark.parametrize("op", ["MatMul", "MatMulV2", "MatMulV3"])
@pytest.mark.parametrize(("t1", "t2"), [(False, False), (True, False), (False, True), (True, True)])
def test_matmul_transposes(op, t1, t2):
    a = (3, 5) if t1 else (5, 3)
    b = (4, 3) if t2 else (3, 4)
    n = infer_one(op, a, b, attrs={"transpose_x1": t1, "transpose_x2": t2})
    assert n.outputs[0].shape == (5, 4)


def test_matmul_with_bias_and_int8():
    n = infer_one("MatMulV2", {"shape": (5, 3), "dtype": DataType.DT_INT8}, {"shape": (3, 4), "dtype": DataType.DT_INT8},
                  {"shape": (4,), "dtype": DataType.DT_INT32})
    assert (n.outputs[0].shape, n.outputs[0].dtype) == ((5, 4), DataType.DT_INT32)


def test_matmul_contraction_mismatch_and_unknown_dims():
    with pytest.raises(ops.InferenceError, match="contraction dims"):
        infer_one("MatMul", (5, 3), (4, 2))
    assert infer_one("MatMul", (-1, 3), (3, 4)).outputs[0].shape == (-1, 4)
    assert infer_one("BatchMatMulV2", (-2,), (3, 4)).outputs[0].shape == (-2,)


def test_gemm():
    n = infer_one("GEMM", (3, 5), (4, 3), (5, 4), (), (), attrs={"transpose_a": True, "transpose_b": True})
    assert n.outputs[0].shape == np.matmul(np.zeros((3, 5)).T, np.zeros((4, 3)).T).shape
    with pytest.raises(ops.InferenceError, match="must be 2-D"):
        infer_one("GEMM", (2, 3, 5), (5, 4), (4,), (), ())


CONV_CASES = [
    # x NCHW, filter OIHW, strides, pads (t, b, l, r), dilations, groups
    ((1, 3, 224, 224), (64, 3, 7, 7), (2, 2), (3, 3, 3, 3), (1, 1), 1),
    ((2, 8, 17, 9), (16, 4, 3, 3), (1, 2), (1, 0, 2, 1), (2, 1), 2),
    ((1, 32, 10, 10), (32, 1, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 32),
    ((4, 3, 5, 5), (6, 3, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),
]


@pytest.mark.parametrize(("x", "w", "s", "p", "d", "g"), CONV_CASES)
def test_conv2d_nchw(x, w, s, p, d, g):
    attrs = {"strides": [1, 1, *s], "pads": list(p), "dilations": [1, 1, *d], "groups": g, "data_format": "NCHW"}
    n = infer_one("Conv2D", {"shape": x, "fmt": Format.FORMAT_NCHW}, {"shape": w, "fmt": Format.FORMAT_NCHW},
                  attrs=attrs)
    h = _window_count(x[2], w[2], s[0], (p[0], p[1]), d[0])
    wd = _window_count(x[3], w[3], s[1], (p[2], p[3]), d[1])
    assert n.outputs[0].shape == (x[0], w[0], h, wd)


def test_conv2d_nhwc_with_hwcn_filter_and_same_padding():
    attrs = {"strides": [1, 2, 2, 1], "pads": [0, 0, 0, 0], "data_format": "NHWC"}
    n = infer_one("Conv2D", {"shape": (1, 15, 16, 3), "fmt": Format.FORMAT_NHWC},
                  {"shape": (3, 3, 3, 8), "fmt": Format.FORMAT_HWCN}, attrs=attrs)
    assert n.outputs[0].shape == (1, _window_count(15, 3, 2, (0, 0)), _window_count(16, 3, 2, (0, 0)), 8)
    attrs["padding"] = "SAME"
    n = infer_one("Conv2D", {"shape": (1, 15, 16, 3), "fmt": Format.FORMAT_NHWC},
                  {"shape": (3, 3, 3, 8), "fmt": Format.FORMAT_HWCN}, attrs=attrs)
    assert n.outputs[0].shape == (1, 8, 8, 8)


def test_conv2d_errors_and_unknown_batch():
    attrs = {"strides": [1, 1, 1, 1], "pads": [0, 0, 0, 0], "data_format": "NCHW"}
    with pytest.raises(ops.InferenceError, match="x has 4 channels but filter"):
        infer_one("Conv2D", (1, 4, 8, 8), (8, 3, 3, 3), attrs=attrs)
    with pytest.raises(ops.InferenceError, match="required attr 'strides'"):
        infer_one("Conv2D", (1, 3, 8, 8), (8, 3, 3, 3), attrs={"pads": [0, 0, 0, 0]})
    n = infer_one("Conv2D", (-1, 3, 8, 8), (8, 3, 3, 3), attrs=attrs)
    assert n.outputs[0].shape == (-1, 8, 6, 6)


def test_conv3d_and_conv2d_transpose():
    attrs = {"strides": [1, 1, 2, 2, 2], "pads": [1, 1, 1, 1, 1, 1], "data_format": "NCDHW"}
    n = infer_one("Conv3D", (1, 4, 8, 9, 10), (6, 4, 3, 3, 3), attrs=attrs)
    assert n.outputs[0].shape == (1, 6, *(_window_count(s, 3, 2, (1, 1)) for s in (8, 9, 10)))
    attrs = {"strides": [1, 1, 2, 2], "pads": [1, 1, 1, 1], "data_format": "NCHW"}
    n = infer_one("Conv2DTranspose", np.array([1, 4, 16, 16], dtype=np.int32), (1, 8, 8, 8), (8, 4, 3, 3), attrs=attrs)
    assert n.outputs[0].shape == (1, 4, 16, 16)
    b_size = {"shape": (4,), "dtype": DataType.DT_INT32}
    n = infer_one("Conv2DTranspose", b_size, (1, 8, 8, 8), (8, 4, 3, 3), attrs={**attrs, "output_padding": [0, 0, 1, 1]})
    # ConvTranspose: (in - 1) * stride - pads + dilated kernel + output padding
    assert n.outputs[0].shape == (1, 4, 7 * 2 - 2 + 3 + 1, 7 * 2 - 2 + 3 + 1)


@pytest.mark.parametrize(("op", "mode_attr"), [("MaxPoolV3", "padding_mode"), ("AvgPoolV2", "padding_mode")])
@pytest.mark.parametrize("ceil", [False, True])
def test_onnx_style_pooling(op, mode_attr, ceil):
    x, k, s, p = (1, 64, 112, 111), 3, 2, 1
    attrs = {"ksize": [1, 1, k, k], "strides": [1, 1, s, s], "pads": [p, p, p, p], "ceil_mode": ceil,
             mode_attr: "CALCULATED"}
    n = infer_one(op, x, attrs=attrs)

    def count(size: int) -> int:
        # enumerate window starts: floor mode needs the whole window inside the padded input; ceil mode also
        # takes a partial last window, as long as it starts inside the input or its leading padding
        last = size + 2 * p - k + (s - 1 if ceil else 0)
        return sum(1 for start in range(0, last + 1, s) if start < size + p)

    assert n.outputs[0].shape == (1, 64, count(112), count(111))


def test_pooling_variants():
    assert infer_one("MaxPoolV3", (2, 3, 7, 7), attrs={"ksize": [1, 1, 7, 7], "strides": [1, 1, 1, 1],
                                                        "global_pooling": True}).outputs[0].shape == (2, 3, 1, 1)
    tf = {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "SAME"}
    assert infer_one("MaxPool", (1, 7, 9, 5), attrs=tf).outputs[0].shape == (1, 4, 5, 5)
    assert infer_one("AvgPool", (1, 7, 9, 5), attrs={**tf, "padding": "VALID"}).outputs[0].shape == (1, 3, 4, 5)
    p3 = {"ksize": [2, 2, 2], "strides": [2, 2, 2], "pads": [0] * 6, "data_format": "NCDHW"}
    assert infer_one("AvgPool3D", (1, 2, 8, 6, 4), attrs=p3).outputs[0].shape == (1, 2, 4, 3, 2)
    assert infer_one("MaxPool3D", (1, 2, 8, 6, 4), attrs={**p3, "padding": "CALCULATED"}).outputs[0].shape == (
        1, 2, 4, 3, 2)
    assert infer_one("GlobalAveragePool", (2, 16, 7, 5)).outputs[0].shape == (2, 16, 1, 1)


def test_batch_norm_and_instance_norm():
    n = infer_one("BatchNorm", (2, 16, 8, 8), (16,), (16,), (16,), (16,), attrs={"data_format": "NCHW"})
    assert n.outputs[0].shape == (2, 16, 8, 8)
    assert [d.shape for d in n.outputs[1:]] == [(16,)] * 5
    with pytest.raises(ops.InferenceError, match="channels of x"):
        infer_one("BatchNorm", (2, 8, 8, 16), (8,), (8,), attrs={"data_format": "NHWC"})
    n = infer_one("InstanceNorm", (2, 4, 5, 6), (4,), (4,), attrs={"data_format": "NCHW"})
    assert [d.shape for d in n.outputs] == [(2, 4, 5, 6), (2, 4, 1, 1), (2, 4, 1, 1)]


def test_layer_norms():
    x = (2, 5, 8)
    n = infer_one("LayerNorm", x, (8,), (8,), attrs={"begin_norm_axis": -1, "begin_params_axis": -1})
    mean = np.zeros(x).mean(axis=-1, keepdims=True).shape
    assert [d.shape for d in n.outputs] == [x, mean, mean]
    n = infer_one("LayerNormV3", x, (5, 8), (5, 8), attrs={"begin_norm_axis": 1})
    assert n.outputs[1].shape == np.zeros(x).mean(axis=(1, 2), keepdims=True).shape
    assert n.outputs[2].dtype == DataType.DT_FLOAT
    n = infer_one("LayerNormV4", x, np.array([8], dtype=np.int64), (8,), (8,))
    assert [d.shape for d in n.outputs] == [x, (2, 5, 1), (2, 5, 1)]


def test_group_and_rms_norms():
    n = infer_one("GroupNorm", (2, 6, 4, 4), (6,), (6,), attrs={"num_groups": 3})
    assert [d.shape for d in n.outputs] == [(2, 6, 4, 4), (2, 3), (2, 3)]
    with pytest.raises(ops.InferenceError, match="do not split into num_groups=4"):
        infer_one("GroupNorm", (2, 6, 4, 4), (6,), (6,), attrs={"num_groups": 4})
    n = infer_one("RmsNorm", (2, 7, 64), (64,))
    assert [d.shape for d in n.outputs] == [(2, 7, 64), (2, 7, 1)]
    n = infer_one("AddRmsNorm", (2, 7, 64), (2, 7, 64), (64,))
    assert [d.shape for d in n.outputs] == [(2, 7, 64), (2, 7, 1), (2, 7, 64)]


def test_resnet_style_stem_and_head_end_to_end():
    b = Builder()
    x = b.data((2, 3, 32, 32), fmt=Format.FORMAT_NCHW)
    w = b.const(np.zeros((16, 3, 7, 7), dtype=np.float32))
    bias = b.const(np.zeros((16,), dtype=np.float32))
    conv = b.op("Conv2D", x, w, bias, attrs={"strides": [1, 1, 2, 2], "pads": [3, 3, 3, 3], "data_format": "NCHW"})
    stats = [b.const(np.ones((16,), dtype=np.float32)) for _ in range(4)]
    bn = b.op("BatchNorm", (conv, 0), *stats, attrs={"data_format": "NCHW", "is_training": False})
    relu = b.op("Relu", (bn, 0))
    pool = b.op("MaxPoolV3", (relu, 0), attrs={"ksize": [1, 1, 3, 3], "strides": [1, 1, 2, 2], "pads": [1, 1, 1, 1]})
    gap = b.op("GlobalAveragePool", (pool, 0))
    flat = b.op("Flatten", (gap, 0))
    fc = b.op("MatMulV2", (flat, 0), b.const(np.zeros((10, 16), dtype=np.float32)), attrs={"transpose_x2": True})
    out = b.op("Add", (fc, 0), b.const(np.zeros((10,), dtype=np.float32)))
    b.infer()
    h = _window_count(32, 7, 2, (3, 3))
    p = _window_count(h, 3, 2, (1, 1))
    assert conv.outputs[0].shape == (2, 16, h, h)
    assert pool.outputs[0].shape == (2, 16, p, p)
    assert gap.outputs[0].shape == (2, 16, 1, 1) and flat.outputs[0].shape == (2, 16)
    assert out.outputs[0].shape == (np.zeros((2, 16)) @ np.zeros((10, 16)).T + np.zeros(10)).shape
    assert conv.outputs[0].format == Format.FORMAT_ND  # inference leaves formats alone


def test_attention_block_end_to_end():
    batch, seq, heads, dh = 2, 5, 4, 8
    hidden = heads * dh
    b = Builder()
    x = b.data((batch, seq, hidden))
    i64 = np.int64

    def heads_view(port):
        r = b.op("Reshape", port, b.const(np.array([0, 0, heads, dh], dtype=i64)))
        return b.op("Transpose", (r, 0), b.const(np.array([0, 2, 1, 3], dtype=np.int32)))

    q = b.op("BatchMatMulV2", x, b.const(np.zeros((hidden, hidden), dtype=np.float32)))
    k = b.op("BatchMatMulV2", x, b.const(np.zeros((hidden, hidden), dtype=np.float32)))
    qh, kh = heads_view((q, 0)), heads_view((k, 0))
    scores = b.op("BatchMatMulV2", (qh, 0), (kh, 0), attrs={"adj_x2": True})
    probs = b.op("SoftmaxV2", (scores, 0), attrs={"axes": [-1]})
    ctx = b.op("BatchMatMulV2", (probs, 0), (qh, 0))
    back = b.op("Transpose", (ctx, 0), b.const(np.array([0, 2, 1, 3], dtype=np.int32)))
    merged = b.op("Reshape", (back, 0), b.const(np.array([0, 0, -1], dtype=i64)))
    ln = b.op("LayerNorm", (merged, 0), b.const(np.ones(hidden, dtype=np.float32)),
              b.const(np.zeros(hidden, dtype=np.float32)), attrs={"begin_norm_axis": -1, "begin_params_axis": -1})
    b.infer()
    qa = np.zeros((batch, seq, hidden)).reshape(batch, seq, heads, dh).transpose(0, 2, 1, 3)
    sa = qa @ qa.swapaxes(-1, -2)
    assert scores.outputs[0].shape == sa.shape
    ca = (sa @ qa).transpose(0, 2, 1, 3).reshape(batch, seq, -1)
    assert merged.outputs[0].shape == ca.shape
    assert [d.shape for d in ln.outputs] == [ca.shape, (batch, seq, 1), (batch, seq, 1)]
