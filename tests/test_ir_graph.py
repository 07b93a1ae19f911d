"""Unit tests of the IR graph: anchors, edges, indexes, topological positions, copy and verify."""

import copy
import gc
import pickle

import networkx as nx
import pytest

from gebench.ir import (
    CONTROL_PORT,
    NO_INPUTS,
    CycleError,
    DataType,
    Graph,
    GraphError,
    StagedGraph,
    TensorDesc,
    TensorValue,
    collector_paused,
    first_difference,
    to_text,
)
from gebench.ir._graph import _STAGED_TABLES
from gebench.ir._node import NO_SUBGRAPHS
from gebench.ir._uses import LIST_MAX, drop_use, uses_of
from gebench.ops import make_node


def _chain(n: int = 3) -> tuple[Graph, list]:
    g = Graph("chain")
    data = g.add_node("Data", name="input_0", attrs={"index": 0}, inputs=1, outputs=1)
    nodes = [data]
    for _ in range(n):
        nxt = g.add_node("Relu", inputs=1, outputs=1)
        g.add_edge(nodes[-1], 0, nxt, 0)
        nodes.append(nxt)
    return g, nodes


def test_names_are_unique_and_generated_per_type():
    g = Graph("g")
    a = g.add_node("Relu", inputs=1, outputs=1)
    b = g.add_node("Relu", inputs=1, outputs=1)
    assert (a.name, b.name) == ("Relu_0", "Relu_1")
    with pytest.raises(GraphError, match="already has a node named 'Relu_0'"):
        g.add_node("Add", name="Relu_0")


def test_ids_are_never_reused():
    g = Graph("g")
    a = g.add_node("Relu")
    g.remove_node(a)
    b = g.add_node("Relu")
    assert b.id != a.id
    assert not a.alive
    with pytest.raises(GraphError, match="removed"):
        _ = a.graph


def test_producer_and_use_lists_follow_edges():
    g, (d, r0, r1, r2) = _chain()
    assert g.producer(r1, 0) == (r0, 0)
    assert g.uses(r0, 0) == [(r1, 0)]
    extra = g.add_node("Add", inputs=2, outputs=1)
    g.add_edge(r0, 0, extra, 0)
    g.add_edge(d, 0, extra, 1)
    assert g.uses(r0, 0) == [(r1, 0), (extra, 0)]
    g.remove_edge(r0, 0, extra, 0)
    assert g.uses(r0, 0) == [(r1, 0)]
    assert g.producer(extra, 0) is None
    g.verify()


def test_a_port_keeps_its_uses_in_edge_order_past_the_list_limit_and_back():
    # a port's uses start as a list and become a dict past LIST_MAX; order, removal, copies, journals and
    # verify() behave the same on both sides of the switch
    g = Graph("fan")
    src = g.add_node("Data", name="input_0", attrs={"index": 0}, inputs=1, outputs=1)
    consumers = [g.add_node("Relu", inputs=1, outputs=1) for _ in range(LIST_MAX + 5)]
    for c in consumers[:LIST_MAX]:
        g.add_edge(src, 0, c, 0)
    assert type(g.output_uses(src)[0]) is list
    before = g.copy()
    snap = g.copy(share=True)
    for c in consumers[LIST_MAX:]:
        g.add_edge(src, 0, c, 0)
    assert type(g.output_uses(src)[0]) is dict
    assert [c for c, _ in g.uses(src, 0)] == consumers
    g.remove_edge(src, 0, consumers[3], 0)
    g.remove_node(consumers[LIST_MAX + 1])
    kept = [c for i, c in enumerate(consumers) if i not in (3, LIST_MAX + 1)]
    assert [c for c, _ in g.uses(src, 0)] == kept
    g.add_edge(src, 0, consumers[3], 0)  # a use added again goes last
    assert [c.id for c, _ in g.uses(src, 0)] == [c.id for c in kept] + [consumers[3].id]
    g.verify()
    # the copies taken while the port was a list did not see any of it
    for other in (before, snap):
        assert len(other.uses(other.node(src.id), 0)) == LIST_MAX
        assert type(other.output_uses(other.node(src.id))[0]) is list
        other.verify()
    with pytest.raises(KeyError):
        drop_use([(1, 0)], (2, 0))
    with pytest.raises(KeyError):
        drop_use({(1, 0): None}, (2, 0))
    assert uses_of([(1, 0)]) == [(1, 0)]
    assert type(uses_of((i, 0) for i in range(LIST_MAX + 1))) is dict


