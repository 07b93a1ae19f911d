"""Provenance like GE (spec ge-fusion-artifacts §2): the ``pass_name`` list attr on replacement nodes, the
inherited ``_datadump_original_op_names``, both written in dumps, and ``Run.provenance(node)``."""

from __future__ import annotations

import sys
import textwrap

import pytest

import gebench
from gebench import ir

# A: Relu -> Abs; B: Sigmoid -> Tanh (both PatternFusionPass); C: Abs -> Tanh fused into one Exp; D (a
# DecomposePass) turns Exp into Neg and records what pass_name it reads on the Exp it decomposes. Passes of one
# stage run in ascending name order.
CHAIN_PASSES = """
from ge.es.all import Abs, Exp, Neg, Relu, Sigmoid, Tanh
from ge.passes import (DecomposePass, PassStage, PatternFusionPass, pattern, register_decompose_pass,
                       register_fusion_pass)

SEEN = []


@register_fusion_pass(name="A_ReluToAbs", stage=PassStage.BEFORE_INFER_SHAPE)
class A(PatternFusionPass):
    @pattern
    def relu(self, inputs):
        return Relu(inputs[0])

    def meet_requirements(self, match_result):
        return True

    def replacement(self, inputs):
        return Abs(inputs[0])


@register_fusion_pass(name="B_SigmoidToTanh", stage=PassStage.BEFORE_INFER_SHAPE)
class B(PatternFusionPass):
    @pattern
    def sigmoid(self, inputs):
        return Sigmoid(inputs[0])

    def meet_requirements(self, match_result):
        return True

    def replacement(self, inputs):
        return Tanh(inputs[0])


@register_fusion_pass(name="C_AbsTanhToExp", stage=PassStage.BEFORE_INFER_SHAPE)
class C(PatternFusionPass):
    @pattern
    def abs_tanh(self, inputs):
        return Tanh(Abs(inputs[0]))

    def meet_requirements(self, match_result):
        return True

    def replacement(self, inputs):
        return Exp(inputs[0])


@register_decompose_pass(name="D_ExpToNeg", stage=PassStage.BEFORE_INFER_SHAPE, op_types=["Exp"])
class D(DecomposePass):
    def meet_requirements(self, node):
        SEEN.append(list(node.get_attr("pass_name")))
        return True

    def replacement(self, node):
        from ge.es import GraphBuilder

        b = GraphBuilder("neg")
        return b.build_and_reset([Neg(b.create_input(0))])
"""

GRAPH = """\
graph chain
  #0 x = Data() {index=0} -> (y: DT_FLOAT[2,3])
  #1 relu = Relu(x=x:0) {_datadump_original_op_names=["onnx/Relu_7"]} -> (y: DT_FLOAT[2,3])
  #2 sig = Sigmoid(x=relu:0) -> (y: DT_FLOAT[2,3])
  #3 out = NetOutput(x0=sig:0)
"""


@pytest.fixture
def chain_run(tmp_path):
    path = tmp_path / "chain_passes.py"
    path.write_text(textwrap.dedent(CHAIN_PASSES))
    run = gebench.compile(ir.parse_text(GRAPH), passes=[str(path)], stages=["BeforeInferShape"])
    assert run.status == "SUCCESS", run.failure_reason
    return run


def _only(run, op_type):
    nodes = list(run.ir_graph.nodes_of_type(op_type))
    assert len(nodes) == 1, [n.name for n in run.ir_graph.nodes()]
    return nodes[0]


def test_pass_name_is_inherited_in_boundary_order_and_appended(chain_run):
    neg = _only(chain_run, "Neg")
    # Exp was made by C from Abs (made by A) and Tanh (made by B), in topological order; D decomposed it
    assert neg.attrs["pass_name"] == ["A_ReluToAbs", "B_SigmoidToTanh", "C_AbsTanhToExp", "D_ExpToNeg"]
    # the original op names come through every step: relu's ONNX name, sig's own name
    assert neg.attrs["_datadump_original_op_names"] == ["onnx/Relu_7", "sig"]


def test_later_passes_read_pass_name_through_get_attr(chain_run):
    module = sys.modules[chain_run.passes[0].module_name]
    assert module.SEEN == [["A_ReluToAbs", "B_SigmoidToTanh", "C_AbsTanhToExp"]]
    # and the facade shows it on the final graph as a list of strings
    neg = next(n for n in chain_run.graph.get_direct_nodes() if n.type == "Neg")
    assert neg.get_attr("pass_name") == ["A_ReluToAbs", "B_SigmoidToTanh", "C_AbsTanhToExp", "D_ExpToNeg"]


