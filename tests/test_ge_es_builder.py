"""ge.es GraphBuilder, scopes, TensorHolder and tensor_like against spec §2.2.1-§2.2.4."""

from __future__ import annotations

import copy
import threading

import pytest

from gebench import ir
from gebench.ge import es as ge_es
from gebench.ge.es import GraphBuilder, TensorHolder, graph_builder
from gebench.ge.es import all as es
from gebench.ge.es.graph_builder import InputType, attr_scope, control_dependency_scope
from gebench.ge.es.tensor_like import convert_to_tensor_holder, resolve_builder
from gebench.ge.graph import DataType, Format, Graph, Node


def producers(graph: Graph, name: str) -> list[tuple[str, int] | None]:
    g = graph.ir
    return [None if p is None else (p[0].name, p[1]) for p in g.producers(g.node_by_name(name))]


def const_value(graph: Graph, name: str) -> tuple[DataType, tuple[int, ...], list[object]]:
    v = graph.ir.node_by_name(name).attrs["value"]
    return v.dtype, v.shape, v.array.ravel().tolist()


def test_es_public_names() -> None:
    assert ge_es.__all__ == ["GraphBuilder", "TensorHolder", "list_plugins", "get_plugin"]
    assert ge_es.list_plugins() == ["math", "nn", "all", "custom"]
    assert ge_es.get_plugin("math") is ge_es.math and ge_es.get_plugin("nope") is None
    assert [m.value for m in InputType] == ["Data", "RefData", "AippData", "AnyData"]


def test_builder_name_and_copy_rules() -> None:
    assert GraphBuilder().name == "graph" and GraphBuilder("").name == "graph" and GraphBuilder("x").name == "x"
    with pytest.raises(TypeError):
        GraphBuilder(1)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError):
        copy.copy(GraphBuilder())
    with pytest.raises(RuntimeError):
        copy.deepcopy(GraphBuilder())


def test_create_input_nodes_descs_and_errors() -> None:
    b = GraphBuilder("g")
    x = b.create_input(0, shape=[2, 3], data_type=DataType.DT_FLOAT16, format=Format.FORMAT_NCHW)
    r = b.create_input(1, name="ref", type_str=InputType.REF_DATA)
    assert isinstance(x, TensorHolder) and x.name == "input_0" and r.name == "ref"
    node = x._ir_node
    assert node.op_type == "Data" and node.attrs == {"index": 0} and r._ir_node.op_type == "RefData"
    assert node.outputs[0] == ir.TensorDesc.of(DataType.DT_FLOAT16, (2, 3), Format.FORMAT_NCHW)
    assert node.inputs[0] == node.outputs[0]
    assert b.create_input(2)._ir_node.outputs[0].shape == ()  # None shape is a scalar
    with pytest.raises(RuntimeError, match="Failed to create input"):
        b.create_input(0)
    with pytest.raises(RuntimeError, match="Failed to create input"):
        b.create_input(-1)
    with pytest.raises(TypeError):
        b.create_input("3")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        b.create_input(3, shape=(1, 2))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        b.create_input(3, data_type=0)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        b.create_input(3, type_str="Data")  # type: ignore[arg-type]
    assert [t.name for t in b.create_inputs(2, 5)] == ["input_5", "input_6"]
    for bad in ((0,), ("2",), (2, -1), (2, 1.0)):
        with pytest.raises(TypeError):
            b.create_inputs(*bad)  # type: ignore[arg-type]


def test_inputs_do_not_consume_the_name_counter_but_consts_do() -> None:
    b = GraphBuilder()
    x = b.create_input(0)
    c = b.create_const_int64(3)
    y = b.create_input(1)
    s = x + y
    assert (c.name, s.name) == ("Const_0", "Add_1")


