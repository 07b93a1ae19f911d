"""GE's custom-pass stages and the graph dump points of a compile: names only.

The runtime (:mod:`gebench.fusion.runtime`) runs the stages in :data:`STAGE_ORDER` and keeps a snapshot at each
dump point; the layers above (``api``, ``cli``, ``debug``) order snapshots and dump files by these names. This
module imports nothing, so reading the names does not load the runtime.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

__all__ = ["DUMP_ORDER", "DUMP_SUFFIXES", "PRE_RUN_SUFFIX", "STAGE_ORDER", "in_dump_order"]

_T = TypeVar("_T")

#: GE's stage values in execution order.
STAGE_ORDER = ("BeforeInferShape", "AfterInferShape", "AfterBuiltinFusionPass", "AfterOriginGraphOptimize")
#: The graph dump name GE writes after each stage (``PreRunBegin`` is written at compile entry).
DUMP_SUFFIXES = {
    "BeforeInferShape": "RunCustomPassBeforeInfershape",
    "AfterInferShape": "RunCustomPass_AfterInferShape",
    "AfterBuiltinFusionPass": "RunCustomPassAfterBuiltinFusionPass",
    "AfterOriginGraphOptimize": "RunCustomPassAfterOriginGraphOptimize",
}
#: The dump GE writes at compile entry: the compile's input.
PRE_RUN_SUFFIX = "PreRunBegin"
#: Every dump point of a compile, in the order GE writes them.
DUMP_ORDER = (PRE_RUN_SUFFIX, *DUMP_SUFFIXES.values())


def in_dump_order(snapshots: Mapping[str, _T]) -> dict[str, _T]:
    """``snapshots`` (dump name -> anything) with GE's dump points first, in :data:`DUMP_ORDER`, then any other
    names in their own order. O(len(snapshots)); reads every value once (a lazy snapshot map builds them)."""
    order = [s for s in DUMP_ORDER if s in snapshots]
    order += [s for s in snapshots if s not in DUMP_ORDER]
    return {s: snapshots[s] for s in order}
