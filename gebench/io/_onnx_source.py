"""Reading an ``.onnx`` file for the importer: checked from the file, parsed without its large weights, weights
as read-only numpy views of the file's bytes.

:func:`read_model_file` is the importer's fast way in. It gives the same ModelProto (after ONNX shape inference)
and the same Const values as ``onnx.load`` + ``onnx.checker.check_model`` + ``onnx.shape_inference.infer_shapes``
+ ``numpy_helper.to_array`` would, at a fraction of the memory:

* the checker reads the file itself (``check_model_path``), before anything else is held, so its two transient
  copies (the file and its parse) are not added to the importer's own;
* the file is read once into one ``bytes`` object. The raw data of every initializer of the main graph is
  found in it by walking the protobuf wire format of the graph's fields (the nodes are skipped by their length
  prefixes, never decoded), and each initializer's value is ``np.frombuffer`` over that object: no weight is
  copied, and the arrays are read-only because ``bytes`` is immutable. The bytes stay alive as long as any
  such value does;
* initializers stored as external data are memory-mapped (one read-only mapping per data file, as onnx_ir
  does); a value keeps its mapping open. The data files must not be truncated or rewritten in place while the
  graph is alive (the operating system then fails the read of a mapped page);
* ONNX shape inference runs on a copy of the model in which the raw data of the large initializers
  (above :data:`STRIP_BYTES`) is left out, except for initializers that ONNX inference may read (inputs of the
  ops in :data:`_READS_DATA`, of nodes in other domains, of subgraph bodies and of model functions), so its
  serialisations cost the graph's size instead of the weights' size and the inferred shapes are the same;
* the one walk over the graph's fields also sorts them out (nodes and initializers in chunks, the rest apart).
  Inference usually returns the graph it was given with value infos appended: when the graph given was the
  file's and the result starts with its bytes, the parts are the file's (views of its bytes) and the value infos
  are what follows, so the result is not walked again; otherwise it is.

Anything unusual (a text-format file name, a second ``graph`` field, protobuf groups, external data outside
the main graph's initializers, an opset that needs conversion, a model the checker rejects and that does not
pass once partial value infos are completed, a tensor whose data does not fit its dims) makes
:func:`read_model_file` return None, and the importer then takes the general path, which gives the same
results and errors as before (just without these savings).
"""

from __future__ import annotations

import bisect
import ctypes
import dataclasses
import logging
import mmap
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx.onnx_cpp2py_export import checker as _c_checker
from onnx.onnx_cpp2py_export import shape_inference as _c_shape_inference

from gebench import ir

from ._onnx_common import MAX_OPSET, MIN_OPSET, OnnxImportError, onnx_to_ge_dtype, tensor_value_from_proto

__all__ = ["ModelFile", "read_model_file", "STRIP_BYTES"]

_log = logging.getLogger(__name__)

#: Raw data longer than this is left out of the copy of the model that ONNX shape inference sees (unless
#: inference may read it). Tensors an ONNX shape function reads (shapes, axes, pads, scales, repeats, ...)
#: hold a few elements, far below this.
STRIP_BYTES = 64 * 1024

#: ONNX ops whose shape inference reads the values of some input (``getInputData`` in their shape functions;
#: with ``data_prop`` off, as the importer runs it). Every input of these ops keeps its raw data in the copy
#: given to inference, whatever its size.
_READS_DATA = frozenset({
    "Reshape", "Expand", "Tile", "Slice", "Pad", "Resize", "Upsample", "ConstantOfShape", "Range", "OneHot",
    "TopK", "Split", "SplitToSequence", "Squeeze", "Unsqueeze", "ReduceSum", "ReduceMean", "ReduceMax",
    "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare",
    "CenterCropPad", "Col2Im", "STFT", "DFT", "MelWeightMatrix", "BlackmanWindow", "HannWindow",
    "HammingWindow", "AffineGrid", "MaxUnpool", "If", "Loop", "Scan",
})

