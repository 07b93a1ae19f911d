"""ge.graph value types against spec §2.3.3-§2.3.6 and §2.3.8: enums, Shape, TensorDesc, Tensor, attr marshalling."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from gebench import ir
from gebench.ge import graph as geg
from gebench.ge.graph import DataType, Format, Placement, Shape, Tensor, TensorDesc
from gebench.ge.graph import types as ge_types
from gebench.ge.graph._attr import _AttrValue
from gebench.ge.graph._numeric import float_list_to_fp16_bits, float_to_fp16_bits
from gebench.ge.graph.tensor import unflatten_tensor_data
from gebench.ge.graph.tensor_desc import UNKNOWN_DIM, UNKNOWN_DIM_NUM, UNKNOWN_DIM_SIZE


def test_public_names_are_exactly_ges() -> None:
    assert sorted(geg.__all__) == sorted(["Graph", "Node", "Operator", "DataType", "Format", "Placement", "Shape",
                                          "Tensor", "TensorDesc", "DumpFormat"])
    assert sorted(ge_types.__all__) == ["AttrValueType", "DataType", "Format", "Placement"]
    assert (UNKNOWN_DIM, UNKNOWN_DIM_NUM, UNKNOWN_DIM_SIZE) == (-1, -2, -1)


def test_enums_are_the_irs_and_numbered_as_ge() -> None:
    assert DataType is ir.DataType and Format is ir.Format
    assert (DataType.DT_FLOAT, DataType.DT_INT64, DataType.DT_BF16, DataType.DT_MAX) == (0, 9, 27, 43)
    assert (Format.FORMAT_NCHW, Format.FORMAT_ND, Format.FORMAT_RESERVED, Format.FORMAT_MAX) == (0, 2, 40, 53)
    assert (Placement.PLACEMENT_HOST, Placement.PLACEMENT_DEVICE) == (0, 1)
    vt = ge_types.AttrValueType
    assert (vt.VT_NONE, vt.VT_LIST_LIST_INT, vt.VT_DATA_TYPE, vt.VT_LIST_BASE) == (0, 10, 11, 1000)
    assert vt.VT_LIST_INT == 1004 and vt.VT_LIST_DATA_TYPE == 1011 and vt.VT_LIST_NAMED_ATTRS == 1009
    assert all(isinstance(e, int) for e in (DataType.DT_FLOAT, Format.FORMAT_ND, Placement.PLACEMENT_HOST, vt.VT_INT))


def test_shape_sizes_and_quirks() -> None:
    assert Shape() == [] and Shape(None) == [] and isinstance(Shape([1]), list)
    assert Shape([2, 3, 4]).get_shape_size() == 24
    assert Shape([]).get_shape_size() == 0  # GE quirk: a scalar has size 0
    assert Shape([2, -1]).get_shape_size() == -1 and Shape([-2]).get_shape_size() == -1
    assert Shape([2, -1]).is_unknown_shape() and not Shape([2, 3]).is_unknown_shape()
    for bad in ((1, 2), [1.0], ["a"], 3):
        with pytest.raises(TypeError, match="list of int"):
            Shape(bad)  # type: ignore[arg-type]


def test_tensor_desc_accessors_setters_and_errors() -> None:
    d = TensorDesc([1, 3], Format.FORMAT_NCHW, DataType.DT_FLOAT16)
    assert d.shape == [1, 3] and isinstance(d.shape, Shape)
    assert d.format == Format.FORMAT_NCHW and d.data_type == DataType.DT_FLOAT16
    assert d.origin_format == Format.FORMAT_ND and d.origin_shape == []
    assert d.set_origin_format(Format.FORMAT_NCHW) is d
    assert d.set_shape([2, 2]).set_origin_shape([4]).set_data_type(DataType.DT_INT8).set_format(Format.FORMAT_NHWC) is d
    assert (d.get_shape(), d.get_origin_shape(), d.get_format(), d.get_origin_format(), d.get_data_type()) == (
        [2, 2], [4], Format.FORMAT_NHWC, Format.FORMAT_NCHW, DataType.DT_INT8)
    assert not hasattr(d, "get_origin_data_type")
    assert repr(TensorDesc()) == "TensorDesc(shape=[], format=FORMAT_ND, data_type=DT_FLOAT)"
    with pytest.raises(TypeError, match="^Format must be a Format"):
        TensorDesc([1], 2)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="^Data type must be a DataType"):
        TensorDesc([1], Format.FORMAT_ND, 0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="shape"):
        TensorDesc((1, 2))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        d.set_format("ND")  # type: ignore[arg-type]
    with pytest.raises(RuntimeError):
        copy.copy(d)
    with pytest.raises(RuntimeError):
        copy.deepcopy(d)


def test_tensor_encodings_and_data_rendering() -> None:
    t = Tensor([0.1, 0.2, 0.3, 0.4], None, DataType.DT_FLOAT, Format.FORMAT_ND, [2, 2])
    assert t.data == [[0.1, 0.2], [0.3, 0.4]] and t.shape == [2, 2] and isinstance(t.shape, Shape)
    assert t._value.array.dtype == np.float32
    scalar = Tensor([7], data_type=DataType.DT_INT32, shape=[])
    assert scalar.data == 7 and isinstance(scalar.data, int)
    assert Tensor([1, 2, 3], data_type=DataType.DT_INT64).data == [1, 2, 3]
    assert Tensor([0.0], data_type=DataType.DT_FLOAT, shape=[]).data == 0
    half = Tensor([0.5, 1.0], data_type=DataType.DT_FLOAT16)
    assert half._value.array.dtype == np.float16 and half.data == [0.5, 1.0]
    flags = Tensor([True, False], data_type=DataType.DT_FLOAT)  # all-bool data is stored as bool
    assert flags.data_type == DataType.DT_BOOL and flags.data == [True, False]
    empty = Tensor()
    assert empty.data == [] and empty.shape == [] and empty.data_type == DataType.DT_FLOAT
    assert t.get_tensor_desc().shape == [2, 2] and t.get_tensor_desc().data_type == DataType.DT_FLOAT
    assert (t.format, t.get_format(), t.placement, t.get_placement()) == (
        Format.FORMAT_ND, Format.FORMAT_ND, Placement.PLACEMENT_HOST, Placement.PLACEMENT_HOST)
    assert t.set_format(Format.FORMAT_NCHW).format == Format.FORMAT_NCHW
    assert t.get_data() == t.data and t.get_shape() == [2, 2] and t.get_data_type() == DataType.DT_FLOAT


def test_tensor_errors() -> None:
    with pytest.raises(RuntimeError, match="^Tensor should be created either by data or by file"):
        Tensor([1.0], "x.bin")
    with pytest.raises(TypeError, match="^data should be List"):
        Tensor((1.0, 2.0))  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="DT_DOUBLE"):
        Tensor([1.0], data_type=DataType.DT_DOUBLE)
    with pytest.raises(RuntimeError, match="do not fill shape"):
        Tensor([1.0, 2.0, 3.0], shape=[2, 2])
    with pytest.raises(TypeError, match="Placement"):
        Tensor([1.0], placement=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="^Shape must be a list of integers"):
        Tensor([1.0], shape=[1.0])  # type: ignore[list-item]
    with pytest.raises(RuntimeError):
        copy.deepcopy(Tensor([1.0]))
    with pytest.raises(ValueError, match="host"):
        Tensor([1.0]).to_host()
    dev = Tensor([1.0]).to_device()
    assert dev.placement == Placement.PLACEMENT_DEVICE and dev.to_host().data == [1.0]
    with pytest.raises(ValueError, match="device"):
        dev.to_device()


def test_tensor_from_file(tmp_path: object) -> None:
    path = tmp_path / "w.bin"  # type: ignore[operator]
    np.arange(6, dtype="<f4").tofile(path)
    t = Tensor(file_path=str(path), data_type=DataType.DT_FLOAT, shape=[2, 3])
    assert t.data == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    with pytest.raises(RuntimeError, match="cannot read"):
        Tensor(file_path=str(path) + ".missing")


def test_unflatten_and_fp16_helpers() -> None:
    assert unflatten_tensor_data([1, 2, 3, 4, 5, 6], [2, 3]) == [[1, 2, 3], [4, 5, 6]]
    assert unflatten_tensor_data([5], []) == 5
    with pytest.raises(ValueError):
        unflatten_tensor_data([1, 2], [3])
    assert float_to_fp16_bits(1.0) == 0x3C00 and float_list_to_fp16_bits([0.0, -2.0]) == [0, 0xC000]


@pytest.mark.parametrize(("value", "stored", "read"), [
    ("NHWC", "NHWC", "NHWC"),
    (0.1, float(np.float32(0.1)), 0.10000000149011612),
    (True, True, True),
    (DataType.DT_FLOAT16, DataType.DT_FLOAT16, DataType.DT_FLOAT16),
    (3, 3, 3),
    ([0.5, 0.1], [0.5, float(np.float32(0.1))], [0.5, 0.10000000149011612]),
    ([True, False], [True, False], [True, False]),
    ([1, 2], [1, 2], [1, 2]),
    ([DataType.DT_INT32, DataType.DT_INT64], [3, 9], [3, 9]),  # lists of DataType are stored as ints
    (["a", "b"], ["a", "b"], ["a", "b"]),
])
def test_attr_marshalling_round_trip(value: object, stored: object, read: object) -> None:
    ir_value = _AttrValue.to_ir(value, "attr x")
    assert ir_value == stored and type(ir_value) is type(stored)
    back = _AttrValue.from_ir(ir_value, "attr x")
    assert back == read and type(back) is type(read)


def test_attr_marshalling_order_and_errors() -> None:
    assert type(_AttrValue.to_ir(DataType.DT_INT8, "a")) is DataType  # DataType before int
    assert type(_AttrValue.to_ir(False, "a")) is bool  # bool before int
    assert _AttrValue.from_ir([DataType.DT_FLOAT, DataType.DT_INT8], "a") == [0, 2]
    t = _AttrValue.from_ir(ir.TensorValue(DataType.DT_INT32, np.array([1, 2])), "a")
    assert isinstance(t, Tensor) and t.data == [1, 2]
    for bad in ([], [1, 2.0], [1, "a"], None, {"k": 1}, (1, 2), b"xy"):
        with pytest.raises(ValueError, match="attr z"):
            _AttrValue.to_ir(bad, "attr z")
    for unreadable in ([[1, 2], [3]], b"raw", ir.TensorDesc(), {"named": 1}):
        with pytest.raises(RuntimeError, match="Unsupported attribute type"):
            _AttrValue.from_ir(unreadable, "attr q")


def test_data_rendering_of_bf16_and_string_values() -> None:
    bf16 = Tensor._wrap(ir.TensorValue(DataType.DT_BF16, np.array([0x3F80, 0xC000], dtype=np.uint16)))
    assert bf16.data == [1.0, -2.0]
    text = Tensor._wrap(ir.TensorValue(DataType.DT_STRING, np.array(["a", "bc"], dtype=object)))
    assert text.data == ["a", "bc"]
