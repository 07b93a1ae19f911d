"""GE's pass bootstrap (spec §2.1.20): load plugins from ``ASCEND_GE_PY_PASS_PATH``.

Note GE's name clash, kept here: this module's :func:`get_registered_passes` returns *dicts*, while
``ge.passes.get_registered_passes`` returns ``PassDescriptor`` objects.
"""

from __future__ import annotations

import types
from typing import Any

from gebench.fusion.plugins import load as _load
from gebench.fusion.plugins.scan import ENV_PY_PASS_PATH

from .registry import get_registered_pass_dicts, global_registry

__all__ = ["ENV_PY_PASS_PATH", "get_registered_passes", "load_pass_plugins"]


def load_pass_plugins() -> list[types.ModuleType]:
    """Scan ``ASCEND_GE_PY_PASS_PATH`` with GE's rules and import every pass module into GE's global registry
    (see :func:`gebench.fusion.plugins.load.load_pass_plugins`; errors propagate as in GE)."""
    return _load.load_pass_plugins(registry=global_registry())


def get_registered_passes() -> list[dict[str, Any]]:
    """The registered passes as bridge dicts."""
    return get_registered_pass_dicts()
