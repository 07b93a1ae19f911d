"""Matcher rules (spec §3.5, §5.8, §5.9), pattern validation and the fuse-cycle check."""

from __future__ import annotations

from gebench import ir
from gebench.fusion import (
    Matcher,
    MismatchKind,
    PatternGraph,
    decompose_boundary,
    rewrite,
    would_create_cycle,
)
from test_fusion_core_helpers import (
    FakeAttr,
    FakeIO,
    FakeSchema,
    Recorder,
    build,
    const,
    data,
    gemm_replacement,
    matmul_add_pattern,
    matmul_add_target,
    use_schemas,
)


def all_matches(pattern: PatternGraph, target: ir.Graph, **kw) -> list:
    return list(Matcher(pattern, target, **kw))


def test_matmul_add_matches_with_bindings_boundary_and_captures():
    g = matmul_add_target()
    pg = matmul_add_pattern()
    pat = PatternGraph(pg, captures=[(pg.node_by_name("pmm").id, 0), (pg.node_by_name("a").id, 0)])
    assert pat.validate() is None
    matches = all_matches(pat, g)
    assert len(matches) == 1
    m = matches[0]
    assert [n.name for n in m.matched_nodes()] == ["mm", "add"]
    assert m.bindings[pg.node_by_name("c").id] == (g.node_by_name("b"), 0)
    assert m.bindings[pg.node_by_name("padd").id] == (g.node_by_name("add"), None)
    assert m.captured(0) == (g.node_by_name("mm"), 0)
    assert m.captured(1) == (g.node_by_name("x"), 0)
    b = m.boundary
    assert [[(n.name, p) for n, p in bi.anchors] for bi in b.inputs] == [[("mm", 0)], [("mm", 1)], [("add", 1)]]
    assert [bi.producer(g)[0].name for bi in b.inputs] == ["x", "w", "b"]
    assert [(n.name, p) for n, p in b.outputs] == [("add", 0)]


def test_candidates_in_graph_order_and_several_matches():
    g = build("t", [
        ("x", "Data", [], 1, data(0)),
        ("r1", "Relu", ["x"], 1),
        ("r2", "Relu", ["r1"], 1),
        ("r3", "Relu", ["x"], 1),
        ("o", "NetOutput", ["r2", "r3"], 0),
    ])
    pat = PatternGraph(build("p", [("d", "Data", [], 1, data(0)), ("r", "Relu", ["d"], 1),
                                   ("o", "NetOutput", ["r"], 0)]))
    assert [m.matched_nodes()[0].name for m in all_matches(pat, g)] == ["r1", "r2", "r3"]


def test_const_and_constant_are_the_same_type():
    g = build("t", [
        ("x", "Data", [], 1, data(0)),
        ("k", "Constant", [], 1, const([2.0])),
        ("mul", "Mul", ["x", "k"], 1),
        ("k2", "Constant", [], 1, const([1.0])),
        ("o", "NetOutput", ["mul", "k2"], 0),
    ])
    inner = PatternGraph(build("p", [("d", "Data", [], 1, data(0)), ("c", "Const", [], 1),
                                     ("m", "Mul", ["d", "c"], 1), ("o", "NetOutput", ["m"], 0)]))
    assert [n.name for n in all_matches(inner, g)[0].matched_nodes()] == ["k", "mul"]
    as_output = PatternGraph(build("p2", [("c", "Const", [], 1), ("o", "NetOutput", ["c"], 0)]))
    assert [m.matched_nodes()[0].name for m in all_matches(as_output, g)] == ["k", "k2"]
    # a non-constant producer never passes the Const matcher
    g2 = build("t2", [("x", "Data", [], 1, data(0)), ("y", "Data", [], 1, data(1)),
                      ("mul", "Mul", ["x", "y"], 1), ("o", "NetOutput", ["mul"], 0)])
    rec = Recorder()
    assert all_matches(inner, g2, recorder=rec) == []
    (anchor, detail, bound), = rec.mismatches
    assert anchor.name == "mul" and detail["kind"] == MismatchKind.OP_TYPE.value
    assert (detail["pattern_node"], detail["expected"], detail["actual"]) == ("c", "Const", "Data")


