"""Bad pass files and GE's failure matrix (spec §3.10): the GE outcome, a message naming file, line, pass and
rule, every ledger status, and no half-mutated graph."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import gebench
from gebench import ir

HEADER = """
from ge.passes import (DecomposePass, FusionBasePass, PassStage, PatternFusionPass, pattern, register_fusion_pass,
                       register_decompose_pass, SubgraphBoundary, SubgraphInput, SubgraphOutput, SubgraphRewriter)
from ge.es.graph_builder import GraphBuilder
from ge.es.all import Relu, Abs, Exp, Sigmoid, Tanh, Neg, MatMul, Add
STAGE = PassStage.BEFORE_INFER_SHAPE
"""


def pass_file(tmp_path: Path, body: str, name: str = "p.py") -> str:
    path = tmp_path / name
    path.write_text(HEADER + textwrap.dedent(body), encoding="utf-8")
    return str(path)


def line_of(path: str, text: str) -> int:
    for i, line in enumerate(Path(path).read_text().splitlines(), 1):
        if text in line:
            return i
    raise AssertionError(text)


@pytest.fixture
def GB():
    from ge.es.graph_builder import GraphBuilder

    return GraphBuilder


@pytest.fixture
def es():
    import ge.es.all as es_all

    return es_all


def relu_chain(GB, es, n=2):
    b = GB("chain")
    t = b.create_input(0, shape=[4])
    for _ in range(n):
        t = es.Relu(t)
    return b.build_and_reset([t])


def snapshot_text(graph_like) -> str:
    return ir.to_text(gebench.load(graph_like).ir)


RELU_TO_ABS = """
@register_fusion_pass(name="{name}", stage=STAGE)
class {name}(PatternFusionPass):
    @pattern
    def relu(self, inputs):
        return Relu(inputs[0])

    def replacement(self, inputs):
        return Abs(inputs[0])
