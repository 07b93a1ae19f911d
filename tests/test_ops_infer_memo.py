"""The built-in inference rules run once per distinct combination of what they read: a node that gives a rule the
same answers as an earlier node of the same op type in the same inference run gets that run's outputs. The graph
ends exactly as if every rule had run (property test on random graphs, every op family the transformer models
use), with the rule runs counted; rules a user registers, and runs that read beyond what the memo keys on, always
run."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gebench import ir, ops
from gebench.ir import DataType, TensorDesc, TensorValue, first_difference

infer_module = importlib.import_module("gebench.ops._infer")

SHAPES = ([4, 8], [8, 4], [8, 8], [32], [2, 16], [-1, 8])
UNARY = ("Relu", "Sigmoid", "Neg", "Identity", "Abs")
BINARY = ("Add", "Mul", "Sub")
CAST_TO = (DataType.DT_FLOAT16, DataType.DT_INT32, DataType.DT_FLOAT)


def _data(g: ir.Graph, index: int, shape: list[int]) -> ir.Node:
    n = ops.make_node(g, "Data", attrs={"index": index})
    n.inputs[0] = TensorDesc.of(DataType.DT_FLOAT, shape)
    n.outputs[0] = TensorDesc.of(DataType.DT_FLOAT, shape)
    return n


def _const(g: ir.Graph, values: object, dtype: DataType) -> ir.Node:
    value = TensorValue(dtype, np.asarray(values))
    n = ops.make_node(g, "Const", attrs={"value": value})
    n.outputs[0] = TensorDesc.of(dtype, value.shape)
    return n


def _build(steps: list[tuple[int, int, int, int]]) -> ir.Graph:
    """Two Data inputs ([4, 8], [8, 4]) and Consts of a few shapes (small ones fold), then one node per step, fed
    from earlier tensors: a unary op, a binary op, BatchMatMulV2 or GEMM with random transpose attrs, SoftmaxV2
    over one of two axes, Transpose (two perms) and Reshape through Const inputs, Cast to one of three dtypes. A step whose
    node cannot be inferred (mismatched dims) is dropped, so that the graph infers to the end; then every output
    desc the steps made is reset, so that the inference under test starts from nothing."""
    g = ir.Graph("memo")
    f32 = DataType.DT_FLOAT
    outs = [_data(g, 0, [4, 8]), _data(g, 1, [8, 4]),
            _const(g, np.ones((8, 8), np.float32), f32), _const(g, np.arange(8, dtype=np.float32), f32),
            _const(g, np.arange(4, dtype=np.float32), f32), _const(g, np.float32(2.0), f32)]
    made = []
    values: dict = {}
    for kind, a, b, c in steps:
        x, y = outs[a % len(outs)], outs[b % len(outs)]
        kind %= 8
        feeds = [x]
        if kind == 0:
            n = ops.make_node(g, UNARY[c % len(UNARY)])
        elif kind == 1:
            n = ops.make_node(g, BINARY[c % len(BINARY)])
            feeds.append(y)
        elif kind == 2:
            n = ops.make_node(g, "BatchMatMulV2", attrs={"adj_x1": bool(c & 1), "adj_x2": bool(c & 2)})
            feeds.append(y)
        elif kind == 3:
            n = ops.make_node(g, "GEMM", attrs={"transpose_a": bool(c & 1), "transpose_b": bool(c & 2)})
            feeds += [y, outs[(a + b + c) % len(outs)]]
        elif kind == 4:
            n = ops.make_node(g, "SoftmaxV2", attrs={"axes": [-1] if c % 2 else [0]})
        elif kind == 5:
            n = ops.make_node(g, "Transpose")
            feeds.append(_const(g, np.array([1, 0] if c % 2 else [0, 1], np.int64), DataType.DT_INT64))
        elif kind == 6:
            n = ops.make_node(g, "Reshape")
            feeds.append(_const(g, np.array(SHAPES[c % len(SHAPES)], np.int64), DataType.DT_INT64))
        else:
            n = ops.make_node(g, "Cast", attrs={"dst_type": int(CAST_TO[c % len(CAST_TO)])})
        for port, src in enumerate(feeds):
            g.add_edge(src, 0, n, port)
        try:
            ops.infer_node(g, n, values=values)
        except ops.InferenceError:
            g.remove_node(n)
            continue
        outs.append(n)
        made.append(n)
    for n in made:
        g.touch(n)
        n.outputs[0] = TensorDesc()
    return g


@contextlib.contextmanager
def _memo_off() -> Iterator[None]:
    """Every rule runs for every node (what inference did before rule results were reused)."""
    infer_module._load_rules()
    saved = set(infer_module._MEMO_SAFE)
    infer_module._MEMO_SAFE.clear()
    try:
        yield
    finally:
        infer_module._MEMO_SAFE.update(saved)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 60), st.integers(0, 60), st.integers(0, 7)),
                min_size=1, max_size=40))
@example([(0, 0, 0, 0), (7, 0, 0, 0), (0, 7, 0, 0)])  # Relu of float [4, 8], then of its float16 Cast
@example([(2, 0, 0, 0), (2, 0, 0, 2), (2, 0, 0, 1)])  # BatchMatMulV2 of the same inputs, three adj attrs
@example([(5, 0, 0, 1), (5, 0, 0, 0)])  # Transpose of the same input by two perm Consts
def test_inference_with_reused_rule_results_equals_running_every_rule(steps):
    memoised, plain = _build(steps), _build(steps)
    ops.infer_graph(memoised)  # _build keeps only nodes that infer: neither raises
    with _memo_off():
        ops.infer_graph(plain)
    assert first_difference(memoised, plain) is None
    assert memoised._inference.values.keys() == plain._inference.values.keys()
    for key, value in plain._inference.values.items():
        got_value = memoised._inference.values[key]
        assert got_value.dtype == value.dtype and np.array_equal(got_value, value)


class _CountingRecording(infer_module._Recording):
    runs: list[str] = []

    def __init__(self, graph, node, *args):
        _CountingRecording.runs.append(node.op_type)
        super().__init__(graph, node, *args)


def _layers(n: int) -> ir.Graph:
    """``n`` repeats of GEMM -> Relu -> SoftmaxV2 -> Add(residual) -> Transpose on [8, 8] activations."""
    g = ir.Graph("layers")
    x = _data(g, 0, [8, 8])
    w = _const(g, np.ones((8, 8), np.float32), DataType.DT_FLOAT)
    b = _const(g, np.ones(8, np.float32), DataType.DT_FLOAT)
    perm = _const(g, np.array([1, 0], np.int64), DataType.DT_INT64)
    for _ in range(n):
        gemm = ops.make_node(g, "GEMM")
        for port, src in enumerate((x, w, b)):
            g.add_edge(src, 0, gemm, port)
        relu = ops.make_node(g, "Relu")
        g.add_edge(gemm, 0, relu, 0)
        soft = ops.make_node(g, "SoftmaxV2", attrs={"axes": [-1]})
        g.add_edge(relu, 0, soft, 0)
        add = ops.make_node(g, "Add")
        g.add_edge(soft, 0, add, 0)
        g.add_edge(x, 0, add, 1)
        t = ops.make_node(g, "Transpose")
        g.add_edge(add, 0, t, 0)
        g.add_edge(perm, 0, t, 1)
        x = t
    return g


def test_repeated_layers_run_each_rule_a_few_times_and_read_values_every_time(monkeypatch):
    monkeypatch.setattr(infer_module, "_Recording", _CountingRecording)
    monkeypatch.setattr(_CountingRecording, "runs", [])
    g = _layers(300)
    plain = g.copy()
    ops.infer_graph(g)
    runs = _CountingRecording.runs
    # GEMM, Relu, SoftmaxV2 and the residual Add: one recorded run each (the first layer's). Transpose reads its
    # perm Const's value, which the memo does not key on: its runs are recorded until the memo gives up on it
    assert {op: runs.count(op) for op in ("GEMM", "Relu", "SoftmaxV2", "Add")} == dict.fromkeys(
        ("GEMM", "Relu", "SoftmaxV2", "Add"), 1)
    assert 1 <= runs.count("Transpose") <= 16
    with _memo_off():
        ops.infer_graph(plain)
    assert first_difference(g, plain) is None
    assert g.nodes_of_type("Transpose")[-1].outputs[0].shape == (8, 8)


def test_an_activation_plus_a_weight_replays_without_reading_the_weight(monkeypatch):
    # Add(x, bias): folding needs both values, so the rule stops at x's (unknown) and never reads the bias; the
    # memo then keys on x alone and every layer replays the first one's run (reading the bias made each run
    # opaque, so every Add ran its rule until the memo gave up)
    monkeypatch.setattr(infer_module, "_Recording", _CountingRecording)
    monkeypatch.setattr(_CountingRecording, "runs", [])
    g = ir.Graph("bias")
    x = _data(g, 0, [4, 8])
    for i in range(40):
        bias = _const(g, np.full((8,), float(i), np.float32), DataType.DT_FLOAT)
        add = ops.make_node(g, "Add")
        g.add_edge(x, 0, add, 0)
        g.add_edge(bias, 0, add, 1)
        x = add
    plain = g.copy()
    ops.infer_graph(g)
    assert _CountingRecording.runs.count("Add") == 1
    with _memo_off():
        ops.infer_graph(plain)
    assert first_difference(g, plain) is None
    assert x.outputs[0].shape == (4, 8)


def test_a_rule_the_user_registers_runs_for_every_node(monkeypatch):
    calls = []

    def rule(ctx: ops.InferContext) -> None:
        calls.append(ctx.op_type)
        ctx.set_output(0, ctx.dtype(0), ctx.shape(0))

    monkeypatch.setitem(infer_module._RULES, "Relu", rule)  # as register_infer("Relu", replace=True) would
    g = ir.Graph("user")
    x = _data(g, 0, [4, 8])
    for _ in range(50):
        relu = ops.make_node(g, "Relu")
        g.add_edge(x, 0, relu, 0)
        x = relu
    ops.infer_graph(g)
    assert calls == ["Relu"] * 50
    assert x.outputs[0].shape == (4, 8)


def test_changed_inputs_and_attrs_miss_the_memo():
    g = ir.Graph("miss")
    x = _data(g, 0, [4, 8])
    y = _data(g, 1, [8, 4])
    w = _const(g, np.ones((8, 16), np.float32), DataType.DT_FLOAT)
    plain_nt = ops.make_node(g, "BatchMatMulV2")
    g.add_edge(x, 0, plain_nt, 0)
    g.add_edge(w, 0, plain_nt, 1)
    adj = ops.make_node(g, "BatchMatMulV2", attrs={"adj_x1": True})  # [8, 4]^T @ [8, 16]
    g.add_edge(y, 0, adj, 0)
    g.add_edge(w, 0, adj, 1)
    same_again = ops.make_node(g, "BatchMatMulV2")
    g.add_edge(x, 0, same_again, 0)
    g.add_edge(w, 0, same_again, 1)
    ops.infer_graph(g)
    assert plain_nt.outputs[0].shape == (4, 16)
    assert adj.outputs[0].shape == (4, 16)
    assert same_again.outputs[0].shape == (4, 16)
    g.touch(y)
    y.outputs[0] = TensorDesc.of(DataType.DT_FLOAT16, (8, 2))
    ops.infer_graph(g)
    assert adj.outputs[0].shape == (2, 16) and adj.outputs[0].dtype == DataType.DT_FLOAT16
    assert plain_nt.outputs[0].dtype == DataType.DT_FLOAT
