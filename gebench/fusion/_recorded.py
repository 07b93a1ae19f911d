"""A replacement recorded as the nodes it creates, for the rewriter to make straight in the target graph.

An expression-style ``replacement`` (``return GEMM(a, b, c, 1.0, 1.0)``) that the runtime calls per match would
otherwise build a whole graph (a ``Data`` per input, its nodes, a ``NetOutput``) only for the rewriter to move
the nodes into the target and drop the rest. When nobody but the runtime sees that graph, the builder records
each node it would have made instead (:class:`RecordedOp`: op type, builder name, attrs, anchors, and which
input or earlier node feeds each input), and :func:`gebench.fusion._rewriter.rewrite_recorded` makes those nodes
in the target. The target graph comes out exactly as when the graph was built and its nodes adopted.

Invariants: ``ops`` are in creation order (a topological order: every source of an op is an input or an earlier
op); a source or an output is ``(ref, port)`` where ``ref >= 0`` is an index into ``ops`` and ``ref < 0`` is the
replacement input ``-1 - ref`` (port 0). The record owns the attrs dicts and descs of its ops: a rewrite takes
them as they are, so a record is used at most once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

from gebench.ir import Graph, TensorDesc

__all__ = ["RecordedOp", "RecordedReplacement", "make_recorded_op"]


class RecordedOp(NamedTuple):
    """One node a builder would have made: its anchors are what the built node would have had. A tuple
    (builders make several per match; :data:`make_recorded_op` makes one without the keyword handling)."""

    op_type: str
    name: str
    attrs: dict[str, Any]
    inputs: list[TensorDesc]
    outputs: list[TensorDesc]
    input_names: list[str]
    output_names: list[str]
    sources: list[tuple[int, int] | None]  # per input anchor: (ref, port), None when unfed


def make_recorded_op(fields: tuple[Any, ...]) -> RecordedOp:
    """``RecordedOp(*fields)`` for the eight fields in order, without the generated ``__new__``'s call."""
    return _tuple_new(RecordedOp, fields)


_tuple_new: Callable[..., Any] = tuple.__new__


@dataclasses.dataclass(slots=True)
class RecordedReplacement:
    """The replacement graph ``name`` as recorded: ``n_inputs`` inputs (``Data`` with indices ``0..n-1``), the
    ``ops`` between them and ``outputs`` (graph output ``k`` is ``outputs[k]``).

    ``build``: makes the graph the builder would have returned (for a rewrite that cannot use the record, so
    that it reports exactly what it would have reported for the graph); at most once, and not after a rewrite
    used the record.
    """

    name: str
    n_inputs: int
    ops: list[RecordedOp]
    outputs: list[tuple[int, int]]
    build: Callable[[], Graph]

    def layout(self) -> tuple[list[RecordedOp], list[tuple[int, int, int]], list[tuple[int, int, int, int]],
                              list[tuple[int, int]], list[tuple[int, int]]]:
        """What the rewriter's layout of the built graph would be: (body, input edges as (input, op index, port),
        op edges as (src op, src port, dst op, dst port), output sources, control edges (none)). O(anchors)."""
        in_edges: list[tuple[int, int, int]] = []
        body_edges: list[tuple[int, int, int, int]] = []
        j = 0
        for op in self.ops:
            port = 0
            for source in op.sources:
                if source is not None:
                    ref, src_port = source
                    if ref < 0:
                        in_edges.append((-1 - ref, j, port))
                    else:
                        body_edges.append((ref, src_port, j, port))
                port += 1
            j += 1
        return self.ops, in_edges, body_edges, list(self.outputs), []
