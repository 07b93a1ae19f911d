"""``ge.utils``: ``GeUtils`` helpers (shape inference of a whole graph; AI Core support needs a device)."""

from __future__ import annotations

from typing import Any

from gebench import ops
from gebench.ge.graph import Graph, Node
from gebench.ge.graph.tensor_desc import check_dims

__all__ = ["GeUtils"]


class GeUtils:
    """Static helpers of ``ge.utils``."""

    @staticmethod
    def infer_shape(graph: Graph, input_shapes: list[list[int]]) -> None:
        """Set the shape of graph input ``i`` (the Data node with attr ``index == i``) to ``input_shapes[i]``,
        then infer every node's output shapes and dtypes in topological order. O(n).

        Raises:
            TypeError: ``graph`` is not a Graph or ``input_shapes`` not a list of lists of int.
            RuntimeError: an input index has no Data node, or inference fails (the message names the node).
        """
        if not isinstance(graph, Graph):
            raise TypeError(f"infer_shape: graph must be a Graph, got {type(graph).__name__}")
        if not isinstance(input_shapes, list):
            raise TypeError("infer_shape: input_shapes must be a list of shapes (lists of int)")
        shapes = [check_dims(s, f"infer_shape: input_shapes[{i}]") for i, s in enumerate(input_shapes)]
        g = graph._live()
        data = {n.attrs.get("index"): n for n in g.nodes_of_type("Data")}
        for i, dims in enumerate(shapes):
            node = data.get(i)
            if node is None:
                raise RuntimeError(f"infer_shape: graph {g.name!r} has no Data node with index {i}")
            g.touch(node)
            for descs in (node.inputs, node.outputs):
                for d in descs:
                    d.shape = tuple(dims)
                    d.origin_shape = tuple(dims)
        try:
            ops.infer_graph(g)
        except ops.InferenceError as exc:
            raise RuntimeError(f"infer_shape: {exc}") from exc

    @staticmethod
    def check_node_support_on_aicore(node: Node) -> Any:
        """Whether an Ascend AI Core kernel supports ``node``: this needs CANN's op info store on an Ascend machine.

        Raises:
            TypeError: ``node`` is not a Node.
            RuntimeError: always in gebench (no AI Core op information is available).
        """
        if not isinstance(node, Node):
            raise TypeError(f"check_node_support_on_aicore: node must be a Node, got {type(node).__name__}")
        raise RuntimeError(f"check_node_support_on_aicore({node.name!r}): AI Core support information comes from "
                           "CANN's op info store, which gebench does not have; run this on an Ascend machine")
