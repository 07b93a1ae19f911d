"""Make gebench's bundled ONNX models with onnx.helper (deterministic: seeded weights, fixed names).

Run ``python assets/make_models.py`` to (re)write the ``.onnx`` files next to this script; ``--check`` only
verifies that the committed files equal what the script builds. Every model is opset 17, IR version 8,
float32, and well under 200 KB.

Models:
    matmul_add          MatMul + Add (bias): the target of a MatMul+Add -> GEMM fusion.
    add_zero            Add of an all-zero constant, then Relu: a no-op Add to remove.
    grouped_conv        one Conv with group=4 (+ bias).
    concat_relu         Concat of two inputs followed by Relu.
    small_cnn           a small CNN: Conv/BatchNormalization/Relu blocks, MaxPool, a residual Add,
                        GlobalAveragePool, Flatten, Gemm.
    small_transformer   two pre-norm transformer blocks: LayerNormalization, multi-head attention (MatMul,
                        Reshape, Transpose, Softmax), a decomposed layer norm and an MLP with exact GELU
                        written as Div/Erf/Add/Mul/Mul (as torch exports it), then a ReduceSum.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8
HERE = Path(__file__).resolve().parent
FLOAT = TensorProto.FLOAT


class _Builder:
    """Collects nodes and initializers for one graph; names are explicit and stable."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []

    def weight(self, name: str, shape: tuple[int, ...], scale: float = 0.1) -> str:
        arr = (self.rng.standard_normal(shape) * scale).astype(np.float32)
        self.inits.append(numpy_helper.from_array(arr, name=name))
        return name

    def const(self, name: str, arr: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name=name))
        return name

    def node(self, op: str, inputs: list[str], name: str, n_out: int = 1, **attrs: object) -> str | list[str]:
        outs = [name] if n_out == 1 else [f"{name}_out{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=name, **attrs))
        return outs[0] if n_out == 1 else outs

    def model(self, name: str, inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto]) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, name, inputs, outputs, initializer=self.inits)
        model = helper.make_model(graph, producer_name="gebench-assets", opset_imports=[helper.make_opsetid("", OPSET)])
        model.ir_version = IR_VERSION
        onnx.checker.check_model(model)
        return model


def _io(name: str, shape: list[int]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, FLOAT, shape)


def matmul_add() -> onnx.ModelProto:
    b = _Builder(1)
    mm = b.node("MatMul", ["x", b.weight("weight", (16, 8))], "matmul")
    b.node("Add", [mm, b.weight("bias", (8,))], "add")
    return b.model("matmul_add", [_io("x", [4, 16])], [_io("add", [4, 8])])


def add_zero() -> onnx.ModelProto:
    b = _Builder(2)
    add = b.node("Add", ["x", b.const("zero", np.zeros((8,), np.float32))], "add_zero")
    b.node("Relu", [add], "relu")
    return b.model("add_zero", [_io("x", [2, 8])], [_io("relu", [2, 8])])


def grouped_conv() -> onnx.ModelProto:
    b = _Builder(3)
    b.node("Conv", ["x", b.weight("conv_w", (8, 2, 3, 3)), b.weight("conv_b", (8,))], "grouped_conv",
           kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1], group=4)
    return b.model("grouped_conv", [_io("x", [1, 8, 16, 16])], [_io("grouped_conv", [1, 8, 16, 16])])


def concat_relu() -> onnx.ModelProto:
    b = _Builder(4)
    cat = b.node("Concat", ["a", "b"], "concat", axis=1)
    b.node("Relu", [cat], "relu")
    return b.model("concat_relu", [_io("a", [1, 4, 8, 8]), _io("b", [1, 4, 8, 8])], [_io("relu", [1, 8, 8, 8])])


def small_cnn() -> onnx.ModelProto:
    b = _Builder(5)

    def conv_bn_relu(x: str, cin: int, cout: int, tag: str, stride: int = 1, relu: bool = True) -> str:
        y = b.node("Conv", [x, b.weight(f"{tag}_w", (cout, cin, 3, 3))], f"{tag}_conv", kernel_shape=[3, 3],
                   pads=[1, 1, 1, 1], strides=[stride, stride])
        scale = b.const(f"{tag}_bn_scale", (1.0 + 0.1 * b.rng.standard_normal(cout)).astype(np.float32))
        bias = b.weight(f"{tag}_bn_bias", (cout,))
        mean = b.weight(f"{tag}_bn_mean", (cout,))
        var = b.const(f"{tag}_bn_var", (1.0 + 0.1 * np.abs(b.rng.standard_normal(cout))).astype(np.float32))
        y = b.node("BatchNormalization", [y, scale, bias, mean, var], f"{tag}_bn", epsilon=1e-5)
        return b.node("Relu", [y], f"{tag}_relu") if relu else y

    h = conv_bn_relu("x", 3, 8, "stem")
    h = b.node("MaxPool", [h], "pool", kernel_shape=[2, 2], strides=[2, 2])
    r = conv_bn_relu(h, 8, 8, "res1")
    r = conv_bn_relu(r, 8, 8, "res2", relu=False)
    h = b.node("Add", [h, r], "residual_add")
    h = b.node("Relu", [h], "residual_relu")
    h = conv_bn_relu(h, 8, 16, "down", stride=2)
    h = b.node("GlobalAveragePool", [h], "gap")
    h = b.node("Flatten", [h], "flatten", axis=1)
    b.node("Gemm", [h, b.weight("fc_w", (10, 16)), b.weight("fc_b", (10,))], "fc", transB=1)
    return b.model("small_cnn", [_io("x", [1, 3, 32, 32])], [_io("fc", [1, 10])])


