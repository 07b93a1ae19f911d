"""Pass discovery and loading (spec §3.1): the import path kept for :mod:`gebench.fusion.plugins.scan` and
:mod:`gebench.fusion.plugins.load`, which hold the code. See :mod:`gebench.fusion.plugins`."""

from gebench.fusion.plugins.load import (
    LoadResult,
    clear_loaded_pass_modules,
    load_one,
    load_pass_plugins,
    load_paths,
)
from gebench.fusion.plugins.scan import (
    ENV_PY_PASS_PATH,
    MODULE_PREFIX,
    LoadItem,
    PassLoadError,
    module_name_for,
    scan,
    split_pass_path,
)

__all__ = [
    "ENV_PY_PASS_PATH",
    "MODULE_PREFIX",
    "LoadItem",
    "LoadResult",
    "PassLoadError",
    "clear_loaded_pass_modules",
    "load_one",
    "load_pass_plugins",
    "load_paths",
    "module_name_for",
    "scan",
    "split_pass_path",
]
