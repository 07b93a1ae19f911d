"""Graph journals: the state a graph had at one moment, kept as the pre-images of what changed since.

A :class:`GraphJournal` opened on a live graph costs O(1) (plus a copy of the graph-level attrs and name
counters, and one journal per subgraph). From then on, the first time each node that existed at that moment is
about to change in place (its attrs, anchors, descs, name, op type) or to be removed, the graph hands the journal
a private copy of the node as it still is (:meth:`Graph.touch`); the first time one of its edges changes, copies
of its rows of the edge tables; a node whose topological position moves gives its old position. Nodes created after the journal was opened are recognised by their ids (ids only
grow) and need no record. So keeping the graph as it was costs O(what changed), not O(graph).

:meth:`GraphJournal.materialize` turns the journal into a full :class:`Graph` equal to the graph at the moment
the journal was opened (same node ids, names, descs, attrs, edges, positions, subgraphs), O(n + e), and
detaches the journal from the live graph; the result is cached.

Invariant the rest of the IR keeps: every in-place change of a node that belongs to a graph is preceded by
``graph.touch(node)`` (the graph's own methods do it; code outside the IR that edits ``node.attrs`` or an anchor
desc in place calls it first). A change that skips it would show in the snapshot as if it had happened before
the journal was opened.
"""

from __future__ import annotations

import math
from array import array
from typing import TYPE_CHECKING, Any

from ._tensor import copy_attrs
from ._uses import copy_uses, uses_of

if TYPE_CHECKING:
    from ._graph import Graph
    from ._node import Node

__all__ = ["GraphJournal", "rows_of"]


#: (producers row, uses rows, control successors, control predecessors), the last two left out for a node without
#: control edges: the control neighbours as tuples of their table's keys, in order (empty when none); the data rows as tuples too (the uses of one output port as the tuple
#: of its keys: about a third of the memory of the tables' own lists and dicts), or, when ``graph`` still shares
#: them with a copy-on-write copy, the table's own list and list of dicts: no graph changes a shared row in place
#: (each copies it first, see ``Graph._own_rows``), so the journal may keep it as it is, uncopied
_Rows = tuple


def rows_of(graph: Graph, nid: int) -> _Rows:
    """Node ``nid``'s rows in ``graph``'s edge tables as they are now, safe from later changes (see ``_Rows``).
    O(degree), or O(1) for data rows shared with a copy-on-write copy."""
    succ = graph._ctrl_succ.get(nid)
    pred = graph._ctrl_pred.get(nid)
    ctrl = (tuple(succ) if succ else (), tuple(pred) if pred else ()) if succ or pred else ()
    if nid < graph._rows_below and not graph._rows_owned[nid]:
        return (graph._producers[nid], graph._uses[nid], *ctrl)
    return (tuple(graph._producers[nid]), tuple(map(tuple, graph._uses[nid])), *ctrl)


