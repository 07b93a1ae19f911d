# Sample 1 (spec §4 #1): Relu(ConcatV2(x0..xn, dim)) -> ConcatV2(Relu(x0)..Relu(xn), dim) with SubgraphRewriter.
from ge.es import GraphBuilder, TensorHolder
from ge.graph import Graph, Node
from ge.passes import (
    FusionBasePass,
    PassContext,
    PassStage,
    SubgraphBoundary,
    SubgraphInput,
    SubgraphOutput,
    SubgraphRewriter,
    register_fusion_pass,
)

try:
    from ge.es.math import ConcatV2
except ImportError:
    ConcatV2 = None
try:
    from ge.es.nn import Relu
except ImportError:
    Relu = None


def _concat_relu_pairs(graph: Graph):
    pairs = []
    for node in graph.get_direct_nodes():
        if node.type != "ConcatV2" or node.get_outputs_size() != 1:
            continue
        consumers = node.get_out_data_nodes_and_port_indexes(0)
        if len(consumers) != 1:
            continue
        relu, _ = consumers[0]
        if relu.type == "Relu":
            pairs.append((node, relu))
    return pairs


@register_fusion_pass(name="PythonMoveReluBeforeConcatPass", stage=PassStage.BEFORE_INFER_SHAPE)
class PythonMoveReluBeforeConcatPass(FusionBasePass):
    def run(self, graph: Graph, context: PassContext):
        print("PythonMoveReluBeforeConcatPass")
        if ConcatV2 is None or Relu is None:
            raise ImportError("es_math / es_nn are not installed")
        for concat, relu in _concat_relu_pairs(graph):
            input_count = concat.get_inputs_size()
            tensor_count = input_count - 1  # the last input is concat_dim
            builder = GraphBuilder("replacement")
            relus: list[TensorHolder] = [Relu(builder.create_input(i)) for i in range(tensor_count)]
            concat_dim = builder.create_input(tensor_count)
            out = ConcatV2(relus, concat_dim, N=tensor_count)
            replacement = builder.build_and_reset([out])

            boundary = SubgraphBoundary()
            for i in range(input_count):
                sub_in = SubgraphInput()
                sub_in.add_input(concat, i)
                boundary.add_input(i, sub_in)
            boundary.add_output(0, SubgraphOutput(relu, 0))
            SubgraphRewriter.replace(boundary, replacement, context=context)
            print("Replacement of PythonMoveReluBeforeConcatPass succeeded")
        return True
