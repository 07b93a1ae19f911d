"""Guards around pass code: process exits raised by pass code, and a real Ctrl-C.

GE calls pass code (pass files, ``__init__``, hooks) from C++: whatever the Python code raises comes back as an
error of that call, so ``sys.exit()``, ``raise SystemExit`` or ``raise KeyboardInterrupt`` in a pass file or a hook
is one more failure of the pass code, never the end of the compiler. gebench turns such an exception into
:class:`PassCodeExit` (an ordinary ``Exception``), so the GE rule of the place applies: a pass file that does it
fails the plugin load, ``run``/``replacement``/``__init__`` fail the pass, ``meet_requirements`` counts as False.

A real Ctrl-C is not pass code's doing: while :func:`interrupts_tracked` is active on the main thread, SIGINT is
noted before the previous handler raises ``KeyboardInterrupt``, and :func:`pass_code_exit` lets that one through
so it stops the run (the CLI exits 130).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import traceback
from collections.abc import Iterator
from typing import Any

__all__ = ["PassCodeExit", "interrupts_tracked", "pass_code_exit", "user_location"]

_log = logging.getLogger(__name__)

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class PassCodeExit(Exception):
    """Pass code raised ``SystemExit`` or ``KeyboardInterrupt`` (not a real Ctrl-C).

    Attributes:
        original: the ``SystemExit``/``KeyboardInterrupt`` instance.
        where: ``file:line`` in the pass code where it was raised (``""`` if unknown).
    """

    def __init__(self, original: BaseException, where: str) -> None:
        self.original = original
        self.where = where
        if isinstance(original, SystemExit):
            what = f"SystemExit({original.code!r}) (sys.exit)"
        else:
            what = f"{type(original).__name__}({', '.join(repr(a) for a in original.args)})"
        super().__init__(f"pass code raised {what}; in GE that is an error of the pass code, not the end of "
                         "the compiler: raise an ordinary exception (or return a failure) instead")


def user_location(tb: Any) -> str:
    """``file:line`` of the innermost traceback entry outside gebench (``""`` if none)."""
    where = ""
    for frame in traceback.extract_tb(tb):
        if not os.path.abspath(frame.filename).startswith(_PKG_DIR + os.sep):
            where = f"{frame.filename}:{frame.lineno}"
    return where


# ------------------------------------------------------------------------------------------ real Ctrl-C
_lock = threading.Lock()
_depth = 0
_signalled = False
_previous: Any = None


def _on_sigint(signum: int, frame: Any) -> None:
    global _signalled
    _signalled = True
    previous = _previous
    if callable(previous):
        previous(signum, frame)
        return
    if previous == signal.SIG_IGN:
        _signalled = False
        return
    raise KeyboardInterrupt


@contextlib.contextmanager
def interrupts_tracked() -> Iterator[None]:
    """Note real SIGINTs while the block runs (main thread only; elsewhere a no-op, since only the main thread
    receives signals). Nested uses share one handler; the previous handler is restored at the outermost exit."""
    global _depth, _signalled, _previous
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    with _lock:
        if _depth == 0:
            try:
                _previous = signal.signal(signal.SIGINT, _on_sigint)
            except (ValueError, OSError) as exc:  # e.g. an embedded interpreter without signal support
                _log.debug("cannot watch SIGINT: %s", exc)
                _previous = None
            else:
                _signalled = False
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                if signal.getsignal(signal.SIGINT) is _on_sigint:
                    signal.signal(signal.SIGINT, _previous if _previous is not None else signal.default_int_handler)
                _previous = None
                _signalled = False


def _real_interrupt() -> bool:
    """Whether a ``KeyboardInterrupt`` being handled now may come from a real SIGINT."""
    if threading.current_thread() is not threading.main_thread():
        return False
    if _depth == 0 or signal.getsignal(signal.SIGINT) is not _on_sigint:
        return True  # nobody is watching: assume the user pressed Ctrl-C
    return _signalled


def pass_code_exit(exc: BaseException) -> PassCodeExit | None:
    """A :class:`PassCodeExit` for ``exc`` when it is ``SystemExit``/``KeyboardInterrupt`` raised by pass code;
    None for anything else, and for a ``KeyboardInterrupt`` that a real Ctrl-C caused (let it propagate)."""
    if isinstance(exc, SystemExit) or (isinstance(exc, KeyboardInterrupt) and not _real_interrupt()):
        err = PassCodeExit(exc, user_location(exc.__traceback__))
        err.__cause__ = exc
        return err
    return None
