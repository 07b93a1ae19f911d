"""Tensor descriptions and constant tensor values of the IR."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._types import PLACEHOLDER_DTYPE, PLACEHOLDER_FORMAT, DataType, Format, numpy_dtype

__all__ = ["TensorDesc", "TensorValue", "UNKNOWN_DIM", "UNKNOWN_RANK", "copy_attrs", "trusted_desc"]

#: A dimension whose size is not known yet.
UNKNOWN_DIM = -1
#: The single dimension of a shape whose rank is not known (``[-2]``).
UNKNOWN_RANK = -2


class TensorDesc:
    """What GE knows about one tensor at a node anchor.

    Invariants: ``shape`` is a tuple of ints (``()`` is a scalar, ``(-2,)`` unknown rank);
    ``origin_shape`` likewise. ``attrs`` holds per-anchor attributes (``set_input_attr``).
    Slotted: graphs hold several descs per node, so they are kept small and quick to copy. Few anchors have
    attributes, so a desc keeps no dict until ``attrs`` is first read or set (:attr:`has_attrs` tells whether
    there are any without making one). Two descs are equal when every field is, an absent dict counting as
    empty.
    """

    __slots__ = ("dtype", "shape", "format", "origin_format", "origin_shape", "origin_dtype", "_attrs")

    dtype: DataType
    shape: tuple[int, ...]
    format: Format
    origin_format: Format
    origin_shape: tuple[int, ...]
    origin_dtype: DataType | None
    _attrs: dict[str, Any] | None

    def __init__(self, dtype: DataType = DataType.DT_FLOAT, shape: Sequence[int] = (),
                 format: Format = Format.FORMAT_ND, origin_format: Format = Format.FORMAT_ND,  # noqa: A002
                 origin_shape: Sequence[int] = (), origin_dtype: DataType | None = None,
                 attrs: dict[str, Any] | None = None) -> None:
        # normalise only what is not normalised already: descs are created on hot paths (import, rewrite)
        self.dtype = dtype if type(dtype) is DataType else DataType(dtype)
        self.format = format if type(format) is Format else Format(format)
        self.origin_format = origin_format if type(origin_format) is Format else Format(origin_format)
        self.shape = shape if type(shape) is tuple and all(type(d) is int for d in shape) else \
            tuple(int(d) for d in shape)
        self.origin_shape = origin_shape if type(origin_shape) is tuple and all(
            type(d) is int for d in origin_shape) else tuple(int(d) for d in origin_shape)
        self.origin_dtype = origin_dtype
        self._attrs = attrs

    @property
    def attrs(self) -> dict[str, Any]:
        """The anchor's attributes (a dict owned by this desc; made empty on first use)."""
        attrs = self._attrs
        if attrs is None:
            attrs = self._attrs = {}
        return attrs

    @attrs.setter
    def attrs(self, value: dict[str, Any]) -> None:
        self._attrs = value

    @property
    def has_attrs(self) -> bool:
        """True when the anchor has at least one attribute. O(1); makes no dict."""
        return bool(self._attrs)

    def attr_items(self) -> Any:
        """The anchor's ``(name, value)`` attribute pairs, for reading. O(1); makes no dict."""
        attrs = self._attrs
        return attrs.items() if attrs else ()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.dtype == other.dtype and self.shape == other.shape  # type: ignore[attr-defined]
                and self.format == other.format and self.origin_format == other.origin_format  # type: ignore[attr-defined]
                and self.origin_shape == other.origin_shape  # type: ignore[attr-defined]
                and self.origin_dtype == other.origin_dtype  # type: ignore[attr-defined]
                and (self._attrs or {}) == (other._attrs or {}))  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return (f"TensorDesc(dtype={self.dtype!r}, shape={self.shape!r}, format={self.format!r}, "
                f"origin_format={self.origin_format!r}, origin_shape={self.origin_shape!r}, "
                f"origin_dtype={self.origin_dtype!r}, attrs={self._attrs or {}!r})")

    @classmethod
    def placeholder(cls) -> TensorDesc:
        """The desc of an optional input anchor that nothing feeds (DT_UNDEFINED, FORMAT_RESERVED)."""
        return cls(dtype=PLACEHOLDER_DTYPE, format=PLACEHOLDER_FORMAT, origin_format=PLACEHOLDER_FORMAT)

    @classmethod
    def of(cls, dtype: DataType, shape: Sequence[int], fmt: Format = Format.FORMAT_ND) -> TensorDesc:
        """A desc whose origin shape and format equal its shape and format."""
        shape = tuple(shape)
        return cls(dtype=dtype, shape=shape, format=fmt, origin_format=fmt, origin_shape=shape)

    @property
    def is_placeholder(self) -> bool:
        """True for the desc of an unfed optional input."""
        return self.dtype == PLACEHOLDER_DTYPE and self.format == PLACEHOLDER_FORMAT

    @property
    def is_unknown_shape(self) -> bool:
        return any(d in (UNKNOWN_DIM, UNKNOWN_RANK) for d in self.shape)

    def copy(self) -> TensorDesc:
        """A deep copy (attrs included). O(attrs): fields are already normalised, so no re-validation."""
        clone = _new_object(TensorDesc)
        clone.dtype = self.dtype
        clone.shape = self.shape
        clone.format = self.format
        clone.origin_format = self.origin_format
        clone.origin_shape = self.origin_shape
        clone.origin_dtype = self.origin_dtype
        attrs = self._attrs
        clone._attrs = copy_attrs(attrs) if attrs else None
        return clone

    def _without_attrs(self) -> TensorDesc:
        """A copy of every field but ``attrs`` (which is empty in the copy). O(1)."""
        clone = _new_object(TensorDesc)
        clone.dtype = self.dtype
        clone.shape = self.shape
        clone.format = self.format
        clone.origin_format = self.origin_format
        clone.origin_shape = self.origin_shape
        clone.origin_dtype = self.origin_dtype
        clone._attrs = None
        return clone


