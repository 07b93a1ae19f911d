"""Bad inputs and faults end in GE's outcome or a clear error: duplicate pass names, exits raised by pass
code, damaged dumps, executor inputs, invalid ONNX, bad custom-op declarations."""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path

import pytest

import gebench
from gebench import cli, ir
from gebench.fusion.reload import PassSet

COUNTING_PASS = """
from ge.passes import FusionBasePass, PassStage, register_fusion_pass

RUNS = []


@register_fusion_pass(name="{name}", stage=PassStage.BEFORE_INFER_SHAPE)
class {cls}(FusionBasePass):
    def run(self, graph, context):
        RUNS.append("{cls}")
        return True
"""


@pytest.fixture(autouse=True)
def _no_ge_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """GE's dump and pass-path variables of the caller's shell must not reach these runs."""
    for name in [n for n in os.environ if n.startswith("DUMP_") or n == "ASCEND_GE_PY_PASS_PATH"]:
        monkeypatch.delenv(name)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture
def model(tmp_path: Path) -> Path:
    from ge.es.all import Relu
    from ge.es.graph_builder import GraphBuilder

    b = GraphBuilder("model")
    x = b.create_input(0, shape=[2])
    graph = b.build_and_reset([Relu(x)])
    path = tmp_path / "model.gir"
    path.write_text(ir.to_text(graph.ir), encoding="utf-8")
    return path


# ------------------------------------------------------------------------------ 2: one pass name, two files
@pytest.fixture
def dup_dir(tmp_path: Path) -> Path:
    d = tmp_path / "dup"
    write(d / "a.py", COUNTING_PASS.format(name="Same", cls="First"))
    write(d / "b.py", COUNTING_PASS.format(name="Same", cls="Second"))
    return d


def _assert_duplicate_refused(run: gebench.Run, dup_dir: Path) -> None:
    assert run.status == "FAILED"
    assert run.failure_reason.startswith("pass plugin load failed")
    (err,) = run.load_errors
    assert Path(err.path) == (dup_dir / "b.py").resolve()
    assert err.line == 7 and err.rule == "registration"  # the @register_fusion_pass line
    assert "python pass name already exists: Same" in str(err) and str((dup_dir / "a.py").resolve()) in str(err)
    assert [d.pass_name for d in run.passes] == ["Same"]


def test_duplicate_pass_name_from_directory_fails_the_load(model, dup_dir):
    _assert_duplicate_refused(gebench.compile(model, passes=str(dup_dir)), dup_dir)


def test_duplicate_pass_name_from_joined_path_fails_the_load(model, dup_dir):
    joined = os.pathsep.join([str(dup_dir / "a.py"), str(dup_dir / "b.py")])
    _assert_duplicate_refused(gebench.compile(model, passes=joined), dup_dir)


def test_duplicate_pass_name_from_pass_set_fails_the_load(model, dup_dir):
    ps = PassSet([str(dup_dir / "a.py"), str(dup_dir / "b.py")])
    assert ps.pass_names() == ["Same"]
    assert len(ps.errors) == 1
    _assert_duplicate_refused(gebench.compile(model, passes=ps), dup_dir)


def test_duplicate_pass_name_on_the_cli_exits_1(model, dup_dir, capsys):
    code = cli.main(["compile", str(model), "--passes", str(dup_dir)])
    out = capsys.readouterr().out
    assert code == 1
    assert "python pass name already exists: Same" in out and "b.py" in out


def test_duplicate_refused_file_loads_once_the_other_file_drops_the_name(dup_dir):
    ps = PassSet(str(dup_dir))
    assert ps.pass_names() == ["Same"] and ps.errors
    write(dup_dir / "a.py", COUNTING_PASS.format(name="Renamed", cls="First"))
    st = (dup_dir / "a.py").stat()
    os.utime(dup_dir / "a.py", (st.st_atime, st.st_mtime + 1))
    report = ps.reload()
    assert not ps.errors and not report.errors
    assert sorted(ps.pass_names()) == ["Renamed", "Same"]
    assert ps.source_of("Same") == str((dup_dir / "b.py").resolve())


