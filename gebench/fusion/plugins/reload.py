"""Pass sets with hot reload: :class:`PassSet`, :class:`ReloadReport`.

A :class:`PassSet` loads pass files from path items (files, directories, packages — GE's scan rules) into
its own registry, so several sets can coexist in one process. :meth:`PassSet.reload` re-executes the files
whose content changed (SHA-256 of the sources), swaps their registrations in place (never duplicating a pass),
keeps the last good version of a file whose new version fails (reporting the error), and says which
passes were added, removed or changed. :meth:`PassSet.watch` runs the reload on save in a thread
(:class:`~gebench.fusion.plugins.watch.Watcher`).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import types
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .changes import fingerprints, stat
from .descriptor import PassDescriptor
from .load import load_one
from .registry import PassRegistry
from .scan import ENV_PY_PASS_PATH, LoadItem, PassLoadError, scan, split_pass_path
from .watch import Watcher

__all__ = ["PassSet", "ReloadReport", "Watcher", "as_pass_set"]

_log = logging.getLogger(__name__)


@dataclasses.dataclass
class ReloadReport:
    """Outcome of one :meth:`PassSet.reload`: pass names by change, files re-executed, and load errors."""

    added: list[str] = dataclasses.field(default_factory=list)
    removed: list[str] = dataclasses.field(default_factory=list)
    changed: list[str] = dataclasses.field(default_factory=list)
    unchanged: list[str] = dataclasses.field(default_factory=list)
    reloaded_files: list[str] = dataclasses.field(default_factory=list)
    errors: list[PassLoadError] = dataclasses.field(default_factory=list)

    @property
    def affected(self) -> list[str]:
        """Pass names whose behaviour may differ after the reload (added + changed)."""
        return [*self.added, *self.changed]

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed or self.errors)

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": list(self.added),
            "removed": list(self.removed),
            "changed": list(self.changed),
            "unchanged": list(self.unchanged),
            "reloaded_files": list(self.reloaded_files),
            "errors": [e.to_dict() for e in self.errors],
        }


@dataclasses.dataclass
class _Entry:
    item: LoadItem
    digest: str
    mtime: float
    module: types.ModuleType | None = None
    descriptors: list[PassDescriptor] = dataclasses.field(default_factory=list)
    fingerprints: dict[str, str] = dataclasses.field(default_factory=dict)
    error: PassLoadError | None = None


class PassSet:
    """Pass files loaded from path items, with their registrations, errors and hot reload.

    Args:
        paths: path items (files, directories) as a list, or one ``os.pathsep``-separated string;
            None reads ``ASCEND_GE_PY_PASS_PATH`` (unset or empty gives an empty set, as in GE).

    Guarantees: after construction or :meth:`reload` every pass name appears once; a file that fails to
    load keeps its previous passes (if it ever loaded) and its error is in :attr:`errors`.
    """

    def __init__(self, paths: Sequence[str | os.PathLike[str]] | str | None = None) -> None:
        if paths is None:
            paths = os.environ.get(ENV_PY_PASS_PATH, "")
        if isinstance(paths, (str, os.PathLike)) and not isinstance(paths, str):
            paths = [paths]
        self.paths: list[str] = split_pass_path(paths) if isinstance(paths, str) else [os.fspath(p) for p in paths]
        self._lock = threading.RLock()
        self._entries: dict[str, _Entry] = {}
        self._scan_errors: list[PassLoadError] = []
        self.reload()

    # ------------------------------------------------------------------ queries
    def descriptors(self) -> list[PassDescriptor]:
        """Registered passes in load order (file order, then registration order)."""
        with self._lock:
            return [d for e in self._entries.values() for d in e.descriptors]

    def pass_names(self) -> list[str]:
        return [d.pass_name for d in self.descriptors()]

    def descriptor(self, pass_name: str) -> PassDescriptor | None:
        for d in self.descriptors():
            if d.pass_name == pass_name:
                return d
        return None

    @property
    def errors(self) -> list[PassLoadError]:
        """Current load errors: bad path items and files whose latest version fails to load."""
        with self._lock:
            return [*self._scan_errors, *(e.error for e in self._entries.values() if e.error is not None)]

    @property
    def files(self) -> list[str]:
        with self._lock:
            return list(self._entries)

    def source_of(self, pass_name: str) -> str:
        """The file (or package directory) a pass was loaded from; ``""`` if unknown."""
        with self._lock:
            for key, e in self._entries.items():
                if any(d.pass_name == pass_name for d in e.descriptors):
                    return key
        return ""

    def __len__(self) -> int:
        return len(self.descriptors())

    def __iter__(self) -> Any:
        return iter(self.descriptors())

    def __repr__(self) -> str:
        return f"<PassSet {len(self)} passes from {len(self._entries)} files, {len(self.errors)} errors>"

    # ------------------------------------------------------------------ reload
    def _names_except(self, key: str, placed: dict[str, _Entry]) -> dict[str, str]:
        """Pass name -> file, for the names taken by every file but ``key``: files already (re)loaded in this
        round (``placed``) and the current registrations of the others."""
        names = {d.pass_name: k for k, e in placed.items() if k != key for d in e.descriptors}
        for k, e in self._entries.items():
            if k != key and k not in placed:
                for d in e.descriptors:
                    names.setdefault(d.pass_name, k)
        return names

    def reload(self, *, force: bool = False) -> ReloadReport:
        """Re-scan the path items and re-execute changed files.

        Args:
            force: re-execute every file even if unchanged.

        Returns:
            What changed. Errors are reported, never raised.
        """
        report = ReloadReport()
        with self._lock:
            scan_errors: list[PassLoadError] = []
            items = scan(self.paths, errors=scan_errors)
            self._scan_errors = scan_errors
            report.errors.extend(scan_errors)
            new_keys = [it.key for it in items]
            for key in [k for k in self._entries if k not in new_keys]:
                gone = self._entries.pop(key)
                report.removed.extend(d.pass_name for d in gone.descriptors)
            ordered: dict[str, _Entry] = {}
            for item in items:
                old = self._entries.get(item.key)
                digest, mtime = stat(item)
                # a file refused for a duplicate pass name is retried: the other file may have dropped the name
                if old is not None and not force and old.digest == digest and old.item == item and not (
                        old.error is not None and _is_duplicate_name_error(old.error)):
                    ordered[item.key] = old
                    report.unchanged.extend(d.pass_name for d in old.descriptors)
                    if old.error is not None:
                        report.errors.append(old.error)
                    continue
                entry = old if old is not None else _Entry(item, "", 0.0)
                self._execute(entry, item, digest, mtime, report, ordered)
                ordered[item.key] = entry
            self._entries = ordered
        if report:
            _log.info("pass set reloaded: added=%s removed=%s changed=%s errors=%d", report.added,
                      report.removed, report.changed, len(report.errors))
        return report

    def _execute(self, entry: _Entry, item: LoadItem, digest: str, mtime: float, report: ReloadReport,
                 placed: dict[str, _Entry]) -> None:
        # GE fails the plugin load when two files register one pass name (spec §2.1.6, §3.2): the file that
        # registers it second gets the error and none of its passes
        registry = PassRegistry(reserved_names=self._names_except(item.key, placed))
        report.reloaded_files.append(item.key)
        try:
            module, descriptors = load_one(item, registry)
        except PassLoadError as err:
            _log.info("%s", err)
            entry.error = err
            entry.digest, entry.mtime = digest, mtime
            report.errors.append(err)
            report.unchanged.extend(d.pass_name for d in entry.descriptors)
            return
        old_prints = entry.fingerprints
        new_prints = fingerprints(item, descriptors)
        old_names = [d.pass_name for d in entry.descriptors]
        new_names = [d.pass_name for d in descriptors]
        report.removed.extend(n for n in old_names if n not in new_names)
        for n in new_names:
            if n not in old_names:
                report.added.append(n)
            elif old_prints.get(n) != new_prints.get(n):
                report.changed.append(n)
            else:
                report.unchanged.append(n)
        entry.item, entry.module, entry.descriptors = item, module, descriptors
        entry.fingerprints, entry.digest, entry.mtime, entry.error = new_prints, digest, mtime, None

    # ------------------------------------------------------------------ watch
    def watch(self, callback: Callable[[ReloadReport], Any] | None = None, *, debounce_ms: int = 200) -> Watcher:
        """Reload on file changes in a background thread; ``callback(report)`` runs after each reload.

        Returns:
            A started :class:`Watcher`; call ``stop()`` to end it.

        Raises:
            ImportError: ``watchfiles`` is not installed.
        """
        watcher = Watcher(self, callback, debounce_ms=debounce_ms)
        watcher.start()
        return watcher


def _is_duplicate_name_error(err: PassLoadError) -> bool:
    return err.rule == "registration" and "python pass name already exists" in str(err.exception)  # GE's text


def as_pass_set(passes: PassSet | Iterable[Any] | str | os.PathLike[str] | None) -> PassSet:
    """Coerce path-like input into a :class:`PassSet` (a PassSet is returned as is)."""
    if isinstance(passes, PassSet):
        return passes
    if passes is None or isinstance(passes, str):
        return PassSet(passes)
    if isinstance(passes, os.PathLike):
        return PassSet([passes])
    return PassSet(list(passes))
