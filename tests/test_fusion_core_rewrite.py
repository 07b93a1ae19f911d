"""Rewrite rules (spec §3.7): wiring, naming, provenance, pass-through, control edges, and transactionality."""

from __future__ import annotations

import pytest

from gebench import ir
from gebench.fusion import (
    ORIGIN_NAMES_ATTR,
    Boundary,
    BoundaryInput,
    Matcher,
    PatternGraph,
    RewriteError,
    RewriteReason,
    decompose_boundary,
    rewrite,
)
from test_fusion_core_helpers import (
    build,
    const,
    data,
    gemm_replacement,
    matmul_add_pattern,
    matmul_add_target,
    snapshot,
)


def _matched_boundary(g: ir.Graph) -> Boundary:
    m = Matcher(PatternGraph(matmul_add_pattern()), g).next()
    assert m is not None
    return m.boundary


def test_happy_path_names_provenance_wiring_and_removal():
    g = matmul_add_target()
    mm, add = g.node_by_name("mm"), g.node_by_name("add")
    rep = gemm_replacement()
    result = rewrite(g, _matched_boundary(g), rep, pass_name="MatMulAddFusion")
    g.verify()
    assert sorted(result.removed) == sorted([mm.id, add.id]) and not mm.alive and not add.alive
    (gemm,) = g.nodes_of_type("GEMM")
    assert gemm.name.startswith("GEMM_0_mm_add_") and gemm.name.rsplit("_", 1)[1].isdigit()
    assert result.renamed == {"GEMM_0": gemm.name}
    assert gemm.provenance == "MatMulAddFusion"
    assert gemm.attrs["transpose_a"] is False and gemm.attrs[ORIGIN_NAMES_ATTR] == ["mm", "add"]
    assert [(p[0].name, p[1]) for p in g.producers(gemm)] == [("x", 0), ("w", 0), ("b", 0)]
    assert g.uses(gemm, 0) == [(g.node_by_name("relu"), 0)]
    order = [n.name for n in g.nodes()]
    assert order.index("b") < order.index(gemm.name) < order.index("relu")
    # the replacement graph is copied, not consumed
    assert [n.name for n in rep.nodes_of_type("GEMM")] == ["GEMM_0"]
    # the process-wide counter makes the next rewrite's names distinct
    g2 = matmul_add_target()
    rewrite(g2, _matched_boundary(g2), rep, pass_name="MatMulAddFusion")
    assert g2.nodes_of_type("GEMM")[0].name != gemm.name


def test_pass_through_output_rewires_consumers_to_the_data_producer():
    g = build("t", [("x", "Data", [], 1, data(0)), ("z", "Const", [], 1, const([0.0])),
                    ("add", "Add", ["x", "z"], 1), ("r", "Relu", ["add"], 1), ("n", "Neg", ["add"], 1),
                    ("o", "NetOutput", ["r", "n"], 0)])
    pattern = PatternGraph(build("p", [("d", "Data", [], 1, data(0)), ("c", "Const", [], 1),
                                       ("a", "Add", ["d", "c"], 1), ("o", "NetOutput", ["a"], 0)]))
    m = Matcher(pattern, g).next()
    assert len(m.boundary.inputs) == 1  # the Const is part of the match, not a boundary input
    identity = build("rep", [("d", "Data", [], 1, data(0)), ("o", "NetOutput", ["d"], 0)])
    result = rewrite(g, m.boundary, identity, pass_name="RemoveAddZero")
    g.verify()
    x = g.node_by_name("x")
    assert sorted(n.name for n, _ in g.uses(x, 0)) == ["n", "r"]
    assert g.find("add") is None and g.find("z") is None and result.added == []


