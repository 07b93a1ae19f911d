"""Per-pass and per-pattern time and counts of a run.

The runtime calls :meth:`RunTimings.pass_started` / :meth:`RunTimings.pass_finished` once per pass per graph and
:meth:`RunTimings.pattern_started` / :meth:`RunTimings.pattern_counts` once per pattern, so the cost is two clock
reads (wall and CPU) per pass and per pattern, nothing per candidate. Counts by verdict come from the ledger when
the report is built (:meth:`RunTimings.to_dict`, O(records)).

Times are inclusive: a pattern's time covers its matching, its hook calls (``meet_requirements``,
``replacement``) and its rewrites; a pass's time covers all its patterns plus its ``patterns()`` call (the pass's
creation, once per stage, is not included). CPU time is the process's (:func:`time.process_time`), so it includes
other threads of the process.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable
from typing import Any

__all__ = ["PassTiming", "PatternTiming", "RunTimings"]


@dataclasses.dataclass(slots=True)
class PatternTiming:
    """One pattern (or a DecomposePass's op-type list) of one pass, summed over the graphs it ran on.

    ``anchors``: target nodes of the pattern's output op type when its matching started (the candidates the
    matcher visits); ``matches``: full structural matches handed to ``meet_requirements``; ``rewrites``: matches
    rewritten. The three are counted by the runtime, so they are right even for runs without a ledger.
    """

    pattern_name: str
    wall_s: float = 0.0
    cpu_s: float = 0.0
    anchors: int = 0
    matches: int = 0
    rewrites: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


@dataclasses.dataclass(slots=True)
class PassTiming:
    """One pass in one stage, summed over the graphs (root and subgraphs) it ran on."""

    pass_name: str
    stage: str
    wall_s: float = 0.0
    cpu_s: float = 0.0
    graphs: int = 0
    patterns: dict[str, PatternTiming] = dataclasses.field(default_factory=dict)


class RunTimings:
    """Clock readings of one run, keyed by (stage, pass name) in the order passes ran.

    Invariant: at most one pass and one pattern are open at a time (the runtime runs passes one after another);
    starting a pattern closes the open one, finishing a pass closes its open pattern.
    """

    __slots__ = ("passes", "_pass", "_pass_t", "_pattern", "_pattern_t")

    def __init__(self) -> None:
        self.passes: dict[tuple[str, str], PassTiming] = {}
        self._pass: PassTiming | None = None
        self._pass_t = (0.0, 0.0)
        self._pattern: PatternTiming | None = None
        self._pattern_t = (0.0, 0.0)

    # ------------------------------------------------------------------ runtime side
    def pass_started(self, pass_name: str, stage: str) -> None:
        """A pass starts on one graph. O(1)."""
        key = (stage, pass_name)
        entry = self.passes.get(key)
        if entry is None:
            entry = self.passes[key] = PassTiming(pass_name, stage)
        entry.graphs += 1
        self._pass = entry
        self._pass_t = (time.perf_counter(), time.process_time())

    def pattern_started(self, pattern_name: str) -> None:
        """The open pass starts a pattern (closes the previous one). O(1); ignored outside a pass."""
        self._close_pattern()
        if self._pass is None:
            return
        entry = self._pass.patterns.get(pattern_name)
        if entry is None:
            entry = self._pass.patterns[pattern_name] = PatternTiming(pattern_name)
        self._pattern = entry
        self._pattern_t = (time.perf_counter(), time.process_time())

    def pattern_counts(self, anchors: int, matches: int, rewrites: int) -> None:
        """Add the open pattern's counts (ignored when no pattern is open)."""
        entry = self._pattern
        if entry is not None:
            entry.anchors += anchors
            entry.matches += matches
            entry.rewrites += rewrites

    def pass_finished(self) -> None:
        """The open pass ends on its graph (whatever its status). O(1)."""
        self._close_pattern()
        entry = self._pass
        if entry is None:
            return
        wall, cpu = self._pass_t
        entry.wall_s += time.perf_counter() - wall
        entry.cpu_s += time.process_time() - cpu
        self._pass = None

    def _close_pattern(self) -> None:
        entry = self._pattern
        if entry is None:
            return
        wall, cpu = self._pattern_t
        entry.wall_s += time.perf_counter() - wall
        entry.cpu_s += time.process_time() - cpu
        self._pattern = None

    # ------------------------------------------------------------------ reading
    def to_dict(self, records: Iterable[Any] = ()) -> list[dict[str, Any]]:
        """One entry per (stage, pass), in run order: ``pass_name``, ``stage``, ``wall_s``, ``cpu_s``, ``graphs``,
        ``candidates`` / ``replaced`` / ``rejected`` (status -> count) / ``lints`` from ``records`` (the ledger),
        and ``patterns``: per pattern the same times and counts plus ``anchors``, ``matches``, ``rewrites``.

        A pattern seen only in the ledger (a lint before its matching started, say) gets zero times. Cost:
        O(records + passes + patterns).
        """
        counts: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
        for r in records:
            by_pattern = counts.setdefault((r.stage, r.pass_name), {})
            c = by_pattern.get(r.pattern_name)
            if c is None:
                c = by_pattern[r.pattern_name] = {"candidates": 0, "replaced": 0, "rejected": {}, "lints": 0}
            status = getattr(r.status, "value", str(r.status))
            if status == "LINT":
                c["lints"] += 1
                continue
            c["candidates"] += 1
            if status == "REPLACED":
                c["replaced"] += 1
            else:
                c["rejected"][status] = c["rejected"].get(status, 0) + 1
        out = []
        for key, entry in self.passes.items():
            by_pattern = counts.get(key, {})
            patterns = []
            names = list(entry.patterns) + [n for n in by_pattern if n and n not in entry.patterns]
            for name in names:
                timing = entry.patterns.get(name) or PatternTiming(name)
                patterns.append({**timing.to_dict(), **_counts(by_pattern.get(name))})
            total = _counts(None)
            for c in by_pattern.values():
                total["candidates"] += c["candidates"]
                total["replaced"] += c["replaced"]
                total["lints"] += c["lints"]
                for status, n in c["rejected"].items():
                    total["rejected"][status] = total["rejected"].get(status, 0) + n
            out.append({"pass_name": entry.pass_name, "stage": entry.stage, "wall_s": entry.wall_s,
                        "cpu_s": entry.cpu_s, "graphs": entry.graphs, **total, "patterns": patterns})
        return out


def _counts(c: dict[str, Any] | None) -> dict[str, Any]:
    if c is None:
        return {"candidates": 0, "replaced": 0, "rejected": {}, "lints": 0}
    return {"candidates": c["candidates"], "replaced": c["replaced"], "rejected": dict(c["rejected"]),
            "lints": c["lints"]}
