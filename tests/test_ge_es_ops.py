"""Generated ES op functions (spec §1.2, §1.3), the plugin modules and custom ops."""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from gebench import ir, ops
from gebench.ge.es import GraphBuilder, TensorHolder
from gebench.ge.es import all as es_all
from gebench.ge.es import custom as es_custom
from gebench.ge.es import math as es_math
from gebench.ge.es import nn as es_nn
from gebench.ge.es._opgen import plugin_op_types
from gebench.ge.graph import DataType, Graph, Tensor

SAMPLE_SIGNATURES = {
    "Add": "(x1, x2)",
    "MatMul": "(x1, x2, bias=None, *, transpose_x1=False, transpose_x2=False)",
    "BatchMatMulV2": "(x1, x2, bias=None, offset_w=None, *, adj_x1=False, adj_x2=False, offset_x=0)",
    "GEMM": "(a, b, c, alpha, beta, *, transpose_a=False, transpose_b=False)",
    "Relu": "(x)",
    "ConcatV2": "(x, concat_dim, *, N=1)",
    "Concat": "(concat_dim, x, *, N=1)",
    "Split": "(split_dim, x, y_num, *, num_split)",
    "Conv2D": "(x, filter, bias=None, offset_w=None, *, strides, pads, dilations=[1, 1, 1, 1], groups=1, "
              "data_format='NHWC', offset_x=0)",
    "Identity": "(x)",
    "TensorMove": "(x)",
    "Const": "(owner_graph_builder, *, value=Tensor())",
}


@pytest.mark.parametrize("op", sorted(SAMPLE_SIGNATURES))
def test_sample_signatures(op: str) -> None:
    assert str(inspect.signature(getattr(es_all, op))) == SAMPLE_SIGNATURES[op]


def test_plugin_membership() -> None:
    for name in ("ConcatV2", "Split", "Concat", "Identity", "TensorMove", "GEMM", "Add", "MatMul"):
        assert getattr(es_math, name) is getattr(es_all, name)
    for name in ("Relu", "BatchMatMulV2", "Conv2D"):
        assert getattr(es_nn, name) is getattr(es_all, name)
    with pytest.raises(AttributeError, match="ge.es.nn"):
        es_math.Relu  # noqa: B018
    with pytest.raises(AttributeError):
        es_all.NoSuchOp  # noqa: B018
    assert set(plugin_op_types("all")) == set(ops.all_schemas())
    assert set(plugin_op_types("math")) | set(plugin_op_types("nn")) < set(plugin_op_types("all"))
    star: dict[str, object] = {}
    exec("from gebench.ge.es.math import *", star)  # noqa: S102 - checks what a sample data script gets
    for helper in ("GraphBuilder", "TensorHolder", "Graph", "Tensor", "DataType", "Format", "List"):
        assert helper in star
    assert "Add" in star and "Relu" not in star and "MatMul" in dir(es_math)


def test_signature_rules_for_all_catalogue_ops() -> None:
    """Every generated function follows §1.2's parameter order and kinds."""
    for op_type, schema in ops.all_schemas().items():
        params = list(inspect.signature(getattr(es_all, op_type)).parameters.values())
        positional = [p for p in params if p.kind == p.POSITIONAL_OR_KEYWORD]
        kwonly = [p for p in params if p.kind == p.KEYWORD_ONLY]
        names = [p.name for p in positional]
        n_in = len(schema.inputs)
        if n_in == 0:
            assert names[0] == "owner_graph_builder", op_type
        else:
            assert [n.removeprefix("in_") for n in names[:n_in]] == [d.name for d in schema.inputs], op_type
        counts = [f"{o.name}_num" for o in schema.outputs if o.kind == "dynamic"]
        assert [n for n in names if n in counts] == counts, op_type
        req = [a.name for a in schema.attrs if a.required]
        opt = [a.name for a in schema.attrs if not a.required]
        assert [p.name.removeprefix("attr_") for p in kwonly] == req + opt, op_type
        assert all(p.default is inspect.Parameter.empty for p in kwonly[: len(req)]), op_type
        assert all(p.default is not inspect.Parameter.empty for p in kwonly[len(req):]), op_type


