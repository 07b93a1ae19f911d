"""A hierarchy of groups over a graph's nodes, derived from their names, for drawing large graphs a level at a time.

The workbench never lays out a large graph whole: it draws one *level* (the children of one group: sub-groups as
boxes, its own nodes as ops) and lets the user expand a box into its level. This module derives the groups; it is
pure (no widget, no layout) and read-only on the graph.

How the groups are found, first rule that applies:

1. **Name scopes** (ONNX/torch exports, GE names with ``/``): when at least :data:`SCOPE_SHARE` of the non-Const
   nodes have ``/`` in their names, a node's group path is its name's scopes (``/layers.3/attn/MatMul`` ->
   ``layers.3 > attn``; a GE prefix such as ``PartitionedCall_/layers.3/...`` is skipped).
2. **Name stems** (flat names such as ``l12_q_MatMul``, ``blk3.conv``, GE's ``PartitionedCall_l12_T_...``): the
   first name token made of letters then digits (``l12``), and the token after it as a sub-group when the name has
   more tokens (``l12 > q``). Used only when most nodes have a stem and each stem's nodes are (nearly) contiguous
   in graph order, so that names like ``MatMul_12`` or ``Conv2d_5`` never merge unrelated nodes.
3. **Repeated blocks** (names with no structure, such as ``MatMul_812``): when the op types in graph order repeat
   one run of ops (a stack of identical layers; :mod:`._blocks` finds the run from a marker op type and starts
   each block where the fewest values are live), each repetition is a group ``block 7 of 48``, with groups for
   what comes before the first block and after the last.
4. **Topological chunks**: otherwise the nodes stay in one level, which the fan-out bound below splits into
   chunks of consecutive nodes (graph order).

Then, for every rule: nodes without a path of their own (inputs, outputs, names without structure) take the path
of a consumer or producer that has one, else of the previous node in graph order; nodes created by a pass
(``Node.provenance``) go into a group named after the pass (``⟨pass⟩``) inside their neighbours' group; Const
nodes join the group of their first consumer. A group holding one node only is dissolved into its parent, and a
root holding a single group is replaced by that group's content.

**Bounded fan-out**: no group has more than ``max_children`` items (child groups plus non-Const nodes of its own);
a larger group gets *range* groups of consecutive items in graph order (``l0 … l17``), nested as deep as needed
and balanced, so every level stays small enough to lay out quickly and to read. Groups never merge names
alphabetically: children are always in graph order (by their first node).

Costs: :func:`derive_hierarchy` reads the graph's tables in bulk (node order, names, op types, provenance and the
data edges as numpy arrays: no per-node Python object beyond the lists of names it parses), runs the name rule
once per distinct name (a ``cache`` shared between the graphs of one run makes a snapshot's names, mostly the
final graph's, cost a dict lookup each), and groups in one pass over the non-Const nodes and O(groups) after
that. The edges of a level (which boxes connect, how many edges leave each item) are found only when the level is
drawn, with array operations over the edge arrays: O(e) numpy work per level, O(edges of the level) Python.

Invariants: every node of the graph is in exactly one group (``group_of``); group 0 is the root; groups are numbered
breadth first (a parent before its children, a level's children consecutive); a group's ``children`` and ``nodes``
are in graph order; ``size`` counts every node under a group (Consts included).
"""

from __future__ import annotations

import math
import operator
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import Any

import numpy as np

from gebench import ir

from ._blocks import MIN_BLOCKS, MIN_PERIOD, find_blocks
from ._dot import CONST_OP_TYPES, GraphView, ViewEdge, ViewNode, node_element_id, tensor_label

__all__ = ["Group", "Hierarchy", "derive_hierarchy", "group_element_id"]

#: share of non-Const nodes with ``/`` in their names above which scopes define the groups
SCOPE_SHARE = 0.3
#: share of non-Const nodes that must have a name stem for stems to define the groups
STEM_SHARE = 0.5

#: graph inputs and outputs: at the root unless their names carry a path
_BOUNDARY_OPS = frozenset({"Data", "NetOutput", "RefData"})

#: the first token of letters then digits (the stem), and the next token when another one follows it
_STEM_SEARCH = re.compile(r"(?:^|[_.\-:])([A-Za-z]+\d+)(?=[_.\-:]|$)(?:[_.\-:]+([^_.\-:]+)[_.\-:]+[^_.\-:])?")
#: the same search once per line of names joined by newlines (one match per line, empty groups without a stem):
#: the regex engine walks all names in one call
_STEM_LINES = re.compile(
    r"^(?:[^\n]*?(?:^|(?<=[_.\-:]))([A-Za-z]+\d+)(?=[_.\-:\n]|$)(?:[_.\-:]+([^_.\-:\n]+)[_.\-:]+[^_.\-:\n])?)?[^\n]*$",
    re.MULTILINE,
)

_name_of = operator.attrgetter("_name")
_op_of = operator.attrgetter("_op_type")
_provenance_of = operator.attrgetter("provenance")
_first = operator.itemgetter(0)


#: views (a level with a set of groups expanded in place) whose edges, boxes and representatives a hierarchy keeps
VIEWS_KEPT = 64


def _keep_view(cache: dict[tuple[int, ...], Any], opened: tuple[int, ...], value: Any) -> None:
    """``cache[opened] = value``, forgetting the oldest view first when :data:`VIEWS_KEPT` are kept (each holds
    O(groups) or O(edges of the view))."""
    if len(cache) >= VIEWS_KEPT:
        del cache[next(iter(cache))]
    cache[opened] = value


def group_element_id(gid: int) -> str:
    """The SVG element id of a drawn group box."""
    return f"g{gid}"


def _item_key(gid: int) -> int:
    """Items of a level are node ids (>= 0) or ``-(group id + 1)`` for child groups."""
    return -(gid + 1)


@dataclass(slots=True)
class Group:
    """One group of the hierarchy.

    Attributes:
        id: index in :attr:`Hierarchy.groups` (0 is the root).
        label: what the group box shows (a scope or stem name, ``first … last`` for a range).
        kind: ``"root"``, ``"scope"``, ``"stem"``, ``"block"`` (a repeated block), ``"pass"`` (nodes a pass
            created) or ``"range"``.
        parent: the parent group id (-1 for the root).
        children: child group ids in graph order.
        nodes: ids of the nodes directly in this group, in graph order (Consts included).
        size: nodes under this group, all levels (Consts included).
        first: graph-order index of its first node (orders siblings).
    """

    id: int
    label: str
    kind: str
    parent: int
    children: list[int] = field(default_factory=list)
    nodes: list[int] = field(default_factory=list)
    size: int = 0
    first: int = 0