def test_input_count_mismatch_is_reported_with_the_pattern_node():
    g = build("t", [
        ("x", "Data", [], 1, data(0)), ("w", "Data", [], 1, data(1)), ("bias", "Data", [], 1, data(2)),
        ("mm", "MatMul", ["x", "w", "bias"], 1),
        ("b", "Const", [], 1, const([0.5])),
        ("add", "Add", ["mm", "b"], 1),
        ("o", "NetOutput", ["add"], 0),
    ])
    rec = Recorder()
    assert all_matches(PatternGraph(matmul_add_pattern()), g, recorder=rec) == []
    (anchor, detail, bound), = rec.mismatches
    assert anchor.name == "add"
    assert detail["kind"] == "input_count" and detail["pattern_node"] == "pmm"
    assert (detail["expected"], detail["actual"]) == (2, 3)
    assert bound == 3  # padd, pmm and the wildcard c were bound before pmm's inputs were compared


def test_unconnected_optional_inputs_are_not_counted():
    g = build("t", [
        ("x", "Data", [], 1, data(0)), ("w", "Const", [], 1, const([1.0])),
        ("mm", "MatMul", ["x", "w", None], 1),
        ("b", "Const", [], 1, const([0.5])),
        ("add", "Add", ["mm", "b"], 1),
        ("o", "NetOutput", ["add"], 0),
    ])
    assert len(all_matches(PatternGraph(matmul_add_pattern()), g)) == 1


def test_producer_port_must_be_equal():
    pattern = PatternGraph(build("p", [
        ("d", "Data", [], 1, data(0)), ("s", "SplitTwo", ["d"], 2), ("r", "Relu", ["s:0"], 1),
        ("o", "NetOutput", ["r"], 0)]))
    ok = build("t", [("x", "Data", [], 1, data(0)), ("s", "SplitTwo", ["x"], 2), ("r", "Relu", ["s:0"], 1),
                     ("o", "NetOutput", ["r"], 0)])
    assert len(all_matches(pattern, ok)) == 1
    bad = build("t", [("x", "Data", [], 1, data(0)), ("s", "SplitTwo", ["x"], 2), ("r", "Relu", ["s:1"], 1),
                      ("o", "NetOutput", ["r"], 0)])
    rec = Recorder()
    assert all_matches(pattern, bad, recorder=rec) == []
    detail = rec.mismatches[0][1]
    assert (detail["kind"], detail["expected"], detail["actual"]) == ("producer_port", 0, 1)
    # the output port of the anchor must exist on the candidate
    out1 = PatternGraph(build("p", [("d", "Data", [], 1, data(0)), ("s", "SplitTwo", ["d"], 2),
                                    ("o", "NetOutput", ["s:1"], 0)]))
    one_out = build("t", [("x", "Data", [], 1, data(0)), ("s", "SplitTwo", ["x"], 1), ("o", "NetOutput", ["s"], 0)])
    rec = Recorder()
    assert all_matches(out1, one_out, recorder=rec) == []
    assert rec.mismatches[0][1]["kind"] == "output_port"


def test_data_used_twice_binds_one_producer_output():
    pattern = PatternGraph(build("p", [("d", "Data", [], 1, data(0)), ("m", "Mul", ["d", "d"], 1),
                                       ("o", "NetOutput", ["m"], 0)]))
    same = build("t", [("x", "Data", [], 1, data(0)), ("m", "Mul", ["x", "x"], 1), ("o", "NetOutput", ["m"], 0)])
    (m,) = all_matches(pattern, same)
    assert [(n.name, p) for n, p in m.boundary.inputs[0].anchors] == [("m", 0), ("m", 1)]
    differ = build("t", [("x", "Data", [], 1, data(0)), ("y", "Data", [], 1, data(1)),
                         ("m", "Mul", ["x", "y"], 1), ("o", "NetOutput", ["m"], 0)])
    rec = Recorder()
    assert all_matches(pattern, differ, recorder=rec) == []
    assert rec.mismatches[0][1]["kind"] == "wildcard_inconsistent"
    ports = build("t", [("x", "Data", [], 1, data(0)), ("s", "SplitTwo", ["x"], 2),
                        ("m", "Mul", ["s:0", "s:1"], 1), ("o", "NetOutput", ["m"], 0)])
    assert all_matches(pattern, ports) == []


def _two_output_pattern() -> PatternGraph:
    return PatternGraph(build("p", [
        ("d", "Data", [], 1, data(0)), ("e", "Exp", ["d"], 1),
        ("r", "Relu", ["e"], 1), ("s", "Sigmoid", ["e"], 1),
        ("o", "NetOutput", ["r", "s"], 0)]))


