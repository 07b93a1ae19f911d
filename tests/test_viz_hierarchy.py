"""The workbench's hierarchy of a large graph (gebench.viz._hierarchy), its layered layouts and level caching."""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest

from gebench import ir
from gebench.viz import Workbench
from gebench.viz._dot import build_view, view_to_dot
from gebench.viz._hierarchy import derive_hierarchy
from gebench.viz._layered import layered_svg
from gebench.viz._layout_cache import LayoutCache
from gebench.viz._snapshots import LazyGraphs
from gebench.viz._synthetic import transformer_like

ACT = ir.TensorDesc.of(ir.DataType.DT_FLOAT, (4, 4))


def _chain(names: list[str], *, const_every: int = 0) -> ir.Graph:
    """A chain Data -> names[0] -> names[1] -> ... with a Const weight on every ``const_every``-th node."""
    g = ir.Graph("chain")
    cur = g.add_node("Data", name="input", attrs={"index": 0}, outputs=[ACT])
    for i, name in enumerate(names):
        with_const = const_every and i % const_every == 0
        node = g.add_node(
            "Add" if with_const else "Relu",
            name=name,
            inputs=[ACT, ACT] if with_const else [ACT],
            outputs=[ACT],
        )
        g.add_edge(cur, 0, node, 0)
        if with_const:
            w = g.add_node("Const", name=f"w_{name}", outputs=[ACT])
            g.add_edge(w, 0, node, 1)
        cur = node
    out = g.add_node("NetOutput", name="NetOutput", inputs=[ACT])
    g.add_edge(cur, 0, out, 0)
    return g


def _layers(count: int) -> list[str]:
    return [f"l{i}_{part}" for i in range(count) for part in ("q_MatMul", "q_Add", "Softmax", "o_MatMul")]


def _items(h: Any, gid: int) -> int:
    g = h.groups[gid]
    return len(g.children) + sum(1 for nid in g.nodes if h.graph.node(nid).op_type != "Const")


def _stems_under(h: Any, gid: int) -> list[int]:
    """Layer numbers of the nodes under group ``gid`` (graph order, each once)."""
    seen: dict[int, None] = {}
    for nid in h.members(gid):
        m = re.match(r"l(\d+)_", h.graph.node(nid).name)
        if m:
            seen[int(m.group(1))] = None
    return list(seen)


# ------------------------------------------------------------------------------------------ derivation
def test_scoped_names_group_by_scope_and_a_single_top_scope_is_skipped():
    names = [
        f"/model/layers.{i}/{blk}/{op}"
        for i in range(3)
        for blk in ("attn", "mlp")
        for op in ("MatMul", "Add")
    ]
    h = derive_hierarchy(_chain(names))
    assert h.mode == "scope"
    top = [h.groups[c].label for c in h.root.children]
    assert top == ["layers.0", "layers.1", "layers.2"]  # "/model" held everything: skipped
    layer1 = h.groups[h.root.children[1]]
    assert [h.groups[c].label for c in layer1.children] == ["attn", "mlp"]
    mlp = h.groups[layer1.children[1]]
    assert [h.graph.node(n).name for n in mlp.nodes] == [
        "/model/layers.1/mlp/MatMul",
        "/model/layers.1/mlp/Add",
    ]
    # the graph's input and output stay at the root
    assert {h.graph.node(n).op_type for n in h.root.nodes} == {"Data", "NetOutput"}
    assert sum(h.groups[c].size for c in h.root.children) + len(h.root.nodes) == len(h.graph)


def test_a_ge_prefix_before_the_scopes_is_not_a_group():
    names = [
        f"{pre}/layers.{i}/{op}" for i in range(4) for pre, op in (("", "MatMul"), ("PartitionedCall_", "T"))
    ]
    h = derive_hierarchy(_chain(names))
    assert [h.groups[c].label for c in h.root.children] == ["layers.0", "layers.1", "layers.2", "layers.3"]
    layer2 = h.groups[h.root.children[2]]
    assert {h.graph.node(n).name for n in layer2.nodes} == {"/layers.2/MatMul", "PartitionedCall_/layers.2/T"}


