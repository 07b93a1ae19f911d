"""A small GPT-style transformer exported from PyTorch, imported with gebench, executed on the reference
executor, and compiled through the example passes.

The model: token embedding + learned positions, 2 pre-LayerNorm blocks (d_model 64, 4 heads, causal
self-attention, exact-GELU MLP of width 256, residuals), a final LayerNorm and a linear head (vocab 100).
It is exported with the TorchScript exporter (``dynamo=False``, opset 17) and loaded with ``gebench.load``.
The causal mask is a registered buffer, as in common GPT code, so the export holds it as a constant; a mask
built in ``forward`` with ``torch.tril`` exports as ONNX ``Trilu``, for which GE's ONNX parser registers an
expanding plugin whose resulting subgraph the spec does not give, so gebench refuses it by name.

Tolerance: ``rtol=1e-4, atol=1e-5`` on float32 logits of magnitude ~2 (both sides sum in different orders;
observed worst absolute difference about 6e-7 against torch and onnxruntime).

torch is a test dependency (the ``torch`` extra, installed by ``scripts/test.sh``): without it these tests
fail with that instruction instead of skipping.
"""

from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import gebench
from gebench import ir, ops

REPO = Path(__file__).resolve().parent.parent
VOCAB, D_MODEL, HEADS, LAYERS, SEQ, BATCH = 100, 64, 4, 2, 16, 2
RTOL, ATOL = 1e-4, 1e-5


def _torch() -> Any:
    """The ``torch`` module, or a test failure telling how to install it (never a skip)."""
    try:
        import torch
    except ImportError as exc:
        reason = str(exc)
    else:
        return torch
    pytest.fail(f"torch is not installed ({reason}); this test needs the CPU build torch==2.13.0 from the "
                "'torch' extra: run scripts/test.sh (it installs '.[dev,torch]'), or "
                ".venv/bin/pip install -e '.[dev,torch]'", pytrace=False)


def _build_model(torch: Any) -> Any:
    """The GPT-style model (module docstring), in eval mode, with weights from ``torch.manual_seed(0)``."""
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln1 = nn.LayerNorm(D_MODEL)
            self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL)
            self.proj = nn.Linear(D_MODEL, D_MODEL)
            self.ln2 = nn.LayerNorm(D_MODEL)
            self.fc = nn.Linear(D_MODEL, 4 * D_MODEL)
            self.act = nn.GELU()
            self.out = nn.Linear(4 * D_MODEL, D_MODEL)
            causal = torch.tril(torch.ones(SEQ, SEQ, dtype=torch.bool))
            self.register_buffer("causal", causal.view(1, 1, SEQ, SEQ))

        def forward(self, x: Any) -> Any:
            b, t, d = x.shape
            hd = d // HEADS
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q, k, v = (z.view(b, t, HEADS, hd).transpose(1, 2) for z in (q, k, v))
            scores = (q @ k.transpose(-2, -1)) * (1.0 / hd ** 0.5)
            scores = scores.masked_fill(~self.causal[:, :, :t, :t], float("-inf"))
            y = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d)
            x = x + self.proj(y)
            return x + self.out(self.act(self.fc(self.ln2(x))))

    class Gpt(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tok = nn.Embedding(VOCAB, D_MODEL)
            self.pos = nn.Parameter(torch.randn(1, SEQ, D_MODEL) * 0.02)
            self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
            self.ln_f = nn.LayerNorm(D_MODEL)
            self.head = nn.Linear(D_MODEL, VOCAB, bias=False)

        def forward(self, idx: Any) -> Any:
            x = self.tok(idx) + self.pos[:, : idx.shape[1]]
            for block in self.blocks:
                x = block(x)
            return self.head(self.ln_f(x))

    torch.manual_seed(0)
    return Gpt().eval()


@dataclass(frozen=True)
class Exported:
    path: Path
    tokens: np.ndarray  # int64 (BATCH, SEQ)
    torch_logits: np.ndarray  # float32 (BATCH, SEQ, VOCAB)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Exported:
    torch = _torch()
    model = _build_model(torch)
    tokens = np.random.default_rng(3).integers(0, VOCAB, (BATCH, SEQ)).astype(np.int64)
    path = tmp_path_factory.mktemp("torch_gpt") / "gpt.onnx"
    with torch.no_grad():
        want = model(torch.from_numpy(tokens)).numpy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # the TorchScript exporter's deprecation notices
            torch.onnx.export(model, (torch.from_numpy(tokens),), str(path), dynamo=False, opset_version=17,
                              input_names=["idx"], output_names=["logits"])
    return Exported(path, tokens, want)


def _assert_close(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape == (BATCH, SEQ, VOCAB) and got.dtype == want.dtype == np.float32
    assert float(want.std()) > 0.1  # real logits, not a constant: the comparison can fail
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def test_export_imports_to_ge_op_types(exported: Exported) -> None:
    model = onnx.load(str(exported.path))
    onnx_ops = Counter(n.op_type for n in model.graph.node)
    assert model.opset_import[0].version == 17
    assert onnx_ops["LayerNormalization"] == 2 * LAYERS + 1 and onnx_ops["MatMul"] == 6 * LAYERS + 1

    graph = gebench.load(exported.path).ir
    graph.verify()
    types = Counter(n.op_type for n in graph.nodes())
    # GE's mapping: MatMul -> BatchMatMulV2, LayerNormalization -> LayerNorm, Softmax -> SoftmaxV2,
    # Where -> SelectV2, Div -> RealDiv, Gather -> GatherV2, Split -> SplitV, Constant/initializers -> Const.
    assert types["BatchMatMulV2"] == onnx_ops["MatMul"]
    assert types["LayerNorm"] == onnx_ops["LayerNormalization"]
    assert types["SoftmaxV2"] == types["SelectV2"] == types["SplitV"] == types["Erf"] == LAYERS
    assert types["RealDiv"] == onnx_ops["Div"] and types["GatherV2"] == 1
    assert types["Data"] == 1 and types["NetOutput"] == 1 and types["Const"] > 0
    assert not {"MatMul", "LayerNormalization", "Softmax", "Where", "Div", "Gather", "Split", "Constant"} & set(types)
    assert all(ops.get_schema(t) is not None for t in types), sorted(t for t in types if ops.get_schema(t) is None)

    (data,) = graph.nodes_of_type("Data")
    assert data.name == "idx" and data.attrs["index"] == 0
    assert data.outputs[0].dtype == ir.DataType.DT_INT64 and tuple(data.outputs[0].shape) == (BATCH, SEQ)


def test_reference_execution_matches_torch_and_onnxruntime(exported: Exported) -> None:
    graph = gebench.load(exported.path)
    (got,) = gebench.execute(graph, {"idx": exported.tokens})
    _assert_close(got, exported.torch_logits)

    session = ort.InferenceSession(str(exported.path), providers=["CPUExecutionProvider"])
    (want_ort,) = session.run(None, {"idx": exported.tokens})
    _assert_close(got, want_ort)


def test_compile_with_example_passes_keeps_outputs(exported: Exported) -> None:
    graph = gebench.load(exported.path)
    run = gebench.compile(graph, passes=[str(REPO / "passes")])
    assert run.status == "SUCCESS", run.failure_reason
    assert not run.load_errors
    run.ir_graph.verify()
    summary = run.summary()
    assert sum(s["replaced"] for s in summary.values()) > 0, summary  # the exporter's Identity nodes at least
    (got,) = gebench.execute(run.ir_graph, {"idx": exported.tokens})
    _assert_close(got, exported.torch_logits)
