"""The workbench on real compile runs (ledger from gebench.compile), hot reload and progress."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import gebench
from gebench.viz import Workbench

ROOT = Path(__file__).resolve().parents[1]

ADD_ZERO = '''from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass


@register_fusion_pass(name="VizAddZero", stage=PassStage.BEFORE_INFER_SHAPE)
class VizAddZero(PatternFusionPass):
    @pattern
    def add_zero(self, inputs):
        return inputs[0] + 0

    def meet_requirements(self, match_result):
        for node in match_result.get_matched_nodes():
            if node.type == "Const":
                data = node.get_attr("value").data
                values = data if isinstance(data, list) else [data]
                return all(v == LIMIT for v in values)
        return False

    def replacement(self, inputs):
        return inputs[0]


LIMIT = 1
'''


@pytest.fixture
def pass_dir(tmp_path: Path) -> Path:
    d = tmp_path / "passes"
    d.mkdir()
    (d / "viz_add_zero.py").write_text(ADD_ZERO)
    return d


def test_real_run_rejection_then_hot_reload_gains_the_site(pass_dir):
    wb = Workbench(ROOT / "assets" / "add_zero.onnx", passes=[pass_dir])
    assert wb.run.status == "SUCCESS"
    wb.select_pass("VizAddZero")
    assert [c["status"] for c in wb.candidates] == ["REJECTED_BY_MEET_REQUIREMENTS"]
    add = wb.graph.ir.node_by_name("add_zero")
    assert wb.highlight[f"n{add.id}"] == "gb_st_rejected"
    assert wb.candidates[0]["hook_src"].startswith(str(pass_dir / "viz_add_zero.py") + ":")
    wb.select_candidate(wb.candidates[0]["i"])
    assert wb.side_svg_gz, "the pattern is drawn beside the graph"
    assert set(wb.side_highlight.values()) == {"gb_bound"}
    assert "VizAddZero" in wb.why_not("add_zero")[0].pass_name

    time.sleep(0.01)  # a new mtime even on coarse clocks; the reload also compares content hashes
    (pass_dir / "viz_add_zero.py").write_text(ADD_ZERO.replace("LIMIT = 1", "LIMIT = 0"))
    report = wb.rerun()
    assert report == [{"pass": "VizAddZero", "gained": [["add_zero", "zero_Initializer_0"]], "lost": []}]
    assert "reloaded viz_add_zero.py" in wb.status_text
    assert [c["status"] for c in wb.candidates] == ["REPLACED"]
    assert wb.reload_report == report


def test_a_broken_edit_keeps_the_last_good_version(pass_dir):
    wb = Workbench(ROOT / "assets" / "add_zero.onnx", passes=[pass_dir])
    (pass_dir / "viz_add_zero.py").write_text(ADD_ZERO.replace("LIMIT = 1", "LIMIT = 0") + "\ndef broken(:\n")
    report = wb.rerun()
    assert report == []
    assert "kept the last good version" in wb.status_text and "SyntaxError" in wb.status_text
    assert [r.pass_name for r in wb.rows] == ["(pass files)", "VizAddZero"]
    assert wb.stages[0]["stage"] == "Load" and wb.stages[0]["passes"][0]["lints"] == 1
    assert wb.rows[0].status == "LINT" and "viz_add_zero.py" in wb.rows[0].reason


def test_quickstart_model_with_example_passes_highlights_every_candidate():
    model = gebench.load(ROOT / "assets" / "small_transformer.onnx")
    wb = Workbench(model, passes=[ROOT / "passes"])
    names = [p["name"] for s in wb.stages for p in s["passes"] if p["candidates"]]
    assert names
    drawn = wb.svg_gz
    for name in names:
        wb.select_pass(name)
        assert wb.svg_gz == drawn
        ids = {i for r in wb.pass_rows(name) for i in r.target_ids if wb.graph.ir.has_node_id(i)}
        assert set(wb.view.elements_for(ids)) == set(wb.highlight)
        assert all(f'id="{el}"' in wb.svg for el in wb.highlight)
    assert "Workbench" in repr(wb) and "SUCCESS" in repr(wb)


def test_exporting_ge_dumps_writes_ge_file_names(tmp_path, pass_dir):
    wb = Workbench(ROOT / "assets" / "add_zero.onnx", passes=[pass_dir], export_dir=tmp_path)
    paths = wb.export_dumps()
    names = [p.name for p in paths]
    assert any(n.startswith("ge_proto_00000000_graph_0_PreRunBegin") for n in names)
    assert all(p.parent == tmp_path / "dumps" for p in paths)


def test_progress_is_shown_for_slow_steps(pass_dir):
    wb = Workbench(ROOT / "assets" / "add_zero.onnx", passes=[pass_dir])
    seen = []
    wb.observe(lambda ch: seen.append(ch["new"]), "busy")
    with wb._progress("slow step", after=0.05):
        time.sleep(0.3)
    assert seen == [True, False]
    assert wb.status_text.startswith("slow step: ")
    seen.clear()
    with wb._progress("fast step", after=5):
        pass
    assert seen == []


def test_verify_puts_the_max_error_on_each_rewrite(pass_dir):
    (pass_dir / "viz_add_zero.py").write_text(ADD_ZERO.replace("LIMIT = 1", "LIMIT = 0"))
    wb = Workbench(ROOT / "assets" / "add_zero.onnx", passes=[pass_dir])
    wb.select_pass("VizAddZero")
    assert wb.candidates[0]["verify"] is None
    wb.verify()
    badge = wb.candidates[0]["verify"]
    assert badge is not None and badge["ok"] and badge["abs"] == 0.0
    assert wb.status_text == "verified 1 rewrite(s); 0 change results"


def test_source_links_show_the_pass_file_lines(pass_dir):
    wb = Workbench(ROOT / "assets" / "add_zero.onnx", passes=[pass_dir])
    wb.select_pass("VizAddZero")
    hook = wb.candidates[0]["hook_src"]
    wb._on_message(wb, {"action": "show_source", "src": hook}, [])
    line = int(hook.rsplit(":", 1)[1])
    source_line = ADD_ZERO.splitlines()[line - 1]
    assert "def meet_requirements" in source_line
    assert "<span class='gb-hot'>" in wb.details_html and "meet_requirements(self, match_result)" in wb.details_html
    wb._on_message(wb, {"action": "show_source", "src": "nowhere"}, [])
    assert wb.status_text.startswith("show_source: ValueError")


COUNTING_EARLY = ADD_ZERO.replace('name="VizAddZero"', 'name="VizEarlyCounter"').replace(
    "class VizAddZero(", "class VizEarlyCounter(").replace(
    "    def meet_requirements(self, match_result):\n",
    "    def meet_requirements(self, match_result):\n        with open(COUNTER, 'a') as fh:\n"
    "            fh.write('ran\\n')\n").replace("LIMIT = 1", "LIMIT = 7\nCOUNTER = {counter!r}")
LATE = ADD_ZERO.replace('name="VizAddZero"', 'name="VizLateAddZero"').replace(
    "class VizAddZero(", "class VizLateAddZero(").replace("PassStage.BEFORE_INFER_SHAPE", "PassStage.AFTER_INFER_SHAPE")


def _outcome(rows):
    return sorted((r.pass_name, r.stage, r.status, tuple(sorted(r.target_names))) for r in rows)


def test_rerun_starts_from_the_cached_snapshot_before_the_changed_stage(tmp_path):
    from gebench.fusion import runtime

    passes = tmp_path / "passes"
    passes.mkdir()
    counter = tmp_path / "early_runs.txt"
    (passes / "early.py").write_text(COUNTING_EARLY.format(counter=str(counter)))
    (passes / "late.py").write_text(LATE)
    wb = Workbench(ROOT / "assets" / "add_zero.onnx", passes=[passes])
    assert counter.read_text().count("ran") == 1
    assert wb.last_rerun == {"from_snapshot": None, "stages": list(runtime.STAGE_ORDER)}
    wb.select_pass("VizLateAddZero")
    assert [c["status"] for c in wb.candidates] == ["REJECTED_BY_MEET_REQUIREMENTS"]

    (passes / "late.py").write_text(LATE.replace("LIMIT = 1", "LIMIT = 0"))
    report = wb.rerun()
    # the BeforeInferShape pass did not run again; the later stages ran on its cached output
    assert counter.read_text().count("ran") == 1
    assert wb.last_rerun == {"from_snapshot": "RunCustomPassBeforeInfershape", "stages": list(runtime.STAGE_ORDER[1:])}
    assert report == [{"pass": "VizLateAddZero", "gained": [["add_zero", "zero_Initializer_0"]], "lost": []}]
    assert "re-ran AfterInferShape" in wb.status_text
    # (a lint too: a replacement after shape inference that does not call infer_shape)
    assert [c["status"] for c in wb.candidates if c["status"] != "LINT"] == ["REPLACED"]
    # the merged run holds the earlier stage's records and snapshots, and equals a full compile
    full = gebench.compile(ROOT / "assets" / "add_zero.onnx", passes=[passes])
    assert counter.read_text().count("ran") == 2
    assert wb.run.status == full.status == "SUCCESS"
    assert _outcome(wb.rows) == _outcome(Workbench(full).rows)
    assert list(wb.run.ir_snapshots) == list(full.ir_snapshots)
    for label, graph in full.ir_snapshots.items():
        assert gebench.ir.to_text(wb.run.ir_snapshots[label]) == gebench.ir.to_text(graph), label
    assert wb.run.ir_graph.find("add_zero") is None

    # editing it back loses the site again, still without re-running the first stage
    counter.write_text("")
    (passes / "late.py").write_text(LATE)
    report = wb.rerun()
    assert report == [{"pass": "VizLateAddZero", "gained": [], "lost": [["add_zero", "zero_Initializer_0"]]}]
    assert counter.read_text() == ""

    # a change in the first stage re-runs everything from the original graph
    (passes / "early.py").write_text(COUNTING_EARLY.format(counter=str(counter)).replace("LIMIT = 7", "LIMIT = 8"))
    wb.rerun()
    assert counter.read_text().count("ran") == 1
    assert wb.last_rerun["from_snapshot"] is None


RELU_OF_MUL = '''from ge.es.math import Mul
from ge.es.nn import Relu
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass


@register_fusion_pass(name="VizReluOfMul", stage=PassStage.BEFORE_INFER_SHAPE)
class VizReluOfMul(PatternFusionPass):
    @pattern
    def relu_of_mul(self, inputs):
        return Relu(Mul(inputs[0], inputs[1]))

    def meet_requirements(self, match_result):
        return True

    def replacement(self, inputs):
        return Relu(inputs[0])
'''


def test_a_near_miss_shows_how_far_the_pattern_got(tmp_path):
    d = tmp_path / "passes"
    d.mkdir()
    (d / "viz_relu_of_mul.py").write_text(RELU_OF_MUL)
    wb = Workbench(ROOT / "assets" / "add_zero.onnx", passes=[d])
    wb.select_pass("VizReluOfMul")
    assert [c["status"] for c in wb.candidates] == ["STRUCTURAL_MISMATCH"]
    (record,) = [r for r in wb.run.ledger if r.pass_name == "VizReluOfMul" and r.status.name != "LINT"]
    # the Relu anchor was bound before the Mul failed to match the Add feeding it
    assert list(record.detail["bindings"].values()) == ["relu"] and record.detail["pattern_node"].startswith("Mul")
    (miss,) = wb.run.ledger.near_misses(record.pattern_name)
    assert miss.bindings == record.detail["bindings"] and miss.bound_count == 1
    wb.select_candidate(wb.candidates[0]["i"])
    assert sorted(wb.side_highlight.values()) == ["gb_bound", "gb_diverge"]
    bound = [k for k, v in wb.side_highlight.items() if v == "gb_bound"]
    assert bound == [f"n{next(iter(record.detail['bindings']))}"]
