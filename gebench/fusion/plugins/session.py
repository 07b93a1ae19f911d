"""The hook session: how library code called from inside a pass hook reaches the running stage runtime.

The runtime (:mod:`gebench.fusion.runtime`) activates a session while it calls user hooks; facade functions
(``SubgraphRewriter.replace``, ``infer_shape``, ``report_fuse``, ``Pattern.capture_tensor``, node setters)
report to it so that rewrites done inside ``FusionBasePass.run`` and pass-author traps land in the ledger.
Outside a run (e.g. a unit test calling a hook directly) there is no session and these reports are dropped.

:class:`HookSession` is the protocol the runtime implements and the facade calls; the facade re-exports
this module as ``gebench.ge.passes._session``.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import os
import sys
from collections.abc import Iterator
from typing import Any, Protocol

__all__ = ["HookSession", "activate", "caller_location", "current", "function_location"]


class HookSession(Protocol):
    """What the runtime offers to facade code during a hook call."""

    pass_name: str

    def lint(self, rule: str, message: str, *, source: str = "", detail: dict[str, Any] | None = None) -> None: ...

    def note_infer_shape(self, replacement_ir: Any) -> None: ...

    def note_rewrite(self, *, boundary_nodes: list[Any], result: Any, graph: Any, source: str,
                     with_context: bool = False) -> None: ...

    def note_rewrite_failure(self, *, boundary_nodes: list[Any], reason: str, graph: Any, source: str) -> None: ...

    def note_report_fuse(self, before: list[Any], after: list[Any], source: str) -> None: ...


_current: contextvars.ContextVar[Any] = contextvars.ContextVar("ge_passes_hook_session", default=None)


def current() -> HookSession | None:
    """The active session, or None outside a runtime hook call."""
    return _current.get()


@contextlib.contextmanager
def activate(session: HookSession | None) -> Iterator[None]:
    """Make ``session`` current while the block runs (context-local)."""
    token = _current.set(session)
    try:
        yield
    finally:
        _current.reset(token)


#: gebench's package directory: frames under it are gebench's, not the pass author's.
_PKG_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def caller_location() -> str:
    """``file:line`` of the nearest stack frame outside gebench (the pass author's line). O(stack depth)."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not os.path.abspath(filename).startswith(_PKG_DIR + os.sep):
            return f"{filename}:{frame.f_lineno}"
        frame = frame.f_back
    return ""


def function_location(fn: Any) -> str:
    """``file:line`` where ``fn`` (unwrapped) is defined; ``""`` if unknown."""
    fn = inspect.unwrap(fn) if callable(fn) else fn
    code = getattr(fn, "__code__", None)
    if code is None:
        return ""
    return f"{code.co_filename}:{code.co_firstlineno}"
