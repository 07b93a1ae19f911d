"""Pausing Python's cyclic garbage collector around bulk graph work."""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

__all__ = ["collector_paused", "full_collections_deferred", "promote_young"]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the collector's automatic passes for the ``with`` block and restore its previous state after it
    (also when the block raises); nested uses are fine.

    For work that allocates many objects and frees few or none (importing, parsing, copying or rewriting a
    graph): each automatic pass would rescan the growing graph and find no garbage cycles, which costs about a
    fifth to a half of such work.

    When the outermost pause ends, what the block made is moved to the oldest generation without being
    scanned (:func:`promote_young`): the block built long-lived structure (a graph, its copy, a journal's
    graph), and scanning it in the young generations would find nothing to free. O(1) instead of a pass over
    every object the block made. Garbage cycles the block left, if any, are freed by the next full collection.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            promote_young()
            gc.enable()


def promote_young() -> None:
    """Move every object of the two young generations into the oldest one without scanning them (CPython's
    ``gc.freeze()`` then ``gc.unfreeze()``: two list splices), so that structure just built for the long run
    is not scanned again and again by young collections on its way there. O(1).

    When objects are already frozen (an application called ``gc.freeze()`` before forking, say), unfreezing
    would release them too: the young generation is collected instead, as CPython would do.
    """
    if gc.get_freeze_count():
        gc.collect(0)
        return
    gc.freeze()
    gc.unfreeze()


_deferred_depth = 0
_deferred_lock = threading.Lock()
_saved_threshold: list[tuple[int, int, int]] = []

#: While full passes are deferred, the third collector threshold: more young-generation passes than any run makes.
_NO_FULL_PASS = 1 << 30


class _MiddlePromoter:
    """A collector callback that, every ``every`` young passes, moves what survived them (the middle
    generation) to the oldest one without scanning it (:func:`promote_young`), right after a young pass, when
    the youngest generation is empty."""

    def __init__(self, every: int) -> None:
        self.every = max(1, every)
        self.young_passes = 0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase != "stop" or info.get("generation") != 0:
            return
        self.young_passes += 1
        if self.young_passes >= self.every:
            self.young_passes = 0
            if not gc.get_freeze_count():  # (never collect from inside a collector callback)
                promote_young()


_promoter: list[_MiddlePromoter] = []


@contextlib.contextmanager
def full_collections_deferred() -> Iterator[None]:
    """Keep the collector from scanning long-lived objects again while the block runs, and restore its
    thresholds afterwards (also when the block raises); nested uses are fine.

    For work on a large graph that lives before and after it (a compile), which keeps most of what it makes
    (records, new nodes, journal copies):

    * CPython starts a full pass whenever the objects that survived young passes since the last full one reach
      a quarter of all long-lived objects, so such a run pays passes over the whole heap again and again, which
      makes long runs on large graphs superlinear. Full passes wait until the block ends (the third threshold is
      raised); objects that survive the young passes wait for the first full pass after the block, which CPython
      starts by its usual rule.
    * Each object that survives a youngest-generation pass is scanned once more by a middle-generation pass
      before it reaches the oldest generation; for a run that keeps what it makes, that second scan is about a
      seventh of its time and finds nothing. Middle passes are not started (the second threshold is raised);
      instead, as often as they would have run, what survived the young passes since is moved to the oldest
      generation unscanned (:func:`promote_young`, right after a young pass). Garbage cycles that die young are
      still freed by the young passes; an object that outlived one and became part of a garbage cycle later is
      freed by the first full pass after the block. When an application has frozen objects
      (``gc.freeze()``), the middle passes run as usual.

    A caller that changes the thresholds inside the block has them replaced by the ones in force when the
    outermost block began. O(1).
    """
    global _deferred_depth
    with _deferred_lock:
        if _deferred_depth == 0:
            t0, t1, t2 = gc.get_threshold()
            _saved_threshold.append((t0, t1, t2))
            if gc.get_freeze_count():
                gc.set_threshold(t0, t1, _NO_FULL_PASS)
            else:
                gc.set_threshold(t0, _NO_FULL_PASS, _NO_FULL_PASS)
                promoter = _MiddlePromoter(t1)
                _promoter.append(promoter)
                gc.callbacks.append(promoter)
        _deferred_depth += 1
    try:
        yield
    finally:
        with _deferred_lock:
            _deferred_depth -= 1
            if _deferred_depth == 0:
                gc.set_threshold(*_saved_threshold.pop())
                while _promoter:
                    promoter = _promoter.pop()
                    if promoter in gc.callbacks:
                        gc.callbacks.remove(promoter)
