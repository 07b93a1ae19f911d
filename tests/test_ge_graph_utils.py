"""ge.utils.GeUtils and ge.error.GeError."""

from __future__ import annotations

import pytest

from gebench.ge.error import GeError
from gebench.ge.es import GraphBuilder
from gebench.ge.es import all as es
from gebench.ge.graph import DataType
from gebench.ge.utils import GeUtils


def test_ge_error_fields() -> None:
    err = GeError("bad shape", "Graph.infer", "node MatMul_0")
    assert isinstance(err, RuntimeError)
    assert (err.error_message, err.api_name, err.context) == ("bad shape", "Graph.infer", "node MatMul_0")
    assert str(err) == "Graph.infer: bad shape (node MatMul_0)"


def test_infer_shape_sets_inputs_and_infers_outputs() -> None:
    b = GraphBuilder("g")
    a, w = b.create_inputs(2)
    g = b.build_and_reset([es.Relu(es.MatMul(a, w))])
    GeUtils.infer_shape(g, [[2, 3], [3, 4]])
    relu = g.find_node_by_name("Relu_1")
    assert relu.get_output_desc(0).get_shape() == [2, 4]
    assert relu.get_output_desc(0).get_data_type() == DataType.DT_FLOAT
    with pytest.raises(RuntimeError, match="no Data node with index 2"):
        GeUtils.infer_shape(g, [[2, 3], [3, 4], [1]])
    with pytest.raises(TypeError):
        GeUtils.infer_shape(g, [(2, 3)])  # type: ignore[list-item]
    with pytest.raises(RuntimeError, match="MatMul"):
        GeUtils.infer_shape(g, [[2, 3], [5, 4]])


def test_aicore_support_needs_an_ascend_machine() -> None:
    b = GraphBuilder()
    g = b.build_and_reset([es.Relu(b.create_input(0))])
    with pytest.raises(RuntimeError, match="Ascend"):
        GeUtils.check_node_support_on_aicore(g.find_node_by_name("Relu_0"))
    with pytest.raises(TypeError):
        GeUtils.check_node_support_on_aicore("Relu_0")  # type: ignore[arg-type]
