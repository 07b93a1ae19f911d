"""Progress reports of long I/O work (imports, dump reads and writes) through an optional callback.

The public functions take ``progress: Callable[[int, int], None] | None`` and call it as ``progress(done,
total)``: ``done`` only grows, ``total`` stays the same, the last call has ``done == total``, and there are at
most about a hundred calls, so a callback may redraw a progress bar each time. The units are the function's
(nodes, characters); its docstring says which.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Progress", "ProgressCallback"]

#: ``progress(done, total)``.
ProgressCallback = Callable[[int, int], None]


class Progress:
    """Counts work done and calls ``report(done, total)`` about every hundredth of ``total``, and at :meth:`finish`.

    ``Progress(None, total)`` counts without reporting (call sites need no branches); :meth:`advance` then costs
    one addition and one comparison.
    """

    __slots__ = ("_report", "total", "done", "_next", "_step", "_last")

    def __init__(self, report: ProgressCallback | None, total: int) -> None:
        self._report = report
        self.total = max(int(total), 0)
        self.done = 0
        self._step = max(self.total // 100, 1)
        self._next = self._step if report is not None else 1 << 62
        self._last = -1

    @property
    def reporting(self) -> bool:
        """Whether there is a callback (callers may skip counting when there is none)."""
        return self._report is not None

    def advance(self, count: int = 1) -> None:
        """Count ``count`` more units done (never beyond ``total``)."""
        self.done = min(self.done + count, self.total)
        if self.done >= self._next:
            self._next = self.done + self._step
            self._last = self.done
            self._report(self.done, self.total)  # type: ignore[misc]

    def finish(self) -> None:
        """Report ``(total, total)`` unless that was the last report."""
        self.done = self.total
        if self._report is not None and self._last != self.total:
            self._last = self.total
            self._report(self.total, self.total)
