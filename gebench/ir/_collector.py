"""Pausing Python's cyclic garbage collector around bulk graph work."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["collector_paused"]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the collector's automatic passes for the ``with`` block and restore its previous state after it
    (also when the block raises); nested uses are fine.

    For work that allocates many objects and frees few or none (importing, parsing, copying or rewriting a
    graph): each automatic pass would rescan the growing graph and find no garbage cycles, which costs about a
    fifth to a half of such work. Garbage cycles made inside the block (graphs make none; code a pass runs might)
    are left to the first automatic pass after it. O(1).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
