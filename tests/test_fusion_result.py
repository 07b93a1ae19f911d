"""GE's fusion statistics (spec ge-fusion-artifacts §1): counting, ``Run.fusion_result()``, the file written by
``gebench atc`` / ``gebench compile --fusion-result``, and ``gebench compare`` against a real machine's file."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

import gebench
from gebench import cli, ir
from gebench.fusion.statistics import FusionResultError, read_fusion_result

GRAPH = """\
graph chain
  #0 x = Data() {index=0} -> (y: DT_FLOAT[2,3])
  #1 r1 = Relu(x=x:0) -> (y: DT_FLOAT[2,3])
  #2 r2 = Relu(x=r1:0) -> (y: DT_FLOAT[2,3])
  #3 r3 = Relu(x=r2:0) -> (y: DT_FLOAT[2,3])
  #4 a1 = Abs(x=r3:0) -> (y: DT_FLOAT[2,3])
  #5 a2 = Abs(x=a1:0) -> (y: DT_FLOAT[2,3])
  #6 n1 = Neg(x=a2:0) -> (y: DT_FLOAT[2,3])
  #7 e1 = Exp(x=n1:0) -> (y: DT_FLOAT[2,3])
  #8 out = NetOutput(x0=e1:0)
"""

# ACCEPT names the Relu nodes the pattern pass fuses; the other passes are fixed
PASSES = """
from ge.es import GraphBuilder
from ge.es.all import Abs, Relu, Sigmoid, Sqrt, Tanh
from ge.passes import (DecomposePass, FusionBasePass, PassStage, PatternFusionPass, SubgraphBoundary,
                       SubgraphInput, SubgraphOutput, SubgraphRewriter, pattern, register_decompose_pass,
                       register_fusion_pass, report_fuse)

ACCEPT = {accept!r}


@register_fusion_pass(name="ReluToSigmoid", stage=PassStage.BEFORE_INFER_SHAPE)
class ReluToSigmoid(PatternFusionPass):
    @pattern
    def relu(self, inputs):
        return Relu(inputs[0])

    def meet_requirements(self, match_result):
        return match_result.get_matched_nodes()[0].name in ACCEPT

    def replacement(self, inputs):
        return Sigmoid(inputs[0])


@register_decompose_pass(name="AbsNegDecompose", stage=PassStage.BEFORE_INFER_SHAPE, op_types=["Abs", "Neg"])
class AbsNegDecompose(DecomposePass):
    def meet_requirements(self, node):
        return node.type == "Abs"

    def replacement(self, node):
        b = GraphBuilder("sqrt")
        return b.build_and_reset([Sqrt(b.create_input(0))])


def _one(graph, op_type):
    return next(n for n in graph.get_direct_nodes() if n.type == op_type)


def _exp_boundary(graph):
    exp = _one(graph, "Exp")
    boundary = SubgraphBoundary()
    boundary.add_input(0, SubgraphInput([(exp, 0)]))
    boundary.add_output(0, SubgraphOutput(exp, 0))
    return boundary


def _replacement(op):
    b = GraphBuilder("r")
    return b.build_and_reset([op(b.create_input(0))])


@register_fusion_pass(name="ZByHand", stage=PassStage.AFTER_INFER_SHAPE)
class ZByHand(FusionBasePass):
    def run(self, graph, context):
        # without a context: GE records nothing; with one: one match, one effect; report_fuse: one of each
        SubgraphRewriter.replace(_exp_boundary(graph), _replacement(Tanh))
        tanh = _one(graph, "Tanh")
        boundary = SubgraphBoundary()
        boundary.add_input(0, SubgraphInput([(tanh, 0)]))
        boundary.add_output(0, SubgraphOutput(tanh, 0))
        SubgraphRewriter.replace(boundary, _replacement(Abs), context=context)
        report_fuse([_one(graph, "Abs")], [], context)
        return True


@register_fusion_pass(name="NeverMatches", stage=PassStage.BEFORE_INFER_SHAPE)
class NeverMatches(PatternFusionPass):
    @pattern
    def tanh(self, inputs):
        return Tanh(Tanh(inputs[0]))

    def meet_requirements(self, match_result):
        return True

    def replacement(self, inputs):
        return Tanh(inputs[0])
