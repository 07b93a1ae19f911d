"""Numerical equivalence of graphs and of single rewrites, on seeded random and edge-case inputs.

Three levels:

* :func:`check_graphs` runs two whole graphs on the same inputs and compares every output.
* :func:`check_rewrite` compares a matched region of a graph with the replacement that took its place,
  *locally*: both are extracted into standalone graphs whose Data nodes stand for the boundary input
  tensors (Const producers are copied as Consts, so a rewrite that relies on a constant's value is judged
  with that value) and whose NetOutput lists the boundary output tensors. The runtime can split it
  around a live rewrite: :func:`capture_rewrite` before, :func:`check_captured_rewrite` after.
* :func:`verify_run` checks a compile run: consecutive stage snapshots as whole graphs, and every
  replaced candidate of the ledger locally; it writes ``max_abs_error``/``max_rel_error`` on the records.

Tolerance rule (per output element ``a`` = reference/before, ``b`` = after):
``|a - b| <= atol + rtol * max(|a|, rms(a))``. Using the tensor's RMS as a floor keeps cancellation near
zero (reassociated sums) from being reported as a relative error of 100%. ``max_rel`` is
``max |a - b| / max(|a|, rms(a))``. Defaults by dtype: float64 1e-9/1e-7, float32 1e-5/1e-4,
float16 1e-3/1e-2 (atol/rtol); integers and bools must match exactly. NaNs must match NaNs.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from gebench import ir

from .reference import (
    ExecutionError,
    _value_dtype,
    check_memory,
    execute,
    execute_with_values,
    format_bytes,
    graph_inputs,
    random_input,
)

__all__ = [
    "EDGE_CASES",
    "EquivalenceResult",
    "FailingInput",
    "PassCheck",
    "RewriteCheck",
    "RewriteRegion",
    "VerifyReport",
    "capture_rewrite",
    "check_captured_rewrite",
    "check_graphs",
    "check_regions",
    "check_rewrite",
    "compare_outputs",
    "verify_run",
]

_log = logging.getLogger(__name__)

#: Edge-case input sets used for floating inputs (integer and bool inputs keep their random values).
EDGE_CASES = ("zeros", "ones", "negatives", "large")
DEFAULT_SEEDS = (0, 1, 2)
#: GE's dump points in order: ``gebench.fusion.stages.DUMP_ORDER``, repeated here because exec sits beside the
#: core and imports nothing of it (``tests/test_layering.py`` checks the two are equal).
_STAGE_ORDER = (
    "PreRunBegin",
    "RunCustomPassBeforeInfershape",
    "RunCustomPass_AfterInferShape",
    "RunCustomPassAfterBuiltinFusionPass",
    "RunCustomPassAfterOriginGraphOptimize",
)


# ---------------------------------------------------------------------------------------- results
@dataclasses.dataclass
class FailingInput:
    """One input set on which the two sides disagree.

    ``label`` says how the inputs were made (``"seed=1"``, ``"edge=large"``, ``"context"``); ``inputs``
    holds them by Data index (for a rewrite: by boundary input position).
    """

    label: str
    inputs: dict[int, np.ndarray]
    output_index: int | None
    max_abs: float
    max_rel: float
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "output_index": self.output_index, "max_abs": self.max_abs,
                "max_rel": self.max_rel, "message": self.message,
                "inputs": {str(k): {"dtype": str(v.dtype), "shape": list(v.shape),
                                    "head": np.asarray(v).ravel()[:8].tolist()} for k, v in self.inputs.items()}}


@dataclasses.dataclass
class EquivalenceResult:
    """Outcome of comparing two computations over several input sets.

    ``ok`` is True when every compared output of every input set is within tolerance and neither side
    failed where the other ran. ``cases`` counts input sets compared; ``skipped`` lists input sets the
    reference side itself could not run on (for example random values that are not valid indices).
    ``error`` explains a result that could not be computed at all (the regions do not correspond).
    """

    max_abs: float
    max_rel: float
    ok: bool
    failing_inputs: list[FailingInput] = dataclasses.field(default_factory=list)
    cases: int = 0
    skipped: list[str] = dataclasses.field(default_factory=list)
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"max_abs": self.max_abs, "max_rel": self.max_rel, "ok": self.ok, "cases": self.cases,
                "skipped": list(self.skipped), "error": self.error,
                "failing_inputs": [f.to_dict() for f in self.failing_inputs]}


def _tolerance(dtype: np.dtype) -> tuple[float, float]:
    """(rtol, atol) for comparing values of ``dtype``."""
    if dtype == np.float64:
        return 1e-7, 1e-9
    if dtype == np.float16:
        return 1e-2, 1e-3
    if dtype.kind in "fc":
        return 1e-4, 1e-5
    return 0.0, 0.0


def compare_outputs(reference: Sequence[np.ndarray], candidate: Sequence[np.ndarray], *, rtol: float | None = None,
                    atol: float | None = None) -> tuple[float, float, bool, int | None, str]:
    """Compare two output lists element-wise (tolerance rule in the module docstring).

    Returns:
        (max_abs, max_rel, ok, first failing output index or None, message).
    """
    if len(reference) != len(candidate):
        return float("inf"), float("inf"), False, None, f"{len(reference)} outputs vs {len(candidate)}"
    max_abs = max_rel = 0.0
    first_bad: int | None = None
    message = ""
    for i, (a, b) in enumerate(zip(reference, candidate, strict=True)):
        a = np.asarray(a)
        b = np.asarray(b)
        if a.shape != b.shape:
            return float("inf"), float("inf"), False, i, f"output {i}: shape {list(a.shape)} vs {list(b.shape)}"
        if a.dtype.kind == "O" or b.dtype.kind == "O":
            same = bool(np.all(a.astype(str) == b.astype(str)))
            if not same:
                return float("inf"), float("inf"), False, i, f"output {i}: strings differ"
            continue
        if a.dtype.kind in "biu" and b.dtype.kind in "biu":
            diff = np.abs(a.astype(np.int64) - b.astype(np.int64)) if a.size else np.zeros(0)
            d = float(diff.max()) if diff.size else 0.0
            max_abs = max(max_abs, d)
            if d > 0:
                scale = float(np.max(np.abs(a.astype(np.float64)))) or 1.0
                max_rel = max(max_rel, d / scale)
                if first_bad is None:
                    first_bad, message = i, f"output {i}: integer values differ by up to {d:g}"
            continue
        r, t = _tolerance(np.result_type(a.dtype, b.dtype) if a.dtype.kind == b.dtype.kind else a.dtype)
        r = r if rtol is None else rtol
        t = t if atol is None else atol
        af = a.astype(np.float64)
        bf = b.astype(np.float64)
        nan_a, nan_b = np.isnan(af), np.isnan(bf)
        if np.any(nan_a != nan_b):
            max_abs = max_rel = float("inf")
            if first_bad is None:
                first_bad, message = i, f"output {i}: NaN in one result only ({int(np.sum(nan_a != nan_b))} elements)"
            continue
        finite = ~nan_a
        inf_mismatch = finite & (np.isinf(af) | np.isinf(bf)) & (af != bf)
        if np.any(inf_mismatch):
            max_abs = max_rel = float("inf")
            if first_bad is None:
                first_bad, message = i, f"output {i}: infinite values differ"
            continue
        use = finite & ~np.isinf(af) & ~np.isinf(bf)
        if not np.any(use):
            continue
        av, bv = af[use], bf[use]
        err = np.abs(av - bv)
        rms = float(np.sqrt(np.mean(np.square(av))))
        scale = np.maximum(np.abs(av), rms)
        d = float(err.max())
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(scale > 0, err / np.where(scale > 0, scale, 1.0), np.where(err > 0, np.inf, 0.0))
        max_abs = max(max_abs, d)
        max_rel = max(max_rel, float(rel.max()))
        bad = err > t + r * scale
        if np.any(bad) and first_bad is None:
            where = int(np.argmax(bad))
            first_bad = i
            message = (f"output {i}: {int(bad.sum())} of {bad.size} elements out of tolerance "
                       f"(rtol={r:g}, atol={t:g}); worst |diff|={d:.6g}; first at flat index {where}: "
                       f"{av[where]!r} vs {bv[where]!r}")
    return max_abs, max_rel, first_bad is None, first_bad, message


# ---------------------------------------------------------------------------------------- input sets
def _edge_case(kind: str, desc_dtype: np.dtype, base: np.ndarray) -> np.ndarray:
    if desc_dtype.kind != "f":
        return base
    if kind == "zeros":
        return np.zeros_like(base)
    if kind == "ones":
        return np.ones_like(base)
    if kind == "negatives":
        return -np.abs(base) - np.asarray(0.5, base.dtype)
    if kind == "large":
        big = 100.0 if base.dtype == np.float16 else 1.0e4
        return (base * big).astype(base.dtype)
    raise ValueError(f"unknown edge case {kind!r}")


def _input_sets(descs: Sequence[ir.TensorDesc], names: Sequence[str], *, seeds: Iterable[int], edge_cases: bool,
                context: Mapping[int, np.ndarray] | None) -> list[tuple[str, list[np.ndarray]]]:
    """Labelled input lists: the context (if any), one per seed, then the edge cases built on seed 0.

    Integer and bool inputs come from the context when it is given (random values are rarely valid
    indices or shapes), else from the seed.

    Raises:
        ExecutionError: the input sets would need more memory than ``memory_budget()`` allows (the message names
            the largest input and the sizes), or an input cannot get random values.
    """
    sets: list[tuple[str, list[np.ndarray]]] = []
    ctx = dict(context or {})
    seed_list = list(seeds)
    # every set is held at once (plus the base of the edge cases)
    _check_input_sets_fit(descs, names, ctx, len(seed_list) + (len(EDGE_CASES) + 1 if edge_cases else 0)
                          + (1 if ctx else 0))
    if ctx and len(ctx) == len(descs):
        sets.append(("context", [np.asarray(ctx[i]) for i in range(len(descs))]))

    def one(seed: int) -> list[np.ndarray]:
        values = []
        for i, (desc, name) in enumerate(zip(descs, names, strict=True)):
            if i in ctx:
                base = np.asarray(ctx[i])
                if base.dtype.kind not in "fc":
                    values.append(base)
                    continue
                rng = np.random.default_rng([seed & 0xFFFFFFFF, i])
                values.append(rng.standard_normal(base.shape).astype(base.dtype))
                continue
            values.append(random_input(desc, np.random.default_rng([seed & 0xFFFFFFFF, i]), name=name))
        return values

    for seed in seed_list:
        sets.append((f"seed={seed}", one(seed)))
    if edge_cases:
        base = one(seed_list[0] if seed_list else 0)
        for kind in EDGE_CASES:
            sets.append((f"edge={kind}", [_edge_case(kind, v.dtype, v) for v in base]))
    return sets


def _check_input_sets_fit(descs: Sequence[ir.TensorDesc], names: Sequence[str], ctx: Mapping[int, np.ndarray],
                          count: int) -> None:
    sizes = []
    for i, desc in enumerate(descs):
        if i in ctx:
            sizes.append(int(np.asarray(ctx[i]).nbytes))
            continue
        try:
            itemsize = _value_dtype(desc.dtype).itemsize
        except ValueError:
            itemsize = 8
        sizes.append(math.prod(1 if d < 0 else int(d) for d in desc.shape if d != ir.UNKNOWN_RANK) * itemsize)
    if not sizes:
        return
    largest = max(range(len(sizes)), key=sizes.__getitem__)
    desc = descs[largest]
    check_memory(sum(sizes) * max(count, 1),
                 f"the {count} input sets of this check (input {names[largest]!r}, {desc.dtype.name}"
                 f"{list(desc.shape)}, is {format_bytes(sizes[largest])} in each)")


def _run_pair(run_a: Any, run_b: Any, sets: Sequence[tuple[str, list[np.ndarray]]], *, rtol: float | None,
              atol: float | None) -> EquivalenceResult:
    result = EquivalenceResult(max_abs=0.0, max_rel=0.0, ok=True)
    for label, values in sets:
        try:
            ref = run_a(values)
        except ExecutionError as exc:
            result.skipped.append(f"{label}: reference side cannot run: {exc}")
            continue
        result.cases += 1
        try:
            got = run_b(values)
        except ExecutionError as exc:
            result.ok = False
            result.max_abs = result.max_rel = float("inf")
            result.failing_inputs.append(FailingInput(label, dict(enumerate(values)), None, float("inf"),
                                                      float("inf"), f"the rewritten side cannot run: {exc}"))
            continue
        max_abs, max_rel, ok, bad, message = compare_outputs(ref, got, rtol=rtol, atol=atol)
        result.max_abs = max(result.max_abs, max_abs)
        result.max_rel = max(result.max_rel, max_rel)
        if not ok:
            result.ok = False
            result.failing_inputs.append(FailingInput(label, dict(enumerate(values)), bad, max_abs, max_rel, message))
    if result.cases == 0:
        result.ok = False
        result.error = "no input set could be run on the reference side: " + "; ".join(result.skipped[:2])
    return result


# ---------------------------------------------------------------------------------------- whole graphs
def check_graphs(before: Any, after: Any, *, seeds: Iterable[int] = DEFAULT_SEEDS, edge_cases: bool = True,
                 rtol: float | None = None, atol: float | None = None,
                 inputs: Mapping[int, np.ndarray] | None = None) -> EquivalenceResult:
    """Run ``before`` and ``after`` on the same inputs and compare all outputs.

    Inputs are matched by the Data ``index`` attr. Input sets: ``inputs`` (if given, by index), one per
    seed, and (``edge_cases``) zeros / ones / negatives / large for floating inputs.

    Cost: two executions per input set.

    Raises:
        ExecutionError: the graphs take different numbers of inputs.
    """
    g1, g2 = ir.as_graph(before), ir.as_graph(after)
    d1, d2 = graph_inputs(g1), graph_inputs(g2)
    if len(d1) != len(d2):
        raise ExecutionError(f"graph {g1.name!r} takes {len(d1)} inputs but {g2.name!r} takes {len(d2)}")
    descs = [_data_out_desc(n) for n in d1]
    sets = _input_sets(descs, [n.name for n in d1], seeds=seeds, edge_cases=edge_cases, context=inputs)
    # the inputs fit g1's Data descs; g2's may have been changed by a pass: cast, do not refuse
    return _run_pair(lambda v: execute(g1, v, check_inputs=False), lambda v: execute(g2, v, check_inputs=False),
                     sets, rtol=rtol, atol=atol)


def _data_out_desc(node: ir.Node) -> ir.TensorDesc:
    if node.outputs and not node.outputs[0].is_placeholder:
        return node.outputs[0]
    return node.inputs[0] if node.inputs else ir.TensorDesc()


# ---------------------------------------------------------------------------------------- regions
@dataclasses.dataclass
class RewriteRegion:
    """A region of a graph extracted into a standalone graph.

    ``graph`` has Data ``index=i`` (or a Const copy) for boundary input ``i`` and a NetOutput whose input
    ``k`` is boundary output ``k``. ``input_keys[i]`` is the producer ``(node id, port)`` of input ``i``
    in the source graph; ``output_anchors[k]`` the consumer anchors ``(node id, input port)`` outside
    the region that read output ``k`` (how the replacement's output ``k`` is found after the rewrite).
    ``node_ids`` are the source ids of the region's nodes.
    """

    graph: ir.Graph
    input_keys: list[tuple[int, int]]
    output_anchors: list[list[tuple[int, int]]]
    node_ids: list[int]
    const_inputs: set[int] = dataclasses.field(default_factory=set)


def _copy_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in attrs.items():
        if isinstance(v, (ir.TensorValue, ir.TensorDesc)):
            out[k] = v.copy()
        elif isinstance(v, list):
            out[k] = list(v)
        else:
            out[k] = v
    return out


def _root(graph: ir.Graph) -> ir.Graph:
    while graph.parent_graph is not None:
        graph = graph.parent_graph
    return graph


def _build_region(graph: ir.Graph, nodes: list[ir.Node], input_keys: list[tuple[int, int]],
                  outputs: list[tuple[int, int]], name: str,
                  input_templates: list[ir.Node] | None = None) -> tuple[ir.Graph, set[int]]:
    """Standalone graph: inputs by ``input_keys``, then ``nodes``, then a NetOutput of ``outputs``.

    An output that is itself a boundary input (a pass-through) reads that input's Data directly.
    ``input_templates`` (the input nodes of an earlier region) are copied instead of looking the producers
    up in ``graph``, where a rewrite may have removed them (a Const left without consumers).
    """
    sub = ir.Graph(name)
    tensor_map: dict[tuple[int, int], tuple[ir.Node, int]] = {}
    const_inputs: set[int] = set()
    for i, (pid, port) in enumerate(input_keys):
        if input_templates is not None:
            t = input_templates[i]
            node = sub.add_node(t.op_type, name=t.name, attrs=_copy_attrs(t.attrs), inputs=t.inputs, outputs=t.outputs,
                                input_names=t.input_names, output_names=t.output_names)
            if t.op_type != "Data":
                const_inputs.add(i)
            tensor_map[(pid, port)] = (node, 0)
            continue
        prod = graph.node(pid)
        desc = prod.outputs[port].copy() if port < prod.num_outputs else ir.TensorDesc()
        if prod.op_type in ("Const", "Constant") and isinstance(prod.attrs.get("value"), ir.TensorValue):
            node = sub.add_node("Const", name=f"input_{i}", attrs={"value": prod.attrs["value"].copy()},
                                outputs=[desc], output_names=["y"])
            const_inputs.add(i)
        else:
            node = sub.add_node("Data", name=f"input_{i}", attrs={"index": i}, inputs=[desc], outputs=[desc],
                                input_names=["x"], output_names=["y"])
        tensor_map[(pid, port)] = (node, 0)
    copies: dict[int, ir.Node] = {}
    root = _root(graph)
    for n in nodes:
        c = sub.add_node(n.op_type, name=n.name if sub.find(n.name) is None else sub.fresh_name(n.name),
                         attrs=_copy_attrs(n.attrs), inputs=n.inputs, outputs=n.outputs,
                         input_names=n.input_names, output_names=n.output_names)
        copies[n.id] = c
        for sg in n.subgraph_names:
            if sg in root.subgraphs and sg not in sub.subgraphs:
                sub.add_subgraph(root.subgraphs[sg].copy(), parent_node=c)
            elif sg not in c.subgraph_names:
                c.subgraph_names = [*c.subgraph_names, sg]
    for n in nodes:
        for port, prod in enumerate(graph.producers(n)):
            if prod is None:
                continue
            key = (prod[0].id, prod[1])
            if key in tensor_map:
                src, sp = tensor_map[key]
            elif prod[0].id in copies:
                src, sp = copies[prod[0].id], prod[1]
            else:
                raise ExecutionError(f"region of graph {graph.name!r}: node {n.name!r} reads "
                                     f"{prod[0].name!r}:{prod[1]}, which is neither a region node nor a boundary input")
            sub.add_edge(src, sp, copies[n.id], port)
    net = sub.add_node("NetOutput", name="NetOutput_region", inputs=len(outputs))
    for k, (nid, port) in enumerate(outputs):
        if (nid, port) in tensor_map:
            src, sp = tensor_map[(nid, port)]
        elif nid in copies:
            src, sp = copies[nid], port
        else:
            raise ExecutionError(f"region of graph {graph.name!r}: output {k} ({graph.node(nid).name}:{port}) "
                                 "is neither a region node nor a boundary input")
        sub.add_edge(src, sp, net, k)
    return sub, const_inputs


def capture_rewrite(graph: ir.Graph, match_node_ids: Iterable[int], boundary: Any = None) -> RewriteRegion:
    """Extract the matched region of ``graph`` before it is rewritten. O(region + its edges).

    Args:
        graph: the graph about to be rewritten.
        match_node_ids: ids of the matched (to be replaced) nodes.
        boundary: optional ``gebench.fusion.Boundary`` (or anything with ``inputs`` having ``anchors`` and
            ``outputs`` of ``(node, port)``): fixes the order of inputs and outputs. Without it, inputs
            are the distinct outside producers in node/port order and outputs every region output read
            from outside the region.

    Raises:
        ExecutionError: a node id is not in the graph.
    """
    ids = list(dict.fromkeys(int(i) for i in match_node_ids))
    for nid in ids:
        if not graph.has_node_id(nid):
            raise ExecutionError(f"graph {graph.name!r} has no node #{nid}")
    idset = set(ids)
    nodes = sorted((graph.node(i) for i in ids), key=graph.position)
    input_keys: list[tuple[int, int]] = []
    outputs: list[tuple[int, int]] = []
    if boundary is not None:
        for bi in boundary.inputs:
            node, port = bi.anchors[0]
            prod = graph.producer(node, port)
            if prod is not None and (prod[0].id, prod[1]) not in input_keys:
                input_keys.append((prod[0].id, prod[1]))
        outputs = [(n.id, p) for n, p in boundary.outputs]
    for n in nodes:
        for prod in graph.producers(n):
            if prod is not None and prod[0].id not in idset and (prod[0].id, prod[1]) not in input_keys:
                input_keys.append((prod[0].id, prod[1]))
    if boundary is None:
        for n in nodes:
            for port in range(n.num_outputs):
                if any(c.id not in idset for c, _ in graph.uses(n, port)):
                    outputs.append((n.id, port))
    anchors = [[(c.id, cp) for c, cp in graph.uses(graph.node(nid), port) if c.id not in idset]
               for nid, port in outputs]
    sub, consts = _build_region(graph, nodes, input_keys, outputs, f"{graph.name}_before")
    return RewriteRegion(sub, input_keys, anchors, ids, consts)


def _replacement_region(after_graph: ir.Graph, before: RewriteRegion,
                        added_node_ids: Iterable[int] | None) -> RewriteRegion:
    """Find and extract what computes ``before``'s outputs in ``after_graph`` from the same boundary inputs."""
    outputs: list[tuple[int, int]] = []
    for k, anchors in enumerate(before.output_anchors):
        found = None
        for cid, cp in anchors:
            if after_graph.has_node_id(cid):
                prod = after_graph.producer(after_graph.node(cid), cp)
                if prod is not None:
                    found = (prod[0].id, prod[1])
                    break
        if found is None:
            raise ExecutionError(f"output {k} of the matched region has no consumer left in graph "
                                 f"{after_graph.name!r} to locate its replacement")
        outputs.append(found)
    keys = set(before.input_keys)
    key_nodes = {pid for pid, _ in keys}
    allowed = None if added_node_ids is None else {int(i) for i in added_node_ids}
    seen: dict[int, ir.Node] = {}
    stack = [nid for nid, port in outputs if (nid, port) not in keys]
    while stack:
        nid = stack.pop()
        if nid in seen:
            continue
        node = after_graph.node(nid)
        if node.op_type == "Data" or (allowed is not None and nid not in allowed and nid not in key_nodes):
            raise ExecutionError(f"the replacement reads {node.name!r} ({node.op_type}), which was not an input "
                                 "of the matched region; the two cannot be compared locally")
        seen[nid] = node
        for prod in after_graph.producers(node):
            if prod is None:
                continue
            if (prod[0].id, prod[1]) in keys:
                continue
            stack.append(prod[0].id)
    nodes = sorted(seen.values(), key=after_graph.position)
    templates = _region_inputs(before)
    sub, consts = _build_region(after_graph, nodes, list(before.input_keys), outputs, f"{after_graph.name}_after",
                                input_templates=templates)
    anchors = [list(a) for a in before.output_anchors]
    return RewriteRegion(sub, list(before.input_keys), anchors, [n.id for n in nodes], consts)


def _region_inputs(region: RewriteRegion) -> list[ir.Node]:
    """The input node (Data or Const copy) of each boundary input of an extracted region, in order."""
    by_name = {f"input_{i}": i for i in range(len(region.input_keys))}
    found: dict[int, ir.Node] = {}
    for node in region.graph.nodes():
        if node.name in by_name:
            found[by_name[node.name]] = node
    return [found[i] for i in range(len(region.input_keys))]


def check_regions(before: RewriteRegion, after: RewriteRegion, *, seeds: Iterable[int] = DEFAULT_SEEDS,
                  edge_cases: bool = True, rtol: float | None = None, atol: float | None = None,
                  context: Mapping[int, np.ndarray] | None = None) -> EquivalenceResult:
    """Compare two extracted regions with the same boundary inputs (Const inputs keep their values)."""
    data_pos = [i for i in range(len(before.input_keys)) if i not in before.const_inputs]
    by_index = {int(n.attrs.get("index", 0)): n for n in before.graph.nodes_of_type("Data")}
    descs = [_data_out_desc(by_index[i]) for i in data_pos]
    names = [by_index[i].name for i in data_pos]
    ctx = None
    if context is not None:
        ctx = {j: context[i] for j, i in enumerate(data_pos) if i in context}
    try:
        sets = _input_sets(descs, names, seeds=seeds, edge_cases=edge_cases, context=ctx)
    except ExecutionError as exc:  # inputs that cannot be made (too large, unknown rank): not checked
        return EquivalenceResult(float("inf"), float("inf"), False, error=str(exc))

    def runner(region: RewriteRegion) -> Any:
        def run(values: list[np.ndarray]) -> list[np.ndarray]:
            feed = {by_index_i: v for by_index_i, v in zip(data_pos, values, strict=True)}
            return execute(region.graph, feed, check_inputs=False)  # region descs may predate inference
        return run

    result = _run_pair(runner(before), runner(after), sets, rtol=rtol, atol=atol)
    # report failing inputs by boundary input position
    for f in result.failing_inputs:
        f.inputs = {data_pos[j]: v for j, v in f.inputs.items()}
    return result


def check_captured_rewrite(before: RewriteRegion, after_graph: ir.Graph, added_node_ids: Iterable[int] | None = None,
                           *, seeds: Iterable[int] = DEFAULT_SEEDS, edge_cases: bool = True,
                           rtol: float | None = None, atol: float | None = None,
                           context: Mapping[int, np.ndarray] | None = None) -> EquivalenceResult:
    """Compare a region captured by :func:`capture_rewrite` with what replaced it in ``after_graph``.

    The replacement's output ``k`` is the tensor now feeding the consumers of the matched output ``k``;
    its nodes are found by walking back to the boundary inputs (only through ``added_node_ids`` when
    given). Never raises for a region that cannot be compared: the result then has ``ok=False`` and
    ``error`` set.
    """
    try:
        after = _replacement_region(after_graph, before, added_node_ids)
    except (ExecutionError, ir.GraphError) as exc:
        return EquivalenceResult(float("inf"), float("inf"), False, error=str(exc))
    return check_regions(before, after, seeds=seeds, edge_cases=edge_cases, rtol=rtol, atol=atol, context=context)


def check_rewrite(before_graph: Any, match_node_ids: Iterable[int], after_graph: Any,
                  added_node_ids: Iterable[int] | None = None, boundary: Any = None, *,
                  seeds: Iterable[int] = DEFAULT_SEEDS, edge_cases: bool = True, rtol: float | None = None,
                  atol: float | None = None, context_inputs: Mapping[int, np.ndarray] | Sequence[Any] | None = None,
                  ) -> EquivalenceResult:
    """Compare the matched subgraph of ``before_graph`` with its replacement in ``after_graph``, locally.

    Both graphs share node ids outside the rewrite (``after_graph`` is ``before_graph`` rewritten, or a
    later copy). With ``context_inputs`` (graph inputs of ``before_graph``, as for :func:`execute`) the
    real boundary tensors of that run are the first input set, and integer boundary inputs keep those
    values in every set.
    """
    g1, g2 = ir.as_graph(before_graph), ir.as_graph(after_graph)
    try:
        region = capture_rewrite(g1, match_node_ids, boundary)
    except (ExecutionError, ir.GraphError) as exc:
        return EquivalenceResult(float("inf"), float("inf"), False, error=str(exc))
    context = None
    if context_inputs is not None:
        context = _boundary_values(g1, region, context_inputs)
    return check_captured_rewrite(region, g2, added_node_ids, seeds=seeds, edge_cases=edge_cases, rtol=rtol,
                                  atol=atol, context=context)


def _boundary_values(graph: ir.Graph, region: RewriteRegion,
                     graph_inputs_: Mapping[int, np.ndarray] | Sequence[Any] | None) -> dict[int, np.ndarray] | None:
    """The boundary input tensors of ``region`` in a run of ``graph`` (None if that run fails)."""
    data = graph_inputs(graph)
    feed: dict[int, np.ndarray] = {}
    if isinstance(graph_inputs_, Mapping):
        for n in data:
            idx = int(n.attrs.get("index", 0))
            if idx in graph_inputs_:
                feed[n.id] = np.asarray(graph_inputs_[idx])
    elif graph_inputs_ is not None:
        for n, v in zip(data, graph_inputs_):
            feed[n.id] = np.asarray(v)
    for n in data:
        if n.id not in feed:
            idx = int(n.attrs.get("index", 0))
            try:
                feed[n.id] = random_input(_data_out_desc(n), np.random.default_rng([0, idx]), name=n.name)
            except ExecutionError as exc:
                _log.debug("no context values for the region: %s", exc)
                return None
        else:
            want = _data_out_desc(n)
            try:
                feed[n.id] = feed[n.id].astype(_value_dtype(want.dtype), copy=False)
            except ValueError:
                pass
    try:
        values = execute_with_values(graph, feed, region.input_keys)
    except ExecutionError as exc:
        _log.debug("no context values for the region: %s", exc)
        return None
    return {i: values[key] for i, key in enumerate(region.input_keys) if key in values}


# ---------------------------------------------------------------------------------------- runs
@dataclasses.dataclass
class PassCheck:
    """Whole-graph comparison of two consecutive snapshots of a run."""

    before: str
    after: str
    result: EquivalenceResult

    def to_dict(self) -> dict[str, Any]:
        return {"before": self.before, "after": self.after, **self.result.to_dict()}


@dataclasses.dataclass
class RewriteCheck:
    """Local comparison of one replaced candidate (a ledger record) with its replacement.

    ``result`` is None when the rewrite could not be checked from the snapshots (``skipped`` says why).
    """

    record_index: int
    pass_name: str
    removed_node_ids: list[int]
    added_node_ids: list[int]
    result: EquivalenceResult | None
    skipped: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"record_index": self.record_index, "pass_name": self.pass_name,
                "removed_node_ids": self.removed_node_ids, "added_node_ids": self.added_node_ids,
                "skipped": self.skipped, "result": None if self.result is None else self.result.to_dict()}


