"""GE's public enums (spec §2.3.6): ``DataType``, ``Format``, ``Placement``, ``AttrValueType``.

``DataType`` and ``Format`` are the very same enum classes as :class:`gebench.ir.DataType` and
:class:`gebench.ir.Format`, so values read from a graph compare and hash equal to the names a pass file imports.
"""

from __future__ import annotations

import enum

from gebench.ir import DataType, Format

__all__ = ["DataType", "Format", "Placement", "AttrValueType"]


class Placement(enum.IntEnum):
    """Where a tensor's data lives."""

    PLACEMENT_HOST = 0
    PLACEMENT_DEVICE = 1


_VT_BASE = {
    "VT_NONE": 0,
    "VT_STRING": 1,
    "VT_FLOAT": 2,
    "VT_BOOL": 3,
    "VT_INT": 4,
    "VT_TENSOR_DESC": 5,
    "VT_TENSOR": 6,
    "VT_BYTES": 7,
    "VT_GRAPH": 8,
    "VT_NAMED_ATTRS": 9,
    "VT_LIST_LIST_INT": 10,
    "VT_DATA_TYPE": 11,
    "VT_LIST_LIST_FLOAT": 12,
}
_VT_LISTED = ("STRING", "FLOAT", "BOOL", "INT", "TENSOR_DESC", "TENSOR", "BYTES", "GRAPH", "NAMED_ATTRS", "DATA_TYPE")

AttrValueType = enum.IntEnum(
    "AttrValueType",
    [*_VT_BASE.items(), ("VT_LIST_BASE", 1000),
     *((f"VT_LIST_{n}", 1000 + _VT_BASE[f"VT_{n}"]) for n in _VT_LISTED)],
    module=__name__,
)
AttrValueType.__doc__ = "Kinds of attribute values (``VT_LIST_x = VT_LIST_BASE + VT_x``)."
