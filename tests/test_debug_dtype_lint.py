"""The ``pattern_dtype_mismatch`` lint: GE's matcher ignores dtypes; gebench keeps the match and records a lint."""

from __future__ import annotations

import textwrap

import gebench
from gebench import ir

PASSES = """
from ge.es import GraphBuilder
from ge.es.all import MatMul, Relu
from ge.graph.types import DataType
from ge.passes import PassStage, PatternFusionPass, register_fusion_pass


@register_fusion_pass(name="Fp16MatMulRelu", stage=PassStage.BEFORE_INFER_SHAPE)
class Fp16MatMulRelu(PatternFusionPass):
    def patterns(self):
        b = GraphBuilder("fp16_matmul_relu")
        x = b.create_input(0, data_type=DataType.DT_FLOAT16, shape=[2, 4])
        w = b.create_input(1, data_type=DataType.DT_FLOAT16, shape=[4, 4])
        return [b.build_and_reset([Relu(MatMul(x, w))])]

    def meet_requirements(self, match_result):
        return True

    def replacement(self, inputs):
        return MatMul(inputs[0], inputs[1])


@register_fusion_pass(name="AddZero", stage=PassStage.BEFORE_INFER_SHAPE)
class AddZero(PatternFusionPass):
    def patterns(self):
        b = GraphBuilder("add_zero")
        return [b.build_and_reset([b.create_input(0) + 0])]  # the literal 0 is a DT_INT64 Const

    def meet_requirements(self, match_result):
        return False

    def replacement(self, inputs):
        return inputs[0]


@register_fusion_pass(name="AnyRelu", stage=PassStage.BEFORE_INFER_SHAPE)
class AnyRelu(PatternFusionPass):
    def patterns(self):
        b = GraphBuilder("any_relu")
        return [b.build_and_reset([Relu(b.create_input(0))])]

    def meet_requirements(self, match_result):
        return False

    def replacement(self, inputs):
        return Relu(inputs[0])
"""

GRAPH = """\
graph g
  #0 x = Data() {index=0} -> (y: DT_FLOAT16[2,4])
  #1 w4 = Data() {index=1} -> (y: DT_INT4[4,4])
  #2 w16 = Data() {index=2} -> (y: DT_FLOAT16[4,4])
  #3 mm_q = MatMul(x1=x:0, x2=w4:0) -> (y: DT_FLOAT16[2,4])
  #4 relu_q = Relu(x=mm_q:0) -> (y: DT_FLOAT16[2,4])
  #5 mm = MatMul(x1=x:0, x2=w16:0) -> (y: DT_FLOAT16[2,4])
  #6 relu = Relu(x=mm:0) -> (y: DT_FLOAT16[2,4])
  #7 zero = Const() {value=tensor(DT_FLOAT16[1], [0.0])} -> (y: DT_FLOAT16[1])
  #8 add = Add(x1=relu:0, x2=zero:0) -> (y: DT_FLOAT16[2,4])
  #9 out = NetOutput(x0=relu_q:0, x1=add:0)
"""


def _run(tmp_path, **kwargs):
    path = tmp_path / "dtype_passes.py"
    path.write_text(textwrap.dedent(PASSES))
    run = gebench.compile(ir.parse_text(GRAPH), passes=[str(path)], stages=["BeforeInferShape"], **kwargs)
    assert run.status == "SUCCESS", run.failure_reason
    return run


def _dtype_lints(run):
    return [r for r in run.ledger.by_status(gebench.fusion.ledger.CandidateStatus.LINT)
            if r.detail.get("rule") == "pattern_dtype_mismatch"]


def test_int4_weight_matched_by_fp16_pattern_is_linted_and_still_fused(tmp_path):
    run = _run(tmp_path)
    # GE semantics: both MatMul+Relu pairs are fused, the int4 one included
    replaced = [r for r in run.ledger.by_pass("Fp16MatMulRelu") if r.status.value == "REPLACED"]
    assert sorted(tuple(r.target_node_names) for r in replaced) == [("mm", "relu"), ("mm_q", "relu_q")]
    lints = _dtype_lints(run)
    assert len(lints) == 1
    lint = lints[0]
    assert lint.pass_name == "Fp16MatMulRelu" and lint.pattern_name == "fp16_matmul_relu"
    assert lint.detail["node"] == "w4" and lint.detail["port"] == 0
    assert lint.detail["pattern_node"] == "input_1"
    assert (lint.detail["pattern_dtype"], lint.detail["target_dtype"]) == ("DT_FLOAT16", "DT_INT4")
    assert list(lint.target_node_names) == ["w4"]
    for word in ("Fp16MatMulRelu", "fp16_matmul_relu", "'w4'", "output 0", "DT_FLOAT16", "DT_INT4"):
        assert word in lint.reason
    assert lint.pattern_source.endswith("dtype_passes.py:" + lint.pattern_source.rsplit(":", 1)[1])


def test_patterns_stating_no_dtype_are_not_linted(tmp_path):
    run = _run(tmp_path)
    # AnyRelu's input is create_input(0) with the default DT_FLOAT: it states nothing, so fp16 targets are fine;
    # AddZero's Const comes from the literal 0 (DT_INT64 by the builder's choice): it matches the fp16 zero unlinted
    assert [r.status.value for r in run.ledger.by_pass("AddZero")] == ["REJECTED_BY_MEET_REQUIREMENTS"]
    assert {r.status.value for r in run.ledger.by_pass("AnyRelu")} == {"REJECTED_BY_MEET_REQUIREMENTS"}
    assert [r.pass_name for r in _dtype_lints(run)] == ["Fp16MatMulRelu"]


def test_without_ledger_nothing_is_recorded_and_the_graph_is_the_same(tmp_path):
    with_ledger = _run(tmp_path)
    without = _run(tmp_path, ledger=False)
    assert len(without.ledger) == 0
    def ops(run):
        return sorted(n.op_type for n in run.ir_graph.nodes())

    assert ops(without) == ops(with_ledger) == ["Add", "Const", "Data", "Data", "Data", "MatMul", "MatMul", "NetOutput"]
