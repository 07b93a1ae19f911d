"""Native-class behaviour of ge.passes: Pattern, MatchResult expiry, generated patterns, expression wrapper,
SubgraphInput/Output/Boundary statuses, infer_shape, can_fuse, report_fuse."""

from __future__ import annotations

import textwrap

import pytest

import gebench
from gebench.ge.passes._native import FAILED, SUCCESS


@pytest.fixture(scope="module")
def GB():
    from ge.es.graph_builder import GraphBuilder

    return GraphBuilder


@pytest.fixture(scope="module")
def es():
    import ge.es.all as es_all

    return es_all


def test_pattern_consumes_graph_and_release(GB, es):
    from ge.passes import Pattern, create_pattern

    b = GB("p")
    x = b.create_input(0)
    r = es.Relu(x)
    graph = b.build_and_reset([r])
    pat = create_pattern(graph)
    assert graph._handle is None
    with pytest.raises(RuntimeError):
        Pattern(graph)
    pat.capture_tensor(r).capture_tensor(x)
    caps = pat.get_captured_tensors()
    assert [(c.node.name, c.index) for c in caps] == [("Relu_0", 0), ("input_0", 0)]
    pat.capture_tensor(caps[0])  # a NodeIo without index
    with pytest.raises(RuntimeError):
        pat.capture_tensor(caps[0], 1)  # NodeIo with index falls into the Node branch and fails
    assert pat.is_valid()
    assert isinstance(pat.release(), int)
    assert not pat.is_valid()
    with pytest.raises(RuntimeError, match="released"):
        pat.get_captured_tensors()


def test_generated_patterns_names_and_capture_order(GB, es):
    from ge.passes import Pattern, PatternFusionPass, pattern

    class Auto(PatternFusionPass):
        @pattern
        def first(self, inputs):
            return es.MatMul(inputs[0], inputs[1]) + inputs[2]

        @pattern
        def passthrough(self, inputs):
            return [es.Relu(inputs[0]), inputs[0]]

    pats = Auto().patterns()
    assert all(isinstance(p, Pattern) for p in pats)
    assert [p._ir.name for p in pats] == ["Auto_first_pattern", "Auto_passthrough_pattern"]
    assert [(c.node.name, c.index) for c in pats[0].get_captured_tensors()] == [
        ("input_0", 0), ("input_1", 0), ("input_2", 0), ("Add_1", 0)]
    # an input returned as an output is captured twice
    assert [c.node.name for c in pats[1].get_captured_tensors()] == ["input_0", "Relu_0", "input_0"]


def test_generated_patterns_reject_lists_of_patterns(GB, es):
    from ge.passes import PatternFusionPass, pattern

    class Many(PatternFusionPass):
        @pattern
        def two(self, inputs):
            b1, b2 = GB("a"), GB("b")
            return [b1.build_and_reset([es.Relu(b1.create_input(0))]), b2.build_and_reset([es.Relu(b2.create_input(0))])]

    with pytest.raises(TypeError, match="single pattern"):
        Many().patterns()


def test_expression_replacement_called_directly_and_bad_return(GB, es):
    from ge.graph import Graph
    from ge.passes import PatternFusionPass

    class Expr(PatternFusionPass):
        def replacement(self, inputs):
            return es.Relu(inputs[0])

    graph = Expr().replacement(None)
    assert isinstance(graph, Graph) and graph.name == "Expr_replacement"
    assert [n.type for n in graph.get_direct_nodes()] == ["Data", "Relu", "NetOutput"]

    class Bad(PatternFusionPass):
        def replacement(self, inputs):
            return 42

    with pytest.raises(TypeError, match="TensorHolder"):
        Bad().replacement(None)

    seen = []

    class WithContext(PatternFusionPass):
        def replacement(self, inputs, context):
            seen.append(context)
            return inputs[0]

    WithContext().replacement("match", "ctx")
    assert seen == ["ctx"]

    class WithMatch(PatternFusionPass):
        def replacement(self, inputs, m):
            seen.append(m)
            return inputs[0]

    WithMatch().replacement("match", "ctx")
    assert seen[-1] == "match"


