"""Replaying a run up to a rewrite: the graph after the first ``k`` rewrites of a run.

A :class:`~gebench.fusion.runtime.Run` keeps its input (the ``PreRunBegin`` snapshot), its passes and the
arguments it ran with (``Run.replay_args``). :func:`replay` compiles a copy of that input again with the same
passes and a cap on the number of rewrites (``execute(..., rewrite_cap=k)``): the run stops just before its
rewrite ``k + 1``, so its graph is the graph after ``k`` rewrites. Rewrite ``j`` (1-based) of the replay is the
``j``-th ``REPLACED`` record of the original ledger (:func:`rewrite_records`).

Invariants and limits:

* Passes must be deterministic (same graph in, same verdicts and rewrites out); a replay that does not reach
  ``k`` rewrites raises :class:`ReplayError`. Pass code runs again: module-level state of a pass file sees the
  extra calls.
* A ``FusionBasePass.run()`` call is one step: its rewrites (``SubgraphRewriter.replace``/``report_fuse``) all
  count, and a cap inside them stops before the whole call, so :func:`graph_after_rewrites` raises for a ``k``
  that falls strictly inside one ``run()`` call.
* Node ids of the replay equal the original run's (the copy keeps ids and the id counter); names made by
  replacements may differ (GE's builders number names process-wide).

Cost: one compile of the input per call, without ledger and snapshots (O(the original run)).

The graphs handed to users (:func:`input_graph`, :func:`graph_after_rewrites`, :func:`graph_after_rewrite`) are
``ge.graph.Graph`` views, as ``Run.graph`` is (``.ir``: the IR graph behind one). The ``*_ir`` functions return
the ``ir.Graph`` itself, for gebench's own callers (bisection, repro bundles, the workbench, ``Run``).
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from gebench import ir
from gebench.fusion.ledger import CandidateStatus
from gebench.fusion.plugins.api import pass_api
from gebench.fusion.runtime import REPLAY_STOP, Run, execute
from gebench.fusion.stages import PRE_RUN_SUFFIX

__all__ = ["ReplayError", "RewriteStep", "graph_after_rewrite", "graph_after_rewrite_ir", "graph_after_rewrites",
           "graph_after_rewrites_ir", "input_graph", "input_graph_ir", "replay", "rewrite_records", "stopped_by_cap"]

_log = logging.getLogger(__name__)


class ReplayError(RuntimeError):
    """A run cannot be replayed (no input snapshot, a pass load error, a replay that took another course)."""


@dataclasses.dataclass(frozen=True)
class RewriteStep:
    """Rewrite ``number`` (1-based, in run order) of a run: its ledger ``index`` and its ``REPLACED`` ``record``."""

    number: int
    index: int
    record: Any


def rewrite_records(run: Run) -> list[RewriteStep]:
    """The run's rewrites in order: its ``REPLACED`` ledger records (empty for a run without ledger). O(records)."""
    out = []
    for index, record in enumerate(run.ledger.records):
        if record.status is CandidateStatus.REPLACED:
            out.append(RewriteStep(len(out) + 1, index, record))
    return out


def input_graph(run: Run) -> Any:
    """A fresh copy of the run's input graph (its ``PreRunBegin`` snapshot) as a ``ge.graph.Graph``
    (``.ir``: the copy's IR graph).

    Raises:
        ReplayError: as :func:`input_graph_ir`.
    """
    return pass_api().wrap_graph(input_graph_ir(run))


def input_graph_ir(run: Run) -> ir.Graph:
    """:func:`input_graph` as the ``ir.Graph`` itself (a fresh copy, the caller's alone).

    Raises:
        ReplayError: the run kept no snapshots (``compile(..., snapshots=False)``).
    """
    snapshots = run.ir_snapshots
    if PRE_RUN_SUFFIX not in snapshots:
        raise ReplayError("the run kept no PreRunBegin snapshot (compiled with snapshots=False), so it cannot be "
                          "replayed; compile with snapshots=True")
    return snapshots[PRE_RUN_SUFFIX].copy()


