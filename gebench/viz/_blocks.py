"""Repeated blocks in a graph whose names carry no structure: the layers of a transformer exported with names such as
``MatMul_812``, found from the sequence of op types alone.

A stack of identical layers, read in graph (topological) order, repeats one run of op types: the layer. This module
finds that run and where each repetition begins, so the workbench can show ``block 7 of 48`` boxes instead of
anonymous chunks. It is pure (arrays in, paths out) and knows nothing of the IR.

How (every step O(m) numpy work over the ``m`` non-Const nodes, plus Python per candidate marker):

1. **A marker**: an op type that occurs once per layer at a fixed distance from the previous occurrence (Softmax in
   attention layers, a LayerNorm, a Conv). Candidates are the op types occurring at least :data:`MIN_BLOCKS` times;
   the distance between consecutive occurrences (the period) must be the same for at least
   :data:`REGULAR_SHARE` of them and at least :data:`MIN_PERIOD` nodes long.
2. **A repetition**: the op types of each period-long window starting at an occurrence must equal the first
   window's (again for :data:`REGULAR_SHARE` of them); the candidate covering most nodes wins.
3. **Where blocks begin**: a layer boundary is where the fewest values are live across the graph order (the
   residual stream: one tensor, whatever number of consumers it has) rather than inside a layer; of the
   ``period`` possible offsets before the markers, the one whose cuts have the fewest live values in total is
   taken; of equally quiet ones (a layer of two residual blocks has two such cuts), the one leaving the fewest
   nodes before the first block.

Nodes before the first block and after the last one get paths of their own (``before the blocks``, ``after the
blocks``); a graph without such a repetition gets None, and the caller falls back to topological chunks.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat

import numpy as np

__all__ = ["MIN_BLOCKS", "MIN_PERIOD", "REGULAR_SHARE", "BlockSplit", "find_blocks"]

#: fewest repetitions that make blocks
MIN_BLOCKS = 3
#: fewest nodes per block
MIN_PERIOD = 3
#: share of the marker's gaps (and windows) that must agree with the period (and the first window)
REGULAR_SHARE = 0.8
#: most candidate marker types examined (the rarest first: one per layer is what a marker is)
MAX_CANDIDATES = 24


class BlockSplit:
    """The repeated blocks found in a sequence of ``m`` op types.

    Attributes:
        period: nodes per block.
        starts: graph-order positions (0..m-1 among the non-Const nodes) where each block begins, ascending.
        block_of: per position, the block index (0-based), ``-1`` before the first block and ``count`` after the
            last one.
        marker: the op type that revealed the period.
    """

    __slots__ = ("period", "starts", "block_of", "marker")

    def __init__(self, period: int, starts: np.ndarray, block_of: np.ndarray, marker: str) -> None:
        self.period = period
        self.starts = starts
        self.block_of = block_of
        self.marker = marker

    @property
    def count(self) -> int:
        return len(self.starts)

    def paths(self) -> list[tuple[str, ...]]:
        """Per position, its group path: ``("block 7 of 48",)``, ``("before the blocks",)`` or
        ``("after the blocks",)``. Equal paths are one tuple object. O(m)."""
        count = self.count
        width = len(str(count))
        table = [("before the blocks",)]
        table.extend((f"block {k + 1:>{width}} of {count}",) for k in range(count))
        table.append(("after the blocks",))
        return list(map(table.__getitem__, (self.block_of + 1).tolist()))

    def __repr__(self) -> str:
        return f"<BlockSplit {self.count} blocks of {self.period} nodes, marker {self.marker}>"


def find_blocks(op_types: Sequence[str], src: np.ndarray, dst: np.ndarray) -> BlockSplit | None:
    """The repeated blocks of a graph (see the module docstring), or None when it has none.

    Args:
        op_types: the op type of each non-Const node, in graph order.
        src, dst: the data edges between those nodes, as positions in ``op_types`` (``src < dst``); edges from
            or to other nodes left out.

    Cost: O(m + e) numpy work per candidate marker (at most :data:`MAX_CANDIDATES`), O(period) Python for the
    offset.
    """
    m = len(op_types)
    if m < MIN_BLOCKS * MIN_PERIOD:
        return None
    index: dict[str, int] = {}
    codes = np.fromiter(map(index.setdefault, op_types, map(len, repeat(index))), dtype=np.int64, count=m)
    kinds = list(index)
    counts = np.bincount(codes, minlength=len(kinds))
    order = np.argsort(counts, kind="stable")
    candidates = [int(k) for k in order if MIN_BLOCKS <= counts[k] <= m // MIN_PERIOD][:MAX_CANDIDATES]
    best: tuple[int, int, np.ndarray, int] | None = None  # (covered nodes, period, occurrences, kind)
    for kind in candidates:
        at = np.flatnonzero(codes == kind)
        gaps = np.diff(at)
        values, freq = np.unique(gaps, return_counts=True)
        period = int(values[np.argmax(freq)])
        if period < MIN_PERIOD or freq.max() < REGULAR_SHARE * len(gaps):
            continue
        # a run of occurrences a period apart, then the windows that repeat the first one's op types
        starts = at[at + period <= m]
        if len(starts) < MIN_BLOCKS:
            continue
        windows = codes[starts[:, None] + np.arange(period)]
        same = (windows == windows[0]).all(axis=1)
        if same.sum() < REGULAR_SHARE * len(starts) or same.sum() < MIN_BLOCKS:
            continue
        starts = starts[same]
        covered = len(starts) * period
        if best is None or covered > best[0]:
            best = (covered, period, starts, kind)
    if best is None:
        return None
    _, period, marks, kind = best
    offset = _quietest_offset(marks, period, m, src, dst)
    starts = marks - offset
    starts = starts[starts >= 0]
    # blocks may not overlap: keep starts at least a period apart (the marker's irregular occurrences drop out)
    kept = [int(starts[0])]
    for s in starts[1:].tolist():
        if s - kept[-1] >= period:
            kept.append(s)
    # the marker may sit too close to either end for its window (a last layer's Softmax): whole repetitions
    # of the first block right before the first start or after the last one are blocks too
    reference = codes[kept[0]:kept[0] + period]
    while kept[0] - period >= 0 and np.array_equal(codes[kept[0] - period:kept[0]], reference):
        kept.insert(0, kept[0] - period)
    while kept[-1] + 2 * period <= m and np.array_equal(codes[kept[-1] + period:kept[-1] + 2 * period], reference):
        kept.append(kept[-1] + period)
    if len(kept) < MIN_BLOCKS:
        return None
    start_arr = np.asarray(kept, dtype=np.int64)
    block_of = np.searchsorted(start_arr, np.arange(m), side="right") - 1  # -1 before the first block
    end = start_arr[-1] + period
    block_of[end:] = len(kept)  # after the last block
    return BlockSplit(period, start_arr, block_of, str(kinds[kind]))


def _quietest_offset(marks: np.ndarray, period: int, m: int, src: np.ndarray, dst: np.ndarray) -> int:
    """The offset ``o`` in ``[0, period)`` for which the cuts just before positions ``marks - o`` have the fewest
    live values in total (the output of ``u`` is live over the cut before ``x`` when ``u < x <=`` its last
    consumer); ties go to the offset whose first block begins earliest."""
    crossing = np.zeros(m + 1, dtype=np.int64)
    if len(src):
        last_use = np.full(m, -1, dtype=np.int64)
        np.maximum.at(last_use, np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64))
        live = np.flatnonzero(last_use >= 0)
        np.add.at(crossing, live + 1, 1)
        np.add.at(crossing, last_use[live] + 1, -1)
    crossing = np.cumsum(crossing)[:m]  # crossing[x]: values live over the cut just before x
    best_offset, best_score = 0, None
    for offset in range(period):
        cuts = marks - offset
        cuts = cuts[cuts >= 1]
        if len(cuts) < MIN_BLOCKS:
            break
        # per mark (the first cuts drop out as the offset grows), then the fewest nodes before the first block
        score = (int(crossing[cuts].sum()) * len(marks) / len(cuts), int(cuts[0]))
        if best_score is None or score < best_score:
            best_offset, best_score = offset, score
    return best_offset