# ------------------------------------------------------------------------------ 3: pass code ending the process
EXIT_IN_RUN = """
import sys
from ge.passes import FusionBasePass, PassStage, register_fusion_pass


@register_fusion_pass(name="Exits", stage=PassStage.BEFORE_INFER_SHAPE)
class Exits(FusionBasePass):
    def __init__(self):
        super().__init__()
        {init}

    def run(self, graph, context):
        graph.remove_node(graph.find_node_by_name("Relu_0"))
        {run}
"""

PATTERN_PASS = """
import signal
import sys
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass
from ge.es.all import Relu, Abs


@register_fusion_pass(name="Hooks", stage=PassStage.BEFORE_INFER_SHAPE)
class Hooks(PatternFusionPass):
    @pattern
    def relu(self, inputs):
        return Relu(inputs[0])

    def meet_requirements(self, match_result):
        {meet}
        return True

    def replacement(self, inputs):
        {replacement}
        return Abs(inputs[0])
"""


def test_sys_exit_in_a_pass_file_fails_the_load_and_the_cli_reports_it(model, tmp_path, capsys):
    pass_file = write(tmp_path / "p" / "exits.py", "import sys\n\nsys.exit(3)\n")
    run = gebench.compile(model, passes=str(pass_file))
    assert run.status == "FAILED" and run.failure_reason.startswith("pass plugin load failed")
    (err,) = run.load_errors
    assert err.line == 3 and "SystemExit(3)" in str(err) and str(pass_file.resolve()) in str(err)
    report = tmp_path / "report.json"
    code = cli.main(["compile", str(model), "--passes", str(pass_file), "--report", str(report)])
    assert code == 1
    assert "SystemExit(3)" in capsys.readouterr().out
    assert '"status": "FAILED"' in report.read_text(encoding="utf-8")


@pytest.mark.parametrize("init, run_line, line", [
    ("pass", "sys.exit(0)", 14),
    ("pass", "raise KeyboardInterrupt('stop')", 14),
    ("raise SystemExit('bye')", "return True", 10),
])
def test_exit_in_init_or_run_fails_the_pass_and_keeps_the_graph(model, tmp_path, init, run_line, line):
    pass_file = write(tmp_path / "exits.py", EXIT_IN_RUN.format(init=init, run=run_line))
    run = gebench.compile(model, passes=str(pass_file))
    assert run.status == "FAILED" and run.failed_pass == "Exits"
    assert "PassCodeExit" in run.failure_reason and f"{pass_file.resolve()}:{line}" in run.failure_reason
    assert run.ir_graph.find("Relu_0") is not None  # the half-done run() was rolled back


def test_exit_in_replacement_fails_the_pass(model, tmp_path):
    pass_file = write(tmp_path / "hooks.py", PATTERN_PASS.format(meet="pass", replacement="sys.exit(2)"))
    run = gebench.compile(model, passes=str(pass_file))
    assert run.status == "FAILED" and run.failed_pass == "Hooks"
    assert "SystemExit(2)" in run.failure_reason
    assert [n.op_type for n in run.ir_graph.nodes()].count("Relu") == 1


def test_keyboard_interrupt_raised_by_meet_requirements_counts_as_false(model, tmp_path):
    pass_file = write(tmp_path / "hooks.py", PATTERN_PASS.format(meet="raise KeyboardInterrupt", replacement="pass"))
    run = gebench.compile(model, passes=str(pass_file))
    assert run.status == "SUCCESS"
    (rec,) = [r for r in run.ledger if r.status.name == "REJECTED_BY_MEET_REQUIREMENTS"]
    assert "KeyboardInterrupt" in rec.exception and f"{pass_file.resolve()}:15" in rec.exception


