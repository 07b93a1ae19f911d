"""Debugging tools over a compile run, on top of :mod:`gebench.fusion`, :mod:`gebench.exec` and :mod:`gebench.io`.

Public surface::

    replay(run, cap) -> Run                      the run again, stopped after ``cap`` rewrites
    rewrite_records(run) -> [RewriteStep]        the run's rewrites in order (REPLACED ledger records)
    input_graph(run) -> Graph                    a copy of the run's input (its PreRunBegin snapshot)
    graph_after_rewrites(run, k) -> Graph        the graph after the run's first k rewrites
    graph_after_rewrite(run, pass_name, k)       the graph after the k-th rewrite of one pass
    subgraph_around(run, candidate)              (the standalone graph around one candidate, its record)
    repro_bundle(run, candidate, directory)      a folder reproducing one candidate's verdict
    bisect_numerics(run, seed=0) -> record|None  the first rewrite after which the graph is not equivalent

Every graph these hand out is a ``ge.graph.Graph`` (GE's graph API: ``get_direct_nodes``, ``find_node_by_name``,
...), as ``Run.graph`` is; ``.ir`` on it is the ``ir.Graph`` behind it. (``gebench.debug.replay`` and
``gebench.debug.repro`` keep ``*_ir`` variants returning the IR graph itself for gebench's own code.)

``Run.graph_after_rewrite``, ``Run.repro_bundle`` and ``Run.bisect_numerics`` call these (``docs/workbench.md``,
"Debugging tools").
"""

from .bisect import BisectResult, bisect_numerics
from .replay import (
    ReplayError,
    RewriteStep,
    graph_after_rewrite,
    graph_after_rewrites,
    input_graph,
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
    "input_graph",
    "replay",
    "repro_bundle",
    "rewrite_records",
    "subgraph_around",
]
