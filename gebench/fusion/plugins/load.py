"""Executing pass files and packages into a registry (spec §3.1).

Two ways to load:

* :func:`load_pass_plugins` — GE's behaviour exactly: scan ``ASCEND_GE_PY_PASS_PATH`` (or the given value),
  register into the process-global registry (or the one given), load each canonical path once per process,
  and let the first error propagate (GE then fails the whole plugin load).
* :func:`load_paths` / :func:`load_one` — gebench's lenient loading used by
  :class:`gebench.fusion.plugins.reload.PassSet`: every file is executed afresh into a caller-supplied registry,
  and a failing file becomes a :class:`~gebench.fusion.plugins.scan.PassLoadError` (file, line, exception)
  while the other files still load, so the user sees all their passes.

Before a pass file executes, the pass API (:func:`gebench.fusion.plugins.api.pass_api`) makes the names pass
files import (``ge``) resolvable; the core never imports the facade itself.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import importlib.util
import linecache
import logging
import os
import sys
import traceback
import types
from collections.abc import Iterator, Sequence
from pathlib import Path

from gebench.fusion import _guard

from .api import pass_api
from .descriptor import PassDescriptor
from .registry import PassRegistry, global_registry, registering_into
from .scan import ENV_PY_PASS_PATH, MODULE_PREFIX, LoadItem, PassLoadError, scan, split_pass_path

__all__ = ["LoadResult", "clear_loaded_pass_modules", "load_one", "load_pass_plugins", "load_paths"]

_log = logging.getLogger(__name__)


def _error_line(exc: BaseException, path: Path) -> int:
    """The line of ``path`` (or of a file under the package directory ``path``) where ``exc`` arose; 0 if none."""
    if isinstance(exc, SyntaxError) and exc.lineno:
        return int(exc.lineno)
    line = 0
    target = str(path)
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == target or (path.is_dir() and frame.filename.startswith(target + os.sep)):
            line = frame.lineno or 0
    return line


_REGISTRY_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "registry.py")


def _rule_for(exc: BaseException) -> str:
    """GE's rule a failing pass file broke: a duplicate in a registry or the pass API's own rules (asked of the
    pass API), else ``"import"``."""
    if isinstance(exc, (ValueError, TypeError)):
        tb = traceback.extract_tb(exc.__traceback__)
        if any(os.path.abspath(f.filename) == _REGISTRY_FILE for f in tb):
            return "registration"
        rule = pass_api().load_error_rule(exc)
        if rule:
            return rule
    return "import"


def _execute_file(item: LoadItem) -> types.ModuleType:
    """Execute the file ``item`` as module ``item.module_name`` (compiled from source, never from a cached
    ``.pyc``). On failure ``sys.modules`` is as before. Raises whatever the file raises."""
    pass_api().prepare_import()
    spec = importlib.util.spec_from_file_location(item.module_name, item.path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot create an import spec for {item.path}")
    module = importlib.util.module_from_spec(spec)
    previous = sys.modules.get(item.module_name)
    sys.modules[item.module_name] = module
    try:
        with _search_dir_on_path(item):
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
    return module


@contextlib.contextmanager
def _search_dir_on_path(item: LoadItem) -> Iterator[None]:
    """``item.search_dir`` at the front of ``sys.path`` while the block runs (unless it is there already)."""
    if item.search_dir is None or str(item.search_dir) in sys.path:
        yield
        return
    sys.path.insert(0, str(item.search_dir))
    try:
        yield
    finally:
        try:
            sys.path.remove(str(item.search_dir))
        except ValueError:
            pass


def _execute_package(item: LoadItem, *, fresh: bool) -> types.ModuleType:
    """Import the package ``item`` (``fresh``: after dropping its modules from ``sys.modules``, restored if the
    import fails). Raises whatever the package raises."""
    pass_api().prepare_import()
    saved: dict[str, types.ModuleType] = {}
    if fresh:
        for name in list(sys.modules):
            if name == item.module_name or name.startswith(item.module_name + "."):
                saved[name] = sys.modules.pop(name)
    try:
        with _search_dir_on_path(item):
            importlib.invalidate_caches()
            return importlib.import_module(item.module_name)
    except BaseException:
        for name in list(sys.modules):
            if name == item.module_name or name.startswith(item.module_name + "."):
                sys.modules.pop(name, None)
        sys.modules.update(saved)
        raise


def load_one(item: LoadItem, registry: PassRegistry) -> tuple[types.ModuleType, list[PassDescriptor]]:
    """Execute ``item`` afresh with registration going into ``registry``.

    Returns the module and the descriptors it registered. On failure ``registry`` is as before.

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
    """Load every pass file under ``paths`` (GE's scan rules), continuing past failures (never raises for them).

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


def load_pass_plugins(value: str | None = None, registry: PassRegistry | None = None) -> list[types.ModuleType]:
    """GE's ``bootstrap.load_pass_plugins()``: scan the pass path and register into ``registry``.

    ``value`` defaults to ``os.environ["ASCEND_GE_PY_PASS_PATH"]``, ``registry`` to the process-global one.
    Each canonical file path executes at most once per process while its module stays in ``sys.modules``;
    packages import by directory name. The returned list is de-duplicated by module name.

    Raises:
        FileNotFoundError, ValueError: a bad path item.
        Exception: whatever a pass file raised while executing (the scan stops there; passes registered
            before it stay registered).
    """
    if value is None:
        value = os.environ.get(ENV_PY_PASS_PATH, "")
    items = scan(split_pass_path(value))
    modules: dict[str, types.ModuleType] = {}
    if registry is None:
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