_new_object = object.__new__
_set_field = object.__setattr__


def trusted_desc(dtype: DataType, shape: tuple[int, ...], fmt: Format, origin_format: Format,
                    origin_shape: tuple[int, ...], origin_dtype: DataType | None = None) -> TensorDesc:
    """A TensorDesc from fields that are already normalised (enum members, tuples of int), without the checks
    and conversions of the constructor. For hot paths (graph building, rewriting) whose callers guarantee the
    field types; anything else should call ``TensorDesc(...)``. O(1)."""
    desc = _new_object(TensorDesc)
    desc.dtype = dtype
    desc.shape = shape
    desc.format = fmt
    desc.origin_format = origin_format
    desc.origin_shape = origin_shape
    desc.origin_dtype = origin_dtype
    desc._attrs = None
    return desc


_DT_FLOAT = DataType.DT_FLOAT
_FORMAT_ND = Format.FORMAT_ND


def _default_desc() -> TensorDesc:
    """``TensorDesc()`` without the field normalisation (the defaults are normalised). Made for every anchor of
    every new node, so the fields are set here directly."""
    desc = _new_object(TensorDesc)
    desc.dtype = _DT_FLOAT
    desc.shape = ()
    desc.format = _FORMAT_ND
    desc.origin_format = _FORMAT_ND
    desc.origin_shape = ()
    desc.origin_dtype = None
    desc._attrs = None
    return desc


def _placeholder_desc() -> TensorDesc:
    """``TensorDesc.placeholder()`` without the field normalisation."""
    return trusted_desc(PLACEHOLDER_DTYPE, (), PLACEHOLDER_FORMAT, PLACEHOLDER_FORMAT, ())


