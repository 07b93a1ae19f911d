"""Conversion of Python numbers and nested lists into Const tensors for ES op functions (spec §2.2.4)."""

from __future__ import annotations

from typing import Any, Union

from .graph_builder import GraphBuilder
from .tensor_holder import TensorHolder

__all__ = ["TensorLike", "Number", "convert_to_tensor_holder", "resolve_builder"]

#: A Python number accepted where a tensor is expected.
Number = Union[int, float]
#: What ES op functions of multi-input ops accept for a tensor: a number or a nested list of numbers.
TensorLike = Union[int, float, list]


def _infer(value: Any, top: bool) -> tuple[list[Any], list[int]]:
    """Flatten a nested list of numbers; returns (row-major values, shape)."""
    if isinstance(value, list):
        if not value:
            if top:
                return [], [0]
            raise TypeError("Value must be int|float or nested lists of int|float (an empty sub-list has no "
                            "shape)")
        parts = [_infer(v, False) for v in value]
        shapes = {tuple(shape) for _, shape in parts}
        if len(shapes) > 1:
            raise ValueError(f"Irregular nested list: all sub-lists must have the same shape (sub-shapes "
                             f"{sorted(shapes)})")
        return [x for flat, _ in parts for x in flat], [len(value), *parts[0][1]]
    if isinstance(value, (int, float)):
        return [value], []
    raise TypeError(f"Value must be int|float or nested lists of int|float (got the element {value!r} of type "
                    f"{type(value).__name__})")


def convert_to_tensor_holder(value: Any, owner_builder: GraphBuilder | None) -> TensorHolder | None:
    """``value`` as a TensorHolder of ``owner_builder``.

    ``None`` and TensorHolders are returned unchanged; an ``int`` (``bool`` included) becomes a DT_INT64 scalar
    Const, a ``float`` a DT_FLOAT scalar Const; a nested list becomes a Const of the inferred shape (DT_FLOAT if
    any element is a float, else DT_INT64; ``[]`` has shape ``[0]``).

    Raises:
        TypeError: ``value`` is of another type, or a nested list has a non-number element or an empty sub-list.
        ValueError: a nested list is ragged, or a Const is needed but ``owner_builder`` is not a GraphBuilder.
    """
    if value is None or isinstance(value, TensorHolder):
        return value
    if not isinstance(value, (int, float, list)):
        raise TypeError(f"Value must be TensorHolder or int|float or nested lists of int|float or None (got "
                        f"{value!r} of type {type(value).__name__})")
    if not isinstance(owner_builder, GraphBuilder):
        raise ValueError(f"Please ensure at least one input tensor or an explicit owner_builder is provided when "
                         f"supported (no GraphBuilder to make a Const of {value!r})")
    if isinstance(value, int):
        return owner_builder.create_scalar_int64(value)
    if isinstance(value, float):
        return owner_builder.create_scalar_float(value)
    flat, shape = _infer(value, True)
    if any(isinstance(v, float) for v in flat):
        return owner_builder.create_const_float([float(v) for v in flat], shape)
    return owner_builder.create_const_int64([int(v) for v in flat], shape)


def _scan(values: Any) -> GraphBuilder | None:
    for value in values:
        if isinstance(value, GraphBuilder):
            return value
        if isinstance(value, TensorHolder):
            return value.get_owner_builder()
        if isinstance(value, (list, tuple)):
            found = _scan(value)
            if found is not None:
                return found
    return None


def resolve_builder(*values: Any) -> GraphBuilder:
    """The builder of the first GraphBuilder or TensorHolder among ``values`` (lists are searched too).

    Raises:
        ValueError: none of ``values`` is (or contains) a GraphBuilder or TensorHolder.
    """
    if not values:
        raise ValueError("At least one argument is required to resolve GraphBuilder")
    found = _scan(values)
    if found is None:
        raise ValueError("Please ensure at least one input tensor or an explicit owner_builder is provided when "
                         "supported (no argument is a TensorHolder or a GraphBuilder)")
    return found
