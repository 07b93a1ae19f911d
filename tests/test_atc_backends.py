"""The ascend backend and ``gebench atc``, against a stand-in ``atc`` that records its arguments and parses the
AIR it is given (no CANN here)."""

import io
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from gebench.exec import backends
from gebench.exec.backends import AscendBackend, CannNotFoundError, ReferenceBackend, find_atc, get_backend
from gebench.io import load_air
from gebench.ir import DataType, Graph, TensorDesc, TensorValue, to_text

REPO = Path(__file__).resolve().parents[1]

STAND_IN = '''#!{python}
import json, os, sys
sys.path.insert(0, {repo!r})
args = sys.argv[1:]
record = {{"argv": args, "pass_path": os.environ.get("ASCEND_GE_PY_PASS_PATH")}}
opts = dict(a[2:].split("=", 1) for a in args if a.startswith("--") and "=" in a)
if opts.get("framework") == "1":
    from gebench.io.proto import ge_ir_pb2
    model = ge_ir_pb2.ModelDef()
    with open(opts["model"], "rb") as fh:
        model.ParseFromString(fh.read())
    record["graphs"] = [g.name for g in model.graph]
    record["ops"] = [[o.name, o.type, list(o.input)] for o in model.graph[0].op]
with open(opts["output"] + ".om", "wb") as fh:
    fh.write(b"stand-in om")
with open(os.environ["ATC_RECORD"], "w") as fh:
    json.dump(record, fh)
print("ATC run success, welcome to the next use.")
'''


def install_stand_in(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    atc = directory / "atc"
    atc.write_text(STAND_IN.format(python=sys.executable, repo=str(REPO)))
    atc.chmod(0o755)
    return atc


def graph() -> Graph:
    g = Graph("net")
    d = TensorDesc.of(DataType.DT_FLOAT, [2, 2])
    x = g.add_node("Data", name="x", attrs={"index": 0}, inputs=[d], outputs=[d], input_names=["x"],
                   output_names=["y"])
    w = g.add_node("Const", name="w", attrs={"value": TensorValue(DataType.DT_FLOAT, np.eye(2, dtype=np.float32))},
                   outputs=[d], output_names=["y"])
    mm = g.add_node("MatMul", name="mm", attrs={"transpose_x1": False, "transpose_x2": False},
                    inputs=[d, d, TensorDesc.placeholder()], outputs=[d], input_names=["x1", "x2", "bias"],
                    output_names=["y"])
    out = g.add_node("NetOutput", name="Node_Output", inputs=[d])
    g.add_edge(x, 0, mm, 0)
    g.add_edge(w, 0, mm, 1)
    g.add_edge(mm, 0, out, 0)
    return g


@pytest.fixture()
def clean_env(monkeypatch, tmp_path):
    """No CANN anywhere: PATH holds only an empty directory, no CANN root variables, no dump switches."""
    empty = tmp_path / "empty_bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    for var in ("ASCEND_PATH", "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_GE_PY_PASS_PATH", "DUMP_GE_GRAPH",
                "DUMP_GRAPH_PATH", "DUMP_GRAPH_LEVEL", "DUMP_GRAPH_FORMAT", "NPU_COLLECT_PATH", "ASCEND_WORK_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ATC_RECORD", str(tmp_path / "record.json"))
    monkeypatch.chdir(tmp_path)  # relative --output paths land here
    return tmp_path


def test_find_atc_on_path_then_under_ascend_path(clean_env, monkeypatch):
    assert find_atc() is None
    root = clean_env / "cann"
    under_root = install_stand_in(root / "latest" / "compiler" / "bin")
    monkeypatch.setenv("ASCEND_PATH", str(root))
    assert find_atc() == under_root
    on_path = install_stand_in(clean_env / "bin")
    monkeypatch.setenv("PATH", f"{clean_env / 'bin'}{os.pathsep}{os.environ['PATH']}")
    assert find_atc() == on_path


def test_missing_cann_is_a_clear_message(clean_env):
    with pytest.raises(CannNotFoundError, match="CANN's atc, which was not found on PATH \\(ASCEND_PATH is not set\\)"):
        AscendBackend().build(graph(), output=clean_env / "out" / "net", soc_version="Ascend910B1")
    assert not AscendBackend().available() and ReferenceBackend().available()
    with pytest.raises(ValueError, match="unknown backend 'tpu'"):
        get_backend("tpu")


