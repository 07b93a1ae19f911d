"""The candidate table behind the workbench: columnar, filtered and sorted in the kernel, paged to the browser.

The front end draws only the rows in sight (a virtualized table); it asks for pages of rows by position
in the current order. This module keeps the ledger rows as numpy columns so that switching to a pass with
100k candidates, filtering by status and sorting cost a few array operations, never a Python loop over the
candidates. Nothing here mutates a row or a graph.

Costs (n ledger rows, m rows of the selected pass, t target ids in all):

* :class:`CandidateTable` build: O(n + t) once per run (one Python pass over the rows, then numpy);
* :meth:`CandidateTable.order`: O(m log m) for a sort, O(m) for a filter (numpy);
* :meth:`CandidateTable.rows_with_status`: O(m) numpy (a pass's rewrites for the rewrite slider);
* :meth:`CandidateTable.page`: O(page size);
* :meth:`CandidateTable.pass_status`: O(t + t_pass) numpy the first time per pass (no sort), cached.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ._source import STATUS_CLASS, STATUS_PRECEDENCE, CandidateRow

__all__ = ["SORT_KEYS", "CandidateTable", "TableQuery"]

#: columns the table can be sorted by (``"i"``: ledger order)
SORT_KEYS = ("i", "status", "pattern", "reason", "targets", "verify")

#: at most this many rows in one page sent to the browser
MAX_PAGE = 500

#: target node ids sent per row in a page (the kernel's answer to a row click marks all of them)
PAGE_IDS = 32


class TableQuery:
    """What the table shows: a status filter (empty: all) and a sort key with its direction."""

    __slots__ = ("desc", "sort", "statuses")

    def __init__(self, statuses: Iterable[str] = (), sort: str = "i", desc: bool = False) -> None:
        if sort not in SORT_KEYS:
            raise ValueError(f"unknown sort key {sort!r}; one of {', '.join(SORT_KEYS)}")
        self.statuses = tuple(sorted({str(s) for s in statuses}))
        self.sort = sort
        self.desc = bool(desc)

    def to_json(self) -> dict[str, Any]:
        return {"statuses": list(self.statuses), "sort": self.sort, "desc": self.desc}


class _Interner:
    def __init__(self) -> None:
        self.codes: dict[str, int] = {}
        self.values: list[str] = []

    def __call__(self, value: str) -> int:
        code = self.codes.get(value)
        if code is None:
            code = self.codes[value] = len(self.values)
            self.values.append(value)
        return code

    def rank(self) -> np.ndarray:
        """code -> rank of its string in sorted order (for sorting by the string)."""
        order = sorted(range(len(self.values)), key=self.values.__getitem__)
        rank = np.empty(len(self.values), dtype=np.int64)
        rank[order] = np.arange(len(self.values))
        return rank


class CandidateTable:
    """Numpy columns over the ledger rows of one run, with per-pass row lists.

    Invariants: ``rows[i].index == i``; :meth:`rows_of` lists a pass's rows in ledger order; the status
    rank of a row is its position in :data:`STATUS_PRECEDENCE` (unknown statuses after all known ones).
    """

    def __init__(self, rows: Sequence[CandidateRow]) -> None:
        self.rows = list(rows)
        passes, patterns, reasons, statuses = _Interner(), _Interner(), _Interner(), _Interner()
        n = len(self.rows)
        pass_of = np.empty(n, dtype=np.int64)
        pattern = np.empty(n, dtype=np.int64)
        reason = np.empty(n, dtype=np.int64)
        status = np.empty(n, dtype=np.int64)
        ntargets = np.empty(n, dtype=np.int64)
        verify = np.full(n, np.nan)
        tgt_nodes: list[int] = []
        for i, r in enumerate(self.rows):
            pass_of[i] = passes(r.pass_name)
            pattern[i] = patterns(r.pattern_name)
            reason[i] = reasons(r.reason)
            status[i] = statuses(r.status)
            ntargets[i] = len(r.target_ids)
            tgt_nodes.extend(r.target_ids)
            if r.max_abs_error is not None:
                verify[i] = float(r.max_abs_error)
        self.status_names = statuses.values
        known = {s: k for k, s in enumerate(STATUS_PRECEDENCE)}
        status_rank = np.array([known.get(s, len(known)) for s in statuses.values], dtype=np.int64)
        self._status = status
        self._rank = status_rank[status] if n else np.empty(0, dtype=np.int64)
        self._keys = {
            "i": np.arange(n),
            "status": self._rank,
            "pattern": patterns.rank()[pattern] if n else pattern,
            "reason": reasons.rank()[reason] if n else reason,
            "targets": ntargets,
            "verify": verify,
        }
        self._tgt_node = np.asarray(tgt_nodes, dtype=np.int64)
        self._tgt_row = np.repeat(np.arange(n), ntargets)
        # rows of each pass, in ledger order (a stable sort keeps ledger order within a pass)
        by_pass = np.argsort(pass_of, kind="stable")
        bounds = np.searchsorted(pass_of[by_pass], np.arange(len(passes.values) + 1))
        self._by_pass = {name: by_pass[bounds[k]:bounds[k + 1]] for k, name in enumerate(passes.values)}
        self._pass_status: dict[str, dict[int, str]] = {}

    def __len__(self) -> int:
        return len(self.rows)

    def rows_of(self, pass_name: str) -> np.ndarray:
        """Row indices of ``pass_name`` in ledger order (empty for an unknown pass). O(1)."""
        return self._by_pass.get(pass_name, np.empty(0, dtype=np.int64))

    def counts(self, pass_name: str) -> dict[str, int]:
        """Rows of the pass per status name (in the order statuses first occur in the ledger). O(m) numpy."""
        idx = self.rows_of(pass_name)
        if not len(idx):
            return {}
        counts = np.bincount(self._status[idx], minlength=len(self.status_names))
        return {self.status_names[c]: int(k) for c, k in enumerate(counts.tolist()) if k}

    def rows_with_status(self, pass_name: str, status: str) -> np.ndarray:
        """Row indices of ``pass_name`` whose status is ``status``, in ledger order. O(m) numpy, no Python loop."""
        idx = self.rows_of(pass_name)
        try:
            code = self.status_names.index(status)
        except ValueError:
            return idx[:0]
        return idx[self._status[idx] == code]

    def order(self, pass_name: str, query: TableQuery) -> np.ndarray:
        """Row indices of the pass that pass the status filter, in the query's order (ties: ledger order)."""
        idx = self.rows_of(pass_name)
        if query.statuses and len(idx):
            wanted = [k for k, s in enumerate(self.status_names) if s in query.statuses]
            idx = idx[np.isin(self._status[idx], wanted)]
        if query.sort != "i" and len(idx):
            key = self._keys[query.sort][idx]
            if query.sort == "verify":
                key = np.where(np.isnan(key), -np.inf, key)  # rows without a check sort first
            idx = idx[np.lexsort((idx, -key if query.desc else key))]
        elif query.desc:
            idx = idx[::-1]
        return idx

    def page(self, order: np.ndarray, offset: int, limit: int) -> dict[str, Any]:
        """Rows ``order[offset:offset + limit]`` as columns (lists of equal length) for the front end.

        Columns: ``i`` (ledger index), ``status`` (name), ``pattern``, ``targets`` (first 8 names),
        ``ntargets``, ``ids`` (first :data:`PAGE_IDS` target node ids: a row click marks them on the drawing
        before the kernel answers), ``reason``, ``captures``, ``meet``, ``exception``, ``pattern_src``,
        ``hook_src``, ``verify`` (``{"abs", "rel", "ok"}`` or None). O(limit).
        """
        offset = max(0, int(offset))
        limit = max(0, min(int(limit), MAX_PAGE))
        cols: dict[str, list[Any]] = {k: [] for k in ("i", "status", "pattern", "targets", "ntargets", "ids", "reason",
                                                      "captures", "meet", "exception", "pattern_src",
                                                      "hook_src", "verify")}
        for i in order[offset:offset + limit].tolist():
            r = self.rows[i]
            row = r.to_row()
            row["i"], row["ids"] = i, r.target_ids[:PAGE_IDS]
            for k in cols:
                cols[k].append(row[k])
        return {"offset": offset, **cols}

    def pass_status(self, pass_name: str) -> dict[int, str]:
        """node id -> CSS class of the status colouring it for the pass (the earliest status in
        :data:`STATUS_PRECEDENCE` among the pass's candidates on that node). Cached per pass."""
        cached = self._pass_status.get(pass_name)
        if cached is not None:
            return cached
        rows = self.rows_of(pass_name)
        out: dict[int, str] = {}
        if len(rows) and len(self._tgt_node):
            of_pass = np.zeros(len(self.rows), dtype=bool)
            of_pass[rows] = True
            mask = of_pass[self._tgt_row] & (self._tgt_node >= 0)  # (a negative id is no drawn node)
            nodes, row_of = self._tgt_node[mask], self._tgt_row[mask]
            if len(nodes):
                # per node, the target of the lowest (rank, ledger index): the minimum of rank * n + row, O(t_pass)
                n = len(self.rows)
                none = np.iinfo(np.int64).max
                best = np.full(int(nodes.max()) + 1, none, dtype=np.int64)
                np.minimum.at(best, nodes, self._rank[row_of] * n + row_of)
                hit = np.flatnonzero(best != none)
                names = self.status_names
                classes = ["gb_st_" + STATUS_CLASS.get(s, "other") for s in names]
                out = dict(zip(hit.tolist(), (classes[c] for c in self._status[best[hit] % n].tolist())))
        self._pass_status[pass_name] = out
        return out

    def position(self, order: np.ndarray, index: int) -> int:
        """Position of ledger row ``index`` in ``order``, or -1. O(m) numpy."""
        hit = np.flatnonzero(order == index)
        return int(hit[0]) if len(hit) else -1
