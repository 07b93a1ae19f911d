"""Numerics and debugging over a run, as the core sees them: the protocol ``Run`` and the runtime call.

The reference executor (``gebench.exec``) and the debugging tools (``gebench.debug``) sit above the core:
they read runs, replay them through :func:`gebench.fusion.runtime.execute` and execute graphs. ``Run.verify``,
``Run.graph_after_rewrite``, ``Run.repro_bundle``, ``Run.bisect_numerics`` and ``compile(..., verify=True)``
reach them through :class:`RunTools`, which ``import gebench`` provides (:mod:`gebench._wiring`); the entry
points themselves are ``gebench.exec.equivalence.verify_run`` and ``gebench.debug.replay.graph_after_rewrite_ir``
(the IR graph; ``Run.graph_after_rewrite`` wraps it as ``Run.graph`` does), ``gebench.debug.repro_bundle`` and
``bisect_numerics``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from gebench.fusion._provided import Provided

if TYPE_CHECKING:
    from gebench import ir
    from gebench.fusion.runtime import Run

__all__ = ["RUN_TOOLS", "RunTools", "run_tools"]


class RunTools(Protocol):
    """What the core calls on the executor and the debugging tools."""

    def verify_run(self, run: Run, **kwargs: Any) -> Any:
        """Check ``run`` numerically (snapshots and each rewrite); returns a ``VerifyReport``."""

    def capture_rewrite(self, graph: ir.Graph, node_ids: Sequence[int], boundary: Any) -> Any:
        """The matched region of ``graph`` extracted before a rewrite, for :meth:`check_captured_rewrite`.

        Raises:
            Exception: the region cannot be extracted (the runtime records it and goes on).
        """

    def check_captured_rewrite(self, region: Any, graph: ir.Graph, added: Sequence[int]) -> Any:
        """Compare a captured region with the nodes that replaced it; an outcome with ``ok``, ``error``,
        ``max_abs``, ``max_rel``, ``cases``, ``failing_inputs``."""

    def graph_after_rewrite(self, run: Run, pass_name: str, k: int) -> ir.Graph:
        """The IR graph after the ``k``-th rewrite of ``pass_name``, by replaying ``run``."""

    def repro_bundle(self, run: Run, candidate: Any, directory: Any, **kwargs: Any) -> Any:
        """Write a folder reproducing ``candidate``'s verdict on the smallest graph around it."""

    def bisect_numerics(self, run: Run, seed: int = 0, **kwargs: Any) -> Any:
        """The first rewrite after which the graph is not numerically equivalent to the input (a result with
        ``.record``)."""


#: The executor and debugging tools, provided by ``import gebench``.
RUN_TOOLS: Provided[RunTools] = Provided("run tools (gebench.exec, gebench.debug)")


def run_tools() -> RunTools:
    """The provided :class:`RunTools`.

    Raises:
        gebench.fusion._provided.NotProvidedError: nothing provided them (``gebench`` was not imported).
    """
    return RUN_TOOLS.get()
