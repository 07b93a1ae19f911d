"""``Operator``: the op object GE hands to ONNX parser-plugin callbacks (spec §2.3.7). Pass files do not use it."""

from __future__ import annotations

from typing import Any

from ._attr import _AttrValue
from .node import _check_int, _check_str

__all__ = ["Operator", "create_operator"]


class Operator:
    """An op under construction in a parser callback: a name, a type, attrs and declared anchors.

    gebench's importers do not call Python plugins, so an ``Operator`` only records what is set on it.
    """

    def __init__(self, name: str, op_type: str) -> None:
        self._name = _check_str(name, "operator name")
        self._type = _check_str(op_type, "operator type")
        self.attrs: dict[str, Any] = {}
        self.inputs: list[tuple[str, str]] = []
        self.outputs: list[str] = []

    @property
    def name(self) -> str:
        return self._name

    @property
    def type(self) -> str:
        return self._type

    def set_attr(self, key: str, value: Any) -> Operator:
        """Set attr ``key`` by the graph attr marshalling rules. Raises TypeError / ValueError."""
        self.attrs[_check_str(key, "attr name")] = _AttrValue.to_ir(value, f"attr {key!r} of operator {self._name!r}")
        return self

    def register_input(self, name: str) -> Operator:
        self.inputs.append((_check_str(name, "input name"), "required"))
        return self

    def register_optional_input(self, name: str) -> Operator:
        self.inputs.append((_check_str(name, "input name"), "optional"))
        return self

    def register_output(self, name: str) -> Operator:
        self.outputs.append(_check_str(name, "output name"))
        return self

    def register_dynamic_input(self, name: str, count: int) -> Operator:
        """Declare ``count`` instances ``<name>0..`` of a dynamic input."""
        _check_str(name, "input name")
        self.inputs.extend((f"{name}{i}", "dynamic") for i in range(_check_int(count, "count")))
        return self

    def register_dynamic_output(self, name: str, count: int) -> Operator:
        """Declare ``count`` instances ``<name>0..`` of a dynamic output."""
        _check_str(name, "output name")
        self.outputs.extend(f"{name}{i}" for i in range(_check_int(count, "count")))
        return self

    def __repr__(self) -> str:
        return f"Operator(name={self._name!r}, type={self._type!r})"


def create_operator(name: str, op_type: str) -> Operator:
    """A new :class:`Operator`."""
    return Operator(name, op_type)
