"""GE dump text written piece by piece and read by op signature: the same bytes as protobuf's printer gives for
the encoded model, and the same graph as parsing the whole text."""

import numpy as np
import onnx
import pytest
from google.protobuf import text_format
from onnx import TensorProto, helper, numpy_helper

from dump_graphs import matmul_add
from gebench.io import _ge_dump_codec as codec
from gebench.io import _ge_dump_onnx as onnx_codec
from gebench.io import _ge_dump_read as reader
from gebench.io import _ge_dump_text as writer
from gebench.io import load_ge_dump, load_onnx, write_dumps
from gebench.io.ge_dump import DumpLevel, dump_text, parse_ge_dump_text
from gebench.io.proto import ge_ir_pb2
from gebench.ir import DataType, Graph, TensorDesc, TensorValue, to_text
from test_io_dump_read import rich_graph


def _imported_with_subgraph():
    then = helper.make_graph([helper.make_node("Add", ["x", "b"], ["t"])], "then", [],
                             [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])])
    other = helper.make_graph([helper.make_node("Mul", ["x", "b"], ["e"])], "else", [],
                              [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])])
    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0), helper.make_node("Greater", ["s", "z"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other),
             helper.make_node("Gemm", ["w", "w", "b2"], ["g"], alpha=2.0)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2]),
                               helper.make_tensor_value_info("g", TensorProto.FLOAT, [2, 2])],
                              [numpy_helper.from_array(np.array([1.0, -2.0], np.float32), "b"),
                               numpy_helper.from_array(np.array(0, np.float32), "z"),
                               numpy_helper.from_array(np.arange(4, dtype=np.float32).reshape(2, 2), "w"),
                               numpy_helper.from_array(np.ones(2, np.float32), "b2")])
    return load_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))


def _odd_graph():
    """Names and strings that need escaping, tensors of several dtypes, descs with attrs (printed whole), ids 0,
    attr names that tie with the ONNX dump's own attribute names, and lists of tensors."""
    g = Graph('odd "graph" \u2028')
    values = [TensorValue.from_list([1, 2, 3], DataType.DT_UINT8), TensorValue(DataType.DT_BF16, np.array([1, 2], np.uint16)),
              TensorValue(DataType.DT_BOOL, np.array([True, False])), TensorValue(DataType.DT_FLOAT, np.zeros((0, 3), np.float32)),
              TensorValue(DataType.DT_FLOAT, np.linspace(-1, 1, 40, dtype=np.float32))]
    prev = None
    for i, value in enumerate(values):
        attrs = {"value": value, "id": i, "value_data": "x" * i, "s": 'q"\\\'\n\x01é', "f": -0.0 if i % 2 else 1e-7,
                 "lt": [value], "name_list": [f"n{i}"]}
        node = g.add_node("Const" if i % 2 else "Weird\u00e9", name=f"n{i}\\\"\u00fc" if i % 2 else f"n{i}", attrs=attrs,
                          inputs=[TensorDesc.of(DataType.DT_FLOAT, [2])] if prev is not None else [],
                          outputs=[TensorDesc(DataType.DT_FLOAT, (2,), attrs={"k": [i]}) if i == 3
                                   else TensorDesc.of(DataType.DT_FLOAT, [2])],
                          input_names=["x"] if prev is not None else [], output_names=["y"])
        if prev is not None:
            g.add_edge(prev, 0, node, 0)
            g.add_control_edge(prev, node)
        prev = node
    return g


GRAPHS = {"matmul_add": matmul_add, "rich": rich_graph, "subgraphs": _imported_with_subgraph, "odd": _odd_graph}


@pytest.mark.parametrize("name", list(GRAPHS))
@pytest.mark.parametrize("level", [1, 2, 3])
def test_written_text_is_protobufs_printer_output(name, level):
    graph = GRAPHS[name]()
    options = codec.EncodeOptions(const_values=level == 1, framework_defs=level == 1, graph_options=level < 3)
    assert "".join(writer.ge_proto_chunks(graph, options)) == codec.model_text(codec.encode_model(graph, options))
    level = DumpLevel(level)
    assert "".join(writer.ge_onnx_chunks(graph, level)) == str(onnx_codec.encode_onnx_model(graph, level))


