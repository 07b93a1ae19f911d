"""``ge.es``: GE's eager-style graph building API (spec §2.2) over gebench's IR and op catalogue.

Public names as in GE: ``GraphBuilder``, ``TensorHolder``, ``list_plugins``, ``get_plugin`` and one attribute per
ES plugin (``math``, ``nn``, ``all``, ``custom``). ``InputType``, ``attr_scope`` and ``control_dependency_scope``
live in ``ge.es.graph_builder`` (GE does not export them here; gebench also makes them reachable here).
"""

from ._plugin_loader import get_plugin, list_plugins, load_plugins
from .graph_builder import GraphBuilder, InputType, attr_scope, control_dependency_scope  # noqa: F401
from .tensor_holder import TensorHolder

globals().update(load_plugins())

__all__ = ["GraphBuilder", "TensorHolder", "list_plugins", "get_plugin"]