def test_create_replacement_checks_type(GB):
    from ge.passes import create_replacement

    b = GB("r")
    g = b.build_and_reset([b.create_input(0)])
    assert create_replacement(g) is g
    with pytest.raises(TypeError):
        create_replacement("graph")


MATCH_KEEPER = """
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass
from ge.es.all import Relu

KEPT = []


@register_fusion_pass(name="Keeper", stage=PassStage.BEFORE_INFER_SHAPE)
class Keeper(PatternFusionPass):
    @pattern
    def relu(self, inputs):
        return Relu(inputs[0])

    def meet_requirements(self, match_result, context):
        KEPT.append((match_result, str(match_result), context.get_pass_name(),
                     [n.name for n in match_result.get_matched_nodes()]))
        try:
            match_result.get_captured_tensor(-1)
        except TypeError:
            KEPT.append("negative")
        try:
            match_result.get_captured_tensor(5)
        except RuntimeError:
            KEPT.append("range")
        return False
"""


def test_match_result_expires_after_hook(tmp_path, GB, es):
    import sys

    path = tmp_path / "keeper.py"
    path.write_text(textwrap.dedent(MATCH_KEEPER))
    b = GB("g")
    run = gebench.compile(b.build_and_reset([es.Relu(b.create_input(0, shape=[2]))]), passes=[str(path)])
    kept = sys.modules[run.passes[0].module_name].KEPT
    match, text, pass_name, names = kept[0]
    assert text.startswith("[PatternName:Keeper_relu_pattern][MatchNodesPair]") and "{Relu:Relu_0}" in text
    assert pass_name == "Keeper" and names == ["Relu_0"]
    assert kept[1:] == ["negative", "range"]
    with pytest.raises(RuntimeError, match="handle has expired"):
        match.get_matched_nodes()
    with pytest.raises(TypeError):
        from ge.passes import MatchResult

        MatchResult()


def live_graph(GB, es):
    b = GB("g")
    x = b.create_input(0, shape=[2, 3])
    r = es.Relu(x)
    a = es.Abs(r)
    graph = b.build_and_reset([a, es.Neg(r)])
    from gebench import ops

    ops.infer_graph(graph.ir)
    nodes = {n.name: n for n in graph.get_direct_nodes()}
    return graph, nodes


def test_subgraph_input_statuses(GB, es):
    from ge.passes import SubgraphBoundary, SubgraphInput, SubgraphOutput

    graph, n = live_graph(GB, es)
    si = SubgraphInput()
    assert si.add_input(n["Abs_1"], 0) == SUCCESS
    assert si.add_input(n["Neg_2"], 0) == SUCCESS  # same producer Relu_0:0
    assert si.add_input(n["Relu_0"], 0) == FAILED  # fed by input_0, another producer
    assert si.add_input(n["Abs_1"], 3) == FAILED  # no such input port
    out = SubgraphOutput()
    assert out.set_output(n["Abs_1"], 0) == SUCCESS
    assert out.set_output(n["Abs_1"], 0) == FAILED  # already set
    assert SubgraphOutput().set_output(n["Abs_1"], 2) == FAILED
    boundary = SubgraphBoundary()
    assert boundary.add_input(0, si) == SUCCESS and boundary.add_input(0, si) == FAILED
    assert boundary.add_output(0, out) == SUCCESS and boundary.add_output(0, out) == FAILED
    with pytest.raises(RuntimeError):
        SubgraphOutput(n["Abs_1"], 4)