#: ONNX elem type -> the numpy dtype of its raw data, for the types whose raw bytes are exactly what
#: ``numpy_helper.to_array`` returns and the IR keeps (BFLOAT16 as its uint16 bit patterns).
_RAW_DTYPES: dict[int, np.dtype] = {
    onnx.TensorProto.FLOAT: np.dtype("<f4"), onnx.TensorProto.UINT8: np.dtype("u1"),
    onnx.TensorProto.INT8: np.dtype("i1"), onnx.TensorProto.UINT16: np.dtype("<u2"),
    onnx.TensorProto.INT16: np.dtype("<i2"), onnx.TensorProto.INT32: np.dtype("<i4"),
    onnx.TensorProto.INT64: np.dtype("<i8"), onnx.TensorProto.BOOL: np.dtype("?"),
    onnx.TensorProto.FLOAT16: np.dtype("<f2"), onnx.TensorProto.DOUBLE: np.dtype("<f8"),
    onnx.TensorProto.UINT32: np.dtype("<u4"), onnx.TensorProto.UINT64: np.dtype("<u8"),
    onnx.TensorProto.COMPLEX64: np.dtype("<c8"), onnx.TensorProto.COMPLEX128: np.dtype("<c16"),
    onnx.TensorProto.BFLOAT16: np.dtype("<u2"),
}

# protobuf field numbers (onnx.proto)
_MODEL_GRAPH = 7
_MODEL_FUNCTIONS = 25
_GRAPH_NODE = 1
_GRAPH_INITIALIZER = 5
_GRAPH_VALUE_INFO = 13
_TENSOR_SEGMENT = 3
_TENSOR_RAW_DATA = 9
_TENSOR_EXTERNAL_DATA = 13
_TENSOR_DATA_LOCATION = 14
#: ``external_data`` entries name their file under the key ``location``: the bytes of that key field.
_LOCATION_KEY = b"\x0a\x08location"


class _Malformed(Exception):
    """The wire walk met something it does not handle; the general path decides what it is."""


@dataclasses.dataclass(slots=True)
class _Initializer:
    """Where one initializer of the main graph sits in the file (offsets into the file's bytes)."""

    tag_pos: int  # first byte of its field in the graph (tag)
    start: int  # first byte of the TensorProto
    end: int  # one past its last byte
    raw_tag: int = -1  # first byte of its raw_data field (tag), -1 without raw_data
    raw_start: int = -1
    raw_end: int = -1
    external: bool = False


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    byte = buf[pos]
    if byte < 0x80:
        return byte, pos + 1
    result = byte & 0x7F
    shift = 7
    pos += 1
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise _Malformed("varint longer than 10 bytes")


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _skip(buf: bytes, pos: int, wire_type: int, end: int) -> int:
    """Position after the value of a field of ``wire_type`` starting at ``pos``."""
    if wire_type == 2:
        length, pos = _varint(buf, pos)
        pos += length
    elif wire_type == 0:
        _, pos = _varint(buf, pos)
    elif wire_type == 1:
        pos += 8
    elif wire_type == 5:
        pos += 4
    else:
        raise _Malformed(f"wire type {wire_type}")
    if pos > end:
        raise _Malformed("field runs past its message")
    return pos


def _model_fields(data: bytes) -> tuple[int, int, int, bool]:
    """(tag position, start, end) of the single ``graph`` field of a serialized ModelProto, and whether the model
    has functions. O(top-level fields)."""
    pos, end = 0, len(data)
    graph: tuple[int, int, int] | None = None
    functions = False
    while pos < end:
        tag_pos = pos
        tag, pos = _varint(data, pos)
        field, wire_type = tag >> 3, tag & 7
        if field == _MODEL_GRAPH and wire_type == 2:
            if graph is not None:
                raise _Malformed("two graph fields")
            length, start = _varint(data, pos)
            pos = start + length
            if pos > end:
                raise _Malformed("graph runs past the file")
            graph = (tag_pos, start, pos)
            continue
        functions = functions or field == _MODEL_FUNCTIONS
        pos = _skip(data, pos, wire_type, end)
    if graph is None:
        raise _Malformed("no graph")
    return (*graph, functions)


def _graph_initializers(data: bytes, start: int, end: int) -> list[_Initializer]:
    """The initializer fields of the graph message ``data[start:end]``, in file order. O(graph fields): other
    fields (nodes, value infos) are skipped by their length."""
    return _graph_parts(data, start, end, True).inits