def test_nodes_without_inputs_share_one_empty_inputs_list_that_nothing_changes_in_place():
    g = Graph("consts")
    a = g.add_node_trusted("Const", "a", {"value": TensorValue.from_list([1.0], DataType.DT_FLOAT)}, NO_INPUTS,
                           [TensorDesc()], [], ["y"])
    b = g.add_node_trusted("Const", "b", {"value": TensorValue.from_list([2.0], DataType.DT_FLOAT)}, NO_INPUTS,
                           [TensorDesc()], [], ["y"])
    assert a.inputs is b.inputs is NO_INPUTS
    copy = g.copy(share=True)
    journal = g.journal()
    port = g.add_input_anchor(a, TensorDesc(shape=(3,)), "x")  # a new list for a, the shared one stays empty
    assert port == 0 and a.inputs is not NO_INPUTS and not NO_INPUTS and b.inputs is NO_INPUTS
    relu = g.add_node("Relu", inputs=1, outputs=1)
    g.add_edge(relu, 0, a, 0)
    assert g.producer(a, 0) == (relu, 0) and g.input_sources(b) == []
    g.verify()
    copy.verify()
    assert copy.node(a.id).inputs == [] and copy.input_sources(copy.node(a.id)) == []
    before = journal.materialize()
    assert before.node(a.id).inputs == [] and before.input_sources(before.node(a.id)) == []
    NO_INPUTS.append(TensorDesc())  # what no code may do
    try:
        with pytest.raises(GraphError, match="shared empty list"):
            g.verify()
    finally:
        NO_INPUTS.clear()


def test_an_input_has_at_most_one_producer():
    g, (d, r0, r1, _r2) = _chain()
    with pytest.raises(GraphError, match="already fed by Relu_0:0"):
        g.add_edge(d, 0, r1, 0)


def test_bad_ports_name_the_node():
    g, (d, r0, _r1, _r2) = _chain()
    with pytest.raises(GraphError, match="'Relu_0' \\(Relu\\) has no input 3"):
        g.producer(r0, 3)
    with pytest.raises(GraphError, match="has no output 2"):
        g.add_edge(d, 2, r0, 0)


def test_cycle_is_refused_and_graph_unchanged():
    g, (_d, r0, _r1, r2) = _chain()
    extra = g.add_node("Add", inputs=2, outputs=1)
    before = repr(g)
    g.add_edge(r2, 0, extra, 0)
    g.remove_edge(r2, 0, extra, 0)
    assert repr(g) == before
    with pytest.raises(CycleError, match="would close a cycle"):
        g.add_control_edge(r2, r0)
    with pytest.raises(CycleError, match="to itself"):
        g.add_control_edge(extra, extra)
    assert repr(g) == before
    g.verify()


def test_positions_reorder_when_an_edge_points_backwards():
    g = Graph("g")
    late = g.add_node("Relu", inputs=1, outputs=1)
    early = g.add_node("Data", outputs=1)
    assert g.position(late) < g.position(early)
    g.add_edge(early, 0, late, 0)
    assert g.position(early) < g.position(late)
    assert [n.name for n in g.nodes()] == ["Data_0", "Relu_0"]
    g.verify()


def test_op_type_index_tracks_changes():
    g, (_d, r0, r1, _r2) = _chain()
    assert [n.name for n in g.nodes_of_type("Relu")] == ["Relu_0", "Relu_1", "Relu_2"]
    g.set_op_type(r1, "Gelu")
    assert [n.name for n in g.nodes_of_type("Gelu")] == ["Relu_1"]
    g.remove_node(r0)
    assert [n.name for n in g.nodes_of_type("Relu")] == ["Relu_2"]
    g.verify()


def test_replace_all_uses_moves_every_consumer():
    g, (d, r0, r1, _r2) = _chain()
    other = g.add_node("Relu", inputs=1, outputs=1)
    g.add_edge(d, 0, other, 0)
    extra = g.add_node("Abs", inputs=1, outputs=1)
    g.add_edge(r0, 0, extra, 0)
    g.replace_all_uses(r0, 0, other, 0)
    assert g.uses(r0, 0) == []
    assert g.producer(r1, 0) == (other, 0)
    assert g.producer(extra, 0) == (other, 0)
    g.verify()


def test_replace_all_uses_rolls_back_on_cycle():
    g, (_d, r0, r1, r2) = _chain()
    before = repr(g)
    with pytest.raises(CycleError):
        g.replace_all_uses(r0, 0, r2, 0)
    assert repr(g) == before
    g.verify()


def test_remove_node_isolates_it():
    g, (d, r0, r1, _r2) = _chain()
    g.add_control_edge(d, r1)
    g.remove_node(r1)
    assert g.uses(r0, 0) == []
    assert g.control_successors(d) == []
    g.verify()


def test_copy_is_deep_and_independent():
    g, (_d, r0, _r1, _r2) = _chain()
    r0.attrs["value"] = TensorValue.from_list([1, 2], DataType.DT_INT32)
    c = g.copy()
    c.verify()
    assert repr(c) == repr(g)
    with pytest.raises(ValueError, match="read-only"):
        c.node(r0.id).attrs["value"].array[0] = 9  # values are immutable, so copies may share them
    c.remove_node(c.node(r0.id))
    assert r0.alive and int(r0.attrs["value"].array[0]) == 1
    new = c.add_node("Relu")
    assert not g.has_node_id(new.id) or g.node(new.id) is not new
    g.verify()