def test_multi_output_pattern_backtracks_to_a_consistent_pair():
    g = build("t", [
        ("x", "Data", [], 1, data(0)), ("y", "Data", [], 1, data(1)),
        ("e1", "Exp", ["x"], 1), ("e2", "Exp", ["y"], 1),
        ("s2", "Sigmoid", ["e2"], 1),  # first Sigmoid in graph order belongs to the other Exp
        ("r1", "Relu", ["e1"], 1), ("s1", "Sigmoid", ["e1"], 1),
        ("r2", "Relu", ["e2"], 1),
        ("o", "NetOutput", ["r1", "s1", "r2", "s2"], 0),
    ])
    matches = all_matches(_two_output_pattern(), g)
    assert [[n.name for n in m.matched_nodes()] for m in matches] == [["e1", "r1", "s1"], ["e2", "s2", "r2"]]
    assert [(n.name, p) for n, p in matches[1].boundary.outputs] == [("r2", 0), ("s2", 0)]


def test_multi_output_pattern_without_partner_is_a_near_miss():
    g = build("t", [("x", "Data", [], 1, data(0)), ("e", "Exp", ["x"], 1), ("r", "Relu", ["e"], 1),
                    ("t", "Tanh", ["e"], 1), ("o", "NetOutput", ["r", "t"], 0)])
    rec = Recorder()
    assert all_matches(_two_output_pattern(), g, recorder=rec) == []
    (_anchor, detail, bound), = rec.mismatches
    assert detail["kind"] == "no_candidate" and detail["output_index"] == 1 and bound == 3


def test_inner_node_used_outside_is_a_boundary_violation():
    g = matmul_add_target()
    extra = g.add_node("Relu", name="other_user", inputs=1, outputs=1)
    g.add_edge(g.node_by_name("mm"), 0, extra, 0)
    rec = Recorder()
    assert all_matches(PatternGraph(matmul_add_pattern()), g, recorder=rec) == []
    (nodes, escaping, detail), = rec.violations
    assert escaping.name == "mm" and detail["outside_consumer"] == "other_user"
    assert [n.name for n in nodes] == ["mm", "add"]
    assert rec.mismatches == []


def test_const_value_match_compares_shape_dtype_and_bytes():
    def target(values, dtype=ir.DataType.DT_FLOAT, shape=None):
        return build("t", [("x", "Data", [], 1, data(0)), ("k", "Const", [], 1, const(values, dtype, shape)),
                           ("add", "Add", ["x", "k"], 1), ("o", "NetOutput", ["add"], 0)])

    pattern = PatternGraph(build("p", [("d", "Data", [], 1, data(0)), ("c", "Const", [], 1, const([0.0])),
                                       ("a", "Add", ["d", "c"], 1), ("o", "NetOutput", ["a"], 0)]))
    assert len(all_matches(pattern, target([0.0]), const_value_match=True)) == 1
    assert len(all_matches(pattern, target([1.0]), const_value_match=False)) == 1
    for bad in (target([1.0]), target([0.0], ir.DataType.DT_FLOAT16), target(0.0, shape=[]),
                target([-0.0]), target([0.0, 0.0])):
        rec = Recorder()
        assert all_matches(pattern, bad, const_value_match=True, recorder=rec) == []
        assert rec.mismatches[0][1]["kind"] == "const_value"
    no_value = build("t", [("x", "Data", [], 1, data(0)), ("k", "Const", [], 1), ("add", "Add", ["x", "k"], 1),
                           ("o", "NetOutput", ["add"], 0)])
    assert all_matches(pattern, no_value, const_value_match=True) == []
    # a pattern Const without a value matches any constant
    any_const = PatternGraph(build("p", [("d", "Data", [], 1, data(0)), ("c", "Const", [], 1),
                                         ("a", "Add", ["d", "c"], 1), ("o", "NetOutput", ["a"], 0)]))
    assert len(all_matches(any_const, target([7.0]), const_value_match=True)) == 1


