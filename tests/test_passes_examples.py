"""gebench's own example passes (passes/): each fires where it must and not where it must not; the graph is
checked after every rewrite (verify_rewrites) and the ledger verdicts are asserted."""

from __future__ import annotations

from pathlib import Path

import pytest

import gebench

PASSES = Path(__file__).resolve().parents[1] / "passes"


@pytest.fixture(scope="module")
def es():
    import ge.es.all as es_all

    return es_all


@pytest.fixture(scope="module")
def GB():
    from ge.es.graph_builder import GraphBuilder

    return GraphBuilder


@pytest.fixture(scope="module")
def DT():
    from ge.graph.types import DataType

    return DataType


def compile_with(graph, name, **kwargs):
    run = gebench.compile(graph, passes=[str(PASSES / name)], verify_rewrites=True, **kwargs)
    assert run.status == "SUCCESS", run.failure_reason
    run.ir_graph.verify()
    return run


def types(run):
    return [n.op_type for n in run.ir_graph.nodes()]


def verdicts(run, pass_name=None):
    return [r.status.name for r in run.ledger if r.status.name != "LINT"
            and (pass_name is None or r.pass_name == pass_name)]


def net_input(run, port=0):
    g = run.ir_graph
    return g.producer(g.nodes_of_type("NetOutput")[0], port)[0]


# ------------------------------------------------------------------------------------------ mul_one_pass
def test_mul_one_fires(GB):
    b = GB("g")
    x = b.create_input(0, shape=[3])
    run = compile_with(b.build_and_reset([x * 1.0]), "mul_one_pass.py")
    assert types(run) == ["Data", "NetOutput"] and net_input(run).name == "input_0"
    assert verdicts(run) == ["REPLACED"]


@pytest.mark.parametrize("value", [2.0, [1.0, 1.0, 1.0]])
def test_mul_one_rejects_other_constants(GB, value):
    b = GB("g")
    x = b.create_input(0, shape=[3])
    run = compile_with(b.build_and_reset([x * value]), "mul_one_pass.py")
    assert "Mul" in types(run)
    (rec,) = run.ledger.records
    assert rec.status.name == "REJECTED_BY_MEET_REQUIREMENTS" and rec.meet_requirements_result is False
    assert rec.hook_source.startswith(str(PASSES / "mul_one_pass.py"))


# ------------------------------------------------------------------------------------------ cast_round_trip_pass
def cast_chain(GB, es, DT, src, mid):
    b = GB("g")
    x = b.create_input(0, shape=[4], data_type=src)
    return b.build_and_reset([es.Cast(es.Cast(x, dst_type=mid), dst_type=src)])


def test_cast_round_trip_widening_removed(GB, es, DT):
    run = compile_with(cast_chain(GB, es, DT, DT.DT_FLOAT16, DT.DT_FLOAT), "cast_round_trip_pass.py")
    assert types(run) == ["Data", "NetOutput"]
    (rec,) = [r for r in run.ledger if r.status.name == "REPLACED"]
    assert [c[1] for c in rec.captures] == ["input_0", "Cast_1"]


def test_cast_round_trip_narrowing_kept(GB, es, DT):
    run = compile_with(cast_chain(GB, es, DT, DT.DT_FLOAT, DT.DT_FLOAT16), "cast_round_trip_pass.py")
    assert types(run).count("Cast") == 2
    assert verdicts(run) == ["STRUCTURAL_MISMATCH", "REJECTED_BY_MEET_REQUIREMENTS"]


# ------------------------------------------------------------------------------------------ relu_forms_pass
def test_relu_forms_fire(GB, es):
    b = GB("g")
    x = b.create_input(0, shape=[4])
    graph = b.build_and_reset([es.LeakyRelu(x, negative_slope=0.0), es.Maximum(x, 0.0)])
    run = compile_with(graph, "relu_forms_pass.py")
    assert sorted(types(run)) == ["Data", "NetOutput", "Relu", "Relu"]
    assert sorted({r.pattern_name for r in run.ledger if r.status.name == "REPLACED"}) == [
        "GebenchReluFormsPass_leaky_zero_slope_pattern", "GebenchReluFormsPass_maximum_zero_pattern"]


def test_relu_forms_strict_attr_and_const(GB, es):
    b = GB("g")
    x = b.create_input(0, shape=[4])
    graph = b.build_and_reset([es.LeakyRelu(x, negative_slope=0.1), es.Maximum(x, 1.0)])
    run = compile_with(graph, "relu_forms_pass.py")
    assert "Relu" not in types(run)
    kinds = sorted(r.detail["kind"] for r in run.ledger if r.status.name == "STRUCTURAL_MISMATCH")
    assert kinds == ["const_value", "ir_attr"]


