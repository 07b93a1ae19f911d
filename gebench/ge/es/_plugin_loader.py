"""The ES plugin registry of ``ge.es``: gebench ships the plugins ``math``, ``nn``, ``all`` and ``custom``."""

from __future__ import annotations

import importlib
import logging
from types import ModuleType

from ._opgen import PLUGINS

__all__ = ["list_plugins", "get_plugin", "load_plugins"]

_log = logging.getLogger(__name__)
_LOADED: dict[str, ModuleType] = {}


def load_plugins() -> dict[str, ModuleType]:
    """Import every plugin module once (cheap: op functions are generated on first access)."""
    for name in PLUGINS:
        if name not in _LOADED:
            _LOADED[name] = importlib.import_module(f"{__package__}.{name}")
            _log.info("ES plugin '%s' loaded: %s", name, _LOADED[name].__name__)
    return dict(_LOADED)


def list_plugins() -> list[str]:
    """Names of the loaded ES plugins, in load order."""
    return list(load_plugins())


def get_plugin(name: str) -> ModuleType | None:
    """The plugin module called ``name``, or None."""
    return load_plugins().get(name)
