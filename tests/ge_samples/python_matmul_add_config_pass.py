# Sample 5 (spec §4 #5): MatMul + Add(const) -> GEMM with const-value and IR-attr matching switched on.
from ge.passes import PassStage, PatternFusionPass, PatternMatcherConfigBuilder, pattern, register_fusion_pass

try:
    from ge.es.math import GEMM, Add, MatMul
except ImportError:
    try:
        from ge.es.all import GEMM, Add, MatMul
    except ImportError:
        GEMM = Add = MatMul = None

try:
    from ge.es.nn import BatchMatMulV2
except ImportError:
    try:
        from ge.es.all import BatchMatMulV2
    except ImportError:
        BatchMatMulV2 = None

BIAS = [[0.1, 0.1], [0.1, 0.1]]


@register_fusion_pass(name="PythonMatmulAddFusionPass", stage=PassStage.BEFORE_INFER_SHAPE)
class PythonMatmulAddFusionPass(PatternFusionPass):
    def __init__(self):
        super().__init__(PatternMatcherConfigBuilder().enable_const_value_match().enable_ir_attr_match().build())

    @pattern
    def matmul_add(self, inputs):
        x, y = inputs[:2]
        return MatMul(x, y, None, transpose_x1=False, transpose_x2=False) + BIAS

    @pattern
    def batch_matmul_add(self, inputs):
        x, y = inputs[:2]
        return BatchMatMulV2(x, y) + BIAS

    def replacement(self, inputs):
        r_a, r_b = inputs[:2]
        return GEMM(r_a, r_b, BIAS, 1.0, 1.0)
