"""What a sweep returns: its rows, the comparison with a baseline, the report, and the way back into the
workbench for one model and pass."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from ._corpus import SweepInputError
from ._diff import SweepDiff, diff_rows
from ._store import DIFF, REPORT, read_meta, read_results, table_rows

__all__ = ["SweepResult", "load"]

_log = logging.getLogger(__name__)


class SweepResult:
    """The outcome of a sweep, read from (and backed by) its out folder.

    Attributes:
        out: the out folder.
        meta: ``sweep.json``.
        rows: one row per task (schema in :mod:`gebench.sweep._task`), in task order: models in argument
            order, then pass sets.
        diff: the comparison with the baseline, when the sweep had one (kept in ``diff.json``).
        ran: tasks run by the call that made this result (0 when loaded from a folder).
        resumed: tasks taken from the folder instead of being run.
        elapsed: seconds the sweep took (None when loaded).
    """

    def __init__(self, out: str | os.PathLike[str], meta: dict[str, Any], rows: list[dict[str, Any]], *,
                 diff: SweepDiff | None = None, ran: int = 0, resumed: int = 0, elapsed: float | None = None) -> None:
        self.out = Path(out)
        self.meta = meta
        self.rows = rows
        self.diff = diff
        self.ran = ran
        self.resumed = resumed
        self.elapsed = elapsed

    @classmethod
    def load(cls, out: str | os.PathLike[str]) -> SweepResult:
        """Read a finished (or interrupted) sweep's folder.

        Raises:
            SweepInputError: the folder holds no sweep.
        """
        meta = read_meta(out)
        rows = read_results(out)
        order = {m["path"]: i for i, m in enumerate(meta.get("models", []))}
        sets = {label: i for i, label in enumerate(meta.get("pass_sets", {}))}
        ordered = sorted(rows.values(), key=lambda r: (order.get(r["model"], len(order)), sets.get(r["pass_set"], 0)))
        diff = None
        try:
            diff = SweepDiff.from_dict(json.loads((Path(out) / DIFF).read_text(encoding="utf-8")))
        except FileNotFoundError:
            pass
        except (OSError, ValueError, KeyError, TypeError) as exc:
            _log.warning("ignoring %s: %s", Path(out) / DIFF, exc)
        return cls(out, meta, ordered, diff=diff)

    # ------------------------------------------------------------------------------------------ queries
    @property
    def ok(self) -> bool:
        """Every task is SUCCESS."""
        return all(r["status"] == "SUCCESS" for r in self.rows)

    @property
    def failures(self) -> list[dict[str, Any]]:
        """Rows whose status is not SUCCESS."""
        return [r for r in self.rows if r["status"] != "SUCCESS"]

    @property
    def verify_errors(self) -> list[dict[str, Any]]:
        """Rows where some rewrite changed results."""
        return [r for r in self.rows if any(p.get("verify_errors") for p in (r.get("passes") or {}).values())]

    def statuses(self) -> dict[str, int]:
        """Tasks per status."""
        out: dict[str, int] = {}
        for r in self.rows:
            out[r["status"]] = out.get(r["status"], 0) + 1
        return out

    def pass_names(self) -> list[str]:
        """Every pass seen, in stage order then by name (the report's columns)."""
        from ._report import pass_columns

        return [name for name, _ in pass_columns(self.rows)]

    def row(self, model: str, pass_set: str | None = None) -> dict[str, Any]:
        """The row of ``model``: its ``model_name``, its path, or a unique file name or stem
        (``"small_cnn"``); ``pass_set`` picks among several pass sets.

        Raises:
            KeyError: no such model, or the name is ambiguous.
        """
        rows = [r for r in self.rows if pass_set is None or r["pass_set"] == pass_set]
        for key in ("model_name", "model"):
            hits = [r for r in rows if r[key] == model or r[key] == os.path.abspath(model)]
            if hits:
                break
        else:
            hits = [r for r in rows if model in (Path(r["model"]).name, Path(r["model"]).stem)]
        if len(hits) != 1:
            what = "no" if not hits else f"{len(hits)}"
            raise KeyError(f"{what} sweep rows match model {model!r}"
                           + (f" and pass set {pass_set!r}" if pass_set else "")
                           + ("" if hits else f"; models: {', '.join(sorted({r['model_name'] for r in rows}))}"))
        return hits[0]

    def cell(self, model: str, pass_name: str, pass_set: str | None = None) -> dict[str, Any] | None:
        """The numbers of one pass on one model (``candidates``, ``replaced``...), None if it did not run."""
        return (self.row(model, pass_set).get("passes") or {}).get(pass_name)

    def table(self) -> list[dict[str, Any]]:
        """The rows flattened to one dict per (task, pass): what ``results.csv`` holds."""
        return table_rows(self.rows)

    def compare(self, baseline: str | os.PathLike[str] | SweepResult, **kwargs: Any) -> SweepDiff:
        """Diff against ``baseline`` (a sweep folder or result); kwargs as :func:`gebench.sweep.diff_rows`."""
        old = baseline if isinstance(baseline, SweepResult) else SweepResult.load(baseline)
        return diff_rows(old.rows, self.rows, old_label=str(old.out), new_label=str(self.out), **kwargs)

    # ------------------------------------------------------------------------------------------ output
    @property
    def report_path(self) -> Path:
        return self.out / REPORT

    def write_report(self) -> Path:
        """(Re)write ``report.html`` in the out folder."""
        from ._report import render_report

        path = self.report_path
        path.write_text(render_report(self), encoding="utf-8")
        return path

    def summary(self, limit: int = 30) -> str:
        """A headline and one line per task that is not SUCCESS (at most ``limit``)."""
        counts = ", ".join(f"{v} {k}" for k, v in sorted(self.statuses().items())) or "nothing"
        took = f" in {self.elapsed:.1f} s" if self.elapsed is not None else ""
        lines = [f"sweep: {len(self.rows)} tasks ({self.ran} run, {self.resumed} resumed){took}: {counts}"]
        for r in self.failures[:limit]:
            where = f" at {r['failed_pass']}" if r.get("failed_pass") else ""
            lines.append(f"  {r['status']} {r['model_name']} [{r['pass_set']}]{where}: {(r.get('reason') or '')[:200]}")
        if len(self.failures) > limit:
            lines.append(f"  ... {len(self.failures) - limit} more")
        for r in self.verify_errors[:limit]:
            bad = [n for n, p in r["passes"].items() if p.get("verify_errors")]
            lines.append(f"  VERIFY {r['model_name']} [{r['pass_set']}]: rewrites of {', '.join(bad)} change results")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        from ._report import render_report

        return render_report(self, for_notebook=True)

    def __repr__(self) -> str:
        return f"<SweepResult {len(self.rows)} tasks {self.statuses()} in {str(self.out)!r}>"

    def open(self, model: str, pass_name: str | None = None, pass_set: str | None = None, **kwargs: Any) -> Any:
        """Open the workbench (:class:`gebench.Workbench`) on ``model`` with the pass set's files as the
        driver has them now, with ``pass_name`` selected. ``kwargs`` go to the Workbench.

        Raises:
            KeyError: unknown model or pass set, or ``pass_name`` not in the run.
            SweepInputError: the pass set's files are no longer where the sweep read them.
        """
        import gebench

        row = self.row(model, pass_set)
        info = self.meta.get("pass_sets", {}).get(row["pass_set"])
        if info is None:
            raise KeyError(f"pass set {row['pass_set']!r} is not described in {self.out}")
        paths = list(info.get("paths", []))
        missing = [p for p in paths if not os.path.exists(p)]
        if missing:
            raise SweepInputError(f"pass path {missing[0]!r} of pass set {row['pass_set']!r} no longer exists")
        wb = gebench.Workbench(row["model"], passes=paths, **kwargs)
        if pass_name:
            wb.select_pass(pass_name)
        return wb


def load(out: str | os.PathLike[str]) -> SweepResult:
    """:meth:`SweepResult.load`: the sweep in folder ``out``."""
    return SweepResult.load(out)