def test_flat_layer_stems_are_grouped_in_graph_order_never_alphabetically():
    g = _chain(_layers(211), const_every=3)
    h = derive_hierarchy(g, max_children=16)
    assert h.mode == "stem"
    # every range holds consecutive layers: l199..l207 never shares a box with l19 or l1
    for grp in h.groups:
        if grp.kind == "range":
            stems = _stems_under(h, grp.id)
            assert stems == list(range(stems[0], stems[0] + len(stems))), grp.label
    labels = [h.groups[c].label for c in h.root.children]
    firsts = [_stems_under(h, c)[0] for c in h.root.children]
    assert firsts == sorted(firsts) and firsts[0] == 0
    assert labels[0].startswith("input") or labels[0].startswith("l0")
    # a layer group: its sub-group q holds q_MatMul and q_Add, the other nodes are its own
    l12 = next(grp for grp in h.groups if grp.label == "l12" and grp.kind == "stem")
    q = next(h.groups[c] for c in l12.children if h.groups[c].label == "q")
    assert {h.graph.node(n).name for n in q.nodes} >= {"l12_q_MatMul", "l12_q_Add"}
    assert {h.graph.node(n).name for n in l12.nodes if h.graph.node(n).op_type != "Const"} == {
        "l12_Softmax",
        "l12_o_MatMul",
    }
    # Consts live with their consumer
    w = g.node_by_name("w_l12_q_MatMul")
    assert h.group_of[w.id] == h.group_of[g.node_by_name("l12_q_MatMul").id]


def test_every_group_has_at_most_max_children_items_and_every_node_one_group():
    g = _chain(_layers(300), const_every=2)
    h = derive_hierarchy(g, max_children=12)
    assert all(_items(h, grp.id) <= 12 for grp in h.groups)
    assert set(h.group_of) == {n.id for n in g.nodes()}
    assert h.root.size == len(g)
    for grp in h.groups:  # sizes add up
        assert grp.size == len(grp.nodes) + sum(h.groups[c].size for c in grp.children)


def test_names_without_structure_give_bounded_topological_chunks():
    names = [f"{op}_{i}" for i, op in enumerate(["MatMul", "Add", "Relu", "Conv2d"] * 250)]
    g = _chain(names)
    h = derive_hierarchy(g, max_children=20)
    assert h.mode == "chunks"  # MatMul_3 / Conv2d_5 are not stems: their nodes are not contiguous
    assert all(_items(h, grp.id) <= 20 for grp in h.groups)
    order = {n.id: i for i, n in enumerate(g.nodes())}
    leaves = [grp for grp in h.groups if grp.nodes and not grp.children]
    assert leaves
    for grp in leaves:  # each chunk is a run of consecutive nodes in graph order
        pos = sorted(order[n] for n in grp.nodes)
        assert pos == list(range(pos[0], pos[0] + len(pos)))
    assert len(h.root.children) <= 20 and h.root.size == len(g)


def _flat_names(g: ir.Graph) -> ir.Graph:
    """``g`` with every node renamed ``<op type>_<k>`` (an export without scopes or layer names)."""
    for k, node in enumerate(g.nodes()):
        g.rename(node, f"{node.op_type}_{k}")
    return g


def test_names_without_structure_but_repeated_layers_give_one_group_per_layer():
    g = _flat_names(transformer_like(3000))
    h = derive_hierarchy(g, max_children=64)
    assert h.mode == "block"
    blocks = [grp for grp in h.groups if grp.kind == "block" and grp.label.startswith("block ")]
    count = int(blocks[0].label.rsplit(" ", 1)[1])
    assert len(blocks) == count >= 10
    # every block holds the same op types (one layer each), and they follow each other in graph order
    def kinds(grp: Any) -> list[str]:
        return sorted(h.graph.node(nid).op_type for nid in h.members(grp.id))
    assert all(kinds(b) == kinds(blocks[0]) for b in blocks)
    firsts = [b.first for b in blocks]
    assert firsts == sorted(firsts)
    for const in g.nodes_of_type("Const"):  # a weight sits in its consumer's block
        ((_, consumer, _), *_) = g.all_uses(const)
        assert h.group_of[const.id] == h.group_of[consumer.id]
    assert all(_items(h, grp.id) <= 64 for grp in h.groups) and h.root.size == len(g)