def _tensor_fields(data: bytes, tag_pos: int, start: int, end: int) -> _Initializer:
    """Where the raw data of the TensorProto ``data[start:end]`` is, and whether it is stored externally.
    O(fields); one-byte tags and lengths (nearly all of them) are read inline."""
    init = _Initializer(tag_pos, start, end)
    pos = start
    while pos < end:
        field_pos = pos
        tag = data[pos]
        if tag < 0x80:
            pos += 1
        else:
            tag, pos = _varint(data, pos)
        wire_type = tag & 7
        if wire_type == 0:
            if tag >> 3 == _TENSOR_DATA_LOCATION:
                value, pos = _varint(data, pos)
                init.external = init.external or value == onnx.TensorProto.EXTERNAL
            else:
                while data[pos] >= 0x80:
                    pos += 1
                pos += 1
            continue
        if wire_type != 2:
            pos = _skip(data, pos, wire_type, end)
            continue
        length = data[pos]
        if length < 0x80:
            body = pos + 1
        else:
            length, body = _varint(data, pos)
        pos = body + length
        field = tag >> 3
        if field == _TENSOR_RAW_DATA:
            init.raw_tag, init.raw_start, init.raw_end = field_pos, body, pos
        elif field == _TENSOR_EXTERNAL_DATA:
            init.external = True
        elif field == _TENSOR_SEGMENT:
            raise _Malformed("segmented tensor")
    if pos != end:
        raise _Malformed("a tensor field runs past its tensor")
    return init


def _skeleton(data: bytes, graph_tag: int, graph_start: int, graph_end: int,
              stripped: list[_Initializer]) -> bytes:
    """``data`` with the raw data of ``stripped`` (in file order) replaced by an empty ``raw_data`` field; the
    length prefixes of those tensors and of the graph are re-encoded. O(file size) copying, O(stripped) Python
    work."""
    if not stripped:
        return data
    pieces: list[bytes] = []
    cur = graph_start
    empty_raw = _encode_varint(_TENSOR_RAW_DATA << 3 | 2) + b"\x00"
    init_tag = _encode_varint(_GRAPH_INITIALIZER << 3 | 2)
    for init in stripped:
        pieces.append(data[cur:init.tag_pos])
        body = data[init.start:init.raw_tag] + empty_raw + data[init.raw_end:init.end]
        pieces.append(init_tag + _encode_varint(len(body)) + body)
        cur = init.end
    pieces.append(data[cur:graph_end])
    graph = b"".join(pieces)
    return b"".join((data[:graph_tag], _encode_varint(_MODEL_GRAPH << 3 | 2), _encode_varint(len(graph)), graph,
                     data[graph_end:]))


class _ExternalFiles:
    """Read-only memory maps of the external data files of one model, opened on first use (one per file)."""

    def __init__(self, base_dir: str) -> None:
        self._base_dir = base_dir
        self._maps: dict[str, mmap.mmap | None] = {}

    def locate(self, tensor: onnx.TensorProto) -> tuple[mmap.mmap | None, int, int]:
        """(mapping, offset, length) of an external tensor's bytes, read as ``onnx.load`` reads them (the rest
        of the file when ``length`` is missing). The mapping is None for an empty file.

        Raises:
            _Malformed: a location onnx refuses, or an offset or length past the end of the file (the general
                path reports them as ``onnx.load`` does).
        """
        info = {e.key: e.value for e in tensor.external_data}
        location = info.get("location", "")
        if location not in self._maps:
            try:
                fd = _c_checker._open_external_data(self._base_dir, location, tensor.name, True)
            except Exception as exc:
                raise _Malformed(f"external data of {tensor.name!r}: {exc}") from exc
            try:
                size = os.fstat(fd).st_size
                self._maps[location] = mmap.mmap(fd, 0, access=mmap.ACCESS_READ) if size else None
            finally:
                os.close(fd)
        mapped = self._maps[location]
        size = 0 if mapped is None else len(mapped)
        offset = int(info.get("offset") or 0)
        length = int(info["length"]) if info.get("length") else size - offset
        if offset < 0 or length < 0 or offset > size or offset + length > size:
            raise _Malformed(f"external data of {tensor.name!r} lies outside its file")
        return mapped, offset, length