def _is_mismatch(result: EquivalenceResult | None) -> bool:
    """A result that shows different numbers (not merely one that could not be computed)."""
    return result is not None and not result.ok and result.cases > 0


@dataclasses.dataclass
class VerifyReport:
    """Everything :func:`verify_run` found.

    ``ok`` is False if any graph or rewrite check found different results. Checks that could not run
    at all (no kernel for a custom op, regions that no longer correspond) are listed in ``unchecked``
    and do not make ``ok`` False.
    """

    graph_checks: list[PassCheck]
    rewrite_checks: list[RewriteCheck]

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def failures(self) -> list[PassCheck | RewriteCheck]:
        """The checks that found a mismatch, graph checks first."""
        bad: list[PassCheck | RewriteCheck] = [c for c in self.graph_checks if _is_mismatch(c.result)]
        bad += [c for c in self.rewrite_checks if _is_mismatch(c.result)]
        return bad

    @property
    def unchecked(self) -> list[PassCheck | RewriteCheck]:
        """Checks that could not be computed (``skipped`` / ``result.error`` says why)."""
        out: list[PassCheck | RewriteCheck] = [c for c in self.graph_checks
                                               if not c.result.ok and not _is_mismatch(c.result)]
        out += [c for c in self.rewrite_checks if c.result is None or (not c.result.ok and not _is_mismatch(c.result))]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "graph_checks": [c.to_dict() for c in self.graph_checks],
                "rewrite_checks": [c.to_dict() for c in self.rewrite_checks]}

    def summary(self) -> str:
        """A few human-readable lines: counts, then one line per failure."""
        checked = [c for c in self.rewrite_checks if c.result is not None]
        lines = [f"verify: {len(self.graph_checks)} graph comparisons, {len(checked)} of "
                 f"{len(self.rewrite_checks)} rewrites checked locally: {'OK' if self.ok else 'MISMATCH'}"]
        for c in self.unchecked:
            why = c.skipped if isinstance(c, RewriteCheck) and c.result is None else (c.result.error if c.result else "")
            where = f"{c.before} -> {c.after}" if isinstance(c, PassCheck) else f"rewrite #{c.record_index} by {c.pass_name}"
            lines.append(f"  not checked: {where}: {why}")
        for c in self.failures:
            if isinstance(c, PassCheck):
                msg = c.result.error or (c.result.failing_inputs[0].message if c.result.failing_inputs else "")
                lines.append(f"  {c.before} -> {c.after}: max_abs={c.result.max_abs:.3g} {msg}")
            else:
                assert c.result is not None
                msg = c.result.error or (c.result.failing_inputs[0].message if c.result.failing_inputs else "")
                label = c.result.failing_inputs[0].label if c.result.failing_inputs else ""
                lines.append(f"  rewrite #{c.record_index} by {c.pass_name} (removed {c.removed_node_ids}): "
                             f"max_abs={c.result.max_abs:.3g} {label} {msg}")
        return "\n".join(lines)


