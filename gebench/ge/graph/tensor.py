"""``Tensor`` of the ``ge.graph`` facade (spec §2.3.3): a constant tensor value with a desc and a placement."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NoReturn

import numpy as np

from gebench import ir

from .tensor_desc import Shape, TensorDesc, _got, check_dims
from .types import DataType, Format, Placement

__all__ = ["Tensor", "unflatten_tensor_data"]

_INT_TYPES = frozenset({
    DataType.DT_INT8, DataType.DT_INT16, DataType.DT_INT32, DataType.DT_INT64,
    DataType.DT_UINT8, DataType.DT_UINT16, DataType.DT_UINT32, DataType.DT_UINT64,
})


def unflatten_tensor_data(flat: Sequence[Any], shape: Sequence[int]) -> Any:
    """Nest the row-major values ``flat`` into lists of ``shape``; ``[]`` gives the single value ``flat[0]``.

    Raises:
        ValueError: ``len(flat)`` does not equal the product of ``shape``.
    """
    shape = list(shape)
    if not shape:
        if len(flat) != 1:
            raise ValueError(f"Scalar tensor should contain exactly one element, got {len(flat)}")
        return flat[0]
    if math.prod(shape) != len(flat):
        raise ValueError(f"{len(flat)} values do not fill shape {shape}")

    def nest(offset: int, dims: list[int]) -> list[Any]:
        if len(dims) == 1:
            return list(flat[offset:offset + dims[0]])
        step = math.prod(dims[1:])
        return [nest(offset + i * step, dims[1:]) for i in range(dims[0])]

    return nest(0, shape)


def _render(value: Any, dtype: DataType) -> Any:
    """One element as GE's text rendering gives it back: ints stay int, floats go through C++'s default stream
    precision (6 significant digits), bools stay bool."""
    if dtype == DataType.DT_BOOL:
        return bool(value)
    if dtype in _INT_TYPES:
        return int(value)
    if dtype == DataType.DT_STRING:
        return value.decode() if isinstance(value, bytes) else str(value)
    if dtype == DataType.DT_BF16:  # stored as raw 16-bit patterns: widen to float32 bits
        value = float(np.array([int(value) << 16], dtype=np.uint32).view(np.float32)[0])
    if isinstance(value, (complex, np.complexfloating)):
        return complex(value)
    return float(format(float(value), "g"))


class Tensor:
    """A tensor value (the ``value`` attr of Const nodes, tensor-typed attrs).

    ``Tensor(data=None, file_path=None, data_type=DT_FLOAT, format=FORMAT_ND, shape=None,
    placement=PLACEMENT_HOST)``. ``data`` is a flat list; ``shape`` defaults to ``[len(data)]``. Element
    encoding: an all-``bool`` list gives a DT_BOOL tensor whatever ``data_type`` says; integer types store ints;
    DT_FLOAT stores float32; DT_FLOAT16 stores half floats. Without data or file the tensor is empty.

    Raises:
        RuntimeError: both ``data`` and ``file_path`` are given, ``data_type`` cannot hold list data
            (DT_DOUBLE and others), the file cannot be read, or the value count does not fill ``shape``.
        TypeError: ``data`` is not a list (or has elements of the wrong kind), ``shape`` is not a list of ints,
            ``data_type``/``format``/``placement`` are not the enums.
    """

    __slots__ = ("_value", "_empty_shape", "_placement", "_moved")

    def __init__(self, data: list[Any] | None = None, file_path: str | None = None,
                 data_type: DataType = DataType.DT_FLOAT, format: Format = Format.FORMAT_ND,
                 shape: list[int] | None = None, placement: Placement = Placement.PLACEMENT_HOST) -> None:
        # GE's checks, in GE's order: shape, placement, data or file; then gebench's own (GE leaves a bad
        # data_type or format to its native layer)
        dims = None if shape is None else check_dims(shape, "Shape must be a list of integers")
        if not isinstance(placement, Placement):
            raise TypeError("Placement must be a Placement" + _got(placement))
        if data is not None and file_path is not None:
            raise RuntimeError("Tensor should be created either by data or by file, not both")
        if not isinstance(data_type, DataType):
            raise TypeError("Tensor data_type must be a DataType" + _got(data_type))
        if not isinstance(format, Format):
            raise TypeError("Tensor format must be a Format" + _got(format))
        self._placement = placement
        self._moved = False
        self._empty_shape: tuple[int, ...] | None = None
        if data is not None:
            self._value = _from_list(data, data_type, format, dims)
        elif file_path is not None:
            self._value = _from_file(file_path, data_type, format, dims)
        else:
            np_type = _numpy_type(data_type) or np.float32
            self._value = ir.TensorValue(data_type, np.zeros((0,), dtype=np_type), format)
            self._empty_shape = tuple(dims or ())

    @classmethod
    def _wrap(cls, value: ir.TensorValue) -> Tensor:
        """A facade over ``value`` itself (no copy)."""
        obj = cls.__new__(cls)
        obj._value = value
        obj._empty_shape = None
        obj._placement = Placement.PLACEMENT_HOST
        obj._moved = False
        return obj

    def _take(self, what: str) -> ir.TensorValue:
        """Move this tensor's value into a graph (ES attr ownership transfer).

        Raises:
            RuntimeError: the tensor was already moved into a graph.
        """
        if self._moved:
            raise RuntimeError(f"{what}: this Tensor was already passed to a graph builder and is owned by it; "
                               "create a new Tensor for each use")
        self._moved = True
        return self._value

    # -- properties
    @property
    def format(self) -> Format:
        return self._value.format

    @property
    def data_type(self) -> DataType:
        return self._value.dtype

    @property
    def shape(self) -> Shape:
        if self._empty_shape is not None:
            return Shape(list(self._empty_shape))
        return Shape(list(self._value.shape))

    @property
    def placement(self) -> Placement:
        return self._placement

    @property
    def data(self) -> Any:
        """The values: one number for a scalar shape ``[]``, otherwise nested lists following the shape (``[]``
        for an empty tensor). Integers come back as ``int``, floats rounded to 6 significant digits as GE's text
        rendering does."""
        if self._empty_shape is not None:
            return []
        dtype = self._value.dtype
        flat = [_render(v, dtype) for v in self._value.array.ravel().tolist()]
        return unflatten_tensor_data(flat, self._value.shape)

    # -- methods
    def get_format(self) -> Format:
        return self.format

    def set_format(self, format: Format) -> Tensor:
        if not isinstance(format, Format):
            raise TypeError("Format must be a Format" + _got(format))
        self._value = self._value.with_format(format)
        return self

    def get_data_type(self) -> DataType:
        return self.data_type

    def set_data_type(self, data_type: DataType) -> Tensor:
        """Change the element type; existing values are converted to it.

        Raises:
            TypeError: ``data_type`` is not a DataType.
            RuntimeError: gebench cannot hold values of that type.
        """
        if not isinstance(data_type, DataType):
            raise TypeError("Data_type must be a DataType" + _got(data_type))
        np_type = _numpy_type(data_type)
        if np_type is None:
            raise RuntimeError(f"Failed to set datatype {data_type}: gebench's Tensor cannot hold {data_type.name} "
                               "values")
        self._value = ir.TensorValue(data_type, self._value.array.astype(np_type), self._value.format,
                                     self._value.origin_format)
        return self

    def get_shape(self) -> Shape:
        return self.shape

    def get_data(self) -> Any:
        return self.data

    def get_placement(self) -> Placement:
        return self._placement

    def get_tensor_desc(self) -> TensorDesc:
        dims = list(self.shape)
        desc = TensorDesc(dims, self.format, self.data_type)
        desc.set_origin_shape(dims).set_origin_format(self.format)
        return desc

    def to_host(self) -> Tensor:
        """A host copy of a device tensor. Raises ValueError if the tensor is already on the host."""
        if self._placement != Placement.PLACEMENT_DEVICE:
            raise ValueError("to_host() only supports device tensors; this one is on the host")
        return self._moved_copy(Placement.PLACEMENT_HOST)

    def to_device(self) -> Tensor:
        """A device copy of a host tensor. Raises ValueError if the tensor is already on the device."""
        if self._placement != Placement.PLACEMENT_HOST:
            raise ValueError("to_device() only supports host tensors; this one is on the device")
        return self._moved_copy(Placement.PLACEMENT_DEVICE)

    def _moved_copy(self, placement: Placement) -> Tensor:
        clone = Tensor._wrap(self._value.copy())
        clone._empty_shape = self._empty_shape
        clone._placement = placement
        return clone

    def __copy__(self) -> NoReturn:
        raise RuntimeError("Tensor does not support copy; build a new Tensor instead")

    def __deepcopy__(self, memo: dict[int, Any]) -> NoReturn:
        raise RuntimeError("Tensor does not support deepcopy; build a new Tensor instead")

    def __repr__(self) -> str:
        return f"Tensor(data_type={self.data_type.name}, format={self.format.name}, shape={list(self.shape)})"


def _numpy_type(dtype: DataType) -> np.dtype | None:
    try:
        return ir.numpy_dtype(dtype)
    except ValueError:
        return None


def _fit_shape(count: int, dims: list[int] | None) -> tuple[int, ...]:
    if dims is None:
        return (count,)
    if math.prod(dims) != count:
        raise RuntimeError(f"Tensor: {count} values do not fill shape {dims}; give prod(shape) values")
    return tuple(dims)


def _from_list(data: Any, dtype: DataType, fmt: Format, dims: list[int] | None) -> ir.TensorValue:
    if not isinstance(data, list):
        raise TypeError("data should be List" + _got(data))
    shape = _fit_shape(len(data), dims)
    if data and all(isinstance(v, bool) for v in data):
        return ir.TensorValue(DataType.DT_BOOL, np.array(data, dtype=np.bool_).reshape(shape), fmt)
    if dtype in _INT_TYPES:
        if not all(isinstance(v, int) for v in data):
            raise TypeError(f"Tensor data for {dtype.name} must be a flat list of int")
        np_type = ir.numpy_dtype(dtype)
        info = np.iinfo(np_type)
        bad = [v for v in data if not info.min <= v <= info.max]
        if bad:
            raise ValueError(f"Tensor data value {bad[0]} is out of range for {dtype.name}")
        return ir.TensorValue(dtype, np.array(data, dtype=np_type).reshape(shape), fmt)
    if dtype in (DataType.DT_FLOAT, DataType.DT_FLOAT16):
        if not all(isinstance(v, (int, float)) for v in data):
            raise TypeError(f"Tensor data for {dtype.name} must be a flat list of float")
        np_type = np.float32 if dtype == DataType.DT_FLOAT else np.float16
        return ir.TensorValue(dtype, np.array(data, dtype=np_type).reshape(shape), fmt)
    if dtype == DataType.DT_DOUBLE:
        raise RuntimeError("DT_DOUBLE is not supported in python Tensor constructor; use DT_FLOAT")
    raise RuntimeError(f"Tensor cannot be built from list data of type {dtype.name}; "
                       "use DT_FLOAT, DT_FLOAT16, an integer type, or bool values")


def _from_file(path: Any, dtype: DataType, fmt: Format, dims: list[int] | None) -> ir.TensorValue:
    if not isinstance(path, str):
        raise TypeError(f"Tensor file_path must be a str, got {type(path).__name__}")
    np_type = _numpy_type(dtype)
    if np_type is None or np_type == np.object_:
        raise RuntimeError(f"Tensor cannot read {dtype.name} data from a file")
    try:
        raw = np.fromfile(path, dtype=np.dtype(np_type).newbyteorder("<"))
    except OSError as exc:
        raise RuntimeError(f"Tensor cannot read {path!r}: {exc}") from exc
    return ir.TensorValue(dtype, raw.astype(np_type).reshape(_fit_shape(raw.size, dims)), fmt)