def test_place_between_puts_new_nodes_in_the_gap():
    g, (d, r0, r1, r2) = _chain()
    new = [g.add_node("Abs", inputs=1, outputs=1) for _ in range(3)]
    g.place_between(new, after=[r0], before=[r1])
    assert g.position(r0) < g.position(new[0]) < g.position(new[1]) < g.position(new[2]) < g.position(r1)
    g.add_edge(r0, 0, new[0], 0)
    g.add_edge(new[0], 0, new[1], 0)
    g.verify()


def test_place_between_survives_exhausted_float_gaps():
    g, (_d, r0, r1, _r2) = _chain()
    after = r0
    for _ in range(80):
        node = g.add_node("Abs", inputs=1, outputs=1)
        g.place_between([node], after=[after], before=[r1])
        after = node
    positions = [g.position(n) for n in g.nodes()]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)
    g.verify()


def test_reaches_any_is_bounded_by_positions():
    g, (d, r0, r1, r2) = _chain()
    assert g.reaches_any([r0], {r2.id})
    assert not g.reaches_any([r2], {r0.id})


def test_contraction_closes_cycle_reads_only_the_sets_successors_when_they_come_after_it(monkeypatch):
    g, (d, r0, r1, r2) = _chain()
    side = g.add_node("Abs", inputs=1, outputs=1)  # r0 -> side, placed last: r0 -> side -> nothing in the set
    g.add_edge(r0, 0, side, 0)
    seen: list[int] = []
    real = type(g)._successor_ids
    monkeypatch.setattr(type(g), "_successor_ids", lambda self, nid: seen.append(nid) or real(self, nid))
    assert g.contraction_closes_cycle([r0, r1]) is False  # r0 -> r1 inside; r1 -> r2, side come after r1
    assert sorted(seen) == sorted([r0.id, r1.id])  # no search: one read per member
    seen.clear()
    assert g.contraction_closes_cycle([r0, r2]) is True  # r0 -> r1 -> r2 leaves the set and comes back
    assert r1.id in seen
    assert g.contraction_closes_cycle([r1]) is False and g.contraction_closes_cycle([]) is False


def test_verify_detects_a_corrupted_index():
    g, (_d, r0, _r1, _r2) = _chain()
    g._by_type["Relu"].pop(r0.id)
    with pytest.raises(GraphError, match="op-type index"):
        g.verify()


def test_anchor_helpers():
    g = Graph("g")
    n = g.add_node("ConcatV2", inputs=[TensorDesc()], input_names=["x0"])
    assert g.add_input_anchor(n, name="x1") == 1
    assert n.input_index("x1") == 1 and n.input_index("nope") == -1
    g.remove_last_input_anchor(n)
    assert n.input_names == ["x0"]
    g.verify()


def test_nodes_share_anchor_name_lists_and_the_graph_never_changes_one_in_place():
    g = Graph("g")
    a = make_node(g, "ConcatV2", dynamic_inputs={"x": 2})
    b = make_node(g, "ConcatV2", dynamic_inputs={"x": 2})
    assert a.input_names is b.input_names  # one list per op layout
    shared = list(a.input_names)
    g.add_input_anchor(a, name="x2")
    g.add_output_anchor(a, name="extra")
    assert a.input_names == [*shared, "x2"] and b.input_names == shared
    assert a.output_names == ["y", "extra"] and b.output_names == ["y"]
    g.remove_last_input_anchor(a)
    assert a.input_names == shared and a.input_names is not b.input_names
    clone = g.copy()
    clone.add_input_anchor(clone.node_by_name(b.name), name="x2")
    assert b.input_names == shared
    body, _ = _chain(1)
    body.name = "body"
    g.add_subgraph(body, parent_node=a)
    assert a.subgraph_names == ["body"] and b.subgraph_names == [] and NO_SUBGRAPHS == []
    g.verify()

def test_subgraphs_are_copied_and_verified():
    g, (_d, r0, _r1, _r2) = _chain()
    body, _ = _chain(1)
    body.name = "body"
    g.add_subgraph(body, parent_node=r0)
    assert r0.subgraph_names == ["body"]
    with pytest.raises(GraphError, match="already has a subgraph"):
        g.add_subgraph(body)
    c = g.copy()
    assert list(c.subgraphs) == ["body"] and c.subgraphs["body"] is not body
    c.verify()
    assert g.remove_subgraph("body") is body