def test_control_edges_are_inherited_by_new_nodes():
    g = matmul_add_target()
    before = g.add_node("Barrier", name="before")
    after = g.add_node("Barrier", name="after")
    g.add_control_edge(before, g.node_by_name("mm"))
    g.add_control_edge(g.node_by_name("add"), after)
    rep = gemm_replacement()
    rep.add_control_edge(rep.node_by_name("a"), rep.node_by_name("GEMM_0"))  # IO control edges are dropped
    rewrite(g, _matched_boundary(g), rep, pass_name="p")
    g.verify()
    (gemm,) = g.nodes_of_type("GEMM")
    assert g.control_predecessors(gemm) == [before] and g.control_successors(gemm) == [after]


def test_control_edges_inside_the_replacement_are_copied():
    g = matmul_add_target()
    rep = build("rep", [("a", "Data", [], 1, data(0)), ("b", "Data", [], 1, data(1)), ("c", "Data", [], 1, data(2)),
                        ("mm2", "MatMul", ["a", "b"], 1), ("ad2", "Add", ["mm2", "c"], 1),
                        ("side", "Noop", [], 0), ("o", "NetOutput", ["ad2"], 0)])
    rep.add_control_edge(rep.node_by_name("side"), rep.node_by_name("ad2"))
    result = rewrite(g, _matched_boundary(g), rep, pass_name="p")
    g.verify()
    new = {g.node(i).op_type: g.node(i) for i in result.added}
    assert g.control_successors(new["Noop"]) == [new["Add"]]


def test_nodes_still_consumed_outside_survive_when_self_containment_is_not_checked():
    g = matmul_add_target()
    add_id = g.node_by_name("add").id
    spy = g.add_node("Relu", name="spy", inputs=1, outputs=1)
    g.add_edge(g.node_by_name("mm"), 0, spy, 0)
    boundary = Boundary([BoundaryInput([(g.node_by_name("mm"), 0)]), BoundaryInput([(g.node_by_name("mm"), 1)]),
                         BoundaryInput([(g.node_by_name("add"), 1)])], [(g.node_by_name("add"), 0)])
    with pytest.raises(RewriteError) as err:
        rewrite(g, boundary, gemm_replacement(), pass_name="p")
    assert err.value.reason_code is RewriteReason.NOT_SELF_CONTAINED and err.value.node.name == "mm"
    result = rewrite(g, boundary, gemm_replacement(), pass_name="p", check_self_contained=False)
    g.verify()
    assert g.find("mm") is not None and g.find("add") is None
    assert result.removed == [add_id]
    assert g.uses(g.node_by_name("mm"), 0) == [(spy, 0)]
    assert [g.node(i).op_type for i in result.added] == ["GEMM"]


def test_decompose_rewrite_of_a_two_output_node():
    g = build("t", [("x", "Data", [], 1, data(0)), ("s", "SplitTwo", ["x"], 2), ("r", "Relu", ["s:0"], 1),
                    ("n", "Neg", ["s:1"], 1), ("o", "NetOutput", ["r", "n"], 0)])
    rep = build("rep", [("d", "Data", [], 1, data(0)), ("h1", "Half", ["d"], 1), ("h2", "Half", ["d"], 1),
                        ("o", "NetOutput", ["h1", "h2"], 0)])
    result = rewrite(g, decompose_boundary(g, g.node_by_name("s")), rep, pass_name="Decompose")
    g.verify()
    h1, h2 = (g.node(i) for i in result.added)
    assert g.uses(h1, 0) == [(g.node_by_name("r"), 0)] and g.uses(h2, 0) == [(g.node_by_name("n"), 0)]
    assert g.find("s") is None


