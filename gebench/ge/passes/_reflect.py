"""A pass-author trap of the expression API, reported while hooks run: ``0 + x`` / ``2 * x`` on a TensorHolder.

GE's ``TensorHolder.__radd__``/``__rmul__`` keep ``self`` first, so ``0 + x`` builds ``Add(x, 0)``. While
:func:`reflected_operator_lints` is active (the stage runtime holds it for a whole run), those operators record a
``reflected_operand_order`` lint in the current hook session and then behave exactly as GE's.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from gebench.fusion.plugins import session as _session

__all__ = ["reflected_operator_lints"]

_reflect_lock = threading.Lock()
_reflect_depth = 0
_reflect_saved: dict[str, Any] = {}


def _linting(orig: Any, op_type: str, dunder: str) -> Any:
    """``orig`` (a reflected operator of TensorHolder) that first lints in the current session, if any."""

    def reflected(self: Any, other: Any) -> Any:
        session = _session.current()
        if session is not None:
            session.lint(
                "reflected_operand_order",
                f"`{other!r} {'+' if op_type == 'Add' else '*'} x` builds {op_type}(x, {other!r}), "
                f"not {op_type}({other!r}, x): GE's TensorHolder.{dunder} keeps self first; write the "
                "operands in the order the target graph has them",
                source=_session.caller_location(), detail={"op_type": op_type, "operand": repr(other)})
        return orig(self, other)

    reflected.__wrapped__ = orig  # type: ignore[attr-defined]
    return reflected


@contextlib.contextmanager
def reflected_operator_lints() -> Iterator[None]:
    """Install the linting operators for the block (re-entrant and thread-safe: the first entry installs them,
    the last exit restores GE's)."""
    global _reflect_depth
    from gebench.ge.es import TensorHolder

    with _reflect_lock:
        if _reflect_depth == 0:
            for name, op in (("__radd__", "Add"), ("__rmul__", "Mul")):
                original = TensorHolder.__dict__.get(name)
                if original is None:
                    continue
                _reflect_saved[name] = original
                setattr(TensorHolder, name, _linting(original, op, name))
        _reflect_depth += 1
    try:
        yield
    finally:
        with _reflect_lock:
            _reflect_depth -= 1
            if _reflect_depth == 0:
                for name, original in _reflect_saved.items():
                    setattr(TensorHolder, name, original)
                _reflect_saved.clear()
