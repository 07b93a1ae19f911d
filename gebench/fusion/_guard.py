"""Guards around pass code: process exits raised by pass code, a real Ctrl-C, and hook timeouts.

GE calls pass code (pass files, ``__init__``, hooks) from C++: whatever the Python code raises comes back as an
error of that call, so ``sys.exit()``, ``raise SystemExit`` or ``raise KeyboardInterrupt`` in a pass file or a hook
is one more failure of the pass code, never the end of the compiler. gebench turns such an exception into
:class:`PassCodeExit` (an ordinary ``Exception``), so the GE rule of the place applies: a pass file that does it
fails the plugin load, ``run``/``replacement``/``__init__`` fail the pass, ``meet_requirements`` counts as False.

A real Ctrl-C is not pass code's doing: while :func:`interrupts_tracked` is active on the main thread, SIGINT is
noted before the previous handler raises ``KeyboardInterrupt``, and :func:`pass_code_exit` lets that one through
so it stops the run (the CLI exits 130).

:func:`hook_timeout` bounds each hook call (``compile(..., hook_timeout=)``, ``--hook-timeout``; off by default,
as in GE, which has no such bound): a hook running past it is interrupted and its pass fails with
:class:`HookTimedOut` naming the pass, the hook and the ``file:line`` where it was interrupted.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import logging
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from typing import Any

__all__ = ["HookTimedOut", "PassCodeExit", "call_bounded", "hook_limit", "hook_timeout", "interrupts_tracked",
           "pass_code_exit", "user_location"]

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


# ------------------------------------------------------------------------------------------ hook timeouts
class HookTimedOut(BaseException):
    """A hook ran past the hook timeout and was interrupted; its pass fails.

    A ``BaseException``, so that neither the pass code's ``except Exception`` nor the runtime's treatment of an
    ordinary hook exception (``meet_requirements`` raising counts as False) swallows it.

    Attributes:
        reason: the failure reason (pass, hook, limit and where it was interrupted).
        hook: the hook's name; where: ``file:line`` where it was interrupted.
    """

    def __init__(self, reason: str, hook: str, where: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.hook = hook
        self.where = where


class _Interrupt(BaseException):
    """Raised inside the hook when its time is up (turned into :class:`HookTimedOut` by :func:`call_bounded`)."""


#: Seconds between repeated interrupts of a hook that caught the first one and runs on.
_REPEAT = 0.05
#: After this many seconds past the limit a hook still inside gebench's own code is interrupted there anyway.
_GRACE = 2.0

_limit: contextvars.ContextVar[float | None] = contextvars.ContextVar("gebench_hook_timeout", default=None)


def hook_limit() -> float | None:
    """The hook timeout in effect (seconds), or None (no limit, GE's behaviour)."""
    return _limit.get()


def _in_gebench(filename: str) -> bool:
    return os.path.abspath(filename).startswith(_PKG_DIR + os.sep)


def _user_frame(frame: Any) -> Any:
    """The innermost frame outside gebench, starting at ``frame`` (None if there is none)."""
    while frame is not None and _in_gebench(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def _where(frame: Any, prefer: str = "") -> str:
    """``file:line`` of the innermost frame of file ``prefer`` (the pass file), else of the innermost frame
    outside gebench; ``""`` when there is none."""
    f = frame
    while prefer and f is not None:
        if f.f_code.co_filename == prefer:
            return f"{prefer}:{f.f_lineno}"
        f = f.f_back
    user = _user_frame(frame)
    return f"{user.f_code.co_filename}:{user.f_lineno}" if user is not None else ""


def _hook_file(hook: Any, args: tuple[Any, ...]) -> str:
    """The file of the pass code behind ``hook``: the method's, the class's, or the first argument's class's."""
    code = getattr(getattr(hook, "__func__", hook), "__code__", None)
    if code is not None and not _in_gebench(code.co_filename):
        return code.co_filename
    target = hook if isinstance(hook, type) else type(args[0]) if args else None
    try:
        return inspect.getfile(target) if target is not None else ""
    except (TypeError, OSError):
        return ""


class _Call:
    """The guarded hook call in progress."""

    __slots__ = ("deadline", "fired", "where", "armed", "file")

    def __init__(self, deadline: float, file: str) -> None:
        self.deadline = deadline
        self.fired = False
        self.where = ""
        self.armed = True
        self.file = file


class _AlarmState:
    """SIGALRM handler and timer bookkeeping of the main thread while hook timeouts are on."""

    def __init__(self) -> None:
        self.depth = 0
        self.previous_handler: Any = None
        self.previous_deadline: float | None = None
        self.previous_interval = 0.0
        self.call: _Call | None = None


_alarm = _AlarmState()


def _can_signal() -> bool:
    return hasattr(signal, "SIGALRM") and hasattr(signal, "setitimer") and \
        threading.current_thread() is threading.main_thread()


def _on_alarm(signum: int, frame: Any) -> None:
    now = time.monotonic()
    due = _alarm.previous_deadline
    if due is not None and now >= due - 1e-3:
        # the caller's own timer (pytest-timeout, say) is due: hand it on
        _alarm.previous_deadline = due + _alarm.previous_interval if _alarm.previous_interval else None
        previous = _alarm.previous_handler
        if callable(previous):
            previous(signum, frame)
    call = _alarm.call
    if call is None or not call.armed:
        return  # a late tick of a disarmed timer
    if now < call.deadline:
        signal.setitimer(signal.ITIMER_REAL, max(call.deadline - now, 1e-3), _REPEAT)
        return
    if _user_frame(frame) is not frame and now < call.deadline + _GRACE:
        return  # inside gebench's own code (a graph edit, say): interrupt at the next user line instead
    call.fired = True
    call.where = call.where or _where(frame, call.file)
    raise _Interrupt


def _arm(call: _Call, limit: float) -> None:
    first = limit
    if _alarm.previous_deadline is not None:  # an outer timer due first fires first (and is handed on)
        first = min(first, max(_alarm.previous_deadline - time.monotonic(), 1e-3))
    signal.setitimer(signal.ITIMER_REAL, first, _REPEAT)


def _disarm(call: _Call) -> None:
    call.armed = False
    signal.setitimer(signal.ITIMER_REAL, 0)
    _restore_previous_timer()


def _restore_previous_timer() -> None:
    if _alarm.previous_deadline is not None:
        remaining = max(_alarm.previous_deadline - time.monotonic(), 1e-3)
        signal.setitimer(signal.ITIMER_REAL, remaining, _alarm.previous_interval)


@contextlib.contextmanager
def hook_timeout(seconds: float | None) -> Iterator[None]:
    """Bound every hook called while the block runs to ``seconds`` (None: no bound, as in GE).

    On the main thread (POSIX) the bound is a SIGALRM timer: it interrupts pure-Python loops and ``time.sleep``;
    a long call into C (one huge numpy operation) is interrupted when it returns. Elsewhere (other threads,
    Windows) it is a trace function checked on every line of pass code: slower hooks, no interruption of C
    calls or sleeps, and it stays off while a debugger's or coverage's trace function is set. A SIGALRM handler
    and timer set by the caller keep working (they are handed on) and are restored afterwards.

    Raises:
        ValueError: ``seconds`` is not a positive number.
    """
    if seconds is None:
        yield
        return
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds > 0 or seconds == float("inf"):
        raise ValueError(f"hook_timeout must be a positive number of seconds, got {seconds!r}")
    token = _limit.set(float(seconds))
    installed = False
    if _can_signal():
        with _lock:
            if _alarm.depth == 0:
                _alarm.previous_handler = signal.signal(signal.SIGALRM, _on_alarm)
                remaining, interval = signal.getitimer(signal.ITIMER_REAL)
                _alarm.previous_deadline = time.monotonic() + remaining if remaining > 0 else None
                _alarm.previous_interval = interval
            _alarm.depth += 1
            installed = True
    try:
        yield
    finally:
        _limit.reset(token)
        if installed:
            with _lock:
                _alarm.depth -= 1
                if _alarm.depth == 0:
                    signal.setitimer(signal.ITIMER_REAL, 0)
                    signal.signal(signal.SIGALRM, _alarm.previous_handler
                                  if _alarm.previous_handler is not None else signal.SIG_DFL)
                    _restore_previous_timer()
                    _alarm.previous_handler = None
                    _alarm.previous_deadline = None


def _hook_name(hook: Any) -> str:
    if isinstance(hook, type):
        return "__init__"
    name = getattr(hook, "__name__", "") or type(hook).__name__
    return {"patterns_of": "patterns"}.get(name, name)


def call_bounded(limit: float, pass_name: str, hook: Any, *args: Any) -> Any:
    """``hook(*args)``, interrupted after ``limit`` seconds.

    Raises:
        HookTimedOut: the hook ran past ``limit`` (also when it caught the interrupt and returned afterwards).
    """
    call = _Call(time.monotonic() + limit, _hook_file(hook, args))
    signalled = _can_signal() and signal.getsignal(signal.SIGALRM) is _on_alarm
    try:
        try:
            if signalled:
                outer, _alarm.call = _alarm.call, call
                _arm(call, limit)
                try:
                    result = hook(*args)
                finally:
                    _disarm(call)
                    _alarm.call = outer
            else:
                result = _call_traced(call, hook, args)
        except _Interrupt:
            pass
        else:
            if not call.fired:
                return result
    except _Interrupt:  # a last alarm between the hook's return and the disarm
        pass
    name = _hook_name(hook)
    where = call.where or "an unknown line"
    raise HookTimedOut(f"pass {pass_name}: hook {name} ran past the hook timeout of {limit:g} s and was "
                       f"interrupted at {where}; make it finish sooner (GE itself has no timeout: the compile "
                       "would hang)", name, call.where)


def _call_traced(call: _Call, hook: Any, args: tuple[Any, ...]) -> Any:
    """The trace-based bound (threads other than the main one, or no SIGALRM)."""
    if sys.gettrace() is not None:
        _log.debug("a trace function is set (debugger, coverage): the hook timeout is off for this hook call")
        return hook(*args)

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "line" and time.monotonic() >= call.deadline:
            call.fired = True
            call.where = call.where or _where(frame, call.file)
            raise _Interrupt
        return local

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        if event != "call" or _in_gebench(frame.f_code.co_filename):
            return None  # gebench's own code runs untraced: an edit is never cut in half
        return local

    sys.settrace(tracer)
    try:
        return hook(*args)
    finally:
        sys.settrace(None)