class _GroupOf(Mapping[int, int]):
    """Node id -> id of the group holding it directly: a list indexed by node id (-1 where no node). O(1) reads."""

    def __init__(self, table: list[int], count: int) -> None:
        self._table = table
        self._count = count

    def __getitem__(self, node_id: int) -> int:
        try:
            gid = self._table[node_id] if node_id >= 0 else -1
        except (IndexError, TypeError):
            raise KeyError(node_id) from None
        if gid < 0:
            raise KeyError(node_id)
        return gid

    def get(self, node_id: int, default: int | None = None) -> int | None:  # type: ignore[override]
        try:
            gid = self._table[node_id] if node_id >= 0 else -1
        except (IndexError, TypeError):
            return default
        return default if gid < 0 else gid

    def __contains__(self, node_id: object) -> bool:
        return self.get(node_id) is not None  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[int]:
        return (nid for nid, gid in enumerate(self._table) if gid >= 0)

    def __len__(self) -> int:
        return self._count


@dataclass
class _Edges:
    """The graph's data edges (by destination position and port) then its control edges, as arrays."""

    src: np.ndarray  # node ids
    src_port: np.ndarray
    dst: np.ndarray
    dst_port: np.ndarray
    src_group: np.ndarray  # group ids (final numbering)
    dst_group: np.ndarray


