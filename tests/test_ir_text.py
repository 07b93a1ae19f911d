"""The text form: golden output and exact round trips."""

import numpy as np
import pytest

from gebench.ir import DataType, Format, Graph, TensorDesc, TensorValue, TextFormError, parse_text, to_text

GOLDEN = """\
graph main
  #0 input_0 = Data(x=- as DT_FLOAT[2,2]) {index=0} -> (y: DT_FLOAT[2,2])
  #1 Const_0 = Const() {value=tensor(DT_FLOAT[2,2], [0.1, 0.1, 0.1, 0.1])} -> (y: DT_FLOAT[2,2])
  #2 MatMul_0 = MatMul(x1=input_0:0, x2=Const_0:0, bias=-) {transpose_x1=false, transpose_x2=false} -> (y: DT_FLOAT[2,2])
  #3 Add_0 = Add(x1=MatMul_0:0, x2=Const_0:0) -> (y: DT_FLOAT[2,2])
  #4 NetOutput_main = NetOutput(Add_0:0) ^[MatMul_0]
"""


def _build() -> Graph:
    g = Graph("main")
    d = TensorDesc.of(DataType.DT_FLOAT, [2, 2])
    x = g.add_node("Data", name="input_0", attrs={"index": 0}, inputs=[d], outputs=[d],
                   input_names=["x"], output_names=["y"])
    c = g.add_node("Const", attrs={"value": TensorValue.from_list([0.1] * 4, DataType.DT_FLOAT, [2, 2])},
                   outputs=[d], output_names=["y"])
    m = g.add_node("MatMul", attrs={"transpose_x1": False, "transpose_x2": False},
                   inputs=[d, d, TensorDesc.placeholder()], outputs=[d],
                   input_names=["x1", "x2", "bias"], output_names=["y"])
    a = g.add_node("Add", inputs=[d, d], outputs=[d], input_names=["x1", "x2"], output_names=["y"])
    n = g.add_node("NetOutput", name="NetOutput_main", inputs=[d])
    g.add_edge(x, 0, m, 0)
    g.add_edge(c, 0, m, 1)
    g.add_edge(m, 0, a, 0)
    g.add_edge(c, 0, a, 1)
    g.add_edge(a, 0, n, 0)
    g.add_control_edge(m, n)
    return g


def test_golden_text():
    assert to_text(_build()) == GOLDEN


def test_parse_gives_back_the_same_graph():
    g = parse_text(GOLDEN)
    g.verify()
    assert to_text(g) == GOLDEN
    m = g.node_by_name("MatMul_0")
    assert m.id == 2 and g.producer(m, 1)[0].name == "Const_0"
    assert m.inputs[2].is_placeholder


def test_round_trip_of_every_attr_kind_and_desc_field():
    g = Graph("odd graph")
    g.attrs["note"] = "x"
    desc = TensorDesc(dtype=DataType.DT_FLOAT16, shape=(1, 3, -1, 4), format=Format.FORMAT_NC1HWC0,
                      origin_format=Format.FORMAT_NCHW, origin_shape=(1, 3, -1, 4), origin_dtype=DataType.DT_FLOAT,
                      attrs={"_mark": 3})
    big = TensorValue(DataType.DT_FLOAT, np.linspace(-1, 1, 50, dtype=np.float32).reshape(5, 10))
    n = g.add_node("Weird/Op:1", name="n:1", outputs=[desc], attrs={
        "i": -3, "f": 1e-5, "f2": float("inf"), "b": True, "s": 'quote " and \\', "dt": DataType.DT_BF16,
        "li": [1, -2], "lf": [0.5, 2.0], "lb": [True, False], "ls": ["a", "b c"], "lli": [[1], [2, 3]],
        "empty": [], "t": big, "scalar": TensorValue.from_list(7, DataType.DT_INT64),
        "h": TensorValue.from_list([0.1, 65504.0], DataType.DT_FLOAT16), "bytes": b"\x00\x01",
        "d": TensorDesc.of(DataType.DT_INT8, [3]),
    })
    n.provenance = "SomePass"
    m = g.add_node("Relu", inputs=[TensorDesc.of(DataType.DT_FLOAT, [1])], outputs=1)
    g.add_edge(n, 0, m, 0)
    text = to_text(g)
    back = parse_text(text)
    back.verify()
    assert to_text(back) == text
    attrs = back.node_by_name("n:1").attrs
    assert attrs["t"] == big and attrs["s"] == 'quote " and \\' and attrs["dt"] is DataType.DT_BF16
    assert attrs["f"] == 1e-5 and attrs["lli"] == [[1], [2, 3]] and attrs["bytes"] == b"\x00\x01"
    assert back.node_by_name("n:1").outputs[0] == desc


@pytest.mark.parametrize("text, where", [
    ("  #0 a = Relu()\n", "before the 'graph' header"),
    ("graph g\n  #0 a = Relu(b:0)\n", "unknown node 'b'"),
    ("graph g\n  #x a = Relu()\n", "expected a node id"),
    ("graph g\n  #0 a = Relu() -> (DT_NOPE[1])\n", "unknown data type"),
    ("graph g\n  #0 a = Relu() junk\n", "line 2"),
])
def test_parse_errors_name_the_line(text, where):
    with pytest.raises(TextFormError, match=where):
        parse_text(text)
