"""Pass registries: :class:`PassRegistry` (GE's duplicate rules) and the registry decorators write into.

A registry is an ordered, thread-safe set of :class:`~gebench.fusion.plugins.descriptor.PassDescriptor`.
Loaders execute pass files while a registry is *targeted* (:func:`registering_into`), so several pass sets
(and hot reloads) live in one process without tripping GE's duplicate-name rule across unrelated runs.
Outside such a block, registration goes to a process-global registry, GE's (:func:`global_registry`; the
facade ``ge.passes`` reads and may substitute it).
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterable, Iterator, Mapping

from .descriptor import PassDescriptor

__all__ = ["PassRegistry", "global_registry", "registering_into", "targeted_registry"]


class PassRegistry:
    """An ordered set of :class:`PassDescriptor` with GE's duplicate rules. Thread-safe.

    Args:
        reserved_names: pass names already taken elsewhere (checked like names in this registry); used by
            pass sets to reload one file while the other files' passes stay registered. A mapping gives, per
            name, where it is taken (a file), for the duplicate-name message.

    Invariant: descriptor keys and pass names are each unique within the registry and against the reserved
    names.
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
            ValueError: its descriptor key or pass name is already registered (GE's message first).
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
        """The descriptor registered under descriptor key ``key``, or None."""
        with self._lock:
            return self._by_key.get(key)

    def by_name(self, pass_name: str) -> PassDescriptor | None:
        """The descriptor registered under ``pass_name``, or None."""
        with self._lock:
            key = self._names.get(pass_name)
            return None if key is None else self._by_key[key]

    def remove(self, descriptor_key: str) -> None:
        """Forget ``descriptor_key`` (no error if unknown)."""
        with self._lock:
            desc = self._by_key.pop(descriptor_key, None)
            if desc is not None:
                self._names.pop(desc.pass_name, None)

    def clear(self) -> None:
        """Forget every descriptor (reserved names stay)."""
        with self._lock:
            self._by_key.clear()
            self._names.clear()

    def __len__(self) -> int:
        return len(self._by_key)


_GLOBAL_REGISTRY = PassRegistry()
_target: contextvars.ContextVar[PassRegistry | None] = contextvars.ContextVar("ge_passes_active_registry",
                                                                               default=None)


def global_registry() -> PassRegistry:
    """The process-global registry (GE's): where registration goes outside :func:`registering_into`."""
    return _GLOBAL_REGISTRY


def targeted_registry() -> PassRegistry | None:
    """The registry set by the innermost active :func:`registering_into` in this context, or None."""
    return _target.get()


@contextlib.contextmanager
def registering_into(registry: PassRegistry) -> Iterator[PassRegistry]:
    """Make registration go into ``registry`` while the block runs (e.g. while a pass file executes).

    Context-local (a ``contextvars`` variable): other threads and tasks keep their own target.
    """
    token = _target.set(registry)
    try:
        yield registry
    finally:
        _target.reset(token)
