"""Compare two sweeps: per model and pass, the sites gained and lost, new failures, new verify errors and
time changes beyond noise; :attr:`SweepDiff.has_regression` gates a pass edit in CI.

Rows are matched on (``model_name``, ``pass_set``): the model path as written on the command line and the
pass set's label, so run both sweeps from the same folder with the same arguments.

Regressions (``Change.regression``):

* ``sites_lost``: a pass replaced fewer sites on a model (a pass that disappeared lost all of its sites);
* ``new_failure``: a task that was ``SUCCESS`` is not any more (``FAILED`` where GE would fail the compile,
  or ``ERROR``/``CRASHED``/``TIMEOUT``/``OUT_OF_MEMORY``); a task failing in both sweeps is no regression;
* ``new_verify_error``: a pass has more rewrites that change results than before;
* ``slower`` only with ``slowdown_is_regression``.

Informational: ``sites_gained``, ``fixed``, ``verify_fixed``, ``slower``, ``faster``, ``model_added``,
``model_missing``. Time changes count only beyond noise: ``new > old * (1 + time_rel)`` and
``new - old > time_abs`` seconds (defaults 50 % and 0.25 s; the same for a pass's seconds and a model's wall
time). Sites of a task that did not finish its compile (``ERROR``, ``CRASHED``...) are not compared.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from typing import Any

from ._task import COMPLETED_STATUSES

__all__ = ["Change", "SweepDiff", "diff_rows", "REGRESSION_KINDS"]

REGRESSION_KINDS = ("sites_lost", "new_failure", "new_verify_error")


@dataclasses.dataclass(frozen=True)
class Change:
    """One difference between two sweeps. ``pass_name`` is None for a model-level change."""

    kind: str
    model: str
    pass_set: str
    pass_name: str | None
    old: Any
    new: Any
    regression: bool
    detail: str = ""

    def text(self) -> str:
        """One line: ``REGRESSION sites_lost  models/a.onnx [passes] GebenchMulOnePass: 3 -> 2``."""
        where = self.model + (f" [{self.pass_set}]" if self.pass_set else "")
        what = f" {self.pass_name}" if self.pass_name else ""
        mark = "REGRESSION " if self.regression else ""
        tail = f" ({self.detail})" if self.detail else ""
        return f"{mark}{self.kind}  {where}{what}: {_fmt(self.old)} -> {_fmt(self.new)}{tail}"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}s"
    return "-" if value is None else str(value)


@dataclasses.dataclass
class SweepDiff:
    """Everything :func:`diff_rows` found, regressions first, then by model, pass and kind."""

    old: str
    new: str
    changes: list[Change]

    @property
    def regressions(self) -> list[Change]:
        return [c for c in self.changes if c.regression]

    @property
    def has_regression(self) -> bool:
        return any(c.regression for c in self.changes)

    def counts(self) -> dict[str, int]:
        """Changes per kind."""
        out: dict[str, int] = {}
        for c in self.changes:
            out[c.kind] = out.get(c.kind, 0) + 1
        return out

    def for_cell(self, model: str, pass_set: str, pass_name: str | None) -> list[Change]:
        """The changes of one model (and pass set, and pass; None: model-level)."""
        return [c for c in self.changes if c.model == model and c.pass_set == pass_set and c.pass_name == pass_name]

    def summary(self, limit: int = 60) -> str:
        """A headline (regression or not, counts by kind) and one line per change (at most ``limit``)."""
        counts = ", ".join(f"{k}={v}" for k, v in sorted(self.counts().items())) or "no changes"
        head = (f"diff {self.old} -> {self.new}: "
                + (f"{len(self.regressions)} REGRESSION(S)" if self.has_regression else "no regression")
                + f" ({counts})")
        lines = [head] + ["  " + c.text() for c in self.changes[:limit]]
        if len(self.changes) > limit:
            lines.append(f"  ... {len(self.changes) - limit} more")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"old": self.old, "new": self.new, "has_regression": self.has_regression,
                "counts": self.counts(), "changes": [c.to_dict() for c in self.changes]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SweepDiff:
        """Inverse of :meth:`to_dict` (``diff.json`` of a sweep folder)."""
        return cls(data["old"], data["new"], [Change(**c) for c in data.get("changes", [])])


def _beyond_noise(old: float | None, new: float | None, rel: float, abs_s: float) -> int:
    """+1 slower, -1 faster, 0 within noise or unknown."""
    if old is None or new is None:
        return 0
    if new > old * (1 + rel) and new - old > abs_s:
        return 1
    if old > new * (1 + rel) and old - new > abs_s:
        return -1
    return 0


def diff_rows(old_rows: Iterable[dict[str, Any]], new_rows: Iterable[dict[str, Any]], *, old_label: str = "old",
              new_label: str = "new", time_rel: float = 0.5, time_abs: float = 0.25,
              slowdown_is_regression: bool = False) -> SweepDiff:
    """Compare the rows of two sweeps (rules in the module docstring). Cost: O(rows x passes)."""
    old = {(r["model_name"], r["pass_set"]): r for r in old_rows}
    new = {(r["model_name"], r["pass_set"]): r for r in new_rows}
    changes: list[Change] = []

    def add(kind: str, key: tuple[str, str], pass_name: str | None, o: Any, n: Any, detail: str = "",
            regression: bool | None = None) -> None:
        reg = kind in REGRESSION_KINDS if regression is None else regression
        changes.append(Change(kind, key[0], key[1], pass_name, o, n, reg, detail))

    for key in sorted(set(old) | set(new)):
        o_row, n_row = old.get(key), new.get(key)
        if n_row is None:
            add("model_missing", key, None, o_row["status"], None, "not in the new sweep")
            continue
        if o_row is None:
            add("model_added", key, None, None, n_row["status"])
            continue
        o_status, n_status = o_row["status"], n_row["status"]
        if o_status == "SUCCESS" and n_status != "SUCCESS":
            why = n_row.get("reason") or ""
            add("new_failure", key, n_row.get("failed_pass"), o_status, n_status, why[:300])
        elif o_status != "SUCCESS" and n_status == "SUCCESS":
            add("fixed", key, o_row.get("failed_pass"), o_status, n_status)
        slow = _beyond_noise(o_row.get("wall_s"), n_row.get("wall_s"), time_rel, max(time_abs, 0.0))
        if slow:
            add("slower" if slow > 0 else "faster", key, None, o_row.get("wall_s"), n_row.get("wall_s"),
                regression=slow > 0 and slowdown_is_regression)
        if o_status not in COMPLETED_STATUSES or n_status not in COMPLETED_STATUSES:
            continue
        o_passes, n_passes = o_row.get("passes") or {}, n_row.get("passes") or {}
        for name in sorted(set(o_passes) | set(n_passes)):
            o_p, n_p = o_passes.get(name) or {}, n_passes.get(name) or {}
            o_rep, n_rep = int(o_p.get("replaced") or 0), int(n_p.get("replaced") or 0)
            if n_rep < o_rep:
                detail = "" if n_p else "the pass is gone"
                add("sites_lost", key, name, o_rep, n_rep, detail or f"{o_rep - n_rep} lost")
            elif n_rep > o_rep:
                add("sites_gained", key, name, o_rep, n_rep, f"{n_rep - o_rep} gained")
            o_ve, n_ve = int(o_p.get("verify_errors") or 0), int(n_p.get("verify_errors") or 0)
            if n_ve > o_ve:
                err = n_p.get("verify_max_abs_error")
                add("new_verify_error", key, name, o_ve, n_ve, f"max abs error {err:.3g}" if err is not None else "")
            elif n_ve < o_ve:
                add("verify_fixed", key, name, o_ve, n_ve)
            slow = _beyond_noise(o_p.get("seconds"), n_p.get("seconds"), time_rel, time_abs)
            if slow:
                add("slower" if slow > 0 else "faster", key, name, o_p.get("seconds"), n_p.get("seconds"),
                    regression=slow > 0 and slowdown_is_regression)
    changes.sort(key=lambda c: (not c.regression, c.model, c.pass_set, c.pass_name or "", c.kind))
    return SweepDiff(os.fspath(old_label), os.fspath(new_label), changes)