def test_fed_inputs_lists_only_connected_inputs_in_port_order():
    g = Graph("g")
    a = g.add_node("Data", name="a", outputs=2)
    n = g.add_node("Concat", name="n", inputs=3, outputs=1)
    g.add_edge(a, 1, n, 0)
    g.add_edge(a, 0, n, 2)
    assert g.fed_inputs(n) == [(0, a, 1), (2, a, 0)]
    assert g.fed_inputs(a) == []


def test_place_between_never_reuses_a_taken_position():
    g, (d, r0, r1, r2) = _chain()
    new = g.add_node("Abs", inputs=1, outputs=1)
    g.place_between([new], after=[r0], before=[r2])
    assert g.position(new) != g.position(r1)
    g.verify()


# ------------------------------------------------------------------------------------------ staged graphs, adoption
def _build_sequence(g: Graph) -> Graph:
    """Nodes, then edges the way builders add them (trusted, from older to newer nodes)."""
    a = g.add_node("Data", name="a", outputs=1)
    b = g.add_node("Data", name="b", outputs=2)
    c = g.add_node("Add", name="c", inputs=2, outputs=1)
    d = g.add_node("Relu", name="d", inputs=1, outputs=1)
    g.add_edge_trusted(b, 1, c, 1)
    g.add_edge_trusted(a, 0, c, 0)
    g.add_edge_trusted(b, 0, d, 0)
    return g


def _tables(g: Graph) -> tuple:
    view = g.nx_graph
    return (g._producers, g._uses, g._pos, g._taken, g._next_pos, g._n_ctrl, g._ctrl_succ, g._ctrl_pred, g._by_type,
            list(view.edges(keys=True)), {n: list(s) for n, s in view._succ.items()},
            {n: list(p) for n, p in view._pred.items()})


def test_a_staged_graph_builds_its_tables_on_first_read_exactly_as_an_eager_one():
    eager = _build_sequence(Graph("g"))
    lazy = _build_sequence(StagedGraph("g"))
    assert lazy.staged and not eager.staged
    assert not any(attr in vars(lazy) for attr in ("_store", "_producers", "_pos", "_by_type"))
    # the name index, the node table and the staged form answer without building anything
    assert lazy.find("c") is lazy.node_by_name("c") and len(lazy) == 4 and not lazy.has_control_edges
    assert [n.name for n in lazy.nodes_in_creation_order()] == ["a", "b", "c", "d"]
    assert lazy.staged_edges() == [(1, 1, 2, 1), (0, 0, 2, 0), (1, 0, 3, 0)]
    assert lazy.staged
    assert [n.name for n in lazy.nodes()] == [n.name for n in eager.nodes()]  # first read: built here
    assert not lazy.staged and lazy.staged_edges() is None and type(lazy) is Graph
    assert _tables(lazy) == _tables(eager)
    b_lazy, b_eager = lazy.node_by_name("b"), eager.node_by_name("b")
    assert [n.name for n in lazy.successors(b_lazy)] == [n.name for n in eager.successors(b_eager)] == ["d", "c"]
    lazy.verify()
    assert to_text(lazy) == to_text(eager)



@pytest.mark.parametrize("table", sorted(_STAGED_TABLES))
def test_reading_any_table_of_a_staged_graph_builds_them_all(table):
    eager = _build_sequence(Graph("g"))
    lazy = _build_sequence(StagedGraph("g"))
    value = getattr(lazy, table)  # the first read of any one table builds every table
    assert type(lazy) is Graph and not lazy.staged
    if table != "_store":  # the networkx view is built on its own first access, on either graph
        assert value == getattr(eager, table)
    assert _tables(lazy) == _tables(eager)


def test_a_staged_graph_has_no_getattr_hook():
    # a class with __getattr__ loses the interpreter's specialised attribute reads; the tables are descriptors
    assert "__getattr__" not in vars(StagedGraph)
    with pytest.raises(AttributeError, match="no_such_attribute"):
        _ = StagedGraph("g").no_such_attribute

def test_a_backward_edge_or_an_explicit_id_ends_staging_and_keeps_the_graph_right():
    g = StagedGraph("g")
    late = g.add_node("Relu", name="late", inputs=1, outputs=1)
    early = g.add_node("Data", name="early", outputs=1)
    g.add_edge_trusted(early, 0, late, 0)  # newer -> older: the order needs fixing, so the tables are built
    assert type(g) is Graph
    assert not g.staged
    assert g.position(early) < g.position(late)
    g.verify()
    h = StagedGraph("h")
    h.add_node("Data", name="x", outputs=1)
    h.add_node("Data", name="y", outputs=1, node_id=7)
    assert not h.staged and h.next_node_id == 8
    h.verify()