"""


# ------------------------------------------------------------------------------------------------ loading
def test_syntax_error_fails_run_but_other_files_load(tmp_path, GB, es):
    good = pass_file(tmp_path, RELU_TO_ABS.format(name="GoodPass"), "a_good.py")
    bad = tmp_path / "b_bad.py"
    bad.write_text("from ge.passes import FusionBasePass\n\nclass Broken(FusionBasePass:\n    pass\n")
    run = gebench.compile(relu_chain(GB, es), passes=[str(tmp_path)])
    assert run.status == "FAILED"
    assert run.failure_reason.startswith("pass plugin load failed")
    assert f"{bad}:3" in run.failure_reason and "SyntaxError" in run.failure_reason
    assert [d.pass_name for d in run.passes] == ["GoodPass"]
    assert run.load_errors[0].line == 3
    (lint,) = [r for r in run.ledger if r.detail.get("rule") == "pass_load_failed"]
    assert lint.detail["path"] == str(bad) and lint.detail["line"] == 3
    # GE aborts before compiling: the graph is untouched
    assert [n.op_type for n in run.ir_graph.nodes()] == ["Data", "Relu", "Relu", "NetOutput"]
    assert good


def test_load_error_can_still_run_other_passes_on_request(tmp_path, GB, es):
    pass_file(tmp_path, RELU_TO_ABS.format(name="GoodPass"), "a_good.py")
    (tmp_path / "b_bad.py").write_text("raise RuntimeError('plugin broken')\n")
    run = gebench.compile(relu_chain(GB, es), passes=[str(tmp_path)], run_after_load_error=True)
    assert run.status == "FAILED" and "plugin broken" in run.failure_reason
    assert [n.op_type for n in run.ir_graph.nodes()] == ["Data", "Abs", "Abs", "NetOutput"]


def test_duplicate_pass_names_across_files(tmp_path, GB, es):
    pass_file(tmp_path, RELU_TO_ABS.format(name="Same"), "a.py")
    second = pass_file(tmp_path, RELU_TO_ABS.format(name="Same").replace("class Same", "class Other"), "b.py")
    run = gebench.compile(relu_chain(GB, es), passes=[str(tmp_path)])
    assert run.status == "FAILED"
    assert "python pass name already exists: Same" in run.failure_reason and second in run.failure_reason
    assert run.load_errors[0].rule == "registration"


def test_run_override_in_pattern_pass_is_a_load_error(tmp_path, GB, es):
    path = pass_file(tmp_path, """
    @register_fusion_pass(name="BadRun", stage=STAGE)
    class BadRun(PatternFusionPass):
        def run(self, graph, context):
            return True
    """)
    run = gebench.compile(relu_chain(GB, es), passes=[path])
    assert run.status == "FAILED" and "overrides run()" in run.failure_reason
    assert run.load_errors[0].line == line_of(path, "class BadRun")
    assert run.load_errors[0].rule == "class creation"


def test_unknown_kind_and_bad_stage_fail_the_load(tmp_path, GB, es):
    path = pass_file(tmp_path, """
    @register_fusion_pass(name="OddKind", stage=STAGE, kind="mystery")
    class OddKind(FusionBasePass):
        pass

    @register_fusion_pass(name="OddStage", stage="Never")
    class OddStage(FusionBasePass):
        pass
    """)
    run = gebench.compile(relu_chain(GB, es), passes=[path])
    assert run.status == "FAILED"
    assert "unknown pass kind 'mystery'" in run.failure_reason
    assert "OddStage" in run.failure_reason and "not a PassStage" in run.failure_reason


# ------------------------------------------------------------------------------------------------ creation
@pytest.mark.parametrize("init,expect", [
    ("def __init__(self):\n            raise ValueError('no config')", "no config"),
    ("def __init__(self):\n            super().__init__('not a config')", "PatternMatcherConfig"),
    ("def __init__(self):\n            self.x = 1", "super().__init__()"),
])
def test_pass_creation_failures_fail_the_stage(tmp_path, GB, es, init, expect):
    path = pass_file(tmp_path, f"""
    @register_fusion_pass(name="Creator", stage=STAGE)
    class Creator(PatternFusionPass):
        {init}

        @pattern
        def relu(self, inputs):
            return Relu(inputs[0])
    """)
    run = gebench.compile(relu_chain(GB, es), passes=[path])
    assert run.status == "FAILED" and run.failed_pass == "Creator" and run.failed_stage == "BeforeInferShape"
    assert expect in run.failure_reason and "create pass Creator failed" in run.failure_reason
    assert [n.op_type for n in run.ir_graph.nodes()] == ["Data", "Relu", "Relu", "NetOutput"]


# ------------------------------------------------------------------------------------------------ hooks
def test_patterns_failure_is_a_warning(tmp_path, GB, es):
    path = pass_file(tmp_path, """
    @register_fusion_pass(name="BadPatterns", stage=STAGE)
    class BadPatterns(PatternFusionPass):
        def patterns(self):
            return "Relu"

    @register_fusion_pass(name="RaisingPatterns", stage=STAGE)
    class RaisingPatterns(PatternFusionPass):
        def patterns(self):
            raise KeyError("no patterns today")
    """)
    run = gebench.compile(relu_chain(GB, es), passes=[path])
    assert run.status == "SUCCESS"
    lints = [r for r in run.ledger if r.status.name == "LINT"]
    assert {r.pass_name for r in lints} == {"BadPatterns", "RaisingPatterns"}
    raising = next(r for r in lints if r.pass_name == "RaisingPatterns")
    assert "no patterns today" in raising.reason and f"{path}:{line_of(path, 'no patterns today')}" in raising.reason
    assert [r["status"] for r in run.pass_results] == ["NOT_CHANGED", "NOT_CHANGED"]


def test_meet_requirements_exception_is_false_with_line(tmp_path, GB, es):
    path = pass_file(tmp_path, """
    @register_fusion_pass(name="Picky", stage=STAGE)
    class Picky(PatternFusionPass):
        @pattern
        def relu(self, inputs):
            return Relu(inputs[0])

        def meet_requirements(self, match_result):
            return 1 / 0

        def replacement(self, inputs):
            return Abs(inputs[0])
    """)
    run = gebench.compile(relu_chain(GB, es), passes=[path])
    assert run.status == "SUCCESS"
    recs = [r for r in run.ledger if r.status.name == "REJECTED_BY_MEET_REQUIREMENTS"]
    assert len(recs) == 2
    assert "ZeroDivisionError" in recs[0].exception and f"{path}:{line_of(path, '1 / 0')}" in recs[0].exception
    assert recs[0].hook_source == f"{path}:{line_of(path, 'def meet_requirements')}"


@pytest.mark.parametrize("body,expect", [
    ("raise RuntimeError('cannot build')", "cannot build"),
    ("return None", "must return ge.graph.Graph, got NoneType"),
])
def test_replacement_failure_fails_pass_and_keeps_graph(tmp_path, GB, es, body, expect):
    path = pass_file(tmp_path, f"""
    @register_fusion_pass(name="Breaker", stage=STAGE)
    class Breaker(PatternFusionPass):
        @pattern
        def relu(self, inputs):
            return Relu(inputs[0])

        def replacement(self, match_result):
            {body}
    """)
    graph = relu_chain(GB, es)
    before = snapshot_text(graph)
    run = gebench.compile(graph, passes=[path])
    assert run.status == "FAILED" and run.failed_pass == "Breaker"
    assert expect in run.failure_reason
    assert ir.to_text(run.ir_graph) == before
    rec = next(r for r in run.ledger if r.status.name == "REPLACEMENT_FAILED")
    assert rec.hook_source == f"{path}:{line_of(path, 'def replacement')}"
    assert "RunCustomPassBeforeInfershape" not in run.ir_snapshots


def test_expression_replacement_touching_too_few_inputs(tmp_path, GB, es):
    path = pass_file(tmp_path, """
    @register_fusion_pass(name="ShortInputs", stage=STAGE)
    class ShortInputs(PatternFusionPass):
        @pattern
        def mm_add(self, inputs):
            a, b, c = inputs[:3]
            return MatMul(a, b) + c

        def replacement(self, inputs):
            return Relu(inputs[0])
    """)
    b = GB("mm")
    x, y, z = (b.create_input(i, shape=[2, 2]) for i in range(3))
    graph = b.build_and_reset([es.MatMul(x, y) + z])
    before = snapshot_text(graph)
    run = gebench.compile(graph, passes=[path])
    assert run.status == "FAILED" and run.failed_pass == "ShortInputs"
    lint = next(r for r in run.ledger if r.detail.get("rule") == "replacement_inputs_short")
    assert lint.detail["touched"] == 1 and lint.detail["boundary_inputs"] == 3
    assert lint.detail["source"] == f"{path}:{line_of(path, 'def replacement')}"
    assert any(r.status.name == "REPLACEMENT_FAILED" for r in run.ledger)
    assert ir.to_text(run.ir_graph) == before


def test_pattern_input_that_feeds_nothing_is_linted_and_fails_the_rewrite(tmp_path, GB, es):
    path = pass_file(tmp_path, """
    @register_fusion_pass(name="UnusedInput", stage=STAGE)
    class UnusedInput(PatternFusionPass):
        @pattern
        def relu(self, inputs):
            a, b = inputs[:2]
            return Relu(a)

        def meet_requirements(self, match_result):
            return True

        def replacement(self, inputs):
            a, b = inputs[:2]
            return Abs(a)
    """)
    graph = relu_chain(GB, es, n=1)
    before = snapshot_text(graph)
    run = gebench.compile(graph, passes=[path])
    (lint,) = [r for r in run.ledger if r.detail.get("rule") == "pattern_input_unused"]
    assert lint.detail["input"] == 1 and "'input_1'" in lint.reason and "BOUNDARY_INPUT_EMPTY" in lint.reason
    assert lint.detail["source"] == f"{path}:{line_of(path, '@pattern')}"  # where the pattern is defined
    assert run.status == "FAILED" and "BOUNDARY_INPUT_EMPTY" in run.failure_reason
    assert ir.to_text(run.ir_graph) == before


# ------------------------------------------------------------------------------------------------ run()
@pytest.mark.parametrize("ret,status,lint", [
    ("True", "SUCCESS", False), ("None", "SUCCESS", False), ("False", "FAILED", False),
    ("0", "SUCCESS", True), ("1", "FAILED", True), ("'ok'", "FAILED", False),
])
def test_run_return_mapping(tmp_path, GB, es, ret, status, lint):
    path = pass_file(tmp_path, f"""
    @register_fusion_pass(name="Returner", stage=STAGE)
    class Returner(FusionBasePass):
        def run(self, graph, context):
            return {ret}
    """)
    run = gebench.compile(relu_chain(GB, es), passes=[path])
    assert run.status == status
    lints = [r for r in run.ledger if r.detail.get("rule") == "int_return_from_run"]
    assert bool(lints) == lint
    if status == "FAILED":
        assert run.failed_pass == "Returner"
    if ret == "'ok'":
        assert "unsupported type: str" in run.failure_reason


def test_run_exception_restores_graph_and_keeps_partial(tmp_path, GB, es):
    path = pass_file(tmp_path, """
    @register_fusion_pass(name="HalfDone", stage=STAGE)
    class HalfDone(FusionBasePass):
        def run(self, graph, context):
            nodes = [n for n in graph.get_direct_nodes() if n.type == "Relu"]
            graph.remove_node(nodes[0])
            raise RuntimeError("gave up halfway")
    """)
    graph = relu_chain(GB, es)
    before = snapshot_text(graph)
    run = gebench.compile(graph, passes=[path])
    assert run.status == "FAILED" and run.failed_pass == "HalfDone"
    assert "gave up halfway" in run.failure_reason and f"{path}:{line_of(path, 'gave up')}" in run.failure_reason
    assert ir.to_text(run.ir_graph) == before
    partial = run.partial_graph  # a ge.graph.Graph view of the half-edited graph; .ir is the IR graph
    assert partial is not None and len(partial.get_direct_nodes()) == len(run.ir_graph) - 1
    from gebench.ge.graph import Graph as GeGraph

    assert isinstance(partial, GeGraph) and partial.ir is run.ir_partial_graph
    assert partial.find_node_by_name(partial.get_direct_nodes()[0].name) is not None
    run.ir_graph.verify()


def test_decompose_pass_registered_as_fusion_base_fails(tmp_path, GB, es):
    path = pass_file(tmp_path, """
    @register_fusion_pass(name="Confused", stage=STAGE)
    class Confused(DecomposePass):
        pass
    """)
    run = gebench.compile(relu_chain(GB, es), passes=[path])
    assert run.status == "FAILED" and "NotImplementedError" in run.failure_reason


def test_decompose_replacement_must_be_graph(tmp_path, GB, es):
    path = pass_file(tmp_path, """
    @register_decompose_pass(name="Decomp", stage=STAGE, op_types=["Relu"])
    class Decomp(DecomposePass):
        def replacement(self, node):
            b = GraphBuilder("r")
            return Abs(b.create_input(0))
    """)
    run = gebench.compile(relu_chain(GB, es), passes=[path])
    assert run.status == "FAILED" and "must return ge.graph.Graph, got TensorHolder" in run.failure_reason


# ------------------------------------------------------------------------------------------------ rewrites
def test_subgraph_rewriter_boundary_breaking_without_context_returns_status(tmp_path, GB, es, capsys):
    path = pass_file(tmp_path, """
    @register_fusion_pass(name="Rewire", stage=STAGE)
    class Rewire(FusionBasePass):
        def run(self, graph, context):
            relus = [n for n in graph.get_direct_nodes() if n.type == "Relu"]
            b = GraphBuilder("r")
            repl = b.build_and_reset([Abs(b.create_input(0))])
            boundary = SubgraphBoundary()
            sub_in = SubgraphInput()
            sub_in.add_input(relus[0], 0)
            boundary.add_input(0, sub_in)
            boundary.add_output(0, SubgraphOutput(relus[1], 0))
            # relus[0] also feeds a Neg outside: the region is not self-contained
            status = SubgraphRewriter.replace(boundary, repl)
            print("status", status)
            return True
    """)
    b = GB("g")
    r1 = es.Relu(b.create_input(0, shape=[4]))
    graph = b.build_and_reset([es.Relu(r1), es.Neg(r1)])
    before = snapshot_text(graph)
    run = gebench.compile(graph, passes=[path])
    assert run.status == "SUCCESS"
    assert capsys.readouterr().out.strip() == "status 4294967295"
    assert ir.to_text(run.ir_snapshots["RunCustomPassBeforeInfershape"]) == before
    (rec,) = [r for r in run.ledger if r.status.name == "REPLACEMENT_FAILED"]
    assert rec.detail["source"] == f"{path}:{line_of(path, 'status = SubgraphRewriter')}"


def test_subgraph_rewriter_with_context_raises_and_fails(tmp_path, GB, es):
    path = pass_file(tmp_path, """
    @register_fusion_pass(name="RewireCtx", stage=STAGE)
    class RewireCtx(FusionBasePass):
        def run(self, graph, context):
            relus = [n for n in graph.get_direct_nodes() if n.type == "Relu"]
            b = GraphBuilder("r")
            repl = b.build_and_reset([Abs(b.create_input(0)), Abs(b.create_input(1))])
            boundary = SubgraphBoundary()
            sub_in = SubgraphInput()
            sub_in.add_input(relus[0], 0)
            boundary.add_input(0, sub_in)
            boundary.add_output(0, SubgraphOutput(relus[1], 0))
            SubgraphRewriter.replace(boundary, repl, context=context)
            return True
    """)
    graph = relu_chain(GB, es)
    before = snapshot_text(graph)
    run = gebench.compile(graph, passes=[path])
    assert run.status == "FAILED" and run.failed_pass == "RewireCtx"
    assert "Replace with context failed, pass_name=RewireCtx" in run.failure_reason
    assert ir.to_text(run.ir_graph) == before


MULTI_OUT = """
@register_fusion_pass(name="TwoBranches", stage=STAGE)
class TwoBranches(PatternFusionPass):
    @pattern
    def relu_and_abs(self, inputs):
        return [Relu(inputs[0]), Abs(inputs[1])]

    def replacement(self, inputs):
        return [Sigmoid(inputs[0]), Tanh(inputs[1])]
