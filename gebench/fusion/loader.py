"""Pass discovery and loading with GE's rules (spec §3.1).

Two ways to load:

* :func:`load_pass_plugins` — GE's behaviour exactly: scan ``ASCEND_GE_PY_PASS_PATH`` (or the given value),
  register into the process-global registry, load each canonical path once per process, and let the first
  error propagate (GE then fails the whole plugin load).
* :func:`load_paths` — gebench's lenient loader used by :class:`gebench.fusion.reload.PassSet`: every file
  is executed afresh into a caller-supplied registry, and a failing file becomes a :class:`PassLoadError`
  (file, line, exception) while the other files still load, so the user sees all their passes.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import linecache
import logging
import os
import sys
import traceback
import types
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from gebench.fusion import _guard
from gebench.ge.passes.registry import PassDescriptor, PassRegistry, global_registry, registering_into

__all__ = [
    "ENV_PY_PASS_PATH",
    "LoadItem",
    "PassLoadError",
    "load_one",
    "load_pass_plugins",
    "load_paths",
    "module_name_for",
    "scan",
    "split_pass_path",
]

_log = logging.getLogger(__name__)

ENV_PY_PASS_PATH = "ASCEND_GE_PY_PASS_PATH"
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
            ``"registration"``).
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
    """Expand path items into load items with GE's rules.

    A file must end in ``.py`` (loaded even if it starts with ``_``); a directory is scanned
    non-recursively in name order, skipping ``_``-prefixed entries, taking ``*.py`` files and sub-directories
    with ``__init__.py`` (as top-level packages). Duplicate paths are kept once.

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


def _error_line(exc: BaseException, path: Path) -> int:
    if isinstance(exc, SyntaxError) and exc.lineno:
        return int(exc.lineno)
    line = 0
    target = str(path)
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == target or (path.is_dir() and frame.filename.startswith(target + os.sep)):
            line = frame.lineno or 0
    return line


def _rule_for(exc: BaseException) -> str:
    if isinstance(exc, (ValueError, TypeError)):
        tb = traceback.extract_tb(exc.__traceback__)
        if any(f.filename.endswith(os.path.join("passes", "registry.py")) for f in tb):
            return "registration"
        if any(f.filename.endswith(os.path.join("passes", "base.py")) for f in tb):
            return "class creation"
    return "import"


