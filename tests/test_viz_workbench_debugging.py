"""The workbench's debugging views, kernel side: per-pass and per-pattern times in the pass list, provenance marks
across the panes of a side-by-side diff, and stepping through a pass's rewrites."""

from __future__ import annotations

import textwrap

import pytest

from gebench import ir
from gebench.viz import Workbench
from gebench.viz._debugging import with_timings
from test_debug_bisect import PASSES, _graph

# P1_ReluToAbs turns Relu into Abs (BeforeInferShape); P2_ExpAbs (AfterInferShape) fuses Exp(Abs(x)) into one
# Sigmoid, so the Sigmoid comes from the Abs P1 made and, further back, from the input's Relu.
CHAIN = """
from ge.es.all import Abs, Exp, Relu, Sigmoid
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass


@register_fusion_pass(name="P1_ReluToAbs", stage=PassStage.BEFORE_INFER_SHAPE)
class ReluToAbs(PatternFusionPass):
    @pattern
    def relu(self, inputs):
        return Relu(inputs[0])

    def meet_requirements(self, match_result):
        return True

    def replacement(self, inputs):
        return Abs(inputs[0])


@register_fusion_pass(name="P2_ExpAbs", stage=PassStage.AFTER_INFER_SHAPE)
class ExpAbs(PatternFusionPass):
    @pattern
    def exp_abs(self, inputs):
        return Exp(Abs(inputs[0]))

    def meet_requirements(self, match_result):
        return True

    def replacement(self, inputs):
        return Sigmoid(inputs[0])
"""

CHAIN_GRAPH = """\
graph chain
  #0 x = Data() {index=0} -> (y: DT_FLOAT[2,3])
  #1 relu = Relu(x=x:0) -> (y: DT_FLOAT[2,3])
  #2 exp = Exp(x=relu:0) -> (y: DT_FLOAT[2,3])
  #3 other = Tanh(x=x:0) -> (y: DT_FLOAT[2,3])
  #4 out = NetOutput(x0=exp:0, x1=other:0)
"""


@pytest.fixture
def abs_wb(tmp_path):
    """A_AbsAbs rewrites 4 times (BeforeInferShape), B_ExpNeg once (AfterInferShape)."""
    path = tmp_path / "bisect_passes.py"
    path.write_text(textwrap.dedent(PASSES))
    return Workbench(ir.parse_text(_graph(4)), passes=[str(path)])


@pytest.fixture
def chain_wb(tmp_path):
    path = tmp_path / "chain_passes.py"
    path.write_text(textwrap.dedent(CHAIN))
    wb = Workbench(ir.parse_text(CHAIN_GRAPH), passes=[str(path)])
    assert wb.run.status == "SUCCESS", wb.run.failure_reason
    return wb


def _passes(wb: Workbench) -> dict[str, dict]:
    return {p["name"]: p for s in wb.stages for p in s["passes"]}


def _ids(graph: ir.Graph, *names: str) -> list[int]:
    return sorted(graph.node_by_name(n).id for n in names)


# ---------------------------------------------------------------------------------------------- timings
def test_the_pass_list_carries_the_runs_timings(abs_wb):
    timing = {t["pass_name"]: t for t in abs_wb.run.timing()}
    passes = _passes(abs_wb)
    for name in ("A_AbsAbs", "B_ExpNeg"):
        shown, measured = passes[name]["time"], timing[name]
        assert shown["wall_ms"] == pytest.approx(measured["wall_s"] * 1000, abs=1e-3)
        assert shown["cpu_ms"] == pytest.approx(measured["cpu_s"] * 1000, abs=1e-3)
        assert shown["wall_ms"] > 0
        assert [q["name"] for q in shown["patterns"]] == [q["pattern_name"] for q in measured["patterns"]]
    a = passes["A_AbsAbs"]["time"]
    # the runtime's counts: 8 Abs anchors, 4 full matches, 4 rewrites; the ledger's: 11 candidates, 4 replaced
    assert (a["anchors"], a["matches"], a["rewrites"]) == (8, 4, 4)
    (pattern,) = a["patterns"]
    assert (pattern["candidates"], pattern["replaced"], pattern["rejected"]) == (
        11,
        4,
        {"STRUCTURAL_MISMATCH": 7},
    )
    assert passes["B_ExpNeg"]["time"]["patterns"][0]["lints"] == 1
    # the pass list's own counts are unchanged
    assert (passes["A_AbsAbs"]["candidates"], passes["A_AbsAbs"]["replaced"]) == (11, 4)