@dataclasses.dataclass
class ModelFile:
    """A model read by :func:`read_model_file`.

    The main graph comes in parts, so that no part is held longer than the importer needs it: :attr:`proto` is
    the model with its main graph's name, inputs, outputs and other small fields only; the graph's value infos
    (after inference) are :attr:`value_info`; its nodes and initializers are parsed a chunk at a time by
    :meth:`nodes` and :meth:`initializers` (each call parses them again; a chunk is freed once no message of it
    is referenced). A protobuf message takes about four times the bytes it is parsed from, so the graph as one
    message cost more than the IR graph's own descs.

    Attributes:
        proto: the ModelProto after ONNX shape inference (or as read when inference failed) without the main
            graph's nodes, initializers and value infos.
        inferred: whether ONNX shape inference succeeded.
        value_info: the main graph's value infos; a reader drops it once read.
        node_count, initializer_count: how many nodes and initializers the main graph has.
    """

    proto: onnx.ModelProto
    inferred: bool
    _data: bytes
    _inits: list[_Initializer]
    _external: _ExternalFiles
    _source: str
    value_info: onnx.GraphProto | None
    _node_chunks: list[Any]  # bytes, or views of the file's bytes
    _init_chunks: list[Any]
    node_count: int
    initializer_count: int
    #: where the external initializers keep their bytes (mapping, offset, length), by index
    _located: dict[int, tuple[Any, int, int]] = dataclasses.field(default_factory=dict)

    def nodes(self) -> Iterator[onnx.NodeProto]:
        """The main graph's nodes in file order, parsed a chunk at a time. O(nodes)."""
        for chunk in self._node_chunks:
            yield from onnx.GraphProto.FromString(chunk).node

    def initializers(self) -> Iterator[onnx.TensorProto]:
        """The main graph's initializers in file order (large raw data may be left out), a chunk at a time."""
        for chunk in self._init_chunks:
            yield from onnx.GraphProto.FromString(chunk).initializer

    def view(self, index: int, data_type: int, dims: tuple[int, ...]) -> ir.TensorValue | None:
        """The value of initializer ``index`` (of ONNX elem type ``data_type`` and shape ``dims``) as a read-only
        view of the file's bytes or of its mapped external data file, or None when it cannot be one (then
        :meth:`value` gives it from the TensorProto). Never raises. O(1); the view keeps the bytes (mapping)
        alive."""
        init = self._inits[index]
        if init.external:
            located = self._located.get(index)
            if located is None:
                return None
            buf, offset, length = located
        else:
            buf, offset, length = self._data, init.raw_start, init.raw_end - init.raw_start
        raw_dtype = _RAW_DTYPES.get(data_type)
        if raw_dtype is None or offset < 0 or buf is None:
            return None
        count = 1
        for d in dims:
            count *= d
        if count < 0 or count * raw_dtype.itemsize != length:
            return None
        # the array over the file's (immutable) bytes is kept as is, not wrapped in a view of its own
        return ir.trusted_value(onnx_to_ge_dtype(data_type), np.ndarray(dims, raw_dtype, buf, offset))

    def value(self, index: int, tensor: onnx.TensorProto) -> ir.TensorValue:
        """The value of initializer ``index`` of the main graph (``tensor`` is that initializer).

        :meth:`view` when it can be one; otherwise what ``numpy_helper.to_array`` gives (a copy), as the general
        path does.

        Raises:
            OnnxImportError: as :func:`tensor_value_from_proto` (unknown dtype, data that does not fit the dims).
        """
        dims = tuple(tensor.dims)
        value = self.view(index, tensor.data_type, dims)
        if value is not None:
            return value
        init = self._inits[index]
        if init.external:
            located = self._located.get(index)
            if located is None:
                try:
                    located = self._external.locate(tensor)
                except _Malformed as exc:  # checked when the file was read: the data file changed since
                    raise OnnxImportError(f"{self._source}: {exc}") from None
            buf, offset, length = located
        else:
            buf, offset, length = self._data, init.raw_start, init.raw_end - init.raw_start
        return self._copied(init, tensor, buf, offset, length)

    def _copied(self, init: _Initializer, tensor: onnx.TensorProto, buf: Any, offset: int,
                length: int) -> ir.TensorValue:
        """The general conversion, on a copy of ``tensor`` with its raw data put back."""
        if init.external or init.raw_start >= 0:
            full = onnx.TensorProto()
            full.CopyFrom(tensor)
            full.raw_data = b"" if buf is None else bytes(buf[offset:offset + length])
            if init.external:
                full.data_location = onnx.TensorProto.DEFAULT
                del full.external_data[:]
            tensor = full
        return tensor_value_from_proto(tensor, where=self._source)


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim`` from the symbols already loaded into the process (no library search: that runs
    ``ldconfig`` in a child process), or None (another C library, or not Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None).malloc_trim  # type: ignore[no-any-return]
    except (OSError, AttributeError, TypeError):
        return None  # not glibc