@dataclasses.dataclass(eq=False, frozen=True)
class TensorValue:
    """A constant tensor: the ``value`` attr of Const nodes and tensor-typed attributes.

    A TensorValue is immutable: its array is read-only (replace the attr to change a value), so graph
    copies and snapshots share TensorValues instead of copying weights. ``array`` holds the values in the numpy type given by :func:`numpy_dtype`; its shape is ``shape``.
    DT_BF16 values are kept as raw uint16 bit patterns. Equality compares dtype, shape, format and bytes.
    """

    dtype: DataType
    array: np.ndarray
    format: Format = Format.FORMAT_ND
    origin_format: Format | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", DataType(self.dtype))
        object.__setattr__(self, "format", Format(self.format))
        want = numpy_dtype(self.dtype)
        arr = np.asarray(self.array)
        if arr.dtype != want:
            arr = arr.astype(want)
        else:
            arr = arr.view()  # a private read-only view; the caller's array keeps its own flags
        arr.flags.writeable = False
        object.__setattr__(self, "array", arr)

    @classmethod
    def from_list(cls, values: Any, dtype: DataType, shape: Sequence[int] | None = None,
                  fmt: Format = Format.FORMAT_ND) -> TensorValue:
        """Build from (nested) Python numbers; ``shape`` reshapes the flattened values.

        Raises:
            ValueError: the value count does not fit ``shape``.
        """
        arr = np.asarray(values, dtype=numpy_dtype(dtype))
        if shape is not None:
            shape = tuple(int(s) for s in shape)
            if int(np.prod(shape, dtype=np.int64)) != arr.size:
                raise ValueError(f"{arr.size} values do not fill shape {list(shape)}")
            arr = arr.reshape(shape)
        return cls(dtype, arr, fmt)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.array.shape)

    def to_bytes(self) -> bytes:
        """Raw little-endian bytes, as GE stores a tensor's data."""
        if self.array.dtype == np.object_:
            return b"".join(str(v).encode() for v in self.array.ravel())
        return np.ascontiguousarray(self.array).astype(self.array.dtype.newbyteorder("<"), copy=False).tobytes()

    def desc(self) -> TensorDesc:
        return TensorDesc.of(self.dtype, self.shape, self.format)

    def with_format(self, fmt: Format) -> TensorValue:
        """The same values with another format (values are immutable). O(1): the array is shared."""
        return dataclasses.replace(self, format=fmt)

    def copy(self) -> TensorValue:
        """Return ``self``: values are immutable, so a copy can share them. O(1)."""
        return self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TensorValue):
            return NotImplemented
        return (self.dtype == other.dtype and self.shape == other.shape and self.format == other.format
                and self.to_bytes() == other.to_bytes())

    def __repr__(self) -> str:
        return f"TensorValue({self.dtype.name}, shape={list(self.shape)}, {self.array.ravel()[:8].tolist()})"


def trusted_value(dtype: DataType, array: np.ndarray, fmt: Format = Format.FORMAT_ND,
                  origin_format: Format | None = None) -> TensorValue:
    """A TensorValue that keeps ``array`` itself, without the constructor's conversions and private view: for
    readers whose arrays are already read-only (a view of immutable bytes, say) and already of
    ``numpy_dtype(dtype)``, with ``dtype`` and ``fmt`` enum members; anything else should call
    ``TensorValue(...)``. O(1)."""
    value = _new_object(TensorValue)
    _set_field(value, "dtype", dtype)
    _set_field(value, "array", array)
    _set_field(value, "format", fmt)
    _set_field(value, "origin_format", origin_format)
    return value



def _copy_attr_value(value: Any) -> Any:
    if isinstance(value, TensorDesc):
        return value.copy()
    if isinstance(value, list):
        return [_copy_attr_value(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.copy()
    return value


#: Attr value types copied by sharing (immutable). DataType/Format members are ints and shared too.
_SHARED_TYPES = frozenset({int, float, bool, str, bytes, type(None), TensorValue, DataType, Format})


def copy_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    """A copy of an attribute dict that shares immutable values (TensorValues included) and copies the
    mutable ones (lists, TensorDescs, arrays). O(attrs)."""
    if not attrs:
        return {}
    shared = _SHARED_TYPES
    return {k: v if type(v) in shared else _copy_attr_value(v) for k, v in attrs.items()}