def test_with_timings_matches_by_stage_first_and_leaves_passes_that_did_not_run():
    stages = [
        {"stage": "BeforeInferShape", "passes": [{"name": "P", "candidates": 0}, {"name": "Idle"}]},
        {"stage": "AfterInferShape", "passes": [{"name": "P", "candidates": 0}]},
    ]
    pattern = {
        "pattern_name": "p",
        "wall_s": 0.001,
        "cpu_s": 0.001,
        "anchors": 1,
        "matches": 1,
        "rewrites": 1,
        "candidates": 1,
        "replaced": 1,
        "rejected": {},
        "lints": 0,
    }
    timing = [
        {
            "pass_name": "P",
            "stage": "BeforeInferShape",
            "wall_s": 0.002,
            "cpu_s": 0.002,
            "graphs": 1,
            "patterns": [pattern],
        },
        {
            "pass_name": "P",
            "stage": "AfterInferShape",
            "wall_s": 0.5,
            "cpu_s": 0.4,
            "graphs": 2,
            "patterns": [],
        },
    ]
    out = with_timings(stages, timing)
    assert out[0]["passes"][0]["time"]["wall_ms"] == 2.0 and out[0]["passes"][0]["time"]["rewrites"] == 1
    assert out[1]["passes"][0]["time"]["wall_ms"] == 500.0 and out[1]["passes"][0]["time"]["graphs"] == 2
    assert "time" not in out[0]["passes"][1]
    assert "time" not in stages[0]["passes"][0], "the input is not changed"


# ---------------------------------------------------------------------------------------------- provenance
def test_provenance_maps_of_a_two_pass_run(chain_wb):
    final = chain_wb.run.ir_graph
    sigmoid = final.nodes_of_type("Sigmoid")[0]
    pre = chain_wb._graphs["PreRunBegin"]
    mid = chain_wb._graphs["RunCustomPassBeforeInfershape"]
    # against the input: through the Abs P1 made, back to the Relu, and the Exp
    made_from, made_into = chain_wb.provenance_maps("PreRunBegin", "final")
    assert made_from == {sigmoid.id: _ids(pre, "relu", "exp")}
    assert made_into == {i: [sigmoid.id] for i in _ids(pre, "relu", "exp")}
    # against the snapshot after P1: the Abs P1 made is in it, so the walk stops there
    abs_node = mid.nodes_of_type("Abs")[0]
    made_from, _ = chain_wb.provenance_maps("RunCustomPassBeforeInfershape", "final")
    assert made_from == {sigmoid.id: sorted([abs_node.id, mid.node_by_name("exp").id])}
    # a node untouched by the passes is in neither map
    assert pre.node_by_name("other").id not in made_into


def test_a_fused_node_shows_its_passes_and_original_nodes(chain_wb):
    chain_wb.show_snapshot("final")
    sigmoid = chain_wb.run.ir_graph.nodes_of_type("Sigmoid")[0]
    chain_wb.select_node(sigmoid.id)
    assert "made by</b> <code>P1_ReluToAbs</code> &rarr; <code>P2_ExpAbs</code>" in chain_wb.details_html
    assert "<code>relu</code>, <code>exp</code>" in chain_wb.details_html
    assert chain_wb.provenance["passes"] == ["P1_ReluToAbs", "P2_ExpAbs"]
    assert chain_wb.provenance["original_nodes"] == ["relu", "exp"]
    chain_wb.select_node("other")
    assert "gb-prov" not in chain_wb.details_html, "a node no pass made has no provenance section"


