"""Expression-style replacements that the runtime records instead of building (``gebench.fusion._recorded``).

The runtime asks the ``replacement`` wrapper for a record when only it will see the result; the builder then
records the nodes a plain replacement asks for and the rewriter makes them straight in the target graph. Whatever
the replacement does (recordable or not: reading a tensor, an attr scope, an int operand, a short input list, a
tensor of another builder), the compiled graph, the ledger and the snapshots must be exactly those of building
the replacement graph and adopting its nodes, which is what a builder that never records does.
"""

from __future__ import annotations

import itertools
import json
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gebench
from gebench import ir
from gebench.fusion import _rewriter
from gebench.ge.es.graph_builder import GraphBuilder

HEADER = """
from ge.es.all import Abs, BatchMatMulV2, GEMM, Neg, Relu, Sigmoid, Tanh
from ge.es.graph_builder import GraphBuilder, attr_scope, control_dependency_scope
from ge.graph import Graph
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass


@register_fusion_pass(name="Recorded", stage=PassStage.BEFORE_INFER_SHAPE)
class Recorded(PatternFusionPass):
"""

GEMM_PATTERN = """
    @pattern
    def matmul_add(self, inputs):
        a, b, c = inputs[:3]
        return BatchMatMulV2(a, b) + c

    def meet_requirements(self, match_result):
        return True
"""

RELU_PATTERN = """
    @pattern
    def relu(self, inputs):
        return Relu(inputs[0])

    def meet_requirements(self, match_result):
        return True
"""

SIGMOID_TANH_PATTERN = """
    @pattern
    def sigmoid_and_tanh(self, inputs):
        a = inputs[0]
        return [Sigmoid(a), Tanh(a)]

    def meet_requirements(self, match_result):
        return True
"""

#: name -> class body (pattern, meet_requirements, replacement)
BODIES = {
    "scalar consts": GEMM_PATTERN + """
    def replacement(self, inputs):
        a, b, c = inputs[:3]
        return GEMM(a, b, c, 1.0, 1.0)
""",
    "output is an input": """
    @pattern
    def double_neg(self, inputs):
        return Neg(Neg(inputs[0]))

    def meet_requirements(self, match_result):
        return True

    def replacement(self, inputs):
        return inputs[0]
""",
    "two outputs as a tuple": SIGMOID_TANH_PATTERN + """
    def replacement(self, inputs):
        a = inputs[0]
        return (Relu(a), Abs(Neg(a)))
""",
    "reads a tensor's name midway": RELU_PATTERN + """
    def replacement(self, inputs):
        negated = Neg(inputs[0])
        assert negated.name.startswith("Neg_")
        return Abs(negated)
""",
    "sets an input's shape": RELU_PATTERN + """
    def replacement(self, inputs):
        a = inputs[0]
        a.set_shape([4, 8])
        return Abs(Neg(a))
""",
    "attr scope": RELU_PATTERN + """
    def replacement(self, inputs):
        negated = Neg(inputs[0])  # recorded, then made when the scoped Abs is: without the scope's attr
        with attr_scope({"_scoped": "yes"}):
            return Abs(negated)
""",
    "one-input ops": RELU_PATTERN + """
    def replacement(self, inputs):
        return Abs(Neg(inputs[0]))
""",
    "int and float operands": RELU_PATTERN + """
    def replacement(self, inputs):
        return Abs(inputs[0]) * 2.0 + 1
""",
    "the same tensor twice, and an input passed through": SIGMOID_TANH_PATTERN + """
    def replacement(self, inputs):
        a = inputs[0]
        r = Relu(a)
        self.calls = getattr(self, "calls", 0) + 1
        return [r, r] if self.calls % 2 else (r, a)
""",
    "control dependency scope": RELU_PATTERN + """
    def replacement(self, inputs):
        a = inputs[0]
        n = Neg(a)
        with control_dependency_scope([n]):
            return Abs(n)
""",
    "raises midway": RELU_PATTERN + """
    def replacement(self, inputs):
        Abs(Neg(inputs[0]))
        raise ValueError("no replacement today")
""",
    "too few inputs touched": GEMM_PATTERN + """
    def replacement(self, inputs):
        a, b = inputs[:2]
        return GEMM(a, b, b, 1.0, 1.0)
""",
    "a tensor of another builder": RELU_PATTERN + """
    def replacement(self, inputs):
        Neg(inputs[0])
        return GraphBuilder("elsewhere").create_input(0)
""",
    "called by pass code": GEMM_PATTERN.replace("return True", "return isinstance(self.replacement(match_result), Graph)")
    + """
    def replacement(self, inputs):
        a, b, c = inputs[:3]
        return GEMM(a, b, c, 1.0, 1.0)
""",
}


def model(sites: int = 3) -> Any:
    """``sites`` branches ``Relu(Neg(Neg(Add(BatchMatMulV2(x, w_i), b_i))))`` plus ``Sigmoid(x)`` and ``Tanh(x)``,
    all graph outputs."""
    from gebench.ge.es.all import Add, BatchMatMulV2, Neg, Relu, Sigmoid, Tanh

    b = GraphBuilder("recorded_model")
    x = b.create_input(0, shape=[4, 8])
    outputs = []
    for i in range(sites):
        w = b.create_const_float([float(i + k) for k in range(64)], [8, 8])
        bias = b.create_const_float([float(i)] * 8, [8])
        outputs.append(Relu(Neg(Neg(Add(BatchMatMulV2(x, w), bias)))))
    outputs.extend([Sigmoid(x), Tanh(x)])
    return b.build_and_reset(outputs)