# ------------------------------------------------------------------ every failure leaves the graph unchanged
def _failing_cases():
    def bad_graph():
        return matmul_add_target()

    def names(g, *pairs):
        return [(g.node_by_name(n), p) for n, p in pairs]

    def std_inputs(g):
        return [BoundaryInput(names(g, ("mm", 0))), BoundaryInput(names(g, ("mm", 1))),
                BoundaryInput(names(g, ("add", 1)))]

    def std_out(g):
        return names(g, ("add", 0))

    def sub_rep():
        rep = gemm_replacement()
        rep.add_subgraph(ir.Graph("body"))
        return rep

    def data_index(idx):
        rep = gemm_replacement()
        rep.node_by_name("c").attrs["index"] = idx
        return rep

    cases = {
        RewriteReason.EMPTY_BOUNDARY: lambda g: (Boundary(std_inputs(g), []), gemm_replacement()),
        RewriteReason.BOUNDARY_INPUT_EMPTY: lambda g: (Boundary([BoundaryInput([])] + std_inputs(g)[1:], std_out(g)),
                                                      gemm_replacement()),
        RewriteReason.BOUNDARY_INPUT_UNRESOLVED: lambda g: (
            Boundary(std_inputs(g)[:2] + [BoundaryInput(names(g, ("add", 7)))], std_out(g)), gemm_replacement()),
        RewriteReason.BOUNDARY_OUTPUT_UNRESOLVED: lambda g: (Boundary(std_inputs(g), names(g, ("add", 1))),
                                                            gemm_replacement()),
        RewriteReason.FOREIGN_NODE: lambda g: (Boundary(std_inputs(g), names(matmul_add_target(), ("add", 0))),
                                              gemm_replacement()),
        RewriteReason.DATA_COUNT_MISMATCH: lambda g: (Boundary(std_inputs(g)[:2] + [BoundaryInput(names(g, ("add", 1)))],
                                                              std_out(g)),
                                                     build("rep", [("a", "Data", [], 1, data(0)),
                                                                   ("b", "Data", [], 1, data(1)),
                                                                   ("M", "MatMul", ["a", "b"], 1),
                                                                   ("o", "NetOutput", ["M"], 0)])),
        RewriteReason.OUTPUT_COUNT_MISMATCH: lambda g: (Boundary(std_inputs(g), std_out(g) + std_out(g)),
                                                       gemm_replacement()),
        RewriteReason.NO_NETOUTPUT: lambda g: (Boundary(std_inputs(g), std_out(g)),
                                              build("rep", [("a", "Data", [], 1, data(0)), ("b", "Data", [], 1, data(1)),
                                                            ("c", "Data", [], 1, data(2)),
                                                            ("G", "GEMM", ["a", "b", "c"], 1)])),
        RewriteReason.BAD_DATA_INDEX: lambda g: (Boundary(std_inputs(g), std_out(g)), data_index(1)),
        RewriteReason.UNSUPPORTED_SUBGRAPH: lambda g: (Boundary(std_inputs(g), std_out(g)), sub_rep()),
    }
    return cases, bad_graph


@pytest.mark.parametrize("reason", [r for r in RewriteReason if r not in (
    RewriteReason.INTERNAL, RewriteReason.REPLACEMENT_CYCLIC, RewriteReason.WOULD_CREATE_CYCLE,
    RewriteReason.NOT_SELF_CONTAINED, RewriteReason.MARKS_RUNAWAY)])
def test_every_rule_failure_leaves_the_graph_unchanged(reason):
    cases, make = _failing_cases()
    g = make()
    boundary, rep = cases[reason](g)
    before = snapshot(g)
    with pytest.raises(RewriteError) as err:
        rewrite(g, boundary, rep, pass_name="p")
    assert err.value.reason_code is reason
    assert err.value.message and reason.value in str(err.value)
    assert snapshot(g) == before
    g.verify()


