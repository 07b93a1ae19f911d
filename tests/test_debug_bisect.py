"""Replaying a run up to a rewrite (``Run.graph_after_rewrite``) and bisecting numerics (``Run.bisect_numerics``)."""

from __future__ import annotations

import textwrap

import pytest

import gebench
from gebench import ir
from gebench.debug import (
    ReplayError,
    bisect_numerics,
    graph_after_rewrite,
    graph_after_rewrites,
    input_graph,
    rewrite_records,
)
from gebench.debug.replay import graph_after_rewrite_ir, graph_after_rewrites_ir, input_graph_ir
from gebench.ge.graph import Graph

# A_AbsAbs folds Abs(Abs(x)) into Abs(x), but its third replacement is Neg(x): wrong. B_ExpNeg (a later stage)
# turns Exp(Neg(x)) into Reciprocal(Exp(x)): a correct rewrite after the wrong one.
PASSES = """
from ge.es.all import Abs, Exp, Neg, Reciprocal
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass


@register_fusion_pass(name="A_AbsAbs", stage=PassStage.BEFORE_INFER_SHAPE)
class AbsAbs(PatternFusionPass):
    @pattern
    def abs_abs(self, inputs):
        return Abs(Abs(inputs[0]))

    def meet_requirements(self, match_result):
        return True

    def replacement(self, inputs):
        self.done = getattr(self, "done", 0) + 1
        if self.done == 3:
            return Neg(inputs[0])  # the deliberate bug: |x| is not -x
        return Abs(inputs[0])


@register_fusion_pass(name="B_ExpNeg", stage=PassStage.AFTER_INFER_SHAPE)
class ExpNeg(PatternFusionPass):
    @pattern
    def exp_neg(self, inputs):
        return Exp(Neg(inputs[0]))

    def meet_requirements(self, match_result):
        return True

    def replacement(self, inputs):
        return Reciprocal(Exp(inputs[0]))
"""


def _graph(pairs: int) -> str:
    lines = ["graph chain", "  #0 x = Data() {index=0} -> (y: DT_FLOAT[4,5])"]
    prev, nid = "x", 1
    for i in range(pairs):
        for name, op in ((f"a{i}", "Abs"), (f"b{i}", "Abs"), (f"r{i}", "Relu")):
            lines.append(f"  #{nid} {name} = {op}(x={prev}:0) -> (y: DT_FLOAT[4,5])")
            prev, nid = name, nid + 1
    lines.append(f"  #{nid} n = Neg(x={prev}:0) -> (y: DT_FLOAT[4,5])")
    lines.append(f"  #{nid + 1} e = Exp(x=n:0) -> (y: DT_FLOAT[4,5])")
    lines.append(f"  #{nid + 2} out = NetOutput(x0=e:0)")
    return "\n".join(lines) + "\n"


@pytest.fixture
def pass_file(tmp_path):
    path = tmp_path / "bisect_passes.py"
    path.write_text(textwrap.dedent(PASSES))
    return path


def _compile(pass_file, pairs):
    run = gebench.compile(ir.parse_text(_graph(pairs)), passes=[str(pass_file)])
    assert run.status == "SUCCESS", run.failure_reason
    return run


def _ops(graph):
    """Op types of ``graph`` (a ``ge.graph.Graph``: what users receive) but its Data and NetOutput nodes."""
    return [n.type for n in graph.get_all_nodes() if n.type not in ("Data", "NetOutput")]


def test_bisect_finds_the_one_wrong_rewrite(pass_file):
    run = _compile(pass_file, pairs=5)
    steps = rewrite_records(run)
    assert [s.record.pass_name for s in steps] == ["A_AbsAbs"] * 5 + ["B_ExpNeg"]
    assert not run.verify(seeds=[0], edge_cases=False).ok  # the run as a whole is wrong
    result = bisect_numerics(run, seed=0)
    assert result.number == 3 and result.index == steps[2].index
    record = result.record
    assert (record.pass_name, record.pattern_name, record.status.value) == ("A_AbsAbs", "AbsAbs_abs_abs_pattern",
                                                                           "REPLACED")
    wrong_pair = sorted(record.target_node_names)
    assert len(wrong_pair) == 2 and wrong_pair[0][1:] == wrong_pair[1][1:]  # a<i>, b<i> of one pair
    # the search compared the final graph and O(log n) replays: equivalent before the culprit, not after it
    assert result.checked[2] is True and result.checked[3] is False and result.checked[6] is False
    assert len(result.checked) <= 5
    assert run.bisect_numerics(seed=0) is record


def test_bisect_of_a_correct_run_is_none(pass_file):
    run = _compile(pass_file, pairs=2)  # two rewrites of A: the third (wrong) one never happens
    assert [s.record.pass_name for s in rewrite_records(run)] == ["A_AbsAbs", "A_AbsAbs", "B_ExpNeg"]
    assert run.bisect_numerics(seed=1) is None


