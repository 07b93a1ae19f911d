"""Attribute value marshalling between the ``ge.graph`` API and IR attr values (spec §2.3.8)."""

from __future__ import annotations

from typing import Any

import numpy as np

from gebench import ir

from .tensor import Tensor
from .types import DataType

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
        kind = "an empty list" if isinstance(value, list) and not value else f"{type(value).__name__} {value!r}"
        raise ValueError(f"{what}: cannot store {kind} as an attribute value; use str, float, bool, int, DataType, "
                         "Tensor, or a non-empty list of float, bool, int or str")

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
            kind = "list of lists" if any(isinstance(v, (list, tuple)) for v in value) else "list"
        else:
            kind = type(value).__name__
        raise RuntimeError(f"Unsupported attribute type for {what}: GE's Python API cannot read a {kind} value")
