# Sample 4 (spec §4 #4): MatMul + Add -> GEMM with the legacy patterns() API and capture_tensor.
from ge.es.graph_builder import GraphBuilder
from ge.graph.types import DataType
from ge.passes import PassStage, PatternFusionPass, create_pattern, create_replacement, register_fusion_pass

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


@register_fusion_pass(name="PythonFuseMatMulAndAddCaptureTensorPass", stage=PassStage.BEFORE_INFER_SHAPE)
class PythonFuseMatMulAndAddCaptureTensorPass(PatternFusionPass):
    def patterns(self):
        print("Define pattern for FuseMatMulAndAddPass in capture tensor sample")
        if None in (MatMul, Add, BatchMatMulV2):
            raise ImportError("ES op packages are missing")
        builder0 = GraphBuilder("pattern0")
        a0, b0, c0 = builder0.create_inputs(3)
        matmul0 = MatMul(a0, b0)
        add0 = Add(matmul0, c0)
        pat0 = create_pattern(builder0.build_and_reset([add0]))
        pat0.capture_tensor(matmul0).capture_tensor(add0)

        builder1 = GraphBuilder("pattern1")
        a1, b1, c1 = builder1.create_inputs(3)
        matmul1 = BatchMatMulV2(a1, b1)
        add1 = Add(matmul1, c1)
        pat1 = create_pattern(builder1.build_and_reset([add1]))
        pat1.capture_tensor(matmul1).capture_tensor(add1)
        return [pat0, pat1]

    def meet_requirements(self, match_result):
        print("Define MeetRequirements for FuseMatMulAndAddPass in capture tensor sample")
        add_node = match_result.get_captured_tensor(1).node
        dtype0 = add_node.get_input_desc(0).get_data_type()
        dtype1 = add_node.get_input_desc(1).get_data_type()
        if dtype0 != DataType.DT_FLOAT or dtype1 != DataType.DT_FLOAT:
            print(f"Only support Add inputs are DT_FLOAT, got input0={dtype0.name}, input1={dtype1.name}")
            return False
        return True

    def replacement(self, match_result):
        print("Define replacement for FuseMatMulAndAddPass in capture tensor sample")
        matmul_node = match_result.get_captured_tensor(0).node
        try:
            transpose_a = bool(matmul_node.get_attr("transpose_x1"))
        except RuntimeError:
            transpose_a = False
        try:
            transpose_b = bool(matmul_node.get_attr("transpose_x2"))
        except RuntimeError:
            transpose_b = False
        builder = GraphBuilder("replacement")
        a, b, c = builder.create_inputs(3)
        alpha = builder.create_scalar_float(1.0)
        beta = builder.create_scalar_float(1.0)
        gemm = GEMM(a, b, c, alpha, beta, transpose_a=transpose_a, transpose_b=transpose_b)
        return create_replacement(builder.build_and_reset([gemm]))


if __name__ == "__main__":
    print("capture tensor sample")
