"""k-hop focus, search and graph diffs."""

from __future__ import annotations

from gebench import ir, viz
from gebench.viz._synthetic import transformer_like

CHAIN = """graph g
  #0 x = Data() {index=0} -> (DT_FLOAT[4])
  #1 a = Relu(x:0) -> (DT_FLOAT[4])
  #2 b = Relu(a:0) -> (DT_FLOAT[4])
  #3 c = Relu(b:0) -> (DT_FLOAT[4])
  #4 d = Relu(c:0) -> (DT_FLOAT[4])
  #5 out = NetOutput(d:0)
"""


def test_k_hop_walks_both_directions():
    g = ir.parse_text(CHAIN)
    assert viz.k_hop(g, [2], k=1) == {1, 2, 3}
    assert viz.k_hop(g, [2], k=2) == {0, 1, 2, 3, 4}
    assert viz.k_hop(g, [2, 999], k=0) == {2}


def test_k_hop_respects_the_cap_and_keeps_seeds():
    g = transformer_like(2000)
    ids = viz.k_hop(g, [g.node_by_name("blk10/relu").id], k=50, max_nodes=40)
    assert len(ids) == 40
    assert g.node_by_name("blk10/relu").id in ids


def test_search_by_name_and_op_type():
    g = ir.parse_text(CHAIN)
    assert [n.name for n in viz.search_nodes(g, "relu")] == ["a", "b", "c", "d"]
    assert [n.name for n in viz.search_nodes(g, "c")][0] == "c"
    assert viz.search_nodes(g, "  ") == []


def test_diff_finds_removed_added_and_changed():
    before = ir.parse_text(CHAIN)
    after = before.copy()
    b = after.node_by_name("b")
    c = after.node_by_name("c")
    a = after.node_by_name("a")
    after.remove_node(b)
    new = after.add_node("Sigmoid", name="s", inputs=1, outputs=1)
    after.add_edge(a, 0, new, 0)
    after.add_edge(new, 0, c, 0)
    after.node_by_name("d").attrs["alpha"] = 0.5
    diff = viz.diff_graphs(before, after)
    assert diff.removed == [2]
    assert diff.added == [new.id]
    assert diff.changed == {3: "inputs rewired", 4: "attrs alpha"}
    assert "-1 removed, +1 added, ~2 changed" == diff.summary()
    assert not diff.empty
    assert viz.diff_graphs(before, before.copy()).empty
    # diffs never mutate
    assert ir.to_text(before) == CHAIN