"""


def pass_file(folder: Path, accept=("r1", "r3"), name: str = "stats_passes.py") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(PASSES.replace("{accept!r}", repr(set(accept)))))
    return path


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "chain.gir"
    path.write_text(GRAPH)
    return path


def _compile(model, passes, **kwargs):
    run = gebench.compile(str(model), passes=[str(passes)], **kwargs)
    assert run.status == "SUCCESS", run.failure_reason
    return run


def test_counts_follow_ge(model, tmp_path):
    run = _compile(model, pass_file(tmp_path))
    fusion = run.fusion_result()
    assert list(fusion) == ["session_and_graph_id_0_0"]
    assert fusion["session_and_graph_id_0_0"] == {"graph_fusion": {
        # 3 matches counted before meet_requirements, 2 accepted
        "ReluToSigmoid": {"match_times": "3", "effect_times": "2"},
        # per op type: 2 Abs visited and replaced, 1 Neg visited and rejected
        "AbsNegDecompose": {"match_times": "3", "effect_times": "2"},
        # SubgraphRewriter.replace with a context and report_fuse; the one without a context is not counted
        "ZByHand": {"match_times": "2", "effect_times": "2"},
    }}  # NeverMatches had no match: absent


def test_switched_off_passes_are_absent_and_nothing_recorded_means_empty(model, tmp_path):
    switch = {"Switch": {"GraphFusion": {"ReluToSigmoid": "off", "ZByHand": "off", "AbsNegDecompose": "off"}}}
    run = _compile(model, pass_file(tmp_path), fusion_switch=switch)
    assert run.fusion_result() == {}
    switch["Switch"]["GraphFusion"]["AbsNegDecompose"] = "on"
    run = _compile(model, pass_file(tmp_path), fusion_switch=switch)
    assert set(run.fusion_result()["session_and_graph_id_0_0"]["graph_fusion"]) == {"AbsNegDecompose"}


def test_session_and_graph_ids_make_the_key(model, tmp_path):
    run = _compile(model, pass_file(tmp_path))
    assert list(run.fusion_result(session_id=3, graph_id=12)) == ["session_and_graph_id_3_12"]


def cli_main(argv, capsys):
    code = cli.main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_compile_writes_the_file_as_ge_does(model, tmp_path, capsys):
    target = tmp_path / "out" / "fusion_result.json"
    code, out, _ = cli_main(["compile", str(model), "--passes", str(pass_file(tmp_path)),
                             "--fusion-result", str(target)], capsys)
    assert code == 0 and f"fusion result: {target}" in out
    text = target.read_text()
    assert text.startswith('{\n    "session_and_graph_id_0_0": {\n        "graph_fusion": {\n')
    assert '"match_times": "3"' in text  # counts are strings
    assert read_fusion_result(target)["session_and_graph_id_0_0"]["graph_fusion"]["ReluToSigmoid"] == \
        {"match_times": 3, "effect_times": 2}


def _atc(model_path: Path, out_dir: Path, *extra: str) -> list[str]:
    return ["atc", f"--model={model_path}", "--framework=5", "--soc_version=Ascend910B1",
            f"--output={out_dir / 'model'}", "--gebench_backend=reference", *extra]


@pytest.fixture
def onnx_case(tmp_path, monkeypatch):
    """An ONNX model, a pass file in ASCEND_GE_PY_PASS_PATH and the current folder in tmp_path."""
    root = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(tmp_path)
    for var in ("ASCEND_WORK_PATH", "DUMP_GE_GRAPH", "ASCEND_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "no_bin"))  # no real atc
    monkeypatch.setenv("ASCEND_GE_PY_PASS_PATH", str(root / "tests" / "ge_samples" / "python_fuse_matmul_add_pass.py"))
    return root / "assets" / "matmul_add.onnx"


EXPECTED_ATC = {"session_and_graph_id_0_0": {"graph_fusion": {
    "PythonFuseMatMulAndAddPass": {"match_times": 1, "effect_times": 1}}}}


def test_atc_writes_fusion_result_in_the_current_folder_by_default(onnx_case, tmp_path, capsys):
    (tmp_path / "fusion_result.json").write_text("stale")
    code, out, err = cli_main(_atc(onnx_case, tmp_path / "o"), capsys)
    assert code == 0, err
    assert read_fusion_result(tmp_path / "fusion_result.json") == EXPECTED_ATC
    assert "fusion result:" in out


def test_atc_writes_under_ascend_work_path(onnx_case, tmp_path, monkeypatch, capsys):
    import os

    monkeypatch.setenv("ASCEND_WORK_PATH", str(tmp_path / "work"))
    code, _, err = cli_main(_atc(onnx_case, tmp_path / "o", "--export_compile_stat=2"), capsys)
    assert code == 0, err
    assert read_fusion_result(tmp_path / "work" / "FE" / str(os.getpid()) / "fusion_result.json") == EXPECTED_ATC
    assert not (tmp_path / "fusion_result.json").exists()


def test_atc_export_compile_stat_0_writes_nothing_and_removes_an_earlier_file(onnx_case, tmp_path, capsys):
    (tmp_path / "fusion_result.json").write_text("{}")
    code, _, err = cli_main(_atc(onnx_case, tmp_path / "o", "--export_compile_stat=0"), capsys)
    assert code == 0, err
    assert not (tmp_path / "fusion_result.json").exists()


def test_atc_bad_export_compile_stat_is_a_usage_error(onnx_case, tmp_path, capsys):
    code, _, err = cli_main(_atc(onnx_case, tmp_path / "o", "--export_compile_stat=3"), capsys)
    assert code == 2 and "--export_compile_stat=3" in err


def test_atc_honours_the_fusion_switch_file(onnx_case, tmp_path, capsys):
    switch = tmp_path / "switch.json"
    switch.write_text(json.dumps({"Switch": {"GraphFusion": {"ALL": "off"}}}))
    code, _, err = cli_main(_atc(onnx_case, tmp_path / "o", f"--fusion_switch_file={switch}"), capsys)
    assert code == 0, err
    assert not (tmp_path / "fusion_result.json").exists()  # the only pass is off: nothing recorded, no file


# ------------------------------------------------------------------------------------------------ compare
def _write(tmp_path: Path, model: Path, passes: Path, capsys) -> Path:
    target = tmp_path / "real" / "fusion_result.json"
    code, _, err = cli_main(["compile", str(model), "--passes", str(passes), "--fusion-result", str(target)], capsys)
    assert code == 0, err
    return target


def test_compare_reports_no_difference_for_a_file_gebench_wrote(model, tmp_path, capsys):
    passes = pass_file(tmp_path)
    real = _write(tmp_path, model, passes, capsys)
    code, out, err = cli_main(["compare", "--fusion-result", str(real), str(model), "--passes", str(passes)], capsys)
    assert code == 0, out + err
    assert out.rstrip().endswith("no difference")
    assert "ReluToSigmoid" in out and "!" not in out


def test_compare_names_the_pass_and_both_counts_for_an_edited_file(model, tmp_path, capsys):
    passes = pass_file(tmp_path)
    real = _write(tmp_path, model, passes, capsys)
    data = json.loads(real.read_text())
    data["session_and_graph_id_0_0"]["graph_fusion"]["ReluToSigmoid"]["effect_times"] = "3"
    data["session_and_graph_id_0_0"]["graph_fusion"]["FEBuiltinPass"] = {"match_times": "9", "effect_times": "9"}
    real.write_text(json.dumps(data, indent=4))
    code, out, _ = cli_main(["compare", "--fusion-result", str(real), str(model), "--passes", str(passes)], capsys)
    assert code == 1
    line = next(ln for ln in out.splitlines() if "ReluToSigmoid" in ln and ln.startswith("!"))
    assert "effect_times GE 3, gebench 2" in line
    assert "DIFFERENT: 1 pass(es) differ: ReluToSigmoid" in out
    assert "FEBuiltinPass" in out and "not compared" in out  # built-in passes are listed, not counted as a difference


def test_compare_from_python(model, tmp_path, capsys):
    passes = pass_file(tmp_path)
    run = _compile(model, passes)
    same = gebench.compare_fusion_result(run.fusion_result(), model, [str(passes)])
    assert same.equal and [r.pass_name for r in same.rows] == ["AbsNegDecompose", "NeverMatches", "ReluToSigmoid",
                                                               "ZByHand"]
    edited = run.fusion_result()
    del edited["session_and_graph_id_0_0"]["graph_fusion"]["AbsNegDecompose"]
    other = gebench.compare_fusion_result(edited, run)  # a finished run works too
    assert not other.equal
    assert [(r.pass_name, r.real_match, r.predicted_match) for r in other.differing] == [("AbsNegDecompose", 0, 3)]
    nothing = gebench.compare_fusion_result({}, run)  # a machine that recorded nothing: every pass that matched differs
    assert nothing.graph_key is None
    assert [r.pass_name for r in nothing.differing] == ["AbsNegDecompose", "ReluToSigmoid", "ZByHand"]


@pytest.mark.parametrize("content, words", [
    ("{bad json", "not JSON"),
    ('["a list"]', "top level is a JSON list"),
    ('{"session_and_graph_id_0_0": {"graph_fusion": {"P": {"match_times": "x"}}}}', "match_times is 'x'"),
])
def test_compare_bad_file_exits_2_naming_the_file(model, tmp_path, capsys, content, words):
    bad = tmp_path / "broken_result.json"
    bad.write_text(content)
    code, out, err = cli_main(["compare", "--fusion-result", str(bad), str(model), "--passes",
                               str(pass_file(tmp_path))], capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"gebench compare: {bad}") and words in err
    assert "Traceback" not in err
    with pytest.raises(FusionResultError, match="broken_result.json"):
        read_fusion_result(bad)


def test_compare_missing_inputs_exit_2(model, tmp_path, capsys):
    passes = pass_file(tmp_path)
    code, _, err = cli_main(["compare", "--fusion-result", str(tmp_path / "nope.json"), str(model), "--passes",
                             str(passes)], capsys)
    assert code == 2 and "nope.json: no such file" in err
    real = _write(tmp_path, model, passes, capsys)
    code, _, err = cli_main(["compare", "--fusion-result", str(real), str(tmp_path / "no_model.onnx"), "--passes",
                             str(passes)], capsys)
    assert code == 2 and "no_model.onnx does not exist" in err
    code, _, err = cli_main(["compare", "--fusion-result", str(real), str(model), "--passes", str(passes),
                             "--dump", str(tmp_path / "no_dump.txt")], capsys)
    assert code == 2 and "--dump" in err and "no_dump.txt" in err
    run = _compile(model, passes)
    onnx_dump = next(p for p in gebench.api.write_dumps(run, tmp_path / "dumps") if p.name.startswith("ge_onnx_"))
    code, _, err = cli_main(["compare", "--fusion-result", str(real), str(model), "--passes", str(passes),
                             "--dump", str(onnx_dump)], capsys)
    assert code == 2 and onnx_dump.name in err and "ge_proto" in err  # lossy: the message points to ge_proto


def test_compare_with_a_real_dump_shows_the_sites_that_differ(model, tmp_path, capsys):
    # the "machine" fused r1, r2 and r3; gebench's passes (as the user wrote them) accept r1 and r3 only
    (tmp_path / "machine").mkdir()
    machine_passes = pass_file(tmp_path / "machine", accept=("r1", "r2", "r3"))
    machine = _compile(model, machine_passes)
    dumps = gebench.api.write_dumps(machine, tmp_path / "machine_dumps")
    dump = next(p for p in dumps if p.name.startswith("ge_proto_") and "RunCustomPassBeforeInfershape" in p.name)
    real = tmp_path / "machine_result.json"
    real.write_text(json.dumps(machine.fusion_result(), indent=4))
    passes = pass_file(tmp_path)
    code, out, _ = cli_main(["compare", "--fusion-result", str(real), str(model), "--passes", str(passes),
                             "--dump", str(dump)], capsys)
    assert code == 1
    assert "effect_times GE 3, gebench 2" in out
    site = next(ln for ln in out.splitlines() if ln.startswith("! ReluToSigmoid: fused on the machine"))
    assert "from r2" in site and "REJECTED_BY_MEET_REQUIREMENTS" in site
    assert "sites:" in out and "RunCustomPassBeforeInfershape" in out
    # the same dump against the same passes: every site agrees
    code, out, _ = cli_main(["compare", "--fusion-result", str(real), str(model), "--passes", str(machine_passes),
                             "--dump", str(dump)], capsys)
    assert code == 0 and "every site agrees" in out and "no difference" in out


def test_compare_json_output(model, tmp_path, capsys):
    passes = pass_file(tmp_path)
    real = _write(tmp_path, model, passes, capsys)
    target = tmp_path / "cmp.json"
    code, _, _ = cli_main(["compare", "--fusion-result", str(real), str(model), "--passes", str(passes), "--json",
                           str(target)], capsys)
    assert code == 0
    data = json.loads(target.read_text())
    assert data["equal"] is True and data["graph_key"] == "session_and_graph_id_0_0"
    assert {r["pass_name"] for r in data["rows"]} == {"AbsNegDecompose", "NeverMatches", "ReluToSigmoid", "ZByHand"}


def test_run_fusion_result_of_an_ir_graph_without_passes():
    run = gebench.compile(ir.parse_text(GRAPH), passes=[])
    assert run.fusion_result() == {}


def test_pass_counts_per_verdict():
    from gebench.fusion.ledger import CandidateRecord, CandidateStatus
    from gebench.fusion.statistics import pass_counts

    def rec(pass_name, status, **detail):
        return CandidateRecord(pass_name, "BeforeInferShape", "g", "p", CandidateStatus(status), detail=detail)

    records = [
        rec("P", "STRUCTURAL_MISMATCH"), rec("P", "BOUNDARY_VIOLATION"), rec("P", "LOST_TO_OVERLAP"),  # no match
        rec("P", "REJECTED_BY_MEET_REQUIREMENTS"), rec("P", "WOULD_CREATE_CYCLE"),  # a match, no effect
        rec("P", "REPLACED"), rec("P", "REPLACEMENT_FAILED", reason_code="DATA_COUNT_MISMATCH"),
        rec("P", "LINT", rule="x"),
        rec("F", "REPLACED", via="report_fuse"),
        rec("F", "REPLACED", via="SubgraphRewriter.replace", with_context=True),
        rec("F", "REPLACED", via="SubgraphRewriter.replace", with_context=False),  # not reported for the pass
        rec("F", "REPLACEMENT_FAILED", via="run"), rec("F", "REPLACEMENT_FAILED", via="SubgraphRewriter.replace"),
        rec("Quiet", "STRUCTURAL_MISMATCH"),
    ]
    assert pass_counts(records) == {"P": (4, 1), "F": (2, 2)}
