"""Debugging tools over a compile run, on top of :mod:`gebench.fusion`, :mod:`gebench.exec` and :mod:`gebench.io`.

Public surface::

    replay(run, cap) -> Run                      the run again, stopped after ``cap`` rewrites
    rewrite_records(run) -> [RewriteStep]        the run's rewrites in order (REPLACED ledger records)
    graph_after_rewrites(run, k) -> ir.Graph     the graph after the run's first k rewrites
    graph_after_rewrite(run, pass_name, k)       the graph after the k-th rewrite of one pass
    repro_bundle(run, candidate, directory)      a folder reproducing one candidate's verdict
    bisect_numerics(run, seed=0) -> record|None  the first rewrite after which the graph is not equivalent

``Run.graph_after_rewrite``, ``Run.repro_bundle`` and ``Run.bisect_numerics`` call these (``docs/workbench.md``,
"Debugging tools").
"""

from .bisect import BisectResult, bisect_numerics
from .replay import (
    ReplayError,
    RewriteStep,
    graph_after_rewrite,
    graph_after_rewrites,
    replay,
    rewrite_records,
)
from .repro import ReproBundle, ReproError, repro_bundle, subgraph_around

__all__ = [
    "BisectResult",
    "ReplayError",
    "ReproBundle",
    "ReproError",
    "RewriteStep",
    "bisect_numerics",
    "graph_after_rewrite",
    "graph_after_rewrites",
    "replay",
    "repro_bundle",
    "rewrite_records",
    "subgraph_around",
]