def test_nodes_made_by_a_pass_go_under_their_pass_inside_their_layer():
    g = _chain(_layers(40))
    fused = [g.node_by_name("l7_q_Add"), g.node_by_name("l7_Softmax")]
    for node in fused:
        node.provenance = "FuseQ"
    h = derive_hierarchy(g, max_children=64)
    grp = h.groups[h.group_of[fused[0].id]]
    assert grp.kind == "pass" and grp.label == "\u27e8FuseQ\u27e9"
    assert h.group_of[fused[1].id] == grp.id and grp.nodes == [n.id for n in fused]
    assert h.groups[grp.parent].label == "l7"


# ------------------------------------------------------------------------------------------ levels
def test_level_view_draws_child_groups_and_own_nodes_with_counted_edges():
    g = transformer_like(3000)
    h = derive_hierarchy(g, max_children=30)
    root = h.level_view(0)
    assert root.level == 0 and root.overview
    boxes = [n for n in root.nodes if n.element.startswith("g")]
    assert 1 < len(boxes) <= 30 and all(n.id < 0 for n in boxes)
    group_edges = [e for e in root.edges if e.src_port == -2]
    assert group_edges and all(e.src in root.node_ids and e.dst in root.node_ids for e in root.edges)
    # a node deep inside maps to the box of its top-level group
    relu = g.node_by_name("blk300/relu")
    top = h.path(h.group_of[relu.id])[1]
    assert root.element_of[relu.id] == f"g{top}"
    dot = view_to_dot(root)
    assert f'g{top} [id="g{top}", class="gb_node gb_group"' in dot
    # counts per drawn box
    counts = h.counts(0, [relu.id, g.node_by_name("blk301/relu").id, g.node_by_name("blk0/matmul").id])
    assert sum(counts.values()) == 3 and counts[f"g{top}"] >= 1


def test_group_containing_finds_the_deepest_common_group():
    g = _chain(_layers(50))
    h = derive_hierarchy(g, max_children=8)
    a, b = g.node_by_name("l9_q_MatMul").id, g.node_by_name("l9_Softmax").id
    assert h.groups[h.group_containing([a, b])].label == "l9"
    assert h.groups[h.group_containing([a])].label == "q"
    assert h.group_containing([a, g.node_by_name("l45_Softmax").id]) in h.path(h.group_of[a])


# ------------------------------------------------------------------------------------------ layouts
def test_a_tiny_graphviz_budget_falls_back_to_the_layered_layout_without_error():
    g = transformer_like(600)
    view = build_view(g)
    cache = LayoutCache(timeout=0.0001)
    svg = cache.layout(view)
    assert cache.last_engine in ("sugiyama", "simple") and cache.engines.get("dot", 0) == 0
    for n in view.nodes:
        assert f'id="n{n.id}"' in svg
    assert '<g id="gb_graph"' in svg and 'class="node gb_node gb_op_MatMul' in svg
    # the same view again: from the cache, no second layout
    assert cache.layout(view) == svg and cache.misses == 1 and cache.hits == 1


def test_views_above_the_graphviz_size_go_to_the_layered_layout():
    g = transformer_like(400)
    cache = LayoutCache(graphviz_max_nodes=10)
    cache.layout(build_view(g, fold_consts=True))
    assert cache.last_engine in ("sugiyama", "simple")


def test_the_simple_layered_layout_draws_every_node_and_edge_of_a_large_view():
    g = transformer_like(6000)
    view = build_view(g, fold_consts=True)
    svg, engine = layered_svg(view, engine="simple")
    assert engine == "simple"
    assert svg.count('class="node gb_node') == len(view.nodes)
    assert svg.count('class="edge gb_edge') == len(view.edges)


def test_the_workbench_with_a_tiny_layout_budget_opens_and_expands_without_error():
    g = transformer_like(3000)
    wb = Workbench(g, threshold=1500, layout_timeout=0.0001)
    assert wb.view_info["level"] == 0 and wb.view_info["engine"] in ("sugiyama", "simple")
    wb.open_group(wb.hierarchy().root.children[0])
    assert wb.view_info["level"] == wb.hierarchy().root.children[0] and wb.svg


