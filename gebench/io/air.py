"""AIR files: GE's binary ``ge.proto.ModelDef``, the input of ``atc --framework=1``.

An AIR file holds the same ModelDef a ge_proto dump prints as text, serialized as protobuf binary: the root
graph first, every subgraph after it, Const weights inline (``attr "value"``), and the build-info model attrs.
``save_air`` writes everything (DUMP_GE_GRAPH=1 content, without the dump-only
``_src_out_peer_index_for_ge_txt_load`` and graph option attrs); ``load_air`` reads any binary ModelDef back.
"""

from __future__ import annotations

import os
from pathlib import Path

from google.protobuf import message as pb_message

from gebench import ir
from gebench._atomic import write_bytes_atomically

from ._ge_dump_codec import EncodeOptions, GeDumpError, decode_model, encode_model
from .proto import ge_ir_pb2

__all__ = ["save_air", "load_air", "air_bytes"]

_AIR_OPTIONS = EncodeOptions(const_values=True, framework_defs=True, graph_options=False, peer_index=False)


def air_bytes(graph: ir.Graph) -> bytes:
    """The AIR (binary ModelDef) encoding of ``graph`` (an ``ir.Graph`` or ``ge.graph.Graph``); the model is named
    after the graph. O(graph size).

    Raises:
        GeDumpError: an attr value GE cannot store.
    """
    graph = ir.as_graph(graph)
    return encode_model(graph, _AIR_OPTIONS, model_name=graph.name).SerializeToString(deterministic=True)


def save_air(graph: ir.Graph, path: str | os.PathLike[str]) -> Path:
    """Write ``graph`` (with its subgraphs and weights) as an AIR file and return the path.

    The file is written to a uniquely named temporary file and renamed (:mod:`gebench._atomic`), so a failure
    leaves no half-written AIR behind and concurrent writers never share a temporary file. The parent directory
    is created when missing.

    Raises:
        GeDumpError: an attr value GE cannot store, or the file cannot be written.
    """
    path = Path(path)
    data = air_bytes(graph)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomically(path, data)
    except OSError as exc:
        raise GeDumpError(f"cannot write AIR file {path}: {exc}") from exc
    return path


def load_air(path: str | os.PathLike[str]) -> ir.Graph:
    """Read an AIR file (binary ModelDef) as an IR graph with its subgraphs.

    Raises:
        GeDumpError: the file is missing, is not a binary ModelDef (for example a text dump: use
            ``load_ge_dump``), is truncated, or describes an inconsistent graph.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise GeDumpError(f"cannot read AIR file {path}: {exc}") from exc
    model = ge_ir_pb2.ModelDef()
    try:
        model.ParseFromString(data)
    except pb_message.DecodeError as exc:
        raise GeDumpError(f"{path}: not a binary ModelDef (AIR) or cut short: {exc}; a text ge_proto dump loads "
                          "with gebench.io.load_ge_dump") from None
    return decode_model(model, source=str(path))
