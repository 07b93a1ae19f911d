"""Graph journals: a journal opened on a graph builds exactly the graph as it was, whatever changed after, and
a run's snapshots cost O(what changed), not O(graph)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gebench
from gebench import ir
from gebench.fusion.snapshots import SnapshotMap
from gebench.ir import Graph, GraphError, GraphJournal, TensorDesc, first_difference
from ir_mutations import STRUCTURAL, mutate

OPS = st.sampled_from([*STRUCTURAL, "set_attr", "set_desc", "set_desc_only", "set_one_desc", "add_anchor", "journal",
                       "subgraph"])


def _random_graph(n: int) -> Graph:
    g = Graph("j")
    prev = None
    for i in range(n):
        node = g.add_node(f"Op{i % 3}", name=f"n{i}", inputs=2, outputs=2, attrs={"k": i})
        if prev is not None:
            g.add_edge(prev, i % 2, node, 0)
        prev = node
    return g


def _mutate(g: Graph, op: str, a: int, b: int, port: int) -> None:
    """A structural mutation (``ir_mutations.mutate``) or an in-place change announced with ``touch`` (or, for a
    change of descs only, ``touch_descs``, or of one desc, ``touch_desc``)."""
    nodes = g.nodes()
    if op in STRUCTURAL or not nodes:
        mutate(g, op if nodes else "add_node", a, b, port)
    elif op == "set_attr":
        node = nodes[a % len(nodes)]
        g.touch(node)
        node.attrs[f"a{port}"] = [b, a]
    elif op == "set_desc":
        node = nodes[a % len(nodes)]
        if node.outputs:
            g.touch(node)
            node.outputs[0].shape = (b % 7, port)
            node.outputs[0].attrs["x"] = b
    elif op == "set_desc_only":  # what shape inference does: descs changed in place, announced as such
        node = nodes[a % len(nodes)]
        if node.outputs:
            g.touch_descs(node)
            node.outputs[0].shape = (port, b % 5)
            node.outputs[0].attrs["y"] = a
    elif op == "set_one_desc":  # what inference does to one anchor: the desc it returns is the one to change
        node = nodes[a % len(nodes)]
        anchors = [(True, i) for i in range(len(node.outputs))] + [(False, i) for i in range(len(node.inputs))]
        if anchors:
            output, index = anchors[b % len(anchors)]
            desc = g.touch_desc(node, output, index)
            desc.shape = (port, a % 3)
            desc.attrs["z"] = b
    elif op == "add_anchor":
        g.add_input_anchor(nodes[a % len(nodes)], TensorDesc.of(ir.DataType.DT_INT32, [port]))
    elif op == "subgraph":
        if g.subgraphs:
            sub = next(iter(g.subgraphs.values()))
            _mutate(sub, "add_node" if a % 2 else "remove_node", b, a, port)
        else:
            sub = _random_graph(3)
            sub.name = f"sub{a}"
            g.add_subgraph(sub, parent_node=nodes[a % len(nodes)])


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 12), st.lists(st.tuples(OPS, st.integers(0, 10_000), st.integers(0, 10_000),
                                              st.integers(0, 3)), min_size=1, max_size=50))
def test_a_journal_builds_the_graph_as_it_was_after_random_changes(size, steps):
    g = _random_graph(size)
    opened: list[tuple[GraphJournal, Graph]] = [(g.journal(), g.copy())]
    for op, a, b, port in steps:
        if op == "journal":
            opened.append((g.journal(), g.copy()))
            continue
        try:
            _mutate(g, op, a, b, port)
        except GraphError:
            pass  # refused mutations change nothing
    for journal, expected in opened:
        built = journal.materialize()
        assert first_difference(built, expected) is None
        built.verify()
        assert ir.to_text(built) == ir.to_text(expected)
    assert not g._journals  # materialized journals stop following the graph


def test_a_change_that_skips_touch_is_caught_by_the_checking_snapshot_map(monkeypatch):
    monkeypatch.setenv("GEBENCH_CHECK_JOURNALS", "1")
    g = _random_graph(4)
    snaps = SnapshotMap()
    snaps.keep("PreRunBegin", g.journal())
    g.node_by_name("n1").attrs["k"] = "changed behind the journal's back"
    with pytest.raises(GraphError, match="skipped Graph.touch"):
        snaps["PreRunBegin"]


def test_a_journal_keeps_only_what_changed():
    g = _random_graph(2000)
    journal = g.journal()
    n5 = g.node_by_name("n5")
    g.touch(n5)
    n5.attrs["k"] = -1
    g.remove_node(g.node_by_name("n9"))
    assert set(journal.nodes) == {5, 9}  # ids are creation order: n5 is #5
    assert set(journal.rows) == {8, 9, 10}  # n9's neighbours lost an edge; touching n5 left its edges alone
    assert journal.node_count() == 2000
    built = journal.materialize()
    assert built.node_by_name("n5").attrs["k"] == 5 and built.find("n9") is not None
    assert g.node_by_name("n5").attrs["k"] == -1 and g.find("n9") is None


def test_a_journal_closed_while_the_graph_hands_out_records_leaves_the_others_whole():
    """A snapshot map closes its journals when it is collected, which the collector may do in the middle of a
    change: the graph's loop over its journals must still reach every other journal."""
    g = _random_graph(20)
    first, second, third = g.journal(), g.journal(), g.journal()
    real = first.wants_node

    def closing_itself(nid: int) -> bool:
        first.close()
        return real(nid)

    first.wants_node = closing_itself  # type: ignore[method-assign]
    n5 = g.node_by_name("n5")
    g.touch(n5)  # the loop over the journals starts with ``first``, which closes
    n5.attrs["k"] = -1
    assert g._journals == [second, third]
    for journal in (second, third):
        assert journal.materialize().node_by_name("n5").attrs["k"] == 5