def test_marks_beyond_the_limit_refuse_the_rewrite_and_leave_the_graph_unchanged():
    g = matmul_add_target()
    for name in ("mm", "add"):
        node = g.node_by_name(name)
        g.touch(node)
        node.attrs[ORIGIN_NAMES_ATTR] = [f"{name}_{i}" for i in range(3)]
    boundary = Boundary([BoundaryInput([(g.node_by_name("mm"), 0)]), BoundaryInput([(g.node_by_name("mm"), 1)]),
                         BoundaryInput([(g.node_by_name("add"), 1)])], [(g.node_by_name("add"), 0)])
    before = snapshot(g)
    with pytest.raises(RewriteError) as err:
        rewrite(g, boundary, gemm_replacement(), pass_name="p", mark_limit=5)
    assert err.value.reason_code is RewriteReason.MARKS_RUNAWAY and "6 original op names" in err.value.message
    assert snapshot(g) == before
    rewrite(g, boundary, gemm_replacement(), pass_name="p", mark_limit=6)  # at the limit: accepted
    assert g.nodes_of_type("GEMM")[0].attrs[ORIGIN_NAMES_ATTR] == [*(f"mm_{i}" for i in range(3)),
                                                                   *(f"add_{i}" for i in range(3))]


def test_not_self_contained_leaves_the_graph_unchanged():
    g = matmul_add_target()
    # region = {mm, add, relu} with output relu:0: add is inner and also feeds 'leak' outside
    boundary = Boundary([BoundaryInput([(g.node_by_name("mm"), 0)]), BoundaryInput([(g.node_by_name("mm"), 1)]),
                         BoundaryInput([(g.node_by_name("add"), 1)])], [(g.node_by_name("relu"), 0)])
    g.add_edge(g.node_by_name("add"), 0, g.add_node("Neg", name="leak", inputs=1, outputs=1), 0)
    before = snapshot(g)
    rep = build("rep", [("a", "Data", [], 1, data(0)), ("b", "Data", [], 1, data(1)), ("c", "Data", [], 1, data(2)),
                        ("G", "GEMM", ["a", "b", "c"], 1), ("R", "Relu", ["G"], 1), ("o", "NetOutput", ["R"], 0)])
    with pytest.raises(RewriteError) as err:
        rewrite(g, boundary, rep, pass_name="p")
    assert err.value.reason_code is RewriteReason.NOT_SELF_CONTAINED
    assert err.value.node.name == "add" and "'leak'" in err.value.message
    assert snapshot(g) == before


def test_cycle_creating_rewrite_is_refused_and_leaves_the_graph_unchanged():
    # a -> b -> c with a and c in the region but b outside: fusing {a, c} would need b both before and after
    g = build("t", [("x", "Data", [], 1, data(0)), ("a", "Relu", ["x"], 1), ("b", "Exp", ["a"], 1),
                    ("c", "Add", ["a", "b"], 1), ("o", "NetOutput", ["c", "b"], 0)])
    a, b, c = (g.node_by_name(n) for n in "abc")
    boundary = Boundary([BoundaryInput([(a, 0)]), BoundaryInput([(c, 1)])], [(a, 0), (c, 0)])
    rep = build("rep", [("d0", "Data", [], 1, data(0)), ("d1", "Data", [], 1, data(1)),
                        ("R", "Mix", ["d0", "d1"], 1), ("F", "Relu", ["R"], 1), ("o", "NetOutput", ["R", "F"], 0)])
    before = snapshot(g)
    with pytest.raises(RewriteError) as err:
        rewrite(g, boundary, rep, pass_name="p")
    assert err.value.reason_code is RewriteReason.WOULD_CREATE_CYCLE and err.value.node.name == "b"
    assert snapshot(g) == before
    # the same boundary with a replacement whose output 0 does not feed output 1 is fine
    ok = build("rep", [("d0", "Data", [], 1, data(0)), ("d1", "Data", [], 1, data(1)),
                       ("R", "Relu", ["d0"], 1), ("F", "Mix", ["R", "d1"], 1), ("o", "NetOutput", ["R", "F"], 0)])
    result = rewrite(g, boundary, ok, pass_name="p")
    g.verify()
    assert not a.alive and not c.alive and len(result.added) == 2
    new_relu = g.nodes_of_type("Relu")[0]
    assert g.producer(b, 0) == (new_relu, 0)


