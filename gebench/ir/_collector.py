"""Pausing Python's cyclic garbage collector around bulk graph work."""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

__all__ = ["collector_paused", "existing_objects_frozen"]


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


_frozen_depth = 0
_frozen_lock = threading.Lock()


@contextlib.contextmanager
def existing_objects_frozen() -> Iterator[None]:
    """Keep the collector off the objects that already exist while the block runs (``gc.freeze()``), and hand
    them back to it afterwards (``gc.unfreeze()``, also when the block raises); nested uses are fine.

    For work on a large graph that lives before and after it (a compile): the collector's full passes, which
    CPython starts whenever the objects made since the last one reach a quarter of all long-lived objects, would
    otherwise rescan the whole graph (and everything else the process holds) each time, which makes long work
    on large graphs superlinear. Inside the block they scan only what the block made. Nothing is lost: garbage
    cycles among the older objects are found by the first full pass after the block.

    Does nothing when some other code has frozen objects (``gc.get_freeze_count() > 0``, for example a server
    that froze its heap before forking), so that code's frozen objects stay frozen. O(1) when nothing is frozen;
    otherwise checking costs O(frozen objects), as CPython counts them one by one (about 20 ms for a large heap).
    """
    global _frozen_depth
    with _frozen_lock:
        outermost = _frozen_depth == 0
        froze = outermost and gc.get_freeze_count() == 0
        if froze:
            gc.freeze()
        _frozen_depth += 1
    try:
        yield
    finally:
        with _frozen_lock:
            _frozen_depth -= 1
            if froze:
                gc.unfreeze()
