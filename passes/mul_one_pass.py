"""Remove ``x * 1``: expression-style ``@pattern`` with a ``meet_requirements`` that reads the Const value.

The pattern is matched by op type only (no matcher config), so ``meet_requirements`` checks that the constant
really is one and cannot broadcast ``x`` to a larger shape (a scalar or a single element).
"""

from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass

try:
    from ge.es.math import Mul
except ImportError:  # the op is only needed to document the pattern; `*` builds it
    Mul = None


@register_fusion_pass(name="GebenchMulOnePass", stage=PassStage.BEFORE_INFER_SHAPE)
class GebenchMulOnePass(PatternFusionPass):
    @pattern
    def mul_one(self, inputs):
        return inputs[0] * 1.0

    def meet_requirements(self, match_result):
        for node in match_result.get_matched_nodes():
            if node.type not in ("Const", "Constant"):
                continue
            tensor = node.get_attr("value")
            if tensor.shape.get_shape_size() > 1:
                return False
            value = tensor.data
            while isinstance(value, list):
                if len(value) != 1:
                    return False
                value = value[0]
            return value == 1
        return False

    def replacement(self, inputs):
        return inputs[0]