def test_ascend_backend_compiles_the_exported_air(clean_env, monkeypatch):
    install_stand_in(clean_env / "bin")
    monkeypatch.setenv("PATH", str(clean_env / "bin"))
    result = get_backend("ascend").build(graph(), output=clean_env / "out" / "net", soc_version="Ascend910B1")
    assert result.ok and "ATC run success" in result.log
    record = json.loads((clean_env / "record.json").read_text())
    air = clean_env / "out" / "net.air"
    assert record["argv"] == [f"--model={air}", "--framework=1", "--soc_version=Ascend910B1",
                              f"--output={clean_env / 'out' / 'net'}"]
    assert record["graphs"] == ["net"]
    assert record["ops"] == [["x", "Data", [""]], ["w", "Const", []], ["mm", "MatMul", ["x:0", "w:0", ""]],
                             ["Node_Output", "NetOutput", ["mm:0"]]]
    assert result.outputs == [air, clean_env / "out" / "net.om"]
    assert to_text(load_air(air)) == to_text(graph())


def test_ascend_backend_hands_the_original_model_and_passes_to_atc(clean_env, monkeypatch):
    install_stand_in(clean_env / "bin")
    monkeypatch.setenv("PATH", str(clean_env / "bin"))
    model = clean_env / "m.onnx"
    model.write_bytes(b"not read by gebench")
    result = AscendBackend().build(None, output=str(clean_env / "net.om"), soc_version="Ascend310P3",
                                   source_model=model, pass_path="/p/a.py:/p/b.py", extra_args=["--log=debug"])
    record = json.loads((clean_env / "record.json").read_text())
    assert record["pass_path"] == "/p/a.py:/p/b.py"
    assert record["argv"] == [f"--model={model}", "--framework=5", "--soc_version=Ascend310P3",
                              f"--output={clean_env / 'net'}", "--log=debug"]
    assert result.outputs == [clean_env / "net.om"]


def test_reference_backend_writes_air_and_executes(clean_env):
    result = ReferenceBackend().build(graph(), output=clean_env / "ref")
    assert result.outputs == [clean_env / "ref.air"] and result.command is None
    (y,) = ReferenceBackend().execute(graph(), {"x": np.array([[1, 2], [3, 4]], dtype=np.float32)})
    np.testing.assert_array_equal(y, [[1, 2], [3, 4]])


# ------------------------------------------------------------------------------------------------ gebench atc
def make_onnx(path: Path) -> Path:
    from onnx import TensorProto, helper, numpy_helper, save

    w = numpy_helper.from_array(np.eye(2, dtype=np.float32), "w")
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "net",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])], initializer=[w])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return path


PASS_FILE = '''
from ge.passes import FusionBasePass, PassStage, register_fusion_pass


@register_fusion_pass(name="CountNodesPass", stage=PassStage.BEFORE_INFER_SHAPE)
class CountNodesPass(FusionBasePass):
    def run(self, graph, context):
        return None
'''


def cli(argv, capsys):
    from gebench import cli as gebench_cli
    from gebench.cli import atc  # noqa: F401  (registers the command)

    code = gebench_cli.main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_gebench_atc_without_cann_runs_passes_dumps_and_writes_air(clean_env, monkeypatch, capsys):
    model = make_onnx(clean_env / "model.onnx")
    pass_file = clean_env / "count_pass.py"
    pass_file.write_text(PASS_FILE)
    monkeypatch.setenv("ASCEND_GE_PY_PASS_PATH", str(pass_file))
    monkeypatch.setenv("DUMP_GE_GRAPH", "1")
    monkeypatch.setenv("DUMP_GRAPH_PATH", str(clean_env / "dumps"))
    code, out, err = cli(["atc", f"--model={model}", "--framework=5", "--soc_version=Ascend910B1",
                          f"--output={clean_env / 'out' / 'model'}", "--log=debug"], capsys)
    assert code == 0, err
    assert "CountNodesPass" in out and "ATC run success" in out
    dumps = sorted(p.name for p in (clean_env / "dumps").glob("pid_*/*"))
    assert "ge_proto_00000000_graph_0_PreRunBegin.txt" in dumps
    assert "ge_onnx_00000001_graph_0_RunCustomPassBeforeInfershape.pbtxt" in dumps
    air = clean_env / "out" / "model.air"
    assert [n.op_type for n in load_air(air).nodes()] == ["Data", "Const", "BatchMatMulV2", "NetOutput"]


def test_gebench_atc_hands_over_to_the_real_atc(clean_env, monkeypatch, capsys):
    install_stand_in(clean_env / "bin")
    monkeypatch.setenv("PATH", str(clean_env / "bin"))
    code, out, _ = cli(["atc", "--model=m.onnx", "--framework=5", "--soc_version=Ascend910B1", "--output=o",
                        "--input_shape=x:1,2"], capsys)
    assert code == 0 and "ATC run success" in out
    record = json.loads((clean_env / "record.json").read_text())
    assert record["argv"] == ["--model=m.onnx", "--framework=5", "--input_shape=x:1,2", "--output=o",
                              "--soc_version=Ascend910B1"]


