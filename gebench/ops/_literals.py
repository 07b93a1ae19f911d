"""Conversion of GE prototype default literals (``"false"``, ``"{1, 1, 1, 1}"``, ``"1e-4f"``, ``"DT_INT32"``)
into Python values, and of Python values into the JSON the catalogue data file stores.

The literals are written exactly as they appear in ``REG_OP`` attribute declarations. Each attr type has its own
reader; an unreadable literal raises :class:`LiteralError` naming the literal and the type.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from gebench.ir import DataType, TensorValue

__all__ = ["ATTR_TYPES", "LiteralError", "parse_literal", "to_json_value", "from_json_value", "empty_tensor"]

#: Attribute types a prototype may declare (GE's ``AttrValueType`` names as written in REG_OP).
ATTR_TYPES = frozenset({
    "Int", "Float", "String", "Bool", "Type", "Tensor", "NamedAttrs", "Bytes",
    "ListInt", "ListFloat", "ListBool", "ListType", "ListString", "ListListInt", "ListTensor", "ListNamedAttrs",
})


class LiteralError(ValueError):
    """A default literal cannot be read as a value of its declared attribute type."""


def _int(text: str) -> int:
    text = text.strip()
    if text.startswith("DT_"):
        try:
            return int(DataType[text])
        except KeyError:
            raise LiteralError(f"unknown data type literal {text!r}") from None
    # C++ integer literals: decimal, hex (0x..), with optional L/LL/U suffixes.
    m = re.fullmatch(r"([+-]?)(0[xX][0-9a-fA-F]+|\d+)[uUlL]*", text)
    if not m:
        raise LiteralError(f"{text!r} is not an integer literal")
    return int(m.group(1) + m.group(2), 0)


def _float(text: str) -> float:
    text = text.strip()
    if text.endswith(("f", "F")) and not text.lower().endswith(("inf",)):
        text = text[:-1]
    try:
        return float(text)
    except ValueError:
        raise LiteralError(f"{text!r} is not a floating-point literal") from None


def _bool(text: str) -> bool:
    text = text.strip()
    if text in ("true", "True", "1"):
        return True
    if text in ("false", "False", "0"):
        return False
    raise LiteralError(f"{text!r} is not a boolean literal")


def _string(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return bytes(text[1:-1], "utf-8").decode("unicode_escape")
    raise LiteralError(f"{text!r} is not a quoted string literal")


def _dtype(text: str) -> DataType:
    text = text.strip()
    if text.startswith("ge::"):
        text = text[4:]
    try:
        return DataType[text]
    except KeyError:
        pass
    try:
        return DataType(_int(text))
    except (LiteralError, ValueError):
        raise LiteralError(f"{text!r} is not a data type literal (expected a name like DT_FLOAT)") from None


def _split_braces(text: str) -> list[str]:
    """Split ``{a, {b, c}, d}`` into its top-level items."""
    text = text.strip()
    if not (text.startswith("{") and text.endswith("}")):
        raise LiteralError(f"{text!r} is not a braced list literal")
    body = text[1:-1].strip()
    if not body:
        return []
    items, depth, start, in_str = [], 0, 0, False
    for i, ch in enumerate(body):
        if ch == '"' and (i == 0 or body[i - 1] != "\\"):
            in_str = not in_str
        elif in_str:
            continue
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(body[start:i])
            start = i + 1
    items.append(body[start:])
    return [s.strip() for s in items]


_SCALAR_READERS = {"Int": _int, "Float": _float, "Bool": _bool, "String": _string, "Type": _dtype}


def empty_tensor() -> TensorValue:
    """A fresh empty tensor: the value of GE's ``Tensor()`` default (DT_FLOAT, no elements)."""
    return TensorValue(DataType.DT_FLOAT, np.zeros((0,), dtype=np.float32))


def parse_literal(attr_type: str, text: str) -> Any:
    """Read a REG_OP default literal as a Python value of ``attr_type``.

    ``Type`` literals become :class:`~gebench.ir.DataType` members; ``Int`` literals written as ``DT_*`` become
    the C++ enum number; ``Tensor()`` becomes an empty :class:`~gebench.ir.TensorValue`. O(len(text)).

    Raises:
        LiteralError: the literal does not fit the type, or the type has no literal reader.
    """
    if attr_type in _SCALAR_READERS:
        return _SCALAR_READERS[attr_type](text)
    if attr_type == "Tensor":
        if text.strip() in ("Tensor()", "ge::Tensor()", ""):
            return empty_tensor()
        raise LiteralError(f"tensor default {text!r} is not supported (only Tensor())")
    if attr_type == "ListListInt":
        return [[_int(v) for v in _split_braces(row)] for row in _split_braces(text)]
    if attr_type.startswith("List") and attr_type[4:] in _SCALAR_READERS:
        reader = _SCALAR_READERS[attr_type[4:]]
        return [reader(v) for v in _split_braces(text)]
    raise LiteralError(f"attr type {attr_type!r} has no default literal reader")


def to_json_value(attr_type: str, value: Any) -> Any:
    """The JSON form of a converted default: DataTypes by name, an empty tensor as ``{"tensor": []}``."""
    if attr_type == "Type":
        return DataType(value).name
    if attr_type == "ListType":
        return [DataType(v).name for v in value]
    if attr_type == "Tensor":
        return {"tensor": value.array.ravel().tolist(), "dtype": value.dtype.name, "shape": list(value.shape)}
    return value


def from_json_value(attr_type: str, value: Any) -> Any:
    """Inverse of :func:`to_json_value`; returns a fresh object each call.

    Raises:
        LiteralError: a data type name or a tensor entry is malformed.
    """
    if value is None:
        return None
    if attr_type == "Type":
        return _dtype(value) if isinstance(value, str) else DataType(value)
    if attr_type == "ListType":
        return [_dtype(v) if isinstance(v, str) else DataType(v) for v in value]
    if attr_type == "Tensor":
        if not isinstance(value, dict) or "tensor" not in value:
            raise LiteralError(f"tensor default {value!r} must be an object with 'tensor', 'dtype', 'shape'")
        dtype = _dtype(value.get("dtype", "DT_FLOAT"))
        return TensorValue.from_list(value["tensor"], dtype, value.get("shape"))
    if isinstance(value, list):
        return [list(v) if isinstance(v, list) else v for v in value]
    return value
