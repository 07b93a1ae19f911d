"""`gebench compile`: summary, exit codes, report, dumps, and the subcommand registry."""

from __future__ import annotations

import json
import textwrap

import pytest

import gebench
from gebench import cli, ir

RELU_TO_ABS = """
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass
from ge.es.all import Relu, Abs


@register_fusion_pass(name="ReluToAbs", stage=PassStage.BEFORE_INFER_SHAPE)
class ReluToAbs(PatternFusionPass):
    @pattern
    def relu(self, inputs):
        return Relu(inputs[0])

    def meet_requirements(self, match_result):
        return match_result.get_matched_nodes()[0].name != "keep_me"

    def replacement(self, inputs):
        return Abs(inputs[0])
"""


@pytest.fixture
def model(tmp_path):
    from ge.es.all import Relu
    from ge.es.graph_builder import GraphBuilder

    b = GraphBuilder("model")
    x = b.create_input(0, shape=[2])
    graph = b.build_and_reset([Relu(Relu(x))])
    graph.ir.rename(graph.ir.node_by_name("Relu_1"), "keep_me")
    path = tmp_path / "model.gir"
    path.write_text(ir.to_text(graph.ir))
    return path


@pytest.fixture
def pass_dir(tmp_path):
    d = tmp_path / "passes"
    d.mkdir()
    (d / "relu_to_abs.py").write_text(textwrap.dedent(RELU_TO_ABS))
    return d


def test_compile_success_summary_report_and_dumps(model, pass_dir, tmp_path, capsys):
    report = tmp_path / "report.json"
    dumps = tmp_path / "dumps"
    code = cli.main(["compile", str(model), "--passes", str(pass_dir), "--report", str(report),
                     "--dump-dir", str(dumps)])
    out = capsys.readouterr().out
    assert code == 0
    assert "compile SUCCESS: 4 -> 4 nodes" in out
    assert ("[BeforeInferShape] ReluToAbs: 2 candidates, 1 replaced, rejected: REJECTED_BY_MEET_REQUIREMENTS=1"
            in out)
    data = json.loads(report.read_text())
    assert data["status"] == "SUCCESS" and data["summary"]["ReluToAbs"]["replaced"] == 1
    files = sorted(p.name for p in dumps.iterdir())
    for suffix in ("PreRunBegin", "RunCustomPassBeforeInfershape", "RunCustomPass_AfterInferShape",
                   "RunCustomPassAfterBuiltinFusionPass", "RunCustomPassAfterOriginGraphOptimize"):
        assert any(suffix in f for f in files), (suffix, files)


def test_compile_uses_env_pass_path(model, pass_dir, monkeypatch, capsys):
    monkeypatch.setenv("ASCEND_GE_PY_PASS_PATH", str(pass_dir))
    assert cli.main(["compile", str(model), "--quiet"]) == 0
    assert capsys.readouterr().out.strip() == "compile SUCCESS: 4 -> 4 nodes"