# ------------------------------------------------------------------------------------------ the widget
def test_expanding_a_group_twice_lays_it_out_once():
    g = transformer_like(3000)
    wb = Workbench(g, threshold=1500, layout_timeout=4.5)  # a private layout cache
    cache = wb.layout_cache
    child = wb.hierarchy().root.children[2]
    wb.open_group(child)
    made = cache.misses
    wb.level_up()
    assert wb.view_info["level"] == 0
    wb.open_group(child)
    assert cache.misses == made  # the level and the root were both laid out before: no new layout
    assert [c["group"] for c in wb.levels] == [0, child]


def test_opening_a_large_graph_lays_out_the_first_level_only():
    g = transformer_like(20000)
    wb = Workbench(g, threshold=1500, layout_timeout=4.5)
    cache = wb.layout_cache
    assert cache.misses == 1
    assert cache.nodes_laid_out == len(wb.view.nodes) <= wb.max_level_items
    assert wb.view_info["total"] == len(g)


def test_opening_a_run_builds_no_dump_point_until_one_is_drawn():
    g = transformer_like(3000)
    built: list[str] = []

    def builder(label: str) -> Any:
        def build() -> ir.Graph:
            built.append(label)
            return g

        return build

    graphs = LazyGraphs(
        [
            ("PreRunBegin", builder("PreRunBegin")),
            ("RunCustomPassBeforeInfershape", builder("RunCustomPassBeforeInfershape")),
            ("final", g),
        ],
        counts={"PreRunBegin": lambda: len(g), "RunCustomPassBeforeInfershape": lambda: len(g)},
    )
    assert list(graphs) == ["PreRunBegin", "RunCustomPassBeforeInfershape", "final"] and built == []
    assert graphs.node_count("PreRunBegin") == len(g) and built == []
    assert "PreRunBegin" in graphs and not graphs.is_built("PreRunBegin")
    assert graphs["PreRunBegin"] is g and built == ["PreRunBegin"]
    assert graphs["PreRunBegin"] is g and built == ["PreRunBegin"]  # kept


@dataclass
class _Run:
    ir_snapshots: Any
    ir_graph: ir.Graph
    ledger: list[dict[str, Any]] = field(default_factory=list)
    status: str = "SUCCESS"
    failed_pass: str | None = None

    @property
    def graph(self) -> ir.Graph:
        return self.ir_graph