def test_side_by_side_diff_marks_provenance_both_ways(chain_wb):
    chain_wb.select_pass("P2_ExpAbs")
    chain_wb.show_diff("stage", "side")
    before, after = chain_wb.diff_info["before"], chain_wb.diff_info["after"]
    assert (before, after) == ("RunCustomPassBeforeInfershape", "RunCustomPass_AfterInferShape")
    b_graph, a_graph = chain_wb._graphs[before], chain_wb._graphs[after]
    sigmoid = a_graph.nodes_of_type("Sigmoid")[0]
    origins = sorted([b_graph.nodes_of_type("Abs")[0].id, b_graph.node_by_name("exp").id])

    # the fused node, clicked in the "after" pane: its origins are marked in the "before" pane
    info = chain_wb.select_side_node(sigmoid.id)
    assert info["origin_ids"] == origins and info["passes"] == ["P1_ReluToAbs", "P2_ExpAbs"]
    marked = sorted(int(el[1:]) for el, cls in chain_wb.highlight.items() if "gb_prov_origin" in cls.split())
    assert marked == origins
    assert "gb_clicked" in chain_wb.side_highlight[f"n{sigmoid.id}"].split()
    assert (
        "after: RunCustomPass_AfterInferShape" in chain_wb.details_html
        and "P2_ExpAbs" in chain_wb.details_html
    )

    # the reverse: an original node clicked in the "before" pane marks what was made from it in the "after" pane
    chain_wb.select_node(origins[0])
    made = sorted(int(el[1:]) for el, cls in chain_wb.side_highlight.items() if "gb_prov_made" in cls.split())
    assert made == [sigmoid.id]
    assert not any("gb_prov_origin" in c for c in chain_wb.highlight.values()), "the previous marks are gone"
    assert not any("gb_clicked" in c for c in chain_wb.side_highlight.values())
    assert "gb_diff_added" in chain_wb.side_highlight[f"n{sigmoid.id}"], "the diff's own marks stay"

    # no diff: the marks go with it, and the side pane cannot be clicked
    chain_wb.show_diff("stage", "side")
    chain_wb.diff_mode = ""
    assert not any("gb_prov" in c for c in chain_wb.highlight.values()) and chain_wb.provenance == {}
    with pytest.raises(LookupError, match="no side-by-side diff"):
        chain_wb.select_side_node(sigmoid.id)


# ---------------------------------------------------------------------------------------------- stepping
def test_stepping_k_0_to_n_draws_the_graph_after_each_rewrite(abs_wb, monkeypatch):
    abs_wb.select_pass("A_AbsAbs")
    assert abs_wb.rewrite_step == {"pass": "A_AbsAbs", "n": 4, "k": -1, "record": -1}
    rewrites = abs_wb.pass_rewrites()
    replays = []
    original = abs_wb.run.ir_graph_after_rewrite
    monkeypatch.setattr(
        abs_wb.run, "ir_graph_after_rewrite", lambda p, k: replays.append((p, k)) or original(p, k)
    )
    seen = []
    for k in range(5):
        shown = abs_wb.step_rewrite(k)
        assert shown.ir is abs_wb.graph.ir and shown.find_node_by_name("out") is not None  # GE's Graph API
        graph = shown.ir
        names = {n.name for n in graph.nodes()}
        # after rewrite k the first k Abs pairs are folded, the others are still there
        for i in range(4):
            assert ({f"a{i}", f"b{i}"} <= names) == (i >= k), (k, i)
        assert set(abs_wb.view.node_ids) == {n.id for n in graph.nodes()}, "a small graph is drawn whole"
        assert abs_wb.rewrite_step == {
            "pass": "A_AbsAbs",
            "n": 4,
            "k": k,
            "record": rewrites[k - 1].index if k else -1,
        }
        marks = {int(el[1:]): cls.split() for el, cls in abs_wb.highlight.items()}
        new = {n for n, c in marks.items() if "gb_step_new" in c}
        nxt = {n for n, c in marks.items() if "gb_step_next" in c}
        assert new == (set(rewrites[k - 1].added_ids) if k else set())
        assert nxt == (set(rewrites[k].target_ids) if k < 4 else set())
        assert abs_wb.pane_title.startswith(f"rewrite {k} of 4")
        seen.append(abs_wb.svg_gz)
    assert len(set(seen)) == 5, "each step draws a different graph"
    assert replays == [("A_AbsAbs", k) for k in range(5)]
    # a step seen before costs no replay
    abs_wb.step_rewrite(2)
    assert replays[-1] == ("A_AbsAbs", 4) and abs_wb.svg_gz == seen[2]