def test_a_staged_graph_survives_removal_control_edges_copies_and_pickling():
    lazy = _build_sequence(StagedGraph("g"))
    lazy.remove_node(lazy.node_by_name("d"))  # removing builds the tables first
    lazy.verify()
    assert [n.name for n in lazy.nodes()] == ["a", "b", "c"]
    other = _build_sequence(StagedGraph("h"))
    other.add_control_edge(other.node_by_name("a"), other.node_by_name("d"))
    other.verify()
    assert other.has_control_edges
    assert [n.name for n in other.control_successors(other.node_by_name("a"))] == ["d"]
    clone = _build_sequence(StagedGraph("k")).copy()
    clone.verify()
    assert len(clone.data_edges()) == 3
    for twin in (copy.deepcopy(_build_sequence(StagedGraph("p"))),
                 pickle.loads(pickle.dumps(_build_sequence(StagedGraph("p"))))):
        assert twin.staged
        twin.verify()
        assert to_text(twin) == to_text(_build_sequence(Graph("p")))


def test_adopt_node_moves_a_node_with_a_fresh_id_and_name():
    src = _build_sequence(StagedGraph("src"))
    dst = Graph("dst")
    dst.add_node("Data", name="x", outputs=1)
    relu = src.node_by_name("d")
    relu.attrs["k"] = 1
    inputs, outputs = relu.inputs, relu.outputs
    moved = dst.adopt_node(relu, "relu_new")
    src.clear()
    assert moved is relu and moved.graph is dst and moved.name == "relu_new" and moved.op_type == "Relu"
    assert moved.inputs is inputs and moved.outputs is outputs and moved.attrs == {"k": 1}
    assert dst.find("relu_new") is moved and dst.nodes_of_type("Relu") == [moved]
    assert dst.producers(moved) == [None] and dst.position(moved) > dst.position(dst.node_by_name("x"))
    dst.add_edge(dst.node_by_name("x"), 0, moved, 0)
    dst.verify()
    assert len(src) == 0 and src.nodes() == [] and src.find("a") is None
    src.verify()
    src.add_node("Relu", name="a", inputs=1, outputs=1)  # a cleared graph is usable again
    src.verify()


def test_adopt_node_refuses_a_taken_name():
    src = _build_sequence(Graph("src"))
    dst = Graph("dst")
    dst.add_node("Relu", name="d", inputs=1, outputs=1)
    with pytest.raises(GraphError, match="already has a node named 'd'"):
        dst.adopt_node(src.node_by_name("d"), "d")


def test_input_sources_are_producer_ids_and_ports():
    g = _build_sequence(Graph("g"))
    a, b, c = (g.node_by_name(n) for n in "abc")
    assert g.input_sources(c) == [(a.id, 0), (b.id, 1)]
    assert g.input_sources(a) == []


def test_nodes_from_id_lists_the_nodes_created_since_an_id():
    g = _build_sequence(Graph("g"))
    start = g.next_node_id
    e = g.add_node("Relu", name="e", inputs=1, outputs=1)
    f = g.add_node("Relu", name="f", inputs=1, outputs=1)
    g.remove_node(e)
    assert g.nodes_from_id(start) == [f] and g.next_node_id == f.id + 1
    assert [n.name for n in g.nodes_from_id(0)] == ["a", "b", "c", "d", "f"]


# ------------------------------------------------------------------------------------------ networkx view
def _view_edges(g: Graph) -> set[tuple[str, str, tuple[int, int]]]:
    view = g.nx_graph
    return {(g.node(u).name, g.node(v).name, k) for u, v, k in view.edges(keys=True)}


def test_the_networkx_view_is_built_on_first_access_and_kept_current_by_every_mutation():
    g, (d, r0, r1, r2) = _chain()
    assert g._store is None  # nothing asked for it yet: mutations do not pay for it
    view = g.nx_graph
    assert isinstance(view, nx.MultiDiGraph) and list(view.nodes) == [d.id, r0.id, r1.id, r2.id]
    assert _view_edges(g) == {("input_0", "Relu_0", (0, 0)), ("Relu_0", "Relu_1", (0, 0)),
                              ("Relu_1", "Relu_2", (0, 0))}
    assert list(nx.topological_sort(view)) == [n.id for n in g.nodes()]
    add = g.add_node("Add", name="add", inputs=2, outputs=1)
    g.add_edge(d, 0, add, 0)
    g.add_edge(r2, 0, add, 1)
    g.add_control_edge(r0, add)
    g.remove_edge(r1, 0, r2, 0)
    g.remove_node(r1)
    assert g.nx_graph is view  # the same object, changed in place
    assert _view_edges(g) == {("input_0", "Relu_0", (0, 0)), ("input_0", "add", (0, 0)), ("Relu_2", "add", (0, 1)),
                              ("Relu_0", "add", (CONTROL_PORT, CONTROL_PORT))}
    assert set(view.nodes) == {d.id, r0.id, r2.id, add.id}
    g.verify()
    g.remove_control_edge(r0, add)
    g.remove_node(add)
    assert _view_edges(g) == {("input_0", "Relu_0", (0, 0))}
    g.verify()
    clone = g.copy()
    assert clone._store is None and _view_edges(clone) == _view_edges(g)


