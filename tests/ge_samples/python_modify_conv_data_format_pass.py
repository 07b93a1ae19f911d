# Sample 2 (spec §4 #2): turn an NCHW Conv2D into NHWC and drop the Transpose(perm=[0,2,3,1]) after it.
from ge.graph import Graph, Node
from ge.graph.types import DataType
from ge.passes import FusionBasePass, PassContext, PassStage, can_fuse, register_fusion_pass, report_fuse

NCHW_TO_NHWC = [0, 2, 3, 1]
NHWC_TO_NCHW = [0, 3, 1, 2]


def _perm_of(transpose: Node):
    try:
        perm_node, _ = transpose.get_in_data_nodes_and_port_indexes(1)
    except RuntimeError:
        return None, None
    if perm_node.type not in ("Const", "Constant"):
        return None, None
    tensor = perm_node.get_attr("value")
    if tensor.data_type not in (DataType.DT_INT32, DataType.DT_INT64):
        return None, None
    return perm_node, list(tensor.data)


def _following_transposes(conv: Node):
    found, queue, seen = [], [conv], {conv.name}
    while queue:
        node = queue.pop(0)
        for i in range(node.get_outputs_size()):
            for consumer, _ in node.get_out_data_nodes_and_port_indexes(i):
                if consumer.name in seen:
                    continue
                seen.add(consumer.name)
                if consumer.type == "Transpose":
                    found.append(consumer)
    return found


@register_fusion_pass(name="PythonConvTransFormatPass", stage=PassStage.BEFORE_INFER_SHAPE)
class PythonConvTransFormatPass(FusionBasePass):
    def run(self, graph: Graph, context: PassContext):
        print("PythonConvTransFormatPass is starting")
        convs = []
        for node in graph.get_direct_nodes():
            if node.type not in ("Conv2D", "Conv2DV2"):
                continue
            try:
                fmt = node.get_attr("data_format")
            except RuntimeError:
                continue
            if fmt == "NCHW":
                convs.append(node)
        if not convs:
            print("Graph has no Conv node in NCHW format")
            return True
        for conv in convs:
            for transpose in _following_transposes(conv):
                perm_node, perm = _perm_of(transpose)
                if perm != NCHW_TO_NHWC:
                    continue
                check = can_fuse([transpose])
                if not check.ok:
                    context.set_error_message(f"cannot fuse {transpose.name}: {check.reason}")
                    raise RuntimeError(context.get_error_message())
                src, src_port = transpose.get_in_data_nodes_and_port_indexes(0)
                graph.remove_edge(src, src_port, transpose, 0)
                graph.remove_edge(perm_node, 0, transpose, 1)
                for out_node, in_port in transpose.get_out_data_nodes_and_port_indexes(0):
                    try:
                        graph.remove_edge(transpose, 0, out_node, in_port)
                    except RuntimeError as exc:
                        raise RuntimeError(f"failed to remove the output edge of {transpose.name}: {exc}") from exc
                    graph.add_data_edge(src, src_port, out_node, in_port)
                    print("Remove output edges success")
                report_fuse([transpose], [], context)
                graph.remove_node(perm_node)
                graph.remove_node(transpose)
            conv.set_attr("data_format", "NHWC")
        print("PythonConvTransFormatPass completed")
        return True
