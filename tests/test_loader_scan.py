"""Pass discovery with GE's rules (spec §3.1) and the lenient loader's error reports."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

import gebench  # noqa: F401
from gebench.fusion import loader
from gebench.ge.passes import registry as reg

PASS_TEMPLATE = """
from ge.passes import FusionBasePass, PassStage, register_fusion_pass


@register_fusion_pass(name="{name}", stage=PassStage.BEFORE_INFER_SHAPE)
class {cls}(FusionBasePass):
    def run(self, graph, context):
        return True
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def make_pass(path: Path, name: str) -> Path:
    return write(path, PASS_TEMPLATE.format(name=name, cls=name))


def test_split_pass_path_strips_and_drops_empty():
    assert loader.split_pass_path(f" a {os.pathsep}{os.pathsep} b ") == ["a", "b"]
    assert loader.split_pass_path("") == []
    assert loader.split_pass_path(None) == []


def test_scan_directory_rules(tmp_path):
    make_pass(tmp_path / "b_pass.py", "B")
    make_pass(tmp_path / "a_pass.py", "A")
    make_pass(tmp_path / "_private.py", "P")
    write(tmp_path / "notes.txt", "x")
    make_pass(tmp_path / "pkg" / "__init__.py", "Pkg")
    make_pass(tmp_path / "_hidden_pkg" / "__init__.py", "H")
    (tmp_path / "plain_dir").mkdir()
    items = loader.scan([str(tmp_path)])
    assert [(i.kind, i.path.name) for i in items] == [("file", "a_pass.py"), ("file", "b_pass.py"),
                                                      ("package", "pkg")]
    assert items[2].module_name == "pkg"


def test_scan_single_file_underscore_is_loaded_and_dedup(tmp_path):
    f = make_pass(tmp_path / "_under.py", "U")
    items = loader.scan([str(f), str(f), str(tmp_path)])
    assert [i.path.name for i in items] == ["_under.py"]


def test_module_name_format(tmp_path):
    f = make_pass(tmp_path / "my_pass.py", "M").resolve()
    assert loader.module_name_for(f) == f"_ge_py_pass_my_pass_{abs(hash(str(f)))}"


def test_scan_errors_like_ge(tmp_path):
    with pytest.raises(FileNotFoundError):
        loader.scan([str(tmp_path / "missing")])
    bad = write(tmp_path / "x.txt", "")
    with pytest.raises(ValueError, match=r"\.py"):
        loader.scan([str(bad)])
    errors: list = []
    assert loader.scan([str(tmp_path / "missing"), str(bad)], errors=errors) == []
    assert [e.rule for e in errors] == ["missing path", "suffix"]


def test_load_paths_reports_file_line_and_continues(tmp_path):
    make_pass(tmp_path / "a_ok.py", "OkPass")
    write(tmp_path / "b_syntax.py", "x = 1\ndef broken(:\n    pass\n")
    write(tmp_path / "c_raise.py", "import os\n\nraise RuntimeError('boom at import')\n")
    make_pass(tmp_path / "d_ok.py", "OkPass2")
    result = loader.load_paths([str(tmp_path)])
    assert [d.pass_name for d in result.descriptors] == ["OkPass", "OkPass2"]
    errs = {Path(e.path).name: e for e in result.errors}
    assert errs["b_syntax.py"].line == 2 and isinstance(errs["b_syntax.py"].exception, SyntaxError)
    assert errs["c_raise.py"].line == 3 and "boom at import" in str(errs["c_raise.py"])
    assert "c_raise.py:3" in str(errs["c_raise.py"])
    # failed modules are not left in sys.modules
    assert not any(name.startswith("_ge_py_pass_c_raise_") for name in sys.modules)


def test_duplicate_name_across_files_fails_later_file(tmp_path):
    make_pass(tmp_path / "a.py", "Same")
    write(tmp_path / "b.py", PASS_TEMPLATE.format(name="Same", cls="Other"))
    result = loader.load_paths([str(tmp_path)])
    assert [d.pass_name for d in result.descriptors] == ["Same"]
    (err,) = result.errors
    assert err.rule == "registration" and "python pass name already exists: Same" in str(err)
    assert Path(err.path).name == "b.py" and err.line > 0


def test_sibling_imports_work_in_directory(tmp_path):
    write(tmp_path / "_helpers.py", "NAME = 'FromHelper'\n")
    write(tmp_path / "uses_helper.py", """
        from _helpers import NAME
        from ge.passes import FusionBasePass, PassStage, register_fusion_pass


        @register_fusion_pass(name=NAME, stage=PassStage.BEFORE_INFER_SHAPE)
        class P(FusionBasePass):
            pass
    """)
    result = loader.load_paths([str(tmp_path)])
    assert not result.errors
    assert [d.pass_name for d in result.descriptors] == ["FromHelper"]
    assert str(tmp_path) not in sys.path


def test_package_plugin_loads(tmp_path):
    pkg = tmp_path / "gebench_test_pkg_plugin"
    make_pass(pkg / "__init__.py", "PkgPass")
    result = loader.load_paths([str(tmp_path)])
    assert [d.pass_name for d in result.descriptors] == ["PkgPass"]
    assert result.descriptors[0].module_name == "gebench_test_pkg_plugin"
    sys.modules.pop("gebench_test_pkg_plugin", None)


def test_ge_faithful_bootstrap_loads_once_and_raises(tmp_path, monkeypatch):
    from ge.passes import bootstrap

    private = reg.PassRegistry()
    monkeypatch.setattr(reg, "_GLOBAL_REGISTRY", private)
    make_pass(tmp_path / "a.py", "BootA")
    monkeypatch.setenv("ASCEND_GE_PY_PASS_PATH", str(tmp_path))
    try:
        mods = bootstrap.load_pass_plugins()
        assert len(mods) == 1 and mods[0].__name__.startswith("_ge_py_pass_a_")
        again = bootstrap.load_pass_plugins()  # cached: no duplicate registration
        assert again[0] is mods[0]
        assert [d.pass_name for d in private.descriptors()] == ["BootA"]
        write(tmp_path / "b.py", "raise ValueError('bad plugin')\n")
        with pytest.raises(ValueError, match="bad plugin"):
            bootstrap.load_pass_plugins()
        assert [d.pass_name for d in private.descriptors()] == ["BootA"]
    finally:
        loader.clear_loaded_pass_modules()
    assert not any(n.startswith("_ge_py_pass_") for n in sys.modules)


def test_bridge_protocol_holders(monkeypatch):
    from ge.passes import FusionBasePass, PassContext, PassStage, register_fusion_pass

    from gebench.ge.passes import _bridge

    private = reg.PassRegistry()
    with reg.registering_into(private):
        @register_fusion_pass(name="BridgePass", stage=PassStage.BEFORE_INFER_SHAPE)
        class BridgePass(FusionBasePass):
            def run(self, graph, context):
                return 7

        key = BridgePass.__ge_pass_descriptor__.descriptor_key
        assert _bridge.create_pass_holder(f"{key}#0", key) is True
        assert _bridge.create_pass_holder(f"{key}#0", key) is True
        assert _bridge.run_fusion_base_pass(f"{key}#0", None, PassContext._create("BridgePass")) == 7
        with pytest.raises(TypeError):
            _bridge.run_fusion_base_pass(f"{key}#0", None, "ctx")
        with pytest.raises(KeyError):
            _bridge.create_pass_holder("x#0", "no:such:key")
        assert _bridge.destroy_pass_holder(f"{key}#0") is True
        assert _bridge.destroy_pass_holder(f"{key}#0") is False
        _bridge.clear_pass_holders()
