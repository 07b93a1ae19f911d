"""Incremental shape inference: after a whole-graph inference, ``infer_graph`` re-infers only what changed and
what depends on it, and leaves the graph exactly as a whole inference of the same graph would (property test
on random graphs and random rewrites), at a cost that follows the change, not the graph (counted)."""

from __future__ import annotations

import importlib
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gebench import ir, ops
from gebench.ir import DataType, TensorDesc, TensorValue, first_difference

infer_module = importlib.import_module("gebench.ops._infer")

SHAPES = ([4, 8], [8, 4], [32], [-1], [2, 16])
UNARY = ("Relu", "Sigmoid", "Abs")


def _data(g: ir.Graph, shape: list[int]) -> ir.Node:
    n = ops.make_node(g, "Data", attrs={"index": 0})
    n.inputs[0] = TensorDesc.of(DataType.DT_FLOAT, shape)
    n.outputs[0] = TensorDesc.of(DataType.DT_FLOAT, shape)
    return n


def _const(g: ir.Graph, values: object, dtype: DataType) -> ir.Node:
    return ops.make_node(g, "Const", attrs={"value": TensorValue(dtype, np.asarray(values))})


def _build(ops_seq: list[tuple[int, int, int]]) -> ir.Graph:
    """A random graph: Data [4, 8], a bias Const [8], then each step adds a unary op, an Add/Mul with an
    earlier tensor or the bias, or a Reshape to one of SHAPES (through a Const shape), fed from earlier nodes."""
    g = ir.Graph("inc")
    outs = [_data(g, [4, 8])]
    bias = _const(g, np.arange(8, dtype=np.float32), DataType.DT_FLOAT)
    for kind, a, b in ops_seq:
        src = outs[a % len(outs)]
        if kind % 3 == 0:
            n = ops.make_node(g, UNARY[b % len(UNARY)])
            g.add_edge(src, 0, n, 0)
        elif kind % 3 == 1:
            n = ops.make_node(g, "Add" if b % 2 else "Mul")
            g.add_edge(src, 0, n, 0)
            other = bias if b % 3 == 0 else outs[b % len(outs)]
            g.add_edge(other, 0, n, 1)
        else:
            shape = _const(g, np.array(SHAPES[b % len(SHAPES)], dtype=np.int64), DataType.DT_INT64)
            n = ops.make_node(g, "Reshape")
            g.add_edge(src, 0, n, 0)
            g.add_edge(shape, 0, n, 1)
        outs.append(n)
    return g


def _mutate(g: ir.Graph, kind: int, a: int, b: int) -> None:
    nodes = [n for n in g.nodes() if n.op_type not in ("Data",)]
    if not nodes:
        return
    node = nodes[a % len(nodes)]
    if kind == 0 and node.op_type in UNARY:  # retype
        g.set_op_type(node, UNARY[b % len(UNARY)])
    elif kind == 1 and node.op_type == "Const" and node.attrs["value"].dtype == DataType.DT_INT64:
        g.touch(node)  # a new Reshape target (folded values change, shapes may not)
        node.attrs["value"] = TensorValue(DataType.DT_INT64, np.array(SHAPES[b % len(SHAPES)], dtype=np.int64))
    elif kind == 2 and node.inputs:  # rewire input 0 to another node's output
        others = [n for n in g.nodes() if n.outputs and n.op_type != "Const" and n is not node]
        if g.producer(node, 0) is not None and others:
            src, port = g.producer(node, 0)
            g.remove_edge(src, port, node, 0)
            try:
                g.add_edge(others[b % len(others)], 0, node, 0)
            except ir.CycleError:
                g.add_edge(src, port, node, 0)
    elif kind == 3:  # a new consumer
        n = ops.make_node(g, UNARY[b % len(UNARY)])
        g.add_edge(node, 0, n, 0)
    elif kind == 4:  # the graph input changes shape
        data = g.nodes_of_type("Data")[0]
        g.touch(data)
        shape = (4, 8) if b % 2 else (2, 16)
        data.outputs[0] = TensorDesc.of(DataType.DT_FLOAT, shape)
    elif kind == 5 and node.op_type in UNARY and not g.num_uses(node):
        g.remove_node(node)


def _run_inference(g: ir.Graph) -> str:
    try:
        ops.infer_graph(g, allow_unknown_ops=True)
    except ops.InferenceError as exc:
        return str(exc)
    return ""


@pytest.mark.parametrize("incremental_up_to", [None, 2.0], ids=["default", "always-incremental"])
@settings(max_examples=120, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 50), st.integers(0, 50)), min_size=1, max_size=25),
       st.lists(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 50), st.integers(0, 50)), max_size=6),
                min_size=1, max_size=3))
def test_incremental_inference_equals_whole_inference_after_random_rewrites(incremental_up_to, build, rounds):
    # "always-incremental" keeps the incremental path on however much of these small graphs changed
    share = infer_module._INCREMENTAL_UP_TO if incremental_up_to is None else incremental_up_to
    with mock.patch.object(infer_module, "_INCREMENTAL_UP_TO", share):
        _check_incremental_equals_whole(build, rounds)


