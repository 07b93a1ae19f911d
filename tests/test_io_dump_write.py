"""ge_proto / ge_onnx dump writing checked field by field against the dump-format spec (§2, §4, §5)."""

import re

import pytest
from google.protobuf import text_format

from dump_graphs import matmul_add
from gebench import _atomic as atomic
from gebench.io import ge_dump
from gebench.io.ge_dump import DumpLevel, dump_text, write_dumps
from gebench.io.proto import ge_ir_pb2, ge_onnx_pb2
from gebench.ir import DataType, Format, Graph, TensorDesc, TensorValue


def parse_model(text: str) -> ge_ir_pb2.ModelDef:
    model = ge_ir_pb2.ModelDef()
    text_format.Parse(text, model)
    return model


def op(model: ge_ir_pb2.ModelDef, name: str) -> ge_ir_pb2.OpDef:
    (found,) = [o for o in model.graph[0].op if o.name == name]
    return found


def test_golden_snippets_of_the_add_op_and_the_const_weight():
    text = dump_text(matmul_add(), "ge_proto", DumpLevel.DUMP_ALL)
    # §4.2: one input per anchor "<src>:<idx>", then control inputs "<src>:-1"; fields in field-number order.
    assert '  op {\n    name: "add"\n    type: "Add"\n    input: "mm:0"\n    input: "b:0"\n    input: "x:-1"\n' in text
    # §6.1: the Const weight is a TensorDef with raw little-endian float32 bytes (1.0, 2.0).
    assert ('        t {\n          desc {\n            dtype: DT_FLOAT\n            shape {\n              dim: 2\n'
            '            }\n            layout: "ND"\n          }\n          data: "\\000\\000\\200?\\000\\000\\000@"\n'
            '        }\n') in text
    # §4.2: the unfed optional input keeps a placeholder desc: FORMAT_RESERVED, no dtype line (DT_UNDEFINED=0).
    assert '    input_desc {\n      layout: "FORMAT_RESERVED"\n    }\n' in text
    # §4.3: bool attrs are oneof members, so false is printed.
    assert '      key: "transpose_x1"\n      value {\n        b: false\n      }\n' in text
    # §4.2: the file ends with the model attrs, printed sorted by key.
    tail = re.findall(r'^attr \{\n  key: "(\w+)"', text, re.MULTILINE)
    assert tail == ["event_num", "label_num", "memory_size", "p2p_memory_size", "stream_num", "target_type",
                    "weight_size"]
    assert 'key: "target_type"\n  value {\n    s: "MINI"\n  }' in text


def test_graph_and_op_fields_follow_the_spec():
    model = parse_model(dump_text(matmul_add(), "ge_proto", DumpLevel.DUMP_ALL))
    assert model.name == "" and model.version == 0 and len(model.graph) == 1
    g = model.graph[0]
    assert g.name == "demo" and list(g.input) == ["x:0"] and list(g.output) == ["add:0"]
    assert [o.name for o in g.op] == ["x", "w", "b", "mm", "add", "Node_Output"]
    mm = op(model, "mm")
    assert list(mm.input) == ["x:0", "w:0", ""]
    assert len(mm.input_desc) == 3 and len(mm.output_desc) == 1
    assert list(mm.attr["_input_name_key"].list.s) == [b"x1", b"x2", b"bias"]
    assert list(mm.attr["_input_name_value"].list.i) == [0, 1, 2]
    assert list(mm.attr["_ir_inputs_key"].list.s) == [b"x1", b"x2", b"bias"]
    assert list(mm.attr["_ir_inputs_value"].list.i) == [0, 0, 1]  # required, required, optional
    assert list(mm.attr["_opt_input"].list.s) == [b"bias"]
    assert list(mm.attr["_src_out_peer_index_for_ge_txt_load"].list.i) == [0, 0, -1]
    data = op(model, "x")
    assert list(data.input) == [""] and data.attr["index"].i == 0
    # x feeds mm (peer 0) and add by control (control peer 0)
    add = op(model, "add")
    assert list(add.attr["_src_out_peer_index_for_ge_txt_load"].list.i) == [0, 0, 0]
    desc = mm.input_desc[0]
    assert desc.dtype == ge_ir_pb2.DT_FLOAT and list(desc.shape.dim) == [2, 2] and desc.layout == "ND"
    assert desc.attr["format_for_int"].i == Format.FORMAT_ND == 2
    assert desc.attr["origin_format"].s == b"ND" and desc.attr["origin_format_for_int"].i == 2
    assert desc.attr["origin_shape_initialized"].b is True
    assert list(desc.attr["origin_shape"].list.i) == [2, 2]
    assert desc.attr["origin_shape"].list.val_type == ge_ir_pb2.AttrDef.ListValue.VT_LIST_INT
    assert desc.device_type == "NPU"
    assert all(o.id == i for i, o in enumerate(g.op))


