"""The import hook that exposes ``gebench.ge`` as the top-level package ``ge``.

After :func:`install`, ``import ge``, ``import ge.es.math`` or ``from ge.graph.types import DataType`` give the
*same module objects* as ``gebench.ge``, ``gebench.ge.es.math``, ``gebench.ge.graph.types``
(``sys.modules["ge.graph"] is gebench.ge.graph``), so pass files written for GE run unchanged.

Safety: nothing happens until :func:`install` is called. It refuses (with a warning) when a ``ge`` that is not
gebench's is already imported, and the finder steps aside for every ``ge.*`` name whenever ``sys.modules["ge"]``
is some other package, so a real CANN ``ge`` in the same process is never shadowed or replaced.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import logging
import sys
import threading
import types
from collections.abc import Sequence

__all__ = ["install", "uninstall", "is_installed", "ALIAS", "TARGET"]

_log = logging.getLogger(__name__)

#: The top-level name pass files import.
ALIAS = "ge"
#: The package that provides it.
TARGET = "gebench.ge"

_LOCK = threading.Lock()


def _target_name(fullname: str) -> str:
    return TARGET + fullname[len(ALIAS):]


def _is_ours(module: object) -> bool:
    return isinstance(module, types.ModuleType) and getattr(module, "__name__", None) == TARGET


class _AliasLoader(importlib.abc.Loader):
    """Returns the already-importable ``gebench.ge.*`` module instead of executing anything."""

    def __init__(self, target: str) -> None:
        self.target = target
        self._original_spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = importlib.import_module(self.target)
        self._original_spec = module.__spec__
        _alias_loaded_submodules()
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        # The import system stamped the alias spec on the module; give it its own back so relative imports,
        # reloads and pickling keep seeing gebench's names.
        if self._original_spec is not None:
            module.__spec__ = self._original_spec


class _GeAliasFinder(importlib.abc.MetaPathFinder):
    """Meta-path finder mapping ``ge`` and ``ge.*`` onto ``gebench.ge`` and ``gebench.ge.*``."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != ALIAS and not fullname.startswith(ALIAS + "."):
            return None
        current = sys.modules.get(ALIAS)
        if current is not None and not _is_ours(current):
            return None  # a real ge is loaded: never shadow its submodules
        name = _target_name(fullname)
        module = sys.modules.get(name)
        if module is not None:
            search = getattr(module, "__path__", None)
        else:
            try:
                found = importlib.util.find_spec(name)
            except (ImportError, ValueError):
                return None
            if found is None:
                return None
            search = found.submodule_search_locations
        spec = importlib.machinery.ModuleSpec(fullname, _AliasLoader(name), is_package=search is not None)
        if search is not None:
            spec.submodule_search_locations = list(search)
        return spec


_FINDER = _GeAliasFinder()


def _alias_loaded_submodules() -> None:
    """Enter every loaded ``gebench.ge.*`` module under its ``ge.*`` name as well.

    Without this, the first ``import ge.passes.pattern`` would load the alias and then, as every import of a
    submodule does, set the attribute ``pattern`` of the package ``ge.passes`` to the submodule, replacing the
    ``pattern`` decorator the package exports (GE's own package has the submodule registered already, so its
    attribute is left alone). An alias found in ``sys.modules`` is returned as it is.
    """
    prefix = TARGET + "."
    for name, module in list(sys.modules.items()):
        if name.startswith(prefix) and module is not None:
            sys.modules.setdefault(ALIAS + name[len(TARGET):], module)


def is_installed() -> bool:
    """True while the finder is on ``sys.meta_path``."""
    return _FINDER in sys.meta_path


def install() -> bool:
    """Expose ``gebench.ge`` as ``ge``. Idempotent; O(1).

    Returns:
        True if the hook is active, False if a different ``ge`` package is already imported (then nothing is
        changed and a warning is logged: that ``ge`` keeps working and gebench's stays reachable as ``gebench.ge``).
    """
    with _LOCK:
        current = sys.modules.get(ALIAS)
        if current is not None and not _is_ours(current):
            _log.warning("a 'ge' package is already imported from %s; gebench will not replace it, so pass files "
                         "importing 'ge' get that package (gebench's facade stays available as gebench.ge)",
                         getattr(current, "__file__", None) or current)
            return False
        if _FINDER not in sys.meta_path:
            sys.meta_path.insert(0, _FINDER)
        return True


def uninstall() -> None:
    """Remove the finder and every ``ge``/``ge.*`` alias entry that points at gebench's modules."""
    with _LOCK:
        while _FINDER in sys.meta_path:
            sys.meta_path.remove(_FINDER)
        for key in [k for k in sys.modules if k == ALIAS or k.startswith(ALIAS + ".")]:
            module = sys.modules[key]
            if getattr(module, "__name__", "") == _target_name(key):
                del sys.modules[key]
