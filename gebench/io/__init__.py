"""Model I/O: ONNX import/export with GE's ONNX mapping, GE dumps and AIR.

Public surface (GE dumps and AIR): :func:`write_dumps`, :func:`write_dumps_from_env`, :func:`write_dump_dir`,
:func:`dump_settings_from_env`, :func:`load_ge_dump`, :func:`load_graph_file`, :func:`list_dumps`,
:func:`parse_dump_name`, :class:`DumpLevel`, :class:`DumpSettings`, :class:`GeDumpError`, :func:`save_air`,
:func:`load_air`.

Public surface (ONNX): :func:`load_onnx`, :func:`to_onnx`, :func:`save_onnx`, :class:`OnnxImportError`,
:class:`UnsupportedOnnxOpError`, :class:`OnnxExportError`.

:data:`FILE_LOADERS` says which reader takes a file by its suffix; ``gebench.load`` (:mod:`gebench.api`) reads it
when it first opens a file, and ``gebench compile --dump-dir`` writes through :func:`write_dump_dir`. This package
imports nothing of gebench but ``ir``, ``ops`` and ``_atomic`` (``tests/test_layering.py``).
"""

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from .air import load_air, save_air
from .ge_dump import (
    DumpLevel,
    DumpSettings,
    GeDumpError,
    dump_settings_from_env,
    list_dumps,
    load_ge_dump,
    load_graph_file,
    parse_dump_name,
    write_dump_dir,
    write_dumps,
    write_dumps_from_env,
)
from .onnx_export import OnnxExportError, save_onnx, to_onnx
from .onnx_import import OnnxImportError, UnsupportedOnnxOpError, load_onnx

__all__ = [
    "FILE_LOADERS",
    "DumpLevel",
    "DumpSettings",
    "GeDumpError",
    "dump_settings_from_env",
    "list_dumps",
    "load_air",
    "load_ge_dump",
    "load_graph_file",
    "parse_dump_name",
    "save_air",
    "write_dump_dir",
    "write_dumps",
    "write_dumps_from_env",
    "OnnxExportError",
    "OnnxImportError",
    "UnsupportedOnnxOpError",
    "load_onnx",
    "save_onnx",
    "to_onnx",
]

#: File suffix (lower case) -> the reader of such files, ``fn(path) -> ir.Graph`` (ONNX, AIR, GE dumps; a
#: ``.txt`` file is a ge_proto dump when its content is one, else the IR text form). Read-only.
FILE_LOADERS: Mapping[str, Callable[..., Any]] = MappingProxyType({
    ".onnx": load_onnx,
    ".air": load_air,
    ".pbtxt": load_ge_dump,
    ".txt": load_graph_file,
})
