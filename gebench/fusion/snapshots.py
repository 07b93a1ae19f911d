"""The graphs a run keeps at GE's dump points, built only when someone reads them.

A run opens a :class:`~gebench.ir.GraphJournal` on its graph at each dump point instead of copying the graph:
that costs O(what the later stages change), not O(graph). :class:`SnapshotMap` maps GE's dump names to those
journals (or to graphs a caller handed over) and turns a journal into a full :class:`~gebench.ir.Graph` on its
first read, O(n + e) once, cached. Two dump names that share one journal (a stage that changed nothing) share
the graph it builds.

A journal follows its live graph until it is built or the map is collected: the map closes the journals it
holds when it goes (:meth:`~gebench.ir.GraphJournal.close`), so a graph that outlives its run (``run.graph`` kept,
or the caller's graph ``compile`` copied) does not keep recording pre-images for snapshots nobody can read.

With the environment variable ``GEBENCH_CHECK_JOURNALS=1`` every dump point also keeps an eager copy, and the
first read of a journal compares the graph it builds with that copy (IR text form) and raises
:class:`~gebench.ir.GraphError` on any difference. The test suite runs with it on; it doubles the run's copies.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterator, Mapping

from gebench import ir

__all__ = ["SnapshotMap", "checking_journals"]


def checking_journals() -> bool:
    """Whether ``GEBENCH_CHECK_JOURNALS`` asks for eager copies to check journals against."""
    return os.environ.get("GEBENCH_CHECK_JOURNALS", "") not in ("", "0")


class SnapshotMap(Mapping[str, ir.Graph]):
    """Dump name -> the graph at that dump point, in the order the points were passed (a read-only mapping for
    users; the runtime adds entries with :meth:`keep`). Reading an entry may build it (see the module docstring)."""

    def __init__(self) -> None:
        self._entries: dict[str, ir.Graph | ir.GraphJournal] = {}
        self._checks: dict[int, ir.Graph] = {}

    def keep(self, name: str, entry: ir.Graph | ir.GraphJournal) -> None:
        """Record ``entry`` (a graph, or a journal opened at this dump point) under ``name``."""
        if isinstance(entry, ir.GraphJournal) and not any(e is entry for e in self._entries.values()):
            if checking_journals():
                assert entry.graph is not None
                self._checks[id(entry)] = entry.graph.copy()
            closer = weakref.finalize(self, entry.close)  # a built journal is closed already: a no-op then
            closer.atexit = False
        self._entries[name] = entry

    def __getitem__(self, name: str) -> ir.Graph:
        entry = self._entries[name]
        if isinstance(entry, ir.Graph):
            return entry
        graph = entry.materialize()
        expected = self._checks.pop(id(entry), None)
        if expected is not None:
            diff = ir.first_difference(graph, expected)
            if diff is not None:
                raise ir.GraphError(f"snapshot {name!r}: the journal built a graph that differs from the copy "
                                    f"taken at the same dump point (a change skipped Graph.touch): {diff}")
        for key, other in self._entries.items():
            if other is entry:
                self._entries[key] = graph
        return graph

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __contains__(self, name: object) -> bool:  # Mapping's would read (and so build) the entry
        return name in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def node_count(self, name: str) -> int:
        """Direct nodes of the graph at dump point ``name``, without building it. O(n)."""
        entry = self._entries[name]
        return len(entry) if isinstance(entry, ir.Graph) else entry.node_count()

    def graph_name(self, name: str) -> str:
        """The graph name at dump point ``name``, without building it. O(1)."""
        return self._entries[name].name

    def pending(self) -> int:
        """How many entries are still journals (not built yet)."""
        return sum(1 for e in self._entries.values() if isinstance(e, ir.GraphJournal))

    def __repr__(self) -> str:
        return f"<SnapshotMap {list(self._entries)} ({self.pending()} not built yet)>"
