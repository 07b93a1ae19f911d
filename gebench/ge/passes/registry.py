"""Pass registration: :class:`PassDescriptor`, the decorators and the registry functions (spec §2.1.6–§2.1.7).

The registry GE keeps is process-global and guarded by an ``RLock``; ``ge.passes.get_registered_passes()``
and friends read it. gebench's own loaders (:mod:`gebench.fusion.loader`) execute pass files while a private
:class:`PassRegistry` is *active* (:func:`registering_into`), so that several pass sets (and hot reloads) can
live in one process without tripping GE's duplicate-name rule across unrelated runs.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

__all__ = [
    "PASS_KIND_DECOMPOSE",
    "PASS_KIND_FUSION_BASE",
    "PASS_KIND_PATTERN_FUSION",
    "PassDescriptor",
    "PassRegistry",
    "clear_registered_passes",
    "get_registered_pass_by_descriptor_key",
    "get_registered_pass_dicts",
    "get_registered_passes",
    "register_decompose_pass",
    "register_fusion_pass",
    "registering_into",
]

PASS_KIND_FUSION_BASE = "fusion_base"
PASS_KIND_PATTERN_FUSION = "pattern_fusion"
PASS_KIND_DECOMPOSE = "decompose"


@dataclasses.dataclass(frozen=True)
class PassDescriptor:
    """What the engine knows about one registered pass class."""

    descriptor_key: str
    pass_name: str
    module_name: str
    class_name: str
    stage: Any
    kind: str
    cls: type
    op_types: list[str] = dataclasses.field(default_factory=list)

    def to_bridge_dict(self) -> dict[str, Any]:
        """The dict handed to the C++ side (no ``cls``). A stage that is not a ``PassStage`` raises here,
        as in GE (``.value`` is read)."""
        return {
            "descriptor_key": self.descriptor_key,
            "pass_name": self.pass_name,
            "module_name": self.module_name,
            "class_name": self.class_name,
            "stage": self.stage.value,
            "kind": self.kind,
            "op_types": list(self.op_types),
        }


class PassRegistry:
    """An ordered set of :class:`PassDescriptor` with GE's duplicate rules. Thread-safe.

    Args:
        reserved_names: pass names already taken elsewhere (checked like names in this registry); used by
            pass sets to reload one file while the other files' passes stay registered. A mapping gives, per
            name, where it is taken (a file), for the duplicate-name message.
    """

    def __init__(self, reserved_names: Iterable[str] | Mapping[str, str] = ()) -> None:
        self._lock = threading.RLock()
        self._by_key: dict[str, PassDescriptor] = {}
        self._names: dict[str, str] = {}
        self._reserved: dict[str, str] = (dict(reserved_names) if isinstance(reserved_names, Mapping)
                                          else dict.fromkeys(reserved_names, "another loaded pass file"))

    def register(self, descriptor: PassDescriptor) -> None:
        """Add ``descriptor``.

        Raises:
            ValueError: its descriptor key or pass name is already registered.
        """
        with self._lock:
            if descriptor.descriptor_key in self._by_key:
                raise ValueError(
                    f"python pass descriptor_key already exists: {descriptor.descriptor_key} (class "
                    f"{descriptor.class_name} is registered twice; register each class once)"
                )
            if descriptor.pass_name in self._names or descriptor.pass_name in self._reserved:
                other = self._names.get(descriptor.pass_name) or self._reserved[descriptor.pass_name]
                raise ValueError(
                    f"python pass name already exists: {descriptor.pass_name} (class {descriptor.class_name}; "
                    f"already registered by {other}; pass names must be unique)"
                )
            self._by_key[descriptor.descriptor_key] = descriptor
            self._names[descriptor.pass_name] = descriptor.descriptor_key

    def descriptors(self) -> list[PassDescriptor]:
        """All descriptors in registration order."""
        with self._lock:
            return list(self._by_key.values())

    def get(self, key: str) -> PassDescriptor | None:
        with self._lock:
            return self._by_key.get(key)

    def by_name(self, pass_name: str) -> PassDescriptor | None:
        with self._lock:
            key = self._names.get(pass_name)
            return None if key is None else self._by_key[key]

    def remove(self, descriptor_key: str) -> None:
        with self._lock:
            desc = self._by_key.pop(descriptor_key, None)
            if desc is not None:
                self._names.pop(desc.pass_name, None)

    def clear(self) -> None:
        with self._lock:
            self._by_key.clear()
            self._names.clear()

    def __len__(self) -> int:
        return len(self._by_key)


_GLOBAL_REGISTRY = PassRegistry()
_active: contextvars.ContextVar[PassRegistry | None] = contextvars.ContextVar("ge_passes_active_registry",
                                                                               default=None)


def active_registry() -> PassRegistry:
    """The registry decorators write into: the one set by :func:`registering_into`, else the global one."""
    reg = _active.get()
    return _GLOBAL_REGISTRY if reg is None else reg


def global_registry() -> PassRegistry:
    """The process-global registry that GE's functions read."""
    return _GLOBAL_REGISTRY


