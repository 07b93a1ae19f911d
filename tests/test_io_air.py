"""AIR files: binary ge.proto.ModelDef written and read back."""

import numpy as np
import pytest

from gebench.io import GeDumpError, load_air, load_ge_dump, save_air
from gebench.io.proto import ge_ir_pb2
from gebench.ir import DataType, Graph, TensorDesc, TensorValue, to_text


def small_graph() -> Graph:
    g = Graph("air_demo")
    d = TensorDesc.of(DataType.DT_FLOAT, [2, 3])
    x = g.add_node("Data", name="x", attrs={"index": 0}, inputs=[d], outputs=[d], input_names=["x"],
                   output_names=["y"])
    c = g.add_node("Const", name="c", attrs={"value": TensorValue(DataType.DT_FLOAT,
                                                                  np.arange(6, dtype=np.float32).reshape(2, 3))},
                   outputs=[d], output_names=["y"])
    add = g.add_node("Add", name="add", inputs=[d, d], outputs=[d], input_names=["x1", "x2"], output_names=["y"])
    out = g.add_node("NetOutput", name="Node_Output", inputs=[d])
    g.add_edge(x, 0, add, 0)
    g.add_edge(c, 0, add, 1)
    g.add_edge(add, 0, out, 0)
    sub = Graph("body")
    sub.add_node("Data", name="arg", attrs={"index": 0, "_parent_node_index": 0}, inputs=[d], outputs=[d])
    g.add_subgraph(sub, parent_node=add)
    return g


def test_air_round_trip(tmp_path):
    g = small_graph()
    path = save_air(g, tmp_path / "out" / "model.air")
    assert path.is_file() and not list(path.parent.glob("*.part"))
    back = load_air(path)
    back.verify()
    assert to_text(back) == to_text(g)
    assert to_text(load_ge_dump(path)) == to_text(g)  # load_ge_dump recognises binary content too


def test_air_is_a_binary_modeldef_with_weights(tmp_path):
    path = save_air(small_graph(), tmp_path / "model.air")
    model = ge_ir_pb2.ModelDef()
    model.ParseFromString(path.read_bytes())
    assert model.name == "air_demo" and [gr.name for gr in model.graph] == ["air_demo", "body"]
    ops = {o.name: o for o in model.graph[0].op}
    assert ops["c"].attr["value"].t.data == np.arange(6, dtype="<f4").tobytes()
    assert list(ops["add"].input) == ["x:0", "c:0"] and list(ops["add"].subgraph_name) == ["body"]
    assert "_src_out_peer_index_for_ge_txt_load" not in ops["add"].attr  # dump-only attr
    assert "GraphOptions" not in model.graph[0].attr
    assert model.attr["target_type"].s == b"MINI"


def test_truncated_air_is_a_clear_error(tmp_path):
    path = save_air(small_graph(), tmp_path / "model.air")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(GeDumpError, match="model.air"):
        load_air(path)
    with pytest.raises(GeDumpError, match="cannot read AIR"):
        load_air(tmp_path / "nope.air")


def test_binary_modeldef_that_starts_like_text_still_loads(tmp_path):
    g = small_graph()
    g.name = "a" * 97  # ModelDef.name comes first: b"\\na" + name, which looks like a text field name
    path = save_air(g, tmp_path / "odd.air")
    assert path.read_bytes()[:2] == b"\na"
    assert to_text(load_ge_dump(path)) == to_text(g)


def test_ge_graph_views_are_accepted(tmp_path):
    import gebench
    from gebench.io import write_dumps

    run = gebench.compile(small_graph(), passes=[])
    snapshot = run.snapshots["PreRunBegin"]  # a ge.graph.Graph view
    assert to_text(load_air(save_air(snapshot, tmp_path / "s.air"))) == to_text(run.ir_snapshots["PreRunBegin"])
    (path,) = write_dumps({"PreRunBegin": snapshot}, tmp_path, formats=["ge_proto"])
    assert to_text(load_ge_dump(path)) == to_text(run.ir_snapshots["PreRunBegin"])
    with pytest.raises(TypeError, match="expected an ir.Graph"):
        save_air("not a graph", tmp_path / "x.air")
