"""gebench: a workbench for writing and debugging Ascend GE graph fusion passes anywhere.

Importing gebench exposes its GE-compatible facade as the top-level package ``ge`` (unless another ``ge``
package is already imported), so pass files written for GE import ``ge.passes``, ``ge.es`` and ``ge.graph``
unchanged.

Layers (``docs/architecture.md``): ``ge``, ``api``, ``cli``, ``viz``, ``debug``, ``exec`` on top of the core
``fusion``, on top of ``ops`` and ``ir``; imports run downwards only. This package is the composition root:
:mod:`gebench._wiring` gives the core the upper-layer implementations of the protocols it declares.
"""

from . import _wiring
from .ge import install as _install_ge

_install_ge()
_wiring.install()  # the core's protocols, filled by the facade, the executor and the debugging tools

# Python API (gebench.api), resolved lazily so that `import gebench` stays cheap.
_API_NAMES = ("load", "compile", "Run", "PassSet", "Workbench", "execute", "register_loader", "register_dump_writer",
              "sweep", "compare_fusion_result")

__all__ = list(_API_NAMES)


def __getattr__(name: str):  # noqa: ANN202 - PEP 562 hook
    if name in _API_NAMES:
        if name == "PassSet":
            from .fusion.plugins.reload import PassSet as value
        elif name == "Workbench":
            from .viz import Workbench as value
        elif name == "execute":
            from .exec import execute as value
        elif name == "compare_fusion_result":
            from .compare import compare_fusion_result as value
        elif name == "sweep":
            value = __import__("importlib").import_module(".sweep", __name__)  # callable: runs a sweep
        else:
            from . import api

            value = getattr(api, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'gebench' has no attribute {name!r}")