_MALLOC_TRIM = _malloc_trim()


def release_free_heap() -> None:
    """Give the C heap's free memory back to the operating system (glibc's ``malloc_trim``; nothing elsewhere).

    ONNX's checker and shape inference parse and serialise the whole model in C++ and free it again, but glibc
    keeps freed heap memory for later ``malloc`` calls, which Python's small objects (allocated from their own
    mapped arenas) never make: without this, those copies stay in the process's resident memory for as long as
    it lives. Called once per read, after inference: trimming between the C steps would only make the next one
    fault the same pages in again. Cost: one walk over the heap's free chunks (milliseconds).
    """
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


def read_model_file(path: Path, source: str, check: Callable[[onnx.ModelProto, str], None]) -> ModelFile | None:
    """Check, read and shape-infer the ONNX file ``path`` without copying its weights (see the module docstring).

    Args:
        path: an existing file.
        source: the name used in messages.
        check: the importer's checker, for a model ``check_model_path`` rejects (it completes partial value
            infos and raises for what stays invalid).

    Returns:
        The :class:`ModelFile`, or None when the general path must read this model (the reasons are in the
        module docstring; logged at debug level). Never raises for a bad model: the general path reports it.

    Cost: one read of the file, a walk over the main graph's fields (O(fields) Python steps, no decoding of
    nodes), the checker and ONNX shape inference in C++, and parses of the file without its large raw data.
    """
    try:
        return _read(path, source, check)
    except _Malformed as exc:
        _log.debug("%s: read by the general path (%s)", source, exc)
    except Exception as exc:  # any other surprise: the general path reports it as it always did
        _log.debug("%s: read by the general path (%s: %s)", source, type(exc).__name__, exc)
    return None