def test_consts() -> None:
    b = GraphBuilder()
    g_names = [
        b.create_const_int64(5), b.create_const_int64([1, 2, 3]), b.create_const_int64([1, 2, 3, 4], [2, 2]),
        b.create_const_int32([7]), b.create_const_uint64(2**63), b.create_const_uint32([1, 2], [2]),
        b.create_const_float(1), b.create_const_float([0.5, 1], [1, 2]), b.create_vector_int64([4, 5]),
        b.create_scalar_int64(-1), b.create_scalar_int32(2), b.create_scalar_float(0.25),
        b.create_scalar_uint64(1), b.create_scalar_uint32(2**32 - 1),
    ]
    assert [t.name for t in g_names] == [f"Const_{k}" for k in range(14)]
    g = b.build_and_reset(g_names)
    expect = [
        (DataType.DT_INT64, (), [5]), (DataType.DT_INT64, (3,), [1, 2, 3]), (DataType.DT_INT64, (2, 2), [1, 2, 3, 4]),
        (DataType.DT_INT32, (1,), [7]), (DataType.DT_UINT64, (), [2**63]), (DataType.DT_UINT32, (2,), [1, 2]),
        (DataType.DT_FLOAT, (), [1.0]), (DataType.DT_FLOAT, (1, 2), [0.5, 1.0]), (DataType.DT_INT64, (2,), [4, 5]),
        (DataType.DT_INT64, (), [-1]), (DataType.DT_INT32, (), [2]), (DataType.DT_FLOAT, (), [0.25]),
        (DataType.DT_UINT64, (), [1]), (DataType.DT_UINT32, (), [2**32 - 1]),
    ]
    assert [const_value(g, f"Const_{k}") for k in range(14)] == expect
    for k, (dtype, shape, _) in enumerate(expect):
        node = g.ir.node_by_name(f"Const_{k}")
        assert node.op_type == "Const" and node.outputs[0] == ir.TensorDesc.of(dtype, shape)


