"""The pass-author API as the core sees it: the protocol the loader and the stage runtime call.

Pass files are written against GE's Python API (``ge.passes``, ``ge.graph``, ``ge.es``), which gebench's
facade (``gebench.ge``) implements. The core does not import it: it calls a :class:`PassApi`, which
``import gebench`` provides (:mod:`gebench._wiring` fills :data:`PASS_API` with the facade's adapter,
``gebench.ge.passes._engine``). Get it with :func:`pass_api`.

The objects the API hands the core are described by the small protocols below. Names with a leading
underscore are the facade's private (non-GE) members the engine side uses, as GE's C++ side uses its bindings.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from gebench.fusion._provided import Provided

if TYPE_CHECKING:
    from gebench import ir

__all__ = ["PASS_API", "GraphView", "MatchResultView", "MatcherConfig", "PassApi", "PassContextView",
           "PassPattern", "pass_api"]


class PassPattern(Protocol):
    """One pattern of a ``PatternFusionPass`` (GE's ``Pattern``), released to the engine."""

    _ir: ir.Graph  # the pattern graph
    _captures: list[Any]  # captured tensors: (pattern node id, output port) pairs
    _source: str  # ``file:line`` where the pass author made it ("" if unknown)


class MatcherConfig(Protocol):
    """GE's ``PatternMatcherConfig``: how a pass's patterns match."""

    def is_enable_const_value_match(self) -> bool: ...

    def is_enable_ir_attr_match(self) -> bool: ...


class PassContextView(Protocol):
    """GE's ``PassContext``: one per stage run, shared by the stage's passes."""

    def set_pass_name(self, name: str) -> None: ...

    def set_error_message(self, message: str) -> None: ...

    def get_error_message(self) -> str: ...


class MatchResultView(Protocol):
    """GE's ``MatchResult`` over one :class:`gebench.fusion.Match`; borrowed: it expires after the hook."""

    @classmethod
    def _create(cls, match: Any, graph: ir.Graph) -> MatchResultView: ...

    def _expire(self) -> None: ...


class GraphView(Protocol):
    """GE's ``Graph`` over an ``ir.Graph``: what ``run()`` receives and ``replacement()`` must return."""

    _ir: ir.Graph | None  # the IR graph behind it (None once consumed)
    _handle: Any  # None once the graph was consumed (a Pattern or a rewrite took it)

    @classmethod
    def _wrap(cls, graph: ir.Graph, owns: bool = ...) -> GraphView: ...

    def _invalidate(self) -> None: ...


class PassApi(Protocol):
    """What the core calls on the pass-author API. Implementations must be cheap to call repeatedly."""

    #: The stage objects in GE's order (GE's ``PassStage`` members).
    stages: Sequence[Any]
    #: GE's ``Graph`` class (``isinstance`` checks of a replacement; ``_wrap`` on the per-match path).
    graph_type: type[GraphView]
    #: GE's ``MatchResult`` class (``_create`` per match).
    match_result_type: type[MatchResultView]

    def prepare_import(self) -> None:
        """Make the names pass files import resolvable (``import ge``) before a pass file executes."""

    def wrap_graph(self, graph: ir.Graph) -> GraphView:
        """A view of ``graph`` that pass code (and users) see; it does not own the graph."""

    def wrap_node(self, node: ir.Node) -> Any:
        """GE's ``Node`` view of ``node`` (what a ``DecomposePass`` hook receives)."""

    def new_context(self, options: dict[str, str]) -> PassContextView:
        """A fresh ``PassContext`` whose ``get_option_value`` reads ``options``."""

    def patterns_of(self, instance: Any) -> list[PassPattern]:
        """``instance.patterns()`` as released patterns.

        Raises:
            Exception: whatever ``patterns()`` raised, or TypeError for a result that is not patterns.
        """

    def matcher_config_of(self, instance: Any) -> MatcherConfig | None:
        """A copy of the pass's matcher config, or None.

        Raises:
            AttributeError, TypeError: as GE, for a pass whose ``matcher_config`` is missing or of a wrong type.
        """

    def reflected_operator_lints(self) -> contextlib.AbstractContextManager[None]:
        """A context in which pass-author traps of the expression API (``0 + x``) are reported to the
        current hook session (:mod:`gebench.fusion.plugins.session`). Re-entrant."""

    def load_error_rule(self, exc: BaseException) -> str | None:
        """The name of GE's rule a pass file broke when loading it raised ``exc`` (``"registration"``,
        ``"class creation"``), or None when the API did not raise it."""


#: The pass API, provided by ``import gebench``.
PASS_API: Provided[PassApi] = Provided("pass API (gebench.ge.passes)")


def pass_api() -> PassApi:
    """The provided :class:`PassApi`.

    Raises:
        gebench.fusion._provided.NotProvidedError: nothing provided it (``gebench`` was not imported).
    """
    return PASS_API.get()
