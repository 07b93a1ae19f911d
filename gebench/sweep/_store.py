"""The sweep's output folder: rows as they arrive, the table at the end, and what ``--resume`` needs.

Files in the out folder (only these are ever written or removed):

* ``sweep.json`` — what was swept: pass sets (label, digest, the driver's paths), models, verify, engine;
* ``results.jsonl`` — one JSON row per finished task (schema in :mod:`gebench.sweep._task`), appended and
  flushed as each task finishes, so an interrupted sweep keeps every finished task. A task run again
  (``retry_failed``) appends a new row; the last row of a task wins when reading;
* ``ledgers/<task>.json`` — the task's ledger (compact by default: no structural mismatches);
* ``results.csv`` — the table: one line per (task, pass), written at the end of every sweep;
* ``diff.json`` — the comparison with the baseline, when the sweep had one (:mod:`gebench.sweep._diff`);
* ``report.html`` — the report (:mod:`gebench.sweep._report`).
"""

from __future__ import annotations

import csv
import datetime
import json
import logging
import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from ._corpus import SweepInputError

__all__ = ["ResultStore", "read_results", "read_meta", "table_rows", "TABLE_COLUMNS", "META", "RESULTS", "TABLE",
           "REPORT", "DIFF", "LEDGERS"]

_log = logging.getLogger(__name__)

META = "sweep.json"
RESULTS = "results.jsonl"
TABLE = "results.csv"
REPORT = "report.html"
DIFF = "diff.json"
LEDGERS = "ledgers"
FORMAT = "gebench-sweep"
FORMAT_VERSION = 1

#: Columns of ``results.csv`` (one line per task and pass; a task without per-pass data has one line
#: with an empty ``pass_name``).
TABLE_COLUMNS = ("model_name", "pass_set", "status", "pass_name", "stage", "candidates", "matches", "replaced",
                 "rejected", "lints", "failures", "seconds", "verify_max_abs_error", "verify_errors",
                 "nodes_before", "nodes_after", "wall_s", "peak_mem_mb", "failed_pass", "reason", "worker", "model",
                 "task")


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def read_meta(out: str | os.PathLike[str]) -> dict[str, Any]:
    """``sweep.json`` of a sweep folder.

    Raises:
        SweepInputError: no sweep there, or the file is not a sweep description.
    """
    path = Path(out) / META
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SweepInputError(f"{os.fspath(out)!r} holds no sweep (no {META})") from None
    except (OSError, ValueError) as exc:
        raise SweepInputError(f"cannot read {path}: {exc}") from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise SweepInputError(f"{path} is not a gebench sweep description")
    return meta