def test_graph_after_each_rewrite_of_a_pass(pass_file):
    run = _compile(pass_file, pairs=4)
    ops_before = _ops(run.graph_after_rewrite("A_AbsAbs", 0))
    assert ops_before.count("Abs") == 8 and "Neg" in ops_before
    after = [_ops(run.graph_after_rewrite("A_AbsAbs", k)) for k in range(1, 5)]
    assert [ops.count("Abs") for ops in after] == [7, 6, 4, 3]  # rewrite 3 made a Neg instead of an Abs
    assert [ops.count("Neg") for ops in after] == [1, 1, 2, 2]
    # the last rewrite of the last pass gives the final graph
    final = run.graph_after_rewrite("B_ExpNeg", 1)
    assert sorted(_ops(final)) == sorted(_ops(run.graph))
    # the replay keeps node ids: the nodes of rewrite 2 are there, with their names, just before it
    second = rewrite_records(run)[1].record
    before_second = graph_after_rewrites(run, 1)
    assert [before_second.ir.node(i).name for i in second.target_node_ids] == list(second.target_node_names)
    assert all(before_second.find_node_by_name(n).name == n for n in second.target_node_names)
    with pytest.raises(ReplayError, match="pass 'A_AbsAbs' did 4 rewrites; there is no rewrite 5"):
        run.graph_after_rewrite("A_AbsAbs", 5)
    with pytest.raises(ReplayError, match="did 0 rewrites"):
        run.graph_after_rewrite("NoSuchPass", 1)


def test_replay_needs_the_input_snapshot(pass_file):
    run = gebench.compile(ir.parse_text(_graph(1)), passes=[str(pass_file)], snapshots=False)
    with pytest.raises(ReplayError, match="snapshots=False"):
        run.graph_after_rewrite("A_AbsAbs", 1)


def test_replay_steps_through_decompose_pattern_and_fusion_base_passes(tmp_path):
    from test_fusion_result import GRAPH, pass_file

    model = tmp_path / "chain.gir"
    model.write_text(GRAPH)
    run = gebench.compile(str(model), passes=[str(pass_file(tmp_path))])
    assert run.status == "SUCCESS", run.failure_reason
    steps = rewrite_records(run)
    assert [s.record.pass_name for s in steps] == ["AbsNegDecompose"] * 2 + ["ReluToSigmoid"] * 2 + ["ZByHand"] * 3
    assert run.rewrite_count == 7
    counts = [sorted(_ops(graph_after_rewrites(run, k))) for k in range(5)]
    assert [c.count("Abs") for c in counts] == [2, 1, 0, 0, 0]  # each decomposition replaces one Abs by a Sqrt
    assert [c.count("Sqrt") for c in counts] == [0, 1, 2, 2, 2]
    assert [c.count("Sigmoid") for c in counts] == [0, 0, 0, 1, 2]
    assert sorted(_ops(graph_after_rewrites(run, 7))) == sorted(_ops(run.graph))
    # ZByHand's run() makes rewrites 5 to 7 in one call: a replay stops before the call or after all of it
    for k in (5, 6):
        with pytest.raises(ReplayError, match=r"FusionBasePass.run\(\) call"):
            graph_after_rewrites(run, k)
    with pytest.raises(ReplayError, match="the run did 7 rewrites"):
        graph_after_rewrites(run, 8)
    # the decompose pass has its op types as its one pattern in the timing table
    decompose = next(t for t in run.timing() if t["pass_name"] == "AbsNegDecompose")
    assert [p["pattern_name"] for p in decompose["patterns"]] == ["Abs,Neg"]
    assert decompose["patterns"][0]["replaced"] == 2 and decompose["replaced"] == 2


def test_the_graphs_handed_to_users_answer_ges_graph_api(pass_file):
    """Every graph a replay hands a user is a ``ge.graph.Graph`` (``.ir``: the IR graph behind it); the ``*_ir``
    functions give gebench's own code the IR graph itself."""
    run = _compile(pass_file, pairs=2)
    first = rewrite_records(run)[0].record
    graphs = {
        "Run.graph_after_rewrite": run.graph_after_rewrite("A_AbsAbs", 1),
        "graph_after_rewrite": graph_after_rewrite(run, "A_AbsAbs", 1),
        "graph_after_rewrites": graph_after_rewrites(run, 1),
        "input_graph": input_graph(run),
    }
    for what, graph in graphs.items():
        assert isinstance(graph, Graph), what
        assert isinstance(graph.ir, ir.Graph), what
        assert graph.find_node_by_name("x").type == "Data", what
        assert {n.name for n in graph.get_direct_nodes()} == {n.name for n in graph.ir.nodes()}, what
    # before any rewrite the input has both Abs nodes of the first pair; after rewrite 1 one of them is gone
    assert {n.name for n in graphs["input_graph"].get_all_nodes()} >= set(first.target_node_names)
    assert _ops(graphs["graph_after_rewrites"]).count("Abs") == _ops(graphs["input_graph"]).count("Abs") - 1
    assert _ops(graphs["Run.graph_after_rewrite"]) == _ops(graphs["graph_after_rewrite"])
    for graph in (run.ir_graph_after_rewrite("A_AbsAbs", 1), graph_after_rewrite_ir(run, "A_AbsAbs", 1),
                  graph_after_rewrites_ir(run, 1), input_graph_ir(run)):
        assert type(graph) is ir.Graph
    # the input is a fresh copy each time: editing one leaves the run's snapshot alone
    copy = input_graph(run)
    copy.remove_node(copy.find_node_by_name(first.target_node_names[0]))
    assert run.snapshots["PreRunBegin"].find_node_by_name(first.target_node_names[0]) is not None
