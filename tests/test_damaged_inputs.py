"""Random damage to input files (truncation, flipped bytes, deleted lines): each reader either reads the file or
raises its documented error naming the file, quickly, and writes nothing next to it.

* ONNX models (``gebench.io.load_onnx`` / ``gebench.load``): ``OnnxImportError`` (``UnsupportedOnnxOpError`` is
  one) -- or the damaged model still imports;
* GE dumps (``gebench.io.load_ge_dump``): ``GeDumpError``;
* custom-op declarations (``gebench.ops.load_custom_ops``): ``CustomOpError``.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gebench
from gebench import ir

#: the most seconds one damaged file may take to be read or refused (a hang shows up as far more)
BOUND = 20.0

SETTINGS = settings(max_examples=100, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _onnx_bytes() -> bytes:
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.arange(8, dtype=np.float32).reshape(2, 4), "w")
    b = numpy_helper.from_array(np.ones(4, dtype=np.float32), "b")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"], name="mm"),
             helper.make_node("Add", ["mm", "b"], ["add"], name="add"),
             helper.make_node("Relu", ["add"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "damaged", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])], [w, b])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()


def _dump_bytes() -> bytes:
    from ge.es.all import Relu
    from ge.es.graph_builder import GraphBuilder

    from gebench.io.ge_dump import dump_text

    b = GraphBuilder("damaged")
    x = b.create_input(0, shape=[2, 3])
    graph = b.build_and_reset([Relu(x * x)])
    return dump_text(graph.ir, "ge_proto").encode("utf-8")


def _custom_ops_bytes() -> bytes:
    return json.dumps({"DamagedOp": {
        "inputs": [{"name": "x", "kind": "required"}, {"name": "bias", "kind": "optional"}],
        "outputs": ["y"],
        "attrs": [{"name": "axes", "type": "ListInt", "default": [0, 1]},
                  {"name": "alpha", "type": "Float", "default": "1.0f"},
                  {"name": "mode", "type": "String", "required": True}],
        "subgraphs": ["body"], "dtypes": "TensorType({DT_FLOAT, DT_FLOAT16})"}}, indent=1).encode("utf-8")


@st.composite
def damage(draw: st.DrawFn, original: bytes) -> bytes:
    """``original`` truncated, with bytes flipped, or with lines deleted (one or more of these)."""
    data = bytearray(original)
    kinds = draw(st.lists(st.sampled_from(["truncate", "flip", "delete_lines"]), min_size=1, max_size=3))
    for kind in kinds:
        if not data:
            break
        if kind == "truncate":
            data = data[:draw(st.integers(0, len(data) - 1))]
        elif kind == "flip":
            for _ in range(draw(st.integers(1, 8))):
                pos = draw(st.integers(0, len(data) - 1))
                data[pos] ^= draw(st.integers(1, 255))
        else:
            lines = bytes(data).split(b"\n")
            for _ in range(draw(st.integers(1, 3))):
                if len(lines) > 1:
                    del lines[draw(st.integers(0, len(lines) - 1))]
            data = bytearray(b"\n".join(lines))
    return bytes(data)


def _check(name: str, data: bytes, read: Callable[[Path], object], errors: tuple[type[BaseException], ...]) -> None:
    """Write ``data`` as ``name`` in a fresh folder, read it, and check the outcome."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        start = time.monotonic()
        try:
            read(path)
        except errors as exc:
            assert str(path) in str(exc), f"the error does not name the file: {type(exc).__name__}: {exc}"
            assert "Traceback" not in str(exc)
        elapsed = time.monotonic() - start
        assert elapsed < BOUND, f"reading took {elapsed:.1f} s"
        assert sorted(os.listdir(folder)) == [name], "something was written next to the input"


@pytest.fixture(autouse=True)
def _custom_ops_state(monkeypatch):
    from gebench.ops import _catalogue

    monkeypatch.delenv("GEBENCH_CUSTOM_OPS", raising=False)
    saved = _catalogue._snapshot()
    yield
    _catalogue._restore(saved)


@pytest.mark.timeout(600)
@SETTINGS
@given(data=damage(_onnx_bytes()))
def test_damaged_onnx_files(data: bytes) -> None:
    from gebench.io import OnnxImportError, load_onnx

    _check("model.onnx", data, load_onnx, (OnnxImportError,))
    _check("model.onnx", data, gebench.load, (OnnxImportError,))


@pytest.mark.timeout(600)
@SETTINGS
@given(data=damage(_dump_bytes()))
def test_damaged_ge_dumps(data: bytes) -> None:
    from gebench.io import GeDumpError, load_ge_dump

    _check("ge_proto_00000000_graph_0_PreRunBegin.txt", data, load_ge_dump, (GeDumpError,))
    # through gebench.load a .txt file that no longer looks like a dump is read as IR text
    _check("ge_proto_00000000_graph_0_PreRunBegin.txt", data, gebench.load, (GeDumpError, ir.TextFormError))


@pytest.mark.timeout(600)
@SETTINGS
@given(data=damage(_custom_ops_bytes()))
def test_damaged_custom_op_files(data: bytes) -> None:
    from gebench import ops

    _check("ops.json", data, ops.load_custom_ops, (ops.CustomOpError,))


def test_the_undamaged_files_read() -> None:
    from gebench import ops
    from gebench.io import load_ge_dump, load_onnx

    with tempfile.TemporaryDirectory() as folder:
        onnx_path, dump_path, ops_path = (Path(folder) / n for n in ("m.onnx", "d.txt", "ops.json"))
        onnx_path.write_bytes(_onnx_bytes())
        dump_path.write_bytes(_dump_bytes())
        ops_path.write_bytes(_custom_ops_bytes())
        assert load_onnx(onnx_path).node_by_name("relu").op_type == "Relu"
        assert len(load_ge_dump(dump_path)) == 4
        assert ops.load_custom_ops(ops_path) == ["DamagedOp"]
