"""gebench's fusion core: GE's pattern matching and subgraph rewriting on the IR, and the ledger.

Public surface::

    PatternGraph(graph, captures=[], name=None).validate() -> str | None
    Matcher(pattern, target, *, const_value_match=False, ir_attr_match=False, recorder=None).next() -> Match | None
    Match.bindings / .matched_nodes() / .captured(i) / .boundary
    Boundary(inputs, outputs), BoundaryInput(anchors).producer(graph), decompose_boundary(graph, node)
    would_create_cycle(graph, nodes) -> bool
    rewrite(graph, boundary, replacement, *, pass_name, check_self_contained=True, mark_pass_name=False)
        -> RewriteResult
    RewriteError(reason_code, message), RewriteReason
    ledger: CandidateStatus, CandidateRecord, NearMiss, Ledger, LedgerRecorder

Everything works on :class:`gebench.ir.Graph`; nothing here knows the ``ge`` facade.
"""

from . import ledger
from ._boundary import Boundary, BoundaryInput, decompose_boundary
from ._cycle import would_create_cycle
from ._matcher import Match, Matcher, MatchRecorder, MismatchKind, ir_attr_keys
from ._pattern import Capture, PatternGraph
from ._rewriter import ORIGIN_NAMES_ATTR, PASS_NAME_ATTR, RewriteError, RewriteReason, RewriteResult, rewrite

__all__ = [
    "ORIGIN_NAMES_ATTR",
    "PASS_NAME_ATTR",
    "Boundary",
    "BoundaryInput",
    "Capture",
    "Match",
    "MatchRecorder",
    "Matcher",
    "MismatchKind",
    "PatternGraph",
    "RewriteError",
    "RewriteReason",
    "RewriteResult",
    "decompose_boundary",
    "ir_attr_keys",
    "ledger",
    "rewrite",
    "would_create_cycle",
]