def test_verify_catches_a_networkx_view_changed_behind_the_graphs_back():
    g, (d, r0, _r1, _r2) = _chain()
    g.nx_graph.add_edge(r0.id, d.id, key=(0, 0))
    with pytest.raises(GraphError, match="networkx view and the edge tables disagree"):
        g.verify()


def test_control_edges_are_kept_in_their_own_tables():
    g, (d, r0, r1, r2) = _chain()
    g.add_control_edge(d, r2)
    g.add_control_edge(d, r1)
    g.add_control_edge(d, r2)  # idempotent
    g.add_control_edge(r0, r2)
    assert [n.name for n in g.control_successors(d)] == ["Relu_2", "Relu_1"]
    assert [n.name for n in g.control_predecessors(r2)] == ["input_0", "Relu_0"]
    assert g.has_control_edge(d, r1) and not g.has_control_edge(r1, d)
    # a data consumer that is also a control successor is listed once, data first
    assert [n.name for n in g.successors(d)] == ["Relu_0", "Relu_2", "Relu_1"]
    assert [n.name for n in g.predecessors(r2)] == ["Relu_1", "input_0", "Relu_0"]
    with pytest.raises(CycleError, match="would close a cycle"):
        g.add_control_edge(r2, d)
    g.remove_node(r2)
    assert [n.name for n in g.control_successors(d)] == ["Relu_1"] and g.control_predecessors(r1) == [d]
    assert g.has_control_edges
    g.remove_control_edge(d, r1)
    assert not g.has_control_edges and g.control_edges() == []
    with pytest.raises(GraphError, match="no control edge input_0 -> Relu_1"):
        g.remove_control_edge(d, r1)
    g.verify()
    g._ctrl_succ[d.id] = {r1.id: None}  # one side only: verify names the broken table pair
    with pytest.raises(GraphError, match="control successor and predecessor tables disagree"):
        g.verify()


def test_collector_paused_restores_the_collectors_state_also_after_an_error():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block leaves the outer pause alone
    assert gc.isenabled()
    with pytest.raises(GraphError), collector_paused():
        raise GraphError("boom")
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # a collector that was off stays off
    finally:
        gc.enable()


def test_collector_paused_moves_what_the_block_built_to_the_oldest_generation_without_a_young_pass():
    """Counted: the block's objects end in generation 2 and no young collection scanned them on the way."""
    gc.collect()
    young_passes = gc.get_stats()[0]["collections"] + gc.get_stats()[1]["collections"]
    with collector_paused():
        built = [{"i": [i]} for i in range(5000)]
    assert gc.get_stats()[0]["collections"] + gc.get_stats()[1]["collections"] == young_passes
    marker = built[-1]
    assert any(o is marker for o in gc.get_objects(generation=2))
    assert gc.get_count()[0] < 100  # the young generation was emptied


def test_collector_paused_leaves_objects_an_application_froze_frozen():
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with collector_paused():
            _ = [{"i": [i]} for i in range(100)]
        assert gc.get_freeze_count() == frozen  # not unfrozen behind the application's back
    finally:
        gc.unfreeze()


def test_full_collections_deferred_raises_the_third_threshold_and_restores_it_also_after_an_error():
    from gebench.ir import full_collections_deferred

    before = gc.get_threshold()
    with full_collections_deferred():
        inside = gc.get_threshold()
        assert inside[0] == before[0] and inside[1] > 10**6 and inside[2] > 10**6  # young passes as usual
        with full_collections_deferred():
            assert gc.get_threshold() == inside
        assert gc.get_threshold() == inside  # the inner block leaves the outer one alone
        gc.set_threshold(500, 5, 5)  # code inside the block changing them
    assert gc.get_threshold() == before
    with pytest.raises(GraphError), full_collections_deferred():
        raise GraphError("boom")
    assert gc.get_threshold() == before


def test_full_collections_deferred_promotes_what_survives_young_passes_without_middle_passes():
    """Counted: objects kept across many young passes reach the oldest generation, no middle pass runs, and
    garbage cycles that die young are still freed by the young passes."""
    from gebench.ir import full_collections_deferred

    class Cycle:
        def __init__(self) -> None:
            self.me = self

    gc.collect()
    stats = gc.get_stats()
    callbacks = list(gc.callbacks)
    with full_collections_deferred():
        kept = [[i] for i in range(50_000)]  # many young passes
        for _ in range(20_000):
            Cycle()  # garbage cycles dying young
        young_after = gc.get_stats()[0]["collections"]
        assert gc.get_stats()[1]["collections"] == stats[1]["collections"]
        assert young_after - stats[0]["collections"] >= 20
    assert gc.get_stats()[0]["collected"] > stats[0]["collected"]  # the cycles were freed while the block ran
    assert any(o is kept[0] for o in gc.get_objects(generation=2))
    assert gc.callbacks == callbacks  # the promoting callback is gone with the block