def test_subgraph_rewriter_replace_status_and_rewire(GB, es):
    from ge.passes import SubgraphBoundary, SubgraphInput, SubgraphOutput, SubgraphRewriter

    graph, n = live_graph(GB, es)
    b = GB("r")
    repl = b.build_and_reset([es.Sigmoid(b.create_input(0))])
    boundary = SubgraphBoundary()
    si = SubgraphInput([(n["Abs_1"], 0)])
    boundary.add_input(0, si)
    boundary.add_output(0, SubgraphOutput(n["Abs_1"], 0))
    assert SubgraphRewriter.replace(boundary, repl) == SUCCESS
    assert repl._handle is not None  # the replacement is copied; the Python graph stays usable
    types = [node.type for node in graph.get_direct_nodes()]
    assert "Abs" not in types and "Sigmoid" in types
    graph.ir.verify()
    with pytest.raises(TypeError):
        SubgraphRewriter.replace(boundary, repl, None)  # context is keyword-only


def test_infer_shape_sources_and_errors(GB, es):
    from ge.passes import SubgraphBoundary, SubgraphInput, SubgraphOutput, infer_shape

    graph, n = live_graph(GB, es)
    b = GB("r")
    repl = b.build_and_reset([es.Relu(b.create_input(0)) + 1.0])
    infer_shape(repl, n["Abs_1"])
    shapes = {node.type: list(node.get_output_desc(0).get_shape()) for node in repl.get_direct_nodes()
              if node.type != "NetOutput"}
    assert shapes["Data"] == [2, 3] and shapes["Relu"] == [2, 3] and shapes["Add"] == [2, 3]
    boundary = SubgraphBoundary()
    boundary.add_input(0, SubgraphInput([(n["Abs_1"], 0)]))
    boundary.add_output(0, SubgraphOutput(n["Abs_1"], 0))
    infer_shape(repl, boundary)
    with pytest.raises(TypeError):
        infer_shape("graph", n["Abs_1"])
    with pytest.raises(TypeError):
        infer_shape(repl, "node")
    b2 = GB("two")
    two = b2.build_and_reset([b2.create_input(0) + b2.create_input(1)])
    with pytest.raises(RuntimeError, match="boundary has 1 inputs"):
        infer_shape(two, n["Abs_1"])
    from ge.graph import Graph

    with pytest.raises(RuntimeError, match="replacement graph is empty"):
        infer_shape(Graph("empty"), n["Abs_1"])


def test_can_fuse(GB, es):
    from ge.passes import FuseCheckResult, can_fuse

    graph, n = live_graph(GB, es)
    assert can_fuse([n["Relu_0"], n["Abs_1"]]) == FuseCheckResult(True, "")
    assert can_fuse([]).ok is False
    # fusing Relu with Abs' sibling Neg only is fine; input_0 + Abs (Relu in between, outside) is a cycle
    res = can_fuse([n["input_0"], n["Abs_1"]])
    assert res == FuseCheckResult(False, "it will create cycle after fuse")
    n["Relu_0"].set_attr("_stream_label", "s1")
    n["Abs_1"].set_attr("_stream_label", "s2")
    assert "_stream_label" in can_fuse([n["Relu_0"], n["Abs_1"]]).reason
    with pytest.raises(TypeError):
        can_fuse([n["Relu_0"], "x"])


def test_report_fuse(GB, es):
    from ge.passes import PassContext, report_fuse

    graph, n = live_graph(GB, es)
    ctx = PassContext._create("Reporter")
    report_fuse([n["Relu_0"]], [n["Abs_1"]], ctx)
    assert n["Abs_1"]._ir_node.provenance == "Reporter"
    with pytest.raises(RuntimeError, match="must not be empty"):
        report_fuse([], [], ctx)
    assert "must not be empty" in ctx.get_error_message()
    with pytest.raises(RuntimeError, match="no pass name"):
        report_fuse([n["Relu_0"]], [], PassContext._create(""))
    with pytest.raises(TypeError):
        report_fuse(["x"], [], ctx)


