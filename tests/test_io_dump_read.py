"""Loading ge_proto dumps: IR -> ge_proto -> IR fixed points, older file generations, and clear errors."""

import numpy as np
import pytest

from dump_graphs import matmul_add
from gebench.io import GeDumpError, load_ge_dump, write_dumps
from gebench.io.ge_dump import OpaqueAttr, dump_text, list_dumps, parse_ge_dump_text
from gebench.ir import DataType, Format, Graph, TensorDesc, TensorValue, to_text


def round_trip(g: Graph, level: int = 1) -> Graph:
    back = parse_ge_dump_text(dump_text(g, "ge_proto", level))
    back.verify()
    return back


def rich_graph() -> Graph:
    """Every attr kind, odd names, formats, origin fields, multi-use outputs, control edges, dynamic inputs."""
    g = Graph("odd graph")
    g.attrs["_session_graph_id"] = "0_1"
    desc = TensorDesc(dtype=DataType.DT_FLOAT16, shape=(1, 3, -1, 4), format=Format.FORMAT_NC1HWC0,
                      origin_format=Format.FORMAT_NCHW, origin_shape=(1, 3, -1, 4), origin_dtype=DataType.DT_FLOAT,
                      attrs={"_mark": 3})
    big = TensorValue(DataType.DT_FLOAT, np.linspace(-1, 1, 50, dtype=np.float32).reshape(5, 10))
    attrs = {
        "b": True, "bytes": b"\x00\x01", "d": TensorDesc.of(DataType.DT_INT8, [3]), "dt": DataType.DT_BF16,
        "empty": [], "f": 1e-5, "f2": float("inf"), "f3": 0.1, "h": TensorValue.from_list([0.1, 65504.0],
                                                                                            DataType.DT_FLOAT16),
        "i": -3, "lb": [True, False], "ldt": [DataType.DT_INT32], "lf": [0.5, 2.0], "lli": [[1], [2, 3]],
        "llf": [[0.25], [1.5, 2.5]], "ls": ["a", "b c"], "ltd": [TensorDesc.of(DataType.DT_INT64, [1, 2])],
        "lt": [TensorValue.from_list([1, 2], DataType.DT_INT32)], "s": 'quote " and \\ and ü',
        "scalar": TensorValue.from_list(7, DataType.DT_INT64), "t": big,
    }
    src = g.add_node("Weird/Op:1", name="n:1", outputs=[desc, TensorDesc.of(DataType.DT_INT32, [2])],
                     attrs=dict(sorted(attrs.items())), output_names=["y", ""])
    d1 = TensorDesc.of(DataType.DT_FLOAT16, [1, 3, -1, 4])
    relus = [g.add_node("Relu", name=f"relu{i}", inputs=[d1], outputs=[d1], input_names=["x"],
                        output_names=["y"]) for i in range(3)]
    # use order of n:1:0 differs from the consumers' positions
    for i in (2, 0, 1):
        g.add_edge(src, 0, relus[i], 0)
    cat = g.add_node("ConcatV2", name="cat", inputs=[d1, d1, d1, TensorDesc.of(DataType.DT_INT32, [])],
                     outputs=[d1], input_names=["x0", "x1", "x2", "concat_dim"], output_names=["y"],
                     attrs={"N": 3})
    for i, r in enumerate(relus):
        g.add_edge(r, 0, cat, i)
    g.add_control_edge(relus[1], relus[2])
    g.add_control_edge(relus[0], cat)
    g.attrs["outputs"] = ["cat:0", "n:1:1"]
    return g


def test_matmul_add_is_a_fixed_point():
    g = matmul_add()
    back = round_trip(g)
    assert to_text(back) == to_text(g)
    assert back.node_by_name("w").attrs["value"] == g.node_by_name("w").attrs["value"]
    assert [n.id for n in back.nodes()] == [n.id for n in g.nodes()]