def _ordered_snapshots(snapshots: Mapping[str, Any]) -> list[tuple[str, ir.Graph]]:
    known = [s for s in _STAGE_ORDER if s in snapshots]
    rest = [s for s in snapshots if s not in _STAGE_ORDER]
    return [(s, ir.as_graph(snapshots[s])) for s in known + rest]


def _status_name(record: Any) -> str:
    status = getattr(record, "status", "")
    return str(getattr(status, "name", status)).upper()


def _graph_for(snapshot: ir.Graph, graph_name: str | None) -> ir.Graph:
    if not graph_name or graph_name == snapshot.name:
        return snapshot
    return snapshot.subgraphs.get(graph_name, snapshot)


def verify_run(run: Any, *, seeds: Iterable[int] = DEFAULT_SEEDS, edge_cases: bool = True,
               rtol: float | None = None, atol: float | None = None, update_ledger: bool = True) -> VerifyReport:
    """Check a compile run numerically.

    * Graph level: every pair of consecutive snapshots (GE dump points, in stage order) is compared with
      :func:`check_graphs` (identical snapshots are not executed).
    * Rewrite level: every REPLACED ledger record is checked locally, using the last snapshot that still
      holds all removed nodes as "before" and the first later one holding all added nodes as "after";
      boundary inputs get their in-context values from one seeded run of each "before" snapshot (shared
      by all records of that snapshot). A rewrite whose boundary was changed again by a later rewrite of
      the same stage cannot be checked from snapshots and is reported as not checked; such a record that
      already carries errors (checked by the runtime at rewrite time) is reported with them (a
      ``detail["verify_failed"]`` flag marks a mismatch).

    With ``update_ledger`` the max abs/rel errors are written to the records (``max_abs_error``,
    ``max_rel_error``) and, when a record has a ``detail`` dict, a summary goes in ``detail["verify"]``.

    Args:
        run: an object with ``snapshots`` (suffix -> graph) and ``ledger`` (with ``records``).

    Cost: two executions of each changed pair of snapshots per input set, one context execution per
    "before" snapshot, and two small region executions per input set and rewrite.
    """
    seeds = list(seeds)
    snaps = _ordered_snapshots(getattr(run, "snapshots", {}) or {})
    graph_checks = []
    for (s1, g1), (s2, g2) in zip(snaps, snaps[1:]):
        if _same_graph(g1, g2):
            res = EquivalenceResult(0.0, 0.0, True, skipped=["the snapshots are identical"])
        else:
            try:
                res = check_graphs(g1, g2, seeds=seeds, edge_cases=edge_cases, rtol=rtol, atol=atol)
            except ExecutionError as exc:
                res = EquivalenceResult(float("inf"), float("inf"), False, error=str(exc))
        graph_checks.append(PassCheck(s1, s2, res))
    ledger = getattr(run, "ledger", None)
    records = list(getattr(ledger, "records", []) or []) if ledger is not None else []
    planned: list[tuple[int, Any, RewriteCheck | _PlannedRewrite]] = []
    for idx, record in enumerate(records):
        if _status_name(record) != "REPLACED":
            continue
        removed = [int(i) for i in (getattr(record, "removed_node_ids", None) or [])]
        added = [int(i) for i in (getattr(record, "added_node_ids", None) or [])]
        planned.append((idx, record, _plan_record(snaps, record, removed, added)))
    contexts = _contexts([p for _, _, p in planned if isinstance(p, _PlannedRewrite)])
    rewrite_checks = []
    for idx, record, plan in planned:
        if isinstance(plan, RewriteCheck):
            check = plan
        else:
            result = check_captured_rewrite(plan.region, plan.after, plan.added or None, seeds=seeds,
                                            edge_cases=edge_cases, rtol=rtol, atol=atol,
                                            context=contexts.get(id(plan)))
            check = RewriteCheck(-1, plan.pass_name, plan.removed, plan.added,
                                 None if result.error is not None else result, result.error)
        check.record_index = idx
        if check.result is None and getattr(record, "max_abs_error", None) is not None:
            failed = bool((getattr(record, "detail", {}) or {}).get("verify_failed", False))
            check.result = EquivalenceResult(float(record.max_abs_error),
                                             float(getattr(record, "max_rel_error", 0.0) or 0.0), ok=not failed, cases=1)
            check.skipped = None
        elif update_ledger and check.result is not None:
            _store_on_record(record, check.result)
        rewrite_checks.append(check)
    return VerifyReport(graph_checks, rewrite_checks)


