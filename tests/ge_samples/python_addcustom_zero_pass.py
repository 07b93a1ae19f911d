# Sample 8 (spec §4 #8): remove AddCustom(x, Identity(0)) (optionally through a TensorMove) on a custom op.
from ge.es.custom import AddCustom
from ge.es.math import Identity, TensorMove
from ge.graph import Tensor
from ge.graph.types import DataType
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass

_FLOAT_TYPES = (DataType.DT_FLOAT, DataType.DT_DOUBLE, DataType.DT_INT32, DataType.DT_FLOAT16)


@register_fusion_pass(name="PythonAddCustomZeroPass", stage=PassStage.BEFORE_INFER_SHAPE)
class PythonAddCustomZeroPass(PatternFusionPass):
    @pattern
    def addcustom_zero(self, inputs):
        x, y = inputs[:2]
        zero = x.get_owner_builder().create_const_float(0.0)
        return AddCustom(AddCustom(x, Identity(zero)), y)

    @pattern
    def addcustom_zero_with_tensormove(self, inputs):
        x, y = inputs[:2]
        zero = x.get_owner_builder().create_const_float(0.0)
        return AddCustom(AddCustom(x, TensorMove(Identity(zero))), y)

    def meet_requirements(self, match_result):
        for node in match_result.get_matched_nodes():
            if node.type != "Const":
                continue
            tensor = node.get_attr("value")
            if not isinstance(tensor, Tensor) or tensor.data_type not in _FLOAT_TYPES:
                return False
            is_zero = tensor.data == 0
            print(f"[PythonAddCustomZeroPass] matched={match_result.get_pattern_graph_name()} "
                  f"const_dtype={tensor.data_type.name} zero={is_zero}")
            if not is_zero:
                return False
        return True

    def replacement(self, inputs):
        x, y = inputs[:2]
        return AddCustom(x, y)
