"""Reload a pass set when its files change: :class:`Watcher`, a background thread on ``watchfiles``."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .reload import PassSet, ReloadReport

__all__ = ["Watcher"]

_log = logging.getLogger(__name__)


class Watcher:
    """A background thread that calls :meth:`PassSet.reload` when a watched path changes.

    ``callback(report)`` runs in the watcher thread after each reload that changed something; an exception it
    raises is logged and the watcher goes on.

    Raises:
        ImportError: ``watchfiles`` is not installed (at construction).
    """

    def __init__(self, pass_set: PassSet, callback: Callable[[ReloadReport], Any] | None, *,
                 debounce_ms: int = 200) -> None:
        import watchfiles  # noqa: F401 - fail early with ImportError when missing

        self.pass_set = pass_set
        self.callback = callback
        self.debounce_ms = debounce_ms
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="gebench-pass-watcher", daemon=True)
        self.reports: list[ReloadReport] = []

    def _targets(self) -> list[str]:
        targets: list[str] = []
        for raw in self.pass_set.paths:
            p = Path(raw).resolve()
            if p.exists():
                targets.append(str(p))
        return targets

    def _loop(self) -> None:
        import watchfiles

        targets = self._targets()
        if not targets:
            return
        for _changes in watchfiles.watch(*targets, stop_event=self._stop, debounce=self.debounce_ms,
                                         rust_timeout=200, yield_on_timeout=False):
            if self._stop.is_set():
                break
            report = self.pass_set.reload()
            if report:
                self.reports.append(report)
                if self.callback is not None:
                    try:
                        self.callback(report)
                    except Exception:  # noqa: BLE001 - a failing callback must not stop the watcher
                        _log.exception("pass watcher callback failed")

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop watching and join the thread."""
        self._stop.set()
        self._thread.join(timeout)

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def __enter__(self) -> Watcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
