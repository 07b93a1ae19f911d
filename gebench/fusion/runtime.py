"""The stage runtime: run registered passes over a graph the way GE's compiler does (spec §3.3–§3.10).

Flow of :func:`execute`: snapshot ``PreRunBegin``; for each stage in GE's order run the stage's passes in
ascending pass-name order, each on the root graph and then on every subgraph, with one pass instance per
stage run and one :class:`PassContext` shared by the stage; snapshot after the stage with GE's dump name;
shape/dtype inference between ``BeforeInferShape`` and ``AfterInferShape``. The first failure GE would treat
as a compile error stops the run (``Run.status == "FAILED"``), and the graph stays as it was before the
failing rewrite.

Every candidate the matcher considers, every hook verdict, every rewrite and every lint goes into the
:class:`~gebench.fusion.ledger.Ledger` as a ``CandidateRecord``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import sys
import traceback
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from gebench import ir
from gebench.fusion import _guard
from gebench.fusion._boundary import decompose_boundary
from gebench.fusion._cycle import would_create_cycle
from gebench.fusion._recorded import RecordedReplacement
from gebench.fusion._rewriter import RewriteError, RewriteReason, rewrite, rewrite_recorded
from gebench.fusion.dtype_lint import check_match as check_dtypes
from gebench.fusion.dtype_lint import stated_dtypes
from gebench.fusion.plugins import session as _session
from gebench.fusion.plugins.api import pass_api
from gebench.fusion.plugins.descriptor import (
    PASS_KIND_DECOMPOSE,
    PASS_KIND_FUSION_BASE,
    PASS_KIND_PATTERN_FUSION,
    PassDescriptor,
)
from gebench.fusion.run_tools import run_tools
from gebench.fusion.snapshots import SnapshotMap
from gebench.fusion.stages import DUMP_SUFFIXES, PRE_RUN_SUFFIX, STAGE_ORDER  # GE's names (re-exported here)
from gebench.progress import ProgressCallback
from gebench.progress import step as progress_step

__all__ = [
    "DUMP_SUFFIXES",
    "STAGE_ORDER",
    "PassStatus",
    "Run",
    "execute",
]

_log = logging.getLogger(__name__)

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class PassStatus:
    """Status codes of one pass run on one graph (GE's ``SUCCESS``/``NOT_CHANGED``/``FAILED``)."""

    SUCCESS = "SUCCESS"
    NOT_CHANGED = "NOT_CHANGED"
    FAILED = "FAILED"


#: A pattern loop doing more than LOOP_LIMIT_BASE + 4 * (graph size) rewrites is taken to be endless.
LOOP_LIMIT_BASE = 1000
#: Stages that run after shape inference (a replacement there should call ``infer_shape``).
_INFERRED_STAGES = frozenset(STAGE_ORDER[1:])


# ============================================================================================ ledger glue
_LEDGER_MODULE: list[Any] = []


def _ledger_module() -> Any:
    """:mod:`gebench.fusion.ledger`, imported on first use (records are made per candidate)."""
    if not _LEDGER_MODULE:
        from gebench.fusion import ledger

        _LEDGER_MODULE.append(ledger)
    return _LEDGER_MODULE[0]


def user_frame(exc: BaseException) -> str:
    """``file:line`` of the innermost traceback frame outside gebench (where the pass author's code raised)."""
    where = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        if not os.path.abspath(frame.filename).startswith(_PKG_DIR + os.sep):
            where = f"{frame.filename}:{frame.lineno}"
    return where


def exception_text(exc: BaseException) -> str:
    where = user_frame(exc)
    text = f"{type(exc).__name__}: {exc}"
    return f"{text} (at {where})" if where else text


class _Recorder:
    """Writes ``CandidateRecord``s for one pass on one graph; also the matcher's recorder callbacks."""

    def __init__(self, run: _RunState, desc: PassDescriptor, graph: ir.Graph) -> None:
        self.run = run
        self.desc = desc
        self.graph = graph
        self.pattern_name = ""
        self.pattern_source = ""
        self.hook_source = ""
        self.seen_anchors: set[int] = set()
        self.linted: set[tuple[str, str]] = set()
        self.enabled = run.ledger_on
        self.stage = getattr(desc.stage, "value", str(desc.stage))
        self._ledger_rec: Any = None
        self._ledger_rec_key: tuple[str, str, str] | None = None
        self.dtype_checks: tuple[Any, ...] = ()  # the pattern's stated dtypes (gebench.fusion.dtype_lint)
        self.loop_limit: int | None = None  # the pattern loop's bound (rewrites, and marks per rewrite)

    def add(self, status_name: str, reason: str, *, nodes: Iterable[Any] = (), captures: list[Any] | None = None,
            meet_result: Any = None, exception: str = "", removed: Sequence[int] = (), added: Sequence[int] = (),
            detail: dict[str, Any] | None = None, pattern_name: str | None = None,
            pattern_source: str | None = None, hook_source: str | None = None) -> Any:
        """Append one record. ``nodes`` are ``ir.Node`` objects or ``(id, name)`` pairs (for removed nodes).

        Returns the record, or None when the run keeps no ledger (``execute(..., ledger=False)``).
        """
        if not self.enabled:
            if self.run.verify_rewrites and status_name == "REPLACED":
                self.graph.verify()
            return None
        ledger = _ledger_module()
        ids = []
        names = []
        for n in nodes:  # a plain loop: this runs per candidate
            if type(n) is tuple:
                ids.append(n[0])
                names.append(n[1])
            else:
                ids.append(n.id)
                names.append(n._name)
        record = ledger.CandidateRecord(  # positional: this runs per candidate (fields in declaration order)
            self.desc.pass_name, self.stage, self.graph.name,
            self.pattern_name if pattern_name is None else pattern_name, ledger.STATUS_BY_NAME[status_name],
            reason, ids, names, captures or [],
            self.pattern_source if pattern_source is None else pattern_source,
            self.hook_source if hook_source is None else hook_source,
            meet_result, exception, tuple(removed), tuple(added), dict(detail or {}))
        self.run.ledger.append(record)
        if self.run.verify_rewrites and status_name == "REPLACED":
            self.graph.verify()
        return record

    def lint(self, rule: str, message: str, *, source: str = "", detail: dict[str, Any] | None = None,
             nodes: Iterable[Any] = ()) -> None:
        d = {"rule": rule, "source": source}
        d.update(detail or {})
        self.add("LINT", message, nodes=nodes, detail=d)

    # --- MatchRecorder protocol (called by the matcher); records and near-misses via the ledger's recorder
    def _ledger_recorder(self) -> Any:
        # one recorder per (pattern, sources): the matcher reports many candidates of the same pattern
        key = (self.pattern_name, self.pattern_source, self.hook_source)
        if self._ledger_rec is None or self._ledger_rec_key != key:
            self._ledger_rec = _ledger_module().LedgerRecorder(
                self.run.ledger, pass_name=self.desc.pass_name,
                stage=getattr(self.desc.stage, "value", str(self.desc.stage)), graph_name=self.graph.name,
                pattern_name=self.pattern_name, pattern_source=self.pattern_source, hook_source=self.hook_source)
            self._ledger_rec_key = key
        return self._ledger_rec

    def structural_mismatch(self, anchor_node: ir.Node, failure: tuple[Any, ...], bound_count: int) -> None:
        self.seen_anchors.add(anchor_node.id)
        if self.run.record_all and self.enabled:
            self._ledger_recorder().structural_mismatch(anchor_node, failure, bound_count)

    def boundary_violation(self, match_nodes: list[ir.Node], escaping_node: ir.Node, detail: dict[str, Any]) -> None:
        if match_nodes:
            self.seen_anchors.update(n.id for n in match_nodes)
        if self.run.record_all and self.enabled:
            self._ledger_recorder().boundary_violation(match_nodes, escaping_node, detail)


def _capture_list(match: Any) -> list[tuple[Any, Any, Any]]:
    """``(target id, name, port)`` per capture of ``match`` (``Match.captured`` inlined; Nones when unbound).
    Tuples: a tuple of atoms leaves the collector's young generation after one pass, a list would be scanned
    again in the next one."""
    out = []
    bindings = match.bindings
    for cap in match.pattern.captures:
        bound = bindings.get(cap.node_id)
        if bound is None:
            out.append((None, None, None))
            continue
        node, port = bound
        out.append((node.id, node._name, int(cap.port if port is None else port)))
    return out


# ============================================================================================ hook session
class _Session:
    """What facade code reports during one hook call (implements ``plugins.session.HookSession``)."""

    def __init__(self, recorder: _Recorder) -> None:
        self.recorder = recorder
        self.pass_name = recorder.desc.pass_name
        self.infer_shape_graphs: list[Any] = []
        self.expression_inputs: int | None = None
        self.owned_replacement: Any = None
        #: the pass instance whose replacement the runtime is about to call, for itself alone: that pass's
        #: expression-style replacement may then return a RecordedReplacement instead of a Graph (it clears this)
        self.record_replacement: Any = None
        self.rewrites = 0
        self.hook: Any = None  # the hook being called (set by _call_hook)

    def note_node_change(self, node_name: str, what: str) -> None:
        """Pass code changed a node in place (a ``ge.graph.Node`` setter) while :attr:`hook` ran. In
        ``meet_requirements`` that is worth a lint (once per pattern): GE keeps the change whatever the hook
        returns."""
        if getattr(self.hook, "__name__", "") != "meet_requirements":
            return
        rec = self.recorder
        key = ("meet_requirements_changes_graph", rec.pattern_name)
        if key in rec.linted:
            return
        rec.linted.add(key)
        rec.lint("meet_requirements_changes_graph",
                 f"meet_requirements changed {what} of node {node_name!r}: GE keeps such a change even when the hook "
                 "then rejects the match or the pass fails later; change the graph in replacement() (or run())",
                 source=_session.caller_location(), detail={"node": node_name, "changed": what})

    def lint(self, rule: str, message: str, *, source: str = "", detail: dict[str, Any] | None = None) -> None:
        self.recorder.lint(rule, message, source=source, detail=detail)

    def note_infer_shape(self, replacement_ir: Any) -> None:
        self.infer_shape_graphs.append(replacement_ir)

    def note_expression_inputs(self, count: int, built: Any = None) -> None:
        """An expression-style replacement touched ``count`` inputs; ``built`` is the Graph its wrapper built
        (no pass code holds it), None when the replacement returned a Graph of its own."""
        self.expression_inputs = count
        self.owned_replacement = built

    def note_rewrite(self, *, boundary_nodes: list[Any], result: Any, graph: Any, source: str,
                     with_context: bool = False) -> None:
        """A ``SubgraphRewriter.replace``; ``with_context``: it was given a context, so it reports the fusion for
        the pass (GE's fusion statistics count it, see :mod:`gebench.fusion.statistics`)."""
        self.rewrites += 1
        self.recorder.add("REPLACED", f"SubgraphRewriter.replace at {source}" if source else "SubgraphRewriter.replace",
                          nodes=boundary_nodes, removed=result.removed, added=result.added,
                          detail={"via": "SubgraphRewriter.replace", "source": source, "with_context": with_context})

    def note_rewrite_failure(self, *, boundary_nodes: list[Any], reason: str, graph: Any, source: str) -> None:
        self.recorder.add("REPLACEMENT_FAILED", reason, nodes=boundary_nodes,
                          detail={"via": "SubgraphRewriter.replace", "source": source})

    def note_report_fuse(self, before: list[Any], after: list[Any], source: str) -> None:
        self.rewrites += 1
        self.recorder.add("REPLACED", f"report_fuse at {source}" if source else "report_fuse", nodes=before,
                          removed=[n.id for n in before], added=[n.id for n in after],
                          detail={"via": "report_fuse", "source": source,
                                  "nodes_after": [n.name for n in after]})


def _reflected_operator_lints() -> contextlib.AbstractContextManager[None]:
    """While hooks run, pass-author traps of the expression API (``0 + x``) record lints (the pass API's)."""
    return pass_api().reflected_operator_lints()


def _call_hook(session: _Session, hook: Any, *args: Any) -> Any:
    """``hook(*args)`` with ``session`` current while it runs (``execute`` installs the reflected-operator lints
    once for the whole run, so a hook call costs one context-variable set and reset)."""
    token = _session._current.set(session)
    session.hook = hook
    try:
        limit = _guard._limit.get()
        if limit is not None:  # compile(..., hook_timeout=): HookTimedOut fails the pass
            return _guard.call_bounded(limit, session.pass_name, hook, *args)
        return hook(*args)
    except (SystemExit, KeyboardInterrupt) as exc:
        # pass code cannot end the compiler: GE sees a failed call (a real Ctrl-C still propagates)
        err = _guard.pass_code_exit(exc)
        if err is None:
            raise
        raise err.with_traceback(exc.__traceback__) from exc
    finally:
        _session._current.reset(token)


# ============================================================================================ run state / Run
class PassFailure(Exception):
    """Internal: a pass failed the way GE fails the compile."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclasses.dataclass
class _RunState:
    ledger: Any
    record_all: bool
    options: dict[str, str]
    graph: ir.Graph
    partial_graph: ir.Graph | None = None
    verify_rewrites: bool = False
    check_numerics: bool = False
    ledger_on: bool = True
    progress: ProgressCallback | None = None
    units_done: int = 0  # stages (and the inference) done, of units_total, for progress
    units_total: int = 1
    timings: Any = None  # gebench.fusion.timing.RunTimings
    rewrite_cap: int | None = None  # replays (gebench.debug.replay): stop before rewrite number cap + 1
    rewrites_done: int = 0


class Run:
    """The outcome of compiling a graph through the custom-pass stages.

    ``graph``, ``snapshots``, ``partial_graph`` and ``graph_after_rewrite()`` hand out ``ge.graph.Graph`` views;
    ``.ir`` on any of them is the IR graph (``run.graph.ir``). ``ir_graph``, ``ir_snapshots``, ``ir_partial_graph``
    and ``ir_graph_after_rewrite()`` give the same IR graphs for gebench's own code.

    Attributes:
        status: ``"SUCCESS"`` or ``"FAILED"`` (where GE would fail the compile).
        failed_pass: name of the pass that failed (None if none, or if the failure is not a pass's).
        failed_stage: stage value of the failure (None on success).
        failure_reason: GE's reason text ("" on success).
        ledger: every candidate, verdict, rewrite and lint.
        load_errors: pass files that failed to load (with file, line and exception).
        passes: descriptors of the passes that took part, in execution order per stage.
        partial_graph: for a failed ``FusionBasePass.run``, its half-edited graph as a ``ge.graph.Graph`` view (the
            run's graph is the state before that call); else None. ``ir_partial_graph`` is its IR graph.
    """

    def __init__(self, *, graph: ir.Graph, snapshots: Mapping[str, ir.Graph], ledger: Any, status: str,
                 failed_pass: str | None, failed_stage: str | None, failure_reason: str,
                 load_errors: list[Any], passes: list[PassDescriptor], pass_results: list[dict[str, Any]],
                 partial_graph: ir.Graph | None = None, timings: Any = None) -> None:
        self.ir_graph = graph
        self.ir_snapshots = snapshots
        self.ledger = ledger
        self.status = status
        self.failed_pass = failed_pass
        self.failed_stage = failed_stage
        self.failure_reason = failure_reason
        self.load_errors = load_errors
        self.passes = passes
        self.pass_results = pass_results
        self.ir_partial_graph = partial_graph
        self.timings = timings  # gebench.fusion.timing.RunTimings (None for a Run built elsewhere)
        #: what ``execute`` was given besides graph and passes, for replays (``gebench.debug.replay``)
        self.replay_args: dict[str, Any] = {}
        #: rewrites done (pattern and decompose rewrites, ``SubgraphRewriter.replace`` and ``report_fuse`` calls)
        self.rewrite_count = 0

    @property
    def ok(self) -> bool:
        return self.status == "SUCCESS"

    @property
    def graph(self) -> Any:
        """The resulting graph as a ``ge.graph.Graph`` view (``run.graph.ir``: the IR graph, as ``ir_graph``)."""
        return pass_api().wrap_graph(self.ir_graph)

    @property
    def partial_graph(self) -> Any:
        """For a failed ``FusionBasePass.run``, its half-edited graph as a ``ge.graph.Graph`` view (``.ir``: the IR
        graph, as ``ir_partial_graph``); None otherwise."""
        return None if self.ir_partial_graph is None else pass_api().wrap_graph(self.ir_partial_graph)

    @property
    def snapshots(self) -> Mapping[str, Any]:
        """Dump name (GE's suffix) -> ``ge.graph.Graph`` view of the graph at that point (``.ir``: its IR graph).

        A read-only mapping in dump order; a snapshot is built (and wrapped) only when it is read, so
        ``run.snapshots[name]`` costs that one snapshot, not all of them."""
        return _GraphViews(self.ir_snapshots)

    def verify(self, **kwargs: Any) -> Any:
        """Check the run numerically with the reference executor (``gebench.exec.verify_run``): consecutive
        snapshots compared on seeded inputs, and each rewrite locally; errors are written to the ledger.

        Returns:
            ``gebench.exec.equivalence.VerifyReport`` (``ok``, ``failures``, ``summary()``).
        """
        return run_tools().verify_run(self, **kwargs)

    def summary(self) -> dict[str, Any]:
        """Per pass: candidates, replaced, rejected by reason (from the ledger)."""
        return self.ledger.summary()

    def report(self) -> dict[str, Any]:
        """A JSON-able description of the run (status, failure, passes, per-pass summary, ledger, snapshots)."""
        return {
            "status": self.status,
            "failed_pass": self.failed_pass,
            "failed_stage": self.failed_stage,
            "failure_reason": self.failure_reason,
            "load_errors": [e.to_dict() for e in self.load_errors],
            "passes": [
                {"pass_name": d.pass_name, "stage": getattr(d.stage, "value", str(d.stage)), "kind": d.kind,
                 "class_name": d.class_name, "module_name": d.module_name,
                 "source": _class_source(d.cls)}
                for d in self.passes
            ],
            "pass_results": list(self.pass_results),
            "summary": self.summary(),
            "timing": self.timing(),
            "snapshots": _snapshot_sizes(self.ir_snapshots),
            "graph": {"name": self.ir_graph.name, "nodes": len(self.ir_graph)},
            "ledger": self.ledger.to_dict(),
        }

    def graph_after_rewrite(self, pass_name: str, k: int) -> Any:
        """The graph after the ``k``-th rewrite (1-based; 0: just before the first) of pass ``pass_name``, made by
        replaying the run up to it (:func:`gebench.debug.graph_after_rewrite`: one compile of the input), as a
        ``ge.graph.Graph`` view (``.ir``: its IR graph, as :meth:`ir_graph_after_rewrite` returns it).

        Raises:
            gebench.debug.ReplayError: the pass did fewer rewrites, or the run cannot be replayed.
        """
        return pass_api().wrap_graph(self.ir_graph_after_rewrite(pass_name, k))

    def ir_graph_after_rewrite(self, pass_name: str, k: int) -> ir.Graph:
        """:meth:`graph_after_rewrite` as the ``ir.Graph`` itself (the replay's graph), for gebench's own code.

        Raises:
            gebench.debug.ReplayError: as :meth:`graph_after_rewrite`.
        """
        return run_tools().graph_after_rewrite(self, pass_name, k)

    def repro_bundle(self, candidate: Any, directory: Any, **kwargs: Any) -> Any:
        """Write a folder reproducing ``candidate``'s verdict (a ledger index or record) on the smallest graph
        around it: :func:`gebench.debug.repro_bundle` (returns its ``ReproBundle``; raises its errors)."""
        return run_tools().repro_bundle(self, candidate, directory, **kwargs)

    def bisect_numerics(self, seed: int = 0, **kwargs: Any) -> Any:
        """The ledger record of the first rewrite after which the graph is not numerically equivalent to the
        input (reference executor, random inputs of ``seed``), or None: :func:`gebench.debug.bisect_numerics`
        (O(log rewrites) replays; raises its errors)."""
        return run_tools().bisect_numerics(self, seed, **kwargs).record

    def timing(self) -> list[dict[str, Any]]:
        """Per pass (in run order) and per pattern: wall and CPU seconds, candidate counts by verdict, matches and
        rewrites (:meth:`gebench.fusion.timing.RunTimings.to_dict`); ``[]`` for a run without timings."""
        if self.timings is None:
            return []
        return self.timings.to_dict(self.ledger.records)

    def explain(self, node: Any) -> list[Any]:
        """Which passes considered ``node`` (an id, a name, an ``ir.Node`` or a ``ge.graph.Node``), and why each
        fired or not: the ledger records naming it, in run order. ``explain_text`` renders them."""
        key: Any = node
        if hasattr(node, "_ir_node"):
            key = node._ir_node.id
        elif isinstance(node, ir.Node):
            key = node.id
        return list(self.ledger.for_node(key))

    def explain_text(self, node: Any) -> str:
        """:meth:`explain` as readable lines (plus which pass created the node, if one did)."""
        records = self.explain(node)
        label = getattr(node, "name", node)
        created = ""
        live = self.ir_graph.find(label) if isinstance(label, str) else None
        if live is not None and live.provenance:
            created = f"{label!r} was created by pass {live.provenance}"
        if not records:
            return created or f"no pass considered {label!r}"
        lines = [created] if created else []
        lines.append(f"{label!r} was considered {len(records)} time(s):")
        for r in records:
            status = getattr(r.status, "name", str(r.status))
            where = f" [{r.pattern_name}]" if r.pattern_name else ""
            lines.append(f"- {r.stage} / {r.pass_name}{where}: {status} — {r.reason}")
        return "\n".join(lines)

    def fusion_result(self, *, session_id: int = 0, graph_id: int = 0) -> dict[str, Any]:
        """GE's fusion statistics of this run, the object ``fusion_result.json`` holds (``{}`` when no pass
        recorded a match; counted from the ledger as :mod:`gebench.fusion.statistics` describes)."""
        from gebench.fusion.statistics import fusion_result

        return fusion_result(self.ledger, session_id=session_id, graph_id=graph_id)

    def provenance(self, node: Any) -> Any:
        """Which passes made ``node`` of the final graph (a name, id, ``ir.Node`` or ``ge.graph.Node``) and from
        which original nodes: a :class:`gebench.fusion.provenance.Provenance` (``passes``, ``original_nodes``,
        ``original_op_names``, ``steps``; ``text()`` renders it).

        Raises:
            KeyError: the node is not in the final graph.
        """
        from gebench.fusion.provenance import provenance

        return provenance(self, node)

    def __repr__(self) -> str:
        tail = f" at {self.failed_pass!r}: {self.failure_reason}" if self.status != "SUCCESS" else ""
        return f"<Run {self.status}{tail}; {len(self.ir_graph)} nodes>"


class _GraphViews(Mapping[str, Any]):
    """Name -> ``ge.graph.Graph`` view of the IR graph ``graphs[name]``, wrapped on each read (O(1) beyond what
    reading ``graphs`` costs)."""

    def __init__(self, graphs: Mapping[str, ir.Graph]) -> None:
        self._graphs = graphs

    def __getitem__(self, name: str) -> Any:
        return pass_api().wrap_graph(self._graphs[name])

    def __iter__(self) -> Iterator[str]:
        return iter(self._graphs)

    def __contains__(self, name: object) -> bool:  # Mapping's would read (and so build) the entry
        return name in self._graphs

    def __len__(self) -> int:
        return len(self._graphs)

    def __repr__(self) -> str:
        return f"<snapshots: {', '.join(self._graphs)}>"


def _snapshot_sizes(snapshots: Mapping[str, ir.Graph]) -> dict[str, dict[str, Any]]:
    """Node count and graph name per snapshot, without building snapshots that are still journals."""
    if isinstance(snapshots, SnapshotMap):
        return {k: {"nodes": snapshots.node_count(k), "graph_name": snapshots.graph_name(k)} for k in snapshots}
    return {k: {"nodes": len(v), "graph_name": v.name} for k, v in snapshots.items()}


def _class_source(cls: type) -> str:
    import inspect

    try:
        return f"{inspect.getsourcefile(cls)}:{inspect.getsourcelines(cls)[1]}"
    except (OSError, TypeError):
        return ""


# ============================================================================================ executor
def _sort_key(desc: PassDescriptor) -> bytes:
    return desc.pass_name.encode("utf-8", "surrogatepass")


def _validate_descriptor(desc: PassDescriptor) -> str | None:
    """GE's C++ parse of a bridge dict: unknown stage or kind fails the load."""
    try:
        bridge = desc.to_bridge_dict()
    except AttributeError as exc:
        return f"pass {desc.pass_name!r}: stage {desc.stage!r} is not a PassStage ({exc})"
    if bridge["stage"] not in STAGE_ORDER:
        return f"pass {desc.pass_name!r}: unknown stage {bridge['stage']!r}"
    if desc.kind not in (PASS_KIND_FUSION_BASE, PASS_KIND_PATTERN_FUSION, PASS_KIND_DECOMPOSE):
        return f"pass {desc.pass_name!r}: unknown pass kind {desc.kind!r}"
    return None


def execute(graph: ir.Graph, descriptors: Sequence[PassDescriptor], *, stages: Iterable[Any] | None = None,
            options: dict[str, str] | None = None, record_all: bool = True, infer_shapes: bool = True,
            load_errors: Sequence[Any] = (), run_after_load_error: bool = False,
            verify_rewrites: bool = False, snapshots: bool = True, verify: bool = False,
            fusion_switch: Any = None, ledger: bool = True,
            pre_run_snapshot: ir.Graph | ir.GraphJournal | None = None,
            hook_timeout: float | None = None, progress: ProgressCallback | None = None,
            rewrite_cap: int | None = None) -> Run:
    """Run ``descriptors`` over ``graph`` (mutated in place) through GE's custom-pass stages.

    Args:
        graph: the graph to compile; it is modified.
        descriptors: the passes (any stage; each runs in its own stage).
        stages: the stages to run (PassStage members or values); default all four in GE's order.
        options: values ``PassContext.get_option_value`` returns.
        record_all: also record structural mismatches and boundary violations (off for timing runs).
        infer_shapes: run shape/dtype inference between ``BeforeInferShape`` and ``AfterInferShape``.
        load_errors: pass load errors; any makes the run FAILED with reason "pass plugin load failed"
            (GE aborts), and the stages do not run unless ``run_after_load_error``.
        verify_rewrites: run ``graph.verify()`` after every rewrite (tests; raises ``GraphError`` if broken).
        verify: check every pattern/decompose rewrite numerically when it happens (matched region vs its
            replacement on the reference executor, ``gebench.exec``); errors go on the REPLACED records.
        fusion_switch: GE's fusion-switch file (path) or its parsed dict: ``{"Switch": {"GraphFusion":
            {"<pass name>" or "ALL": "on"/"off"}}}``; switched-off passes do not run (a named entry beats ALL).
        snapshots: keep the graph at each dump point (a journal: O(what changes after that point), built into
            a full graph on first read, see :mod:`gebench.fusion.snapshots`; a stage that ran no pass and
            no inference shares the previous one). Off: only ``Run.graph``.
        ledger: False writes no record at all (``Run.ledger`` stays empty; ``record_all`` and ``verify``'s
            per-rewrite errors have nowhere to go): the pass outcome and the graph are the same.
        pre_run_snapshot: the ``PreRunBegin`` snapshot, instead of a journal opened on ``graph``: a graph equal
            to ``graph`` that nobody else holds, or a journal opened on one equal to it (``compile``, which works
            on a copy of the caller's graph, opens one on the caller's: the rewrites of the first stage then
            keep no pre-images). Ignored without ``snapshots``.
        hook_timeout: seconds each pass hook call (``__init__``, ``patterns``, ``meet_requirements``,
            ``replacement``, ``run``) may take; one that runs longer is interrupted and fails its pass, with the
            pass, the hook and the ``file:line`` where it was interrupted in the reason. None (default): no bound,
            as in GE. See :func:`gebench.fusion._guard.hook_timeout` for how it interrupts and its limits.
        progress: called as ``progress(step, done, total)`` (:mod:`gebench.progress`): step ``"compile"``
            counts the stages run (and the inference), ``"InferShape"`` the inference, and
            ``"<stage> <pass name>"`` a pattern's candidates visited, every :data:`PROGRESS_EVERY` of them.
        rewrite_cap: replays (:mod:`gebench.debug.replay`): stop the run before its rewrite number
            ``rewrite_cap + 1`` (a pattern or decompose rewrite, after its ``meet_requirements`` and cycle check;
            a ``FusionBasePass.run()`` call, whose rewrites all count, is not started once the cap is reached).
            The run is then FAILED at that pass with a reason starting with :data:`REPLAY_STOP`, and its graph
            is the graph after ``rewrite_cap`` rewrites. None (default): no cap.

    Cost: the collector's automatic passes are paused for the run (:func:`ir.collector_paused`): a run keeps
    nearly everything it makes (new nodes, records, journal copies), so young-generation passes would scan those
    objects only to find nothing to free; at the end they move to the oldest generation unscanned. Garbage cycles
    made during the run (gebench makes next to none; pass code might) wait for the next full collection, which a
    run on a large graph leaves due anyway (:func:`ir.full_collections_deferred`).

    Returns:
        The :class:`Run`. Never raises for pass failures; those are the run's status.

    Raises:
        ValueError: ``hook_timeout`` is not a positive number, or an unknown stage.
    """
    with _guard.interrupts_tracked(), _guard.hook_timeout(hook_timeout), _reflected_operator_lints(), \
            ir.full_collections_deferred(), ir.collector_paused():
        stages = list(stages) if stages is not None else None
        run = _execute(graph, descriptors, stages=stages, options=options, record_all=record_all,
                       infer_shapes=infer_shapes, load_errors=load_errors,
                       run_after_load_error=run_after_load_error, verify_rewrites=verify_rewrites,
                       keep_snapshots=snapshots, verify=verify, fusion_switch=fusion_switch,
                       ledger_on=ledger, pre_run_snapshot=pre_run_snapshot, progress=progress,
                       rewrite_cap=rewrite_cap)
        run.replay_args = {"stages": stages, "options": dict(options or {}), "infer_shapes": infer_shapes,
                           "record_all": record_all, "run_after_load_error": run_after_load_error,
                           "fusion_switch": fusion_switch, "hook_timeout": hook_timeout}
        return run


def _execute(graph: ir.Graph, descriptors: Sequence[PassDescriptor], *, stages: Iterable[Any] | None,
             options: dict[str, str] | None, record_all: bool, infer_shapes: bool, load_errors: Sequence[Any],
             run_after_load_error: bool, verify_rewrites: bool, keep_snapshots: bool, verify: bool,
             fusion_switch: Any, ledger_on: bool, pre_run_snapshot: ir.Graph | ir.GraphJournal | None,
             progress: ProgressCallback | None = None, rewrite_cap: int | None = None) -> Run:
    from gebench.fusion.timing import RunTimings

    ledger = _ledger_module().Ledger()
    state = _RunState(ledger=ledger, record_all=record_all, options=dict(options or {}), graph=graph,
                      verify_rewrites=verify_rewrites, check_numerics=verify, ledger_on=ledger_on,
                      progress=progress, timings=RunTimings(), rewrite_cap=rewrite_cap)
    run_lints = ledger if ledger_on else None
    snapshots = SnapshotMap()
    last_snapshot: list[ir.Graph | ir.GraphJournal | None] = [None]
    if keep_snapshots:
        last_snapshot[0] = pre_run_snapshot if pre_run_snapshot is not None else ir.GraphJournal(graph)
        snapshots.keep(PRE_RUN_SUFFIX, last_snapshot[0])
    wanted = [getattr(s, "value", s) for s in stages] if stages is not None else list(STAGE_ORDER)
    for s in wanted:
        if s not in STAGE_ORDER:
            raise ValueError(f"unknown stage {s!r}; expected one of {', '.join(STAGE_ORDER)}")
    results: list[dict[str, Any]] = []
    descriptors = list(descriptors)

    def finish(status: str, failed_pass: str | None, failed_stage: str | None, reason: str) -> Run:
        _unit_done(state, finished=True)
        run = Run(graph=state.graph, snapshots=snapshots, ledger=ledger, status=status, failed_pass=failed_pass,
                  failed_stage=failed_stage, failure_reason=reason, load_errors=list(load_errors),
                  passes=descriptors, pass_results=results, partial_graph=state.partial_graph,
                  timings=state.timings)
        run.rewrite_count = state.rewrites_done
        return run

    for err in load_errors:
        _append_run_lint(run_lints, graph, "pass_load_failed", str(err),
                         err.to_dict() if hasattr(err, "to_dict") else {"text": str(err)})
    load_failure = ""
    if load_errors:
        load_failure = "pass plugin load failed: " + "; ".join(str(e) for e in load_errors)
    for desc in descriptors:
        problem = _validate_descriptor(desc)
        if problem is not None:
            _append_run_lint(run_lints, graph, "pass_registration_invalid", problem,
                             {"source": _class_source(desc.cls)}, pass_name=desc.pass_name)
            load_failure = (load_failure + "; " if load_failure else "pass plugin load failed: ") + problem
    if load_failure and not run_after_load_error:
        return finish("FAILED", None, None, load_failure)

    switched_off = disabled_by_fusion_switch(fusion_switch, [d.pass_name for d in descriptors])
    by_stage: dict[str, list[PassDescriptor]] = {s: [] for s in STAGE_ORDER}
    for desc in descriptors:
        if desc.pass_name in switched_off:
            results.append({"pass_name": desc.pass_name, "stage": getattr(desc.stage, "value", str(desc.stage)),
                            "graph": "", "status": "DISABLED", "reason": "switched off by the fusion switch file"})
            continue
        if _validate_descriptor(desc) is None:
            by_stage[desc.stage.value].append(desc)
    if progress is not None:
        state.units_total = max(1, len(wanted) + bool(infer_shapes and any(s in wanted for s in STAGE_ORDER[1:])))
        progress("compile", 0, state.units_total)
    for stage in STAGE_ORDER:
        if stage == "AfterInferShape" and infer_shapes and ("AfterInferShape" in wanted or any(
                s in wanted for s in STAGE_ORDER[2:])):
            last_snapshot[0] = None
            with progress_step(progress, "InferShape"):
                problem = _infer(state)
            _unit_done(state)
            if problem:
                return finish("FAILED", None, "InferShape", problem)
        if stage not in wanted:
            continue
        stage_passes = sorted(by_stage[stage], key=_sort_key)
        failure = _run_stage(state, stage, stage_passes, results)
        _unit_done(state)
        if failure is not None:
            return finish("FAILED", failure[0], stage, failure[1])
        if keep_snapshots:
            if stage_passes or last_snapshot[0] is None:
                last_snapshot[0] = ir.GraphJournal(state.graph)
            snapshots.keep(DUMP_SUFFIXES[stage], last_snapshot[0])
    if load_failure:
        return finish("FAILED", None, None, load_failure)
    return finish("SUCCESS", None, None, "")


def _unit_done(state: _RunState, *, finished: bool = False) -> None:
    """Progress: one more stage (or the inference) of the run done; ``finished``: the run ends here."""
    if state.progress is None or state.units_done >= state.units_total:
        return
    state.units_done = state.units_total if finished else state.units_done + 1
    state.progress("compile", state.units_done, state.units_total)


#: A pattern's progress is reported every this many candidates visited.
PROGRESS_EVERY = 256


def _candidates_progress(state: _RunState, rec: _Recorder, total: int) -> Any:
    """Progress of one pattern over its ``total`` initial candidates: ``tick()`` after each match reports the
    anchors seen so far (every :data:`PROGRESS_EVERY`), ``tick(True)`` the end. None without progress."""
    progress = state.progress
    if progress is None or total <= 0:
        return None
    name = f"{rec.stage} {rec.desc.pass_name}"
    last = [0]
    progress(name, 0, total)

    def tick(end: bool = False) -> None:
        done = total if end else min(len(rec.seen_anchors), total - 1)
        if end or done - last[0] >= PROGRESS_EVERY:
            last[0] = done
            progress(name, done, total)

    return tick


def disabled_by_fusion_switch(switch: Any, pass_names: Sequence[str]) -> set[str]:
    """Pass names a GE fusion-switch file turns off (``Switch.GraphFusion.<name>`` or ``ALL``; "off" = off).

    Args:
        switch: None, a path to the JSON file, or the parsed dict.

    Raises:
        ValueError: the file is not JSON or not an object (message names the file).
    """
    if switch is None:
        return set()
    if isinstance(switch, (str, os.PathLike)):
        import json

        try:
            with open(switch, encoding="utf-8") as fh:
                switch = json.load(fh)
        except (OSError, ValueError) as exc:
            raise ValueError(f"fusion switch file {os.fspath(switch)!r} cannot be read as JSON: {exc}") from exc
    if not isinstance(switch, dict):
        raise ValueError("fusion switch must be a JSON object like {\"Switch\": {\"GraphFusion\": {...}}}")
    graph_fusion = (switch.get("Switch") or {}).get("GraphFusion") or {}
    default = str(graph_fusion.get("ALL", "on")).lower()
    off = set()
    for name in pass_names:
        value = str(graph_fusion.get(name, default)).lower()
        if value == "off":
            off.add(name)
    return off


def _append_run_lint(ledger: Any, graph: ir.Graph, rule: str, reason: str, detail: dict[str, Any], *,
                     pass_name: str = "", stage: str = "") -> None:
    """A run-level LINT record (pass loading, inference) so the ledger alone tells the whole story.
    ``ledger`` None (a run without ledger): nothing is written."""
    if ledger is None:
        return
    mod = _ledger_module()
    d = {("load_rule" if k == "rule" else k): v for k, v in detail.items()}
    d["rule"] = rule
    ledger.append(mod.CandidateRecord(pass_name=pass_name, stage=stage, graph_name=graph.name, pattern_name="",
                                      status=mod.CandidateStatus.LINT, reason=reason, detail=d))


def _infer(state: _RunState) -> str:
    """Shape/dtype inference of the whole graph; returns a failure reason or ""."""
    from gebench import ops

    missing = sorted({t for g in state.graph.all_graphs() for t in g.op_types()} - set(ops.inferable_op_types()))
    if missing:
        _append_run_lint(state.ledger if state.ledger_on else None, state.graph, "no_inference_rule",
                         "gebench has no shape inference for op types " + ", ".join(missing)
                         + "; their output descs were kept as they were", {"op_types": missing}, stage="InferShape")
    try:
        ops.infer_graph(state.graph, allow_unknown_ops=True)
    except Exception as exc:  # noqa: BLE001 - an inference failure fails the compile as in GE
        reason = f"InferShape failed: {exc}"
        _append_run_lint(state.ledger if state.ledger_on else None, state.graph, "infer_shape_failed", reason,
                         {"node": getattr(exc, "node_name", "")}, stage="InferShape")
        return reason
    return ""


def _run_stage(state: _RunState, stage: str, descs: list[PassDescriptor],
               results: list[dict[str, Any]]) -> tuple[str, str] | None:
    """Run one stage. Returns (failed pass, reason) or None."""
    if not descs:
        return None
    api = pass_api()
    context = api.new_context(state.options)
    instances: dict[str, Any] = {}
    configs: dict[str, Any] = {}
    for desc in descs:
        try:
            try:
                limit = _guard._limit.get()
                instance = desc.cls() if limit is None else _guard.call_bounded(limit, desc.pass_name, desc.cls)
                if desc.kind == PASS_KIND_PATTERN_FUSION:
                    configs[desc.pass_name] = api.matcher_config_of(instance)
            except _guard.HookTimedOut as timeout:
                raise PassFailure(timeout.reason) from None  # reported as the stage's creation failure
            except (SystemExit, KeyboardInterrupt) as stop:
                err = _guard.pass_code_exit(stop)
                if err is None:
                    raise
                raise err.with_traceback(stop.__traceback__) from stop
            instances[desc.pass_name] = instance
        except Exception as exc:  # noqa: BLE001 - GE: pass creation failure fails the stage
            rec = _Recorder(state, desc, state.graph)
            hint = ""
            if isinstance(exc, AttributeError) and "_matcher_config" in str(exc):
                hint = " (does the subclass __init__ call super().__init__()?)"
            reason = f"create pass {desc.pass_name} failed: {exception_text(exc)}{hint}"
            rec.lint("pass_creation_failed", reason, source=_class_source(desc.cls))
            return desc.pass_name, reason
    for desc in descs:
        context.set_pass_name(desc.pass_name)
        instance = instances[desc.pass_name]
        for g in state.graph.all_graphs():
            status, reason = _run_pass_on_graph(state, desc, instance, configs.get(desc.pass_name), g, context)
            results.append({"pass_name": desc.pass_name, "stage": stage, "graph": g.name, "status": status,
                            "reason": reason})
            if status == PassStatus.FAILED:
                _log.info("custom pass %s failed in stage %s on graph %s: %s", desc.pass_name, stage, g.name,
                           reason)
                return desc.pass_name, reason
    return None


def _run_pass_on_graph(state: _RunState, desc: PassDescriptor, instance: Any, config: Any, graph: ir.Graph,
                       context: Any) -> tuple[str, str]:
    rec = _Recorder(state, desc, graph)
    state.timings.pass_started(desc.pass_name, rec.stage)
    try:
        if desc.kind == PASS_KIND_PATTERN_FUSION:
            return _run_pattern_pass(state, rec, instance, config, graph, context)
        if desc.kind == PASS_KIND_DECOMPOSE:
            return _run_decompose_pass(state, rec, instance, graph, context)
        return _run_fusion_base_pass(state, rec, instance, graph, context)
    except PassFailure as failure:
        context.set_error_message(failure.reason)
        return PassStatus.FAILED, failure.reason
    except _guard.HookTimedOut as timeout:  # gebench's hook bound (GE has none): the pass fails
        rec.lint("hook_timeout", timeout.reason, source=timeout.where, detail={"hook": timeout.hook})
        context.set_error_message(timeout.reason)
        return PassStatus.FAILED, timeout.reason
    finally:
        state.timings.pass_finished()


# --------------------------------------------------------------------------------------------- FusionBasePass
def _replace_graph(state: _RunState, old: ir.Graph, new: ir.Graph) -> None:
    """Put ``new`` where ``old`` was (root or a subgraph)."""
    if old is state.graph:
        state.graph = new
        return
    root = state.graph
    root.remove_subgraph(old.name)
    root.add_subgraph(new)


def _run_fusion_base_pass(state: _RunState, rec: _Recorder, instance: Any, graph: ir.Graph,
                          context: Any) -> tuple[str, str]:
    rec.hook_source = _hook_source(type(instance), "run")
    if state.rewrite_cap is not None:
        _check_rewrite_cap(state, rec)
    backup = ir.GraphJournal(graph)  # the graph before run(), kept at the cost of what run() changes
    view = pass_api().wrap_graph(graph)
    session = _Session(rec)
    name = rec.desc.pass_name
    reason = ""
    try:
        result = _call_hook(session, instance.run, view, context)
    except Exception as exc:  # noqa: BLE001 - GE: an exception in run fails the pass
        reason = f"python pass {name} run failed: {exception_text(exc)}"
        result = _FAILED_BY_EXCEPTION
    except _guard.HookTimedOut as timeout:  # fails the pass like an exception; the graph is restored below
        rec.lint("hook_timeout", timeout.reason, source=timeout.where, detail={"hook": timeout.hook})
        reason = timeout.reason
        result = _FAILED_BY_EXCEPTION
    status = _translate_run_result(rec, result) if result is not _FAILED_BY_EXCEPTION else PassStatus.FAILED
    if status == PassStatus.FAILED:
        if not reason:
            reason = (f"python pass {name} returned unsupported type: {type(result).__name__}"
                      if not isinstance(result, (bool, int)) else f"python pass {name} run returned {result!r}")
            if context.get_error_message():
                reason += f"; context error: {context.get_error_message()}"
        rec.add("REPLACEMENT_FAILED", reason, detail={"via": "run", "returned": repr(result)},
                exception=reason if result is _FAILED_BY_EXCEPTION else "")
        # keep the graph as it was before the failing run(); the half-edited one stays inspectable
        state.partial_graph = graph
        restored = backup.materialize()
        if graph.parent_graph is not None:
            restored.parent_graph = graph.parent_graph
        _replace_graph(state, graph, restored)
        raise PassFailure(reason)
    state.rewrites_done += session.rewrites  # a failed run() is undone above: its rewrites do not count
    backup.close()
    return status, ""


_FAILED_BY_EXCEPTION = object()


def _translate_run_result(rec: _Recorder, result: Any) -> str:
    """GE's ``TranslateRunResult``: None/True succeed, False fails, an int is a raw status code."""
    if result is None:
        return PassStatus.SUCCESS
    if isinstance(result, bool):
        return PassStatus.SUCCESS if result else PassStatus.FAILED
    if isinstance(result, int):
        rec.lint("int_return_from_run",
                 f"run() returned the int {result}: GE uses an int as a raw status code (0 = SUCCESS, anything else "
                 "fails the compile; the docs' '0 means failure' is wrong); return True/False or None instead",
                 source=rec.hook_source, detail={"returned": result})
        return PassStatus.SUCCESS if result == 0 else PassStatus.FAILED
    return PassStatus.FAILED


_SOURCES: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


_HOOK_SOURCES: weakref.WeakKeyDictionary[type, dict[str, str]] = weakref.WeakKeyDictionary()


def _hook_source(cls: type, name: str) -> str:
    """``file:line`` of hook ``name`` of pass class ``cls``: where the pass file defines it, or the class's line
    when the class keeps gebench's default (records and lints always point into the pass file). Cached per class."""
    known = _HOOK_SOURCES.setdefault(cls, {})
    where = known.get(name)
    if where is None:
        where = _function_source(getattr(cls, name))
        if not where or os.path.abspath(where.rpartition(":")[0]).startswith(_PKG_DIR + os.sep):
            where = _class_source(cls) or where
        known[name] = where
    return where


def _function_source(fn: Any) -> str:
    """``file:line`` of a hook (cached per function object: hooks are looked up once per match)."""
    try:
        return _SOURCES[fn]
    except (KeyError, TypeError):
        pass
    key = fn
    info = getattr(fn, "__ge_hook_info__", None)
    if info and "function" in info:
        fn = info["function"]
    where = _session.function_location(fn)
    with contextlib.suppress(TypeError):  # not weak-referenceable: not cached
        _SOURCES[key] = where
    return where


# --------------------------------------------------------------------------------------------- PatternFusionPass
def _run_pattern_pass(state: _RunState, rec: _Recorder, instance: Any, config: Any, graph: ir.Graph,
                      context: Any) -> tuple[str, str]:
    from gebench.fusion import Matcher, PatternGraph

    session = _Session(rec)
    rec.hook_source = _hook_source(type(instance), "meet_requirements")
    try:
        patterns = _call_hook(session, pass_api().patterns_of, instance)
    except Exception as exc:  # noqa: BLE001 - GE: failing patterns() is a warning, zero patterns
        # the source is the pass file's line that raised (a @pattern body), not gebench's patterns() collector
        rec.lint("patterns_failed", f"patterns() failed, the pass matches nothing: {exception_text(exc)}",
                 source=user_frame(exc) or _hook_source(type(instance), "patterns"),
                 detail={"exception": exception_text(exc)})
        return PassStatus.NOT_CHANGED, ""
    changed = False
    for pat in patterns:
        pg = PatternGraph(pat._ir, pat._captures, name=pat._ir.name)
        rec.pattern_name = pg.name
        rec.pattern_source = pat._source
        state.timings.pattern_started(pg.name)
        problem = pg.validate()
        if problem is not None:
            rec.lint("invalid_pattern", f"pattern {pg.name!r} matches nothing: {problem}", source=pat._source)
            continue
        for did in pg.data_ids:
            data = pg.graph.node(did)
            if not pg.graph.num_uses(data):
                rec.lint("pattern_input_unused",
                         f"pattern {pg.name!r}: input {data.attrs.get('index')} ({data.name!r}) feeds no pattern node, "
                         "so a match has no consumer to bind it to and its boundary input stays empty: every rewrite "
                         "of this pattern fails (BOUNDARY_INPUT_EMPTY) and fails the pass; use the input in the "
                         "pattern or do not create it", source=pat._source, detail={"input": data.attrs.get("index")})
        rec.dtype_checks = stated_dtypes(pg) if rec.enabled else ()
        for capture in pg.captures:
            if capture.node_id not in pg.nodes:
                rec.lint("capture_outside_pattern", f"pattern {pg.name!r}: a captured tensor is not a node of the "
                         "pattern graph; get_captured_tensor() for it will raise", source=pat._source)
        matcher = Matcher(pg, graph, const_value_match=bool(config and config.is_enable_const_value_match()),
                          ir_attr_match=bool(config and config.is_enable_ir_attr_match()),
                          recorder=rec if rec.enabled else None)  # without a ledger nothing is recorded
        anchor_pid = pg.outputs[0][0]
        anchor_types = {"Const", "Constant"} if pg.nodes[anchor_pid].op_type in ("Const", "Constant") else \
            {pg.nodes[anchor_pid].op_type}
        initial = {n.id: n for t in anchor_types for n in graph.nodes_of_type(t)}
        order = {nid: i for i, nid in enumerate(sorted(initial, key=lambda i: graph.position(initial[i])))}
        lost: set[int] = set()
        rec.seen_anchors = set()
        rewrites = matches = 0
        limit = LOOP_LIMIT_BASE + 4 * len(graph)
        rec.loop_limit = limit
        tick = _candidates_progress(state, rec, len(initial))
        while True:
            match = matcher.next()
            if match is None:
                break
            anchor = match.bindings[anchor_pid][0]
            rec.seen_anchors.add(anchor.id)
            matches += 1
            if tick is not None:
                tick()
            outcome = _handle_match(state, rec, instance, match, graph, context, session)
            if outcome is not None:
                changed = True
                rewrites += 1
                if rewrites > limit:
                    reason = (f"pass {rec.desc.pass_name}: pattern {pg.name!r} was rewritten {rewrites} times on a "
                              f"graph of {len(graph)} nodes; its replacement re-creates the pattern, so GE's match "
                              "loop would never end (gebench stops it)")
                    rec.lint("match_loop_does_not_terminate", reason, source=pat._source)
                    raise PassFailure(reason)
                cutoff = order.get(anchor.id, -1)
                for rid in outcome.removed:
                    if rid in initial and order.get(rid, -1) > cutoff and rid not in rec.seen_anchors:
                        lost.add(rid)
        state.timings.pattern_counts(len(initial), matches, rewrites)
        if tick is not None:
            tick(True)
        for rid in sorted(lost, key=order.__getitem__):
            node = initial[rid]
            rec.add("LOST_TO_OVERLAP",
                    f"candidate {node.name!r} ({node.op_type}) was removed by an earlier rewrite of this pattern "
                    "before the matcher reached it", nodes=[(rid, node.name)])
    return (PassStatus.SUCCESS if changed else PassStatus.NOT_CHANGED), ""


def _handle_match(state: _RunState, rec: _Recorder, instance: Any, match: Any, graph: ir.Graph, context: Any,
                  session: _Session) -> Any:
    """meet_requirements -> cycle check -> replacement -> rewrite for one match. Returns the RewriteResult,
    None when skipped; raises PassFailure when GE would fail the pass."""
    MatchResult = _native_match_result()  # noqa: N806 - a class

    nodes = match.matched_nodes()
    captures = _capture_list(match) if rec.enabled else []  # only records carry them
    if rec.dtype_checks:  # GE ignores dtypes when matching: a lint, the match stands
        check_dtypes(rec, match, rec.dtype_checks)
    mr = MatchResult._create(match, graph)
    try:
        verdict = _call_hook(session, instance.meet_requirements, mr, context)
        ok = bool(verdict)
    except Exception as exc:  # noqa: BLE001 - GE: exception in meet_requirements = False (warning)
        text = exception_text(exc)
        _log.debug("pass %s: meet_requirements raised, treated as False: %s", rec.desc.pass_name, text)
        rec.add("REJECTED_BY_MEET_REQUIREMENTS", f"meet_requirements raised {text}; GE treats it as False",
                nodes=nodes, captures=captures, exception=text)
        return None
    finally:
        mr._expire()
    if not ok:
        if verdict is None and ("none_verdict", match.pattern.name) not in rec.linted:
            rec.linted.add(("none_verdict", match.pattern.name))
            rec.lint("meet_requirements_returned_none",
                     "meet_requirements returned None, which GE reads as False (every match is skipped); "
                     "did the hook forget to `return True`?", source=rec.hook_source, nodes=nodes)
        rec.add("REJECTED_BY_MEET_REQUIREMENTS", f"meet_requirements returned {verdict!r}", nodes=nodes,
                captures=captures, meet_result=_jsonable(verdict))
        return None
    if would_create_cycle(graph, nodes):
        rec.add("WOULD_CREATE_CYCLE", "fusing the matched nodes into one would create a cycle (a path leaves the "
                "match and comes back); GE skips the match", nodes=nodes, captures=captures,
                meet_result=_jsonable(verdict))
        return None
    if state.rewrite_cap is not None:
        _check_rewrite_cap(state, rec)
    boundary = match.boundary
    session.expression_inputs = None
    session.owned_replacement = None
    session.infer_shape_graphs = []
    mr = MatchResult._create(match, graph)
    session.record_replacement = instance
    try:
        replacement = _call_replacement(rec, instance, mr, context, session, nodes, captures, verdict)
    finally:
        session.record_replacement = None
    recorded = replacement if type(replacement) is RecordedReplacement else None
    replacement_ir = None if recorded is not None else replacement._ir
    name = recorded.name if recorded is not None else replacement_ir.name
    _post_replacement_lints(rec, session, boundary, name, replacement_ir, nodes)
    region = _capture_region(state, graph, [n.id for n in nodes], boundary)
    try:
        # pattern hooks see nodes, never the graph, so the match's region, its self-containment and the fuse-cycle
        # check above still hold
        result = None
        if recorded is not None:
            result = rewrite_recorded(graph, boundary, recorded, pass_name=rec.desc.pass_name, region=match.region,
                                      mark_limit=rec.loop_limit)
            if result is None:  # the record does not fit the boundary: the built graph's rewrite reports why
                replacement = recorded.build()
                replacement_ir = replacement._ir
        if result is None:
            result = rewrite(graph, boundary, replacement_ir, pass_name=rec.desc.pass_name,
                             adopt=recorded is not None or session.owned_replacement is replacement,
                             region=match.region, mark_pass_name=True, mark_limit=rec.loop_limit)
    except RewriteError as exc:
        reason = f"pass {rec.desc.pass_name}: rewrite of pattern {match.pattern.name!r} failed: {exc}"
        if exc.reason_code == RewriteReason.MARKS_RUNAWAY:
            rec.lint("match_loop_does_not_terminate", reason, source=rec.pattern_source)
        rec.add("REPLACEMENT_FAILED", reason, nodes=nodes, captures=captures, meet_result=_jsonable(verdict),
                detail={"reason_code": getattr(exc, "reason_code", ""), "replacement": name})
        raise PassFailure(reason) from None
    finally:
        if replacement is not recorded:
            replacement._invalidate()
    state.rewrites_done += 1
    reason = sys.intern(f"replaced by {name!r}")  # the records of a pass share one string
    record = rec.add("REPLACED", reason, nodes=nodes, captures=captures, meet_result=_jsonable(verdict),
                     removed=result.removed, added=result.added, detail={"replacement": name})
    _check_region(region, graph, result, record)
    return result


_FACADE: dict[str, Any] = {}


def _native_match_result() -> Any:
    """The pass API's ``MatchResult`` class (cached: read once per match)."""
    cls = _FACADE.get("MatchResult")
    if cls is None:
        cls = _FACADE["MatchResult"] = pass_api().match_result_type
    return cls


def _facade_graph() -> Any:
    """The pass API's ``Graph`` class (cached: read once per replacement)."""
    cls = _FACADE.get("Graph")
    if cls is None:
        cls = _FACADE["Graph"] = pass_api().graph_type
    return cls


def _call_replacement(rec: _Recorder, instance: Any, value: Any, context: Any, session: _Session,
                      nodes: list[Any], captures: list[Any], verdict: Any) -> Any:
    Graph = _facade_graph()  # noqa: N806 - a class

    try:
        result = _call_hook(session, instance.replacement, value, context)
    except Exception as exc:  # noqa: BLE001 - GE: an exception in replacement fails the pass
        text = exception_text(exc)
        reason = f"pass {rec.desc.pass_name}: replacement raised {text}"
        rec.add("REPLACEMENT_FAILED", reason, nodes=nodes, captures=captures, meet_result=_jsonable(verdict),
                exception=text, hook_source=_hook_source(type(instance), "replacement"))
        raise PassFailure(reason) from None
    finally:
        if hasattr(value, "_expire"):
            value._expire()
    if type(result) is RecordedReplacement:
        return result  # what the expression-style wrapper recorded instead of building (session.record_replacement)
    if not isinstance(result, Graph) or getattr(result, "_ir", None) is None or result._handle is None:
        reason = (f"pass {rec.desc.pass_name}: replacement must return ge.graph.Graph, got "
                  f"{type(result).__name__}" + (" (an already consumed Graph)" if isinstance(result, Graph) else ""))
        rec.add("REPLACEMENT_FAILED", reason, nodes=nodes, captures=captures, meet_result=_jsonable(verdict),
                hook_source=_hook_source(type(instance), "replacement"))
        raise PassFailure(reason)
    return result


def _post_replacement_lints(rec: _Recorder, session: _Session, boundary: Any, name: str,
                            replacement_ir: ir.Graph | None, nodes: list[Any]) -> None:
    """Lints on what a replacement returned: ``name`` is its graph's name, ``replacement_ir`` the graph (None for
    a recorded replacement, which no pass code could have inferred)."""
    if session.expression_inputs is not None and session.expression_inputs < len(boundary.inputs):
        source = _hook_source(rec.desc.cls, "replacement")
        rec.lint("replacement_inputs_short",
                 f"the expression-style replacement touched inputs[0..{session.expression_inputs - 1}] "
                 f"({session.expression_inputs} inputs) but the match has {len(boundary.inputs)} boundary inputs; "
                 "GE fails the rewrite (Data count != boundary inputs): touch every inputs[i]",
                 source=source, nodes=nodes,
                 detail={"touched": session.expression_inputs, "boundary_inputs": len(boundary.inputs)})
    stage = rec.stage
    if stage in _INFERRED_STAGES and not any(g is replacement_ir for g in session.infer_shape_graphs):
        source = _hook_source(rec.desc.cls, "replacement")
        rec.lint("missing_infer_shape",
                 f"replacement {name!r} in stage {stage} never called infer_shape(); its nodes keep "
                 "default tensor descs after shape inference has already run", source=source, nodes=nodes)


def _capture_region(state: _RunState, graph: ir.Graph, node_ids: list[int], boundary: Any) -> Any:
    """With ``verify``: the matched region extracted before the rewrite (the run tools, ``gebench.exec``), else
    None."""
    if not state.check_numerics or not state.ledger_on:
        return None
    try:
        return run_tools().capture_rewrite(graph, node_ids, boundary)
    except Exception as exc:  # noqa: BLE001 - a region the executor cannot extract is reported, not fatal
        return exc


def _check_region(region: Any, graph: ir.Graph, result: Any, record: Any) -> None:
    """Compare ``region`` with its replacement and store the errors on ``record`` (None: no ledger, skipped)."""
    if region is None or record is None:
        return
    if isinstance(region, Exception):
        record.detail["verify"] = {"ok": None, "error": f"{type(region).__name__}: {region}"}
        return
    outcome = run_tools().check_captured_rewrite(region, graph, result.added)
    if outcome.error is not None:
        record.detail["verify"] = {"ok": None, "error": outcome.error}
        return
    record.max_abs_error = outcome.max_abs
    record.max_rel_error = outcome.max_rel
    record.detail["verify"] = {"ok": outcome.ok, "cases": outcome.cases,
                               "failing": [f"{f.label}: {f.message}" for f in outcome.failing_inputs]}
    if not outcome.ok:
        record.detail["verify_failed"] = True


#: The start of the failure reason of a run stopped by ``execute(..., rewrite_cap=)``.
REPLAY_STOP = "replay stopped after rewrite"


def _check_rewrite_cap(state: _RunState, rec: _Recorder) -> None:
    """Raise PassFailure (ending the run, graph untouched) when the run has done its ``rewrite_cap`` rewrites."""
    cap = state.rewrite_cap
    if cap is not None and state.rewrites_done >= cap:
        raise PassFailure(f"{REPLAY_STOP} {cap} (pass {rec.desc.pass_name}, pattern {rec.pattern_name!r})")


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


# --------------------------------------------------------------------------------------------- DecomposePass
def _run_decompose_pass(state: _RunState, rec: _Recorder, instance: Any, graph: ir.Graph,
                        context: Any) -> tuple[str, str]:
    wrap_node = pass_api().wrap_node
    op_types = list(getattr(instance, "op_types", None) or [])
    rec.hook_source = _hook_source(type(instance), "meet_requirements")
    rec.pattern_name = ",".join(op_types)
    rec.pattern_source = _class_source(type(instance))
    state.timings.pattern_started(rec.pattern_name)
    targets = [n for n in graph.nodes() if n.op_type in op_types]
    if not targets:
        return PassStatus.NOT_CHANGED, ""
    session = _Session(rec)
    changed = False
    for node in targets:
        if node not in graph:
            rec.add("LOST_TO_OVERLAP", f"{node.name!r} was removed by an earlier decomposition in this pass",
                    nodes=[(node.id, node.name)])
            continue
        try:
            verdict = _call_hook(session, instance.meet_requirements, wrap_node(node), context)
            ok = bool(verdict)
        except Exception as exc:  # noqa: BLE001 - GE: exception = False
            text = exception_text(exc)
            rec.add("REJECTED_BY_MEET_REQUIREMENTS", f"meet_requirements raised {text}; GE treats it as False",
                    nodes=[node], exception=text)
            continue
        if not ok:
            rec.add("REJECTED_BY_MEET_REQUIREMENTS", f"meet_requirements returned {verdict!r}", nodes=[node],
                    meet_result=_jsonable(verdict))
            continue
        if state.rewrite_cap is not None:
            _check_rewrite_cap(state, rec)
        boundary = decompose_boundary(graph, node)
        session.expression_inputs = None
        session.owned_replacement = None
        session.infer_shape_graphs = []
        replacement = _call_replacement(rec, instance, wrap_node(node), context, session, [node], [], verdict)
        replacement_ir = replacement._ir
        _post_replacement_lints(rec, session, boundary, replacement_ir.name, replacement_ir, [node])
        before = [(node.id, node.name)]
        region = _capture_region(state, graph, [node.id], boundary)
        try:
            result = rewrite(graph, boundary, replacement_ir, pass_name=rec.desc.pass_name,
                             adopt=session.owned_replacement is replacement, mark_pass_name=True)
        except RewriteError as exc:
            reason = f"pass {rec.desc.pass_name}: decomposition of {node.name!r} failed: {exc}"
            rec.add("REPLACEMENT_FAILED", reason, nodes=before, meet_result=_jsonable(verdict),
                    detail={"reason_code": getattr(exc, "reason_code", ""), "boundary_inputs": len(boundary.inputs),
                            "replacement": replacement_ir.name})
            raise PassFailure(reason) from None
        finally:
            replacement._invalidate()
        changed = True
        state.rewrites_done += 1
        record = rec.add("REPLACED", f"decomposed by {replacement_ir.name!r}", nodes=before,
                         meet_result=_jsonable(verdict), removed=result.removed, added=result.added,
                         detail={"replacement": replacement_ir.name})
        _check_region(region, graph, result, record)
    return (PassStatus.SUCCESS if changed else PassStatus.NOT_CHANGED), ""