def replay(run: Run, cap: int | None, *, ledger: bool = False) -> Run:
    """Compile the run's input again with its passes and arguments, stopping after ``cap`` rewrites (None: all).

    Returns the replay's Run: FAILED with a reason starting with ``REPLAY_STOP`` when the cap stopped it (its graph
    is then the graph after ``cap`` rewrites), else the same outcome as the original.

    Raises:
        ReplayError: no input snapshot, the original had pass load errors, or ``cap`` is negative.
    """
    if cap is not None and cap < 0:
        raise ReplayError(f"rewrite cap {cap} is negative")
    if run.load_errors:
        raise ReplayError("the run had pass load errors (" + "; ".join(str(e) for e in run.load_errors)
                          + "); replay needs the passes that ran")
    args = dict(run.replay_args)
    _log.debug("replaying run with a cap of %s rewrites", cap)
    return execute(input_graph_ir(run), run.passes, stages=args.get("stages"), options=args.get("options"),
                   infer_shapes=args.get("infer_shapes", True), record_all=args.get("record_all", True),
                   run_after_load_error=args.get("run_after_load_error", False),
                   fusion_switch=args.get("fusion_switch"), hook_timeout=args.get("hook_timeout"),
                   snapshots=False, ledger=ledger, rewrite_cap=cap)


def stopped_by_cap(replayed: Run) -> bool:
    """Whether a replay ended at its rewrite cap (not by finishing or by a failure of its own)."""
    return replayed.status == "FAILED" and replayed.failure_reason.startswith(REPLAY_STOP)


def graph_after_rewrites(run: Run, k: int) -> Any:
    """The run's (root) graph after its first ``k`` rewrites (``k = 0``: the input as the passes first saw it;
    ``k`` = the number of rewrites: the final graph), as a ``ge.graph.Graph`` (``.ir``: its IR graph). One replay.

    Raises:
        ReplayError: as :func:`graph_after_rewrites_ir`.
    """
    return pass_api().wrap_graph(graph_after_rewrites_ir(run, k))


def graph_after_rewrites_ir(run: Run, k: int) -> ir.Graph:
    """:func:`graph_after_rewrites` as the ``ir.Graph`` itself (the replay's graph, nobody else's).

    Raises:
        ReplayError: ``k`` outside ``0..len(rewrite_records(run))``, or the replay did not reach ``k`` rewrites
            (a ``k`` inside one ``FusionBasePass.run()`` call, or a pass that behaves differently the second time).
    """
    total = max(run.rewrite_count, len(rewrite_records(run)))  # a Run merged by the workbench counts by ledger
    if not 0 <= k <= total:
        raise ReplayError(f"rewrite {k} is out of range: the run did {total} rewrites")
    replayed = replay(run, k)
    if replayed.rewrite_count != k or not (stopped_by_cap(replayed) or replayed.status == run.status):
        raise ReplayError(f"the replay capped at {k} rewrites did {replayed.rewrite_count} and ended "
                          f"{replayed.status} ({replayed.failure_reason or 'no failure'}); the original did {total}: "
                          "a FusionBasePass.run() call holds rewrite k, or a pass is not deterministic")
    return replayed.ir_graph


def graph_after_rewrite(run: Run, pass_name: str, k: int) -> Any:
    """The graph after the ``k``-th rewrite (1-based) of pass ``pass_name`` (``k = 0``: just before its first), as
    a ``ge.graph.Graph`` (``.ir``: its IR graph). One replay; ``Run.graph_after_rewrite`` is the same.

    Raises:
        ReplayError: as :func:`graph_after_rewrite_ir`.
    """
    return pass_api().wrap_graph(graph_after_rewrite_ir(run, pass_name, k))


def graph_after_rewrite_ir(run: Run, pass_name: str, k: int) -> ir.Graph:
    """:func:`graph_after_rewrite` as the ``ir.Graph`` itself (the replay's graph, nobody else's).

    Raises:
        ReplayError: the pass did fewer than ``k`` rewrites (the message says how many), or as
            :func:`graph_after_rewrites_ir`.
    """
    steps = [s for s in rewrite_records(run) if s.record.pass_name == pass_name]
    if not 0 <= k <= len(steps):
        raise ReplayError(f"pass {pass_name!r} did {len(steps)} rewrites; there is no rewrite {k}")
    if k == 0:
        if not steps:
            raise ReplayError(f"pass {pass_name!r} did no rewrite")
        return graph_after_rewrites_ir(run, steps[0].number - 1)
    return graph_after_rewrites_ir(run, steps[k - 1].number)