class Hierarchy:
    """Groups over one graph's nodes (see the module docstring); built by :func:`derive_hierarchy`.

    Attributes:
        graph: the graph (read-only here).
        groups: every group; ``groups[0]`` is the root.
        group_of: node id -> id of the group that holds it directly.
        mode: the rule that made the groups: ``"scope"``, ``"stem"``, ``"block"`` or ``"chunks"``.
        work: what deriving and drawing cost, counted: ``nodes`` (read in bulk), ``names_parsed`` (names the
            scope or stem rule ran on; the others came from the cache), ``edges`` (in the edge arrays),
            ``levels_indexed`` (levels whose edges were sorted out, each once), ``python_edges`` (edges handled
            one by one in Python for those levels).
    """

    def __init__(
        self,
        graph: ir.Graph,
        groups: list[Group],
        group_of: Mapping[int, int],
        mode: str,
        index_of: np.ndarray,
        edges: _Edges | None = None,
        work: dict[str, int] | None = None,
    ) -> None:
        self.graph = graph
        self.groups = groups
        self.group_of = group_of
        self.mode = mode
        self._index_of = index_of  # node id -> graph-order index (-1 where no node)
        self._depth: list[int] = []
        self._recount_depths()
        self._edge_arrays = edges
        self._tin: np.ndarray | None = None
        self._tout: np.ndarray | None = None
        self._levels: dict[
            tuple[int, ...], tuple[list[tuple[int, int, int, int]], list[tuple[int, int, int]], dict[int, int]]
        ]
        self._levels = {}
        self._ops: dict[int, Counter[str]] = {}
        self._boxes: dict[tuple[int, ...], list[str | None]] = {}
        self._reps: dict[tuple[int, ...], np.ndarray] = {}
        self._preorder: np.ndarray | None = None
        self.work: dict[str, int] = dict(work or {})
        self.work.setdefault("levels_indexed", 0)
        self.work.setdefault("python_edges", 0)

    def _recount_depths(self) -> None:
        depth = [0] * len(self.groups)
        for g in self.groups[1:]:  # parents are always numbered before their children
            depth[g.id] = depth[g.parent] + 1 if g.parent >= 0 else 0
        self._depth = depth

    def __len__(self) -> int:
        return len(self.groups)

    @property
    def root(self) -> Group:
        return self.groups[0]

    def path(self, gid: int) -> list[int]:
        """Group ids from the root down to ``gid`` (both included). O(depth)."""
        out = []
        while gid >= 0:
            out.append(gid)
            gid = self.groups[gid].parent
        return out[::-1]

    def breadcrumb(self, gid: int) -> list[dict[str, object]]:
        """``[{"group": id, "label": ...}, ...]`` from the root to ``gid``. O(depth)."""
        return [{"group": g, "label": self.groups[g].label if g else "model"} for g in self.path(gid)]

    def item_at(self, level: int, node_id: int, expanded: Iterable[int] = ()) -> int | None:
        """The item of level ``level`` (the children of group ``level``, with the groups of ``expanded`` open in
        place) standing for ``node_id``: the node id itself when the node is directly in ``level`` or in an open
        group, ``-(group id + 1)`` for the closed group box holding it, None when the node is not under
        ``level`` (or not in the graph). O(depth + open groups)."""
        return self._item_in(set(self.open_groups(level, expanded)), node_id)

    def _item_in(self, opened: set[int], node_id: int) -> int | None:
        """:meth:`item_at` for the view whose open groups are ``opened``. O(depth)."""
        gid = self.group_of.get(node_id)
        if gid is None:
            return None
        if gid in opened:
            return node_id
        groups = self.groups
        while gid >= 0:
            parent = groups[gid].parent
            if parent in opened:
                return _item_key(gid)
            gid = parent
        return None

    def open_groups(self, level: int, expanded: Iterable[int] = ()) -> tuple[int, ...]:
        """The groups drawn open in the view of level ``level`` when the groups ``expanded`` are expanded in
        place: ``level`` first, then each expanded group whose parent is open, depth first with children in graph
        order (a parent before its children). Expanded groups that are not under ``level``, or sit inside a
        closed group, are left out. O(open groups * their children)."""
        want = set(expanded)
        want.discard(level)
        out = [level]
        if want:
            stack = [level]
            while stack:
                gid = stack.pop()
                if gid != level:
                    out.append(gid)
                stack.extend(c for c in reversed(self.groups[gid].children) if c in want)
        return tuple(out)

    def group_containing(self, node_ids: Iterable[int]) -> int:
        """The deepest group holding all of ``node_ids`` (the root when they span top-level groups). O(k * depth)."""
        common: list[int] | None = None
        for nid in node_ids:
            gid = self.group_of.get(nid)
            if gid is None:
                continue
            path = self.path(gid)
            if common is None:
                common = path
            else:
                i = 0
                while i < min(len(common), len(path)) and common[i] == path[i]:
                    i += 1
                common = common[:i]
        return common[-1] if common else 0

    def top_ops(self, gid: int, k: int = 2, *, sample: int = 2000) -> list[str]:
        """The ``k`` most common non-Const op types under group ``gid``, counted over its first ``sample`` nodes
        (depth first, children in graph order). O(min(size, sample)) the first time, then cached."""
        ops = self._ops.get(gid)
        if ops is None:
            ids: list[int] = []
            stack = [gid]
            while stack and len(ids) < sample:
                g = self.groups[stack.pop()]
                stack.extend(reversed(g.children))
                ids.extend(g.nodes)
            ops = Counter(map(_op_of, map(self.graph._nodes.__getitem__, ids)))
            for op in CONST_OP_TYPES:
                ops.pop(op, None)
            self._ops[gid] = ops
        return [op for op, _ in ops.most_common(k)]

    # ------------------------------------------------------------------ edges per level
    def _euler(self) -> tuple[np.ndarray, np.ndarray]:
        """Depth-first entry and exit numbers of the groups (children in order): group ``g`` is under group ``a``
        when ``tin[a] <= tin[g] < tout[a]``. Array work per depth (the groups are numbered breadth first, so a
        depth's groups come by parent, siblings in order), once."""
        if self._tin is None:
            groups = self.groups
            n = len(groups)
            parent = np.fromiter((g.parent for g in groups), dtype=np.int64, count=n)
            depth = np.array(self._depth, dtype=np.int64)
            size = np.ones(n, dtype=np.int64)  # groups in each subtree
            by_depth = [np.flatnonzero(depth == d) for d in range(int(depth.max()) + 1)] if n else []
            for at in reversed(by_depth[1:]):
                np.add.at(size, parent[at], size[at])
            tin = np.zeros(n, dtype=np.int64)
            for at in by_depth[1:]:
                p, sz = parent[at], size[at]
                before = np.cumsum(sz) - sz  # subtree sizes of the groups before, at this depth
                starts = np.flatnonzero(np.r_[True, p[1:] != p[:-1]])  # each parent's first child
                first_before = np.repeat(before[starts], np.diff(np.r_[starts, len(at)]))
                tin[at] = tin[p] + 1 + before - first_before
            self._tin, self._tout = tin, tin + size
        assert self._tout is not None
        return self._tin, self._tout

    def _representatives(self, opened: tuple[int, ...]) -> np.ndarray:
        """Group id -> what stands for its nodes in the view whose open groups are ``opened``
        (:meth:`open_groups`): ``-2`` for an open group (its own nodes are drawn), the id of the closed box
        holding it for a group under an open one, ``-1`` for a group outside the view. O(groups) array work once
        per view (every open group's children assign their subtree: parents come first in ``opened``)."""
        rep = self._reps.get(opened)
        if rep is None:
            tin, tout = self._euler()
            if self._preorder is None:
                order = np.empty(len(self.groups), dtype=np.int64)
                order[tin] = np.arange(len(self.groups), dtype=np.int64)
                self._preorder = order
            order = self._preorder
            rep = np.full(len(self.groups), -1, dtype=np.int64)
            for gid in opened:
                for c in self.groups[gid].children:
                    rep[order[tin[c]:tout[c]]] = c
            rep[list(opened)] = -2
            _keep_view(self._reps, opened, rep)
        return rep

    def group_boxes(self, level: int, expanded: Iterable[int] = ()) -> list[str | None]:
        """Group id -> element id of the box holding it in the view of level ``level`` with ``expanded`` open
        in place (None for an open group, whose nodes are drawn, and for groups not under ``level``). O(groups)
        array work once per view, then O(1) per read."""
        opened = self.open_groups(level, expanded)
        boxes = self._boxes.get(opened)
        if boxes is None:
            rep = self._representatives(opened)
            out = np.full(len(self.groups), None, dtype=object)
            boxed = np.flatnonzero(rep >= 0)
            if len(boxed):
                ids = np.unique(rep[boxed])
                names = np.array([group_element_id(int(c)) for c in ids.tolist()], dtype=object)
                out[boxed] = names[np.searchsorted(ids, rep[boxed])]
            boxes = out.tolist()
            _keep_view(self._boxes, opened, boxes)
        return boxes

    def _edges_of(self) -> _Edges:
        if self._edge_arrays is None:  # a hierarchy built without them (never by derive_hierarchy)
            self._edge_arrays = _edge_arrays(self.graph, self._index_of, self._node_groups())
        return self._edge_arrays

    def _node_groups(self) -> np.ndarray:
        table = np.full(len(self._index_of), -1, dtype=np.int64)
        for g in self.groups:
            table[g.nodes] = g.id
        return table

    def _level_edges(
        self, opened: tuple[int, ...]
    ) -> tuple[list[tuple[int, int, int, int]], list[tuple[int, int, int]], dict[int, int]]:
        """The edges of the view whose open groups are ``opened`` (:meth:`open_groups`; ``opened[0]`` is the
        level): the ones between two drawn nodes (``(src, src port, dst, dst port)``, data then control edges, by
        destination position), the counted ones between items where one end is a closed group (``(item, item,
        count)``, sorted), and ``item -> edges leaving the level`` from an item. Items are node ids, or
        ``-(group id + 1)`` for a closed group box. O(e) array operations and O(edges of the view) Python, once
        per view."""
        hit = self._levels.get(opened)
        if hit is not None:
            return hit
        e = self._edges_of()
        rep = self._representatives(opened)
        rs, rd = rep[e.src_group], rep[e.dst_group]
        in_s, in_d = rs != -1, rd != -1
        if opened[0] == 0:
            sel = np.arange(len(e.src))
            one = np.empty(0, dtype=np.int64)
            one_src_inside = np.empty(0, dtype=bool)
        else:
            sel = np.flatnonzero(in_s & in_d)
            one = np.flatnonzero(in_s ^ in_d)
            one_src_inside = in_s[one]

        def items(node_ids: np.ndarray, reps: np.ndarray) -> np.ndarray:
            """Each end's item: its node id when its group is open, else its closed box's key."""
            return np.where(reps == -2, node_ids, -(reps + 1))

        s_open, d_open = rs[sel] == -2, rd[sel] == -2
        direct_mask = s_open & d_open
        d_idx = sel[direct_mask]
        direct = list(
            zip(
                e.src[d_idx].tolist(),
                e.src_port[d_idx].tolist(),
                e.dst[d_idx].tolist(),
                e.dst_port[d_idx].tolist(),
                strict=True,
            )
        )
        rest = sel[~direct_mask]
        ia = items(e.src[rest], rs[rest])
        ib = items(e.dst[rest], rd[rest])
        cross = ia != ib
        counted: list[tuple[int, int, int]] = []
        if cross.any():
            pairs, counts = np.unique(np.stack([ia[cross], ib[cross]], axis=1), axis=0, return_counts=True)
            counted = list(zip(pairs[:, 0].tolist(), pairs[:, 1].tolist(), counts.tolist(), strict=True))
        outside: dict[int, int] = {}
        if len(one):
            inside_nodes = np.where(one_src_inside, e.src[one], e.dst[one])
            inside_reps = np.where(one_src_inside, rs[one], rd[one])
            keys, counts = np.unique(items(inside_nodes, inside_reps), return_counts=True)
            outside = dict(zip(keys.tolist(), counts.tolist(), strict=True))
        self.work["levels_indexed"] += 1
        self.work["python_edges"] += len(direct) + len(counted)
        out = (direct, counted, outside)
        _keep_view(self._levels, opened, out)
        return out

    # ------------------------------------------------------------------ a level as a view
    def level_view(
        self,
        level: int,
        *,
        expanded: Iterable[int] = (),
        edge_labels: bool | None = None,
        label_threshold: int = 400,
    ) -> GraphView:
        """What to draw for the level of group ``level``: its child groups as boxes (size and main op types, edge
        counts between boxes) and its own nodes as ops, Consts folded into their consumers. Nodes with edges
        leaving the group show how many (``hidden_neighbours``).

        ``expanded``: groups drawn open in place, as a frame (``GraphView.clusters``) holding their own items
        where their box would be (Model Explorer's expand); each must sit in the level or in another expanded
        group (others are ignored, see :meth:`open_groups`). Edges then connect the items inside the frames.

        ``element_of`` covers every node under the group (a lazy mapping, O(depth) per lookup), so highlighting
        a node anywhere below colours the box holding it.

        Cost: O(e) array operations the first time a view is drawn, then O(items + edges of the view).

        Raises:
            IndexError: no group ``level``.
        """
        if not 0 <= level < len(self.groups):
            raise IndexError(f"no group {level}; the hierarchy has {len(self.groups)}")
        opened = self.open_groups(level, expanded)
        with ir.collector_paused():
            direct, counted, outside = self._level_edges(opened)
        graph = self.graph
        folded: dict[int, int] = {}
        nodes: list[ViewNode] = []
        clusters: dict[int, tuple[int, str]] = {}
        boxes: dict[int, list[int]] = {}
        open_set = set(opened)
        own: list[tuple[ir.Node, int]] = []

        def place(gid: int, cluster: int) -> None:
            grp = self.groups[gid]
            for cid in grp.children:
                child = self.groups[cid]
                boxes[cid] = []
                if cid in open_set:
                    clusters[cid] = (cluster, f"{child.label}: {child.size} nodes")
                    place(cid, cid)
                    continue
                ops = ", ".join(self.top_ops(cid)) or "Const"
                nodes.append(
                    ViewNode(
                        _item_key(cid),
                        f"{child.size} nodes: {ops}",
                        child.label,
                        hidden_neighbours=outside.get(_item_key(cid), 0),
                        element=group_element_id(cid),
                        cluster=cluster,
                    )
                )
            mine = set(grp.nodes)
            for nid in grp.nodes:
                node = graph.node(nid)
                if node.op_type in CONST_OP_TYPES:
                    consumer = next(
                        (
                            c
                            for _, c, _ in graph.all_uses(node)
                            if c.id in mine and c.op_type not in CONST_OP_TYPES
                        ),
                        None,
                    )
                    if consumer is not None:
                        folded[nid] = consumer.id
                        continue
                own.append((node, cluster))

        place(level, -1)
        if edge_labels is None:
            edge_labels = len(nodes) + len(own) <= label_threshold
        fold_count = Counter(folded.values())
        for node, cluster in own:
            nodes.append(
                ViewNode(
                    node.id,
                    node.name,
                    node.op_type,
                    fold_count.get(node.id, 0),
                    outside.get(node.id, 0),
                    cluster=cluster,
                )
            )
        drawn_ids = {n.id for n in nodes}
        edges: list[ViewEdge] = []
        for u, sp, v, dp in direct:
            if u in drawn_ids and v in drawn_ids:
                label = tensor_label(graph.node(u).outputs[sp]) if edge_labels and sp >= 0 else ""
                edges.append(ViewEdge(u, sp, v, dp, label))
        for a, b, count in counted:
            a = folded.get(a, a)
            b = folded.get(b, b)
            if a in drawn_ids and b in drawn_ids and a != b:
                edges.append(ViewEdge(a, -2, b, -2, str(count) if count > 1 else ""))
        element_of = _LevelElements(self, opened, folded)
        return GraphView(
            graph.name,
            nodes,
            edges,
            element_of,
            total_nodes=len(graph),
            edge_labels=edge_labels,
            focused=False,
            element_prefix="n",
            groups=boxes,
            level=level,
            clusters=clusters,
            expanded=opened[1:],
        )

    def counts(self, level: int, node_ids: Iterable[int], expanded: Iterable[int] = ()) -> dict[str, int]:
        """Element id of the item of ``level`` (``expanded`` open in place) -> how many of ``node_ids`` it stands
        for (nodes not under the level are skipped). O(k * depth)."""
        out: Counter[str] = Counter()
        opened = set(self.open_groups(level, expanded))  # once, not per node
        for nid in node_ids:
            item = self._item_in(opened, nid)
            if item is not None:
                out[group_element_id(-item - 1) if item < 0 else node_element_id(item)] += 1
        return dict(out)

    def members(self, gid: int) -> list[int]:
        """Every node id under group ``gid``, in graph order. O(size of the group)."""
        out: list[int] = []
        stack = [gid]
        while stack:
            g = self.groups[stack.pop()]
            out.extend(g.nodes)
            stack.extend(g.children)
        if len(out) > 1:
            ids = np.array(out, dtype=np.int64)
            out = ids[np.argsort(self._index_of[ids], kind="stable")].tolist()
        return out


