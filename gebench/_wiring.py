"""The composition root: which upper-layer code fills the protocols the core declares.

The core (``fusion/``) calls two things it does not import (see ``docs/architecture.md``, "Layers"):

* the pass-author API (:class:`gebench.fusion.plugins.api.PassApi`): GE's ``ge.passes`` / ``ge.graph``,
  implemented by the facade (:class:`gebench.ge.passes._engine.GePassApi`);
* the run tools (:class:`gebench.fusion.run_tools.RunTools`): numerics from ``gebench.exec`` and replays,
  repro bundles and bisection from ``gebench.debug``.

:func:`install` (called by ``import gebench``) gives the core factories that import those layers on first use
only, so ``import gebench`` stays cheap. Idempotent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gebench.fusion.plugins.api import PASS_API
from gebench.fusion.run_tools import RUN_TOOLS

__all__ = ["RunToolsImpl", "install"]


def _ge_pass_api() -> Any:
    from gebench.ge.passes._engine import GePassApi

    return GePassApi()


class RunToolsImpl:
    """:class:`gebench.fusion.run_tools.RunTools` over ``gebench.exec`` and ``gebench.debug`` (each imported
    when first called)."""

    def verify_run(self, run: Any, **kwargs: Any) -> Any:
        from gebench.exec.equivalence import verify_run

        return verify_run(run, **kwargs)

    def capture_rewrite(self, graph: Any, node_ids: Sequence[int], boundary: Any) -> Any:
        from gebench.exec.equivalence import capture_rewrite

        return capture_rewrite(graph, node_ids, boundary)

    def check_captured_rewrite(self, region: Any, graph: Any, added: Sequence[int]) -> Any:
        from gebench.exec.equivalence import check_captured_rewrite

        return check_captured_rewrite(region, graph, added)

    def graph_after_rewrite(self, run: Any, pass_name: str, k: int) -> Any:
        from gebench.debug.replay import graph_after_rewrite_ir

        return graph_after_rewrite_ir(run, pass_name, k)

    def repro_bundle(self, run: Any, candidate: Any, directory: Any, **kwargs: Any) -> Any:
        from gebench.debug import repro_bundle

        return repro_bundle(run, candidate, directory, **kwargs)

    def bisect_numerics(self, run: Any, seed: int = 0, **kwargs: Any) -> Any:
        from gebench.debug import bisect_numerics

        return bisect_numerics(run, seed, **kwargs)


def install() -> None:
    """Provide the core's protocols (O(1); nothing is imported until the core asks)."""
    if not PASS_API.is_provided:
        PASS_API.provide(_ge_pass_api)
    if not RUN_TOOLS.is_provided:
        RUN_TOOLS.provide(RunToolsImpl)
