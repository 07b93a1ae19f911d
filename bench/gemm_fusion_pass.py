"""The benchmark's pass: ONNX ``MatMul`` (imported by GE as ``BatchMatMulV2``) followed by ``Add`` -> ``GEMM``.

An ordinary GE pass file (expression-style ``@pattern``), loaded by ``bench_fusion.py`` through
``gebench.compile(..., passes=[this file])``'s pass loader. ``meet_requirements`` accepts every match, as the
onnxscript rule it is compared with has no condition.
"""

from ge.es.math import GEMM
from ge.es.nn import BatchMatMulV2
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass


@register_fusion_pass(name="BenchFuseMatMulAddToGemm", stage=PassStage.BEFORE_INFER_SHAPE)
class BenchFuseMatMulAddToGemm(PatternFusionPass):
    @pattern
    def matmul_add(self, inputs):
        a, b, c = inputs[:3]
        return BatchMatMulV2(a, b) + c

    def meet_requirements(self, match_result):
        return True

    def replacement(self, inputs):
        a, b, c = inputs[:3]
        return GEMM(a, b, c, 1.0, 1.0)
