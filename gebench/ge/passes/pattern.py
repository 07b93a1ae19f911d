"""``@pattern``, :class:`PatternInputs`, :class:`NodeIo` and :func:`create_pattern` (spec §2.1.5, §2.1.8, §2.1.11)."""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["NodeIo", "PatternInputs", "create_pattern", "ensure_pattern", "pattern"]

#: Marker attribute that ``@pattern`` sets on a method.
PATTERN_MARKER = "__ge_pattern_method__"


@dataclasses.dataclass(frozen=True, eq=False)
class NodeIo:
    """A node output: ``node`` (a ``ge.graph.Node``) and its output ``index``.

    Equality compares ``node`` by identity (``Node`` has no ``__eq__``) and ``index`` by value.
    """

    node: Any
    index: int = 0

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NodeIo):
            return NotImplemented
        return self.node is other.node and self.index == other.index

    def __hash__(self) -> int:
        return hash((id(self.node), self.index))


def pattern(method: Any) -> Any:
    """Mark ``method`` as a pattern definition ``(self, inputs)``; returns it unchanged."""
    setattr(method, PATTERN_MARKER, True)
    return method


class PatternInputs:
    """Lazy pattern/replacement inputs: ``inputs[i]`` creates graph inputs ``0..i`` on first use.

    Raises (on indexing): ``TypeError`` for a non-int index or iteration; ``ValueError`` for a negative
    index or a bad slice (step other than 1, missing stop, negative bounds, stop < start).
    """

    def __init__(self, builder: Any) -> None:
        self._builder = builder
        self._created: list[Any] = []

    def _ensure(self, index: int) -> None:
        created = self._created
        if index < len(created):
            return
        builder = self._builder
        create = getattr(builder, "_create_default_input", None) or builder.create_input
        while len(created) <= index:
            created.append(create(len(created)))

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            if key.step not in (None, 1):
                raise ValueError(f"PatternInputs slice step must be 1 (got inputs[{key.start}:{key.stop}:{key.step}])")
            if key.stop is None:
                raise ValueError("PatternInputs slice must provide a stop index, for example inputs[:3] (the input "
                                 "count is unknown)")
            start = 0 if key.start is None else key.start
            stop = key.stop
            for v in (start, stop):
                if isinstance(v, bool) or not isinstance(v, int):
                    raise TypeError(f"PatternInputs index must be an integer or slice (got inputs[{key.start}:"
                                    f"{key.stop}])")
            if start < 0 or stop < 0:
                raise ValueError(f"PatternInputs slice indices must be non-negative (got inputs[{start}:{stop}])")
            if stop < start:
                raise ValueError(f"PatternInputs slice stop must be greater than or equal to start (got "
                                 f"inputs[{start}:{stop}])")
            if stop > start:
                self._ensure(stop - 1)
            return self._created[start:stop]
        if isinstance(key, bool) or not isinstance(key, int):
            raise TypeError(f"PatternInputs index must be an integer or slice (got {key!r} of type "
                            f"{type(key).__name__})")
        if key < 0:
            raise ValueError(f"PatternInputs index must be non-negative (got inputs[{key}])")
        self._ensure(key)
        return self._created[key]

    def __iter__(self) -> Any:
        raise TypeError("PatternInputs cannot be iterated because the input count is unknown; use inputs[:N]")

    def count(self) -> int:
        """How many inputs were created so far."""
        return len(self._created)

    def created(self) -> list[Any]:
        """The inputs created so far, by index."""
        return list(self._created)


def create_pattern(graph: Any) -> Any:
    """Same as ``Pattern(graph)``: consumes ``graph``."""
    from ._native import Pattern

    return Pattern(graph)


def ensure_pattern(value: Any) -> Any:
    """``value`` if it is a ``Pattern``; a ``Graph`` is wrapped with :func:`create_pattern`.

    Raises:
        TypeError: any other type.
    """
    from gebench.ge.graph import Graph

    from ._native import Pattern

    if isinstance(value, Pattern):
        return value
    if isinstance(value, Graph):
        return create_pattern(value)
    raise TypeError(f"PatternFusionPass.patterns must return Pattern or Graph objects (got "
                    f"{type(value).__name__})")


def __getattr__(name: str) -> Any:
    if name == "Pattern":
        from ._native import Pattern

        globals()["Pattern"] = Pattern
        return Pattern
    raise AttributeError(f"module {'ge.passes.pattern'!r} has no attribute {name!r}")  # GE's module name
