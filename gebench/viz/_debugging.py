"""The workbench's debugging views: per-pass and per-pattern times in the pass list, provenance across the panes
of a before/after diff, and stepping through one pass's rewrites.

Part of :class:`gebench.viz.Workbench` (a mixin; the widget declares the ``provenance`` and ``rewrite_step``
traits). Everything here reads the run's ledger (``REPLACED`` records: the nodes each rewrite replaced and the ids
of the nodes it added), ``Run.timing()``, ``Run.provenance()`` and ``Run.graph_after_rewrite()``; nothing
mutates a graph.

* :func:`with_timings` adds ``Run.timing()``'s figures to the pass list (``stages``). O(passes + patterns).
* :meth:`DebuggingMixin.provenance_maps` maps the nodes of a later snapshot that passes made to the nodes of an
  earlier snapshot they were made from, and the reverse. O(rewrites + steps walked back).
* :meth:`DebuggingMixin.step_rewrite` draws the graph after rewrite ``k`` of the selected pass: one replay (one
  compile of the input) per ``k`` not seen before; the graphs are kept (at most :data:`STEP_CACHE` per run).
  Above the workbench's ``threshold`` only the neighbourhood of rewrite ``k`` is drawn.
"""

from __future__ import annotations

import html
import logging
from collections import OrderedDict
from typing import Any

from gebench import ir

from ._dot import GraphView, build_view, compress_svg
from ._source import CandidateRow

__all__ = ["DebuggingMixin", "STEP_CACHE", "with_timings"]

_log = logging.getLogger(__name__)

#: graphs after a rewrite kept per run (each one cost a replay)
STEP_CACHE = 32

#: classes this module adds to highlight maps (taken off again before new marks are set)
_PROV_CLASSES = ("gb_prov_origin", "gb_prov_made", "gb_clicked")
_STEP_CLASSES = ("gb_step_new", "gb_step_next")


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