def test_literals_escape_every_byte_as_the_printer_does():
    attr = codec._OrderedAttrDef()
    for data in (bytes(range(256)), bytes(range(256))[:40], b"", np.random.default_rng(0).bytes(5000)):
        attr.bt = data
        assert str(attr) == f'bt: "{writer.bytes_literal(data)}"\n'
    holder = codec._OrderedModelDef()
    for text in ("plain", 'q"\\\'\t\n\r\x00\x7f', "\u00fc\u4e2d\U0001F600", "\u2028\x85", "a\x1fb"):
        holder.name = text
        assert str(holder) == f'name: "{writer.string_literal(text)}"\n'


def test_a_value_gebench_cannot_store_fails_as_before():
    g = Graph("g")
    g.add_node("Relu", name="ok", attrs={"a": 1}, outputs=1)
    g.add_node("Relu", name="bad", attrs={"z": {"no": 1}}, outputs=1)
    with pytest.raises(codec.GeDumpError) as old:
        codec.encode_model(g)
    with pytest.raises(codec.GeDumpError) as new:
        "".join(writer.ge_proto_chunks(g))
    assert str(new.value) == str(old.value)


def _whole(text):
    model = ge_ir_pb2.ModelDef()
    text_format.Parse(text, model)
    return codec.decode_model(model, source="<text>")


def _fingerprint(graph):
    out = [to_text(graph)]
    for g in (graph, *graph.subgraphs.values()):
        for node in g.nodes():
            out.append((g.name, node.id, [[(c.name, p) for c, p in g.uses(node, k)] for k in range(node.num_outputs)],
                        [type(v).__name__ for v in node.attrs.values()]))
    return out


@pytest.mark.parametrize("name", list(GRAPHS))
@pytest.mark.parametrize("level", [1, 2])
def test_reading_by_signature_gives_the_graph_of_a_whole_parse(name, level):
    text = dump_text(GRAPHS[name](), "ge_proto", level)
    graph = reader.read_dump_text(text, "<text>")
    assert graph is not None, "the text was not read by signature"
    graph.verify()
    assert _fingerprint(graph) == _fingerprint(_whole(text))


def test_ops_of_one_signature_share_one_parse():
    g = Graph("many")
    prev = g.add_node("Data", name="x", attrs={"index": 0}, outputs=1, output_names=["y"])
    for i in range(200):
        value = TensorValue.from_list([float(i), 1.0], DataType.DT_FLOAT)
        const = g.add_node("Const", name=f"c{i}", attrs={"value": value, "_datadump_original_op_names": [f"op{i}"]},
                           outputs=[value.desc()], output_names=["y"])
        add = g.add_node("Add", name=f"add{i}", inputs=2, outputs=1, input_names=["x1", "x2"], output_names=["y"])
        g.add_edge(prev, 0, add, 0)
        g.add_edge(const, 0, add, 1)
        prev = add
    text = dump_text(g, "ge_proto", 1)
    seen = []
    original = reader._Template.__init__

    def counting(self, *args):
        seen.append(1)
        original(self, *args)

    reader._Template.__init__ = counting
    try:
        graph = reader.read_dump_text(text, "<text>")
    finally:
        reader._Template.__init__ = original
    assert graph is not None and _fingerprint(graph) == _fingerprint(_whole(text))
    assert len(seen) <= 6  # Data, Const, Add (first, middle with one use), NetOutput ... not one per op
    assert graph.node_by_name("c7").attrs["_datadump_original_op_names"] == ["op7"]
    assert graph.node_by_name("c7").attrs["value"].array.tolist() == [7.0, 1.0]
    assert not graph.node_by_name("c7").attrs["value"].array.flags.writeable  # values stay immutable


