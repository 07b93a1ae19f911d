"""GE's subgraph rewrite (spec §3.7), transactional: every rule is checked before the graph is touched.

Order of work: resolve the boundary and derive the replaced region (backward BFS from the outputs, stopping at
the input producers); check self-containment and the replacement's IO counts; decide which old nodes go (those
left without data consumers); prove on the graph-as-it-will-be that no cycle appears; only then copy the
replacement in (or move its nodes, when the caller discards it; or make the nodes of a replacement recorded
instead of built, :func:`rewrite_recorded`), place it topologically, re-wire and remove.
A failed check raises :class:`RewriteError` and leaves the graph exactly as it was. A caller that already has
the region from the matcher, with its self-containment and fuse-cycle checks done, passes it in and those
steps are skipped.
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
import logging
from collections.abc import Iterable
from typing import Any

from gebench.ir import Graph, GraphError, Node, TensorDesc, copy_attrs

from ._boundary import Boundary, boundary_subgraph, escaping_use
from ._pattern import DATA_TYPE, NETOUTPUT_TYPE
from ._recorded import RecordedReplacement

__all__ = ["rewrite", "rewrite_recorded", "RewriteError", "RewriteReason", "RewriteResult", "ORIGIN_NAMES_ATTR",
           "PASS_NAME_ATTR", "inherited_origin_names"]

_log = logging.getLogger(__name__)

#: Attr GE stamps on fused nodes with the original op names of the nodes they replace: each replaced node's own
#: list when it has one (an importer's ONNX node name, an earlier fusion's list), else its name.
ORIGIN_NAMES_ATTR = "_datadump_original_op_names"
#: List-of-strings attr on nodes spliced in by a PatternFusionPass or DecomposePass: the ``pass_name`` lists of the
#: replaced nodes, concatenated, followed by the pass doing the replacement (provenance, as GE stamps it).
PASS_NAME_ATTR = "pass_name"


def inherited_origin_names(nodes: Iterable[Node]) -> list[str]:
    """The :data:`ORIGIN_NAMES_ATTR` value of a node made from ``nodes``: per node, its own list when it has a
    non-empty one, else its name. O(len(nodes) + names)."""
    names: list[str] = []
    for n in nodes:
        own = n.attrs.get(ORIGIN_NAMES_ATTR)
        if own and isinstance(own, list):
            names.extend(own)
        else:
            names.append(n._name)
    return names

# GE numbers renamed replacement nodes with a counter; gebench keeps one per process.
_RENAME_COUNTER = itertools.count()


class RewriteReason(str, enum.Enum):
    """Which rewrite rule a :class:`RewriteError` reports."""

    EMPTY_BOUNDARY = "EMPTY_BOUNDARY"
    BOUNDARY_INPUT_EMPTY = "BOUNDARY_INPUT_EMPTY"
    BOUNDARY_INPUT_UNRESOLVED = "BOUNDARY_INPUT_UNRESOLVED"
    BOUNDARY_OUTPUT_UNRESOLVED = "BOUNDARY_OUTPUT_UNRESOLVED"
    FOREIGN_NODE = "FOREIGN_NODE"
    NOT_SELF_CONTAINED = "NOT_SELF_CONTAINED"
    DATA_COUNT_MISMATCH = "DATA_COUNT_MISMATCH"
    OUTPUT_COUNT_MISMATCH = "OUTPUT_COUNT_MISMATCH"
    NO_NETOUTPUT = "NO_NETOUTPUT"
    BAD_DATA_INDEX = "BAD_DATA_INDEX"
    REPLACEMENT_CYCLIC = "REPLACEMENT_CYCLIC"
    UNSUPPORTED_SUBGRAPH = "UNSUPPORTED_SUBGRAPH"
    WOULD_CREATE_CYCLE = "WOULD_CREATE_CYCLE"
    INTERNAL = "INTERNAL"
    MARKS_RUNAWAY = "MARKS_RUNAWAY"


class RewriteError(Exception):
    """A rewrite broke a GE rule; the graph was left unchanged.

    Attributes:
        reason_code: the rule (:class:`RewriteReason`).
        message: what was wrong, naming the nodes involved and the fix.
        node: the offending target node when there is one (for example the node whose output escapes).
    """

    def __init__(self, reason_code: RewriteReason | str, message: str, *, node: Node | None = None) -> None:
        self.reason_code = RewriteReason(reason_code)
        self.message = message
        self.node = node
        super().__init__(f"[{self.reason_code.value}] {message}")


@dataclasses.dataclass(slots=True)
class RewriteResult:
    """What a rewrite did: ids of removed and added target nodes (added in replacement topological order),
    and replacement node name -> new target node name."""

    removed: list[int]
    added: list[int]
    renamed: dict[str, str]


def rewrite(graph: Graph, boundary: Boundary, replacement: Graph, *, pass_name: str,
            check_self_contained: bool = True, adopt: bool = False,
            region: dict[int, Node] | None = None, mark_pass_name: bool = False,
            mark_limit: int | None = None) -> RewriteResult:
    """Replace the region delimited by ``boundary`` in ``graph`` with a copy of ``replacement`` (GE §3.7).

    Replacement Data ``index=i`` is fed by boundary input ``i``'s producer; replacement output ``k`` takes
    over the consumers of boundary output ``k`` (a Data output passes its producer straight through). New
    nodes are named ``<name>_<replaced names joined by "_">_<counter>``, carry ``pass_name`` as provenance and
    inherit the control edges of the removed nodes. Old region nodes left without data consumers are removed.
    Every new node gets :data:`ORIGIN_NAMES_ATTR` inherited from the region's nodes in topological order
    (:func:`inherited_origin_names`).

    ``mark_pass_name``: also stamp GE's :data:`PASS_NAME_ATTR` on every new node (what a PatternFusionPass or a
    DecomposePass does; ``SubgraphRewriter.replace`` does not): the region's ``pass_name`` lists in topological
    order, then ``pass_name``.

    ``region``: the replaced region (node id -> node) when the caller has already derived it and the boundary
    from the graph as it is now, checked that it is self-contained (the matcher does all of that for every
    match) and checked that fusing it into one node closes no cycle (the runtime's fuse-cycle check after
    ``meet_requirements``): none of that is done again and the boundary's anchors are not re-checked (an input
    without anchors still fails). The fuse-cycle check implies this rewrite's: any wiring of the replacement
    between the same producers and consumers has at most the paths of that one fused node.

    ``mark_limit``: refuse (``MARKS_RUNAWAY``) a rewrite whose inherited marks (original op names or
    ``pass_name`` lists) would exceed this many entries: they are concatenated at every rewrite, so a
    replacement that re-creates its own pattern doubles them each time (memory would run out long before the
    runtime's bound on the number of rewrites).

    ``adopt``: the caller discards ``replacement`` after the call (a replacement only the runtime has seen), so
    its nodes are moved into ``graph`` instead of copied; ``replacement`` is left empty once the rewrite is
    applied (untouched when a check fails). The result is the same graph as with copying.

    Cost: O(region + replacement + their edges), plus a reachability search bounded by topological positions.

    Raises:
        RewriteError: a boundary, self-containment, replacement or cycle rule fails; the graph is unchanged.
    """
    plan = _plan(graph, boundary, replacement, check_self_contained, region, mark_limit)
    return _apply(graph, replacement, plan, pass_name, adopt, mark_pass_name)


def rewrite_recorded(graph: Graph, boundary: Boundary, recorded: RecordedReplacement, *, pass_name: str,
                     region: dict[int, Node], mark_limit: int | None = None) -> RewriteResult | None:
    """:func:`rewrite` with ``adopt``, ``mark_pass_name`` and a known ``region`` (the runtime's call for a match),
    for a replacement recorded instead of built (:mod:`._recorded`): its nodes are made in ``graph`` with the
    names, attrs, anchors, ids and positions that adopting the built graph's nodes would give them.

    Returns None, with ``graph`` untouched, when the record's input or output count differs from the boundary's:
    the caller then builds the graph (``recorded.build()``) and calls :func:`rewrite`, which reports the mismatch
    as it does for any graph. Cost: O(region + record + their edges).

    Raises:
        RewriteError: a boundary input without anchors, or runaway marks; the graph is unchanged.
    """
    if recorded.n_inputs != len(boundary.inputs) or len(recorded.outputs) != len(boundary.outputs):
        return None
    plan = _plan(graph, boundary, None, True, region, mark_limit, recorded)
    marks = [*plan.pass_names, pass_name]
    created: list[Node] = []
    added: list[int] = []
    renamed: dict[str, str] = {}
    try:
        for op, name in zip(recorded.ops, plan.names, strict=True):  # the record's attrs and descs are taken
            node = _add_body_node(graph, plan, op.name, name, op.op_type, op.attrs, op.inputs, op.outputs,
                                  op.input_names, op.output_names, marks, pass_name)
            renamed[op.name] = node._name
            created.append(node)
            added.append(node.id)
        _place_and_link_body(graph, plan, created)
    except GraphError as exc:  # cannot happen after _plan's checks
        raise _undo_body(graph, created, f"making replacement {recorded.name!r}", exc) from exc
    return _rewire(graph, plan, created, added, renamed, pass_name)


@dataclasses.dataclass(slots=True)
class _Plan:
    """A checked rewrite. Replacement nodes are referred to by their index in ``body`` (the replacement's
    non-IO nodes in topological order); boundary inputs by their index in ``producers``."""

    producers: list[tuple[Node, int]]
    region: dict[int, Node]
    removed: list[Node]
    body: list[Any]  # replacement nodes, or RecordedOps for a recorded replacement
    in_edges: list[tuple[int, int, int]]  # (boundary input, body index, input port)
    body_edges: list[tuple[int, int, int, int]]  # (src body index, src port, dst body index, dst port)
    out_sources: list[tuple[int, int]]  # output k: (body index, port), or (-1 - boundary input, 0) for a Data
    moves: list[tuple[int, Node, int, list[tuple[Node, int]]]]  # (k, old node, old port, outside consumers)
    ctrl_preds: list[Node]
    ctrl_succs: list[Node]
    names: list[str]
    body_ctrl: list[tuple[int, int]]  # control edges between body nodes, as body indices
    origin_names: list[str]
    joined_origin: str  # the region's node names joined by "_" (the middle of every new name)
    removed_ids: set[int]
    pass_names: list[str]  # the region's pass_name lists, concatenated in topological order


def _plan(graph: Graph, boundary: Boundary, replacement: Graph | None, check_self_contained: bool,
          known_region: dict[int, Node] | None, mark_limit: int | None = None,
          recorded: RecordedReplacement | None = None) -> _Plan:
    """The checked rewrite of ``boundary`` into ``replacement``, or into ``recorded`` when given (its layout is
    then read from the record, whose counts the caller has checked against the boundary)."""
    if not boundary.outputs:
        raise RewriteError(RewriteReason.EMPTY_BOUNDARY, "the boundary has no outputs; add a SubgraphOutput for "
                           "every tensor the replaced region produces")
    producers: list[tuple[Node, int]] = []
    if known_region is not None:
        # the matcher derived this boundary from the graph as it is (pattern hooks cannot change structure):
        # every anchor is a live node and every port exists and is fed; an input may lack anchors (GE's rule)
        node_of = graph.node
        for bi in boundary.inputs:
            if not bi.anchors:
                _check_boundary(graph, boundary, [])  # raises BOUNDARY_INPUT_EMPTY
            node, port = bi.anchors[0]  # like GE, the first anchor's producer feeds the replacement's Data
            src = graph.input_sources(node)[port]
            producers.append((node_of(src[0]), src[1]))  # type: ignore[index]
        region = known_region
    else:
        _check_boundary(graph, boundary, producers)
        stop_ids = {p.id for p, _ in producers}
        region = {n.id: n for n in boundary_subgraph(graph, [n for n, _ in boundary.outputs], stop_ids)}
    if check_self_contained and known_region is None:
        out_ids = {n.id for n, _ in boundary.outputs}
        escape = escaping_use(graph, region, out_ids)
        if escape is not None:
            inner, port, consumer, in_port = escape
            raise RewriteError(RewriteReason.NOT_SELF_CONTAINED,
                               f"the region is not self-contained: output {port} of inner node {inner.name!r} "
                               f"({inner.op_type}) is also used by {consumer.name!r}:{in_port} outside it; make "
                               f"{inner.name!r} a boundary output or keep it out of the region", node=inner)

    # ---- replacement checks
    if recorded is None:
        assert replacement is not None
        body, in_edges, body_edges, out_sources, body_ctrl = _replacement_layout(
            replacement, len(boundary.inputs), len(boundary.outputs))
        body_names = [rn._name for rn in body]
    else:
        body, in_edges, body_edges, out_sources, body_ctrl = recorded.layout()
        body_names = [op.name for op in recorded.ops]

    # ---- what moves and what goes
    moves: list[tuple[int, Node, int, list[tuple[Node, int]]]] = []
    moved_ports: set[tuple[int, int]] = set()
    for k, (node, port) in enumerate(boundary.outputs):
        if (node.id, port) in moved_ports:
            continue  # the same tensor named twice: its consumers follow the first output naming it
        moved_ports.add((node.id, port))
        consumers = []
        for c, cp in graph.uses(node, port):
            if c.id not in region:
                consumers.append((c, cp))
        moves.append((k, node, port, consumers))
    position = graph.position
    in_order = sorted(region.values(), key=position)  # positions are distinct: reversing gives the reverse order
    removed_ids: set[int] = set()
    removed: list[Node] = []
    for node in reversed(in_order):
        keep = False
        port = 0
        for uses in graph.output_uses(node):  # read in place: stops at the first use that keeps the node
            for did, _ in uses:
                if did in removed_ids:
                    continue
                if did not in region and (node.id, port) in moved_ports:
                    continue
                keep = True
                break
            if keep:
                break
            port += 1
        if not keep:
            removed_ids.add(node.id)
            removed.append(node)
    ctrl_preds: dict[int, Node] = {}
    ctrl_succs: dict[int, Node] = {}
    for node in removed if graph.has_control_edges else ():
        for p in graph.control_predecessors(node):
            if p.id not in removed_ids:
                ctrl_preds.setdefault(p.id, p)
        for s in graph.control_successors(node):
            if s.id not in removed_ids:
                ctrl_succs.setdefault(s.id, s)

    # ---- names
    origin_names = inherited_origin_names(in_order)
    inherited_passes: list[str] = []
    for n in in_order:
        marks = n.attrs.get(PASS_NAME_ATTR)
        if marks and isinstance(marks, list):
            inherited_passes.extend(marks)
    if mark_limit is not None and max(len(origin_names), len(inherited_passes)) > mark_limit:
        raise RewriteError(RewriteReason.MARKS_RUNAWAY,
                           f"the {len(in_order)} replaced nodes carry {len(origin_names)} original op names and "
                           f"{len(inherited_passes)} pass_name marks, more than {mark_limit}: every rewrite "
                           "concatenates the marks of the nodes it replaces, so a replacement that re-creates its "
                           "own pattern doubles them each time and GE's match loop would never end",
                           node=in_order[-1] if in_order else None)
    joined = "_".join([n._name for n in in_order])
    names: list[str] = []
    for body_name in body_names:  # the counter makes them distinct; _apply skips any a graph node already has
        names.append(_new_name(body_name, joined))

    plan = _Plan(producers, region, removed, body, in_edges, body_edges, out_sources, moves,
                 list(ctrl_preds.values()), list(ctrl_succs.values()), names, body_ctrl, origin_names, joined,
                 removed_ids, inherited_passes)
    cycle = _cycle_witness(graph, plan, removed_ids) if known_region is None else None
    if cycle is not None:
        raise RewriteError(RewriteReason.WOULD_CREATE_CYCLE,
                           f"the rewrite would close a cycle through {cycle.name!r}: it both feeds the replacement "
                           "and depends on one of its outputs; choose a boundary whose inputs do not depend on its "
                           "outputs", node=cycle)
    return plan


_Layout = tuple  # (body, in_edges, body_edges, out_sources, body_ctrl), as _replacement_layout returns it

#: staged replacement structure -> its layout as body positions (see :func:`_replacement_layout`); bounded
_LAYOUTS: dict[tuple[Any, ...], tuple[list[int], list[Any], list[Any], list[Any]]] = {}
_LAYOUTS_MAX = 256


def _replacement_layout(replacement: Graph, n_inputs: int, n_outputs: int) -> _Layout:
    """Check ``replacement`` against a boundary of ``n_inputs`` inputs and ``n_outputs`` outputs and lay it out:
    ``body`` (its non-IO nodes in topological order), ``in_edges`` (boundary input, body index, input port),
    ``body_edges`` (src body index, src port, dst body index, dst port), ``out_sources`` (output k: (body index,
    port), or (-1 - boundary input, 0) where a Data passes straight through) and ``body_ctrl`` (control edges
    between body nodes, as body indices).

    A staged replacement (what a ``GraphBuilder`` returns when nobody has read it) is recognised by its structure:
    the op type, input count and Data index of each node in creation order, the first node's id and the list of
    its edges (a staged graph's ids are consecutive in creation order). The same structure always lays out the
    same way, so a replacement built again for the next match (the usual case: one replacement function, one
    match after another) reuses the layout worked out for the first: O(replacement) to recognise instead of the
    analysis.

    Raises:
        RewriteError: wrong Data/NetOutput counts, bad Data indices, an unconnected or cyclic output, subgraphs.
    """
    staged = replacement.staged_edges()
    if staged is None:
        return _analyse_layout(replacement, replacement.nodes(), replacement.input_sources, n_inputs, n_outputs)
    rnodes = replacement.nodes_in_creation_order()
    # the first id too: staged ids are consecutive from it, so the edges name the same creation positions
    shape: list[Any] = [n_inputs, n_outputs, rnodes[0].id if rnodes else -1]
    for n in rnodes:  # a plain loop: no comprehension call on Python 3.11
        op_type = n._op_type
        shape.append(op_type)
        shape.append(len(n.inputs))
        if op_type == DATA_TYPE:
            index = n.attrs.get("index")
            if type(index) is not int:
                shape = []  # the analysis raises for it
                break
            shape.append(index)
        if n.subgraph_names:
            shape = []  # the analysis raises for it
            break
    key = None
    if shape and not replacement.subgraphs:
        shape.extend(staged)
        key = tuple(shape)
        cached = _LAYOUTS.get(key)
        if cached is not None:
            positions, in_edges, body_edges, out_sources = cached
            body = []
            for i in positions:
                body.append(rnodes[i])
            return body, in_edges, body_edges, out_sources, []
    body, in_edges, body_edges, out_sources, body_ctrl = _analyse_layout(
        replacement, rnodes, _staged_sources(rnodes, staged), n_inputs, n_outputs)
    if key is not None:
        if len(_LAYOUTS) >= _LAYOUTS_MAX:
            _LAYOUTS.clear()
        index_of = {n.id: i for i, n in enumerate(rnodes)}
        # the lists are shared by every plan that reuses them: nothing changes a plan's lists after _plan
        _LAYOUTS[key] = ([index_of[n.id] for n in body], in_edges, body_edges, out_sources)
    return body, in_edges, body_edges, out_sources, body_ctrl


def _analyse_layout(replacement: Graph, rnodes: Iterable[Node], sources: Any, n_inputs: int,
                    n_outputs: int) -> _Layout:
    """:func:`_replacement_layout` without the cache: ``rnodes`` in topological order, ``sources(node)`` their
    input sources."""
    data_nodes: list[Node] = []
    netouts: list[Node] = []
    body: list[Node] = []
    has_subgraphs = bool(replacement.subgraphs)
    for n in rnodes:
        if n.subgraph_names:
            has_subgraphs = True
        op_type = n._op_type
        if op_type == DATA_TYPE:
            data_nodes.append(n)
        elif op_type == NETOUTPUT_TYPE:
            netouts.append(n)
        else:
            body.append(n)
    if has_subgraphs:
        raise RewriteError(RewriteReason.UNSUPPORTED_SUBGRAPH,
                           f"replacement {replacement.name!r} has subgraphs; gebench cannot copy them into a rewrite")
    if len(data_nodes) != n_inputs:
        raise RewriteError(RewriteReason.DATA_COUNT_MISMATCH,
                           f"replacement {replacement.name!r} has {len(data_nodes)} Data nodes but the boundary has "
                           f"{n_inputs} inputs; they must be equal (a Data per boundary input)")
    if len(netouts) != 1:
        raise RewriteError(RewriteReason.NO_NETOUTPUT,
                           f"replacement {replacement.name!r} has {len(netouts)} NetOutput nodes; it needs exactly "
                           "one (build it with GraphBuilder.build_and_reset(outputs))")
    out_refs = sources(netouts[0])
    for port, src in enumerate(out_refs):
        if src is None:
            raise RewriteError(RewriteReason.OUTPUT_COUNT_MISMATCH,
                               f"replacement {replacement.name!r}: output {port} (input {port} of "
                               f"{netouts[0].name!r}) is not connected")
    if len(out_refs) != n_outputs:
        raise RewriteError(RewriteReason.OUTPUT_COUNT_MISMATCH,
                           f"replacement {replacement.name!r} has {len(out_refs)} outputs but the boundary has "
                           f"{n_outputs}; they must be equal")
    # node references: a body node is its body index, a Data node is -1 - its index
    ref: dict[int, int] = {}
    seen_idx: set[int] = set()
    for d in data_nodes:
        idx = d.attrs.get("index")
        if not isinstance(idx, int) or isinstance(idx, bool) or not 0 <= idx < len(data_nodes) or idx in seen_idx:
            raise RewriteError(RewriteReason.BAD_DATA_INDEX,
                               f"replacement {replacement.name!r}: Data {d.name!r} has index {idx!r}; Data indices "
                               f"must be distinct ints 0..{len(data_nodes) - 1} (one per boundary input)")
        seen_idx.add(idx)
        ref[d.id] = -1 - idx
    j = 0
    for n in body:
        ref[n.id] = j
        j += 1
    out_sources = []
    for src in out_refs:  # plain loops here and below: no comprehension call on Python 3.11
        out_sources.append((ref[src[0]], src[1]))  # type: ignore[index]  # None was refused above
    in_edges: list[tuple[int, int, int]] = []
    body_edges: list[tuple[int, int, int, int]] = []
    j = 0
    for n in body:  # edges into Data nodes and NetOutput are not copied (outputs are handled as moves)
        port = 0
        for src in sources(n):
            if src is not None:
                r = ref.get(src[0])
                if r is None or r >= j:  # positions are topological, so only a broken graph gets here
                    raise RewriteError(RewriteReason.REPLACEMENT_CYCLIC,
                                       f"replacement {replacement.name!r} is cyclic (or fed by its NetOutput) at "
                                       f"input {port} of {n.name}")
                if r < 0:
                    in_edges.append((-1 - r, j, port))
                else:
                    body_edges.append((r, src[1], j, port))
            port += 1
        j += 1
    body_ctrl = [(ref[n.id], ref[succ.id]) for n in body for succ in replacement.control_successors(n)
                 if ref.get(succ.id, -1) >= 0] if replacement.has_control_edges else []
    return body, in_edges, body_edges, out_sources, body_ctrl


def _new_name(name: str, joined: str) -> str:
    """``<name>_<replaced names>_<counter>`` (GE's renaming of replacement nodes)."""
    return f"{name}_{joined}_{next(_RENAME_COUNTER)}" if joined else f"{name}_{next(_RENAME_COUNTER)}"


def _check_boundary(graph: Graph, boundary: Boundary, producers: list[tuple[Node, int]]) -> None:
    """Check every boundary anchor against ``graph`` and append each boundary input's producer to ``producers``.

    Raises:
        RewriteError: an input without anchors, a foreign node, a missing port or an unfed input.
    """
    for i, bi in enumerate(boundary.inputs):
        if not bi.anchors:
            raise RewriteError(RewriteReason.BOUNDARY_INPUT_EMPTY,
                               f"boundary input {i} has no consumer anchor; give it the (node, input port) pairs "
                               "it feeds")
        first: tuple[Node, int] | None = None
        for node, port in bi.anchors:
            _check_node(graph, node, "boundary input", i)
            if not isinstance(port, int) or not 0 <= port < len(node.inputs):
                raise RewriteError(RewriteReason.BOUNDARY_INPUT_UNRESOLVED,
                                   f"boundary input {i}: {node.name!r} ({node.op_type}) has no input {port}; it "
                                   f"has {len(node.inputs)}", node=node)
            prod = graph.producer(node, port)
            if prod is None:
                raise RewriteError(RewriteReason.BOUNDARY_INPUT_UNRESOLVED,
                                   f"boundary input {i}: input {port} of {node.name!r} has no producer; every "
                                   "boundary input must be fed", node=node)
            if first is None:
                first = prod  # like GE, the first anchor's producer feeds the replacement's Data
        assert first is not None
        producers.append(first)
    for k, (node, port) in enumerate(boundary.outputs):
        _check_node(graph, node, "boundary output", k)
        if not isinstance(port, int) or not 0 <= port < len(node.outputs):
            raise RewriteError(RewriteReason.BOUNDARY_OUTPUT_UNRESOLVED,
                               f"boundary output {k}: {node.name!r} ({node.op_type}) has no output {port}; it has "
                               f"{len(node.outputs)}", node=node)


def _staged_sources(nodes: list[Node], edges: list[tuple[int, int, int, int]]) -> Any:
    """``input_sources`` for the ``nodes`` of a staged replacement with data ``edges``, without building its
    tables."""
    table: dict[int, list[tuple[int, int] | None]] = {}
    for n in nodes:
        table[n.id] = [None] * len(n.inputs)
    for sid, sport, did, dport in edges:
        table[did][dport] = (sid, sport)
    return lambda n: table[n.id]


def _check_node(graph: Graph, node: Any, what: str, index: int) -> None:
    if not isinstance(node, Node):
        raise RewriteError(RewriteReason.FOREIGN_NODE, f"{what} {index} names {node!r}, which is not an IR node")
    if node not in graph:
        raise RewriteError(RewriteReason.FOREIGN_NODE,
                           f"{what} {index} names node {node.name!r}, which is not a node of graph {graph.name!r} "
                           "(removed, or from another graph)", node=node)


def _cycle_witness(graph: Graph, plan: _Plan, removed_ids: set[int]) -> Node | None:
    """A target node that would lie on a cycle after the rewrite, or None.

    Searches the graph as it will be: removed nodes are gone, the replacement body is present as virtual nodes
    (ids ``-1, -2, ...``) and the new edges exist. Any new cycle passes through a real node that is the source
    of a new edge (an "entry") and through a new edge, so an entry on a cycle is reachable from a new edge's target:
    a first search from every target collects the entries it reaches, and only those are tested, in position order,
    for a path back to themselves. An entry nothing new reaches (such as a Const feeding the replacement and
    thousands of other nodes) is never expanded. Real nodes after the last entry's position are not explored (they
    cannot reach an entry).
    """
    # Quick exit: every new edge leaves a boundary producer, a control predecessor or a replacement node, and
    # every real node a new edge enters is an outside consumer or a control successor. When all of those lie
    # after all of the former in topological position, no path can lead back (real paths only go forward).
    position = graph.position
    emitters = [p for p, _ in plan.producers]
    emitters.extend(plan.ctrl_preds)
    if not emitters:
        return None
    lim = max(position(n) for n in emitters)
    if all(position(c) > lim for _k, _n, _p, cs in plan.moves for c, _ in cs) and \
            all(position(q) > lim for q in plan.ctrl_succs):
        return None
    # body node j is the virtual node -(j + 1)
    vids = [-(j + 1) for j in range(len(plan.body))]
    virt_succ: dict[int, list[int]] = {v: [] for v in vids}
    real_added: dict[int, list[int]] = {}

    def add_real(src: Node, dst: int) -> None:
        real_added.setdefault(src.id, []).append(dst)

    for i, j, _dp in plan.in_edges:
        add_real(plan.producers[i][0], -(j + 1))
    for sj, _sp, dj, _dp in plan.body_edges:
        virt_succ[-(sj + 1)].append(-(dj + 1))
    for sj, dj in plan.body_ctrl:
        virt_succ[-(sj + 1)].append(-(dj + 1))
    for k, _node, _port, consumers in plan.moves:
        r, _sp = plan.out_sources[k]
        for c, _cp in consumers:
            if r >= 0:
                virt_succ[-(r + 1)].append(c.id)
            else:
                add_real(plan.producers[-1 - r][0], c.id)
    if vids:
        for p in plan.ctrl_preds:
            for v in vids:
                add_real(p, v)
        for v in vids:
            virt_succ[v].extend(q.id for q in plan.ctrl_succs)
    else:
        for p in plan.ctrl_preds:
            for q in plan.ctrl_succs:
                if p.id != q.id:
                    add_real(p, q.id)
    if not real_added:
        return None
    entries = set(real_added)
    limit = max(position(graph.node(e)) for e in entries)
    targets = {t for ts in real_added.values() for t in ts}
    real_targets = {t for t in targets if t >= 0}
    for ts in virt_succ.values():
        real_targets.update(t for t in ts if t >= 0)
    if all(position(graph.node(t)) > limit for t in real_targets):
        return None  # real paths only go forward in position: no target can get back to an entry

    def successors(n: int) -> Iterable[int]:
        if n < 0:
            return virt_succ[n]
        out = [s.id for s in graph.successors(graph.node(n))
               if s.id not in removed_ids and position(s) <= limit]
        out.extend(real_added.get(n, ()))
        return out

    def search(starts: Iterable[int], goals: set[int], first_only: bool) -> set[int]:
        """The goals reached from ``starts`` (only the first one found when ``first_only``)."""
        stack = [s for s in starts if s < 0 or (s not in removed_ids and position(graph.node(s)) <= limit)]
        seen = set(stack)
        found: set[int] = set()
        while stack:
            n = stack.pop()
            if n in goals:
                found.add(n)
                if first_only:
                    return found
            for s in successors(n):
                if s not in seen:
                    seen.add(s)
                    stack.append(s)
        return found

    reached = search(targets, entries, False)
    for e in sorted(reached, key=lambda i: position(graph.node(i))):
        if search(successors(e), {e}, True):
            return graph.node(e)
    return None


def _apply(graph: Graph, replacement: Graph, plan: _Plan, pass_name: str, adopt: bool,
           mark_pass_name: bool = False) -> RewriteResult:
    origin_names = plan.origin_names
    marks = [*plan.pass_names, pass_name] if mark_pass_name else None
    created: list[Node] = []
    added: list[int] = []
    renamed: dict[str, str] = {}
    try:
        for rn, name in zip(plan.body, plan.names, strict=True):
            old_name = rn._name
            if adopt:
                rn.attrs[ORIGIN_NAMES_ATTR] = list(origin_names)
                if marks is not None:
                    rn.attrs[PASS_NAME_ATTR] = list(marks)
                while True:
                    try:
                        node = graph.adopt_node(rn, name)  # checks the name before it changes anything
                        break
                    except GraphError:  # a node of the graph already has that name: take the next one
                        name = _new_name(old_name, plan.joined_origin)
                node.provenance = pass_name
            else:
                node = _add_body_node(graph, plan, old_name, name, rn.op_type,
                                      copy_attrs(rn.attrs) if rn.attrs else {}, list(map(TensorDesc.copy, rn.inputs)),
                                      list(map(TensorDesc.copy, rn.outputs)), rn.input_names, rn.output_names,
                                      marks, pass_name)  # name lists are never changed in place
            renamed[old_name] = node._name
            created.append(node)
            added.append(node.id)
        if adopt:
            replacement.clear()  # its nodes now belong to ``graph``
        _place_and_link_body(graph, plan, created)
    except GraphError as exc:  # cannot happen after _plan's checks
        raise _undo_body(graph, created, f"copying replacement {replacement.name!r}", exc) from exc
    return _rewire(graph, plan, created, added, renamed, pass_name)


def _add_body_node(graph: Graph, plan: _Plan, body_name: str, name: str, op_type: str, attrs: dict[str, Any],
                   inputs: list[TensorDesc], outputs: list[TensorDesc], input_names: list[str],
                   output_names: list[str], marks: list[str] | None, pass_name: str) -> Node:
    """Make a replacement node in ``graph`` from what it is made of (taken as they are): named ``name``, or the
    next ``_new_name`` of ``body_name`` while a graph node has that name; stamped with the region's original op
    names, ``marks`` as its ``pass_name`` list when given, and ``pass_name`` as provenance."""
    while graph.find(name) is not None:  # a node of the graph already has that name: take the next one
        name = _new_name(body_name, plan.joined_origin)
    attrs[ORIGIN_NAMES_ATTR] = list(plan.origin_names)
    if marks is not None:
        attrs[PASS_NAME_ATTR] = list(marks)
    node = graph.add_node_trusted(op_type, name, attrs, inputs, outputs, input_names, output_names)
    node.provenance = pass_name
    return node


def _undo_body(graph: Graph, created: list[Node], what: str, exc: GraphError) -> RewriteError:
    """Remove the body nodes added so far (the graph is then as before the rewrite); the error to raise."""
    for node in reversed(created):
        graph.remove_node(node)
    return RewriteError(RewriteReason.INTERNAL, f"{what} failed: {exc}")


def _place_and_link_body(graph: Graph, plan: _Plan, created: list[Node]) -> None:
    """Place the new body nodes between the boundary producers and the outside consumers, and link their inputs
    (from the producers and from each other)."""
    link = graph.add_edge_trusted
    if created:
        after = [p for p, _ in plan.producers]
        after.extend(plan.ctrl_preds)
        before = []
        for _k, _n, _p, cs in plan.moves:
            for c, _ in cs:
                before.append(c)
        before.extend(plan.ctrl_succs)
        graph.place_between(created, after, before)
    # _plan checked the replacement's ports and edges, and the new nodes' inputs are unfed
    producers = plan.producers
    for i, j, dp in plan.in_edges:
        p, pport = producers[i]
        link(p, pport, created[j], dp)
    for sj, sp, dj, dp in plan.body_edges:
        link(created[sj], sp, created[dj], dp)
    for sj, dj in plan.body_ctrl:
        graph.add_control_edge(created[sj], created[dj])


def _rewire(graph: Graph, plan: _Plan, created: list[Node], added: list[int], renamed: dict[str, str],
            pass_name: str) -> RewriteResult:
    """Move the outside consumers of the boundary outputs onto the replacement, remove the old nodes and carry
    their control edges over; the body is already in place."""
    link = graph.add_edge_trusted
    producers = plan.producers
    removed_set = plan.removed_ids
    for _k, node, port, consumers in plan.moves:
        if node.id in removed_set:
            continue  # removing the node below drops these edges too
        for c, cp in consumers:
            graph.remove_edge(node, port, c, cp)
    removed_ids = [node.id for node in plan.removed]
    graph.remove_nodes(plan.removed)
    for k, _node, _port, consumers in plan.moves:
        r, rport = plan.out_sources[k]
        src, sport = (created[r], rport) if r >= 0 else producers[-1 - r]
        for c, cp in consumers:
            link(src, sport, c, cp)  # the consumer's input was unlinked above
    if created:
        for p in plan.ctrl_preds:
            for node in created:
                graph.add_control_edge(p, node)
        for node in created:
            for q in plan.ctrl_succs:
                graph.add_control_edge(node, q)
    else:
        for p in plan.ctrl_preds:
            for q in plan.ctrl_succs:
                if p.id != q.id:
                    graph.add_control_edge(p, q)
    if _log.isEnabledFor(logging.DEBUG):
        _log.debug("pass %s rewrote %d nodes into %d in graph %s", pass_name, len(removed_ids), len(created),
                   graph.name)
    return RewriteResult(removed_ids, added, renamed)