def _same_graph(g1: ir.Graph, g2: ir.Graph) -> bool:
    if g1 is g2:
        return True
    if len(g1) != len(g2):
        return False
    return ir.to_text(g1) == ir.to_text(g2)


@dataclasses.dataclass
class _PlannedRewrite:
    pass_name: str
    removed: list[int]
    added: list[int]
    before: ir.Graph
    after: ir.Graph
    region: RewriteRegion


def _contexts(plans: list[_PlannedRewrite]) -> dict[int, dict[int, np.ndarray]]:
    """In-context boundary values for every plan: one seeded run per distinct root "before" graph."""
    by_graph: dict[int, list[_PlannedRewrite]] = {}
    for plan in plans:
        if plan.before.parent_graph is None:
            by_graph.setdefault(id(plan.before), []).append(plan)
    out: dict[int, dict[int, np.ndarray]] = {}
    for group in by_graph.values():
        graph = group[0].before
        keys = list(dict.fromkeys(k for plan in group for k in plan.region.input_keys))
        try:
            feed = {n.id: random_input(_data_out_desc(n), np.random.default_rng([0, int(n.attrs.get("index", 0))]),
                                       name=n.name) for n in graph_inputs(graph)}
            values = execute_with_values(graph, feed, keys)
        except ExecutionError as exc:
            _log.debug("no context values for graph %s: %s", graph.name, exc)
            continue
        for plan in group:
            ctx = {i: values[k] for i, k in enumerate(plan.region.input_keys) if k in values}
            if len(ctx) == len(plan.region.input_keys):
                out[id(plan)] = ctx
    return out


