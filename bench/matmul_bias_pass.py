"""A one-node variant of the benchmark's pass: ONNX ``MatMul`` (imported as ``BatchMatMulV2``) followed by ``Add``
-> ``BatchMatMulV2`` with the addend as its ``bias`` input.

An ordinary GE pass file. ``bench_scale.py`` times it beside ``gemm_fusion_pass.py`` (no target): each rewrite
makes one node, as onnxscript's ``Gemm`` replacement does, where GE's ``GEMM`` takes alpha and beta as inputs and
so makes a ``GEMM`` and two scalar ``Const`` nodes per rewrite.
"""

from ge.es.nn import BatchMatMulV2
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass


@register_fusion_pass(name="BenchFuseMatMulAddToMatMulBias", stage=PassStage.BEFORE_INFER_SHAPE)
class BenchFuseMatMulAddToMatMulBias(PatternFusionPass):
    @pattern
    def matmul_add(self, inputs):
        a, b, c = inputs[:3]
        return BatchMatMulV2(a, b) + c

    def meet_requirements(self, match_result):
        return True

    def replacement(self, inputs):
        a, b, c = inputs[:3]
        return BatchMatMulV2(a, b, c)
