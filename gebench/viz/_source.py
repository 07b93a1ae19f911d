"""Read what the workbench shows out of a compile run: snapshots and ledger records.

The ledger is the only source of truth for matches and verdicts; this module only normalises it into
plain rows (status names, ids, strings) for tables and highlighting. Nothing here mutates a graph.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from gebench import ir

__all__ = [
    "STAGE_ORDER",
    "STATUS_CLASS",
    "STATUS_PRECEDENCE",
    "CandidateRow",
    "PassSummary",
    "candidate_rows",
    "pass_summaries",
    "run_snapshots",
]

#: GE's custom-pass stages in the order GE runs them.
STAGE_ORDER = ("BeforeInferShape", "AfterInferShape", "AfterBuiltinFusionPass", "AfterOriginGraphOptimize")

#: Pseudo pass and stage grouping ledger records that belong to no pass (pass files that failed to load).
LOAD_PASS = "(pass files)"
LOAD_STAGE = "Load"

#: CSS class (without the ``gb_st_`` prefix) per ledger status name.
STATUS_CLASS = {
    "REPLACED": "replaced",
    "REJECTED_BY_MEET_REQUIREMENTS": "rejected",
    "STRUCTURAL_MISMATCH": "nearmiss",
    "BOUNDARY_VIOLATION": "boundary",
    "WOULD_CREATE_CYCLE": "cycle",
    "LOST_TO_OVERLAP": "overlap",
    "REPLACEMENT_FAILED": "failed",
    "LINT": "lint",
}

#: When one node belongs to several candidates of a pass, the earliest status here colours it.
STATUS_PRECEDENCE = ("REPLACED", "REPLACEMENT_FAILED", "WOULD_CREATE_CYCLE", "BOUNDARY_VIOLATION",
                     "REJECTED_BY_MEET_REQUIREMENTS", "LOST_TO_OVERLAP", "STRUCTURAL_MISMATCH", "LINT")




def _name(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, enum.Enum):
        return str(value.value) if isinstance(value.value, str) else value.name
    return str(value)


def _status_name(value: Any) -> str:
    if isinstance(value, enum.Enum):
        return value.name
    return str(value).rsplit(".", 1)[-1].upper()


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, BaseException):
        return f"{type(value).__name__}: {value}"
    return repr(value)


@dataclass
class CandidateRow:
    """One ledger record, flattened for the table and the highlighting."""

    index: int
    pass_name: str
    stage: str
    pattern_name: str
    status: str
    reason: str
    target_ids: list[int]
    target_names: list[str]
    captures: list[str]
    meet_result: str
    exception: str
    pattern_source: str
    hook_source: str
    removed_ids: list[int]
    added_ids: list[int]
    max_abs_error: float | None
    max_rel_error: float | None
    detail: dict[str, Any] = field(default_factory=dict)
    record: Any = None

    @property
    def css(self) -> str:
        return "gb_st_" + STATUS_CLASS.get(self.status, "other")

    def to_row(self) -> dict[str, Any]:
        """The JSON row sent to the front end (small: no graphs, no arrays)."""
        verify = None
        if self.max_abs_error is not None:
            checked = self.detail.get("verify") if isinstance(self.detail.get("verify"), dict) else {}
            ok = bool(checked.get("ok", True)) and not self.detail.get("verify_failed")
            verify = {"abs": float(self.max_abs_error),
                      "rel": float(self.max_rel_error) if self.max_rel_error is not None else None, "ok": ok}
        return {
            "i": self.index, "status": self.status, "css": self.css, "pattern": self.pattern_name,
            "reason": self.reason, "targets": self.target_names[:8], "ntargets": len(self.target_names),
            "captures": self.captures, "meet": self.meet_result, "exception": self.exception,
            "pattern_src": self.pattern_source, "hook_src": self.hook_source, "verify": verify,
        }


def _captures(value: Any) -> list[str]:
    if not value:
        return []
    out = []
    for item in value if isinstance(value, (list, tuple)) else [value]:
        if isinstance(item, (list, tuple)) and len(item) == 3 and isinstance(item[2], int):
            out.append(f"{item[1]}:{item[2]}")
        elif isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[1], int):
            node, port = item
            out.append(f"{getattr(node, 'name', node)}:{port}")
        elif isinstance(item, dict):
            out.append(", ".join(f"{k}={v}" for k, v in item.items()))
        else:
            out.append(str(item))
    return out


def _source(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return f"{value[0]}:{value[1]}"
    return str(value)


def _records(ledger: Any) -> list[Any]:
    recs = getattr(ledger, "records", ledger)
    if callable(recs):
        recs = recs()
    return list(recs or [])


#: status enum member -> its row name (:func:`_status_name`; an enum's ``name`` is a slow property)
_STATUS_NAMES: dict[Any, str] = {}


def _fast_row(i: int, rec: Any) -> CandidateRow | None:
    """The row of a ledger ``CandidateRecord`` read by attribute (no per-field lookups by name); None for
    records of another shape (dicts, stand-ins), which :func:`candidate_rows` reads generically. O(the record's
    lists); the row's lists and dict are its own."""
    try:
        pass_name, stage, status = rec.pass_name, rec.stage, rec.status
        ids, names, caps = rec.target_node_ids, rec.target_node_names, rec.captures
        reason, meet, exc, detail = rec.reason, rec.meet_requirements_result, rec.exception, rec.detail
        psrc, hsrc, removed, added = rec.pattern_source, rec.hook_source, rec.removed_node_ids, rec.added_node_ids
        max_abs, max_rel, pattern = rec.max_abs_error, rec.max_rel_error, rec.pattern_name
    except AttributeError:
        return None
    if not pass_name or not isinstance(pass_name, str) or not isinstance(stage, str):
        return None
    status_name = _STATUS_NAMES.get(status) if isinstance(status, enum.Enum) else None
    if status_name is None:
        status_name = _status_name(status)
        if isinstance(status, enum.Enum):  # a closed set: the cache stays small
            _STATUS_NAMES[status] = status_name
    # positional: this runs per ledger record (fields in declaration order)
    return CandidateRow(
        i, pass_name, stage, pattern if type(pattern) is str else _name(pattern), status_name,
        reason if type(reason) is str else _text(reason), list(ids), list(names) or [str(x) for x in ids],
        _captures(caps), meet if type(meet) is str else _text(meet), exc if type(exc) is str else _text(exc),
        psrc if type(psrc) is str else _source(psrc), hsrc if type(hsrc) is str else _source(hsrc),
        list(removed), list(added), max_abs, max_rel, dict(detail) if detail else {}, rec)