def test_wrong_calls_raise_type_errors_like_generated_functions() -> None:
    b = GraphBuilder()
    a, w, c = b.create_inputs(3)
    with pytest.raises(TypeError, match="positional"):
        es_all.GEMM(a, w, c, 1.0, 1.0, True, False)  # attrs are keyword-only (spec §5.6)
    with pytest.raises(TypeError, match="num_split"):
        es_all.Split(1, a, 2)  # required attr missing
    with pytest.raises(TypeError, match="unexpected keyword"):
        es_all.MatMul(a, w, transpose_a=True)
    with pytest.raises(TypeError, match="argument 'x' must be a TensorHolder"):
        es_all.Relu(1.0)
    with pytest.raises(TypeError, match="argument 'x' must be a TensorHolder"):
        es_all.Identity([a])
    with pytest.raises(TypeError, match="attr 'transpose_x1' must be a bool"):
        es_all.MatMul(a, w, transpose_x1="yes")
    with pytest.raises(TypeError, match="attr 'strides' must be a list of int"):
        es_all.Conv2D(a, w, strides=1, pads=[0, 0, 0, 0])
    with pytest.raises(TypeError, match="attr 'groups' must be an int"):
        es_all.Conv2D(a, w, strides=[1, 1, 1, 1], pads=[0, 0, 0, 0], groups=1.5)
    with pytest.raises(TypeError, match="attr 'data_format' must be a str"):
        es_all.Conv2D(a, w, strides=[1, 1, 1, 1], pads=[0, 0, 0, 0], data_format=None)
    with pytest.raises(TypeError, match="argument 'y_num' must be an int"):
        es_all.Split(1, a, "2", num_split=2)
    with pytest.raises(ValueError, match="argument 'y_num' must be >= 0"):
        es_all.Split(1, a, -1, num_split=2)
    with pytest.raises(TypeError, match="argument 'x' is a dynamic input and must be a list"):
        es_all.ConcatV2(a, 0)
    with pytest.raises(TypeError, match=r"^Value must be TensorHolder or int\|float .*\[Add\(\) argument 'x2'\]"):
        es_all.Add(a, "b")
    with pytest.raises(TypeError, match="argument 'x1' is a required input"):
        es_all.MatMul(None, w)
    with pytest.raises(ValueError, match="cannot tell which GraphBuilder"):
        es_all.Add(1, 2.0)
    with pytest.raises(TypeError, match="owner_graph_builder"):
        es_all.Const(a, value=Tensor([1.0]))
    with pytest.raises(TypeError, match="attr 'value' must be a ge.graph.Tensor"):
        es_all.Const(b, value=[1.0])
    with pytest.raises(TypeError, match="attr 'dst_type' must be an int"):
        es_all.Cast(a, dst_type="float")
    other = GraphBuilder("other").create_input(0)
    with pytest.raises(ValueError, match="argument 'x2'.*GraphBuilder 'other'"):
        es_all.MatMul(a, other)


def test_node_attrs_defaults_and_anchors() -> None:
    b = GraphBuilder("g")
    x, w, bias = b.create_inputs(3)
    conv = es_all.Conv2D(x, w, bias, None, strides=[1, 1, 2, 2], pads=[1, 1, 1, 1], data_format="NCHW")
    node = conv._ir_node
    assert node.name == "Conv2D_0" and node.op_type == "Conv2D"
    assert node.attrs == {"strides": [1, 1, 2, 2], "pads": [1, 1, 1, 1], "dilations": [1, 1, 1, 1], "groups": 1,
                          "data_format": "NCHW", "offset_x": 0}
    assert node.input_names == ["x", "filter", "bias", "offset_w"] and node.output_names == ["y"]
    assert node.inputs[3].is_placeholder and not node.inputs[2].is_placeholder
    assert conv._get_node_snapshot().get_inputs_size() == 3
    gelu = es_all.Swish(x, scale=0.1)
    assert gelu._ir_node.attrs == {"scale": float(__import__("numpy").float32(0.1))}
    cast = es_all.Cast(x, dst_type=DataType.DT_FLOAT16)
    assert cast._ir_node.attrs == {"dst_type": 1} and type(cast._ir_node.attrs["dst_type"]) is int


def test_dynamic_inputs_outputs_and_multi_output_objects() -> None:
    b = GraphBuilder("g")
    x, y = b.create_inputs(2)
    parts = es_all.Split(0, x, 3, num_split=3)
    assert isinstance(parts, list) and [p._output_index for p in parts] == [0, 1, 2]
    assert parts[0]._ir_node.output_names == ["y0", "y1", "y2"]
    cat = es_all.ConcatV2([x, y, parts[2]], 1, N=3)
    node = cat._ir_node
    assert node.input_names == ["x0", "x1", "x2", "concat_dim"] and node.attrs == {"N": 3}
    topk = es_all.TopK(x, 2)
    assert type(topk).__name__ == "TopKOutput" and type(topk) is es_all.TopKOutput
    assert [f for f in type(topk)._fields] == [o.name for o in ops.get_schema("TopK").outputs]
    first = getattr(topk, type(topk)._fields[0])
    assert isinstance(first, TensorHolder) and first._ir_node.op_type == "TopK"
    g = b.build_and_reset([cat])
    assert [n.name for n in g.get_direct_nodes()][-1] == "NetOutput_g"


