"""Half-precision helpers used when a float list is stored as a DT_FLOAT16 tensor."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

__all__ = ["float_to_fp16_bits", "float_list_to_fp16_bits"]


def float_to_fp16_bits(value: float) -> int:
    """The IEEE-754 binary16 bit pattern of ``value`` (round to nearest even), as an int in ``[0, 65535]``."""
    return int(np.array(value, dtype=np.float16).view(np.uint16))


def float_list_to_fp16_bits(values: Iterable[float]) -> list[int]:
    """:func:`float_to_fp16_bits` applied to every element. O(n)."""
    return [int(b) for b in np.asarray(list(values), dtype=np.float16).view(np.uint16)]
