"""Reference kernels checked against independent computations: naive loops written here, closed-form
numpy formulas, or onnxruntime on the equivalent ONNX node."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from gebench import ir, ops
from gebench.exec import ExecutionError, execute, register_kernel, registered_op_types

RNG = np.random.default_rng(1234)


def _desc(arr: np.ndarray, fmt: str = "ND") -> ir.TensorDesc:
    return ir.TensorDesc.of(ir.data_type_from_numpy(arr.dtype), arr.shape, ir.Format["FORMAT_" + fmt])


def run_op(op_type: str, inputs: list[np.ndarray | None], attrs: dict | None = None, *, n_out: int = 1,
           formats: dict[int, str] | None = None, consts: tuple[int, ...] = ()) -> list[np.ndarray]:
    """Execute one op: non-None inputs are fed as Data (or Const when listed in ``consts``)."""
    formats = formats or {}
    g = ir.Graph("single_op")
    descs = [ir.TensorDesc.placeholder() if a is None else _desc(a, formats.get(i, "ND")) for i, a in enumerate(inputs)]
    node = g.add_node(op_type, name="op", attrs=dict(attrs or {}), inputs=descs, outputs=n_out)
    feed = []
    for i, arr in enumerate(inputs):
        if arr is None:
            continue
        if i in consts:
            src = g.add_node("Const", name=f"c{i}", attrs={"value": ir.TensorValue(ir.data_type_from_numpy(arr.dtype), arr)},
                             outputs=[descs[i]])
        else:
            src = g.add_node("Data", name=f"in{i}", attrs={"index": len(feed)}, inputs=[descs[i]], outputs=[descs[i]])
            feed.append(arr)
        g.add_edge(src, 0, node, i)
    net = g.add_node("NetOutput", name="out", inputs=n_out)
    for k in range(n_out):
        g.add_edge(node, k, net, k)
    return execute(g, feed)


def ort_node(op_type: str, inputs: list[np.ndarray], n_out: int = 1, opset: int = 17, **attrs) -> list[np.ndarray]:
    """Run one ONNX node in onnxruntime."""
    names = [f"i{k}" for k in range(len(inputs))]
    outs = [f"o{k}" for k in range(n_out)]
    node = helper.make_node(op_type, names, outs, **attrs)
    g = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape) for n, a in zip(names, inputs)],
        [helper.make_tensor_value_info(o, helper.np_dtype_to_tensor_dtype(inputs[0].dtype), None) for o in outs])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, dict(zip(names, inputs)))


def naive_conv(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, stride: tuple[int, int],
               pads: tuple[int, int, int, int], dil: tuple[int, int], groups: int) -> np.ndarray:
    """Direct convolution with loops (NCHW, OIHW; pads = top, bottom, left, right)."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.zeros((n, c, h + pads[0] + pads[1], wd + pads[2] + pads[3]), dtype=np.float64)
    xp[:, :, pads[0]:pads[0] + h, pads[2]:pads[2] + wd] = x
    oh = (xp.shape[2] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (xp.shape[3] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((n, o, oh, ow))
    og = o // groups
    for bi in range(n):
        for oc in range(o):
            g = oc // og
            for i in range(oh):
                for j in range(ow):
                    acc = 0.0
                    for ci in range(cg):
                        for a in range(kh):
                            for bb in range(kw):
                                acc += xp[bi, g * cg + ci, i * stride[0] + a * dil[0], j * stride[1] + bb * dil[1]] * w[oc, ci, a, bb]
                    y[bi, oc, i, j] = acc + (0.0 if b is None else b[oc])
    return y


# ------------------------------------------------------------------------------------ registry
def test_every_inferable_catalogue_op_has_a_kernel() -> None:
    missing = sorted(set(ops.inferable_op_types()) - set(registered_op_types()))
    assert missing == []
    assert sorted(set(ops.builtin_op_types()) - set(registered_op_types())) == []


def test_missing_kernel_names_node_and_op() -> None:
    x = np.ones((2,), np.float32)
    with pytest.raises(ExecutionError) as err:
        run_op("NoSuchOpForExec", [x])
    assert "'op'" in str(err.value) and "NoSuchOpForExec" in str(err.value)
    assert err.value.node_name == "op" and err.value.op_type == "NoSuchOpForExec"


def test_register_kernel_adds_a_custom_op() -> None:
    @register_kernel("ExecTestTriple")
    def _triple(ctx, x):
        return x * 3

    np.testing.assert_array_equal(run_op("ExecTestTriple", [np.arange(3, dtype=np.float32)])[0], [0, 3, 6])


def test_kernel_failure_is_wrapped_with_node_and_shapes() -> None:
    with pytest.raises(ExecutionError, match=r"node 'op' \(MatMulV2\) with inputs \(float32\[2, 3\], float32\[2, 3\]"):
        run_op("MatMulV2", [np.ones((2, 3), np.float32), np.ones((2, 3), np.float32), None, None])


def test_required_attr_missing_is_reported() -> None:
    with pytest.raises(ExecutionError, match="required attribute 'dst_type'"):
        run_op("Cast", [np.ones(2, np.float32)])


# ------------------------------------------------------------------------------------ convolution
@pytest.mark.parametrize("groups,stride,dil,pads", [
    (1, (1, 1), (1, 1), (1, 1, 1, 1)),
    (2, (2, 1), (1, 2), (0, 2, 1, 0)),
    (4, (1, 2), (2, 1), (2, 1, 0, 1)),
])
def test_conv2d_nchw_matches_naive_loops(groups, stride, dil, pads) -> None:
    x = RNG.standard_normal((2, 4, 7, 6)).astype(np.float32)
    w = RNG.standard_normal((8, 4 // groups, 3, 2)).astype(np.float32)
    b = RNG.standard_normal(8).astype(np.float32)
    got = run_op("Conv2D", [x, w, b, None], {"strides": [1, 1, *stride], "pads": list(pads),
                                            "dilations": [1, 1, *dil], "groups": groups, "data_format": "NCHW"},
                 formats={0: "NCHW", 1: "NCHW"})[0]
    np.testing.assert_allclose(got, naive_conv(x, w, b, stride, pads, dil, groups), rtol=1e-5, atol=1e-5)


def test_conv2d_nhwc_with_hwcn_filter() -> None:
    x = RNG.standard_normal((1, 6, 5, 7)).astype(np.float32)
    w = RNG.standard_normal((4, 6, 3, 3)).astype(np.float32)
    want = naive_conv(x, w, None, (2, 2), (1, 1, 1, 1), (1, 1), 1)
    got = run_op("Conv2D", [np.transpose(x, (0, 2, 3, 1)), np.transpose(w, (2, 3, 1, 0)), None, None],
                 {"strides": [1, 2, 2, 1], "pads": [1, 1, 1, 1], "data_format": "NHWC"},
                 formats={0: "NHWC", 1: "HWCN"})[0]
    np.testing.assert_allclose(got, np.transpose(want, (0, 2, 3, 1)), rtol=1e-5, atol=1e-5)


def test_conv2d_auto_pad_same_lower_matches_onnxruntime() -> None:
    x = RNG.standard_normal((1, 2, 6, 5)).astype(np.float32)
    w = RNG.standard_normal((3, 2, 4, 3)).astype(np.float32)
    want = ort_node("Conv", [x, w], auto_pad="SAME_LOWER", strides=[2, 1])[0]
    got = run_op("Conv2D", [x, w, None, None], {"strides": [1, 1, 2, 1], "pads": [0, 0, 0, 0], "auto_pad": "SAME_LOWER",
                                               "data_format": "NCHW"}, formats={0: "NCHW", 1: "NCHW"})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_conv3d_matches_onnxruntime() -> None:
    x = RNG.standard_normal((1, 4, 5, 6, 4)).astype(np.float32)
    w = RNG.standard_normal((6, 2, 3, 2, 3)).astype(np.float32)
    want = ort_node("Conv", [x, w], group=2, pads=[1, 0, 1, 0, 1, 0], strides=[1, 2, 1])[0]
    got = run_op("Conv3D", [x, w, None, None], {"strides": [1, 1, 1, 2, 1], "pads": [1, 0, 0, 1, 1, 0], "groups": 2,
                                               "data_format": "NCDHW"}, formats={1: "NCDHW"})[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_conv2d_transpose_matches_onnxruntime() -> None:
    x = RNG.standard_normal((1, 4, 3, 4)).astype(np.float32)
    w = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)  # C_in, C_out/groups, kh, kw
    want = ort_node("ConvTranspose", [x, w], strides=[2, 2], pads=[1, 0, 0, 1], group=2, output_padding=[1, 0])[0]
    got = run_op("Conv2DTranspose", [np.asarray(want.shape, np.int32), x, w, None, None],
                 {"strides": [1, 1, 2, 2], "pads": [1, 0, 0, 1], "groups": 2, "data_format": "NCHW",
                  "output_padding": [0, 0, 1, 0]}, formats={1: "NCHW", 2: "NCHW"}, consts=(0,))[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


# ------------------------------------------------------------------------------------ pooling
@pytest.mark.parametrize("ceil_mode", [False, True])
def test_max_pool_v3_matches_onnxruntime(ceil_mode) -> None:
    x = RNG.standard_normal((1, 2, 7, 8)).astype(np.float32)
    want = ort_node("MaxPool", [x], kernel_shape=[3, 2], strides=[2, 3], pads=[1, 0, 0, 1], ceil_mode=int(ceil_mode))[0]
    got = run_op("MaxPoolV3", [x], {"ksize": [1, 1, 3, 2], "strides": [1, 1, 2, 3], "pads": [1, 0, 0, 1],
                                     "ceil_mode": ceil_mode, "data_format": "NCHW"})[0]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("exclusive", [True, False])
def test_avg_pool_v2_padding_counts_match_onnxruntime(exclusive) -> None:
    x = RNG.standard_normal((2, 3, 6, 5)).astype(np.float32)
    want = ort_node("AveragePool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                    count_include_pad=int(not exclusive), ceil_mode=1)[0]
    got = run_op("AvgPoolV2", [x], {"ksize": [1, 1, 3, 3], "strides": [1, 1, 2, 2], "pads": [1, 1, 1, 1],
                                     "exclusive": exclusive, "ceil_mode": True, "data_format": "NCHW"})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_tf_style_max_pool_same_nhwc() -> None:
    x = RNG.standard_normal((1, 5, 5, 2)).astype(np.float32)
    got = run_op("MaxPool", [x], {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "SAME"})[0]
    # SAME with stride 2 on 5: output 3, the last window covers row/col 4 alone
    want = np.full((1, 3, 3, 2), -np.inf, np.float32)
    for i in range(3):
        for j in range(3):
            want[0, i, j] = x[0, 2 * i:2 * i + 2, 2 * j:2 * j + 2].max(axis=(0, 1))
    np.testing.assert_array_equal(got, want)


# ------------------------------------------------------------------------------------ matmul family
def test_matmul_transposes_and_bias() -> None:
    a = RNG.standard_normal((4, 3)).astype(np.float32)
    b = RNG.standard_normal((5, 4)).astype(np.float32)
    bias = RNG.standard_normal(5).astype(np.float32)
    got = run_op("MatMulV2", [a, b, bias, None], {"transpose_x1": True, "transpose_x2": True})[0]
    np.testing.assert_allclose(got, a.T @ b.T + bias, rtol=1e-5, atol=1e-6)


def test_batch_matmul_v2_broadcast_and_adj() -> None:
    a = RNG.standard_normal((2, 1, 3, 4)).astype(np.float32)
    b = RNG.standard_normal((5, 3, 6)).astype(np.float32)
    got = run_op("BatchMatMulV2", [a, b, None, None], {"adj_x1": True})[0]
    np.testing.assert_allclose(got, np.matmul(np.swapaxes(a, -1, -2), b), rtol=1e-5, atol=1e-6)
    assert got.shape == (2, 5, 4, 6)


def test_gemm_alpha_beta_inputs() -> None:
    a = RNG.standard_normal((3, 2)).astype(np.float32)
    b = RNG.standard_normal((4, 2)).astype(np.float32)
    c = RNG.standard_normal((3, 4)).astype(np.float32)
    alpha, beta = np.float32(0.5), np.float32(-2.0)
    got = run_op("GEMM", [a, b, c, np.asarray(alpha), np.asarray(beta)], {"transpose_b": True})[0]
    np.testing.assert_allclose(got, 0.5 * a @ b.T - 2.0 * c, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------------------------ normalisation
def test_softmax_and_log_softmax_over_two_axes() -> None:
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    e = np.exp(x - x.max(axis=(1, 2), keepdims=True))
    want = e / e.sum(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(run_op("SoftmaxV2", [x], {"axes": [1, 2]})[0], want, rtol=1e-5)
    np.testing.assert_allclose(run_op("LogSoftmaxV2", [x], {"axes": [1, 2]})[0], np.log(want), rtol=1e-5, atol=1e-6)


def test_layer_norm_outputs_mean_and_variance() -> None:
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    gamma = RNG.standard_normal((3, 4)).astype(np.float32)
    beta = RNG.standard_normal((3, 4)).astype(np.float32)
    y, mean, var = run_op("LayerNorm", [x, gamma, beta], {"begin_norm_axis": 1, "begin_params_axis": 1,
                                                          "epsilon": 1e-5}, n_out=3)
    m = x.mean(axis=(1, 2), keepdims=True)
    v = x.var(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(y, (x - m) / np.sqrt(v + 1e-5) * gamma + beta, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(mean, m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var, v, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_batch_norm_inference(data_format) -> None:
    x = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    scale, offset, mean = (RNG.standard_normal(3).astype(np.float32) for _ in range(3))
    var = RNG.uniform(0.5, 2, 3).astype(np.float32)
    want = ort_node("BatchNormalization", [x, scale, offset, mean, var], epsilon=1e-3)[0]
    xin = x if data_format == "NCHW" else np.transpose(x, (0, 2, 3, 1))
    got = run_op("BatchNorm", [xin, scale, offset, mean, var], {"epsilon": 1e-3, "data_format": data_format,
                                                                "is_training": False}, n_out=6)[0]
    if data_format == "NHWC":
        got = np.transpose(got, (0, 3, 1, 2))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_rms_norm_and_group_norm() -> None:
    x = RNG.standard_normal((2, 4, 3)).astype(np.float32)
    gamma = RNG.standard_normal(3).astype(np.float32)
    y, rstd = run_op("RmsNorm", [x, gamma], {"epsilon": 1e-6}, n_out=2)
    r = 1 / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(y, x * r * gamma, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rstd, r, rtol=1e-5)
    x4 = RNG.standard_normal((2, 4, 3, 3)).astype(np.float32)
    g4, b4 = RNG.standard_normal(4).astype(np.float32), RNG.standard_normal(4).astype(np.float32)
    y4 = run_op("GroupNorm", [x4, g4, b4], {"num_groups": 2, "eps": 1e-5}, n_out=3)[0]
    grouped = x4.reshape(2, 2, -1)
    norm = ((grouped - grouped.mean(-1, keepdims=True)) / np.sqrt(grouped.var(-1, keepdims=True) + 1e-5)).reshape(x4.shape)
    np.testing.assert_allclose(y4, norm * g4[:, None, None] + b4[:, None, None], rtol=1e-4, atol=1e-5)


def test_lrn_onnx_size_attr_matches_onnxruntime() -> None:
    x = RNG.standard_normal((1, 6, 3, 3)).astype(np.float32)
    want = ort_node("LRN", [x], size=3, alpha=1e-3, beta=0.75, bias=2.0)[0]
    got = run_op("LRN", [x], {"size": 3, "alpha": 1e-3, "beta": 0.75, "bias": 2.0})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------------------------ shape / index ops
def test_strided_slice_masks_follow_tf_semantics() -> None:
    x = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5).astype(np.float32)
    begin = np.asarray([1, 0, 1], np.int32)
    end = np.asarray([2, 0, -1], np.int32)
    strides = np.asarray([1, 1, 2], np.int32)
    # dims: shrink dim0 at 1; ellipsis covers dims 1-2; last dim 1:-1:2
    got = run_op("StridedSlice", [x, begin, end, strides], {"shrink_axis_mask": 1, "ellipsis_mask": 2}, consts=(1, 2, 3))[0]
    np.testing.assert_array_equal(got, x[1, ..., 1:-1:2])
    got2 = run_op("StridedSlice", [x, np.asarray([0, 2], np.int32), np.asarray([0, 0], np.int32),
                                   np.asarray([1, -1], np.int32)], {"begin_mask": 1, "end_mask": 3, "new_axis_mask": 0},
                  consts=(1, 2, 3))[0]
    np.testing.assert_array_equal(got2, x[:, 2::-1])


def test_strided_slice_v2_with_axes() -> None:
    x = RNG.standard_normal((4, 5, 6)).astype(np.float32)
    got = run_op("StridedSliceV2", [x, np.asarray([-1, 1], np.int64), np.asarray([-100, 5], np.int64),
                                    np.asarray([2, 0], np.int64), np.asarray([-2, 2], np.int64)], consts=(1, 2, 3, 4))[0]
    np.testing.assert_array_equal(got, x[1:5:2, :, -1:-100:-2])


def test_split_concat_round_trip() -> None:
    x = RNG.standard_normal((2, 7)).astype(np.float32)
    parts = run_op("SplitV", [x, np.asarray([2, -1, 1], np.int64), np.asarray(1, np.int32)], {"num_split": 3},
                   n_out=3, consts=(1, 2))
    assert [p.shape for p in parts] == [(2, 2), (2, 4), (2, 1)]
    back = run_op("ConcatV2", [*parts, np.asarray(-1, np.int32)], {"N": 3}, consts=(3,))[0]
    np.testing.assert_array_equal(back, x)
    halves = run_op("Split", [np.asarray(0, np.int32), np.ones((4, 3), np.float32)], {"num_split": 2}, n_out=2,
                    consts=(0,))
    assert [h.shape for h in halves] == [(2, 3), (2, 3)]


def test_gather_family() -> None:
    x = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    idx = np.asarray([[2, -1], [0, 1]], np.int64)
    np.testing.assert_array_equal(run_op("GatherV2", [x, idx, np.asarray(1, np.int32)], consts=(2,))[0],
                                  np.take(x, [[2, 3], [0, 1]], axis=1))
    want = ort_node("GatherND", [x, np.asarray([[0, 1], [2, 3]], np.int64)])[0]
    np.testing.assert_array_equal(run_op("GatherNd", [x, np.asarray([[0, 1], [2, 3]], np.int64)])[0], want)
    ge_idx = RNG.integers(0, 4, (3, 2, 5)).astype(np.int64)
    np.testing.assert_array_equal(run_op("GatherElements", [x, ge_idx], {"dim": 1})[0],
                                  np.take_along_axis(x, ge_idx, axis=1))


def test_pad_v3_orders_and_modes() -> None:
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    onnx_order = np.asarray([1, 0, 0, 2], np.int64)  # x0_begin, x1_begin, x0_end, x1_end
    got = run_op("PadV3", [x, onnx_order, np.asarray(5.0, np.float32)], {"paddings_contiguous": False}, consts=(1, 2))[0]
    np.testing.assert_array_equal(got, np.pad(x, [(1, 0), (0, 2)], constant_values=5.0))
    pairs = np.asarray([[0, 1], [2, 2]], np.int64)
    got = run_op("PadV3", [x, pairs, None], {"mode": "reflect"}, consts=(1,))[0]
    np.testing.assert_array_equal(got, np.pad(x, [(0, 1), (2, 2)], mode="reflect"))


def test_reductions_keep_dims_and_noop() -> None:
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(run_op("ReduceMean", [x, np.asarray([0, -1], np.int64)], {"keep_dims": True}, consts=(1,))[0],
                               x.mean(axis=(0, 2), keepdims=True), rtol=1e-6)
    np.testing.assert_array_equal(run_op("ReduceSum", [x, np.zeros(0, np.int64)], {"noop_with_empty_axes": True},
                                         consts=(1,))[0], x)
    np.testing.assert_allclose(run_op("ReduceSum", [x, np.zeros(0, np.int64)], {"noop_with_empty_axes": False},
                                      consts=(1,))[0], x.sum(), rtol=1e-5)


def test_top_k_and_arg_max() -> None:
    x = np.asarray([[3, 1, 3, 2], [0, 5, 5, 1]], np.float32)
    values, idx = run_op("TopK", [x, np.asarray([2], np.int32)], {"dim": -1}, n_out=2, consts=(1,))
    np.testing.assert_array_equal(values, [[3, 3], [5, 5]])
    np.testing.assert_array_equal(idx, [[0, 2], [1, 2]])  # ties keep the lower index first
    am = run_op("ArgMaxV2", [x, np.asarray(1, np.int32)], {"dtype": int(ir.DataType.DT_INT32)}, consts=(1,))[0]
    assert am.dtype == np.int32 and am.tolist() == [0, 1]


def test_cast_shape_fill_range() -> None:
    x = np.asarray([1.7, -1.7, 2.5], np.float32)
    got = run_op("Cast", [x], {"dst_type": int(ir.DataType.DT_INT32)})[0]
    assert got.dtype == np.int32 and got.tolist() == [1, -1, 2]
    bf = run_op("Cast", [np.asarray([1.0 + 2 ** -10], np.float32)], {"dst_type": int(ir.DataType.DT_BF16)})[0]
    assert bf.tolist() == [1.0]  # 8 mantissa bits
    shape = run_op("Shape", [np.zeros((2, 5), np.float32)], {"dtype": int(ir.DataType.DT_INT64)})[0]
    assert shape.dtype == np.int64 and shape.tolist() == [2, 5]
    filled = run_op("Fill", [np.asarray([2, 2], np.int64), np.asarray([7], np.int32)], consts=(0, 1))[0]
    assert filled.dtype == np.int32 and filled.tolist() == [[7, 7], [7, 7]]
    rng = run_op("Range", [np.asarray(1.0, np.float32), np.asarray(2.0, np.float32), np.asarray(0.25, np.float32)],
                 consts=(0, 1, 2))[0]
    np.testing.assert_allclose(rng, [1.0, 1.25, 1.5, 1.75])


def test_reshape_zero_copies_and_expand() -> None:
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    assert run_op("Reshape", [x, np.asarray([0, -1], np.int64)], consts=(1,))[0].shape == (2, 12)
    assert run_op("Reshape", [np.zeros((0, 3), np.float32), np.asarray([0, 3], np.int64)], {"allowzero": 1},
                  consts=(1,))[0].shape == (0, 3)
    assert run_op("Expand", [np.ones((3, 1), np.float32), np.asarray([2, 1, 4], np.int64)], consts=(1,))[0].shape == (2, 3, 4)
    assert run_op("UnsqueezeV3", [x, np.asarray([0, -1], np.int64)], consts=(1,))[0].shape == (1, 2, 3, 4, 1)


# ------------------------------------------------------------------------------------ element-wise
def test_int_division_truncates_like_the_device() -> None:
    a = np.asarray([7, -7, 7, -7], np.int32)
    b = np.asarray([2, 2, -2, -2], np.int32)
    assert run_op("RealDiv", [a, b])[0].tolist() == [3, -3, -3, 3]


@pytest.mark.parametrize("op,fn", [
    ("Erf", lambda x: np.vectorize(__import__("math").erf)(x)),
    ("Sigmoid", lambda x: 1 / (1 + np.exp(-x))),
    ("Softplus", lambda x: np.log1p(np.exp(x))),
    ("FastGelu", lambda x: x / (1 + np.exp(-1.702 * x))),
    ("Gelu", lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
])
def test_unary_activations_against_formulas(op, fn) -> None:
    x = np.concatenate([RNG.standard_normal(200) * 3, [0.0, 1e-6, -1e-6, 0.49, 0.51]]).astype(np.float64)
    np.testing.assert_allclose(run_op(op, [x])[0], fn(x), rtol=1e-6, atol=1e-7)


def test_exp_and_log_with_base_scale_shift() -> None:
    x = RNG.uniform(0.5, 2, 5).astype(np.float32)
    np.testing.assert_allclose(run_op("Exp", [x], {"base": 2.0, "scale": 3.0, "shift": 1.0})[0], 2 ** (3 * x + 1), rtol=1e-5)
    np.testing.assert_allclose(run_op("Log", [x], {"base": 10.0, "scale": 2.0, "shift": 0.5})[0],
                               np.log10(2 * x + 0.5), rtol=1e-5)


def test_select_v2_and_tf_select_rows() -> None:
    cond = np.asarray([True, False])
    a = np.ones((2, 3), np.float32)
    b = np.zeros((2, 3), np.float32)
    np.testing.assert_array_equal(run_op("Select", [cond, a, b])[0], [[1, 1, 1], [0, 0, 0]])
    np.testing.assert_array_equal(run_op("SelectV2", [np.asarray([True, False, True]), a, b])[0], [[1, 0, 1], [1, 0, 1]])


# ------------------------------------------------------------------------------------ resize
@pytest.mark.parametrize("mode,coord", [("linear", "half_pixel"), ("cubic", "align_corners"),
                                        ("nearest", "asymmetric"), ("linear", "pytorch_half_pixel")])
def test_resize_matches_onnxruntime(mode, coord) -> None:
    x = RNG.standard_normal((1, 2, 4, 5)).astype(np.float32)
    scales = np.asarray([1, 1, 1.5, 0.6], np.float32)
    want = ort_node("Resize", [x, np.zeros(0, np.float32), scales], mode=mode, coordinate_transformation_mode=coord)[0]
    got = run_op("Resize", [x, np.zeros(0, np.float32), scales, None], {"mode": mode, "coordinate_transformation_mode": coord},
                 consts=(1, 2))[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


# ------------------------------------------------------------------------------------ executor
def _two_input_graph() -> ir.Graph:
    g = ir.Graph("two")
    f = ir.TensorDesc.of(ir.DataType.DT_FLOAT, (2, 2))
    a = g.add_node("Data", name="a", attrs={"index": 1}, inputs=[f], outputs=[f])
    b = g.add_node("Data", name="b", attrs={"index": 0}, inputs=[f], outputs=[f])
    sub = g.add_node("Sub", name="sub", inputs=[f, f], outputs=[f])
    neg = g.add_node("Neg", name="neg", inputs=[f], outputs=[f])
    g.add_edge(a, 0, sub, 0)
    g.add_edge(b, 0, sub, 1)
    g.add_edge(sub, 0, neg, 0)
    net = g.add_node("NetOutput", name="out", inputs=2)
    g.add_edge(neg, 0, net, 0)
    g.add_edge(sub, 0, net, 1)
    return g


def test_inputs_by_name_index_and_list_order() -> None:
    g = _two_input_graph()
    a = np.full((2, 2), 5.0, np.float32)
    b = np.full((2, 2), 2.0, np.float32)
    by_name = execute(g, {"a": a, "b": b})
    by_index = execute(g, {1: a, 0: b})
    by_list = execute(g, [b, a])  # ordered by the index attr
    for outs in (by_name, by_index, by_list):
        np.testing.assert_array_equal(outs[0], -3.0)
        np.testing.assert_array_equal(outs[1], 3.0)
    with pytest.raises(ExecutionError, match="no Data node 'c'"):
        execute(g, {"c": a})


def test_missing_inputs_are_seeded_random() -> None:
    g = _two_input_graph()
    first = execute(g, seed=3)
    again = execute(g, seed=3)
    other = execute(g, seed=4)
    np.testing.assert_array_equal(first[1], again[1])
    assert not np.array_equal(first[1], other[1])
    # feeding one input keeps the other's seeded values: (a - b) = (a - 0) + (0 - b)
    zero = np.zeros((2, 2), np.float32)
    only_a_fed = execute(g, {"a": zero}, seed=3)[1]
    only_b_fed = execute(g, {"b": zero}, seed=3)[1]
    np.testing.assert_allclose(first[1], only_b_fed + only_a_fed, rtol=1e-6)
    assert first[1].dtype == np.float32


def test_if_runs_the_selected_branch() -> None:
    g = ir.Graph("root")
    f = ir.TensorDesc.of(ir.DataType.DT_FLOAT, (3,))
    bd = ir.TensorDesc.of(ir.DataType.DT_BOOL, ())
    cond = g.add_node("Data", name="cond", attrs={"index": 0}, inputs=[bd], outputs=[bd])
    x = g.add_node("Data", name="x", attrs={"index": 1}, inputs=[f], outputs=[f])
    node = g.add_node("If", name="if", inputs=[bd, f], outputs=[f])
    g.add_edge(cond, 0, node, 0)
    g.add_edge(x, 0, node, 1)
    net = g.add_node("NetOutput", name="out", inputs=1)
    g.add_edge(node, 0, net, 0)
    for branch, op in (("then_branch", "Neg"), ("else_branch", "Relu")):
        sub = ir.Graph(f"if_{branch}")
        d = sub.add_node("Data", name="d", attrs={"index": 0, "_parent_node_index": 1}, inputs=[f], outputs=[f])
        o = sub.add_node(op, name="o", inputs=[f], outputs=[f])
        n = sub.add_node("NetOutput", name="n", inputs=1)
        sub.add_edge(d, 0, o, 0)
        sub.add_edge(o, 0, n, 0)
        g.add_subgraph(sub, parent_node=node)
    v = np.asarray([-1.0, 0.0, 2.0], np.float32)
    np.testing.assert_array_equal(execute(g, [np.asarray(True), v])[0], -v)
    np.testing.assert_array_equal(execute(g, [np.asarray(False), v])[0], np.maximum(v, 0))


def test_onnx_lstm_through_import_matches_onnxruntime() -> None:
    io = pytest.importorskip("gebench.io")
    x = RNG.standard_normal((4, 2, 3)).astype(np.float32)
    w = RNG.standard_normal((2, 16, 3)).astype(np.float32)
    r = RNG.standard_normal((2, 16, 4)).astype(np.float32)
    b = RNG.standard_normal((2, 32)).astype(np.float32)
    node = helper.make_node("LSTM", ["x", "w", "r", "b"], ["y", "yh", "yc"], hidden_size=4, direction="bidirectional")
    graph = helper.make_graph([node], "lstm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "yh", "yc")],
                              initializer=[onnx.numpy_helper.from_array(v, n) for v, n in ((w, "w"), (r, "r"), (b, "b"))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    got = execute(io.load_onnx(model), [x])
    for g_, w_ in zip(got, want, strict=True):
        np.testing.assert_allclose(g_, w_, rtol=1e-4, atol=1e-5)


def test_pool_3d_uses_pads_and_count_include_pad_default() -> None:
    x = RNG.standard_normal((1, 2, 4, 5, 3)).astype(np.float32)
    pads = [1, 0, 0, 1, 1, 1]  # GE: d(begin, end), h(begin, end), w(begin, end)
    onnx_pads = [1, 0, 1, 0, 1, 1]  # ONNX: begins then ends
    want = ort_node("AveragePool", [x], kernel_shape=[2, 2, 2], strides=[1, 2, 1], pads=onnx_pads, count_include_pad=1)[0]
    got = run_op("AvgPool3D", [x], {"ksize": [1, 1, 2, 2, 2], "strides": [1, 1, 1, 2, 1], "pads": pads,
                                     "data_format": "NCDHW"})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    want = ort_node("MaxPool", [x], kernel_shape=[2, 2, 2], strides=[1, 2, 1], pads=onnx_pads)[0]
    got = run_op("MaxPool3D", [x], {"ksize": [1, 1, 2, 2, 2], "strides": [1, 1, 1, 2, 1], "pads": pads,
                                     "padding": "CALCULATED", "data_format": "NCDHW"})[0]
    np.testing.assert_array_equal(got, want)


def test_bf16_const_is_decoded() -> None:
    bits = np.asarray([0x3F80, 0xC040], np.uint16)  # 1.0, -3.0 in bfloat16
    g = ir.Graph("bf16")
    value = ir.TensorValue(ir.DataType.DT_BF16, bits)
    c = g.add_node("Const", name="c", attrs={"value": value}, outputs=[value.desc()])
    net = g.add_node("NetOutput", name="out", inputs=1)
    g.add_edge(c, 0, net, 0)
    out = execute(g)[0]
    assert out.dtype == np.float32 and out.tolist() == [1.0, -3.0]


def test_public_surface() -> None:
    import gebench.exec as gx

    assert all(hasattr(gx, name) for name in gx.__all__)
    assert {"execute", "register_kernel", "check_graphs", "check_rewrite", "verify_run"} <= set(gx.__all__)


def test_resize_nearest_neighbor_v2_tf_rules() -> None:
    x = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)
    size = np.asarray([6, 8], np.int32)
    got = run_op("ResizeNearestNeighborV2", [x, size], consts=(1,), formats={0: "NCHW"})[0]
    np.testing.assert_array_equal(got, np.repeat(np.repeat(x, 2, axis=2), 2, axis=3))
    down = run_op("ResizeNearestNeighborV2", [x, np.asarray([2, 2], np.int32)], {"half_pixel_centers": True},
                  consts=(1,), formats={0: "NCHW"})[0]
    # scale 1.5 / 2: source floor((o + 0.5) * scale) -> rows 0, 2 and cols 1, 3
    np.testing.assert_array_equal(down, x[:, :, [0, 2]][:, :, :, [1, 3]])


def test_misc_index_ops_against_numpy() -> None:
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(run_op("Einsum", [x, x], {"equation": "ij,kj->ik", "N": 2})[0], x @ x.T, rtol=1e-5)
    hot = run_op("OneHot", [np.asarray([0, 2, -1], np.int32), np.asarray(3, np.int32), np.asarray(5.0, np.float32),
                            np.asarray(0.0, np.float32)], {"axis": 0}, consts=(1, 2, 3))[0]
    np.testing.assert_array_equal(hot, 5.0 * np.eye(3, dtype=np.float32)[[0, 2, 2]].T)
    np.testing.assert_allclose(run_op("Cumsum", [x, np.asarray(1, np.int32)], {"exclusive": True, "reverse": True},
                                      consts=(1,))[0],
                               np.flip(np.cumsum(np.flip(x, 1), 1), 1) - x, rtol=1e-5, atol=1e-6)
    upd = run_op("TensorScatterUpdate", [x, np.asarray([[1], [0]], np.int64), np.zeros((2, 4), np.float32)])[0]
    assert np.all(upd[:2] == 0) and np.array_equal(upd[2], x[2])
    se = run_op("ScatterElements", [x, np.asarray([[1, 0]], np.int64), np.ones((1, 2), np.float32)],
                {"axis": 1, "reduction": "add"})[0]
    np.testing.assert_allclose(se[0, :2], x[0, :2] + 1)
    assert run_op("Where", [np.asarray([[0, 1], [1, 0]])])[0].tolist() == [[0, 1], [1, 0]]
    np.testing.assert_array_equal(run_op("AccumulateNV2", [x, x, x], {"N": 3})[0], x + x + x)
    np.testing.assert_array_equal(run_op("ClipByValue", [x, np.asarray(-0.5, np.float32), np.asarray(0.5, np.float32)])[0],
                                  np.clip(x, -0.5, 0.5))
