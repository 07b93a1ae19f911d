# Sample 3 (spec §4 #3): fuse MatMul + Add into GEMM, patterns declared with @pattern.
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass

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


def _require(*ops):
    if any(op is None for op in ops):
        raise ImportError("the ES op packages (es_math / es_nn / es_all) are not installed")


@register_fusion_pass(name="PythonFuseMatMulAndAddPass", stage=PassStage.BEFORE_INFER_SHAPE)
class PythonFuseMatMulAndAddPass(PatternFusionPass):
    @pattern
    def matmul_add(self, inputs):
        _require(MatMul)
        a, b, c = inputs[:3]
        return MatMul(a, b) + c

    @pattern
    def batch_matmul_add(self, inputs):
        _require(BatchMatMulV2)
        a, b, c = inputs[:3]
        return BatchMatMulV2(a, b) + c

    def meet_requirements(self, match_result):
        return True

    def replacement(self, inputs):
        _require(GEMM)
        r_a, r_b, r_c = inputs[:3]
        return GEMM(r_a, r_b, r_c, 1.0, 1.0)


if __name__ == "__main__":
    print("PythonFuseMatMulAndAddPass defines a MatMul+Add -> GEMM fusion")
