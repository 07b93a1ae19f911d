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
3. **Topological chunks**: otherwise the nodes stay in one level, which the fan-out bound below splits into
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

Costs: :func:`derive_hierarchy` is O(n * depth) plus one pass over the edges, once per graph; a level's items,
edges and the group counts of a set of nodes then cost O(level) and O(nodes * depth).

Invariants: every node of the graph is in exactly one group (``group_of``); group 0 is the root; a group's
``children`` and ``nodes`` are in graph order; ``size`` counts every node under a group (Consts included).
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from gebench import ir

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


def group_element_id(gid: int) -> str:
    """The SVG element id of a drawn group box."""
    return f"g{gid}"


def _item_key(gid: int) -> int:
    """Items of a level are node ids (>= 0) or ``-(group id + 1)`` for child groups."""
    return -(gid + 1)


@dataclass
class Group:
    """One group of the hierarchy.

    Attributes:
        id: index in :attr:`Hierarchy.groups` (0 is the root).
        label: what the group box shows (a scope or stem name, ``first … last`` for a range).
        kind: ``"root"``, ``"scope"``, ``"stem"``, ``"pass"`` (nodes a pass created) or ``"range"``.
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


class Hierarchy:
    """Groups over one graph's nodes (see the module docstring); built by :func:`derive_hierarchy`.

    Attributes:
        graph: the graph (read-only here).
        groups: every group; ``groups[0]`` is the root.
        group_of: node id -> id of the group that holds it directly.
        mode: the rule that made the groups: ``"scope"``, ``"stem"`` or ``"chunks"``.
    """

    def __init__(
        self, graph: ir.Graph, groups: list[Group], group_of: dict[int, int], mode: str, order: dict[int, int]
    ) -> None:
        self.graph = graph
        self.groups = groups
        self.group_of = group_of
        self.mode = mode
        self._order = order
        self._depth: list[int] = []
        self._recount_depths()
        self._edges: dict[int, Counter[tuple[int, int]]] | None = None
        self._direct: dict[int, list[tuple[int, int, int, int]]] | None = None
        self._outside: dict[int, Counter[int]] | None = None
        self._ops: dict[int, Counter[str]] = {}
        self._data_edges: list[tuple[ir.Node, int, ir.Node, int]] | None = None

    def _recount_depths(self) -> None:
        depth = [0] * len(self.groups)
        for g in self.groups[1:]:  # parents are always created before their children
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

    def item_at(self, level: int, node_id: int) -> int | None:
        """The item of level ``level`` (the children of group ``level``) standing for ``node_id``: the node id
        itself when the node is directly in ``level``, ``-(child group id + 1)`` for the child group holding it,
        None when the node is not under ``level`` (or not in the graph). O(depth)."""
        gid = self.group_of.get(node_id)
        if gid is None:
            return None
        if gid == level:
            return node_id
        while gid >= 0:
            parent = self.groups[gid].parent
            if parent == level:
                return _item_key(gid)
            gid = parent
        return None

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
            ops = Counter()
            seen = 0
            stack = [gid]
            node = self.graph.node
            while stack and seen < sample:
                g = self.groups[stack.pop()]
                stack.extend(reversed(g.children))
                seen += len(g.nodes)
                ops.update(op for op in (node(nid).op_type for nid in g.nodes) if op not in CONST_OP_TYPES)
            self._ops[gid] = ops
        return [op for op, _ in ops.most_common(k)]

    # ------------------------------------------------------------------ edges per level
    def _index_edges(self) -> None:
        """Sort every data and control edge to the level where it is drawn (the lowest common group of its
        ends), and count edges leaving each group per item. O(e * depth), once."""
        edges: defaultdict[int, Counter[tuple[int, int]]] = defaultdict(Counter)
        direct: defaultdict[int, list[tuple[int, int, int, int]]] = defaultdict(list)
        outside: defaultdict[int, Counter[int]] = defaultdict(Counter)
        groups, group_of, depth = self.groups, self.group_of, self._depth
        graph = self.graph
        data = self._data_edges if self._data_edges is not None else graph.data_edges()
        self._data_edges = None
        control = graph.control_edges()
        for s, sp, d, dp in [*data, *((s, -1, d, -1) for s, d in control)]:
            u, v = s.id, d.id
            gu, gv = group_of[u], group_of[v]
            if gu == gv:
                direct[gu].append((u, sp, v, dp))
                continue
            # walk both ends up to their lowest common group, remembering the item each end is at each level
            a, b = gu, gv
            item_a, item_b = u, v
            while depth[a] > depth[b]:
                outside[a][item_a] += 1
                item_a, a = _item_key(a), groups[a].parent
            while depth[b] > depth[a]:
                outside[b][item_b] += 1
                item_b, b = _item_key(b), groups[b].parent
            while a != b:
                outside[a][item_a] += 1
                outside[b][item_b] += 1
                item_a, a = _item_key(a), groups[a].parent
                item_b, b = _item_key(b), groups[b].parent
            if item_a >= 0 and item_b >= 0:
                direct[a].append((u, sp, v, dp))
            else:
                edges[a][(item_a, item_b)] += 1
        self._edges, self._direct, self._outside = dict(edges), dict(direct), dict(outside)

    # ------------------------------------------------------------------ a level as a view
    def level_view(
        self, level: int, *, edge_labels: bool | None = None, label_threshold: int = 400
    ) -> GraphView:
        """What to draw for the level of group ``level``: its child groups as boxes (size and main op types, edge
        counts between boxes) and its own nodes as ops, Consts folded into their consumers. Nodes with edges
        leaving the group show how many (``hidden_neighbours``).

        ``element_of`` covers every node under the group (a lazy mapping, O(depth) per lookup), so highlighting
        a node anywhere below colours the box holding it.

        Cost: O(items + edges of the level) after the first call's edge index (O(e * depth)).

        Raises:
            IndexError: no group ``level``.
        """
        if not 0 <= level < len(self.groups):
            raise IndexError(f"no group {level}; the hierarchy has {len(self.groups)}")
        if self._edges is None:
            with ir.collector_paused():
                self._index_edges()
        assert self._edges is not None and self._direct is not None and self._outside is not None
        graph = self.graph
        grp = self.groups[level]
        outside = self._outside.get(level, Counter())
        folded: dict[int, int] = {}
        drawn: list[ir.Node] = []
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
            drawn.append(node)
        if edge_labels is None:
            edge_labels = len(drawn) + len(grp.children) <= label_threshold
        fold_count = Counter(folded.values())
        nodes: list[ViewNode] = []
        for cid in grp.children:
            child = self.groups[cid]
            ops = ", ".join(self.top_ops(cid)) or "Const"
            nodes.append(
                ViewNode(
                    _item_key(cid),
                    f"{child.size} nodes: {ops}",
                    child.label,
                    hidden_neighbours=outside.get(_item_key(cid), 0),
                    element=group_element_id(cid),
                )
            )
        for node in drawn:
            nodes.append(
                ViewNode(
                    node.id, node.name, node.op_type, fold_count.get(node.id, 0), outside.get(node.id, 0)
                )
            )
        drawn_ids = {n.id for n in nodes}
        edges: list[ViewEdge] = []
        for u, sp, v, dp in self._direct.get(level, []):
            if u in drawn_ids and v in drawn_ids:
                label = tensor_label(graph.node(u).outputs[sp]) if edge_labels and sp >= 0 else ""
                edges.append(ViewEdge(u, sp, v, dp, label))
        for (a, b), count in sorted(self._edges.get(level, Counter()).items()):
            a = folded.get(a, a)
            b = folded.get(b, b)
            if a in drawn_ids and b in drawn_ids and a != b:
                edges.append(ViewEdge(a, -2, b, -2, str(count) if count > 1 else ""))
        element_of = _LevelElements(self, level, folded)
        return GraphView(
            graph.name,
            nodes,
            edges,
            element_of,
            total_nodes=len(graph),
            edge_labels=edge_labels,
            focused=False,
            element_prefix="n",
            groups={c: [] for c in grp.children},
            level=level,
        )

    def counts(self, level: int, node_ids: Iterable[int]) -> dict[str, int]:
        """Element id of the item of ``level`` -> how many of ``node_ids`` it stands for (nodes not under the
        level are skipped). O(k * depth)."""
        out: Counter[str] = Counter()
        for nid in node_ids:
            item = self.item_at(level, nid)
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
        out.sort(key=self._order.__getitem__)
        return out


class _LevelElements(Mapping[int, str]):
    """Node id -> element id of the item standing for it in one level (lazy: O(depth) per lookup)."""

    def __init__(self, hierarchy: Hierarchy, level: int, folded: dict[int, int]) -> None:
        self._h = hierarchy
        self._level = level
        self._folded = folded
        self._by_group: dict[int, str | None] = {}  # a node's own group -> the box standing for it (memo)

    def __getitem__(self, node_id: int) -> str:
        h = self._h
        gid = h.group_of.get(node_id)
        if gid is None:
            raise KeyError(node_id)
        if gid == self._level:
            return node_element_id(self._folded.get(node_id, node_id))
        try:
            el = self._by_group[gid]
        except KeyError:
            item = h.item_at(self._level, node_id)
            el = self._by_group[gid] = group_element_id(-item - 1) if item is not None else None
        if el is None:
            raise KeyError(node_id)
        return el

    def __iter__(self) -> Iterator[int]:
        return iter(self._h.members(self._level))

    def __len__(self) -> int:
        return self._h.groups[self._level].size


# ====================================================================================== derivation
def _scope_path(name: str) -> tuple[str, ...] | None:
    parts = name.split("/")
    if parts[0].endswith("_"):  # a GE prefix glued to the original name: PartitionedCall_/layers.0/...
        parts = parts[1:]
    parts = [p for p in parts if p]
    return tuple(parts[:-1]) if len(parts) > 1 else None


def _stem_paths(names: list[str]) -> list[tuple[str, ...] | None]:
    """Per name: ``(stem, next token)`` (the first token of letters then digits, and the token after it when
    another follows), ``(stem,)``, or None without a stem. Equal paths are one tuple object. O(names)."""
    search = _STEM_SEARCH.search
    seen: dict[tuple[str, str | None], tuple[str, ...]] = {}
    out: list[tuple[str, ...] | None] = []
    for name in names:
        m = search(name)
        if m is None:
            out.append(None)
            continue
        key = m.groups()
        p = seen.get(key)
        if p is None:
            p = seen[key] = (key[0], key[1]) if key[1] else (key[0],)
        out.append(p)
    return out


def _contiguous(keys: list[str]) -> bool:
    """Whether the stems (in graph order) come in runs: at most two runs per distinct stem on average, and at
    least three nodes per stem."""
    if not keys:
        return False
    runs = 1 + sum(1 for a, b in zip(keys, keys[1:]) if a != b)
    distinct = len(set(keys))
    return runs <= 2 * distinct + 2 and len(keys) >= 3 * distinct


def derive_hierarchy(graph: ir.Graph, *, max_children: int = 64) -> Hierarchy:
    """Derive the groups of ``graph`` (see the module docstring). O(n * depth + e); read-only.

    Args:
        graph: the graph.
        max_children: the most items (child groups plus non-Const nodes of its own) any group gets; larger
            groups are split into nested ranges. At least 2.

    Raises:
        ValueError: ``max_children`` < 2.
    """
    if max_children < 2:
        raise ValueError(f"max_children must be at least 2, got {max_children}")
    with ir.collector_paused():
        return _derive(graph, max_children)


def _derive(graph: ir.Graph, max_children: int) -> Hierarchy:
    nodes = graph.nodes()
    order = {n.id: i for i, n in enumerate(nodes)}
    ops = [n for n in nodes if n.op_type not in CONST_OP_TYPES]
    consts = [n for n in nodes if n.op_type in CONST_OP_TYPES]
    const_ids = {n.id for n in consts}
    mode = "chunks"
    paths: list[tuple[str, ...] | None] = []
    if ops and sum(1 for n in ops if "/" in n.name) >= SCOPE_SHARE * len(ops):
        mode = "scope"
        paths = [None if n.provenance else _scope_path(n.name) for n in ops]
    elif ops:
        stems = _stem_paths([n.name for n in ops])
        keyed = [p[0] for p in stems if p is not None]
        if len(keyed) >= STEM_SHARE * len(ops) and _contiguous(keyed):
            mode = "stem"
            # a node a pass made goes under its stem (its name usually starts with the pattern's node names)
            paths = [p[:1] if p is not None and n.provenance else p for n, p in zip(ops, stems)]
    groups = [Group(0, graph.name or "model", "root", -1)]
    index: dict[tuple[str, ...], int] = {(): 0}
    group_of: dict[int, int] = {}

    def group_for(p: tuple[str, ...], first: int) -> int:
        gid = index.get(p)
        if gid is not None:
            return gid
        parent = 0
        for depth in range(1, len(p) + 1):
            key = p[:depth]
            gid = index.get(key)
            if gid is None:
                gid = len(groups)
                label = key[-1]
                kind = "pass" if label.startswith("\u27e8") else ("stem" if mode == "stem" else "scope")
                groups.append(Group(gid, label, kind, parent, first=first))
                groups[parent].children.append(gid)
                index[key] = gid
            parent = gid
        assert gid is not None
        return gid

    fused: dict[tuple[tuple[str, ...], str], tuple[str, ...]] = {}

    def place(node: ir.Node, p: tuple[str, ...]) -> None:
        if node.provenance:
            key = (p, node.provenance)
            q = fused.get(key)
            if q is None:
                q = fused[key] = (*p, f"\u27e8{node.provenance}\u27e9")
            p = q
        gid = index.get(p)
        if gid is None:
            gid = group_for(p, order[node.id])
        groups[gid].nodes.append(node.id)
        group_of[node.id] = gid

    if mode == "chunks":
        for n in ops:
            place(n, ())
    else:
        # nodes without a path of their own: a neighbour's, else the previous node's in graph order
        own = {n.id: p for n, p in zip(ops, paths) if p is not None}
        prev: tuple[str, ...] = ()
        pending_front: list[ir.Node] = []
        index_get = index.get
        for n, p in zip(ops, paths):
            if p is not None and not n.provenance:  # the common case, inline
                gid = index_get(p)
                if gid is None:
                    gid = group_for(p, order[n.id])
                groups[gid].nodes.append(n.id)
                group_of[n.id] = gid
                prev = p
                continue
            if p is None:
                if n.op_type in _BOUNDARY_OPS:
                    place(n, ())
                    continue
                for other in (*graph.successors(n), *graph.predecessors(n)):
                    q = own.get(other.id)
                    if q is not None and not other.provenance:
                        p = q[:1] if n.provenance and mode == "stem" else q
                        break
            if p is None:
                if not prev:
                    pending_front.append(n)
                    continue
                p = prev
            place(n, p)
            if not n.provenance:
                prev = p
        for n in pending_front:
            place(n, prev)
    # Consts: the group of their first consumer (edges come by consumer position), else the root
    edges = graph.data_edges()
    for src, _, dst, _ in edges:
        sid = src.id
        if sid in const_ids and sid not in group_of:
            gid = group_of.get(dst.id)
            if gid is not None:
                groups[gid].nodes.append(sid)
                group_of[sid] = gid
    for n in consts:
        if n.id not in group_of:
            groups[0].nodes.append(n.id)
            group_of[n.id] = 0
    _simplify(groups, group_of, const_ids)
    _bound_fanout(groups, group_of, graph, order, const_ids, max_children)
    groups, group_of = _renumber(groups, group_of)
    _sizes(groups)
    h = Hierarchy(graph, groups, group_of, mode, order)
    h._data_edges = edges
    return h


def _simplify(groups: list[Group], group_of: dict[int, int], const_ids: set[int]) -> None:
    """Dissolve one-node groups into their parents; a group holding one group only (and no op of its own; the
    root whatever it holds) takes that group's content. Dissolved groups keep their slot with ``parent == -2``
    (dropped by :func:`_renumber`)."""
    for g in reversed(groups[1:]):  # children before parents
        if g.parent < 0:
            continue
        if not g.children and sum(1 for nid in g.nodes if nid not in const_ids) <= 1:
            parent = groups[g.parent]
            parent.children.remove(g.id)
            parent.nodes.extend(g.nodes)
            for nid in g.nodes:
                group_of[nid] = parent.id
            g.nodes = []
            g.parent = -2
    # a group holding one group only (the root: whatever inputs and outputs it holds too) takes its content
    for g in groups:
        if g.parent == -2:
            continue
        while len(g.children) == 1 and (g.id == 0 or all(n in const_ids for n in g.nodes)):
            only = groups[g.children[0]]
            if g.id != 0:
                g.label = f"{g.label}/{only.label}"
                g.kind = only.kind
            g.children = list(only.children)
            g.nodes.extend(only.nodes)
            for nid in only.nodes:
                group_of[nid] = g.id
            for cid in only.children:
                groups[cid].parent = g.id
            only.nodes, only.children, only.parent = [], [], -2


def _renumber(groups: list[Group], group_of: dict[int, int]) -> tuple[list[Group], dict[int, int]]:
    """Drop dissolved groups and number the rest 0.. breadth first from the root, so parents come before their
    children (children keep their order)."""
    keep: list[Group] = [groups[0]]
    i = 0
    while i < len(keep):
        keep.extend(groups[c] for c in keep[i].children)
        i += 1
    new_id = {g.id: k for k, g in enumerate(keep)}
    for g in keep:
        g.id = new_id[g.id]
        g.parent = new_id[g.parent] if g.parent >= 0 else -1
        g.children = [new_id[c] for c in g.children]
    return keep, {nid: new_id[gid] for nid, gid in group_of.items()}


def _bound_fanout(
    groups: list[Group],
    group_of: dict[int, int],
    graph: ir.Graph,
    order: dict[int, int],
    const_ids: set[int],
    max_children: int,
) -> None:
    """Give every group with more than ``max_children`` items nested, balanced range groups of consecutive
    items (graph order). Appends the range groups (:func:`_renumber` then puts parents first again)."""
    todo = list(range(len(groups)))
    while todo:
        gid = todo.pop()
        g = groups[gid]
        if g.parent == -2:  # dissolved
            continue
        if len(g.children) + len(g.nodes) <= max_children:
            continue
        my_consts = [nid for nid in g.nodes if nid in const_ids]
        op_ids = [nid for nid in g.nodes if nid not in const_ids]
        items: list[int] = [_item_key(c) for c in g.children] + op_ids
        if len(items) <= max_children:
            continue

        def first(item: int) -> int:
            return groups[-item - 1].first if item < 0 else order[item]

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
                rng = Group(rid, _range_label(groups, graph, chunk), "range", gid, first=first(chunk[0]))
                groups.append(rng)
                for it in chunk:
                    if it < 0:
                        groups[-it - 1].parent = rid
                        rng.children.append(-it - 1)
                    else:
                        rng.nodes.append(it)
                        group_of[it] = rid
                new_items.append(_item_key(rid))
            level_items = new_items
        g.children = [-it - 1 for it in level_items]
        g.nodes = my_consts
        # Consts of this group follow their first consumer into its range
        for nid in my_consts:
            uses = graph.all_uses(graph.node(nid))
            target = next((group_of[c.id] for _, c, _ in uses if group_of.get(c.id) not in (None, gid)), None)
            if target is not None and _is_below(groups, target, gid):
                groups[target].nodes.append(nid)
                group_of[nid] = target
                g.nodes.remove(nid)
    for g in groups:
        if len(g.nodes) > 1:
            g.nodes.sort(key=order.__getitem__)


def _is_below(groups: list[Group], gid: int, ancestor: int) -> bool:
    while gid >= 0:
        if gid == ancestor:
            return True
        gid = groups[gid].parent
    return False


def _range_label(groups: list[Group], graph: ir.Graph, chunk: list[int]) -> str:
    def name(item: int) -> str:
        if item < 0:
            g = groups[-item - 1]
            return g.label.split(" \u2026 ")[0] if item == chunk[0] else g.label.split(" \u2026 ")[-1]
        return graph.node(item).name

    first, last = name(chunk[0]), name(chunk[-1])
    return first if first == last else f"{first} \u2026 {last}"


def _sizes(groups: list[Group]) -> None:
    """Nodes under each group; ``groups`` are numbered parents first (see :func:`_renumber`)."""
    for g in groups:
        g.size = len(g.nodes)
    for g in reversed(groups):
        if g.parent >= 0:
            groups[g.parent].size += g.size
