"""Synthetic graphs shaped like transformer exports, for benchmarks and tests of the drawing code."""

from __future__ import annotations

from gebench import ir

__all__ = ["transformer_like"]


def transformer_like(target_nodes: int, *, hidden: int = 64, seq: int = 16) -> ir.Graph:
    """A chain of residual blocks (MatMul + Add with Const weights, Relu, residual Add) of about
    ``target_nodes`` nodes, ending in a NetOutput. Deterministic; O(target_nodes)."""
    g = ir.Graph(f"transformer_like_{target_nodes}")
    act = ir.TensorDesc.of(ir.DataType.DT_FLOAT, (seq, hidden))
    w_desc = ir.TensorDesc.of(ir.DataType.DT_FLOAT, (hidden, hidden))
    b_desc = ir.TensorDesc.of(ir.DataType.DT_FLOAT, (hidden,))
    x = g.add_node("Data", name="input", attrs={"index": 0}, outputs=[act])
    cur = x
    k = 0
    while len(g) < target_nodes - 1:
        w = g.add_node("Const", name=f"blk{k}/w", outputs=[w_desc])
        b = g.add_node("Const", name=f"blk{k}/b", outputs=[b_desc])
        mm = g.add_node("MatMul", name=f"blk{k}/matmul", inputs=[act, w_desc], outputs=[act])
        add = g.add_node("Add", name=f"blk{k}/bias", inputs=[act, b_desc], outputs=[act])
        relu = g.add_node("Relu", name=f"blk{k}/relu", inputs=[act], outputs=[act])
        res = g.add_node("Add", name=f"blk{k}/residual", inputs=[act, act], outputs=[act])
        g.add_edge(cur, 0, mm, 0)
        g.add_edge(w, 0, mm, 1)
        g.add_edge(mm, 0, add, 0)
        g.add_edge(b, 0, add, 1)
        g.add_edge(add, 0, relu, 0)
        g.add_edge(relu, 0, res, 0)
        g.add_edge(cur, 0, res, 1)
        cur = res
        k += 1
    out = g.add_node("NetOutput", name="NetOutput", inputs=[act])
    g.add_edge(cur, 0, out, 0)
    return g
