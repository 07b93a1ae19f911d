"""Hot reload of pass files: PassSet.reload and the watcher."""

from __future__ import annotations

import os
import textwrap
import threading
import time
from pathlib import Path

import pytest

import gebench
from gebench.fusion.reload import PassSet

PASS = """
from ge.passes import FusionBasePass, PassStage, register_fusion_pass

LIMIT = {limit}


@register_fusion_pass(name="{name}", stage=PassStage.BEFORE_INFER_SHAPE)
class {name}(FusionBasePass):
    def run(self, graph, context):
        return {ret}
"""

HEADER = "from ge.passes import FusionBasePass, PassStage, register_fusion_pass\n"
CLASS = """

@register_fusion_pass(name="{name}", stage=PassStage.BEFORE_INFER_SHAPE)
class {name}(FusionBasePass):
    def run(self, graph, context):
        return {ret}
"""


def write(path: Path, text: str) -> None:
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    # make sure the mtime moves even on coarse clocks
    st = path.stat()
    os.utime(path, (st.st_atime, st.st_mtime + 1))


def test_initial_load_and_no_change_reload(tmp_path):
    write(tmp_path / "a.py", PASS.format(name="A", limit=1, ret="True"))
    ps = PassSet([str(tmp_path)])
    assert ps.pass_names() == ["A"]
    report = ps.reload()
    assert not report
    assert report.unchanged == ["A"] and report.reloaded_files == []


def test_changed_added_removed(tmp_path):
    write(tmp_path / "a.py", PASS.format(name="A", limit=1, ret="True"))
    write(tmp_path / "b.py", HEADER + CLASS.format(name="B", ret="True") + CLASS.format(name="C", ret="True"))
    ps = PassSet(str(tmp_path))
    assert ps.pass_names() == ["A", "B", "C"]
    old_cls = ps.descriptor("B").cls
    # B's body changes; C is untouched; D is new; A's file is deleted
    write(tmp_path / "b.py", HEADER + CLASS.format(name="B", ret="None") + CLASS.format(name="C", ret="True")
          + CLASS.format(name="D", ret="True"))
    (tmp_path / "a.py").unlink()
    report = ps.reload()
    assert report.changed == ["B"]
    assert report.unchanged == ["C"]
    assert report.added == ["D"]
    assert report.removed == ["A"]
    assert ps.pass_names() == ["B", "C", "D"]
    assert ps.descriptor("B").cls is not old_cls
    assert ps.descriptor("B").cls().run(None, None) is None


def test_module_level_edit_marks_all_passes_changed(tmp_path):
    write(tmp_path / "a.py", PASS.format(name="A", limit=1, ret="True"))
    ps = PassSet([str(tmp_path)])
    write(tmp_path / "a.py", PASS.format(name="A", limit=2, ret="True"))
    assert ps.reload().changed == ["A"]


def test_failed_reload_keeps_last_good_version(tmp_path):
    f = tmp_path / "a.py"
    write(f, PASS.format(name="A", limit=1, ret="True"))
    ps = PassSet([str(f)])
    good = ps.descriptor("A")
    write(f, "from ge.passes import FusionBasePass\n\nclass Broken(:\n")
    report = ps.reload()
    assert len(report.errors) == 1 and report.errors[0].line == 3
    assert ps.descriptor("A") is good
    assert ps.errors and ps.pass_names() == ["A"]
    # fixing the file clears the error and the pass reloads once (never duplicated)
    write(f, PASS.format(name="A", limit=1, ret="False"))
    report = ps.reload()
    assert not report.errors and ps.errors == []
    assert ps.pass_names() == ["A"]
    assert ps.descriptor("A").cls().run(None, None) is False


def test_reload_rename_to_existing_name_is_an_error(tmp_path):
    write(tmp_path / "a.py", PASS.format(name="A", limit=1, ret="True"))
    write(tmp_path / "b.py", PASS.format(name="B", limit=1, ret="True"))
    ps = PassSet([str(tmp_path)])
    write(tmp_path / "b.py", PASS.format(name="A", limit=1, ret="True"))
    report = ps.reload()
    assert report.errors and "python pass name already exists: A" in str(report.errors[0])
    assert ps.pass_names() == ["A", "B"]


