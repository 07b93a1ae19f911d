"""The shared-constant benchmark's pass: ``Relu(Mul(x, s))`` -> ``Mul(Relu(x), s)`` (move a positive scale past Relu).

An ordinary GE pass file (expression-style ``@pattern``), used by ``bench_scale.py`` on the graph where one scalar
Const feeds 20k ``Mul`` nodes: that Const binds the pattern input ``s`` in every match and is an input of every
replacement, so each rewrite takes one consumer off it and gives it a new one. ``meet_requirements`` accepts
every match, as the onnxscript rule it is compared with has no condition (the benchmark's scale is 0.5).
"""

from ge.es.nn import Relu
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass


@register_fusion_pass(name="BenchMoveMulPastRelu", stage=PassStage.BEFORE_INFER_SHAPE)
class BenchMoveMulPastRelu(PatternFusionPass):
    @pattern
    def relu_mul(self, inputs):
        x, s = inputs[:2]
        return Relu(x * s)

    def meet_requirements(self, match_result):
        return True

    def replacement(self, inputs):
        x, s = inputs[:2]
        return Relu(x) * s