class _LevelElements(Mapping[int, str]):
    """Node id -> element id of the item standing for it in one view of a level (lazy: O(1) per lookup)."""

    def __init__(self, hierarchy: Hierarchy, opened: tuple[int, ...], folded: dict[int, int]) -> None:
        self._h = hierarchy
        self._level = opened[0]
        self._opened = opened
        self._open = frozenset(opened)
        self._folded = folded
        self._group_of = hierarchy.group_of
        self._boxes: list[str | None] | None = None  # group id -> the box standing for it (on first need)

    def get(self, node_id: int, default: str | None = None) -> str | None:  # type: ignore[override]
        """The element standing for ``node_id``, or ``default``. O(1) (the workbench reads it for every node a
        pass colours)."""
        gid = self._group_of.get(node_id)
        if gid is None:
            return default
        if gid in self._open:
            return node_element_id(self._folded.get(node_id, node_id))
        if self._boxes is None:
            self._boxes = self._h.group_boxes(self._level, self._opened[1:])
        el = self._boxes[gid]
        return default if el is None else el

    def __getitem__(self, node_id: int) -> str:
        el = self.get(node_id)
        if el is None:
            raise KeyError(node_id)
        return el

    def __contains__(self, node_id: object) -> bool:
        return self.get(node_id) is not None  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[int]:
        return iter(self._h.members(self._level))

    def __len__(self) -> int:
        return self._h.groups[self._level].size


