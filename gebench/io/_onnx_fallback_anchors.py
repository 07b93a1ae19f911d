"""Anchor names for GE op types that ONNX import produces but gebench's op catalogue does not hold.

GE registers these types in ONNX plugins (spec ge-ops.md §3.7) but their prototypes were not in the
snapshots the catalogue was built from. The names below follow GE's usual conventions (``x``/``y``
for one-in/one-out ops); a user can override any of them by declaring the op as a custom op.
"""

from __future__ import annotations

__all__ = ["fallback_anchor_names"]

#: op type -> (input names, output names); "*" marks a dynamic anchor.
_KNOWN: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "LRN": (("x",), ("y",)),
    "Dropout": (("x",), ("y",)),
    "SquareSumV1": (("x",), ("y",)),
    "HardSwish": (("x",), ("y",)),
    "Conv3DTranspose": (("input_size", "x", "filter", "bias", "offset_w"), ("y",)),
    "CommonLSTM": (("x", "w", "r", "b", "sequence_lens", "initial_h", "initial_c", "p"), ("y", "y_h", "y_c")),
    "CommonGRU": (("x", "w", "r", "b", "sequence_lens", "initial_h"), ("y", "y_h")),
    "TensorMove": (("x",), ("y",)),
}


def fallback_anchor_names(op_type: str, n_inputs: int, n_outputs: int, dynamic_inputs: dict[str, int] | None,
                          dynamic_outputs: dict[str, int] | None) -> tuple[list[str], list[str]]:
    """Input and output anchor names for ``op_type`` when the catalogue has no schema.

    Known types use the table above (padded to the requested counts); others get GE's generic names:
    ``x`` (or ``x1``, ``x2``, ...) and ``y`` (or ``y0``, ``y1``, ...).
    """
    if op_type in _KNOWN:
        ins, outs = (list(v) for v in _KNOWN[op_type])
    else:
        ins = ["x"] if n_inputs == 1 else [f"x{i + 1}" for i in range(n_inputs)]
        outs = ["y"] if n_outputs == 1 else [f"y{i}" for i in range(n_outputs)]
    for name, count in (dynamic_inputs or {}).items():
        ins = [f"{name}{i}" for i in range(count)]
    for name, count in (dynamic_outputs or {}).items():
        outs = [f"{name}{i}" for i in range(count)]
    while len(ins) < n_inputs:
        ins.append(f"x{len(ins)}")
    while len(outs) < n_outputs:
        outs.append(f"y{len(outs)}")
    return ins, outs
