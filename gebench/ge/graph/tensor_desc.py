"""``Shape`` and ``TensorDesc`` of the ``ge.graph`` facade (spec §2.3.4, §2.3.5)."""

from __future__ import annotations

from typing import Any, NoReturn

from gebench import ir

from .types import DataType, Format

__all__ = ["Shape", "TensorDesc", "UNKNOWN_DIM", "UNKNOWN_DIM_NUM", "UNKNOWN_DIM_SIZE"]

#: A dimension of unknown size.
UNKNOWN_DIM = -1
#: The single dimension of a shape of unknown rank (``[-2]``).
UNKNOWN_DIM_NUM = -2
#: What :meth:`Shape.get_shape_size` returns for an unknown shape.
UNKNOWN_DIM_SIZE = -1


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _got(value: Any) -> str:
    """gebench's detail after GE's message: what was given instead."""
    text = repr(value)
    return f" (got {text[:57] + '...' if len(text) > 60 else text} of type {type(value).__name__})"


def check_dims(dims: Any, message: str) -> list[int]:
    """Return ``dims`` as a list of ints.

    Raises:
        TypeError: ``dims`` is not a list of ints; the message starts with ``message`` (GE's text, for example
            ``"shape must be a list of integers"``).
    """
    if not isinstance(dims, list) or not all(_is_int(d) for d in dims):
        raise TypeError(message + _got(dims))
    return [int(d) for d in dims]


def _no_copy(obj: object, deep: bool = False) -> NoReturn:
    raise RuntimeError(f"{type(obj).__name__} does not support {'deepcopy' if deep else 'copy'}")


class Shape(list):
    """A tensor shape: a ``list`` of dims.

    ``Shape()`` / ``Shape(None)`` is the scalar shape ``[]``.

    Raises:
        TypeError: ``dims`` is not a list of ints.
    """

    def __init__(self, dims: list[int] | None = None) -> None:
        super().__init__([] if dims is None else check_dims(dims, "dims must be a list of integers"))

    def get_shape_size(self) -> int:
        """The element count: the product of the dims, ``-1`` if a dim is unknown (-1/-2) and, as in GE, **0** for
        the scalar shape ``[]``."""
        if not self:
            return 0
        if any(d in (UNKNOWN_DIM, UNKNOWN_DIM_NUM) for d in self):
            return UNKNOWN_DIM_SIZE
        size = 1
        for d in self:
            size *= d
        return size

    def is_unknown_shape(self) -> bool:
        """True if any dim is -1 or -2."""
        return any(d in (UNKNOWN_DIM, UNKNOWN_DIM_NUM) for d in self)


def _check_enum(value: Any, enum_type: type, message: str) -> Any:
    """``value`` if it is an ``enum_type``; else ``TypeError`` starting with ``message`` (GE's text)."""
    if not isinstance(value, enum_type):
        raise TypeError(message + _got(value))
    return value


class TensorDesc:
    """A tensor description: shape, format, data type, origin shape and origin format.

    ``TensorDesc(shape=None, format=FORMAT_ND, data_type=DT_FLOAT)``; the origin format starts as FORMAT_ND and
    the origin shape as ``[]`` until set. Setters return ``self``. Descs read from a node are value copies: write
    them back with ``node.update_input_desc`` / ``update_output_desc``.

    Raises:
        TypeError: ``shape`` is not a list of ints, or ``format``/``data_type`` are not the enums.
    """

    __slots__ = ("_desc",)

    def __init__(self, shape: list[int] | None = None, format: Format = Format.FORMAT_ND,
                 data_type: DataType = DataType.DT_FLOAT) -> None:
        dims = [] if shape is None else check_dims(shape, "shape must be a list of integers")
        _check_enum(format, Format, "Format must be a Format")
        _check_enum(data_type, DataType, "Data type must be a DataType")
        self._desc = ir.TensorDesc(dtype=data_type, shape=tuple(dims), format=format)

    @classmethod
    def _wrap(cls, desc: ir.TensorDesc) -> TensorDesc:
        """A facade over ``desc`` itself (no copy)."""
        obj = cls.__new__(cls)
        obj._desc = desc
        return obj

    # -- properties
    @property
    def shape(self) -> Shape:
        return Shape(list(self._desc.shape))

    @property
    def origin_shape(self) -> Shape:
        return Shape(list(self._desc.origin_shape))

    @property
    def format(self) -> Format:
        return self._desc.format

    @property
    def origin_format(self) -> Format:
        return self._desc.origin_format

    @property
    def data_type(self) -> DataType:
        return self._desc.dtype

    # -- getters / setters
    def get_shape(self) -> Shape:
        return self.shape

    def set_shape(self, shape: list[int]) -> TensorDesc:
        self._desc.shape = tuple(check_dims(shape, "shape must be a list of integers"))
        return self

    def get_origin_shape(self) -> Shape:
        return self.origin_shape

    def set_origin_shape(self, shape: list[int]) -> TensorDesc:
        self._desc.origin_shape = tuple(check_dims(shape, "origin_shape must be a list of integers"))
        return self

    def get_format(self) -> Format:
        return self.format

    def set_format(self, format: Format) -> TensorDesc:
        self._desc.format = _check_enum(format, Format, "Format must be a Format")
        return self

    def get_origin_format(self) -> Format:
        return self.origin_format

    def set_origin_format(self, format: Format) -> TensorDesc:
        self._desc.origin_format = _check_enum(format, Format, "Format must be a Format")
        return self

    def get_data_type(self) -> DataType:
        return self.data_type

    def set_data_type(self, data_type: DataType) -> TensorDesc:
        self._desc.dtype = _check_enum(data_type, DataType, "Data type must be a DataType")
        return self

    def __copy__(self) -> NoReturn:
        _no_copy(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> NoReturn:
        _no_copy(self, deep=True)

    def __repr__(self) -> str:
        return (f"TensorDesc(shape={list(self._desc.shape)}, format={self._desc.format.name}, "
                f"data_type={self._desc.dtype.name})")
