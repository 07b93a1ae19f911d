"""The workbench's Python side, tested through its traits (no browser).

The run given to the widget here is a small stand-in with the shape of ``gebench.Run`` (snapshots,
graph, ledger records, explain, report), built from real IR graphs so drawing and diffing are real.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from gebench import ir
from gebench.viz import Workbench
from gebench.viz._synthetic import transformer_like

BEFORE = """graph g
  #0 x = Data() {index=0} -> (DT_FLOAT[2,3])
  #1 w = Const() {value=tensor(DT_FLOAT[3,4], [0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0])} -> (DT_FLOAT[3,4])
  #2 mm = MatMul(x:0, w:0) -> (DT_FLOAT[2,4])
  #3 b = Const() {value=tensor(DT_FLOAT[4], [0.0,0.0,0.0,0.0])} -> (DT_FLOAT[4])
  #4 add = Add(mm:0, b:0) -> (DT_FLOAT[2,4])
  #5 r = Relu(add:0) -> (DT_FLOAT[2,4])
  #6 z = Const() {value=tensor(DT_FLOAT[], [0.0])} -> (DT_FLOAT[])
  #7 add2 = Add(r:0, z:0) -> (DT_FLOAT[2,4])
  #8 out = NetOutput(add2:0)
"""


def _after() -> ir.Graph:
    g = ir.parse_text(BEFORE)
    x, w, b = g.node_by_name("x"), g.node_by_name("w"), g.node_by_name("b")
    r = g.node_by_name("r")
    gemm = g.add_node("GEMM", name="gemm", inputs=3, outputs=[ir.TensorDesc.of(ir.DataType.DT_FLOAT, (2, 4))])
    gemm.provenance = "FuseMatMulAdd"
    g.remove_node(g.node_by_name("add"))
    g.remove_node(g.node_by_name("mm"))
    g.add_edge(x, 0, gemm, 0)
    g.add_edge(w, 0, gemm, 1)
    g.add_edge(b, 0, gemm, 2)
    g.add_edge(gemm, 0, r, 0)
    return g


@dataclass
class StandInRun:
    snapshots: dict[str, ir.Graph]
    graph: ir.Graph
    ledger: list[dict[str, Any]]
    status: str = "SUCCESS"
    failed_pass: str | None = None
    explained: list[Any] = field(default_factory=list)

    def explain(self, node: Any) -> str:
        self.explained.append(node)
        return f"AddZero: rejected at {node}: meet_requirements returned False"

    def report(self) -> dict[str, Any]:
        return {"status": self.status, "records": len(self.ledger)}


def _run() -> StandInRun:
    before = ir.parse_text(BEFORE)
    after = _after()
    gemm_id = after.node_by_name("gemm").id
    ledger = [
        {"pass_name": "FuseMatMulAdd", "stage": "BeforeInferShape", "pattern_name": "FuseMatMulAdd_pattern",
         "status": "REPLACED", "reason": "", "target_node_ids": [2, 4], "target_node_names": ["mm", "add"],
         "captures": [], "pattern_source": "passes/fuse.py:12", "hook_source": "passes/fuse.py:20",
         "meet_requirements_result": True, "removed_node_ids": [2, 4], "added_node_ids": [gemm_id],
         "max_abs_error": 0.0, "max_rel_error": 0.0},
        {"pass_name": "AddZero", "stage": "BeforeInferShape", "pattern_name": "AddZero_pattern",
         "status": "REJECTED_BY_MEET_REQUIREMENTS", "reason": "meet_requirements returned False",
         "target_node_ids": [4, 3], "target_node_names": ["add", "b"], "captures": [],
         "pattern_source": "passes/add_zero.py:8", "hook_source": "passes/add_zero.py:15",
         "meet_requirements_result": False},
        {"pass_name": "AddZero", "stage": "BeforeInferShape", "pattern_name": "AddZero_pattern",
         "status": "STRUCTURAL_MISMATCH", "reason": "expected Const at input 1, found Relu",
         "target_node_ids": [7], "target_node_names": ["add2"], "captures": [],
         "detail": {"pattern_node": "c", "expected": "Const", "actual": "Relu"}},
        {"pass_name": "AddZero", "stage": "BeforeInferShape", "pattern_name": "AddZero_pattern",
         "status": "REPLACEMENT_FAILED", "reason": "replacement raised", "target_node_ids": [7, 6],
         "target_node_names": ["add2", "z"], "exception": "ValueError: boom (passes/add_zero.py:30)"},
    ]
    return StandInRun({"PreRunBegin": before, "RunCustomPassBeforeInfershape": after}, after, ledger)


@pytest.fixture
def wb() -> Workbench:
    return Workbench(_run())


def _svg(wb: Workbench) -> str:
    return gzip.decompress(wb.svg_gz).decode()


def test_opens_on_the_first_snapshot_with_passes_grouped_by_stage(wb):
    assert wb.snapshots == ["PreRunBegin", "RunCustomPassBeforeInfershape", "final"]
    assert wb.snapshot == "PreRunBegin"
    assert wb.view_info["drawn"] == 9 and not wb.view_info["focused"]
    assert [s["stage"] for s in wb.stages] == ["BeforeInferShape"]
    passes = {p["name"]: p for p in wb.stages[0]["passes"]}
    assert list(passes) == ["AddZero", "FuseMatMulAdd"]
    assert passes["AddZero"]["candidates"] == 3
    assert passes["AddZero"]["rejected"] == {"REJECTED_BY_MEET_REQUIREMENTS": 1, "REPLACEMENT_FAILED": 1,
                                             "STRUCTURAL_MISMATCH": 1}
    assert passes["FuseMatMulAdd"]["replaced"] == 1
    assert '<g id="n2" class="node gb_node gb_op_MatMul"' in _svg(wb)
    assert wb.title.endswith("SUCCESS")


def test_selecting_a_pass_restyles_without_a_new_layout(wb):
    svg_before = wb.svg_gz
    wb.selected_pass = "AddZero"
    assert wb.svg_gz == svg_before
    # node 4 (add) is rejected, node 7 has both near-miss and failed: failed wins by precedence
    assert wb.highlight == {"n4": "gb_st_rejected", "n3": "gb_st_rejected", "n7": "gb_st_failed",
                            "n6": "gb_st_failed"}
    assert [c["status"] for c in wb.candidates] == ["REJECTED_BY_MEET_REQUIREMENTS", "STRUCTURAL_MISMATCH",
                                                    "REPLACEMENT_FAILED"]
    assert wb.candidates[2]["exception"].startswith("ValueError: boom")
    assert wb.candidates[0]["pattern_src"] == "passes/add_zero.py:8"
    wb.selected_pass = "FuseMatMulAdd"
    assert wb.svg_gz == svg_before
    assert wb.highlight == {"n2": "gb_st_replaced", "n4": "gb_st_replaced"}
    assert wb.candidates[0]["verify"] == {"abs": 0.0, "rel": 0.0, "ok": True}


def test_selecting_a_candidate_marks_it_and_fills_details(wb):
    wb.select_candidate(1)
    assert wb.selected_pass == "AddZero"
    assert wb.highlight["n4"] == "gb_st_rejected gb_sel"
    assert "meet_requirements returned False" in wb.details_html
    assert "passes/add_zero.py:15" in wb.details_html
    wb.select_candidate(2)
    assert "gb_sel" in wb.highlight["n7"] and "gb_sel" not in wb.highlight["n4"]
    assert "expected Const at input 1" in wb.details_html
    with pytest.raises(IndexError):
        wb.select_candidate(42)


def test_clicking_a_node_shows_attrs_and_descs(wb):
    wb.selected_node = 1
    assert "Const" in wb.details_html and "<code>w</code>" in wb.details_html
    assert "f32[3,4]" in wb.details_html
    wb.select_node("mm")
    assert "MatMul" in wb.details_html and "x:0" in wb.details_html and "add:0" in wb.details_html
    assert "why not here?" in wb.details_html


def test_why_not_asks_the_run_and_shows_the_answer(wb):
    answer = wb.why_not("add2")
    assert wb.run.explained == ["add2"]
    assert "meet_requirements returned False" in answer
    assert "why / why not" in wb.details_html and "rejected at add2" in wb.details_html
    wb._on_message(wb, {"action": "explain", "node": 5}, [])
    assert wb.run.explained[-1] == "r"


def test_switching_snapshot_redraws_and_keeps_highlight(wb):
    wb.selected_pass = "FuseMatMulAdd"
    wb.snapshot = "final"
    assert "gb_op_GEMM" in _svg(wb)
    assert "n2" not in wb.highlight  # removed nodes are not in this drawing


def test_pass_diff_side_by_side_and_overlay(wb):
    wb.selected_pass = "FuseMatMulAdd"
    diff = wb.show_diff("pass", "side")
    assert diff.removed == [2, 4] and len(diff.added) == 1
    gemm = diff.added[0]
    assert wb.highlight["n2"].endswith("gb_diff_removed")
    assert wb.side_highlight[f"n{gemm}"] == "gb_diff_added"
    assert "gb_op_GEMM" in gzip.decompress(wb.side_svg_gz).decode()
    assert wb.side_title.startswith("after:")
    diff = wb.show_diff("pass", "overlay")
    svg = _svg(wb)
    assert "gb_op_GEMM" in svg and "gb_op_MatMul" in svg
    assert wb.highlight[f"n{gemm}"] == "gb_diff_added"
    assert wb.side_svg_gz == b""
    wb.diff_mode = ""
    assert not any("gb_diff" in v for v in wb.highlight.values())


def test_stage_diff_compares_consecutive_snapshots(wb):
    wb.snapshot = "PreRunBegin"
    diff = wb.show_diff("stage", "side")
    assert sorted(diff.removed) == [2, 4]
    assert diff.changed == {5: "inputs rewired"}
    with pytest.raises(ValueError):
        wb.show_diff("nope")


def test_exports(wb, tmp_path):
    wb.selected_pass = "FuseMatMulAdd"
    svg_path = wb.export_svg(tmp_path / "view.svg")
    text = svg_path.read_text()
    assert 'id="n2" class="gb_st_replaced node' in text and "<style>" in text
    report = wb.export_report(tmp_path / "r.json")
    assert json.loads(report.read_text()) == {"status": "SUCCESS", "records": 4}
    wb.export_dir = tmp_path / "exports"
    wb._on_message(wb, {"action": "export_svg"}, [])
    assert wb.status_text.startswith("wrote ")
    assert list((tmp_path / "exports").iterdir())  # the button writes into export_dir


def test_actions_that_cannot_run_say_why(wb):
    wb._on_message(wb, {"action": "run"}, [])
    assert "no passes to run" in wb.status_text
    wb._on_message(wb, {"action": "verify"}, [])
    assert "cannot verify" in wb.status_text


def test_graph_without_run_is_drawn(tmp_path):
    g = ir.parse_text(BEFORE)
    wb = Workbench(g)
    assert wb.snapshots == ["model"] and wb.stages == []
    assert wb.view_info["drawn"] == 9
    with pytest.raises(KeyError, match="no pass"):
        wb.select_pass("X")


def test_large_graph_opens_on_an_overview_then_focuses():
    g = transformer_like(3000)
    wb = Workbench(g, threshold=1500, hops=2, max_focus_nodes=60, overview_groups=50)
    assert wb.view_info["overview"] and not wb.view_info["focused"] and wb.view_info["level"] == 0
    assert 1 < wb.view_info["drawn"] <= 50
    assert '<g id="g1" class="node gb_node gb_group"' in wb.svg
    assert wb.levels == [{"group": 0, "label": "model"}]
    members = wb.hierarchy().members(1)
    assert members and all(wb.view.element_of[i] == "g1" for i in members)
    wb._on_message(wb, {"action": "open_group", "group": 1}, [])
    assert wb.view_info["level"] == 1 and [c["group"] for c in wb.levels] == [0, 1]
    drawn = {n.id for n in wb.view.nodes if n.id >= 0}
    assert drawn <= set(members)
    wb._on_message(wb, {"action": "level_up"}, [])
    assert wb.view_info["level"] == 0
    wb.show_overview()
    assert wb.view_info["overview"]
    hits = wb.find("blk300/relu")
    assert [n.name for n in hits] == ["blk300/relu"]
    nid = hits[0].id
    assert nid in wb.view.node_ids
    assert wb.highlight[f"n{nid}"] == "gb_found" and wb.selected_node == nid
    assert wb.search_hits["hits"][0]["name"] == "blk300/relu" and wb.search_hits["pos"] == 0
    assert "blk300/relu" in wb.details_html
    assert wb.view_info["focused"] and wb.view_info["drawn"] <= 60
    assert wb.bytes_per_node() < 400


def test_overview_highlights_groups_and_switching_passes_keeps_the_layout():
    g = transformer_like(3000)
    records = [{"pass_name": "P", "stage": "BeforeInferShape", "status": "REPLACED",
                "target_node_ids": [mm.id], "target_node_names": [mm.name]} for mm in g.nodes_of_type("MatMul")[:3]]
    records.append({"pass_name": "Q", "stage": "BeforeInferShape", "status": "STRUCTURAL_MISMATCH",
                    "target_node_ids": [g.node_by_name("blk200/relu").id], "target_node_names": ["blk200/relu"]})
    run = StandInRun({"PreRunBegin": g}, g, records)
    wb = Workbench(run, threshold=1500, overview_groups=40)
    drawing = wb.svg_gz
    wb.select_pass("P")
    assert wb.svg_gz == drawing
    assert set(wb.highlight.values()) == {"gb_st_replaced"} and all(k.startswith("g") for k in wb.highlight)
    wb.select_pass("Q")
    assert wb.svg_gz == drawing and list(wb.highlight.values()) == ["gb_st_nearmiss"]
    wb.select_candidate(3)  # zooms into the candidate's neighbourhood
    assert wb.view_info["focused"]
    assert wb.highlight[f"n{g.node_by_name('blk200/relu').id}"] == "gb_st_nearmiss gb_sel"


def test_workbench_never_mutates_graphs(wb):
    texts = {k: ir.to_text(g) for k, g in wb._graphs.items()}
    wb.selected_pass = "AddZero"
    wb.select_candidate(1)
    wb.show_diff("pass", "overlay")
    wb.show_diff("stage", "side")
    wb.why_not("r")
    assert {k: ir.to_text(g) for k, g in wb._graphs.items()} == texts


def test_front_end_is_package_data_loaded_from_files():
    """The ES module and stylesheet are files inside the package that a wheel ships and anywidget loads."""
    from pathlib import Path

    import tomllib

    from gebench.viz import _frontend

    root = Path(__file__).resolve().parents[1]
    globs = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["gebench"]
    pkg = root / "gebench"
    shipped = {p for g in globs for p in pkg.glob(g)}
    assert {_frontend.ESM_PATH, _frontend.CSS_PATH} <= shipped
    wb = Workbench(ir.parse_text(BEFORE))
    assert wb._esm == _frontend.ESM_PATH.read_text() and "export default" in wb._esm
    assert wb._css == _frontend.CSS_PATH.read_text() and "g.node.gb_st_replaced" in wb._css
