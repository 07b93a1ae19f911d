"""The sweep's progress bar: done / failed / remaining and the slowest running task, on stderr (tqdm).

Off when stderr is not a terminal or when asked to be quiet; then it only counts. Thread-safe: tasks are
reported started from the Dask client's event thread and finished from the driver's loop; a ticker thread
refreshes the slowest-task age once a second while the bar is shown.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO

__all__ = ["SweepProgress"]


class SweepProgress:
    """Counts of a sweep in flight (``done``, ``failed``, ``remaining``) and, when ``enabled``, a tqdm bar.

    Args:
        total: tasks this sweep will run.
        enabled: None shows the bar iff ``stream`` is a terminal.
        stream: where the bar goes (default stderr).
    """

    def __init__(self, total: int, *, enabled: bool | None = None, stream: TextIO | None = None) -> None:
        self.total = total
        self.done = 0
        self.failed = 0
        self._running: dict[str, tuple[str, float]] = {}
        self._noted = False
        self._lock = threading.Lock()
        stream = stream or sys.stderr
        if enabled is None:
            enabled = bool(getattr(stream, "isatty", lambda: False)())
        self._bar: Any = None
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        if enabled and total:
            from tqdm import tqdm

            self._bar = tqdm(total=total, file=stream, unit="task", dynamic_ncols=True, desc="sweep")
            self._ticker = threading.Thread(target=self._tick, name="gebench-sweep-progress", daemon=True)
            self._ticker.start()

    @property
    def remaining(self) -> int:
        return self.total - self.done

    def started(self, key: str, name: str, when: float | None = None) -> None:
        """Task ``key`` (model ``name``) began running on a worker."""
        with self._lock:
            self._running[key] = (name, when if when is not None else time.time())
            self._noted = False

    def finished(self, key: str, ok: bool) -> None:
        """Task ``key`` has its row (``ok``: status SUCCESS)."""
        with self._lock:
            self._running.pop(key, None)
            self._noted = False
            self.done += 1
            self.failed += 0 if ok else 1
        if self._bar is not None:
            self._bar.update(1)
            self._refresh()

    def slowest(self) -> tuple[str, float] | None:
        """(model name, seconds running) of the longest-running task, None when none runs."""
        with self._lock:
            if not self._running:
                return None
            name, since = min(self._running.values(), key=lambda v: v[1])
        return name, max(0.0, time.time() - since)

    def note(self, text: str) -> None:
        """Show ``text`` instead of the counts until a task starts or finishes (a phase before tasks run)."""
        self._noted = True
        if self._bar is not None:
            self._bar.set_postfix_str(text, refresh=True)

    def text(self) -> str:
        """``failed=F left=R slowest: NAME 12s`` (what the bar shows after its counter)."""
        parts = [f"failed={self.failed}", f"left={self.remaining}"]
        slow = self.slowest()
        if slow is not None:
            parts.append(f"slowest: {slow[0]} {slow[1]:.0f}s")
        return " ".join(parts)

    def _refresh(self) -> None:
        if self._bar is not None:
            self._bar.set_postfix_str(self.text(), refresh=True)

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            if not self._noted:
                self._refresh()

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(2)
        if self._bar is not None:
            self._refresh()
            self._bar.close()
