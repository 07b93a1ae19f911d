"""Deterministic synthetic transformer models for the speed benchmarks (shared by bench_fusion and bench_io).

:func:`transformer_onnx` builds an ONNX model (onnx.helper, opset 17) of post-norm transformer layers on a
token-major activation ``x: [T, H]``:

* LayerNorm written out (ReduceMean, Sub, Pow, ReduceMean, Add eps, Sqrt, Div, Mul gamma, Add beta);
* Q/K/V projections ``MatMul(x, W) + b`` (2-D, so ``Gemm`` is a valid fusion), each followed by
  Reshape to heads and Transpose;
* attention: batched MatMul, Div by sqrt(d), Add of the mask, Softmax, MatMul, Transpose, Reshape
  (batched MatMuls are followed by Div or Transpose, never by Add, so they are not MatMul+Add sites);
* output projection ``MatMul + Add`` and a residual Add; a second LayerNorm;
* feed-forward ``MatMul + Add``, Gelu (Erf form: Div, Erf, Add, Mul, Mul) on even layers, Relu on odd layers,
  ``MatMul + Add``, residual Add.

That is 50 nodes per Gelu layer, 46 per Relu layer and exactly 6 MatMul+Add sites per layer (MatMul always
feeds input 0 of its Add and has no other consumer). Layers are added while they fit into ``target_nodes``;
a tail of Relu nodes makes the ONNX node count exactly ``target_nodes``. Weights are small seeded
initializers (hidden size 16), so the file size reflects the graph, not the weights.

:func:`transformer_ir` gives the same model as a gebench IR graph through ``gebench.io.load_onnx`` (so the
op types are GE's: MatMul -> BatchMatMulV2, initializers -> Const, graph inputs -> Data).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
TOKENS = 8
HIDDEN = 16
HEADS = 2
FFN = 32


@dataclass(frozen=True)
class SyntheticModel:
    """An ONNX model plus what a benchmark needs to check itself.

    Attributes:
        model: the ONNX model.
        onnx_nodes: number of ONNX nodes (== the requested target).
        layers: transformer layers in it.
        matmul_add_sites: MatMul+Add pairs a MatMul+Add -> Gemm rule must rewrite (6 per layer).
    """

    model: onnx.ModelProto
    onnx_nodes: int
    layers: int
    matmul_add_sites: int


class _Builder:
    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self._count = 0

    def name(self, tag: str) -> str:
        self._count += 1
        return f"{tag}_{self._count}"

    def init(self, tag: str, arr: np.ndarray) -> str:
        name = self.name(tag)
        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def weight(self, tag: str, shape: tuple[int, ...]) -> str:
        return self.init(tag, (self.rng.standard_normal(shape) * 0.1).astype(np.float32))

    def op(self, op_type: str, inputs: list[str], **attrs: object) -> str:
        out = self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out + "_n", **attrs))
        return out


def _layer_size(layer: int) -> int:
    return 50 if layer % 2 == 0 else 46


def transformer_onnx(target_nodes: int, *, seed: int = 0) -> SyntheticModel:
    """Build the synthetic transformer with exactly ``target_nodes`` ONNX nodes.

    Deterministic: the same arguments give byte-identical ``SerializeToString()`` output.

    Raises:
        ValueError: ``target_nodes`` is smaller than one layer (50 nodes).
    """
    if target_nodes < _layer_size(0):
        raise ValueError(f"target_nodes={target_nodes}: need at least {_layer_size(0)} nodes (one layer)")
    b = _Builder(seed)
    t, h, nh, dh, ff = TOKENS, HIDDEN, HEADS, HIDDEN // HEADS, FFN
    shared = {
        "two": b.init("c_two", np.array(2.0, np.float32)),
        "eps": b.init("c_eps", np.array(1e-5, np.float32)),
        "one": b.init("c_one", np.array(1.0, np.float32)),
        "half": b.init("c_half", np.array(0.5, np.float32)),
        "sqrt2": b.init("c_sqrt2", np.array(np.sqrt(2.0), np.float32)),
        "scale": b.init("c_scale", np.array(np.sqrt(dh), np.float32)),
        "heads_shape": b.init("c_heads_shape", np.array([t, nh, dh], np.int64)),
        "flat_shape": b.init("c_flat_shape", np.array([t, h], np.int64)),
        "mask": b.init("c_mask", np.zeros((1, t, t), np.float32)),
    }

    def layer_norm(x: str) -> str:
        mean = b.op("ReduceMean", [x], axes=[-1], keepdims=1)
        centred = b.op("Sub", [x, mean])
        sq = b.op("Pow", [centred, shared["two"]])
        var = b.op("ReduceMean", [sq], axes=[-1], keepdims=1)
        std = b.op("Sqrt", [b.op("Add", [var, shared["eps"]])])
        normed = b.op("Div", [centred, std])
        scaled = b.op("Mul", [normed, b.init("ln_gamma", np.ones(h, np.float32))])
        return b.op("Add", [scaled, b.init("ln_beta", np.zeros(h, np.float32))])

    def linear(x: str, din: int, dout: int) -> str:
        mm = b.op("MatMul", [x, b.weight("w", (din, dout))])
        return b.op("Add", [mm, b.weight("b", (dout,))])

    def heads(x: str, perm: list[int]) -> str:
        return b.op("Transpose", [b.op("Reshape", [x, shared["heads_shape"]])], perm=perm)

    def layer(x: str, i: int) -> str:
        q = heads(linear(x, h, h), [1, 0, 2])
        k = heads(linear(x, h, h), [1, 2, 0])
        v = heads(linear(x, h, h), [1, 0, 2])
        scores = b.op("Add", [b.op("Div", [b.op("MatMul", [q, k]), shared["scale"]]), shared["mask"]])
        ctx = b.op("MatMul", [b.op("Softmax", [scores], axis=-1), v])
        ctx = b.op("Reshape", [b.op("Transpose", [ctx], perm=[1, 0, 2]), shared["flat_shape"]])
        x1 = layer_norm(b.op("Add", [linear(ctx, h, h), x]))
        up = linear(x1, h, ff)
        if i % 2 == 0:
            erf = b.op("Erf", [b.op("Div", [up, shared["sqrt2"]])])
            act = b.op("Mul", [b.op("Mul", [up, b.op("Add", [erf, shared["one"]])]), shared["half"]])
        else:
            act = b.op("Relu", [up])
        return layer_norm(b.op("Add", [linear(act, ff, h), x1]))

    x = "x"
    layers = 0
    while len(b.nodes) + _layer_size(layers) <= target_nodes:
        before = len(b.nodes)
        x = layer(x, layers)
        assert len(b.nodes) - before == _layer_size(layers), "layer size table out of date"
        layers += 1
    while len(b.nodes) < target_nodes:
        x = b.op("Relu", [x])
    graph = helper.make_graph(
        b.nodes, f"synthetic_transformer_{target_nodes}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [t, h])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [t, h])],
        initializer=b.inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="gebench-bench")
    model.ir_version = 8
    return SyntheticModel(model=model, onnx_nodes=len(b.nodes), layers=layers, matmul_add_sites=6 * layers)


def transformer_ir(target_nodes: int, *, seed: int = 0) -> tuple[SyntheticModel, object]:
    """The synthetic model and the same model as an ``ir.Graph`` (imported with ``gebench.io.load_onnx``)."""
    from gebench.io import load_onnx

    synth = transformer_onnx(target_nodes, seed=seed)
    return synth, load_onnx(synth.model)
