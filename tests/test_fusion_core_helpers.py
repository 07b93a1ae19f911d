"""Graph builders shared by the fusion-core tests (imported by the other ``test_fusion_core_*`` files)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from gebench import ir
from gebench.fusion import _matcher, _pattern
from gebench.fusion._matcher import mismatch_detail

Spec = tuple  # (name, op_type, inputs, n_outputs[, attrs])


def build(name: str, spec: list[Spec]) -> ir.Graph:
    """Build a graph from ``(name, op_type, inputs, n_outputs[, attrs])`` rows in order.

    ``inputs`` entries are ``"node"`` (port 0), ``"node:port"`` or ``None`` (an unfed anchor).
    """
    g = ir.Graph(name)
    for row in spec:
        node_name, op_type, inputs, n_out = row[:4]
        attrs = dict(row[4]) if len(row) > 4 else {}
        node = g.add_node(op_type, name=node_name, inputs=len(inputs), outputs=n_out, attrs=attrs)
        for port, ref in enumerate(inputs):
            if ref is None:
                continue
            src, _, sp = ref.partition(":")
            g.add_edge(g.node_by_name(src), int(sp or 0), node, port)
    return g


def const(values: Any, dtype: ir.DataType = ir.DataType.DT_FLOAT, shape: Any = None) -> dict[str, Any]:
    return {"value": ir.TensorValue.from_list(values, dtype, shape)}


def data(index: int) -> dict[str, Any]:
    return {"index": index}


def matmul_add_target() -> ir.Graph:
    """x, w -> MatMul -> Add(+b) -> Relu -> out."""
    return build("target", [
        ("x", "Data", [], 1, data(0)),
        ("w", "Const", [], 1, const([1.0, 2.0, 3.0, 4.0], shape=[2, 2])),
        ("mm", "MatMul", ["x", "w"], 1),
        ("b", "Const", [], 1, const([0.5, 0.5])),
        ("add", "Add", ["mm", "b"], 1),
        ("relu", "Relu", ["add"], 1),
        ("out", "NetOutput", ["relu"], 0),
    ])


def matmul_add_pattern() -> ir.Graph:
    return build("MatMulAdd_pattern", [
        ("a", "Data", [], 1, data(0)),
        ("b", "Data", [], 1, data(1)),
        ("c", "Data", [], 1, data(2)),
        ("pmm", "MatMul", ["a", "b"], 1),
        ("padd", "Add", ["pmm", "c"], 1),
        ("pout", "NetOutput", ["padd"], 0),
    ])


def gemm_replacement() -> ir.Graph:
    return build("gemm_replacement", [
        ("a", "Data", [], 1, data(0)),
        ("b", "Data", [], 1, data(1)),
        ("c", "Data", [], 1, data(2)),
        ("GEMM_0", "GEMM", ["a", "b", "c"], 1, {"transpose_a": False}),
        ("NetOutput_r", "NetOutput", ["GEMM_0"], 0),
    ])


def snapshot(g: ir.Graph) -> str:
    """Everything observable about a graph: its text form (order, attrs, descs, edges, control edges)."""
    return ir.to_text(g)


class Recorder:
    """A matcher recorder that keeps what it is told."""

    def __init__(self) -> None:
        self.mismatches: list[tuple[ir.Node, dict[str, Any], int]] = []
        self.violations: list[tuple[list[ir.Node], ir.Node, dict[str, Any]]] = []

    def structural_mismatch(self, anchor_node: ir.Node, failure: tuple[Any, ...], bound_count: int) -> None:
        self.mismatches.append((anchor_node, mismatch_detail(failure), bound_count))

    def boundary_violation(self, match_nodes: list[ir.Node], escaping_node: ir.Node, detail: dict[str, Any]) -> None:
        self.violations.append((match_nodes, escaping_node, detail))


@dataclasses.dataclass(frozen=True)
class FakeAttr:
    name: str
    type: str
    required: bool
    default: Any = None


@dataclasses.dataclass(frozen=True)
class FakeIO:
    name: str
    kind: str


@dataclasses.dataclass(frozen=True)
class FakeSchema:
    op_type: str
    inputs: tuple[FakeIO, ...] = ()
    outputs: tuple[FakeIO, ...] = ()
    attrs: tuple[FakeAttr, ...] = ()


def use_schemas(monkeypatch: Any, schemas: dict[str, FakeSchema]) -> None:
    """Make the fusion core see exactly ``schemas`` (independent of the op catalogue's contents)."""
    monkeypatch.setattr(_pattern, "schema_of", schemas.get)
    monkeypatch.setattr(_matcher, "schema_of", schemas.get)


def arr(values: Any, dtype: Any) -> np.ndarray:
    return np.asarray(values, dtype=dtype)