def test_two_dtype_numberings_and_every_list_carries_val_type():
    g = Graph("types")
    desc = TensorDesc(dtype=DataType.DT_INT32, shape=(3,), origin_dtype=DataType.DT_BF16)
    g.add_node("Cast", name="c", inputs=[desc], outputs=[TensorDesc.of(DataType.DT_INT64, [3])],
               attrs={"dst_type": 9, "T": DataType.DT_INT32, "types": [DataType.DT_FLOAT, DataType.DT_BF16],
                      "empty": [], "names": ["a"], "lli": [[1, 2], [3]], "f": 0.5, "bt": b"\x00\xff"})
    model = parse_model(dump_text(g, "ge_proto", 1))
    c = op(model, "c")
    # TensorDescriptor.dtype uses ge_ir.proto numbering: DT_INT32 = 7 there, 3 in C++.
    assert c.input_desc[0].dtype == 7 == ge_ir_pb2.DT_INT32
    assert c.output_desc[0].dtype == ge_ir_pb2.DT_INT64 == 8
    # origin dtype is a serial string; bf16's is DT_BFLOAT16
    assert c.input_desc[0].attr["origin_data_type"].s == b"DT_BFLOAT16"
    # AttrDef.dt keeps the C++ number unchanged
    assert c.attr["T"].WhichOneof("value") == "dt" and c.attr["T"].dt == 3
    assert list(c.attr["types"].list.dt) == [0, 27]
    assert c.attr["types"].list.val_type == ge_ir_pb2.AttrDef.ListValue.VT_LIST_DATA_TYPE
    assert c.attr["dst_type"].i == 9
    for key, attr in c.attr.items():
        if attr.WhichOneof("value") == "list":
            assert attr.list.val_type != ge_ir_pb2.AttrDef.ListValue.VT_LIST_NONE, key
    assert [list(r.list_i) for r in c.attr["lli"].list_list_int.list_list_i] == [[1, 2], [3]]
    assert c.attr["bt"].bt == b"\x00\xff" and c.attr["f"].f == 0.5


def test_levels_strip_what_the_spec_says():
    g = matmul_add()
    g.node_by_name("mm").attrs["node_def"] = b"framework bytes"
    levels = {lv: parse_model(dump_text(g, "ge_proto", lv)) for lv in (1, 2, 3)}
    # level 1: weights, framework defs and the option NamedAttrs
    assert "value" in op(levels[1], "w").attr and "node_def" in op(levels[1], "mm").attr
    assert {"GraphOptions", "SessionOptions", "GlobalOptions"} <= set(levels[1].graph[0].attr)
    assert levels[1].graph[0].attr["GraphOptions"].func.name == "GraphOptions"
    # level 2: no weights, no node_def; tensor descs and options stay
    assert "value" not in op(levels[2], "w").attr and "node_def" not in op(levels[2], "mm").attr
    assert list(op(levels[2], "w").output_desc[0].shape.dim) == [2, 2]
    assert "GraphOptions" in levels[2].graph[0].attr
    # level 3: same as 2 without the option block
    assert "GraphOptions" not in levels[3].graph[0].attr
    assert "value" not in op(levels[3], "w").attr
    with pytest.raises(ValueError, match="writes nothing"):
        dump_text(g, "ge_proto", 0)


