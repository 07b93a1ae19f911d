"""One rule for the command line: exit 0 on success, 1 only where GE would fail the compile, 2 for bad usage or
a bad input file, 130 on Ctrl-C; an error is one or two lines naming the path, with a traceback only under
``--debug``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gebench import cli, ir

ROOT = Path(__file__).resolve().parents[1]

RELU_PASS = """
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass
from ge.es.all import Relu, Abs


@register_fusion_pass(name="ReluToAbs", stage=PassStage.BEFORE_INFER_SHAPE)
class ReluToAbs(PatternFusionPass):
    @pattern
    def relu(self, inputs):
        return Relu(inputs[0])

    def replacement(self, inputs):
        return Abs(inputs[0])
"""


@pytest.fixture(autouse=True)
def _no_ge_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """GE's dump and pass-path variables of the caller's shell must not reach these runs."""
    for name in [n for n in os.environ if n.startswith("DUMP_") or n == "ASCEND_GE_PY_PASS_PATH"]:
        monkeypatch.delenv(name)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    from ge.es.all import Relu
    from ge.es.graph_builder import GraphBuilder

    b = GraphBuilder("model")
    graph = b.build_and_reset([Relu(b.create_input(0, shape=[2]))])
    model = tmp_path / "model.gir"
    model.write_text(ir.to_text(graph.ir), encoding="utf-8")
    passes = tmp_path / "passes"
    passes.mkdir()
    (passes / "relu.py").write_text(textwrap.dedent(RELU_PASS), encoding="utf-8")
    a_file = tmp_path / "plain.txt"
    a_file.write_text("not a folder", encoding="utf-8")
    bad_ops = tmp_path / "bad_ops.json"
    bad_ops.write_text(json.dumps({"MyCliOp": {"inputs": ["x"], "outputs": ["y"], "subgraphs": [1]}}), encoding="utf-8")
    bad_switch = tmp_path / "switch.json"
    bad_switch.write_text("{not json", encoding="utf-8")
    damaged = tmp_path / "damaged.onnx"
    damaged.write_bytes(b"\x08\x07\x12\x04garbage that is not a protobuf \xff\xff")
    missing = tmp_path / "missing" / "nothing.gir"
    return {"model": model, "passes": passes, "file": a_file, "bad_ops": bad_ops, "bad_switch": bad_switch,
            "damaged": damaged, "missing": missing, "tmp": tmp_path}


def _cases(f: dict[str, Path]) -> list[tuple[str, list[str], Path]]:
    """(label, argv, the path the error must name) per bad-path case, for every subcommand."""
    m, under_file = str(f["model"]), f["file"] / "sub"
    return [
        ("compile: missing model", ["compile", str(f["missing"])], f["missing"]),
        ("compile: damaged model", ["compile", str(f["damaged"])], f["damaged"]),
        ("compile: missing --passes item", ["compile", m, "--passes", f"{f['passes']}{os.pathsep}{f['missing']}"],
         f["missing"]),
        ("compile: missing --custom-ops", ["compile", m, "--custom-ops", str(f["missing"])], f["missing"]),
        ("compile: bad --custom-ops", ["compile", m, "--custom-ops", str(f["bad_ops"])], f["bad_ops"]),
        ("compile: missing --fusion-switch-file", ["compile", m, "--fusion-switch-file", str(f["missing"])],
         f["missing"]),
        ("compile: bad --fusion-switch-file", ["compile", m, "--fusion-switch-file", str(f["bad_switch"])],
         f["bad_switch"]),
        ("compile: --dump-dir under a file", ["compile", m, "--dump-dir", str(under_file)], under_file),
        ("compile: --report under a file", ["compile", m, "--report", str(under_file / "r.json")], under_file),
        ("compile: --report is a folder", ["compile", m, "--report", str(f["tmp"])], f["tmp"]),
        ("atc: missing --model", ["atc", f"--model={f['missing']}", "--framework=5", "--soc_version=Ascend910B1",
                                  f"--output={f['tmp'] / 'out'}", "--gebench_backend=reference"], f["missing"]),
        ("atc: --output under a file", ["atc", f"--model={f['damaged']}", "--framework=5",
                                        "--soc_version=Ascend910B1", f"--output={under_file / 'm'}",
                                        "--gebench_backend=reference"], under_file),
        ("pyatc: missing --model", ["pyatc", f"--model={f['missing']}", "--framework=5",
                                    "--soc_version=Ascend910B1", f"--output={f['tmp'] / 'out'}",
                                    "--gebench_backend=reference"], f["missing"]),
        ("compile: --fusion-result under a file", ["compile", m, "--fusion-result", str(under_file / "f.json")],
         under_file),
        ("compare: missing model", ["compare", str(f["missing"]), "--fusion-result", str(f["bad_switch"])],
         f["missing"]),
        ("compare: missing --fusion-result", ["compare", m, "--fusion-result", str(f["missing"]), "--passes",
                                              str(f["passes"])], f["missing"]),
        ("compare: bad --fusion-result", ["compare", m, "--fusion-result", str(f["bad_switch"]), "--passes",
                                          str(f["passes"])], f["bad_switch"]),
        ("lab: missing notebook", ["lab", str(f["missing"]), "--no-browser"], f["missing"]),
        ("sweep: missing model", ["sweep", str(f["missing"]), "--passes", str(f["passes"]),
                                  "--out", str(f["tmp"] / "sweep")], f["missing"]),
        ("sweep-diff: missing folders", ["sweep-diff", str(f["missing"]), str(f["missing"])], f["missing"]),
    ]


def test_every_subcommand_has_bad_path_cases(files):
    cli._load_extensions()
    covered = {argv[0] for _, argv, _ in _cases(files)}
    assert set(cli._COMMANDS) <= covered, f"add bad-path cases for {sorted(set(cli._COMMANDS) - covered)}"


def test_bad_paths_exit_2_with_one_or_two_lines_naming_the_path(files, capsys, monkeypatch):
    monkeypatch.delenv("ASCEND_GE_PY_PASS_PATH", raising=False)
    monkeypatch.delenv("DUMP_GE_GRAPH", raising=False)
    monkeypatch.delenv("GEBENCH_CUSTOM_OPS", raising=False)
    for label, argv, named in _cases(files):
        code = cli.main(argv)
        captured = capsys.readouterr()
        lines = [line for line in captured.err.splitlines() if line.strip()]
        assert code == cli.EXIT_USAGE, (label, code, captured.err)
        assert 1 <= len(lines) <= 2, (label, captured.err)
        assert str(named) in captured.err, (label, captured.err)
        assert "Traceback" not in captured.err + captured.out, label
    assert not (files["file"].parent / "sub").exists()


def test_a_good_compile_still_exits_0_and_a_failing_pass_exits_1(files, capsys):
    report = files["tmp"] / "out" / "report.json"
    assert cli.main(["compile", str(files["model"]), "--passes", str(files["passes"]), "--report", str(report),
                     "--dump-dir", str(files["tmp"] / "dumps")]) == 0
    assert json.loads(report.read_text(encoding="utf-8"))["status"] == "SUCCESS"
    failing = files["tmp"] / "failing.py"
    failing.write_text(textwrap.dedent(RELU_PASS).replace("return Abs(inputs[0])", "raise RuntimeError('no')"),
                       encoding="utf-8")
    assert cli.main(["compile", str(files["model"]), "--passes", str(failing)]) == cli.EXIT_COMPILE_FAILED
    assert "RuntimeError: no" in capsys.readouterr().out


def test_unexpected_errors_are_two_lines_and_debug_shows_the_traceback(files, capsys, monkeypatch):
    from gebench import api

    def broken(*args, **kwargs):
        raise KeyError("internal")

    monkeypatch.setattr(api, "compile", broken)
    assert cli.main(["compile", str(files["model"])]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert err.splitlines() == ["gebench compile: KeyError: 'internal'",
                                "gebench compile: this error was not expected here; run again with --debug for the "
                                "traceback"]
    assert cli.main(["compile", str(files["model"]), "--debug"]) == cli.EXIT_USAGE
    assert "Traceback (most recent call last)" in capsys.readouterr().err
    assert cli.main(["--debug", "compile", str(files["model"])]) == cli.EXIT_USAGE
    assert "Traceback (most recent call last)" in capsys.readouterr().err


def _gebench(*args: str, cwd: Path, **kwargs) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUMP_") and k != "ASCEND_GE_PY_PASS_PATH"}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.Popen([sys.executable, "-m", "gebench.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=cwd, env=env, **kwargs)


@pytest.mark.timeout(120)
def test_ctrl_c_exits_130_without_a_traceback(files):
    looping = files["tmp"] / "loops.py"
    looping.write_text(textwrap.dedent(RELU_PASS).replace(
        "return Abs(inputs[0])", "import pathlib\n        pathlib.Path(__file__).with_suffix('.started').touch()\n"
        "        while True:\n            pass"), encoding="utf-8")
    started = looping.with_suffix(".started")
    # Ctrl-C as in a terminal: a parent that ignores SIGINT (a shell's background job, nohup) passes that on, and
    # gebench then rightly ignores it too
    proc = _gebench("compile", str(files["model"]), "--passes", str(looping), cwd=files["tmp"],
                    preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while not started.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert started.exists(), proc.communicate(timeout=10)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == cli.EXIT_INTERRUPTED, err
    assert "Traceback" not in err and err.strip().splitlines() == ["gebench compile: interrupted"]


@pytest.mark.timeout(120)
def test_bad_model_in_a_real_process_prints_no_traceback(files):
    proc = _gebench("compile", str(files["damaged"]), cwd=files["tmp"])
    out, err = proc.communicate(timeout=100)
    assert proc.returncode == cli.EXIT_USAGE
    assert "Traceback" not in err and str(files["damaged"]) in err and len(err.strip().splitlines()) <= 2
