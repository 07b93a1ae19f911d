"""Every row of GE's exception table (``tests/data/ge-errors.md``, a copy of the spec) that a public name reaches:
gebench raises the same exception type, and its message starts with GE's message filled as GE fills it.

Each row of the table is either a case below (a call that reaches it and the expected message start) or listed in
``UNREACHABLE`` with the reason no public call of gebench's facade can get there (GE's native layer failing, or
a private helper no public name calls). A row in neither place, or a case matching no row, fails the suite.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import gebench  # noqa: F401 - installs the `ge` alias pass code uses
from gebench.ge.es import GraphBuilder, TensorHolder
from gebench.ge.es import all as es
from gebench.ge.graph import DataType, DumpFormat, Format, Graph, Node, Tensor, TensorDesc
from gebench.ge.graph.types import Placement

TABLE = Path(__file__).parent / "data" / "ge-errors.md"


@dataclass(frozen=True)
class Row:
    module: str
    function: str
    exception: str
    template: str


def table_rows() -> list[Row]:
    """The distinct rows of the table (a row listed twice for two raise sites counts once)."""
    rows: list[Row] = []
    module = ""
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"## `(.+)`", line)
        if heading:
            module = heading.group(1)
            continue
        m = re.match(r"\| `(.+?)` \| `(\w+)` \| `(.+)` \|$", line)
        if m:
            row = Row(module, m.group(1), m.group(2), m.group(3).replace("\\|", "|"))
            if row not in rows:
                rows.append(row)
    return rows


ROWS = table_rows()


# ------------------------------------------------------------------------------------------------ helpers
def mm_graph(name: str = "mm") -> Graph:
    b = GraphBuilder(name)
    a, w, c = b.create_inputs(3)
    return b.build_and_reset([es.MatMul(a, w) + c])


def node(name: str = "MatMul_0", graph: Graph | None = None) -> Node:
    return (graph or mm_graph()).find_node_by_name(name)


def holder(name: str = "b") -> TensorHolder:
    return GraphBuilder(name).create_input(0)


def built_builder() -> GraphBuilder:
    b = GraphBuilder("done")
    b.build_and_reset([b.create_input(0)])
    return b


def removed_node() -> Node:
    g = mm_graph()
    n = g.find_node_by_name("Add_1")
    g.remove_node(n)
    return n


def failing_renderer(monkeypatch: pytest.MonkeyPatch) -> None:
    from gebench.ge.graph import graph as graph_module

    def render(_graph: Any) -> str:
        raise ImportError("no writer")

    monkeypatch.setitem(graph_module._RENDERERS, DumpFormat.kTxt, render)


def pattern_pass(body: dict[str, Any], name: str = "P") -> type:
    from ge.passes import PatternFusionPass

    return type(name, (PatternFusionPass,), body)


def decompose_pass(body: dict[str, Any], name: str = "D") -> type:
    from ge.passes import DecomposePass

    return type(name, (DecomposePass,), body)


@dataclass
class Case:
    function: str
    fragment: str  # a part of the row's template that singles it out among the rows of `function`
    call: Callable[..., Any]  # the call that reaches the row (gets pytest's monkeypatch and tmp_path if asked)
    expected: str  # GE's message as GE fills it: gebench's message must start with it


def C(function: str, fragment: str, call: Callable[..., Any], expected: str | None = None) -> Case:
    return Case(function, fragment, call, fragment if expected is None else expected)


g = mm_graph  # short names for the case table
TD = TensorDesc

CASES: list[Case] = [
    # ---------------------------------------------------------------- ge/graph/_attr.py (through Node/Graph attrs)
    C("_AttrValue.get_value", "Unsupported attribute type: ",
      lambda: _node_with_attr([[1, 2], [3]]).get_attr("odd"), "Unsupported attribute type: 10"),
    C("_AttrValue.set_value", "Unsupported attribute type: {type(value)}",
      lambda: node().set_attr("k", {"a": 1}), "Unsupported attribute type: <class 'dict'> for value: {'a': 1}"),
    # ---------------------------------------------------------------- ge/graph/graph.py
    C("Graph.__init__", "Graph name must be a string", lambda: Graph(3)),
    C("Graph.__copy__", "Graph does not support copy", lambda: copy.copy(g())),
    C("Graph.__deepcopy__", "Graph does not support deepcopy", lambda: copy.deepcopy(g())),
    C("Graph.get_attr", "Attribute key must be a string", lambda: g().get_attr(1)),
    C("Graph.get_attr", "Failed to get attribute", lambda: g().get_attr("nope"),
      "Failed to get attribute 'nope' from Graph mm"),
    C("Graph.set_attr", "Attribute key must be a string", lambda: g().set_attr(1, 2)),
    C("Graph.dump_to_file", "Suffix must be a string", lambda: g().dump_to_file(DumpFormat.kReadable, 3)),
    C("Graph.dump_to_file", "Format must be in", lambda: g().dump_to_file("onnx", "x"),
      "Format must be in [DumpFormat.kOnnx, DumpFormat.kTxt, DumpFormat.kReadable]"),
    C("Graph.dump_to_file", "Failed to dump graph: {self.name} to file",
      lambda monkeypatch, tmp_path: (monkeypatch.setenv("ASCEND_WORK_PATH", str(_a_file(tmp_path))),
                                     g().dump_to_file(DumpFormat.kReadable, "s")),
      "Failed to dump graph: mm to file format DumpFormat.kReadable with suffix s"),
    C("Graph.dump_to_stream", "Format must be in", lambda: g().dump_to_stream(2),
      "Format must be in [DumpFormat.kOnnx, DumpFormat.kTxt, DumpFormat.kReadable]"),
    C("Graph.dump_to_stream", "Failed to dump graph: {self.name} to stream",
      lambda monkeypatch: (failing_renderer(monkeypatch), g().dump_to_stream(DumpFormat.kTxt)),
      "Failed to dump graph: mm to stream"),
    C("Graph.save_to_air", "file_path must be a string", lambda: g().save_to_air(None)),
    C("Graph.save_to_air", "Failed to save graph to AIR format",
      lambda tmp_path: g().save_to_air(str(_a_file(tmp_path) / "x.air"))),
    C("Graph.load_from_air", "file_path must be a string", lambda: g().load_from_air(1)),
    C("Graph.load_from_air", "Failed to load graph from AIR format",
      lambda tmp_path: g().load_from_air(str(tmp_path / "missing.air"))),
    C("Graph.remove_node", "node must be a Node", lambda: g().remove_node("MatMul_0")),
    C("Graph.remove_node", "Failed to remove Node", lambda: g().remove_node(node(graph=mm_graph("other"))),
      "Failed to remove Node MatMul_0 from Graph mm"),
    C("Graph.remove_edge", "src_node must be a Node", lambda: g().remove_edge(1, "x", 2, "y")),
    C("Graph.remove_edge", "src_port_index must be an integer", lambda: _on_mm(lambda gr, a, b: gr.remove_edge(a, "0", 1, "y"))),
    C("Graph.remove_edge", "dst_node must be a Node", lambda: _on_mm(lambda gr, a, b: gr.remove_edge(a, 0, 1, "y"))),
    C("Graph.remove_edge", "dst_port_index must be an integer", lambda: _on_mm(lambda gr, a, b: gr.remove_edge(a, 0, b, "y"))),
    C("Graph.remove_edge", "Failed to remove Edge", lambda: _on_mm(lambda gr, a, b: gr.remove_edge(a, 0, b, 1)),
      "Failed to remove Edge from Node MatMul_0, Port Index 0 to Node Add_1, Port Index 1"),
    C("Graph.add_data_edge", "src_node must be a Node", lambda: g().add_data_edge(None, "x", None, "y")),
    C("Graph.add_data_edge", "src_port_index must be an integer", lambda: _on_mm(lambda gr, a, b: gr.add_data_edge(a, 0.0, None, "y"))),
    C("Graph.add_data_edge", "dst_node must be a Node", lambda: _on_mm(lambda gr, a, b: gr.add_data_edge(a, 0, None, "y"))),
    C("Graph.add_data_edge", "dst_port_index must be an integer", lambda: _on_mm(lambda gr, a, b: gr.add_data_edge(a, 0, b, None))),
    C("Graph.add_data_edge", "Failed to add DataEdge", lambda: _on_mm(lambda gr, a, b: gr.add_data_edge(a, 0, b, 0)),
      "Failed to add DataEdge from Node MatMul_0, Port Index 0 to Node Add_1, Port Index 0"),
    C("Graph.add_control_edge", "src_node must be a Node", lambda: g().add_control_edge("a", "b")),
    C("Graph.add_control_edge", "dst_node must be a Node", lambda: _on_mm(lambda gr, a, b: gr.add_control_edge(a, "b"))),
    C("Graph.add_control_edge", "Failed to add Control", lambda: _on_mm(lambda gr, a, b: gr.add_control_edge(b, a)),
      "Failed to add Control from Node Add_1 to Node MatMul_0"),
    C("Graph.find_node_by_name", "name must be a string", lambda: g().find_node_by_name(1)),
    C("Graph.find_node_by_name", "Failed to find Node name", lambda: g().find_node_by_name("nope"),
      "Failed to find Node name nope"),
    C("Graph.get_subgraph", "name must be a string", lambda: g().get_subgraph(1)),
    C("Graph.add_subgraph", "subgraph must be a Graph", lambda: g().add_subgraph("s")),
    C("Graph.add_subgraph", "Failed to add subgraph", lambda: _add_twice(),
      "Failed to add subgraph 'sub' to graph 'mm'"),
    C("Graph.remove_subgraph", "name must be a string", lambda: g().remove_subgraph(1)),
    C("Graph.remove_subgraph", "Failed to remove subgraph", lambda: g().remove_subgraph("nope"),
      "Failed to remove subgraph 'nope' from graph 'mm'"),
    # ---------------------------------------------------------------- ge/graph/node.py
    C("Node.__init__", "Node objects should not be created directly.", lambda: Node()),
    C("Node.__copy__", "Node does not support copy", lambda: copy.copy(node())),
    C("Node.__deepcopy__", "Node does not support deepcopy", lambda: copy.deepcopy(node())),
    C("Node.get_in_data_nodes_and_port_indexes", "Input index must be an integer",
      lambda: node().get_in_data_nodes_and_port_indexes("0")),
    C("Node.get_in_data_nodes_and_port_indexes", "Failed to get input data node",
      lambda: node().get_in_data_nodes_and_port_indexes(7), "Failed to get input data node for index 7"),
    C("Node.get_out_data_nodes_and_port_indexes", "Output index must be an integer",
      lambda: node().get_out_data_nodes_and_port_indexes(None)),
    C("Node.get_out_data_nodes_and_port_indexes", "Failed to get output data node",
      lambda: node().get_out_data_nodes_and_port_indexes(3), "Failed to get output data node for index 3"),
    C("Node.get_attr", "Attribute key must be a string", lambda: node().get_attr(0)),
    C("Node.get_attr", "Failed to get attribute", lambda: node().get_attr("nope"),
      "Failed to get attribute 'nope' from Node"),
    C("Node.set_attr", "Attribute key must be a string", lambda: node().set_attr(0, 1)),
    C("Node.set_attr", "Failed to set attribute", lambda: removed_node().set_attr("k", 1),
      "Failed to set attribute 'k' on Node Add_1"),
    C("Node.get_input_attr", "Attribute name must be a string", lambda: node().get_input_attr(1, "x")),
    C("Node.get_input_attr", "Input index must be an integer", lambda: node().get_input_attr("a", "x")),
    C("Node.get_input_attr", "Failed to get Node", lambda: node().get_input_attr("a", 0),
      "Failed to get Node MatMul_0 input attribute 'a' for index 0"),
    C("Node.set_input_attr", "Attribute name must be a string", lambda: node().set_input_attr(1, "x", 1)),
    C("Node.set_input_attr", "Input index must be an integer", lambda: node().set_input_attr("a", "x", 1)),
    C("Node.set_input_attr", "Failed to set Node", lambda: node().set_input_attr("a", 9, 1),
      "Failed to set Node MatMul_0 input attribute 'a' for index 9"),
    C("Node.get_output_attr", "Attribute name must be a string", lambda: node().get_output_attr(1, "x")),
    C("Node.get_output_attr", "Output index must be an integer", lambda: node().get_output_attr("a", "x")),
    C("Node.get_output_attr", "Failed to get Node", lambda: node().get_output_attr("a", 0),
      "Failed to get Node MatMul_0 output attribute 'a' for index 0"),
    C("Node.set_output_attr", "Attribute name must be a string", lambda: node().set_output_attr(1, "x", 1)),
    C("Node.set_output_attr", "Output index must be an integer", lambda: node().set_output_attr("a", "x", 1)),
    C("Node.set_output_attr", "Failed to set Node", lambda: node().set_output_attr("a", 4, 1),
      "Failed to set Node MatMul_0 output attribute 'a' for index 4"),
    C("Node.has_attr", "attr_name must be a string", lambda: node().has_attr(None)),
    C("Node.get_input_desc", "Input index must be an integer", lambda: node().get_input_desc("0")),
    C("Node.get_input_desc", "Failed to get input desc", lambda: node().get_input_desc(5),
      "Failed to get input desc for index 5"),
    C("Node.update_input_desc", "Input index must be an integer", lambda: node().update_input_desc("0", None)),
    C("Node.update_input_desc", "tensor_desc must be a TensorDesc", lambda: node().update_input_desc(0, None)),
    C("Node.update_input_desc", "Failed to update input desc", lambda: node().update_input_desc(5, TD()),
      "Failed to update input desc for index 5"),
    C("Node.get_output_desc", "Output index must be an integer", lambda: node().get_output_desc(1.0)),
    C("Node.get_output_desc", "Failed to get output desc", lambda: node().get_output_desc(2),
      "Failed to get output desc for index 2"),
    C("Node.update_output_desc", "Output index must be an integer", lambda: node().update_output_desc(None, TD())),
    C("Node.update_output_desc", "tensor_desc must be a TensorDesc", lambda: node().update_output_desc(0, [])),
    C("Node.update_output_desc", "Failed to update output desc", lambda: node().update_output_desc(2, TD()),
      "Failed to update output desc for index 2"),
    # ---------------------------------------------------------------- ge/graph/operator.py
    C("Operator.__init__", "Operator objects should not be created directly.", lambda: _operator_class()("a", "B")),
    C("Operator.__copy__", "Operator does not support copy", lambda: copy.copy(_operator())),
    C("Operator.__deepcopy__", "Operator does not support deepcopy", lambda: copy.deepcopy(_operator())),
    C("Operator._validate_name", "Operator {kind} name must be", lambda: _operator().register_input(""),
      "Operator input name must be a non-empty string"),
    C("Operator._register_dynamic_port", "must be an integer", lambda: _operator().register_dynamic_input("x", "2"),
      "Operator dynamic port count must be an integer"),
    C("Operator._register_dynamic_port", "uint32 range", lambda: _operator().register_dynamic_output("y", -1),
      "Operator dynamic port count must be in uint32 range"),
    # ---------------------------------------------------------------- ge/graph/tensor.py
    C("Tensor.__init__", "Shape must be a list of integers", lambda: Tensor([1.0], shape=(1,))),
    C("Tensor.__init__", "Placement must be a Placement", lambda: Tensor([1.0], placement=0)),
    C("Tensor.__init__", "Tensor should be created either by data or by file",
      lambda: Tensor([1.0], file_path="x.bin")),
    C("Tensor._prepare_ctypes_array", "DT_DOUBLE", lambda: Tensor([1.0], data_type=DataType.DT_DOUBLE),
      "DT_DOUBLE is not supported in python Tensor constructor"),
    C("Tensor._create_from_data", "data should be List", lambda: Tensor((1.0, 2.0))),
    C("Tensor.__copy__", "Tensor does not support copy", lambda: copy.copy(Tensor([1.0]))),
    C("Tensor.__deepcopy__", "Tensor does not support deepcopy", lambda: copy.deepcopy(Tensor([1.0]))),
    C("Tensor.set_format", "Format must be a Format", lambda: Tensor([1.0]).set_format(2)),
    C("Tensor.set_data_type", "Data_type must be a DataType", lambda: Tensor([1.0]).set_data_type(0)),
    C("Tensor.set_data_type", "Failed to set datatype", lambda: Tensor([1.0]).set_data_type(DataType.DT_QINT8),
      f"Failed to set datatype {DataType.DT_QINT8}"),
    C("Tensor.to_host", "to_host() only supports device tensors", lambda: Tensor([1.0]).to_host()),
    C("Tensor.to_device", "to_device() only supports host tensors",
      lambda: Tensor([1.0], placement=Placement.PLACEMENT_DEVICE).to_device()),
    C("unflatten_tensor_data", "Scalar tensor should contain exactly one element",
      lambda: _unflatten([1, 2], []), "Scalar tensor should contain exactly one element, got 2"),
    # ---------------------------------------------------------------- ge/graph/tensor_desc.py
    C("_normalize_dims", "must be a list of integers", lambda: TD(shape="1,2"), "shape must be a list of integers"),
    C("TensorDesc.__init__", "Format must be a Format", lambda: TD([1], format="ND")),
    C("TensorDesc.__init__", "Data type must be a DataType", lambda: TD([1], data_type="float")),
    C("TensorDesc.__copy__", "TensorDesc does not support copy", lambda: copy.copy(TD())),
    C("TensorDesc.__deepcopy__", "TensorDesc does not support deepcopy", lambda: copy.deepcopy(TD())),
    C("TensorDesc.set_format", "Format must be a Format", lambda: TD().set_format(1)),
    C("TensorDesc.set_origin_format", "Format must be a Format", lambda: TD().set_origin_format(None)),
    C("TensorDesc.set_data_type", "Data type must be a DataType", lambda: TD().set_data_type(3)),
    # ---------------------------------------------------------------- ge/es/_plugin_loader.py
    # ---------------------------------------------------------------- ge/es/graph_builder.py
    C("GraphBuilder.__init__", "Graph name must be a string", lambda: GraphBuilder(5)),
    C("GraphBuilder._check_usable", "Cannot {operation}", lambda: built_builder().create_input(1),
      "Cannot create_input: GraphBuilder has already been built. Create a new GraphBuilder to build another graph."),
    C("GraphBuilder.__copy__", "GraphBuilder does not support copy", lambda: copy.copy(GraphBuilder())),
    C("GraphBuilder.__deepcopy__", "GraphBuilder does not support deepcopy", lambda: copy.deepcopy(GraphBuilder())),
    C("GraphBuilder._validate_const_shape", "Value count", lambda: GraphBuilder().create_const_int64([1, 2, 3], [2, 2]),
      "Value count (3) doesn't match shape [2, 2] (expected 4 elements)"),
    C("GraphBuilder.create_input", "Input index must be an integer", lambda: GraphBuilder().create_input("0")),
    C("GraphBuilder.create_input", "Shape must be a list of integers",
      lambda: GraphBuilder().create_input(0, shape=[1.5])),
    C("GraphBuilder.create_input", "Failed to create input", lambda: GraphBuilder().create_input(-1)),
    C("GraphBuilder.create_inputs", "Number of inputs must be a positive integer", lambda: GraphBuilder().create_inputs(0)),
    C("GraphBuilder.create_inputs", "Start index must be a non-negative integer",
      lambda: GraphBuilder().create_inputs(1, -1)),
    C("GraphBuilder.create_const_int64", "Value must be an integer or list of integers",
      lambda: GraphBuilder().create_const_int64([1, "2"])),
    C("GraphBuilder.create_const_float", "Value must be a float or list of floats",
      lambda: GraphBuilder().create_const_float("1.0")),
    C("GraphBuilder.create_const_uint64", "Value must be an integer or list of integers",
      lambda: GraphBuilder().create_const_uint64(1.0)),
    C("GraphBuilder.create_const_int32", "Value must be an integer or list of integers",
      lambda: GraphBuilder().create_const_int32([1.0])),
    C("GraphBuilder.create_const_uint32", "Value must be an integer or list of integers",
      lambda: GraphBuilder().create_const_uint32(None)),
    C("GraphBuilder.create_vector_int64", "Value must be a list of integers",
      lambda: GraphBuilder().create_vector_int64((1, 2))),
    C("GraphBuilder.create_scalar_int64", "Value must be an integer", lambda: GraphBuilder().create_scalar_int64(1.0)),
    C("GraphBuilder.create_scalar_int32", "Value must be an integer", lambda: GraphBuilder().create_scalar_int32("1")),
    C("GraphBuilder.create_scalar_float", "Value must be a number", lambda: GraphBuilder().create_scalar_float("1")),
    C("GraphBuilder.create_scalar_uint64", "Value must be an integer", lambda: GraphBuilder().create_scalar_uint64(None)),
    C("GraphBuilder.create_scalar_uint64", "Value must be non-negative for uint64",
      lambda: GraphBuilder().create_scalar_uint64(-1)),
    C("GraphBuilder.create_scalar_uint32", "Value must be an integer", lambda: GraphBuilder().create_scalar_uint32(2.0)),
    C("GraphBuilder.create_scalar_uint32", "Value must be in range [0, 2^32-1] for uint32",
      lambda: GraphBuilder().create_scalar_uint32(2**32)),
    C("GraphBuilder.create_variable", "Index must be an integer", lambda: GraphBuilder().create_variable("0", "v")),
    C("GraphBuilder.create_variable", "Name must be a string", lambda: GraphBuilder().create_variable(0, None)),
    C("GraphBuilder.create_variable", "Failed to create variable", lambda: _variable_twice()),
    C("GraphBuilder.set_graph_output", "Tensor must be a TensorHolder", lambda: GraphBuilder().set_graph_output(1, 0)),
    C("GraphBuilder.set_graph_output", "Output index must be an integer",
      lambda: _own_builder(lambda b, t: b.set_graph_output(t, "0"))),
    C("GraphBuilder.set_graph_output", "Failed to set graph output",
      lambda: _own_builder(lambda b, t: b.set_graph_output(t, -1)),
      "Failed to set graph output for graph b output index -1"),
    *[case for kind, good, bad in (("int64", 1, "1"), ("string", "s", 1), ("bool", True, 1))
      for case in (
          C(f"GraphBuilder.set_graph_attr_{kind}", "Attribute name must be a string",
            lambda kind=kind, good=good: getattr(GraphBuilder(), f"set_graph_attr_{kind}")(1, good)),
          C(f"GraphBuilder.set_graph_attr_{kind}", "Value must be",
            lambda kind=kind, bad=bad: getattr(GraphBuilder(), f"set_graph_attr_{kind}")("a", bad),
            {"int64": "Value must be an integer", "string": "Value must be a string",
             "bool": "Value must be a boolean"}[kind]),
          *[c for where in ("tensor", "node") for c in (
              C(f"GraphBuilder.set_{where}_attr_{kind}", "Tensor must be a TensorHolder",
                lambda where=where, kind=kind, good=good:
                getattr(GraphBuilder(), f"set_{where}_attr_{kind}")(None, "a", good)),
              C(f"GraphBuilder.set_{where}_attr_{kind}", "Attribute name must be a string",
                lambda where=where, kind=kind, good=good:
                _own_builder(lambda b, t: getattr(b, f"set_{where}_attr_{kind}")(t, 1, good))),
              C(f"GraphBuilder.set_{where}_attr_{kind}", "Value must be",
                lambda where=where, kind=kind, bad=bad:
                _own_builder(lambda b, t: getattr(b, f"set_{where}_attr_{kind}")(t, "a", bad)),
                {"int64": "Value must be an integer", "string": "Value must be a string",
                 "bool": "Value must be a boolean"}[kind]),
          )],
      )],
    C("GraphBuilder.add_control_dependency", "dst_tensor must be a TensorHolder",
      lambda: GraphBuilder().add_control_dependency(None, [])),
    C("GraphBuilder.add_control_dependency", "src_tensors must be a list'",
      lambda: _own_builder(lambda b, t: b.add_control_dependency(t, (t,))), "src_tensors must be a list"),
    C("GraphBuilder.add_control_dependency", "src_tensors must be a list of TensorHolder",
      lambda: _own_builder(lambda b, t: b.add_control_dependency(t, [1]))),
    C("GraphBuilder.add_control_dependency", "Failed to add control dependency",
      lambda: _own_builder(lambda b, t: b.add_control_dependency(t, [t])),
      "Failed to add control dependency for nodes in graph b"),
    C("GraphBuilder.build_and_reset", "Outputs must be a list", lambda: _own_builder(lambda b, t: b.build_and_reset((t,)))),
    C("GraphBuilder.build_and_reset", "All outputs must be TensorHolder objects",
      lambda: _own_builder(lambda b, t: b.build_and_reset([t, 1]))),
    C("GraphBuilder.build_and_reset", "Failed to build graph", lambda: _gap_builder().build_and_reset()),
    # ---------------------------------------------------------------- ge/es/tensor_holder.py
    C("TensorHolder.__init__", "TensorHolder objects should not be created directly", lambda: TensorHolder()),
    C("TensorHolder._validate_operation", "Cannot perform", lambda: holder("one").add(holder("two")),
      "Cannot perform add: tensors from different GraphBuilders ('one' vs 'two')"),
    C("TensorHolder.set_data_type", "Data type must be a DataType enum", lambda: holder().set_data_type(1)),
    C("TensorHolder.set_format", "Format must be a Format enum", lambda: holder().set_format("ND")),
    C("TensorHolder.set_shape", "Shape must be a list of integers", lambda: holder().set_shape((1, 2))),
    C("TensorHolder.set_shape", "All shape dimensions must be integers", lambda: holder().set_shape([1, "2"])),
    C("TensorHolder.set_data_type", "Failed to set data type",
      lambda: _after_build(lambda t: t.set_data_type(DataType.DT_INT32))),
    C("TensorHolder.set_format", "Failed to set format", lambda: _after_build(lambda t: t.set_format(Format.FORMAT_NCHW))),
    C("TensorHolder.set_shape", "Failed to set shape", lambda: _after_build(lambda t: t.set_shape([2]))),
    # ---------------------------------------------------------------- ge/es/tensor_like.py
    C("convert_to_tensor_holder", "Value must be TensorHolder or int|float",
      lambda: holder() + "x", "Value must be TensorHolder or int|float or nested lists of int|float or None"),
    C("resolve_builder", "At least one argument is required", lambda: _resolve(),
      "At least one argument is required to resolve GraphBuilder"),
    C("resolve_builder", "Please ensure at least one input tensor", lambda: _resolve(1, None),
      "Please ensure at least one input tensor or an explicit owner_builder is provided when supported"),
    C("_flatten_and_infer_shape._recurse", "Value must be int|float or nested lists",
      lambda: holder() + [[1, "a"]], "Value must be int|float or nested lists of int|float"),
    C("_flatten_and_infer_shape._recurse", "Irregular nested list", lambda: holder() + [[1, 2], [3]],
      "Irregular nested list: all sub-lists must have the same shape"),
    # ---------------------------------------------------------------- ge/passes
    C("__getattr__", "module {__name__!r}", lambda: _getattr("ge.passes", "NoSuchName"),
      "module 'ge.passes' has no attribute 'NoSuchName'"),
    C("_get_holder", "python pass holder is not created", lambda: _bridge().get_pass_patterns("nope"),
      "python pass holder is not created: nope"),
    C("create_pass_holder", "descriptor_key not found", lambda: _bridge().create_pass_holder("i1", "no-key"),
      "python pass descriptor_key not found: no-key"),
    C("run_fusion_base_pass", "context type error", lambda: _run_with_context(object())),
    C("_release_replacement_graph", "replacement must return ge.graph.Graph", lambda: _bad_replacement(),
      "BadReplacement.replacement must return ge.graph.Graph"),
    C("get_pass_patterns", "must return an iterable of Pattern or Graph", lambda: _bad_patterns(5),
      "PatternFusionPass.patterns must return an iterable of Pattern or Graph"),
    C("get_pattern_matcher_config", "matcher_config must be", lambda: _bad_matcher_config(),
      "PatternFusionPass.matcher_config must be PatternMatcherConfig or None"),
    C("infer_shape", "replacement must be a ge.graph.Graph", lambda: _infer_shape(None, node())),
    C("infer_shape", "source must be MatchResult, Node, or SubgraphBoundary", lambda: _infer_shape(g(), 3)),
    C("infer_shape", "replacement graph is empty", lambda: _infer_shape(Graph("empty"), node())),
    C("FusionBasePass.run", "FusionBasePass.run must be implemented", lambda: _plain_fusion_pass().run(g(), None)),
    C("PatternFusionPass.__init_subclass__", "overrides run()", lambda: pattern_pass({"run": lambda self, g, c: 0}, "Runner"),
      "Runner overrides run(), which is never invoked by the PatternFusionPass execution path. "
      "Implement patterns()/replacement() instead."),
    C("PatternFusionPass.__init_subclass__", "cannot combine @pattern", lambda: _pattern_and_patterns(),
      "Both cannot combine @pattern methods with patterns(). Use one style for declaring patterns."),
    C("PatternFusionPass.patterns", "PatternFusionPass.patterns must be implemented", lambda: pattern_pass({})().patterns()),
    C("PatternFusionPass.replacement", "PatternFusionPass.replacement must be implemented",
      lambda: pattern_pass({})().replacement(None)),
    C("DecomposePass.__init_subclass__", "overrides run()", lambda: decompose_pass({"run": lambda self, g, c: 0}, "DRunner"),
      "DRunner overrides run(), which is never invoked by the DecomposePass execution path. "
      "Implement meet_requirements()/replacement() instead."),
    C("DecomposePass.replacement", "DecomposePass.replacement must be implemented",
      lambda: decompose_pass({})().replacement(None)),
    C("PatternInputs.__getitem__", "index must be an integer or slice", lambda: _inputs()["0"],
      "PatternInputs index must be an integer or slice"),
    C("PatternInputs.__getitem__", "index must be non-negative", lambda: _inputs()[-1],
      "PatternInputs index must be non-negative"),
    C("PatternInputs.__iter__", "cannot be iterated", lambda: list(_inputs()),
      "PatternInputs cannot be iterated because the input count is unknown; use inputs[:N]"),
    C("PatternInputs._get_slice", "slice step must be 1", lambda: _inputs()[0:2:2],
      "PatternInputs slice step must be 1"),
    C("PatternInputs._get_slice", "must provide a stop index", lambda: _inputs()[1:],
      "PatternInputs slice must provide a stop index, for example inputs[:3]"),
    C("PatternInputs._get_slice", "slice indices must be non-negative", lambda: _inputs()[-2:1],
      "PatternInputs slice indices must be non-negative"),
    C("PatternInputs._get_slice", "stop must be greater than or equal to start", lambda: _inputs()[3:1],
      "PatternInputs slice stop must be greater than or equal to start"),
    C("ensure_pattern", "must return Pattern or Graph objects", lambda: _bad_patterns([5]),
      "PatternFusionPass.patterns must return Pattern or Graph objects"),
    C("_adapt_expression_replacement", "four arguments", lambda: _four_argument_replacement(),
      "Expression-style replacement with four arguments must use replacement(self, inputs, match_result, context)"),
    C("_build_patterns_from_expression_result", "single pattern only", lambda: _two_pattern_outputs(),
      "A @pattern method supports a single pattern only. For multiple patterns, declare several @pattern methods "
      "or use legacy patterns(self)."),
    C("_normalize_tensor_outputs", "must return a TensorHolder or a non-empty", lambda: _empty_pattern_output(),
      "Expression-style pattern must return a TensorHolder or a non-empty list/tuple of TensorHolder"),
    C("_PassRegistry.register", "descriptor_key already exists", lambda: _register_twice(same_class=True),
      "python pass descriptor_key already exists: "),
    C("_PassRegistry.register", "python pass name already exists", lambda: _register_twice(same_class=False),
      "python pass name already exists: TwicePass"),
    C("_normalize_decompose_op_types", "op_types must be an iterable of strings", lambda: _decompose_types(5),
      "register_decompose_pass op_types must be an iterable of strings"),
    C("_normalize_decompose_op_types", "requires at least one op type", lambda: _decompose_types([]),
      "register_decompose_pass requires at least one op type"),
    C("_normalize_decompose_op_types", "must contain non-empty strings", lambda: _decompose_types(["Add", ""]),
      "register_decompose_pass op_types must contain non-empty strings"),
    C("register_fusion_pass.decorator", "expects a FusionBasePass subclass", lambda: _register_fusion(int),
      "register_fusion_pass expects a FusionBasePass subclass"),
    C("register_decompose_pass.decorator", "expects a DecomposePass subclass", lambda: _register_decompose(int),
      "register_decompose_pass expects a DecomposePass subclass"),
    C("create_replacement", "replacement graph must be a ge.graph.Graph", lambda: _create_replacement("g")),
]


# ------------------------------------------------------------------------------------------------ call helpers
def _node_with_attr(value: Any) -> Node:
    gr = mm_graph()
    ir_node = gr.ir.find("MatMul_0")
    ir_node.attrs["odd"] = value  # a list of lists: an attr kind GE's Python API cannot read
    return gr.find_node_by_name("MatMul_0")


def _a_file(tmp_path: Path) -> Path:
    path = tmp_path / "a_file"
    path.write_text("not a folder")
    return path


def _on_mm(body: Callable[[Graph, Node, Node], Any]) -> Any:
    gr = mm_graph()
    return body(gr, gr.find_node_by_name("MatMul_0"), gr.find_node_by_name("Add_1"))


def _add_twice() -> None:
    gr = mm_graph()
    gr.add_subgraph(mm_graph("sub"))
    gr.add_subgraph(mm_graph("sub"))


def _operator_class() -> type:
    from gebench.ge.graph.operator import Operator

    return Operator


def _operator() -> Any:
    from gebench.ge.graph.operator import create_operator

    return create_operator("conv", "Conv2D")


def _unflatten(values: list[Any], shape: list[int]) -> Any:
    from gebench.ge.graph.tensor import unflatten_tensor_data

    return unflatten_tensor_data(values, shape)


def _variable_twice() -> None:
    b = GraphBuilder()
    b.create_variable(0, "v")
    b.create_variable(1, "v")


def _own_builder(body: Callable[[GraphBuilder, TensorHolder], Any]) -> Any:
    b = GraphBuilder("b")
    return body(b, b.create_input(0))


def _gap_builder() -> GraphBuilder:
    b = GraphBuilder("gaps")
    b.create_input(1)  # no input 0
    return b


def _after_build(body: Callable[[TensorHolder], Any]) -> Any:
    b = GraphBuilder("b")
    t = b.create_input(0)
    b.build_and_reset([t])
    return body(t)


def _resolve(*values: Any) -> Any:
    from gebench.ge.es.tensor_like import resolve_builder

    return resolve_builder(*values)


def _getattr(module: str, name: str) -> Any:
    import importlib

    return getattr(importlib.import_module(module), name)


def _bridge() -> Any:
    from gebench.ge.passes import _bridge as bridge

    return bridge


def _holder_of(cls: type) -> str:
    from gebench.ge.passes.registry import PassDescriptor

    bridge = _bridge()
    instance_id = f"table-{cls.__name__}"
    bridge.destroy_pass_holder(instance_id)
    desc = PassDescriptor(pass_name=cls.__name__, stage=None, kind="", descriptor_key=instance_id, cls=cls,
                          class_name=cls.__name__, module_name=__name__, op_types=[])
    bridge.create_pass_holder(instance_id, instance_id, desc)
    return instance_id


def _plain_fusion_pass() -> Any:
    from ge.passes import FusionBasePass

    return type("Plain", (FusionBasePass,), {})()


def _run_with_context(context: Any) -> Any:
    return _bridge().run_fusion_base_pass(_holder_of(type(_plain_fusion_pass())), mm_graph(), context)


def _bad_replacement() -> Any:
    cls = decompose_pass({"replacement": lambda self, n: 5}, "BadReplacement")
    return _bridge().call_decompose_replacement(_holder_of(cls), node(), None)


def _bad_patterns(result: Any) -> Any:
    cls = pattern_pass({"patterns": lambda self: result}, "BadPatterns")
    return _bridge().get_pass_patterns(_holder_of(cls))


def _bad_matcher_config() -> Any:
    cls = pattern_pass({"matcher_config": 5}, "BadConfig")
    return _bridge().get_pattern_matcher_config(_holder_of(cls))


def _pattern_holder_used_as_decompose() -> Any:
    cls = pattern_pass({}, "NotDecompose")
    return _bridge().call_decompose_replacement(_holder_of(cls), node(), None)


def _fusion_holder_used_as_pattern() -> Any:
    return _bridge().get_pass_patterns(_holder_of(type(_plain_fusion_pass())))


def _infer_shape(replacement: Any, source: Any) -> None:
    from ge.passes import infer_shape

    infer_shape(replacement, source)


def _pattern_and_patterns() -> type:
    from ge.passes import pattern

    def relu(self: Any, inputs: Any) -> Any:
        return es.Relu(inputs[0])

    return pattern_pass({"relu": pattern(relu), "patterns": lambda self: []}, "Both")


def _inputs() -> Any:
    from gebench.ge.passes.pattern import PatternInputs

    return PatternInputs(GraphBuilder("inputs"))


def _four_argument_replacement() -> type:
    def replacement(self: Any, inputs: Any, first: Any, second: Any) -> Any:
        return inputs[0]

    return pattern_pass({"replacement": replacement}, "Four")


def _two_pattern_outputs() -> Any:
    from ge.passes import pattern

    def two(self: Any, inputs: Any) -> Any:
        return [mm_graph("a"), mm_graph("b")]

    return pattern_pass({"two": pattern(two)}, "TwoPatterns")().patterns()


def _empty_pattern_output() -> Any:
    from ge.passes import pattern

    def nothing(self: Any, inputs: Any) -> Any:
        return []

    return pattern_pass({"nothing": pattern(nothing)}, "Nothing")().patterns()


def _fresh_registry() -> Any:
    from gebench.ge.passes.registry import PassRegistry, registering_into

    return registering_into(PassRegistry())


def _register_twice(*, same_class: bool) -> None:
    from ge.passes import FusionBasePass, PassStage, register_fusion_pass

    with _fresh_registry():
        cls = type("TwicePass", (FusionBasePass,), {})
        register_fusion_pass(name="TwicePass", stage=PassStage.BEFORE_INFER_SHAPE)(cls)
        other = cls if same_class else type("TwicePass", (FusionBasePass,), {"__module__": "elsewhere"})
        register_fusion_pass(name="TwicePass", stage=PassStage.BEFORE_INFER_SHAPE)(other)


def _decompose_types(op_types: Any) -> None:
    from ge.passes import PassStage, register_decompose_pass

    with _fresh_registry():
        register_decompose_pass(name="Types", stage=PassStage.BEFORE_INFER_SHAPE, op_types=op_types)


def _register_fusion(cls: Any) -> None:
    from ge.passes import PassStage, register_fusion_pass

    with _fresh_registry():
        register_fusion_pass(name="NotAPass", stage=PassStage.BEFORE_INFER_SHAPE)(cls)


def _register_decompose(cls: Any) -> None:
    from ge.passes import PassStage, register_decompose_pass

    with _fresh_registry():
        register_decompose_pass(name="NotAPass", stage=PassStage.BEFORE_INFER_SHAPE, op_types=["Add"])(cls)


def _create_replacement(value: Any) -> Any:
    from ge.passes import create_replacement

    return create_replacement(value)


CASES += [
    C("_get_pattern_fusion_pass", "is not PatternFusionPass", _fusion_holder_used_as_pattern,
      "python pass holder is not PatternFusionPass: table-Plain"),
    C("_get_decompose_pass", "is not DecomposePass", _pattern_holder_used_as_decompose,
      "python pass holder is not DecomposePass: table-NotDecompose"),
    C("ge/passes/pattern.py::__getattr__", "module {__name__!r}", lambda: _getattr("ge.passes.pattern", "Nope"),
      "module 'ge.passes.pattern' has no attribute 'Nope'"),
    C("TensorDesc._normalize_dims:set_shape", "", lambda: TD().set_shape([1, None]), "shape must be a list of integers"),
    C("TensorDesc._normalize_dims:set_origin_shape", "", lambda: TD().set_origin_shape("x"),
      "origin_shape must be a list of integers"),
    C("_normalize_tensor_outputs:replacement", "", lambda: _expression_replacement_returning([]),
      "Expression-style replacement must return a TensorHolder or a non-empty list/tuple of TensorHolder"),
]


def _expression_replacement_returning(result: Any) -> Any:
    def replacement(self: Any, inputs: Any) -> Any:
        return result

    return pattern_pass({"replacement": replacement}, "Returns")().replacement(None)


#: Rows no call of a public name can reach in gebench, with the reason.
_NATIVE = "GE's native layer failing; gebench's facade has no native layer that can fail there"
UNREACHABLE: dict[tuple[str, str], str] = {
    ("_validate_list_input", "Values must be a list"): "set_value only hands lists to the list setters",
    ("_validate_list_input", "Empty list is not supported"):
        "set_value only hands non-empty lists of one item type to the list setters",
    ("_validate_list_input", "All values must be"): "set_value only hands lists of the setter's type",
    ("_create_list_getter.getter", "Failed to get list value"): _NATIVE,
    ("_AttrValue.__copy__", "AttrValue does not support copy"): "no public name hands out an _AttrValue",
    ("_AttrValue.__deepcopy__", "AttrValue does not support deepcopy"): "no public name hands out an _AttrValue",
    **{("_AttrValue.set_" + k, f"Value must be {v}"): "set_value picks the setter by the value's type"
       for k, v in (("string", "a string"), ("float", "a number"), ("bool", "a boolean"), ("int", "an integer"),
                    ("data_type", "a DataType"), ("tensor", "a Tensor"))},
    **{("_AttrValue.get_" + k, "Failed to get"): _NATIVE
       for k in ("string", "float", "bool", "int", "data_type", "tensor", "list_string")},
    ("Graph.__init__", "Failed to create Graph"): _NATIVE,
    ("Graph._create_from", "Graph pointer cannot be None"): "private constructor from a native handle",
    ("Graph.name", "Failed to get Graph name"): _NATIVE,
    ("Graph.set_attr", "Failed to set attribute"): _NATIVE + " (a value of no storable kind fails earlier)",
    ("Node._create_from", "Node handle cannot be None"): "private constructor from a native handle",
    ("Node.name", "Failed to get Node name"): _NATIVE,
    ("Node.type", "Failed to get Node type"): _NATIVE,
    ("Operator.__init__", "Operator handle cannot be None"): "private constructor from a native handle",
    ("Operator.__init__", "Operator handle cannot be null"): "private constructor from a native handle",
    ("Operator.set_attr", "Failed to set attribute"): _NATIVE,
    ("Operator._register_port", "Failed to {method_name}"): _NATIVE,
    ("Operator._register_dynamic_port", "Failed to register dynamic"): _NATIVE,
    ("Operator._get_string", "Failed to get Operator name or type"): _NATIVE,
    ("Operator._ensure_valid", "only valid inside parse_node"):
        "gebench's importers call no parser plugins, so its operators are not tied to a parse_node call",
    ("Tensor.__init__", "Failed to create Tensor"): _NATIVE,
    ("Tensor._create_from", "Tensor pointer cannot be None"): "private constructor from a native handle",
    ("Tensor.set_format", "Failed to set format"): _NATIVE,
    ("Tensor.get_data", "Failed to get Tensor data"): _NATIVE,
    ("Tensor.get_tensor_desc", "Failed to get tensor desc"): _NATIVE,
    ("Tensor.get_shape", "Failed to get shape of tensor"): _NATIVE,
    ("Tensor.to_host", "Failed to move tensor from device to host"): _NATIVE + " (no device)",
    ("Tensor.to_device", "Failed to move tensor from host to device"): _NATIVE + " (no device)",
    ("_parse_str_list", "Input must start with"): "gebench reads tensor data directly, not from C++'s text",
    ("_parse_str_list", "Invalid item"): "gebench reads tensor data directly, not from C++'s text",
    ("TensorDesc.__init__", "Failed to create TensorDesc"): _NATIVE,
    ("TensorDesc._create_from", "TensorDesc pointer cannot be None"): "private constructor from a native handle",
    ("TensorDesc.set_format", "Failed to set format"): _NATIVE,
    ("TensorDesc.set_origin_format", "Failed to set origin format"): _NATIVE,
    ("TensorDesc.set_data_type", "Failed to set data type"): _NATIVE,
    ("TensorDesc._get_shape", "Failed to get"): _NATIVE,
    ("TensorDesc._set_dims", "Failed to set"): _NATIVE,
    ("GraphBuilder.__init__", "Failed to create graph builder"): _NATIVE,
    **{(f"GraphBuilder.{m}", "Failed to create"): _NATIVE for m in (
        "create_const_int64", "create_const_float", "create_const_uint64", "create_const_int32",
        "create_const_uint32", "create_vector_int64", "create_scalar_int64", "create_scalar_int32",
        "create_scalar_float", "create_scalar_uint64", "create_scalar_uint32")},
    **{(f"GraphBuilder.set_{w}_attr_{k}", "Failed to set"): _NATIVE
       for w in ("graph", "tensor", "node") for k in ("int64", "string", "bool")},
    ("TensorHolder._create_from", "Tensor handle cannot be None"): "private constructor from a native handle",
    ("TensorHolder._create_from", "Owner builder cannot be None"): "private constructor from a native handle",
    ("TensorHolder._get_math_operator_lib", "Math operators"):
        "gebench's Add/Sub/Mul/Div come from its op catalogue, not from a library that may be missing",
    **{(f"TensorHolder.{op}", f"Failed to create {op} operation"): _NATIVE for op in ("add", "sub", "mul", "div")},
    ("TensorHolder._get_node_snapshot", "Failed to get producer node"): _NATIVE,
    ("_unflatten", "Shape cannot be empty"): "the shape is inferred from the nested list itself",
    ("_unflatten", "Length of list"): "the shape is inferred from the nested list itself",
    ("_coerce_to_module", "returned unexpected type"):
        "gebench's ES plugins (math, nn, all, custom) are its own modules; it loads no third-party plugin objects",
    ("_convert_scalar_to_tensor_holder", "Value must be a number"):
        "convert_to_tensor_holder hands it numbers only",
    **{("runtime", msg): "gebench builds no native pass module (GE's fallback code generation)" for msg in (
        "pybind11", "libpython", "CANN include", "fallback source dir", "No fallback sources", "Missing fallback {key}",
        "Missing fallback link args", "Missing fallback target configs", "Invalid fallback target config",
        "Missing fallback target output", "Missing fallback target {key}", "current Python build info",
        "Fallback codegen unavailable", "Fallback codegen completed")},
}


# ------------------------------------------------------------------------------------------------ matching
def _split(function: str) -> tuple[str | None, str, str | None]:
    """'module::function:variant' -> (module or None, function, variant or None)."""
    module, _, rest = function.rpartition("::")
    name, _, variant = rest.partition(":")
    return module or None, name, variant or None


def rows_of(function: str, fragment: str) -> list[Row]:
    module, name, _ = _split(function)
    if name.startswith("TensorDesc._normalize_dims"):
        name = "_normalize_dims"
    return [r for r in ROWS if r.function == name and fragment in r.template and (module is None or r.module == module)]


def _unreachable_rows(key: tuple[str, str]) -> list[Row]:
    function, fragment = key
    if function == "runtime":
        return [r for r in ROWS if r.module == "ge/passes/runtime.py" and fragment in r.template]
    return [r for r in ROWS if r.function == function and fragment in r.template]


def _case_id(case: Case) -> str:
    return f"{case.function}:{case.expected[:40]}"


def test_every_row_is_a_case_or_unreachable_with_a_reason():
    covered: dict[Row, str] = {}
    for case in CASES:
        found = rows_of(case.function, case.fragment)
        if case.function.endswith("__getattr__") and "::" not in case.function:
            found = [r for r in found if r.module == "ge/passes/__init__.py"]
        assert len(found) == 1, (case.function, case.fragment, found)
        covered.setdefault(found[0], _case_id(case))
    for key in UNREACHABLE:
        found = _unreachable_rows(key)
        assert found, key
        for row in found:
            assert row not in covered, (row, covered[row])
            covered[row] = "unreachable"
    missing = [r for r in ROWS if r not in covered]
    assert not missing, "rows with no case and no reason: " + "\n".join(f"{r.function}: {r.template}" for r in missing)


def _row_of(case: Case) -> Row:
    found = rows_of(case.function, case.fragment)
    if case.function.endswith("__getattr__") and "::" not in case.function:
        found = [r for r in found if r.module == "ge/passes/__init__.py"]
    return found[0]


def _message(exc: BaseException) -> str:
    return str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_gebench_raises_ges_exception_with_ges_message(case, monkeypatch, tmp_path):
    import inspect

    row = _row_of(case)
    exc_type = {"TypeError": TypeError, "ValueError": ValueError, "RuntimeError": RuntimeError,
                "KeyError": KeyError, "AttributeError": AttributeError,
                "NotImplementedError": NotImplementedError}[row.exception]
    params = inspect.signature(case.call).parameters
    kwargs = {k: v for k, v in (("monkeypatch", monkeypatch), ("tmp_path", tmp_path)) if k in params}
    with pytest.raises(BaseException) as raised:
        case.call(**kwargs)
    assert type(raised.value) is exc_type, (
        f"{row.function}: GE raises {row.exception}, gebench raised {type(raised.value).__name__}: {raised.value}")
    assert _message(raised.value).startswith(case.expected), (
        f"{row.function}: GE's message starts {case.expected!r}; gebench said {_message(raised.value)!r}")


#: Calls with every argument wrong: GE checks them in order, so the first check's message is the one raised.
ORDER = [
    (lambda: g().remove_edge(1, "x", 2, "y"), TypeError, "src_node must be a Node"),
    (lambda: _on_mm(lambda gr, a, b: gr.add_data_edge(a, "0", None, None)), TypeError,
     "src_port_index must be an integer"),
    (lambda: _on_mm(lambda gr, a, b: gr.add_data_edge(a, 0, None, None)), TypeError, "dst_node must be a Node"),
    (lambda: g().add_control_edge(None, None), TypeError, "src_node must be a Node"),
    (lambda: g().dump_to_file("kOnnx", 3), TypeError, "Suffix must be a string"),
    (lambda: node().get_input_attr(1, "x"), TypeError, "Attribute name must be a string"),
    (lambda: node().set_output_attr(None, None, object()), TypeError, "Attribute name must be a string"),
    (lambda: node().update_input_desc("0", None), TypeError, "Input index must be an integer"),
    (lambda: removed_node().set_attr("k", object()), ValueError, "Unsupported attribute type: <class 'object'>"),
    (lambda: node().set_input_attr("a", 9, object()), ValueError, "Unsupported attribute type: <class 'object'>"),
    (lambda: node().update_output_desc(9, None), TypeError, "tensor_desc must be a TensorDesc"),
    (lambda: Tensor([1.0], file_path="f", shape="1", placement=0), TypeError, "Shape must be a list of integers"),
    (lambda: Tensor([1.0], file_path="f", placement=0), TypeError, "Placement must be a Placement"),
    (lambda: Tensor((1.0,), file_path="f"), RuntimeError, "Tensor should be created either by data or by file"),
    (lambda: TD(shape="1", format=1, data_type=2), TypeError, "shape must be a list of integers"),
    (lambda: TD(format=1, data_type=2), TypeError, "Format must be a Format"),
    (lambda: GraphBuilder().create_input("0", shape=[1.5]), TypeError, "Input index must be an integer"),
    (lambda: GraphBuilder().create_input(-1, shape=[1.5]), TypeError, "Shape must be a list of integers"),
    (lambda: GraphBuilder().create_inputs(0, -1), TypeError, "Number of inputs must be a positive integer"),
    (lambda: GraphBuilder().create_variable("0", None), TypeError, "Index must be an integer"),
    (lambda: GraphBuilder().set_graph_output(1, "0"), TypeError, "Tensor must be a TensorHolder"),
    (lambda: GraphBuilder().set_node_attr_bool(None, 1, 1), TypeError, "Tensor must be a TensorHolder"),
    (lambda: _own_builder(lambda b, t: b.set_tensor_attr_string(t, 1, 1)), TypeError,
     "Attribute name must be a string"),
    (lambda: GraphBuilder().set_graph_attr_int64(1, "x"), TypeError, "Attribute name must be a string"),
    (lambda: GraphBuilder().add_control_dependency(None, 5), TypeError, "dst_tensor must be a TensorHolder"),
    (lambda: _own_builder(lambda b, t: b.add_control_dependency(t, (1,))), TypeError, "src_tensors must be a list"),
    (lambda: built_builder().create_input("0"), RuntimeError, "Cannot create_input: GraphBuilder has already been built"),
    (lambda: holder().set_shape((1, "x")), TypeError, "Shape must be a list of integers"),
    (lambda: _inputs()[-1:None:2], ValueError, "PatternInputs slice step must be 1"),
    (lambda: _inputs()[-1:None], ValueError, "PatternInputs slice must provide a stop index"),
    (lambda: _infer_shape(None, 3), TypeError, "replacement must be a ge.graph.Graph"),
    (lambda: _decompose_types([]), ValueError, "register_decompose_pass requires at least one op type"),
]


@pytest.mark.parametrize("call,exc_type,expected", ORDER, ids=[e for _, _, e in ORDER])
def test_arguments_are_checked_in_ges_order(call, exc_type, expected):
    with pytest.raises(BaseException) as raised:
        call()
    assert type(raised.value) is exc_type and str(raised.value).startswith(expected), raised.value