def pass_file(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "recorded_pass.py"
    path.write_text(textwrap.dedent(HEADER) + textwrap.indent(textwrap.dedent(body), "    "))
    return path


def compile_outcome(monkeypatch: pytest.MonkeyPatch, path: Path, *, recording: bool) -> dict[str, Any]:
    """Everything a user can read of a compile: status, graphs (result and every snapshot) and the ledger."""
    with monkeypatch.context() as patch:
        patch.setattr(_rewriter, "_RENAME_COUNTER", itertools.count())  # the same names in both runs
        if not recording:
            patch.setattr(GraphBuilder, "_start_recording", lambda self: None)
        run = gebench.compile(model(), passes=[str(path)])
    records = [r.to_dict() for r in run.ledger.records]
    for r in records:
        r.pop("hook_source", None)  # the temporary file's path is the same; keep the comparison about content
    return {
        "status": run.status,
        "failure": run.failure_reason,
        "graph": ir.to_text(run.ir_graph),
        "snapshots": {name: ir.to_text(ir.as_graph(run.snapshots[name])) for name in run.snapshots},
        "ledger": json.dumps(records, sort_keys=True, default=str),
    }


@pytest.mark.parametrize("case", list(BODIES))
def test_a_recorded_replacement_compiles_exactly_as_a_built_one(monkeypatch, tmp_path, case):
    path = pass_file(tmp_path, BODIES[case])
    built = compile_outcome(monkeypatch, path, recording=False)
    recorded = compile_outcome(monkeypatch, path, recording=True)
    assert recorded == built
    expect_failure = case in ("too few inputs touched", "a tensor of another builder", "raises midway")
    assert (built["status"] == "SUCCESS") is not expect_failure, built["failure"]


def test_the_cases_rewrite_what_they_say(monkeypatch, tmp_path):
    """The comparison above is about real rewrites: the recorded runs did change the graph."""
    outcome = compile_outcome(monkeypatch, pass_file(tmp_path, BODIES["attr scope"]), recording=True)
    scoped = [line for line in outcome["graph"].splitlines() if "_scoped" in line]
    assert len(scoped) == 3 and all("= Abs(" in line for line in scoped)  # one Abs per site, never the Neg
    outcome = compile_outcome(monkeypatch, pass_file(tmp_path, BODIES["scalar consts"]), recording=True)
    assert "= GEMM(" in outcome["graph"] and "= BatchMatMulV2(" not in outcome["graph"]
    outcome = compile_outcome(monkeypatch, pass_file(tmp_path, BODIES["two outputs as a tuple"]), recording=True)
    assert "= Sigmoid(" not in outcome["graph"] and "= Abs(" in outcome["graph"]
    outcome = compile_outcome(monkeypatch, pass_file(tmp_path, BODIES["too few inputs touched"]), recording=True)
    assert "DATA_COUNT_MISMATCH" in outcome["failure"]


def staged_nodes_made(monkeypatch: pytest.MonkeyPatch, path: Path, sites: int, made_type: str, *,
                      recording: bool) -> int:
    """Nodes added to builder graphs (``ir.StagedGraph``) while compiling ``model(sites)``."""
    made = Counter()
    register = ir.StagedGraph._register

    def counting(self: Any, *args: Any) -> None:
        made["nodes"] += 1
        register(self, *args)

    graph = model(sites)
    with monkeypatch.context() as patch:
        patch.setattr(ir.StagedGraph, "_register", counting)
        if not recording:
            patch.setattr(GraphBuilder, "_start_recording", lambda self: None)
        run = gebench.compile(graph, passes=[str(path)])
    assert run.status == "SUCCESS", run.failure_reason
    assert sum(1 for _ in run.ir_graph.nodes_of_type(made_type)) == sites
    return made["nodes"]


@pytest.mark.parametrize(("case", "made_type", "built_per_match"), [
    ("scalar consts", "GEMM", 7),  # three Data, two Consts, the GEMM and a NetOutput
    ("one-input ops", "Abs", 4),  # a Data, the Neg, the Abs and a NetOutput
])
def test_a_recorded_replacement_makes_no_throwaway_nodes(monkeypatch, tmp_path, case, made_type, built_per_match):
    # building made the replacement graph for every match; recorded, only the pattern's own graph is built (once
    # per run, whatever the number of matches)
    path = pass_file(tmp_path, BODIES[case])
    assert staged_nodes_made(monkeypatch, path, 1, made_type, recording=True) == \
        staged_nodes_made(monkeypatch, path, 10, made_type, recording=True)
    assert staged_nodes_made(monkeypatch, path, 10, made_type, recording=False) - \
        staged_nodes_made(monkeypatch, path, 1, made_type, recording=False) == 9 * built_per_match


def test_a_recorded_tensor_reads_as_the_built_node():
    """Code that takes a recorded holder's node straight (not through the builder) gets the node building would
    have made: reading it makes the builder's nodes first."""
    from gebench.ge.es.all import GEMM

    b = GraphBuilder("direct")
    b._start_recording()
    x, w, c = (b._create_default_input(i) for i in range(3))
    y = GEMM(x, w, c, 1.0, 2.0)
    assert b._record is not None and len(b._record.ops) == 3  # two Consts and the GEMM, nothing made yet
    node = y._ir_node
    assert node.op_type == "GEMM" and node.name == "GEMM_2"  # read through the pending node: materialized
    assert b._record is None and y._ir_node.name == "GEMM_2" and isinstance(y._ir_node, ir.Node)
    g = b.build_and_reset([y])._ir
    assert [n.name for n in g.nodes()] == ["input_0", "input_1", "input_2", "Const_0", "Const_1", "GEMM_2",
                                           "NetOutput_direct"]
    beta = g.find("Const_1").attrs["value"]
    assert np.asarray(beta.array).item() == 2.0