def test_first_load_failure_reported(tmp_path):
    write(tmp_path / "a.py", "raise ImportError('no such thing')\n")
    ps = PassSet([str(tmp_path)])
    assert ps.pass_names() == []
    assert len(ps.errors) == 1 and ps.errors[0].line == 1


def test_env_default(tmp_path, monkeypatch):
    write(tmp_path / "a.py", PASS.format(name="EnvPass", limit=1, ret="True"))
    monkeypatch.setenv("ASCEND_GE_PY_PASS_PATH", str(tmp_path))
    assert PassSet().pass_names() == ["EnvPass"]
    monkeypatch.setenv("ASCEND_GE_PY_PASS_PATH", "")
    assert PassSet().pass_names() == []


@pytest.mark.timeout(30)
def test_watcher_reloads_on_save(tmp_path):
    f = tmp_path / "a.py"
    write(f, PASS.format(name="A", limit=1, ret="True"))
    ps = PassSet([str(tmp_path)])
    got = threading.Event()
    reports = []

    def on_change(report):
        reports.append(report)
        got.set()

    watcher = ps.watch(on_change, debounce_ms=50)
    try:
        time.sleep(0.3)  # let the watcher start
        write(f, PASS.format(name="A", limit=1, ret="None"))
        assert got.wait(10), "watcher did not report the change"
    finally:
        watcher.stop()
    assert not watcher.running
    assert reports[0].changed == ["A"]


def test_compile_with_a_reloaded_pass_set(tmp_path):
    from ge.es.all import Relu
    from ge.es.graph_builder import GraphBuilder


    f = tmp_path / "relu_pass.py"
    body = """
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass
from ge.es.all import Relu, {op}


@register_fusion_pass(name="ReluRewrite", stage=PassStage.BEFORE_INFER_SHAPE)
class ReluRewrite(PatternFusionPass):
    @pattern
    def relu(self, inputs):
        return Relu(inputs[0])

    def replacement(self, inputs):
        return {op}(inputs[0])
"""
    write(f, body.format(op="Abs"))
    ps = PassSet([str(f)])
    b = GraphBuilder("g")
    graph = b.build_and_reset([Relu(b.create_input(0, shape=[2]))])
    assert [n.op_type for n in gebench.compile(graph, passes=ps).ir_graph.nodes()] == ["Data", "Abs", "NetOutput"]
    write(f, body.format(op="Neg"))
    assert ps.reload().changed == ["ReluRewrite"]
    assert [n.op_type for n in gebench.compile(graph, passes=ps).ir_graph.nodes()] == ["Data", "Neg", "NetOutput"]


def test_package_plugin_reload(tmp_path):
    import sys

    pkg = tmp_path / "gebench_reload_pkg_plugin"
    pkg.mkdir()
    write(pkg / "__init__.py", "from .impl import *  # noqa\n")
    write(pkg / "impl.py", HEADER + CLASS.format(name="PkgPass", ret="True"))
    ps = PassSet([str(tmp_path)])
    try:
        assert ps.pass_names() == ["PkgPass"]
        write(pkg / "impl.py", HEADER + CLASS.format(name="PkgPass", ret="False"))
        report = ps.reload()
        assert report.reloaded_files == [str(pkg)] and report.changed == ["PkgPass"]
        assert ps.descriptor("PkgPass").cls().run(None, None) is False
    finally:
        for name in [n for n in sys.modules if n.startswith("gebench_reload_pkg_plugin")]:
            del sys.modules[name]


def test_same_size_same_mtime_edit_is_seen(tmp_path):
    f = tmp_path / "a.py"
    f.write_text(HEADER + CLASS.format(name="A", ret="True"))
    ps = PassSet([str(f)])
    stamp = f.stat().st_mtime
    f.write_text(HEADER + CLASS.format(name="A", ret="None"))  # same length as "True"
    os.utime(f, (stamp, stamp))
    assert ps.reload().changed == ["A"]
    assert ps.descriptor("A").cls().run(None, None) is None