def _read(path: Path, source: str, check: Callable[[onnx.ModelProto, str], None]) -> ModelFile:
    if sys.byteorder != "little":
        raise _Malformed("big-endian host")
    fmt = onnx.serialization.registry.get_format_from_file_extension(path.suffix)
    if fmt not in (None, "protobuf"):
        raise _Malformed(f"{fmt} file extension")
    try:
        _c_checker.check_model_path(os.fspath(path), False, False, False)
        checked = True
    except _c_checker.ValidationError:
        checked = False  # maybe only partial value infos; decided below on the parsed model
    # no trim here: the heap the checker freed is reused by the C allocations below (a trim would only
    # make them fault its pages in again); the trim after inference covers both
    data = path.read_bytes()
    graph_tag, graph_start, graph_end, functions = _model_fields(data)
    parts = _graph_parts(data, graph_start, graph_end, True)
    inits = parts.inits
    n_external = sum(1 for init in inits if init.external)
    if not checked:
        if n_external:
            raise _Malformed("rejected by the checker")
        full = onnx.ModelProto.FromString(data)
        _check_header(full)
        try:
            check(full, source)
        except Exception as exc:
            raise _Malformed("rejected by the checker") from exc
        del full
    big = [i for i, init in enumerate(inits) if not init.external and init.raw_end - init.raw_start > STRIP_BYTES]
    if checked and _may_hold_negative_dims(data, inits, big):
        # onnx.checker accepts dimensions below -1; the importer's own rules refuse them (and name the tensor)
        full = onnx.ModelProto.FromString(data)
        try:
            check(full, source)
        except Exception as exc:
            raise _Malformed("refused by the importer's checks") from exc
        del full
    skeleton = _skeleton(data, graph_tag, graph_start, graph_end, [inits[i] for i in big])
    if skeleton.count(_LOCATION_KEY) != n_external:
        raise _Malformed("external data outside the main graph's initializers (or a look-alike in the bytes)")
    external = _ExternalFiles(str(path.parent))
    located: dict[int, tuple[Any, int, int]] = {}
    if not (big or n_external):
        # nothing below reads the graph, which is most of the file: the header is parsed without it
        _check_header(onnx.ModelProto.FromString(b"".join((data[:graph_tag], data[graph_end:]))), has_graph=True)
    else:
        proto = onnx.ModelProto.FromString(skeleton)
        _check_header(proto)
        if n_external:
            for index, tensor in enumerate(proto.graph.initializer):
                if inits[index].external:
                    located[index] = _check_external(external, tensor)
        keep = _read_by_inference(proto, functions)
        stripped = set(big)
        restored = False
        for index, tensor in enumerate(proto.graph.initializer):
            init = inits[index]
            if not (init.external or index in stripped) or tensor.name not in keep:
                continue
            restored = True
            if init.external:
                buf, offset, length = located[index]
                tensor.raw_data = b"" if buf is None else bytes(buf[offset:offset + length])
                tensor.data_location = onnx.TensorProto.DEFAULT
                del tensor.external_data[:]
            else:
                tensor.raw_data = data[init.raw_start:init.raw_end]
        if restored:
            skeleton = proto.SerializeToString()
        del proto
    try:
        out = _c_shape_inference.infer_shapes(skeleton, False, False, False)  # what infer_shapes(model) runs
        ok = True
    except Exception as exc:  # inference is best effort; GE does not need it
        _log.info("%s: ONNX shape inference failed (%s); descs come from gebench's inference", source, exc)
        out = skeleton
        ok = False
    file_graph = skeleton is data  # inference was given the file's graph as it is
    del skeleton
    release_free_heap()  # inference's parse and serialisation
    # inference appends value infos to the graph it was given: when that graph is the file's, its walk above
    # already sorted the fields out and the value infos are what follows them
    split = _split_appended(out, data, graph_start, graph_end, parts) if file_graph else None
    value_info = None
    if split is not None:
        value_info = onnx.GraphProto.FromString(split[3])
        if [field.name for field, _ in value_info.ListFields()] not in ([], ["value_info"]):
            split = value_info = None  # something else was added too: the walk below sorts it out
    if split is None:
        split = _split_graph(out)
        value_info = onnx.GraphProto.FromString(split[3])
    small, node_chunks, init_chunks, _infos, counts = split
    del out, split, _infos
    if counts[1] != len(inits):
        raise _Malformed("initializer count changed by inference")
    return ModelFile(onnx.ModelProto.FromString(small), ok, data, inits, external, source, value_info,
                     node_chunks, init_chunks, counts[0], counts[1], located)


#: Nodes or initializers per chunk of :meth:`ModelFile.nodes` / :meth:`ModelFile.initializers`.
CHUNK = 2048


@dataclasses.dataclass(slots=True)
class _GraphParts:
    """The fields of a serialized GraphProto, sorted out by :func:`_graph_parts`, as ``(start, end)`` spans of its
    buffer. The bytes of each chunk (and of the value infos joined, and of the other fields joined) parse as a
    GraphProto holding just those fields, in file order."""

    other: list[tuple[int, int]]  # runs of the fields that are neither nodes, initializers nor value infos
    node_chunks: list[tuple[int, int]]  # at most CHUNK node fields each
    init_chunks: list[tuple[int, int]]  # at most CHUNK initializer fields each
    infos: list[tuple[int, int]]  # runs of value info fields
    node_count: int
    init_count: int
    inits: list[_Initializer]  # where each initializer's raw data is (when asked for)


def _pieces(buf: Any, spans: list[tuple[int, int]]) -> list[Any]:
    """The parts of ``buf`` (bytes, or a memoryview of them for views) that ``spans`` delimit."""
    return [buf[a:b] for a, b in spans]


