"""Pass sets with hot reload: the import path kept for :mod:`gebench.fusion.plugins.reload` (``PassSet``,
``ReloadReport``) and :mod:`gebench.fusion.plugins.watch` (``Watcher``), which hold the code."""

from gebench.fusion.plugins.reload import PassSet, ReloadReport, as_pass_set
from gebench.fusion.plugins.watch import Watcher

__all__ = ["PassSet", "ReloadReport", "Watcher", "as_pass_set"]
