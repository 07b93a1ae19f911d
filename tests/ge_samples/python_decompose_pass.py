# Sample 9 (spec §4 #9): split a grouped NCHW Conv2D into per-group convolutions joined by Concat.
from ge.es import GraphBuilder, TensorHolder
from ge.es.math import Concat, ConcatV2, Split
from ge.graph import DataType, Format, Graph, Node, TensorDesc
from ge.passes import DecomposePass, PassStage, infer_shape, register_decompose_pass

try:
    from ge.es.nn import Conv2D
except ImportError:
    from ge.es.all import Conv2D

USE_CONCAT_V2 = False


@register_decompose_pass(name="PythonDecomposeGroupedConvToSplitedPass", stage=PassStage.AFTER_INFER_SHAPE,
                         op_types=["Conv2D"])
class PythonDecomposeGroupedConvToSplitedPass(DecomposePass):
    def meet_requirements(self, node: Node):
        groups = node.get_attr("groups")
        try:
            data_format = node.get_attr("data_format")
        except RuntimeError:
            return False
        return groups != 1 and data_format == "NCHW"

    def replacement(self, node: Node) -> Graph:
        groups = node.get_attr("groups")
        strides = node.get_attr("strides")
        pads = node.get_attr("pads")
        dilations = node.get_attr("dilations")
        builder = GraphBuilder("replacement")
        x, weight = builder.create_inputs(2)
        xs = Split(1, x, groups, num_split=groups)
        ws = Split(0, weight, groups, num_split=groups)
        outs = []
        for x_i, w_i in zip(xs, ws):
            r_conv: TensorHolder = Conv2D(x_i, w_i, None, None, strides=strides, pads=pads, dilations=dilations,
                                          groups=1, data_format="NCHW")
            desc = TensorDesc([], Format.FORMAT_NCHW, DataType.DT_FLOAT)
            desc.set_origin_format(Format.FORMAT_NCHW)
            conv_node = r_conv._get_node_snapshot()
            conv_node.update_input_desc(0, desc)
            conv_node.update_input_desc(1, desc)
            conv_node.update_output_desc(0, desc)
            outs.append(r_conv)
        if USE_CONCAT_V2:
            result = ConcatV2(outs, 1, N=len(outs))
        else:
            result = Concat(1, outs, N=len(outs))
        graph = builder.build_and_reset([result])
        infer_shape(graph, node)
        return graph