SCHEMAS = {
    "Act": FakeSchema("Act", (FakeIO("x", "required"),), (FakeIO("y", "required"),),
                      (FakeAttr("alpha", "Float", False, 1.0), FakeAttr("mode", "String", False, "fast"))),
    "Other": FakeSchema("Other", (FakeIO("x", "required"),), (FakeIO("y", "required"),),
                        (FakeAttr("alpha", "Float", False, 1.0), FakeAttr("mode", "String", False, "fast"))),
    "Tail": FakeSchema("Tail", (FakeIO("x", "required"),), (FakeIO("y", "required"),), ()),
    "Cat": FakeSchema("Cat", (FakeIO("x", "dynamic"),), (FakeIO("y", "required"),), ()),
}


def _act_graph(attrs, inner="Act"):
    return build("t", [("x", "Data", [], 1, data(0)), ("a", inner, ["x"], 1, attrs), ("t", "Tail", ["a"], 1),
                       ("o", "NetOutput", ["t"], 0)])


def _act_pattern(attrs):
    return PatternGraph(build("p", [("d", "Data", [], 1, data(0)), ("a", "Act", ["d"], 1, attrs),
                                    ("t", "Tail", ["a"], 1), ("o", "NetOutput", ["t"], 0)]))


def test_ir_attr_match_fills_defaults_and_compares_values(monkeypatch):
    use_schemas(monkeypatch, SCHEMAS)
    pattern = _act_pattern({"alpha": 1.0})
    assert len(all_matches(pattern, _act_graph({}), ir_attr_match=True)) == 1  # unset = default 1.0
    assert len(all_matches(pattern, _act_graph({"alpha": 1, "mode": "fast"}), ir_attr_match=True)) == 1
    rec = Recorder()
    assert all_matches(pattern, _act_graph({"alpha": 2.0}), ir_attr_match=True, recorder=rec) == []
    detail = rec.mismatches[0][1]
    assert detail["kind"] == "ir_attr" and detail["expected"] == {"alpha": 1.0} and detail["actual"] == {"alpha": 2.0}
    assert all_matches(pattern, _act_graph({"mode": "slow"}), ir_attr_match=True) == []
    # without the option attrs are ignored
    assert len(all_matches(pattern, _act_graph({"alpha": 2.0}))) == 1


def test_ir_attr_match_skips_the_type_check_of_inner_nodes(monkeypatch):
    use_schemas(monkeypatch, SCHEMAS)
    pattern = _act_pattern({})
    other = _act_graph({}, inner="Other")  # same IR attr names and values, different type
    assert len(all_matches(pattern, other, ir_attr_match=True)) == 1
    assert all_matches(pattern, other) == []


def test_data_pattern_output_only_finds_data_nodes():
    pattern = PatternGraph(build("p", [("d", "Data", [], 1, data(0)), ("o", "NetOutput", ["d"], 0)]))
    g = build("t", [("x", "Data", [], 1, data(0)), ("r", "Relu", ["x"], 1), ("o", "NetOutput", ["r"], 0)])
    matches = all_matches(pattern, g)
    assert [m.boundary.outputs[0][0].name for m in matches] == ["x"]
    assert matches[0].matched_nodes() == []


def test_pattern_validation_rules(monkeypatch):
    use_schemas(monkeypatch, SCHEMAS)
    assert PatternGraph(build("p", [("d", "Data", [], 1, data(0)), ("r", "Relu", ["d"], 1)])).validate() \
        .endswith("has no NetOutput node, so it has no outputs")
    p = build("p", [("d", "Data", [], 1, data(0)), ("r", "Relu", ["d"], 1), ("s", "Relu", ["d"], 1),
                    ("o", "NetOutput", ["r"], 0)])
    p.add_control_edge(p.node_by_name("s"), p.node_by_name("r"))
    assert "control edges" in PatternGraph(p).validate()
    p2 = build("p", [("d", "Data", [], 1, data(0)), ("o", "NetOutput", ["d"], 0)])
    p2.add_control_edge(p2.node_by_name("d"), p2.node_by_name("o"))
    assert PatternGraph(p2).validate() is None  # Data/NetOutput may have control edges
    dyn = ir.Graph("p")
    d = dyn.add_node("Data", name="d", outputs=1, attrs=data(0))
    cat = dyn.add_node("Cat", name="cat", inputs=2, outputs=1, input_names=["x0", "x1"])
    out = dyn.add_node("NetOutput", name="o", inputs=1)
    dyn.add_edge(d, 0, cat, 0)
    dyn.add_edge(d, 0, cat, 1)
    dyn.add_edge(cat, 0, out, 0)
    reason = PatternGraph(dyn).validate()
    assert "dynamic input 'x0'" in reason
    g = build("t", [("x", "Data", [], 1, data(0)), ("c", "Cat", ["x", "x"], 1), ("o", "NetOutput", ["c"], 0)])
    matcher = Matcher(PatternGraph(dyn), g)
    assert matcher.next() is None and matcher.invalid_reason == reason
    sub = build("p", [("d", "Data", [], 1, data(0)), ("o", "NetOutput", ["d"], 0)])
    sub.add_subgraph(ir.Graph("body"))
    assert "subgraphs" in PatternGraph(sub).validate()
    unfed = build("p", [("d", "Data", [], 1, data(0)), ("o", "NetOutput", ["d", None], 0)])
    assert "not connected" in PatternGraph(unfed).validate()


