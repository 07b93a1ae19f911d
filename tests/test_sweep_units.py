"""The parts of gebench.sweep that need no cluster: model expansion, pass bundles, the result store and its
resume rules, the diff's rules, the report's HTML, the progress counts and the command line's usage errors."""

from __future__ import annotations

import html.parser
import io
import json
from pathlib import Path
from typing import Any

import pytest

import gebench
from gebench import cli
from gebench.sweep import SweepInputError, SweepResult, bundle_passes, diff_rows, expand_models
from gebench.sweep._progress import SweepProgress
from gebench.sweep._report import render_report
from gebench.sweep._store import RESULTS, ResultStore, read_results, table_rows

PASS = "from ge.passes import PassStage\n"


def _touch(path: Path, text: str = "x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _pass(stage: str = "BeforeInferShape", replaced: int = 0, **kw: Any) -> dict[str, Any]:
    entry = {"stage": stage, "candidates": replaced, "matches": replaced, "replaced": replaced, "rejected": {},
             "lints": 0, "failures": [], "seconds": 0.01, "verify_max_abs_error": None, "verify_errors": 0,
             "verify_unchecked": 0}
    entry.update(kw)
    return entry


def _row(model: str, status: str = "SUCCESS", passes: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    row = {"task": f"t-{model}", "model": f"/corpus/{model}", "model_name": f"corpus/{model}", "pass_set": "passes",
           "pass_digest": "d" * 64, "verify": True, "status": status, "reason": "", "failed_pass": None,
           "failed_stage": None, "load_errors": [], "nodes_before": 10, "nodes_after": 8, "wall_s": 1.0,
           "load_s": 0.1, "compile_s": 0.5, "peak_mem_mb": 100.0, "worker": "tcp://127.0.0.1:1", "attempts": 1,
           "finished_at": "2026-01-01T00:00:00+00:00", "passes": passes or {}}
    row.update(kw)
    return row


# ----------------------------------------------------------------------------------------------- corpus
def test_expand_models_takes_files_folders_and_globs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _touch(tmp_path / "corpus" / "a.onnx")
    _touch(tmp_path / "corpus" / "sub" / "b.onnx")
    _touch(tmp_path / "corpus" / "notes.txt")
    _touch(tmp_path / "corpus" / "__pycache__" / "c.onnx")
    _touch(tmp_path / "dumps" / "ge_proto_00000000_graph_1_PreRunBegin.txt")
    _touch(tmp_path / "dumps" / "ge_proto_00000003_graph_1_RunCustomPassBeforeInfershape.txt")
    _touch(tmp_path / "dumps" / "ge_onnx_00000000_graph_1_PreRunBegin.pbtxt")
    _touch(tmp_path / "model.txt")
    refs = expand_models(["corpus", "dumps", "corpus/*.onnx", "model.txt"])
    assert [r.name for r in refs] == ["corpus/a.onnx", "corpus/sub/b.onnx",
                                      "dumps/ge_proto_00000000_graph_1_PreRunBegin.txt", "model.txt"]
    assert all(Path(r.path).is_absolute() and Path(r.path).exists() for r in refs)
    assert [r.name for r in expand_models(["corpus/**/*.onnx"])] == ["corpus/a.onnx", "corpus/sub/b.onnx"]
    with pytest.raises(SweepInputError, match="model path 'missing.onnx' does not exist"):
        expand_models(["corpus", "missing.onnx"])
    with pytest.raises(SweepInputError, match="no models match"):
        expand_models(["corpus/*.gir"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(SweepInputError, match="no models in folder 'empty'"):
        expand_models(["empty"])
    with pytest.raises(SweepInputError, match="no models given"):
        expand_models([])


def test_pass_bundles_travel_by_content(tmp_path: Path) -> None:
    _touch(tmp_path / "p" / "one.py", PASS)
    _touch(tmp_path / "p" / "pkg" / "__init__.py", PASS)
    _touch(tmp_path / "p" / "pkg" / "table.json", "{}")
    _touch(tmp_path / "p" / "__pycache__" / "one.cpython-311.pyc", "junk")
    _touch(tmp_path / "extra.py", PASS)
    spec = f"{tmp_path / 'p'}:{tmp_path / 'extra.py'}"
    bundle = bundle_passes(spec)
    assert bundle.label == spec
    assert bundle.items == ("0/p", "1/extra.py")
    assert [rel for rel, _ in bundle.files] == ["0/p/one.py", "0/p/pkg/__init__.py", "0/p/pkg/table.json",
                                                "1/extra.py"]
    assert bundle_passes(spec).digest == bundle.digest
    paths = bundle.materialize(tmp_path / "cache")
    assert paths == [str(tmp_path / "cache" / bundle.digest / "0" / "p"),
                     str(tmp_path / "cache" / bundle.digest / "1" / "extra.py")]
    assert (Path(paths[0]) / "pkg" / "table.json").read_text() == "{}"
    assert bundle.materialize(tmp_path / "cache") == paths  # a second task finds them written
    assert bundle.unmap(f"{paths[1]}:3: boom", paths) == f"{tmp_path / 'extra.py'}:3: boom"
    _touch(tmp_path / "p" / "one.py", PASS + "# edited\n")
    assert bundle_passes(spec).digest != bundle.digest
    with pytest.raises(SweepInputError, match="pass path '.*nope' does not exist"):
        bundle_passes(str(tmp_path / "nope"))


# ----------------------------------------------------------------------------------------------- store
def test_store_writes_rows_as_they_come_and_resumes(tmp_path: Path) -> None:
    meta = {"verify": True, "pass_sets": {"passes": {"digest": "a", "paths": ["/p"]}},
            "models": [{"path": "/corpus/m1", "name": "corpus/m1"}]}
    out = tmp_path / "out"
    store = ResultStore.open(out, meta)
    row = _row("m1", passes={"P": _pass(replaced=2, rejected={"REJECTED_BY_MEET_REQUIREMENTS": 1})})
    row["_ledger"] = {"records": [{"status": "REPLACED"}], "summary": {}}
    store.append(row)
    store.append(_row("m2", "CRASHED", reason="the task process exited with status 3"))
    lines = (out / RESULTS).read_text().splitlines()
    assert len(lines) == 2 and "_ledger" not in lines[0]  # each row is on disk as soon as it is appended
    ledger = json.loads((out / "ledgers" / "t-m1.json").read_text())
    assert ledger["records"] == [{"status": "REPLACED"}] and ledger["model_name"] == "corpus/m1"
    assert json.loads(lines[0])["ledger"] == "ledgers/t-m1.json"
    store.write_table(store.rows.values())
    store.close()
    csv_lines = (out / "results.csv").read_text().splitlines()
    assert csv_lines[1].startswith("corpus/m1,passes,SUCCESS,P,BeforeInferShape,2,2,2,REJECTED_BY_MEET_REQUIREMENTS=1,")
    assert csv_lines[2].startswith("corpus/m2,passes,CRASHED,,,")

    # a sweep killed mid-write leaves half a line: reading skips it, resuming cuts it before appending
    with open(out / RESULTS, "a") as fh:
        fh.write('{"task": "t-m3", "sta')
    assert list(read_results(out)) == ["t-m1", "t-m2"]
    with pytest.raises(SweepInputError, match="already holds a sweep: pass --resume"):
        ResultStore.open(out, meta)
    resumed = ResultStore.open(out, meta, resume=True)
    assert list(resumed.rows) == ["t-m1", "t-m2"]
    resumed.append(_row("m2", "SUCCESS"))  # a retried task: the last row wins
    resumed.close()
    assert [r["status"] for r in read_results(out).values()] == ["SUCCESS", "SUCCESS"]
    assert all(json.loads(x) for x in (out / RESULTS).read_text().splitlines())
    with pytest.raises(SweepInputError, match="pass set 'passes' changed since"):
        ResultStore.open(out, {**meta, "pass_sets": {"passes": {"digest": "b", "paths": []}}}, resume=True)
    with pytest.raises(SweepInputError, match="verify=True"):
        ResultStore.open(out, {**meta, "verify": False}, resume=True)
    fresh = ResultStore.open(out, meta, overwrite=True)
    fresh.close()
    assert read_results(out) == {} and not (out / "ledgers").exists()
    with pytest.raises(SweepInputError, match="is a file"):
        ResultStore.open(_touch(tmp_path / "file"), meta)
    with pytest.raises(SweepInputError, match="holds no sweep"):
        SweepResult.load(tmp_path)


def test_task_writes_its_ledger_where_the_driver_marked_the_folder(tmp_path: Path) -> None:
    """The ledger is encoded once, in the task: written into the out folder when the sweep's marker is there
    (the row carries only its path), carried as text otherwise (the store writes it as is); pass paths are the
    driver's either way."""
    import sys

    from gebench.sweep import TaskSpec, run_task

    sys.path.insert(0, str(Path(__file__).parent))
    from sweep_corpus import make_models, write_passes

    make_models(tmp_path / "models")
    passes = write_passes(tmp_path / "passes")
    model = str((tmp_path / "models" / "m2.onnx").resolve())
    meta = {"verify": False, "pass_sets": {}, "models": [{"path": model, "name": "m2"}]}
    store = ResultStore.open(tmp_path / "out", meta)
    folder = store.allow_direct_ledgers("abc123")
    spec = TaskSpec(model, "m2", bundle_passes(str(passes)), sweep_id="abc123", ledger_dir=folder)

    direct = run_task(spec)
    assert direct["ledger"] == f"ledgers/{spec.task_id}.json" and "_ledger_json" not in direct
    written = json.loads((tmp_path / "out" / direct["ledger"]).read_text())
    replaced = [r for r in written["records"] if r["status"] == "REPLACED"]
    assert len(replaced) == 2 and all(r["pattern_source"].startswith(str(passes.resolve())) for r in replaced)
    store.append(direct)

    other = TaskSpec(model, "m2", bundle_passes(str(passes)), sweep_id="other", ledger_dir=folder)
    sent = run_task(other)  # no marker of this sweep there: a same-named folder elsewhere is not written to
    assert "ledger" not in sent and json.loads(sent["_ledger_json"]) == written
    (tmp_path / "out" / direct["ledger"]).unlink()
    store.append(sent)
    assert json.loads((tmp_path / "out" / sent["ledger"]).read_text()) == written
    store.close()
    assert not list((tmp_path / "out" / "ledgers").glob(".*"))  # the marker is gone, no temporary file left
    assert "_ledger_json" not in (tmp_path / "out" / RESULTS).read_text()


def test_table_rows_flatten_per_pass() -> None:
    rows = table_rows([_row("m1", passes={"A": _pass(replaced=1), "B": _pass("AfterInferShape", failures=["x"])}),
                       _row("m2", "TIMEOUT")])
    assert [(r["model_name"], r["pass_name"], r["replaced"], r["failures"]) for r in rows] == [
        ("corpus/m1", "A", 1, 0), ("corpus/m1", "B", 0, 1), ("corpus/m2", "", None, 0)]


# ----------------------------------------------------------------------------------------------- diff
def test_diff_rules() -> None:
    old = [_row("same", passes={"A": _pass(replaced=2)}),
           _row("lost", passes={"A": _pass(replaced=3), "Gone": _pass(replaced=1)}),
           _row("gained", passes={"A": _pass(replaced=0)}),
           _row("breaks", passes={"A": _pass(replaced=1)}),
           _row("fixed", "FAILED", failed_pass="A", passes={"A": _pass(failures=["boom"])}),
           _row("still_crashing", "CRASHED"),
           _row("verify", passes={"A": _pass(replaced=1)}),
           _row("slow", wall_s=1.0, passes={"A": _pass(seconds=0.2)}),
           _row("noise", wall_s=1.0, passes={"A": _pass(seconds=0.02)}),
           _row("dropped")]
    new = [_row("same", passes={"A": _pass(replaced=2)}),
           _row("lost", passes={"A": _pass(replaced=2)}),
           _row("gained", passes={"A": _pass(replaced=4)}),
           _row("breaks", "CRASHED", reason="the task process was killed by SIGSEGV in pass A", failed_pass="A"),
           _row("fixed", passes={"A": _pass(replaced=1)}),
           _row("still_crashing", "TIMEOUT"),
           _row("verify", passes={"A": _pass(replaced=1, verify_errors=1, verify_max_abs_error=0.5)}),
           _row("slow", wall_s=3.0, passes={"A": _pass(seconds=0.9)}),
           _row("noise", wall_s=1.3, passes={"A": _pass(seconds=0.09)}),
           _row("added")]
    d = diff_rows(old, new, old_label="old", new_label="new")
    found = {(c.kind, c.model.split("/")[1], c.pass_name, c.old, c.new, c.regression) for c in d.changes}
    assert found == {
        ("sites_lost", "lost", "A", 3, 2, True),
        ("sites_lost", "lost", "Gone", 1, 0, True),
        ("sites_gained", "gained", "A", 0, 4, False),
        ("new_failure", "breaks", "A", "SUCCESS", "CRASHED", True),
        ("fixed", "fixed", "A", "FAILED", "SUCCESS", False),
        ("sites_gained", "fixed", "A", 0, 1, False),
        ("new_verify_error", "verify", "A", 0, 1, True),
        ("slower", "slow", None, 1.0, 3.0, False),
        ("slower", "slow", "A", 0.2, 0.9, False),
        ("model_missing", "dropped", None, "SUCCESS", None, False),
        ("model_added", "added", None, None, "SUCCESS", False),
    }
    assert d.has_regression and len(d.regressions) == 4
    assert d.changes[0].regression  # regressions first
    text = d.summary()
    assert text.startswith("diff old -> new: 4 REGRESSION(S)")
    assert "REGRESSION sites_lost  corpus/lost [passes] A: 3 -> 2 (1 lost)" in text
    assert "the task process was killed by SIGSEGV" in text
    strict = diff_rows(old, new, slowdown_is_regression=True)
    assert len(strict.regressions) == 6
    calm = diff_rows(old[:1], new[:1])
    assert not calm.has_regression and calm.changes == [] and "no regression (no changes)" in calm.summary()


# ----------------------------------------------------------------------------------------------- report
class _Cells(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.cells: list[dict[str, str]] = []
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "td" and "gbs-cell" in a.get("class", ""):
            self.cells.append(a)
        if tag == "a":
            self.links.append(a["href"])


def _result(tmp_path: Path, rows: list[dict[str, Any]], diff: Any = None) -> SweepResult:
    meta = {"verify": True, "pass_sets": {"passes": {"digest": "abc123", "paths": []}}, "models": []}
    return SweepResult(tmp_path, meta, rows, diff=diff)


def test_report_matrix_colours_links_and_escapes(tmp_path: Path) -> None:
    rows = [_row("fired<1>.onnx", passes={"A": _pass(replaced=2), "B": _pass("AfterInferShape", matches=1)},
                 ledger="ledgers/t-1.json"),
            _row("failed.onnx", "FAILED", failed_pass="B", ledger="ledgers/t-2.json",
                 passes={"A": _pass(), "B": _pass("AfterInferShape", failures=["B broke </script>"])}),
            _row("verify.onnx", passes={"A": _pass(replaced=1, verify_errors=1, verify_max_abs_error=0.25)}),
            _row("crashed.onnx", "CRASHED", reason="the task process exited with status 3")]
    old = [dict(rows[0], passes={"A": _pass(replaced=3), "B": _pass("AfterInferShape")})]
    result = _result(tmp_path, rows, diff_rows(old, rows[:1]))
    page = render_report(result)
    assert page.startswith("<!doctype html>") and "function sortBy" in page and ".gbs-fired" in page
    parser = _Cells()
    parser.feed(page)
    cells = {(c["data-task"], c["data-pass"]): c["class"].split()[1:] for c in parser.cells}
    assert cells == {
        ("t-fired<1>.onnx", "A"): ["gbs-fired", "gbs-lost"], ("t-fired<1>.onnx", "B"): ["gbs-rejected"],
        ("t-failed.onnx", "A"): ["gbs-idle"], ("t-failed.onnx", "B"): ["gbs-failed"],
        ("t-verify.onnx", "A"): ["gbs-verify"], ("t-verify.onnx", "B"): ["gbs-none"],
        ("t-crashed.onnx", "A"): ["gbs-dead"], ("t-crashed.onnx", "B"): ["gbs-dead"]}
    assert [c["data-sort"] for c in parser.cells if c["data-pass"] == "A"] == ["2", "0", "1", "-2"]
    assert parser.links == ["ledgers/t-1.json", "ledgers/t-2.json"]  # the model names link to the ledgers
    assert "corpus/fired&lt;1&gt;.onnx" in page and "corpus/fired<1>" not in page
    assert "B broke \\u003c/script>" in page and "B broke </script>" not in page  # the embedded data stays data
    assert '<span class="gbs-delta">-1</span>' in page and "REGRESSION sites_lost" in page
    fragment = result._repr_html_()
    assert fragment.startswith("<style>") and "<!doctype" not in fragment
    parser = _Cells()
    parser.feed(fragment)
    assert parser.links == [] and len(parser.cells) == 8  # no links: they would resolve against the notebook


def test_progress_counts_without_a_terminal() -> None:
    progress = SweepProgress(3, stream=io.StringIO())  # not a terminal: no bar, only counts
    progress.started("k1", "m1", when=0.0)
    progress.started("k2", "m2")
    assert progress.slowest()[0] == "m1"
    progress.finished("k1", ok=False)
    progress.finished("k2", ok=True)
    assert (progress.done, progress.failed, progress.remaining) == (2, 1, 1)
    assert progress.text() == "failed=1 left=1"
    progress.close()


# ----------------------------------------------------------------------------------------------- entry points
def test_gebench_sweep_is_the_function_and_the_package() -> None:
    assert callable(gebench.sweep) and gebench.sweep.diff_rows is diff_rows
    from gebench.sweep import sweep

    assert "Run every pass set over every model" in sweep.__doc__


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = cli.main(argv)
    return code, capsys.readouterr().err


def test_cli_usage_errors_exit_2_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    passes = _touch(tmp_path / "passes" / "p.py", PASS).parent
    model = _touch(tmp_path / "m.onnx")
    code, err = _cli(["sweep", str(tmp_path / "nope.onnx"), "--passes", str(passes), "--out", str(tmp_path / "o")],
                     capsys)
    assert code == 2 and err == f"gebench sweep: model path '{tmp_path / 'nope.onnx'}' does not exist\n"
    code, err = _cli(["sweep", str(model), "--passes", str(tmp_path / "gone"), "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and "pass path" in err and "does not exist" in err and len(err.splitlines()) == 1
    code, err = _cli(["sweep", str(model), "--passes", str(passes), "--scheduler", "nonsense", "--out",
                      str(tmp_path / "o")], capsys)
    assert code == 2 and err.startswith("gebench sweep: cannot reach the Dask scheduler at 'nonsense'")
    assert "Traceback" not in err and len(err.splitlines()) == 1
    assert not (tmp_path / "o").exists()  # a bad scheduler leaves no out folder behind
    code, err = _cli(["sweep", str(model), "--passes", str(passes), "--scheduler", "nonsense", "--debug"], capsys)
    assert code == 2 and "Traceback" in err
    ResultStore.open(tmp_path / "taken", {"verify": False, "pass_sets": {}, "models": []}).close()
    code, err = _cli(["sweep", str(model), "--passes", str(passes), "--out", str(tmp_path / "taken")], capsys)
    assert code == 2 and "already holds a sweep" in err
    code, err = _cli(["sweep", str(model), "--passes", str(passes), "--resume", "--overwrite"], capsys)
    assert code == 2 and "exclude each other" in err
    code, err = _cli(["sweep", str(model), "--passes", str(passes), "--no-isolate", "--task-timeout", "5",
                      "--out", str(tmp_path / "o2")], capsys)
    assert code == 2 and "need isolated tasks" in err
    code, err = _cli(["sweep-diff", str(tmp_path), str(tmp_path / "taken")], capsys)
    assert code == 2 and err == f"gebench sweep-diff: '{tmp_path}' holds no sweep (no sweep.json)\n"
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["sweep", str(model), "--passes", str(passes), "--task-timeout", "-1"])
    assert exit_info.value.code == 2
    capsys.readouterr()