def _graph_parts(buf: bytes, start: int, end: int, initializers: bool) -> _GraphParts:
    """Sort out the fields of the graph message ``buf[start:end]`` in one walk (with ``initializers``, also where
    each initializer's raw data is: :func:`_tensor_fields`). O(graph fields) Python steps, no decoding of
    nodes, no copies."""
    node_tag, init_tag, info_tag = _GRAPH_NODE << 3 | 2, _GRAPH_INITIALIZER << 3 | 2, _GRAPH_VALUE_INFO << 3 | 2
    other: list[tuple[int, int]] = []
    infos: list[tuple[int, int]] = []
    chunks: dict[int, list[tuple[int, int]]] = {node_tag: [], init_tag: []}
    counts = {node_tag: 0, init_tag: 0}
    inits: list[_Initializer] = []
    run_tag, run_start, run_count = -1, start, 0
    pos = start
    while pos < end:
        field_start = pos
        tag = buf[pos]
        if tag < 0x80:
            pos += 1
        else:
            tag, pos = _varint(buf, pos)
        if tag & 7 == 2:
            length = buf[pos]
            if length < 0x80:
                body = pos + 1
            else:
                length, body = _varint(buf, pos)
            pos = body + length
            if pos > end:
                raise _Malformed("graph field runs past the graph")
            if tag == init_tag and initializers:
                inits.append(_tensor_fields(buf, field_start, body, pos))
        else:
            pos = _skip(buf, pos, tag & 7, end)
        kind = tag if tag in (node_tag, init_tag, info_tag) else 0
        if kind != run_tag or (kind in chunks and run_count == CHUNK):
            if run_tag >= 0:
                span = (run_start, field_start)
                chunks[run_tag].append(span) if run_tag in chunks else (infos if run_tag else other).append(span)
            run_tag, run_start, run_count = kind, field_start, 0
        run_count += 1
        if kind in counts:
            counts[kind] += 1
    if run_tag >= 0:
        span = (run_start, end)
        chunks[run_tag].append(span) if run_tag in chunks else (infos if run_tag else other).append(span)
    return _GraphParts(other, chunks[node_tag], chunks[init_tag], infos, counts[node_tag], counts[init_tag], inits)


def _without_graph_fields(model: bytes, graph_tag: int, graph_end: int, other: list[bytes]) -> bytes:
    """``model`` (whose graph field runs from ``graph_tag`` to ``graph_end``) with only the graph fields
    ``other``."""
    body = b"".join(other)
    return b"".join((model[:graph_tag], _encode_varint(_MODEL_GRAPH << 3 | 2), _encode_varint(len(body)), body,
                     model[graph_end:]))


def _split_graph(model: bytes) -> tuple[bytes, list[bytes], list[bytes], bytes, tuple[int, int]]:
    """Split a serialized model's main graph into (the model with only the graph's other fields, chunks of at most
    :data:`CHUNK` node fields, chunks of initializer fields, the value info fields, (node count, initializer
    count)). Each chunk and the value infos parse as a GraphProto holding just those fields, in file order.
    O(graph fields) Python steps, no decoding of nodes."""
    graph_tag, start, end, _ = _model_fields(model)
    parts = _graph_parts(model, start, end, False)
    return (_without_graph_fields(model, graph_tag, end, _pieces(model, parts.other)),
            _pieces(model, parts.node_chunks), _pieces(model, parts.init_chunks),
            b"".join(_pieces(model, parts.infos)), (parts.node_count, parts.init_count))


def _split_appended(out: bytes, data: bytes, graph_start: int, graph_end: int,
                    parts: _GraphParts) -> tuple[bytes, list[Any], list[Any], bytes, tuple[int, int]] | None:
    """:func:`_split_graph` of ``out``, ONNX shape inference's result for the model ``data`` whose graph
    (``data[graph_start:graph_end]``, without value infos) was sorted out into ``parts``, when inference only
    appended fields to that graph (its usual result: value infos after the graph's last field); None otherwise.
    The node and initializer chunks are views of ``data``.
    The caller checks that what was appended is value infos only. One comparison of the graph's bytes (in C),
    no walk."""
    if parts.infos:
        return None
    graph_tag, start, end, _ = _model_fields(out)
    size = graph_end - graph_start
    if end - start < size or not out.startswith(memoryview(data)[graph_start:graph_end], start):  # no copy
        return None
    view = memoryview(data)  # the chunks are views of the file's bytes, which the ModelFile keeps anyway
    return (_without_graph_fields(out, graph_tag, end, _pieces(data, parts.other)),
            _pieces(view, parts.node_chunks), _pieces(view, parts.init_chunks), out[start + size:end],
            (parts.node_count, parts.init_count))


