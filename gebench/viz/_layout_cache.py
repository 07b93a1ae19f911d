"""A cache of layouts keyed by the exact DOT source (so, per snapshot and per view), and the choice of engine.

Layouts are the only expensive step of drawing; highlighting never needs a new one. The cache is an
in-memory LRU, optionally backed by a directory so re-running a notebook does not lay out again.

:meth:`LayoutCache.layout` never fails and never runs long: graphviz ``dot`` lays out views of at most
``graphviz_max_nodes`` nodes within ``timeout`` seconds; a larger view, a layout that runs out of time, or a
missing or failing graphviz gets the layered layout of :mod:`._layered` instead (fast-sugiyama, else a simple
longest-path layout), drawn with the same SVG element ids.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import OrderedDict
from pathlib import Path

from gebench._atomic import write_text_atomically

from ._dot import GraphView, LayoutError, render_svg, view_to_dot
from ._layered import layered_svg

__all__ = ["LayoutCache"]

_log = logging.getLogger(__name__)


class LayoutCache:
    """LRU of ``DOT source hash -> SVG``.

    Args:
        capacity: entries kept in memory.
        directory: optional directory for persistent entries (``<sha1>.svg``); created on first write.
        timeout: seconds graphviz may take for one layout; :meth:`layout` then uses the layered layout,
            :meth:`svg` raises :class:`LayoutTimeout`.
        graphviz_max_nodes: views with more drawn nodes skip graphviz in :meth:`layout`.

    Attributes (counters for tests and benchmarks): ``hits``, ``misses``, ``nodes_laid_out`` (drawn nodes of
    every layout made), ``engines`` (layouts made per engine: ``"dot"``, ``"sugiyama"``, ``"simple"``),
    ``last_engine``, ``last_layout_seconds``.
    """

    def __init__(self, capacity: int = 64, *, directory: str | Path | None = None, timeout: float = 5.0,
                 graphviz_max_nodes: int = 600) -> None:
        self.capacity = capacity
        self.directory = Path(directory) if directory is not None else None
        self.timeout = timeout
        self.graphviz_max_nodes = graphviz_max_nodes
        self._entries: OrderedDict[str, str] = OrderedDict()
        self.hits = 0
        self.misses = 0
        self.nodes_laid_out = 0
        self.engines: dict[str, int] = {}
        self.last_engine = ""
        self.last_layout_seconds = 0.0

    def layout(self, view: GraphView) -> str:
        """SVG of ``view``, laid out only on a miss, by graphviz when the view is small enough and graphviz
        answers within ``timeout``, else by the layered layout. Never raises for a view. Cost on a miss:
        graphviz's time (at most ``timeout``) plus, when it is replaced, the layered layout's."""
        dot = view_to_dot(view)
        k = self.key(dot)
        hit = self._lookup(k)
        if hit is not None:
            return hit
        self.misses += 1
        start = time.perf_counter()
        svg = None
        if len(view.nodes) <= self.graphviz_max_nodes:
            try:
                svg = render_svg(dot, timeout=self.timeout)
                engine = "dot"
            except LayoutError as exc:  # LayoutTimeout included: the layered layout takes over
                _log.info("graphviz did not lay out %d nodes (%s); using the layered layout", len(view.nodes), exc)
        if svg is None:
            svg, engine = layered_svg(view)
        self.last_layout_seconds = time.perf_counter() - start
        self.last_engine = engine
        self.engines[engine] = self.engines.get(engine, 0) + 1
        self.nodes_laid_out += len(view.nodes)
        _log.debug("laid out %d nodes with %s in %.2f s", len(view.nodes), engine, self.last_layout_seconds)
        self._save(k, svg)
        return svg

    def _lookup(self, k: str) -> str | None:
        hit = self._entries.get(k)
        if hit is not None:
            self._entries.move_to_end(k)
            self.hits += 1
            return hit
        if self.directory is not None:
            path = self.directory / f"{k}.svg"
            if path.is_file():
                svg = path.read_text()
                self._store(k, svg)
                self.hits += 1
                return svg
        return None

    def _save(self, k: str, svg: str) -> None:
        self._store(k, svg)
        if self.directory is not None:
            self.directory.mkdir(parents=True, exist_ok=True)
            # other processes may share the cache folder: they see the whole file or none
            write_text_atomically(self.directory / f"{k}.svg", svg)

    @staticmethod
    def key(dot_source: str) -> str:
        return hashlib.sha1(dot_source.encode()).hexdigest()

    def __contains__(self, dot_source: str) -> bool:
        return self.key(dot_source) in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def svg(self, dot_source: str) -> str:
        """SVG for ``dot_source``, laying it out only on a miss.

        Raises:
            LayoutError / LayoutTimeout: from :func:`render_svg` on a miss.
        """
        k = self.key(dot_source)
        hit = self._lookup(k)
        if hit is not None:
            return hit
        self.misses += 1
        start = time.perf_counter()
        svg = render_svg(dot_source, timeout=self.timeout)
        self.last_layout_seconds = time.perf_counter() - start
        self.last_engine = "dot"
        self.engines["dot"] = self.engines.get("dot", 0) + 1
        _log.debug("laid out %d bytes of DOT in %.2f s", len(dot_source), self.last_layout_seconds)
        self._save(k, svg)
        return svg

    def _store(self, k: str, svg: str) -> None:
        self._entries[k] = svg
        self._entries.move_to_end(k)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)