def read_results(out: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """Task id -> its last row in ``results.jsonl`` (file order kept). A line that does not parse (the last
    line of a sweep killed mid-write) is skipped with a warning. Missing file: empty. Cost: O(file)."""
    path = Path(out) / RESULTS
    rows: dict[str, dict[str, Any]] = {}
    try:
        fh = path.open(encoding="utf-8")
    except FileNotFoundError:
        return rows
    with fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError:
                _log.warning("%s:%d: skipping a row that does not parse (cut off when the sweep stopped?)",
                             path, number)
                continue
            if isinstance(row, dict) and "task" in row:
                rows.pop(row["task"], None)
                rows[row["task"]] = row
    return rows


def table_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows flattened to one dict per (task, pass) with :data:`TABLE_COLUMNS` keys."""
    out = []
    for row in rows:
        base = {k: row.get(k) for k in TABLE_COLUMNS}
        passes = row.get("passes") or {}
        if not passes:
            out.append({**base, "pass_name": "", "stage": "", "rejected": "", "failures": 0})
            continue
        for name, p in passes.items():
            rejected = ";".join(f"{k}={v}" for k, v in sorted((p.get("rejected") or {}).items()))
            out.append({**base, "pass_name": name, "stage": p.get("stage"), "candidates": p.get("candidates"),
                        "matches": p.get("matches"), "replaced": p.get("replaced"), "rejected": rejected,
                        "lints": p.get("lints"), "failures": len(p.get("failures") or ()),
                        "seconds": p.get("seconds"), "verify_max_abs_error": p.get("verify_max_abs_error"),
                        "verify_errors": p.get("verify_errors")})
    return out


def _drop_partial_line(path: Path) -> None:
    """Cut a last line without its newline (a row cut off when a sweep was killed), so appended rows start on
    a line of their own. O(1) unless the file ends mid-line (then O(last line))."""
    try:
        fh = path.open("r+b")
    except FileNotFoundError:
        return
    with fh:
        size = fh.seek(0, os.SEEK_END)
        if size == 0:
            return
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return
        pos = size
        while pos > 0:
            step = min(pos, 1 << 16)
            fh.seek(pos - step)
            chunk = fh.read(step)
            cut = chunk.rfind(b"\n")
            if cut >= 0:
                fh.truncate(pos - step + cut + 1)
                return
            pos -= step
        fh.truncate(0)


class ResultStore:
    """Writes one sweep's out folder (see the module docstring). Not thread-safe: one writer, the driver.

    Invariant: every row in ``results.jsonl`` was complete when written (a line is written whole and
    flushed); the ledger file of a row is written before its line.
    """

    def __init__(self, out: str | os.PathLike[str], meta: dict[str, Any], rows: dict[str, dict[str, Any]]) -> None:
        self.out = Path(out)
        self.meta = meta
        self._rows = rows
        self._fh: TextIO | None = None
        self._markers: list[Path] = []

    @classmethod
    def open(cls, out: str | os.PathLike[str], meta: dict[str, Any], *, resume: bool = False,
             overwrite: bool = False) -> ResultStore:
        """Prepare ``out`` for the sweep described by ``meta`` (``verify``, ``pass_sets``, ``models``, ...).

        A folder that already holds a sweep is continued with ``resume`` (its rows are kept; the pass sets it
        shares with ``meta`` must have the same digests and ``verify`` must agree), emptied of the sweep's
        files with ``overwrite``, and refused otherwise.

        Raises:
            SweepInputError: the folder holds a sweep and neither flag is given, or ``resume`` meets a sweep
                of other passes or another verify setting, or ``out`` is a file.
        """
        path = Path(out)
        if path.exists() and not path.is_dir():
            raise SweepInputError(f"--out {os.fspath(out)!r} is a file, not a folder")
        existing = (path / META).exists() or (path / RESULTS).exists()
        rows: dict[str, dict[str, Any]] = {}
        meta = dict(meta, format=FORMAT, version=FORMAT_VERSION)
        meta.setdefault("created", _now())
        if existing and resume:
            old = read_meta(path)
            if bool(old.get("verify")) != bool(meta.get("verify")):
                raise SweepInputError(f"the sweep in {os.fspath(out)!r} was run with verify={old.get('verify')}; "
                                      "resume it with the same setting or use another --out")
            for label, info in meta.get("pass_sets", {}).items():
                before = old.get("pass_sets", {}).get(label)
                if before is not None and before.get("digest") != info.get("digest"):
                    raise SweepInputError(f"pass set {label!r} changed since the sweep in {os.fspath(out)!r} "
                                          "started; sweep into a new --out (with --baseline to compare)")
            pass_sets = dict(old.get("pass_sets", {}))
            pass_sets.update(meta.get("pass_sets", {}))
            names = {m["path"] for m in meta.get("models", [])}
            models = list(meta.get("models", [])) + [m for m in old.get("models", []) if m["path"] not in names]
            meta = {**old, **{k: v for k, v in meta.items() if k != "created"}, "pass_sets": pass_sets,
                    "models": models}
            rows = read_results(path)
            _drop_partial_line(path / RESULTS)
        elif existing and not overwrite:
            raise SweepInputError(f"{os.fspath(out)!r} already holds a sweep: pass --resume to continue it or "
                                  "--overwrite to replace it")
        elif existing:
            for name in (META, RESULTS, TABLE, REPORT, DIFF):
                (path / name).unlink(missing_ok=True)
            shutil.rmtree(path / LEDGERS, ignore_errors=True)
        path.mkdir(parents=True, exist_ok=True)
        store = cls(path, meta, rows)
        store.write_meta()
        return store

    @property
    def rows(self) -> dict[str, dict[str, Any]]:
        """Task id -> row, for every task recorded so far (resumed ones included)."""
        return self._rows

    def write_meta(self) -> None:
        self.meta["updated"] = _now()
        tmp = self.out / (META + ".tmp")
        tmp.write_text(json.dumps(self.meta, indent=1), encoding="utf-8")
        os.replace(tmp, self.out / META)

    def allow_direct_ledgers(self, sweep_id: str) -> str:
        """Make ``ledgers/`` and put the sweep's marker file in it (:func:`~gebench.sweep._task.ledger_marker`),
        so tasks that see this folder write their ledgers there themselves. Returns the folder's absolute path
        (for :attr:`TaskSpec.ledger_dir <gebench.sweep._task.TaskSpec>`). The marker is removed by
        :meth:`close`."""
        from ._task import ledger_marker

        folder = (self.out / LEDGERS).resolve()
        folder.mkdir(exist_ok=True)
        marker = folder / ledger_marker(sweep_id)
        marker.touch()
        self._markers.append(marker)
        return str(folder)

    def append(self, row: dict[str, Any]) -> None:
        """Record a finished task: its ledger, when it travelled in the row, to ``ledgers/<task>.json``
        (``row["_ledger_json"]``: text encoded by the task, written as is; ``row["_ledger"]``: a dict, encoded
        here), removed from the row; then the row as one flushed line of ``results.jsonl``. A ledger the task
        wrote itself is already in place (``row["ledger"]`` names it), so the file exists before its row.

        Cost: one line write, plus one file write when the ledger came with the row.
        """
        text = row.pop("_ledger_json", None)
        ledger = row.pop("_ledger", None)
        if ledger is not None and text is None:
            text = json.dumps({"task": row["task"], "model": row["model"], "model_name": row["model_name"],
                               "pass_set": row["pass_set"], **ledger}, default=str)
        if text is not None:
            (self.out / LEDGERS).mkdir(exist_ok=True)
            rel = f"{LEDGERS}/{row['task']}.json"
            with (self.out / rel).open("w", encoding="utf-8") as fh:
                fh.write(text)
            row["ledger"] = rel
        if self._fh is None:
            self._fh = (self.out / RESULTS).open("a", encoding="utf-8")
        self._fh.write(json.dumps(row, default=str) + "\n")
        self._fh.flush()
        self._rows.pop(row["task"], None)
        self._rows[row["task"]] = row

    def write_table(self, rows: Iterable[dict[str, Any]]) -> Path:
        """Write ``results.csv`` for ``rows`` (see :data:`TABLE_COLUMNS`)."""
        path = self.out / TABLE
        with path.open("w", encoding="utf-8", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(TABLE_COLUMNS), extrasaction="ignore")
            writer.writeheader()
            for line in table_rows(rows):
                writer.writerow({k: ("" if v is None else v) for k, v in line.items()})
        return path

    def write_diff(self, diff: Any) -> Path:
        """Write ``diff.json`` (a :class:`~gebench.sweep._diff.SweepDiff`)."""
        path = self.out / DIFF
        path.write_text(json.dumps(diff.to_dict(), indent=1, default=str), encoding="utf-8")
        return path

    def close(self) -> None:
        """Close ``results.jsonl`` and remove the ledger markers (tasks still running then send their ledgers
        back instead of writing them)."""
        for marker in self._markers:
            marker.unlink(missing_ok=True)
        self._markers.clear()
        if self._fh is not None:
            self._fh.close()
            self._fh = None
