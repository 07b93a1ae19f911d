"""Synthetic LLM-scale ONNX models for ``bench_scale.py``: stacked Linear(MatMul+Add) transformer layers, and a
graph whose single initializer feeds 20k ``Mul`` nodes.

:func:`make` builds ``layers`` layers on an activation ``x: [8, d]`` (opset 17, weights from a seeded generator):

* Q, K, V projections, each a Linear block ``MatMul(x, W) + b`` (2 nodes);
* attention without heads: ``Transpose(K)``, ``MatMul(Q, K^T)``, ``Softmax``, ``MatMul(A, V)`` (4 nodes; neither
  MatMul feeds an ``Add``);
* output projection (Linear) and a residual ``Add`` (3 nodes);
* feed-forward: Linear to ``4 d``, ``Relu``, Linear back to ``d``, residual ``Add`` (6 nodes).

That is :data:`NODES_PER_LAYER` = 19 ONNX nodes and :data:`SITES_PER_LAYER` = 6 ``MatMul + Add`` sites per layer
(q, k, v, o, ffn1, ffn2: the MatMul is input 0 of its Add and has no other consumer). The residual Adds take the
output of a Linear block's ``Add``, not of a ``MatMul``, so they are not sites. :func:`layers_for` picks the layer
count for a target ONNX node count; :func:`hidden_for` the hidden size used at that scale (16 up to 10k nodes, 8
above, which keeps the weights, and so memory, small: the sizes measure the graph).

:func:`make_shared_const` builds the shared-constant graph: a chain of ``blocks`` blocks
``h' = Add(Relu(Mul(h, scale)), h)`` where ``scale`` is one scalar initializer, so that one Const feeds every
``Mul`` (20k by default). The rule benchmarked on it moves the (positive) scale past the Relu:
``Relu(Mul(x, s)) -> Mul(Relu(x), s)``, with the shared Const bound to the pattern input ``s``; the residual Add
keeps the replacement from re-creating the pattern.

The layer generator is the project's copy of the transformer-like model first used to measure gebench at LLM
scale; run as a script it writes a model: ``python bench/_make_model.py LAYERS OUT.onnx [D]``.
"""

from __future__ import annotations

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
TOKENS = 8
#: ONNX nodes per layer of :func:`make`.
NODES_PER_LAYER = 19
#: ``MatMul + Add`` sites per layer of :func:`make` (what a MatMul+Add -> Gemm rule rewrites).
SITES_PER_LAYER = 6
#: Nodes per block of :func:`make_shared_const` (Mul, Relu, Add).
NODES_PER_SHARED_BLOCK = 3
#: Blocks of the default shared-constant graph: one Const with this many ``Mul`` consumers.
SHARED_CONSUMERS = 20000


def make(layers: int, d: int = 64) -> onnx.ModelProto:
    """``layers`` transformer-like layers of hidden size ``d``: ``19 * layers`` ONNX nodes, ``6 * layers`` sites.

    Deterministic: the same arguments give the same bytes.
    """
    if layers < 1:
        raise ValueError(f"layers must be at least 1, got {layers}")
    nodes: list[onnx.NodeProto] = []
    inits: list[onnx.TensorProto] = []
    rng = np.random.default_rng(0)

    def lin(name: str, inp: str, din: int, dout: int) -> str:
        w = numpy_helper.from_array(rng.standard_normal((din, dout)).astype(np.float32), name + "_w")
        b = numpy_helper.from_array(rng.standard_normal((dout,)).astype(np.float32), name + "_b")
        inits.extend([w, b])
        nodes.append(helper.make_node("MatMul", [inp, w.name], [name + "_mm"], name=name + "_MatMul"))
        nodes.append(helper.make_node("Add", [name + "_mm", b.name], [name + "_out"], name=name + "_Add"))
        return name + "_out"

    x = "x"
    for i in range(layers):
        p = f"l{i}"
        q = lin(p + "_q", x, d, d)
        k = lin(p + "_k", x, d, d)
        v = lin(p + "_v", x, d, d)
        nodes.append(helper.make_node("Transpose", [k], [p + "_kt"], perm=[1, 0], name=p + "_T"))
        nodes.append(helper.make_node("MatMul", [q, p + "_kt"], [p + "_s"], name=p + "_QK"))
        nodes.append(helper.make_node("Softmax", [p + "_s"], [p + "_a"], axis=-1, name=p + "_Softmax"))
        nodes.append(helper.make_node("MatMul", [p + "_a", v], [p + "_av"], name=p + "_AV"))
        o = lin(p + "_o", p + "_av", d, d)
        nodes.append(helper.make_node("Add", [x, o], [p + "_r1"], name=p + "_Res1"))
        h = lin(p + "_f1", p + "_r1", d, 4 * d)
        nodes.append(helper.make_node("Relu", [h], [p + "_h"], name=p + "_Relu"))
        f = lin(p + "_f2", p + "_h", 4 * d, d)
        nodes.append(helper.make_node("Add", [p + "_r1", f], [p + "_r2"], name=p + "_Res2"))
        x = p + "_r2"
    graph = helper.make_graph(nodes, "synthetic", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [TOKENS, d])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [TOKENS, d])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def layers_for(target_nodes: int) -> int:
    """The layer count whose model is closest to ``target_nodes`` ONNX nodes (at least one layer)."""
    return max(1, round(target_nodes / NODES_PER_LAYER))


def hidden_for(target_nodes: int) -> int:
    """The hidden size used at this scale: 16 up to 10k ONNX nodes, 8 above (memory stays small at 100k)."""
    return 16 if target_nodes <= 10000 else 8


def make_shared_const(blocks: int = SHARED_CONSUMERS, d: int = 8) -> onnx.ModelProto:
    """A chain of ``blocks`` blocks ``h' = Add(Relu(Mul(h, scale)), h)``; the scalar initializer ``scale`` (0.5)
    feeds all ``blocks`` ``Mul`` nodes. ``3 * blocks`` ONNX nodes, ``blocks`` sites of ``Relu(Mul(x, scale))``."""
    if blocks < 1:
        raise ValueError(f"blocks must be at least 1, got {blocks}")
    scale = numpy_helper.from_array(np.array(0.5, dtype=np.float32), "scale")
    nodes: list[onnx.NodeProto] = []
    h = "x"
    for i in range(blocks):
        p = f"b{i}"
        nodes.append(helper.make_node("Mul", [h, "scale"], [p + "_m"], name=p + "_Mul"))
        nodes.append(helper.make_node("Relu", [p + "_m"], [p + "_r"], name=p + "_Relu"))
        nodes.append(helper.make_node("Add", [p + "_r", h], [p + "_h"], name=p + "_Add"))
        h = p + "_h"
    graph = helper.make_graph(nodes, "shared_const", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                                    [TOKENS, d])],
                              [helper.make_tensor_value_info(h, TensorProto.FLOAT, [TOKENS, d])], [scale])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def count_sites(model: onnx.ModelProto) -> int:
    """``MatMul`` nodes whose only consumer is an ``Add`` taking the MatMul's output as input 0."""
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for node in model.graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    sites = 0
    for node in model.graph.node:
        if node.op_type != "MatMul":
            continue
        users = consumers.get(node.output[0], [])
        if len(users) == 1 and users[0].op_type == "Add" and users[0].input[0] == node.output[0]:
            sites += 1
    return sites


if __name__ == "__main__":
    model = make(int(sys.argv[1]), int(sys.argv[3]) if len(sys.argv) > 3 else 64)
    onnx.save(model, sys.argv[2])
    print(len(model.graph.node), "nodes")