class GraphJournal:
    """The state of ``graph`` at the moment this journal was opened (see the module docstring).

    Attributes:
        graph: the live graph it follows (None once materialized).
        next_id: the graph's next node id when opened: every id from it on was created later.
    """

    def __init__(self, graph: Graph) -> None:
        self.graph: Graph | None = graph
        self.next_id = graph._next_id
        self.nodes: dict[int, Node] = {}  # node id -> a private copy of the node as it was
        self.rows: dict[int, _Rows] = {}  # node id -> its edge-table rows as they were
        self.positions: dict[int, float] = {}
        self.name = graph.name
        self.attrs = copy_attrs(graph.attrs)
        self.name_counters = dict(graph._name_counters)
        self.next_pos = graph._next_pos
        self.parent_node_name = graph.parent_node_name
        self.subgraphs = {name: GraphJournal(sub) for name, sub in graph.subgraphs.items()}
        self._materialized: Graph | None = None
        graph._open_journal(self)

    # ------------------------------------------------------------------ recording (called by the graph)
    def wants_node(self, nid: int) -> bool:
        """Whether node ``nid`` existed when the journal was opened and has no pre-image yet. O(1)."""
        return nid < self.next_id and nid not in self.nodes

    def wants_rows(self, nid: int) -> bool:
        """Whether node ``nid`` existed when the journal was opened and its edge rows were not kept yet. O(1)."""
        return nid < self.next_id and nid not in self.rows

    def keep_position(self, nid: int, position: float) -> None:
        if nid < self.next_id and nid not in self.positions:
            self.positions[nid] = position

    # ------------------------------------------------------------------ reading
    def node_count(self) -> int:
        """Direct nodes the graph had when the journal was opened, without materializing. O(n) int checks."""
        if self._materialized is not None:
            return len(self._materialized)
        live = self.graph
        assert live is not None
        next_id = self.next_id
        alive = sum(1 for nid in live._nodes if nid < next_id)
        return alive + sum(1 for nid in self.nodes if nid not in live._nodes)

    def materialize(self) -> Graph:
        """The graph as it was when the journal was opened, as a new independent :class:`Graph`. O(n + e)
        the first time (then cached); detaches the journal (and its subgraphs') from the live graphs.

        Like ``Graph.copy(share=True)``, its nodes share their attrs and descs with the live graph's nodes (and
        with the journal's kept copies) until a ``touch`` on either side gives a node private copies."""
        if self._materialized is not None:
            return self._materialized
        from ._collector import collector_paused

        with collector_paused():
            snap = self._build()
        self._materialized = snap
        return snap

    def close(self) -> None:
        """Stop following the live graph (and its subgraphs) without building anything. O(subgraphs)."""
        for sub in self.subgraphs.values():
            sub.close()
        if self.graph is not None:
            self.graph._close_journal(self)
            self.graph = None

    def _build(self) -> Graph:
        from ._graph import Graph

        live = self.graph
        assert live is not None, "a closed journal cannot be materialized"
        snap = Graph(self.name)
        snap.attrs = self.attrs
        snap.parent_node_name = self.parent_node_name
        next_id = self.next_id
        kept_nodes, kept_rows = self.nodes, self.rows
        live_nodes = live._nodes
        ids = [nid for nid in live_nodes if nid < next_id]
        ids.extend(nid for nid in kept_nodes if nid not in live_nodes)
        ids.sort()
        nodes, by_name, by_type = snap._nodes, snap._by_name, snap._by_type
        snap._producers = producers = [None] * next_id  # indexed by id (see Graph._producers)
        snap._uses = uses = [None] * next_id
        snap._pos = pos = array("d", [math.nan]) * next_id  # indexed by id (see Graph._pos)
        ctrl_succ, ctrl_pred = snap._ctrl_succ, snap._ctrl_pred
        live_pos, saved_pos = live._pos, self.positions
        fromkeys = dict.fromkeys
        for nid in ids:
            node = kept_nodes.get(nid)
            if node is None:
                node = live_nodes[nid]
            clone = node._share_into(snap)
            row = kept_rows.get(nid)
            if row is None:
                producers[nid] = live._producers[nid].copy()
                uses[nid] = list(map(copy_uses, live._uses[nid]))
                succ = live._ctrl_succ.get(nid)
                pred = live._ctrl_pred.get(nid)
            else:
                producers[nid] = list(row[0])
                uses[nid] = list(map(uses_of, row[1]))
                succ, pred = (row[2], row[3]) if len(row) > 2 else ((), ())
            if succ:
                ctrl_succ[nid] = fromkeys(succ)
            if pred:
                ctrl_pred[nid] = fromkeys(pred)
            nodes[nid] = clone
            by_name[clone._name] = nid
            bucket = by_type.get(clone._op_type)
            if bucket is None:
                by_type[clone._op_type] = {nid: None}
            else:
                bucket[nid] = None
            p = saved_pos.get(nid)
            pos[nid] = live_pos[nid] if p is None else p
        # every node shares its attrs and descs with the live node or the kept copy it was built from (see
        # Graph.copy(share=True)): both graphs copy a node's contents before its first in-place change
        snap._share_below = next_id
        snap._owned = set()
        live._owned = {nid for nid in live._owned if nid >= next_id}  # shared again with the snapshot
        live._share_below = max(live._share_below, next_id)
        snap._taken = {p for p in map(pos.__getitem__, ids) if not p.is_integer()}
        snap._next_pos = self.next_pos
        snap._next_id = next_id
        snap._name_counters = self.name_counters
        snap._n_ctrl = sum(len(s) for s in ctrl_succ.values())
        for name, journal in self.subgraphs.items():
            sub = journal.materialize()
            sub.parent_graph = snap
            snap.subgraphs[name] = sub
        self.close()
        return snap

    def __repr__(self) -> str:
        state = "materialized" if self._materialized is not None else f"{len(self.nodes)} nodes kept"
        return f"<GraphJournal of {self.name!r}: {state}>"


def _desc_state(d: Any) -> tuple[Any, ...]:
    return (d.dtype, d.shape, d.format, d.origin_format, d.origin_shape, d.origin_dtype, repr(d._attrs or {}))


def first_difference(a: Graph, b: Graph) -> str | None:
    """The first way in which ``a`` and ``b`` differ in anything a graph holds (ids, names, op types, attrs,
    anchors and their descs, provenance, edge and control tables in their order, the topological order,
    counters, subgraphs), or None when they are the same; the order of the node table itself is not compared
    (a built snapshot lists its nodes by id). For checks and tests. O(n + e)."""
    if a.name != b.name or repr(a.attrs) != repr(b.attrs):
        return f"graph name or attrs: {a.name!r} / {b.name!r}"
    if a._nodes.keys() != b._nodes.keys():
        return f"node ids of {a.name!r}: {sorted(set(a._nodes) ^ set(b._nodes))[:10]} differ"
    for nid, na in a._nodes.items():
        nb = b._nodes[nid]
        sa = (na._name, na._op_type, repr(na.attrs), list(map(_desc_state, na.inputs)),
              list(map(_desc_state, na.outputs)), list(na.input_names), list(na.output_names),
              list(na.subgraph_names), na.provenance)
        sb = (nb._name, nb._op_type, repr(nb.attrs), list(map(_desc_state, nb.inputs)),
              list(map(_desc_state, nb.outputs)), list(nb.input_names), list(nb.output_names),
              list(nb.subgraph_names), nb.provenance)
        if sa != sb:
            return f"node #{nid} {na._name!r}: {sa} != {sb}"
        if (a._producers[nid] != b._producers[nid] or list(map(list, a._uses[nid])) != list(map(list, b._uses[nid]))
                or list(a._ctrl_succ.get(nid, ())) != list(b._ctrl_succ.get(nid, ()))
                or list(a._ctrl_pred.get(nid, ())) != list(b._ctrl_pred.get(nid, ()))):
            return f"edges of node #{nid} {na._name!r}"
    if [n.id for n in a.nodes()] != [n.id for n in b.nodes()]:
        return f"topological order of {a.name!r}"
    if (a._next_id, a._name_counters, a.parent_node_name) != (b._next_id, b._name_counters, b.parent_node_name):
        return f"id counter, name counters or parent of {a.name!r}"
    if sorted(a.subgraphs) != sorted(b.subgraphs):
        return f"subgraph names of {a.name!r}"
    for name, sub in a.subgraphs.items():
        diff = first_difference(sub, b.subgraphs[name])
        if diff is not None:
            return f"subgraph {name!r}: {diff}"
    return None
