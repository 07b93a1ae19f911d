"""The IR graph: GE's graph model in index tables behind a small API, with a live ``networkx.MultiDiGraph`` view."""

from __future__ import annotations

import itertools
import logging
import math
import struct
from array import array
from collections.abc import Container, Iterable, Iterator, Sequence
from typing import Any

import networkx as nx

from ._collector import collector_paused
from ._journal import GraphJournal, rows_of
from ._node import NO_INPUTS, NO_SUBGRAPHS, Node
from ._tensor import TensorDesc, _default_desc, copy_attrs
from ._uses import Uses, add_use, copy_uses, drop_use
from .errors import CycleError, GraphError

__all__ = ["Graph", "CONTROL_PORT"]

_log = logging.getLogger(__name__)

_new_node = object.__new__

#: Port number used for both ends of a control edge (GE uses -1 for control anchors).
CONTROL_PORT = -1
#: The key of a control edge in the networkx view (a data edge's key is ``(src_port, dst_port)``).
_CONTROL_KEY = (CONTROL_PORT, CONTROL_PORT)


# The networkx view's own add/remove, minus their argument checks (ids are known to be present or absent as
# each function says); nodes and edges carry no data. Every neighbour pair shares one key dict on both sides.
def _store_add_node(store: nx.MultiDiGraph, node_id: int) -> None:
    store._succ[node_id] = {}
    store._pred[node_id] = {}
    store._node[node_id] = {}


def _store_remove_node(store: nx.MultiDiGraph, node_id: int) -> None:
    s_succ, s_pred = store._succ, store._pred
    for v in s_succ.pop(node_id):
        del s_pred[v][node_id]
    for u in s_pred.pop(node_id):
        del s_succ[u][node_id]
    del store._node[node_id]


def _store_add_edge(store: nx.MultiDiGraph, u: int, v: int, key: tuple[int, int]) -> None:
    succ = store._succ[u]
    keydict = succ.get(v)
    if keydict is None:
        keydict = {}
        succ[v] = keydict
        store._pred[v][u] = keydict
    keydict[key] = {}


def _store_remove_edge(store: nx.MultiDiGraph, u: int, v: int, key: tuple[int, int]) -> None:
    keydict = store._succ[u][v]
    del keydict[key]
    if not keydict:
        del store._succ[u][v]
        del store._pred[v][u]


#: :meth:`Graph.place_between` tries this many floats one by one after a taken position before it crosses the rest of
#: a run of taken floats by doubling steps and bisection (so short runs get exactly the first free float).
_PLACE_WALK = 16
_F64 = struct.Struct("<d")
_I64 = struct.Struct("<q")


def _first_free_after(p: float, hi: float, taken: set[float]) -> float:
    """A float above the taken position ``p`` that is not in ``taken`` and not integral (integral positions are
    never in ``taken``, see ``Graph._taken``, and count as taken): the first one when it is at most
    :data:`_PLACE_WALK` floats away, or when the floats from ``p`` up to it are all taken; a float ``>= hi`` when
    none was found below ``hi``.

    Many rewrites placed between the same two nodes (all fed by one shared producer, all feeding one consumer) start
    from the same position and each takes the first free float after it, so they build one long run of consecutive
    taken floats. Past the first :data:`_PLACE_WALK` floats that run is crossed by doubling the step (counted in
    floats, on the bit patterns, which order positive floats) until a free float or ``hi``, then by bisecting back to
    the first free float after a taken one: O(log run) instead of O(run) per placement. A float freed inside the
    run (its node removed) may be stepped over; any free float between the bounds is as good.
    """
    nextafter = math.nextafter
    for _ in range(_PLACE_WALK):
        p = nextafter(p, hi)
        if p >= hi or not (p in taken or p.is_integer()):
            return p
    if p <= 0.0:  # the bit patterns order positive floats only; positions below zero are rare
        while (p in taken or p.is_integer()) and p < hi:
            p = nextafter(p, hi)
        return p
    low = _I64.unpack(_F64.pack(p))[0]  # taken
    top = _I64.unpack(_F64.pack(hi))[0]  # free, or hi itself
    step = 1
    while low + step < top:
        probe = low + step
        f = _F64.unpack(_I64.pack(probe))[0]
        if not (f in taken or f.is_integer()):
            top = probe
            break
        low = probe
        step += step
    while top - low > 1:
        mid = (low + top) // 2
        f = _F64.unpack(_I64.pack(mid))[0]
        if f in taken or f.is_integer():
            low = mid
        else:
            top = mid
    return _F64.unpack(_I64.pack(top))[0]


#: what ``Graph._pos`` holds at the id of a node not in the graph
_NO_POSITION = math.nan


#: The producers row of every node without input anchors: shared, so never changed in place (adding an input
#: anchor gives the node a new row).
_NO_PRODUCERS: list[tuple[int, int] | None] = []


def _set_row(table: list[Any], node_id: int, row: Any) -> None:
    """``table[node_id] = row``, growing ``table`` with None up to ``node_id`` first."""
    if node_id >= len(table):
        table.extend([None] * (node_id + 1 - len(table)))
    table[node_id] = row


def _set_position(table: array[float], node_id: int, position: float) -> None:
    """``table[node_id] = position``, growing ``table`` with :data:`_NO_POSITION` up to ``node_id`` first."""
    if node_id >= len(table):
        table.extend(array("d", [_NO_POSITION]) * (node_id + 1 - len(table)))
    table[node_id] = position


#: The attributes a staged graph builds on first read (all set by ``Graph._empty_tables``).
_STAGED_TABLES = frozenset({"_store", "_by_type", "_producers", "_uses", "_ctrl_succ", "_ctrl_pred", "_pos", "_taken",
                            "_n_ctrl", "_next_pos"})