GRAPH_PATTERNS = """
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass
from ge.es.graph_builder import GraphBuilder
from ge.es.all import Relu, Abs, Neg


@register_fusion_pass(name="GraphAsIs", stage=PassStage.BEFORE_INFER_SHAPE)
class GraphAsIs(PatternFusionPass):
    @pattern
    def own_graph(self, inputs):
        b = GraphBuilder("custom_pat")
        return b.build_and_reset([Relu(b.create_input(0))])

    def replacement(self, inputs):
        return Abs(inputs[0])


@register_fusion_pass(name="LegacyGraph", stage=PassStage.BEFORE_INFER_SHAPE)
class LegacyGraph(PatternFusionPass):
    def patterns(self):
        b = GraphBuilder("legacy_pat")
        return (g for g in [b.build_and_reset([Abs(b.create_input(0))])])

    def replacement(self, match_result):
        b = GraphBuilder("r")
        return b.build_and_reset([Neg(b.create_input(0))])
"""


def test_graph_patterns_used_as_is(tmp_path, GB, es):
    path = tmp_path / "graphs.py"
    path.write_text(textwrap.dedent(GRAPH_PATTERNS))
    b = GB("g")
    run = gebench.compile(b.build_and_reset([es.Relu(b.create_input(0, shape=[2]))]), passes=[str(path)],
                          verify_rewrites=True)
    assert run.status == "SUCCESS"
    assert [n.op_type for n in run.ir_graph.nodes()] == ["Data", "Neg", "NetOutput"]
    recs = [r for r in run.ledger if r.status.name == "REPLACED"]
    assert [(r.pass_name, r.pattern_name, r.captures) for r in recs] == [
        ("GraphAsIs", "custom_pat", []), ("LegacyGraph", "legacy_pat", [])]
    lines = path.read_text().splitlines()
    assert recs[0].pattern_source == f"{path}:{lines.index('    @pattern') + 1}"
    assert recs[1].pattern_source == f"{path}:{lines.index('    def patterns(self):') + 1}"


def test_bridge_pattern_protocol(GB, es):
    from ge.passes import PassContext, PassStage, PatternFusionPass, pattern, register_fusion_pass

    from gebench.fusion import Matcher, PatternGraph
    from gebench.ge.passes import _bridge, registry
    from gebench.ge.passes._native import MatchResult

    with registry.registering_into(registry.PassRegistry()):
        @register_fusion_pass(name="BridgeRelu", stage=PassStage.BEFORE_INFER_SHAPE)
        class BridgeRelu(PatternFusionPass):
            @pattern
            def relu(self, inputs):
                return es.Relu(inputs[0])

            def meet_requirements(self, match_result):
                return "yes"

            def replacement(self, inputs):
                return es.Abs(inputs[0])

        key = BridgeRelu.__ge_pass_descriptor__.descriptor_key
        hid = f"{key}#0"
        _bridge.create_pass_holder(hid, key)
        try:
            assert len(_bridge.get_pass_patterns(hid)) == 1
            assert _bridge.get_pattern_matcher_config(hid) is None
            (pat,) = _bridge.patterns_of(_bridge.holder(hid))
            assert not pat.is_valid()  # released to the engine
            b = GB("g")
            graph = b.build_and_reset([es.Relu(b.create_input(0, shape=[2]))])
            match = Matcher(PatternGraph(pat._ir, pat._captures), graph.ir).next()
            ctx = PassContext._create("BridgeRelu")
            mr = MatchResult._create(match, graph.ir)
            assert _bridge.call_meet_requirements(hid, mr, ctx) is True
            with pytest.raises(RuntimeError, match="expired"):
                mr.get_pattern_graph_name()
            repl = _bridge.call_replacement(hid, MatchResult._create(match, graph.ir), ctx)
            assert [n.type for n in repl.get_direct_nodes()] == ["Data", "Abs", "NetOutput"]
        finally:
            _bridge.clear_pass_holders()
