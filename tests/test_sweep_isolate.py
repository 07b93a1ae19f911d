"""Isolated sweep tasks (gebench/sweep/_isolate.py) without Dask: a task that hangs past its timeout, grows past
its memory limit or dies of a signal is that task's row, and the same task server goes on serving."""

from __future__ import annotations

from pathlib import Path

import pytest

from gebench.sweep import TaskSpec, bundle_passes
from gebench.sweep import _isolate as isolate
from sweep_corpus import make_models

pytestmark = [pytest.mark.timeout(180),
              pytest.mark.skipif(not isolate.isolation_available(), reason="isolation needs os.fork (POSIX)")]

BEHAVIOUR = '''
import os, signal, time

from ge.passes import FusionBasePass, PassStage, register_fusion_pass


@register_fusion_pass(name="SweepMisbehave", stage=PassStage.BEFORE_INFER_SHAPE)
class SweepMisbehave(FusionBasePass):
    def run(self, graph, context):
        print("misbehaving:", {what!r}, flush=True)
        if {what!r} == "hang":
            time.sleep(60)
        elif {what!r} == "grow":
            hog = b"x" * (600 << 20)
            time.sleep(30)
        elif {what!r} == "segfault":
            os.kill(os.getpid(), signal.SIGSEGV)
        return True
'''


def _spec(tmp_path: Path, model: Path, what: str, **kwargs: object) -> TaskSpec:
    folder = tmp_path / what
    folder.mkdir()
    (folder / "misbehave.py").write_text(BEHAVIOUR.format(what=what), encoding="utf-8")
    return TaskSpec(str(model), model.name, bundle_passes(str(folder)), **kwargs)  # type: ignore[arg-type]


def test_timeout_memory_limit_and_signal_are_rows(tmp_path: Path) -> None:
    model = make_models(tmp_path / "models")[1]
    try:
        row = isolate.run_isolated(_spec(tmp_path, model, "hang", timeout=1.5))
        assert row["status"] == "TIMEOUT", row
        assert row["reason"] == "exceeded the task timeout of 1.5 s in pass SweepMisbehave"
        assert 1.4 < row["wall_s"] < 10 and row["failed_pass"] == "SweepMisbehave"
        assert "misbehaving: hang" in row["output_tail"]  # the task's own output

        row = isolate.run_isolated(_spec(tmp_path, model, "grow", memory_limit_mb=300, timeout=60))
        assert row["status"] == "OUT_OF_MEMORY", row
        assert row["reason"].startswith("exceeded the task memory limit of 300 MiB (resident ")
        assert row["peak_mem_mb"] > 300

        row = isolate.run_isolated(_spec(tmp_path, model, "segfault"))
        assert row["status"] == "CRASHED", row
        assert row["reason"] == "the task process was killed by SIGSEGV in pass SweepMisbehave"
        assert "Segmentation fault" in row["output_tail"]  # faulthandler's report, with the pass file's line
        assert "misbehave.py" in row["output_tail"]

        # the server that watched all that still runs tasks
        row = isolate.run_isolated(_spec(tmp_path, model, "behave"))
        assert row["status"] == "SUCCESS", row
        assert row["passes"]["SweepMisbehave"]["failures"] == [] and row["peak_mem_mb"] < 300
    finally:
        isolate.shutdown()
