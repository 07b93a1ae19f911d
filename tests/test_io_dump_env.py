"""DUMP_GE_GRAPH / DUMP_GRAPH_FORMAT / DUMP_GRAPH_LEVEL / DUMP_GRAPH_PATH handling (spec ge-dump-format §1)."""

from pathlib import Path

import pytest

from gebench.io import DumpLevel, dump_settings_from_env
from gebench.io._ge_dump_env import dump_directory, parse_dump_formats, parse_dump_level, stage_selected
from gebench.io.ge_dump import write_dumps_from_env
from gebench.ir import DataType, Graph, TensorDesc


@pytest.mark.parametrize("value, level", [
    (None, DumpLevel.NO_DUMP), ("", DumpLevel.NO_DUMP), ("0", DumpLevel.NO_DUMP), ("1", DumpLevel.DUMP_ALL),
    ("2", DumpLevel.DUMP_WITH_OUT_DATA), (" 3", DumpLevel.DUMP_WITH_OUT_DESC), ("4", DumpLevel.NO_DUMP),
    ("17", DumpLevel.NO_DUMP), ("abc", DumpLevel.NO_DUMP), ("2abc", DumpLevel.DUMP_WITH_OUT_DATA),
    ("-1", DumpLevel.NO_DUMP), ("+1", DumpLevel.DUMP_ALL),
])
def test_dump_ge_graph_is_read_like_strtol(value, level):
    assert parse_dump_level(value) is level


@pytest.mark.parametrize("value, formats", [
    (None, ("ge_proto", "onnx")), ("", ("ge_proto", "onnx")), ("ge_proto", ("ge_proto",)),
    ("ONNX", ("onnx",)), ("onnx|readable", ("onnx", "readable")), ("readable|GE_PROTO", ("ge_proto", "readable")),
    ("ge_onnx", ("onnx",)), ("json", ()),
])
def test_dump_graph_format(value, formats):
    assert parse_dump_formats(value) == formats


@pytest.mark.parametrize("suffix, level, selected", [
    ("PreRunBegin", None, True), ("PreRunBegin", "", True), ("PreRunAfterInitPreparation", "2", False),
    ("RunCustomPassBeforeInfershape", "2", True), ("RunCustomPass_BeforeAssignLogicStreamMyPass", "2", True),
    ("AutoFuseBeforeOptimize_x", "2", True), ("Build", "2", True), ("BuildX", "2", False),
    ("PreRunAfterInitPreparation", "1", True), ("Build_partition_0", "1", False),
    ("AfterFlowGraphPartition", "1", True),  # the match is case-sensitive, as in GE
    ("OptimizeSubGraph_x", "1", False), ("Aicpu_x", "1", False), ("PreRunBegin_sub_graph_0", "1", False),
    ("Build", "3", True), ("PreRunBegin", "3", False), ("PreRunBegin", "4", True), ("Build", "4", False),
    ("PreRunBegin", "PreRunBegin|RunCustomPass", True), ("RunCustomPass_AfterInferShape", "PreRunBegin|RunCustomPass",
                                                         True),
    ("AfterInfershape", "PreRunBegin|RunCustomPass", False), ("", "Pre", False), ("123", "1|2", False),
])
def test_dump_graph_level(suffix, level, selected):
    assert stage_selected(suffix, level) is selected


def test_dump_directory_precedence():
    assert dump_directory({}, pid=7) == Path(".")
    assert dump_directory({"ASCEND_WORK_PATH": "/w"}, pid=7) == Path("/w")
    env = {"ASCEND_WORK_PATH": "/w", "DUMP_GRAPH_PATH": "/d"}
    assert dump_directory(env, pid=7) == Path("/d/pid_7_deviceid_0")
    env["NPU_COLLECT_PATH"] = "/c"
    assert dump_directory(env, pid=7, device_id=1) == Path("/c/extra-info/graph/7_1")
    assert dump_directory({"DUMP_GE_GRAPH_PATH": "/nope"}, pid=7) == Path(".")  # not a GE variable


def test_settings_from_env():
    settings = dump_settings_from_env({"DUMP_GE_GRAPH": "2", "DUMP_GRAPH_FORMAT": "ge_proto",
                                       "DUMP_GRAPH_LEVEL": "PreRunBegin", "DUMP_GRAPH_PATH": "/tmp/x"})
    assert settings.enabled and settings.level == 2 and settings.formats == ("ge_proto",)
    assert settings.wants("PreRunBegin") and not settings.wants("Build")
    assert settings.directory.parent == Path("/tmp/x") and settings.directory.name.startswith("pid_")
    off = dump_settings_from_env({"DUMP_GRAPH_FORMAT": "onnx"})
    assert not off.enabled and not off.wants("PreRunBegin")


def test_write_dumps_from_env(tmp_path, monkeypatch):
    g = Graph("g")
    g.add_node("Data", name="x", attrs={"index": 0}, inputs=[TensorDesc.of(DataType.DT_FLOAT, [1])],
               outputs=[TensorDesc.of(DataType.DT_FLOAT, [1])])
    snaps = {"PreRunBegin": g, "PreRunAfterInitPreparation": g, "RunCustomPassBeforeInfershape": g}
    monkeypatch.delenv("DUMP_GE_GRAPH", raising=False)
    monkeypatch.delenv("NPU_COLLECT_PATH", raising=False)
    assert write_dumps_from_env(snaps) == []
    monkeypatch.setenv("DUMP_GE_GRAPH", "3")
    monkeypatch.setenv("DUMP_GRAPH_PATH", str(tmp_path))
    monkeypatch.delenv("DUMP_GRAPH_LEVEL", raising=False)
    monkeypatch.delenv("DUMP_GRAPH_FORMAT", raising=False)
    paths = write_dumps_from_env(snaps, graph_id=1)
    assert [p.name for p in paths] == [
        "ge_proto_00000000_graph_1_PreRunBegin.txt", "ge_onnx_00000000_graph_1_PreRunBegin.pbtxt",
        "ge_proto_00000001_graph_1_RunCustomPassBeforeInfershape.txt",
        "ge_onnx_00000001_graph_1_RunCustomPassBeforeInfershape.pbtxt",
    ]
    assert all(p.parent.parent == tmp_path and p.parent.name.startswith("pid_") for p in paths)


def test_unwritable_dump_path_falls_back_to_the_current_directory(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.chdir(tmp_path)
    g = Graph("g")
    g.add_node("Data", name="x", attrs={"index": 0}, inputs=[TensorDesc.of(DataType.DT_FLOAT, [1])],
               outputs=[TensorDesc.of(DataType.DT_FLOAT, [1])])
    settings = dump_settings_from_env({"DUMP_GE_GRAPH": "3", "DUMP_GRAPH_FORMAT": "ge_proto",
                                       "DUMP_GRAPH_PATH": str(blocker)})
    (path,) = write_dumps_from_env({"PreRunBegin": g}, settings=settings)
    assert path == Path(".") / "ge_proto_00000000_graph_0_PreRunBegin.txt" and (tmp_path / path).is_file()
