"""Pass discovery with GE's rules (spec §3.1): which files and packages a pass path names.

A path item that is a file must end in ``.py`` (loaded even if it starts with ``_``); a directory is scanned
non-recursively in name order, skipping ``_``-prefixed entries, taking ``*.py`` files and sub-directories with
``__init__.py`` (as top-level packages). Nothing is executed here (:mod:`.load` does that).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["ENV_PY_PASS_PATH", "MODULE_PREFIX", "LoadItem", "PassLoadError", "module_name_for", "scan",
           "split_pass_path"]

#: The environment variable GE reads the pass path from.
ENV_PY_PASS_PATH = "ASCEND_GE_PY_PASS_PATH"
#: GE's module-name prefix for pass files.
MODULE_PREFIX = "_ge_py_pass_"


@dataclasses.dataclass(frozen=True)
class LoadItem:
    """One thing to load: a ``.py`` file (executed as ``module_name``) or a package directory."""

    kind: str  # "file" or "package"
    path: Path
    module_name: str
    search_dir: Path | None = None  # prepended to sys.path while the item executes

    @property
    def key(self) -> str:
        return str(self.path)


class PassLoadError(Exception):
    """A pass file (or path item) could not be loaded.

    Attributes:
        path: the file, package or path item at fault.
        line: the line in ``path`` where the error arose (0 if unknown).
        exception: the original exception.
        rule: short name of GE's rule that was broken (``"import"``, ``"missing path"``, ``"suffix"``,
            ``"registration"``, ``"class creation"``).
    """

    def __init__(self, path: str, line: int, exception: BaseException, rule: str) -> None:
        self.path = path
        self.line = line
        self.exception = exception
        self.rule = rule
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: pass plugin load failed ({rule}): {type(exception).__name__}: {exception}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "rule": self.rule,
            "exception_type": type(self.exception).__name__,
            "message": str(self.exception),
            "text": str(self),
        }


def split_pass_path(value: str | None) -> list[str]:
    """Split a pass-path value on ``os.pathsep``; strip items; drop empty ones."""
    if not value:
        return []
    return [item.strip() for item in value.split(os.pathsep) if item.strip()]


def module_name_for(path: Path) -> str:
    """GE's module name for a pass file: ``_ge_py_pass_<stem>_<abs(hash(path))>`` (salted per process)."""
    return f"{MODULE_PREFIX}{path.stem}_{abs(hash(str(path)))}"


def scan(items: Iterable[str | os.PathLike[str]], *, errors: list[PassLoadError] | None = None) -> list[LoadItem]:
    """Expand path items into load items with GE's rules. Duplicate paths are kept once. O(directory entries).

    Args:
        errors: when given, a bad item is appended here as a :class:`PassLoadError` and the scan goes on;
            when None the first bad item raises, as in GE.

    Raises:
        FileNotFoundError: an item does not exist (only when ``errors`` is None).
        ValueError: a file item does not end in ``.py`` (only when ``errors`` is None).
    """
    out: list[LoadItem] = []
    seen: set[tuple[str, str]] = set()

    def add(item: LoadItem) -> None:
        if (item.kind, item.key) not in seen:
            seen.add((item.kind, item.key))
            out.append(item)

    for raw in items:
        path = Path(raw).resolve()
        try:
            if not path.exists():
                raise FileNotFoundError(f"ASCEND_GE_PY_PASS_PATH item {str(raw)!r} does not exist (resolved to {path})")
            if path.is_file():
                if path.suffix != ".py":
                    raise ValueError(f"ASCEND_GE_PY_PASS_PATH item {str(raw)!r} is a file without the .py suffix")
                add(LoadItem("file", path, module_name_for(path)))
                continue
            for child in sorted(path.iterdir(), key=lambda p: p.name):
                if child.name.startswith("_"):
                    continue
                if child.is_file() and child.suffix == ".py":
                    add(LoadItem("file", child, module_name_for(child), search_dir=path))
                elif child.is_dir() and (child / "__init__.py").is_file():
                    add(LoadItem("package", child, child.name, search_dir=path))
        except (FileNotFoundError, ValueError) as exc:
            if errors is None:
                raise
            rule = "missing path" if isinstance(exc, FileNotFoundError) else "suffix"
            errors.append(PassLoadError(str(raw), 0, exc, rule))
    return out