def _fanout_model(path, layers: int):
    """``layers`` MatMul+Add sites (onnx.helper), each with its own weights."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes, inits = [], []
    x = "x"
    for i in range(layers):
        inits.append(numpy_helper.from_array(np.ones((4, 4), np.float32), f"w{i}"))
        inits.append(numpy_helper.from_array(np.ones((4,), np.float32), f"b{i}"))
        nodes.append(helper.make_node("MatMul", [x, f"w{i}"], [f"m{i}"], name=f"mm{i}"))
        nodes.append(helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"], name=f"add{i}"))
        nodes.append(helper.make_node("Relu", [f"a{i}"], [f"r{i}"], name=f"relu{i}"))
        x = f"r{i}"
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [2, 4])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def _gemm_pass(tmp_path):
    src = (
        "from ge.es.math import GEMM\n"
        "from ge.es.nn import BatchMatMulV2\n"
        "from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass\n\n"
        "@register_fusion_pass(name='JournalGemm', stage=PassStage.BEFORE_INFER_SHAPE)\n"
        "class JournalGemm(PatternFusionPass):\n"
        "    @pattern\n"
        "    def mm_add(self, inputs):\n"
        "        a, b, c = inputs[:3]\n"
        "        return BatchMatMulV2(a, b) + c\n\n"
        "    def meet_requirements(self, match_result):\n"
        "        return match_result.get_matched_nodes()[0].name in ('mm0', 'mm1')\n\n"
        "    def replacement(self, inputs):\n"
        "        a, b, c = inputs[:3]\n"
        "        return GEMM(a, b, c, 1.0, 1.0)\n")
    path = tmp_path / "journal_gemm.py"
    path.write_text(src)
    return path


@pytest.mark.parametrize("layers", [50, 400])
def test_compile_snapshots_cost_what_changed_not_the_graph(tmp_path, monkeypatch, layers):
    """Two rewrites in a graph of 50 or 400 layers: the node copies the run makes for its five snapshots are the
    same few, whatever the graph's size (counted, not timed); reading a snapshot builds it whole."""
    monkeypatch.delenv("GEBENCH_CHECK_JOURNALS", raising=False)
    model = tmp_path / "m.onnx"
    _fanout_model(model, layers)
    clones = 0
    original = ir.Node._clone_into

    def counting(self, graph, node_id, name):
        nonlocal clones
        clones += 1
        return original(self, graph, node_id, name)

    monkeypatch.setattr(ir.Node, "_clone_into", counting)
    shares = 0
    share = ir.Node._share_into

    def counting_shares(self, graph):
        nonlocal shares
        shares += 1
        return share(self, graph)

    monkeypatch.setattr(ir.Node, "_share_into", counting_shares)
    run = gebench.compile(str(model), passes=[str(_gemm_pass(tmp_path))])
    assert run.ok and run.summary()["JournalGemm"]["replaced"] == 2
    assert clones <= 12, clones  # the two fused sites' nodes and their inferred GEMMs, not the graph
    snaps = run.ir_snapshots
    assert isinstance(snaps, SnapshotMap) and snaps.pending() >= 2
    clones_before, shares_before = clones, shares
    pre = snaps["PreRunBegin"]
    assert run.report()["snapshots"]["PreRunBegin"]["nodes"] == len(pre)
    assert pre.find("mm0") is not None and pre.find("mm0").op_type == "BatchMatMulV2"
    assert run.ir_graph.find("mm0") is None
    # building the snapshot made a node object per node, sharing the contents (copy-on-write), and copied none
    assert (shares - shares_before, clones) == (len(pre), clones_before)
    n = pre.find("mm0")
    pre.touch(n)
    n.attrs["mark"] = 1
    assert "mark" not in (run.ir_graph.find(n.name) or n).attrs or run.ir_graph.find(n.name) is None
    live_relu = next(m for m in run.ir_graph.nodes() if m.op_type == "Relu")
    pre_relu = pre.node(live_relu.id)
    assert pre_relu.attrs is live_relu.attrs  # shared until touched
    run.ir_graph.touch(live_relu)
    live_relu.attrs["mark"] = 2
    assert "mark" not in pre_relu.attrs


