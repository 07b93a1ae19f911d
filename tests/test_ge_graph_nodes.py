"""ge.graph.Graph and ge.graph.Node against spec §2.3.1, §2.3.2 (errors, quirks and the mutation methods)."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

from gebench import ir
from gebench.ge.es import GraphBuilder
from gebench.ge.es import all as es
from gebench.ge.graph import DataType, DumpFormat, Format, Graph, Node, Tensor, TensorDesc
from gebench.ge.graph.operator import Operator, create_operator


def matmul_graph() -> Graph:
    b = GraphBuilder("mm")
    a, w, c = b.create_inputs(3)
    out = es.MatMul(a, w) + c
    return b.build_and_reset([out])


def test_graph_construction_and_copy_rules() -> None:
    assert Graph().name == "graph" and Graph("x").name == "x"
    with pytest.raises(TypeError, match="str"):
        Graph(3)  # type: ignore[arg-type]
    g = matmul_graph()
    with pytest.raises(RuntimeError):
        copy.copy(g)
    with pytest.raises(RuntimeError):
        copy.deepcopy(g)
    assert g._handle and g._owns
    view = Graph._wrap(g.ir)
    assert view._ir is g._ir and not view._owns
    view._invalidate()
    assert view._handle is None
    with pytest.raises(RuntimeError, match="no longer valid"):
        view.get_direct_nodes()


def test_node_is_not_constructible_or_copyable_and_has_no_eq() -> None:
    with pytest.raises(RuntimeError):
        Node()
    g = matmul_graph()
    a, b = g.find_node_by_name("MatMul_0"), g.find_node_by_name("MatMul_0")
    assert a is not b and a != b and a.name == b.name  # compare nodes by name
    with pytest.raises(RuntimeError):
        copy.copy(a)
    with pytest.raises(RuntimeError):
        copy.deepcopy(a)


def test_direct_nodes_names_types_and_sizes() -> None:
    g = matmul_graph()
    nodes = g.get_direct_nodes()
    assert [(n.name, n.type) for n in nodes] == [
        ("input_0", "Data"), ("input_1", "Data"), ("input_2", "Data"), ("MatMul_0", "MatMul"), ("Add_1", "Add"),
        ("NetOutput_mm", "NetOutput")]
    mm = g.find_node_by_name("MatMul_0")
    assert mm.get_inputs_size() == 2  # the unfed optional bias is not a valid input desc
    assert mm.get_outputs_size() == 1 and g.find_node_by_name("NetOutput_mm").get_outputs_size() == 0


def test_in_and_out_data_nodes_and_port_indexes() -> None:
    g = matmul_graph()
    mm, add = g.find_node_by_name("MatMul_0"), g.find_node_by_name("Add_1")
    src, port = add.get_in_data_nodes_and_port_indexes(0)
    assert isinstance(src, Node) and (src.name, port) == ("MatMul_0", 0)
    assert [(n.name, p) for n, p in mm.get_out_data_nodes_and_port_indexes(0)] == [("Add_1", 0)]
    with pytest.raises(RuntimeError, match="not connected"):
        mm.get_in_data_nodes_and_port_indexes(2)
    with pytest.raises(RuntimeError, match="no input 7"):
        mm.get_in_data_nodes_and_port_indexes(7)
    with pytest.raises(TypeError):
        mm.get_in_data_nodes_and_port_indexes("0")  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="no output 1"):
        mm.get_out_data_nodes_and_port_indexes(1)
    with pytest.raises(TypeError):
        mm.get_out_data_nodes_and_port_indexes(None)  # type: ignore[arg-type]


def test_node_attrs_and_port_attrs() -> None:
    g = matmul_graph()
    mm = g.find_node_by_name("MatMul_0")
    assert mm.get_attr("transpose_x1") is False and mm.has_attr("transpose_x2") and not mm.has_attr("nope")
    with pytest.raises(RuntimeError, match="no attr 'nope'"):
        mm.get_attr("nope")
    with pytest.raises(TypeError):
        mm.has_attr(1)  # type: ignore[arg-type]
    mm.set_attr("alpha", 0.1)
    assert mm.get_attr("alpha") == 0.10000000149011612
    mm.set_attr("types", [DataType.DT_FLOAT, DataType.DT_INT8])
    assert mm.get_attr("types") == [0, 2] and type(mm.get_attr("types")[0]) is int
    with pytest.raises(ValueError):
        mm.set_attr("empty", [])
    mm.set_input_attr("q", 0, 5)
    mm.set_output_attr("r", 0, "s")
    assert mm.get_input_attr("q", 0) == 5 and mm.get_output_attr("r", 0) == "s"
    with pytest.raises(RuntimeError):
        mm.get_input_attr("q", 1)
    with pytest.raises(RuntimeError):
        mm.get_output_attr("r", 3)
    mm._ir_node.attrs["ll"] = [[1, 2], [3]]
    with pytest.raises(RuntimeError, match="Unsupported attribute type"):
        mm.get_attr("ll")


def test_const_value_reads_back_as_tensor() -> None:
    b = GraphBuilder()
    x = b.create_input(0)
    y = x + [[0.1, 0.1], [0.1, 0.1]]
    g = b.build_and_reset([y])
    const = g.find_node_by_name("Const_0")
    value = const.get_attr("value")
    assert isinstance(value, Tensor) and value.data_type == DataType.DT_FLOAT and value.data == [[0.1, 0.1]] * 2
    value.set_format(Format.FORMAT_NCHW)  # a copy: the graph is unchanged
    assert const._ir_node.attrs["value"].format == Format.FORMAT_ND


def test_descs_are_value_copies_and_update_writes_back() -> None:
    g = matmul_graph()
    mm = g.find_node_by_name("MatMul_0")
    desc = mm.get_input_desc(0)
    desc.set_data_type(DataType.DT_FLOAT16)
    assert mm.get_input_desc(0).get_data_type() == DataType.DT_FLOAT
    mm.update_input_desc(0, desc)
    assert mm.get_input_desc(0).get_data_type() == DataType.DT_FLOAT16
    out = TensorDesc([2, 2], Format.FORMAT_NCHW, DataType.DT_FLOAT)
    mm.update_output_desc(0, out)
    out.set_shape([9])
    assert mm.get_output_desc(0).get_shape() == [2, 2]
    with pytest.raises(TypeError, match="TensorDesc"):
        mm.update_input_desc(0, "desc")  # type: ignore[arg-type]
    with pytest.raises(RuntimeError):
        mm.get_input_desc(5)
    with pytest.raises(RuntimeError):
        mm.update_output_desc(1, out)


def test_edge_mutation_methods() -> None:
    g = matmul_graph()
    mm, add = g.find_node_by_name("MatMul_0"), g.find_node_by_name("Add_1")
    c = g.find_node_by_name("input_2")
    g.remove_edge(mm, 0, add, 0)
    with pytest.raises(RuntimeError):
        add.get_in_data_nodes_and_port_indexes(0)
    with pytest.raises(RuntimeError, match="no data edge"):
        g.remove_edge(mm, 0, add, 0)
    g.add_data_edge(c, 0, add, 0)
    assert add.get_in_data_nodes_and_port_indexes(0)[0].name == "input_2"
    with pytest.raises(RuntimeError, match="already fed"):
        g.add_data_edge(mm, 0, add, 0)
    with pytest.raises(TypeError):
        g.add_data_edge(mm, "0", add, 0)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        g.add_data_edge("MatMul_0", 0, add, 0)  # type: ignore[arg-type]
    g.add_control_edge(mm, add)
    assert [n.name for n in add.get_in_control_nodes()] == ["MatMul_0"]
    assert [n.name for n in mm.get_out_control_nodes()] == ["Add_1"]
    with pytest.raises(RuntimeError, match="cycle"):
        g.add_control_edge(add, mm)
    g.remove_edge(mm, -1, add, -1)
    assert add.get_in_control_nodes() == []
    with pytest.raises(RuntimeError):
        g.remove_edge(mm, -1, add, -1)
    g.remove_node(mm)
    assert "MatMul_0" not in [n.name for n in g.get_direct_nodes()]
    with pytest.raises(RuntimeError):
        g.remove_node(mm)
    with pytest.raises(RuntimeError, match="^Failed to find Node name MatMul_0"):
        g.find_node_by_name("MatMul_0")
    other = matmul_graph()
    with pytest.raises(RuntimeError, match="^Failed to remove Node Add_1 from Graph mm: node .Add_1. is not a node of graph"):
        g.remove_node(other.find_node_by_name("Add_1"))
    g.ir.verify()


def test_graph_attrs() -> None:
    g = Graph("a")
    g.set_attr("flag", True)
    g.set_attr("scale", 0.1)
    assert g.get_attr("flag") is True and g.get_attr("scale") == 0.10000000149011612
    with pytest.raises(RuntimeError):
        g.get_attr("missing")
    with pytest.raises(TypeError):
        g.set_attr(1, 2)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        g.set_attr("bad", None)


def _branch(name: str, op: str) -> Graph:
    b = GraphBuilder(name)
    x = b.create_input(0)
    return b.build_and_reset([getattr(es, op)(x)])


def test_subgraphs_and_get_all_nodes() -> None:
    b = GraphBuilder("main")
    cond, x = b.create_inputs(2)
    then_g, else_g = _branch("then", "Relu"), _branch("else", "Tanh")
    outs = es.If(cond, [x], 1, then_g, else_g)
    assert isinstance(outs, list) and len(outs) == 1
    with pytest.raises(RuntimeError, match="only once"):
        es.If(cond, [x], 1, then_g, _branch("other", "Relu"))
    g = b.build_and_reset(outs)
    direct = [n.name for n in g.get_direct_nodes()]
    everything = [n.name for n in g.get_all_nodes()]
    assert "Relu_0" not in direct and {"Relu_0", "Tanh_0", "NetOutput_then"} <= set(everything)
    assert everything.index("If_0") < everything.index("Relu_0") < everything.index("Tanh_0")
    assert g.find_node_by_name("Tanh_0").type == "Tanh"
    assert [s.name for s in g.get_all_subgraphs()] == ["else", "then"]
    assert g.get_subgraph("then").name == "then" and g.get_subgraph("nope") is None
    assert g.find_node_by_name("If_0")._ir_node.subgraph_names == ["then", "else"]
    extra = Graph("extra")
    g.add_subgraph(extra)
    with pytest.raises(RuntimeError, match="already has a subgraph"):
        g.add_subgraph(Graph("extra"))
    g.remove_subgraph("extra")
    with pytest.raises(RuntimeError):
        g.remove_subgraph("extra")
    with pytest.raises(TypeError):
        g.add_subgraph("extra")  # type: ignore[arg-type]


def test_dumps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    g = matmul_graph()
    text = g.dump_to_stream()
    assert text == str(g) == ir.to_text(g.ir) and "MatMul_0" in text
    with pytest.raises(TypeError):
        g.dump_to_stream("readable")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        g.dump_to_file(DumpFormat.kReadable, 3)  # type: ignore[arg-type]
    monkeypatch.delenv("NPU_COLLECT_PATH", raising=False)
    monkeypatch.setenv("DUMP_GRAPH_PATH", str(tmp_path))
    g.dump_to_file(DumpFormat.kReadable, "after:pass")
    files = list(tmp_path.rglob("ge_readable_*_graph_0_after_pass.txt"))
    assert len(files) == 1 and files[0].read_text() == text
    with pytest.raises(TypeError):
        g.save_to_air(3)  # type: ignore[arg-type]


def test_tensor_attr_through_node_set_attr() -> None:
    g = matmul_graph()
    mm = g.find_node_by_name("MatMul_0")
    mm.set_attr("w", Tensor([1, 2], data_type=DataType.DT_INT32))
    stored = mm._ir_node.attrs["w"]
    assert isinstance(stored, ir.TensorValue) and stored.array.tolist() == [1, 2]
    assert stored.array.dtype == np.int32


def test_operator_records_declarations() -> None:
    op = create_operator("conv", "Conv2D")
    assert isinstance(op, Operator) and (op.name, op.type) == ("conv", "Conv2D")
    op.set_attr("groups", 2).register_input("x").register_optional_input("bias").register_dynamic_input("y", 2)
    op.register_output("z").register_dynamic_output("w", 2)
    assert op.attrs == {"groups": 2} and [n for n, _ in op.inputs] == ["x", "bias", "y0", "y1"]
    assert op.outputs == ["z", "w0", "w1"]
    with pytest.raises(TypeError):
        op.register_dynamic_input("y", "2")  # type: ignore[arg-type]


def test_ge_proto_onnx_dumps_and_air_round_trip(tmp_path: Path) -> None:
    g = matmul_graph()
    txt = g.dump_to_stream(DumpFormat.kTxt)
    assert 'name: "MatMul_0"' in txt and 'type: "MatMul"' in txt
    assert "MatMul_0" in g.dump_to_stream(DumpFormat.kOnnx)
    path = str(tmp_path / "m.air")
    g.save_to_air(path)
    loaded = Graph("other")
    loaded.load_from_air(path)
    assert [(n.name, n.type) for n in loaded.get_direct_nodes()] == [(n.name, n.type) for n in g.get_direct_nodes()]
    assert loaded.find_node_by_name("Add_1").get_in_data_nodes_and_port_indexes(0)[0].name == "MatMul_0"
    with pytest.raises(RuntimeError, match="^Failed to load graph from AIR format"):
        Graph().load_from_air(str(tmp_path / "missing.air"))


def test_nested_subgraphs_move_to_the_root_on_build() -> None:
    inner = GraphBuilder("outer_then")
    c, x = inner.create_inputs(2)
    then_g = inner.build_and_reset(es.If(c, [x], 1, _branch("deep_then", "Relu"), _branch("deep_else", "Tanh")))
    assert sorted(then_g.ir.subgraphs) == ["deep_else", "deep_then"]
    outer = GraphBuilder("root")
    c0, x0 = outer.create_inputs(2)
    g = outer.build_and_reset(es.If(c0, [x0], 1, then_g, _branch("outer_else", "Relu")))
    assert sorted(g.ir.subgraphs) == ["deep_else", "deep_then", "outer_else", "outer_then"]
    assert g.get_subgraph("outer_then")._ir.subgraphs == {}
    names = [n.name for n in g.get_all_nodes()]
    assert names.count("If_0") == 2 and names.count("Relu_0") == 2 and "Tanh_0" in names
    g.ir.verify()
