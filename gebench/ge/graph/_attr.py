"""Attribute value marshalling between the ``ge.graph`` API and IR attr values (spec §2.3.8)."""

from __future__ import annotations

from typing import Any

import numpy as np

from gebench import ir

from .tensor import Tensor
from .types import AttrValueType, DataType

__all__ = ["_AttrValue", "to_float32"]


def to_float32(value: float) -> float:
    """``value`` rounded to the nearest float32, as a Python float (GE stores float attrs as float32)."""
    return float(np.float32(value))


class _AttrValue:
    """Converts attribute values in both directions, with GE's quirks.

    Setting is checked in GE's order: ``str``, ``float`` (stored as float32), ``bool``, ``DataType``, ``Tensor``,
    ``int``, then lists of all-float, all-bool, all-int (this also takes lists of ``DataType``, which are stored
    as plain ints), all-str. An empty list or any other value is a ``ValueError``.

    Getting returns ``str``/``float``/``bool``/``int``/``DataType``/``Tensor`` and lists of
    float/bool/int/str (lists of data types come back as plain ints); other kinds (list of lists, bytes, tensor
    descs, named attrs, graphs) raise ``RuntimeError``.
    """

    @staticmethod
    def to_ir(value: Any, what: str) -> Any:
        """The IR attr value for ``value``.

        Raises:
            ValueError: an empty list, a mixed list, or an unsupported type (``what`` names the attr).
        """
        if isinstance(value, str):
            return value
        if isinstance(value, float):
            return to_float32(value)
        if isinstance(value, bool):
            return value
        if isinstance(value, DataType):
            return value
        if isinstance(value, Tensor):
            return value._value.copy()
        if isinstance(value, int):
            return int(value)
        if isinstance(value, list) and value:
            if all(isinstance(v, float) for v in value):
                return [to_float32(v) for v in value]
            if all(isinstance(v, bool) for v in value):
                return list(value)
            if all(isinstance(v, int) for v in value):
                return [int(v) for v in value]
            if all(isinstance(v, str) for v in value):
                return list(value)
        raise ValueError(f"Unsupported attribute type: {type(value)} for value: {value} ({what}: use str, float, "
                         "bool, int, DataType, Tensor, or a non-empty list of float, bool, int or str)")

    @staticmethod
    def from_ir(value: Any, what: str) -> Any:
        """The Python value GE's API returns for the IR attr value ``value``.

        Raises:
            RuntimeError: the attr kind has no Python reader in GE (``what`` names the attr).
        """
        if isinstance(value, str):
            return value
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        if isinstance(value, DataType):
            return value
        if isinstance(value, (int, np.integer)):
            return int(value)
        if isinstance(value, (float, np.floating)):
            return float(value)
        if isinstance(value, ir.TensorValue):
            return Tensor._wrap(value.copy())
        if isinstance(value, (list, tuple)):
            if all(isinstance(v, DataType) for v in value):
                return [int(v) for v in value]
            if all(isinstance(v, (str, bool, int, float, np.bool_, np.integer, np.floating)) for v in value):
                return [_AttrValue.from_ir(v, what) for v in value]
        raise RuntimeError(f"Unsupported attribute type: {_value_type(value)} ({what}: GE's Python API cannot read "
                           "this kind of value)")


def _value_type(value: Any) -> AttrValueType:
    """GE's ``AttrValueType`` of an IR attr value (``VT_NONE`` when it has none)."""
    if isinstance(value, (list, tuple)):
        items = [v for v in value if not isinstance(v, (list, tuple))]
        if value and not items:  # a list of lists
            flat = [x for v in value for x in v]
            return AttrValueType.VT_LIST_LIST_FLOAT if any(isinstance(x, float) for x in flat) \
                else AttrValueType.VT_LIST_LIST_INT
        inner = _value_type(items[0]) if items else AttrValueType.VT_NONE
        return AttrValueType(inner + AttrValueType.VT_LIST_BASE) if inner else AttrValueType.VT_NONE
    if isinstance(value, (bytes, bytearray)):
        return AttrValueType.VT_BYTES
    if isinstance(value, ir.TensorDesc):
        return AttrValueType.VT_TENSOR_DESC
    if isinstance(value, ir.TensorValue):
        return AttrValueType.VT_TENSOR
    if isinstance(value, ir.Graph):
        return AttrValueType.VT_GRAPH
    if isinstance(value, dict):
        return AttrValueType.VT_NAMED_ATTRS
    return AttrValueType.VT_NONE
