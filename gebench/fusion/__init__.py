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

Everything works on :class:`gebench.ir.Graph`; nothing here knows the ``ge`` facade (the pass plugins,
:mod:`gebench.fusion.plugins`, reach it only through the :class:`~gebench.fusion.plugins.api.PassApi` protocol).
Names are resolved on first access, so importing one submodule stays cheap.
"""

import importlib
from typing import Any

#: Public name -> the submodule defining it. Resolved on first access (PEP 562) and then cached, so importing
#: one submodule (``gebench.fusion.plugins.api`` at ``import gebench``) does not load the matcher and the IR.
_LAZY = {
    "Boundary": "._boundary",
    "BoundaryInput": "._boundary",
    "decompose_boundary": "._boundary",
    "would_create_cycle": "._cycle",
    "Match": "._matcher",
    "Matcher": "._matcher",
    "MatchRecorder": "._matcher",
    "MismatchKind": "._matcher",
    "ir_attr_keys": "._matcher",
    "Capture": "._pattern",
    "PatternGraph": "._pattern",
    "ORIGIN_NAMES_ATTR": "._rewriter",
    "PASS_NAME_ATTR": "._rewriter",
    "RewriteError": "._rewriter",
    "RewriteReason": "._rewriter",
    "RewriteResult": "._rewriter",
    "rewrite": "._rewriter",
}

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


def __getattr__(name: str) -> Any:
    if name == "ledger":
        value: Any = importlib.import_module(".ledger", __name__)
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