def with_timings(stages: list[dict[str, Any]], timing: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``stages`` (the pass list, :func:`._source.pass_summaries`) with each pass's ``Run.timing()`` entry as
    ``p["time"]``: ``wall_ms``, ``cpu_ms``, ``graphs``, ``anchors``, ``matches``, ``rewrites`` and ``patterns``
    (per pattern: ``name``, the same times and counts, ``candidates``, ``replaced``, ``rejected``, ``lints``).

    A pass matches its entry by (stage, name), else by name alone; a pass without one (it never ran) gets no
    ``time``. The input is not changed. O(passes + patterns).
    """
    by_key = {(t.get("stage"), t.get("pass_name")): t for t in timing}
    by_name: dict[str, dict[str, Any]] = {}
    for t in timing:
        by_name.setdefault(str(t.get("pass_name")), t)
    out = []
    for group in stages:
        passes = []
        for p in group["passes"]:
            t = by_key.get((group["stage"], p["name"])) or by_name.get(p["name"])
            if t is None:
                passes.append(dict(p))
                continue
            patterns = [
                {
                    "name": q["pattern_name"],
                    "wall_ms": _ms(q["wall_s"]),
                    "cpu_ms": _ms(q["cpu_s"]),
                    "anchors": q["anchors"],
                    "matches": q["matches"],
                    "rewrites": q["rewrites"],
                    "candidates": q["candidates"],
                    "replaced": q["replaced"],
                    "rejected": dict(q["rejected"]),
                    "lints": q["lints"],
                }
                for q in t.get("patterns", [])
            ]
            passes.append(
                {
                    **p,
                    "time": {
                        "wall_ms": _ms(t["wall_s"]),
                        "cpu_ms": _ms(t["cpu_s"]),
                        "graphs": t["graphs"],
                        "anchors": sum(q["anchors"] for q in patterns),
                        "matches": sum(q["matches"] for q in patterns),
                        "rewrites": sum(q["rewrites"] for q in patterns),
                        "patterns": patterns,
                    },
                }
            )
        out.append({**group, "passes": passes})
    return out


def _strip(classes: str, drop: tuple[str, ...]) -> str:
    return " ".join(c for c in classes.split() if c not in drop)


class DebuggingMixin:
    """Provenance marks and rewrite stepping for :class:`~gebench.viz.Workbench` (see the module docstring)."""

    _step_cache: tuple[Any, OrderedDict[tuple[str, int], ir.Graph]] | None = None
    _step_on = False
    _step_status = ""

    # provided by the widget
    run: Any
    threshold: int
    hops: int
    max_focus_nodes: int
    _rows: list[CandidateRow]
    _table: Any  # the CandidateTable over _rows
    _graphs: Any
    _view: GraphView | None
    _view_graph: ir.Graph | None
    _view_svg: str
    _side_graph: ir.Graph | None
    _sticky: dict[int, str]
    _details_for: tuple[str, int] | None
    snapshot: str
    selected_pass: str
    diff_mode: str
    diff_info: dict
    side_kind: str
    side_highlight: dict
    details_html: str
    pane_title: str
    svg_gz: bytes
    view_info: dict
    levels: list
    provenance: dict
    rewrite_step: dict
    status_text: str
    _node_html: Any
    _refresh_highlight: Any
    _draw: Any
    _layout: Any
    _make_view: Any
    _progress: Any
    _pass_seeds: Any
    select_pass: Any
    hold_sync: Any

    # ------------------------------------------------------------------------------------------ provenance
    def _added_by(self) -> dict[int, CandidateRow]:
        """``node id -> the REPLACED row that added it`` (cached per row list). O(rewrites) when built."""
        cached = getattr(self, "_added_cache", None)
        if cached is not None and cached[0] is self._rows:
            return cached[1]
        index = {nid: r for r in self._rows if r.status == "REPLACED" for nid in r.added_ids}
        self._added_cache = (self._rows, index)
        return index

    def provenance_maps(
        self, before: str | ir.Graph, after: str | ir.Graph
    ) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
        """Which nodes of ``after`` passes made from which nodes of ``before`` (snapshot labels or graphs).

        Returns ``(made_from, made_into)``: ``made_from[a]`` lists the ``before`` node ids that node ``a`` of
        ``after`` (a node not in ``before``) was made from, following the rewrites back through nodes made in
        between; ``made_into`` is the reverse (``before`` id -> ``after`` ids). Nodes of the root graph only
        (the rows do not say which subgraph a rewrite was in). O(rewrites + steps walked back).
        """
        b = self._graphs[before] if isinstance(before, str) else before
        a = self._graphs[after] if isinstance(after, str) else after
        added = self._added_by()
        key = (b, a, added)  # compared by identity: snapshots and rows are never mutated
        cached = getattr(self, "_maps_cache", None)
        if cached is not None and all(x is y for x, y in zip(cached[0], key, strict=True)):
            return cached[1]
        made_from: dict[int, list[int]] = {}
        made_into: dict[int, list[int]] = {}
        for nid in added:
            if not a.has_node_id(nid) or b.has_node_id(nid):
                continue
            origins: list[int] = []
            seen: set[int] = set()
            stack = [nid]
            while stack:  # back through the rewrites until nodes of `before`
                cur = stack.pop()
                if cur in seen:
                    continue
                seen.add(cur)
                if cur != nid and b.has_node_id(cur):
                    origins.append(cur)
                    continue
                row = added.get(cur)
                if row is not None:
                    stack.extend(reversed(row.target_ids))
            if origins:
                made_from[nid] = sorted(origins)
                for o in origins:
                    made_into.setdefault(o, []).append(nid)
        for v in made_into.values():
            v.sort()
        self._maps_cache = (key, (made_from, made_into))
        return made_from, made_into

    def _node_provenance(self, graph: ir.Graph, node: ir.Node) -> dict[str, Any] | None:
        """Which passes made ``node`` and from which nodes of the input graph: ``Run.provenance`` for a node of
        the run's final graph, else the ledger's rewrites walked back. None for a node no pass made."""
        added = self._added_by()
        final = getattr(self.run, "ir_graph", None) if self.run is not None else None
        if final is not None and final.has_node_id(node.id) and final.node(node.id).name == node.name:
            try:
                prov = self.run.provenance(node.id)
            except (KeyError, AttributeError):
                prov = None
            if prov is not None:
                if not prov.created_by_pass:
                    return None
                return {
                    "passes": list(prov.passes),
                    "original_nodes": list(prov.original_nodes),
                    "original_op_names": list(prov.original_op_names),
                    "steps": [
                        {
                            "pass": s.pass_name,
                            "stage": s.stage,
                            "pattern": s.pattern_name,
                            "replaced": list(s.replaced),
                        }
                        for s in prov.steps
                    ],
                }
        if node.id not in added:
            return None
        steps: list[CandidateRow] = []
        originals: list[str] = []
        seen: set[int] = set()
        stack: list[tuple[int, str]] = [(node.id, node.name)]
        while stack:
            nid, name = stack.pop()
            if nid in seen:
                continue
            seen.add(nid)
            row = added.get(nid)
            if row is None:
                originals.append(name)
                continue
            if row not in steps:
                steps.append(row)
            stack.extend(reversed(list(zip(row.target_ids, row.target_names, strict=False))))
        steps.sort(key=lambda r: r.index)
        return {
            "passes": [r.pass_name for r in steps],
            "original_nodes": originals,
            "original_op_names": [],
            "steps": [
                {
                    "pass": r.pass_name,
                    "stage": r.stage,
                    "pattern": r.pattern_name,
                    "replaced": list(r.target_names),
                }
                for r in steps
            ],
        }

    def _provenance_html(self, prov: dict[str, Any] | None) -> str:
        if not prov:
            return ""
        e = html.escape
        parts = [
            "<div class='gb-prov'><b>made by</b> ",
            " &rarr; ".join(f"<code>{e(p)}</code>" for p in prov["passes"]) or "a pass",
            "<br><b>from</b> ",
            ", ".join(f"<code>{e(n)}</code>" for n in prov["original_nodes"]) or "(none)",
        ]
        if prov.get("original_op_names") and prov["original_op_names"] != prov["original_nodes"]:
            parts.append("<br><b>original op names</b> " + ", ".join(e(n) for n in prov["original_op_names"]))
        if prov["steps"]:
            parts.append("<ol class='gb-prov-steps'>")
            for s in prov["steps"]:
                where = f" [{e(s['pattern'])}]" if s["pattern"] else ""
                parts.append(
                    f"<li>{e(s['stage'])} / {e(s['pass'])}{where}: replaced {e(', '.join(s['replaced']))}</li>"
                )
            parts.append("</ol>")
        parts.append("</div>")
        return "".join(parts)

    def _diff_panes(self) -> tuple[str, str] | None:
        """The snapshots of the side-by-side diff on screen, or None."""
        info = self.diff_info or {}
        if self.side_kind != "diff" or info.get("layout") != "side" or self._side_graph is None:
            return None
        before, after = info.get("before"), info.get("after")
        if before not in self._graphs or after not in self._graphs:
            return None
        return before, after

    def _set_side_marks(self, marks: dict[int, str]) -> None:
        """Replace this module's classes in ``side_highlight`` by ``marks`` (node id -> class)."""
        side = {el: _strip(cls, _PROV_CLASSES) for el, cls in (self.side_highlight or {}).items()}
        for nid, cls in marks.items():
            el = f"n{nid}"  # the element id of a drawn node (a folded Const has none: not marked)
            side[el] = (side.get(el, "") + " " + cls).strip()
        self.side_highlight = {el: cls for el, cls in side.items() if cls}

    def _clear_provenance_marks(self) -> bool:
        """Take the provenance marks off the main pane's sticky marks; True when there were some."""
        kept = {n: c for n, c in self._sticky.items() if c not in _PROV_CLASSES}
        had = len(kept) != len(self._sticky)
        self._sticky = kept
        if self.provenance:
            self.provenance = {}
        return had

    def _mark_provenance(self, nid: int) -> None:
        """After node ``nid`` of the main pane was selected: in a side-by-side diff, mark on the "after" pane the
        nodes made from it (``gb_prov_made``); record what was found in ``provenance``."""
        if self._clear_provenance_marks():
            self._refresh_highlight()
        panes = self._diff_panes()
        graph = self._view_graph
        info: dict[str, Any] = {"pane": "main", "node": nid, "made_ids": [], "origin_ids": []}
        if graph is not None and graph.has_node_id(nid):
            prov = self._node_provenance(graph, graph.node(nid))
            if prov:
                info.update({"passes": prov["passes"], "original_nodes": prov["original_nodes"]})
        if panes is not None:
            _, made_into = self.provenance_maps(*panes)
            made = made_into.get(nid, [])
            info["made_ids"] = made
            self._set_side_marks({m: "gb_prov_made" for m in made})
        self.provenance = info

    def select_side_node(self, node: int | str) -> dict[str, Any]:
        """Select node ``node`` (id or name) of the "after" pane of a side-by-side diff: its details (with which
        passes made it from which original nodes) in the details panel, and the nodes of the "before" pane it was
        made from marked (``gb_prov_origin``). Returns :attr:`provenance`.

        Raises:
            LookupError: no side-by-side diff is shown, or its "after" graph has no such node.
        """
        panes = self._diff_panes()
        graph = self._side_graph
        if panes is None or graph is None:
            raise LookupError("no side-by-side diff is shown (wb.show_diff(kind, 'side') first)")
        found = (
            graph.node(node)
            if isinstance(node, int) and graph.has_node_id(node)
            else (graph.find(node) if isinstance(node, str) else None)
        )
        if found is None:
            raise LookupError(f"no node {node!r} in the 'after' pane ({panes[1]})")
        made_from, _ = self.provenance_maps(*panes)
        origins = made_from.get(found.id, [])
        self._clear_provenance_marks()
        self._sticky.update({o: "gb_prov_origin" for o in origins})
        self._set_side_marks({found.id: "gb_clicked"})
        prov = self._node_provenance(graph, found)
        self._details_for = ("side", found.id)
        self.details_html = (
            f"<div class='gb-pane-note'>after: {html.escape(panes[1])}</div>" + self._node_html(graph, found)
        )
        self.provenance = {
            "pane": "side",
            "node": found.id,
            "origin_ids": origins,
            "made_ids": [],
            "passes": (prov or {}).get("passes", []),
            "original_nodes": (prov or {}).get("original_nodes", []),
        }
        self._refresh_highlight()
        return self.provenance

    # ------------------------------------------------------------------------------------------ rewrite steps
    def pass_rewrites(self, pass_name: str | None = None) -> list[CandidateRow]:
        """The rewrites (``REPLACED`` rows, in run order) of ``pass_name`` (default: the selected pass)."""
        name = pass_name or self.selected_pass
        return [self._rows[i] for i in self._table.rows_with_status(name, "REPLACED").tolist()]

    def _reset_rewrite_step(self, pass_name: str) -> None:
        """The slider for ``pass_name``'s rewrites, not stepping (``k`` -1). O(rows of the pass) numpy."""
        n = len(self._table.rows_with_status(pass_name, "REPLACED")) if pass_name else 0
        value = {"pass": pass_name, "n": n, "k": -1, "record": -1} if pass_name else {}
        if value != self.rewrite_step:
            self.rewrite_step = value

    def _leave_step_view(self) -> None:
        """Forget that a rewrite step is drawn (a snapshot is about to be drawn instead)."""
        if not self._step_on:
            return
        self._step_on = False
        self._sticky = {n: c for n, c in self._sticky.items() if c not in _STEP_CLASSES}
        if self.pane_title.startswith("rewrite "):
            self.pane_title = ""
        if self._step_status and self.status_text == self._step_status:
            self.status_text = ""
        if self.rewrite_step.get("k", -1) >= 0:
            self.rewrite_step = {**self.rewrite_step, "k": -1, "record": -1}

    def leave_rewrite_step(self) -> None:
        """Stop stepping: draw the snapshot again."""
        was = self._step_on
        self._leave_step_view()
        if was and self.snapshot in self._graphs:
            self._draw(self.snapshot, self._pass_seeds(self.selected_pass) if self.selected_pass else None)
            self._refresh_highlight()

    def graph_after_rewrite(self, pass_name: str, k: int) -> Any:
        """The graph after rewrite ``k`` of ``pass_name``, as a ``ge.graph.Graph`` view (``.ir``: its IR graph),
        like ``run.graph_after_rewrite(pass_name, k)`` but kept (see :meth:`ir_graph_after_rewrite`).

        Raises:
            LookupError: there is no run; and ``gebench.debug.ReplayError``.
        """
        from gebench.ge.graph import Graph

        return Graph._wrap(self.ir_graph_after_rewrite(pass_name, k), owns=False)

    def ir_graph_after_rewrite(self, pass_name: str, k: int) -> ir.Graph:
        """``run.ir_graph_after_rewrite(pass_name, k)``, kept: a ``(pass, k)`` seen before costs nothing, a new one a
        replay (one compile). At most :data:`STEP_CACHE` graphs are kept per run.

        Raises:
            LookupError: there is no run; and ``gebench.debug.ReplayError``.
        """
        if self.run is None:
            raise LookupError("no compile run to replay; open the workbench with passes=...")
        if self._step_cache is None or self._step_cache[0] is not self.run:
            self._step_cache = (self.run, OrderedDict())
        cache = self._step_cache[1]
        key = (pass_name, k)
        graph = cache.get(key)
        if graph is None:
            with self._progress(f"replaying up to rewrite {k} of {pass_name}"):
                graph = self.run.ir_graph_after_rewrite(pass_name, k)
            cache[key] = graph
            while len(cache) > STEP_CACHE:
                cache.popitem(last=False)
        else:
            cache.move_to_end(key)
        return graph

    def step_rewrite(self, k: int, pass_name: str | None = None) -> Any:
        """Draw the graph after rewrite ``k`` (0: before the first) of ``pass_name`` (default: the selected pass;
        another one is selected first). Rewrite ``k``'s new nodes are marked ``gb_step_new``, the nodes rewrite
        ``k + 1`` will replace ``gb_step_next``; above ``threshold`` nodes only their neighbourhood is drawn.
        Returns the graph as a ``ge.graph.Graph`` view (``.ir``: its IR graph), as :attr:`graph` gives it.

        Raises:
            ValueError: no pass selected or given; IndexError: ``k`` is not in ``0..n`` (``n`` rewrites).
        """
        name = pass_name or self.selected_pass
        if not name:
            raise ValueError("select a pass first (stepping goes through one pass's rewrites)")
        if name != self.selected_pass:
            self.select_pass(name)
        rewrites = self.pass_rewrites(name)
        if not 0 <= k <= len(rewrites):
            raise IndexError(f"pass {name!r} did {len(rewrites)} rewrites; k must be in 0..{len(rewrites)}")
        if self.diff_mode:
            self.diff_mode = ""  # a step is drawn alone, not in a diff
        graph = self.ir_graph_after_rewrite(name, k)
        new = [i for i in (rewrites[k - 1].added_ids if k else []) if graph.has_node_id(i)]
        nxt = [i for i in (rewrites[k].target_ids if k < len(rewrites) else []) if graph.has_node_id(i)]
        seeds = new + nxt or [i for i in (rewrites[k - 1].target_ids if k else []) if graph.has_node_id(i)]
        if len(graph) > self.threshold and seeds:
            from ._focus import k_hop

            view = build_view(
                graph, node_ids=k_hop(graph, seeds, k=self.hops, max_nodes=self.max_focus_nodes)
            )
        elif len(graph) > self.threshold:
            view = self._make_view(graph, None)
        else:
            view = build_view(graph)
        svg = self._layout(view)
        self._view, self._view_graph, self._view_svg = view, graph, svg
        self._step_on = True
        sticky = {n: c for n, c in self._sticky.items() if c not in _STEP_CLASSES and c not in _PROV_CLASSES}
        sticky.update({i: "gb_step_next" for i in nxt})
        sticky.update({i: "gb_step_new" for i in new})
        self._sticky = sticky
        n = len(rewrites)
        gz = compress_svg(svg)
        record = rewrites[k - 1].index if k else -1
        with self.hold_sync():
            self.svg_gz = gz
            self.view_info = {
                "snapshot": f"{name} after rewrite {k}/{n}",
                "drawn": len(view.nodes),
                "total": len(graph),
                "focused": view.focused,
                "overview": False,
                "bytes": len(gz),
                "level": None,
                "step": k,
            }
            if self.levels:
                self.levels = []
            self.pane_title = f"rewrite {k} of {n}: {name}" + ("" if k else " (before its first)")
            self.rewrite_step = {"pass": name, "n": n, "k": k, "record": record}
            self.status_text = self._step_status = (
                f"{name}: after rewrite {k} of {n}"
                + (f" (ledger #{record})" if k else "")
                + (f", {len(view.nodes)} of {len(graph)} nodes drawn" if view.focused else "")
            )
            self._refresh_highlight()
        return self.graph
