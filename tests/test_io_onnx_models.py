"""ONNX import of whole models: the bundled assets and the light_* CNNs shipped in the onnx wheel."""

from __future__ import annotations

import importlib.util
import time
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from gebench import ir
from gebench.io import load_onnx

ASSETS = Path(__file__).resolve().parents[1] / "assets"
LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
ASSET_NAMES = ["matmul_add", "add_zero", "grouped_conv", "concat_relu", "small_cnn", "small_transformer"]
LIGHT_NAMES = ["bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50", "shufflenet",
               "squeezenet", "vgg19", "zfnet512"]


def _make_models_module():
    spec = importlib.util.spec_from_file_location("gebench_assets_make_models", ASSETS / "make_models.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_assets_match_the_script() -> None:
    built = _make_models_module().build_all()
    assert sorted(built) == sorted(ASSET_NAMES)
    for name, data in built.items():
        path = ASSETS / f"{name}.onnx"
        assert path.read_bytes() == data, f"{path.name} is stale: run python assets/make_models.py"
        assert len(data) < 200_000


def _types(graph: ir.Graph) -> Counter:
    return Counter(n.op_type for n in graph.nodes())


def test_asset_matmul_add() -> None:
    g = load_onnx(ASSETS / "matmul_add.onnx")
    mm, add = g.node_by_name("matmul"), g.node_by_name("add")
    assert (mm.op_type, add.op_type) == ("BatchMatMulV2", "Add")
    assert g.producer(add, 0) == (mm, 0)
    assert g.producer(mm, 0) == (g.node_by_name("x"), 0)
    assert mm.outputs[0].shape == (4, 8) and add.outputs[0].shape == (4, 8)


def test_asset_add_zero_const_is_zero() -> None:
    g = load_onnx(ASSETS / "add_zero.onnx")
    add = g.node_by_name("add_zero")
    const, _ = g.producer(add, 1)
    assert const.op_type == "Const"
    assert not np.any(const.attrs["value"].array) and const.attrs["value"].shape == (8,)
    assert g.uses(add, 0) == [(g.node_by_name("relu"), 0)]


def test_asset_grouped_conv() -> None:
    conv = load_onnx(ASSETS / "grouped_conv.onnx").node_by_name("grouped_conv")
    assert conv.op_type == "Conv2D" and conv.attrs["groups"] == 4
    assert conv.attrs["pads"] == [1, 1, 1, 1] and conv.attrs["strides"] == [1, 1, 1, 1]
    assert conv.outputs[0].shape == (1, 8, 16, 16)


def test_asset_concat_relu() -> None:
    g = load_onnx(ASSETS / "concat_relu.onnx")
    concat = g.node_by_name("concat")
    assert concat.op_type == "ConcatD" and concat.attrs["concat_dim"] == 1 and concat.attrs["N"] == 2
    assert concat.input_names == ["x0", "x1"]
    assert [g.producer(concat, p)[0].name for p in range(2)] == ["a", "b"]
    assert [g.node_by_name(n).attrs["index"] for n in ("a", "b")] == [0, 1]
    assert g.node_by_name("relu").outputs[0].shape == (1, 8, 8, 8)


def test_asset_small_cnn() -> None:
    g = load_onnx(ASSETS / "small_cnn.onnx")
    types = _types(g)
    assert types["Conv2D"] == 4 and types["BatchNorm"] == 4 and types["Relu"] == 4
    assert types["MaxPoolV3"] == 1 and types["MatMulV2"] == 1 and types["GlobalAveragePool"] == 1
    assert "Conv" not in types and "Gemm" not in types
    net = g.node_by_name("Node_Output")
    assert net.inputs[0].shape == (1, 10)


def test_asset_small_transformer() -> None:
    g = load_onnx(ASSETS / "small_transformer.onnx")
    types = _types(g)
    assert types["BatchMatMulV2"] == 16 and types["SoftmaxV2"] == 2 and types["LayerNorm"] == 2
    assert types["Transpose"] == 8 and types["Reshape"] == 8 and types["RealDiv"] == 4
    assert "MatMul" not in types and "LayerNormalization" not in types
    net = g.node_by_name("Node_Output")
    assert [d.shape for d in net.inputs] == [(1, 8, 32), (1, 8)]
    assert all(d.dtype == ir.DataType.DT_FLOAT for n in g.nodes() if n.op_type != "Const" for d in n.outputs)


@pytest.mark.parametrize("name", ASSET_NAMES)
def test_asset_imports_and_verifies(name: str) -> None:
    model = onnx.load(ASSETS / f"{name}.onnx")
    g = load_onnx(ASSETS / f"{name}.onnx")
    g.verify()
    consts = {n.name: n for n in g.nodes_of_type("Const")}
    for k, tensor in enumerate(sorted(model.graph.initializer, key=lambda t: t.name)):
        value = consts[f"{tensor.name}_Initializer_{k}"].attrs["value"]
        np.testing.assert_array_equal(value.array, numpy_helper.to_array(tensor))
    assert all(d.shape != (ir.UNKNOWN_RANK,) for n in g.nodes() for d in n.outputs)


def test_light_models_import_and_verify() -> None:
    """All nine light_* CNNs of the onnx wheel import; the whole set must stay well under a few seconds."""
    timings = {}
    start = time.perf_counter()
    for name in LIGHT_NAMES:
        t0 = time.perf_counter()
        g = load_onnx(LIGHT / f"light_{name}.onnx")
        timings[name] = time.perf_counter() - t0
        g.verify()
        types = _types(g)
        assert types["NetOutput"] == 1 and types["Data"] == 1
        assert not {"Conv", "Gemm", "MaxPool", "AveragePool", "BatchNormalization"} & set(types)
        assert all(d.shape != (ir.UNKNOWN_RANK,) for n in g.nodes() for d in n.outputs), name
    total = time.perf_counter() - start
    assert total < 20.0, timings
    dense = load_onnx(LIGHT / "light_densenet121.onnx")
    assert len(dense.nodes_of_type("Conv2D")) == 121 and len(dense.nodes_of_type("ConcatD")) == 58
