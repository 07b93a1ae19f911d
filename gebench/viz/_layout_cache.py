"""A cache of graphviz layouts keyed by the exact DOT source (so, per snapshot and per view).

Layouts are the only expensive step of drawing; highlighting never needs a new one. The cache is an
in-memory LRU, optionally backed by a directory so re-running a notebook does not lay out again.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import OrderedDict
from pathlib import Path

from gebench._atomic import write_text_atomically

from ._dot import render_svg

__all__ = ["LayoutCache"]

_log = logging.getLogger(__name__)


class LayoutCache:
    """LRU of ``DOT source hash -> SVG``.

    Args:
        capacity: entries kept in memory.
        directory: optional directory for persistent entries (``<sha1>.svg``); created on first write.
        timeout: the time limit passed to :func:`render_svg` for each layout.
    """

    def __init__(self, capacity: int = 64, *, directory: str | Path | None = None, timeout: float = 30.0) -> None:
        self.capacity = capacity
        self.directory = Path(directory) if directory is not None else None
        self.timeout = timeout
        self._entries: OrderedDict[str, str] = OrderedDict()
        self.hits = 0
        self.misses = 0
        self.last_layout_seconds = 0.0

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
        self.misses += 1
        start = time.perf_counter()
        svg = render_svg(dot_source, timeout=self.timeout)
        self.last_layout_seconds = time.perf_counter() - start
        _log.debug("laid out %d bytes of DOT in %.2f s", len(dot_source), self.last_layout_seconds)
        self._store(k, svg)
        if self.directory is not None:
            self.directory.mkdir(parents=True, exist_ok=True)
            # other processes may share the cache folder: they see the whole file or none
            write_text_atomically(self.directory / f"{k}.svg", svg)
        return svg

    def _store(self, k: str, svg: str) -> None:
        self._entries[k] = svg
        self._entries.move_to_end(k)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)
