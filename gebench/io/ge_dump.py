"""GE graph dumps: write ``ge_proto``/``ge_onnx``/``ge_readable`` files as GE names them, and load ``ge_proto``.

Writing::

    paths = write_dumps({"PreRunBegin": g0, "RunCustomPassBeforeInfershape": g1}, "dumps", level=1)
    settings = dump_settings_from_env()          # DUMP_GE_GRAPH, DUMP_GRAPH_FORMAT, DUMP_GRAPH_LEVEL, ...
    if settings.enabled:
        write_dumps(snapshots, settings.directory, level=settings.level, formats=settings.formats,
                    stages=settings.stages)

Reading: ``load_ge_dump(path)`` accepts ge_proto text dumps of any GE version (``ge_proto_00000003_graph_0_X.txt``,
``ge_proto_00017_X.txt``, or any name at all: the content decides) and binary ModelDef files (AIR), and gives
back the IR graph. A ge_onnx dump is refused with a pointer to the ge_proto file, because it is lossy.
IR -> ge_proto -> IR keeps everything :mod:`gebench.io._ge_dump_codec` lists.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from google.protobuf import message as pb_message
from google.protobuf import text_encoding, text_format

from gebench import ir
from gebench._atomic import copy_file_atomically, temporary_name, write_chunks_atomically
from gebench.ir import DataType, TensorDesc, TensorValue

from ._ge_dump_codec import (
    GRAPH_OUTPUTS_ATTR,
    EncodeOptions,
    GeDumpError,
    OpaqueAttr,
    _all_subgraphs,
    decode_model,
    graph_outputs,
)
from ._ge_dump_env import (
    DEFAULT_FORMATS,
    FORMATS,
    DumpLevel,
    DumpName,
    DumpSettings,
    dump_file_name,
    dump_settings_from_env,
    parse_dump_name,
    sanitize_suffix,
    stage_selected,
)
from ._ge_dump_read import read_dump_text, split_dump_text
from ._ge_dump_text import ge_onnx_chunks, ge_proto_chunks
from ._progress import Progress
from .proto import ge_ir_pb2

__all__ = [
    "GRAPH_OUTPUTS_ATTR",
    "DumpLevel",
    "DumpName",
    "DumpSettings",
    "GeDumpError",
    "OpaqueAttr",
    "dump_file_name",
    "dump_settings_from_env",
    "dump_chunks",
    "dump_text",
    "list_dumps",
    "load_ge_dump",
    "parse_dump_name",
    "parse_ge_dump_text",
    "sanitize_suffix",
    "stage_selected",
    "load_graph_file",
    "write_dump_dir",
    "write_dumps",
    "write_dumps_from_env",
]

_log = logging.getLogger(__name__)


def _options(level: DumpLevel) -> EncodeOptions:
    full = level == DumpLevel.DUMP_ALL
    return EncodeOptions(const_values=full, framework_defs=full,
                         graph_options=level in (DumpLevel.DUMP_ALL, DumpLevel.DUMP_WITH_OUT_DATA))


def dump_text(graph: ir.Graph, kind: str = "ge_proto", level: DumpLevel | int = DumpLevel.DUMP_ALL) -> str:
    """The text of one dump of ``graph`` (``kind`` = ``"ge_proto"``, ``"onnx"`` or ``"readable"``).

    Raises:
        ValueError: unknown kind or a level outside 1-3.
        GeDumpError: an attr value GE cannot store.
    """
    return "".join(dump_chunks(graph, kind, level))


def dump_chunks(graph: ir.Graph, kind: str = "ge_proto", level: DumpLevel | int = DumpLevel.DUMP_ALL, *,
                advance: Callable[[int], None] | None = None) -> Iterator[str]:
    """:func:`dump_text` in pieces, for writing a file without holding its whole text: the text protobuf's printer
    gives for the encoded model (:mod:`gebench.io._ge_dump_text` builds it from cached per-value pieces).
    ``advance(n)``, when given, is called as ``n`` more nodes (of the graph and its subgraphs) are written.

    Raises:
        ValueError: unknown kind or a level outside 1-3 (at once).
        GeDumpError: an attr value GE cannot store (while iterating).
    """
    level = _check_level(level)
    advance = advance or _ignore
    if kind == "ge_proto":
        return ge_proto_chunks(graph, _options(level), advance=advance)
    if kind == "onnx":
        return ge_onnx_chunks(graph, level, advance=advance)
    if kind == "readable":
        text = _readable(ir.as_graph(graph))
        advance(_node_count(ir.as_graph(graph)))
        return iter([text])
    raise ValueError(f"unknown dump kind {kind!r}; expected one of {FORMATS}")


def _check_level(level: DumpLevel | int) -> DumpLevel:
    try:
        level = DumpLevel(int(level))
    except ValueError:
        level = DumpLevel.NO_DUMP
    if level == DumpLevel.NO_DUMP:
        raise ValueError(f"dump level {int(level)} writes nothing; use 1 (all), 2 (no weights) or 3 (relations only)")
    return level


def write_dumps(
    snapshots: Mapping[str, ir.Graph],
    out_dir: str | os.PathLike[str],
    *,
    graph_id: int = 0,
    level: DumpLevel | int = DumpLevel.DUMP_ALL,
    formats: Iterable[str] = DEFAULT_FORMATS,
    stages: str | int | None = None,
    start_index: int = 0,
    aclop: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> list[Path]:
    """Write GE-style dumps of stage snapshots and return the paths written, in order.

    Each stage (dict order) that passes the ``stages`` filter gets one file per format; every format keeps its
    own index counter starting at ``start_index`` and bumped only for files written, as GE does, so
    ``ge_proto_00000000_graph_0_PreRunBegin.txt`` and ``ge_onnx_00000000_graph_0_PreRunBegin.pbtxt`` pair up.
    Stage names are sanitized into the file name (``/\\:*?"<>|`` -> ``_``).

    Args:
        snapshots: stage suffix -> graph (for example ``"PreRunBegin"``, ``"RunCustomPassBeforeInfershape"``).
        out_dir: directory; created when missing.
        graph_id: the ``graph_<id>`` part of the names.
        level: DUMP_GE_GRAPH content level 1, 2 or 3.
        formats: any of ``"ge_proto"``, ``"onnx"``, ``"readable"``.
        stages: a DUMP_GRAPH_LEVEL value filtering the suffixes (``None`` writes every snapshot given).
        start_index: first file index.
        aclop: use the single-op scene names (``..._aclop_graph_<id>_...``).
        progress: called as ``progress(done, total)`` with counts of nodes written (``total`` sums the nodes,
            subgraphs included, of every file to write; at most about a hundred calls, the last with ``done ==
            total``).

    Raises:
        ValueError: a bad level or format name.
        GeDumpError: a graph holds an attr GE cannot store, or the directory cannot be written. Files of the
            stages before the failing one stay on disk; the failing file is not left half-written.
    """
    level = _check_level(level)
    kinds = list(dict.fromkeys(formats))
    for kind in kinds:
        if kind not in FORMATS:
            raise ValueError(f"unknown dump format {kind!r}; expected some of {FORMATS}")
    directory = Path(out_dir)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GeDumpError(f"cannot create dump directory {directory}: {exc}") from exc
    counters = {kind: start_index for kind in kinds}
    selected = {}
    for suffix, graph in snapshots.items():
        if stages is not None and not stage_selected(suffix, stages):
            _log.debug("stage %s not selected by DUMP_GRAPH_LEVEL=%s", suffix, stages)
            continue
        selected[suffix] = graph
    ordered = [k for k in FORMATS if k in kinds]
    counted = Progress(progress, sum(_node_count(ir.as_graph(g)) for g in selected.values()) * len(ordered)
                       if progress is not None else 0)
    # A stage that changed nothing hands over the same graph object as the dump point before it (see
    # gebench.fusion.snapshots.SnapshotMap), and a file's content depends only on the graph, the format and the
    # level: such a file is a copy of the one written for that graph. The copy is taken from a private hard link
    # to that file (made before its rename), so another process writing the same names meanwhile cannot leak in.
    repeats = Counter(id(g) for g in selected.values())
    kept: dict[tuple[int, str], Path] = {}  # (id of a repeated graph, format) -> the private link to its file
    written: list[Path] = []
    try:
        for suffix, graph in selected.items():
            for kind in ordered:
                path = directory / dump_file_name(kind, counters[kind], suffix, graph_id=graph_id, aclop=aclop)
                start = time.perf_counter()
                source = kept.get((id(graph), kind))
                if source is not None:
                    _copy_atomically(source, path)
                    counted.advance(_node_count(ir.as_graph(graph)))
                else:
                    keep = temporary_name(path) if repeats[id(graph)] > 1 else None
                    chunks = dump_chunks(graph, kind, level, advance=counted.advance)  # streamed
                    if _write_atomically(path, chunks, keep=keep) and keep is not None:
                        kept[(id(graph), kind)] = keep
                counters[kind] += 1
                written.append(path)
                _log.info("wrote %s in %.1f s%s", path, time.perf_counter() - start,
                          " (a copy: the same graph as an earlier dump point)" if source is not None else "")
    finally:
        for link in kept.values():
            link.unlink(missing_ok=True)
    counted.finish()
    return written


def _node_count(graph: ir.Graph) -> int:
    """Nodes of ``graph`` and of every subgraph below it."""
    return len(graph) + sum(len(sub) for sub in _all_subgraphs(graph))


def _ignore(count: int) -> None:
    return None


def write_dumps_from_env(snapshots: Mapping[str, ir.Graph], *, graph_id: int = 0,
                         settings: DumpSettings | None = None, start_index: int = 0) -> list[Path]:
    """Write the dumps the environment asks for (nothing when DUMP_GE_GRAPH is off). See :func:`write_dumps`.

    Like GE, falls back to the current directory when the DUMP_GRAPH_PATH directory cannot be created.
    """
    settings = dump_settings_from_env() if settings is None else settings
    if not settings.enabled or not settings.formats:
        return []
    directory = settings.directory
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # GE falls back to the current directory
        _log.warning("cannot create dump directory %s (%s); dumping to the current directory", directory, exc)
        directory = Path(".")
    return write_dumps(snapshots, directory, graph_id=graph_id, level=settings.level,
                       formats=settings.formats, stages=settings.stages, start_index=start_index)


def _write_atomically(path: Path, chunks: Iterable[str], *, keep: Path | None = None) -> bool:
    """Write ``chunks`` as UTF-8 through a uniquely named temporary file and a rename, so a failed write (an
    error while the chunks are made included) never leaves half a dump and several processes can dump into one
    folder (:func:`gebench._atomic.write_chunks_atomically`).

    ``keep``: also hard-link the finished file as ``keep`` (a private name for copies of it, see
    :func:`write_dumps`). Returns whether that link exists (a file system without hard links has none; the
    caller then writes the content again where it would have copied it).

    Raises:
        GeDumpError: the file cannot be written (names the file). Errors raised by ``chunks`` propagate.
    """
    try:
        return write_chunks_atomically(path, chunks, link=keep)
    except OSError as exc:
        raise _cannot_write(path, exc) from exc


def _copy_atomically(source: Path, path: Path) -> None:
    """Copy a dump written by this call of :func:`write_dumps` (its private link ``source``) to ``path``.

    Raises:
        GeDumpError: the copy cannot be written (names the file); ``path`` is not left half-written.
    """
    try:
        copy_file_atomically(source, path)
    except OSError as exc:
        raise _cannot_write(path, exc) from exc


def _cannot_write(path: Path, exc: OSError) -> GeDumpError:
    return GeDumpError(f"cannot write {path}: {exc.strerror or exc}; check that the dump directory is writable and "
                       "has space")


# ------------------------------------------------------------------------------------------------ reading
_ONNX_HEAD = re.compile(r"^\s*(ir_version|producer_name|opset_import|model_version)\s*:", re.MULTILINE)
_FIRST_FIELD = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)", re.MULTILINE)


def load_ge_dump(path: str | os.PathLike[str], *, progress: Callable[[int, int], None] | None = None) -> ir.Graph:
    """Load a ge_proto dump (text ModelDef) or a binary ModelDef (AIR) as an IR graph with its subgraphs.

    The content decides, not the name: current, 5-digit and nameless files all load. Cost: linear in the file
    size; a text dump laid out as protobuf's printers (gebench's and GE's) lay it out is split at C speed and each
    distinct op signature is parsed once (:mod:`gebench.io._ge_dump_read`), any other text is parsed whole. Then
    O(nodes + edges).

    ``progress(done, total)``, when given, is called with byte counts as a text dump is read (at most about a
    hundred calls, the last one with ``done == total``; not called for binary files or text parsed whole).

    Raises:
        GeDumpError: the file is missing, is a ge_onnx or ge_readable dump, is truncated or malformed (the
            message gives ``file:line:column``), or describes an inconsistent graph. No graph is returned then.
    """
    path = Path(path)
    data = _read_dump_bytes(path)
    if _looks_binary(data):
        model = ge_ir_pb2.ModelDef()
        try:
            model.ParseFromString(data)
        except pb_message.DecodeError as exc:
            raise GeDumpError(f"{path}: neither a text ge_proto dump nor a binary ModelDef (AIR): {exc}") from None
        return decode_model(model, source=str(path))
    if not _other_kind(data[:4096].decode("utf-8", "replace")):
        split = split_dump_text(data, str(path), progress)  # from the bytes: no decoded copy of the whole file
        if split is not None:
            del data  # the split keeps what it needs: the file's bytes go before the graph is built
            graph = split.build()
            if graph is not None:
                return graph
            data = _read_dump_bytes(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise GeDumpError(f"{path}:{line}: not UTF-8 text ({exc.reason}); is this a GE dump?") from None
    del data  # the text is as large: hold one of them while parsing
    try:
        return _parse_text(text, str(path), None, fast=False)
    except GeDumpError:
        data = text.encode("utf-8")
        model = _binary_model_or_none(data)  # a binary ModelDef whose first bytes happen to look like text
        if model is None:
            raise
        return decode_model(model, source=str(path))


def _read_dump_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise GeDumpError(f"cannot read GE dump {path}: {exc}") from exc


def _binary_model_or_none(data: bytes) -> ge_ir_pb2.ModelDef | None:
    model = ge_ir_pb2.ModelDef()
    try:
        model.ParseFromString(data)
    except pb_message.DecodeError:
        return None
    return model if model.graph and model.graph[0].op else None


def parse_ge_dump_text(text: str, *, source: str = "<text>",
                       progress: Callable[[int, int], None] | None = None) -> ir.Graph:
    """Parse the text of a ge_proto dump. See :func:`load_ge_dump` for what is accepted and raised, and for
    ``progress``.

    Text laid out as protobuf's printers lay it out is read by :func:`~gebench.io._ge_dump_read.read_dump_text`.
    Other large text is parsed by protobuf's C++ text parser (``protoc --encode`` from grpcio-tools) when that is
    installed, which is about ten times faster than the pure-Python parser; anything it rejects is parsed again
    by the Python parser, whose errors carry the line and column.
    """
    return _parse_text(text, source, progress, fast=True)


def _parse_text(text: str, source: str, progress: Callable[[int, int], None] | None, *, fast: bool) -> ir.Graph:
    """:func:`parse_ge_dump_text`; ``fast=False`` when :func:`read_dump_text` already declined the text."""
    _refuse_other_kinds(text, source)
    if fast:
        graph = read_dump_text(text, source, progress)
        if graph is not None:
            return graph
    model = _parse_with_protoc(text, source)
    if model is not None:
        return decode_model(model, source=source, locate=_LineIndex(text).locate)
    model = ge_ir_pb2.ModelDef()
    try:
        text_format.Parse(text, model)
    except text_format.ParseError as exc:
        if "has no field named" in str(exc) or "has no value named" in str(exc):
            # A newer GE may add fields; keep reading but say what was skipped.
            _log.warning("%s: %s; skipping fields this schema does not know", source, exc)
            model = ge_ir_pb2.ModelDef()
            try:
                text_format.Parse(text, model, allow_unknown_field=True)
            except text_format.ParseError as exc2:
                raise _parse_error(source, exc2) from None
        else:
            raise _parse_error(source, exc) from None
    index = _LineIndex(text)
    return decode_model(model, source=source, locate=index.locate)


#: Dumps smaller than this are parsed in-process (starting protoc costs about half a second).
_PROTOC_MIN_BYTES = 1 << 20


def _parse_with_protoc(text: str, source: str) -> ge_ir_pb2.ModelDef | None:
    """The ModelDef parsed by ``protoc --encode`` (C++), or None when unavailable, small, or rejected."""
    if len(text) < _PROTOC_MIN_BYTES or importlib.util.find_spec("grpc_tools") is None:
        return None
    root = Path(__file__).resolve().parents[2]
    schema = "gebench/io/proto/ge_ir.proto"
    if not (root / schema).is_file():
        return None
    command = [sys.executable, "-m", "grpc_tools.protoc", f"--proto_path={root}", "--encode=ge.proto.ModelDef", schema]
    try:
        done = subprocess.run(command, input=text.encode("utf-8"), capture_output=True, cwd=root, check=False)
    except OSError as exc:
        _log.debug("protoc not usable for %s: %s", source, exc)
        return None
    if done.returncode != 0:
        _log.debug("protoc rejected %s (%s); using the Python parser", source, done.stderr[:200])
        return None
    model = ge_ir_pb2.ModelDef()
    model.ParseFromString(done.stdout)
    return model


def _parse_error(source: str, exc: text_format.ParseError) -> GeDumpError:
    line, column = exc.GetLine(), exc.GetColumn()
    where = f"{source}:{line}:{column}" if line is not None else source
    message = str(exc)
    message = re.sub(r"^\d+:\d+ : ", "", message)
    hint = ""
    if "Expected" in message and ("}" in message or "end" in message.lower()):
        hint = " (the file looks cut short: was the dump still being written?)"
    return GeDumpError(f"{where}: malformed ge_proto dump: {message}{hint}")


def _other_kind(text: str) -> bool:
    """Whether ``text`` looks like a ge_onnx or ge_readable dump (:func:`_refuse_other_kinds` refuses those)."""
    return bool(_ONNX_HEAD.search(text[:4096]) or re.match(r"\s*graph\s*\{\s*node\s*\{", text)
                or text.lstrip().startswith('graph("'))


def _refuse_other_kinds(text: str, source: str) -> None:
    if _ONNX_HEAD.search(text[:4096]) or re.match(r"\s*graph\s*\{\s*node\s*\{", text):
        hint = ""
        name = parse_dump_name(source)
        if name is not None and name.kind == "onnx":
            sibling = Path(source).with_name(Path(source).name.replace("ge_onnx_", "ge_proto_", 1)[: -len(".pbtxt")]
                                             + ".txt")
            hint = f" (for example {sibling.name}, if it was written)"
        raise GeDumpError(f"{source}:1: this is a ge_onnx dump, which is lossy (no subgraph links, no dtype attrs, "
                          f"no strings below level 1); load the ge_proto_*.txt dump of the same stage instead{hint}")
    if text.lstrip().startswith("graph(\""):
        raise GeDumpError(f"{source}:1: this is a ge_readable dump, which cannot be loaded; load the ge_proto_*.txt "
                          "dump of the same stage instead")


def _looks_binary(data: bytes) -> bool:
    head = data[:512]
    if not head:
        return False
    if b"\x00" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(head) - 4  # a multi-byte character cut at the window edge is still text
    # Text format starts with a field name; a binary ModelDef starts with a field tag byte.
    return _FIRST_FIELD.match(head.decode("utf-8", "replace")) is None and not head.lstrip().startswith(b"#")


class _LineIndex:
    """Finds the line of an op in the dump text for error messages (computed only when an error occurs)."""

    def __init__(self, text: str) -> None:
        self._text = text

    def locate(self, graph_name: str, op_name: str | None) -> int | None:
        key = op_name if op_name is not None else graph_name
        quoted = 'name: "' + text_encoding.CEscape(key.encode("utf-8"), as_utf8=False) + '"'
        start = 0
        if op_name is not None:
            gq = 'name: "' + text_encoding.CEscape(graph_name.encode("utf-8"), as_utf8=False) + '"'
            start = max(self._text.find(gq), 0)
        pos = self._text.find(quoted, start)
        if pos < 0:
            pos = self._text.find(quoted)
        return None if pos < 0 else self._text.count("\n", 0, pos) + 1


def list_dumps(directory: str | os.PathLike[str]) -> list[tuple[DumpName, Path]]:
    """Every GE dump file in ``directory`` (not recursive), ordered by kind then index then name.

    Indices of different kinds need not match (GE keeps one counter per kind); group by ``(kind, graph_id,
    suffix)``.
    """
    out = []
    for path in Path(directory).iterdir():
        name = parse_dump_name(path.name)
        if name is not None and path.is_file():
            out.append((name, path))
    out.sort(key=lambda item: (FORMATS.index(item[0].kind), item[0].index, item[1].name))
    return out


# ------------------------------------------------------------------------------------------------ readable
def _readable(graph: ir.Graph) -> str:
    """GE's FX-like ``ge_readable`` text (spec §6.3; the users count and ``return`` form follow the spec's guess)."""
    lines: list[str] = []
    outputs = graph_outputs(graph)
    _readable_graph(graph, outputs, lines)
    for sub in graph.subgraphs.values():
        lines.append("")
        _readable_graph(sub, graph_outputs(sub), lines)
    return "\n".join(lines) + "\n"


def _readable_graph(graph: ir.Graph, outputs: list[tuple[ir.Node, int]], lines: list[str]) -> None:
    lines.append(f'graph("{graph.name}"):')
    out_count: dict[int, int] = {}
    for node, _ in outputs:
        out_count[node.id] = out_count.get(node.id, 0) + 1
    for node in graph.nodes():
        if node.op_type == "NetOutput":
            continue
        users = graph.num_uses(node) + out_count.get(node.id, 0)
        parts = []
        ins = []
        for port, prod in enumerate(graph.producers(node)):
            if prod is None:
                continue
            ref = f"%{prod[0].name}" + (f":{prod[1]}" if prod[1] else "")
            anchor = node.input_names[port]
            ins.append(f"{anchor}={ref}" if anchor else ref)
        if ins:
            parts.append(f"inputs = ({', '.join(ins)})")
        attrs = [f"{k}: {_readable_value(v)}" for k, v in node.attrs.items()]
        if attrs:
            parts.append(f"attrs = {{{', '.join(attrs)}}}")
        tail = f" ({', '.join(parts)})" if parts else ""
        lines.append(f"  %{node.name} : [#users={users}] = Node[type={node.op_type}]{tail}")
    lines.append("")
    rets = [f"%{n.name}" + (f":{p}" if p else "") for n, p in outputs]
    lines.append(f"  return ({', '.join(rets)})")


def _readable_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, DataType):
        return value.name
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, TensorValue):
        return f"tensor({value.dtype.name}{list(value.shape)})"
    if isinstance(value, TensorDesc):
        return f"desc({value.dtype.name}{list(value.shape)})"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_readable_value(v) for v in value) + "]"
    if isinstance(value, OpaqueAttr):
        return f"<{value.kind}>"
    if isinstance(value, bytes):
        return f"bytes[{len(value)}]"
    return repr(value)


# ------------------------------------------------------------------------------------------------ registration
_GE_PROTO_HEAD = re.compile(r"\A(?:\s*#[^\n]*\n)*\s*(graph\s*\{|attr\s*\{|name\s*:|ir_version\s*:|producer_name\s*:)")


def load_graph_file(path: str | os.PathLike[str]) -> ir.Graph:
    """Load a ``.txt`` file as a ge_proto dump when its content is one, otherwise as the IR text form.

    Raises:
        GeDumpError: a ge_proto (or ge_onnx) dump that cannot be read.
        ir.TextFormError: IR text that does not parse.
    """
    path = Path(path)
    with open(path, "rb") as fh:
        head = fh.read(4096)
    if _looks_binary(head) or _GE_PROTO_HEAD.match(head.decode("utf-8", "replace")):
        return load_ge_dump(path)
    return ir.parse_text(path.read_text(encoding="utf-8"))


def write_dump_dir(snapshots: Mapping[str, ir.Graph], out_dir: str | os.PathLike[str], *,
                   progress: Callable[[int, int], None] | None = None) -> list[Path]:
    """``gebench compile --dump-dir``: every snapshot given, in the order given, under GE's file names, with the
    content level and formats of DUMP_GE_GRAPH / DUMP_GRAPH_FORMAT when set (level 1, ge_proto + onnx otherwise).

    The caller orders the snapshots (``gebench.api.write_dumps`` puts GE's dump points first). Raises as
    :func:`write_dumps`.
    """
    settings = dump_settings_from_env()
    level = settings.level if settings.enabled else DumpLevel.DUMP_ALL
    return write_dumps(snapshots, out_dir, level=level, formats=settings.formats, progress=progress)
