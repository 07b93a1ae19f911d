"""Property tests: random mutation sequences keep every IR invariant (``verify()``) true."""

from hypothesis import given, settings
from hypothesis import strategies as st

from gebench.ir import Graph, GraphError, parse_text, to_text

OPS = st.sampled_from(["add_node", "add_edge", "remove_edge", "remove_node", "add_control", "remove_control",
                       "replace_uses", "rename", "retype", "copy", "place"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(OPS, st.integers(0, 10_000), st.integers(0, 10_000), st.integers(0, 3)),
                min_size=1, max_size=60))
def test_random_mutations_keep_invariants(steps):
    g = Graph("prop")
    for op, a, b, port in steps:
        nodes = g.nodes()
        try:
            if op == "add_node" or not nodes:
                g.add_node(f"Op{a % 3}", inputs=1 + port % 3, outputs=1 + port % 2)
            elif op == "add_edge":
                src, dst = nodes[a % len(nodes)], nodes[b % len(nodes)]
                g.add_edge(src, port % len(src.outputs), dst, port % len(dst.inputs))
            elif op == "remove_edge":
                edges = g.data_edges()
                if edges:
                    g.remove_edge(*edges[a % len(edges)])
            elif op == "remove_node":
                g.remove_node(nodes[a % len(nodes)])
            elif op == "add_control":
                g.add_control_edge(nodes[a % len(nodes)], nodes[b % len(nodes)])
            elif op == "remove_control":
                edges = g.control_edges()
                if edges:
                    g.remove_control_edge(*edges[a % len(edges)])
            elif op == "replace_uses":
                src, dst = nodes[a % len(nodes)], nodes[b % len(nodes)]
                g.replace_all_uses(src, 0, dst, 0)
            elif op == "rename":
                g.rename(nodes[a % len(nodes)], f"n{b}")
            elif op == "retype":
                g.set_op_type(nodes[a % len(nodes)], f"Op{b % 4}")
            elif op == "copy":
                g = g.copy()
            elif op == "place":
                new = g.add_node("Placed", inputs=1, outputs=1)
                g.place_between([new], after=[nodes[a % len(nodes)]], before=[nodes[b % len(nodes)]])
        except GraphError:
            pass  # refused mutations (cycles, taken names, fed inputs) must leave a valid graph
        g.verify()
    assert to_text(parse_text(to_text(g))) == to_text(g)