def test_compile_failure_exit_code(model, tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text(textwrap.dedent("""
        from ge.passes import FusionBasePass, PassStage, register_fusion_pass


        @register_fusion_pass(name="Fails", stage=PassStage.BEFORE_INFER_SHAPE)
        class Fails(FusionBasePass):
            def run(self, graph, context):
                return False
    """))
    code = cli.main(["compile", str(model), "--passes", str(bad)])
    out = capsys.readouterr().out
    assert code == cli.EXIT_COMPILE_FAILED
    assert "compile FAILED at pass Fails (stage BeforeInferShape)" in out


def test_compile_load_error_exit_code(model, tmp_path, capsys):
    broken = tmp_path / "broken.py"
    broken.write_text("import no_such_module_for_gebench\n")
    code = cli.main(["compile", str(model), "--passes", str(broken)])
    out = capsys.readouterr().out
    assert code == cli.EXIT_COMPILE_FAILED
    assert "pass plugin load failed" in out and f"{broken}:1" in out and "ModuleNotFoundError" in out


def test_missing_model_is_a_usage_error(tmp_path, capsys):
    assert cli.main(["compile", str(tmp_path / "nope.gir"), "--passes", ""]) == cli.EXIT_USAGE
    assert "does not exist" in capsys.readouterr().err


def test_register_command_extension_point(capsys):
    seen = []

    def setup(parser):
        parser.add_argument("--flag", default="x")
        return lambda args: seen.append(args.flag) or 3

    cli.register_command("gebench-test-cmd", setup, "a test command")
    try:
        assert cli.main(["gebench-test-cmd", "--flag", "y"]) == 3
        assert seen == ["y"]
    finally:
        cli._COMMANDS.pop("gebench-test-cmd")


def test_no_command_prints_help(capsys):
    assert cli.main([]) == cli.EXIT_USAGE
    assert "compile" in capsys.readouterr().out


def test_write_dumps_default_names(model, tmp_path, monkeypatch):
    from gebench import api

    monkeypatch.setattr(api, "_DUMP_WRITERS", [])
    monkeypatch.setattr(api, "_ensure_extensions", lambda: None)
    run = gebench.compile(model, passes=[])
    paths = api.write_dumps(run, tmp_path / "d")
    assert [p.name for p in paths] == [
        "ge_readable_00000000_graph_0_PreRunBegin.txt",
        "ge_readable_00000001_graph_0_RunCustomPassBeforeInfershape.txt",
        "ge_readable_00000002_graph_0_RunCustomPass_AfterInferShape.txt",
        "ge_readable_00000003_graph_0_RunCustomPassAfterBuiltinFusionPass.txt",
        "ge_readable_00000004_graph_0_RunCustomPassAfterOriginGraphOptimize.txt",
    ]
    assert ir.parse_text(paths[0].read_text()).name == "model"


def test_dump_ge_graph_env_without_dump_dir(model, pass_dir, tmp_path, monkeypatch, capsys):
    out_dir = tmp_path / "ge_dumps"
    monkeypatch.setenv("DUMP_GE_GRAPH", "1")
    monkeypatch.setenv("DUMP_GRAPH_PATH", str(out_dir))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["compile", str(model), "--passes", str(pass_dir)]) == 0
    out = capsys.readouterr().out
    written = [line.split("dump: ", 1)[1] for line in out.splitlines() if "dump: " in line]
    assert written and any("PreRunBegin" in w for w in written)
    assert any("RunCustomPassBeforeInfershape" in w for w in written)


def test_version_flag_prints_the_installed_version(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"gebench {version('gebench')}"


def test_a_compile_without_any_pass_says_so(model, monkeypatch, capsys):
    monkeypatch.delenv("ASCEND_GE_PY_PASS_PATH", raising=False)
    assert cli.main(["compile", str(model)]) == 0
    out = capsys.readouterr().out
    assert "compile SUCCESS: 4 -> 4 nodes" in out
    assert "no pass ran: no pass file was given (--passes) or found in ASCEND_GE_PY_PASS_PATH" in out


def test_the_summary_counts_the_pre_run_graph_without_building_it(model, pass_dir, monkeypatch):
    monkeypatch.delenv("GEBENCH_CHECK_JOURNALS", raising=False)
    run = gebench.compile(str(model), passes=[str(pass_dir)])
    pending = run.ir_snapshots.pending()
    assert pending > 0
    assert cli.format_summary(run).startswith("compile SUCCESS: 4 -> 4 nodes")
    assert run.ir_snapshots.pending() == pending


def test_a_pass_file_that_fails_to_load_is_reported_once_and_unrun_passes_have_no_counts(model, pass_dir, capsys):
    (pass_dir / "broken.py").write_text("import ge.passes\nraise ValueError('broken on purpose')\n")
    code = cli.main(["compile", str(model), "--passes", str(pass_dir)])
    out = capsys.readouterr().out
    assert code == 1
    assert out.count("broken on purpose") == 1, out
    assert "load error: " in out and "broken.py:2" in out
    assert "candidates" not in out  # ReluToAbs never ran: GE stops before the first stage
    assert "not run (the compile stopped before them): [BeforeInferShape] ReluToAbs" in out
