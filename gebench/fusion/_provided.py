"""A slot for an implementation the core calls but a layer above it provides (dependency inversion).

The core (``fusion/``) never imports the facade (``ge/``), the executor (``exec/``) or the debugging tools
(``debug/``). Where it needs them it declares a :class:`typing.Protocol` and a :class:`Provided` slot; the
package's composition root (:mod:`gebench._wiring`, run by ``import gebench``) fills the slot with a factory
that imports the upper layer only when the core first asks for it, so ``import gebench`` stays cheap.

Invariants: a slot holds at most one factory; the factory runs at most once per :meth:`Provided.provide`
(its result is kept), under a lock, so concurrent first calls get the same object.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["NotProvidedError", "Provided"]

T = TypeVar("T")


class NotProvidedError(RuntimeError):
    """The core asked a slot that no layer above has filled (``gebench`` itself was not imported)."""


class Provided(Generic[T]):
    """One implementation of a core protocol, made on first use by the factory an upper layer gave.

    Args:
        name: what the slot holds, for error messages (e.g. ``"pass API"``).
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._factory: Callable[[], T] | None = None
        self._value: T | None = None
        self._lock = threading.Lock()

    def provide(self, factory: Callable[[], T]) -> None:
        """Fill the slot with ``factory`` (called on the first :meth:`get`); replaces an earlier one. O(1)."""
        with self._lock:
            self._factory = factory
            self._value = None

    def get(self) -> T:
        """The implementation, made by the factory on the first call. O(1) after that.

        Raises:
            NotProvidedError: no factory was provided.
        """
        value = self._value
        if value is not None:
            return value
        with self._lock:
            if self._value is None:
                if self._factory is None:
                    raise NotProvidedError(f"gebench's core needs the {self.name}, but nothing provides it; it is "
                                           "installed by `import gebench` (gebench._wiring)")
                self._value = self._factory()
            return self._value

    @property
    def is_provided(self) -> bool:
        return self._factory is not None
