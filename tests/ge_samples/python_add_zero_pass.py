# Sample 6 (spec §4 #6): remove `x + 0`; the zero check is done in meet_requirements.
from ge.graph.types import DataType
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass

_ZERO_TYPES = (DataType.DT_FLOAT, DataType.DT_DOUBLE, DataType.DT_INT32)


@register_fusion_pass(name="PythonAddZeroPass", stage=PassStage.BEFORE_INFER_SHAPE)
class PythonAddZeroPass(PatternFusionPass):
    @pattern
    def add_zero(self, inputs):
        return inputs[0] + 0

    def meet_requirements(self, match_result):
        captured = match_result.get_captured_tensor(0)
        const_dtype = None
        is_zero = False
        for node in match_result.get_matched_nodes():
            if node.type != "Const":
                continue
            tensor = node.get_attr("value")
            if tensor.data_type not in _ZERO_TYPES:
                return False
            const_dtype = tensor.data_type
            is_zero = tensor.data == 0
            if not is_zero:
                return False
        dtype_name = const_dtype.name if const_dtype is not None else "None"
        print(f"[PythonAddZeroPass] matched={match_result.get_pattern_graph_name()} "
              f"captured={captured.node.name}:{captured.index} const_dtype={dtype_name} zero={is_zero}")
        return True

    def replacement(self, inputs):
        return inputs[0]
