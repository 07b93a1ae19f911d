"""The workbench's hierarchy levels: which level of which snapshot is drawn, expanding and collapsing groups, and
the counts shown on group boxes.

Part of :class:`gebench.viz.Workbench` (a mixin; the widget declares the ``levels`` and ``group_counts``
traits). A graph above the workbench's ``threshold`` opens on the root level of its hierarchy
(:mod:`._hierarchy`); :meth:`LevelsMixin.open_level` draws another level, each laid out alone and cached by the
layout cache (a level drawn again costs no layout). Hierarchies are derived once per graph, O(n + e) bulk work
with each distinct node name parsed once per workbench (a snapshot mostly reuses its final graph's names).
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from gebench import ir

from ._dot import GraphView
from ._hierarchy import Hierarchy, derive_hierarchy

__all__ = ["LevelsMixin"]

_log = logging.getLogger(__name__)


class LevelsMixin:
    """Hierarchy levels for :class:`~gebench.viz.Workbench` (see the module docstring)."""

    #: the most items (child groups plus own nodes) one level of the hierarchy holds
    max_level_items: int = 64
    _level: int = 0
    _hierarchies: dict[int, tuple[ir.Graph, Hierarchy]]
    #: the node names' group paths for every graph of this workbench (``cache`` of :func:`derive_hierarchy`)
    _name_paths: dict[str, dict[str, tuple[str, ...] | None]] | None = None
    _count_cache: tuple[Any, dict[Any, dict[str, dict[str, int]]]] | None = None
    #: groups of the current level expanded in place, and the (graph id, level) they belong to
    _expanded: tuple[int, ...] = ()
    _expanded_at: tuple[int, int] = (-1, -1)

    # provided by the widget
    _graphs: Any
    _view: GraphView | None
    snapshot: str
    levels: list
    group_counts: dict
    status_text: str

    def hierarchy(self, label: str | None = None) -> Hierarchy:
        """The hierarchy of snapshot ``label`` (default: the one drawn), derived on first use and kept.

        Raises:
            KeyError: no such snapshot.
        """
        graph = self._graphs[label or self.snapshot]
        return self._hierarchy_of(graph)

    def _hierarchy_of(self, graph: ir.Graph) -> Hierarchy:
        if not hasattr(self, "_hierarchies") or self._hierarchies is None:
            self._hierarchies = {}
        hit = self._hierarchies.get(id(graph))
        if hit is not None and hit[0] is graph:
            return hit[1]
        if getattr(self, "_name_paths", None) is None:
            self._name_paths = {}
        # the snapshots of a run share most node names with its final graph: a name's group path is parsed once
        h = derive_hierarchy(graph, max_children=self.max_level_items, cache=self._name_paths)
        self._hierarchies[id(graph)] = (graph, h)
        _log.debug("hierarchy of %s: %d groups (%s)", graph.name, len(h), h.mode)
        return h

    def _level_view(self, graph: ir.Graph, level: int | None = None) -> GraphView:
        """The view of one level (default: the current one, or the root when the current one does not exist in
        this graph's hierarchy); sets the ``levels`` breadcrumb."""
        h = self._hierarchy_of(graph)
        level = self._level if level is None else level
        if not 0 <= level < len(h.groups):
            level = 0
        self._level = level
        self.levels = h.breadcrumb(level)
        if self._expanded_at != (id(graph), level):
            self._expanded, self._expanded_at = (), (id(graph), level)
        return h.level_view(level, expanded=self._expanded)

    def _levels_beside(self, graph: ir.Graph) -> None:
        """``levels`` for a drawing that is not a level (a focused view): the breadcrumb of the current level when
        ``graph``'s hierarchy exists (so a click goes back to it), else empty. O(depth)."""
        hit = (getattr(self, "_hierarchies", None) or {}).get(id(graph))
        if hit is None or hit[0] is not graph:
            levels: list = []
        else:
            h = hit[1]
            levels = h.breadcrumb(self._level if 0 <= self._level < len(h.groups) else 0)
        if levels != self.levels:
            self.levels = levels

    def open_level(self, group: int) -> None:
        """Draw the level of group ``group`` of the drawn snapshot's hierarchy (0: the root). The level's layout
        is cached: drawing it again costs no layout.

        Raises:
            LookupError: nothing drawn yet, or no such group.
        """
        label = self.snapshot
        if not label or label not in self._graphs:
            raise LookupError("nothing is drawn yet")
        h = self.hierarchy(label)
        if not 0 <= group < len(h.groups):
            raise LookupError(f"no group {group}; the hierarchy of {label} has {len(h.groups)} groups")
        self._level = group
        self._expanded = ()
        self._draw_level(label)  # type: ignore[attr-defined]
        g = h.groups[group]
        self.status_text = (
            f"{g.label if group else 'model'}: {g.size} nodes, {len(g.children)} groups, "
            f"{len(g.nodes)} nodes of its own"
        )

    def expand_group(self, group: int) -> None:
        """Expand the box of group ``group`` in place: the drawn level is laid out again with the group as a frame
        holding its own boxes and ops (Model Explorer's expand; :meth:`open_level` draws a group as a level of
        its own instead). The layout of each set of expanded groups is cached.

        Raises:
            LookupError: no level is drawn, or ``group`` is not a box of it.
        """
        view, label = self._drawn_level()
        if group in view.clusters:
            return
        if group not in view.groups:
            raise LookupError(f"group {group} is not drawn in this level; its groups: {sorted(view.groups)}")
        self._expanded = (*view.expanded, group)
        self._draw_level(label)  # type: ignore[attr-defined]
        g = self.hierarchy(label).groups[group]
        self.status_text = f"expanded {g.label}: {g.size} nodes, {len(g.children)} groups, {len(g.nodes)} nodes of its own"

    def reveal_node(self, node: int) -> None:
        """Draw the current level (the root when ``node`` is not under it) with every group on the way down to
        node id ``node`` expanded in place, so the node itself is drawn inside nested frames: from a focused view
        (a selected node or candidate), where the node sits in the model. The node stays selected.

        Raises:
            LookupError: nothing is drawn, the drawn graph is small enough to be drawn whole (it has no levels),
                or it has no node ``node``.
        """
        label = self.snapshot
        if not label or label not in self._graphs:
            raise LookupError("nothing is drawn yet")
        graph = self._graphs[label]
        if len(graph) <= self.threshold:  # type: ignore[attr-defined]
            raise LookupError(f"{label} is drawn whole ({len(graph)} nodes); it has no levels to expand")
        h = self._hierarchy_of(graph)
        gid = h.group_of.get(node)
        if gid is None:
            raise LookupError(f"no node #{node} in {label}")
        path = h.path(gid)
        level = self._level if self._level in path else 0
        self._level = level
        self._expanded, self._expanded_at = tuple(path[path.index(level) + 1:]), (id(graph), level)
        self._draw_level(label)  # type: ignore[attr-defined]
        self.status_text = (f"{graph.node(node).name} in the model: {len(self._expanded)} group"
                            f"{'' if len(self._expanded) == 1 else 's'} expanded")

    def collapse_group(self, group: int) -> None:
        """Collapse the frame of group ``group`` (expanded in place) back into a box, with every group expanded
        inside it; the level's layout for the remaining expansions comes from the cache when it was drawn before.

        Raises:
            LookupError: no level is drawn, or ``group`` is not expanded in it.
        """
        view, label = self._drawn_level()
        if group not in view.clusters:
            raise LookupError(f"group {group} is not expanded in this level; expanded: {list(view.expanded)}")
        inside = {group}
        for gid, (parent, _) in view.clusters.items():  # parents come before their children
            if parent in inside:
                inside.add(gid)
        self._expanded = tuple(g for g in view.expanded if g not in inside)
        self._draw_level(label)  # type: ignore[attr-defined]
        g = self.hierarchy(label).groups[group]
        self.status_text = f"collapsed {g.label}"

    def _drawn_level(self) -> tuple[GraphView, str]:
        view = self._view
        label = self.snapshot
        if view is None or not label or view.level is None:
            raise LookupError("no level of a hierarchy is drawn; call show_overview() first")
        return view, label

    def level_up(self) -> None:
        """Collapse the drawn level into its parent's (the breadcrumb's previous entry); at the root, or when
        the drawing is not a level (a focused view), draw the current level again.

        Raises:
            LookupError: nothing drawn yet.
        """
        view = self._view
        label = self.snapshot
        if view is None or not label:
            raise LookupError("nothing is drawn yet")
        if view.level is None:
            self.open_level(self._level)
            return
        parent = self.hierarchy(label).groups[view.level].parent
        self.open_level(max(parent, 0))

    def _update_group_counts(self, _change: Any = None) -> None:
        """``group_counts``: for each group box drawn, the selected pass's candidates (counted at their first
        target node) and replaced ones, and the nodes the current diff marks. Cached per pass for the drawing shown;
        O(candidates of the pass * depth) when not cached."""
        view = self._view
        if view is None or view.level is None:
            if self.group_counts:
                self.group_counts = {}
            return
        graph = self._view_graph  # type: ignore[attr-defined]
        h = self._hierarchy_of(graph)
        name = getattr(self, "selected_pass", "")
        key = (name, id(view), id(getattr(self, "_table", None)))
        if self._count_cache is None or self._count_cache[0] is not view:
            self._count_cache = (view, {})  # per drawing: pass -> counts
        cached = self._count_cache[1].get(key)
        if cached is not None:
            counts = {el: dict(c) for el, c in cached.items()}
        else:
            counts = {}
            if name:
                cand: Counter[str] = Counter()
                repl: Counter[str] = Counter()
                boxes = h.group_boxes(view.level, view.expanded)
                group_of = h.group_of
                for row in self.pass_rows(name):  # type: ignore[attr-defined]
                    if row.status == "LINT" or not row.target_ids:
                        continue
                    gid = group_of.get(row.target_ids[0])
                    el = boxes[gid] if gid is not None else None
                    if el is None:
                        continue
                    cand[el] += 1
                    if row.status == "REPLACED":
                        repl[el] += 1
                for el, c in cand.items():
                    counts[el] = {"candidates": c, "replaced": repl.get(el, 0)}
            self._count_cache[1][key] = {el: dict(c) for el, c in counts.items()}
        sticky = getattr(self, "_sticky", {}) or {}
        diff = Counter()
        boxes = h.group_boxes(view.level, view.expanded) if sticky else []
        for nid, cls in sticky.items():
            if str(cls).startswith("gb_diff"):
                gid = h.group_of.get(nid)
                el = boxes[gid] if gid is not None else None
                if el is not None:
                    diff[el] += 1
        for el, d in diff.items():
            counts.setdefault(el, {"candidates": 0, "replaced": 0})["diff"] = d
        if counts != self.group_counts:
            self.group_counts = counts
