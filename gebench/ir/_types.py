"""GE's data types and formats, numbered exactly as GE's public C++/Python API numbers them.

The values match ``ge.graph.types`` (spec §2.3.6); the dump layer maps them to the separate
``ge_ir.proto`` numbering itself.
"""

from __future__ import annotations

import enum

import numpy as np

__all__ = ["DataType", "Format", "numpy_dtype", "data_type_from_numpy", "PLACEHOLDER_DTYPE", "PLACEHOLDER_FORMAT"]


class DataType(enum.IntEnum):
    """GE tensor element types (C++/Python numbering)."""

    DT_FLOAT = 0
    DT_FLOAT16 = 1
    DT_INT8 = 2
    DT_INT32 = 3
    DT_UINT8 = 4
    DT_INT16 = 6
    DT_UINT16 = 7
    DT_UINT32 = 8
    DT_INT64 = 9
    DT_UINT64 = 10
    DT_DOUBLE = 11
    DT_BOOL = 12
    DT_STRING = 13
    DT_DUAL_SUB_INT8 = 14
    DT_DUAL_SUB_UINT8 = 15
    DT_COMPLEX64 = 16
    DT_COMPLEX128 = 17
    DT_QINT8 = 18
    DT_QINT16 = 19
    DT_QINT32 = 20
    DT_QUINT8 = 21
    DT_QUINT16 = 22
    DT_RESOURCE = 23
    DT_STRING_REF = 24
    DT_DUAL = 25
    DT_VARIANT = 26
    DT_BF16 = 27
    DT_UNDEFINED = 28
    DT_INT4 = 29
    DT_UINT1 = 30
    DT_INT2 = 31
    DT_UINT2 = 32
    DT_COMPLEX32 = 33
    DT_HIFLOAT8 = 34
    DT_FLOAT8_E5M2 = 35
    DT_FLOAT8_E4M3FN = 36
    DT_FLOAT8_E8M0 = 37
    DT_FLOAT6_E3M2 = 38
    DT_FLOAT6_E2M3 = 39
    DT_FLOAT4_E2M1 = 40
    DT_FLOAT4_E1M2 = 41
    DT_HIFLOAT4 = 42
    DT_MAX = 43


_FORMAT_NAMES = (
    "NCHW NHWC ND NC1HWC0 FRACTAL_Z NC1C0HWPAD NHWC1C0 FSR_NCHW FRACTAL_DECONV C1HWNC0 FRACTAL_DECONV_TRANSPOSE "
    "FRACTAL_DECONV_SP_STRIDE_TRANS NC1HWC0_C04 FRACTAL_Z_C04 CHWN FRACTAL_DECONV_SP_STRIDE8_TRANS HWCN "
    "NC1KHKWHWC0 BN_WEIGHT FILTER_HWCK HASHTABLE_LOOKUP_LOOKUPS HASHTABLE_LOOKUP_KEYS HASHTABLE_LOOKUP_VALUE "
    "HASHTABLE_LOOKUP_OUTPUT HASHTABLE_LOOKUP_HITS C1HWNCoC0 MD NDHWC FRACTAL_ZZ FRACTAL_NZ NCDHW DHWCN NDC1HWC0 "
    "FRACTAL_Z_3D CN NC DHWNC FRACTAL_Z_3D_TRANSPOSE FRACTAL_ZN_LSTM FRACTAL_Z_G RESERVED ALL NULL ND_RNN_BIAS "
    "FRACTAL_ZN_RNN NYUV NYUV_A NCL FRACTAL_Z_WINO C1HWC0 FRACTAL_NZ_C0_16 FRACTAL_NZ_C0_32 END MAX"
).split()

Format = enum.IntEnum("Format", [("FORMAT_" + n, i) for i, n in enumerate(_FORMAT_NAMES)], module=__name__)
Format.__doc__ = "GE tensor layouts (``FORMAT_*``), numbered as in GE's public API."

#: The desc GE gives an optional input anchor that nothing feeds.
PLACEHOLDER_DTYPE = DataType.DT_UNDEFINED
PLACEHOLDER_FORMAT = Format.FORMAT_RESERVED

_NUMPY = {
    DataType.DT_FLOAT: np.float32,
    DataType.DT_FLOAT16: np.float16,
    DataType.DT_DOUBLE: np.float64,
    DataType.DT_INT8: np.int8,
    DataType.DT_INT16: np.int16,
    DataType.DT_INT32: np.int32,
    DataType.DT_INT64: np.int64,
    DataType.DT_UINT8: np.uint8,
    DataType.DT_UINT16: np.uint16,
    DataType.DT_UINT32: np.uint32,
    DataType.DT_UINT64: np.uint64,
    DataType.DT_BOOL: np.bool_,
    DataType.DT_COMPLEX64: np.complex64,
    DataType.DT_COMPLEX128: np.complex128,
    DataType.DT_STRING: np.object_,
    # bfloat16 has no numpy type: values are kept as their raw 16-bit patterns.
    DataType.DT_BF16: np.uint16,
}
_FROM_NUMPY = {np.dtype(v): k for k, v in _NUMPY.items() if k not in (DataType.DT_BF16,)}


def numpy_dtype(dtype: DataType) -> np.dtype:
    """Return the numpy dtype that holds values of ``dtype``.

    Raises:
        ValueError: ``dtype`` has no numpy representation (for example DT_HIFLOAT8).
    """
    try:
        return np.dtype(_NUMPY[DataType(dtype)])
    except KeyError:
        raise ValueError(f"{DataType(dtype).name} has no numpy representation in gebench") from None


def data_type_from_numpy(dtype: np.dtype | type) -> DataType:
    """Map a numpy dtype to its GE DataType.

    Raises:
        ValueError: the numpy dtype has no GE equivalent.
    """
    try:
        return _FROM_NUMPY[np.dtype(dtype)]
    except KeyError:
        raise ValueError(f"numpy dtype {np.dtype(dtype)} has no GE DataType") from None