def test_subgraphs_are_flattened_after_the_root_with_parent_links():
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
        so = sub.add_node("NetOutput", name=f"if0_{branch}_Node_Output",
                          inputs=[TensorDesc(dtype=DataType.DT_FLOAT, shape=(1,), origin_shape=(1,),
                                             attrs={"_parent_node_index": 0})])
        sub.add_edge(sd, 0, so, 0)
        g.add_subgraph(sub, parent_node=node)
    model = parse_model(dump_text(g, "ge_proto", 1))
    assert [gr.name for gr in model.graph] == ["root", "if0_then", "if0_else"]
    assert list(op(model, "if0").subgraph_name) == ["if0_then", "if0_else"]
    then_out = [o for o in model.graph[1].op if o.type == "NetOutput"][0]
    assert then_out.input_desc[0].attr["_parent_node_index"].i == 0
    assert model.graph[1].op[0].attr["_parent_node_index"].i == 1


def test_graph_outputs_without_netoutput_come_from_the_outputs_attr():
    g = matmul_add()
    g.remove_node(g.node_by_name("Node_Output"))
    g.attrs["outputs"] = ["add:0", "mm:0"]
    model = parse_model(dump_text(g, "ge_proto", 3))
    assert list(model.graph[0].output) == ["add:0", "mm:0"]
    assert "outputs" not in model.graph[0].attr


def test_unstorable_attr_value_is_a_clear_error():
    g = Graph("bad")
    g.add_node("Relu", name="r", attrs={"weird": {"a": 1}})
    with pytest.raises(ge_dump.GeDumpError, match=r"node 'r' \(Relu\) attr 'weird'.*dict"):
        dump_text(g, "ge_proto", 1)


# ------------------------------------------------------------------------------------------------ file names
def test_write_dumps_names_files_like_ge(tmp_path):
    g = matmul_add()
    paths = write_dumps({"PreRunBegin": g, "RunCustomPassBeforeInfershape": g, "a/b:c*d": g}, tmp_path,
                        graph_id=3, level=2)
    assert [p.name for p in paths] == [
        "ge_proto_00000000_graph_3_PreRunBegin.txt", "ge_onnx_00000000_graph_3_PreRunBegin.pbtxt",
        "ge_proto_00000001_graph_3_RunCustomPassBeforeInfershape.txt",
        "ge_onnx_00000001_graph_3_RunCustomPassBeforeInfershape.pbtxt",
        "ge_proto_00000002_graph_3_a_b_c_d.txt", "ge_onnx_00000002_graph_3_a_b_c_d.pbtxt",
    ]
    assert all(p.is_file() and p.stat().st_size > 0 for p in paths)
    assert not list(tmp_path.glob("*.part"))


