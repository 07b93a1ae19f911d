"""The uses of one output port: the ``(consumer id, input port)`` keys of its data edges, in edge order.

A port with few uses (the usual case) keeps them in a list: removing one is O(uses) but a short list is a
third of the memory of a dict. Once a port has more than :data:`LIST_MAX` uses they move to a dict whose keys
are the uses (values ``None``), so removing one stays O(1) whatever the fan-out (a constant shared by
thousands of consumers). Both kinds iterate in edge order and answer ``in`` and ``len``; code that only reads
a port's uses need not know which it has. No port holds the same key twice (an input has one producer).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable

__all__ = ["LIST_MAX", "Uses", "add_use", "copy_uses", "drop_use", "uses_of"]

#: The most uses a port keeps in a list.
LIST_MAX = 16

Uses = list[tuple[int, int]] | dict[tuple[int, int], None]

#: A copy of a port's uses, of the same kind. O(uses).
copy_uses = operator.methodcaller("copy")


def add_use(row: list[Uses], port: int, key: tuple[int, int]) -> None:
    """Append ``key`` to the uses of output ``port`` of a node's ``row``. O(1) amortised (O(:data:`LIST_MAX`)
    once, when the port's list becomes a dict)."""
    uses = row[port]
    if type(uses) is dict:
        uses[key] = None
    elif len(uses) < LIST_MAX:
        uses.append(key)
    else:
        grown = dict.fromkeys(uses)
        grown[key] = None
        row[port] = grown


def drop_use(uses: Uses, key: tuple[int, int]) -> None:
    """Remove ``key`` from a port's uses. O(1) for a dict, O(:data:`LIST_MAX`) at most for a list.

    Raises:
        KeyError: the port has no such use.
    """
    if type(uses) is dict:
        del uses[key]
    else:
        try:
            uses.remove(key)
        except ValueError:
            raise KeyError(key) from None


def uses_of(keys: Iterable[tuple[int, int]]) -> Uses:
    """A port's uses holding ``keys`` (distinct, in edge order), of the kind their count calls for. O(keys)."""
    keys = list(keys)
    return keys if len(keys) <= LIST_MAX else dict.fromkeys(keys)