def test_match_loop_sees_rewrites_removed_and_new_nodes():
    g = build("t", [("x", "Data", [], 1, data(0)), ("r1", "Relu", ["x"], 1), ("r2", "Relu", ["r1"], 1),
                    ("o", "NetOutput", ["r2"], 0)])
    pattern = PatternGraph(build("p", [("d", "Data", [], 1, data(0)), ("r", "Relu", ["d"], 1),
                                       ("o", "NetOutput", ["r"], 0)]))
    to_relu6 = build("rep", [("d", "Data", [], 1, data(0)), ("Relu6", "Relu6", ["d"], 1),
                             ("o", "NetOutput", ["Relu6"], 0)])
    matcher = Matcher(pattern, g)
    m = matcher.next()
    assert m.matched_nodes()[0].name == "r1"
    # remove r2 behind the matcher's back, and create a new Relu: the loop skips one and appends the other
    rewrite(g, m.boundary, to_relu6, pass_name="p")
    r2 = g.node_by_name("r2")
    g.replace_all_uses(r2, 0, g.producer(r2, 0)[0], 0)
    g.remove_node(r2)
    fresh = g.add_node("Relu", name="fresh", inputs=1, outputs=1)
    g.add_edge(g.node_by_name("x"), 0, fresh, 0)
    m2 = matcher.next()
    assert m2 is not None and m2.matched_nodes()[0].name == "fresh"
    assert matcher.next() is None
    g.verify()


def test_replacement_recreating_the_pattern_is_matched_again():
    g = build("t", [("x", "Data", [], 1, data(0)), ("n", "Neg", ["x"], 1), ("o", "NetOutput", ["n"], 0)])
    pattern = PatternGraph(build("p", [("d", "Data", [], 1, data(0)), ("n", "Neg", ["d"], 1),
                                       ("o", "NetOutput", ["n"], 0)]))
    same = build("rep", [("d", "Data", [], 1, data(0)), ("Neg", "Neg", ["d"], 1), ("o", "NetOutput", ["Neg"], 0)])
    matcher = Matcher(pattern, g)
    seen = []
    for _ in range(3):
        m = matcher.next()
        seen.append(m.matched_nodes()[0].id)
        rewrite(g, m.boundary, same, pass_name="p")
    assert len(set(seen)) == 3 and len(g.nodes_of_type("Neg")) == 1
    g.verify()


def test_would_create_cycle_positive_and_negative():
    g = build("t", [("x", "Data", [], 1, data(0)), ("a", "Relu", ["x"], 1), ("b", "Exp", ["a"], 1),
                    ("c", "Add", ["a", "b"], 1), ("d", "Neg", ["x"], 1), ("o", "NetOutput", ["c", "d"], 0)])
    a, b, c, d = (g.node_by_name(n) for n in "abcd")
    assert would_create_cycle(g, [a, c]) is True  # a -> b -> c leaves the set and comes back
    assert would_create_cycle(g, [a, b, c]) is False
    assert would_create_cycle(g, [a, d]) is False
    assert would_create_cycle(g, [b]) is False
    g2 = build("t", [("x", "Data", [], 1, data(0)), ("a", "Relu", ["x"], 1), ("b", "Exp", ["x"], 1),
                     ("c", "Add", ["b", "x"], 1), ("o", "NetOutput", ["a", "c"], 0)])
    a2, b2, c2 = (g2.node_by_name(n) for n in "abc")
    g2.add_control_edge(a2, b2)  # control edges count too
    assert would_create_cycle(g2, [a2, c2]) is True


