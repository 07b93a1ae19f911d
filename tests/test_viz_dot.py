"""Graph -> view -> DOT -> SVG: stable element ids, classes, labels, folding, caching."""

from __future__ import annotations

import gzip
import re

import pytest

from gebench import ir, viz
from gebench.viz._dot import compress_svg, tensor_label
from gebench.viz._synthetic import transformer_like

SMALL = """graph g
  #0 x = Data() {index=0} -> (DT_FLOAT[2,3])
  #1 w = Const() {value=tensor(DT_FLOAT[3], [1.0, 2.0, 3.0])} -> (DT_FLOAT[3])
  #2 mm = MatMul(x:0, w:0) -> (DT_FLOAT16[2,4])
  #3 "r/1" = Relu(mm:0) -> (DT_FLOAT16[2,4])
  #4 out = NetOutput("r/1":0)
"""


@pytest.fixture
def small() -> ir.Graph:
    return ir.parse_text(SMALL)


def test_view_keeps_every_node_and_edge_of_a_small_graph(small):
    view = viz.build_view(small)
    assert [n.id for n in view.nodes] == [0, 1, 2, 3, 4]
    assert {e.element_id for e in view.edges} == {"e0_0_2_0", "e1_0_2_1", "e2_0_3_0", "e3_0_4_0"}
    assert view.element_of == {i: f"n{i}" for i in range(5)}
    labels = {e.element_id: e.label for e in view.edges}
    assert labels["e2_0_3_0"] == "f16[2,4]"


def test_svg_has_stable_ids_classes_and_labels(small):
    svg = viz.render_svg(viz.view_to_dot(viz.build_view(small)))
    for nid in range(5):
        assert f'<g id="n{nid}" class="node gb_node' in svg
    assert re.search(r'<g id="n2" class="node gb_node gb_op_MatMul"', svg)
    assert 'class="node gb_node gb_op_Const gb_const"' in svg
    assert '<g id="e0_0_2_0" class="edge gb_edge"' in svg
    assert ">MatMul<" in svg and ">r/1<" in svg
    assert "f32[2,3]" in svg and "f16[2,4]" in svg
    assert "<!--" not in svg and "<title>" not in svg


def test_same_graph_gives_identical_dot(small):
    assert viz.view_to_dot(viz.build_view(small)) == viz.view_to_dot(viz.build_view(small.copy()))


def test_building_a_view_does_not_mutate_the_graph(small):
    before = ir.to_text(small)
    viz.render_svg(viz.view_to_dot(viz.build_view(small, fold_consts=True)))
    assert ir.to_text(small) == before


def test_const_folding_maps_const_to_its_consumer(small):
    view = viz.build_view(small, fold_consts=True)
    assert 1 not in view.node_ids
    assert view.element_of[1] == "n2"
    mm = next(n for n in view.nodes if n.id == 2)
    assert mm.folded_consts == 1
    assert view.elements_for([1, 2, 99]) == ["n2"]
    assert "+1 const" in viz.view_to_dot(view)


def test_focused_view_counts_hidden_edges(small):
    view = viz.build_view(small, node_ids=[2, 3])
    assert view.focused and view.node_ids == {2, 3}
    hidden = {n.id: n.hidden_neighbours for n in view.nodes}
    assert hidden == {2: 2, 3: 1}


def test_large_views_fold_constants_and_drop_edge_labels():
    g = transformer_like(1000)
    view = viz.build_view(g)
    assert not any(n.op_type == "Const" for n in view.nodes)
    assert len(view.nodes) < len(g)
    assert all(e.label == "" for e in view.edges)


def test_tensor_label_unknown_rank():
    assert tensor_label(ir.TensorDesc.of(ir.DataType.DT_INT64, (-2,))) == "i64[*]"
    assert tensor_label(ir.TensorDesc.of(ir.DataType.DT_BOOL, ())) == "bool[]"


def test_compressed_svg_round_trips(small):
    svg = viz.render_svg(viz.view_to_dot(viz.build_view(small)))
    assert gzip.decompress(compress_svg(svg)).decode() == svg


def test_layout_timeout_is_reported():
    g = transformer_like(3000)
    dot = viz.view_to_dot(viz.build_view(g, fold_consts=False, edge_labels=True))
    with pytest.raises(viz.LayoutTimeout, match="longer than"):
        viz.render_svg(dot, timeout=0.05)


def test_layout_cache_hits_on_same_source(small, tmp_path):
    cache = viz.LayoutCache(capacity=2, directory=tmp_path)
    dot = viz.view_to_dot(viz.build_view(small))
    first = cache.svg(dot)
    assert cache.misses == 1 and cache.hits == 0
    assert cache.svg(dot) == first and cache.hits == 1
    fresh = viz.LayoutCache(directory=tmp_path)
    assert fresh.svg(dot) == first and fresh.misses == 0
    other = viz.view_to_dot(viz.build_view(small, fold_consts=True))
    third = viz.view_to_dot(viz.build_view(small, node_ids=[2, 3]))
    cache.svg(other)
    cache.svg(third)
    assert len(cache) == 2 and dot not in cache