def test_text_in_another_layout_is_parsed_whole():
    text = 'graph { name: "g" op { name: "x" type: "Data" attr { key: "index" value { i: 0 } } } }\n'
    assert reader.read_dump_text(text, "<text>") is None
    assert [n.name for n in parse_ge_dump_text(text).nodes()] == ["x"]
    one_line_ops = 'graph {\n  name: "g"\n  op { name: "x" type: "Data" }\n}\n'
    assert reader.read_dump_text(one_line_ops, "<text>") is None
    assert [n.name for n in parse_ge_dump_text(one_line_ops).nodes()] == ["x"]
    laid_out = dump_text(matmul_add(), "ge_proto", 1)
    for broken in (laid_out.replace("    id: 4\n", "    id: 0x4\n"), laid_out.replace('  op {\n    name: "w"\n', '  op {\n     name: "w"\n'),
                   laid_out[:-1], laid_out.replace('    input: "mm:0"\n', '    input: "mm:0" "x"\n'),
                   # a closing line at the graph's indent inside an op, and between two ops
                   laid_out.replace('  op {\n    name: "w"\n', '  op {\n    name: "w"\n}\n'),
                   laid_out.replace('  }\n  op {\n    name: "w"\n', '  }\n}\n  op {\n    name: "w"\n')):
        assert reader.read_dump_text(broken, "<text>") is None


def test_dumps_round_trip_to_identical_files(tmp_path):
    graph = _imported_with_subgraph()
    first = write_dumps({"PreRunBegin": graph}, tmp_path / "a", level=1, formats=["ge_proto", "onnx"])
    back = load_ge_dump(first[0])
    second = write_dumps({"PreRunBegin": back}, tmp_path / "b", level=1, formats=["ge_proto", "onnx"])
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]
    assert to_text(back) == to_text(load_ge_dump(second[0]))


def test_write_and_read_report_progress(tmp_path):
    graph = _imported_with_subgraph()
    written = []
    paths = write_dumps({"A": graph, "B": graph}, tmp_path, level=1, formats=["ge_proto", "onnx"],
                        progress=lambda done, total: written.append((done, total)))
    nodes = len(graph) + sum(len(s) for s in graph.subgraphs.values())
    assert written[-1] == (4 * nodes, 4 * nodes)
    assert [d for d, _ in written] == sorted(d for d, _ in written)
    read = []
    load_ge_dump(paths[0], progress=lambda done, total: read.append((done, total)))
    size = len(paths[0].read_bytes())
    assert read and read[-1] == (size, size) and len(read) <= 102


def test_a_dump_that_is_not_utf8_is_refused_as_before(tmp_path):
    text = dump_text(_odd_graph(), "ge_proto", 1).encode("utf-8")
    for damaged in (text.replace(b'data: "', b'data: "\xff', 1), text.replace(b'    name: "n1', b'    name: "\xfe', 1)):
        path = tmp_path / "ge_proto_00000000_graph_0_X.txt"
        path.write_bytes(damaged)
        assert reader.read_dump_text(damaged, "<bytes>") is None
        with pytest.raises(codec.GeDumpError, match="not UTF-8 text"):
            load_ge_dump(path)


def test_a_failing_write_leaves_no_file(tmp_path):
    g = Graph("g")
    g.add_node("Relu", name="bad", attrs={"z": {"no": 1}}, outputs=1)
    with pytest.raises(codec.GeDumpError):
        write_dumps({"PreRunBegin": g}, tmp_path, formats=["ge_proto"])
    assert list(tmp_path.iterdir()) == []


def test_imported_model_dump_is_read_back_by_signature(tmp_path):
    rng = np.random.default_rng(0)
    nodes, inits = [], []
    x = "x"
    for i in range(30):
        inits.append(numpy_helper.from_array(rng.standard_normal((4, 4)).astype(np.float32), f"w{i}"))
        nodes.append(helper.make_node("MatMul", [x, f"w{i}"], [f"m{i}"]))
        nodes.append(helper.make_node("Transpose", [f"m{i}"], [f"t{i}"], perm=[1, 0]))
        x = f"t{i}"
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [4, 4])], inits)
    path = tmp_path / "chain.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    imported = load_onnx(path)
    text = dump_text(imported, "ge_proto", 1)
    fast = reader.read_dump_text(text, "<text>")
    assert fast is not None and _fingerprint(fast) == _fingerprint(_whole(text))
    assert dump_text(fast, "ge_proto", 1) == text  # decoding normalises attr order once; the text is a fixed point