def candidate_rows(ledger: Any) -> list[CandidateRow]:
    """Every ledger record as a :class:`CandidateRow`, in ledger order. O(records)."""
    rows = []
    for i, rec in enumerate(_records(ledger)):
        if not isinstance(rec, dict):
            fast = _fast_row(i, rec)
            if fast is not None:
                rows.append(fast)
                continue
        g = rec.get if isinstance(rec, dict) else (lambda k, d=None, _r=rec: getattr(_r, k, d))
        ids = [int(x) for x in (g("target_node_ids") or [])]
        names = [str(x) for x in (g("target_node_names") or [])]
        pass_name, stage = _name(g("pass_name")), _name(g("stage"))
        if not pass_name:
            # records that belong to no pass: pass files that failed to load, run-level lints
            pass_name, stage = LOAD_PASS, stage or LOAD_STAGE
        rows.append(CandidateRow(
            index=i,
            pass_name=pass_name,
            stage=stage,
            pattern_name=_name(g("pattern_name")),
            status=_status_name(g("status")),
            reason=_text(g("reason")),
            target_ids=ids,
            target_names=names or [str(x) for x in ids],
            captures=_captures(g("captures")),
            meet_result=_text(g("meet_requirements_result")),
            exception=_text(g("exception")),
            pattern_source=_source(g("pattern_source")),
            hook_source=_source(g("hook_source")),
            removed_ids=[int(x) for x in (g("removed_node_ids") or [])],
            added_ids=[int(x) for x in (g("added_node_ids") or [])],
            max_abs_error=g("max_abs_error"),
            max_rel_error=g("max_rel_error"),
            detail=dict(g("detail") or {}),
            record=rec,
        ))
    return rows


@dataclass
class PassSummary:
    """Counts for one pass: candidates (lints excluded), replaced, and rejections by status."""

    name: str
    stage: str
    candidates: int = 0
    replaced: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    lints: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "candidates": self.candidates, "replaced": self.replaced,
                "rejected": dict(sorted(self.rejected.items())), "lints": self.lints}


def _stage_key(stage: str) -> tuple[int, str]:
    if stage == LOAD_STAGE:
        return (-1, stage)
    return (STAGE_ORDER.index(stage) if stage in STAGE_ORDER else len(STAGE_ORDER), stage)


def pass_summaries(rows: Iterable[CandidateRow], *, known: Iterable[tuple[str, str]] = ()) -> list[dict[str, Any]]:
    """Passes grouped by stage in GE's stage order, passes by name within a stage (GE's run order).

    Args:
        rows: the ledger rows.
        known: extra ``(pass name, stage)`` pairs for passes that produced no record, so they show with
            zero counts.

    Returns:
        ``[{"stage": ..., "passes": [PassSummary.to_json(), ...]}, ...]``.
    """
    by_pass: dict[str, PassSummary] = {}
    for name, stage in known:
        by_pass.setdefault(name, PassSummary(name, stage))
    for row in rows:
        s = by_pass.setdefault(row.pass_name, PassSummary(row.pass_name, row.stage))
        if not s.stage:
            s.stage = row.stage
        if row.status == "LINT":
            s.lints += 1
            continue
        s.candidates += 1
        if row.status == "REPLACED":
            s.replaced += 1
        else:
            s.rejected[row.status] = s.rejected.get(row.status, 0) + 1
    stages: dict[str, list[PassSummary]] = {}
    for s in by_pass.values():
        stages.setdefault(s.stage or "(no stage)", []).append(s)
    return [{"stage": st, "passes": [p.to_json() for p in sorted(stages[st], key=lambda p: p.name)]}
            for st in sorted(stages, key=_stage_key)]


def run_snapshots(run: Any) -> list[tuple[str, ir.Graph]]:
    """The run's graphs in pipeline order: each stage snapshot, then ``final`` (``run.graph``).

    Snapshots whose graph equals the previous one by object identity are kept (labels matter to users).
    """
    out: list[tuple[str, ir.Graph]] = []
    snaps = getattr(run, "snapshots", None) or {}
    for label, graph in snaps.items():
        try:
            out.append((str(label), ir.as_graph(graph)))
        except TypeError:
            continue
    final = getattr(run, "graph", None)
    if final is not None:
        out.append(("final", ir.as_graph(final)))
    return out