def test_every_attr_kind_and_desc_field_survives():
    g = rich_graph()
    back = round_trip(g)
    assert to_text(back) == to_text(g)
    n = back.node_by_name("n:1")
    assert n.attrs["f3"] == 0.1 and n.attrs["dt"] is DataType.DT_BF16 and n.attrs["lli"] == [[1], [2, 3]]
    assert n.outputs[0] == g.node_by_name("n:1").outputs[0]
    assert back.attrs["outputs"] == ["cat:0", "n:1:1"]


def test_use_order_and_dump_text_are_fixed_points():
    g = rich_graph()
    back = round_trip(g)
    src = back.node_by_name("n:1")
    assert [c.name for c, _ in back.uses(src, 0)] == ["relu2", "relu0", "relu1"]
    text = dump_text(g, "ge_proto", 1)
    assert dump_text(back, "ge_proto", 1) == text


def test_attr_order_is_normalised_once_then_fixed():
    g = Graph("g")
    g.add_node("Relu", name="r", attrs={"z": 1, "a": 2}, inputs=[TensorDesc.of(DataType.DT_FLOAT, [1])],
               outputs=[TensorDesc.of(DataType.DT_FLOAT, [1])])
    once = round_trip(g)
    assert once.node_by_name("r").attrs == {"z": 1, "a": 2}  # same content
    assert list(once.node_by_name("r").attrs) == ["a", "z"]  # schema order first, then sorted
    assert to_text(round_trip(once)) == to_text(once)


def test_subgraphs_come_back_attached_to_their_parents():
    g = Graph("root")
    d = TensorDesc.of(DataType.DT_FLOAT, [1])
    cond = g.add_node("Data", name="cond", attrs={"index": 0}, inputs=[d], outputs=[d])
    node = g.add_node("If", name="if0", inputs=[d, d], outputs=[d], input_names=["cond", "input0"],
                      output_names=["output0"])
    g.add_edge(cond, 0, node, 0)
    g.add_edge(cond, 0, node, 1)
    for branch in ("then", "else"):
        sub = Graph(f"if0_{branch}")
        sd = sub.add_node("Data", name=f"{branch}/arg", attrs={"index": 0, "_parent_node_index": 1},
                          inputs=[d], outputs=[d])
        inner = sub.add_node("PartitionedCall", name=f"{branch}/call", inputs=[d], outputs=[d])
        sub.add_edge(sd, 0, inner, 0)
        so = sub.add_node("NetOutput", name=f"if0_{branch}_Node_Output", inputs=[d])
        sub.add_edge(inner, 0, so, 0)
        g.add_subgraph(sub, parent_node=node)
        nested = Graph(f"{branch}_nested")
        nested.add_node("Data", name="nd", attrs={"index": 0}, inputs=[d], outputs=[d])
        g.add_subgraph(nested, parent_node=inner)
    back = round_trip(g)
    assert to_text(back) == to_text(g)
    assert set(back.subgraphs) == {"if0_then", "if0_else", "then_nested", "else_nested"}
    assert back.subgraphs["then_nested"].parent_node_name == "then/call"
    assert back.node_by_name("if0").subgraph_names == ["if0_then", "if0_else"]
    assert list(back.subgraphs) == list(g.subgraphs)  # file order, not discovery order
    assert dump_text(back, "ge_proto", 1) == dump_text(g, "ge_proto", 1)


@pytest.mark.parametrize("level", [2, 3])
def test_lower_levels_drop_weights_only(level):
    g = matmul_add()
    back = round_trip(g, level)
    assert "value" not in back.node_by_name("w").attrs
    for n in g.nodes():
        n.attrs.pop("value", None)
    assert to_text(back) == to_text(g)
    assert "GraphOptions" not in back.attrs


def test_graph_without_netoutput_keeps_its_outputs():
    g = matmul_add()
    g.remove_node(g.node_by_name("Node_Output"))
    g.attrs["outputs"] = ["add:0"]
    assert round_trip(g).attrs["outputs"] == ["add:0"]


