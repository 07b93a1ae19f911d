"""Property tests: random mutation sequences keep every IR invariant (``verify()``) true."""

from hypothesis import given, settings
from hypothesis import strategies as st

from gebench.ir import Graph, GraphError, parse_text, to_text
from ir_mutations import STRUCTURAL, mutate

OPS = st.sampled_from([*STRUCTURAL, "copy"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(OPS, st.integers(0, 10_000), st.integers(0, 10_000), st.integers(0, 3)),
                min_size=1, max_size=60))
def test_random_mutations_keep_invariants(steps):
    g = Graph("prop")
    for op, a, b, port in steps:
        try:
            if op == "copy":
                g = g.copy()
            else:
                mutate(g, op, a, b, port)
        except GraphError:
            pass  # refused mutations (cycles, taken names, fed inputs) must leave a valid graph
        g.verify()
    assert to_text(parse_text(to_text(g))) == to_text(g)
