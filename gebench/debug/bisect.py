"""Bisecting numerics: the first rewrite of a run after which the graph no longer computes what its input did.

:func:`bisect_numerics` compares the run's input graph (``PreRunBegin``) with the graph after ``k`` rewrites
(:func:`gebench.debug.replay.graph_after_rewrites_ir`) on the reference executor (:func:`gebench.exec.check_graphs`,
seeded random inputs) and binary-searches ``k``: O(log rewrites) replays and executions. The final graph is
``Run.graph`` itself (no replay); when it is equivalent, the answer is None at the cost of one execution pair.

Assumption: once broken, the graph stays broken (a later rewrite does not cancel the error); where that does not
hold, the rewrite found is still one after which the graph is not equivalent, preceded by an equivalent state.
A ``FusionBasePass.run()`` call is one step: when its rewrites break the graph, its first ``REPLACED`` record is
returned.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from gebench import ir
from gebench.exec.equivalence import EquivalenceResult, check_graphs
from gebench.fusion.runtime import Run

from .replay import RewriteStep, graph_after_rewrites_ir, input_graph_ir, rewrite_records

__all__ = ["BisectResult", "bisect_numerics"]

_log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class BisectResult:
    """Outcome of :func:`bisect_numerics`.

    ``record``/``index``/``number``: the first breaking rewrite's ledger record, ledger index and 1-based rewrite
    number (all None when the final graph is equivalent to the input). ``checked`` maps each rewrite count
    ``k`` that was compared to whether the graph after ``k`` rewrites was equivalent; ``failure`` is the comparison
    just after the breaking rewrite.
    """

    record: Any
    index: int | None
    number: int | None
    checked: dict[int, bool]
    failure: EquivalenceResult | None = None


def _step_boundaries(steps: list[RewriteStep]) -> list[int]:
    """Rewrite counts a replay can stop at: 0, n, and every k not inside one ``FusionBasePass.run()`` call (rewrites
    reported through ``SubgraphRewriter.replace``/``report_fuse`` by the same pass on the same graph in a row)."""
    def in_run_call(r: Any) -> bool:
        return r.detail.get("via") in ("SubgraphRewriter.replace", "report_fuse")

    out = [0]
    for k in range(1, len(steps)):
        a, b = steps[k - 1].record, steps[k].record
        same_call = (in_run_call(a) and in_run_call(b) and a.pass_name == b.pass_name and a.stage == b.stage
                     and a.graph_name == b.graph_name)
        if not same_call:
            out.append(k)
    out.append(len(steps))
    return out


def bisect_numerics(run: Run, seed: int = 0, *, edge_cases: bool = False, rtol: float | None = None,
                    atol: float | None = None) -> BisectResult:
    """Find the first rewrite of ``run`` after which its graph is not numerically equivalent to its input.

    Args:
        run: a run with a ledger and snapshots (the input is its ``PreRunBegin`` snapshot).
        seed: the random inputs' seed (one input set; ``edge_cases`` adds zeros/ones/negatives/large ones).
        rtol, atol: tolerances (default: per dtype, as :func:`gebench.exec.compare_outputs`).

    Raises:
        gebench.debug.ReplayError: the run cannot be replayed (no snapshots, pass load errors, a pass that is not
            deterministic).
        gebench.exec.ExecutionError: the reference executor cannot run a graph (the message names the node and op).
    """
    steps = rewrite_records(run)
    checked: dict[int, bool] = {}
    if not steps:
        return BisectResult(None, None, None, checked)
    reference = input_graph_ir(run)

    def compare(graph: ir.Graph) -> EquivalenceResult:
        return check_graphs(reference, graph, seeds=(seed,), edge_cases=edge_cases, rtol=rtol, atol=atol)

    final = compare(run.ir_graph)
    checked[len(steps)] = final.ok
    if final.ok:
        return BisectResult(None, None, None, checked)
    bounds = _step_boundaries(steps)
    lo, hi = 0, len(bounds) - 1  # invariant: after bounds[lo] rewrites equivalent, after bounds[hi] not
    failure = final
    checked[0] = True  # the input itself
    while hi - lo > 1:
        mid = (lo + hi) // 2
        k = bounds[mid]
        result = compare(graph_after_rewrites_ir(run, k))
        checked[k] = result.ok
        _log.debug("bisect: after %d rewrites equivalent=%s", k, result.ok)
        if result.ok:
            lo = mid
        else:
            hi, failure = mid, result
    step = steps[bounds[lo]]  # the first rewrite after the last equivalent state
    return BisectResult(step.record, step.index, step.number, checked, failure)
