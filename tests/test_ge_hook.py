"""The ``ge`` import hook: aliases gebench.ge, never shadows or replaces another ``ge`` package.

Each case runs in a fresh interpreter so ``sys.modules`` starts clean.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_py(code: str, *, extra_path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    paths = [str(ROOT)] + ([str(extra_path)] if extra_path else []) + [env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    return subprocess.run([sys.executable, "-W", "error", "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=120, cwd=str(ROOT))


def check(code: str, **kw: object) -> str:
    proc = run_py(code, **kw)  # type: ignore[arg-type]
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture
def fake_cann_ge(tmp_path: Path) -> Path:
    """A stand-in for a real CANN ``ge`` package on sys.path."""
    pkg = tmp_path / "ge"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("REAL_CANN = True\n")
    (pkg / "graph.py").write_text("REAL_GRAPH = True\n")
    return tmp_path


def test_import_gebench_aliases_ge_to_the_same_module_objects() -> None:
    out = check("""
        import sys
        import gebench, gebench.ge
        import ge
        assert ge is gebench.ge
        import ge.graph, ge.es.math, ge.graph.types
        import gebench.ge.graph, gebench.ge.es.math
        assert sys.modules["ge.graph"] is gebench.ge.graph
        assert sys.modules["ge.es.math"] is gebench.ge.es.math
        assert ge.graph is gebench.ge.graph
        from ge.graph.types import DataType
        from gebench.ir import DataType as IrDataType
        assert DataType is IrDataType
        # the module keeps its own spec, so relative imports and reloads see gebench's names
        assert gebench.ge.graph.__spec__.name == "gebench.ge.graph"
        assert gebench.ge.graph.__name__ == "gebench.ge.graph"
        print("ok")
    """)
    assert out.strip() == "ok"


def test_pass_file_style_imports_resolve() -> None:
    out = check("""
        import gebench
        from ge.es.all import MatMul, GEMM, Add
        from ge.es.graph_builder import GraphBuilder
        from ge.graph.types import DataType
        from ge.es.math import Split, ConcatV2, Identity, TensorMove
        from ge.es.nn import Relu, Conv2D, BatchMatMulV2
        from ge.graph import Graph, Node, Tensor, TensorDesc
        import gebench.ge.es.all as all_ops
        assert MatMul is all_ops.MatMul
        print(MatMul.__name__, GraphBuilder.__name__, DataType.DT_FLOAT.name)
    """)
    assert out.split() == ["MatMul", "GraphBuilder", "DT_FLOAT"]


def test_without_gebench_there_is_no_ge() -> None:
    proc = run_py("""
        import sys
        try:
            import ge
        except ModuleNotFoundError:
            print("absent", any(type(f).__name__ == "_GeAliasFinder" for f in sys.meta_path))
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "absent False"


def test_a_real_ge_imported_first_is_kept_and_not_shadowed(fake_cann_ge: Path) -> None:
    proc = run_py("""
        import logging, sys
        logging.basicConfig(level=logging.WARNING)
        import ge
        import gebench
        import ge.graph
        import gebench.ge.graph
        assert getattr(ge, "REAL_CANN", False), ge
        assert getattr(ge.graph, "REAL_GRAPH", False), ge.graph
        assert sys.modules["ge.graph"] is not gebench.ge.graph
        assert gebench.ge.install() is False
        print("kept")
    """, extra_path=fake_cann_ge)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "kept"
    assert "will not replace it" in proc.stderr


def test_gebench_first_then_ge_is_gebench_even_with_another_ge_on_the_path(fake_cann_ge: Path) -> None:
    out = check("""
        import gebench
        import ge
        assert not hasattr(ge, "REAL_CANN")
        assert ge is gebench.ge
        print("gebench")
    """, extra_path=fake_cann_ge)
    assert out.strip() == "gebench"


def test_uninstall_removes_the_aliases_and_install_is_idempotent() -> None:
    out = check("""
        import sys
        import gebench.ge as gg
        assert gg.install() and gg.install()
        assert sum(type(f).__name__ == "_GeAliasFinder" for f in sys.meta_path) == 1
        import ge.graph
        gg.uninstall()
        assert "ge" not in sys.modules and "ge.graph" not in sys.modules
        try:
            import ge
        except ModuleNotFoundError:
            print("gone")
        gg.install()
        import ge
        assert ge is gg
    """)
    assert out.strip() == "gone"


def test_unknown_ge_submodule_is_a_normal_import_error() -> None:
    out = check("""
        import gebench
        try:
            import ge.no_such_module
        except ModuleNotFoundError as exc:
            print(exc.name)
    """)
    assert out.strip() == "ge.no_such_module"


def test_importing_a_submodule_keeps_the_package_attribute_of_the_same_name() -> None:
    """``ge.passes`` exports the decorator ``pattern`` and has a submodule ``pattern``: importing the submodule by
    its ``ge.`` name leaves the decorator in place, as GE's own package does."""
    out = check("""
        import gebench
        import importlib
        import ge.passes.pattern
        from ge.passes import pattern
        from ge.passes.pattern import PatternInputs
        assert callable(pattern) and not isinstance(pattern, type(importlib)), pattern
        assert importlib.import_module("ge.passes.pattern") is importlib.import_module("gebench.ge.passes.pattern")
        print(pattern.__name__, PatternInputs.__name__)
    """)
    assert out.split() == ["pattern", "PatternInputs"]