def test_tensor_attr_ownership_moves_to_the_builder() -> None:
    b = GraphBuilder()
    t = Tensor([1, 2, 3, 4], data_type=DataType.DT_INT32, shape=[2, 2])
    k = es_all.Const(b, value=t)
    assert k._ir_node.outputs[0] == ir.TensorDesc.of(DataType.DT_INT32, (2, 2))
    assert k._ir_node.attrs["value"].array.tolist() == [[1, 2], [3, 4]]
    with pytest.raises(RuntimeError, match="already passed"):
        es_all.Const(b, value=t)
    # the Tensor() default is fresh per call: a second default Const does not raise "already passed"
    e1, e2 = es_all.Const(b), es_all.Const(b)
    assert e1._ir_node.attrs["value"] == e2._ir_node.attrs["value"]
    assert e1._ir_node.attrs["value"].shape == (0,)


def test_done_when_script_from_pass_file_imports() -> None:
    """Issue 2's acceptance script, written the way GE pass files are (``import gebench`` at the top of this
    module installed the ``ge`` hook)."""
    from ge.es.all import GEMM, Add, MatMul
    from ge.es.graph_builder import GraphBuilder as GB
    from ge.es.math import ConcatV2, Identity, Split, TensorMove
    from ge.es.nn import BatchMatMulV2, Conv2D, Relu
    from ge.graph.types import DataType as DT

    # sample #3/#4 pattern and replacement
    pb = GB("pattern0")
    a0, b0, c0 = pb.create_inputs(3)
    mm = MatMul(a0, b0)
    add = Add(mm, c0)
    pat = pb.build_and_reset([add])
    assert [(n.name, n.type) for n in pat.get_direct_nodes()] == [
        ("input_0", "Data"), ("input_1", "Data"), ("input_2", "Data"), ("MatMul_0", "MatMul"), ("Add_1", "Add"),
        ("NetOutput_pattern0", "NetOutput")]
    add_node = pat.find_node_by_name("Add_1")
    assert [(n.name, p) for n, p in (add_node.get_in_data_nodes_and_port_indexes(i) for i in range(2))] == [
        ("MatMul_0", 0), ("input_2", 0)]
    assert pat.find_node_by_name("MatMul_0").get_attr("transpose_x1") is False

    rb = GB("replacement")
    ra, rbb, rc = rb.create_inputs(3)
    alpha, beta = rb.create_scalar_float(1.0), rb.create_scalar_float(1.0)
    gemm = GEMM(ra, rbb, rc, alpha, beta, transpose_a=True, transpose_b=False)
    rep = rb.build_and_reset([gemm])
    gnode = rep.find_node_by_name("GEMM_2")
    assert gnode.type == "GEMM" and gnode.get_attr("transpose_a") is True and gnode.get_attr("transpose_b") is False
    assert [gnode.get_in_data_nodes_and_port_indexes(i)[0].name for i in range(5)] == [
        "input_0", "input_1", "input_2", "Const_0", "Const_1"]
    assert rep.find_node_by_name("Const_0").get_attr("value").data == 1.0

    # sample #3 expression style: GEMM with number operands, BatchMatMulV2 + c
    eb = GB("expr")
    x, y, z = eb.create_inputs(3, 0)
    fused = GEMM(x, y, [[0.1, 0.1], [0.1, 0.1]], 1.0, 1.0)
    bmm = BatchMatMulV2(x, y) + z
    expr = eb.build_and_reset([fused, bmm])
    names = [(n.name, n.type) for n in expr.get_direct_nodes()]
    assert names[3:] == [("Const_0", "Const"), ("Const_1", "Const"), ("Const_2", "Const"), ("GEMM_3", "GEMM"),
                         ("BatchMatMulV2_4", "BatchMatMulV2"), ("Add_5", "Add"), ("NetOutput_expr", "NetOutput")]
    c0_value = expr.find_node_by_name("Const_0").get_attr("value")
    assert c0_value.data_type == DT.DT_FLOAT and c0_value.shape == [2, 2]
    assert expr.find_node_by_name("Const_0").get_output_desc(0).get_shape() == [2, 2]
    assert expr.find_node_by_name("BatchMatMulV2_4").get_attr("offset_x") == 0

    # sample #1 replacement: Relu per input, then ConcatV2
    cb = GB("replacement")
    ins = [cb.create_input(i) for i in range(3)]
    dim = cb.create_input(3)
    cat = ConcatV2([Relu(t) for t in ins], dim, N=3)
    cg = cb.build_and_reset([cat])
    cnode = cg.find_node_by_name("ConcatV2_3")
    assert cnode.get_inputs_size() == 4 and cnode.get_attr("N") == 3
    assert [cnode.get_in_data_nodes_and_port_indexes(i)[0].name for i in range(4)] == [
        "Relu_0", "Relu_1", "Relu_2", "input_3"]

    # sample #9 replacement: Split -> Conv2D per group -> Concat
    sb = GB("replacement")
    xin, win = sb.create_inputs(2)
    xs = Split(1, xin, 2, num_split=2)
    ws = Split(0, win, 2, num_split=2)
    convs = [Conv2D(xi, wi, None, None, strides=[1, 1, 1, 1], pads=[0, 0, 0, 0], dilations=[1, 1, 1, 1], groups=1,
                    data_format="NCHW") for xi, wi in zip(xs, ws, strict=True)]
    out = ConcatV2(convs, 1, N=2)
    sg = sb.build_and_reset([out])
    assert [(n.name, n.type) for n in sg.get_direct_nodes()][2:] == [
        ("Const_0", "Const"), ("Split_1", "Split"), ("Const_2", "Const"), ("Split_3", "Split"), ("Conv2D_4", "Conv2D"),
        ("Conv2D_5", "Conv2D"), ("Const_6", "Const"), ("ConcatV2_7", "ConcatV2"), ("NetOutput_replacement", "NetOutput")]
    split_dim = sg.find_node_by_name("Const_0").get_attr("value")
    assert split_dim.data_type == DT.DT_INT64 and split_dim.data == 1  # int split_dim becomes an int64 Const
    conv = sg.find_node_by_name("Conv2D_5")
    assert [conv.get_in_data_nodes_and_port_indexes(i) for i in range(2)][1][0].name == "Split_3"
    assert conv.get_in_data_nodes_and_port_indexes(1)[1] == 1 and conv.get_inputs_size() == 2
    assert conv.get_attr("data_format") == "NCHW" and conv.get_attr("groups") == 1

    # sample #8 pattern: Identity / TensorMove are TensorHolder-only
    ib = GB("p")
    p0 = ib.create_input(0)
    zero = ib.create_const_float(0.0)
    moved = TensorMove(Identity(zero)) + p0
    ig = ib.build_and_reset([moved])
    assert [n.type for n in ig.get_direct_nodes()] == ["Data", "Const", "Identity", "TensorMove", "Add", "NetOutput"]
    with pytest.raises(TypeError, match="argument 'x'"):
        Identity(0.0)
    for graph in (pat, rep, expr, cg, sg, ig):
        graph.ir.verify()