# ====================================================================================== reading the graph
def _graph_order(graph: ir.Graph) -> tuple[np.ndarray, list[ir.Node], np.ndarray]:
    """The node ids in graph order (topological positions), the nodes in that order, and node id -> graph-order
    index (-1 where no node). Reads the graph's position and node tables in bulk: O(n) C-level work and one numpy
    sort, no per-node Python call (``Graph.nodes()`` sorts with a Python key per node)."""
    n = len(graph._nodes)
    ids = np.fromiter(graph._nodes.keys(), dtype=np.int64, count=n)
    ids.sort()
    pos = np.frombuffer(graph._pos, dtype=np.float64)[ids] if n else np.empty(0)  # a copy: the buffer is let go
    ids = ids[np.argsort(pos, kind="stable")]
    nodes = list(map(graph._nodes.__getitem__, ids.tolist()))
    index_of = np.full(int(ids.max()) + 1 if n else 0, -1, dtype=np.int64)
    index_of[ids] = np.arange(n, dtype=np.int64)
    return ids, nodes, index_of


def _data_edges(graph: ir.Graph, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every data edge as arrays ``(src id, src port, dst graph-order index, dst port)``, by destination position
    and port (the order of ``Graph.data_edges``). Reads the producer table in bulk: O(n + e) C-level work."""
    rows = list(map(graph._producers.__getitem__, ids.tolist()))
    lens = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    total = int(lens.sum())
    dst = np.repeat(np.arange(len(rows), dtype=np.int64), lens)
    starts = np.cumsum(lens) - lens
    dst_port = np.arange(total, dtype=np.int64) - np.repeat(starts, lens)
    try:  # every input fed (the usual graph): the rows' (producer, port) pairs in one C-level pass
        pairs = np.fromiter(chain.from_iterable(chain.from_iterable(rows)), dtype=np.int64, count=2 * total)
        return pairs[0::2], pairs[1::2], dst, dst_port
    except TypeError:  # an unfed input (None)
        pass
    flat = list(chain.from_iterable(rows))
    unfed = {None: (-1, -1)}  # an unfed input reads as producer -1, then is dropped
    pairs = np.fromiter(chain.from_iterable(map(unfed.get, flat, flat)), dtype=np.int64, count=2 * total)
    src = pairs[0::2]
    fed = src >= 0
    return src[fed], pairs[1::2][fed], dst[fed], dst_port[fed]


def _edge_arrays(
    graph: ir.Graph,
    index_of: np.ndarray,
    node_group: np.ndarray,
    data: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> _Edges:
    """The data edges then the control edges (``Graph.control_edges`` order, ports -1) with the group of each
    end; ``node_group``: node id -> group id."""
    if data is None:
        ids = np.flatnonzero(index_of >= 0)
        ids = ids[np.argsort(index_of[ids])]
        data = _data_edges(graph, ids)
    src, src_port, dst_index, dst_port = data
    order_ids = np.empty(len(index_of), dtype=np.int64)
    valid = np.flatnonzero(index_of >= 0)
    order_ids[index_of[valid]] = valid
    dst = order_ids[dst_index] if len(dst_index) else dst_index
    if graph.has_control_edges:
        control = graph.control_edges()
        c_src = np.fromiter((u.id for u, _ in control), dtype=np.int64, count=len(control))
        c_dst = np.fromiter((v.id for _, v in control), dtype=np.int64, count=len(control))
        minus = np.full(len(control), -1, dtype=np.int64)
        src, src_port = np.concatenate([src, c_src]), np.concatenate([src_port, minus])
        dst, dst_port = np.concatenate([dst, c_dst]), np.concatenate([dst_port, minus])
    arrays = [src, src_port, dst, dst_port, node_group[src], node_group[dst]]
    if len(index_of) < 2**31 - 1:  # half the memory (an edge array per hierarchy kept) and faster array work
        arrays = [a.astype(np.int32) for a in arrays]
    return _Edges(*arrays)


# ====================================================================================== derivation
def _scope_path(name: str) -> tuple[str, ...] | None:
    parts = name.split("/")
    if parts[0].endswith("_"):  # a GE prefix glued to the original name: PartitionedCall_/layers.0/...
        parts = parts[1:]
    parts = [p for p in parts if p]
    return tuple(parts[:-1]) if len(parts) > 1 else None


def _stem_paths(names: list[str], joined: str | None = None) -> list[tuple[str, ...] | None]:
    """Per name: ``(stem, next token)`` (the first token of letters then digits, and the token after it when
    another follows), ``(stem,)``, or None without a stem. Equal paths are one tuple object. O(names), in one
    regex call over the names joined by newlines (``joined``, when the caller has it; one call per name when a
    name holds a newline)."""
    if not names:
        return []
    if joined is None:
        joined = "\n".join(names)
    if joined.count("\n") == len(names) - 1:
        keys: list[tuple[str, str]] = _STEM_LINES.findall(joined)
    else:
        keys = []
    if len(keys) != len(names):
        search = _STEM_SEARCH.search
        keys = [m.groups("") if m is not None else ("", "") for m in map(search, names)]
    table: dict[tuple[str, str], tuple[str, ...] | None] = dict.fromkeys(keys)  # type: ignore[arg-type]
    for key in table:
        stem, nxt = key
        table[key] = ((stem, nxt) if nxt else (stem,)) if stem else None
    return list(map(table.__getitem__, keys))


def _paths(
    names: list[str],
    rule: str,
    cache: dict[str, dict[str, tuple[str, ...] | None]] | None,
    work: dict[str, int],
    joined: str | None = None,
) -> list[tuple[str, ...] | None]:
    """``rule`` (``"scope"`` or ``"stem"``) on each name, through ``cache`` (``rule -> name -> path``) when given:
    only names not in it are parsed. O(names) dict reads plus the parsing of the new names.

    The first graph's names and paths are only noted in the cache (under ``"<rule> pending"``), and become
    entries when a second graph reads the cache: opening pays no dict of every name it may never need again."""
    parse = _stem_paths if rule == "stem" else (lambda ns: list(map(_scope_path, ns)))
    parse_all = (
        (lambda ns: _stem_paths(ns, joined)) if rule == "stem" else parse
    )  # ``joined``: all of ``names``
    if cache is None:
        work["names_parsed"] = work.get("names_parsed", 0) + len(names)
        return parse_all(names)
    known = cache.setdefault(rule, {})
    pending: list = cache.setdefault(f"{rule} pending", [])  # type: ignore[arg-type]
    if not known and not pending:
        out = parse_all(names)
        work["names_parsed"] = work.get("names_parsed", 0) + len(names)
        pending.append((names, out))
        return out
    while pending:
        known.update(zip(*pending.pop(), strict=True))
    missing = [name for name in names if name not in known]
    if missing:
        work["names_parsed"] = work.get("names_parsed", 0) + len(missing)
        known.update(zip(missing, parse(missing), strict=True))
    return list(map(known.__getitem__, names))


def _contiguous(keys: list[str]) -> bool:
    """Whether the stems (in graph order) come in runs: at most two runs per distinct stem on average, and at
    least three nodes per stem."""
    if not keys:
        return False
    runs = 1 + sum(map(operator.ne, keys, keys[1:]))
    distinct = len(set(keys))
    return runs <= 2 * distinct + 2 and len(keys) >= 3 * distinct


def derive_hierarchy(
    graph: ir.Graph,
    *,
    max_children: int = 64,
    cache: dict[str, dict[str, tuple[str, ...] | None]] | None = None,
) -> Hierarchy:
    """Derive the groups of ``graph`` (see the module docstring). O(n + e) bulk reads and one pass over the
    non-Const nodes, then O(groups); read-only.

    Args:
        graph: the graph.
        max_children: the most items (child groups plus non-Const nodes of its own) any group gets; larger
            groups are split into nested ranges. At least 2.
        cache: a dict (empty at first, then left to this function) shared between graphs whose names mostly
            agree (the snapshots of one run): a name's group path is parsed once for all of them.

    Raises:
        ValueError: ``max_children`` < 2.
    """
    if max_children < 2:
        raise ValueError(f"max_children must be at least 2, got {max_children}")
    with ir.collector_paused():
        return _derive(graph, max_children, cache)


def _derive(
    graph: ir.Graph, max_children: int, cache: dict[str, dict[str, tuple[str, ...] | None]] | None
) -> Hierarchy:
    ids, nodes, index_of = _graph_order(graph)
    n = len(nodes)
    work = {"nodes": n, "names_parsed": 0}
    op_types = list(map(_op_of, nodes))
    const_of = {op: op in CONST_OP_TYPES for op in set(op_types)}
    is_const = np.fromiter(map(const_of.__getitem__, op_types), dtype=bool, count=n)
    op_idx = np.flatnonzero(~is_const).tolist()  # graph-order indices of the non-Const nodes
    provs = list(map(_provenance_of, nodes))
    op_arr = np.flatnonzero(~is_const)
    op_idx = op_arr.tolist()  # graph-order indices of the non-Const nodes
    m = len(op_idx)
    op_nodes = list(map(nodes.__getitem__, op_idx))
    op_names = list(map(_name_of, op_nodes))
    op_provs = list(map(provs.__getitem__, op_idx))
    made = np.fromiter(map(bool, op_provs), dtype=bool, count=m)  # nodes a pass created
    prov_at = np.flatnonzero(made).tolist()
    mode = "chunks"
    paths: list[tuple[str, ...] | None] = [()] * m
    joined = "\n".join(op_names)  # every name read once here; the slashes bound the names with one
    if (
        m
        and joined.count("/") >= SCOPE_SHARE * m
        and sum(map(operator.contains, op_names, repeat("/"))) >= SCOPE_SHARE * m
    ):
        mode = "scope"
        paths = _paths(op_names, "scope", cache, work)
        for k in prov_at:
            paths[k] = None
    elif m:
        stems = _paths(op_names, "stem", cache, work, joined)
        keyed = list(map(_first, filter(None, stems)))
        if len(keyed) >= STEM_SHARE * m and _contiguous(keyed):
            mode = "stem"
            paths = list(stems)
            # a node a pass made goes under its stem (its name usually starts with the pattern's node names)
            for k in prov_at:
                q = paths[k]
                if q is not None:
                    paths[k] = q[:1]
    data: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
    op_pos = np.full(len(index_of), -1, dtype=np.int64)  # node id -> position among the non-Const nodes
    op_pos[ids[op_arr]] = np.arange(m)
    if mode == "chunks" and m >= MIN_BLOCKS * MIN_PERIOD:
        # no names to go by: repeated blocks (layers) found from the op types alone, if the graph has them
        data = _data_edges(graph, ids)
        e_src, e_dst = op_pos[data[0]], op_pos[ids[data[2]]]
        keep = (e_src >= 0) & (e_dst >= 0)
        split = find_blocks(list(map(op_types.__getitem__, op_idx)), e_src[keep], e_dst[keep])
        if split is not None:
            mode = "block"
            paths = split.paths()  # type: ignore[assignment]
            work["blocks"] = split.count
    full: list[tuple[str, ...] | None] = paths if mode == "chunks" else list(paths)
    pending_front: list[int] = []
    if mode != "chunks":
        # nodes without a path of their own: a neighbour's, else the previous node's in graph order (the last
        # node before it that set one: not one a pass made, not an input or output); in one pass over them
        no_path = np.fromiter(map(operator.not_, paths), dtype=bool, count=m)
        special = np.flatnonzero(no_path | made).tolist()
        common = np.where(~no_path & ~made, np.arange(m), -1)
        last_common = np.maximum.accumulate(common).tolist() if m else []
        set_at, set_path = -1, ()  # the last special node that set the previous path
        for k in special:
            j = last_common[k - 1] if k else -1
            prev = paths[j] if j > set_at else set_path
            p = paths[k]
            node = op_nodes[k]
            if p is None:
                if node._op_type in _BOUNDARY_OPS:
                    full[k] = ()
                    continue
                for other in (*graph.successors(node), *graph.predecessors(node)):
                    at = int(op_pos[other.id]) if other.id < len(op_pos) else -1
                    q = paths[at] if at >= 0 else None
                    if q is not None and not other.provenance:
                        p = q[:1] if op_provs[k] and mode == "stem" else q
                        break
            if p is None:
                if not prev:
                    pending_front.append(k)
                    continue
                p = prev
            full[k] = p
            if not op_provs[k]:
                set_at, set_path = k, p
        j = last_common[-1] if m else -1
        prev = paths[j] if j > set_at else set_path
        for k in pending_front:
            full[k] = prev
    fused: dict[tuple[tuple[str, ...], str], tuple[str, ...]] = {}
    for k in prov_at:
        key = (full[k], op_provs[k])
        q = fused.get(key)
        if q is None:
            q = fused[key] = (*key[0], f"\u27e8{key[1]}\u27e9")  # type: ignore[misc]
        full[k] = q
    groups = [Group(0, graph.name or "model", "root", -1)]
    index: dict[tuple[str, ...], int] = {(): 0}

    plain_kind = mode if mode in ("stem", "block") else "scope"

    def group_for(p: tuple[str, ...], first: int) -> None:
        parent = 0
        for depth in range(1, len(p) + 1):
            key = p[:depth] if depth < len(p) else p
            gid = index.get(key)
            if gid is None:
                gid = len(groups)
                label = key[-1]
                kind = "pass" if label[:1] == "\u27e8" else plain_kind
                groups.append(Group(gid, label, kind, parent, [], [], 0, first))
                groups[parent].children.append(gid)
                index[key] = gid
            parent = gid

    # groups are made in the order their first node is placed (graph order, the nodes that took the previous
    # path at the front last): children lists come out in graph order
    if pending_front:
        front = set(pending_front)
        seq = [k for k in range(m) if k not in front] + pending_front
        seq_paths = [full[k] for k in seq]
        seq_first = [op_idx[k] for k in seq]
    else:
        seq_paths, seq_first = full, op_idx
    first_at = dict(zip(reversed(seq_paths), reversed(seq_first), strict=True))  # path -> its first node
    for p in dict.fromkeys(seq_paths):
        if p not in index:
            group_for(p, first_at[p])  # type: ignore[arg-type]
    table = np.full(n, -1, dtype=np.int64)  # graph-order index -> group id (before simplification)
    if m:
        table[op_arr] = list(map(index.__getitem__, full))
    # Consts: the group of their first consumer (edges come by consumer position), else the root
    if data is None:
        data = _data_edges(graph, ids)
    src, src_port, dst_index, dst_port = data
    src_index = index_of[src]
    if is_const.any():
        from_const = np.flatnonzero(is_const[src_index])
        if len(from_const) and not is_const[dst_index[from_const]].any():
            # the usual graph: no Const feeds a Const; each Const takes its first consumer's group at once
            first_src, first_at = np.unique(src_index[from_const], return_index=True)
            table[first_src] = table[dst_index[from_const[first_at]]]
        else:
            for k in from_const.tolist():
                s = int(src_index[k])
                if table[s] < 0:
                    gid = table[dst_index[k]]
                    if gid >= 0:
                        table[s] = gid
        table[is_const & (table < 0)] = 0
    table = _simplify(groups, table, is_const)
    table = _bound_fanout(groups, table, graph, ids, index_of, is_const, max_children)
    groups, table = _renumber(groups, table)
    _fill_nodes(groups, table, ids)
    _sizes(groups)
    node_group_by_id = np.full(len(index_of), -1, dtype=np.int64)
    node_group_by_id[ids] = table
    group_of = _GroupOf(node_group_by_id.tolist(), n)
    edges = _edge_arrays(graph, index_of, node_group_by_id, data)
    work["edges"] = len(edges.src)
    return Hierarchy(graph, groups, group_of, mode, index_of, edges, work)


def _simplify(groups: list[Group], table: np.ndarray, is_const: np.ndarray) -> np.ndarray:
    """Dissolve one-node groups into their parents; a group holding one group only (and no op of its own; the
    root whatever it holds) takes that group's content. Dissolved groups keep their slot with ``parent == -2``
    (dropped by :func:`_renumber`). ``table``: graph-order index -> group id; returns it after the moves.
    O(groups) plus array work."""
    count = len(groups)
    ops = np.bincount(table[~is_const], minlength=count).tolist()  # non-Const nodes directly in each group
    live_children = [len(g.children) for g in groups]
    into = list(range(count))  # group id -> the group its nodes moved to (a lower id), itself when kept
    for g in reversed(groups[1:]):  # children before parents
        if g.parent < 0:
            continue
        if not live_children[g.id] and ops[g.id] <= 1:
            parent = g.parent
            live_children[parent] -= 1
            ops[parent] += ops[g.id]
            into[g.id] = parent
            g.parent = -2
    for g in groups:
        if g.children and live_children[g.id] != len(g.children):
            g.children = [c for c in g.children if groups[c].parent != -2]
    # a group holding one group only (the root: whatever inputs and outputs it holds too) takes its content
    for g in groups:
        if g.parent == -2:
            continue
        while len(g.children) == 1 and (g.id == 0 or ops[g.id] == 0):
            only = groups[g.children[0]]
            if g.id != 0:
                g.label = f"{g.label}/{only.label}"
                g.kind = only.kind
            g.children = list(only.children)
            ops[g.id] += ops[only.id]
            into[only.id] = g.id
            for cid in only.children:
                groups[cid].parent = g.id
            only.children, only.parent = [], -2
    final = into
    for gid in range(count):  # ``into`` points to lower ids: resolve in increasing order
        final[gid] = gid if into[gid] == gid else final[into[gid]]
    return np.array(final, dtype=np.int64)[table]


def _renumber(groups: list[Group], table: np.ndarray) -> tuple[list[Group], np.ndarray]:
    """Drop dissolved groups and number the rest 0.. breadth first from the root, so parents come before their
    children (children keep their order)."""
    keep: list[Group] = [groups[0]]
    i = 0
    at = groups.__getitem__
    while i < len(keep):
        children = keep[i].children
        if children:
            keep.extend(map(at, children))
        i += 1
    new_id = np.full(len(groups), -1, dtype=np.int64)
    new_id[np.fromiter((g.id for g in keep), dtype=np.int64, count=len(keep))] = np.arange(len(keep))
    ids = new_id.tolist()
    for k, g in enumerate(keep):
        g.id = k
        g.parent = ids[g.parent] if g.parent >= 0 else -1
        if g.children:
            g.children = list(map(ids.__getitem__, g.children))
    return keep, new_id[table]


def _fill_nodes(groups: list[Group], table: np.ndarray, ids: np.ndarray) -> None:
    """Each group's ``nodes``: its node ids in graph order (``table``: graph-order index -> group id)."""
    perm = np.argsort(table, kind="stable")
    members = ids[perm].tolist()
    ends = np.cumsum(np.bincount(table, minlength=len(groups))).tolist()
    start = 0
    for g, end in zip(groups, ends, strict=True):
        g.nodes = members[start:end]
        start = end


def _bound_fanout(
    groups: list[Group],
    table: np.ndarray,
    graph: ir.Graph,
    ids: np.ndarray,
    index_of: np.ndarray,
    is_const: np.ndarray,
    max_children: int,
) -> np.ndarray:
    """Give every group with more than ``max_children`` items nested, balanced range groups of consecutive
    items (graph order). Appends the range groups (:func:`_renumber` then puts parents first again). ``table``:
    graph-order index -> group id; returns it after the moves. O(groups) plus O(nodes of the split groups)."""
    count = len(groups)
    direct = np.bincount(table, minlength=count).tolist()
    big = [g.id for g in groups if g.parent != -2 and len(g.children) + direct[g.id] > max_children]
    if not big:
        return table
    # members of the groups to split, in graph order
    perm = np.argsort(table, kind="stable")
    ends = np.cumsum(np.bincount(table, minlength=count))
    cur = table.tolist()  # graph-order index -> current group (ranges included)
    for gid in sorted(big, reverse=True):  # as the former todo stack: the last group first
        g = groups[gid]
        mine = perm[ends[gid] - direct[gid] : ends[gid]]
        const_mask = is_const[mine]
        my_consts = mine[const_mask].tolist()  # graph-order indices
        op_items = mine[~const_mask].tolist()
        items: list[int] = [
            _item_key(c) for c in g.children
        ] + op_items  # node items as graph-order indices here
        if len(items) <= max_children:
            continue

        def first(item: int) -> int:
            return groups[-item - 1].first if item < 0 else item

        items.sort(key=first)
        depth = max(2, math.ceil(math.log(len(items)) / math.log(max_children)))
        fan = max(2, math.ceil(len(items) ** (1.0 / depth)))
        level_items = items
        while len(level_items) > max_children:
            per = fan
            new_items: list[int] = []
            for i in range(0, len(level_items), per):
                chunk = level_items[i : i + per]
                rid = len(groups)
                rng = Group(rid, _range_label(groups, graph, ids, chunk), "range", gid, first=first(chunk[0]))
                groups.append(rng)
                for it in chunk:
                    if it < 0:
                        groups[-it - 1].parent = rid
                        rng.children.append(-it - 1)
                    else:
                        cur[it] = rid
                new_items.append(_item_key(rid))
            level_items = new_items
        g.children = [-it - 1 for it in level_items]
        # Consts of this group follow their first consumer into its range
        for k in my_consts:
            uses = graph.output_uses(graph.node(int(ids[k])))
            target = None
            for use in uses:
                for cid, _ in use:
                    j = int(index_of[cid])
                    gc = cur[j] if j >= 0 else None
                    if gc is not None and gc >= 0 and gc != gid:
                        target = gc
                        break
                if target is not None:
                    break
            if target is not None and _is_below(groups, target, gid):
                cur[k] = target
    return np.array(cur, dtype=np.int64)


def _is_below(groups: list[Group], gid: int, ancestor: int) -> bool:
    while gid >= 0:
        if gid == ancestor:
            return True
        gid = groups[gid].parent
    return False


def _range_label(groups: list[Group], graph: ir.Graph, ids: np.ndarray, chunk: list[int]) -> str:
    def name(item: int) -> str:
        if item < 0:
            g = groups[-item - 1]
            return g.label.split(" \u2026 ")[0] if item == chunk[0] else g.label.split(" \u2026 ")[-1]
        return graph.node(int(ids[item])).name

    first, last = name(chunk[0]), name(chunk[-1])
    return first if first == last else f"{first} \u2026 {last}"


def _sizes(groups: list[Group]) -> None:
    """Nodes under each group; ``groups`` are numbered parents first (see :func:`_renumber`)."""
    for g in groups:
        g.size = len(g.nodes)
    for g in reversed(groups):
        if g.parent >= 0:
            groups[g.parent].size += g.size
