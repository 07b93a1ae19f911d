"""The facade's side of the core's :class:`gebench.fusion.plugins.api.PassApi`: GE's names for what the stage
runtime and the pass loader call (``Graph`` and ``Node`` views, ``PassContext``, ``MatchResult``, the bridge's
pattern and matcher-config readers, the ``ge`` import name).

``import gebench`` provides :class:`GePassApi` to the core (:mod:`gebench._wiring`); nothing else here is
called by the core directly.
"""

from __future__ import annotations

import contextlib
import os
import traceback
from typing import TYPE_CHECKING, Any

from . import _bridge
from ._native import MatchResult, PassContext
from ._reflect import reflected_operator_lints

if TYPE_CHECKING:
    from gebench import ir

__all__ = ["GePassApi"]

_HERE = os.path.dirname(os.path.abspath(__file__))
#: facade file -> the GE rule a pass file broke when that file raised while the pass file loaded
_RULE_FILES = {os.path.join(_HERE, "registry.py"): "registration", os.path.join(_HERE, "base.py"): "class creation"}


class GePassApi:
    """GE's Python pass API (``ge.passes`` and ``ge.graph``) as the core's ``PassApi``. Stateless; one instance
    serves every run."""

    def __init__(self) -> None:
        from gebench.ge.graph import Graph, Node

        from .base import PassStage

        self.stages = (PassStage.BEFORE_INFER_SHAPE, PassStage.AFTER_INFER_SHAPE,
                       PassStage.AFTER_BUILTIN_FUSION_PASS, PassStage.AFTER_ORIGIN_GRAPH_OPTIMIZE)
        self.graph_type = Graph
        self.node_type = Node
        self.match_result_type = MatchResult

    def prepare_import(self) -> None:
        """Put the ``ge`` import hook in place (a no-op when it is, or when another ``ge`` is imported)."""
        from gebench.ge import install

        install()

    def wrap_graph(self, graph: ir.Graph) -> Any:
        return self.graph_type._wrap(graph, owns=False)

    def wrap_node(self, node: ir.Node) -> Any:
        return self.node_type._wrap(node)

    def new_context(self, options: dict[str, str]) -> PassContext:
        return PassContext._create("", options)

    def patterns_of(self, instance: Any) -> list[Any]:
        return _bridge.patterns_of(instance)

    def matcher_config_of(self, instance: Any) -> Any:
        return _bridge.matcher_config_of(instance)

    def reflected_operator_lints(self) -> contextlib.AbstractContextManager[None]:
        return reflected_operator_lints()

    def load_error_rule(self, exc: BaseException) -> str | None:
        """``"registration"`` when a ``register_*_pass`` decorator raised ``exc``, ``"class creation"`` when a
        pass base class refused the class (``__init_subclass__``), else None."""
        files = {os.path.abspath(frame.filename) for frame in traceback.extract_tb(exc.__traceback__)}
        for path, rule in _RULE_FILES.items():  # registration first, as a decorator runs after class creation
            if path in files:
                return rule
        return None
