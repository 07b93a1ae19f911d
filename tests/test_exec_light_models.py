"""The nine ``light_*`` CNNs shipped with onnx, imported with gebench and executed on the reference
executor, against onnxruntime on the same model.

The shipped models build every weight with ``ConstantOfShape`` (one repeated value), which makes their
outputs uniform and any comparison vacuous. Before the comparison each such weight with at most
``RANDOM_LIMIT`` elements is replaced by a seeded random initializer (He-scaled normal for >= 2-D
weights, uniform [0.5, 1.5] for 1-D ones such as biases and BatchNorm statistics). The few larger ones
(the fully connected heads of AlexNet, ZFNet and VGG-19, up to 100M elements) stay constant to keep
memory and time reasonable; for those models the features entering that layer are compared as an
extra output. A final Softmax is dropped so that logits, not a saturated softmax, are compared.

Tolerance: ``max |got - want| <= REL_TOL * max |want|`` per output (float32; both sides sum in
different orders, observed worst 1.2e-6).
"""

from __future__ import annotations

import os
import time
import warnings
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import numpy_helper

from gebench.exec import execute

io = pytest.importorskip("gebench.io")

LIGHT_DIR = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
MODELS = ["bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50", "shufflenet", "squeezenet",
          "vgg19", "zfnet512"]
RANDOM_LIMIT = 1 << 22
REL_TOL = 1e-5


def randomised_model(path: str, seed: int = 0) -> onnx.ModelProto:
    """The model with seeded random weights and logits (and head features) as outputs (module docstring)."""
    model = onnx.load(path)
    rng = np.random.default_rng(seed)
    inits = {t.name: t for t in model.graph.initializer}
    kept_nodes, new_inits, constant = [], [], set()
    for node in model.graph.node:
        if node.op_type == "ConstantOfShape" and node.input[0] in inits:
            shape = [int(v) for v in numpy_helper.to_array(inits[node.input[0]])]
            if int(np.prod(shape)) > RANDOM_LIMIT:
                kept_nodes.append(node)
                constant.add(node.output[0])
                continue
            if len(shape) >= 2:
                value = rng.standard_normal(shape) * np.sqrt(2.0 / int(np.prod(shape[1:])))
            else:
                value = rng.uniform(0.5, 1.5, shape)
            new_inits.append(numpy_helper.from_array(value.astype(np.float32), node.output[0]))
        else:
            kept_nodes.append(node)
    del model.graph.node[:]
    model.graph.node.extend(kept_nodes)
    model.graph.initializer.extend(new_inits)
    producer = {out: node for node in model.graph.node for out in node.output}
    for out in model.graph.output:
        node = producer.get(out.name)
        if node is not None and node.op_type == "Softmax":
            out.name = node.input[0]
            model.graph.node.remove(node)
    for node in model.graph.node:
        if any(name in constant for name in node.input):
            model.graph.output.append(onnx.helper.make_tensor_value_info(node.input[0], onnx.TensorProto.FLOAT, None))
            break
    return model


@pytest.mark.parametrize("name", MODELS)
def test_light_model_matches_onnxruntime(name: str) -> None:
    path = os.path.join(LIGHT_DIR, f"light_{name}.onnx")
    model = randomised_model(path)
    graph = io.load_onnx(model)
    data = graph.nodes_of_type("Data")
    assert len(data) == 1
    x = np.random.default_rng(1).standard_normal(data[0].outputs[0].shape).astype(np.float32)
    start = time.perf_counter()
    got = execute(graph, [x])
    elapsed = time.perf_counter() - start
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        options = ort.SessionOptions()
        options.log_severity_level = 3
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    want = session.run(None, {data[0].name: x})
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        scale = float(np.abs(w).max())
        assert scale > 0 and float(w.std()) > 1e-3 * scale  # the comparison is not vacuous
        assert float(np.abs(g - w).max()) <= REL_TOL * scale
    assert elapsed < 60, f"reference execution of {name} took {elapsed:.1f}s"


ASSETS = sorted((Path(__file__).parent.parent / "assets").glob("*.onnx"))


def test_bundled_assets_exist() -> None:
    assert len(ASSETS) >= 6


@pytest.mark.parametrize("path", ASSETS, ids=[p.stem for p in ASSETS])
def test_bundled_model_matches_onnxruntime(path: Path) -> None:
    """The small models in assets/ (CNN, transformer with LayerNormalization/Erf/Softmax, ...)."""
    model = onnx.load(str(path))
    graph = io.load_onnx(model)
    initialised = {t.name for t in model.graph.initializer}
    rng = np.random.default_rng(7)
    feeds = {}
    for value in model.graph.input:
        if value.name in initialised:
            continue
        tensor = value.type.tensor_type
        shape = [d.dim_value or 1 for d in tensor.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        feeds[value.name] = (rng.standard_normal(shape) if dtype.kind == "f" else rng.integers(0, 4, shape)).astype(dtype)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    got = execute(graph, feeds)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5 * float(np.abs(w).max()))