class _CountingSnapshots(dict):
    """A dump-point mapping that counts reads of its entries (like SnapshotMap, reading builds)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.reads: list[str] = []

    def __getitem__(self, key: str) -> Any:
        self.reads.append(key)
        return super().__getitem__(key)

    def node_count(self, key: str) -> int:
        return len(super().__getitem__(key))


def test_a_large_run_opens_on_its_final_graph_and_a_pass_builds_only_its_snapshot():
    before = transformer_like(3000)
    final = before.copy()
    mms = before.nodes_of_type("MatMul")
    records = [
        {
            "pass_name": "P",
            "stage": "BeforeInferShape",
            "status": "REPLACED" if i % 2 else "LOST_TO_OVERLAP",
            "target_node_ids": [mm.id],
            "target_node_names": [mm.name],
        }
        for i, mm in enumerate(mms[:40])
    ]
    snaps = _CountingSnapshots(
        {
            "PreRunBegin": before,
            "RunCustomPassBeforeInfershape": before.copy(),
            "RunCustomPass_AfterInferShape": before.copy(),
        }
    )
    wb = Workbench(_Run(snaps, final, records), threshold=1500)
    assert snaps.reads == [] and wb.snapshot == "final" and wb.view_info["level"] == 0
    wb.select_pass("P")
    assert snaps.reads == ["PreRunBegin"] and wb.snapshot == "PreRunBegin"
    # group boxes count the pass's candidates and the replaced ones
    counts = wb.group_counts
    assert sum(c["candidates"] for c in counts.values()) == 40
    assert sum(c["replaced"] for c in counts.values()) == 20
    h = wb.hierarchy()
    first_box = f"g{h.path(h.group_of[mms[0].id])[1]}"
    assert counts[first_box]["candidates"] >= 1 and first_box in wb.highlight
    # a candidate's focused view keeps the breadcrumb of the level it came from; a click on it goes back
    wb.select_candidate(5)
    assert wb.view_info["focused"] and wb.levels == [{"group": 0, "label": "model"}] and wb.group_counts == {}
    wb._on_message(wb, {"action": "open_level", "group": 0}, [])
    assert wb.view_info["level"] == 0 and wb.group_counts == counts


@pytest.mark.parametrize("max_children", [2, 5])
def test_tiny_fan_outs_still_hold_every_node(max_children: int):
    g = _chain(_layers(30))
    h = derive_hierarchy(g, max_children=max_children)
    assert all(_items(h, grp.id) <= max_children for grp in h.groups)
    assert sorted(h.members(0)) == sorted(n.id for n in g.nodes())


def test_max_children_below_two_is_refused():
    with pytest.raises(ValueError, match="max_children"):
        derive_hierarchy(_chain(["a", "b"]), max_children=1)


# ------------------------------------------------------------------------------------------ work counted
def test_a_split_groups_consts_all_follow_their_consumer_into_its_range():
    names = [f"{op}_{i}" for i, op in enumerate(["MatMul", "Add", "Relu", "Conv2d"] * 100)]
    g = _chain(names, const_every=4)
    rng = random.Random(5)  # op types in no repeating order, so that no blocks are found
    for node in g.nodes_of_type("Relu"):
        g.set_op_type(node, rng.choice(["Relu", "Tanh", "Sigmoid", "Exp"]))
    h = derive_hierarchy(g, max_children=5)
    assert h.mode == "chunks"
    consts = g.nodes_of_type("Const")
    assert consts and not [c.id for c in consts if c.id in h.root.nodes]
    for c in consts:
        ((_, consumer, _),) = g.all_uses(c)
        assert h.group_of[c.id] == h.group_of[consumer.id]


def test_deriving_reads_each_name_once_and_sorts_out_only_the_levels_drawn():
    g = _chain(_layers(120), const_every=2)
    ops = sum(1 for n in g.nodes() if n.op_type != "Const")
    cache: dict = {}
    h = derive_hierarchy(g, max_children=16, cache=cache)
    assert h.work["nodes"] == len(g) and h.work["names_parsed"] == ops
    assert h.work["edges"] == len(g.data_edges())
    assert h.work["levels_indexed"] == 0  # no level's edges before one is drawn
    root = h.level_view(0)
    assert h.work["levels_indexed"] == 1
    # the level's edges were handled one by one, not the graph's
    assert h.work["python_edges"] <= len(root.edges) + len(root.nodes) ** 2
    h.level_view(0)
    assert h.work["levels_indexed"] == 1  # kept
    # a graph sharing most names (a snapshot of the same run) parses only the names it adds
    snap = g.copy()
    for node in snap.nodes()[10:13]:
        snap.rename(node, f"{node.name}_x")
    h2 = derive_hierarchy(snap, max_children=16, cache=cache)
    assert h2.work["names_parsed"] == sum(1 for n in snap.nodes()[10:13] if n.op_type != "Const")
    assert [grp.label for grp in h2.groups] == [
        grp.label for grp in derive_hierarchy(snap, max_children=16).groups
    ]


def test_a_level_draws_the_same_edges_as_a_walk_over_every_edge():
    g = _chain(_layers(60), const_every=3)
    h = derive_hierarchy(g, max_children=6)
    for grp in h.groups:
        view = h.level_view(grp.id)
        expected: Counter = Counter()
        for src, _, dst, _ in g.data_edges():
            a, b = h.item_at(grp.id, src.id), h.item_at(grp.id, dst.id)
            if a is not None and b is not None and a != b and (a < 0 or b < 0):
                expected[(view.element_of[src.id], view.element_of[dst.id])] += 1
        drawn: Counter = Counter()
        for e in view.edges:
            if e.src_port == -2:
                drawn[(_element(view, e.src), _element(view, e.dst))] += int(e.label or 1)
        merged: Counter = Counter()
        for (a, b), c in expected.items():
            if a != b:
                merged[(a, b)] += c
        assert drawn == merged, grp.id


def _element(view: Any, item: int) -> str:
    return next(n.element or f"n{n.id}" for n in view.nodes if n.id == item)


def test_selecting_passes_derives_one_hierarchy_per_snapshot_drawn(monkeypatch: pytest.MonkeyPatch):
    import gebench.viz._levels as levels

    calls: list[int] = []
    real = levels.derive_hierarchy

    def counting(graph: ir.Graph, **kwargs: Any) -> Any:
        calls.append(len(graph))
        return real(graph, **kwargs)

    monkeypatch.setattr(levels, "derive_hierarchy", counting)
    before = transformer_like(3000)
    final = before.copy()
    mms = before.nodes_of_type("MatMul")
    relus = before.nodes_of_type("Relu")
    records = [
        {
            "pass_name": "P",
            "stage": "BeforeInferShape",
            "status": "REPLACED",
            "target_node_ids": [mm.id],
            "target_node_names": [mm.name],
        }
        for mm in mms[:20]
    ] + [
        {
            "pass_name": "Q",
            "stage": "BeforeInferShape",
            "status": "REPLACED",
            "target_node_ids": [r.id],
            "target_node_names": [r.name],
        }
        for r in relus[:20]
    ]
    snaps = _CountingSnapshots({"PreRunBegin": before})
    wb = Workbench(_Run(snaps, final, records), threshold=1500)
    assert calls == [len(final)]  # opening: the final graph's hierarchy only
    first = wb._hierarchies[id(final)][1]
    assert first.work["names_parsed"] == sum(
        1 for n in final.nodes() if n.op_type not in ("Const", "Constant")
    )
    wb.select_pass("P")
    assert wb.snapshot == "PreRunBegin" and calls == [len(final), len(before)]
    # the snapshot's names are the final graph's: none parsed again
    assert wb.hierarchy().work["names_parsed"] == 0
    for name in ("Q", "P", "Q", "P"):
        wb.select_pass(name)
    assert len(calls) == 2  # each graph's hierarchy is kept


# ------------------------------------------------------------------------------------------ expanding in place
def _expandable(h: Any, gid: int = 0) -> tuple[int, int]:
    """A child group of ``gid`` that has child groups of its own, and its first child group."""
    for c in h.groups[gid].children:
        if h.groups[c].children:
            return c, h.groups[c].children[0]
    raise AssertionError("no group with child groups")


def test_a_group_expanded_in_place_is_a_frame_holding_its_items_with_edges_to_them():
    g = transformer_like(3000)
    h = derive_hierarchy(g, max_children=30)
    outer, inner = _expandable(h)
    plain = h.level_view(0)
    view = h.level_view(0, expanded=[outer, inner])
    assert view.level == 0 and view.expanded == (outer, inner)
    assert list(view.clusters) == [outer, inner] and view.clusters[inner][0] == outer
    assert view.clusters[outer][1].startswith(h.groups[outer].label)
    # the frame replaces the box: every other root item is still drawn, the outer group's items sit in its frame
    elements = {n.element or f"n{n.id}": n for n in view.nodes}
    assert f"g{outer}" not in elements and f"g{inner}" not in elements
    assert {n.element for n in plain.nodes if n.element != f"g{outer}"} <= set(elements)
    for c in h.groups[outer].children:
        if c != inner:
            assert elements[f"g{c}"].cluster == outer
    own = [n for n in view.nodes if n.cluster == inner]
    assert own and all(n.id >= 0 for n in own)  # the inner group's own nodes are drawn as ops
    # every node maps to what stands for it now: ops inside the open frames, boxes elsewhere
    node_in_inner = next(nid for nid in h.groups[inner].nodes if g.node(nid).op_type not in ("Const", "Constant"))
    assert view.element_of[node_in_inner] == f"n{node_in_inner}"
    assert plain.element_of[node_in_inner] == f"g{outer}"
    assert h.item_at(0, node_in_inner, view.expanded) == node_in_inner and h.item_at(0, node_in_inner) == -(outer + 1)
    boxes = h.group_boxes(0, [outer, inner])
    assert boxes[outer] is None and boxes[inner] is None and boxes[0] is None
    for c in h.groups[outer].children:
        if c != inner:
            assert boxes[c] == f"g{c}"
    # edges: each data edge between two items is drawn once (direct) or counted on the pair (group edges)
    drawn = {n.id for n in view.nodes}
    assert all(e.src in drawn and e.dst in drawn for e in view.edges)
    expected: Counter[tuple[int, int]] = Counter()
    for src, _, dst, _ in g.data_edges():
        pair = _item_pair(view, src.id, dst.id)  # a Const folded into its consumer stands on the consumer
        if pair[0] != pair[1]:
            expected[pair] += 1
    got: Counter[tuple[int, int]] = Counter()
    for e in view.edges:
        got[(e.src, e.dst)] += int(e.label) if e.src_port == -2 and e.label else 1
    assert got == +expected


def _item_pair(view: Any, src: int, dst: int) -> tuple[int, int]:
    """The drawn items (ids of ``view.nodes``) an edge src -> dst is drawn between."""
    by_element = {n.element or f"n{n.id}": n.id for n in view.nodes}
    return by_element[view.element_of[src]], by_element[view.element_of[dst]]


def test_expansions_outside_the_level_or_inside_a_closed_group_are_ignored():
    g = transformer_like(3000)
    h = derive_hierarchy(g, max_children=30)
    outer, inner = _expandable(h)
    assert h.open_groups(0, [inner]) == (0,)  # its parent is closed
    assert h.open_groups(outer, [h.root.children[0] if h.root.children[0] != outer else h.root.children[1]]) == (outer,)
    assert h.level_view(0, expanded=[inner]).nodes == h.level_view(0).nodes
    # collapsing the outer group collapses what is open inside it too: the same view as never expanded
    assert h.open_groups(0, [outer, inner]) == (0, outer, inner)


def test_a_view_with_frames_lays_out_as_nested_graphviz_clusters_with_their_own_ids():
    g = transformer_like(3000)
    h = derive_hierarchy(g, max_children=30)
    outer, inner = _expandable(h)
    dot = view_to_dot(h.level_view(0, expanded=[outer, inner]))
    assert dot.index(f"subgraph cluster_{outer} {{") < dot.index(f"subgraph cluster_{inner} {{")
    svg = LayoutCache().layout(h.level_view(0, expanded=[outer, inner]))
    assert f'<g id="x{outer}" class="cluster gb_cluster"' in svg and f'<g id="x{inner}" class="cluster gb_cluster"' in svg


def test_the_workbench_expands_and_collapses_groups_in_place_with_cached_layouts():
    g = transformer_like(3000)
    wb = Workbench(g, threshold=1500, layout_timeout=4.5)  # a private layout cache
    h = wb.hierarchy()
    outer, inner = _expandable(h)
    cache = wb.layout_cache
    wb._on_message(wb, {"action": "expand_group", "group": outer}, [])
    assert wb.view_info["level"] == 0 and wb.view_info["expanded"] == [outer]
    assert [c["group"] for c in wb.levels] == [0]  # in place: the breadcrumb does not grow
    assert f'id="x{outer}"' in wb.svg and f'id="g{inner}"' in wb.svg
    assert wb.status_text.startswith(f"expanded {h.groups[outer].label}")
    wb.expand_group(inner)
    assert wb.view.expanded == (outer, inner) and f'id="x{inner}"' in wb.svg
    made = cache.misses
    wb._on_message(wb, {"action": "collapse_group", "group": outer}, [])  # takes the inner frame with it
    assert wb.view.expanded == () and f'id="g{outer}"' in wb.svg
    assert cache.misses == made  # the root as first drawn: from the cache
    wb.expand_group(outer)
    assert cache.misses == made  # drawn before too
    with pytest.raises(LookupError, match="not drawn in this level"):
        wb.expand_group(10**6)
    with pytest.raises(LookupError, match="not expanded"):
        wb.collapse_group(inner)
    # opening a level of its own starts without expansions; coming back up too
    wb.open_group(outer)
    assert wb.view.level == outer and wb.view.expanded == ()
    wb.level_up()
    assert wb.view.level == 0 and wb.view.expanded == ()


def test_candidates_are_counted_on_the_boxes_inside_an_expanded_frame_and_coloured_on_its_ops():
    g = transformer_like(3000)
    mms = g.nodes_of_type("MatMul")[:40]
    records = [{"pass_name": "P", "stage": "BeforeInferShape", "status": "REPLACED",
                "target_node_ids": [mm.id], "target_node_names": [mm.name]} for mm in mms]
    wb = Workbench(_Run(_CountingSnapshots({"PreRunBegin": g}), g, records), threshold=1500)
    wb.select_pass("P")
    h = wb.hierarchy()
    top = h.path(h.group_of[mms[0].id])[1]
    before = wb.group_counts[f"g{top}"]["candidates"]
    wb.expand_group(top)
    counts = wb.group_counts
    assert f"g{top}" not in counts
    assert sum(c["candidates"] for c in counts.values()) == 40  # still every candidate, on smaller boxes
    inside = [el for el in counts if h.groups[int(el[1:])].parent == top]
    assert sum(counts[el]["candidates"] for el in inside) == before
    path = h.path(h.group_of[mms[0].id])
    while len(path) > 2 and path[-1] not in wb.view.clusters:
        wb.expand_group(path[len(wb.view.expanded) + 1])
    if h.group_of[mms[0].id] in wb.view.clusters:  # the MatMul's own group is open: the op itself is coloured
        assert f"n{mms[0].id}" in wb.highlight


def test_the_layered_layout_draws_frames_around_the_items_of_expanded_groups():
    g = transformer_like(3000)
    h = derive_hierarchy(g, max_children=30)
    outer, inner = _expandable(h)
    view = h.level_view(0, expanded=[outer, inner])
    svg, _ = layered_svg(view, engine="simple")
    frames = dict(re.findall(r'<g id="x(\d+)" class="cluster gb_cluster">\s*<polygon[^>]* points="([^"]*)"', svg))
    assert set(frames) == {str(outer), str(inner)}

    def box(points: str) -> tuple[float, float, float, float]:
        xy = [tuple(map(float, p.split(","))) for p in points.split()]
        return min(x for x, _ in xy), min(y for _, y in xy), max(x for x, _ in xy), max(y for _, y in xy)

    o, i = box(frames[str(outer)]), box(frames[str(inner)])
    assert o[0] < i[0] and o[1] < i[1] and i[2] < o[2] and i[3] < o[3]  # the inner frame inside the outer one
    for n in view.nodes:  # every item of a frame inside it
        if n.cluster == inner:
            m = re.search(rf'<g id="n{n.id}" class="node[^"]*">\s*<polygon[^>]* points="([^"]*)"', svg)
            b = box(m.group(1))
            assert i[0] <= b[0] and i[1] <= b[1] and b[2] <= i[2] and b[3] <= i[3]


def test_revealing_a_node_expands_every_group_down_to_it_and_keeps_it_selected():
    g = transformer_like(3000)
    wb = Workbench(g, threshold=1500)
    relu = g.node_by_name("blk300/relu")
    wb.select_node(relu.id)
    assert wb.view_info["focused"]  # a focused view around the node
    wb._on_message(wb, {"action": "expand_group", "group": -1}, [])  # "e" over no box: reveal the selection
    h = wb.hierarchy()
    path = h.path(h.group_of[relu.id])
    assert wb.view.level == 0 and wb.view.expanded == tuple(path[1:]) and len(path) > 2
    assert wb.view.element_of[relu.id] == f"n{relu.id}" and f'id="n{relu.id}"' in wb.svg
    assert wb.selected_node == relu.id and "blk300/relu in the model" in wb.status_text
    # from a level drawn below the root, the path is expanded from that level on
    wb.open_level(path[1])
    wb.reveal_node(relu.id)
    assert wb.view.level == path[1] and wb.view.expanded == tuple(path[2:])
    with pytest.raises(LookupError, match="no node"):
        wb.reveal_node(10**7)
    small = Workbench(transformer_like(300), threshold=1500)
    with pytest.raises(LookupError, match="drawn whole"):
        small.reveal_node(0)
    small.selected_node = -1
    small._on_message(small, {"action": "expand_group", "group": -1}, [])
    assert "select a node" in small.status_text


def test_a_hierarchy_keeps_a_bounded_number_of_expanded_views(monkeypatch):
    from gebench.viz import _hierarchy

    monkeypatch.setattr(_hierarchy, "VIEWS_KEPT", 3)
    g = transformer_like(3000)
    h = derive_hierarchy(g, max_children=30)
    children = h.root.children[:5]
    for c in children:
        h.level_view(0, expanded=[c])
    assert len(h._levels) == len(h._reps) == 3 and len(h._boxes) <= 3
    assert (0, children[-1]) in h._levels and (0, children[0]) not in h._levels  # the oldest went first
    assert h.level_view(0, expanded=[children[0]]).expanded == (children[0],)  # worked out again
