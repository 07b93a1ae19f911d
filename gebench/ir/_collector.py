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
    fifth to a half of such work.

    The pause defers work, it does not remove it: the youngest generation then holds everything the block made.
    When the outermost pause ends, that generation is collected at once (one pass over the objects the block
    made and kept, which also finds any garbage cycles code in the block left, for example a pass's), so the
    cost lands on the work that caused it rather than on whatever allocates next.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
            gc.collect(0)
