"""Equivalence checks: whole graphs, single rewrites (locally on boundary tensors) and whole runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gebench
from gebench import ir
from gebench.exec import (
    capture_rewrite,
    check_captured_rewrite,
    check_graphs,
    check_rewrite,
    compare_outputs,
    verify_run,
)
from gebench.fusion import Boundary, BoundaryInput, rewrite

F = ir.DataType.DT_FLOAT
SAMPLES = Path(__file__).parent / "ge_samples"


def _f(shape: tuple[int, ...]) -> ir.TensorDesc:
    return ir.TensorDesc.of(F, shape)


def _data(g: ir.Graph, name: str, index: int, shape: tuple[int, ...]) -> ir.Node:
    return g.add_node("Data", name=name, attrs={"index": index}, inputs=[_f(shape)], outputs=[_f(shape)],
                      input_names=["x"], output_names=["y"])


def _const(g: ir.Graph, name: str, value: np.ndarray) -> ir.Node:
    tv = ir.TensorValue(F, value.astype(np.float32))
    return g.add_node("Const", name=name, attrs={"value": tv}, outputs=[tv.desc()], output_names=["y"])


def matmul_add_graph(n: int = 3) -> ir.Graph:
    """a @ b + c -> Relu -> NetOutput (square n x n, so a swapped GEMM still runs)."""
    g = ir.Graph("mm_add")
    a, b, c = (_data(g, name, i, (n, n)) for i, name in enumerate("abc"))
    mm = g.add_node("MatMulV2", name="mm", inputs=[_f((n, n)), _f((n, n)), ir.TensorDesc.placeholder(),
                                                   ir.TensorDesc.placeholder()], outputs=[_f((n, n))])
    add = g.add_node("Add", name="add", inputs=[_f((n, n)), _f((n, n))], outputs=[_f((n, n))])
    relu = g.add_node("Relu", name="relu", inputs=[_f((n, n))], outputs=[_f((n, n))])
    net = g.add_node("NetOutput", name="Node_Output", inputs=1)
    g.add_edge(a, 0, mm, 0)
    g.add_edge(b, 0, mm, 1)
    g.add_edge(mm, 0, add, 0)
    g.add_edge(c, 0, add, 1)
    g.add_edge(add, 0, relu, 0)
    g.add_edge(relu, 0, net, 0)
    return g


def gemm_replacement(n: int = 3, *, swapped: bool = False) -> ir.Graph:
    """Data 0,1,2 -> GEMM(a, b, c, 1, 1) (or GEMM(b, a, ...) when ``swapped``) -> NetOutput."""
    r = ir.Graph("gemm")
    a, b, c = (_data(r, name, i, (n, n)) for i, name in enumerate("abc"))
    alpha = _const(r, "alpha", np.asarray(1.0))
    beta = _const(r, "beta", np.asarray(1.0))
    gemm = r.add_node("GEMM", name="gemm", inputs=[_f((n, n))] * 3 + [_f(())] * 2, outputs=[_f((n, n))])
    first, second = (b, a) if swapped else (a, b)
    for port, src in enumerate((first, second, c, alpha, beta)):
        r.add_edge(src, 0, gemm, port)
    net = r.add_node("NetOutput", name="out", inputs=1)
    r.add_edge(gemm, 0, net, 0)
    return r


def rewrite_matmul_add(g: ir.Graph, *, swapped: bool = False) -> tuple[list[int], list[int]]:
    mm, add = g.node_by_name("mm"), g.node_by_name("add")
    boundary = Boundary([BoundaryInput([(mm, 0)]), BoundaryInput([(mm, 1)]), BoundaryInput([(add, 1)])], [(add, 0)])
    matched = [mm.id, add.id]
    result = rewrite(g, boundary, gemm_replacement(swapped=swapped), pass_name="TestFuse")
    g.verify()
    return matched, result.added


# ------------------------------------------------------------------------------------ whole graphs
def test_identical_graphs_are_equivalent() -> None:
    g = matmul_add_graph()
    res = check_graphs(g, g.copy(), seeds=(0, 1))
    assert res.ok and res.max_abs == 0.0 and res.failing_inputs == []
    assert res.cases == 2 + 4  # two seeds, four edge cases


@pytest.mark.parametrize("swapped", [False, True])
def test_whole_graph_check_flags_only_the_wrong_gemm(swapped: bool) -> None:
    before = matmul_add_graph()
    after = before.copy()
    rewrite_matmul_add(after, swapped=swapped)
    res = check_graphs(before, after)
    assert res.ok is (not swapped)
    if swapped:
        labels = {f.label for f in res.failing_inputs}
        assert {"seed=0", "seed=1", "seed=2"} <= labels
        assert res.max_abs > 0.1
        assert set(res.failing_inputs[0].inputs) == {0, 1, 2}
    else:
        assert res.max_abs <= 1e-5 * 1e4  # the "large" edge case reaches |values| ~ 1e8


# ------------------------------------------------------------------------------------ single rewrites
@pytest.mark.parametrize("swapped", [False, True])
def test_check_rewrite_locally_on_the_boundary(swapped: bool) -> None:
    before = matmul_add_graph()
    after = before.copy()
    matched, added = rewrite_matmul_add(after, swapped=swapped)
    res = check_rewrite(before, matched, after, added)
    assert res.error is None
    assert res.ok is (not swapped)
    assert res.cases == 3 + 4
    if swapped:
        assert res.failing_inputs and all(f.output_index == 0 for f in res.failing_inputs)
        assert "out of tolerance" in res.failing_inputs[0].message


def test_capture_then_check_around_a_live_rewrite() -> None:
    g = matmul_add_graph()
    mm, add = g.node_by_name("mm"), g.node_by_name("add")
    region = capture_rewrite(g, [mm.id, add.id])
    assert [n.op_type for n in region.graph.nodes()] == ["Data", "Data", "Data", "MatMulV2", "Add", "NetOutput"]
    _, added = rewrite_matmul_add(g, swapped=True)
    res = check_captured_rewrite(region, g, added)
    assert not res.ok and res.max_abs > 0.1


def test_context_inputs_come_first_and_keep_real_values() -> None:
    before = matmul_add_graph()
    after = before.copy()
    matched, added = rewrite_matmul_add(after, swapped=True)
    eye = np.eye(3, dtype=np.float32)
    # with a = b = I, a @ b == b @ a: the context case passes, the random ones fail
    res = check_rewrite(before, matched, after, added, context_inputs={0: eye, 1: eye, 2: eye})
    assert "context" not in {f.label for f in res.failing_inputs}
    assert not res.ok


def _add_const_graph(value: float) -> tuple[ir.Graph, ir.Graph, list[int]]:
    """x + Const(value) -> Relu; the rewrite removes the Add (x passes straight through)."""
    g = ir.Graph("add_const")
    x = _data(g, "x", 0, (2, 3))
    c = _const(g, "c", np.full((2, 3), value))
    add = g.add_node("Add", name="add", inputs=[_f((2, 3))] * 2, outputs=[_f((2, 3))])
    relu = g.add_node("Relu", name="relu", inputs=[_f((2, 3))], outputs=[_f((2, 3))])
    net = g.add_node("NetOutput", name="Node_Output", inputs=1)
    g.add_edge(x, 0, add, 0)
    g.add_edge(c, 0, add, 1)
    g.add_edge(add, 0, relu, 0)
    g.add_edge(relu, 0, net, 0)
    after = g.copy()
    a2 = after.node_by_name("add")
    repl = ir.Graph("passthrough")
    d = _data(repl, "x", 0, (2, 3))
    out = repl.add_node("NetOutput", name="out", inputs=1)
    repl.add_edge(d, 0, out, 0)
    rewrite(after, Boundary([BoundaryInput([(a2, 0)])], [(a2, 0)]), repl, pass_name="RemoveAddZero")
    after.verify()
    return g, after, [add.id]


@pytest.mark.parametrize("value,ok", [(0.0, True), (1.0, False)])
def test_const_boundary_inputs_keep_their_values(value: float, ok: bool) -> None:
    before, after, matched = _add_const_graph(value)
    res = check_rewrite(before, matched, after, [])
    assert res.error is None
    assert res.ok is ok
    if not ok:
        assert res.max_abs == pytest.approx(1.0)


def test_edge_cases_catch_what_random_inputs_miss() -> None:
    """Relu -> Relu6 agrees on N(0, 1) inputs and differs only on the "large" edge case."""
    g = ir.Graph("relu")
    x = _data(g, "x", 0, (2, 3))
    relu = g.add_node("Relu", name="relu", inputs=[_f((2, 3))], outputs=[_f((2, 3))])
    net = g.add_node("NetOutput", name="Node_Output", inputs=1)
    g.add_edge(x, 0, relu, 0)
    g.add_edge(relu, 0, net, 0)
    after = g.copy()
    after.set_op_type(after.node_by_name("relu"), "Relu6")
    assert check_graphs(g, after, edge_cases=False).ok
    res = check_graphs(g, after, edge_cases=True)
    assert not res.ok
    assert [f.label for f in res.failing_inputs] == ["edge=large"]


def test_uncomparable_rewrite_reports_an_error_instead_of_raising() -> None:
    before = matmul_add_graph()
    after = before.copy()
    after.remove_node(after.node_by_name("relu"))  # the consumer that located the replacement is gone
    res = check_rewrite(before, [before.node_by_name("mm").id, before.node_by_name("add").id], after, [])
    assert not res.ok and res.error is not None and "no consumer left" in res.error


def test_compare_outputs_rules() -> None:
    a = np.asarray([1.0, np.nan, np.inf, 1e-9], np.float32)
    assert compare_outputs([a], [a.copy()])[2]
    b = a.copy()
    b[1] = 0.0
    assert not compare_outputs([a], [b])[2]
    # cancellation near zero is judged against the tensor's RMS, not the element
    ref = np.asarray([1000.0, 1e-6], np.float32)
    got = np.asarray([1000.0, 2e-6], np.float32)
    max_abs, max_rel, ok, _, _ = compare_outputs([ref], [got])
    assert ok and max_abs == pytest.approx(1e-6, rel=1e-3)
    assert not compare_outputs([np.zeros((2, 3))], [np.zeros((3, 2))])[2]
    assert not compare_outputs([np.asarray([1, 2], np.int32)], [np.asarray([1, 3], np.int32)])[2]


# ------------------------------------------------------------------------------------ runs
def _es_matmul_add():
    from gebench.ge import es
    from gebench.ge.graph.types import DataType

    b = es.GraphBuilder("target")
    x = b.create_input(0, shape=[3, 3], data_type=DataType.DT_FLOAT)
    y = b.create_input(1, shape=[3, 3], data_type=DataType.DT_FLOAT)
    z = b.create_input(2, shape=[3, 3], data_type=DataType.DT_FLOAT)
    return b.build_and_reset([es.all.Relu(es.all.Add(es.all.MatMul(x, y, None), z))])


def _swapped_pass(tmp_path: Path) -> Path:
    text = (SAMPLES / "python_fuse_matmul_add_pass.py").read_text()
    text = text.replace("GEMM(r_a, r_b, r_c, 1.0, 1.0)", "GEMM(r_b, r_a, r_c, 1.0, 1.0)")
    text = text.replace("PythonFuseMatMulAndAddPass", "SwappedFuseMatMulAndAddPass")
    assert "GEMM(r_b, r_a" in text
    path = tmp_path / "swapped_fuse_pass.py"
    path.write_text(text)
    return path


def test_identical_snapshots_are_not_executed() -> None:
    g = matmul_add_graph()
    g.set_op_type(g.node_by_name("relu"), "ExecTestUnknownCustomOp")  # would fail if executed
    report = verify_run(_Run({"PreRunBegin": g, "RunCustomPassBeforeInfershape": g.copy()}, []))
    assert report.ok and report.unchecked == []
    assert report.graph_checks[0].result.skipped == ["the snapshots are identical"]


def test_verify_run_passes_the_correct_gemm_fusion(capsys) -> None:
    run = gebench.compile(_es_matmul_add(), passes=[str(SAMPLES / "python_fuse_matmul_add_pass.py")])
    assert run.status == "SUCCESS"
    report = verify_run(run)
    replaced = [c for c in report.rewrite_checks if c.result is not None]
    assert len(replaced) == 1 and report.ok, report.summary()
    record = run.ledger.records[replaced[0].record_index]
    assert record.max_abs_error is not None and record.max_abs_error < 1e-2
    assert report.graph_checks and all(c.result.ok for c in report.graph_checks)


def test_verify_run_flags_the_swapped_gemm(tmp_path: Path, capsys) -> None:
    run = gebench.compile(_es_matmul_add(), passes=[str(_swapped_pass(tmp_path))])
    assert run.status == "SUCCESS"  # GE itself does not notice
    report = verify_run(run)
    assert not report.ok
    bad = [c for c in report.failures if hasattr(c, "pass_name")]
    assert len(bad) == 1 and bad[0].pass_name == "SwappedFuseMatMulAndAddPass"
    record = run.ledger.records[bad[0].record_index]
    assert record.max_abs_error > 0.1 and record.detail["verify_failed"] is True
    assert "SwappedFuseMatMulAndAddPass" in report.summary()
    assert any(not c.result.ok for c in report.graph_checks)
    assert report.to_dict()["ok"] is False


class _Record:
    """A ledger record as INTERFACES.md describes it (only the fields verify_run reads)."""

    def __init__(self, removed: list[int], added: list[int]) -> None:
        self.pass_name = "HandMadePass"
        self.status = "REPLACED"
        self.graph_name = "mm_add"
        self.removed_node_ids = removed
        self.added_node_ids = added
        self.max_abs_error = None
        self.max_rel_error = None
        self.detail: dict = {}


class _Run:
    def __init__(self, snapshots: dict[str, ir.Graph], records: list[_Record]) -> None:
        self.snapshots = snapshots
        self.ledger = type("L", (), {"records": records})()


def test_verify_run_on_plain_snapshots_and_records() -> None:
    before = matmul_add_graph()
    after = before.copy()
    removed, added = rewrite_matmul_add(after, swapped=True)
    record = _Record(removed, added)
    report = verify_run(_Run({"PreRunBegin": before, "RunCustomPassBeforeInfershape": after}, [record]),
                        edge_cases=False)
    assert not report.ok and len(report.failures) == 2  # the stage comparison and the rewrite
    assert record.max_abs_error > 0.1 and record.detail["verify_failed"] is True
    assert "context" in {f.label for f in report.rewrite_checks[0].result.failing_inputs}


def test_unrunnable_graphs_are_unchecked_not_failed() -> None:
    g = matmul_add_graph()
    g.set_op_type(g.node_by_name("relu"), "ExecTestUnknownCustomOp")
    later = g.copy()
    later.rename(later.node_by_name("relu"), "relu_renamed")  # differs, so the pair is executed
    report = verify_run(_Run({"PreRunBegin": g, "RunCustomPassBeforeInfershape": later}, []))
    assert report.ok
    assert len(report.unchecked) == 1 and "ExecTestUnknownCustomOp" in report.summary()


@pytest.mark.parametrize("swapped", [False, True])
def test_cli_compile_verify_exit_code(tmp_path: Path, swapped: bool, capsys) -> None:
    """`gebench compile model.onnx --passes P --verify` on an ONNX MatMul + Add (square, so both run)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from gebench.cli import EXIT_VERIFY_MISMATCH, main

    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "c"], ["y"])], "mm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4]),
         helper.make_tensor_value_info("c", TensorProto.FLOAT, [4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])], initializer=[w])
    model_path = tmp_path / "mm.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(model_path))
    pass_file = _swapped_pass(tmp_path) if swapped else SAMPLES / "python_fuse_matmul_add_pass.py"
    code = main(["compile", str(model_path), "--passes", str(pass_file), "--verify"])
    out = capsys.readouterr().out
    assert code == (EXIT_VERIFY_MISMATCH if swapped else 0), out
    assert ("locally: MISMATCH" in out) is swapped
