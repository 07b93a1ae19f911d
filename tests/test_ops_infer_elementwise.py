"""Inference of element-wise, activation, cast and selection ops, checked against numpy broadcasting."""

from __future__ import annotations

import numpy as np
import pytest

from gebench import ops
from gebench.ir import DataType

try:  # tests/ is a package in some checkouts and a plain directory in others
    from tests.test_ops_support import Builder, infer_one
except ModuleNotFoundError:
    from test_ops_support import Builder, infer_one  # type: ignore[no-redef]

SHAPE_PAIRS = [((2, 3), (3,)), ((4, 1, 5), (3, 1)), ((), (2, 2)), ((1,), (7, 1, 1)), ((2, 3, 4), (2, 3, 4)),
               ((8, 1, 6, 1), (7, 1, 5))]


@pytest.mark.parametrize("op", ["Add", "AddV2", "Sub", "Mul", "RealDiv", "Div", "Pow", "Maximum", "Minimum"])
@pytest.mark.parametrize(("a", "b"), SHAPE_PAIRS)
def test_arithmetic_broadcasts_like_numpy(op, a, b):
    n = infer_one(op, a, b)
    assert n.outputs[0].shape == np.broadcast_shapes(a, b)
    assert n.outputs[0].dtype == DataType.DT_FLOAT


@pytest.mark.parametrize("op", ["Equal", "Less", "LessEqual", "Greater", "GreaterEqual", "LogicalAnd", "LogicalOr"])
def test_comparisons_give_bool(op):
    n = infer_one(op, (4, 1, 5), (3, 1))
    assert n.outputs[0].shape == np.broadcast_shapes((4, 1, 5), (3, 1))
    assert n.outputs[0].dtype == DataType.DT_BOOL


def test_broadcast_mismatch_names_the_node():
    with pytest.raises(ops.InferenceError, match=r"Add node 'Add_0'.*do not broadcast"):
        infer_one("Add", (2, 3), (4,))


def test_unknown_dims_propagate():
    assert infer_one("Add", (-1, 3), (1, 3)).outputs[0].shape == (-1, 3)
    assert infer_one("Mul", (-1, 3), (5, 1)).outputs[0].shape == (5, 3)
    assert infer_one("Sub", (-2,), (5, 1)).outputs[0].shape == (-2,)


@pytest.mark.parametrize("op", sorted({"Relu", "Relu6", "Sigmoid", "Tanh", "Gelu", "GeluV2", "FastGelu", "Swish", "Exp",
                                       "Log", "Sqrt", "Rsqrt", "Erf", "Neg", "Abs", "Reciprocal", "Floor", "Ceil",
                                       "Sign", "LeakyRelu", "Elu", "HardSigmoid", "Softplus", "Identity",
                                       "TensorMove", "SoftmaxV2", "LogSoftmaxV2"}))
def test_unary_keeps_shape_and_dtype(op):
    n = infer_one(op, {"shape": (2, -1, 5), "dtype": DataType.DT_FLOAT16})
    assert (n.outputs[0].shape, n.outputs[0].dtype) == ((2, -1, 5), DataType.DT_FLOAT16)


def test_scalar_attr_ops_and_logical_not():
    assert infer_one("Muls", (3, 4), attrs={"value": 2.0}).outputs[0].shape == (3, 4)
    assert infer_one("Adds", (3,), attrs={"value": 1.0}).outputs[0].shape == (3,)
    n = infer_one("LogicalNot", {"shape": (2, 2), "dtype": DataType.DT_BOOL})
    assert n.outputs[0].dtype == DataType.DT_BOOL


def test_softmax_axes_checked_and_half_to_float():
    n = infer_one("SoftmaxV2", {"shape": (2, 8), "dtype": DataType.DT_FLOAT16}, attrs={"half_to_float": True})
    assert n.outputs[0].dtype == DataType.DT_FLOAT
    with pytest.raises(ops.InferenceError, match="axis 2 is out of range"):
        infer_one("SoftmaxV2", (2, 8), attrs={"axes": [2]})


def test_prelu_and_cast():
    assert infer_one("PRelu", (1, 3, 4, 4), (3, 1, 1)).outputs[0].shape == (1, 3, 4, 4)
    n = infer_one("Cast", (2, 3), attrs={"dst_type": int(DataType.DT_INT64)})
    assert (n.outputs[0].dtype, n.outputs[0].shape) == (DataType.DT_INT64, (2, 3))
    with pytest.raises(ops.InferenceError, match="required attr 'dst_type'"):
        infer_one("Cast", (2,))


def test_select_ops_and_clip():
    cond = {"shape": (4, 1), "dtype": DataType.DT_BOOL}
    n = infer_one("SelectV2", cond, (1, 5), (4, 5))
    assert n.outputs[0].shape == np.broadcast_shapes((4, 1), (1, 5), (4, 5))
    assert infer_one("Select", {"shape": (4,), "dtype": DataType.DT_BOOL}, (4, 6), (4, 6)).outputs[0].shape == (4, 6)
    assert infer_one("ClipByValue", (2, 3), (), ()).outputs[0].shape == (2, 3)
    n = infer_one("AccumulateNV2", (2, 3), (1, 3), (2, 1), attrs={"N": 3}, dyn_in={"x": 3})
    assert n.outputs[0].shape == (2, 3)


def test_integer_arithmetic_on_known_values_is_folded_for_reshape():
    b = Builder()
    x = b.data((6, 4))
    shape = b.op("Shape", x, attrs={"dtype": int(DataType.DT_INT64)})
    two = b.const(np.array([2, 1], dtype=np.int64))
    div = b.op("RealDiv", (shape, 0), two)
    mul = b.op("Mul", (div, 0), b.const(np.array([1, 2], dtype=np.int64)))
    r = b.op("Reshape", x, (mul, 0))
    b.infer()
    assert r.outputs[0].shape == (3, 8)
    assert r.outputs[0].shape == np.zeros((6, 4)).reshape((3, 8)).shape


def test_two_shape_broadcast_shortcut_agrees_with_the_per_dim_rule():
    """Tuples take a shortcut when one shape ends with the other (equal shapes, a scalar, a bias); lists take the
    per-dim rule. Every pair of shapes up to rank 3 over known, 1, 0, unknown (-1) and unknown-rank (-2) dims gets
    the same answer."""
    import itertools

    from gebench.ops._infer import broadcast_shapes

    dims = [-2, -1, 0, 1, 2, 3]
    shapes = [s for rank in range(4) for s in itertools.product(dims, repeat=rank)]
    checked = 0
    for a in shapes:
        for b in shapes:
            try:
                expected: object = broadcast_shapes(list(a), list(b))
            except ValueError:
                expected = ValueError
            try:
                got: object = broadcast_shapes(a, b)
            except ValueError:
                got = ValueError
            assert got == expected, (a, b)
            checked += 1
    assert checked == len(shapes) ** 2 == (1 + 6 + 36 + 216) ** 2