"""


def test_would_create_cycle_is_skipped(tmp_path, GB, es):
    path = pass_file(tmp_path, MULTI_OUT)
    b = GB("g")
    r = es.Relu(b.create_input(0, shape=[4]))
    a = es.Abs(es.Exp(r))  # Relu -> Exp (outside) -> Abs: fusing {Relu, Abs} would close a cycle
    graph = b.build_and_reset([a])
    before = snapshot_text(graph)
    run = gebench.compile(graph, passes=[path])
    assert run.status == "SUCCESS"
    (rec,) = [r for r in run.ledger if r.status.name == "WOULD_CREATE_CYCLE"]
    assert rec.target_node_names == ["Relu_0", "Abs_2"]
    assert ir.to_text(run.ir_snapshots["RunCustomPassBeforeInfershape"]) == before


def test_boundary_violation_recorded(tmp_path, GB, es):
    path = pass_file(tmp_path, """
    @register_fusion_pass(name="MmAdd", stage=STAGE)
    class MmAdd(PatternFusionPass):
        @pattern
        def mm_add(self, inputs):
            return MatMul(inputs[0], inputs[1]) + inputs[2]

        def replacement(self, inputs):
            return Relu(inputs[0]) + Relu(inputs[1]) + inputs[2]
    """)
    b = GB("g")
    x, y, z = (b.create_input(i, shape=[2, 2]) for i in range(3))
    m = es.MatMul(x, y)
    graph = b.build_and_reset([m + z, es.Relu(m)])
    run = gebench.compile(graph, passes=[path])
    assert run.status == "SUCCESS" and "MatMul" in [n.op_type for n in run.ir_graph.nodes()]
    (rec,) = [r for r in run.ledger if r.status.name == "BOUNDARY_VIOLATION"]
    assert rec.detail["escaping_node"] == "MatMul_0" and rec.detail["outside_consumer"] == "Relu_2"


def test_lost_to_overlap(tmp_path, GB, es):
    path = pass_file(tmp_path, """
    @register_fusion_pass(name="ReluPair", stage=STAGE)
    class ReluPair(PatternFusionPass):
        @pattern
        def pair(self, inputs):
            first = Relu(inputs[0])
            return [first, Relu(first)]

        def replacement(self, inputs):
            s = Sigmoid(inputs[0])
            return [s, Tanh(s)]
    """)
    run = gebench.compile(relu_chain(GB, es, n=2), passes=[path])
    assert run.status == "SUCCESS", run.failure_reason
    run.ir_graph.verify()
    assert [n.op_type for n in run.ir_graph.nodes()] == ["Data", "Sigmoid", "Tanh", "NetOutput"]
    assert [r.status.name for r in run.ledger if r.status.name != "LINT"] == ["REPLACED", "LOST_TO_OVERLAP"]
    lost = run.ledger.by_status(run.ledger.records[-1].status)[0]
    assert lost.target_node_names == ["Relu_1"]
    assert [r.status.name for r in run.explain("Relu_1")] == ["REPLACED", "LOST_TO_OVERLAP"]


def test_decompose_lost_to_overlap_and_lint_missing_infer_shape(tmp_path, GB, es):
    path = pass_file(tmp_path, """
    @register_decompose_pass(name="NoInfer", stage=PassStage.AFTER_INFER_SHAPE, op_types=["Relu"])
    class NoInfer(DecomposePass):
        def replacement(self, node):
            b = GraphBuilder("r")
            return b.build_and_reset([Abs(b.create_input(0))])
    """)
    run = gebench.compile(relu_chain(GB, es), passes=[path])
    assert run.status == "SUCCESS"
    assert [n.op_type for n in run.ir_graph.nodes()] == ["Data", "Abs", "Abs", "NetOutput"]
    lints = [r for r in run.ledger if r.detail.get("rule") == "missing_infer_shape"]
    assert len(lints) == 2


def test_reflected_add_lint(tmp_path, GB, es):
    path = pass_file(tmp_path, """
    @register_fusion_pass(name="ZeroFirst", stage=STAGE)
    class ZeroFirst(PatternFusionPass):
        @pattern
        def zero_add(self, inputs):
            return 0 + inputs[0]

        def replacement(self, inputs):
            return inputs[0]
    """)
    b = GB("g")
    graph = b.build_and_reset([b.create_input(0, shape=[2]) + 0])
    run = gebench.compile(graph, passes=[path])
    assert [n.op_type for n in run.ir_graph.nodes()] == ["Data", "NetOutput"]
    (lint,) = [r for r in run.ledger if r.detail.get("rule") == "reflected_operand_order"]
    assert lint.detail["source"] == f"{path}:{line_of(path, 'return 0 + inputs[0]')}"
    assert "Add(x, 0)" in lint.reason


def test_auto_capture_of_nonzero_output_lint(tmp_path, GB, es):
    path = pass_file(tmp_path, """
    from ge.es.all import TopK

    @register_fusion_pass(name="TopKIndices", stage=STAGE)
    class TopKIndices(PatternFusionPass):
        @pattern
        def indices(self, inputs):
            return TopK(inputs[0], inputs[1]).indices

        def meet_requirements(self, match_result):
            captured = match_result.get_captured_tensor(2)
            print("captured", captured.node.type, captured.index)
            return False
    """)
    b = GB("g")
    x = b.create_input(0, shape=[8])
    k = b.create_scalar_int32(3)
    graph = b.build_and_reset([es.TopK(x, k).indices])
    run = gebench.compile(graph, passes=[path], stages=["BeforeInferShape"])
    assert run.status == "SUCCESS"
    (lint,) = [r for r in run.ledger if r.detail.get("rule") == "capture_output_zero"]
    assert lint.detail["holder_output_index"] == 1
    # GE's behaviour is kept: the capture resolves to output 0 (values), not the indices the pattern returns
    (rec,) = [r for r in run.ledger if r.status.name == "REJECTED_BY_MEET_REQUIREMENTS"]
    assert rec.captures[2][2] == 0


def test_meet_requirements_returning_none_lint(tmp_path, GB, es):
    path = pass_file(tmp_path, """
    @register_fusion_pass(name="Forgetful", stage=STAGE)
    class Forgetful(PatternFusionPass):
        @pattern
        def relu(self, inputs):
            return Relu(inputs[0])

        def meet_requirements(self, match_result):
            match_result.get_matched_nodes()

        def replacement(self, inputs):
            return Abs(inputs[0])
    """)
    run = gebench.compile(relu_chain(GB, es), passes=[path])
    assert [n.op_type for n in run.ir_graph.nodes()] == ["Data", "Relu", "Relu", "NetOutput"]
    lints = [r for r in run.ledger if r.detail.get("rule") == "meet_requirements_returned_none"]
    assert len(lints) == 1 and lints[0].detail["source"] == f"{path}:{line_of(path, 'def meet_requirements')}"
    assert [r.meet_requirements_result for r in run.ledger.by_pass("Forgetful")
            if r.status.name == "REJECTED_BY_MEET_REQUIREMENTS"] == [None, None]


def test_inference_failure_fails_the_compile(tmp_path, GB, es):
    b = GB("g")
    x, y = b.create_input(0, shape=[2, 3]), b.create_input(1, shape=[4, 5])
    graph = b.build_and_reset([es.MatMul(x, y)])
    run = gebench.compile(graph, passes=[])
    assert run.status == "FAILED" and run.failed_stage == "InferShape" and run.failed_pass is None
    assert run.failure_reason.startswith("InferShape failed") and "MatMul_0" in run.failure_reason
    assert [r.detail["rule"] for r in run.ledger] == ["infer_shape_failed"]
    assert list(run.snapshots) == ["PreRunBegin", "RunCustomPassBeforeInfershape"]


def test_endless_match_loop_is_stopped(tmp_path, GB, es, monkeypatch):
    from gebench.fusion import runtime

    monkeypatch.setattr(runtime, "LOOP_LIMIT_BASE", 5)
    path = pass_file(tmp_path, """
    @register_fusion_pass(name="Forever", stage=STAGE)
    class Forever(PatternFusionPass):
        @pattern
        def relu(self, inputs):
            return Relu(inputs[0])

        def replacement(self, inputs):
            return Relu(inputs[0])
    """)
    run = gebench.compile(relu_chain(GB, es, n=1), passes=[path])
    assert run.status == "FAILED" and run.failed_pass == "Forever"
    assert "re-creates the pattern" in run.failure_reason
    run.ir_graph.verify()
    assert [n.op_type for n in run.ir_graph.nodes()] == ["Data", "Relu", "NetOutput"]


def test_a_replacement_that_re_creates_its_pattern_fails_the_pass_before_its_marks_exhaust_memory(tmp_path):
    """Each rewrite concatenates the marks of the nodes it replaces, so a two-node pattern re-created by its own
    replacement doubles them every time: the pass fails with GE's endless-loop reason after about ten rewrites
    instead of running out of memory, and the graph is the one before the failing rewrite."""
    path = pass_file(tmp_path, """
        @register_fusion_pass(name="Recreate", stage=STAGE)
        class Recreate(PatternFusionPass):
            @pattern
            def exp_neg(self, inputs):
                return Exp(Neg(inputs[0]))

            def meet_requirements(self, match_result):
                return True

            def replacement(self, inputs):
                return Exp(Neg(inputs[0]))
    """)
    g = ir.Graph("g")
    x = g.add_node("Data", name="x", outputs=1, attrs={"index": 0})
    neg = g.add_node("Neg", name="neg", inputs=1, outputs=1)
    exp = g.add_node("Exp", name="exp", inputs=1, outputs=1)
    out = g.add_node("NetOutput", name="out", inputs=1)
    g.add_edge(x, 0, neg, 0)
    g.add_edge(neg, 0, exp, 0)
    g.add_edge(exp, 0, out, 0)
    run = gebench.compile(g, passes=[path])
    assert run.status == "FAILED" and run.failed_pass == "Recreate"
    assert "MARKS_RUNAWAY" in run.failure_reason and "would never end" in run.failure_reason
    replaced = [r for r in run.ledger if r.status.name == "REPLACED"]
    assert 5 <= len(replaced) <= 12  # stopped by the marks, long before the bound on rewrites (1000 + 4n)
    lints = [r for r in run.ledger if r.status.name == "LINT" and r.detail.get("rule") == "match_loop_does_not_terminate"]
    assert lints and lints[0].pass_name == "Recreate"
    graph = run.ir_graph
    graph.verify()  # the refused rewrite left nothing half-done: one Exp(Neg(x)) chain, as before it
    assert len(graph.nodes_of_type("Exp")) == 1 and len(graph.nodes_of_type("Neg")) == 1
    final_exp = graph.nodes_of_type("Exp")[0]
    assert len(final_exp.attrs["_datadump_original_op_names"]) <= 1016
