"""Rewrite ``LeakyRelu(x, negative_slope=0.0)`` and ``Maximum(x, 0.0)`` to ``Relu(x)``.

Shows :class:`PatternMatcherConfig` with both switches: IR-attr matching makes the LeakyRelu pattern match only
a slope of exactly 0.0 (attrs compared with their IR defaults filled in), and const-value matching makes the
Maximum pattern match only a float32 scalar 0.0 (same dtype, shape and bytes; an int64 0 does not match).
"""

from ge.es.math import Maximum
from ge.es.nn import LeakyRelu, Relu
from ge.passes import PassStage, PatternFusionPass, PatternMatcherConfigBuilder, pattern, register_fusion_pass


@register_fusion_pass(name="GebenchReluFormsPass", stage=PassStage.BEFORE_INFER_SHAPE)
class GebenchReluFormsPass(PatternFusionPass):
    def __init__(self):
        super().__init__(PatternMatcherConfigBuilder().enable_const_value_match().enable_ir_attr_match().build())

    @pattern
    def leaky_zero_slope(self, inputs):
        return LeakyRelu(inputs[0], negative_slope=0.0)

    @pattern
    def maximum_zero(self, inputs):
        return Maximum(inputs[0], 0.0)

    def replacement(self, inputs):
        return Relu(inputs[0])