class Graph:
    """A GE graph: nodes with typed anchors, data edges, control edges and subgraphs.

    Storage: tables keyed by node id, kept current by every mutation (all O(1) or O(degree) to maintain; the
    edge rows and the positions are lists and a float array indexed by id, so their memory is O(largest id), not
    a dict entry per node):

    * ``node id -> Node`` and ``name -> node id`` (:meth:`node`, :meth:`node_by_name`),
    * ``op type -> node ids`` (:meth:`nodes_of_type`),
    * per-input producer and per-output use lists (:meth:`producer`, :meth:`uses`): the data edges,
    * control successors and predecessors, only for nodes that have control edges,
    * topological positions (:meth:`position`): ``position(u) < position(v)`` for every edge ``u -> v``.
      New nodes go last; an edge that breaks the order triggers a Pearce-Kelly reordering that only
      touches nodes whose positions lie between the two ends.

    :attr:`nx_graph` is the same graph as a ``networkx.MultiDiGraph`` for networkx's algorithms: built on first
    access, then kept current by every mutation (a graph nobody asked it of pays nothing for it).

    Invariants are checked by :meth:`verify`. Subgraphs (bodies of If/While/PartitionedCall) live on the
    root graph as in GE; a node refers to them by name in ``Node.subgraph_names``.
    """

    def __init__(self, name: str = "graph") -> None:
        self.name = name
        self.attrs: dict[str, Any] = {}
        self._nodes: dict[int, Node] = {}
        self._by_name: dict[str, int] = {}
        self.subgraphs: dict[str, Graph] = {}
        self._empty_tables()
        self._next_id = 0  # ids only grow: the next node gets this one
        self._name_counters: dict[str, int] = {}
        self.parent_graph: Graph | None = None
        self.parent_node_name: str = ""

    def _empty_tables(self) -> None:
        """The indexes and positions of a graph without nodes (:data:`_STAGED_TABLES`); no networkx view yet."""
        self._store: nx.MultiDiGraph | None = None  # the networkx view once someone asked for it
        self._by_type: dict[str, dict[int, None]] = {}
        # the data-edge tables are lists indexed by node id (None at the id of a node not in the graph; memory
        # O(largest id), no dict entry per node): read them only at ids of nodes in the graph
        # producers: node id -> per input port, (producer id, its output port) or None when unfed
        self._producers: list[list[tuple[int, int] | None] | None] = []
        # data uses: node id -> per output port, its (consumer id, input port) keys in the order the edges were added
        # (a list per port, a dict once the port has many: see _uses; the rest keep their order when one goes)
        self._uses: list[list[Uses] | None] = []
        # control edges: node id -> its control successors (predecessors), in the order the edges were added; a
        # node without control edges has no entry
        self._ctrl_succ: dict[int, dict[int, None]] = {}
        self._ctrl_pred: dict[int, dict[int, None]] = {}
        # topological positions: an array of floats indexed by node id (no float object or dict entry per node;
        # ids of removed nodes hold NaN); read it only at ids of nodes in the graph
        self._pos: array[float] = array("d")
        # the positions that are not integral (what place_between gave): integral ones are not listed and every
        # integral float counts as taken, so a freshly imported graph lists none
        self._taken: set[float] = set()
        self._n_ctrl = 0  # control edges in the graph
        self._next_pos = 0.0

    #: open :class:`~gebench.ir.GraphJournal`s following this graph (a list once one is opened)
    _journals: list[GraphJournal] | tuple[()] = ()
    #: the largest ``next_id`` of the open journals: no journal wants a node whose id is at least this (it was
    #: made after every one of them was opened), so the journal bookkeeping skips it at once
    _journal_below: int = 0
    #: copy-on-write (see :meth:`copy`): a node whose id is below ``_share_below`` and not in ``_owned`` may share
    #: its ``attrs`` dict and anchor desc lists with another graph, and :meth:`touch` gives it private copies
    #: first. ``_owned`` lists the ids that got them since; so the bookkeeping costs O(nodes changed), not O(graph)
    _share_below: int = 0
    _owned: set[int] | frozenset[int] = frozenset()
    #: the same for a node's rows of the data-edge tables (its producers row and uses rows), which a copy-on-write
    #: copy shares too: the graph's edge methods give a node private rows before they change them; a node's byte
    #: in ``_rows_owned`` (one per id below ``_rows_below``) is 1 once its rows are private
    _rows_below: int = 0
    _rows_owned: bytearray = bytearray()
    #: what the last whole-graph shape inference left (``gebench.ops``' ``InferenceState``: the ids of nodes
    #: changed since, the values it folded), or None when the graph was never inferred or changed beyond tracking
    _inference: Any = None
    #: node id -> the journals' view of a node that :meth:`touch_desc` kept: it shares the node's ``attrs`` dict and
    #: anchor desc objects (not the lists holding them). A desc the node still shares with it (the same object at
    #: the same index) is copied before it changes; :meth:`touch` gives the node private attrs and descs
    _lent: dict[int, Node] | None = None

    def touch(self, node: Node) -> None:
        """Announce an in-place change of ``node`` (its ``attrs``, an anchor desc or the anchor lists, its
        ``provenance``): call it before the change. Every open journal that still needs the node as it was
        keeps a copy of it first. The graph's own methods do this themselves.

        A node still sharing its attrs and descs with a copy of the graph (see :meth:`copy`) gets private copies
        of them here, so the change stays in this graph.

        Cost: O(1) when no journal is open and the node is not shared; else, the first time a node is touched, one
        copy of the node per reason.
        """
        nid = node.id
        if self._journals and nid < self._journal_below:
            self._keep(nid)
        lent = self._lent.pop(nid, None) if self._lent else None
        if nid < self._share_below and nid not in self._owned:
            self._owned.add(nid)  # type: ignore[union-attr]  # a set whenever _share_below is set
            node.own_copies()
        elif lent is not None:
            node.own_copies()
        inference = self._inference
        if inference is not None:
            inference.dirty.add(nid)

    def touch_desc(self, node: Node, output: bool, index: int) -> TensorDesc:
        """:meth:`touch` for a change in place of one anchor desc of ``node`` (output ``index`` when ``output``,
        else input ``index``) and of nothing else: what shape inference changes. Returns the desc to change, which
        may be a new object: change that one, not one read before the call.

        Open journals that still need the node keep a view of it that shares its ``attrs`` dict and its desc
        objects; only the desc about to change is copied (into the node), so a node whose output inference sets
        costs the journals one desc, not a copy of every anchor. The node gets private attrs and descs at its next
        :meth:`touch`.

        Cost: O(1) when no journal is open and the node is not shared with a copy of the graph; else, the first
        time, O(anchors) (O(attrs + anchors) for a node shared with a copy, as :meth:`touch`)."""
        nid = node.id
        if nid < self._share_below and nid not in self._owned:
            self.touch(node)
            return (node.outputs if output else node.inputs)[index]
        if self._journals and nid < self._journal_below and nid not in self._kept_nodes:
            self._lend(node)
        inference = self._inference
        if inference is not None:
            inference.dirty.add(nid)
        descs = node.outputs if output else node.inputs
        desc = descs[index]
        view = self._lent.get(nid) if self._lent else None
        if view is not None:
            kept = view.outputs if output else view.inputs
            if index < len(kept) and kept[index] is desc:
                desc = descs[index] = desc.copy()
        return desc

    def touch_descs(self, node: Node) -> None:
        """:meth:`touch_desc` for every anchor desc of ``node``: after it, any of them may change in place (read
        them from the node after the call). O(anchors) when a journal keeps the node or it is shared with a
        copy of the graph."""
        for i in range(len(node.inputs)):
            self.touch_desc(node, False, i)
        for i in range(len(node.outputs)):
            self.touch_desc(node, True, i)

    def _lend(self, node: Node) -> None:
        """Give every open journal that wants node ``node`` a view sharing its attrs and desc objects (see
        :attr:`_lent`)."""
        nid = node.id
        view = None
        for journal in self._journals:
            if journal.wants_node(nid):
                if view is None:
                    view = node._share_into(None)
                    view.inputs = list(node.inputs)  # the node's lists stay the node's: it may replace a desc
                    view.outputs = list(node.outputs)
                journal.nodes[nid] = view
        self._kept_nodes.add(nid)
        if view is not None:
            lent = self._lent  # read once: a journal closed meanwhile (by a collector callback) may reset it
            if lent is None:
                lent = self._lent = {}
            lent[nid] = view

    def _keep(self, nid: int) -> None:
        """Give every open journal that wants it a copy of node ``nid`` as it is now (before an in-place change of
        the node; see :meth:`touch`). One copy serves every journal. Its edge rows are kept apart, by the
        methods that change them (:meth:`_keep_rows`)."""
        if nid not in self._kept_nodes:
            clone = None
            for journal in self._journals:
                if journal.wants_node(nid):
                    if clone is None:
                        node = self._nodes[nid]
                        clone = node._clone_into(None, nid, node._name)  # type: ignore[arg-type]
                    journal.nodes[nid] = clone
            self._kept_nodes.add(nid)

    def _keep_rows(self, nid: int) -> None:
        """Give every open journal that wants them copies of node ``nid``'s edge rows (before an edge of it
        changes). O(degree) the first time, O(1) after (``_kept_rows`` lists ids every open journal has)."""
        if nid >= self._journal_below or nid in self._kept_rows:
            return
        rows = None
        for journal in self._journals:
            if journal.wants_rows(nid):
                if rows is None:
                    rows = rows_of(self, nid)
                journal.rows[nid] = rows
        self._kept_rows.add(nid)

    def _own_rows(self, nid: int) -> None:
        """Give node ``nid`` private copies of its data-edge rows if a copy-on-write copy still shares them (call
        it before changing them; see :meth:`copy`; control rows are never shared). O(degree) the first time,
        O(1) after."""
        if nid < self._rows_below and not self._rows_owned[nid]:
            self._rows_owned[nid] = 1
            self._producers[nid] = self._producers[nid].copy()
            self._uses[nid] = list(map(copy_uses, self._uses[nid]))

    def _rows_change(self, a: int, b: int) -> None:
        """Before the edge rows of nodes ``a`` and ``b`` change: open journals keep them as they are
        (:meth:`_keep_rows`) and a copy-on-write copy's shared rows become private (:meth:`_own_rows`). Callers
        skip the call when neither applies (``self._journals or self._rows_below`` is false). O(1) amortised."""
        if self._journals:
            kept, below = self._kept_rows, self._journal_below
            if a < below and a not in kept:
                self._keep_rows(a)
            if b < below and b not in kept:
                self._keep_rows(b)
        below = self._rows_below
        if below:
            if a < below:
                self._own_rows(a)
            if b < below:
                self._own_rows(b)

    def _keep_removed(self, node: Node) -> None:
        """Before ``node`` is removed: journals that have no copy of it keep a view of it that shares its attrs
        and descs (nothing of the graph changes a removed node; code still holding it and writing to it gives it
        private copies first, see :meth:`Node.own_copies`), its rows and its position. O(1) per journal."""
        nid = node.id
        if nid >= self._journal_below:
            return  # made after every open journal was opened: none of them wants it
        if nid not in self._kept_nodes:
            view = None
            for journal in self._journals:
                if journal.wants_node(nid):
                    if view is None:
                        view = node._share_into(None)
                    journal.nodes[nid] = view
            self._kept_nodes.add(nid)
        self._keep_rows(nid)
        pos = self._pos[nid]
        for journal in self._journals:
            journal.keep_position(nid, pos)

    def _keep_positions(self, nids: Iterable[int]) -> None:
        """Give every open journal the current positions of ``nids`` before they move."""
        pos = self._pos
        nids = list(nids)
        for journal in self._journals:
            for nid in nids:
                journal.keep_position(nid, pos[nid])

    def _open_journal(self, journal: GraphJournal) -> None:
        if not self._journals:
            self._journals = []
        self._journals.append(journal)  # type: ignore[union-attr]
        self._journal_below = max(self._journal_below, journal.next_id)
        # ids whose node (rows) every open journal already has: none for a new journal
        self._kept_nodes: set[int] = set()
        self._kept_rows: set[int] = set()

    def _close_journal(self, journal: GraphJournal) -> None:
        """Stop recording for ``journal``. The list of open journals is replaced, never changed in place: a
        snapshot map closes its journals when it is collected, which may happen in the middle of a loop over the
        list (a journal it still hands a record to keeps it, unread)."""
        journals = [j for j in self._journals if j is not journal]
        self._journal_below = max((j.next_id for j in journals), default=0)
        if journals:
            self._journals = journals
        else:
            self._journals = ()
            # no journal reads a lent view any more (a built snapshot shares the descs copy-on-write instead)
            self._lent = None

    def journal(self) -> GraphJournal:
        """Open a :class:`~gebench.ir.GraphJournal` on this graph: the graph as it is now, kept at the cost of
        what changes from here on (O(1) now; ``journal.materialize()`` builds the graph it recorded)."""
        return GraphJournal(self)

    @property
    def staged(self) -> bool:
        """Whether this is a :class:`StagedGraph` that has not built its tables yet. O(1)."""
        return False

    def staged_edges(self) -> list[tuple[int, int, int, int]] | None:
        """The edge list of a :class:`StagedGraph` still staged; None for any other graph. O(1)."""
        return None

    def nodes_in_creation_order(self) -> list[Node]:
        """The nodes in the order they were added (for a staged graph, a topological order). O(n)."""
        return list(self._nodes.values())

    # ------------------------------------------------------------------ nodes
    def add_node(
        self,
        op_type: str,
        *,
        name: str | None = None,
        attrs: dict[str, Any] | None = None,
        inputs: Sequence[TensorDesc] | int = 0,
        outputs: Sequence[TensorDesc] | int = 0,
        input_names: Sequence[str] | None = None,
        output_names: Sequence[str] | None = None,
        node_id: int | None = None,
    ) -> Node:
        """Add an unconnected node and return it. O(1).

        Args:
            op_type: GE op type, for example ``"MatMul"``.
            name: unique name; ``None`` picks ``<op_type>_<k>`` with the first free ``k``.
            inputs / outputs: anchor descs, or a count of default descs.
            input_names / output_names: anchor names parallel to the descs (``""`` by default).
            node_id: an explicit id (used by the text parser); must be unused and never used before.

        Raises:
            GraphError: the name is taken, the id was used, or the name lists do not fit the descs.
        """
        if name is None:
            name = self.fresh_name(op_type)
        if name in self._by_name:
            raise GraphError(f"graph {self.name!r} already has a node named {name!r}; pick another name")
        if node_id is None:
            node_id = self._next_id
            self._next_id = node_id + 1
        else:
            if node_id in self._nodes or node_id < 0:
                raise GraphError(f"node id {node_id} is already used in graph {self.name!r}")
            # keep the id counter above every explicit id so ids are never reused
            self._next_id = max(self._next_id, node_id + 1)
        ins = [_default_desc() for _ in range(inputs)] if isinstance(inputs, int) else [d.copy() for d in inputs]
        outs = [_default_desc() for _ in range(outputs)] if isinstance(outputs, int) else [d.copy() for d in outputs]
        in_names = list(input_names) if input_names is not None else [""] * len(ins)
        out_names = list(output_names) if output_names is not None else [""] * len(outs)
        if len(in_names) != len(ins) or len(out_names) != len(outs):
            raise GraphError(f"node {name!r}: anchor names do not line up with anchor descs")
        return self._insert(node_id, name, op_type, dict(attrs) if attrs else {}, ins, outs, in_names, out_names)

    def add_node_trusted(self, op_type: str, name: str | None, attrs: dict[str, Any], inputs: list[TensorDesc],
                        outputs: list[TensorDesc], input_names: list[str], output_names: list[str]) -> Node:
        """:meth:`add_node` for trusted callers (graph builders, the rewriter) that hand over fresh lists and a
        fresh attrs dict: they are taken as they are, not copied or checked, so the names must line up with the
        descs. O(anchors).

        Raises:
            GraphError: the name is taken.
        """
        if name is None:
            name = self.fresh_name(op_type)
        elif name in self._by_name:
            raise GraphError(f"graph {self.name!r} already has a node named {name!r}; pick another name")
        node_id = self._next_id
        self._next_id = node_id + 1
        return self._insert(node_id, name, op_type, attrs, inputs, outputs, input_names, output_names)

    def adopt_node(self, node: Node, name: str) -> Node:
        """Move ``node``, a node of a graph its owner is discarding (a consumed replacement), into this graph
        under a fresh id and ``name``, keeping its op type, attrs, anchors and provenance but none of its
        edges or subgraph names. The old graph must not be used afterwards: call its :meth:`clear`. Saves
        the copies :meth:`add_node_trusted` would need. O(anchors).

        Raises:
            GraphError: the name is taken in this graph.
        """
        if name in self._by_name:
            raise GraphError(f"graph {self.name!r} already has a node named {name!r}; pick another name")
        node.id = node_id = self._next_id
        self._next_id = node_id + 1
        node._name = name
        node.subgraph_names = NO_SUBGRAPHS
        node._graph = self
        self._register(node, node_id, name, node._op_type)
        return node

    def clear(self) -> None:
        """Forget every node, edge and subgraph (the graph becomes empty; node ids keep growing). Node objects
        that were in it are left as they are; a staged graph stays staged. O(1) (O(n) while a journal is open:
        it keeps every node)."""
        if self._journals:
            for node in list(self._nodes.values()):
                self._keep_removed(node)
        self._nodes = {}
        self._by_name = {}
        self.subgraphs = {}
        self._inference = None
        self._empty_tables()

    def _insert(self, node_id: int, name: str, op_type: str, attrs: dict[str, Any], inputs: list[TensorDesc],
                outputs: list[TensorDesc], input_names: list[str], output_names: list[str]) -> Node:
        node = _new_node(Node)
        node.id = node_id
        node._name = name
        node._op_type = op_type
        node.attrs = attrs
        node.inputs = inputs
        node.outputs = outputs
        node.input_names = input_names
        node.output_names = output_names
        node.subgraph_names = NO_SUBGRAPHS
        node.provenance = ""
        node._graph = self
        self._register(node, node_id, name, op_type)
        return node

    def _register(self, node: Node, node_id: int, name: str, op_type: str) -> None:
        """Index a new, unconnected ``node`` (its anchors already set) at the end of the topological order."""
        self._nodes[node_id] = node
        self._by_name[name] = node_id
        self._index(node, node_id, op_type)
        inference = self._inference
        if inference is not None:
            inference.dirty.add(node_id)

    def _index(self, node: Node, node_id: int, op_type: str) -> None:
        """The part of :meth:`_register` a staged graph leaves for later: type index, anchor tables, position,
        networkx view."""
        bucket = self._by_type.get(op_type)
        if bucket is None:
            self._by_type[op_type] = {node_id: None}
        else:
            bucket[node_id] = None
        uses: list[Uses] = []
        for _ in node.outputs:  # a plain loop: a comprehension costs a function call on Python 3.11
            uses.append([])
        producers, all_uses = self._producers, self._uses
        n_inputs = len(node.inputs)
        row = [None] * n_inputs if n_inputs else _NO_PRODUCERS
        if node_id == len(producers):
            producers.append(row)
            all_uses.append(uses)
        else:
            _set_row(producers, node_id, row)
            _set_row(all_uses, node_id, uses)
        pos = self._next_pos
        table = self._pos
        if node_id == len(table):
            table.append(pos)
        else:
            _set_position(table, node_id, pos)
        if not pos.is_integer():
            self._taken.add(pos)
        self._next_pos = pos + 1.0
        store = self._store
        if store is not None:
            _store_add_node(store, node_id)

    def fresh_name(self, prefix: str) -> str:
        """A name ``<prefix>_<k>`` not used in this graph (amortised O(1))."""
        k = self._name_counters.get(prefix, 0)
        name = f"{prefix}_{k}"
        while name in self._by_name:
            k += 1
            name = f"{prefix}_{k}"
        self._name_counters[prefix] = k + 1
        return name

    def remove_node(self, node: Node) -> None:
        """Disconnect ``node`` from everything and remove it. O(degree).

        The node object is marked dead (``node.alive`` is False); its id is never reused.
        """
        self.remove_nodes((node,))

    def remove_nodes(self, nodes: Iterable[Node]) -> None:
        """Remove every node of ``nodes`` (distinct nodes of this graph) and all their edges: the graph ends as
        :meth:`remove_node` on each in turn leaves it. O(sum of their degrees); an edge between two of them
        updates neither end, and journals and copy-on-write copies do their bookkeeping once per neighbour left
        in the graph (what a rewrite removing a connected region saves).

        Raises:
            GraphError: a node is not in this graph, or is listed twice (nothing is removed then).
        """
        ids: dict[int, Node] = {}  # read once: ``nodes`` may be any iterable
        for node in nodes:
            nid = node.id
            if self._nodes.get(nid) is not node:
                self._check_mine(node)
            if nid in ids:
                raise GraphError(f"node {node._name!r} is listed twice for removal")
            ids[nid] = node
        producers, all_uses = self._producers, self._uses
        journals, shared = self._journals, self._rows_below
        if journals or shared:
            neighbours: dict[int, None] = {}  # left in the graph, their rows change below
            for nid in ids:
                for nb in self._predecessor_ids(nid):
                    if nb not in ids:
                        neighbours[nb] = None
                for nb in self._successor_ids(nid):
                    if nb not in ids:
                        neighbours[nb] = None
            if journals:
                for node in ids.values():
                    self._keep_removed(node)
                kept = self._kept_rows
                for nb in neighbours:
                    if nb not in kept:
                        self._keep_rows(nb)
            if shared:
                for nb in neighbours:
                    self._own_rows(nb)
        inference = self._inference
        n_ctrl = self._n_ctrl
        store = self._store
        for nid, node in ids.items():  # plain loops: this runs per removed node of every rewrite
            if inference is not None:
                for uses in all_uses[nid]:
                    inference.dirty.update(d for d, _ in uses)  # their inputs lose a producer
            # the node's own tables go with it, so only the other ends are updated here, and only where they stay
            port = 0
            for prod in producers[nid]:
                if prod is not None and prod[0] not in ids:
                    drop_use(all_uses[prod[0]][prod[1]], (nid, port))  # O(1) for a large fan-out (see _uses)
                port += 1
            for uses in all_uses[nid]:
                for dst, dst_port in uses:
                    if dst not in ids:
                        producers[dst][dst_port] = None
            if n_ctrl:
                self._drop_control_edges(nid)
            if store is not None:
                _store_remove_node(store, nid)
            del self._nodes[nid]
            del self._by_name[node._name]
            op_type = node._op_type
            bucket = self._by_type[op_type]
            del bucket[nid]
            if not bucket:
                del self._by_type[op_type]
            self._taken.discard(self._pos[nid])
            self._pos[nid] = _NO_POSITION
            producers[nid] = all_uses[nid] = None
            node._graph = None

    def _drop_control_edges(self, nid: int) -> None:
        """Remove every control edge of node ``nid`` from the control tables. O(control degree)."""
        ctrl_succ, ctrl_pred = self._ctrl_succ, self._ctrl_pred
        succ = ctrl_succ.pop(nid, None)
        pred = ctrl_pred.pop(nid, None)
        for table, ends in ((ctrl_pred, succ), (ctrl_succ, pred)):
            for end in ends or ():
                peers = table[end]
                del peers[nid]
                if not peers:
                    del table[end]
                self._n_ctrl -= 1

    def rename(self, node: Node, new_name: str) -> None:
        """Rename ``node``. Raises GraphError when the name is taken."""
        self._check_mine(node)
        if new_name == node.name:
            return
        if new_name in self._by_name:
            raise GraphError(f"cannot rename {node.name!r}: graph {self.name!r} already has a node named {new_name!r}")
        if self._journals:
            self._keep(node.id)
        del self._by_name[node.name]
        self._by_name[new_name] = node.id
        node._name = new_name

    def set_op_type(self, node: Node, op_type: str) -> None:
        """Change the op type of ``node``, keeping the op-type index current."""
        self._check_mine(node)
        self.touch(node)
        bucket = self._by_type[node.op_type]
        del bucket[node.id]
        if not bucket:
            del self._by_type[node.op_type]
        self._by_type.setdefault(op_type, {})[node.id] = None
        node._op_type = op_type

    def add_input_anchor(self, node: Node, desc: TensorDesc | None = None, name: str = "") -> int:
        """Append an input anchor to ``node``; returns its index."""
        self._check_mine(node)
        self.touch(node)
        # new lists: an empty inputs list and an empty producers row may be shared (NO_INPUTS, _NO_PRODUCERS), and
        # so may name lists (see Node)
        node.inputs = [*node.inputs, desc.copy() if desc is not None else TensorDesc()]
        node.input_names = [*node.input_names, name]
        if self._journals or self._rows_below:
            self._rows_change(node.id, node.id)
        self._producers[node.id] = [*self._producers[node.id], None]
        return len(node.inputs) - 1

    def add_output_anchor(self, node: Node, desc: TensorDesc | None = None, name: str = "") -> int:
        """Append an output anchor to ``node``; returns its index."""
        self._check_mine(node)
        self.touch(node)
        node.outputs.append(desc.copy() if desc is not None else TensorDesc())
        node.output_names = [*node.output_names, name]
        if self._journals or self._rows_below:
            self._rows_change(node.id, node.id)
        self._uses[node.id].append([])
        return len(node.outputs) - 1

    def remove_last_input_anchor(self, node: Node) -> None:
        """Drop the last input anchor of ``node``; it must be unconnected."""
        self._check_mine(node)
        if not node.inputs:
            raise GraphError(f"node {node.name!r} has no input anchor to remove")
        if self._producers[node.id][-1] is not None:
            raise GraphError(f"input {len(node.inputs) - 1} of {node.name!r} is still connected; remove its edge first")
        self.touch(node)
        node.inputs.pop()
        node.input_names = node.input_names[:-1]
        if self._journals or self._rows_below:
            self._rows_change(node.id, node.id)
        self._producers[node.id].pop()

    # ------------------------------------------------------------------ lookups
    def __len__(self) -> int:
        return len(self._nodes)

    def __contains__(self, node: object) -> bool:
        return isinstance(node, Node) and self._nodes.get(node.id) is node

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes())

    def nodes(self) -> list[Node]:
        """All direct nodes in topological order (ties broken by position). O(n log n)."""
        return [self._nodes[i] for i in sorted(self._nodes, key=self._pos.__getitem__)]

    def node(self, node_id: int) -> Node:
        """The node with id ``node_id``. Raises GraphError when absent."""
        try:
            return self._nodes[node_id]
        except KeyError:
            raise GraphError(f"graph {self.name!r} has no node with id {node_id}") from None

    def has_node_id(self, node_id: int) -> bool:
        return node_id in self._nodes

    @property
    def next_node_id(self) -> int:
        """The id the next added node gets. Ids only grow and are never reused, so every node created after
        reading this has an id >= it (the matcher uses this to find new nodes in O(new ids)). O(1)."""
        return self._next_id

    def nodes_from_id(self, start: int) -> list[Node]:
        """The nodes whose id is at least ``start``, in id (creation) order: with ``start`` read from
        :attr:`next_node_id` earlier, the nodes created since then that are still here. O(ids handed out since)."""
        nodes = self._nodes
        out = []
        for nid in range(start, self._next_id):
            node = nodes.get(nid)
            if node is not None:
                out.append(node)
        return out

    def node_by_name(self, name: str) -> Node:
        """The node called ``name``. Raises GraphError when absent."""
        try:
            return self._nodes[self._by_name[name]]
        except KeyError:
            raise GraphError(f"graph {self.name!r} has no node named {name!r}") from None

    def find(self, name: str) -> Node | None:
        """The node called ``name`` or None."""
        nid = self._by_name.get(name)
        return None if nid is None else self._nodes[nid]

    def nodes_of_type(self, op_type: str) -> list[Node]:
        """Nodes of ``op_type`` in topological order. O(k log k) for k such nodes."""
        ids = self._by_type.get(op_type, ())
        return [self._nodes[i] for i in sorted(ids, key=self._pos.__getitem__)]

    def op_types(self) -> list[str]:
        """The op types present, sorted."""
        return sorted(self._by_type)

    def position(self, node: Node) -> float:
        """The node's topological position (smaller comes first)."""
        return self._pos[node.id]

    def producer(self, node: Node, port: int) -> tuple[Node, int] | None:
        """The (node, output port) feeding input ``port`` of ``node``, or None. O(1).

        Raises:
            GraphError: ``port`` is not an input anchor of ``node``.
        """
        self._check_in_port(node, port)
        prod = self._producers[node.id][port]
        return None if prod is None else (self._nodes[prod[0]], prod[1])

    def input_sources(self, node: Node) -> list[tuple[int, int] | None]:
        """``(producer id, output port)`` of every input anchor of ``node`` (None where unfed), in port order.

        The graph's own table, returned without copying: read it, never change it (the rewriter reads whole
        replacement graphs this way). O(1).
        """
        return self._producers[node.id]

    def output_uses(self, node: Node) -> list[Uses]:
        """Per output port of ``node``, its ``(consumer id, input port)`` uses in edge order (a list, or a dict
        keyed by them for a large fan-out: iterate it).

        The graph's own table, returned without copying: read it, never change it, and change no edge of the node
        while iterating it. O(1), so a caller that stops at the first use it is looking for (the matcher's
        self-containment check) costs O(uses read), not O(fan-out).
        """
        return self._uses[node.id]

    def producers(self, node: Node) -> list[tuple[Node, int] | None]:
        """Producers of every input anchor of ``node``, in port order."""
        nodes = self._nodes
        out: list[tuple[Node, int] | None] = []
        for p in self._producers[node.id]:  # a plain loop: hot in the matcher and the rewriter
            out.append(None if p is None else (nodes[p[0]], p[1]))
        return out

    def fed_inputs(self, node: Node) -> list[tuple[int, Node, int]]:
        """``(input port, producer, producer output port)`` for every fed input of ``node``, in port order.
        O(inputs)."""
        nodes = self._nodes
        out = []
        port = 0
        for p in self._producers[node.id]:  # a plain loop: the matcher calls this for every node it walks
            if p is not None:
                out.append((port, nodes[p[0]], p[1]))
            port += 1
        return out

    def uses(self, node: Node, port: int) -> list[tuple[Node, int]]:
        """The (consumer, input port) pairs fed by output ``port`` of ``node``, in edge order. O(uses)."""
        self._check_out_port(node, port)
        nodes = self._nodes
        out = []
        for d, p in self._uses[node.id][port]:  # a plain loop: no comprehension call on Python 3.11
            out.append((nodes[d], p))
        return out

    def all_uses(self, node: Node) -> list[tuple[int, Node, int]]:
        """(output port, consumer, input port) for every data edge leaving ``node``. O(uses): to stop early, read
        :meth:`output_uses`."""
        nodes = self._nodes
        out = []
        for sp, uses in enumerate(self._uses[node.id]):  # a plain loop: no comprehension call on Python 3.11
            for d, p in uses:
                out.append((sp, nodes[d], p))
        return out

    def num_uses(self, node: Node, port: int | None = None) -> int:
        """Count of data edges leaving ``node`` (or one output port of it)."""
        lists = self._uses[node.id]
        return len(lists[port]) if port is not None else sum(len(u) for u in lists)

    def data_successors(self, node: Node) -> list[Node]:
        """Distinct consumers of any output of ``node``, in first-use order."""
        seen: dict[int, None] = {}
        for uses in self._uses[node.id]:
            for d, _ in uses:
                seen[d] = None
        return [self._nodes[i] for i in seen]

    def control_predecessors(self, node: Node) -> list[Node]:
        """The sources of the control edges into ``node``, in the order the edges were added. O(result)."""
        if not self._n_ctrl:
            return []
        nodes = self._nodes
        return [nodes[u] for u in self._ctrl_pred.get(node.id, ())]

    def control_successors(self, node: Node) -> list[Node]:
        """The targets of the control edges out of ``node``, in the order the edges were added. O(result)."""
        if not self._n_ctrl:
            return []
        nodes = self._nodes
        return [nodes[v] for v in self._ctrl_succ.get(node.id, ())]

    def successors(self, node: Node) -> list[Node]:
        """Distinct nodes reached by one data or control edge: data consumers by output port and use order, then
        control successors not already listed. O(out-degree)."""
        nodes = self._nodes
        return [nodes[v] for v in dict.fromkeys(self._successor_ids(node.id))]

    def predecessors(self, node: Node) -> list[Node]:
        """Distinct nodes feeding ``node`` by a data or control edge: producers by input port, then control
        predecessors not already listed. O(in-degree)."""
        nodes = self._nodes
        return [nodes[u] for u in dict.fromkeys(self._predecessor_ids(node.id))]

    def data_edges(self) -> list[tuple[Node, int, Node, int]]:
        """Every data edge as (src, src_port, dst, dst_port), ordered by destination position and port."""
        out = []
        for dst in self.nodes():
            for port, prod in enumerate(self._producers[dst.id]):
                if prod is not None:
                    out.append((self._nodes[prod[0]], prod[1], dst, port))
        return out

    def control_edges(self) -> list[tuple[Node, Node]]:
        """Every control edge as (src, dst), ordered by positions."""
        edges = [(u, v) for u, succ in self._ctrl_succ.items() for v in succ]
        edges.sort(key=lambda e: (self._pos[e[1]], self._pos[e[0]]))
        return [(self._nodes[u], self._nodes[v]) for u, v in edges]

    # ------------------------------------------------------------------ edges
    def add_edge(self, src: Node, src_port: int, dst: Node, dst_port: int) -> None:
        """Connect output ``src_port`` of ``src`` to input ``dst_port`` of ``dst``. O(1) amortised.

        Raises:
            GraphError: a port does not exist or the input is already fed.
            CycleError: the edge would close a cycle (the graph is left unchanged).
        """
        nodes = self._nodes
        if nodes.get(src.id) is not src:
            self._check_mine(src)
        if nodes.get(dst.id) is not dst:
            self._check_mine(dst)
        if type(src_port) is not int or not 0 <= src_port < len(src.outputs):
            self._check_out_port(src, src_port)
        if type(dst_port) is not int or not 0 <= dst_port < len(dst.inputs):
            self._check_in_port(dst, dst_port)
        existing = self._producers[dst.id][dst_port]
        if existing is not None:
            prod = self._nodes[existing[0]]
            raise GraphError(
                f"input {dst_port} of {dst.name!r} is already fed by {prod.name}:{existing[1]}; "
                "remove that edge first"
            )
        sid, did = src.id, dst.id
        if self._journals or self._rows_below:
            self._rows_change(sid, did)
        if self._pos[sid] >= self._pos[did]:
            self._order_for_edge(src, dst)
        self._producers[did][dst_port] = (sid, src_port)
        add_use(self._uses[sid], src_port, (did, dst_port))  # a new use goes last
        inference = self._inference
        if inference is not None:
            inference.dirty.add(did)
        store = self._store
        if store is not None:
            _store_add_edge(store, sid, did, (src_port, dst_port))

    def add_edge_trusted(self, src: Node, src_port: int, dst: Node, dst_port: int) -> None:
        """:meth:`add_edge` for trusted callers that already know both nodes are in this graph, both ports exist
        and the input is unfed (nothing of that is re-checked; :meth:`verify` would catch a broken promise). Keeps the topological order (Pearce-Kelly when needed). O(1) amortised.

        Raises:
            CycleError: the edge would close a cycle (the graph is left unchanged).
        """
        sid, did = src.id, dst.id
        if self._journals or self._rows_below:
            self._rows_change(sid, did)
        if self._pos[sid] >= self._pos[did]:
            self._order_for_edge(src, dst)
        self._producers[did][dst_port] = (sid, src_port)
        add_use(self._uses[sid], src_port, (did, dst_port))  # a new use goes last
        inference = self._inference
        if inference is not None:
            inference.dirty.add(did)
        store = self._store
        if store is not None:
            _store_add_edge(store, sid, did, (src_port, dst_port))

    def remove_edge(self, src: Node, src_port: int, dst: Node, dst_port: int) -> None:
        """Remove one data edge; the other uses of the source port keep their order. Raises GraphError when it
        does not exist. O(1)."""
        self._check_mine(src)
        self._check_mine(dst)
        if dst_port < 0 or dst_port >= len(dst.inputs) or self._producers[dst.id][dst_port] != (src.id, src_port):
            raise GraphError(f"there is no data edge {src.name}:{src_port} -> {dst.name}:{dst_port}")
        self._unlink(src.id, src_port, dst.id, dst_port)

    def add_control_edge(self, src: Node, dst: Node) -> None:
        """Add a control edge ``src -> dst`` (idempotent).

        Raises:
            CycleError: the edge would close a cycle.
        """
        self._check_mine(src)
        self._check_mine(dst)
        sid, did = src.id, dst.id
        if did in self._ctrl_succ.get(sid, ()):
            return
        if self._journals:
            self._keep_rows(sid)
            self._keep_rows(did)
        self._order_for_edge(src, dst)
        self._ctrl_succ.setdefault(sid, {})[did] = None
        self._ctrl_pred.setdefault(did, {})[sid] = None
        self._n_ctrl += 1
        store = self._store
        if store is not None:
            _store_add_edge(store, sid, did, _CONTROL_KEY)

    def remove_control_edge(self, src: Node, dst: Node) -> None:
        """Remove a control edge. Raises GraphError when it does not exist."""
        sid, did = src.id, dst.id
        succ = self._ctrl_succ.get(sid)
        if succ is None or did not in succ or self._nodes.get(sid) is not src:
            raise GraphError(f"there is no control edge {src.name} -> {dst.name}")
        if self._journals:
            self._keep_rows(sid)
            self._keep_rows(did)
        del succ[did]
        if not succ:
            del self._ctrl_succ[sid]
        pred = self._ctrl_pred[did]
        del pred[sid]
        if not pred:
            del self._ctrl_pred[did]
        self._n_ctrl -= 1
        store = self._store
        if store is not None:
            _store_remove_edge(store, sid, did, _CONTROL_KEY)

    def has_control_edge(self, src: Node, dst: Node) -> bool:
        """Whether the control edge ``src -> dst`` exists. O(1)."""
        return self._nodes.get(src.id) is src and dst.id in self._ctrl_succ.get(src.id, ())

    @property
    def has_control_edges(self) -> bool:
        """Whether the graph has any control edge. O(1)."""
        return self._n_ctrl > 0

    @property
    def nx_graph(self) -> nx.MultiDiGraph:
        """This graph as a ``networkx.MultiDiGraph``, for networkx's algorithms: nodes are node ids (in the node
        table's order, without data), a data edge's key is ``(src_port, dst_port)``, a control edge's key is
        ``(CONTROL_PORT, CONTROL_PORT)``.

        Built on the first access, O(n + e); from then on every mutation of this graph keeps it current (at a
        constant cost per node or edge), so later accesses are O(1) and always see the graph as it is. Read it,
        never change it: mutate through this class. Copies of the graph start without it.
        """
        store = self._store
        if store is None:
            store = nx.MultiDiGraph()
            for nid in self._nodes:
                _store_add_node(store, nid)
            for nid in self._nodes:
                for sp, uses in enumerate(self._uses[nid]):
                    for did, dp in uses:
                        _store_add_edge(store, nid, did, (sp, dp))
                for did in self._ctrl_succ.get(nid, ()):
                    _store_add_edge(store, nid, did, _CONTROL_KEY)
            self._store = store
        return store

    def replace_all_uses(self, old: Node, old_port: int, new: Node, new_port: int) -> None:
        """Move every consumer of ``old:old_port`` onto ``new:new_port``. O(uses).

        Raises:
            CycleError: a move would close a cycle; the edges moved before it are moved back.
        """
        moved: list[tuple[Node, int]] = []
        try:
            for dst, port in self.uses(old, old_port):
                self.remove_edge(old, old_port, dst, port)
                try:
                    self.add_edge(new, new_port, dst, port)
                except GraphError:
                    self.add_edge(old, old_port, dst, port)
                    raise
                moved.append((dst, port))
        except GraphError:
            for dst, port in moved:
                self.remove_edge(new, new_port, dst, port)
                self.add_edge(old, old_port, dst, port)
            raise

    def _unlink(self, src_id: int, src_port: int, dst_id: int, dst_port: int) -> None:
        if self._journals or self._rows_below:
            self._rows_change(src_id, dst_id)
        inference = self._inference
        if inference is not None:
            inference.dirty.add(dst_id)
        self._producers[dst_id][dst_port] = None
        drop_use(self._uses[src_id][src_port], (dst_id, dst_port))
        store = self._store
        if store is not None:
            _store_remove_edge(store, src_id, dst_id, (src_port, dst_port))

    # ------------------------------------------------------------------ order
    def _order_for_edge(self, src: Node, dst: Node) -> None:
        """Pearce-Kelly: make position(src) < position(dst), or raise CycleError.

        Cost: proportional to the nodes whose positions lie between the two ends and are reachable
        from ``dst`` (forward) or reach ``src`` (backward); zero when the order already holds.
        """
        if src.id == dst.id:
            raise CycleError(f"an edge from {src.name!r} to itself would be a cycle")
        pos = self._pos
        lb, ub = pos[dst.id], pos[src.id]
        if lb > ub:
            return
        forward: list[int] = []
        seen = {dst.id}
        stack = [dst.id]
        while stack:
            n = stack.pop()
            forward.append(n)
            for s in self._successor_ids(n):
                if s == src.id:
                    raise CycleError(
                        f"an edge {src.name!r} -> {dst.name!r} would close a cycle ({dst.name!r} already reaches {src.name!r})"
                    )
                if s not in seen and pos[s] < ub:
                    seen.add(s)
                    stack.append(s)
        backward: list[int] = []
        seen_b = {src.id}
        stack = [src.id]
        while stack:
            n = stack.pop()
            backward.append(n)
            for p in self._predecessor_ids(n):
                if p not in seen_b and pos[p] > lb:
                    seen_b.add(p)
                    stack.append(p)
        backward.sort(key=pos.__getitem__)
        forward.sort(key=pos.__getitem__)
        slots = sorted(pos[n] for n in itertools.chain(backward, forward))
        if self._journals:
            self._keep_positions(itertools.chain(backward, forward))
        for n, slot in zip(itertools.chain(backward, forward), slots, strict=True):
            pos[n] = slot

    def place_between(self, nodes: Sequence[Node], after: Iterable[Node], before: Iterable[Node]) -> None:
        """Give ``nodes`` (listed in a valid topological order) positions after every node in ``after``
        and before every node in ``before``, so later edges to and from them need no reordering.

        Used by the rewriter for freshly inserted nodes. O(len(nodes)), plus O(log k) per node when ``k`` nodes
        placed earlier between the same bounds hold the float it would take (see :func:`_first_free_after`); falls
        back to renumbering all positions (O(n log n)) when the gap is exhausted by float precision.
        """
        if not nodes:
            return
        after, before = list(after), list(before)
        pos = self._pos
        lo: float | None = None
        for n in after:  # plain loops: this runs once per rewrite
            p = pos[n.id]
            if lo is None or p > lo:
                lo = p
        hi: float | None = None
        for n in before:
            p = pos[n.id]
            if hi is None or p < hi:
                hi = p
        if lo is None and hi is None:
            return
        if hi is None:
            for n in nodes:
                self._move_to(n, self._next_pos)
                self._next_pos += 1.0
            return
        if lo is None:
            lo = hi - 1.0
        if lo >= hi:
            return  # edges added later reorder through Pearce-Kelly
        step = (hi - lo) / (len(nodes) + 1)
        chosen: list[float] = []
        previous = lo
        taken = self._taken
        for i in range(len(nodes)):
            p = lo + step * (i + 1)
            if p <= previous:  # else p is already at least the float after ``previous``
                p = math.nextafter(previous, hi)
            if p in taken or p.is_integer():
                p = _first_free_after(p, hi, taken)
            if p >= hi or p <= previous:
                self._renumber()
                self.place_between(nodes, after, before)
                return
            chosen.append(p)
            previous = p
        for n, p in zip(nodes, chosen, strict=True):
            self._move_to(n, p)

    def _move_to(self, node: Node, position: float) -> None:
        if self._journals:
            self._keep_positions((node.id,))
        self._taken.discard(self._pos[node.id])
        self._pos[node.id] = position
        if not position.is_integer():
            self._taken.add(position)

    def _renumber(self) -> None:
        if self._journals:
            self._keep_positions(list(self._nodes))
        pos = self._pos
        for i, nid in enumerate(sorted(self._nodes, key=pos.__getitem__)):
            pos[nid] = float(i) * 1024.0
        self._taken = set()  # every position is integral now
        self._next_pos = float(len(self._nodes)) * 1024.0
        _log.debug("graph %s: renumbered %d topological positions", self.name, len(self._nodes))

    # ------------------------------------------------------------------ reachability
    def reaches_any(self, starts: Iterable[Node], targets: set[int], *, limit: float | None = None) -> bool:
        """True if a forward path (data or control) from any of ``starts`` hits a node id in ``targets``.

        Only nodes with position <= ``limit`` are explored (no node past the last target can reach a
        target), which bounds the search by topological positions.
        """
        if limit is None:
            limit = max((self._pos[t] for t in targets), default=-1.0)
        pos = self._pos
        return self._reaches_ids([n.id for n in starts if pos[n.id] <= limit], targets, limit)

    def _reaches_ids(self, start_ids: list[int], targets: Container[int], limit: float) -> bool:
        """:meth:`reaches_any` from node ids, each placed at most at ``limit`` (``start_ids`` becomes the search
        stack)."""
        pos = self._pos
        stack = start_ids
        seen = set(stack)
        while stack:
            n = stack.pop()
            if n in targets:
                return True
            for s in self._successor_ids(n):
                if s not in seen and pos[s] <= limit:
                    seen.add(s)
                    stack.append(s)
        return False

    def contraction_closes_cycle(self, nodes: Iterable[Node]) -> bool:
        """True when contracting ``nodes`` (nodes of this graph) into one node would close a cycle: a node
        reachable forward (data or control edges) from a successor outside the set is in the set.

        Cost: O(out-degree of the set) when no outside successor comes before the set's last node in the
        topological order (nothing placed after it can lead back); else a search that visits only nodes placed
        up to that last node."""
        members: set[int] = set()
        for n in nodes:  # plain loops: the fusion runtime asks this per match
            members.add(n.id)
        if len(members) < 2:
            return False
        pos = self._pos
        limit = -math.inf
        for nid in members:
            p = pos[nid]
            if p > limit:
                limit = p
        starts: list[int] = []
        for nid in members:
            for sid in self._successor_ids(nid):
                if sid not in members and pos[sid] < limit:
                    starts.append(sid)
        return bool(starts) and self._reaches_ids(starts, members, limit)

    def _successor_ids(self, nid: int) -> list[int]:
        """Ids reached from ``nid`` by one data or control edge (repeats possible). O(out-degree)."""
        out = [d for uses in self._uses[nid] for d, _ in uses]
        if self._n_ctrl:
            out.extend(self._ctrl_succ.get(nid, ()))
        return out

    def _predecessor_ids(self, nid: int) -> list[int]:
        """Ids feeding ``nid`` by one data or control edge (repeats possible). O(in-degree)."""
        out = [p[0] for p in self._producers[nid] if p is not None]
        if self._n_ctrl:
            out.extend(self._ctrl_pred.get(nid, ()))
        return out

    # ------------------------------------------------------------------ subgraphs
    def add_subgraph(self, graph: Graph, *, parent_node: Node | None = None) -> None:
        """Attach ``graph`` as a subgraph of this (root) graph. Raises GraphError on a name clash."""
        if graph.name in self.subgraphs:
            raise GraphError(f"graph {self.name!r} already has a subgraph named {graph.name!r}")
        graph.parent_graph = self
        if parent_node is not None:
            graph.parent_node_name = parent_node.name
            if graph.name not in parent_node.subgraph_names:
                if self._journals and self._nodes.get(parent_node.id) is parent_node:
                    self._keep(parent_node.id)
                parent_node.subgraph_names = [*parent_node.subgraph_names, graph.name]
        self.subgraphs[graph.name] = graph

    def remove_subgraph(self, name: str) -> Graph:
        """Detach and return the subgraph ``name``. Raises GraphError when absent."""
        try:
            graph = self.subgraphs.pop(name)
        except KeyError:
            raise GraphError(f"graph {self.name!r} has no subgraph named {name!r}") from None
        graph.parent_graph = None
        return graph

    # ------------------------------------------------------------------ whole-graph
    def copy(self, name: str | None = None, *, share: bool = False) -> Graph:
        """A copy with the same node ids, names, positions and subgraphs. O(n + e).

        The copy has node objects and tables of its own. By default every node's ``attrs``, anchor descs and
        edge-table rows are copied too. ``share=True`` makes a copy-on-write copy: each node's ``attrs`` dict
        and anchor desc lists stay shared with the original until either graph's :meth:`touch` announces an
        in-place change of that node, which first gives the node private copies; its edge-table rows stay shared
        until either graph's edge methods change them. The two graphs then stay independent for every
        change made through the graph's methods, the ``ge`` facade or after ``touch`` (the documented way to edit
        a node in place, see :class:`Node`), at the cost of about one node object per node instead of a full
        copy; a change that skips ``touch`` would show in both. ``compile()`` copies the caller's graph this way.

        Runs inside :func:`collector_paused` (a copy allocates many objects and frees none, so the collector's
        automatic passes would only rescan it).
        """
        with collector_paused():
            return self._copy(name, share)

    def _copy(self, name: str | None, share: bool) -> Graph:
        clone = Graph(self.name if name is None else name)
        clone.attrs = copy_attrs(self.attrs)
        clone.parent_node_name = self.parent_node_name
        if not share:
            clone._producers = [None] * len(self._producers)
            clone._uses = [None] * len(self._uses)
        # the name and op-type indexes list the same ids under the same keys: copied whole, not rebuilt per node
        clone._by_name = self._by_name.copy()
        clone._by_type = {op_type: ids.copy() for op_type, ids in self._by_type.items()}
        nodes = clone._nodes
        if share:
            for nid, node in self._nodes.items():
                nodes[nid] = node._share_into(clone)
        else:
            for nid, node in self._nodes.items():
                nodes[nid] = node._clone_into(clone, nid, node._name)
                clone._producers[nid] = self._producers[nid].copy()  # type: ignore[union-attr]
                clone._uses[nid] = list(map(copy_uses, self._uses[nid]))  # type: ignore[arg-type]
        if share:  # the rows too: both graphs copy a node's rows before they change them
            clone._producers = self._producers.copy()
            clone._uses = self._uses.copy()
            clone._share_below = self._share_below = self._next_id
            clone._owned = set()
            self._owned = set()
            clone._rows_below = self._rows_below = self._next_id
            clone._rows_owned = bytearray(self._next_id)
            self._rows_owned = bytearray(self._next_id)
        clone._pos = array("d", self._pos)
        clone._taken = set(self._taken)
        clone._next_pos = self._next_pos
        clone._next_id = self._next_id
        clone._name_counters = dict(self._name_counters)
        clone._n_ctrl = self._n_ctrl
        clone._ctrl_succ = {n: dict(succ) for n, succ in self._ctrl_succ.items()}
        clone._ctrl_pred = {n: dict(pred) for n, pred in self._ctrl_pred.items()}
        if self._inference is not None:
            clone._inference = self._inference.copy()
        for sub in self.subgraphs.values():
            sub_copy = sub.copy(share=share)
            sub_copy.parent_graph = clone
            clone.subgraphs[sub_copy.name] = sub_copy
        return clone

    def all_graphs(self) -> list[Graph]:
        """This graph followed by its subgraphs in name order."""
        return [self, *(self.subgraphs[k] for k in sorted(self.subgraphs))]

    def verify(self) -> None:
        """Check every invariant of the tables, the indexes and the networkx view (when built). O(n + e).

        Raises:
            GraphError: naming the first broken invariant.
        """
        if NO_INPUTS or _NO_PRODUCERS or NO_SUBGRAPHS:
            raise GraphError("a shared empty list (Node inputs, producers row or subgraph names) was changed in place")
        if {n.name: i for i, n in self._nodes.items()} != self._by_name:
            raise GraphError(f"graph {self.name!r}: name index is stale")
        by_type: dict[str, set[int]] = {}
        for nid, node in self._nodes.items():
            if node.id != nid or node._graph is not self:
                raise GraphError(f"graph {self.name!r}: node #{nid} has a wrong id or owner")
            by_type.setdefault(node.op_type, set()).add(nid)
            if len(node.input_names) != len(node.inputs) or len(node.output_names) != len(node.outputs):
                raise GraphError(f"node {node.name!r}: anchor names and descs differ in length")
            if len(self._producers[nid]) != len(node.inputs) or len(self._uses[nid]) != len(node.outputs):
                raise GraphError(f"node {node.name!r}: anchor tables do not match its anchors")
        if {k: set(v) for k, v in self._by_type.items()} != by_type:
            raise GraphError(f"graph {self.name!r}: op-type index is stale")
        data_edges: set[tuple[int, int, int, int]] = set()
        rows = len(self._producers)
        if len(self._uses) != rows or any(nid >= rows for nid in self._nodes) or any(
                (row is not None) != (nid in self._nodes) for nid, row in enumerate(self._producers)) or any(
                (row is not None) != (nid in self._nodes) for nid, row in enumerate(self._uses)):
            raise GraphError(f"graph {self.name!r}: the edge tables hold rows of nodes not in the graph, or miss some")
        for dst in self._nodes:
            for port, prod in enumerate(self._producers[dst]):  # type: ignore[arg-type]
                if prod is not None:
                    data_edges.add((prod[0], prod[1], dst, port))
        use_edges: set[tuple[int, int, int, int]] = set()
        for src in self._nodes:
            for sp, uses in enumerate(self._uses[src]):  # type: ignore[arg-type]
                if type(uses) is not list and type(uses) is not dict:
                    raise GraphError(f"graph {self.name!r}: the uses of #{src}:{sp} are a {type(uses).__name__}, "
                                     "not a list or dict (see ir._uses)")
                for dst, dp in uses:
                    if (src, sp, dst, dp) in use_edges:
                        raise GraphError(f"graph {self.name!r}: duplicate use entry from #{src}:{sp}")
                    use_edges.add((src, sp, dst, dp))
        if data_edges != use_edges:
            raise GraphError(f"graph {self.name!r}: producer table and use lists disagree")
        ctrl_edges = {(u, v) for u, succ in self._ctrl_succ.items() for v in succ}
        if (ctrl_edges != {(u, v) for v, pred in self._ctrl_pred.items() for u in pred}
                or not all(self._ctrl_succ.values()) or not all(self._ctrl_pred.values())):
            raise GraphError(f"graph {self.name!r}: control successor and predecessor tables disagree")
        if len(ctrl_edges) != self._n_ctrl:
            raise GraphError(f"graph {self.name!r}: control edge count is stale ({self._n_ctrl} kept, "
                             f"{len(ctrl_edges)} in the tables)")
        for src, sp, dst, dp in data_edges:
            if src not in self._nodes or sp >= len(self._nodes[src].outputs) or dp >= len(self._nodes[dst].inputs):
                raise GraphError(f"graph {self.name!r}: an edge uses a node or port that does not exist")
        for u, v in itertools.chain(((e[0], e[2]) for e in data_edges), ctrl_edges):
            if u not in self._nodes or v not in self._nodes:
                raise GraphError(f"graph {self.name!r}: an edge ends at a node that does not exist")
            if self._pos[u] >= self._pos[v]:
                raise GraphError(
                    f"graph {self.name!r}: topological positions break edge "
                    f"{self._nodes[u].name} -> {self._nodes[v].name}"
                )
        store = self._store
        if store is not None:
            if set(store.nodes) != set(self._nodes):
                raise GraphError(f"graph {self.name!r}: the networkx view and the node table differ")
            view_edges = {(u, k[0], v, k[1]) for u, v, k in store.edges(keys=True)}
            expected = data_edges | {(u, CONTROL_PORT, v, CONTROL_PORT) for u, v in ctrl_edges}
            if view_edges != expected or store.number_of_edges() != len(expected):
                raise GraphError(f"graph {self.name!r}: the networkx view and the edge tables disagree")
        positions = [self._pos[nid] for nid in self._nodes]
        if len(set(positions)) != len(positions) or any(math.isnan(p) for p in positions):
            raise GraphError(f"graph {self.name!r}: two nodes share a topological position")
        if self._taken != {p for p in positions if not p.is_integer()}:
            raise GraphError(f"graph {self.name!r}: the set of non-integral positions is stale")
        for sub in self.subgraphs.values():
            sub.verify()

    # ------------------------------------------------------------------ helpers
    def _check_mine(self, node: Node) -> None:
        if self._nodes.get(node.id) is not node:
            raise GraphError(f"node {node.name!r} does not belong to graph {self.name!r}")

    def _check_in_port(self, node: Node, port: int) -> None:
        if not isinstance(port, int) or port < 0 or port >= len(node.inputs):
            raise GraphError(f"node {node.name!r} ({node.op_type}) has no input {port}; it has {len(node.inputs)}")

    def _check_out_port(self, node: Node, port: int) -> None:
        if not isinstance(port, int) or port < 0 or port >= len(node.outputs):
            raise GraphError(f"node {node.name!r} ({node.op_type}) has no output {port}; it has {len(node.outputs)}")

    def __repr__(self) -> str:
        from ._text import to_text

        return to_text(self)