def small_transformer() -> onnx.ModelProto:
    seq, d, heads, dff = 8, 32, 4, 64
    b = _Builder(6)
    i64 = np.int64
    consts = {
        "shape_heads": b.const("shape_heads", np.array([1, seq, heads, d // heads], i64)),
        "shape_model": b.const("shape_model", np.array([1, seq, d], i64)),
        "scale": b.const("attn_scale", np.array(1.0 / np.sqrt(d // heads), np.float32)),
        "two": b.const("two", np.array(2.0, np.float32)),
        "eps": b.const("ln_eps", np.array(1e-5, np.float32)),
        "sqrt2": b.const("sqrt2", np.array(np.sqrt(2.0), np.float32)),
        "one": b.const("one", np.array(1.0, np.float32)),
        "half": b.const("half", np.array(0.5, np.float32)),
    }
    h = "x"
    for layer in range(2):
        h = _transformer_block(b, h, f"l{layer}", d, dff, consts)
    axes_last = b.const("axes_last", np.array([-1], i64))
    b.node("ReduceSum", [h, axes_last], "pooled_sum", keepdims=0)
    return b.model("small_transformer", [_io("x", [1, seq, d])],
                   [_io(h, [1, seq, d]), _io("pooled_sum", [1, seq])])


def _transformer_block(b: _Builder, x: str, p: str, d: int, dff: int, c: dict[str, str]) -> str:
    """One pre-norm block; returns the name of its output tensor."""
    ln1 = b.node("LayerNormalization", [x, b.weight(f"{p}_ln1_gamma", (d,), 1.0), b.weight(f"{p}_ln1_beta", (d,))],
                 f"{p}_ln1", axis=-1, epsilon=1e-5)

    def proj(src: str, tag: str, din: int, dout: int) -> str:
        mm = b.node("MatMul", [src, b.weight(f"{p}_{tag}_w", (din, dout))], f"{p}_{tag}_matmul")
        return b.node("Add", [mm, b.weight(f"{p}_{tag}_b", (dout,))], f"{p}_{tag}_add")

    def split_heads(src: str, tag: str, perm: list[int]) -> str:
        r = b.node("Reshape", [src, c["shape_heads"]], f"{p}_{tag}_reshape")
        return b.node("Transpose", [r], f"{p}_{tag}_transpose", perm=perm)

    q = split_heads(proj(ln1, "q", d, d), "q", [0, 2, 1, 3])
    k = split_heads(proj(ln1, "k", d, d), "k", [0, 2, 3, 1])
    v = split_heads(proj(ln1, "v", d, d), "v", [0, 2, 1, 3])
    scores = b.node("MatMul", [q, k], f"{p}_scores_matmul")
    scores = b.node("Mul", [scores, c["scale"]], f"{p}_scores_scale")
    probs = b.node("Softmax", [scores], f"{p}_softmax", axis=-1)
    ctx = b.node("MatMul", [probs, v], f"{p}_context_matmul")
    ctx = b.node("Transpose", [ctx], f"{p}_context_transpose", perm=[0, 2, 1, 3])
    ctx = b.node("Reshape", [ctx, c["shape_model"]], f"{p}_context_reshape")
    h = b.node("Add", [x, proj(ctx, "out", d, d)], f"{p}_attn_residual")

    # Layer norm written out the way older exporters emit it.
    mean = b.node("ReduceMean", [h], f"{p}_ln2_mean", axes=[-1], keepdims=1)
    cen = b.node("Sub", [h, mean], f"{p}_ln2_sub")
    var = b.node("ReduceMean", [b.node("Pow", [cen, c["two"]], f"{p}_ln2_pow")], f"{p}_ln2_var", axes=[-1], keepdims=1)
    std = b.node("Sqrt", [b.node("Add", [var, c["eps"]], f"{p}_ln2_add_eps")], f"{p}_ln2_sqrt")
    norm = b.node("Mul", [b.node("Div", [cen, std], f"{p}_ln2_div"), b.weight(f"{p}_ln2_gamma", (d,), 1.0)],
                  f"{p}_ln2_scale")
    ln2 = b.node("Add", [norm, b.weight(f"{p}_ln2_beta", (d,))], f"{p}_ln2_shift")

    up = proj(ln2, "fc1", d, dff)
    g = b.node("Erf", [b.node("Div", [up, c["sqrt2"]], f"{p}_gelu_div")], f"{p}_gelu_erf")
    g = b.node("Mul", [up, b.node("Add", [g, c["one"]], f"{p}_gelu_add")], f"{p}_gelu_mul")
    g = b.node("Mul", [g, c["half"]], f"{p}_gelu_half")
    return b.node("Add", [h, proj(g, "fc2", dff, d)], f"{p}_mlp_residual")


MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "matmul_add": matmul_add,
    "add_zero": add_zero,
    "grouped_conv": grouped_conv,
    "concat_relu": concat_relu,
    "small_cnn": small_cnn,
    "small_transformer": small_transformer,
}


def build_all() -> dict[str, bytes]:
    """Serialized bytes of every bundled model, by name."""
    return {name: make().SerializeToString(deterministic=True) for name, make in MODELS.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare the committed files with a fresh build")
    parser.add_argument("--out", type=Path, default=HERE, help="output folder (default: this folder)")
    args = parser.parse_args(argv)
    stale = []
    for name, data in build_all().items():
        path = args.out / f"{name}.onnx"
        if args.check:
            if not path.is_file() or path.read_bytes() != data:
                stale.append(path.name)
            continue
        path.write_bytes(data)
        sys.stdout.write(f"wrote {path} ({len(data)} bytes)\n")
    if stale:
        sys.stdout.write(f"stale: {', '.join(stale)}; run python assets/make_models.py\n")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
