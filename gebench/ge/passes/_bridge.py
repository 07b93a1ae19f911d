"""The engine-facing protocol of GE's Python passes (spec §2.1.20).

GE's C++ side drives Python passes through these functions; gebench's runtime uses them too, so pass
objects see exactly the calls GE makes: holders created per stage run, patterns released, matches and
replacement graphs invalidated after each hook.
"""

from __future__ import annotations

import threading
from typing import Any

from ._native import MatchResult, PassContext, Pattern, PatternMatcherConfig
from .registry import get_registered_pass_by_descriptor_key, get_registered_pass_dicts

__all__ = [
    "call_decompose_meet_requirements",
    "call_decompose_replacement",
    "call_meet_requirements",
    "call_replacement",
    "clear_loaded_pass_modules",
    "clear_pass_holders",
    "create_pass_holder",
    "destroy_pass_holder",
    "get_pass_patterns",
    "get_pattern_matcher_config",
    "load_and_get_pass_descriptors",
    "run_fusion_base_pass",
]

_lock = threading.RLock()
_holders: dict[str, Any] = {}


def load_and_get_pass_descriptors() -> list[dict[str, Any]]:
    from .bootstrap import load_pass_plugins

    load_pass_plugins()
    return get_registered_pass_dicts()


def create_pass_holder(instance_id: str, descriptor_key: str, descriptor: Any = None) -> bool:
    """Instantiate the pass class of ``descriptor_key`` once for ``instance_id``.

    Raises:
        KeyError: unknown descriptor key.
    """
    with _lock:
        if instance_id in _holders:
            return True
        desc = descriptor if descriptor is not None else get_registered_pass_by_descriptor_key(descriptor_key)
        if desc is None:
            raise KeyError(f"python pass descriptor_key not found: {descriptor_key}")
        _holders[instance_id] = desc.cls()
        return True


def holder(instance_id: str) -> Any:
    with _lock:
        try:
            return _holders[instance_id]
        except KeyError:
            raise KeyError(f"python pass holder is not created: {instance_id}") from None


def destroy_pass_holder(instance_id: str) -> bool:
    with _lock:
        return _holders.pop(instance_id, None) is not None


def clear_pass_holders() -> None:
    with _lock:
        _holders.clear()


def run_fusion_base_pass(instance_id: str, graph: Any, context: Any = None) -> Any:
    """Call ``run(graph, context)``; the result is returned untranslated."""
    if context is not None and not isinstance(context, PassContext):
        raise TypeError(f"context type error: run_fusion_base_pass needs a PassContext, got {type(context).__name__}")
    return holder(instance_id).run(graph, context)


def patterns_of(instance: Any) -> list[Pattern]:
    """``instance.patterns()`` normalised to released ``Pattern`` objects.

    Raises:
        TypeError: ``patterns()`` returned a str/bytes, a non-iterable, or a non-Pattern/Graph item.
    """
    from .pattern import ensure_pattern

    result = instance.patterns()
    if result is None:
        return []
    if isinstance(result, (str, bytes)):
        raise TypeError(f"PatternFusionPass.patterns must return an iterable of Pattern or Graph "
                        f"({type(instance).__name__}.patterns() returned a {type(result).__name__})")
    try:
        items = list(result)
    except TypeError:
        raise TypeError(f"PatternFusionPass.patterns must return an iterable of Pattern or Graph "
                        f"({type(instance).__name__}.patterns() returned a {type(result).__name__})") from None
    from ._session import function_location

    out = []
    for item in items:
        was_pattern = isinstance(item, Pattern)
        source = getattr(item, "_gebench_source", "")
        pat = ensure_pattern(item)
        if not was_pattern:
            # made here, not by the user: point at the hook that returned the graph
            pat._source = source or function_location(getattr(type(instance), "patterns", None))
        pat.release()
        out.append(pat)
    return out


def _pattern_fusion_pass(instance_id: str) -> Any:
    """The holder of ``instance_id``; GE's ``TypeError`` unless it is a PatternFusionPass."""
    from .base import PatternFusionPass

    instance = holder(instance_id)
    if not isinstance(instance, PatternFusionPass):
        raise TypeError(f"python pass holder is not PatternFusionPass: {instance_id} (it is a "
                        f"{type(instance).__name__})")
    return instance


def _decompose_pass(instance_id: str) -> Any:
    """The holder of ``instance_id``; GE's ``TypeError`` unless it is a DecomposePass."""
    from .base import DecomposePass

    instance = holder(instance_id)
    if not isinstance(instance, DecomposePass):
        raise TypeError(f"python pass holder is not DecomposePass: {instance_id} (it is a "
                        f"{type(instance).__name__})")
    return instance


def get_pass_patterns(instance_id: str) -> list[int]:
    return [id(p) for p in patterns_of(_pattern_fusion_pass(instance_id))]


def matcher_config_of(instance: Any) -> PatternMatcherConfig | None:
    """A copy of the pass's matcher config, or None.

    Raises:
        AttributeError: the subclass ``__init__`` did not call ``super().__init__()``.
        TypeError: ``matcher_config`` is not a ``PatternMatcherConfig``.
    """
    config = instance.matcher_config
    if config is None:
        return None
    if not isinstance(config, PatternMatcherConfig):
        raise TypeError(f"PatternFusionPass.matcher_config must be PatternMatcherConfig or None "
                        f"({type(instance).__name__}.matcher_config is a {type(config).__name__})")
    return config._clone()


def get_pattern_matcher_config(instance_id: str) -> PatternMatcherConfig | None:
    return matcher_config_of(_pattern_fusion_pass(instance_id))


def _call(hook: Any, value: Any, context: Any) -> Any:
    try:
        return hook(value, context)
    finally:
        if isinstance(value, MatchResult):
            value._expire()


def call_meet_requirements(instance_id: str, match: MatchResult, context: Any) -> bool:
    return bool(_call(_pattern_fusion_pass(instance_id).meet_requirements, match, context))


def call_decompose_meet_requirements(instance_id: str, node: Any, context: Any) -> bool:
    return bool(_call(_decompose_pass(instance_id).meet_requirements, node, context))


def checked_replacement(instance: Any, value: Any, context: Any) -> Any:
    """Call ``replacement`` and insist on a ``Graph`` result.

    Raises:
        TypeError: the result is not a ``ge.graph.Graph``.
    """
    from gebench.ge.graph import Graph

    result = _call(instance.replacement, value, context)
    if not isinstance(result, Graph):
        raise TypeError(f"{type(instance).__name__}.replacement must return ge.graph.Graph (got "
                        f"{type(result).__name__})")
    return result


def call_replacement(instance_id: str, match: MatchResult, context: Any) -> Any:
    return checked_replacement(_pattern_fusion_pass(instance_id), match, context)


def call_decompose_replacement(instance_id: str, node: Any, context: Any) -> Any:
    return checked_replacement(_decompose_pass(instance_id), node, context)


def clear_loaded_pass_modules() -> None:
    from gebench.fusion.plugins.load import clear_loaded_pass_modules as _clear

    _clear()
