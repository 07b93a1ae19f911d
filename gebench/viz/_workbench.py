"""``gebench.Workbench``: the interactive graph, pass and candidate browser for Jupyter.

The widget is an anywidget: the kernel side (this module) owns all state as traits and the browser side
(``static/workbench.js``, see :mod:`._frontend`) draws it. The Python side is fully usable (and tested) without a browser: setting
``selected_pass`` recomputes ``highlight`` and ``candidates``, setting ``selected_node`` fills
``details_html``, and so on.

Cost model: a layout (graphviz) happens only when the drawn node set changes and is cached per snapshot
and view; selecting a pass or a candidate only recomputes the ``highlight`` map (O(candidates)), which the
front end applies by adding CSS classes to existing SVG elements.
"""

from __future__ import annotations

import contextlib
import html
import json
import logging
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import anywidget
import numpy as np
import traitlets

from gebench import ir
from gebench._atomic import write_text_atomically
from gebench.fusion.stages import DUMP_SUFFIXES, PRE_RUN_SUFFIX, STAGE_ORDER

from ._debugging import DebuggingMixin, with_timings
from ._diff import GraphDiff, diff_graphs
from ._dot import GraphView, build_view, compress_svg, dtype_short, tensor_label, view_to_dot
from ._focus import find_nodes, k_hop
from ._frontend import CSS, CSS_PATH, ESM_PATH
from ._layout_cache import LayoutCache
from ._levels import LevelsMixin
from ._snapshots import LazyGraphs
from ._source import (
    CandidateRow,
    candidate_rows,
    pass_summaries,
)
from ._table import CandidateTable, TableQuery

__all__ = ["Workbench"]

_log = logging.getLogger(__name__)

_SHARED_CACHE = LayoutCache(capacity=128)

#: front-end requests answered without a layout or a run: their trait changes go out as one message
_QUICK_ACTIONS = frozenset({"select_pass", "select_candidate", "table", "step_candidate", "next_rewrite",
                            "search_step", "back", "show_source", "select_side_node"})

#: rows of the candidate table sent with each new table (the front end asks for the others by page)
FIRST_PAGE = 80

#: at most this many passes (the fewest candidates first) have their first table page and their colouring of
#: the current drawing sent to the page ahead of a click on them (``{"action": "prefetch"}``)
PREFETCH_PASSES = 16

#: table orders kept per (pass, query) for the current rows (a switch back costs no sort)
_ORDER_CACHE = 32


def _merge_views(a: GraphView, b: GraphView) -> GraphView:
    nodes = {n.id: n for n in a.nodes}
    for n in b.nodes:
        nodes.setdefault(n.id, n)
    edges = {e.element_id: e for e in a.edges}
    for e in b.edges:
        edges.setdefault(e.element_id, e)
    element_of = dict(b.element_of)
    element_of.update(a.element_of)
    return GraphView(a.graph_name, list(nodes.values()), list(edges.values()), element_of,
                     total_nodes=max(a.total_nodes, b.total_nodes), edge_labels=a.edge_labels,
                     focused=a.focused or b.focused)


def _fmt_attr(value: Any) -> str:
    if isinstance(value, ir.TensorValue):
        arr = value.array
        head = arr.ravel()[:8].tolist()
        more = " \u2026" if arr.size > 8 else ""
        return f"{dtype_short(value.dtype)}{list(value.shape)} {head}{more}"
    if isinstance(value, ir.TensorDesc):
        return tensor_label(value)
    if isinstance(value, ir.DataType):
        return value.name
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    text = repr(value)
    return text if len(text) <= 200 else text[:199] + "\u2026"


def _desc_text(desc: ir.TensorDesc) -> str:
    text = tensor_label(desc)
    fmt = ir.Format(desc.format).name.removeprefix("FORMAT_")
    if fmt != "ND":
        text += f" {fmt}"
    if desc.origin_shape != desc.shape or desc.origin_format != desc.format:
        ofmt = ir.Format(desc.origin_format).name.removeprefix("FORMAT_")
        text += f" (origin {list(desc.origin_shape)} {ofmt})"
    return text


