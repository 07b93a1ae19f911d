"""Per-pass and per-pattern time and counts in ``Run.timing()`` / ``Run.report()["timing"]``."""

from __future__ import annotations

import json
import textwrap

import gebench
from gebench import ir

PASSES = """
import time

from ge.es.all import Abs, Exp, Relu, Sigmoid, Tanh
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass


@register_fusion_pass(name="TwoPatterns", stage=PassStage.BEFORE_INFER_SHAPE)
class TwoPatterns(PatternFusionPass):
    @pattern
    def relu(self, inputs):
        return Relu(inputs[0])

    @pattern
    def sigmoid(self, inputs):
        return Sigmoid(inputs[0])

    def meet_requirements(self, match_result):
        if match_result.get_matched_nodes()[0].type == "Sigmoid":
            time.sleep(0.06)  # waiting, not computing: wall time without CPU time
            return False
        return True

    def replacement(self, inputs):
        return Abs(inputs[0])


@register_fusion_pass(name="Untouched", stage=PassStage.BEFORE_INFER_SHAPE)
class Untouched(PatternFusionPass):
    @pattern
    def exp(self, inputs):
        return Exp(inputs[0])

    def meet_requirements(self, match_result):
        return True

    def replacement(self, inputs):
        return Tanh(inputs[0])
"""

GRAPH = """\
graph g
  #0 x = Data() {index=0} -> (y: DT_FLOAT[2,3])
  #1 r1 = Relu(x=x:0) -> (y: DT_FLOAT[2,3])
  #2 r2 = Relu(x=r1:0) -> (y: DT_FLOAT[2,3])
  #3 s = Sigmoid(x=r2:0) -> (y: DT_FLOAT[2,3])
  #4 out = NetOutput(x0=s:0)
"""


def _compile(tmp_path, **kwargs):
    path = tmp_path / "timed_passes.py"
    path.write_text(textwrap.dedent(PASSES))
    run = gebench.compile(ir.parse_text(GRAPH), passes=[str(path)], stages=["BeforeInferShape"], **kwargs)
    assert run.status == "SUCCESS", run.failure_reason
    return run


def test_timing_counts_per_pass_and_pattern(tmp_path):
    run = _compile(tmp_path)
    timing = run.timing()
    assert [(t["stage"], t["pass_name"]) for t in timing] == [("BeforeInferShape", "TwoPatterns"),
                                                                ("BeforeInferShape", "Untouched")]
    two, untouched = timing
    assert (two["candidates"], two["replaced"], two["rejected"]) == (3, 2, {"REJECTED_BY_MEET_REQUIREMENTS": 1})
    relu, sigmoid = two["patterns"]
    assert relu["pattern_name"] == "TwoPatterns_relu_pattern" and sigmoid["pattern_name"] == "TwoPatterns_sigmoid_pattern"
    assert (relu["anchors"], relu["matches"], relu["rewrites"], relu["replaced"]) == (2, 2, 2, 2)
    assert (sigmoid["anchors"], sigmoid["matches"], sigmoid["rewrites"]) == (1, 1, 0)
    assert sigmoid["rejected"] == {"REJECTED_BY_MEET_REQUIREMENTS": 1}
    # the sleeping hook's time is the sigmoid pattern's wall time, inside the pass's, and not CPU time
    assert sigmoid["wall_s"] >= 0.06 and sigmoid["cpu_s"] < 0.05
    assert two["wall_s"] >= relu["wall_s"] + sigmoid["wall_s"]
    assert relu["wall_s"] < 0.06
    assert untouched["candidates"] == 0 and untouched["patterns"][0]["anchors"] == 0
    assert untouched["wall_s"] < two["wall_s"]
    # the JSON report carries the same table
    report = json.loads(json.dumps(run.report()))
    assert [t["pass_name"] for t in report["timing"]] == ["TwoPatterns", "Untouched"]
    assert report["timing"][0]["patterns"][0]["rewrites"] == 2


def test_timing_counts_do_not_need_a_ledger(tmp_path):
    run = _compile(tmp_path, ledger=False)
    two = run.timing()[0]
    assert two["candidates"] == 0  # no ledger, no verdict counts
    assert [(p["anchors"], p["matches"], p["rewrites"]) for p in two["patterns"]] == [(2, 2, 2), (1, 1, 0)]
