"""Remove ``Cast(Cast(x, T), dtype(x))``: the legacy ``patterns()`` style with ``capture_tensor``.

Captures: 0 = the pattern input ``x`` (resolved to the target producer), 1 = the outer Cast. The round trip is
only removed when the outer Cast returns to ``x``'s own dtype and the inner Cast widens (so no value is lost).
"""

from ge.es.graph_builder import GraphBuilder
from ge.es.math import Cast
from ge.graph.types import DataType
from ge.passes import PassStage, PatternFusionPass, create_pattern, register_fusion_pass

# dtype -> dtypes that represent every value of it exactly
_WIDER = {
    DataType.DT_FLOAT16: (DataType.DT_FLOAT, DataType.DT_DOUBLE),
    DataType.DT_FLOAT: (DataType.DT_DOUBLE,),
    DataType.DT_INT8: (DataType.DT_INT16, DataType.DT_INT32, DataType.DT_INT64, DataType.DT_FLOAT),
    DataType.DT_INT32: (DataType.DT_INT64, DataType.DT_DOUBLE),
}


@register_fusion_pass(name="GebenchCastRoundTripPass", stage=PassStage.AFTER_INFER_SHAPE)
class GebenchCastRoundTripPass(PatternFusionPass):
    def patterns(self):
        builder = GraphBuilder("cast_round_trip")
        x = builder.create_input(0)
        inner = Cast(x, dst_type=DataType.DT_FLOAT)
        outer = Cast(inner, dst_type=DataType.DT_FLOAT)
        pat = create_pattern(builder.build_and_reset([outer]))
        pat.capture_tensor(x).capture_tensor(outer)
        return [pat]

    def meet_requirements(self, match_result):
        source = match_result.get_captured_tensor(0)
        outer = match_result.get_captured_tensor(1).node
        x_dtype = source.node.get_output_desc(source.index).get_data_type()
        inner_node, _ = outer.get_in_data_nodes_and_port_indexes(0)
        inner_dtype = DataType(inner_node.get_attr("dst_type"))
        outer_dtype = DataType(outer.get_attr("dst_type"))
        return outer_dtype == x_dtype and inner_dtype in _WIDER.get(x_dtype, ())

    def replacement(self, match_result):
        builder = GraphBuilder("cast_round_trip_replacement")
        return builder.build_and_reset([builder.create_input(0)])
