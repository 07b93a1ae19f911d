"""Property tests: a pattern cut out of a random DAG matches where it was cut, and rewriting every match with
an identical replacement keeps the graph valid and its shape unchanged."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from gebench import ir
from gebench.fusion import Boundary, BoundaryInput, Matcher, PatternGraph, RewriteError, rewrite

OP_TYPES = ["A", "B", "C"]


@st.composite
def dag_and_region(draw):
    """A random DAG (sources are Data nodes) and a weakly connected set of its op nodes."""
    g = ir.Graph("rand")
    n_src = draw(st.integers(1, 3))
    nodes = [g.add_node("Data", name=f"in{i}", outputs=1, attrs={"index": i}) for i in range(n_src)]
    for i in range(draw(st.integers(1, 14))):
        op = draw(st.sampled_from(OP_TYPES))
        n_in = draw(st.integers(1, 3))
        node = g.add_node(op, name=f"n{i}", inputs=n_in, outputs=draw(st.integers(1, 2)))
        for port in range(n_in):
            src = nodes[draw(st.integers(0, len(nodes) - 1))]
            g.add_edge(src, draw(st.integers(0, len(src.outputs) - 1)), node, port)
        nodes.append(node)
    ops = [n for n in nodes if n.op_type != "Data"]
    seed = ops[draw(st.integers(0, len(ops) - 1))]
    region = {seed.id: seed}
    for _ in range(draw(st.integers(0, 5))):
        frontier = []
        for n in region.values():
            frontier += [p[0] for p in g.producers(n) if p is not None and p[0].op_type != "Data"]
            frontier += [c for c in g.data_successors(n)]
        frontier = [n for n in frontier if n.id not in region]
        if not frontier:
            break
        pick = frontier[draw(st.integers(0, len(frontier) - 1))]
        region[pick.id] = pick
    return g, region


def cut_pattern(g: ir.Graph, region: dict[int, ir.Node]) -> tuple[ir.Graph, dict[int, int]]:
    """The region as a pattern: outside producers become Data wildcards (one per producer output), every output
    port used outside the region or by nothing becomes a pattern output. Returns the pattern and a map from
    pattern node id to target node id."""
    p = ir.Graph("cut_pattern")
    copies: dict[int, ir.Node] = {}
    wildcards: dict[tuple[int, int], ir.Node] = {}
    outputs: list[tuple[ir.Node, int]] = []
    for node in sorted(region.values(), key=g.position):
        copies[node.id] = p.add_node(node.op_type, name=node.name, inputs=len(node.inputs),
                                     outputs=len(node.outputs))
    for node in sorted(region.values(), key=g.position):
        for port, prod in enumerate(g.producers(node)):
            src, sp = prod
            if src.id in region:
                p.add_edge(copies[src.id], sp, copies[node.id], port)
                continue
            key = (src.id, sp)
            if key not in wildcards:
                wildcards[key] = p.add_node("Data", name=f"w{len(wildcards)}", outputs=1,
                                            attrs={"index": len(wildcards)})
            p.add_edge(wildcards[key], 0, copies[node.id], port)
        for port in range(len(node.outputs)):
            uses = g.uses(node, port)
            if not uses or any(c.id not in region for c, _ in uses):
                outputs.append((copies[node.id], port))
    out = p.add_node("NetOutput", name="out", inputs=len(outputs))
    for k, (src, sp) in enumerate(outputs):
        p.add_edge(src, sp, out, k)
    mapping = {copies[tid].id: tid for tid in region}
    return p, mapping


@settings(max_examples=80, deadline=None)
@given(dag_and_region())
def test_cut_pattern_matches_where_it_was_cut_and_identity_rewrite_keeps_graph_valid(case):
    g, region = case
    pg, mapping = cut_pattern(g, region)
    pattern = PatternGraph(pg)
    assert pattern.validate() is None
    anchor_pid = pattern.outputs[0][0]
    anchor_tid = mapping[anchor_pid]
    matches = list(Matcher(pattern, g))
    anchored = [m for m in matches if m.bindings[anchor_pid][0].id == anchor_tid]
    assert anchored, "the pattern did not match where it was cut"
    for m in matches:  # every match is structurally sound
        assert len(m.matched_nodes()) == len(region)
        assert all(bi.anchors for bi in m.boundary.inputs)

    types_before = Counter(n.op_type for n in g.nodes())
    edges_before = len(g.data_edges())
    # GE matches op types and inputs, not output counts, so the anchor's first match may bind a node other than
    # the cut one (say, one with a second output used outside); prefer the match of the cut region itself
    exact = [m for m in anchored if {n.id for n in m.matched_nodes()} == set(region)]
    m = (exact or anchored)[0]
    matched = m.matched_nodes()
    result = rewrite(g, m.boundary, pg, pass_name="Identity")
    g.verify()
    assert all(g.node(i).provenance == "Identity" for i in result.added)
    if exact:
        assert Counter(n.op_type for n in g.nodes()) == types_before
        assert len(g.data_edges()) == edges_before
        assert len(result.added) == len(result.removed) == len(region)
    else:
        # a matched node that keeps a consumer outside the moved outputs stays, beside its copy
        assert set(result.removed) <= {n.id for n in matched} and len(result.added) == len(region)
        kept = [n for n in matched if n.id not in result.removed]
        assert all(g.num_uses(n) for n in kept)
        assert Counter(n.op_type for n in g.nodes()) == types_before + Counter(n.op_type for n in kept)


@st.composite
def random_rewrite(draw):
    """A random DAG with a few control edges, a random boundary over it and a random replacement."""
    g = ir.Graph("rand")
    nodes = [g.add_node("Data", name=f"in{i}", outputs=1, attrs={"index": i}) for i in range(draw(st.integers(1, 2)))]
    for i in range(draw(st.integers(2, 10))):
        n_in = draw(st.integers(1, 2))
        node = g.add_node(draw(st.sampled_from(OP_TYPES)), name=f"n{i}", inputs=n_in, outputs=draw(st.integers(1, 2)))
        for port in range(n_in):
            src = nodes[draw(st.integers(0, len(nodes) - 1))]
            g.add_edge(src, draw(st.integers(0, len(src.outputs) - 1)), node, port)
        nodes.append(node)
    for _ in range(draw(st.integers(0, 2))):
        a, b = sorted(draw(st.lists(st.integers(0, len(nodes) - 1), min_size=2, max_size=2, unique=True)))
        g.add_control_edge(nodes[a], nodes[b])
    ops = nodes[len(nodes) - len([n for n in nodes if n.op_type != "Data"]):]
    outs = []
    for _ in range(draw(st.integers(1, 2))):
        node = ops[draw(st.integers(0, len(ops) - 1))]
        outs.append((node, draw(st.integers(0, len(node.outputs) - 1))))
    inputs = []
    for _ in range(draw(st.integers(0, 3))):
        node = ops[draw(st.integers(0, len(ops) - 1))]
        inputs.append(BoundaryInput([(node, draw(st.integers(0, len(node.inputs) - 1)))]))
    rep = ir.Graph("rep")
    rnodes = [rep.add_node("Data", name=f"d{i}", outputs=1, attrs={"index": i}) for i in range(len(inputs))]
    for i in range(draw(st.integers(0, 3))):
        n_in = draw(st.integers(0, 2)) if rnodes else 0
        node = rep.add_node("R", name=f"r{i}", inputs=n_in, outputs=1)
        for port in range(n_in):
            rep.add_edge(rnodes[draw(st.integers(0, len(rnodes) - 1))], 0, node, port)
        rnodes.append(node)
    n_out = len(outs) + draw(st.sampled_from([0, 0, 0, 1]))
    net = rep.add_node("NetOutput", name="out", inputs=n_out)
    for k in range(n_out):
        if rnodes:
            rep.add_edge(rnodes[draw(st.integers(0, len(rnodes) - 1))], 0, net, k)
    return g, Boundary(inputs, outs), rep


@settings(max_examples=150, deadline=None)
@given(random_rewrite())
def test_random_rewrites_either_succeed_validly_or_leave_the_graph_unchanged(case):
    g, boundary, rep = case
    before = ir.to_text(g)
    old_consumers = [[(c.id, p) for c, p in g.uses(n, port)] for n, port in boundary.outputs]
    try:
        result = rewrite(g, boundary, rep, pass_name="R", check_self_contained=False)
    except RewriteError:
        assert ir.to_text(g) == before
        g.verify()
        return
    g.verify()
    alive = set(result.added)
    for node_id in result.removed:
        assert not g.has_node_id(node_id)
    for (_node, _port), consumers in zip(boundary.outputs, old_consumers, strict=True):
        for cid, cp in consumers:
            if g.has_node_id(cid) and cid not in alive:
                assert g.producer(g.node(cid), cp) is not None


@st.composite
def dag_region_and_control_edges(draw):
    """:func:`dag_and_region` plus a few forward control edges (which can make a fused region cyclic)."""
    g, region = draw(dag_and_region())
    nodes = g.nodes()
    for _ in range(draw(st.integers(0, 3))):
        a, b = sorted(draw(st.lists(st.integers(0, len(nodes) - 1), min_size=2, max_size=2, unique=True)))
        g.add_control_edge(nodes[a], nodes[b])
    return g, region


@settings(max_examples=120, deadline=None)
@given(dag_region_and_control_edges())
def test_a_match_that_passes_the_fuse_cycle_check_rewrites_the_same_with_or_without_the_known_region(case):
    """The runtime hands the matcher's region to the rewriter and skips its own checks: whenever the fuse-cycle
    check passes, the full checks must agree (no cycle, same region) and the result must be the same graph."""
    import itertools

    from gebench.fusion import _rewriter, would_create_cycle

    g, region = case
    pg, _ = cut_pattern(g, region)
    pattern = PatternGraph(pg)
    for m in Matcher(pattern, g):
        if would_create_cycle(g, m.matched_nodes()):
            continue
        texts = []
        for known in (None, m.region):
            work = g.copy()
            boundary = Boundary([BoundaryInput([(work.node(n.id), p) for n, p in bi.anchors])
                                 for bi in m.boundary.inputs], [(work.node(n.id), p) for n, p in m.boundary.outputs])
            region_copy = None if known is None else {i: work.node(i) for i in known}
            saved, _rewriter._RENAME_COUNTER = _rewriter._RENAME_COUNTER, itertools.count()  # same names in both
            try:
                rewrite(work, boundary, pg, pass_name="Identity", region=region_copy)
            finally:
                _rewriter._RENAME_COUNTER = saved
            work.verify()
            texts.append(ir.to_text(work))
        assert texts[0] == texts[1]
