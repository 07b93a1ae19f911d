"""Progress of long work: the callback protocol library code reports through, and a terminal bar for the CLI.

Library code (``gebench.load``, ``gebench.compile``, ``gebench.api.write_dumps``,
``gebench.fusion.runtime.execute``) takes ``progress=``, a :data:`ProgressCallback`, and calls it as
``progress(step, done, total)``:

* ``step`` names what the user waits on (``"load model.onnx"``, ``"compile"``, ``"InferShape"``,
  ``"BeforeInferShape GebenchMulOnePass"``, ``"dump"``);
* ``done`` counts up to ``total`` (``total`` >= 1): the calls of one step never go back, and a step ends with
  a call where ``done == total``. A later call with the same name after that starts the step again;
* a step with nothing to count is reported ``(step, 0, 1)`` when it starts and ``(step, 1, 1)`` when it ends.

Library code never prints; the callback decides what to show. :func:`terminal_progress` makes the one the CLI
uses: a tqdm bar per running step on stderr, shown only for a step that has run for ``delay`` seconds (one
second; ``GEBENCH_PROGRESS_DELAY`` overrides it), refreshed while it runs so a step without intermediate
counts still shows its elapsed time, and cleared when the step ends. It is None (no progress at all) when
asked to be quiet or when stderr is not a terminal.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TextIO

__all__ = [
    "DELAY_ENV",
    "ProgressCallback",
    "TqdmProgress",
    "accepts_progress",
    "counts_for",
    "report",
    "step",
    "terminal_progress",
]

_log = logging.getLogger(__name__)

#: ``progress(step, done, total)``; see the module docstring.
ProgressCallback = Callable[[str, int, int], None]
#: The two-argument form the I/O functions take, ``progress(done, total)`` for one known step.
CountCallback = Callable[[int, int], None]

#: Environment variable: seconds a step runs before its bar appears (default :data:`DEFAULT_DELAY`).
DELAY_ENV = "GEBENCH_PROGRESS_DELAY"
#: A step shorter than this many seconds shows no bar.
DEFAULT_DELAY = 1.0
#: tqdm's own delay while a bar is made (it draws nothing then; :class:`TqdmProgress` draws it right after).
_NOT_NOW = 1e9
#: What a bar shows: the step, its share done, ``done/total`` and the time it has run (no rate: the units of
#: different steps are not alike).
BAR_FORMAT = "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}]"
#: Seconds between refreshes of the shown bars (elapsed time of a step without intermediate counts).
REFRESH_INTERVAL = 0.25


def report(progress: ProgressCallback | None, step: str, done: int, total: int) -> None:
    """``progress(step, done, total)`` when there is a callback."""
    if progress is not None:
        progress(step, done, total)


def counts_for(progress: ProgressCallback, step: str) -> CountCallback:
    """The ``progress(done, total)`` form for one step, for functions that report a single count."""

    def counts(done: int, total: int) -> None:
        progress(step, done, total)

    return counts


def accepts_progress(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` takes a ``progress`` keyword argument (or ``**kwargs``)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any((p.name == "progress" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))
               or p.kind == p.VAR_KEYWORD for p in params)


def progress_delay(default: float = DEFAULT_DELAY) -> float:
    """Seconds before a step's bar appears: ``GEBENCH_PROGRESS_DELAY`` when it holds a number >= 0."""
    text = os.environ.get(DELAY_ENV, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        _log.warning("%s=%r is not a number of seconds; using %s", DELAY_ENV, text, default)
        return default
    return value if value >= 0 else default


class _Step:
    __slots__ = ("name", "started", "done", "total", "bar")

    def __init__(self, name: str, done: int, total: int) -> None:
        self.name = name
        self.started = time.monotonic()
        self.done = done
        self.total = total
        self.bar: Any = None


class TqdmProgress:
    """A :data:`ProgressCallback` drawing a tqdm bar per running step on ``stream``.

    A bar appears once its step has run for ``delay`` seconds, is refreshed every
    :data:`REFRESH_INTERVAL` seconds by a daemon thread while steps run, and is removed when the step ends
    (``done >= total``). :meth:`close` removes every bar left (a step a failure interrupted). A stream that
    fails to write turns the bars off (logged), it never fails the work reported on.

    Args:
        stream: where the bars go (default: ``sys.stderr`` at the time of the call).
        delay: seconds before a step shows (default :func:`progress_delay`).
    """

    def __init__(self, stream: TextIO | None = None, *, delay: float | None = None) -> None:
        self._stream = stream
        self.delay = progress_delay() if delay is None else delay
        self._steps: dict[str, _Step] = {}
        self._lock = threading.RLock()
        self._wake = threading.Event()
        self._stopped = False
        self._ticker: threading.Thread | None = None
        self.broken = False

    def __call__(self, step: str, done: int, total: int) -> None:
        with self._lock:
            if self._stopped or self.broken:
                return
            state = self._steps.get(step)
            if state is None:
                if done >= total:  # a step that ended in its first report never waited anybody
                    return
                state = self._steps[step] = _Step(step, done, total)
                self._start_ticker()
            state.done, state.total = done, total
            if done >= total:
                del self._steps[step]
                self._guard(self._close_bar, state)
                return
            if state.bar is None and time.monotonic() - state.started >= self.delay:
                self._guard(self._open_bar, state)
            elif state.bar is not None:
                self._guard(self._update_bar, state)

    def __enter__(self) -> TqdmProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Remove every bar and stop the refresh thread."""
        with self._lock:
            self._stopped = True
            steps, self._steps = list(self._steps.values()), {}
            for state in steps:
                self._guard(self._close_bar, state)
        self._wake.set()
        if self._ticker is not None and self._ticker is not threading.current_thread():
            self._ticker.join(2)

    # ------------------------------------------------------------------ bars
    def _open_bar(self, state: _Step) -> None:
        from tqdm import tqdm

        stream = self._stream or sys.stderr
        # a terminal that reports no size (a fresh pseudo-terminal, some consoles) is taken as 80x24: tqdm would
        # draw nothing in 0 rows
        sized = min(_terminal_size(stream)) > 0
        state.bar = tqdm(total=state.total, initial=state.done, desc=state.name, file=stream, leave=False,
                         dynamic_ncols=sized, ncols=None if sized else 80, nrows=None if sized else 24,
                         mininterval=0, miniters=1, bar_format=BAR_FORMAT, delay=_NOT_NOW)
        # drawn first here, with the time the step has run so far (tqdm would draw once at 00:00 on creation)
        bar = state.bar
        bar.delay = 0
        bar.start_t = bar.last_print_t = bar._time() - (time.monotonic() - state.started)
        bar.refresh()

    @staticmethod
    def _update_bar(state: _Step) -> None:
        bar = state.bar
        if bar.total != state.total:
            bar.total = state.total
        bar.n = state.done
        bar.refresh()

    @staticmethod
    def _close_bar(state: _Step) -> None:
        if state.bar is not None:
            state.bar.n = state.done
            state.bar.close()
            state.bar = None

    def _guard(self, action: Callable[[_Step], None], state: _Step) -> None:
        try:
            action(state)
        except (OSError, ValueError) as exc:  # a closed or broken stream: stop drawing, keep working
            _log.warning("progress bars turned off: cannot write them (%s)", exc)
            self.broken = True

    # ------------------------------------------------------------------ refresh thread
    def _start_ticker(self) -> None:
        if self._ticker is None:
            self._ticker = threading.Thread(target=self._tick, name="gebench-progress", daemon=True)
            self._ticker.start()

    def _tick(self) -> None:
        while not self._wake.wait(REFRESH_INTERVAL):
            with self._lock:
                if self._stopped or self.broken:
                    return
                now = time.monotonic()
                for state in list(self._steps.values()):
                    if state.bar is None:
                        if now - state.started >= self.delay:
                            self._guard(self._open_bar, state)
                    else:
                        self._guard(lambda s: s.bar.refresh(), state)


def _terminal_size(stream: TextIO) -> tuple[int, int]:
    """(columns, lines) of the terminal behind ``stream``; zeros when it reports none (or is no terminal)."""
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, ValueError, OSError, io.UnsupportedOperation):
        return 0, 0
    return size.columns, size.lines


def terminal_progress(*, quiet: bool = False, stream: TextIO | None = None,
                      delay: float | None = None) -> TqdmProgress | None:
    """The CLI's progress: a :class:`TqdmProgress` on ``stream`` (stderr), or None when ``quiet`` or when
    ``stream`` is not a terminal (a pipe, a file, a closed stream)."""
    if quiet:
        return None
    stream = stream if stream is not None else sys.stderr
    try:
        tty = bool(stream is not None and stream.isatty())
    except (AttributeError, ValueError, OSError):
        tty = False
    if not tty:
        return None
    return TqdmProgress(stream, delay=delay)


@contextlib.contextmanager
def step(progress: ProgressCallback | None, name: str, total: int = 1) -> Iterator[CountCallback | None]:
    """Report step ``name`` around a block: ``(name, 0, total)`` on entry, ``(name, total, total)`` on exit
    (also when the block raises) unless the block's own counts already ended it.

    Yields the ``progress(done, total)`` form for the block's counts (for an I/O function's ``progress=``),
    or None when ``progress`` is None.
    """
    if progress is None:
        yield None
        return
    last = [0, max(1, total)]

    def counts(done: int, of: int) -> None:
        last[0], last[1] = done, of
        progress(name, done, of)

    counts(0, last[1])
    try:
        yield counts
    finally:
        if last[0] < last[1]:
            progress(name, last[1], last[1])
