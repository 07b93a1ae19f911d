"""``compile(..., hook_timeout=)`` / ``--hook-timeout``: a hook that runs too long fails its pass, naming the
pass, the hook and the line where it was interrupted; off by default, as in GE."""

from __future__ import annotations

import os
import re
import signal
import textwrap
import threading
from pathlib import Path

import pytest

import gebench
from gebench import cli, ir

PASS = """
import time
from ge.passes import FusionBasePass, PassStage, PatternFusionPass, pattern, register_fusion_pass
from ge.es.all import Relu, Abs


@register_fusion_pass(name="Hooks", stage=PassStage.BEFORE_INFER_SHAPE)
class Hooks(PatternFusionPass):
    def __init__(self):
        super().__init__()
        {init}

    @pattern
    def relu(self, inputs):
        return Relu(inputs[0])

    def meet_requirements(self, match_result):
        {meet}
        return True

    def replacement(self, inputs):
        return Abs(inputs[0])
"""

RUN_PASS = """
import time
from ge.passes import FusionBasePass, PassStage, register_fusion_pass


@register_fusion_pass(name="Runs", stage=PassStage.BEFORE_INFER_SHAPE)
class Runs(FusionBasePass):
    def run(self, graph, context):
        graph.remove_node(graph.find_node_by_name("Relu_0"))
        time.sleep(1000)
"""

LOOP = "while True:\n            try:\n                pass\n            except BaseException:\n                pass"


@pytest.fixture(autouse=True)
def _no_ge_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """GE's dump and pass-path variables of the caller's shell must not reach these runs."""
    for name in [n for n in os.environ if n.startswith("DUMP_") or n == "ASCEND_GE_PY_PASS_PATH"]:
        monkeypatch.delenv(name)


@pytest.fixture
def model(tmp_path: Path) -> Path:
    from ge.es.all import Relu
    from ge.es.graph_builder import GraphBuilder

    b = GraphBuilder("model")
    graph = b.build_and_reset([Relu(b.create_input(0, shape=[2]))])
    path = tmp_path / "model.gir"
    path.write_text(ir.to_text(graph.ir), encoding="utf-8")
    return path


def _pass(tmp_path: Path, text: str, **fields: str) -> Path:
    path = tmp_path / "hooks.py"
    path.write_text(textwrap.dedent(text).format(**fields), encoding="utf-8")
    return path


@pytest.mark.timeout(60)
def test_a_looping_meet_requirements_fails_its_pass_at_the_loop_line(model, tmp_path):
    path = _pass(tmp_path, PASS, init="pass", meet=LOOP)  # even catching BaseException does not keep it alive
    run = gebench.compile(model, passes=str(path), hook_timeout=0.3)
    assert run.status == "FAILED" and run.failed_pass == "Hooks" and run.failed_stage == "BeforeInferShape"
    assert "hook meet_requirements ran past the hook timeout of 0.3 s" in run.failure_reason
    line = f"{path.resolve()}:"
    assert line in run.failure_reason and int(run.failure_reason.split(line)[1].split(";")[0]) in range(17, 22)
    (lint,) = [r for r in run.ledger if r.detail.get("rule") == "hook_timeout"]
    assert lint.detail["hook"] == "meet_requirements"


@pytest.mark.timeout(60)
def test_a_sleeping_run_is_interrupted_and_its_edits_rolled_back(model, tmp_path):
    path = _pass(tmp_path, RUN_PASS)
    run = gebench.compile(model, passes=str(path), hook_timeout=0.3)
    assert run.status == "FAILED" and run.failed_pass == "Runs"
    assert f"hook run ran past the hook timeout of 0.3 s and was interrupted at {path.resolve()}:10" in \
        run.failure_reason
    assert run.ir_graph.find("Relu_0") is not None  # the half-done run() was rolled back


@pytest.mark.timeout(60)
def test_a_looping_init_fails_the_stage(model, tmp_path):
    path = _pass(tmp_path, PASS, init=LOOP, meet="pass")
    run = gebench.compile(model, passes=str(path), hook_timeout=0.3)
    assert run.status == "FAILED" and run.failed_pass == "Hooks"
    assert "hook __init__ ran past the hook timeout" in run.failure_reason and str(path.resolve()) in \
        run.failure_reason


@pytest.mark.timeout(60)
def test_the_bound_also_works_off_the_main_thread(model, tmp_path):
    path = _pass(tmp_path, PASS, init="pass", meet="while True:\n            pass")
    runs = []
    worker = threading.Thread(target=lambda: runs.append(gebench.compile(model, passes=str(path),
                                                                         hook_timeout=0.3)))
    worker.start()
    worker.join(50)
    assert not worker.is_alive()
    (run,) = runs
    assert run.status == "FAILED" and "hook meet_requirements ran past the hook timeout" in run.failure_reason
    assert re.search(rf"interrupted at {re.escape(str(path.resolve()))}:(18|19);", run.failure_reason)


@pytest.mark.timeout(60)
def test_hooks_within_the_bound_and_runs_without_one_are_untouched(model, tmp_path):
    path = _pass(tmp_path, PASS, init="pass", meet="time.sleep(0.2)")
    before = signal.getsignal(signal.SIGALRM)
    timer_before = signal.getitimer(signal.ITIMER_REAL)[0]
    run = gebench.compile(model, passes=str(path), hook_timeout=5)
    assert run.status == "SUCCESS" and run.summary()["Hooks"]["replaced"] == 1
    assert signal.getsignal(signal.SIGALRM) is before  # the caller's handler (pytest-timeout's) is back
    if timer_before > 0:
        assert 0 < signal.getitimer(signal.ITIMER_REAL)[0] <= timer_before  # and its timer still runs
    run = gebench.compile(model, passes=str(path))
    assert run.status == "SUCCESS"


def test_a_bad_hook_timeout_is_refused(model):
    for bad in (0, -1, float("nan"), "1"):
        with pytest.raises(ValueError, match="hook_timeout must be a positive number of seconds"):
            gebench.compile(model, passes=[], hook_timeout=bad)


@pytest.mark.timeout(60)
def test_cli_hook_timeout(model, tmp_path, capsys):
    path = _pass(tmp_path, PASS, init="pass", meet=LOOP)
    assert cli.main(["compile", str(model), "--passes", str(path), "--hook-timeout", "0.3"]) == 1
    out = capsys.readouterr().out
    assert "hook meet_requirements ran past the hook timeout of 0.3 s" in out.splitlines()[0]
    with pytest.raises(SystemExit) as info:
        cli.main(["compile", str(model), "--hook-timeout", "soon"])
    assert info.value.code == 2 and "not a number of seconds: 'soon'" in capsys.readouterr().err