def test_onnx_import_round_trips():
    from onnx import TensorProto, helper, numpy_helper

    from gebench.io import load_onnx

    w = numpy_helper.from_array(np.arange(4, dtype=np.float32).reshape(2, 2), "w")
    b = numpy_helper.from_array(np.ones(2, dtype=np.float32), "b")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["mm"], name="mm"), helper.make_node("Add", ["mm", "b"], ["y"],
                                                                                     name="add")],
        "mm_add", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])], initializer=[w, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    g = load_onnx(model)
    once = round_trip(g)
    assert to_text(round_trip(once)) == to_text(once)
    assert sorted(n.op_type for n in once.nodes()) == sorted(n.op_type for n in g.nodes())
    for node in g.nodes():
        other = once.node_by_name(node.name)
        assert other.attrs == node.attrs and other.inputs == node.inputs and other.outputs == node.outputs
        assert [(p[0].name, p[1]) if p else None for p in once.producers(other)] == \
               [(p[0].name, p[1]) if p else None for p in g.producers(node)]


# ------------------------------------------------------------------------------------------------ files
def test_written_dump_loads_from_disk_and_legacy_names_load(tmp_path):
    g = matmul_add()
    (proto, _onnx) = write_dumps({"PreRunBegin": g}, tmp_path, level=1)
    assert to_text(load_ge_dump(proto)) == to_text(g)
    legacy = tmp_path / "ge_proto_00017_OptimizeOriginalGraph_FeGraphFusionAfter.txt"
    legacy.write_text(proto.read_text())
    assert to_text(load_ge_dump(legacy)) == to_text(g)
    anything = tmp_path / "graph.dump"  # the content decides, not the name
    anything.write_text(proto.read_text())
    assert to_text(load_ge_dump(anything)) == to_text(g)
    kinds = [(n.kind, n.index) for n, _ in list_dumps(tmp_path)]
    assert kinds == [("ge_proto", 0), ("ge_proto", 17), ("onnx", 0)]


OLD_STYLE = '''\
graph {
  name: "ge_default_20200101"
  input: "data:0"
  output: "relu:0"
  op {
    name: "data"
    type: "Data"
    input: ""
    attr { key: "_input_name_idx_key" value { list { s: "x" val_type: VT_LIST_STRING } } }
    attr { key: "_input_name_idx_value" value { list { i: 0 val_type: VT_LIST_INT } } }
    attr { key: "index" value { i: 0 } }
    input_desc { dtype: DT_FLOAT shape { dim: 1 dim: 8 } layout: "NCHW" }
    output_desc { dtype: DT_FLOAT shape { dim: 1 dim: 8 } layout: "NCHW" }
  }
  op {
    name: "scope/relu.1"
    type: "Relu"
    input: "data:0"
    attr { key: "T" value { dt: 0 } }
    id: 1
    input_desc { dtype: DT_FLOAT shape { dim: 1 dim: 8 } layout: "NCHW" }
    output_desc { dtype: DT_FLOAT shape { dim: 1 dim: 8 } layout: "NCHW" device_type: "NPU" }
  }
  op {
    name: "relu"
    type: "Relu"
    input: "scope/relu.1:0"
    input: "data:-1"
    id: 2
    input_desc { dtype: DT_FLOAT shape { dim: 1 dim: 8 } layout: "NCHW" }
    output_desc { dtype: DT_FLOAT shape { dim: 1 dim: 8 } layout: "NCHW" }
  }
  attr { key: "GraphOptions" value { func { name: "GraphOptions" attr { key: "ge.x" value { s: "1" } } } } }
}
attr { key: "memory_size" value { i: 0 } }
'''


def test_older_dump_without_peer_indexes_or_origin_attrs_loads(tmp_path):
    path = tmp_path / "ge_proto_00026_afterUBMatch.txt"
    path.write_text(OLD_STYLE)
    g = load_ge_dump(path)
    g.verify()
    data = g.node_by_name("data")
    assert data.input_names == ["x"] and data.id == 0 and data.outputs[0].format == Format.FORMAT_NCHW
    assert data.outputs[0].origin_format == Format.FORMAT_NCHW and data.outputs[0].origin_shape == (1, 8)
    relu1 = g.node_by_name("scope/relu.1")
    assert relu1.attrs == {"T": DataType.DT_FLOAT} and g.producer(relu1, 0)[0] is data
    assert [n.name for n in g.control_predecessors(g.node_by_name("relu"))] == ["data"]
    assert "GraphOptions" not in g.attrs and "outputs" in g.attrs


def test_ir_free_attrs_are_kept_opaque_and_written_back():
    text = OLD_STYLE.replace('attr { key: "T" value { dt: 0 } }',
                             'attr { key: "aipp" value { func { name: "cfg" attr { key: "k" value { i: 1 } } } } }')
    g = parse_ge_dump_text(text)
    aipp = g.node_by_name("scope/relu.1").attrs["aipp"]
    assert isinstance(aipp, OpaqueAttr) and aipp.kind == "func" and aipp.to_proto().func.attr["k"].i == 1
    assert "aipp=b64" in to_text(g)  # printable by the IR text form as bytes
    again = parse_ge_dump_text(dump_text(g, "ge_proto", 1))
    assert again.node_by_name("scope/relu.1").attrs["aipp"] == aipp
    assert 'func {\n          name: "cfg"' in dump_text(again, "ge_proto", 1)


# ------------------------------------------------------------------------------------------------ errors
def test_truncated_dump_names_file_and_line(tmp_path):
    text = dump_text(matmul_add(), "ge_proto", 1)
    path = tmp_path / "ge_proto_00000001_graph_0_PreRunBegin.txt"
    cut = text[: len(text) // 2]
    path.write_text(cut)
    with pytest.raises(GeDumpError) as info:
        load_ge_dump(path)
    message = str(info.value)
    assert message.startswith(f"{path}:") and "cut short" in message
    line = int(message[len(str(path)) + 1:].split(":")[0])
    assert cut.count("\n") <= line <= cut.count("\n") + 1  # the last line of the cut text


def test_unknown_input_node_names_the_op_line(tmp_path):
    text = dump_text(matmul_add(), "ge_proto", 3).replace('input: "mm:0"', 'input: "ghost:0"')
    path = tmp_path / "bad.txt"
    path.write_text(text)
    line = text.splitlines().index('    name: "add"') + 1
    with pytest.raises(GeDumpError, match=rf"bad.txt:{line}: graph 'demo' op 'add': input ghost:0 names no node"):
        load_ge_dump(path)


def test_malformed_values_are_clear_errors(tmp_path):
    bad_dtype = OLD_STYLE.replace("dtype: DT_FLOAT shape { dim: 1 dim: 8 } layout: \"NCHW\" device_type",
                                  "dtype: DT_NOPE shape { dim: 1 dim: 8 } layout: \"NCHW\" device_type")
    with pytest.raises(GeDumpError, match=r"<text>:\d+:\d+: malformed ge_proto dump"):
        parse_ge_dump_text(bad_dtype)
    short = dump_text(matmul_add(), "ge_proto", 1).replace(r'data: "\000\000\200?\000\000\000@"',
                                                           r'data: "\000\000\200?"')
    with pytest.raises(GeDumpError, match=r"op 'b' attr 'value': tensor data holds 4 bytes but DT_FLOAT\[2\]"):
        parse_ge_dump_text(short)
    cyclic = OLD_STYLE.replace('input: ""\n    attr { key: "_input_name_idx_key"',
                               'input: "relu:0"\n    attr { key: "_input_name_idx_key"')
    with pytest.raises(GeDumpError, match="cycle"):
        parse_ge_dump_text(cyclic)
    with pytest.raises(GeDumpError, match="holds no graph"):
        parse_ge_dump_text("")
    with pytest.raises(GeDumpError, match="cannot read"):
        load_ge_dump(tmp_path / "missing.txt")


def test_onnx_and_readable_dumps_are_refused_with_a_pointer(tmp_path):
    (_proto, onnx_path) = write_dumps({"PreRunBegin": matmul_add()}, tmp_path)
    with pytest.raises(GeDumpError, match="ge_onnx dump.*ge_proto_00000000_graph_0_PreRunBegin.txt"):
        load_ge_dump(onnx_path)
    with pytest.raises(GeDumpError, match="ge_readable"):
        parse_ge_dump_text(dump_text(matmul_add(), "readable", 1))


def test_binary_garbage_is_a_clear_error(tmp_path):
    path = tmp_path / "x.txt"
    path.write_bytes(b"\x00\xff\x12garbage\x00")
    with pytest.raises(GeDumpError, match="x.txt"):
        load_ge_dump(path)


def test_gebench_load_and_compile_dumps_use_ge_files(tmp_path):
    import gebench
    from gebench import api
    from gebench.io import save_air

    g = matmul_add()
    (proto, onnx_path) = write_dumps({"PreRunBegin": g}, tmp_path, level=1)
    assert to_text(gebench.load(str(proto)).ir) == to_text(g)
    assert to_text(gebench.load(save_air(g, tmp_path / "m.air")).ir) == to_text(g)
    ir_text = tmp_path / "graph.txt"  # IR text in a .txt file still loads as IR text
    ir_text.write_text(to_text(g))
    assert to_text(gebench.load(ir_text).ir) == to_text(g)
    with pytest.raises(GeDumpError, match="ge_onnx dump"):
        gebench.load(onnx_path)
    run = gebench.compile(g, passes=[])
    paths = api.write_dumps(run, tmp_path / "run")
    names = [p.name for p in paths]
    assert names[:2] == ["ge_proto_00000000_graph_0_PreRunBegin.txt", "ge_onnx_00000000_graph_0_PreRunBegin.pbtxt"]
    assert to_text(load_ge_dump(paths[0])) == to_text(g)


def test_fast_printer_matches_protobufs_python_printer():
    """The dump text comes from protobuf's C printer; it equals the Python printer's except that integral floats
    print as C++'s TextFormat prints them (``f: 2``, where Python writes ``f: 2.0``)."""
    import re

    from google.protobuf import text_format

    from gebench.io._ge_dump_codec import encode_model
    from gebench.io._ge_dump_onnx import encode_onnx_model

    def cxx_floats(text):
        return re.sub(r"^(\s*(?:f|floats): -?\d+)\.0$", r"\1", text, flags=re.MULTILINE)

    for g in (rich_graph(), matmul_add()):
        assert dump_text(g, "ge_proto", 1) == cxx_floats(text_format.MessageToString(encode_model(g)))
        assert dump_text(g, "onnx", 1) == cxx_floats(text_format.MessageToString(encode_onnx_model(g, 1)))
    assert "          f: 2\n" in dump_text(rich_graph(), "ge_proto", 1)


def test_large_dumps_parse_through_protoc_when_grpcio_tools_is_installed(monkeypatch):
    import importlib.util

    from gebench.io import ge_dump

    monkeypatch.setattr(ge_dump, "_PROTOC_MIN_BYTES", 0)
    text = dump_text(rich_graph(), "ge_proto", 1)
    model = ge_dump._parse_with_protoc(text, "<t>")
    if importlib.util.find_spec("grpc_tools") is None:
        assert model is None  # falls back to the Python parser
    else:
        assert model is not None and [o.name for o in model.graph[0].op][:2] == ["n:1", "relu0"]
    assert to_text(parse_ge_dump_text(text)) == to_text(rich_graph())
    cut = text[: len(text) // 3]
    assert ge_dump._parse_with_protoc(cut, "<t>") is None
    with pytest.raises(GeDumpError, match=r"<text>:\d+:\d+: malformed ge_proto dump"):
        parse_ge_dump_text(cut)


# The ge_proto example of the dump-format spec (§6.1), as GE prints it at DUMP_GE_GRAPH=2, comments included.
SPEC_EXAMPLE = r'''
graph {
  name: "demo"
  input: "x:0"
  output: "add:0"
  op {
    name: "x"
    type: "Data"
    input: ""                                   # Data's own (unconnected) input anchor "x"
    attr { key: "_input_name_key" value { list { s: "x" val_type: VT_LIST_STRING } } }
    attr { key: "_input_name_value" value { list { i: 0 val_type: VT_LIST_INT } } }
    attr { key: "_output_name_key" value { list { s: "y" val_type: VT_LIST_STRING } } }
    attr { key: "_output_name_value" value { list { i: 0 val_type: VT_LIST_INT } } }
    attr { key: "_src_out_peer_index_for_ge_txt_load" value { list { i: -1 val_type: VT_LIST_INT } } }
    attr { key: "index" value { i: 0 } }
    input_desc {                                # (id: 0 is the proto3 default and is therefore not printed)
      dtype: DT_FLOAT
      shape { dim: 2 dim: 2 }
      layout: "ND"
      attr { key: "format_for_int" value { i: 2 } }
      attr { key: "origin_data_type" value { s: "DT_FLOAT" } }
      attr { key: "origin_format" value { s: "ND" } }
      attr { key: "origin_format_for_int" value { i: 2 } }
      attr { key: "origin_shape" value { list { i: 2 i: 2 val_type: VT_LIST_INT } } }
      attr { key: "origin_shape_initialized" value { b: true } }
      device_type: "NPU"
    }
    output_desc { dtype: DT_FLOAT shape { dim: 2 dim: 2 } layout: "ND"  # ...same attrs as input_desc...
      device_type: "NPU" }
  }
  op {
    name: "mm"
    type: "MatMul"
    input: "x:0"
    input: "x:0"
    input: ""                                   # optional "bias" not connected
    attr { key: "_input_name_key" value { list { s: "x1" s: "x2" s: "bias" val_type: VT_LIST_STRING } } }
    attr { key: "_input_name_value" value { list { i: 0 i: 1 i: 2 val_type: VT_LIST_INT } } }
    attr { key: "_ir_inputs_key" value { list { s: "x1" s: "x2" s: "bias" val_type: VT_LIST_STRING } } }
    attr { key: "_ir_inputs_value" value { list { i: 0 i: 0 i: 1 val_type: VT_LIST_INT } } }  # required, required, optional
    attr { key: "_src_out_peer_index_for_ge_txt_load" value { list { i: 0 i: 1 i: -1 val_type: VT_LIST_INT } } }
    attr { key: "transpose_x1" value { b: false } }
    attr { key: "transpose_x2" value { b: false } }
    id: 1
    input_desc { dtype: DT_FLOAT shape { dim: 2 dim: 2 } layout: "ND" }   # ...origin attrs as above...
    input_desc { dtype: DT_FLOAT shape { dim: 2 dim: 2 } layout: "ND" }
    input_desc { layout: "FORMAT_RESERVED" }    # placeholder for the unused optional input (dtype DT_UNDEFINED=0 omitted)
    output_desc { dtype: DT_FLOAT shape { dim: 2 dim: 2 } layout: "ND" }
  }
  op {
    name: "add"
    type: "Add"
    input: "mm:0"
    input: "x:0"
    attr { key: "_input_name_key" value { list { s: "x1" s: "x2" val_type: VT_LIST_STRING } } }
    attr { key: "_input_name_value" value { list { i: 0 i: 1 val_type: VT_LIST_INT } } }
    attr { key: "_src_out_peer_index_for_ge_txt_load" value { list { i: 0 i: 2 val_type: VT_LIST_INT } } }
    id: 2
    input_desc { dtype: DT_FLOAT shape { dim: 2 dim: 2 } layout: "ND" }
    input_desc { dtype: DT_FLOAT shape { dim: 2 dim: 2 } layout: "ND" }
    output_desc { dtype: DT_FLOAT shape { dim: 2 dim: 2 } layout: "ND" }
  }
  attr { key: "_session_graph_id" value { s: "0_1" } }
}
attr { key: "event_num" value { i: 0 } }
attr { key: "label_num" value { i: 0 } }
attr { key: "memory_size" value { i: 0 } }
attr { key: "p2p_memory_size" value { i: 0 } }
attr { key: "stream_num" value { i: 0 } }
attr { key: "target_type" value { s: "MINI" } }
attr { key: "weight_size" value { i: 0 } }
'''


def test_the_spec_example_dump_loads():
    g = parse_ge_dump_text(SPEC_EXAMPLE, source="spec-6.1")
    g.verify()
    assert [(n.name, n.op_type, n.id) for n in g.nodes()] == [("x", "Data", 0), ("mm", "MatMul", 1), ("add", "Add", 2)]
    mm = g.node_by_name("mm")
    assert mm.input_names == ["x1", "x2", "bias"] and mm.inputs[2].is_placeholder
    assert [(p[0].name, p[1]) if p else None for p in g.producers(mm)] == [("x", 0), ("x", 0), None]
    assert mm.attrs == {"transpose_x1": False, "transpose_x2": False}  # the _ir_* attrs match the schema
    x = g.node_by_name("x")
    assert [(c.name, port) for c, port in g.uses(x, 0)] == [("mm", 0), ("mm", 1), ("add", 1)]
    assert x.inputs[0].origin_dtype == DataType.DT_FLOAT and x.inputs[0].format == Format.FORMAT_ND
    assert g.attrs == {"_session_graph_id": "0_1", "outputs": ["add:0"]}


def test_tensor_without_bytes_is_kept_as_read():
    text = SPEC_EXAMPLE.replace('attr { key: "index" value { i: 0 } }',
                                'attr { key: "index" value { i: 0 } }\n    attr { key: "w" value { t { desc { dtype: '
                                'DT_FLOAT shape { dim: 2 } layout: "ND" } } } }')
    g = parse_ge_dump_text(text)
    again = dump_text(g, "ge_proto", 1)
    assert 'key: "w"\n      value {\n        t {\n          desc {\n            dtype: DT_FLOAT' in again
    assert to_text(parse_ge_dump_text(again)) == to_text(g)


def _float32_canonical(value):
    """Floats as the shortest decimal of their float32 value (the form dumps read back in)."""
    if isinstance(value, float):
        return float(str(np.float32(value)))
    if isinstance(value, list):
        return [_float32_canonical(v) for v in value]
    return value


@pytest.mark.parametrize("name", ["add_zero", "concat_relu", "grouped_conv", "matmul_add", "small_cnn"])
def test_bundled_onnx_models_round_trip(name):
    from pathlib import Path

    from gebench.io import load_onnx

    path = Path(__file__).resolve().parents[1] / "assets" / f"{name}.onnx"
    g = load_onnx(path)
    once = round_trip(g)
    assert to_text(round_trip(once)) == to_text(once)
    assert dump_text(once, "ge_proto", 1) == dump_text(g, "ge_proto", 1)
    for node in g.nodes():
        back = once.node_by_name(node.name)
        assert back.id == node.id and back.op_type == node.op_type
        assert back.attrs == {k: _float32_canonical(v) for k, v in node.attrs.items()}
        assert back.inputs == node.inputs and back.outputs == node.outputs
        assert back.input_names == node.input_names and back.output_names == node.output_names