def _count_serialisations(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Record (graph name, format) each time write_dumps serialises a graph."""
    calls: list[tuple[str, str]] = []
    real = ge_dump.dump_chunks

    def counted(graph, kind="ge_proto", level=DumpLevel.DUMP_ALL, *, advance=None):
        calls.append((graph.name, kind))
        return real(graph, kind, level, advance=advance)

    monkeypatch.setattr(ge_dump, "dump_chunks", counted)
    return calls


def test_a_graph_repeated_at_later_dump_points_is_serialised_once_and_copied(tmp_path, monkeypatch):
    # a stage that changes nothing hands over the graph of the dump point before it (SnapshotMap shares it)
    first, later = matmul_add(), matmul_add()
    later.name = "later"
    snaps = {"PreRunBegin": first, "RunCustomPassBeforeInfershape": later, "RunCustomPass_AfterInferShape": later,
             "RunCustomPassAfterBuiltinFusionPass": later}
    calls = _count_serialisations(monkeypatch)
    progress: list[tuple[int, int]] = []
    paths = write_dumps(snaps, tmp_path / "shared", progress=lambda done, total: progress.append((done, total)))
    assert calls == [("demo", "ge_proto"), ("demo", "onnx"), ("later", "ge_proto"), ("later", "onnx")]
    assert len(paths) == 8
    for kind, prefix in (("ge_proto", "ge_proto_"), ("onnx", "ge_onnx_")):
        expected = dump_text(later, kind, DumpLevel.DUMP_ALL).encode()
        copies = [p for p in paths if p.name.startswith(prefix) and "PreRunBegin" not in p.name]
        assert len(copies) == 3
        assert all(p.read_bytes() == expected for p in copies)
        assert all(p.stat().st_nlink == 1 for p in copies)  # copies, not links: editing one leaves the others
    assert sorted(q.name for q in (tmp_path / "shared").iterdir()) == sorted(p.name for p in paths)  # no links
    assert progress[-1][0] == progress[-1][1] == 8 * len(first)

    # without hard links the content is serialised again, with the same bytes
    def no_links(src, dst):
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(atomic.os, "link", no_links)
    calls.clear()
    again = write_dumps(snaps, tmp_path / "unlinked")
    assert len(calls) == 8
    assert [p.read_bytes() for p in again] == [p.read_bytes() for p in paths]
    assert sorted(q.name for q in (tmp_path / "unlinked").iterdir()) == sorted(p.name for p in again)


def test_a_failed_copy_names_the_file_and_leaves_no_link_behind(tmp_path, monkeypatch):
    g = matmul_add()

    def refuse(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ge_dump, "copy_file_atomically", refuse)
    with pytest.raises(ge_dump.GeDumpError, match=r"cannot write .*ge_proto_00000001_graph_0_B\.txt: No space"):
        write_dumps({"A": g, "B": g}, tmp_path, formats=["ge_proto"])
    assert [q.name for q in tmp_path.iterdir()] == ["ge_proto_00000000_graph_0_A.txt"]


def test_stage_filter_and_formats_and_counters(tmp_path):
    g = matmul_add()
    snaps = {"PreRunBegin": g, "PreRunAfterInitPreparation": g, "RunCustomPass_AfterInferShape": g,
             "Build": g}
    paths = write_dumps(snaps, tmp_path, level=3, formats=["ge_proto"], stages="2")
    # counters are bumped only for files written
    assert [p.name for p in paths] == ["ge_proto_00000000_graph_0_PreRunBegin.txt",
                                       "ge_proto_00000001_graph_0_RunCustomPass_AfterInferShape.txt",
                                       "ge_proto_00000002_graph_0_Build.txt"]
    paths = write_dumps({"PreRunBegin": g}, tmp_path / "r", formats=["readable", "onnx"], start_index=7)
    assert [p.name for p in paths] == ["ge_onnx_00000007_graph_0_PreRunBegin.pbtxt",
                                       "ge_readable_00000007_graph_0_PreRunBegin.txt"]
    with pytest.raises(ValueError, match="unknown dump format"):
        write_dumps({"PreRunBegin": g}, tmp_path, formats=["json"])


def test_long_onnx_names_are_cut_like_ge():
    name = ge_dump.dump_file_name("onnx", 1, "S" * 300)
    assert len(name) == 248 + len(".pbtxt") and name.endswith(".pbtxt")
    assert len(ge_dump.dump_file_name("ge_proto", 1, "S" * 300)) > 300  # only onnx names are cut
    assert ge_dump.dump_file_name("ge_proto", 12, "X", index_width=5) == "ge_proto_00012_graph_0_X.txt"
    assert ge_dump.dump_file_name("onnx", 1, "X", aclop=True) == "ge_onnx_00000001_aclop_graph_0_X.pbtxt"


@pytest.mark.parametrize("name, parts", [
    ("ge_proto_00000003_graph_0_PreRunBegin.txt", ("ge_proto", 3, 8, 0, "PreRunBegin", False)),
    ("ge_onnx_00000012_graph_7_RunCustomPass_AfterInferShape.pbtxt",
     ("onnx", 12, 8, 7, "RunCustomPass_AfterInferShape", False)),
    ("ge_proto_00017_OptimizeOriginalGraph_FeGraphFusionAfter.txt",
     ("ge_proto", 17, 5, None, "OptimizeOriginalGraph_FeGraphFusionAfter", False)),
    ("ge_proto_00026_afterUBMatch.txt", ("ge_proto", 26, 5, None, "afterUBMatch", False)),
    ("ge_proto_00000001_aclop_graph_2_Build.txt", ("ge_proto", 1, 8, 2, "Build", True)),
    ("ge_readable_00000000_graph_0_graph_cyclic_after x.txt", ("readable", 0, 8, 0, "graph_cyclic_after x", False)),
])
def test_parse_dump_name_accepts_every_generation(name, parts):
    got = ge_dump.parse_dump_name(name)
    assert (got.kind, got.index, got.index_digits, got.graph_id, got.suffix, got.aclop) == parts


def test_parse_dump_name_rejects_other_files():
    assert ge_dump.parse_dump_name("model.onnx") is None
    assert ge_dump.parse_dump_name("ge_proto_graph_0_X.txt") is None


# ------------------------------------------------------------------------------------------------ ge_onnx
def parse_onnx(text: str) -> ge_onnx_pb2.ModelProto:
    model = ge_onnx_pb2.ModelProto()
    text_format.Parse(text, model)
    return model


def node_of(model, name):
    (found,) = [n for n in model.graph.node if n.name == name]
    return found


def test_onnx_dump_fields():
    text = dump_text(matmul_add(), "onnx", 1)
    assert text.startswith('ir_version: 6\nproducer_name: "GE"\ngraph {\n  node {\n')
    model = parse_onnx(text)
    assert not model.opset_import and not model.graph.initializer and not model.graph.input
    mm = node_of(model, "mm")
    assert mm.op_type == "ge:MatMul" and list(mm.input) == ["x:0", "w:0", ""] and list(mm.output) == ["mm:0"]
    names = [a.name for a in mm.attribute]
    assert names == sorted(names)
    attrs = {a.name: a for a in mm.attribute}
    assert attrs["id"].i == 3 and attrs["input_desc_nums"].i == 3 and attrs["output_desc_nums"].i == 1
    assert attrs["input_desc_dtype:0"].s == b"DT_FLOAT" and list(attrs["input_desc_shape:1"].ints) == [2, 2]
    assert attrs["input_desc_layout:2"].s == b"FORMAT_RESERVED"
    assert attrs["transpose_x1"].type == ge_onnx_pb2.AttributeProto.INT and attrs["transpose_x1"].i == 0
    assert attrs["input_name"].type == ge_onnx_pb2.AttributeProto.STRINGS and not attrs["input_name"].strings
    # x has a control successor -> "<self>:-1"; add feeds only NetOutput
    assert list(node_of(model, "x").output) == ["x:0", "x:-1"]
    assert list(node_of(model, "add").input) == ["mm:0", "b:0", "x:-1"]
    w = {a.name: a for a in node_of(model, "w").attribute}
    assert w["value_desc_dtype"].s == b"DT_FLOAT" and list(w["value_desc_shape"].ints) == [2, 2]
    assert w["value_data"].s == TensorValue.from_list([1.0, 2.0, 3.0, 4.0], DataType.DT_FLOAT).to_bytes()
    (out,) = model.graph.output
    assert out.name == "add" and out.type.tensor_type.elem_type == 1
    assert [d.dim_value for d in out.type.tensor_type.shape.dim] == [2, 2]


def test_onnx_dump_levels():
    g = matmul_add()
    g.node_by_name("mm").attrs["note"] = "text"
    g.node_by_name("mm").attrs["tags"] = ["a", "b"]
    g.node_by_name("mm").attrs["pads"] = [[1, 2], [3, 4]]
    full = {a.name: a for a in node_of(parse_onnx(dump_text(g, "onnx", 1)), "mm").attribute}
    assert full["note"].s == b"text" and list(full["tags"].strings) == [b"a", b"b"]
    assert list(full["pads_0"].ints) == [1, 2] and list(full["pads_1"].ints) == [3, 4]
    lvl2 = parse_onnx(dump_text(g, "onnx", 2))
    two = {a.name: a for a in node_of(lvl2, "mm").attribute}
    assert "note" not in two and "tags" not in two and "pads_0" in two
    assert two["input_desc_dtype:0"].s == b"DT_FLOAT"  # fixed desc strings stay
    assert "value_data" not in {a.name for a in node_of(lvl2, "w").attribute}
    lvl3 = parse_onnx(dump_text(g, "onnx", 3))
    assert all(not n.attribute for n in lvl3.graph.node)
    assert list(node_of(lvl3, "mm").input) == ["x:0", "w:0", ""]


def test_onnx_dump_parses_as_standard_onnx():
    import onnx

    model = onnx.ModelProto()
    text_format.Parse(dump_text(matmul_add(), "onnx", 1), model)
    assert model.ir_version == 6 and [n.op_type for n in model.graph.node][:2] == ["ge:Data", "ge:Const"]


def test_onnx_dump_wide_nodes_use_json_descs():
    g = Graph("wide")
    d = TensorDesc.of(DataType.DT_FLOAT, [1])
    g.add_node("ConcatD", name="cat", inputs=[d] * 20, outputs=[d])
    attrs = {a.name: a for a in node_of(parse_onnx(dump_text(g, "onnx", 1)), "cat").attribute}
    assert "input_desc_0" in attrs and "input_desc_dtype:0" not in attrs
    assert b'"dtype": "DT_FLOAT"' in attrs["input_desc_19"].s


def test_onnx_subgraphs_become_extra_nodes():
    g = Graph("root")
    d = TensorDesc.of(DataType.DT_FLOAT, [1])
    p = g.add_node("PartitionedCall", name="call", inputs=[d], outputs=[d])
    sub = Graph("call_body")
    sub.add_node("Data", name="arg", attrs={"index": 0}, inputs=[d], outputs=[d])
    g.add_subgraph(sub, parent_node=p)
    model = parse_onnx(dump_text(g, "onnx", 2))
    extra = node_of(model, "call_body")
    assert extra.op_type == "subgraph" and extra.attribute[0].name == "graph"
    assert extra.attribute[0].g.name == "call_body" and [i.name for i in extra.attribute[0].g.input] == ["arg"]


def test_readable_dump():
    text = dump_text(matmul_add(), "readable", 1)
    assert text.startswith('graph("demo"):\n')
    assert "  %mm : [#users=1] = Node[type=MatMul] (inputs = (x1=%x, x2=%w), attrs = {transpose_x1: false, " \
           "transpose_x2: false})" in text
    assert text.rstrip().endswith("return (%add)")


@pytest.mark.parametrize("name", ["ge_ir", "ge_onnx"])
def test_generated_modules_match_their_proto_files(name, tmp_path):
    """The committed *_pb2.py must be regenerated (scripts/gen_proto.sh) whenever a .proto changes."""
    import importlib
    import importlib.util
    import subprocess
    import sys
    from pathlib import Path

    from google.protobuf import descriptor_pb2

    root = Path(__file__).resolve().parents[1]
    proto = f"gebench/io/proto/{name}.proto"
    committed = descriptor_pb2.FileDescriptorProto()
    importlib.import_module(f"gebench.io.proto.{name}_pb2").DESCRIPTOR.CopyToProto(committed)
    if importlib.util.find_spec("grpc_tools") is not None:
        out = tmp_path / "set.pb"
        subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"--proto_path={root}",
                        f"--descriptor_set_out={out}", proto], check=True, cwd=root)
        fresh = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file[0]

        def drop_json_names(messages):  # protoc adds json_name; the embedded descriptor leaves it out
            for message in messages:
                for field in message.field:
                    field.ClearField("json_name")
                drop_json_names(message.nested_type)

        drop_json_names(fresh.message_type)
        assert fresh == committed
    else:  # without protoc: at least every message of the .proto is in the module
        declared = re.findall(r"^message (\w+)", (root / proto).read_text(), re.MULTILINE)
        assert declared == [m.name for m in committed.message_type]
