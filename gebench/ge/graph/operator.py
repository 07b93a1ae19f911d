"""``Operator``: the op object GE hands to ONNX parser-plugin callbacks (spec §2.3.7). Pass files do not use it."""

from __future__ import annotations

from typing import Any, NoReturn

from ._attr import _AttrValue
from .node import _check_int, _got

__all__ = ["Operator", "create_operator"]


def _validate_name(name: Any, kind: str) -> str:
    """``name`` if it is a non-empty str; else GE's ``TypeError`` (``kind``: input, output, attribute ...)."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"Operator {kind} name must be a non-empty string" + _got(name))
    return name


def _port_count(count: Any) -> int:
    """``count`` if it is an int in uint32 range; else GE's ``TypeError`` / ``ValueError``."""
    _check_int(count, "Operator dynamic port count must be an integer")
    if not 0 <= count <= 0xFFFFFFFF:
        raise ValueError(f"Operator dynamic port count must be in uint32 range (got {count})")
    return count


class Operator:
    """An op under construction in a parser callback: a name, a type, attrs and declared anchors.

    gebench's importers do not call Python plugins, so an ``Operator`` only records what is set on it. As in GE it
    is not constructed directly: :func:`create_operator` makes one.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("Operator objects should not be created directly. Use create_operator(name, type).")

    @classmethod
    def _create(cls, name: str, op_type: str) -> Operator:
        obj = cls.__new__(cls)
        obj._name = _validate_name(name, "operator")
        obj._type = _validate_name(op_type, "type")
        obj.attrs = {}
        obj.inputs = []
        obj.outputs = []
        return obj

    @property
    def name(self) -> str:
        return self._name

    @property
    def type(self) -> str:
        return self._type

    def set_attr(self, key: str, value: Any) -> Operator:
        """Set attr ``key`` by the graph attr marshalling rules. Raises TypeError / ValueError."""
        self.attrs[_validate_name(key, "attribute")] = _AttrValue.to_ir(value, f"attr {key!r} of operator "
                                                                              f"{self._name!r}")
        return self

    def register_input(self, name: str) -> Operator:
        self.inputs.append((_validate_name(name, "input"), "required"))
        return self

    def register_optional_input(self, name: str) -> Operator:
        self.inputs.append((_validate_name(name, "input"), "optional"))
        return self

    def register_output(self, name: str) -> Operator:
        self.outputs.append(_validate_name(name, "output"))
        return self

    def register_dynamic_input(self, name: str, count: int) -> Operator:
        """Declare ``count`` instances ``<name>0..`` of a dynamic input."""
        _validate_name(name, "input")
        self.inputs.extend((f"{name}{i}", "dynamic") for i in range(_port_count(count)))
        return self

    def register_dynamic_output(self, name: str, count: int) -> Operator:
        """Declare ``count`` instances ``<name>0..`` of a dynamic output."""
        _validate_name(name, "output")
        self.outputs.extend(f"{name}{i}" for i in range(_port_count(count)))
        return self

    def __copy__(self) -> NoReturn:
        raise RuntimeError("Operator does not support copy")

    def __deepcopy__(self, memo: dict[int, Any]) -> NoReturn:
        raise RuntimeError("Operator does not support deepcopy")

    def __repr__(self) -> str:
        return f"Operator(name={self._name!r}, type={self._type!r})"


def create_operator(name: str, op_type: str) -> Operator:
    """A new :class:`Operator`."""
    return Operator._create(name, op_type)
