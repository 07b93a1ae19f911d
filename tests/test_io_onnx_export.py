"""ONNX export: inverse mapping, checker-valid output, round trips and the error for ops without an ONNX form."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from gebench import ir, ops
from gebench.io import OnnxExportError, load_onnx, save_onnx, to_onnx

ASSETS = Path(__file__).resolve().parents[1] / "assets"
LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def _types(graph: ir.Graph) -> Counter:
    return Counter(n.op_type for n in graph.nodes())


@pytest.mark.parametrize("name", ["matmul_add", "add_zero", "grouped_conv", "concat_relu", "small_cnn",
                                  "small_transformer"])
def test_asset_round_trip(name: str, tmp_path) -> None:
    g = load_onnx(ASSETS / f"{name}.onnx")
    path = tmp_path / f"{name}.onnx"
    save_onnx(g, path)
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    assert model.opset_import[0].version == 18
    again = load_onnx(path)
    again.verify()
    assert _types(again) == _types(g)
    assert {n.name for n in again.nodes_of_type("Data")} == {n.name for n in g.nodes_of_type("Data")}


def test_asset_export_is_numerically_the_model() -> None:
    ort = pytest.importorskip("onnxruntime")  # a dev dependency; the round trip above runs without it
    for name in ("small_cnn", "small_transformer", "grouped_conv"):
        original = onnx.load(ASSETS / f"{name}.onnx")
        exported = to_onnx(load_onnx(ASSETS / f"{name}.onnx"))
        rng = np.random.default_rng(0)
        feeds = {i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
                 for i in original.graph.input}
        want = ort.InferenceSession(original.SerializeToString()).run(None, feeds)
        got = ort.InferenceSession(exported.SerializeToString()).run(None, feeds)
        for a, b in zip(want, got, strict=True):
            np.testing.assert_array_equal(a, b)  # same ops in the same order: bit-identical


def test_light_model_round_trip() -> None:
    # opset-9 Unsqueeze (attr axes) comes back in its opset-18 form: UnsqueezeV3 with a Const axes input;
    # everything else (Conv2D, BatchNorm, ConcatD, Fill, AvgPoolV2, ...) comes back as it was.
    dense = load_onnx(LIGHT / "light_densenet121.onnx")
    back = _types(load_onnx(to_onnx(dense)))
    want = _types(dense)
    n = want.pop("Unsqueeze")
    want["UnsqueezeV3"] += n
    want["Const"] += n
    assert back == want


def test_inverse_layouts() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 9, 9])
    w = onnx.numpy_helper.from_array(np.ones((8, 2, 3, 3), np.float32), name="w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", strides=[2, 3], pads=[1, 2, 3, 4],
                              dilations=[2, 1], group=2),
             helper.make_node("MaxPool", ["c"], ["p"], name="pool", kernel_shape=[2, 2], pads=[0, 1, 1, 0]),
             helper.make_node("Transpose", ["p"], ["t"], name="tr", perm=[0, 2, 3, 1]),
             helper.make_node("Softmax", ["t"], ["y"], name="sm", axis=1)]
    graph = helper.make_graph(nodes, "g", [x], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              initializer=[w])
    model = to_onnx(load_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])))
    by_op = {n.op_type: n for n in model.graph.node}
    conv = {a.name: helper.get_attribute_value(a) for a in by_op["Conv"].attribute}
    assert conv["strides"] == [2, 3] and conv["pads"] == [1, 2, 3, 4] and conv["dilations"] == [2, 1]
    assert conv["group"] == 2 and conv["kernel_shape"] == [3, 3]
    pool = {a.name: helper.get_attribute_value(a) for a in by_op["MaxPool"].attribute}
    assert pool["pads"] == [0, 1, 1, 0] and pool["kernel_shape"] == [2, 2]
    assert helper.get_attribute_value(by_op["Transpose"].attribute[0]) == [0, 2, 3, 1]
    assert [i.name for i in model.graph.initializer] == ["w_Initializer_0"]  # the perm Const became an attribute
    assert helper.get_attribute_value(by_op["Softmax"].attribute[0]) == 1


def _graph_with(op_type: str, attrs: dict | None = None) -> ir.Graph:
    g = ir.Graph("g")
    desc = ir.TensorDesc.of(ir.DataType.DT_FLOAT, (2, 3))
    data = ops.make_node(g, "Data", name="x", attrs={"index": 0})
    data.inputs[0] = desc.copy()
    data.outputs[0] = desc.copy()
    node = ops.make_node(g, op_type, name=f"my_{op_type.lower()}", attrs=attrs or {})
    g.add_edge(data, 0, node, 0)
    node.inputs[0] = desc.copy()
    node.outputs[0] = desc.copy()
    relu = ops.make_node(g, "Relu", name="relu")
    g.add_edge(node, 0, relu, 0)
    relu.outputs[0] = desc.copy()
    net = ops.make_node(g, "NetOutput", name="out", dynamic_inputs={"x": 1})
    g.add_edge(relu, 0, net, 0)
    return g


def test_export_error_lists_every_unexportable_node() -> None:
    g = _graph_with("Gelu")
    extra = ops.make_node(g, "FastGelu", name="fast")
    g.add_edge(g.node_by_name("x"), 0, extra, 0)
    with pytest.raises(OnnxExportError) as info:
        to_onnx(g)
    assert [(n, t) for n, t, _ in info.value.nodes] == [("my_gelu", "Gelu"), ("fast", "FastGelu")]
    assert "my_gelu" in str(info.value) and "fast" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_export_graph_built_without_onnx() -> None:
    g = _graph_with("Muls", {"value": 3.0})
    model = to_onnx(g)
    assert [n.op_type for n in model.graph.node] == ["Mul", "Relu"]
    assert [o.name for o in model.graph.output] == ["relu"]
    assert _types(load_onnx(model))["Mul"] == 1


def test_export_without_outputs_is_an_error() -> None:
    g = ir.Graph("g")
    ops.make_node(g, "Data", name="x", attrs={"index": 0})
    with pytest.raises(OnnxExportError, match="outputs unknown"):
        to_onnx(g)


def _matmul_graph(op_type: str, attrs: dict, a_shape: tuple, b_shape: tuple, with_gemm_scalars: bool = False):
    g = ir.Graph("mm")
    nodes = []
    for i, shape in enumerate((a_shape, b_shape)):
        d = ops.make_node(g, "Data", name=f"in{i}", attrs={"index": i})
        desc = ir.TensorDesc.of(ir.DataType.DT_FLOAT, shape)
        d.inputs[0], d.outputs[0] = desc.copy(), desc.copy()
        nodes.append(d)
    mm = ops.make_node(g, op_type, name="mm", attrs=attrs)
    for i, d in enumerate(nodes):
        g.add_edge(d, 0, mm, i)
        mm.inputs[i] = d.outputs[0].copy()
    if with_gemm_scalars:
        for port, (name, val) in enumerate((("c", np.ones((1,), np.float32)), ("alpha", np.float32(2.0)),
                                            ("beta", np.float32(0.5))), start=2):
            c = ops.make_node(g, "Const", name=name,
                              attrs={"value": ir.TensorValue(ir.DataType.DT_FLOAT, np.asarray(val))})
            g.add_edge(c, 0, mm, port)
    net = ops.make_node(g, "NetOutput", name="out", dynamic_inputs={"x": 1})
    g.add_edge(mm, 0, net, 0)
    return g


def test_matmul_family_export_numerics() -> None:
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    b = rng.standard_normal((2, 5, 4)).astype(np.float32)
    cases = [
        (_matmul_graph("BatchMatMulV2", {"adj_x2": True}, a.shape, b.shape), a, b, a @ np.swapaxes(b, -1, -2)),
        (_matmul_graph("MatMulV2", {"transpose_x1": True}, (4, 3), (4, 5)), a[0].T.copy(), b[0].T.copy(),
         a[0] @ b[0].T),
        (_matmul_graph("GEMM", {"transpose_b": True}, (3, 4), (5, 4), with_gemm_scalars=True), a[0], b[0],
         2.0 * (a[0] @ b[0].T) + 0.5),
    ]
    for graph, x0, x1, want in cases:
        model = to_onnx(graph)
        got = ort.InferenceSession(model.SerializeToString()).run(None, {"in0": x0, "in1": x1})[0]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_subgraph_nodes_are_not_exported() -> None:
    cond = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    body = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "b", [],
                             [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])])
    node = helper.make_node("If", ["c"], ["y"], name="if0", then_branch=body, else_branch=body)
    graph = helper.make_graph([node], "g", [cond, x], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    g = load_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
    with pytest.raises(OnnxExportError, match="if0"):
        to_onnx(g)


def test_export_covers_what_import_produces() -> None:
    from gebench.io.onnx_export import exportable_op_types
    from gebench.io.onnx_import import produced_ge_types

    # no ONNX (opset 18) form: NPU-only fused ops, GE's Triu, and nodes carrying subgraphs
    no_onnx_form = {"AddRmsNorm", "FastGelu", "GeluV2", "RmsNorm", "Triu", "If"}
    missing = set(produced_ge_types()) - set(exportable_op_types()) - {"Data", "Const", "NetOutput"}
    assert missing == no_onnx_form