def test_const_errors() -> None:
    b = GraphBuilder()
    with pytest.raises(ValueError, match=r"^Value count \(3\) doesn't match shape \[2, 2\] \(expected 4"):
        b.create_const_int64([1, 2, 3], [2, 2])
    with pytest.raises(TypeError):
        b.create_const_int64([1.5])
    with pytest.raises(TypeError):
        b.create_const_float(["a"])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        b.create_scalar_int64(1.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        b.create_scalar_int32("1")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        b.create_scalar_float("1")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        b.create_scalar_uint64(-1)
    with pytest.raises(ValueError):
        b.create_scalar_uint32(2**32)
    with pytest.raises(TypeError):
        b.create_vector_int64(3)  # type: ignore[arg-type]


def test_build_and_reset_net_output_descs_and_built_state() -> None:
    b = GraphBuilder("demo")
    x = b.create_input(0)
    x.set_shape([4]).set_data_type(DataType.DT_FLOAT16).set_format(Format.FORMAT_NCHW)
    y = es.Relu(x)
    g = b.build_and_reset([y, x])
    assert isinstance(g, Graph) and g.name == "demo" and g._owns
    data = g.ir.node_by_name("input_0")
    assert data.inputs[0] == data.outputs[0] == ir.TensorDesc(DataType.DT_FLOAT16, (4,), Format.FORMAT_NCHW)
    net = g.ir.node_by_name("NetOutput_demo")
    assert net.op_type == "NetOutput" and producers(g, "NetOutput_demo") == [("Relu_0", 0), ("input_0", 0)]
    assert net.inputs[1] == data.outputs[0]
    g.ir.verify()
    for call in (lambda: b.create_input(1), lambda: b.create_const_int64(1), lambda: b.build_and_reset([]),
                 lambda: x.set_data_type(DataType.DT_FLOAT), lambda: es.Relu(x), lambda: x + 1,
                 lambda: b.set_graph_attr_bool("a", True)):
        with pytest.raises(RuntimeError, match="GraphBuilder has already been built"):
            call()


def test_build_errors() -> None:
    b = GraphBuilder()
    x = b.create_input(1)
    with pytest.raises(RuntimeError, match="Failed to build graph"):
        b.build_and_reset([x])  # inputs must start at 0
    b2 = GraphBuilder()
    y = b2.create_input(0)
    with pytest.raises(TypeError, match="list"):
        b2.build_and_reset((y,))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        b2.build_and_reset([y, 3])  # type: ignore[list-item]
    b2.set_graph_output(y, 1)
    with pytest.raises(RuntimeError, match="Failed to build graph"):
        b2.build_and_reset()  # output indices must start at 0
    with pytest.raises(RuntimeError, match="already set"):
        b2.set_graph_output(y, 1)
    with pytest.raises(RuntimeError, match="negative"):
        b2.set_graph_output(y, -1)
    with pytest.raises(TypeError):
        b2.set_graph_output("y", 0)  # type: ignore[arg-type]
    b2.set_graph_output(y, 0)
    g = b2.build_and_reset()
    assert producers(g, "NetOutput_graph") == [("input_0", 0), ("input_0", 0)]


def test_attrs_variables_and_control_dependencies() -> None:
    b = GraphBuilder("g")
    x, z = b.create_inputs(2)
    v = b.create_variable(0, "var")
    r = es.Relu(x)
    b.set_graph_attr_int64("n", 3)
    b.set_graph_attr_string("s", "v")
    b.set_graph_attr_bool("f", True)
    b.set_node_attr_string(r, "note", "hi")
    b.set_tensor_attr_int64(r, "tag", 7)
    b.add_control_dependency(r, [z, v])
    with pytest.raises(TypeError):
        b.set_graph_attr_int64("n", True)
    with pytest.raises(TypeError):
        b.set_graph_attr_bool("f", 1)
    with pytest.raises(TypeError):
        b.set_node_attr_int64(r, 5, 1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="list"):
        b.add_control_dependency(r, (z,))  # type: ignore[arg-type]
    g = b.build_and_reset([r])
    assert g.ir.attrs == {"n": 3, "s": "v", "f": True}
    relu = g.find_node_by_name("Relu_0")
    assert relu.get_attr("note") == "hi" and relu.get_output_attr("tag", 0) == 7
    assert sorted(n.name for n in relu.get_in_control_nodes()) == ["input_1", "var"]
    assert g.find_node_by_name("var").type == "Variable" and g.find_node_by_name("var").get_attr("index") == 0


def test_scopes_apply_to_every_node_nest_and_are_thread_local() -> None:
    b = GraphBuilder()
    x = b.create_input(0)
    with attr_scope({"_stage": "a", "k": 1}):
        with attr_scope({"k": 2}):
            c = b.create_const_int64(1)
        d = es.Relu(x)
        seen: list[bool] = []
        t = threading.Thread(target=lambda: seen.append("k" in es.Relu(GraphBuilder().create_input(0))._ir_node.attrs))
        t.start()
        t.join()
    e = es.Relu(x)
    assert c._ir_node.attrs["k"] == 2 and d._ir_node.attrs == {"_stage": "a", "k": 1}
    assert "k" not in e._ir_node.attrs and seen == [False]
    with control_dependency_scope([x]):
        with control_dependency_scope([c]):
            f = es.Relu(d)
        h = es.Relu(f)
    g = b.build_and_reset([h])
    assert sorted(n.name for n in g.find_node_by_name(f.name).get_in_control_nodes()) == ["Const_0", "input_0"]
    assert [n.name for n in g.find_node_by_name(h.name).get_in_control_nodes()] == ["input_0"]
    with pytest.raises(TypeError):
        with control_dependency_scope(x):  # type: ignore[arg-type]
            pass
    with pytest.raises(ValueError):
        with attr_scope({"bad": []}):
            pass
    with pytest.raises(KeyError):
        with attr_scope({"k": 3}), control_dependency_scope([x]):
            raise KeyError("inside")
    # nodes test a count of open scopes before the thread-local state: it is back to 0 after every exit
    assert graph_builder._OPEN_SCOPES == [0]
    assert "k" not in es.Relu(GraphBuilder().create_input(0))._ir_node.attrs


def test_tensor_holder_basics() -> None:
    with pytest.raises(RuntimeError):
        TensorHolder()
    b = GraphBuilder()
    x = b.create_input(0)
    assert x.get_owner_builder() is b and x._output_index == 0 and x._ir_node.name == "input_0"
    snap = x._get_node_snapshot()
    assert isinstance(snap, Node) and snap.name == "input_0" and snap.type == "Data"
    with pytest.raises(TypeError):
        x.set_data_type(0)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        x.set_format("ND")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        x.set_shape((1,))  # type: ignore[arg-type]
    assert (x == x) and not (x == b.create_input(1))  # == is identity
    for op in (lambda: -x, lambda: x // x, lambda: x % x, lambda: x ** x, lambda: x @ x, lambda: x[0], lambda: len(x),
               lambda: x < x):
        with pytest.raises(TypeError):
            op()


def test_arithmetic_operand_order_and_conversions() -> None:
    b = GraphBuilder("ops")
    x, y = b.create_inputs(2)
    results = [x + y, x - y, x * y, x / y, x + 0, x + 0.0, 0 + x, 2 * x, 1 - x, 1.0 / x,
               x + [[0.1, 0.1], [0.1, 0.1]], x.add(True), x + [1, 2]]
    g = b.build_and_reset(results)
    ir_g = g.ir
    got = []
    for th in results:
        node = ir_g.node_by_name(th.name)
        got.append((node.op_type, producers(g, th.name)))
    assert got == [
        ("Add", [("input_0", 0), ("input_1", 0)]),
        ("Sub", [("input_0", 0), ("input_1", 0)]),
        ("Mul", [("input_0", 0), ("input_1", 0)]),
        ("Div", [("input_0", 0), ("input_1", 0)]),
        ("Add", [("input_0", 0), ("Const_4", 0)]),
        ("Add", [("input_0", 0), ("Const_6", 0)]),
        ("Add", [("input_0", 0), ("Const_8", 0)]),   # 0 + x builds Add(x, 0)
        ("Mul", [("input_0", 0), ("Const_10", 0)]),  # 2 * x builds Mul(x, 2)
        ("Sub", [("Const_12", 0), ("input_0", 0)]),  # 1 - x keeps the order
        ("Div", [("Const_14", 0), ("input_0", 0)]),
        ("Add", [("input_0", 0), ("Const_16", 0)]),
        ("Add", [("input_0", 0), ("Const_18", 0)]),
        ("Add", [("input_0", 0), ("Const_20", 0)]),
    ]
    assert const_value(g, "Const_4") == (DataType.DT_INT64, (), [0])
    assert const_value(g, "Const_6") == (DataType.DT_FLOAT, (), [0.0])
    assert const_value(g, "Const_16")[:2] == (DataType.DT_FLOAT, (2, 2))
    assert const_value(g, "Const_18") == (DataType.DT_INT64, (), [1])
    assert const_value(g, "Const_20") == (DataType.DT_INT64, (2,), [1, 2])


def test_arithmetic_errors() -> None:
    b, other = GraphBuilder("a"), GraphBuilder("b")
    x, y = b.create_input(0), other.create_input(0)
    with pytest.raises(ValueError, match=r"^Cannot perform add: tensors from different GraphBuilders \('a' vs 'b'\)"):
        x + y
    with pytest.raises(TypeError, match="str"):
        x + "1"
    with pytest.raises(TypeError):
        x + (1, 2)
    with pytest.raises(ValueError, match="^Irregular nested list: all sub-lists must have the same shape"):
        x + [[1, 2], [3]]
    with pytest.raises(TypeError, match="empty sub-list"):
        x + [[], []]


def test_convert_to_tensor_holder_and_resolve_builder() -> None:
    b = GraphBuilder()
    x = b.create_input(0)
    assert convert_to_tensor_holder(None, b) is None and convert_to_tensor_holder(x, b) is x
    empty = convert_to_tensor_holder([], b)
    assert empty is not None and empty._ir_node.attrs["value"].shape == (0,)
    assert empty._ir_node.attrs["value"].dtype == DataType.DT_INT64
    nested = convert_to_tensor_holder([[1, 2.5]], b)
    assert nested is not None and nested._ir_node.attrs["value"].dtype == DataType.DT_FLOAT
    with pytest.raises(TypeError):
        convert_to_tensor_holder("s", b)
    with pytest.raises(TypeError):
        convert_to_tensor_holder([1, "a"], b)
    assert resolve_builder(None, 1, [2, x]) is b and resolve_builder(b) is b
    with pytest.raises(ValueError):
        resolve_builder(1, 2.0, None, [])


def test_graph_builder_module_names() -> None:
    from gebench.ge.es import graph_builder, tensor_holder, tensor_like

    assert sorted(graph_builder.__all__) == ["GraphBuilder", "InputType", "attr_scope", "control_dependency_scope"]
    assert (graph_builder.TensorHolder, graph_builder.Graph, graph_builder.DataType, graph_builder.Format) == (
        TensorHolder, Graph, DataType, Format)
    assert tensor_holder.__all__ == ["TensorHolder"]
    assert sorted(tensor_like.__all__) == ["Number", "TensorLike", "convert_to_tensor_holder", "resolve_builder"]