# ------------------------------------------------------------------------------------------ swish_pass
def test_swish_multi_output_fires_with_shared_sigmoid(GB, es):
    b = GB("g")
    x = b.create_input(0, shape=[4])
    sig = es.Sigmoid(x)
    graph = b.build_and_reset([x * sig, es.Relu(sig)])
    run = compile_with(graph, "swish_pass.py")
    g = run.ir_graph
    assert sorted(types(run)) == ["Data", "NetOutput", "Relu", "Sigmoid", "Swish"]
    assert net_input(run, 0).op_type == "Swish"
    (relu,) = g.nodes_of_type("Relu")
    assert g.producer(relu, 0)[0].op_type == "Sigmoid"
    assert verdicts(run, "GebenchSwishPass") == ["REPLACED"]


def test_swish_needs_the_same_input(GB, es):
    b = GB("g")
    x, y = b.create_input(0, shape=[4]), b.create_input(1, shape=[4])
    run = compile_with(b.build_and_reset([x * es.Sigmoid(y)]), "swish_pass.py")
    assert "Swish" not in types(run)
    assert verdicts(run) == ["STRUCTURAL_MISMATCH"]


# ------------------------------------------------------------------------------------------ swish_decompose_pass
@pytest.mark.parametrize("scale", [1.0, 2.0])
def test_swish_decompose_with_infer_shape(GB, es, scale):
    b = GB("g")
    x = b.create_input(0, shape=[2, 3])
    run = compile_with(b.build_and_reset([es.Swish(x, scale=scale)]), "swish_decompose_pass.py")
    expected = ["Data", "Sigmoid", "Mul", "NetOutput"] if scale == 1.0 else \
        ["Data", "Const", "Mul", "Sigmoid", "Mul", "NetOutput"]
    assert types(run) == expected
    out = net_input(run)
    assert out.op_type == "Mul" and out.outputs[0].shape == (2, 3)
    assert all(n.provenance == "GebenchSwishDecomposePass" for n in run.ir_graph.nodes()
               if n.op_type in ("Mul", "Sigmoid"))
    assert not [r for r in run.ledger if r.detail.get("rule") == "missing_infer_shape"]


def test_swish_decompose_nothing_to_do(GB, es):
    b = GB("g")
    run = compile_with(b.build_and_reset([es.Sigmoid(b.create_input(0, shape=[2]))]), "swish_decompose_pass.py")
    assert types(run) == ["Data", "Sigmoid", "NetOutput"] and len(run.ledger) == 0
    assert run.pass_results[0]["status"] == "NOT_CHANGED"


# ------------------------------------------------------------------------------------------ remove_identity_pass
def test_remove_identity(GB, es):
    b = GB("g")
    x = b.create_input(0, shape=[2])
    graph = b.build_and_reset([es.Relu(es.Identity(x)), es.Identity(x)])
    run = compile_with(graph, "remove_identity_pass.py")
    g = run.ir_graph
    assert sorted(types(run)) == ["Data", "NetOutput", "Relu"]
    (relu,) = g.nodes_of_type("Relu")
    assert g.producer(relu, 0)[0].name == "input_0" and net_input(run, 1).name == "input_0"
    assert verdicts(run) == ["REPLACED", "REPLACED"]


def test_remove_identity_nothing_to_do(GB, es):
    b = GB("g")
    run = compile_with(b.build_and_reset([es.Relu(b.create_input(0, shape=[2]))]), "remove_identity_pass.py")
    assert types(run) == ["Data", "Relu", "NetOutput"] and verdicts(run) == []


# ------------------------------------------------------------------------------------------ double_neg_pass
def test_double_neg_removed(GB, es):
    b = GB("g")
    x = b.create_input(0, shape=[2])
    run = compile_with(b.build_and_reset([es.Neg(es.Neg(x))]), "double_neg_pass.py")
    assert types(run) == ["Data", "NetOutput"]
    (rec,) = run.ledger.records
    assert rec.status.name == "REPLACED" and rec.detail["via"] == "report_fuse"
    assert rec.target_node_names == ["Neg_0", "Neg_1"]


def test_double_neg_keeps_shared_inner_and_single_neg(GB, es):
    b = GB("g")
    x = b.create_input(0, shape=[2])
    inner = es.Neg(x)
    run = compile_with(b.build_and_reset([es.Neg(inner), inner, es.Neg(b.create_input(1, shape=[2]))]),
                       "double_neg_pass.py")
    g = run.ir_graph
    assert types(run).count("Neg") == 2
    assert net_input(run, 0).name == "input_0" and net_input(run, 1).name == "Neg_0"
    assert g.producer(net_input(run, 2), 0)[0].name == "input_1"
