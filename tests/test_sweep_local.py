"""``gebench.sweep`` on a LocalCluster: ten small models, a pass that fires on some, one that fails the compile
on one model and one that kills its process with ``os._exit``; every result row, the resume of an
interrupted sweep, and the diff against a baseline where one site was lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import gebench
from gebench import cli
from gebench.sweep import SweepInputError
from sweep_corpus import CRASH_MODEL, LOSE_MODEL, SITES, check_rows, make_models, write_passes

pytestmark = pytest.mark.timeout(300)


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


@pytest.fixture(autouse=True)
def _worker_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Worker processes (spawned, so they read TMPDIR afresh) keep their temporary files in tmp_path: a worker
    killed by a crashing pass cannot remove its pass cache."""
    (tmp_path / "worker-tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "worker-tmp"))


def test_local_cluster_sweep_rows_resume_and_diff(tmp_path: Path) -> None:
    models = tmp_path / "models"
    make_models(models)
    passes = write_passes(tmp_path / "passes")
    out = tmp_path / "sweep"
    with gebench.sweep.local_client(2) as client:
        result = gebench.sweep([str(models)], passes=str(passes), out=out, client=client, verify=True,
                               task_timeout=120, progress=False)
        check_rows(result.rows, models)
        assert (result.ran, result.resumed) == (10, 0)
        assert len({r["worker"] for r in result.rows}) == 2  # both workers took tasks
        assert result.statuses() == {"SUCCESS": 8, "FAILED": 1, "CRASHED": 1}

        # the files: a row per task as JSON lines, the table, the ledgers, the report
        lines = _lines(out / "results.jsonl")
        assert len(lines) == 10 and all(json.loads(x)["task"] for x in lines)
        table = _lines(out / "results.csv")
        assert table[0].startswith("model_name,pass_set,status,pass_name")
        assert len(table) == 1 + 9 * 3 + 1  # three passes per finished task; the crashed task has one line
        for row in result.rows:
            if row["status"] == "CRASHED":
                assert "ledger" not in row
                continue
            ledger = json.loads((out / row["ledger"]).read_text())
            replaced = [r for r in ledger["records"] if r["status"] == "REPLACED"]
            assert len(replaced) == row["passes"]["SweepMulOne"]["replaced"]
            assert all(r["pattern_source"].startswith(str(passes.resolve())) for r in replaced)  # driver's paths
        report = (out / "report.html").read_text()
        assert report.count('class="gbs-cell gbs-fired"') == sum(1 for s in SITES if s)
        assert "gbs-dead" in report and "gbs-failed" in report

        # an interrupted sweep: six rows made it, the seventh was cut off mid-line; --resume runs the rest
        kept = lines[:6]
        (out / "results.jsonl").write_text("\n".join(kept) + "\n" + lines[6][: len(lines[6]) // 2],
                                           encoding="utf-8")
        resumed = gebench.sweep([str(models)], passes=str(passes), out=out, client=client, verify=True,
                                resume=True, progress=False)
        assert (resumed.ran, resumed.resumed) == (4, 6)
        check_rows(resumed.rows, models)
        old = {json.loads(x)["task"]: json.loads(x) for x in kept}
        for row in resumed.rows:
            if row["task"] in old:
                assert row == old[row["task"]]  # taken over, not run again
        again = gebench.sweep([str(models)], passes=str(passes), out=out, client=client, verify=True, resume=True,
                              progress=False)
        assert (again.ran, again.resumed) == (0, 10)
        with pytest.raises(SweepInputError, match="already holds a sweep"):
            gebench.sweep([str(models)], passes=str(passes), out=out, client=client, verify=True)
        with pytest.raises(SweepInputError, match="verify"):
            gebench.sweep([str(models)], passes=str(passes), out=out, client=client, resume=True)

        # edit the pass so it rejects one site of m5; sweep again against the first sweep as baseline
        write_passes(passes, lose_keep_me=True)
        with pytest.raises(SweepInputError, match="changed since"):
            gebench.sweep([str(models)], passes=str(passes), out=out, client=client, verify=True, resume=True)
        out2 = tmp_path / "sweep2"
        edited = gebench.sweep([str(models)], passes=str(passes), out=out2, client=client, verify=True,
                               baseline=out, progress=False)
    lost = edited.cell(LOSE_MODEL, "SweepMulOne")
    assert lost is not None and lost["replaced"] == SITES[5] - 1 and lost["rejected"] == {
        "REJECTED_BY_MEET_REQUIREMENTS": 1}
    diff = edited.diff
    assert diff is not None and diff.has_regression
    assert [(c.kind, Path(c.model).stem, c.pass_name, c.old, c.new) for c in diff.regressions] == [
        ("sites_lost", LOSE_MODEL, "SweepMulOne", 3, 2)]
    assert {c.kind for c in diff.changes} <= {"sites_lost", "slower", "faster"}  # the crash and failure persist
    html = (out2 / "report.html").read_text()
    assert "gbs-lost" in html and "REGRESSION sites_lost" in html

    # the same verdict from the command line (exit 1 on a regression, 0 without)
    assert cli.main(["sweep-diff", str(out), str(out2)]) == 1
    assert cli.main(["sweep-diff", str(out2), str(out2)]) == 0


def test_a_crash_that_kills_the_worker_is_that_models_failure(tmp_path: Path) -> None:
    """Without isolation ``os._exit`` kills the worker process itself: Dask retries the task on another worker
    (allowed-failures 1), gives up with KilledWorker, and the sweep confirms it in an isolated process; the
    other models are unaffected. This also runs the default engine: a LocalCluster started by the sweep."""
    models = tmp_path / "models"
    paths = make_models(models)
    passes = write_passes(tmp_path / "passes")
    crash = next(p for p in paths if p.stem == CRASH_MODEL)
    others = [p for p in paths if p.stem in ("m1", "m2")]
    result = gebench.sweep([str(crash), *map(str, others)], passes=str(passes), out=tmp_path / "sweep",
                           workers=2, isolate=False, progress=False)
    rows = {Path(r["model"]).stem: r for r in result.rows}
    assert set(rows) == {CRASH_MODEL, "m1", "m2"}
    crashed = rows[CRASH_MODEL]
    assert crashed["status"] == "CRASHED", crashed
    assert "exited with status 3" in crashed["reason"] and crashed["failed_pass"] == "SweepCrashOnTanh"
    assert crashed["attempts"] == 2 and "worker died" in crashed["note"]
    for name in ("m1", "m2"):
        assert rows[name]["status"] == "SUCCESS", rows[name]
        assert rows[name]["passes"]["SweepMulOne"]["replaced"] == SITES[int(name[1])]