def test_decompose_boundary_merges_a_shared_producer_and_skips_unfed_inputs():
    g = build("t", [("x", "Data", [], 1, data(0)), ("y", "Data", [], 1, data(1)),
                    ("s", "SplitTwo", ["x"], 2),
                    ("n", "Op", ["x", "y", None, "x", "s:1", "s:0"], 3), ("o", "NetOutput", ["n:0", "n:2"], 0)])
    b = decompose_boundary(g, g.node_by_name("n"))
    assert [[p for _, p in bi.anchors] for bi in b.inputs] == [[0, 3], [1], [4], [5]]
    assert [(bi.producer(g)[0].name, bi.producer(g)[1]) for bi in b.inputs] == [("x", 0), ("y", 0), ("s", 1), ("s", 0)]
    assert [(n.name, p) for n, p in b.outputs] == [("n", 0), ("n", 1), ("n", 2)]


def test_gemm_rewrite_via_matcher_keeps_the_graph_valid():
    g = matmul_add_target()
    m = Matcher(PatternGraph(matmul_add_pattern()), g).next()
    result = rewrite(g, m.boundary, gemm_replacement(), pass_name="MatMulAddFusion")
    g.verify()
    (gemm,) = g.nodes_of_type("GEMM")
    assert result.added == [gemm.id] and gemm.provenance == "MatMulAddFusion"
    assert [p[0].name for p in g.producers(gemm)] == ["x", "w", "b"]
    assert g.uses(gemm, 0) == [(g.node_by_name("relu"), 0)]


def test_ir_attr_match_with_catalogue_schemas():
    from gebench import ops

    def target(attrs):
        g = ir.Graph("t")
        x = g.add_node("Data", name="x", outputs=1, attrs=data(0))
        w = g.add_node("Data", name="w", outputs=1, attrs=data(1))
        mm = ops.make_node(g, "MatMulV2", name="mm", attrs=attrs)
        out = g.add_node("NetOutput", name="o", inputs=1)
        g.add_edge(x, 0, mm, 0)
        g.add_edge(w, 0, mm, 1)
        g.add_edge(mm, 0, out, 0)
        return g

    pattern = PatternGraph(target({}))  # same shape of graph: Data wildcards, MatMulV2, NetOutput
    assert len(all_matches(pattern, target({"transpose_x1": False}), ir_attr_match=True)) == 1
    assert all_matches(pattern, target({"transpose_x1": True}), ir_attr_match=True) == []
    assert len(all_matches(pattern, target({"transpose_x1": True}))) == 1


def test_catalogue_op_with_dynamic_inputs_is_rejected_in_patterns():
    from gebench import ops

    p = ir.Graph("p")
    d = p.add_node("Data", name="d", outputs=1, attrs=data(0))
    cat = ops.make_node(p, "ConcatV2", name="cat", dynamic_inputs={"x": 2})
    out = p.add_node("NetOutput", name="o", inputs=1)
    p.add_edge(d, 0, cat, 0)
    p.add_edge(d, 0, cat, 1)
    p.add_edge(cat, 0, out, 0)
    assert "dynamic input 'x0'" in PatternGraph(p).validate()


def test_a_wildcard_that_is_also_a_later_output_must_sit_on_a_target_data_node():
    # outputs: Relu(d) and d itself; d is bound by the Relu's walk, then looked up by type as output 1
    pattern = PatternGraph(build("p", [("d", "Data", [], 1, data(0)), ("r", "Relu", ["d"], 1),
                                       ("o", "NetOutput", ["r", "d"], 0)]))
    on_data = build("t", [("x", "Data", [], 1, data(0)), ("r", "Relu", ["x"], 1), ("o", "NetOutput", ["r"], 0)])
    (m,) = all_matches(pattern, on_data)
    assert [(n.name, p) for n, p in m.boundary.outputs] == [("r", 0), ("x", 0)]
    on_op = build("t", [("x", "Data", [], 1, data(0)), ("e", "Exp", ["x"], 1), ("r", "Relu", ["e"], 1),
                        ("o", "NetOutput", ["r"], 0)])
    rec = Recorder()
    assert all_matches(pattern, on_op, recorder=rec) == []
    detail = rec.mismatches[0][1]
    assert (detail["kind"], detail["expected"], detail["actual"]) == ("op_type", "Data", "Exp")