def test_a_write_to_a_removed_node_does_not_reach_the_journal():
    from gebench.ge.graph import Node as GeNode

    g = _random_graph(5)
    journal = g.journal()
    removed = g.node_by_name("n2")
    g.remove_node(removed)
    GeNode._wrap(removed).set_output_attr("late", 0, 7)  # pass code that kept the node, through the facade
    removed.own_copies()  # IR code editing a removed node in place takes copies first
    removed.attrs["k"] = "written after the removal"
    removed.outputs[0].shape = (9,)
    built = journal.materialize().node_by_name("n2")
    assert built.attrs["k"] == 2 and built.outputs[0].shape == () and "late" not in built.outputs[0].attrs
    assert removed.outputs[0].attrs["late"] == 7


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 12), st.lists(st.tuples(st.booleans(), OPS, st.integers(0, 10_000), st.integers(0, 10_000),
                                              st.integers(0, 3)), min_size=1, max_size=50))
def test_copy_on_write_copies_stay_apart_under_random_changes_on_both_sides(size, steps):
    """A copy-on-write copy (``Graph.copy(share=True)``, also of a copy, and a built snapshot) and its original
    take random changes in turns; each ends equal to a deep copy that took the same changes alone."""
    original = _random_graph(size)
    shared = original.copy(share=True)
    twins = {id(original): original.copy(), id(shared): original.copy()}
    graphs = [original, shared]
    for which, op, a, b, port in steps:
        if op == "journal":  # one more copy-on-write copy of one side, followed from here on
            source = graphs[a % len(graphs)]
            if len(graphs) < 4:
                fresh = source.copy(share=True)
                twins[id(fresh)] = twins[id(source)].copy()
                graphs.append(fresh)
            continue
        if op == "subgraph":
            continue  # subgraph copies are deep (covered elsewhere)
        target = graphs[(a + which) % len(graphs)]
        for g in (target, twins[id(target)]):
            try:
                _mutate(g, op, a, b, port)
            except GraphError:
                pass
    for g in graphs:
        g.verify()
        assert first_difference(g, twins[id(g)]) is None


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 12), st.lists(st.tuples(st.booleans(), OPS, st.integers(0, 10_000), st.integers(0, 10_000),
                                              st.integers(0, 3)), min_size=1, max_size=50))
def test_journals_on_copy_on_write_copies_keep_their_moment_while_every_side_changes(size, steps):
    """Journals opened on copy-on-write copies (which keep the rows they still share uncopied) build the graph as
    it was when they were opened, while the copies and the originals they share rows with take random changes in
    turns."""
    original = _random_graph(size)
    shared = original.copy(share=True)
    graphs = [original, shared]
    opened: list[tuple[GraphJournal, Graph]] = [(shared.journal(), shared.copy())]
    for which, op, a, b, port in steps:
        if op == "journal":  # a journal on one of the graphs, or on a new copy-on-write copy of it
            g = graphs[a % len(graphs)]
            if b % 2 and len(graphs) < 4:
                g = g.copy(share=True)
                graphs.append(g)
            opened.append((g.journal(), g.copy()))
            continue
        if op == "subgraph":
            continue  # subgraph copies are deep (covered elsewhere)
        try:
            _mutate(graphs[(a + which) % len(graphs)], op, a, b, port)
        except GraphError:
            pass
    for journal, expected in opened:
        built = journal.materialize()
        assert first_difference(built, expected) is None
        built.verify()
    for g in graphs:
        g.verify()


def test_a_journal_view_of_a_desc_change_shares_attrs_and_the_other_descs_until_the_next_touch():
    """``touch_desc`` keeps a view of the node for the journal that shares its attrs dict and desc objects, and
    copies only the desc about to change; the node's next ``touch`` gives it private attrs and descs, so what
    changes after it stays out of the journal."""
    g = _random_graph(3)
    node = g.node_by_name("n1")
    assert node.inputs and node.outputs
    journal = g.journal()
    out = g.touch_desc(node, True, 0)
    out.shape = (5,)
    kept = journal.nodes[node.id]
    assert kept.attrs is node.attrs and kept.inputs[0] is node.inputs[0], "nothing else was copied"
    assert kept.outputs[0] is not node.outputs[0] is out and kept.outputs[0].shape == ()
    assert g.touch_desc(node, True, 0) is out  # already the node's own: not copied again
    first_input = node.inputs[0]
    g.touch_desc(node, False, 0).shape = (7,)
    assert kept.inputs[0] is first_input and first_input.shape != (7,) and node.inputs[0].shape == (7,)
    g.touch(node)
    assert node.attrs is not kept.attrs
    node.attrs["k"] = 99
    built = journal.materialize().node_by_name("n1")
    assert built.attrs["k"] == 1 and built.outputs[0].shape == () and built.inputs[0].shape == first_input.shape
    assert node.attrs["k"] == 99 and node.outputs[0].shape == (5,) and node.inputs[0].shape == (7,)
