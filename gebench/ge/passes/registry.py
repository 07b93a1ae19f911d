"""Pass registration under GE's names: the decorators and the registry functions (spec §2.1.6–§2.1.7).

Descriptors and registries live in the core (:mod:`gebench.fusion.plugins.descriptor`,
:mod:`gebench.fusion.plugins.registry`, re-exported here); this module adapts GE's API onto them. The registry
GE keeps is process-global and guarded by an ``RLock``; ``ge.passes.get_registered_passes()`` and friends read
it. gebench's own loaders (:mod:`gebench.fusion.plugins.load`) execute pass files while a private
:class:`PassRegistry` is *active* (:func:`registering_into`), so that several pass sets (and hot reloads) can
live in one process without tripping GE's duplicate-name rule across unrelated runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gebench.fusion.plugins import registry as _core
from gebench.fusion.plugins.descriptor import (
    PASS_KIND_DECOMPOSE,
    PASS_KIND_FUSION_BASE,
    PASS_KIND_PATTERN_FUSION,
    PassDescriptor,
)
from gebench.fusion.plugins.registry import PassRegistry, registering_into, targeted_registry

__all__ = [
    "PASS_KIND_DECOMPOSE",
    "PASS_KIND_FUSION_BASE",
    "PASS_KIND_PATTERN_FUSION",
    "PassDescriptor",
    "PassRegistry",
    "active_registry",
    "clear_registered_passes",
    "get_registered_pass_by_descriptor_key",
    "get_registered_pass_dicts",
    "get_registered_passes",
    "global_registry",
    "register_decompose_pass",
    "register_fusion_pass",
    "registering_into",
]

_GLOBAL_REGISTRY: PassRegistry = _core.global_registry()


def active_registry() -> PassRegistry:
    """The registry decorators write into: the one set by :func:`registering_into`, else the global one."""
    reg = targeted_registry()
    return _GLOBAL_REGISTRY if reg is None else reg


def global_registry() -> PassRegistry:
    """The process-global registry that GE's functions read (the core's, unless replaced here)."""
    return _GLOBAL_REGISTRY


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