class _BuiltOnRead:
    """A :class:`StagedGraph` table (one of :data:`_STAGED_TABLES`): reading it builds every table and turns the
    graph into a plain :class:`Graph`, whose instance attributes then answer every later read. A non-data
    descriptor, so assignments go to the instance as usual."""

    __slots__ = ("attr",)

    def __init__(self, attr: str) -> None:
        self.attr = attr

    def __get__(self, graph: StagedGraph | None, owner: type | None = None) -> Any:
        if graph is None:
            return self
        graph._unstage()
        return graph.__dict__[self.attr]


class StagedGraph(Graph):
    """A :class:`Graph` for builders: while nodes are added and linked forward (every data edge from an older
    node to a newer one), only the node table, the name index and a list of the edges are kept.

    The first time anything reads another table (producers, uses, positions, the op-type index, the control
    tables, ...), or an edge goes backward, a node is removed or gets an explicit id, the tables are built in one
    go, O(n + e), by indexing the nodes in creation order and replaying the edges in order; the graph then turns
    into a plain :class:`Graph` equal to one built without staging (``successors()`` order included). Builders
    make small graphs per rewrite that the rewriter often consumes straight from the staged form
    (:meth:`nodes_in_creation_order`, :meth:`staged_edges`), so those never build the tables. The tables are
    class-level :class:`_BuiltOnRead` descriptors rather than a ``__getattr__``: a class with ``__getattr__``
    loses the interpreter's specialised attribute reads (about 3.5x slower per read, measured on 3.11), and a
    builder reads its graph's attributes some 75 times per replacement.
    """

    def _empty_tables(self) -> None:
        """The one table a staged graph keeps besides the node table and the name index (``__init__`` and
        ``clear`` call this; the others are built on first read, by :meth:`_unstage`)."""
        # the data edges added so far, in order, as (src id, src port, dst id, dst port)
        self._staged_edges: list[tuple[int, int, int, int]] = []

    def _unstage(self) -> None:
        """Build the tables (nodes indexed in creation order, then the edges replayed) and become a Graph."""
        edges = self.__dict__.pop("_staged_edges")
        self.__class__ = Graph  # type: ignore[assignment]
        self._empty_tables()
        nodes = self._nodes
        for nid, node in nodes.items():  # the table keeps creation order
            self._index(node, nid, node._op_type)
        for sid, sport, did, dport in edges:
            self.add_edge_trusted(nodes[sid], sport, nodes[did], dport)

    @property
    def staged(self) -> bool:
        return True

    def staged_edges(self) -> list[tuple[int, int, int, int]] | None:
        """The data edges as ``(src id, src port, dst id, dst port)`` in the order they were added; each goes from
        an older node to a newer one, so creation order is a topological order (and there are no control edges).
        The list is the graph's own: read it, never change it. O(1)."""
        return self._staged_edges

    @property
    def has_control_edges(self) -> bool:
        return False

    def add_node(self, op_type: str, **kwargs: Any) -> Node:
        if kwargs.get("node_id") is not None:
            self._unstage()  # staging relies on ids following creation order
        return Graph.add_node(self, op_type, **kwargs)

    def _register(self, node: Node, node_id: int, name: str, op_type: str) -> None:
        self._nodes[node_id] = node
        self._by_name[name] = node_id

    def add_edge_trusted(self, src: Node, src_port: int, dst: Node, dst_port: int) -> None:
        sid, did = src.id, dst.id
        if sid < did:  # ids follow creation order: a forward edge keeps the graph staged
            self._staged_edges.append((sid, src_port, did, dst_port))
            return
        self._unstage()
        Graph.add_edge_trusted(self, src, src_port, dst, dst_port)


for _table in _STAGED_TABLES:
    setattr(StagedGraph, _table, _BuiltOnRead(_table))
del _table