def test_full_collections_deferred_keeps_middle_passes_when_objects_are_frozen():
    from gebench.ir import full_collections_deferred

    gc.freeze()
    try:
        before = gc.get_threshold()
        with full_collections_deferred():
            assert gc.get_threshold()[:2] == before[:2]
    finally:
        gc.unfreeze()


def test_a_compile_on_a_large_graph_starts_no_full_collection(tmp_path, monkeypatch):
    """Counted, not timed: the collector's own statistics show no generation-2 pass inside the run, where the
    same run with the collector neither paused nor its full passes deferred starts some."""
    import contextlib

    import gebench
    from gebench import ir as gebench_ir

    def big() -> Graph:
        b = Graph("big")
        prev = b.add_node("Data", name="x", outputs=1, attrs={"index": 0})
        for i in range(30_000):
            node = b.add_node("Relu", name=f"r{i}", inputs=1, outputs=1)
            b.add_edge(prev, 0, node, 0)
            prev = node
        return b

    passes = tmp_path / "p.py"
    passes.write_text("from ge.passes import PassStage, FusionBasePass, register_fusion_pass\n\n"
                      "@register_fusion_pass(name='Touch', stage=PassStage.BEFORE_INFER_SHAPE)\n"
                      "class Touch(FusionBasePass):\n"
                      "    def run(self, graph, context):\n"
                      "        for node in graph.get_direct_nodes():\n"
                      "            node.set_attr('mark', [1, 2])\n"
                      "        return True\n")

    def full_passes_during_compile() -> int:
        graph = big()
        gc.collect()
        before = gc.get_stats()[2]["collections"]
        run = gebench.compile(graph, passes=[str(passes)], snapshots=False)
        assert run.ok, run.failure_reason
        return gc.get_stats()[2]["collections"] - before

    assert full_passes_during_compile() == 0
    monkeypatch.setattr(gebench_ir, "collector_paused", contextlib.nullcontext)
    assert full_passes_during_compile() == 0  # the deferral alone keeps them out too (a collector on during a run)
    monkeypatch.setattr(gebench_ir, "full_collections_deferred", contextlib.nullcontext)
    assert full_passes_during_compile() > 0  # what the two save


def _chain_for_sharing() -> Graph:
    g = Graph("shared")
    x = g.add_node("Data", name="x", outputs=1, attrs={"index": 0})
    g.touch(x)
    x.outputs[0] = TensorDesc.of(DataType.DT_FLOAT, (2, 3))
    prev = x
    for i in range(3):
        node = g.add_node("LeakyRelu", name=f"r{i}", inputs=1, outputs=1, attrs={"negative_slope": 0.1})
        g.add_edge(prev, 0, node, 0)
        prev = node
    return g


def test_a_copy_on_write_copy_shares_node_contents_until_a_touch():
    g = _chain_for_sharing()
    c = g.copy(share=True)
    assert all(c.node(n.id) is not n and c.node(n.id).attrs is n.attrs and c.node(n.id).outputs is n.outputs
               for n in g.nodes())
    assert first_difference(g, c) is None
    # a change in the copy, announced by touch, stays in the copy
    r1 = c.node_by_name("r1")
    c.touch(r1)
    r1.attrs["negative_slope"] = 0.5
    r1.outputs[0].shape = (7,)
    assert g.node_by_name("r1").attrs["negative_slope"] == 0.1 and g.node_by_name("r1").outputs[0].shape != (7,)
    # and one in the original stays in the original, also for a node the copy already un-shared
    for name in ("r1", "r2"):
        n = g.node_by_name(name)
        g.touch(n)
        n.attrs["negative_slope"] = 0.9
    assert c.node_by_name("r1").attrs["negative_slope"] == 0.5
    assert c.node_by_name("r2").attrs["negative_slope"] == 0.1
    # graph methods that change anchors touch first
    r0 = c.node_by_name("r0")
    c.add_input_anchor(r0)
    assert len(g.node_by_name("r0").inputs) == 1 and len(r0.inputs) == 2
    c.verify()
    g.verify()


def test_a_copy_on_write_copy_of_a_copy_and_a_deep_copy():
    g = _chain_for_sharing()
    c1 = g.copy(share=True)
    c2 = c1.copy(share=True)
    n2 = c2.node_by_name("r0")
    c2.touch(n2)
    n2.attrs["negative_slope"] = 2.0
    assert g.node_by_name("r0").attrs["negative_slope"] == 0.1 == c1.node_by_name("r0").attrs["negative_slope"]
    deep = g.copy()
    assert all(deep.node(n.id).attrs is not n.attrs for n in g.nodes())
    g.node_by_name("r2").attrs["k"] = 1  # without touch: a deep copy does not see it
    assert "k" not in deep.node_by_name("r2").attrs


