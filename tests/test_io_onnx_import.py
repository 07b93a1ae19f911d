"""ONNX import: every curated mapping row of ge-ops.md §3.3 imports to the GE op types GE produces."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from gebench import ir
from gebench.io import OnnxImportError, UnsupportedOnnxOpError, load_onnx

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
_INIT_NAME = re.compile(r"_Initializer_\d+$")


def data(elem: int, shape: list[int]) -> tuple[str, int, list[int]]:
    return ("data", elem, shape)


def init(array: Any, dtype: Any = np.float32) -> tuple[str, np.ndarray]:
    return ("init", np.asarray(array, dtype=dtype))


def one_node_model(op: str, inputs: list[Any], *, opset: int = 13, attrs: dict | None = None, n_out: int = 1,
                   name: str = "node0", domain: str = "") -> onnx.ModelProto:
    """A model with one ``op`` node; inputs are graph inputs (data) or initializers (init); "" = absent."""
    graph_inputs, inits, names = [], [], []
    for i, spec in enumerate(inputs):
        if spec == "":
            names.append("")
            continue
        tname = f"in{i}"
        names.append(tname)
        if spec[0] == "data":
            graph_inputs.append(helper.make_tensor_value_info(tname, spec[1], spec[2]))
        else:
            inits.append(numpy_helper.from_array(spec[1], name=tname))
    outs = [f"out{i}" for i in range(n_out)]
    node = helper.make_node(op, names, outs, name=name, domain=domain, **(attrs or {}))
    graph = helper.make_graph([node], "one", graph_inputs, [helper.make_empty_tensor_value_info(o) for o in outs],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def op_types(graph: ir.Graph) -> Counter:
    """Op types the ONNX node became (graph inputs, initializer Consts and the NetOutput left out)."""
    return Counter(n.op_type for n in graph.nodes()
                   if n.op_type not in ("Data", "NetOutput") and not _INIT_NAME.search(n.name))


@dataclass
class Row:
    op: str
    opset: int
    inputs: list[Any]
    expect: list[str]
    attrs: dict = field(default_factory=dict)
    n_out: int = 1
    check: Any = None

    @property
    def id(self) -> str:
        return f"{self.op}-{self.opset}-{'+'.join(self.expect)}"


def f(*shape: int) -> tuple:
    return data(F, list(shape))


def _attr_check(op_type: str, **want: Any):
    def check(g: ir.Graph) -> None:
        node = g.nodes_of_type(op_type)[0]
        for k, v in want.items():
            assert node.attrs[k] == v, (k, node.attrs.get(k), v)

    return check


_UNARY = {"Relu": "Relu", "Sigmoid": "Sigmoid", "Tanh": "Tanh", "Exp": "Exp", "Log": "Log", "Sqrt": "Sqrt",
          "Erf": "Erf", "Neg": "Neg", "Abs": "Abs", "Reciprocal": "Reciprocal", "Floor": "Floor", "Ceil": "Ceil",
          "Sign": "Sign", "Softplus": "Softplus", "Softsign": "Softsign", "Identity": "Identity",
          "Dropout": "Dropout", "GlobalAveragePool": "GlobalAveragePool", "IsNaN": "IsNan", "Round": "Round",
          "Sin": "Sin", "Cos": "Cos"}
_BINARY = {"Add": "Add", "Sub": "Sub", "Mul": "Mul", "Div": "RealDiv", "Pow": "Pow", "Equal": "Equal",
           "Less": "Less", "Greater": "Greater", "LessOrEqual": "LessEqual", "PRelu": "PRelu"}

ROWS: list[Row] = [
    Row("MatMul", 13, [f(2, 3), f(3, 4)], ["BatchMatMulV2"],
        check=_attr_check("BatchMatMulV2", adj_x1=False, adj_x2=False)),
    Row("Gemm", 13, [f(2, 3), f(4, 3)], ["MatMulV2"], attrs={"transB": 1},
        check=_attr_check("MatMulV2", transpose_x1=False, transpose_x2=True)),
    Row("Gemm", 13, [f(2, 3), f(3, 4), f(4)], ["MatMulV2", "Add"]),
    Row("Gemm", 13, [f(2, 3), f(3, 4), f(4)], ["MatMulV2", "Muls", "Muls", "Add"], attrs={"alpha": 2.0, "beta": 0.5}),
    *[Row(op, 13, [f(2, 3), f(2, 3)], [ge]) for op, ge in _BINARY.items()],
    Row("And", 13, [data(B, [2]), data(B, [2])], ["LogicalAnd"]),
    Row("Or", 13, [data(B, [2]), data(B, [2])], ["LogicalOr"]),
    Row("GreaterOrEqual", 12, [f(2), f(2)], ["GreaterEqual"]),
    *[Row(op, 13, [f(1, 3, 4, 4)], [ge]) for op, ge in _UNARY.items()],
    Row("Not", 13, [data(B, [2])], ["LogicalNot"]),
    Row("HardSwish", 14, [f(2, 3)], ["HardSwish"]),
    Row("Where", 13, [data(B, [2, 3]), f(2, 3), f(2, 3)], ["SelectV2"]),
    Row("Expand", 13, [f(2, 1), init([2, 3], np.int64)], ["Expand"]),
    Row("Tile", 13, [f(2, 3), init([2, 1], np.int64)], ["Tile"]),
    Row("Range", 13, [init(0.0), init(5.0), init(1.0)], ["Range"]),
    Row("ScatterND", 13, [f(4), init([[1]], np.int64), f(1)], ["TensorScatterUpdate"]),
    Row("Softmax", 11, [f(2, 3)], ["SoftmaxV2"], check=_attr_check("SoftmaxV2", axes=[1], need_fusion=1)),
    Row("Softmax", 13, [f(2, 3)], ["SoftmaxV2"], check=_attr_check("SoftmaxV2", axes=[-1])),
    Row("LogSoftmax", 13, [f(2, 3)], ["LogSoftmaxV2"], attrs={"axis": 1},
        check=_attr_check("LogSoftmaxV2", axes=[1])),
    Row("Concat", 13, [f(2, 3), f(2, 3)], ["ConcatD"], attrs={"axis": 0},
        check=_attr_check("ConcatD", concat_dim=0, N=2)),
    Row("Concat", 13, [f(2, 3)], ["Identity"], attrs={"axis": 0}),
    Row("Split", 11, [f(4, 6)], ["Split", "Const"], attrs={"axis": 1}, n_out=2),
    Row("Split", 11, [f(4, 6)], ["SplitV", "Const", "Const"], attrs={"axis": 1, "split": [2, 4]}, n_out=2),
    Row("Split", 13, [f(4, 6), init([2, 4], np.int64)], ["SplitV", "Const"], attrs={"axis": 1}, n_out=2),
    Row("Split", 18, [f(4, 6)], ["SplitV", "Const", "Const"], attrs={"axis": 1, "num_outputs": 2}, n_out=2),
    Row("Reshape", 14, [f(2, 3), init([3, 2], np.int64)], ["Reshape"], attrs={"allowzero": 0},
        check=_attr_check("Reshape", allowzero=0, axis=0, num_axes=-1)),
    Row("Flatten", 13, [f(2, 3, 4)], ["Flatten"], attrs={"axis": 2}, check=_attr_check("Flatten", axis=2)),
    Row("Transpose", 13, [f(2, 3, 4)], ["Transpose", "Const"], attrs={"perm": [2, 0, 1]}),
    Row("Squeeze", 11, [f(2, 1, 3)], ["Squeeze"], attrs={"axes": [1]}, check=_attr_check("Squeeze", axis=[1])),
    Row("Squeeze", 13, [f(2, 1, 3), init([1], np.int64)], ["SqueezeV3"]),
    Row("Unsqueeze", 11, [f(2, 3)], ["Unsqueeze"], attrs={"axes": [0]}, check=_attr_check("Unsqueeze", axes=[0])),
    Row("Unsqueeze", 13, [f(2, 3), init([0], np.int64)], ["UnsqueezeV3"]),
    Row("Cast", 13, [f(2, 3)], ["Cast"], attrs={"to": TensorProto.FLOAT16}, check=_attr_check("Cast", dst_type=1)),
    Row("Pad", 10, [f(2, 3)], ["PadV3", "Const", "Const"], attrs={"pads": [0, 1, 0, 1]}),
    Row("Pad", 10, [f(2, 3)], ["MirrorPad", "Const"], attrs={"pads": [0, 1, 0, 1], "mode": "reflect"}),
    Row("Pad", 13, [f(2, 3), init([0, 1, 0, 1], np.int64)], ["PadV3"],
        check=_attr_check("PadV3", mode="constant", paddings_contiguous=False)),
    *[Row(op, 11, [f(2, 3)], [op, "Const"], attrs={"axes": [1]},
          check=_attr_check(op, keep_dims=True, noop_with_empty_axes=False))
      for op in ("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd")],
    *[Row(op, 13, [f(2, 3)], [op, "Const"], attrs={"axes": [1], "keepdims": 0},
          check=_attr_check(op, keep_dims=False, noop_with_empty_axes=False))
      for op in ("ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd")],
    Row("ReduceSum", 13, [f(2, 3), init([1], np.int64)], ["ReduceSum"]),
    Row("ReduceSumSquare", 13, [f(2, 3)], ["SquareSumV1"], attrs={"axes": [1]}),
    Row("Gather", 13, [f(5, 3), init([0, 2], np.int64)], ["GatherV2", "Const"], attrs={"axis": 0},
        check=_attr_check("GatherV2", negative_index_support=True)),
    Row("GatherElements", 13, [f(2, 3), init([[0, 1, 0]], np.int64)], ["GatherElements"], attrs={"axis": 0},
        check=_attr_check("GatherElements", dim=0)),
    Row("GatherND", 13, [f(2, 3), init([[1]], np.int64)], ["GatherNd"]),
    Row("Slice", 9, [f(4, 6)], ["StridedSliceV2", "Const", "Const", "Const"],
        attrs={"starts": [1], "ends": [3], "axes": [1]}),
    Row("Slice", 13, [f(4, 6), init([1], np.int64), init([3], np.int64)], ["StridedSliceV2"]),
    Row("Clip", 10, [f(2, 3)], ["Cast", "ClipByValue", "Const", "Const"], attrs={"min": -1.0, "max": 1.0}),
    Row("Clip", 13, [f(2, 3), init(-1.0), init(1.0)], ["ClipByValue"]),
    Row("Clip", 13, [f(2, 3), "", init(1.0)], ["Minimum"]),
    Row("Clip", 13, [f(2, 3), init(-1.0)], ["Maximum"]),
    Row("Min", 13, [f(2), f(2), f(2)], ["Minimum", "Minimum"]),
    Row("Max", 13, [f(2)], ["Identity"]),
    Row("Sum", 13, [f(2), f(2), f(2)], ["AccumulateNV2"], check=_attr_check("AccumulateNV2", N=3)),
    Row("Mean", 13, [f(2), f(2)], ["AccumulateNV2", "Muls"], check=_attr_check("Muls", value=0.5)),
    Row("Shape", 13, [f(2, 3)], ["Shape"], check=_attr_check("Shape", dtype=9)),
    Row("ConstantOfShape", 13, [init([2, 3], np.int64)], ["Fill", "Const"]),
    Row("TopK", 9, [f(2, 6)], ["TopK", "Const"], attrs={"k": 2, "axis": 1}, n_out=2),
    Row("TopK", 11, [f(2, 6), init([2], np.int64)], ["TopK"], n_out=2, attrs={"axis": 1, "largest": 0},
        check=_attr_check("TopK", dim=1, largest=False, sorted=True)),
    Row("ArgMax", 13, [f(2, 6)], ["ArgMaxV2", "Const", "ExpandDims", "Const"], attrs={"axis": 1}),
    Row("ArgMax", 13, [f(2, 6)], ["ArgMaxV2", "Const"], attrs={"axis": 1, "keepdims": 0},
        check=_attr_check("ArgMaxV2", dtype=ir.DataType.DT_INT64)),
    Row("Conv", 13, [f(1, 4, 8, 8), init(np.ones((6, 2, 3, 3)))], ["Conv2D"], attrs={"group": 2}),
    Row("Conv", 13, [f(1, 4, 8), init(np.ones((6, 4, 3)))], ["Unsqueeze", "Unsqueeze", "Conv2D", "Squeeze"]),
    Row("Conv", 13, [f(1, 4, 4, 8, 8), init(np.ones((6, 4, 3, 3, 3)))], ["Conv3D"],
        check=_attr_check("Conv3D", data_format="NCDHW", strides=[1, 1, 1, 1, 1])),
    Row("ConvTranspose", 13, [f(1, 4, 8, 8), init(np.ones((4, 6, 3, 3)))], ["Conv2DTranspose", "Const"],
        attrs={"strides": [2, 2], "pads": [1, 0, 1, 0]}),
    Row("ConvTranspose", 13, [f(1, 4, 4, 8, 8), init(np.ones((4, 6, 3, 3, 3)))], ["Conv3DTranspose", "Const"]),
    Row("MaxPool", 13, [f(1, 3, 8, 8)], ["MaxPoolV3"], attrs={"kernel_shape": [2, 2], "strides": [2, 2]}),
    Row("MaxPool", 13, [f(1, 3, 4, 8, 8)], ["MaxPool3D"], attrs={"kernel_shape": [2, 2, 2]}),
    Row("AveragePool", 13, [f(1, 3, 8, 8)], ["AvgPoolV2"], attrs={"kernel_shape": [3, 3], "count_include_pad": 1},
        check=_attr_check("AvgPoolV2", exclusive=False, ksize=[1, 1, 3, 3])),
    Row("GlobalMaxPool", 13, [f(1, 3, 8, 8)], ["ReduceMax", "Const"], check=_attr_check("ReduceMax", keep_dims=True)),
    Row("BatchNormalization", 13, [f(1, 3, 4, 4), init(np.ones(3)), init(np.zeros(3)), init(np.zeros(3)),
                                   init(np.ones(3))], ["BatchNorm"],
        check=_attr_check("BatchNorm", data_format="NCHW", is_training=False, onnx="onnx")),
    Row("InstanceNormalization", 13, [f(1, 3, 4, 4), init(np.ones(3)), init(np.zeros(3))], ["InstanceNorm"],
        check=_attr_check("InstanceNorm", data_format="NCHW")),
    Row("LayerNormalization", 17, [f(2, 8), init(np.ones(8)), init(np.zeros(8))],
        ["Identity", "Identity", "LayerNorm"], check=_attr_check("LayerNorm", begin_norm_axis=-1)),
    Row("LayerNormalization", 17, [f(2, 8), init(np.ones(8))],
        ["Identity", "Const", "Shape", "BroadcastTo", "LayerNorm"]),
    Row("Resize", 13, [f(1, 3, 4, 4), "", "", init([1, 3, 8, 8], np.int64)], ["ResizeNearestNeighborV2", "Const"]),
    Row("Resize", 13, [f(1, 3, 4, 4), "", init([1, 1, 2, 2], np.float32)], ["Resize"], attrs={"mode": "linear"}),
    Row("LeakyRelu", 13, [f(2, 3)], ["LeakyRelu"], attrs={"alpha": 0.25},
        check=_attr_check("LeakyRelu", negative_slope=0.25)),
    Row("Elu", 13, [f(2, 3)], ["Elu"], attrs={"alpha": 0.5}, check=_attr_check("Elu", alpha=0.5)),
    Row("HardSigmoid", 13, [f(2, 3)], ["HardSigmoid"], check=_attr_check("HardSigmoid", beta=0.5)),
    Row("Einsum", 13, [f(2, 3), f(3, 4)], ["Einsum"], attrs={"equation": "ij,jk->ik"},
        check=_attr_check("Einsum", equation="ij,jk->ik", N=2)),
    Row("CumSum", 13, [f(2, 3), init(1, np.int64)], ["Cumsum"], attrs={"reverse": 1},
        check=_attr_check("Cumsum", reverse=True, exclusive=False)),
    Row("ScatterElements", 13, [f(2, 3), init([[0]], np.int64), f(1, 1)], ["ScatterElements"]),
    Row("Scatter", 10, [f(2, 3), init([[0]], np.int64), f(1, 1)], ["ScatterElements"]),
    Row("LSTM", 13, [f(2, 1, 4), init(np.ones((1, 12, 4))), init(np.ones((1, 12, 3)))], ["CommonLSTM"],
        attrs={"hidden_size": 3}, n_out=3),
    Row("GRU", 13, [f(2, 1, 4), init(np.ones((1, 9, 4))), init(np.ones((1, 9, 3)))], ["CommonGRU"],
        attrs={"hidden_size": 3}, n_out=2),
]


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_curated_row_imports_to_ge_types(row: Row) -> None:
    model = one_node_model(row.op, row.inputs, opset=row.opset, attrs=row.attrs, n_out=row.n_out)
    graph = load_onnx(model)
    graph.verify()
    assert op_types(graph) == Counter(row.expect)
    if row.check is not None:
        row.check(graph)


def test_every_curated_onnx_op_has_a_row() -> None:
    curated = {"MatMul", "Gemm", "Add", "Sub", "Mul", "Div", "Pow", "Equal", "Less", "Greater", "LessOrEqual", "And",
               "Or", "PRelu", "GreaterOrEqual", "Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Erf", "Neg", "Abs",
               "Reciprocal", "Floor", "Ceil", "Sign", "Not", "Softplus", "Softsign", "Identity", "Dropout",
               "GlobalAveragePool", "IsNaN", "Round", "Sin", "Cos", "HardSwish", "Where", "Expand", "Tile", "Range",
               "ScatterND", "Softmax", "LogSoftmax", "Concat", "Split", "Reshape", "Flatten", "Transpose", "Squeeze",
               "Unsqueeze", "Cast", "Pad", "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd",
               "ReduceSumSquare", "Gather", "GatherElements", "GatherND", "Slice", "Clip", "Min", "Max", "Sum", "Mean",
               "Shape", "ConstantOfShape", "TopK", "ArgMax", "Conv", "ConvTranspose", "MaxPool", "AveragePool",
               "GlobalMaxPool", "BatchNormalization", "InstanceNormalization", "LayerNormalization", "Resize",
               "LeakyRelu", "Elu", "HardSigmoid", "Einsum", "CumSum", "ScatterElements", "Scatter", "LSTM", "GRU"}
    assert curated <= {r.op for r in ROWS}


# --------------------------------------------------------------------------- attribute layouts
def test_conv_attribute_layout_and_formats() -> None:
    model = one_node_model("Conv", [f(1, 4, 9, 9), init(np.ones((8, 2, 3, 3))), init(np.zeros(8))],
                           attrs={"strides": [2, 3], "pads": [1, 2, 3, 4], "dilations": [2, 1], "group": 2},
                           name="conv")
    g = load_onnx(model)
    conv = g.node_by_name("conv")
    assert conv.op_type == "Conv2D"
    assert conv.attrs["strides"] == [1, 1, 2, 3]
    assert conv.attrs["pads"] == [1, 3, 2, 4]  # ONNX [t, l, b, r] -> GE [t, b, l, r]
    assert conv.attrs["dilations"] == [1, 1, 2, 1]
    assert conv.attrs["groups"] == 2
    assert conv.attrs["data_format"] == "NCHW"
    assert conv.attrs["_datadump_original_op_names"] == ["conv"]
    assert conv.input_names[:3] == ["x", "filter", "bias"]
    for desc in (conv.inputs[0], conv.inputs[1], conv.outputs[0]):
        assert desc.format == ir.Format.FORMAT_NCHW and desc.origin_format == ir.Format.FORMAT_NCHW
    assert conv.outputs[0].shape == (1, 8, 5, 5)
    assert all(g.producer(conv, p) is not None for p in range(3))
    assert conv.inputs[3].is_placeholder  # offset_w stays unfed


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER", "VALID"])
def test_conv_transpose_auto_pad_becomes_explicit_pads_and_matches_onnx(auto_pad: str) -> None:
    from onnx.reference import ReferenceEvaluator

    from gebench.exec import execute

    rng = np.random.default_rng(7)
    weight = rng.standard_normal((2, 3, 3, 4)).astype(np.float32)
    model = one_node_model("ConvTranspose", [f(1, 2, 4, 5), init(weight)],
                           attrs={"strides": [2, 3], "auto_pad": auto_pad}, name="convt")
    g = load_onnx(model)
    (node,) = g.nodes_of_type("Conv2DTranspose")
    x = rng.standard_normal((1, 2, 4, 5)).astype(np.float32)
    (want,) = ReferenceEvaluator(model).run(None, {"in0": x})
    (got,) = execute(g, [x])
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    if auto_pad == "VALID":
        assert node.attrs["pads"] == [0, 0, 0, 0] and want.shape == (1, 3, 9, 16)
    else:
        # output = input * stride; total padding 1 (height) and 1 (width): the odd pixel goes last for SAME_UPPER
        assert want.shape == (1, 3, 8, 15)
        assert node.attrs["pads"] == ([0, 1, 0, 1] if auto_pad == "SAME_UPPER" else [1, 0, 1, 0])


def test_conv_transpose_auto_pad_same_needs_static_shapes() -> None:
    model = one_node_model("ConvTranspose", [f(1, 2, -1, 5), init(np.ones((2, 3, 3, 3)))],
                           attrs={"strides": [2, 2], "auto_pad": "SAME_UPPER"}, name="convt")
    with pytest.raises(OnnxImportError, match="auto_pad=SAME_UPPER needs known input and weight spatial shapes"):
        load_onnx(model)


def test_pool_attribute_layout() -> None:
    model = one_node_model("MaxPool", [f(1, 3, 9, 9)], name="pool",
                           attrs={"kernel_shape": [3, 2], "strides": [2, 1], "pads": [0, 1, 1, 0], "ceil_mode": 1})
    node = load_onnx(model).node_by_name("pool")
    assert node.op_type == "MaxPoolV3"
    assert (node.attrs["ksize"], node.attrs["strides"], node.attrs["pads"]) == ([1, 1, 3, 2], [1, 1, 2, 1], [0, 1, 1, 0])
    assert node.attrs["ceil_mode"] is True and node.attrs["padding_mode"] == "CALCULATED"
    same = one_node_model("AveragePool", [f(1, 3, 8, 8)], name="pool", attrs={"kernel_shape": [3, 3],
                                                                               "auto_pad": "SAME_UPPER"})
    assert load_onnx(same).node_by_name("pool").attrs["padding_mode"] == "SAME"


def test_expansion_naming_and_original_names() -> None:
    model = one_node_model("Transpose", [f(2, 3)], attrs={"perm": [1, 0]}, name="tr")
    g = load_onnx(model)
    (transpose,) = g.nodes_of_type("Transpose")
    (perm,) = g.nodes_of_type("Const")
    assert re.fullmatch(r"PartitionedCall_tr_Transpose_\d+", transpose.name)
    assert re.fullmatch(r"PartitionedCall_tr_perm_\d+", perm.name)
    assert transpose.attrs["_datadump_original_op_names"] == ["tr"] == perm.attrs["_datadump_original_op_names"]
    assert perm.attrs["value"] == ir.TensorValue(ir.DataType.DT_INT32, np.array([1, 0], np.int32))
    assert g.producer(transpose, 1) == (perm, 0)
    # one-to-one plugins keep the ONNX name and add no original-name attr
    relu = load_onnx(one_node_model("Relu", [f(2)], name="r")).node_by_name("r")
    assert "_datadump_original_op_names" not in relu.attrs


def test_gemm_expansion_wiring() -> None:
    model = one_node_model("Gemm", [f(2, 3), init(np.ones((3, 4))), init(np.ones(4))], name="fc",
                           attrs={"transA": 0, "transB": 0})
    g = load_onnx(model)
    (mm,) = g.nodes_of_type("MatMulV2")
    (add,) = g.nodes_of_type("Add")
    assert re.fullmatch(r"PartitionedCall_fc_MatMulV2_\d+", mm.name)
    assert re.fullmatch(r"PartitionedCall_fc_add_\d+", add.name)
    assert g.producer(add, 0) == (mm, 0)
    assert g.producer(add, 1)[0].op_type == "Const"
    assert g.producer(g.node_by_name("Node_Output"), 0) == (add, 0)
    assert add.outputs[0].shape == (2, 4)


def test_unnamed_nodes_get_op_type_k_names() -> None:
    x = helper.make_tensor_value_info("x", F, [2])
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Relu", ["a"], ["b"]),
             helper.make_node("Neg", ["b"], ["y"])]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [helper.make_tensor_value_info("y", F, [2])]),
                              opset_imports=[helper.make_opsetid("", 13)])
    g = load_onnx(model)
    assert [n.name for n in g.nodes() if n.op_type in ("Relu", "Neg")] == ["Relu_0", "Relu_1", "Neg_0"]


# --------------------------------------------------------------------------- inputs, constants, outputs
def test_data_nodes_index_descs_and_initializer_consts() -> None:
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = helper.make_tensor_value_info("x", F, ["batch", 3])
    m = helper.make_tensor_value_info("m", TensorProto.INT32, [2])
    w_in = helper.make_tensor_value_info("w", F, [3, 4])  # an initializer also listed as a graph input
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm"),
             helper.make_node("Cast", ["m"], ["mc"], name="cast", to=TensorProto.FLOAT)]
    graph = helper.make_graph(nodes, "g", [x, w_in, m],
                              [helper.make_tensor_value_info("y", F, ["batch", 4]),
                               helper.make_tensor_value_info("mc", F, [2])],
                              initializer=[numpy_helper.from_array(w, name="w")])
    g = load_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
    dx, dm = g.node_by_name("x"), g.node_by_name("m")
    assert (dx.op_type, dx.attrs["index"], dx.attrs["data_type"]) == ("Data", 0, int(ir.DataType.DT_FLOAT))
    assert (dm.attrs["index"], dm.attrs["data_type"]) == (1, int(ir.DataType.DT_INT32))  # initializers skipped
    assert dx.outputs[0].shape == (-1, 3) and dx.inputs[0].shape == (-1, 3)
    assert dx.outputs[0].format == ir.Format.FORMAT_NCHW == dx.outputs[0].origin_format
    const = g.node_by_name("w_Initializer_0")
    assert const.op_type == "Const" and const.attrs["value"] == ir.TensorValue(ir.DataType.DT_FLOAT, w)
    assert const.outputs[0].shape == (3, 4) and const.outputs[0].format == ir.Format.FORMAT_ND
    mm = g.node_by_name("mm")
    assert g.producer(mm, 1) == (const, 0)
    assert mm.outputs[0].shape == (-1, 4) and mm.outputs[0].format == ir.Format.FORMAT_NCHW
    net = g.node_by_name("Node_Output")
    assert [g.producer(net, p)[0].name for p in range(2)] == ["mm", "cast"]
    nd = load_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), input_format="ND")
    assert nd.node_by_name("x").outputs[0].format == ir.Format.FORMAT_ND


def test_constant_node_and_dtypes() -> None:
    value = numpy_helper.from_array(np.array([1, 2, 3], np.int32), name="c")
    nodes = [helper.make_node("Constant", [], ["c"], name="k", value=value),
             helper.make_node("Constant", [], ["s"], name="s", value_float=2.5),
             helper.make_node("Cast", ["c"], ["y"], name="cast", to=TensorProto.FLOAT)]
    graph = helper.make_graph(nodes, "g", [], [helper.make_tensor_value_info("y", F, [3]),
                                               helper.make_tensor_value_info("s", F, [])])
    g = load_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
    assert g.node_by_name("k").attrs["value"] == ir.TensorValue(ir.DataType.DT_INT32, np.array([1, 2, 3], np.int32))
    assert g.node_by_name("s").attrs["value"] == ir.TensorValue(ir.DataType.DT_FLOAT, np.array(2.5, np.float32))
    assert g.node_by_name("cast").outputs[0].dtype == ir.DataType.DT_FLOAT


def test_without_net_output_outputs_are_listed() -> None:
    g = load_onnx(one_node_model("Relu", [f(2)], name="r"), net_output=False)
    assert not g.nodes_of_type("NetOutput")
    assert g.attrs["outputs"] == ["r:0"]


def test_if_subgraphs() -> None:
    cond = helper.make_tensor_value_info("c", B, [])
    x = helper.make_tensor_value_info("x", F, [2, 3])
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"], name="relu")], "then", [],
                               [helper.make_tensor_value_info("t", F, [2, 3])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"], name="neg")], "else", [],
                               [helper.make_tensor_value_info("e", F, [2, 3])])
    node = helper.make_node("If", ["c"], ["y"], name="if0", then_branch=then_g, else_branch=else_g)
    graph = helper.make_graph([node], "g", [cond, x], [helper.make_tensor_value_info("y", F, [2, 3])])
    g = load_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
    g.verify()
    if_node = g.node_by_name("if0")
    assert if_node.op_type == "If"
    assert if_node.subgraph_names == ["if0_0_then_branch", "if0_1_else_branch"]
    assert g.producer(if_node, 1) == (g.node_by_name("x"), 0)
    then = g.subgraphs["if0_0_then_branch"]
    data_node = then.node_by_name("if0_0_then_branch/x")
    assert data_node.attrs["_parent_node_index"] == 1 and data_node.attrs["index"] == 0
    assert data_node.outputs[0].dtype == ir.DataType.DT_FLOAT
    assert then.node_by_name("if0_0_then_branch/relu").op_type == "Relu"
    net = then.node_by_name("if0_0_then_branch_Node_Output")
    assert net.inputs[0].attrs["_parent_node_index"] == 0


def test_external_data_initializers(tmp_path) -> None:
    w = np.arange(64, dtype=np.float32).reshape(8, 8)
    model = one_node_model("MatMul", [f(2, 8), init(w)], name="mm")
    onnx.save_model(model, tmp_path / "ext.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
                    location="weights.bin", size_threshold=0)
    assert (tmp_path / "weights.bin").is_file()
    g = load_onnx(tmp_path / "ext.onnx")
    (const,) = g.nodes_of_type("Const")
    assert const.attrs["value"] == ir.TensorValue(ir.DataType.DT_FLOAT, w)
    proto = onnx.load(tmp_path / "ext.onnx", load_external_data=False)
    with pytest.raises(OnnxImportError, match="base_dir"):
        load_onnx(proto)
    g2 = load_onnx(proto, base_dir=tmp_path)
    assert g2.nodes_of_type("Const")[0].attrs["value"] == ir.TensorValue(ir.DataType.DT_FLOAT, w)


# --------------------------------------------------------------------------- errors
def test_unknown_ops_are_all_listed() -> None:
    x = helper.make_tensor_value_info("x", F, [2, 3])
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="ok"),
             helper.make_node("Hardmax", ["a"], ["b"], name="hm"),
             helper.make_node("Transpose", ["b"], ["c"], name="tr_no_perm"),
             helper.make_node("MyOp", ["c"], ["y"], name="mine", domain="my.domain")]
    graph = helper.make_graph(nodes, "g", [x], [helper.make_tensor_value_info("y", F, [3, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("my.domain", 1)])
    with pytest.raises(UnsupportedOnnxOpError) as info:
        load_onnx(model)
    err = info.value
    assert isinstance(err, ValueError)
    assert [(n.name, n.op_type, n.opset) for n in err.nodes] == [("hm", "Hardmax", 13), ("tr_no_perm", "Transpose", 13),
                                                                 ("mine", "MyOp", 1)]
    text = str(err)
    assert "'hm'" in text and "Hardmax" in text and "opset 13" in text and "'mine'" in text and "perm" in text


def test_opset_outside_ge_range_per_op() -> None:
    model = one_node_model("GreaterOrEqual", [f(2), f(2)], opset=10)
    with pytest.raises(UnsupportedOnnxOpError, match="only for opsets 8-8, 12-18"):
        load_onnx(model)


def test_custom_op_declaration_imports_one_to_one(tmp_path) -> None:
    from gebench import ops

    spec = {"MyScale": {"inputs": [{"name": "x", "kind": "required"}], "outputs": [{"name": "y", "kind": "required"}],
                        "attrs": [{"name": "factor", "type": "Float", "required": True}]}}
    path = tmp_path / "custom.json"
    path.write_text(__import__("json").dumps(spec))
    ops.load_custom_ops(path)
    try:
        model = one_node_model("MyScale", [f(2)], attrs={"factor": 2.0}, name="s", domain="my.domain")
        model.opset_import.append(helper.make_opsetid("my.domain", 1))
        node = load_onnx(model).node_by_name("s")
        assert (node.op_type, node.attrs["factor"], node.input_names) == ("MyScale", 2.0, ["x"])
    finally:
        ops.clear_custom_ops()


def test_malformed_inputs_give_clear_errors(tmp_path) -> None:
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x08\x07\x12\xff\xff this is not a protobuf")
    with pytest.raises(OnnxImportError, match="garbage.onnx"):
        load_onnx(garbage)
    truncated = tmp_path / "truncated.onnx"
    truncated.write_bytes(one_node_model("Relu", [f(2)]).SerializeToString()[:-7])
    with pytest.raises(OnnxImportError, match="truncated.onnx"):
        load_onnx(truncated)
    with pytest.raises(OnnxImportError, match="no such ONNX file"):
        load_onnx(tmp_path / "missing.onnx")
    dangling = one_node_model("Add", [f(2), f(2)])
    dangling.graph.node[0].input[1] = "nowhere"
    with pytest.raises(OnnxImportError, match="nowhere"):
        load_onnx(dangling)
    with pytest.raises(TypeError):
        load_onnx(42)  # type: ignore[arg-type]


def test_newer_opset_is_converted_or_refused() -> None:
    g = load_onnx(one_node_model("Relu", [f(2, 3)], opset=19, name="r"))
    assert g.node_by_name("r").op_type == "Relu"
    # Gelu (opset 20) has no opset-18 form: the version converter cannot lower it.
    with pytest.raises(OnnxImportError, match="opset 20 is newer"):
        load_onnx(one_node_model("Gelu", [f(2, 3)], opset=20))
    with pytest.raises(OnnxImportError, match="older than"):
        load_onnx(one_node_model("Relu", [f(2, 3)], opset=6))


def test_npu_domain_ops() -> None:
    model = one_node_model("NPURmsNorm", [f(2, 8), init(np.ones(8))], attrs={"epsilon": 1e-5}, name="rms",
                           domain="npu", n_out=2)
    model.opset_import.append(helper.make_opsetid("npu", 1))
    node = load_onnx(model).node_by_name("rms")
    assert node.op_type == "RmsNorm" and node.attrs["epsilon"] == pytest.approx(1e-5)
    model = one_node_model("NPUFastGelu", [f(2, 8)], name="g", opset=13)
    assert load_onnx(model).node_by_name("g").op_type == "FastGelu"


def test_gebench_load_reads_onnx(tmp_path) -> None:
    import gebench

    path = tmp_path / "m.onnx"
    onnx.save(one_node_model("Relu", [f(2)], name="r"), path)
    g = gebench.load(path)
    assert g.find_node_by_name("r").type == "Relu"
    assert isinstance(g.ir, ir.Graph) and g.ir.node_by_name("r").op_type == "Relu"


def test_dropout_mask_output() -> None:
    unused = one_node_model("Dropout", [f(2, 3)], n_out=2, name="d")
    unused.graph.output.pop()  # mask declared but nobody reads it
    assert load_onnx(unused).node_by_name("d").op_type == "Dropout"
    with pytest.raises(UnsupportedOnnxOpError, match="mask output"):
        load_onnx(one_node_model("Dropout", [f(2, 3)], n_out=2, name="d"))


def test_import_is_deterministic_and_leaves_no_state() -> None:
    model = one_node_model("Gemm", [f(2, 3), init(np.ones((3, 4))), init(np.ones(4))], name="fc")
    first = [(n.name, n.op_type) for n in load_onnx(model).nodes()]
    with pytest.raises(UnsupportedOnnxOpError):
        load_onnx(one_node_model("Hardmax", [f(2)]))
    second = [(n.name, n.op_type) for n in load_onnx(model).nodes()]
    assert first == second  # expansion counters restart per import; a failed import changes nothing


def test_half_precision_initializers() -> None:
    half = np.array([1.5, -2.0], np.float16)
    model = one_node_model("Add", [data(TensorProto.FLOAT16, [2]), init(half, np.float16)], name="a")
    const = load_onnx(model).nodes_of_type("Const")[0]
    assert const.attrs["value"] == ir.TensorValue(ir.DataType.DT_FLOAT16, half)
    bf16 = helper.make_tensor("b", TensorProto.BFLOAT16, [2], [1.0, -2.0])
    graph = helper.make_graph([helper.make_node("Identity", ["b"], ["y"], name="i")], "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [2])], initializer=[bf16])
    g = load_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
    value = g.nodes_of_type("Const")[0].attrs["value"]
    assert value.dtype == ir.DataType.DT_BF16
    assert value.array.tolist() == [0x3F80, 0xC000]  # raw bfloat16 bit patterns of 1.0 and -2.0


# Rows whose exported model legitimately computes something else than the original ONNX node:
# GE's nearest-resize plugin drops ONNX's nearest_mode (the TF-style op rounds half up).
_EXPORT_DIFFERS = {"Resize-13-ResizeNearestNeighborV2+Const"}
_NP_TYPES = {F: np.float32, B: np.bool_, I64: np.int64}


@pytest.mark.parametrize("row", [r for r in ROWS if r.id not in _EXPORT_DIFFERS], ids=lambda r: r.id)
def test_row_import_then_export_computes_the_same(row: Row) -> None:
    """Import each row, export it again and run both models in onnxruntime on the same random inputs."""
    ort = pytest.importorskip("onnxruntime")
    from gebench.io import to_onnx

    model = one_node_model(row.op, row.inputs, opset=row.opset, attrs=row.attrs, n_out=row.n_out)
    rng = np.random.default_rng(0)
    feeds = {}
    for i, spec in enumerate(row.inputs):
        if spec != "" and spec[0] == "data":
            values = rng.standard_normal(spec[2]).astype(np.float32)
            feeds[f"in{i}"] = values > 0 if spec[1] == B else values.astype(_NP_TYPES[spec[1]])
    exported = to_onnx(load_onnx(model))
    onnx.checker.check_model(exported)
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    got = ort.InferenceSession(exported.SerializeToString()).run(None, feeds)
    for a, b in zip(want, got, strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_garbage_collector_state_is_restored() -> None:
    import gc

    assert gc.isenabled()
    load_onnx(one_node_model("Relu", [f(2)]))
    with pytest.raises(UnsupportedOnnxOpError):
        load_onnx(one_node_model("Hardmax", [f(2)]))
    assert gc.isenabled()
    gc.disable()
    try:
        load_onnx(one_node_model("Relu", [f(2)]))
        assert not gc.isenabled()
    finally:
        gc.enable()


# --------------------------------------------------------------------------- conversions stated as data
def _direct_entries() -> list[tuple[str, int]]:
    """(ONNX op, opset) for each conversion stated as data, at the last opset of its range ONNX has a schema for."""
    from gebench.io._onnx_common import CONVERTERS

    found = []
    for (domain, op), entries in CONVERTERS.items():
        for entry in entries:
            if domain == "" and entry.direct is not None:
                opsets = [v for v in range(entry.high, entry.low - 1, -1) if _has_schema(op, v)]
                if opsets:
                    found.append((op, opsets[0]))
    return sorted(found)


def _has_schema(op: str, opset: int) -> bool:
    try:
        return onnx.defs.get_schema(op, opset).since_version <= opset
    except onnx.defs.SchemaError:
        return False


#: inputs ONNX inference can infer the output of (the others get two float [2, 3] inputs)
_DIRECT_INPUTS = {"MatMul": [data(F, [2, 3]), data(F, [3, 4])], "Det": [data(F, [3, 3])],
                  "Expand": [data(F, [2, 3]), init([4, 2, 3], np.int64)]}


def _import_or_error(model: onnx.ModelProto) -> str:
    try:
        return ir.to_text(load_onnx(model))
    except (OnnxImportError, UnsupportedOnnxOpError) as exc:
        return f"{type(exc).__name__}: {exc}"


@pytest.mark.parametrize("op, opset", _direct_entries(), ids=[f"{op}-{opset}" for op, opset in _direct_entries()])
def test_a_conversion_stated_as_data_gives_the_node_its_converter_gives(op, opset, monkeypatch):
    from gebench.io.onnx_import import _Importer

    schema = onnx.defs.get_schema(op, opset)
    inputs = _DIRECT_INPUTS.get(op) or [data(F, [2, 3]) for _ in range(max(schema.min_input, 1))]
    model = one_node_model(op, inputs, opset=opset, n_out=max(schema.min_output, 1))
    taken = []
    direct = _Importer._convert_direct
    monkeypatch.setattr(_Importer, "_convert_direct", lambda *args: taken.append(direct(*args)) or taken[-1])
    with_data = _import_or_error(model)
    assert taken == [True]
    monkeypatch.setattr(_Importer, "_convert_direct", lambda *args: False)  # the converter every time
    assert _import_or_error(model) == with_data


def test_a_node_with_attributes_or_too_many_inputs_goes_to_its_converter(monkeypatch):
    from gebench.io.onnx_import import _Importer

    calls = []
    direct = _Importer._convert_direct
    monkeypatch.setattr(_Importer, "_convert_direct", lambda *args: calls.append(direct(*args)) or calls[-1])
    # an attribute (which the one-to-one conversion ignores): the converter decides
    graph = load_onnx(one_node_model("ScatterND", [data(F, [2, 3]), init([[0]], np.int64), data(F, [1, 3])],
                                     opset=16, attrs={"reduction": "none"}))
    assert op_types(graph) == Counter(["TensorScatterUpdate"]) and calls == []
    # an output ONNX inference cannot tell (a MatMul of mismatched shapes): the converter, and gebench's inference
    calls.clear()
    mismatched = one_node_model("MatMul", [data(F, [2, 3]), data(F, [2, 3])])
    from_converter = _import_or_error(mismatched)
    assert calls == [False]
    monkeypatch.setattr(_Importer, "_convert_direct", lambda *args: False)
    assert _import_or_error(mismatched) == from_converter
    monkeypatch.setattr(_Importer, "_convert_direct", lambda *args: calls.append(direct(*args)) or calls[-1])
    calls.clear()
    # more ONNX inputs than the GE op has anchors (here a catalogue whose Add has one input): not made
    # directly; the converter reports it
    from gebench.io import onnx_import

    anchor_names = onnx_import.ops.anchor_names

    def one_input_add(schema, *args):
        ins, outs = anchor_names(schema, *args)
        return (ins[:1], outs) if schema.op_type == "Add" else (ins, outs)

    monkeypatch.setattr(onnx_import.ops, "anchor_names", one_input_add)
    with pytest.raises(OnnxImportError, match="malformed: RuntimeError: converter for Add gave 2 inputs"):
        load_onnx(one_node_model("Add", [data(F, [2, 3])] * 2))
    assert calls == [False]
