"""Fuse ``x * Sigmoid(x)`` into ``Swish(x)`` while the Sigmoid result is also used elsewhere.

A multi-output pattern: output 0 is the Mul, output 1 the Sigmoid, so the match stays self-contained even
though other nodes consume the Sigmoid; the replacement provides both outputs (``Swish`` and a ``Sigmoid``).
Captured tensors are named explicitly with ``capture_tensor`` on a :class:`Pattern` returned by ``@pattern``.
"""

from ge.es.graph_builder import GraphBuilder
from ge.es.nn import Sigmoid, Swish
from ge.passes import PassStage, PatternFusionPass, create_pattern, pattern, register_fusion_pass


@register_fusion_pass(name="GebenchSwishPass", stage=PassStage.BEFORE_INFER_SHAPE)
class GebenchSwishPass(PatternFusionPass):
    @pattern
    def swish_shared_sigmoid(self, inputs):
        x = inputs[0]
        sig = Sigmoid(x)
        return [x * sig, sig]

    def replacement(self, inputs):
        x = inputs[0]
        return [Swish(x, scale=1.0), Sigmoid(x)]