@pytest.fixture
def add_custom(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "custom_ops.json"
    path.write_text(json.dumps({
        "AddCustom": {
            "inputs": [{"name": "x", "kind": "required"}, {"name": "y", "kind": "required"}],
            "outputs": [{"name": "z", "kind": "required"}],
            "attrs": [{"name": "alpha", "type": "Float", "required": False, "default": "1.0"}],
        }
    }))
    ops.clear_custom_ops()
    yield path
    ops.clear_custom_ops()


def test_custom_op_declared_after_import_is_importable_and_builds(add_custom: Path) -> None:
    with pytest.raises(ImportError):
        exec("from gebench.ge.es.custom import AddCustom", {})  # noqa: S102 - not declared yet
    assert ops.load_custom_ops(add_custom) == ["AddCustom"]
    from gebench.ge.es.custom import AddCustom

    assert str(inspect.signature(AddCustom)) == "(x, y, *, alpha=1.0)"
    assert es_all.AddCustom is AddCustom and "AddCustom" in es_custom.__all__
    with pytest.raises(AttributeError):
        es_math.AddCustom  # noqa: B018
    b = GraphBuilder("custom")
    x, y = b.create_inputs(2)
    z = AddCustom(AddCustom(x, 0.0), y)
    g = b.build_and_reset([z])
    inner, outer = g.find_node_by_name("AddCustom_1"), g.find_node_by_name("AddCustom_2")
    assert inner.type == outer.type == "AddCustom" and inner.get_attr("alpha") == 1.0
    assert outer.get_in_data_nodes_and_port_indexes(0)[0].name == "AddCustom_1"
    assert inner._ir_node.output_names == ["z"]


def test_custom_op_from_env_var(add_custom: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ops.ENV_CUSTOM_OPS, str(add_custom))
    ops.clear_custom_ops()  # the variable is read on the next catalogue access
    from ge.es.custom import AddCustom

    import gebench  # noqa: F401

    b = GraphBuilder()
    x = b.create_input(0)
    assert AddCustom(x, x)._ir_node.op_type == "AddCustom"


def test_subgraph_arguments_must_be_graphs() -> None:
    b = GraphBuilder()
    cond, x = b.create_inputs(2)
    with pytest.raises(TypeError, match="argument 'then_branch' must be a Graph"):
        es_all.If(cond, [x], 1, "then", Graph("else"))


def test_custom_op_with_dynamic_input_and_two_outputs(tmp_path: Path) -> None:
    path = tmp_path / "ops.json"
    path.write_text(json.dumps({
        "MergeSplitCustom": {
            "inputs": [{"name": "xs", "kind": "dynamic"}, {"name": "gate", "kind": "optional"}],
            "outputs": [{"name": "xs", "kind": "required"}, {"name": "lambda", "kind": "required"}],
            "attrs": [{"name": "mode", "type": "String", "required": True},
                      {"name": "xs", "type": "Int", "required": False, "default": 0}],
        }
    }))
    ops.clear_custom_ops()
    try:
        ops.load_custom_ops(path)
        fn = es_custom.MergeSplitCustom
        assert str(inspect.signature(fn)) == "(xs, gate=None, *, mode, attr_xs=0)"
        b = GraphBuilder()
        x, y = b.create_inputs(2)
        out = fn([x, y, 1.5], mode="m", attr_xs=2)
        assert type(out).__name__ == "MergeSplitCustomOutput" and out._fields == ("ref_xs", "out_lambda")
        node = out.ref_xs._ir_node
        assert node.input_names == ["xs0", "xs1", "xs2", "gate"] and node.attrs == {"mode": "m", "xs": 2}
        assert (out.ref_xs._output_index, out.out_lambda._output_index) == (0, 1)
        assert b._graph.producer(node, 2)[0].op_type == "Const"
    finally:
        ops.clear_custom_ops()


_DUMMY_ATTRS = {"Int": 1, "Float": 1.0, "String": "s", "Bool": True, "Type": DataType.DT_FLOAT, "ListInt": [1],
                "ListFloat": [1.0], "ListBool": [True], "ListType": [DataType.DT_FLOAT], "ListListInt": [[1]],
                "ListString": ["s"]}


def test_every_catalogue_op_builds_a_node_following_its_schema() -> None:
    for op_type, schema in ops.all_schemas().items():
        b = GraphBuilder(op_type)
        x = b.create_input(0)
        args: list[object] = []
        if not schema.inputs:
            args.append(b)
        for d in schema.inputs:
            args.append([x, x] if d.kind == "dynamic" else x)
        args.extend(2 for o in schema.outputs if o.kind == "dynamic")
        for i, _ in enumerate(schema.subgraphs):
            sub = GraphBuilder(f"{op_type}_sub{i}")
            args.append(sub.build_and_reset([sub.create_input(0)]))
        kwargs = {name: _DUMMY_ATTRS[a.type] for name, a in
                  ((p.name, schema.attr(p.name.removeprefix("attr_")))
                   for p in inspect.signature(getattr(es_all, op_type)).parameters.values()
                   if p.kind == p.KEYWORD_ONLY and p.default is inspect.Parameter.empty)}
        result = getattr(es_all, op_type)(*args, **kwargs)
        first = result[0] if isinstance(result, list) else (
            getattr(result, type(result)._fields[0]) if not isinstance(result, TensorHolder) else result)
        if isinstance(first, list):
            first = first[0]
        node = first._ir_node
        assert node.op_type == op_type and node.name == f"{op_type}_0", op_type
        n_dyn_in = sum(2 for d in schema.inputs if d.kind == "dynamic")
        assert len(node.inputs) == n_dyn_in + sum(1 for d in schema.inputs if d.kind != "dynamic"), op_type
        assert set(node.attrs) == {a.name for a in schema.attrs}, op_type
        assert node.subgraph_names == [f"{op_type}_sub{i}" for i in range(len(schema.subgraphs))], op_type
        b._graph.verify()