def test_facade_edits_and_inference_keep_a_copy_on_write_copy_apart():
    from gebench import ops
    from gebench.ge.graph import Graph as GeGraph

    g = _chain_for_sharing()
    ops.infer_graph(g)
    c = g.copy(share=True)
    c.touch(c.node_by_name("x"))
    c.node_by_name("x").outputs[0].shape = (4, 5)
    ops.infer_graph(c)  # re-infers downstream in place (touching what really changes)
    assert [n.outputs[0].shape for n in c.nodes()] == [(4, 5)] * 4
    assert [n.outputs[0].shape for n in g.nodes()] == [(2, 3)] * 4
    facade = GeGraph._wrap(g)
    node = facade.find_node_by_name("r2")
    node.set_attr("negative_slope", 0.25)
    assert c.node_by_name("r2").attrs["negative_slope"] == 0.1


def test_copy_on_write_through_a_chain_of_copies_and_a_snapshot():
    a = _chain_for_sharing()
    b = a.copy(share=True)
    d = b.copy(share=True)
    for graph, value in ((b, 1.0), (d, 2.0)):  # b un-shares first; d must still not write into a's node
        n = graph.node_by_name("r1")
        graph.touch(n)
        n.attrs["negative_slope"] = value
    assert [g.node_by_name("r1").attrs["negative_slope"] for g in (a, b, d)] == [0.1, 1.0, 2.0]
    journal = a.journal()
    a.touch(a.node_by_name("r0"))
    a.node_by_name("r0").attrs["negative_slope"] = 3.0
    snap = journal.materialize()
    assert snap.node_by_name("r0").attrs["negative_slope"] == 0.1
    r1 = a.node_by_name("r1")
    assert snap.node_by_name("r1").attrs is r1.attrs  # shared again after the build
    a.touch(r1)
    r1.attrs["negative_slope"] = 4.0
    assert snap.node_by_name("r1").attrs["negative_slope"] == 0.1
    assert b.node_by_name("r1").attrs["negative_slope"] == 1.0


def test_remove_nodes_leaves_what_removing_them_one_by_one_leaves_and_keeps_snapshots():
    def build() -> Graph:
        g, (d, r0, r1, r2) = _chain()
        side = g.add_node("Add", name="side", inputs=2, outputs=1)
        g.add_edge(r0, 0, side, 0)
        g.add_edge(r1, 0, side, 1)
        g.add_control_edge(r0, r2)
        g.add_control_edge(d, r1)
        return g

    one_by_one, batch = build(), build()
    before = to_text(batch)
    journal = batch.journal()
    shared = batch.copy(share=True)
    names = ["input_0", "Relu_0", "Relu_1"]  # a connected region: edges and a control edge among them
    for name in names:
        one_by_one.remove_node(one_by_one.node_by_name(name))
    batch.remove_nodes([batch.node_by_name(n) for n in names])
    batch.verify()
    assert first_difference(one_by_one, batch) is None and to_text(one_by_one) == to_text(batch)
    assert to_text(journal.materialize()) == before and to_text(shared) == before
    shared.verify()
    side = batch.node_by_name("side")
    with pytest.raises(GraphError, match="listed twice"):
        batch.remove_nodes([side, side])
    assert batch.find("side") is side  # nothing removed


def test_remove_nodes_keeps_each_remaining_neighbours_rows_once():
    # a rewrite removes a connected region: the journal is asked for the rows of each node once (the removed ones
    # and each neighbour left in the graph, not once per removed node next to it), and no removed node's rows
    # are copied before it goes
    g = Graph("fan")
    src = g.add_node("Data", name="input_0", attrs={"index": 0}, inputs=1, outputs=1)
    a = g.add_node("Relu", inputs=1, outputs=1)
    b = g.add_node("Relu", inputs=1, outputs=1)
    out = g.add_node("Add", inputs=2, outputs=1)
    g.add_edge(src, 0, a, 0)
    g.add_edge(src, 0, b, 0)
    g.add_edge(a, 0, out, 0)
    g.add_edge(b, 0, out, 1)
    copy = g.copy(share=True)
    journal = copy.journal()
    kept: list[int] = []
    real = copy._keep_rows
    copy._keep_rows = lambda nid: (kept.append(nid), real(nid))  # type: ignore[method-assign]
    copy.remove_nodes([copy.node(a.id), copy.node(b.id)])
    assert sorted(kept) == [src.id, a.id, b.id, out.id]
    assert not copy._rows_owned[a.id] and not copy._rows_owned[b.id]
    copy.verify()
    assert to_text(journal.materialize()) == to_text(g)
