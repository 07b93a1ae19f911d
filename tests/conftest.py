"""Suite-wide settings.

``GEBENCH_CHECK_JOURNALS=1``: every run also keeps an eager copy of the graph at each dump point and checks the
snapshot its journal builds against it on first read (``gebench.fusion.snapshots``), so any test that reads a
snapshot also proves that no change of the graph skipped ``Graph.touch``. Subprocesses inherit it.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

os.environ.setdefault("GEBENCH_CHECK_JOURNALS", "1")

#: The benchmarks' folder: its synthetic models and pass files serve tests too.
BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.fixture(scope="session")
def synthetic() -> ModuleType:
    """``bench/_synthetic.py``: the synthetic transformer of the benchmarks (``transformer_ir``, ``transformer_onnx``),
    whose MatMul + Add sites ``bench/gemm_fusion_pass.py`` fuses."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module("_synthetic")
