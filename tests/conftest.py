"""Suite-wide settings.

``GEBENCH_CHECK_JOURNALS=1``: every run also keeps an eager copy of the graph at each dump point and checks the
snapshot its journal builds against it on first read (``gebench.fusion.snapshots``), so any test that reads a
snapshot also proves that no change of the graph skipped ``Graph.touch``. Subprocesses inherit it.
"""

from __future__ import annotations

import os

os.environ.setdefault("GEBENCH_CHECK_JOURNALS", "1")