@contextlib.contextmanager
def registering_into(registry: PassRegistry) -> Iterator[PassRegistry]:
    """Make decorators register into ``registry`` while the block runs (e.g. while a pass file executes)."""
    token = _active.set(registry)
    try:
        yield registry
    finally:
        _active.reset(token)


def _make_descriptor(cls: type, name: str, stage: Any, kind: str, op_types: list[str]) -> PassDescriptor:
    return PassDescriptor(
        descriptor_key=f"{cls.__module__}:{cls.__name__}:{name}",
        pass_name=name,
        module_name=cls.__module__,
        class_name=cls.__name__,
        stage=stage,
        kind=kind,
        cls=cls,
        op_types=op_types,
    )


def register_fusion_pass(*, name: str, stage: Any, kind: str | None = None):  # noqa: ANN201
    """Class decorator registering a ``FusionBasePass`` subclass (spec §2.1.6).

    ``kind`` defaults to ``"pattern_fusion"`` for ``PatternFusionPass`` subclasses, else ``"fusion_base"``.
    Neither ``name`` nor ``stage`` is checked here (GE checks them when the engine reads the registry).

    Raises:
        TypeError: the target is not a ``FusionBasePass`` subclass.
        ValueError: the name or descriptor key is already registered.
    """
    from .base import FusionBasePass, PatternFusionPass

    def decorate(cls: Any) -> Any:
        if not isinstance(cls, type) or not issubclass(cls, FusionBasePass):
            raise TypeError(
                f"register_fusion_pass expects a FusionBasePass subclass (@register_fusion_pass(name={name!r}) "
                f"decorates {cls!r})"
            )
        resolved = kind
        if resolved is None:
            resolved = PASS_KIND_PATTERN_FUSION if issubclass(cls, PatternFusionPass) else PASS_KIND_FUSION_BASE
        desc = _make_descriptor(cls, name, stage, resolved, [])
        active_registry().register(desc)
        cls.__ge_pass_descriptor__ = desc
        return cls

    return decorate


def register_decompose_pass(*, name: str, stage: Any, op_types: Iterable[str]):  # noqa: ANN201
    """Class decorator registering a ``DecomposePass`` subclass for ``op_types`` (spec §2.1.6).

    Raises:
        TypeError: ``op_types`` is a string, not iterable, or holds a non-string / empty string; the target
            is not a ``DecomposePass`` subclass.
        ValueError: ``op_types`` is empty, or the name / key is already registered.
    """
    from .base import DecomposePass

    if isinstance(op_types, (str, bytes)):
        raise TypeError(f"register_decompose_pass op_types must be an iterable of strings (name={name!r}: a "
                        f"list of op types, not a single {type(op_types).__name__})")
    try:
        types = list(op_types)
    except TypeError:
        raise TypeError(f"register_decompose_pass op_types must be an iterable of strings (name={name!r}: got "
                        f"{type(op_types).__name__})") from None
    if not types:
        raise ValueError(f"register_decompose_pass requires at least one op type (name={name!r})")
    for t in types:
        if not isinstance(t, str) or not t:
            raise TypeError(f"register_decompose_pass op_types must contain non-empty strings (name={name!r}: got "
                            f"{t!r})")

    def decorate(cls: Any) -> Any:
        if not isinstance(cls, type) or not issubclass(cls, DecomposePass):
            raise TypeError(
                f"register_decompose_pass expects a DecomposePass subclass (@register_decompose_pass(name={name!r}) "
                f"decorates {cls!r})"
            )
        cls.op_types = list(types)
        desc = _make_descriptor(cls, name, stage, PASS_KIND_DECOMPOSE, list(types))
        active_registry().register(desc)
        cls.__ge_pass_descriptor__ = desc
        return cls

    return decorate


def get_registered_passes() -> list[PassDescriptor]:
    """Descriptors of the active registry in registration order."""
    return active_registry().descriptors()


def get_registered_pass_dicts() -> list[dict[str, Any]]:
    """``to_bridge_dict()`` of every registered descriptor."""
    return [d.to_bridge_dict() for d in active_registry().descriptors()]


def get_registered_pass_by_descriptor_key(key: str) -> PassDescriptor | None:
    return active_registry().get(key)


def clear_registered_passes() -> None:
    """Forget every registered pass (of the active registry)."""
    active_registry().clear()