#: A 10-byte varint (a negative int64) after the tag of field 1: how ``TensorShapeProto.Dimension.dim_value`` (and
#: ``TensorProto.dims``) store a negative number.
_NEGATIVE_FIELD1 = re.compile(rb"\x08[\x80-\xff]{9}[\x01-\x7f]")
_MINUS_ONE_FIELD1 = b"\x08" + b"\xff" * 9 + b"\x01"


def _may_hold_negative_dims(data: bytes, inits: list[_Initializer], big: list[int]) -> bool:
    """False when no dimension of the file can be below -1: no negative varint other than -1 follows a field-1 tag
    anywhere outside the raw data of the main graph's initializers. True means "maybe" (the bytes of other
    tensors can look alike); the caller then runs the exact rule. O(bytes outside the large raw data), in C."""
    spans = sorted((init.raw_start, init.raw_end) for init in inits if init.raw_start >= 0)
    starts = [start for start, _ in spans]
    regions, cur = [], 0
    for start, end in sorted((inits[i].raw_start, inits[i].raw_end) for i in big):
        regions.append((cur, start))
        cur = end
    regions.append((cur, len(data)))
    for lo, hi in regions:
        for match in _NEGATIVE_FIELD1.finditer(data, lo, hi):
            k = bisect.bisect_left(starts, match.end()) - 1  # the last raw data starting inside or before the match
            if k >= 0 and spans[k][1] > match.start():
                continue  # overlaps a tensor's raw data: a real dimension never does
            if match.group() != _MINUS_ONE_FIELD1:
                return True
    return False


def _check_external(external: _ExternalFiles, tensor: onnx.TensorProto) -> tuple[Any, int, int]:
    """Where an external tensor's bytes are (see :meth:`_ExternalFiles.locate`). Refuses (to the general path) one
    whose bytes do not fit its dims: there the checker sees the loaded bytes and names the tensor."""
    located = external.locate(tensor)
    length = located[2]
    raw_dtype = _RAW_DTYPES.get(tensor.data_type)
    count = 1
    for d in tensor.dims:
        count *= d
    if raw_dtype is None or count * raw_dtype.itemsize != length:
        raise _Malformed(f"external tensor {tensor.name!r} does not fit its dims")
    return located


def _check_header(proto: onnx.ModelProto, has_graph: bool = False) -> None:
    """What the general path refuses or converts before inference. ``has_graph``: ``proto`` is the model without
    its graph field, which the caller found in the bytes."""
    if proto.ir_version <= 0 or not (has_graph or proto.HasField("graph")):
        raise _Malformed("no ir_version or no graph")
    version = 1 if proto.ir_version < 3 else 0
    for imp in proto.opset_import:
        if imp.domain in ("", "ai.onnx"):
            version = int(imp.version)
            break
    if version > MAX_OPSET or 0 < version < MIN_OPSET:
        raise _Malformed(f"opset {version}")


def _read_by_inference(proto: onnx.ModelProto, functions: bool) -> set[str] | _All:
    """Names of main-graph tensors whose values ONNX shape inference may read."""
    if functions:
        return _ALL
    names: set[str] = set()
    for node in proto.graph.node:
        if node.op_type in _READS_DATA or (node.domain not in ("", "ai.onnx")
                                           and onnx.defs.has(node.op_type, node.domain)):
            names.update(node.input)
        for attr in node.attribute:
            if attr.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
                names.update(node.input)
                for body in ([attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)):
                    _body_inputs(body, names)
    return names


def _body_inputs(graph: onnx.GraphProto, names: set[str]) -> None:
    for node in graph.node:
        names.update(node.input)
        for attr in node.attribute:
            for body in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                _body_inputs(body, names)


class _All:
    """Every name (a model with functions: their bodies may read any input)."""

    def __contains__(self, name: object) -> bool:
        return True


_ALL = _All()