@pytest.mark.parametrize("argv, message", [
    (["--model=m.onnx", "--framework=3", "--soc_version=A", "--output=o"], "--framework=3 is not emulated"),
    (["--model=m.onnx", "--framework=5", "--output=o"], "missing --soc_version"),
    (["--model=m.onnx", "--framework=5", "--soc_version=A", "--output=o", "--mode=1"], "--mode=1 needs CANN"),
    (["--model=m.onnx", "--framework=5", "--soc_version=A", "--output=o", "--log=loud"], "--log=loud"),
])
def test_gebench_atc_usage_errors(clean_env, capsys, argv, message):
    code, _, err = cli(["atc", *argv], capsys)
    assert code == 2 and message in err


def test_gebench_atc_insisting_on_ascend_without_cann(clean_env, capsys):
    code, _, err = cli(["atc", "--model=m.onnx", "--framework=5", "--soc_version=A", "--output=o",
                        "--gebench_backend=ascend"], capsys)
    assert code == 1 and "ASCEND_PATH" in err


def test_run_atc_command_can_be_called_directly(clean_env):
    import argparse

    from gebench.cli.atc import run_atc_command, setup_atc

    parser = argparse.ArgumentParser()
    handler = setup_atc(parser)
    assert callable(handler)
    args = parser.parse_args(["--model=m.onnx", "--framework=5", "--soc_version=A", "--output=o",
                              "--gebench_backend=ascend"])
    out, err = io.StringIO(), io.StringIO()
    assert run_atc_command(args, out=out, err=err) == 1 and "not found on PATH" in err.getvalue()
    assert set(backends.BACKENDS) == {"reference", "ascend"}


def test_compile_backend_flags(clean_env, monkeypatch):
    import argparse

    from gebench.cli._backend_args import add_backend_arguments
    from gebench.exec.backends import BackendError, build_from_args

    parser = argparse.ArgumentParser()
    add_backend_arguments(parser)
    assert build_from_args(parser.parse_args([]), graph()) is None
    ref = build_from_args(parser.parse_args(["--output", str(clean_env / "r")]), graph())
    assert ref.outputs == [clean_env / "r.air"]
    with pytest.raises(CannNotFoundError):
        build_from_args(parser.parse_args(["--backend", "ascend", "--soc-version", "A", "--output", "o"]), graph())
    install_stand_in(clean_env / "bin")
    monkeypatch.setenv("PATH", str(clean_env / "bin"))
    with pytest.raises(BackendError, match="needs --soc-version and --output"):
        build_from_args(parser.parse_args(["--backend", "ascend"]), graph())
    args = parser.parse_args(["--backend", "ascend", "--soc-version", "Ascend910B1", "--output",
                              str(clean_env / "o"), "--atc-on-model"])
    result = build_from_args(args, graph(), model_path=clean_env / "m.onnx", pass_path="p.py")
    record = json.loads((clean_env / "record.json").read_text())
    assert result.ok and record["pass_path"] == "p.py" and "--framework=5" in record["argv"]


def test_gebench_compile_with_the_ascend_backend(clean_env, monkeypatch, capsys):
    model = make_onnx(clean_env / "model.onnx")
    code, _, err = cli(["compile", str(model), "--backend", "ascend", "--soc-version", "Ascend910B1", "--output",
                        str(clean_env / "out" / "m")], capsys)
    assert code == 1 and "not found on PATH" in err  # no CANN: a clear message, not a traceback
    install_stand_in(clean_env / "bin")
    monkeypatch.setenv("PATH", str(clean_env / "bin"))
    code, out, err = cli(["compile", str(model), "--backend", "ascend", "--soc-version", "Ascend910B1", "--output",
                          str(clean_env / "out" / "m")], capsys)
    assert code == 0, err
    assert f"ascend: {clean_env / 'out' / 'm.air'}" in out and f"ascend: {clean_env / 'out' / 'm.om'}" in out
    record = json.loads((clean_env / "record.json").read_text())
    assert "--framework=1" in record["argv"] and [op[1] for op in record["ops"]][:2] == ["Data", "Const"]
    code, out, _ = cli(["compile", str(model), "--output", str(clean_env / "ref")], capsys)
    assert code == 0 and f"reference: {clean_env / 'ref.air'}" in out


def test_the_cli_offers_exactly_the_backends_there_are():
    from gebench.cli._backend_args import BACKEND_NAMES
    from gebench.exec.backends import BACKENDS

    assert BACKEND_NAMES == tuple(sorted(BACKENDS))
