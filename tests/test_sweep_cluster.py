"""``gebench sweep --scheduler`` against a Dask cluster started the way a real one is: ``dask scheduler`` and
``dask worker`` as separate processes (on 127.0.0.1, free ports, found through a scheduler file). The
processes run in their own process groups and are killed at the end whatever happens."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gebench import cli
from gebench.sweep import SweepResult
from sweep_corpus import LOSE_MODEL, check_rows, make_models, write_passes

pytestmark = pytest.mark.timeout(300)


def _stop(procs: list[subprocess.Popen]) -> None:
    for proc in procs:  # the whole group: nannies, workers and their task servers
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 15
    for proc in procs:
        try:
            proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


@pytest.fixture
def dask_cluster(tmp_path: Path) -> Iterator[str]:
    """A scheduler and two single-thread worker processes; yields the scheduler's address."""
    scheduler_file = tmp_path / "scheduler.json"
    env = dict(os.environ, DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES="1")
    logs = tmp_path / "cluster-logs"
    logs.mkdir()
    procs: list[subprocess.Popen] = []
    try:
        with open(logs / "scheduler.log", "wb") as log:
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port", "0",
                 "--dashboard-address", "127.0.0.1:0", "--no-dashboard", "--scheduler-file", str(scheduler_file)],
                stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True, cwd=tmp_path))
        deadline = time.monotonic() + 60
        address = None
        while address is None:
            if procs[0].poll() is not None:
                pytest.fail("dask scheduler exited:\n" + (logs / "scheduler.log").read_text())
            if time.monotonic() > deadline:
                pytest.fail("dask scheduler wrote no scheduler file within 60 s")
            try:
                address = json.loads(scheduler_file.read_text())["address"]
            except (FileNotFoundError, ValueError, KeyError):
                time.sleep(0.2)
        assert address.startswith("tcp://127.0.0.1:")
        with open(logs / "workers.log", "wb") as log:
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "dask", "worker", "--scheduler-file", str(scheduler_file), "--host",
                 "127.0.0.1", "--nthreads", "1", "--nworkers", "2", "--no-dashboard", "--death-timeout", "60"],
                stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True, cwd=tmp_path))
        from distributed import Client

        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=120)
        yield address
    finally:
        _stop(procs)


def test_sweep_against_a_separately_started_scheduler(dask_cluster: str, tmp_path: Path) -> None:
    models = tmp_path / "models"
    make_models(models)
    passes = write_passes(tmp_path / "passes")
    base = ["sweep", str(models), "--passes", str(passes), "--verify", "--scheduler", dask_cluster, "--quiet",
            "--task-timeout", "120"]
    out = tmp_path / "sweep"
    # no baseline: exit 1 because one model fails the compile (and one crashes)
    assert cli.main([*base, "--out", str(out)]) == 1
    result = SweepResult.load(out)
    check_rows(result.rows, models)
    assert result.meta["engine"]["scheduler"] == dask_cluster
    assert len({r["worker"] for r in result.rows}) == 2

    # the same passes against that baseline: the failure and the crash are old news, exit 0
    assert cli.main([*base, "--out", str(tmp_path / "same"), "--baseline", str(out)]) == 0

    # one site lost: exit 1, and the regression names the model and the pass
    write_passes(passes, lose_keep_me=True)
    out3 = tmp_path / "edited"
    assert cli.main([*base, "--out", str(out3), "--baseline", str(out)]) == 1
    regressions = SweepResult.load(out3).compare(out).regressions
    assert [(c.kind, Path(c.model).stem, c.pass_name) for c in regressions] == [
        ("sites_lost", LOSE_MODEL, "SweepMulOne")]