def test_provenance_maps_a_fused_node_back_to_original_nodes_and_passes(chain_run):
    neg = _only(chain_run, "Neg")
    prov = chain_run.provenance(neg.name)
    assert prov.created_by_pass
    assert prov.passes == ("A_ReluToAbs", "B_SigmoidToTanh", "C_AbsTanhToExp", "D_ExpToNeg")
    assert sorted(prov.original_nodes) == ["relu", "sig"]
    assert prov.original_op_names == ("onnx/Relu_7", "sig")
    assert [s.pass_name for s in prov.steps] == ["A_ReluToAbs", "B_SigmoidToTanh", "C_AbsTanhToExp", "D_ExpToNeg"]
    assert prov.steps[0].replaced == ("relu",)
    assert neg.id in prov.steps[-1].added_ids
    text = prov.text()
    assert "A_ReluToAbs -> B_SigmoidToTanh -> C_AbsTanhToExp -> D_ExpToNeg" in text and "onnx/Relu_7" in text
    # the same through a ge.graph.Node and an id
    view = next(n for n in chain_run.graph.get_direct_nodes() if n.type == "Neg")
    assert chain_run.provenance(view) == prov == chain_run.provenance(neg.id)


def test_provenance_of_an_input_node_and_of_an_unknown_one(chain_run):
    prov = chain_run.provenance("x")
    assert not prov.created_by_pass and prov.passes == () and prov.original_nodes == ("x",) and prov.steps == ()
    assert "input graph" in prov.text()
    with pytest.raises(KeyError, match="no node 'nope'"):
        chain_run.provenance("nope")


def test_pass_name_is_written_in_dumps_and_read_back(chain_run, tmp_path):
    paths = gebench.api.write_dumps(chain_run, tmp_path / "dumps")
    proto = [p for p in paths if p.name.startswith("ge_proto_") and "RunCustomPassBeforeInfershape" in p.name]
    assert len(proto) == 1
    text = proto[0].read_text()
    assert 'key: "pass_name"' in text and 's: "D_ExpToNeg"' in text
    loaded = gebench.load(proto[0]).ir
    neg = next(n for n in loaded.nodes() if n.op_type == "Neg")
    assert neg.attrs["pass_name"] == ["A_ReluToAbs", "B_SigmoidToTanh", "C_AbsTanhToExp", "D_ExpToNeg"]
    assert neg.attrs["_datadump_original_op_names"] == ["onnx/Relu_7", "sig"]


REWRITER_PASS = """
from ge.es import GraphBuilder
from ge.es.all import Abs
from ge.passes import (FusionBasePass, PassStage, SubgraphBoundary, SubgraphInput, SubgraphOutput,
                       SubgraphRewriter, register_fusion_pass)


@register_fusion_pass(name="ByHand", stage=PassStage.BEFORE_INFER_SHAPE)
class ByHand(FusionBasePass):
    def run(self, graph, context):
        relu = next(n for n in graph.get_direct_nodes() if n.type == "Relu")
        boundary = SubgraphBoundary()
        boundary.add_input(0, SubgraphInput([(relu, 0)]))
        boundary.add_output(0, SubgraphOutput(relu, 0))
        b = GraphBuilder("abs")
        SubgraphRewriter.replace(boundary, b.build_and_reset([Abs(b.create_input(0))]), context=context)
        return True
"""


def test_subgraph_rewriter_gives_no_pass_name_but_the_ledger_knows(tmp_path):
    path = tmp_path / "by_hand.py"
    path.write_text(textwrap.dedent(REWRITER_PASS))
    run = gebench.compile(ir.parse_text(GRAPH), passes=[str(path)], stages=["BeforeInferShape"])
    assert run.status == "SUCCESS", run.failure_reason
    abs_node = _only(run, "Abs")
    assert "pass_name" not in abs_node.attrs  # GE stamps it for PatternFusionPass/DecomposePass only
    assert abs_node.attrs["_datadump_original_op_names"] == ["onnx/Relu_7"]
    prov = run.provenance(abs_node.name)
    assert prov.passes == ("ByHand",) and prov.original_nodes == ("relu",)
    assert prov.steps[0].via == "SubgraphRewriter.replace"
