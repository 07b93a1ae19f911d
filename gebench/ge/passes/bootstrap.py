"""GE's pass bootstrap (spec §2.1.20): load plugins from ``ASCEND_GE_PY_PASS_PATH``.

Note GE's name clash, kept here: this module's :func:`get_registered_passes` returns *dicts*, while
``ge.passes.get_registered_passes`` returns ``PassDescriptor`` objects.
"""

from __future__ import annotations

import types
from typing import Any

from .registry import get_registered_pass_dicts

__all__ = ["ENV_PY_PASS_PATH", "get_registered_passes", "load_pass_plugins"]

ENV_PY_PASS_PATH = "ASCEND_GE_PY_PASS_PATH"


def load_pass_plugins() -> list[types.ModuleType]:
    """Scan ``ASCEND_GE_PY_PASS_PATH`` with GE's rules and import every pass module (see
    :func:`gebench.fusion.loader.load_pass_plugins`; errors propagate as in GE)."""
    from gebench.fusion.loader import load_pass_plugins as _load

    return _load()


def get_registered_passes() -> list[dict[str, Any]]:
    """The registered passes as bridge dicts."""
    return get_registered_pass_dicts()
