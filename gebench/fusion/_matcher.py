"""GE's pattern matcher (spec §3.4.5, §3.5, §3.6, §5.8, §5.9) on the IR.

Search: candidates for pattern output 0 come from the target's op-type index, in graph order; each candidate
is extended by a backward breadth-first walk over the pattern (O(pattern size) per candidate); further pattern
outputs are bound by backtracking. The candidate list is refreshed on every :meth:`Matcher.next` so the loop sees
the graph as the rewrites leave it. All per-candidate state lives in a :class:`_MatchState`; the matcher itself
only keeps the candidate cursor.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Iterator
from typing import Any, Protocol

import numpy as np

from gebench.ir import Graph, Node, TensorDesc, TensorValue

from ._boundary import Boundary, BoundaryInput, escaping_use
from ._pattern import CONST_TYPES, DATA_TYPE, PatternGraph, PatternNode, const_value, schema_of

__all__ = [
    "Matcher", "Match", "MatchRecorder", "MismatchKind", "compact_failure", "mismatch_detail"]

_log = logging.getLogger(__name__)


class MismatchKind(str, enum.Enum):
    """Why a candidate stopped matching (the ``kind`` of a structural-mismatch detail)."""

    OP_TYPE = "op_type"
    INPUT_COUNT = "input_count"
    PRODUCER_PORT = "producer_port"
    OUTPUT_PORT = "output_port"
    IR_ATTR = "ir_attr"
    CONST_VALUE = "const_value"
    WILDCARD_INCONSISTENT = "wildcard_inconsistent"
    BINDING_CONFLICT = "binding_conflict"
    TARGET_ALREADY_BOUND = "target_already_bound"
    NO_CANDIDATE = "no_candidate"


class MatchRecorder(Protocol):
    """What the matcher reports about rejected candidates (implemented by the ledger's recorder)."""

    def structural_mismatch(self, anchor_node: Node, failure: tuple[Any, ...], bound_count: int) -> None:
        """``failure`` says where the candidate stopped; :func:`mismatch_detail` turns it into the JSON-able
        detail (built only by recorders that keep it: the matcher rejects many candidates)."""

    def boundary_violation(self, match_nodes: list[Node], escaping_node: Node, detail: dict[str, Any]) -> None: ...


class Match:
    """One match of a pattern in a target graph.

    ``bindings`` maps every bound pattern node id to ``(target node, port)``: for Data wildcards the target
    producer and its output port, for other pattern nodes the matched node and ``None``. ``region`` maps the
    ids of the matched non-Data nodes to the nodes: the region GE's rewrite derives from ``boundary``, already
    checked to be self-contained (None for a Match built without it).
    """

    __slots__ = ("pattern", "graph", "bindings", "boundary", "region")

    def __init__(self, pattern: PatternGraph, graph: Graph, bindings: dict[int, tuple[Node, int | None]],
                 boundary: Boundary, region: dict[int, Node] | None = None) -> None:
        self.pattern = pattern
        self.graph = graph
        self.bindings = bindings
        self.boundary = boundary
        self.region = region

    def matched_nodes(self) -> list[Node]:
        """Matched target nodes except those bound to Data wildcards (Const included), by topological position."""
        data = self.pattern.nodes
        nodes = [n for pid, (n, _) in self.bindings.items() if data[pid].kind != "data"]
        nodes.sort(key=self.graph.position)
        return nodes

    def captured(self, i: int) -> tuple[Node, int]:
        """Capture ``i`` resolved to the target: a wildcard's producer output, else the matched node and the
        pattern's port.

        Raises:
            IndexError: ``i`` is out of range.
            KeyError: the captured pattern node is not bound by this match.
        """
        captures = self.pattern.captures
        if not 0 <= i < len(captures):
            raise IndexError(f"pattern {self.pattern.name!r} has {len(captures)} captures; index {i} is out of range")
        cap = captures[i]
        bound = self.bindings.get(cap.node_id)
        if bound is None:
            raise KeyError(f"capture {i} of pattern {self.pattern.name!r} names pattern node #{cap.node_id}, "
                           "which this match does not bind")
        node, port = bound
        return (node, port) if port is not None else (node, cap.port)

    def __repr__(self) -> str:
        pairs = ", ".join(f"{self.pattern.nodes[p].op_type}:{n.name}" for p, (n, _) in self.bindings.items())
        return f"<Match {self.pattern.name!r} {{{pairs}}}>"


class _MatchState:
    """Bindings of one partial match; copied when the multi-output search branches."""

    __slots__ = ("bindings", "owner", "data_targets", "anchors", "fail")

    def __init__(self) -> None:
        self.bindings: dict[int, tuple[Node, int | None]] = {}
        self.owner: dict[int, int] = {}  # target node id -> non-Data pattern node id
        self.data_targets: set[int] = set()  # target node ids bound by wildcards
        self.anchors: dict[int, list[tuple[Node, int]]] = {}  # Data pattern id -> consumer anchors
        self.fail: tuple[Any, ...] | None = None

    def copy(self) -> _MatchState:
        new = _MatchState()
        new.bindings = dict(self.bindings)
        new.owner = dict(self.owner)
        new.data_targets = set(self.data_targets)
        new.anchors = {k: list(v) for k, v in self.anchors.items()}
        return new


class Matcher:
    """Iterates over the matches of ``pattern`` in ``target`` with GE's rules.

    Args:
        pattern: the pattern; validated on the first :meth:`next` (an invalid pattern matches nothing).
        target: the graph searched (its direct nodes only).
        const_value_match: pattern Consts carrying a value only match constants with the same shape, dtype
            and bytes.
        ir_attr_match: IR attrs (schema defaults filled in) must be identical; inner nodes then skip the op
            type comparison (spec §5.8).
        recorder: receives structural mismatches and boundary violations.
    """

    def __init__(self, pattern: PatternGraph, target: Graph, *, const_value_match: bool = False,
                 ir_attr_match: bool = False, recorder: MatchRecorder | None = None) -> None:
        self.pattern = pattern
        self.target = target
        self.const_value_match = const_value_match
        self.ir_attr_match = ir_attr_match
        self.recorder = recorder
        self.invalid_reason: str | None = None
        self._candidates: list[Node] | None = None
        self._cursor = 0
        self._scanned_id = 0
        self._types: frozenset[str] = frozenset()
        self._pattern_attrs: dict[int, dict[str, Any]] = {}

    # ------------------------------------------------------------------ candidate list
    def _start(self) -> bool:
        reason = self.pattern.validate()
        if reason is not None:
            self.invalid_reason = reason
            _log.error("pattern %s matches nothing: %s", self.pattern.name, reason)
            self._candidates = []
            return False
        pid, _ = self.pattern.outputs[0]
        self._types = _lookup_types(self.pattern.nodes[pid])
        self._candidates = _typed_nodes(self.target, self._types)
        self._scanned_id = self.target.next_node_id
        return True

    def _refresh(self) -> None:
        """Append nodes of the anchor type created since the last call (new ids only; O(new ids))."""
        g = self.target
        assert self._candidates is not None
        types, candidates = self._types, self._candidates
        for node in g.nodes_from_id(self._scanned_id):
            if node._op_type in types:
                candidates.append(node)
        self._scanned_id = g.next_node_id

    def next(self) -> Match | None:
        """The next match, or None when the candidates are exhausted.

        Sees the current graph: removed candidates are skipped and nodes of the anchor type created since the
        previous call are appended to the candidate list. Cost per candidate is O(pattern size) plus the
        multi-output backtracking.
        """
        if self._candidates is None:
            if not self._start():
                return None
        elif self.invalid_reason is not None:
            return None
        else:
            self._refresh()
        cands = self._candidates
        assert cands is not None
        g = self.target
        while self._cursor < len(cands):
            node = cands[self._cursor]
            self._cursor += 1
            if node not in g or node._op_type not in self._types:
                continue
            match = self._match_anchor(node)
            if match is not None:
                return match
        return None

    def __iter__(self) -> Iterator[Match]:
        while True:
            m = self.next()
            if m is None:
                return
            yield m

    # ------------------------------------------------------------------ one anchor
    def _match_anchor(self, anchor: Node) -> Match | None:
        best: list[tuple[Any, ...] | None] = [None]
        violated = False
        state = _MatchState()
        if self._bind_output(state, 0, anchor):
            # a single-output pattern has nothing to backtrack over: skip the generator
            found = (state,) if len(self.pattern.outputs) == 1 else self._extend(state, 1, best)
            for done in found:
                boundary = self._boundary(done)
                bindings = done.bindings
                region = {}
                for tid, pid in done.owner.items():  # plain loops: no comprehension call on Python 3.11
                    region[tid] = bindings[pid][0]
                out_ids = set()
                for n, _ in boundary.outputs:
                    out_ids.add(n.id)
                escape = escaping_use(self.target, region, out_ids)
                if escape is None:
                    return Match(self.pattern, self.target, done.bindings, boundary, region)
                violated = True
                if self.recorder is not None:
                    inner, port, consumer, in_port = escape
                    nodes = sorted(region.values(), key=self.target.position)
                    self.recorder.boundary_violation(nodes, inner, {
                        "escaping_node": inner.name, "escaping_node_id": inner.id, "output_port": port,
                        "outside_consumer": consumer.name, "outside_consumer_id": consumer.id,
                        "consumer_input": in_port, "anchor_node": anchor.name, "anchor_node_id": anchor.id,
                    })
        else:
            _keep_best(best, state.fail)
        if not violated and best[0] is not None and self.recorder is not None:
            self.recorder.structural_mismatch(anchor, best[0], best[0][-1])
        return None

    def _extend(self, state: _MatchState, k: int, best: list[tuple[Any, ...] | None]) -> Iterator[_MatchState]:
        """Bind pattern outputs ``k..`` consistently with ``state``; yields complete states (backtracking)."""
        outputs = self.pattern.outputs
        if k == len(outputs):
            yield state
            return
        pid, port = outputs[k]
        pnode = self.pattern.nodes[pid]
        bound = state.bindings.get(pid)
        if bound is not None:
            # already bound by an earlier output's walk; GE still looks output k up by op type (so a wildcard
            # output must sit on a target Data node, §5.9) and checks the port
            node, bport = bound
            fail = None
            if node.op_type not in _lookup_types(pnode):
                fail = _failure(MismatchKind.OP_TYPE, pnode, node, pnode.op_type, node.op_type, state.bindings, k)
            elif bport is None and port >= len(node.outputs):
                fail = _failure(MismatchKind.OUTPUT_PORT, pnode, node, port, len(node.outputs), state.bindings, k)
            if fail is not None:
                state.fail = fail
                _keep_best(best, fail)
                return
            yield from self._extend(state, k + 1, best)
            return
        found = False
        for cand in self._output_candidates(state, pnode):
            if cand.id in state.owner or cand.id in state.data_targets:
                continue
            found = True
            branch = state.copy()
            if self._bind_output(branch, k, cand):
                yield from self._extend(branch, k + 1, best)
            else:
                _keep_best(best, branch.fail)
        if not found:
            _keep_best(best, _failure(MismatchKind.NO_CANDIDATE, pnode, None, pnode.op_type, None,
                                      state.bindings, k))

    def _output_candidates(self, state: _MatchState, pn: PatternNode) -> list[Node]:
        """Candidates for an unbound pattern output node, in graph order.

        When one of its pattern inputs is already bound, only consumers of that target tensor can pass the
        walk, so the list is those consumers (the same candidates, in the same order, as filtering the
        op-type index); otherwise the op-type index. Keeps multi-output patterns from being quadratic.
        """
        types = _lookup_types(pn)
        for ppid, pport in pn.inputs:
            bound = state.bindings.get(ppid)
            if bound is None:
                continue
            node, bport = bound
            port = bport if bport is not None else pport
            if port >= len(node.outputs):
                return []
            found: dict[int, Node] = {}
            for consumer, _ in self.target.uses(node, port):
                if consumer.op_type in types:
                    found.setdefault(consumer.id, consumer)
            return sorted(found.values(), key=self.target.position)
        return _typed_nodes(self.target, types)

    def _bind_output(self, state: _MatchState, k: int, cand: Node) -> bool:
        pid, port = self.pattern.outputs[k]
        pnode = self.pattern.nodes[pid]
        if port >= len(cand.outputs):
            state.fail = _failure(MismatchKind.OUTPUT_PORT, pnode, cand, port, len(cand.outputs),
                                  state.bindings, k)
            return False
        if pnode.kind == "data":
            state.bindings[pid] = (cand, port)
            state.data_targets.add(cand.id)
            return True
        why = self._node_mismatch(pnode, cand, inner=False)
        if why is not None:
            state.fail = _failure(why[0], pnode, cand, why[1], why[2], state.bindings, k)
            return False
        state.bindings[pid] = (cand, None)
        state.owner[cand.id] = pid
        return self._walk(state, pid, cand, k)

    def _walk(self, state: _MatchState, pid: int, start: Node, k: int) -> bool:
        """Backward BFS from ``start`` (bound to pattern node ``pid``), binding producers pairwise."""
        pnodes = self.pattern.nodes
        g = self.target
        bindings, owner, data_targets, anchors = state.bindings, state.owner, state.data_targets, state.anchors
        queue: list[tuple[int, Node]] = [(pid, start)]
        i = 0
        while i < len(queue):
            qpid, t = queue[i]
            i += 1
            pn = pnodes[qpid]
            conn = g.fed_inputs(t)
            if len(conn) != len(pn.inputs):
                state.fail = _failure(MismatchKind.INPUT_COUNT, pn, t, len(pn.inputs), len(conn), bindings, k)
                return False
            for (ppid, pport), (tport, tn, tp) in zip(pn.inputs, conn, strict=True):
                ppn = pnodes[ppid]
                if ppn.kind == "data":
                    bound = bindings.get(ppid)
                    if bound is None:
                        if tn.id in owner:
                            state.fail = _failure(MismatchKind.TARGET_ALREADY_BOUND, ppn, tn, "a node outside the match",
                                                  f"matched as {pnodes[owner[tn.id]].name}", bindings, k)
                            return False
                        bindings[ppid] = (tn, tp)
                        data_targets.add(tn.id)
                        anchors[ppid] = [(t, tport)]
                    elif bound[0] is not tn or bound[1] != tp:
                        state.fail = _failure(MismatchKind.WILDCARD_INCONSISTENT, ppn, tn,
                                              f"{bound[0].name}:{bound[1]}", f"{tn.name}:{tp}", bindings, k)
                        return False
                    else:
                        anchors.setdefault(ppid, []).append((t, tport))
                    continue
                if pport != tp:
                    state.fail = _failure(MismatchKind.PRODUCER_PORT, ppn, tn, pport, tp, bindings, k)
                    return False
                bound = bindings.get(ppid)
                if bound is not None:
                    if bound[0] is not tn:
                        state.fail = _failure(MismatchKind.BINDING_CONFLICT, ppn, tn, bound[0].name, tn.name,
                                              bindings, k)
                        return False
                    continue
                if tn.id in owner or tn.id in data_targets:
                    state.fail = _failure(MismatchKind.TARGET_ALREADY_BOUND, ppn, tn, "an unbound node",
                                          "already bound", bindings, k)
                    return False
                why = self._node_mismatch(ppn, tn, inner=True)
                if why is not None:
                    state.fail = _failure(why[0], ppn, tn, why[1], why[2], bindings, k)
                    return False
                bindings[ppid] = (tn, None)
                owner[tn.id] = ppid
                queue.append((ppid, tn))
        return True

    # ------------------------------------------------------------------ node matchers
    def _node_mismatch(self, pn: PatternNode, t: Node, *, inner: bool) -> tuple[MismatchKind, Any, Any] | None:
        """None when ``t`` passes the node matcher of ``pn``, else ``(kind, expected, actual)``."""
        if pn.kind == "data":
            return None
        if pn.kind == "const":
            if t.op_type not in CONST_TYPES:
                return MismatchKind.OP_TYPE, pn.op_type, t.op_type
            if self.const_value_match:
                want = const_value(pn.node)
                if want is not None:
                    got = const_value(t)
                    if got is None:
                        return MismatchKind.CONST_VALUE, _value_text(want), "no value"
                    if got.dtype != want.dtype or got.shape != want.shape or got.to_bytes() != want.to_bytes():
                        return MismatchKind.CONST_VALUE, _value_text(want), _value_text(got)
            return None
        if not (self.ir_attr_match and inner) and t._op_type != pn.op_type:
            return MismatchKind.OP_TYPE, pn.op_type, t._op_type
        if self.ir_attr_match:
            want_attrs = self._pattern_attrs.get(pn.id)
            if want_attrs is None:
                want_attrs = self._pattern_attrs[pn.id] = ir_attr_keys(pn.node)
            got_attrs = ir_attr_keys(t)
            if want_attrs != got_attrs:
                names = sorted(set(want_attrs) ^ set(got_attrs))
                if not names:
                    names = sorted(n for n in want_attrs if want_attrs[n] != got_attrs[n])
                return MismatchKind.IR_ATTR, {n: _key_text(want_attrs.get(n)) for n in names}, \
                    {n: _key_text(got_attrs.get(n)) for n in names}
        return None

    # ------------------------------------------------------------------ boundary
    def _boundary(self, state: _MatchState) -> Boundary:
        pos = self.target.position
        inputs = []
        for did in self.pattern.data_ids:
            anchors = state.anchors.get(did, [])
            if len(anchors) > 1:
                anchors = sorted(anchors, key=lambda a: (pos(a[0]), a[1]))
            inputs.append(BoundaryInput(list(anchors)))
        outputs = []
        for pid, port in self.pattern.outputs:
            node, bport = state.bindings[pid]
            outputs.append((node, bport if bport is not None else port))
        return Boundary(inputs, outputs)


# ---------------------------------------------------------------------- helpers
def _lookup_types(pn: PatternNode) -> frozenset[str]:
    if pn.kind == "const":
        return CONST_TYPES
    if pn.kind == "data":
        return frozenset({DATA_TYPE})  # spec §5.9: a Data output only finds target Data nodes
    return frozenset({pn.op_type})


def _typed_nodes(graph: Graph, types: frozenset[str]) -> list[Node]:
    if len(types) == 1:
        (only,) = types
        return graph.nodes_of_type(only)
    nodes = [n for t in types for n in graph.nodes_of_type(t)]
    nodes.sort(key=graph.position)
    return nodes


def _failure(kind: MismatchKind, pn: PatternNode, t: Node | None, expected: Any, actual: Any,
             bindings: dict[int, tuple[Node, int | None]], output_index: int) -> tuple[Any, ...]:
    # a tuple, not a dict: built for every rejected candidate, turned into a dict only when reported. It keeps the
    # partial bindings by reference: a failed state is never extended afterwards (branches work on copies)
    return (kind, pn, t, expected, actual, output_index, bindings, len(bindings))


def compact_failure(fail: tuple[Any, ...]) -> tuple[Any, ...]:
    """``fail`` (from :func:`_failure`) with its bindings as a flat ``(pattern id, target node, ...)`` tuple instead
    of the matcher's dict: what a failure kept for later (a deferred ledger record) holds, about a quarter of the
    memory. :func:`mismatch_detail` reads either form. O(bindings)."""
    flat: list[Any] = []
    for pid, (node, _) in fail[6].items():  # a plain loop: no comprehension call on Python 3.11
        flat.append(pid)
        flat.append(node)
    return (*fail[:6], tuple(flat), fail[7])


def _keep_best(best: list[tuple[Any, ...] | None], fail: tuple[Any, ...] | None) -> None:
    if fail is not None and (best[0] is None or fail[-1] > best[0][-1]):
        best[0] = fail


def mismatch_detail(fail: tuple[Any, ...]) -> dict[str, Any]:
    """The JSON-able detail of a structural mismatch the matcher reported: which pattern node, what kind of
    mismatch, expected vs actual, the target node, and the bindings made so far (pattern node id as text ->
    target node name). O(pattern size)."""
    kind, pn, t, expected, actual, output_index, bindings, bound = fail
    # how far the candidate got: pattern node id (as text, as JSON keeps it) -> bound target node name
    bound_names = {}
    if type(bindings) is tuple:  # compact_failure's flat (pattern id, node, ...) pairs
        for i in range(0, len(bindings), 2):
            bound_names[str(bindings[i])] = bindings[i + 1].name
    else:
        for pid, (node, _) in bindings.items():  # a plain loop: no comprehension call on Python 3.11
            bound_names[str(pid)] = node.name
    return {
        "kind": kind.value,
        "pattern_node": pn.name,
        "pattern_node_id": pn.id,
        "pattern_op_type": pn.op_type,
        "target_node": None if t is None else t.name,
        "target_node_id": None if t is None else t.id,
        "target_op_type": None if t is None else t.op_type,
        "expected": expected,
        "actual": actual,
        "output_index": output_index,
        "bound_count": bound,
        "bindings": bound_names,
    }


def _value_text(value: TensorValue) -> str:
    return f"{value.dtype.name}{list(value.shape)}"


def _key_text(key: Any) -> Any:
    """A JSON-friendly rendering of an :func:`_attr_key` key."""
    if key is None:
        return None
    tag, *rest = key
    if tag == "f":
        return float(np.frombuffer(rest[0], dtype=np.float32)[0])
    if tag == "l":
        return [_key_text(k) for k in rest[0]]
    if tag == "t":
        return f"tensor dtype={rest[0]} shape={list(rest[1])}"
    if tag in ("d", "y", "r"):
        return repr(rest)
    return rest[0]


def ir_attr_keys(node: Node) -> dict[str, Any]:
    """The node's IR attrs as comparable keys: schema attrs with unset optional ones at their defaults.

    Without a schema, every attr whose name does not start with ``_`` counts. Keys compare types strictly
    (``1`` vs ``1.0`` vs ``True`` differ) except that Float attrs hold float32 bytes, as GE stores them.
    """
    schema = schema_of(node.op_type)
    attrs = node.attrs
    if schema is None:
        return {k: _attr_key(v, "") for k, v in attrs.items() if not k.startswith("_")}
    out: dict[str, Any] = {}
    for a in schema.attrs:
        if a.name in attrs:
            out[a.name] = _attr_key(attrs[a.name], a.type)
        elif not a.required:
            out[a.name] = _attr_key(a.default, a.type)
    return out


def _attr_key(value: Any, attr_type: str) -> Any:
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int):
        if attr_type in ("Float", "ListFloat"):
            return ("f", np.float32(value).tobytes())
        return ("i", int(value))
    if isinstance(value, float):
        return ("f", np.float32(value).tobytes())
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, bytes):
        return ("y", value)
    if isinstance(value, TensorValue):
        return ("t", int(value.dtype), value.shape, value.to_bytes())
    if isinstance(value, TensorDesc):
        return ("d", int(value.dtype), value.shape, int(value.format), int(value.origin_format), value.origin_shape)
    if isinstance(value, (list, tuple)):
        return ("l", tuple(_attr_key(v, attr_type) for v in value))
    if isinstance(value, np.generic):
        return _attr_key(value.item(), attr_type)
    return ("r", repr(value))
