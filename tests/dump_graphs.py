"""Small IR graphs shared by the GE dump tests."""

from gebench.ir import DataType, Graph, TensorDesc, TensorValue


def matmul_add() -> Graph:
    """x[2,2] @ w[2,2] + b[2]: MatMul (bias unfed) + Add with two Consts, NetOutput and one control edge."""
    g = Graph("demo")
    d22 = TensorDesc.of(DataType.DT_FLOAT, [2, 2])
    d2 = TensorDesc.of(DataType.DT_FLOAT, [2])
    x = g.add_node("Data", name="x", attrs={"index": 0}, inputs=[d22], outputs=[d22],
                   input_names=["x"], output_names=["y"])
    w = g.add_node("Const", name="w", attrs={"value": TensorValue.from_list([1.0, 2.0, 3.0, 4.0], DataType.DT_FLOAT,
                                                                           [2, 2])},
                   outputs=[d22], output_names=["y"])
    b = g.add_node("Const", name="b", attrs={"value": TensorValue.from_list([1.0, 2.0], DataType.DT_FLOAT)},
                   outputs=[d2], output_names=["y"])
    mm = g.add_node("MatMul", name="mm", attrs={"transpose_x1": False, "transpose_x2": False},
                    inputs=[d22, d22, TensorDesc.placeholder()], outputs=[d22],
                    input_names=["x1", "x2", "bias"], output_names=["y"])
    add = g.add_node("Add", name="add", inputs=[d22, d2], outputs=[d22], input_names=["x1", "x2"],
                     output_names=["y"])
    out = g.add_node("NetOutput", name="Node_Output", inputs=[d22])
    g.add_edge(x, 0, mm, 0)
    g.add_edge(w, 0, mm, 1)
    g.add_edge(mm, 0, add, 0)
    g.add_edge(b, 0, add, 1)
    g.add_edge(add, 0, out, 0)
    g.add_control_edge(x, add)
    return g