def _check_incremental_equals_whole(build, rounds):
    g = _build(build)
    _run_inference(g)
    for changes in rounds:
        for kind, a, b in changes:
            _mutate(g, kind, a, b)
        whole = g.copy()
        whole._inference = None  # a graph that never was inferred: every node is inferred
        want = _run_inference(whole)
        got = _run_inference(g)
        assert got == want
        if not want:
            assert first_difference(g, whole) is None
            assert g._inference is not None and whole._inference is not None
            assert g._inference.values.keys() == whole._inference.values.keys()
            for key, value in whole._inference.values.items():
                assert np.array_equal(g._inference.values[key], value)


def _chain(n: int) -> ir.Graph:
    g = ir.Graph("chain")
    prev = _data(g, [4, 8])
    for i in range(n):
        node = ops.make_node(g, UNARY[i % len(UNARY)], name=f"u{i}")
        g.add_edge(prev, 0, node, 0)
        prev = node
    return g


@pytest.mark.parametrize("n", [500, 4000])
def test_reinference_after_a_local_change_costs_the_change_not_the_graph(monkeypatch, n):
    g = _chain(n)
    ops.infer_graph(g)
    calls = []
    original = infer_module._apply_rule  # every rule run, in a whole-graph inference or an incremental one

    def counting(graph, node, *args):
        calls.append(node.name)
        return original(graph, node, *args)

    monkeypatch.setattr(infer_module, "_apply_rule", counting)
    ops.infer_graph(g)  # nothing changed: nothing is inferred
    assert calls == []
    node = g.node_by_name(f"u{n - 3}")
    g.set_op_type(node, "Relu" if node.op_type != "Relu" else "Abs")  # same shapes
    ops.infer_graph(g)
    assert calls == [f"u{n - 3}", f"u{n - 2}"]  # the changed node and its consumer; nothing further down
    calls.clear()
    data = g.nodes_of_type("Data")[0]
    tail = ops.make_node(g, "Relu", name="tail")
    g.add_edge(g.node_by_name(f"u{n - 1}"), 0, tail, 0)
    ops.infer_graph(g)
    assert calls == ["tail"] and tail.outputs[0].shape == (4, 8)
    calls.clear()
    g.touch(data)
    data.outputs[0] = TensorDesc.of(DataType.DT_FLOAT, (2, 16))  # changes every shape downstream
    ops.infer_graph(g)
    assert len(calls) == n + 2 and tail.outputs[0].shape == (2, 16)  # Data, the chain and the tail


def test_more_than_a_third_of_the_graph_changed_is_inferred_whole(monkeypatch):
    n = 30
    g = _chain(n)  # a Data and n unary nodes
    ops.infer_graph(g)
    rules, incremental = [], []
    original_rule, original_changed = infer_module._apply_rule, infer_module._infer_changed

    def counting_rule(graph, node, *args):
        rules.append(node.name)
        return original_rule(graph, node, *args)

    def counting_changed(graph, state):
        incremental.append(len(state.dirty))
        return original_changed(graph, state)

    monkeypatch.setattr(infer_module, "_apply_rule", counting_rule)
    monkeypatch.setattr(infer_module, "_infer_changed", counting_changed)
    third = (n + 1) // 3  # 10 of 31 nodes: up to a third
    for i in range(third):
        g.touch(g.node_by_name(f"u{n - 1 - i}"))
    ops.infer_graph(g)
    assert incremental == [third] and rules == [f"u{n - 1 - i}" for i in reversed(range(third))]
    rules.clear()
    incremental.clear()
    for i in range(third + 1):  # one more than a third: the whole graph, Data included
        g.touch(g.node_by_name(f"u{i}"))
    whole = g.copy()
    whole._inference = None
    ops.infer_graph(g)
    assert incremental == [] and len(rules) == n + 1
    ops.infer_graph(whole)
    assert first_difference(g, whole) is None
    rules.clear()
    ops.infer_graph(g)  # and the state it leaves is used again: nothing changed, nothing inferred
    assert rules == [] and incremental == [0]


def test_a_changed_rule_set_infers_everything_again(monkeypatch):
    g = _chain(20)
    ops.infer_graph(g)
    calls = []
    original = infer_module._apply_rule

    def counting(graph, node, *args):
        calls.append(node)
        return original(graph, node, *args)

    monkeypatch.setattr(infer_module, "_apply_rule", counting)
    monkeypatch.setitem(infer_module._RULES, "Relu", infer_module._RULES["Relu"])
    monkeypatch.setattr(infer_module, "_rules_generation", [infer_module._rules_generation[0] + 1])  # register_infer
    ops.infer_graph(g)
    assert len(calls) == 21
    calls.clear()
    ops.infer_graph(g)
    assert calls == []