def _store_on_record(record: Any, result: EquivalenceResult) -> None:
    try:
        record.max_abs_error = result.max_abs
        record.max_rel_error = result.max_rel
    except AttributeError:
        return
    detail = getattr(record, "detail", None)
    if isinstance(detail, dict):
        detail["verify"] = {"ok": result.ok, "cases": result.cases,
                            "failing": [f.label + ": " + f.message for f in result.failing_inputs]}
        if not result.ok:
            detail["verify_failed"] = True


def _plan_record(snaps: list[tuple[str, ir.Graph]], record: Any, removed: list[int],
                 added: list[int]) -> RewriteCheck | _PlannedRewrite:
    """Find the snapshots around one rewrite and extract its matched region, or say why not."""
    pass_name = str(getattr(record, "pass_name", ""))
    graph_name = getattr(record, "graph_name", None)

    def skip(reason: str) -> RewriteCheck:
        return RewriteCheck(-1, pass_name, removed, added, None, reason)

    if not removed:
        return skip("the record lists no removed nodes")
    before_i = None
    for i, (_, g) in enumerate(snaps):
        sub = _graph_for(g, graph_name)
        if all(sub.has_node_id(n) for n in removed):
            before_i = i
    if before_i is None or before_i + 1 >= len(snaps):
        return skip("no snapshot holds the matched nodes before the rewrite")
    after_i = None
    for j in range(before_i + 1, len(snaps)):
        sub = _graph_for(snaps[j][1], graph_name)
        if all(sub.has_node_id(n) for n in added) and not any(sub.has_node_id(n) for n in removed):
            after_i = j
            break
    if after_i is None:
        return skip("no later snapshot holds the replacement (a later rewrite replaced it again)")
    before_g = _graph_for(snaps[before_i][1], graph_name)
    after_g = _graph_for(snaps[after_i][1], graph_name)
    try:
        region = capture_rewrite(before_g, removed)
    except (ExecutionError, ir.GraphError) as exc:
        return skip(f"cannot extract the matched region: {exc}")
    return _PlannedRewrite(pass_name, removed, added, before_g, after_g, region)
