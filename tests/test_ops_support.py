"""Graph-building helpers shared by the ops inference tests (this module holds no tests)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gebench import ir, ops
from gebench.ir import DataType, Format, TensorDesc, TensorValue

Port = tuple[ir.Node, int]


class Builder:
    """Builds an ir.Graph through ops.make_node and infers it."""

    def __init__(self) -> None:
        self.g = ir.Graph("t")
        self._k = 0

    def data(self, shape: Sequence[int], dtype: DataType = DataType.DT_FLOAT, fmt: Format = Format.FORMAT_ND) -> Port:
        n = ops.make_node(self.g, "Data", attrs={"index": self._k})
        self._k += 1
        n.inputs[0] = TensorDesc.of(dtype, shape, fmt)
        n.outputs[0] = TensorDesc.of(dtype, shape, fmt)
        return n, 0

    def const(self, values: Any, dtype: DataType | None = None) -> Port:
        arr = np.asarray(values)
        if dtype is None:
            dtype = ir.data_type_from_numpy(arr.dtype)
        return ops.make_node(self.g, "Const", attrs={"value": TensorValue(dtype, arr)}), 0

    def op(self, op_type: str, *inputs: Port | None, attrs: dict[str, Any] | None = None,
           dyn_in: dict[str, int] | None = None, dyn_out: dict[str, int] | None = None) -> ir.Node:
        n = ops.make_node(self.g, op_type, attrs=attrs, dynamic_inputs=dyn_in, dynamic_outputs=dyn_out)
        assert len(inputs) <= len(n.inputs), f"{op_type}: {len(inputs)} inputs for {n.input_names}"
        for port, src in enumerate(inputs):
            if src is not None:
                self.g.add_edge(src[0], src[1], n, port)
        return n

    def infer(self) -> None:
        ops.infer_graph(self.g)
        self.g.verify()


def infer_one(op_type: str, *inputs: Any, attrs: dict[str, Any] | None = None,
              dyn_in: dict[str, int] | None = None, dyn_out: dict[str, int] | None = None) -> ir.Node:
    """Infer one node whose inputs are given as shapes (tuple -> Data) or arrays (np.ndarray -> Const)."""
    b = Builder()
    ports: list[Port | None] = []
    for item in inputs:
        if item is None:
            ports.append(None)
        elif isinstance(item, tuple):
            ports.append(b.data(item))
        elif isinstance(item, dict):
            ports.append(b.data(item["shape"], item.get("dtype", DataType.DT_FLOAT), item.get("fmt", Format.FORMAT_ND)))
        else:
            ports.append(b.const(item))
    n = b.op(op_type, *ports, attrs=attrs, dyn_in=dyn_in, dyn_out=dyn_out)
    b.infer()
    return n
