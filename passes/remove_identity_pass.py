"""Remove Identity nodes with a :class:`FusionBasePass` and :class:`SubgraphRewriter`.

For each Identity the boundary is its input anchor (consumer + input port, GE's ``SubgraphInput`` meaning)
and its output; the replacement passes graph input 0 straight to the output, so the Identity's consumers are
re-wired to its producer. ``replace(..., context=context)`` raises on failure, which fails the pass as in GE.
"""

from ge.es.graph_builder import GraphBuilder
from ge.passes import (
    FusionBasePass,
    PassStage,
    SubgraphBoundary,
    SubgraphInput,
    SubgraphOutput,
    SubgraphRewriter,
    register_fusion_pass,
)


def _pass_through_graph():
    builder = GraphBuilder("identity_pass_through")
    return builder.build_and_reset([builder.create_input(0)])


@register_fusion_pass(name="GebenchRemoveIdentityPass", stage=PassStage.AFTER_INFER_SHAPE)
class GebenchRemoveIdentityPass(FusionBasePass):
    def run(self, graph, context):
        identities = [n for n in graph.get_direct_nodes() if n.type == "Identity" and n.get_inputs_size() == 1]
        for node in identities:
            boundary = SubgraphBoundary()
            sub_in = SubgraphInput()
            if sub_in.add_input(node, 0) != 0 or boundary.add_input(0, sub_in) != 0:
                context.set_error_message(f"{node.name}: cannot describe the Identity's input")
                return False
            if boundary.add_output(0, SubgraphOutput(node, 0)) != 0:
                return False
            SubgraphRewriter.replace(boundary, _pass_through_graph(), context=context)
        return True
