"""Repeated blocks found from op types alone (``gebench.viz._blocks``), on sequences whose layers are known."""

from __future__ import annotations

import random

import numpy as np

from gebench.viz._blocks import find_blocks

#: one layer of a pre-norm transformer-like block: (op type, inputs as offsets into the layer; -1 is the layer's
#: input, the residual stream)
LAYER = [("LayerNorm", [-1]), ("MatMul", [0]), ("Add", [1]), ("Softmax", [2]), ("MatMul", [3]), ("Add", [4, -1]),
         ("LayerNorm", [5]), ("MatMul", [6]), ("Relu", [7]), ("MatMul", [8]), ("Add", [9, 5])]


def _stack(layers: int, prefix: list[str], suffix: list[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """``prefix`` ops in a chain, ``layers`` copies of :data:`LAYER`, then ``suffix`` ops in a chain."""
    ops: list[str] = []
    src: list[int] = []
    dst: list[int] = []
    for op in prefix:
        if ops:
            src.append(len(ops) - 1)
            dst.append(len(ops))
        ops.append(op)
    stream = len(ops) - 1
    for _ in range(layers):
        base = len(ops)
        for op, inputs in LAYER:
            for k in inputs:
                src.append(stream if k < 0 else base + k)
                dst.append(len(ops))
            ops.append(op)
        stream = len(ops) - 1
    for op in suffix:
        src.append(len(ops) - 1)
        dst.append(len(ops))
        ops.append(op)
    return ops, np.asarray(src), np.asarray(dst)


def test_blocks_begin_where_the_layers_begin():
    ops, src, dst = _stack(12, ["Data", "Gather"], ["LayerNorm", "MatMul", "NetOutput"])
    split = find_blocks(ops, src, dst)
    assert split is not None
    assert split.period == len(LAYER) and split.count == 12
    assert split.starts.tolist() == [2 + k * len(LAYER) for k in range(12)]
    paths = split.paths()
    assert paths[:2] == [("before the blocks",)] * 2
    assert paths[2] == ("block  1 of 12",) and paths[2 + len(LAYER)] == ("block  2 of 12",)
    assert paths[-3:] == [("after the blocks",)] * 3
    assert {p for p in paths if p[0].startswith("block")} == {(f"block {k:>2} of 12",) for k in range(1, 13)}


def test_the_last_layer_counts_although_its_marker_sits_near_the_end():
    ops, src, dst = _stack(5, ["Data"], [])  # the last Softmax's window runs past the end of the sequence
    split = find_blocks(ops, src, dst)
    assert split is not None and split.count == 5
    assert split.paths()[-1] == ("block 5 of 5",)


def test_no_repetition_gives_none():
    rng = random.Random(7)
    ops = [rng.choice(["MatMul", "Add", "Relu", "Softmax", "Mul", "Conv2D", "Transpose"]) for _ in range(400)]
    src = np.arange(399)
    assert find_blocks(ops, src, src + 1) is None
    assert find_blocks(["Data", "Relu", "NetOutput"], np.array([0, 1]), np.array([1, 2])) is None
    assert find_blocks([], np.array([], dtype=int), np.array([], dtype=int)) is None


def test_a_block_that_differs_is_left_out_of_the_count_but_the_others_stay():
    ops, src, dst = _stack(10, ["Data"], ["NetOutput"])
    ops[1 + 4 * len(LAYER) + 8] = "Gelu"  # layer 5's activation differs
    split = find_blocks(ops, src, dst)
    assert split is not None
    assert 9 <= split.count <= 10  # the odd layer is either a block of its own or left between blocks
    first = split.starts.tolist()[0]
    assert (first - 1) % len(LAYER) == 0  # still aligned with the layers
