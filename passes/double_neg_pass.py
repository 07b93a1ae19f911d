"""Remove ``Neg(Neg(x))`` by hand: a :class:`FusionBasePass` using ``can_fuse`` and ``report_fuse``.

The consumers of the outer Neg are re-wired to ``x``; ``report_fuse`` is called after re-wiring and before the
old nodes are removed. The inner Neg is only removed when nothing else uses it.
"""

from ge.passes import FusionBasePass, PassStage, can_fuse, register_fusion_pass, report_fuse


@register_fusion_pass(name="GebenchDoubleNegPass", stage=PassStage.BEFORE_INFER_SHAPE)
class GebenchDoubleNegPass(FusionBasePass):
    def run(self, graph, context):
        pairs = []
        for outer in graph.get_direct_nodes():
            if outer.type != "Neg":
                continue
            inner, _ = outer.get_in_data_nodes_and_port_indexes(0)
            if inner.type == "Neg" and not any(inner.name == o.name for _, o in pairs):
                pairs.append((inner, outer))
        removed = set()
        for inner, outer in pairs:
            if inner.name in removed or outer.name in removed:
                continue
            check = can_fuse([inner, outer])
            if not check.ok:
                continue
            source, source_port = inner.get_in_data_nodes_and_port_indexes(0)
            for consumer, port in outer.get_out_data_nodes_and_port_indexes(0):
                graph.remove_edge(outer, 0, consumer, port)
                graph.add_data_edge(source, source_port, consumer, port)
            inner_used_elsewhere = len(inner.get_out_data_nodes_and_port_indexes(0)) > 1
            report_fuse([inner, outer] if not inner_used_elsewhere else [outer], [], context)
            graph.remove_node(outer)
            removed.add(outer.name)
            if not inner_used_elsewhere:
                graph.remove_node(inner)
                removed.add(inner.name)
        return True
