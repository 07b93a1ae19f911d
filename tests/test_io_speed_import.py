"""ONNX import from a file: weights are views of the file's bytes, and the file reader gives the same graph as
the general path (a ModelProto goes through the general path, so the two are compared model by model)."""

import mmap
import platform
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from gebench.io import OnnxImportError, load_onnx
from gebench.io import _onnx_source as source
from gebench.io.onnx_import import _check_model
from gebench.ir import to_text

OPSET = 17


def _model(nodes, inputs, outputs, inits=(), value_info=(), opset=OPSET):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits), value_info=list(value_info))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _vi(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def _transformer_block(rng, big=False):
    """MatMul+Add, Gemm (expanded by GE into three nodes), Reshape with a shape initializer, Softmax."""
    d = 256 if big else 8
    w = numpy_helper.from_array(rng.standard_normal((d, d)).astype(np.float32), "w")  # > 64 KiB when big
    b = numpy_helper.from_array(rng.standard_normal((d,)).astype(np.float32), "b")
    shape = numpy_helper.from_array(np.array([2, 2, d // 2], np.int64), "shape")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["mm"], name="mm"),
        helper.make_node("Add", ["mm", "b"], ["add"], name="add"),
        helper.make_node("Gemm", ["add", "w", "b"], ["gemm"], alpha=2.0, beta=0.5, name="gemm"),
        helper.make_node("Softmax", ["gemm"], ["sm"], axis=-1, name="sm"),
        helper.make_node("Reshape", ["sm", "shape"], ["y"], name="reshape"),
        helper.make_node("Relu", ["w"], ["wr"]),  # an unnamed node reading a weight
    ]
    return _model(nodes, [_vi("x", [2, d])], [_vi("y", [2, 2, d // 2]), _vi("wr", [d, d])], [w, b, shape])


def _dtype_model(rng):
    inits, nodes, outputs = [], [], []
    for i, dt in enumerate([np.float32, np.float16, np.float64, np.int8, np.uint8, np.int16, np.uint16, np.int32,
                            np.int64, np.uint32, np.uint64, np.bool_, np.complex64]):
        arr = rng.standard_normal((3, 2)) > 0 if dt is np.bool_ else (rng.standard_normal((3, 2)) * 9).astype(dt)
        inits.append(numpy_helper.from_array(arr, f"c{i}"))
        nodes.append(helper.make_node("Identity", [f"c{i}"], [f"o{i}"]))
        outputs.append(helper.make_tensor_value_info(f"o{i}", inits[-1].data_type, [3, 2]))
    inits.append(helper.make_tensor("typed", TensorProto.FLOAT, [2], [1.5, 2.5]))  # typed field, not raw
    nodes.append(helper.make_node("Identity", ["typed"], ["ot"]))
    outputs.append(_vi("ot", [2]))
    inits.append(helper.make_tensor("bf", TensorProto.BFLOAT16, [2], np.array([1, 2], np.uint16).tobytes(), raw=True))
    nodes.append(helper.make_node("Identity", ["bf"], ["obf"]))
    outputs.append(_vi("obf", [2], TensorProto.BFLOAT16))
    inits.append(numpy_helper.from_array(np.zeros((0, 3), np.float32), "empty"))
    nodes.append(helper.make_node("Identity", ["empty"], ["oe"]))
    outputs.append(_vi("oe", [0, 3]))
    return _model(nodes, [], outputs, inits)


def _if_model():
    then = helper.make_graph([helper.make_node("Add", ["x", "b"], ["t"])], "then", [], [_vi("t", [2])])
    other = helper.make_graph([helper.make_node("Mul", ["x", "k"], ["e"])], "else", [], [_vi("e", [2])],
                              [numpy_helper.from_array(np.full((2,), 3, np.float32), "k")])
    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
             helper.make_node("Greater", ["s", "zero"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other),
             helper.make_node("Relu", ["y"], ["z"])]
    inits = [numpy_helper.from_array(np.ones(2, np.float32), "b"), numpy_helper.from_array(np.array(0, np.float32), "zero")]
    return _model(nodes, [_vi("x", [2])], [_vi("z", [2])], inits, opset=13)


def _models():
    rng = np.random.default_rng(0)
    block = _transformer_block(rng)
    yield "block", block
    yield "big", _transformer_block(rng, big=True)
    yield "inferred", onnx.shape_inference.infer_shapes(block)  # value infos for every tensor, as exporters write
    yield "dtypes", _dtype_model(rng)
    yield "if", _if_model()
    partial = _model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", [2])],
                     [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    yield "partial", partial  # the checker needs its output completed first


def _initializer_consts(graph):
    return {n.name: n for n in graph.nodes() if n.op_type == "Const" and "_Initializer_" in n.name}


def _root_buffer(arr):
    while isinstance(arr, np.ndarray):
        arr = arr.base
    return arr


@pytest.mark.parametrize("name, model", list(_models()), ids=[name for name, _ in _models()])
def test_the_file_reader_gives_the_graph_of_the_general_path(tmp_path, name, model):
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, path)
    from_file = load_onnx(path)
    from_proto = load_onnx(onnx.load(path))  # a ModelProto always takes the general path
    assert to_text(from_file) == to_text(from_proto)
    from_file.verify()
    assert source.read_model_file(path, str(path), _check_model) is not None, "the file reader was not used"
    data = path.read_bytes()
    consts = _initializer_consts(from_file).values()
    shared = [n for n in consts if isinstance(_root_buffer(n.attrs["value"].array), bytes)]
    assert len(shared) == sum(1 for t in model.graph.initializer if t.HasField("raw_data"))
    for node in shared:
        assert _root_buffer(node.attrs["value"].array) == data


def _model_file_contents(mf):
    return (mf.proto.SerializeToString(), mf.value_info.SerializeToString(), mf.node_count, mf.initializer_count,
            [n.SerializeToString() for n in mf.nodes()], [t.SerializeToString() for t in mf.initializers()])


@pytest.mark.parametrize("name, model", list(_models()), ids=[name for name, _ in _models()])
def test_the_inference_result_is_split_without_a_second_walk_when_inference_only_appended(tmp_path, monkeypatch,
                                                                                           name, model):
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, path)
    walks = []
    split_graph = source._split_graph
    monkeypatch.setattr(source, "_split_graph", lambda out: walks.append(1) or split_graph(out))
    fast = source.read_model_file(path, str(path), _check_model)
    walked_once = bool(walks)
    # the same parts when the inference result is always walked
    monkeypatch.setattr(source, "_split_appended", lambda *args: None)
    walked = source.read_model_file(path, str(path), _check_model)
    assert _model_file_contents(fast) == _model_file_contents(walked)
    # a plain file (no value infos, weights small enough to stay in what inference parses) is not walked twice;
    # value infos in the file, large weights left out of what inference parses, or an output type inference
    # completes, take the walk
    assert walked_once == (name in ("inferred", "big", "partial"))


def test_a_graph_that_inference_changes_in_place_takes_the_walk(tmp_path, monkeypatch):
    model = _transformer_block(np.random.default_rng(5))
    path = tmp_path / "block.onnx"
    onnx.save(model, path)
    infer = source._c_shape_inference.infer_shapes

    def rename_a_node(data, *args):  # an inference result whose graph differs before the value infos
        return infer(data, *args).replace(b"reshape", b"reshapf", 1)

    monkeypatch.setattr(source._c_shape_inference, "infer_shapes", rename_a_node)
    mf = source.read_model_file(path, str(path), _check_model)
    assert "reshapf" in [n.name for n in mf.nodes()]


def test_weights_are_read_only_views_of_the_file_bytes(tmp_path):
    rng = np.random.default_rng(1)
    path = tmp_path / "big.onnx"
    model = _transformer_block(rng, big=True)
    onnx.save(model, path)
    graph = load_onnx(path)
    expected = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    for name, node in _initializer_consts(graph).items():
        arr = node.attrs["value"].array
        buffer = _root_buffer(arr)
        assert isinstance(buffer, bytes) and len(buffer) == path.stat().st_size
        assert np.shares_memory(arr, np.frombuffer(buffer, np.uint8))
        assert not arr.flags.writeable
        with pytest.raises(ValueError):
            arr[...] = 0  # nothing may write into the file's bytes
        np.testing.assert_array_equal(arr, expected[name.split("_Initializer_")[0]])


def test_external_data_is_memory_mapped_read_only(tmp_path):
    rng = np.random.default_rng(2)
    model = _transformer_block(rng, big=True)
    path = tmp_path / "ext.onnx"
    onnx.save(model, path, save_as_external_data=True, all_tensors_to_one_file=True, location="ext.bin",
              size_threshold=0)
    graph = load_onnx(path)
    assert to_text(graph) == to_text(load_onnx(onnx.load(path)))
    mapped = [n for n in _initializer_consts(graph).values() if isinstance(_root_buffer(n.attrs["value"].array),
                                                                             mmap.mmap)]
    assert len(mapped) == len(model.graph.initializer)
    for node in mapped:
        arr = node.attrs["value"].array
        assert not arr.flags.writeable
        with pytest.raises(ValueError):
            arr.flat[0] = 1


def test_large_raw_data_is_left_out_of_what_inference_parses(tmp_path):
    rng = np.random.default_rng(3)
    path = tmp_path / "big.onnx"
    onnx.save(_transformer_block(rng, big=True), path)
    data = path.read_bytes()
    graph_tag, start, end, _ = source._model_fields(data)
    inits = source._graph_initializers(data, start, end)
    model = onnx.load(path)
    for init, tensor in zip(inits, model.graph.initializer, strict=True):
        assert data[init.raw_start:init.raw_end] == tensor.raw_data  # the walk finds each tensor's bytes
    big = [i for i in inits if i.raw_end - i.raw_start > source.STRIP_BYTES]
    assert big
    skeleton = source._skeleton(data, graph_tag, start, end, big)
    assert len(skeleton) < len(data) - sum(i.raw_end - i.raw_start for i in big) + 64
    stripped = onnx.ModelProto.FromString(skeleton)
    assert [list(t.dims) for t in stripped.graph.initializer] == [list(t.dims) for t in model.graph.initializer]
    assert len(stripped.graph.node) == len(model.graph.node)


def test_progress_counts_initializers_and_nodes(tmp_path):
    rng = np.random.default_rng(4)
    path = tmp_path / "block.onnx"
    model = _transformer_block(rng)
    onnx.save(model, path)
    calls = []
    load_onnx(path, progress=lambda done, total: calls.append((done, total)))
    total = len(model.graph.initializer) + len(model.graph.node)
    assert calls[-1] == (total, total)
    assert all(t == total for _, t in calls)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert len(calls) <= 101


def test_what_the_checker_or_importer_refuses_is_refused_from_a_file_as_from_a_proto(tmp_path):
    negative = _model([helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Relu", ["y"], ["z"])],
                      [_vi("x", [2])], [_vi("z", [2])], value_info=[_vi("y", [2])])
    negative.graph.value_info[0].type.tensor_type.shape.dim[0].dim_value = -5
    duplicate = _model([helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Sigmoid", ["x"], ["y"])],
                       [_vi("x", [2])], [_vi("y", [2])])
    for name, model in (("negative", negative), ("duplicate", duplicate)):
        path = tmp_path / f"{name}.onnx"
        onnx.save(model, path)
        with pytest.raises(OnnxImportError) as from_file:
            load_onnx(path)
        with pytest.raises(OnnxImportError) as from_proto:
            load_onnx(onnx.load(path))
        assert str(from_file.value).split(": ", 1)[1] == str(from_proto.value).split(": ", 1)[1]


def test_damaged_files_are_reported_as_before(tmp_path):
    rng = np.random.default_rng(5)
    path = tmp_path / "cut.onnx"
    data = _transformer_block(rng).SerializeToString()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(OnnxImportError, match="not an ONNX model"):
        load_onnx(path)
    assert source.read_model_file(path, str(path), lambda proto, name: None) is None


def test_importing_the_reader_runs_no_helper_process_and_finds_malloc_trim():
    # the C heap is trimmed through glibc's malloc_trim, found among the symbols already loaded: looking the
    # library up by name would run ldconfig in a child process at import time
    code = ("import resource, gebench.io, gebench.io._onnx_source as s; "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, s._MALLOC_TRIM is not None)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == "0"
    if sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc":
        assert out[1] == "True"
