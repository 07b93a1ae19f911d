"""Decompose ``Swish(x, scale)`` into ``x * Sigmoid(x * scale)`` after shape inference.

A :class:`DecomposePass`: the boundary is the Swish node itself (its one producer is replacement input 0).
The replacement is built with a GraphBuilder and its tensor descs are filled in with ``infer_shape``, as a
replacement made after ``AfterInferShape`` must do.
"""

from ge.es import GraphBuilder
from ge.es.nn import Sigmoid
from ge.graph import Graph, Node
from ge.passes import DecomposePass, PassStage, infer_shape, register_decompose_pass


@register_decompose_pass(name="GebenchSwishDecomposePass", stage=PassStage.AFTER_INFER_SHAPE, op_types=["Swish"])
class GebenchSwishDecomposePass(DecomposePass):
    def meet_requirements(self, node: Node) -> bool:
        return node.get_outputs_size() == 1 and node.get_inputs_size() == 1

    def replacement(self, node: Node) -> Graph:
        scale = float(node.get_attr("scale")) if node.has_attr("scale") else 1.0
        builder = GraphBuilder("swish_decomposed")
        x = builder.create_input(0)
        gate = Sigmoid(x if scale == 1.0 else x * scale)
        graph = builder.build_and_reset([x * gate])
        infer_shape(graph, node)
        return graph
