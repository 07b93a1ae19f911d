"""Model I/O: ONNX import/export with GE's ONNX mapping, GE dumps and AIR.

Public surface (GE dumps and AIR): :func:`write_dumps`, :func:`write_dumps_from_env`, :func:`dump_settings_from_env`,
:func:`load_ge_dump`, :func:`list_dumps`, :func:`parse_dump_name`, :class:`DumpLevel`, :class:`DumpSettings`,
:class:`GeDumpError`, :func:`save_air`, :func:`load_air`.

Public surface (ONNX): :func:`load_onnx`, :func:`to_onnx`, :func:`save_onnx`, :class:`OnnxImportError`,
:class:`UnsupportedOnnxOpError`, :class:`OnnxExportError`.
"""

from .air import load_air, save_air
from .ge_dump import (
    DumpLevel,
    DumpSettings,
    GeDumpError,
    dump_settings_from_env,
    list_dumps,
    load_ge_dump,
    parse_dump_name,
    write_dumps,
    write_dumps_from_env,
)
from .ge_dump import register_with_api as _register_ge_dump
from .onnx_export import OnnxExportError, save_onnx, to_onnx
from .onnx_import import OnnxImportError, UnsupportedOnnxOpError, load_onnx
from .onnx_import import register_with_api as _register_onnx

__all__ = [
    "DumpLevel",
    "DumpSettings",
    "GeDumpError",
    "dump_settings_from_env",
    "list_dumps",
    "load_air",
    "load_ge_dump",
    "parse_dump_name",
    "save_air",
    "write_dumps",
    "write_dumps_from_env",
    "OnnxExportError",
    "OnnxImportError",
    "UnsupportedOnnxOpError",
    "load_onnx",
    "save_onnx",
    "to_onnx",
]

_register_ge_dump()
_register_onnx()