def test_a_real_ctrl_c_inside_a_hook_still_stops_compile(model, tmp_path):
    pass_file = write(tmp_path / "hooks.py", PATTERN_PASS.format(
        meet="signal.raise_signal(signal.SIGINT)", replacement="pass"))
    with pytest.raises(KeyboardInterrupt):
        gebench.compile(model, passes=str(pass_file))


# ------------------------------------------------------------------------------ 4: dump ports beyond the outputs
def _dump_with_relu_input(model: Path, tmp_path: Path, entry: str) -> Path:
    from gebench.io import ge_dump

    (path,) = ge_dump.write_dumps({"PreRunBegin": gebench.load(model)}, tmp_path / "dumps", formats=["ge_proto"])
    text = path.read_text(encoding="utf-8")
    at = text.index('name: "Relu_0"')
    assert 'input: "input_0:0"' in text[at:]
    path.write_text(text[:at] + text[at:].replace('input: "input_0:0"', f'input: "{entry}"', 1), encoding="utf-8")
    return path


@pytest.mark.timeout(60)
@pytest.mark.parametrize("port", [7, 1, 2_000_000_000])
def test_dump_input_naming_an_output_the_op_does_not_have_is_refused(model, tmp_path, port):
    from gebench.io import GeDumpError, load_ge_dump

    path = _dump_with_relu_input(model, tmp_path, f"input_0:{port}")
    with pytest.raises(GeDumpError) as info:
        load_ge_dump(path)
    text = str(info.value)
    assert text.startswith(f"{path}:") and "'Relu_0'" in text
    assert f"input_0:{port}" in text and "1 output_desc entry" in text
    with pytest.raises(ValueError, match="output_desc"):  # through gebench.load as well
        gebench.load(path)


DESCLESS_DUMP = """
graph {{
  name: "g"
  op {{ name: "x" type: "Data" input: "" attr {{ key: "index" value {{ i: 0 }} }} }}
  op {{ name: "r" type: "Relu" input: "x:{port}" }}
}}
"""


@pytest.mark.timeout(60)
def test_dump_op_without_output_desc_gets_bounded_anchors_on_demand(tmp_path):
    from gebench.io import GeDumpError, load_ge_dump

    ok = write(tmp_path / "ok.txt", DESCLESS_DUMP.format(port=2))
    graph = load_ge_dump(ok)
    assert graph.find("x").num_outputs == 3 and graph.producers(graph.find("r"))[0][1] == 2
    bad = write(tmp_path / "bad.txt", DESCLESS_DUMP.format(port=2_000_000_000))
    with pytest.raises(GeDumpError, match=r"bad\.txt:\d+: .*'r'.*at most 65536 outputs"):
        load_ge_dump(bad)


# ------------------------------------------------------------------------------ 5: writers sharing a dump folder
def test_dump_writers_never_share_a_temporary_file(model, tmp_path):
    """Another process's in-flight temporary file (the old shared ``<name>.part``) is left alone."""
    from gebench.io import ge_dump

    dumps = tmp_path / "dumps"
    dumps.mkdir()
    graph = gebench.load(model)
    name = ge_dump.dump_file_name("ge_proto", 0, "PreRunBegin")
    other = dumps / (name + ".part")
    other.write_text("another writer's half-written dump", encoding="utf-8")
    (path,) = ge_dump.write_dumps({"PreRunBegin": graph}, dumps, formats=["ge_proto"])
    assert path.name == name
    assert other.read_text(encoding="utf-8") == "another writer's half-written dump"
    assert sorted(p.name for p in dumps.iterdir()) == sorted([name, other.name])
    assert ge_dump.load_ge_dump(path).find("Relu_0") is not None


def test_failed_dump_write_leaves_no_temporary_file(model, tmp_path, monkeypatch):
    from gebench import _atomic
    from gebench.io import GeDumpError, ge_dump

    dumps = tmp_path / "dumps"

    def replace_fails(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_atomic.os, "replace", replace_fails)
    with pytest.raises(GeDumpError, match=r"cannot write .*PreRunBegin\.txt: No space left on device"):
        ge_dump.write_dumps({"PreRunBegin": gebench.load(model)}, dumps, formats=["ge_proto"])
    assert list(dumps.iterdir()) == []