def test_stepping_bounds_other_passes_and_leaving(abs_wb):
    with pytest.raises(ValueError, match="select a pass"):
        abs_wb.step_rewrite(0)
    abs_wb.select_pass("A_AbsAbs")
    with pytest.raises(IndexError, match="k must be in 0..4"):
        abs_wb.step_rewrite(5)
    # another pass by name: it is selected, and its one rewrite is stepped to
    graph = abs_wb.step_rewrite(1, "B_ExpNeg").ir
    assert abs_wb.selected_pass == "B_ExpNeg" and abs_wb.rewrite_step["k"] == 1
    assert "Reciprocal" in {n.op_type for n in graph.nodes()}
    snapshot_ids = {n.id for n in abs_wb._graphs[abs_wb.snapshot].nodes()}
    assert abs_wb.status_text.startswith("B_ExpNeg: after rewrite 1 of 1")
    abs_wb.leave_rewrite_step()
    assert abs_wb.rewrite_step == {"pass": "B_ExpNeg", "n": 1, "k": -1, "record": -1}
    assert abs_wb.status_text == "", "the status line no longer describes a step"
    assert set(abs_wb.view.node_ids) == snapshot_ids and abs_wb.pane_title == ""
    assert not any("gb_step" in c for c in abs_wb.highlight.values())
    # selecting a pass while stepping draws the snapshot again and resets the slider
    abs_wb.step_rewrite(1)
    abs_wb.select_pass("A_AbsAbs")
    assert abs_wb.rewrite_step == {"pass": "A_AbsAbs", "n": 4, "k": -1, "record": -1}
    assert "step" not in abs_wb.view_info
    # a diff, overlay too, replaces the step's drawing
    abs_wb.step_rewrite(2)
    abs_wb.show_diff("pass", "overlay")
    assert abs_wb.rewrite_step["k"] == -1 and abs_wb.pane_title.startswith("overlay: ")
    assert not any("gb_step" in c for c in abs_wb.highlight.values())
    # stepping again takes the diff off
    abs_wb.step_rewrite(2)
    assert abs_wb.diff_mode == "" and abs_wb.diff_info == {} and abs_wb.rewrite_step["k"] == 2


def test_stepping_a_large_graph_draws_the_neighbourhood_of_rewrite_k(tmp_path):
    path = tmp_path / "bisect_passes.py"
    path.write_text(textwrap.dedent(PASSES))
    wb = Workbench(ir.parse_text(_graph(12)), passes=[str(path)], threshold=10, hops=1)
    wb.select_pass("A_AbsAbs")
    graph = wb.step_rewrite(6).ir
    rewrites = wb.pass_rewrites()
    drawn = set(wb.view.node_ids)
    assert wb.view_info["focused"] and len(drawn) < len(graph)
    assert set(rewrites[5].added_ids) <= drawn and set(rewrites[6].target_ids) <= drawn
    assert not set(rewrites[0].added_ids) & drawn, "far-away rewrites are not drawn"


def test_step_rewrite_from_the_front_end(abs_wb):
    abs_wb.select_pass("A_AbsAbs")
    abs_wb._on_message(abs_wb, {"action": "step_rewrite", "k": 3, "seq": 7}, [])
    assert abs_wb.seq == 7 and abs_wb.rewrite_step["k"] == 3
    abs_wb._on_message(abs_wb, {"action": "leave_step", "seq": 8}, [])
    assert abs_wb.seq == 8 and abs_wb.rewrite_step["k"] == -1


def test_a_rerun_leaves_the_step_view_and_replays_the_new_run(abs_wb):
    abs_wb.step_rewrite(2, "A_AbsAbs")
    old_run = abs_wb.run
    abs_wb.rerun(full=True)
    assert abs_wb.run is not old_run
    assert abs_wb.rewrite_step == {"pass": "A_AbsAbs", "n": 4, "k": -1, "record": -1}
    assert set(abs_wb.view.node_ids) == {n.id for n in abs_wb._graphs[abs_wb.snapshot].nodes()}
    graph = abs_wb.step_rewrite(2).ir
    assert abs_wb._step_cache[0] is abs_wb.run and {"a1", "b1"}.isdisjoint(n.name for n in graph.nodes())