# ------------------------------------------------------------------------------------------ adopt / known region
def _replacement_with_inner_control_edge() -> ir.Graph:
    rep = build("rep", [("a", "Data", [], 1, data(0)), ("b", "Data", [], 1, data(1)), ("c", "Data", [], 1, data(2)),
                        ("mm2", "MatMul", ["a", "b"], 1, {"k": [1, 2]}), ("ad2", "Add", ["mm2", "c"], 1),
                        ("side", "Noop", [], 0), ("o", "NetOutput", ["ad2"], 0)])
    rep.add_control_edge(rep.node_by_name("side"), rep.node_by_name("ad2"))
    return rep


def test_adopting_the_replacement_gives_the_graph_copying_gives(monkeypatch):
    from gebench.fusion import _rewriter

    texts = []
    for adopt in (False, True):
        monkeypatch.setattr(_rewriter, "_RENAME_COUNTER", iter(range(100)))  # same names in both runs
        g = matmul_add_target()
        rep = _replacement_with_inner_control_edge()
        body = {n.name: n for n in rep.nodes() if n.op_type not in ("Data", "NetOutput")}
        result = rewrite(g, _matched_boundary(g), rep, pass_name="p", adopt=adopt)
        g.verify()
        texts.append(snapshot(g))
        added = [g.node(i) for i in result.added]
        if adopt:
            # the very node objects moved, and the consumed replacement is left empty
            assert {id(n) for n in added} == {id(n) for n in body.values()}
            assert len(rep) == 0 and rep.nodes() == []
            rep.verify()
        else:
            assert not {id(n) for n in added} & {id(n) for n in body.values()}
            assert len(rep) == 7 and rep.node_by_name("mm2").attrs == {"k": [1, 2]}
    assert texts[0] == texts[1]


@pytest.mark.parametrize("adopt", [False, True])
def test_a_new_name_a_graph_node_already_has_is_skipped(monkeypatch, adopt):
    from gebench.fusion import _rewriter

    monkeypatch.setattr(_rewriter, "_RENAME_COUNTER", iter(range(100)))
    g = matmul_add_target()
    # a node (say, from an imported dump) already carries the names the next two counter values give
    for k in (0, 1):
        g.add_node("Relu", name=f"GEMM_0_mm_add_{k}", inputs=1, outputs=1)
    result = rewrite(g, _matched_boundary(g), gemm_replacement(), pass_name="p", adopt=adopt)
    g.verify()
    (gemm,) = g.nodes_of_type("GEMM")
    assert gemm.name == "GEMM_0_mm_add_2" and result.renamed == {"GEMM_0": "GEMM_0_mm_add_2"}
    assert g.node_by_name("GEMM_0_mm_add_0").op_type == "Relu"


def test_a_failed_rewrite_with_adopt_leaves_both_graphs_as_they_were():
    g = matmul_add_target()
    rep = build("rep", [("a", "Data", [], 1, data(0)), ("r", "Relu", ["a"], 1), ("o", "NetOutput", ["r"], 0)])
    before_g, before_rep = snapshot(g), snapshot(rep)
    with pytest.raises(RewriteError) as err:
        rewrite(g, _matched_boundary(g), rep, pass_name="p", adopt=True)
    assert err.value.reason_code is RewriteReason.DATA_COUNT_MISMATCH
    assert snapshot(g) == before_g and snapshot(rep) == before_rep