def test_ir_text_dump_writer_is_atomic_too(model, tmp_path, monkeypatch):
    from gebench import api

    monkeypatch.setattr(api, "_DUMP_WRITERS", [])
    monkeypatch.setattr(api, "_ensure_extensions", lambda: None)
    run = gebench.compile(model, passes=[])
    stale = tmp_path / "ge_readable_00000000_graph_0_PreRunBegin.txt.part"
    stale.write_text("another writer", encoding="utf-8")
    written = api.write_dumps(run, tmp_path)
    assert written and stale.read_text(encoding="utf-8") == "another writer"
    assert gebench.load(written[0]).ir.find("Relu_0") is not None


# ------------------------------------------------------------------------------ 6: --verify on a huge input
RELU_TO_ABS = """
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass
from ge.es.all import Relu, Abs


@register_fusion_pass(name="ReluToAbs", stage=PassStage.BEFORE_INFER_SHAPE)
class ReluToAbs(PatternFusionPass):
    @pattern
    def relu(self, inputs):
        return Relu(inputs[0])

    def replacement(self, inputs):
        return Abs(inputs[0])
"""


def _model_with_input_shape(model: Path, tmp_path: Path, shape: str) -> Path:
    path = tmp_path / "shaped.gir"
    path.write_text(model.read_text(encoding="utf-8").replace("DT_FLOAT[2]", f"DT_FLOAT[{shape}]"), encoding="utf-8")
    return path


