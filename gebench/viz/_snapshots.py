"""The graphs of a run, built only when the workbench shows or searches them.

A compile run keeps its dump points as journals (``Run.ir_snapshots``, a ``SnapshotMap``) that become full graphs
on their first read, O(n + e) each. The workbench lists every dump point but builds only the ones it draws:
:class:`LazyGraphs` is the ``label -> graph`` mapping it reads, and it never builds a graph on iteration,
``in``, ``len`` or :meth:`LazyGraphs.node_count`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from gebench import ir

__all__ = ["LazyGraphs"]


class LazyGraphs(Mapping[str, ir.Graph]):
    """``label -> graph`` in pipeline order; a graph is built on its first ``[label]`` and then kept.

    Args:
        entries: ``(label, graph or zero-argument builder)`` in order.
        counts: optional ``label -> node count`` answered without building (for large-graph decisions).
    """

    def __init__(
        self,
        entries: list[tuple[str, ir.Graph | Callable[[], ir.Graph]]],
        counts: Mapping[str, Callable[[], int]] | None = None,
    ) -> None:
        self._order = [label for label, _ in entries]
        self._built: dict[str, ir.Graph] = {}
        self._builders: dict[str, Callable[[], ir.Graph]] = {}
        for label, entry in entries:
            if isinstance(entry, ir.Graph):
                self._built[label] = entry
            else:
                self._builders[label] = entry
        self._counts = dict(counts or {})

    @classmethod
    def of_run(cls, run: Any) -> LazyGraphs:
        """The run's dump points in order, then ``final`` (the run's graph). Reads ``run.ir_snapshots`` and
        ``run.ir_graph`` when the run has them (nothing is built), else ``run.snapshots`` and ``run.graph``
        (converted with :func:`ir.as_graph` on first read). O(dump points)."""
        entries: list[tuple[str, ir.Graph | Callable[[], ir.Graph]]] = []
        counts: dict[str, Callable[[], int]] = {}
        snaps = getattr(run, "ir_snapshots", None)
        if snaps is None:
            snaps = getattr(run, "snapshots", None) or {}
        for label in list(snaps):
            entries.append((str(label), lambda label=label: ir.as_graph(snaps[label])))
            if hasattr(snaps, "node_count"):
                counts[str(label)] = lambda label=label: snaps.node_count(label)
        final = getattr(run, "ir_graph", None)
        if final is None:
            final = getattr(run, "graph", None)
        if final is not None:
            entries.append(("final", ir.as_graph(final)))
        return cls(entries, counts)

    def __getitem__(self, label: str) -> ir.Graph:
        graph = self._built.get(label)
        if graph is None:
            try:
                builder = self._builders.pop(label)
            except KeyError:
                raise KeyError(label) from None
            graph = self._built[label] = builder()
        return graph

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)

    def __contains__(self, label: object) -> bool:
        return label in self._built or label in self._builders

    def is_built(self, label: str) -> bool:
        """Whether reading ``label`` costs nothing (the graph exists already). O(1)."""
        return label in self._built

    def node_count(self, label: str) -> int:
        """Nodes of ``label`` without building it when the run can count them (O(n) int checks), else
        ``len`` of the graph (which builds it)."""
        if label not in self._built and label in self._counts:
            return self._counts[label]()
        return len(self[label])

    def get(self, label: str, default: Any = None) -> Any:  # Mapping.get catches KeyError only: same here
        return self[label] if label in self else default