class Workbench(LevelsMixin, DebuggingMixin, anywidget.AnyWidget):
    """Interactive view of a model and a compile run: graph, passes by stage, candidates, diffs.

    Args:
        model: a path (anything :func:`gebench.load` reads), an :class:`ir.Graph`, a ``ge.graph.Graph``,
            or a finished ``Run`` (then ``passes`` is ignored).
        passes: pass files/directories for :func:`gebench.compile`; ``None`` shows the graph without a run.
        threshold: above this many nodes the graph opens on the root level of its hierarchy of name scopes
            (:mod:`._hierarchy`; click a group box to expand it) and selections draw focused k-hop views
            (default 1,500).
        hops: the k of focused views.
        max_focus_nodes: cap on the nodes of one focused view.
        overview_groups: at most this many items (group boxes plus nodes) in one level of the hierarchy of a
            large graph (default 64).
        export_dir: where the export buttons write (default ``./gebench_exports``).
        layout_timeout: seconds graphviz may take for one layout; a view it does not lay out in time (or one
            too large for it) gets the layered layout instead (:mod:`._layered`), never an error.
        compile_kwargs: extra keyword arguments for :func:`gebench.compile` (``custom_ops=...``).

    Raises:
        TypeError: ``model`` is of an unsupported type.
    """

    _esm = ESM_PATH
    _css = CSS_PATH

    title = traitlets.Unicode("").tag(sync=True)
    svg_gz = traitlets.Bytes(b"").tag(sync=True)
    view_info = traitlets.Dict().tag(sync=True)
    snapshots = traitlets.List(traitlets.Unicode()).tag(sync=True)
    snapshot = traitlets.Unicode("").tag(sync=True)
    stages = traitlets.List().tag(sync=True)
    selected_pass = traitlets.Unicode("").tag(sync=True)
    #: the candidate table: ``{"pass", "version", "total", "all", "counts", "query", "selected_pos", "page"}``
    #: (the first page of rows as columns; the front end asks for more pages by ``{"action": "rows"}``)
    table = traitlets.Dict().tag(sync=True)
    selected_candidate = traitlets.Int(-1).tag(sync=True)
    highlight = traitlets.Dict().tag(sync=True)
    selected_node = traitlets.Int(-1).tag(sync=True)
    details_html = traitlets.Unicode("").tag(sync=True)
    side_svg_gz = traitlets.Bytes(b"").tag(sync=True)
    side_title = traitlets.Unicode("").tag(sync=True)
    side_highlight = traitlets.Dict().tag(sync=True)
    diff_mode = traitlets.Unicode("").tag(sync=True)
    search = traitlets.Unicode("").tag(sync=True)
    status_text = traitlets.Unicode("").tag(sync=True)
    busy = traitlets.Bool(False).tag(sync=True)
    reload_report = traitlets.List().tag(sync=True)
    #: the ``seq`` of the latest front-end request handled (the front end drops answers older than its
    #: latest request and renders once the answer to that request is in)
    seq = traitlets.Int(0).tag(sync=True)
    #: the last search: ``{"query", "total", "hits": [{"id", "name", "type", "where"}], "pos"}``
    search_hits = traitlets.Dict().tag(sync=True)
    #: the diff on screen: ``{"mode", "kind", "layout", "before", "after", "summary", "text"}`` or
    #: ``{"mode", "error"}``; empty when no diff is shown
    diff_info = traitlets.Dict().tag(sync=True)
    #: label of the main pane (``"before: <snapshot>"`` in a side-by-side diff)
    pane_title = traitlets.Unicode("").tag(sync=True)
    #: what the side pane shows: ``""``, ``"pattern"`` or ``"diff"`` (then it pans and zooms with the main pane)
    side_kind = traitlets.Unicode("").tag(sync=True)
    #: the selected candidate's place in the table as shown: ``{"version", "index", "pos"}`` (pos -1: filtered out)
    table_sel = traitlets.Dict().tag(sync=True)
    #: the hierarchy level drawn, root first: ``[{"group": id, "label": ...}, ...]`` (empty when the drawing
    #: is not a level: a small graph drawn whole, a focused view)
    levels = traitlets.List().tag(sync=True)
    #: per group box drawn: ``{"g<id>": {"candidates": n, "replaced": m, "diff": k}}`` for the selected pass
    #: and the diff shown
    group_counts = traitlets.Dict().tag(sync=True)
    #: the selected node's provenance: ``{"pane", "node", "passes", "original_nodes", "origin_ids", "made_ids"}``
    #: (``origin_ids``: marked on the "before" pane, ``made_ids``: on the "after" pane of a side-by-side diff)
    provenance = traitlets.Dict().tag(sync=True)
    #: stepping through the selected pass's rewrites: ``{"pass", "n", "k", "record"}`` (``k`` -1: not stepping)
    rewrite_step = traitlets.Dict().tag(sync=True)

    def __init__(
        self,
        model: Any,
        passes: Any = None,
        *,
        threshold: int = 1500,
        hops: int = 2,
        max_focus_nodes: int = 300,
        overview_groups: int = 64,
        export_dir: str | Path | None = None,
        layout_timeout: float = 5.0,
        **compile_kwargs: Any,
    ) -> None:
        super().__init__()
        self.threshold = threshold
        self.hops = hops
        self.max_focus_nodes = max_focus_nodes
        self.max_focus_seeds = 24
        self.overview_groups = overview_groups
        self.max_level_items = overview_groups
        self._hierarchies = {}
        self.export_dir = Path(export_dir) if export_dir is not None else Path.cwd() / "gebench_exports"
        self.layout_cache = _SHARED_CACHE if layout_timeout == _SHARED_CACHE.timeout else LayoutCache(timeout=layout_timeout)
        self._passes = passes
        self._compile_kwargs = compile_kwargs
        self._model = model
        self._view: GraphView | None = None
        self._view_graph: ir.Graph | None = None
        self._view_svg = ""
        self._graphs: dict[str, ir.Graph] = {}
        self._rows: list[CandidateRow] = []
        self._table = CandidateTable([])
        self._query = TableQuery()
        self._order = np.empty(0, dtype=np.int64)
        self._table_version = 0
        self._rows_gen = 0
        self._orders: dict[tuple[str, str, str, bool], np.ndarray] = {}
        self._pf_ident: tuple[Any, Any, str] | None = None
        self._pf_gen = 0
        self._hl_base: tuple[Any, Any, dict[str, dict[str, list[str]]]] | None = None
        self._details_for: tuple[str, int] | None = None
        self._diff_drawn = False
        self._diff_status = ""
        self._search_ids: list[int] = []
        self._history: list[tuple[str, int, int]] = []
        self._side_graph: ir.Graph | None = None
        self._explain_cache: dict[int, Any] = {}
        self._patterns: dict[tuple[str, str], ir.Graph | None] = {}
        self._pass_set: Any = None
        self._watcher: Any = None
        self.run: Any = None
        self.timings: dict[str, float] = {}
        self._sticky: dict[int, str] = {}
        self._last_diff = GraphDiff()
        self.observe(self._on_selected_pass, "selected_pass")
        self.observe(self._on_selected_candidate, "selected_candidate")
        self.observe(self._on_selected_node, "selected_node")
        self.observe(self._on_snapshot, "snapshot")
        self.observe(self._on_diff_mode, "diff_mode")
        self.observe(self._on_search, "search")
        self.observe(self._update_group_counts, "highlight")
        self.on_msg(self._on_message)
        with ir.collector_paused():  # opening builds long-lived rows and indexes: no collector passes over them
            self._load(model)

    # ------------------------------------------------------------------------------------------ loading
    def _load(self, model: Any) -> None:
        if hasattr(model, "ledger") and hasattr(model, "graph"):
            self._set_run(model)
            return
        graph = self._to_graph(model)
        self._base_graph = graph
        if self._passes is not None:
            self._compile()
        else:
            self._set_graphs([("model", graph)])
            self.title = graph.name
            self._set_rows([])
            self.stages = []
            self._show_snapshot("model")

    @staticmethod
    def _to_graph(model: Any) -> ir.Graph:
        if isinstance(model, (str, Path)):
            import gebench

            return ir.as_graph(gebench.load(model))
        return ir.as_graph(model)

    def _compile(self, changed: Any = None) -> None:
        """Run the passes: from the original graph, or (``changed``: the reload report of a re-run) only
        the stages holding a changed pass, from the cached snapshot before the earliest of them."""
        import gebench

        passes = self._passes
        if self._pass_set is None and not self._is_pass_objects(passes):
            from gebench.fusion.reload import PassSet

            self._pass_set = passes if isinstance(passes, PassSet) else PassSet(
                [str(p) for p in ([passes] if isinstance(passes, (str, Path)) else passes)])
        with self._progress("running passes"):
            start = time.perf_counter()
            # the workbench keeps showing the last good version of a pass file that fails to load
            kwargs = {"run_after_load_error": True, **self._compile_kwargs}
            run = self._compile_from_cache(changed, kwargs) if changed is not None else None
            if run is None:
                run = gebench.compile(self._base_graph, passes=self._pass_set or passes, **kwargs)
                self.last_rerun = {"from_snapshot": None, "stages": list(STAGE_ORDER)}
            self.timings["compile"] = time.perf_counter() - start
        self._set_run(run)

    #: what the last run re-ran: ``{"from_snapshot": suffix or None (the original graph), "stages": [...]}``
    last_rerun: dict[str, Any] | None = None

    def _first_changed_stage(self, report: Any) -> int | None:
        """Index (in GE's stage order) of the earliest stage holding a pass the reload added, changed or
        removed; None when none is known."""
        stage_of: dict[str, str] = {}
        for desc in [*(getattr(self.run, "passes", None) or []), *self._pass_set.descriptors()]:
            stage = getattr(desc.stage, "value", desc.stage)
            stage_of[desc.pass_name] = str(stage)
        names = [*report.added, *report.changed, *report.removed]
        found = [STAGE_ORDER.index(stage_of[n]) for n in names if stage_of.get(n) in STAGE_ORDER]
        return min(found) if found else None

    def _compile_from_cache(self, report: Any, kwargs: dict[str, Any]) -> Any:
        """Re-run only the stages from the earliest changed pass's stage on, starting from the previous
        run's snapshot before that stage, and merge with the previous run's earlier stages.

        Returns the merged ``Run``, or None when that is not possible (then everything re-runs): no
        previous run, pass load errors now or before (their lints belong to the whole run), the change is
        in the first stage, or the previous run has no snapshot before the stage (it failed earlier).
        Cost: one graph copy plus the re-run stages; earlier stages are not run again.
        """
        import gebench
        from gebench.fusion.ledger import Ledger

        old = self.run
        if old is None or self._pass_set is None or report.errors or getattr(old, "load_errors", None):
            return None
        first = self._first_changed_stage(report)
        if not first:  # None (nothing known changed) or 0 (the first stage: that is a full run)
            return None
        failed = getattr(old, "failed_stage", None)
        if failed is not None and failed != "InferShape" and failed not in STAGE_ORDER[first:]:
            return None
        label = DUMP_SUFFIXES[STAGE_ORDER[first - 1]]
        cached = getattr(old, "ir_snapshots", {}).get(label)
        if cached is None:
            return None
        stages = list(STAGE_ORDER[first:])
        new = gebench.compile(cached, passes=self._pass_set, stages=stages, **kwargs)
        earlier = set(STAGE_ORDER[:first])
        ledger = Ledger()
        ledger.extend(r for r in old.ledger if r.stage in earlier)
        ledger.extend(new.ledger)
        keep = {PRE_RUN_SUFFIX} | {DUMP_SUFFIXES[s] for s in earlier}
        snaps = {k: g for k, g in old.ir_snapshots.items() if k in keep}
        snaps.update((k, g) for k, g in new.ir_snapshots.items() if k != PRE_RUN_SUFFIX)
        results = [r for r in old.pass_results if r.get("stage") in earlier] + list(new.pass_results)
        self.last_rerun = {"from_snapshot": label, "stages": stages}
        _log.debug("re-ran stages %s from the cached %s snapshot", stages, label)
        merged = gebench.Run(graph=new.ir_graph, snapshots=snaps, ledger=ledger, status=new.status,
                             failed_pass=new.failed_pass, failed_stage=new.failed_stage,
                             failure_reason=new.failure_reason, load_errors=list(new.load_errors),
                             passes=list(new.passes), pass_results=results, partial_graph=new.ir_partial_graph)
        # replays (gebench.debug) start from PreRunBegin, so they run every stage the full compile would
        merged.replay_args = {**new.replay_args, "stages": kwargs.get("stages")}
        return merged

    def _set_run(self, run: Any) -> None:
        self.run = run
        self._explain_cache.clear()
        graphs = LazyGraphs.of_run(run)  # dump points are built when first drawn, not here
        self._set_graphs(graphs)
        labels = list(graphs)
        self._set_rows(candidate_rows(run.ledger))
        known = self._known_passes(run)
        self.stages = with_timings(pass_summaries(self._rows, known=known), run.timing() if hasattr(run, "timing") else [])
        self._reset_rewrite_step(self.selected_pass)
        status = getattr(run, "status", "")
        failed = getattr(run, "failed_pass", None)
        self.title = f"{graphs[labels[-1]].name if labels else 'graph'}: {status}" + (f" at {failed}" if failed else "")
        first = labels[0] if labels else ""
        keep = self.selected_pass if len(self._table.rows_of(self.selected_pass)) else ""
        # the rows are renumbered: nothing selected before describes the new run
        with self.hold_trait_notifications():
            self.selected_candidate = -1
            self.selected_node = -1
        self._details_for = None
        self.details_html = ""
        self._history.clear()
        if keep:
            self._apply_pass(keep)
        else:
            if self.selected_pass:
                with self.hold_trait_notifications():
                    self.selected_pass = ""
            self._show_snapshot(self._default_snapshot() or first)
            self.highlight = {}
            self._send_table()
            if self.diff_mode:
                self._apply_diff()

    @staticmethod
    def _known_passes(run: Any) -> list[tuple[str, str]]:
        out = []
        for p in getattr(run, "passes", None) or []:
            name = getattr(p, "pass_name", None) or getattr(p, "name", None)
            stage = getattr(p, "stage", "")
            stage = getattr(stage, "value", stage)
            if name:
                out.append((str(name), str(stage)))
        return out

    def _default_snapshot(self) -> str:
        """The first snapshot; for a large graph whose first snapshot is not built yet, the last built one (the
        run's final graph), so opening costs no snapshot build (a pass's snapshot is built when selected)."""
        labels = list(self._graphs)
        if not labels:
            return ""
        graphs = self._graphs
        if isinstance(graphs, LazyGraphs) and not graphs.is_built(labels[0]) \
                and graphs.node_count(labels[0]) > self.threshold:
            built = [label for label in labels if graphs.is_built(label)]
            if built:
                return built[-1]
        return labels[0]

    def _set_graphs(self, graphs: Any) -> None:
        """``graphs``: a :class:`LazyGraphs` or ``(label, graph)`` pairs."""
        self._graphs = graphs if isinstance(graphs, LazyGraphs) else dict(graphs)
        self._hierarchies = {}
        self.snapshots = list(self._graphs)

    # ------------------------------------------------------------------------------------------ progress
    @contextlib.contextmanager
    def _progress(self, message: str, *, after: float = 1.0) -> Iterator[None]:
        """Show ``message`` as busy status if the block runs longer than ``after`` seconds."""
        def show() -> None:
            with contextlib.suppress(Exception):
                self.busy = True
                self.status_text = message + "\u2026"
        timer = threading.Timer(after, show)
        timer.daemon = True
        timer.start()
        start = time.perf_counter()
        try:
            yield
        finally:
            timer.cancel()
            took = time.perf_counter() - start
            if self.busy or took >= after:
                self.busy = False
                self.status_text = f"{message}: {took:.1f} s"

    # ------------------------------------------------------------------------------------------ drawing
    @property
    def graph(self) -> Any:
        """The graph currently drawn, as a ``ge.graph.Graph`` view (``.ir``: the IR graph); None before the first
        drawing. The workbench never changes it."""
        if self._view_graph is None:
            return None
        from gebench.ge.graph import Graph

        return Graph._wrap(self._view_graph, owns=False)

    @property
    def view(self) -> GraphView | None:
        """What is currently drawn."""
        return self._view

    @property
    def svg(self) -> str:
        """The current drawing as SVG text."""
        return self._view_svg

    def _layout(self, view: GraphView) -> str:
        """SVG of ``view`` from the layout cache: graphviz, or the layered layout for views too large or too
        slow for it (:meth:`LayoutCache.layout`); never raises for a view."""
        dot = view_to_dot(view)
        if dot in self.layout_cache:
            return self.layout_cache.layout(view)
        with self._progress(f"laying out {len(view.nodes)} nodes"):
            return self.layout_cache.layout(view)

    def _make_view(self, graph: ir.Graph, seeds: Iterable[int] | None) -> GraphView:
        if len(graph) <= self.threshold:
            return build_view(graph)
        seeds = [s for s in (seeds or []) if graph.has_node_id(s)]
        if not seeds:
            # nothing selected: the current level of the model's hierarchy (the root at first)
            return self._level_view(graph)
        else:
            ids = k_hop(graph, seeds[: self.max_focus_seeds], k=self.hops, max_nodes=self.max_focus_nodes)
        return build_view(graph, node_ids=ids)

    def _draw(self, label: str, seeds: Iterable[int] | None = None, *, node_ids: Iterable[int] | None = None,
              around: str = "the selection") -> None:
        """Draw snapshot ``label``: the nodes ``node_ids``, else the graph whole, its current level, or a focused
        view around ``seeds`` (described as ``around`` in the status line)."""
        graph = self._graphs[label]
        self._leave_step_view()  # a snapshot replaces a rewrite step's drawing
        start = time.perf_counter()
        before = self.status_text
        view = build_view(graph, node_ids=node_ids) if node_ids is not None else self._make_view(graph, seeds)
        svg = self._layout(view)
        self._set_view_status(view, label, graph, around, self.status_text if self.status_text != before else "")
        self._view, self._view_graph, self._view_svg = view, graph, svg
        gz = compress_svg(svg)
        if gz != self.svg_gz:
            self.svg_gz = gz
        self.view_info = {"snapshot": label, "drawn": len(view.nodes), "total": len(graph),
                          "focused": view.focused, "overview": view.overview, "bytes": len(gz),
                          "level": view.level, "expanded": list(view.expanded),
                          "engine": self.layout_cache.last_engine}
        if view.level is None:
            self._levels_beside(graph)  # a focused view keeps the breadcrumb of the level it came from
        self.timings["draw"] = time.perf_counter() - start
        if self.snapshot != label:
            with self.hold_trait_notifications():
                self._suppress_snapshot = True
                self.snapshot = label
                self._suppress_snapshot = False

    _suppress_snapshot = False
    _view_status = ""

    def _set_view_status(self, view: GraphView, label: str, graph: ir.Graph, around: str, note: str) -> None:
        """The status line follows the drawing: a focused view or a level says what it shows (``note``: what
        the layout reported); any other drawing clears a status that described the previous one. A caller
        with a message of its own (a search, an expansion) sets it after drawing."""
        text = ""
        if view.level is not None and label in self._graphs:
            h = self.hierarchy(label)
            if 0 <= view.level < len(h.groups):
                g = h.groups[view.level]
                text = (f"{g.label if view.level else 'model'}: {g.size} nodes, {len(g.children)} groups, "
                        f"{len(g.nodes)} nodes of its own")
        elif view.focused and not view.overview:
            text = f"focused view around {around}: {len(view.nodes)} of {len(graph)} nodes of {label}"
        if text or self.status_text == self._view_status:
            text = f"{text}; {note}" if text and note else text or note
            self.status_text = self._view_status = text

    def _show_snapshot(self, label: str, seeds: Iterable[int] | None = None) -> None:
        if label not in self._graphs:
            raise KeyError(f"no snapshot {label!r}; known: {', '.join(self._graphs)}")
        self._draw(label, seeds)

    def _on_snapshot(self, change: dict) -> None:
        if self._suppress_snapshot or change["new"] not in self._graphs:
            return
        seeds = [self.selected_node] if self.selected_node >= 0 else None
        self._draw(change["new"], seeds)
        self._refresh_highlight()

    def show_snapshot(self, label: str) -> None:
        """Draw the snapshot ``label`` (one of :attr:`snapshots`), keeping the selected pass highlighted."""
        self.snapshot = label

    # ------------------------------------------------------------------------------------------ passes
    def pass_rows(self, pass_name: str) -> list[CandidateRow]:
        """Ledger rows of ``pass_name`` (lints included), in ledger order. O(rows of the pass)."""
        return [self._rows[i] for i in self._table.rows_of(pass_name).tolist()]

    def _set_rows(self, rows: list[CandidateRow]) -> None:
        """New ledger rows: rebuild the columnar table (O(rows)) and forget highlight caches."""
        self._rows = rows
        self._table = CandidateTable(rows)
        self._rows_gen += 1
        self._orders = {}
        self._hl_base = None

    @property
    def candidates(self) -> list[dict[str, Any]]:
        """The selected pass's candidates as table rows (``CandidateRow.to_row()``), in ledger order.

        Built on each access (O(rows of the pass)); the front end never gets this list whole, only the
        pages of rows in sight (:attr:`table`).
        """
        return [r.to_row() for r in self.pass_rows(self.selected_pass)] if self.selected_pass else []

    def _send_table(self) -> None:
        """Publish the table of the selected pass under the current filter and sort, with its first page.

        O(rows of the pass) numpy for the order plus O(first page); a new ``version`` makes the front end
        drop the pages it holds and ignore late answers for older versions.
        """
        name = self.selected_pass
        self._order = self._order_of(name)
        self._table_version += 1
        sel = self.selected_candidate
        self.table = self._table_state(name, self._order, self._table_version,
                                       self._table.position(self._order, sel) if sel >= 0 else -1)

    def _order_of(self, name: str) -> np.ndarray:
        """The rows of pass ``name`` under the current filter and sort; kept per (pass, query) until the rows
        change (O(rows of the pass) numpy the first time, O(1) after)."""
        if not name:
            return np.empty(0, dtype=np.int64)
        q = self._query
        key = (name, ",".join(q.statuses), q.sort, q.desc)
        order = self._orders.get(key)
        if order is None:
            if len(self._orders) >= _ORDER_CACHE:
                self._orders.pop(next(iter(self._orders)))
            order = self._orders[key] = self._table.order(name, q)
        return order

    def _table_state(self, name: str, order: np.ndarray, version: int | None, selected_pos: int) -> dict[str, Any]:
        """The ``table`` trait's value for pass ``name`` shown in ``order``: counts, query and first page.
        ``rows_gen`` names the ledger rows it was made from (it changes with each run and verify)."""
        return {
            "pass": name, "version": version, "total": int(len(order)),
            "all": int(len(self._table.rows_of(name))) if name else 0,
            "counts": self._table.counts(name) if name else {}, "query": self._query.to_json(),
            "selected_pos": selected_pos, "page": self._table.page(order, 0, FIRST_PAGE), "rows_gen": self._rows_gen,
        }

    def table_page(self, offset: int, limit: int = FIRST_PAGE) -> dict[str, Any]:
        """Rows ``offset .. offset + limit`` of the table as shown (filtered, sorted), as columns."""
        return {"version": self._table_version, **self._table.page(self._order, offset, limit)}

    def set_table_query(self, statuses: Iterable[str] = (), sort: str = "i", desc: bool = False) -> None:
        """Filter the candidate table by status names (none: all) and sort it by one of
        :data:`~gebench.viz._table.SORT_KEYS` (``desc`` reverses). Raises ValueError for an unknown key."""
        self._query = TableQuery(statuses, sort, desc)
        self._send_table()

    @property
    def rows(self) -> list[CandidateRow]:
        """Every ledger row."""
        return list(self._rows)

    def select_pass(self, name: str) -> None:
        """Highlight the candidates of pass ``name`` (same as clicking it).

        Raises:
            KeyError: no pass of that name is in the ledger or the pass list.
        """
        names = {p["name"] for s in self.stages for p in s["passes"]}
        if name not in names:
            raise KeyError(f"no pass {name!r} in this run; passes: {', '.join(sorted(names)) or '(none)'}")
        if self.selected_pass == name:
            self._apply_pass(name)
        else:
            self.selected_pass = name

    def _on_selected_pass(self, change: dict) -> None:
        if change["new"]:
            self._apply_pass(change["new"])
        else:
            self._send_table()
            self.highlight = {}

    def _snapshot_for(self, ids: set[int]) -> str:
        """The earliest snapshot holding the most of ``ids`` (where a pass's candidates live).

        Snapshots are read in order and the search stops at the first one holding all of ``ids``, so only
        the snapshots up to it are built (usually one). O(ids) per snapshot read.
        """
        best, best_count = self.snapshot or self._default_snapshot(), -1
        for label in self._graphs:
            graph = self._graphs[label]
            count = sum(1 for i in ids if graph.has_node_id(i))
            if count > best_count:
                best, best_count = label, count
            if count == len(ids):
                break
        return best

    def _pass_seeds(self, name: str, limit: int = 256) -> list[int]:
        """Target node ids of the pass's first candidates (at most ``limit``): where to look for them."""
        out: list[int] = []
        for i in self._table.rows_of(name)[:limit].tolist():
            out.extend(self._rows[i].target_ids)
            if len(out) >= limit:
                break
        return out[:limit]

    def _apply_pass(self, name: str) -> None:
        """Show pass ``name``: its table, its colours, and (when a diff is on) its diff.

        Cost: O(rows of the pass) numpy for the table and the first colouring of the pass (cached), plus
        O(highlighted elements); a new layout only when the pass's candidates are not in the drawing.
        """
        start = time.perf_counter()
        if self._step_on and self.snapshot in self._graphs:
            self._view = None  # a rewrite step of a pass is drawn: the snapshot comes back
        self._reset_rewrite_step(name)
        ids = self._pass_seeds(name)
        label = self._snapshot_for(set(ids)) if ids else (self.snapshot or self._default_snapshot())
        graph = self._graphs[label]
        need_focus = len(graph) > self.threshold
        shown = self._view.element_of if self._view is not None else {}
        if not self.diff_mode and (label != self.snapshot or self._view is None
                                   or (need_focus and ids and not any(i in shown for i in ids))):
            self._draw(label, ids, around=f"the candidates of {name}")
        sel = self.selected_candidate
        if sel >= 0 and (sel >= len(self._rows) or self._rows[sel].pass_name != name):
            self.selected_candidate = -1  # its details and pattern go with it
        self._send_table()
        self._refresh_highlight()
        if self.diff_mode:
            self._apply_diff()  # the diff follows the selected pass
        self.timings["select_pass"] = time.perf_counter() - start

    def _pass_highlight(self) -> dict[int, str]:
        """node id -> status CSS class for the selected pass (precedence by :data:`STATUS_PRECEDENCE`);
        cached per pass (:meth:`CandidateTable.pass_status`)."""
        return self._table.pass_status(self.selected_pass) if self.selected_pass else {}

    def _pass_elements(self, name: str | None = None) -> dict[str, list[str]]:
        """``element id -> status classes`` of pass ``name`` (default: the selected pass) on the current drawing,
        cached per pass for the current drawing (switching back and forth between passes costs no
        recomputation). O(min(nodes coloured by the pass, nodes of the drawing)) when not cached."""
        name = self.selected_pass if name is None else name
        view = self._view
        cache = self._hl_base  # (drawing, table, {pass: elements}), compared by identity: a drawing is never mutated
        if cache is None or cache[0] is not view or cache[1] is not self._table:
            cache = self._hl_base = (view, self._table, {})
        hit = cache[2].get(name)
        if hit is not None:
            return hit
        element_of = view.element_of if view is not None else {}
        status = self._table.pass_status(name) if name else {}
        out: dict[str, list[str]] = {}
        if len(status) <= len(element_of):
            pairs = ((element_of.get(nid), cls) for nid, cls in status.items())
        else:
            pairs = ((el, status.get(nid)) for nid, el in element_of.items())
        for el, cls in pairs:
            if el is not None and cls is not None:
                classes = out.setdefault(el, [])
                if cls not in classes:
                    classes.append(cls)
        cache[2][name] = out
        return out

    # ------------------------------------------------------------------------------------------ prefetch
    def _prefetch_key(self) -> str:
        """Names what a prefetched pass was made for: the drawing, the ledger rows and the table query. It
        changes whenever one of them does (the drawing and rows compared by identity: neither is mutated)."""
        query = json.dumps(self._query.to_json(), sort_keys=True)
        ident = self._pf_ident
        if ident is None or ident[0] is not self._view or ident[1] is not self._table or ident[2] != query:
            self._pf_ident = (self._view, self._table, query)
            self._pf_gen += 1
        return f"{self._rows_gen}.{self._pf_gen}"

    def _prefetch_plan(self) -> list[str]:
        """The passes whose table and colours are sent ahead: those of the pass list, the fewest candidates
        first (ties: pass-list order), at most :data:`PREFETCH_PASSES`."""
        names = [p["name"] for s in self.stages for p in s["passes"]]
        names.sort(key=lambda n: len(self._table.rows_of(n)))
        return names[:PREFETCH_PASSES]

    def _switch_keeps_drawing(self, name: str) -> bool:
        """Whether selecting pass ``name`` now would keep the current drawing (so that its colours, computed
        now, are what the switch shows). Builds no snapshot: a pass whose snapshot is not built yet is
        answered False. O(snapshots * 256)."""
        if self.diff_mode or self._step_on or self._view is None or self.snapshot not in self._graphs:
            return False
        ids = self._pass_seeds(name)
        if not ids:
            return True
        wanted = set(ids)
        graphs = self._graphs
        best, best_count = self.snapshot, -1
        for label in graphs:
            if isinstance(graphs, LazyGraphs) and not graphs.is_built(label):
                return False
            graph = graphs[label]
            count = sum(1 for i in wanted if graph.has_node_id(i))
            if count > best_count:
                best, best_count = label, count
            if count == len(wanted):
                break
        if best != self.snapshot:
            return False
        if len(graphs[best]) > self.threshold:
            shown = self._view.element_of
            return any(i in shown for i in ids)
        return True

    def prefetch(self, have: Iterable[str] = (), key: str = "") -> dict[str, Any]:
        """The next pass to send ahead of a click: ``{"key", "pass", "table", "colours"}`` (``colours``: element
        id -> status classes of the pass on the current drawing), or ``{"key", "done": True}`` when every pass of
        :meth:`_prefetch_plan` that a switch would show on this drawing is in ``have`` (the passes the page
        holds for ``key``). A ``key`` other than the current one (the drawing, the rows or the query changed
        since) voids ``have``: everything is sent again. Cost: one pass's first page and colouring
        (O(rows of the pass) numpy the first time, cached after)."""
        now = self._prefetch_key()
        held = set(have) if key == now else set()
        for name in self._prefetch_plan():
            if name in held or not self._switch_keeps_drawing(name):
                continue
            order = self._order_of(name)
            colours = {el: " ".join(cls) for el, cls in self._pass_elements(name).items()}
            self.prefetched += 1
            return {"key": now, "pass": name, "table": self._table_state(name, order, None, -1), "colours": colours}
        return {"key": now, "done": True}

    #: passes sent ahead so far (:meth:`prefetch`)
    prefetched = 0

    def _send_prefetch(self, content: dict) -> None:
        """Answer the page's ``{"action": "prefetch", "key", "have", "tag"}`` with one pass (or ``done``); the
        page echoes ``tag`` to tell whether its drawing changed meanwhile."""
        have = [str(n) for n in content.get("have") or [] if isinstance(n, str)]
        self.send({"reply": "prefetch", "tag": content.get("tag"), **self.prefetch(have, str(content.get("key", "")))})

    def _refresh_highlight(self, extra: dict[int, str] | None = None) -> None:
        """Recompute the ``element id -> classes`` map from the selections.

        O(highlighted elements of the drawing + targets of the selected candidate + sticky marks): the
        selected pass's part is cached per drawing (:meth:`_pass_elements`).
        """
        if self._view is None:
            return
        by_node: dict[int, list[str]] = {}
        if 0 <= self.selected_candidate < len(self._rows):
            sel = self._rows[self.selected_candidate]
            for nid in sel.target_ids:
                by_node.setdefault(nid, []).append("gb_sel")
            key = {"STRUCTURAL_MISMATCH": "target_node_id", "BOUNDARY_VIOLATION": "escaping_node_id"}.get(sel.status)
            diverged = sel.detail.get(key) if key else None
            if isinstance(diverged, int):
                by_node.setdefault(diverged, []).append("gb_diverge")
        for nid, cls in (extra or {}).items():
            by_node.setdefault(nid, []).append(cls)
        for nid, cls in self._sticky.items():
            by_node.setdefault(nid, []).append(cls)
        merged: dict[str, list[str]] = {el: list(cls) for el, cls in self._pass_elements().items()}
        for nid, classes in by_node.items():
            el = self._view.element_of.get(nid)
            if el is not None:
                merged.setdefault(el, []).extend(classes)
        self.highlight = {el: " ".join(dict.fromkeys(c for c in cls if c)) for el, cls in merged.items()}

    # ------------------------------------------------------------------------------------------ candidates
    def select_candidate(self, index: int) -> None:
        """Select ledger row ``index``: mark its nodes, fill the details panel, draw its pattern beside."""
        if not 0 <= index < len(self._rows):
            raise IndexError(f"no candidate #{index}; the ledger has {len(self._rows)} records")
        if self.selected_candidate == index:
            self._apply_candidate(index)
        else:
            self.selected_candidate = index

    def export_repro(self, directory: Any = None, candidate: int | None = None, **kwargs: Any) -> Any:
        """Write the repro bundle of ledger row ``candidate`` (default: the selected one) into ``directory``
        (default: ``export_dir / "repro_<index>"``, where the page's Repro button writes):
        ``Run.repro_bundle`` (:mod:`gebench.debug.repro`), whose ``ReproBundle`` it returns.

        Raises:
            ValueError: no run, or no candidate given or selected; and the errors of ``Run.repro_bundle``.
        """
        index = self.selected_candidate if candidate is None else candidate
        if self.run is None or index is None or index < 0:
            raise ValueError("export_repro needs a run and a candidate (select one or pass its index)")
        directory = Path(directory) if directory is not None else self.export_dir / f"repro_{index}"
        with self._progress(f"writing the repro bundle of candidate #{index}"):
            bundle = self.run.repro_bundle(index, directory, **kwargs)
        self.status_text = f"wrote the repro bundle of candidate #{index} ({len(bundle.files)} files) to {directory}"
        return bundle

    def bisect_numerics(self, seed: int = 0, **kwargs: Any) -> Any:
        """Find the first rewrite after which the graph is no longer numerically equivalent to the input
        (``Run.bisect_numerics``: O(log rewrites) replays) and select its candidate. Returns its ledger record,
        or None (nothing selected) when the final graph is equivalent.

        Raises:
            ValueError: no run; and the errors of ``gebench.debug.bisect_numerics``.
        """
        if self.run is None:
            raise ValueError("bisect_numerics needs a compiled run")
        from gebench.debug import bisect_numerics

        found = bisect_numerics(self.run, seed, **kwargs)
        if found.index is not None:
            self.select_candidate(found.index)
        return found.record

    def _on_selected_candidate(self, change: dict) -> None:
        index = change["new"]
        if index < 0 or index >= len(self._rows):
            if self.side_kind == "pattern":
                self._clear_side()
            if self._details_for is not None and self._details_for[0] == "candidate":
                self._details_for = None
                self.details_html = ""
            if self.diff_mode.startswith("candidate"):
                self._apply_diff()
            self._refresh_highlight()
            return
        self._apply_candidate(index)

    def _clear_side(self) -> None:
        self.side_svg_gz = b""
        self.side_title = ""
        self.side_highlight = {}
        self.side_kind = ""

    def _apply_candidate(self, index: int) -> None:
        """Show candidate ``index``: its nodes marked, its details, its pattern (or its rewrite diff) beside.

        Cost: O(highlighted elements + targets) and the pattern's layout (cached); a new layout of the
        graph only when the candidate is not in the drawing.
        """
        row = self._rows[index]
        if row.pass_name != self.selected_pass:
            self.selected_pass = row.pass_name
        ids = set(row.target_ids)
        view = self._view
        if not self.diff_mode and view is not None and ids and (
                view.overview or (view.focused and not ids <= view.node_ids)):
            self._draw(self._snapshot_for(ids), ids, around=f"candidate #{index}")
        self._refresh_highlight()
        self._details_for = ("candidate", index)
        self.details_html = self._candidate_html(row)
        if self.diff_mode.startswith("candidate"):
            self._apply_diff()
        elif not self.diff_mode.endswith(":side"):  # a side-by-side diff keeps its "after" pane
            self._draw_pattern(row)
        pos = self._table.position(self._order, index)
        self.table_sel = {"version": self._table_version, "index": index, "pos": pos}

    def _candidate_html(self, row: CandidateRow) -> str:
        e = html.escape
        parts = [f"<h4>candidate #{row.index} <span class='gb-chip {row.css}'>{e(row.status.lower())}</span></h4>",
                 "<table>"]
        items = [("pass", row.pass_name), ("stage", row.stage), ("pattern", row.pattern_name),
                 ("reason", row.reason), ("targets", ", ".join(row.target_names)),
                 ("captures", ", ".join(row.captures)), ("meet_requirements", row.meet_result),
                 ("exception", row.exception), ("pattern source", row.pattern_source),
                 ("hook source", row.hook_source)]
        if row.removed_ids or row.added_ids:
            items.append(("rewrite", f"removed {len(row.removed_ids)}, added {len(row.added_ids)} nodes"))
        if row.max_abs_error is not None:
            items.append(("verify", f"max abs err {row.max_abs_error:.3g}, max rel err {row.max_rel_error or 0:.3g}"))
        for k, v in items:
            if v and k in ("pattern source", "hook source"):
                parts.append(f"<tr><td><b>{e(k)}</b></td><td><a href='#' class='gb-srcline' data-src='{e(str(v))}'>"
                             f"{e(str(v))}</a></td></tr>")
            elif v:
                cls = " class='gb-exc'" if k == "exception" else ""
                parts.append(f"<tr><td><b>{e(k)}</b></td><td{cls}>{e(str(v))}</td></tr>")
        parts.append("</table>")
        clauses = row.detail.get("clauses") or row.detail.get("meet_requirements_clauses")
        if clauses:
            parts.append("<b>clauses</b><pre>" + e(json.dumps(clauses, indent=1, default=str)) + "</pre>")
        other = {k: v for k, v in row.detail.items() if k not in ("clauses", "meet_requirements_clauses")}
        if other:
            parts.append("<details><summary>detail</summary><pre>"
                         + e(json.dumps(other, indent=1, default=str)[:4000]) + "</pre></details>")
        for nid in row.target_ids[:1]:
            parts.append(f"<a href='#' data-goto='n{nid}'>show in graph</a>")
        return "".join(parts)

    def _pattern_graph(self, row: CandidateRow) -> ir.Graph | None:
        """The pattern graph of a candidate, if the record or the run can give it."""
        rec = row.record
        for attr in ("pattern_graph", "pattern"):
            value = getattr(rec, attr, None) if not isinstance(rec, dict) else rec.get(attr)
            g = getattr(value, "graph", value)
            with contextlib.suppress(TypeError):
                if g is not None:
                    return ir.as_graph(g)
        text = row.detail.get("pattern_text")
        if isinstance(text, str):
            with contextlib.suppress(Exception):
                return ir.parse_text(text)
        finder = getattr(self.run, "pattern_graph", None)
        if callable(finder):
            with contextlib.suppress(Exception):
                g = finder(row.pass_name, row.pattern_name)
                if g is not None:
                    return ir.as_graph(getattr(g, "graph", g))
        key = (row.pass_name, row.pattern_name)
        if key not in self._patterns:
            self._patterns[key] = self._rebuild_pattern(*key)
        return self._patterns[key]

    def _rebuild_pattern(self, pass_name: str, pattern_name: str) -> ir.Graph | None:
        """Ask the pass class for its patterns again (as the runtime does) and pick ``pattern_name``.

        Pattern definitions are side-effect free in GE's API, so calling them again is safe; any
        failure just means no pattern drawing.
        """
        desc = next((d for d in getattr(self.run, "passes", None) or [] if getattr(d, "pass_name", None) == pass_name),
                    None)
        if desc is None or getattr(desc, "cls", None) is None:
            return None
        try:
            from gebench.ge.passes import _bridge

            for pat in _bridge.patterns_of(desc.cls()):
                graph = getattr(pat, "_ir", None)
                if isinstance(graph, ir.Graph) and graph.name == pattern_name:
                    return graph
        except Exception:  # noqa: BLE001 - a pass that cannot rebuild its pattern just gets no drawing
            _log.debug("could not rebuild pattern %s of %s", pattern_name, pass_name, exc_info=True)
        return None

    def _draw_pattern(self, row: CandidateRow) -> None:
        """Draw the candidate's pattern beside the graph with bound nodes and the divergence marked."""
        pattern = self._pattern_graph(row)
        if pattern is None:
            self._clear_side()
            return
        view = build_view(pattern, fold_consts=False)
        svg = self._layout(view)
        self._side_graph = pattern
        bindings = row.detail.get("bindings") or {}
        diverged = row.detail.get("pattern_node_id")
        if diverged is None:
            diverged = row.detail.get("pattern_node")
        hl: dict[str, str] = {}
        if row.status != "STRUCTURAL_MISMATCH" and not bindings:
            # a full structural match binds every operator of the pattern
            bindings = {n.id: None for n in pattern.nodes() if n.op_type not in ("Data", "NetOutput")}
        for key in bindings:
            pid = self._pattern_node_id(pattern, key)
            if pid is not None:
                hl[f"n{pid}"] = "gb_bound"
        if diverged is not None:
            pid = self._pattern_node_id(pattern, diverged)
            if pid is not None:
                hl[f"n{pid}"] = "gb_diverge"
        with self.hold_sync():
            self.side_title = f"pattern {row.pattern_name}" + (" (near-miss)" if row.status == "STRUCTURAL_MISMATCH" else "")
            self.side_svg_gz = compress_svg(svg)
            self.side_highlight = hl
            self.side_kind = "pattern"

    @staticmethod
    def _pattern_node_id(pattern: ir.Graph, key: Any) -> int | None:
        if isinstance(key, int) and pattern.has_node_id(key):
            return key
        if isinstance(key, str):
            if key.isdigit() and pattern.has_node_id(int(key)):
                return int(key)
            node = pattern.find(key)
            return node.id if node is not None else None
        return None

    # ------------------------------------------------------------------------------------------ nodes
    def select_node(self, node: int | str) -> None:
        """Show the attrs and tensor descs of ``node`` (id or name) of the drawn graph."""
        graph = self._view_graph
        if graph is None:
            raise LookupError("nothing is drawn yet")
        nid = node if isinstance(node, int) else graph.node_by_name(node).id
        if self._view is not None and (self._view.overview or nid not in self._view.node_ids) and graph.has_node_id(nid):
            self._draw(self.snapshot, [nid], around=f"node {graph.node(nid).name}")
        if self.selected_node == nid:
            self._apply_node(nid)
        else:
            self.selected_node = nid

    def _on_selected_node(self, change: dict) -> None:
        if change["new"] >= 0:
            self._apply_node(change["new"])
        elif self._details_for is not None and self._details_for[0] == "node":
            self._details_for = None
            self.details_html = ""

    def _apply_node(self, nid: int) -> None:
        graph = self._view_graph
        self._details_for = ("node", nid)
        if graph is None or not graph.has_node_id(nid):
            self.details_html = f"<i>node #{nid} is not in snapshot {html.escape(self.snapshot)}</i>"
            return
        self.details_html = self._node_html(graph, graph.node(nid))
        self._mark_provenance(nid)

    def _node_html(self, graph: ir.Graph, node: ir.Node) -> str:
        e = html.escape
        parts = [f"<h4 class='gb-node-title'>{e(node.op_type)} <code>{e(node.name)}</code></h4>",
                 f"<div>id #{node.id}" + (f", created by <b>{e(node.provenance)}</b>" if node.provenance else "") + "</div>",
                 self._provenance_html(self._node_provenance(graph, node))]
        parts.append("<b>inputs</b><table>")
        for port, (desc, prod) in enumerate(zip(node.inputs, graph.producers(node), strict=True)):
            src = f"{prod[0].name}:{prod[1]}" if prod else "(unfed)"
            aname = node.input_names[port] or str(port)
            parts.append(f"<tr><td>{e(aname)}</td><td>{e(_desc_text(desc))}</td><td>&larr; {e(src)}</td></tr>")
        parts.append("</table><b>outputs</b><table>")
        for port, desc in enumerate(node.outputs):
            aname = node.output_names[port] or str(port)
            uses = ", ".join(f"{c.name}:{p}" for c, p in graph.uses(node, port))
            parts.append(f"<tr><td>{e(aname)}</td><td>{e(_desc_text(desc))}</td><td>&rarr; {e(uses)}</td></tr>")
        parts.append("</table><b>attrs</b><table class='gb-attrs'>")
        for k, v in node.attrs.items():
            parts.append(f"<tr><td>{e(k)}</td><td>{e(_fmt_attr(v))}</td></tr>")
        parts.append("</table>")
        if self.run is not None:
            parts.append(f"<button class='gb-btn gb-why' data-action='explain' data-node='{node.id}'>"
                         "why not here?</button>")
            if node.id in self._explain_cache:
                parts.append(self._explain_html(self._explain_cache[node.id]))
        return "".join(parts)

    def why_not(self, node: int | str) -> Any:
        """Ask the run which passes considered ``node`` and why each fired or not (``Run.explain``).

        The answer is shown in the details panel and returned.

        Raises:
            LookupError: there is no run (the workbench was opened without passes).
        """
        if self.run is None or not hasattr(self.run, "explain"):
            raise LookupError("no compile run to ask; open the workbench with passes=...")
        graph = self._view_graph
        nid = node if isinstance(node, int) else graph.node_by_name(node).id
        target: Any = graph.node(nid).name if graph is not None and graph.has_node_id(nid) else nid
        try:
            answer = self.run.explain(target)
            text_fn = getattr(self.run, "explain_text", None)
            shown = text_fn(target) if callable(text_fn) else answer
        except Exception as exc:  # the answer is shown to the user, whatever it is
            answer = shown = f"explain failed: {type(exc).__name__}: {exc}"
        self._explain_cache[nid] = shown
        self.selected_node = nid
        self._apply_node(nid)
        return answer

    def _explain_html(self, answer: Any) -> str:
        e = html.escape
        if isinstance(answer, str):
            return f"<div class='gb-explain'><b>why / why not</b><pre>{e(answer)}</pre></div>"
        if isinstance(answer, (list, tuple)) and answer and not isinstance(answer[0], (str, dict)):
            rows = candidate_rows(list(answer))
            lines = [f"{r.pass_name}: {r.status.lower()} \u2014 {r.reason}" for r in rows]
            return "<div class='gb-explain'><b>why / why not</b><pre>" + e("\n".join(lines)) + "</pre></div>"
        text = answer if isinstance(answer, str) else json.dumps(answer, indent=1, default=str)
        for attr in ("text", "summary"):
            if hasattr(answer, attr):
                value = getattr(answer, attr)
                text = value() if callable(value) else value
                break
        return f"<div class='gb-explain'><b>why / why not</b><pre>{e(str(text))}</pre></div>"

    def show_source(self, location: str, *, context: int = 8) -> str:
        """Show the lines around ``location`` (``path:line``, as in the ledger) in the details panel.

        Returns the HTML shown. Raises:
            FileNotFoundError: the file does not exist (any more).
            ValueError: ``location`` is not ``path:line``.
        """
        path, sep, line_text = location.rpartition(":")
        if not sep or not line_text.isdigit():
            raise ValueError(f"expected 'path:line', got {location!r}")
        line = int(line_text)
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
        lo, hi = max(1, line - context), min(len(lines), line + context)
        body = []
        for i in range(lo, hi + 1):
            text = html.escape(f"{i:5d}  {lines[i - 1]}")
            body.append(f"<span class='gb-hot'>{text}</span>" if i == line else text)
        shown = (f"<h4>{html.escape(Path(path).name)}:{line}</h4><div class='gb-path'>{html.escape(path)}</div>"
                 f"<div class='gb-source'>" + "\n".join(body) + "</div>")
        self._details_for = ("source", line)
        self.details_html = shown
        return shown

    # ------------------------------------------------------------------------------------------ overview
    def show_overview(self) -> None:
        """Draw the whole current snapshot: the root level of its hierarchy above ``threshold`` nodes, else
        every node."""
        self._level = 0
        self._draw(self.snapshot or self._default_snapshot())
        self._refresh_highlight()

    def _draw_level(self, label: str) -> None:
        """Draw the current level (``_level``) of snapshot ``label`` and restyle it."""
        self._draw(label)
        self._refresh_highlight()

    def open_group(self, group: int) -> None:
        """Expand group ``group`` of the drawn level into its own level (:meth:`open_level`); from an old-style
        overview, draw the nodes of one group (at most ``max_focus_nodes``).

        Raises:
            LookupError: no level or overview is shown, or it has no such group.
        """
        view = self._view
        if view is not None and view.level is not None:
            if group not in view.groups:
                raise LookupError(f"group {group} is not drawn in this level; its groups: {sorted(view.groups)}")
            self.open_level(group)
            return
        if view is None or not view.overview or group not in view.groups:
            raise LookupError(f"no overview group {group} is shown; call show_overview() first")
        members = view.groups[group]
        self._draw(self.snapshot, node_ids=members[: self.max_focus_nodes])
        self._refresh_highlight()
        more = len(members) - self.max_focus_nodes
        self.status_text = f"group of {len(members)} nodes" + (f" (first {self.max_focus_nodes} shown)" if more > 0 else "")

    # ------------------------------------------------------------------------------------------ search
    def _on_search(self, change: dict) -> None:
        self.find(change["new"])

    def find(self, query: str, *, limit: int = 200) -> list[ir.Node]:
        """Search the current snapshot and go to the first hit.

        ``query`` is a regular expression, case-insensitive, searched in node names, op types and attrs
        (``key=value``; a query that is not a valid expression is taken literally). The hits (at most
        ``limit``, topological order, an exact name first) are listed in :attr:`search_hits`, marked on
        the drawing, and walked with :meth:`search_step`. An empty query clears the search. O(nodes + attrs).
        """
        label = self.snapshot or self._default_snapshot()
        graph = self._graphs.get(label)
        self._sticky = {n: c for n, c in self._sticky.items() if c != "gb_found"}
        if graph is None or not query.strip():
            self._search_ids = []
            self.search_hits = {}
            self._refresh_highlight()
            return []
        found, total = find_nodes(graph, query, limit=limit)
        self._search_ids = [n.id for n, _ in found]
        self._sticky.update({n.id: "gb_found" for n, _ in found})
        self.search_hits = {"query": query, "snapshot": label, "total": total, "pos": -1,
                            "hits": [{"id": n.id, "name": n.name, "type": n.op_type, "where": w} for n, w in found]}
        more = f" (first {len(found)} listed)" if total > len(found) else ""
        if found:
            self.search_step(0, absolute=True)  # may draw the hit's neighbourhood: the message comes after
        else:
            self._refresh_highlight()
        self.status_text = f"{total} match{'es' if total != 1 else ''} for {query!r}{more}"
        return [n for n, _ in found]

    def search_step(self, delta: int = 1, *, absolute: bool = False) -> int:
        """Go to the next (``delta=1``) or previous (``-1``) search hit, wrapping around, or to hit number
        ``delta`` when ``absolute``; draws it and shows its details. Returns the node id.

        Raises:
            LookupError: there are no hits.
        """
        ids = self._search_ids
        if not ids:
            raise LookupError("no search hits; search first (wb.find)")
        pos = int(self.search_hits.get("pos", -1))
        pos = (delta if absolute else pos + delta) % len(ids)
        self.search_hits = {**self.search_hits, "pos": pos}
        label = self.search_hits.get("snapshot") or self.snapshot
        if label != self.snapshot and label in self._graphs:
            self._draw(label, [ids[pos]])
        self.select_node(ids[pos])
        self._refresh_highlight()
        return ids[pos]

    # ------------------------------------------------------------------------------------------ diffs
    def _on_diff_mode(self, change: dict) -> None:
        self._apply_diff()

    def show_diff(self, kind: str = "pass", layout: str = "side") -> GraphDiff:
        """Show a before/after diff and return it.

        Args:
            kind: ``"pass"`` (the selected pass's rewrites), ``"candidate"`` (the selected rewrite) or
                ``"stage"`` (the current snapshot against the next one).
            layout: ``"side"`` (before in the main pane, after beside it) or ``"overlay"`` (one drawing
                of both, removed / added / changed nodes coloured).

        Raises:
            ValueError: unknown kind or layout, or nothing selected to diff.
        """
        if kind not in ("pass", "candidate", "stage") or layout not in ("side", "overlay"):
            raise ValueError(f"diff kind must be pass/candidate/stage and layout side/overlay, got {kind!r}/{layout!r}")
        mode = f"{kind}:{layout}"
        if self.diff_mode == mode:
            return self._apply_diff()
        self.diff_mode = mode
        return self._last_diff

    def _diff_pair(self, kind: str) -> tuple[str, str, GraphDiff]:
        labels = list(self._graphs)
        if kind == "stage":
            before, after = self._stage_pair()
            return before, after, diff_graphs(self._graphs[before], self._graphs[after])
        if kind == "candidate":
            if self.selected_candidate < 0:
                raise ValueError("select a candidate first (a rewrite diff needs one)")
            rows = [self._rows[self.selected_candidate]]
        else:
            if not self.selected_pass:
                raise ValueError("select a pass first (a pass diff needs one)")
            rows = [r for r in self.pass_rows(self.selected_pass) if r.status == "REPLACED"]
        removed = list(dict.fromkeys(i for r in rows for i in r.removed_ids))
        added = list(dict.fromkeys(i for r in rows for i in r.added_ids))
        ids = set(removed) | {i for r in rows for i in r.target_ids}
        before = self._snapshot_for(ids) if ids else (self.snapshot or labels[0])
        after = labels[-1]
        for label in labels[labels.index(before) + 1:]:
            if added and all(self._graphs[label].has_node_id(a) for a in added):
                after = label
                break
        b_graph, a_graph = self._graphs[before], self._graphs[after]
        changed = {}
        full = diff_graphs(b_graph, a_graph)
        near = set(k_hop(a_graph, [a for a in added if a_graph.has_node_id(a)], k=1, max_nodes=10_000))
        for nid, why in full.changed.items():
            if nid in near:
                changed[nid] = why
        return before, after, GraphDiff(removed=removed, added=added, changed=changed)

    def _stage_pair(self) -> tuple[str, str]:
        """The snapshots around the selected pass's stage (before it ran, after it), or without a selected
        pass (or when the run has no such snapshots) the current snapshot and the next one."""
        labels = list(self._graphs)
        stage = self._pass_stage(self.selected_pass) if self.selected_pass else ""
        if stage in STAGE_ORDER:
            k = STAGE_ORDER.index(stage)
            after = DUMP_SUFFIXES[stage]
            earlier = [DUMP_SUFFIXES[s] for s in STAGE_ORDER[:k] if DUMP_SUFFIXES[s] in self._graphs]
            before = earlier[-1] if earlier else (PRE_RUN_SUFFIX if PRE_RUN_SUFFIX in self._graphs else labels[0])
            if after in self._graphs and before in self._graphs:
                return before, after
        before = self.snapshot if self.snapshot in self._graphs else labels[0]
        return before, labels[min(labels.index(before) + 1, len(labels) - 1)]

    def _pass_stage(self, name: str) -> str:
        rows = self._table.rows_of(name)
        if len(rows):
            return self._rows[int(rows[0])].stage
        return next((str(stage) for p, stage in self._known_passes(self.run) if p == name), "") if self.run else ""

    def _clear_diff(self) -> None:
        """Take any diff off the screen: the main pane shows the plain snapshot again (a merged overlay
        or a "before" drawing is replaced), the side pane its candidate's pattern or nothing."""
        drawn = self._diff_drawn
        self._diff_drawn = False
        self._clear_provenance_marks()
        self._sticky = {n: c for n, c in self._sticky.items() if not c.startswith("gb_diff_")}
        self._last_diff = GraphDiff()
        with self.hold_sync():
            self.diff_info = {}
            self.pane_title = ""
            if self.status_text == self._diff_status:
                self.status_text = ""
            if self.side_kind == "diff":
                self._clear_side()
        if drawn and self.snapshot in self._graphs:
            sel = self.selected_candidate
            seeds = list(self._rows[sel].target_ids) if 0 <= sel < len(self._rows) else (
                [self.selected_node] if self.selected_node >= 0 else self._pass_seeds(self.selected_pass))
            self._draw(self.snapshot, seeds)
        if 0 <= self.selected_candidate < len(self._rows) and self.side_kind != "pattern":
            self._draw_pattern(self._rows[self.selected_candidate])
        if self.snapshot in self._graphs:
            self._refresh_highlight()

    def _apply_diff(self) -> GraphDiff:
        """Draw the diff ``diff_mode`` asks for (or none), so that header, panes and ``diff_info`` agree."""
        mode = self.diff_mode
        self._leave_step_view()  # a diff replaces a rewrite step's drawing
        if not mode:
            self._clear_diff()
            return GraphDiff()
        kind, layout = mode.split(":")
        try:
            before, after, diff = self._diff_pair(kind)
        except ValueError as exc:
            self._clear_diff()
            self.diff_info = {"mode": mode, "error": str(exc)}
            self.status_text = self._diff_status = str(exc)
            return GraphDiff()
        self._last_diff = diff
        self._clear_provenance_marks()
        b_graph, a_graph = self._graphs[before], self._graphs[after]
        focus_ids = set(diff.removed) | set(diff.added) | set(diff.changed)
        big = max(len(b_graph), len(a_graph)) > self.threshold
        if layout == "overlay":
            ids_b = k_hop(b_graph, focus_ids, k=self.hops, max_nodes=self.max_focus_nodes) if big else None
            ids_a = k_hop(a_graph, focus_ids, k=self.hops, max_nodes=self.max_focus_nodes) if big else None
            fold = None if not big else True
            view = _merge_views(build_view(b_graph, node_ids=ids_b, fold_consts=fold),
                                build_view(a_graph, node_ids=ids_a, fold_consts=fold))
            svg = self._layout(view)
            self._view, self._view_graph, self._view_svg = view, a_graph, svg
            self.svg_gz = compress_svg(svg)
            self.view_info = {"snapshot": f"{before} \u2192 {after}", "drawn": len(view.nodes),
                              "total": len(a_graph), "focused": view.focused, "bytes": len(self.svg_gz)}
            self._clear_side()
            self.pane_title = f"overlay: {before} \u2192 {after}"
            side_drawn = 0
        else:
            self._draw(before, focus_ids)
            a_view = self._make_view(a_graph, focus_ids)
            a_svg = self._layout(a_view)
            side = {a_view.element_of[n]: "gb_diff_added" for n in diff.added if n in a_view.element_of}
            side.update({a_view.element_of[n]: "gb_diff_changed" for n in diff.changed if n in a_view.element_of})
            with self.hold_sync():
                self.side_title = f"after: {after}"
                self.side_svg_gz = compress_svg(a_svg)
                self.side_highlight = side
                self.side_kind = "diff"
            self.pane_title = f"before: {before}"
            self._side_graph = a_graph
            side_drawn = len(a_view.nodes)
        self._diff_drawn = True
        sticky = {n: c for n, c in self._sticky.items() if not c.startswith("gb_diff_")}
        sticky.update({n: "gb_diff_removed" for n in diff.removed})
        sticky.update({n: "gb_diff_changed" for n in diff.changed})
        if layout == "overlay":
            sticky.update({n: "gb_diff_added" for n in diff.added})
        self._sticky = sticky
        self._refresh_highlight()
        text = f"{kind} diff {before} \u2192 {after}: {diff.summary()}"
        self.diff_info = {"mode": mode, "kind": kind, "layout": layout, "before": before, "after": after,
                          "summary": diff.summary(), "text": text, "drawn": len(self._view.nodes) if self._view else 0,
                          "side_drawn": side_drawn}
        self.status_text = self._diff_status = text
        return diff

    # ------------------------------------------------------------------------------------------ run / reload
    def _sites(self) -> set[tuple[str, tuple[str, ...]]]:
        return {(r.pass_name, tuple(sorted(r.target_names))) for r in self._rows if r.status == "REPLACED"}

    def rerun(self, *, already_reloaded: Any = None, full: bool = False) -> list[dict[str, Any]]:
        """Reload changed pass files, run the affected passes again, and report match sites gained and lost.

        Only the stages from the earliest stage holding an added, changed or removed pass on are run,
        starting from the previous run's cached snapshot before that stage; the earlier stages' records
        and snapshots are kept (``last_rerun`` says what ran). Everything runs again from the original
        graph when ``full``, when a pass file fails to load (or did before), when the change is in the
        first stage, or when no pass changed.

        Returns:
            ``[{"pass": name, "gained": [[node names]...], "lost": [...]}, ...]`` for passes whose
            replaced sites changed (also set as ``reload_report`` and shown in the pass list).

        Raises:
            LookupError: the workbench was opened on a finished run or without passes.
        """
        if self._passes is None:
            raise LookupError("this workbench has no passes to run; open it with passes=...")
        old = self._sites()
        if already_reloaded is not None:
            self.last_reload = already_reloaded
            self._patterns.clear()
            changed = [Path(f).name for f in already_reloaded.reloaded_files]
        else:
            changed = self._reload_pass_files()
        report = self.last_reload
        self._compile(None if full or report is None else report)
        new = self._sites()
        report: dict[str, dict[str, Any]] = {}
        for name, site in sorted(new - old):
            report.setdefault(name, {"pass": name, "gained": [], "lost": []})["gained"].append(list(site))
        for name, site in sorted(old - new):
            report.setdefault(name, {"pass": name, "gained": [], "lost": []})["lost"].append(list(site))
        self.reload_report = list(report.values())
        gained = {n for r in report.values() for s in r["gained"] for n in s}
        lost = {n for r in report.values() for s in r["lost"] for n in s}
        graph = self._view_graph
        sticky: dict[int, str] = {}
        if graph is not None:
            for name in gained | lost:
                node = graph.find(name)
                if node is not None:
                    sticky[node.id] = "gb_gained" if name in gained else "gb_lost"
        self._sticky = {**{n: c for n, c in self._sticky.items() if c.startswith("gb_diff_")}, **sticky}
        self._refresh_highlight()
        n_gained = sum(len(r["gained"]) for r in report.values())
        n_lost = sum(len(r["lost"]) for r in report.values())
        files = f"reloaded {', '.join(changed)}; " if changed else ""
        errors = getattr(self.last_reload, "errors", None) or []
        if errors:
            files += "kept the last good version of " + "; ".join(str(e) for e in errors) + "; "
        ran = self.last_rerun or {}
        since = f" (re-ran {', '.join(ran['stages'])} from {ran['from_snapshot']})" if ran.get("from_snapshot") else ""
        self.status_text = f"{files}{n_gained} site(s) gained, {n_lost} lost{since}"
        return self.reload_report

    @staticmethod
    def _is_pass_objects(passes: Any) -> bool:
        """True when ``passes`` lists classes/descriptors rather than files (nothing to reload)."""
        if passes is None or isinstance(passes, (str, Path)):
            return False
        if hasattr(passes, "reload"):
            return False
        return any(not isinstance(p, (str, Path)) for p in passes)

    def _reload_pass_files(self) -> list[str]:
        """Re-import changed pass files (the engine's hot reload); returns the re-executed files.

        A file whose new version fails to import keeps its last good version; the error is shown in
        the status line and kept in ``last_reload``.
        """
        self.last_reload = None
        if self._pass_set is None:
            return []
        report = self._pass_set.reload()
        self.last_reload = report
        self._patterns.clear()
        return [Path(f).name for f in report.reloaded_files]

    last_reload: Any = None

    def watch(self, *, debounce_ms: int = 200) -> None:
        """Re-run the passes whenever a pass file is saved (a background watcher; :meth:`unwatch` stops it).

        Raises:
            LookupError: the passes are not files.
        """
        if self._pass_set is None:
            raise LookupError("hot reload needs pass files or directories (passes=[...paths])")
        if self._watcher is not None:
            return

        def on_change(report: Any) -> None:
            if report:
                self.rerun(already_reloaded=report)

        self._watcher = self._pass_set.watch(on_change, debounce_ms=debounce_ms)

    def unwatch(self) -> None:
        """Stop the watcher started by :meth:`watch`."""
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None

    def verify(self) -> Any:
        """Run the numerical equivalence check of each rewrite (``Run.verify``) and show the max errors as
        badges in the candidate table; returns the run's verify report."""
        if self.run is None or not hasattr(self.run, "verify"):
            raise LookupError("this run cannot verify (no Run.verify); install the reference executor")
        with self._progress("verifying rewrites"):
            report = self.run.verify()
        self.last_verify = report
        self._set_rows(candidate_rows(self.run.ledger))
        self._send_table()
        rows = [r.to_row() for r in self._rows if r.max_abs_error is not None]
        flagged = [r for r in rows if not r["verify"]["ok"]]
        self.status_text = f"verified {len(rows)} rewrite(s); {len(flagged)} change results"
        return report

    last_verify: Any = None

    # ------------------------------------------------------------------------------------------ exports
    def export_svg(self, path: str | Path | None = None) -> Path:
        """Write the current drawing as SVG (standalone: styles for the highlights included)."""
        path = Path(path) if path is not None else self.export_dir / f"{self.snapshot or 'graph'}.svg"
        path.parent.mkdir(parents=True, exist_ok=True)
        svg = self._view_svg
        style = "<style>" + "\n".join(line for line in CSS.splitlines() if line.startswith("g.")) + "</style>"
        for el, cls in self.highlight.items():
            svg = svg.replace(f'id="{el}" class="', f'id="{el}" class="{cls} ', 1)
        svg = svg.replace("<g id=\"gb_graph\"", style + "<g id=\"gb_graph\"", 1)
        write_text_atomically(path, svg)
        self.status_text = f"wrote {path}"
        return path

    def export_report(self, path: str | Path | None = None) -> Path:
        """Write ``Run.report()`` as JSON."""
        if self.run is None:
            raise LookupError("no run to report; open the workbench with passes=...")
        path = Path(path) if path is not None else self.export_dir / "report.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomically(path, json.dumps(self.run.report(), indent=1, default=str))
        self.status_text = f"wrote {path}"
        return path

    def export_dumps(self, directory: str | Path | None = None) -> list[Path]:
        """Write every snapshot as GE dumps (``ge_proto_*.txt`` / ``ge_onnx_*.pbtxt``, GE's file names).

        Raises:
            LookupError: there is no run.
        """
        if self.run is None:
            raise LookupError("no run to dump; open the workbench with passes=...")
        from gebench.api import write_dumps

        directory = Path(directory) if directory is not None else self.export_dir / "dumps"
        with self._progress("writing GE dumps"):
            paths = [Path(p) for p in write_dumps(self.run, directory)]
        self.status_text = f"wrote {len(paths)} dump file(s) to {directory}"
        return paths

    # ------------------------------------------------------------------------------------------ messages
    def _on_message(self, _widget: Any, content: dict, _buffers: Any) -> None:
        """Handle one front-end request ``{"action": ..., "seq": n, ...}``.

        Requests are handled one at a time in the order sent. After the handler (even a failing one) ``seq``
        is set to the request's ``seq``: the front end renders what changed once that answer is in and
        drops older answers (its own request counter only grows).
        """
        if not isinstance(content, dict):
            return
        seq = content.get("seq")
        # quick actions send all their trait changes and the seq in one message (one redraw in the page);
        # slow ones (runs, layouts) do not, so that their busy status shows while they run
        quick = content.get("action") in _QUICK_ACTIONS
        with self.hold_sync() if quick else contextlib.nullcontext():
            try:
                self._handle(content)
            finally:
                if isinstance(seq, int) and seq > self.seq:
                    self.seq = seq

    def _handle(self, content: dict) -> None:
        action = content.get("action")
        if action in ("select_pass", "select_candidate", "select_node", "search_step"):
            self._remember()  # a click is a navigation step: Back returns to what was selected before
        handlers = {
            "run": self.rerun,
            "verify": self.verify,
            "export_svg": self.export_svg,
            "export_report": self.export_report,
            "export_dumps": self.export_dumps,
            "export_repro": self.export_repro,
            "explain": lambda: self.why_not(int(content.get("node", self.selected_node))),
            "overview": self.show_overview,
            "open_group": lambda: self.open_group(int(content.get("group", -1))),
            "open_level": lambda: self.open_level(int(content.get("group", 0))),
            "expand_group": lambda: self._expand_from_page(int(content.get("group", -1))),
            "collapse_group": lambda: self.collapse_group(int(content.get("group", -1))),
            "level_up": self.level_up,
            "show_source": lambda: self.show_source(str(content.get("src", ""))),
            "select_pass": lambda: self.select_pass(str(content.get("name", self.selected_pass))),
            "select_candidate": lambda: self.select_candidate(int(content.get("index", self.selected_candidate))),
            "select_node": lambda: self.select_node(int(content.get("node", self.selected_node))),
            "select_snapshot": lambda: self.show_snapshot(str(content.get("label", self.snapshot))),
            "set_diff": lambda: setattr(self, "diff_mode", str(content.get("mode", ""))),
            "find": lambda: self.find(str(content.get("query", ""))),
            "search_step": lambda: self.search_step(int(content.get("delta", 1)), absolute=bool(content.get("absolute"))),
            "table": lambda: self.set_table_query(content.get("statuses") or (), str(content.get("sort", "i")),
                                                  bool(content.get("desc", False))),
            "rows": lambda: self._send_page(content),
            "prefetch": lambda: self._send_prefetch(content),
            "step_candidate": lambda: self.step_candidate(int(content.get("delta", 1))),
            "next_rewrite": lambda: self.next_rewrite(int(content.get("delta", 1))),
            "back": self.back,
            "expand": lambda: self.expand(int(content.get("node", -1))),
            "names": lambda: self._send_names(content),
            "select_side_node": lambda: self.select_side_node(int(content.get("node", -1))),
            "step_rewrite": lambda: self.step_rewrite(int(content.get("k", 0))),
            "leave_step": self.leave_rewrite_step,
        }
        fn = handlers.get(action)
        if fn is None:
            _log.debug("workbench: ignoring message %r", content)
            return
        try:
            fn()
        except Exception as exc:  # shown in the status line: the user clicked a button
            _log.debug("workbench action %s failed", action, exc_info=True)
            self.status_text = f"{action}: {type(exc).__name__}: {exc}"

    def _expand_from_page(self, group: int) -> None:
        """The page's expand (a click on a group box, or ``e``): group ``group`` in place; without a group (``e``
        with the pointer over no box), the way down to the selected node (:meth:`reveal_node`)."""
        if group >= 0:
            self.expand_group(group)
        elif self.selected_node >= 0:
            self.reveal_node(self.selected_node)
        else:
            raise LookupError("point at a group box, or select a node, to expand")

    def _send_names(self, content: dict) -> None:
        """Full names of drawn nodes (``n<id>`` element ids) whose labels the drawing shortened."""
        graph = self._side_graph if content.get("pane") == "side" else self._view_graph
        names: dict[str, str] = {}
        if graph is not None:
            for el in list(content.get("ids") or [])[:5000]:
                if isinstance(el, str) and el[:1] == "n" and el[1:].isdigit() and graph.has_node_id(int(el[1:])):
                    node = graph.node(int(el[1:]))
                    names[el] = f"{node.op_type} {node.name}"
        self.send({"reply": "names", "pane": content.get("pane", "main"), "names": names})

    def _send_page(self, content: dict) -> None:
        """Answer a page request for the table version it names (an older version gets no answer)."""
        if int(content.get("version", -1)) != self._table_version:
            return
        page = self.table_page(int(content.get("offset", 0)), int(content.get("limit", FIRST_PAGE)))
        self.send({"reply": "rows", **page})

    # ------------------------------------------------------------------------------------------ navigation
    def select(self, *, node: int | str | None = None, candidate: int | None = None,
               pass_name: str | None = None) -> None:
        """Go to a pass, a candidate (ledger index) or a node (id or name) from Python, as a click would:
        the widget draws it, marks it and shows its details. Give one of them.

        Raises:
            ValueError: none or more than one given. KeyError/IndexError/LookupError: no such pass,
            candidate or node.
        """
        given = [k for k, v in (("node", node), ("candidate", candidate), ("pass_name", pass_name)) if v is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of node=, candidate=, pass_name= (got {', '.join(given) or 'none'})")
        self._remember()
        if pass_name is not None:
            self.select_pass(pass_name)
        elif candidate is not None:
            self.select_candidate(int(candidate))
        else:
            self.select_node(node)  # type: ignore[arg-type]

    def _remember(self) -> None:
        """Push the current selection on the back stack (at most 100 kept)."""
        state = (self.selected_pass, self.selected_candidate, self.selected_node)
        if not self._history or self._history[-1] != state:
            self._history.append(state)
            del self._history[:-100]

    def back(self) -> bool:
        """Return to the selection before the last navigation (:meth:`select`, :meth:`step_candidate`,
        :meth:`next_rewrite`, clicks). Returns False when there is nothing to go back to."""
        current = (self.selected_pass, self.selected_candidate, self.selected_node)
        while self._history and self._history[-1] == current:
            self._history.pop()
        if not self._history:
            self.status_text = "nothing to go back to"
            return False
        pass_name, cand, node = self._history.pop()
        if cand >= 0 and cand < len(self._rows):
            self.select_candidate(cand)
        elif pass_name:
            self.select_pass(pass_name)
        if node >= 0 and cand < 0 and self._view_graph is not None and self._view_graph.has_node_id(node):
            self.select_node(node)
        return True

    def step_candidate(self, delta: int = 1) -> int:
        """Select the next (``delta=1``) or previous (``-1``) candidate in the table's order (filter and
        sort as shown); from no selection, the first or the last. Returns the ledger index, or -1 when the
        table is empty. O(rows of the pass) numpy."""
        order = self._order
        if not len(order):
            return -1
        pos = self._table.position(order, self.selected_candidate) if self.selected_candidate >= 0 else -1
        if pos < 0:
            pos = 0 if delta >= 0 else len(order) - 1
        else:
            pos = min(max(pos + delta, 0), len(order) - 1)
        self._remember()
        index = int(order[pos])
        self.select_candidate(index)
        return index

    def next_rewrite(self, delta: int = 1) -> int:
        """Select the next (``delta=1``) or previous (``-1``) replaced candidate in ledger order, across
        passes, wrapping around. Returns its ledger index, or -1 when the run rewrote nothing. O(rows)."""
        replaced = [r.index for r in self._rows if r.status == "REPLACED"]
        if not replaced:
            self.status_text = "this run rewrote nothing"
            return -1
        cur = self.selected_candidate
        if delta >= 0:
            index = next((i for i in replaced if i > cur), replaced[0])
        else:
            index = next((i for i in reversed(replaced) if i < cur), replaced[-1]) if cur >= 0 else replaced[-1]
        self._remember()
        self.select_candidate(index)
        return index

    def expand(self, node: int) -> None:
        """Grow the focused view outward from ``node`` (one with hidden edges): its neighbours outside the
        drawing are added (at most ``4 * max_focus_nodes`` nodes drawn). Lays the larger view out.

        Raises:
            LookupError: the drawing is not a focused view of nodes, or ``node`` is not in it.
        """
        view, graph = self._view, self._view_graph
        if view is None or graph is None or view.overview or node not in view.node_ids:
            raise LookupError(f"node {node} is not in a focused view; nothing to expand")
        cap = 4 * self.max_focus_nodes
        grown = k_hop(graph, [node], k=1, max_nodes=cap)
        ids = set(view.node_ids) | grown
        if len(ids) > cap:
            ids = set(view.node_ids) | set(list(grown)[: max(0, cap - len(view.node_ids))])
        added = len(ids) - len(view.node_ids)
        self._draw(self.snapshot, node_ids=sorted(ids))
        self._refresh_highlight()
        self.status_text = f"expanded {graph.node(node).name}: {added} more node(s)"

    def __repr__(self) -> str:
        status = f", run {getattr(self.run, 'status', '?')}" if self.run is not None else ""
        n = len(self._view_graph) if self._view_graph is not None else 0
        return f"<Workbench {self.title or 'graph'!r}: {n} nodes{status}, {len(self._rows)} ledger records>"

    def bytes_per_node(self) -> float:
        """Bytes of the current drawing sent to the front end, per drawn node."""
        n = len(self._view.nodes) if self._view is not None else 0
        return len(self.svg_gz) / n if n else 0.0