@pytest.mark.timeout(120)
def test_verify_on_an_input_too_large_for_memory_is_refused_with_the_size(model, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GEBENCH_EXEC_MEMORY_LIMIT", "1G")
    big = _model_with_input_shape(model, tmp_path, "100000, 100000, 2")  # 74.5 GiB of float32
    passes = write(tmp_path / "p" / "relu_to_abs.py", RELU_TO_ABS)
    code = cli.main(["compile", str(big), "--passes", str(passes), "--verify"])
    captured = capsys.readouterr()
    assert code == 0
    assert "Traceback" not in captured.out + captured.err
    assert "not checked" in captured.out and "'input_0'" in captured.out
    assert "74.5 GiB" in captured.out and "GEBENCH_EXEC_MEMORY_LIMIT" in captured.out
    run = gebench.compile(big, passes=str(passes), verify=True)  # the per-rewrite check during the compile
    assert run.status == "SUCCESS"


def test_execute_refuses_random_inputs_beyond_the_memory_limit(model, tmp_path, monkeypatch):
    from gebench.exec import ExecutionError, execute
    from gebench.exec.reference import memory_budget

    monkeypatch.setenv("GEBENCH_EXEC_MEMORY_LIMIT", "1M")
    assert memory_budget() == 1 << 20
    graph = gebench.load(_model_with_input_shape(model, tmp_path, "1024, 1024"))
    with pytest.raises(ExecutionError, match=r"input 'input_0' \(DT_FLOAT\[1024, 1024\], 4\.0 MiB\).*1\.0 MiB"):
        execute(graph)
    monkeypatch.setenv("GEBENCH_EXEC_MEMORY_LIMIT", "64M")
    (out,) = execute(graph)
    assert out.shape == (1024, 1024) and (out >= 0).all()
    monkeypatch.setenv("GEBENCH_EXEC_MEMORY_LIMIT", "lots")
    with pytest.raises(ValueError, match="GEBENCH_EXEC_MEMORY_LIMIT='lots' is not a size"):
        memory_budget()


# ------------------------------------------------------------------------------ 7: executor inputs
@pytest.fixture
def small_graph(model, tmp_path):
    return gebench.load(_model_with_input_shape(model, tmp_path, "4, 16"))


def test_execute_refuses_an_input_of_the_wrong_shape(small_graph):
    import numpy as np

    from gebench.exec import ExecutionError, execute

    with pytest.raises(ExecutionError, match=r"input 'input_0' \(index 0\) is DT_FLOAT\[4, 16\] but an array of "
                                             r"shape \[40, 16\] was given") as info:
        execute(small_graph, [np.ones((40, 16), np.float32)])
    assert info.value.node_name == "input_0"
    with pytest.raises(ExecutionError, match=r"shape \[16\]"):
        execute(small_graph, {"input_0": np.ones(16, np.float32)})
    (out,) = execute(small_graph, {0: -np.ones((4, 16))})  # float64 is cast to the desc's float32
    assert out.dtype == np.float32 and out.shape == (4, 16) and (out == 0).all()


def test_execute_names_the_input_it_cannot_cast(small_graph):
    import numpy as np

    from gebench.exec import ExecutionError, execute

    with pytest.raises(ExecutionError, match=r"input 'input_0' .* DT_FLOAT but <U3 values were given"):
        execute(small_graph, [np.full((4, 16), "abc")])
    with pytest.raises(ExecutionError, match=r"input 'input_0' .* DT_FLOAT; the <U3 values given cannot be cast"):
        execute(small_graph, [np.full((4, 16), "abc")], check_inputs=False)
    with pytest.raises(ExecutionError, match=r"input 'input_0' .* complex128 values were given"):
        execute(small_graph, [np.ones((4, 16), complex)])


def test_execute_unknown_dims_match_any_size(model, tmp_path):
    import numpy as np

    from gebench.exec import ExecutionError, execute

    graph = gebench.load(_model_with_input_shape(model, tmp_path, "-1, 16"))
    (out,) = execute(graph, [np.ones((7, 16), np.float32)])
    assert out.shape == (7, 16)
    with pytest.raises(ExecutionError, match=r"\[7, 15\]"):
        execute(graph, [np.ones((7, 15), np.float32)])


# ------------------------------------------------------------------------------ 8: invalid ONNX
def _onnx_model(tmp_path: Path, *, second_writer: bool = False, input_dims: tuple = (2,),
                init_dims: tuple | None = None, name: str = "m.onnx") -> Path:
    import onnx
    from onnx import TensorProto, helper

    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu")]
    if second_writer:
        nodes.append(helper.make_node("Abs", ["x"], ["y"], name="abs"))
    inits = []
    if init_dims is not None:
        t = TensorProto(name="w", data_type=TensorProto.FLOAT)
        t.dims.extend(init_dims)
        inits.append(t)
        nodes = [helper.make_node("Add", ["x", "w"], ["y"], name="add")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(input_dims))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    path = tmp_path / name
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def test_onnx_with_two_writers_of_one_tensor_is_refused(tmp_path, capsys):
    from gebench.io import OnnxImportError, load_onnx

    path = _onnx_model(tmp_path, second_writer=True)
    with pytest.raises(OnnxImportError, match=r"tensor 'y' of graph 'g' is written by node 'abs' \(Abs\) and by node "
                                              r"'relu' \(Relu\); ONNX graphs are in single static assignment form"):
        load_onnx(path)
    assert cli.main(["compile", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "single static assignment" in err and "Traceback" not in err


def test_onnx_with_a_negative_dimension_is_refused(tmp_path):
    from gebench.io import OnnxImportError, load_onnx

    with pytest.raises(OnnxImportError, match=r"dimension 1 of tensor 'x' \(graph 'g'\) is -5"):
        load_onnx(_onnx_model(tmp_path, input_dims=(2, -5)))
    with pytest.raises(OnnxImportError, match=r"onnx\.checker\): Negative dimension value \(tensor name: w\)"):
        load_onnx(_onnx_model(tmp_path, init_dims=(-5,), name="init.onnx"))
    graph = load_onnx(_onnx_model(tmp_path, input_dims=(-1, 2), name="dynamic.onnx"))  # -1 stays "unknown"
    assert graph.node_by_name("relu").op_type == "Relu"


# ------------------------------------------------------------------------------ 9: custom-op declarations
@pytest.fixture
def custom_ops_state(monkeypatch):
    from gebench.ops import _catalogue

    monkeypatch.delenv("GEBENCH_CUSTOM_OPS", raising=False)
    saved = _catalogue._snapshot()
    yield
    _catalogue._restore(saved)


@pytest.mark.parametrize("entry, message", [
    ({"subgraphs": [1]}, r"subgraphs\[0\] must be a subgraph name or an object with a non-empty 'name', got 1"),
    ({"subgraphs": [{"name": ""}]}, r"subgraphs\[0\] must be a subgraph name"),
    ({"attrs": [{"name": "k", "type": "ListInt", "default": ["a", 2]}]},
     r"attr 'k': default \['a', 2\] is not a ListInt: item 0 is 'a': expected a JSON int"),
    ({"attrs": [{"name": "k", "type": "ListInt", "default": [True]}]}, r"item 0 is True: expected a JSON int"),
    ({"attrs": [{"name": "k", "type": "ListFloat", "default": [1.0, "x"]}]}, r"item 1 is 'x': expected a JSON number"),
    ({"attrs": [{"name": "k", "type": "ListBool", "default": [1]}]}, r"item 0 is 1: expected a JSON bool"),
    ({"attrs": [{"name": "k", "type": "ListListInt", "default": [[1], 2]}]}, r"a JSON list of lists of integers"),
    ({"attrs": [{"name": "k", "type": "NamedAttrs", "default": 3}]}, r"expected a JSON object"),
    ({"attrs": [{"name": "k", "type": ["Int"], "default": 3}]}, r"type \['Int'\] is not one of"),
    ({"inputs": [{"name": "x", "kind": ["optional"]}]}, r"inputs\[0\] 'x': kind \['optional'\] is not one of"),
    ({"inputs": [{"name": "x", "dtypes": 7}]}, r"inputs\[0\] 'x': 'dtypes' must be a string"),
    ({"dtypes": {"x": 7}}, r"field 'dtypes' must be a string or an object mapping"),
    ({"category": 5}, r"field 'category' must be a string"),
])
def test_bad_custom_op_fields_are_refused_when_the_file_is_loaded(tmp_path, custom_ops_state, entry, message):
    import json

    from gebench import ops

    path = tmp_path / "ops.json"
    declaration = {"inputs": ["x"], "outputs": ["y"], **entry}
    path.write_text(json.dumps({"MyReliableOp": declaration}), encoding="utf-8")
    expected = rf"^{re.escape(str(path))}: custom op 'MyReliableOp': (attr 'k': .*)?{message}"
    with pytest.raises(ops.CustomOpError, match=expected):
        ops.load_custom_ops(path)
    assert ops.get_schema("MyReliableOp") is None  # nothing declared


def test_good_custom_op_list_defaults_still_load(tmp_path, custom_ops_state):
    import json

    from gebench import ops

    path = tmp_path / "ops.json"
    path.write_text(json.dumps({"MyReliableOp": {
        "inputs": ["x"], "outputs": ["y"], "subgraphs": ["body", {"name": "cond"}],
        "attrs": [{"name": "k", "type": "ListInt", "default": [1, 2]},
                  {"name": "f", "type": "ListFloat", "default": [1, 2.5]},
                  {"name": "s", "type": "ListString", "default": ["a"]},
                  {"name": "m", "type": "ListListInt", "default": [[1], []]}]}}), encoding="utf-8")
    assert ops.load_custom_ops(path) == ["MyReliableOp"]
    schema = ops.get_schema("MyReliableOp")
    assert schema.subgraphs == ("body", "cond")
    assert [a.default for a in schema.attrs] == [[1, 2], [1.0, 2.5], ["a"], [[1], []]]