def _execute_file(item: LoadItem) -> types.ModuleType:
    import gebench.ge as ge_facade

    ge_facade.install()
    spec = importlib.util.spec_from_file_location(item.module_name, item.path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot create an import spec for {item.path}")
    module = importlib.util.module_from_spec(spec)
    previous = sys.modules.get(item.module_name)
    sys.modules[item.module_name] = module
    added_path = False
    if item.search_dir is not None and str(item.search_dir) not in sys.path:
        sys.path.insert(0, str(item.search_dir))
        added_path = True
    try:
        # compile from source (not through the bytecode cache): a hot reload must see every save, even two
        # saves within one second that keep the file size, which a .pyc check by mtime and size would miss
        linecache.checkcache(str(item.path))
        code = compile(item.path.read_bytes(), str(item.path), "exec", dont_inherit=True)
        exec(code, module.__dict__)  # noqa: S102 - executing the pass file is the point
    except BaseException:
        if previous is not None:
            sys.modules[item.module_name] = previous
        else:
            sys.modules.pop(item.module_name, None)
        raise
    finally:
        if added_path:
            try:
                sys.path.remove(str(item.search_dir))
            except ValueError:
                pass
    return module


def _execute_package(item: LoadItem, *, fresh: bool) -> types.ModuleType:
    import gebench.ge as ge_facade

    ge_facade.install()
    saved: dict[str, types.ModuleType] = {}
    if fresh:
        for name in list(sys.modules):
            if name == item.module_name or name.startswith(item.module_name + "."):
                saved[name] = sys.modules.pop(name)
    added_path = False
    if item.search_dir is not None and str(item.search_dir) not in sys.path:
        sys.path.insert(0, str(item.search_dir))
        added_path = True
    try:
        importlib.invalidate_caches()
        return importlib.import_module(item.module_name)
    except BaseException:
        for name in list(sys.modules):
            if name == item.module_name or name.startswith(item.module_name + "."):
                sys.modules.pop(name, None)
        sys.modules.update(saved)
        raise
    finally:
        if added_path:
            try:
                sys.path.remove(str(item.search_dir))
            except ValueError:
                pass


def load_one(item: LoadItem, registry: PassRegistry) -> tuple[types.ModuleType, list[PassDescriptor]]:
    """Execute ``item`` afresh with decorators registering into ``registry``.

    Returns the module and the descriptors it registered.

    Raises:
        PassLoadError: the item failed to execute (file, line and the original exception attached), including
            ``sys.exit()``/``SystemExit``/``KeyboardInterrupt`` raised by the file (as :class:`PassCodeExit`).
        KeyboardInterrupt: a real Ctrl-C while the file executed.
    """
    before = {d.descriptor_key for d in registry.descriptors()}
    try:
        try:
            with _guard.interrupts_tracked(), registering_into(registry):
                if item.kind == "file":
                    module = _execute_file(item)
                else:
                    module = _execute_package(item, fresh=True)
        except (SystemExit, KeyboardInterrupt) as stop:  # sys.exit() in a pass file fails its load, as in GE
            err = _guard.pass_code_exit(stop)
            if err is None:
                raise
            raise err.with_traceback(stop.__traceback__) from stop
    except Exception as exc:  # noqa: BLE001 - any failure of user code is a load error
        for d in registry.descriptors():
            if d.descriptor_key not in before:
                registry.remove(d.descriptor_key)
        raise PassLoadError(str(item.path), _error_line(exc, item.path), exc, _rule_for(exc)) from exc
    new = [d for d in registry.descriptors() if d.descriptor_key not in before]
    return module, new


@dataclasses.dataclass
class LoadResult:
    """What :func:`load_paths` loaded: modules and descriptors in load order, and the errors."""

    items: list[LoadItem]
    modules: list[types.ModuleType]
    descriptors: list[PassDescriptor]
    errors: list[PassLoadError]
    by_item: dict[str, list[PassDescriptor]]


def load_paths(paths: Sequence[str | os.PathLike[str]], registry: PassRegistry | None = None) -> LoadResult:
    """Load every pass file under ``paths`` (GE's scan rules), continuing past failures.

    Each file is executed afresh into ``registry`` (a new private one when None). A duplicate pass name
    across files fails the later file, as GE would fail the load.
    """
    registry = PassRegistry() if registry is None else registry
    errors: list[PassLoadError] = []
    items = scan(paths, errors=errors)
    modules: list[types.ModuleType] = []
    descriptors: list[PassDescriptor] = []
    by_item: dict[str, list[PassDescriptor]] = {}
    for item in items:
        try:
            module, new = load_one(item, registry)
        except PassLoadError as err:
            _log.info("%s", err)
            errors.append(err)
            continue
        modules.append(module)
        descriptors.extend(new)
        by_item[item.key] = new
    return LoadResult(items, modules, descriptors, errors, by_item)


_loaded_paths: dict[str, str] = {}


def load_pass_plugins(value: str | None = None) -> list[types.ModuleType]:
    """GE's ``bootstrap.load_pass_plugins()``: scan the pass path and register into the global registry.

    ``value`` defaults to ``os.environ["ASCEND_GE_PY_PASS_PATH"]``. Each canonical file path executes at
    most once per process while its module stays in ``sys.modules``; packages import by directory name.
    The returned list is de-duplicated by module name.

    Raises:
        FileNotFoundError, ValueError: a bad path item.
        Exception: whatever a pass file raised while executing (the scan stops there; passes registered
            before it stay registered).
    """
    if value is None:
        value = os.environ.get(ENV_PY_PASS_PATH, "")
    items = scan(split_pass_path(value))
    modules: dict[str, types.ModuleType] = {}
    registry = global_registry()
    search_dirs = []
    try:
        for item in items:
            if item.search_dir is not None and str(item.search_dir) not in sys.path:
                sys.path.insert(0, str(item.search_dir))
                search_dirs.append(str(item.search_dir))
            cached = sys.modules.get(item.module_name)
            if cached is not None and (item.kind == "package" or _loaded_paths.get(item.key) == item.module_name):
                modules.setdefault(item.module_name, cached)
                continue
            with registering_into(registry):
                if item.kind == "file":
                    module = _execute_file(item)
                else:
                    module = _execute_package(item, fresh=False)
            _loaded_paths[item.key] = item.module_name
            modules.setdefault(item.module_name, module)
    finally:
        for d in search_dirs:
            try:
                sys.path.remove(d)
            except ValueError:
                pass
    return list(modules.values())


def clear_loaded_pass_modules() -> None:
    """Remove every ``_ge_py_pass_*`` module from ``sys.modules`` (GE's reset)."""
    for name in [n for n in sys.modules if n.startswith(MODULE_PREFIX)]:
        del sys.modules[name]
    _loaded_paths.clear()