def test_the_matchers_region_is_the_region_the_rewrite_would_derive():
    from gebench.fusion._boundary import boundary_subgraph

    g = matmul_add_target()
    # a second site whose Add output also feeds a Relu and the NetOutput
    x2 = g.add_node("Data", name="x2", inputs=1, outputs=1, attrs=data(1))
    mm2 = g.add_node("MatMul", name="mm2", inputs=2, outputs=1)
    g.add_edge(x2, 0, mm2, 0)
    g.add_edge(g.node_by_name("w"), 0, mm2, 1)
    add2 = g.add_node("Add", name="add2", inputs=2, outputs=1)
    g.add_edge(mm2, 0, add2, 0)
    g.add_edge(g.node_by_name("b"), 0, add2, 1)
    matches = list(Matcher(PatternGraph(matmul_add_pattern()), g))
    assert len(matches) == 2
    for m in matches:
        producers = {g.producer(*bi.anchors[0])[0].id for bi in m.boundary.inputs}
        derived = boundary_subgraph(g, [n for n, _ in m.boundary.outputs], producers)
        assert m.region is not None and set(m.region) == {n.id for n in derived}
        assert set(m.region) == {n.id for n in m.matched_nodes()}


def _staged_gemm_replacement(data_order: tuple[int, ...] = (0, 1, 2), graph_type: type = ir.StagedGraph) -> ir.Graph:
    """The GEMM replacement as a graph builder leaves it (staged: node table and edge list only), its Data nodes
    created in ``data_order``."""
    rep = graph_type("gemm_replacement")
    datas = {i: rep.add_node("Data", name=f"d{i}", attrs=data(i), inputs=1, outputs=1) for i in data_order}
    gemm = rep.add_node("GEMM", name="GEMM_0", attrs={"transpose_a": False}, inputs=3, outputs=1)
    for i in sorted(datas):
        rep.add_edge_trusted(datas[i], 0, gemm, i)
    out = rep.add_node("NetOutput", name="NetOutput_r", inputs=1, outputs=0)
    rep.add_edge_trusted(gemm, 0, out, 0)
    return rep


@pytest.mark.parametrize("adopt", [False, True])
def test_a_staged_replacement_built_again_reuses_its_layout_and_rewrites_the_same(monkeypatch, adopt):
    from gebench.fusion import _rewriter

    monkeypatch.setattr(_rewriter, "_LAYOUTS", {})
    texts = []
    for graph_type in (ir.Graph, ir.StagedGraph, ir.StagedGraph):  # the analysis, a first staged, a cached one
        monkeypatch.setattr(_rewriter, "_RENAME_COUNTER", iter(range(100)))  # same names in every run
        rep = _staged_gemm_replacement(graph_type=graph_type)
        assert (rep.staged_edges() is not None) == (graph_type is ir.StagedGraph)
        g = matmul_add_target()
        rewrite(g, _matched_boundary(g), rep, pass_name="p", adopt=adopt)
        g.verify()
        texts.append(snapshot(g))
        assert len(_rewriter._LAYOUTS) == (graph_type is ir.StagedGraph)  # one layout, kept by the first staged
    assert texts[0] == texts[1] == texts[2]


def test_staged_replacements_of_different_structure_do_not_share_a_layout(monkeypatch):
    from gebench.fusion import _rewriter

    monkeypatch.setattr(_rewriter, "_LAYOUTS", {})
    wiring = []
    for order in ((0, 1, 2), (2, 0, 1), (0, 1, 2), (2, 0, 1)):
        g = matmul_add_target()
        rewrite(g, _matched_boundary(g), _staged_gemm_replacement(order), pass_name="p")
        (gemm,) = g.nodes_of_type("GEMM")
        wiring.append([p[0].name for p in g.producers(gemm)])
    assert wiring == [["x", "w", "b"]] * 4  # each Data feeds its own boundary input, whatever the creation order
    assert len(_rewriter._LAYOUTS) == 2
    # a replacement the rules refuse is never laid out, and the same one keeps being refused
    for _ in range(2):
        rep = _staged_gemm_replacement((0, 1))
        g = matmul_add_target()
        with pytest.raises(RewriteError) as err:
            rewrite(g, _matched_boundary(g), rep, pass_name="p")
        assert err.value.reason_code is RewriteReason.DATA_COUNT_MISMATCH
    assert len(_rewriter._LAYOUTS) == 2
