"""The nine GE Python samples (spec §4), written as pass files in tests/ge_samples/, run unchanged through
gebench.compile on graphs built with GraphBuilder: rewrites, ledger verdicts and printed lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import gebench
from gebench import ir

SAMPLES = Path(__file__).parent / "ge_samples"


def sample(name: str) -> list[str]:
    return [str(SAMPLES / name)]


def types_of(run) -> list[str]:
    return [n.op_type for n in run.ir_graph.nodes()]


def statuses(run) -> list[str]:
    return [r.status.name for r in run.ledger if r.status.name != "LINT"]


def check(run) -> None:
    run.ir_graph.verify()
    for snap in run.ir_snapshots.values():
        snap.verify()


@pytest.fixture(scope="module")
def es():
    from ge.es import all as es_all
    from ge.es.graph_builder import GraphBuilder
    from ge.graph import Tensor
    from ge.graph.types import DataType, Format

    class NS:
        pass

    ns = NS()
    ns.all, ns.GraphBuilder, ns.Tensor, ns.DataType, ns.Format = es_all, GraphBuilder, Tensor, DataType, Format
    return ns


def matmul_add_graph(es, *, batch=False, dtype=None, t1=False, bias_values=(0.1, 0.1, 0.1, 0.1)):
    b = es.GraphBuilder("target")
    dt = dtype or es.DataType.DT_FLOAT
    x = b.create_input(0, shape=[2, 2], data_type=dt)
    y = b.create_input(1, shape=[2, 2], data_type=dt)
    c = es.all.Const(b, value=es.Tensor(list(bias_values), None, es.DataType.DT_FLOAT, es.Format.FORMAT_ND, [2, 2]))
    if batch:
        m = es.all.BatchMatMulV2(x, y)
    else:
        m = es.all.MatMul(x, y, None, transpose_x1=t1, transpose_x2=False)
    if dtype is not None:
        m.set_data_type(dtype)
    return b.build_and_reset([es.all.Add(m, c)])


# ----------------------------------------------------------------------------------------------- #1
def test_sample1_move_relu_before_concat(es, capsys):
    b = es.GraphBuilder("concat_relu")
    x0, x1, x2 = (b.create_input(i, shape=[2, 3]) for i in range(3))
    dim = b.create_scalar_int32(1)
    out = es.all.Relu(es.all.ConcatV2([x0, x1, x2], dim, N=3))
    run = gebench.compile(b.build_and_reset([out]), passes=sample("python_move_relu_before_concat_pass.py"))
    assert run.status == "SUCCESS"
    check(run)
    assert capsys.readouterr().out.splitlines() == ["PythonMoveReluBeforeConcatPass",
                                                    "Replacement of PythonMoveReluBeforeConcatPass succeeded"]
    g = run.ir_graph
    (concat,) = g.nodes_of_type("ConcatV2")
    producers = [p[0] for p in g.producers(concat)]
    assert [p.op_type for p in producers] == ["Relu", "Relu", "Relu", "Const"]
    assert [g.producer(p, 0)[0].name for p in producers[:3]] == ["input_0", "input_1", "input_2"]
    assert g.producer(g.nodes_of_type("NetOutput")[0], 0)[0] is concat
    assert concat.outputs[0].shape == (2, 9)
    assert all(n.provenance == "PythonMoveReluBeforeConcatPass" for n in g.nodes_of_type("Relu"))
    assert statuses(run) == ["REPLACED"]


def test_sample1_no_relu_no_change(es, capsys):
    b = es.GraphBuilder("concat_only")
    x0, x1 = (b.create_input(i, shape=[2, 3]) for i in range(2))
    out = es.all.ConcatV2([x0, x1], b.create_scalar_int32(0), N=2)
    run = gebench.compile(b.build_and_reset([out]), passes=sample("python_move_relu_before_concat_pass.py"))
    assert run.status == "SUCCESS"
    assert capsys.readouterr().out.splitlines() == ["PythonMoveReluBeforeConcatPass"]
    assert types_of(run) == types_of_snapshot(run, "PreRunBegin")


def types_of_snapshot(run, suffix):
    return [n.op_type for n in run.ir_snapshots[suffix].nodes()]


# ----------------------------------------------------------------------------------------------- #2
def conv_transpose_graph(es, fmt="NCHW", perm=(0, 2, 3, 1)):
    b = es.GraphBuilder("conv_t")
    x = b.create_input(0, shape=[1, 3, 8, 8])
    w = b.create_input(1, shape=[4, 3, 1, 1])
    conv = es.all.Conv2D(x, w, None, None, strides=[1, 1, 1, 1], pads=[0, 0, 0, 0], data_format=fmt)
    p = b.create_const_int32(list(perm))
    return b.build_and_reset([es.all.Transpose(conv, p)])


def test_sample2_conv_format_removes_transpose(es, capsys):
    run = gebench.compile(conv_transpose_graph(es), passes=sample("python_modify_conv_data_format_pass.py"),
                          stages=["BeforeInferShape"])
    assert run.status == "SUCCESS", run.failure_reason
    check(run)
    assert capsys.readouterr().out.splitlines() == ["PythonConvTransFormatPass is starting",
                                                    "Remove output edges success",
                                                    "PythonConvTransFormatPass completed"]
    g = run.ir_graph
    assert sorted(types_of(run)) == ["Conv2D", "Data", "Data", "NetOutput"]
    (conv,) = g.nodes_of_type("Conv2D")
    assert conv.attrs["data_format"] == "NHWC"
    assert g.producer(g.nodes_of_type("NetOutput")[0], 0)[0] is conv
    (rec,) = [r for r in run.ledger if r.status.name == "REPLACED"]
    assert rec.detail["via"] == "report_fuse" and rec.target_node_names == ["Transpose_2"]


def test_sample2_no_nchw_conv(es, capsys):
    run = gebench.compile(conv_transpose_graph(es, fmt="NHWC"), passes=sample("python_modify_conv_data_format_pass.py"),
                          stages=["BeforeInferShape"])
    assert run.status == "SUCCESS"
    assert capsys.readouterr().out.splitlines() == ["PythonConvTransFormatPass is starting",
                                                    "Graph has no Conv node in NCHW format"]
    assert "Transpose" in types_of(run)


# ----------------------------------------------------------------------------------------------- #3
@pytest.mark.parametrize("batch", [False, True])
def test_sample3_matmul_add_to_gemm(es, batch):
    run = gebench.compile(matmul_add_graph(es, batch=batch), passes=sample("python_fuse_matmul_add_pass.py"))
    assert run.status == "SUCCESS"
    check(run)
    g = run.ir_graph
    (gemm,) = g.nodes_of_type("GEMM")
    prods = [g.producer(gemm, i)[0] for i in range(5)]
    assert [p.name for p in prods[:2]] == ["input_0", "input_1"]
    assert prods[2].op_type == "Const" and prods[2].attrs["value"].array.ravel().tolist() == pytest.approx([0.1] * 4)
    assert [float(p.attrs["value"].array) for p in prods[3:]] == [1.0, 1.0]
    assert not g.nodes_of_type("Add") and not g.nodes_of_type("MatMul") and not g.nodes_of_type("BatchMatMulV2")
    (rec,) = [r for r in run.ledger if r.status.name == "REPLACED"]
    expected = "batch_matmul_add" if batch else "matmul_add"
    assert rec.pattern_name == f"PythonFuseMatMulAndAddPass_{expected}_pattern"
    assert rec.pattern_source.endswith(".py:" + str(_line_of(SAMPLES / "python_fuse_matmul_add_pass.py",
                                                              f"def {expected}(") - 1))
    assert [c[1] for c in rec.captures] == ["input_0", "input_1", "Const_0", "Add_2"]
    assert gemm.outputs[0].shape == (2, 2)


def _line_of(path: Path, text: str) -> int:
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if text in line:
            return i
    raise AssertionError(text)


def test_sample3_does_not_fire_without_add(es):
    b = es.GraphBuilder("mm_relu")
    x, y = b.create_input(0, shape=[2, 2]), b.create_input(1, shape=[2, 2])
    run = gebench.compile(b.build_and_reset([es.all.Relu(es.all.MatMul(x, y))]),
                          passes=sample("python_fuse_matmul_add_pass.py"))
    assert run.status == "SUCCESS"
    assert "GEMM" not in types_of(run) and statuses(run) == []


# ----------------------------------------------------------------------------------------------- #4
def test_sample4_capture_tensor(es, capsys):
    run = gebench.compile(matmul_add_graph(es), passes=sample("python_fuse_matmul_add_capture_pass.py"))
    assert run.status == "SUCCESS"
    check(run)
    assert capsys.readouterr().out.splitlines() == [
        "Define pattern for FuseMatMulAndAddPass in capture tensor sample",
        "Define MeetRequirements for FuseMatMulAndAddPass in capture tensor sample",
        "Define replacement for FuseMatMulAndAddPass in capture tensor sample",
    ]
    (gemm,) = run.ir_graph.nodes_of_type("GEMM")
    assert gemm.attrs["transpose_a"] is False and gemm.attrs["transpose_b"] is False
    (rec,) = [r for r in run.ledger if r.status.name == "REPLACED"]
    assert rec.pattern_name == "pattern0" and [c[1] for c in rec.captures] == ["MatMul_1", "Add_2"]
    path = SAMPLES / "python_fuse_matmul_add_capture_pass.py"
    assert rec.pattern_source == f"{path}:{_line_of(path, 'pat0 = create_pattern')}"
    assert rec.hook_source == f"{path}:{_line_of(path, 'def meet_requirements')}"


def test_sample4_transpose_attr_carried(es):
    run = gebench.compile(matmul_add_graph(es, t1=True), passes=sample("python_fuse_matmul_add_capture_pass.py"))
    (gemm,) = run.ir_graph.nodes_of_type("GEMM")
    assert gemm.attrs["transpose_a"] is True and gemm.attrs["transpose_b"] is False


def test_sample4_fp16_rejected_with_print(es, capsys):
    run = gebench.compile(matmul_add_graph(es, dtype=es.DataType.DT_FLOAT16),
                          passes=sample("python_fuse_matmul_add_capture_pass.py"), stages=["BeforeInferShape"])
    assert run.status == "SUCCESS"
    out = capsys.readouterr().out
    assert "Only support Add inputs are DT_FLOAT, got input0=DT_FLOAT16, input1=DT_FLOAT" in out
    assert "GEMM" not in types_of(run)
    assert statuses(run) == ["REJECTED_BY_MEET_REQUIREMENTS", "STRUCTURAL_MISMATCH"]
    rejected = run.ledger.by_status(run.ledger.records[0].status)
    assert rejected[0].meet_requirements_result is False


# ----------------------------------------------------------------------------------------------- #5
def test_sample5_config_match_fires(es):
    run = gebench.compile(matmul_add_graph(es), passes=sample("python_matmul_add_config_pass.py"))
    assert run.status == "SUCCESS"
    check(run)
    assert "GEMM" in types_of(run) and "MatMul" not in types_of(run)


@pytest.mark.parametrize("kwargs,kind", [({"t1": True}, "ir_attr"), ({"bias_values": (0.2,) * 4}, "const_value")])
def test_sample5_config_misses(es, kwargs, kind):
    run = gebench.compile(matmul_add_graph(es, **kwargs), passes=sample("python_matmul_add_config_pass.py"))
    assert run.status == "SUCCESS"
    assert "GEMM" not in types_of(run)
    misses = [r for r in run.ledger if r.pattern_name == "PythonMatmulAddFusionPass_matmul_add_pattern"]
    assert [r.status.name for r in misses] == ["STRUCTURAL_MISMATCH"]
    assert misses[0].detail["kind"] == kind
    near = run.ledger.near_misses("PythonMatmulAddFusionPass_matmul_add_pattern")
    assert near and near[0].kind == kind


# ----------------------------------------------------------------------------------------------- #6, #7
def add_const_graph(es, value):
    b = es.GraphBuilder("add_zero")
    x = b.create_input(0, shape=[2, 2])
    return b.build_and_reset([x + value])


def test_sample6_add_zero(es, capsys):
    run = gebench.compile(add_const_graph(es, 0.0), passes=sample("python_add_zero_pass.py"))
    assert run.status == "SUCCESS"
    check(run)
    assert capsys.readouterr().out.splitlines() == [
        "[PythonAddZeroPass] matched=PythonAddZeroPass_add_zero_pattern captured=input_0:0 const_dtype=DT_FLOAT "
        "zero=True"]
    g = run.ir_graph
    assert types_of(run) == ["Data", "NetOutput"]
    assert g.producer(g.nodes_of_type("NetOutput")[0], 0)[0].name == "input_0"


def test_sample6_nonzero_rejected(es, capsys):
    run = gebench.compile(add_const_graph(es, 1.0), passes=sample("python_add_zero_pass.py"))
    assert run.status == "SUCCESS" and "Add" in types_of(run)
    assert capsys.readouterr().out == ""
    (rec,) = run.ledger.records
    assert rec.status.name == "REJECTED_BY_MEET_REQUIREMENTS" and rec.meet_requirements_result is False
    assert rec.hook_source.endswith(":" + str(_line_of(SAMPLES / "python_add_zero_pass.py", "def meet_requirements")))


def test_sample7_const_value_match(es, capsys):
    run = gebench.compile(add_const_graph(es, 0.0), passes=sample("python_add_zero_pass_const_value_match.py"))
    assert run.status == "SUCCESS" and types_of(run) == ["Data", "NetOutput"]
    assert capsys.readouterr().out.splitlines() == [
        "[PythonAddZeroConstValueMatchPass] matched=PythonAddZeroConstValueMatchPass_add_zero_pattern "
        "captured=input_0:0"]


@pytest.mark.parametrize("value", [0, 1.0])
def test_sample7_strict_bytes_miss(es, value, capsys):
    run = gebench.compile(add_const_graph(es, value), passes=sample("python_add_zero_pass_const_value_match.py"))
    assert "Add" in types_of(run) and capsys.readouterr().out == ""
    (rec,) = run.ledger.records
    assert rec.status.name == "STRUCTURAL_MISMATCH" and rec.detail["kind"] == "const_value"


# ----------------------------------------------------------------------------------------------- #8
@pytest.fixture
def custom_ops(tmp_path):
    path = tmp_path / "add_custom.json"
    path.write_text(json.dumps({"AddCustom": {
        "inputs": [{"name": "x", "kind": "required", "dtypes": "T"}, {"name": "y", "kind": "required", "dtypes": "T"}],
        "outputs": [{"name": "z", "kind": "required", "dtypes": "T"}], "attrs": []}}))
    from gebench import ops

    ops.load_custom_ops(path)
    return path


@pytest.mark.parametrize("with_tensormove", [False, True])
def test_sample8_addcustom_zero(es, custom_ops, capsys, with_tensormove):
    from ge.es.custom import AddCustom

    b = es.GraphBuilder("addcustom")
    x, y = b.create_input(0, shape=[4]), b.create_input(1, shape=[4])
    zero = es.all.Const(b, value=es.Tensor([0.0], None, es.DataType.DT_FLOAT16, es.Format.FORMAT_ND, []))
    z = es.all.Identity(zero)
    if with_tensormove:
        z = es.all.TensorMove(z)
    run = gebench.compile(b.build_and_reset([AddCustom(AddCustom(x, z), y)]), custom_ops=custom_ops,
                          passes=sample("python_addcustom_zero_pass.py"))
    assert run.status == "SUCCESS"
    check(run)
    pattern = "addcustom_zero_with_tensormove" if with_tensormove else "addcustom_zero"
    assert capsys.readouterr().out.splitlines() == [
        f"[PythonAddCustomZeroPass] matched=PythonAddCustomZeroPass_{pattern}_pattern const_dtype=DT_FLOAT16 "
        "zero=True"]
    g = run.ir_graph
    (node,) = g.nodes_of_type("AddCustom")
    assert [g.producer(node, i)[0].name for i in range(2)] == ["input_0", "input_1"]
    assert sorted(types_of(run)) == ["AddCustom", "Data", "Data", "NetOutput"]
    assert any(r.status.name == "LINT" and r.detail.get("rule") == "no_inference_rule" for r in run.ledger)


# ----------------------------------------------------------------------------------------------- #9
def grouped_conv_graph(es, groups=2, bias=False, fmt="NCHW"):
    b = es.GraphBuilder("grouped_conv")
    nchw = es.Format.FORMAT_NCHW
    x = b.create_input(0, shape=[1, 4, 8, 8], format=nchw)
    w = b.create_input(1, shape=[4, 4 // groups, 3, 3], format=nchw)
    bias_t = b.create_input(2, shape=[4]) if bias else None
    y = es.all.Conv2D(x, w, bias_t, None, strides=[1, 1, 1, 1], pads=[1, 1, 1, 1], groups=groups, data_format=fmt)
    return b.build_and_reset([y])


def test_sample9_decompose_grouped_conv(es):
    run = gebench.compile(grouped_conv_graph(es), passes=sample("python_decompose_pass.py"))
    assert run.status == "SUCCESS", run.failure_reason
    check(run)
    g = run.ir_graph
    assert sorted(types_of(run)) == sorted(["Data", "Data", "Const", "Split", "Const", "Split", "Conv2D", "Conv2D",
                                            "Const", "Concat", "NetOutput"])
    convs = g.nodes_of_type("Conv2D")
    assert [c.attrs["groups"] for c in convs] == [1, 1]
    assert [c.outputs[0].shape for c in convs] == [(1, 2, 8, 8), (1, 2, 8, 8)]
    (concat,) = g.nodes_of_type("Concat")
    assert concat.outputs[0].shape == (1, 4, 8, 8)
    # the snapshot before AfterInferShape still has the grouped conv; the one after does not
    assert "Split" not in types_of_snapshot(run, "RunCustomPassBeforeInfershape")
    assert "Split" in types_of_snapshot(run, "RunCustomPass_AfterInferShape")
    assert statuses(run) == ["REPLACED"]
    assert not [r for r in run.ledger if r.detail.get("rule") == "missing_infer_shape"]


def test_sample9_groups_one_rejected(es):
    run = gebench.compile(grouped_conv_graph(es, groups=1), passes=sample("python_decompose_pass.py"))
    assert run.status == "SUCCESS" and "Split" not in types_of(run)
    assert statuses(run) == ["REJECTED_BY_MEET_REQUIREMENTS"]


def test_sample9_bias_breaks_the_boundary_and_fails_like_ge(es):
    run = gebench.compile(grouped_conv_graph(es, bias=True), passes=sample("python_decompose_pass.py"))
    assert run.status == "FAILED"
    assert run.failed_pass == "PythonDecomposeGroupedConvToSplitedPass"
    assert run.failed_stage == "AfterInferShape"
    assert "Conv2D_0" in run.failure_reason
    # nothing half-mutated: the graph is the one before the failing rewrite
    assert ir.to_text(run.ir_graph) == ir.to_text(run.ir_snapshots["RunCustomPassBeforeInfershape"]) or \
        types_of(run) == types_of_snapshot(run, "RunCustomPassBeforeInfershape")
    run.ir_graph.verify()
    (rec,) = [r for r in run.ledger if r.status.name == "REPLACEMENT_FAILED"]
    assert rec.detail["boundary_inputs"] == 3
