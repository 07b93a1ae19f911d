"""Stage runtime: GE's stage order, pass order, instances, contexts, subgraphs, inference, snapshots, API."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

import gebench
from gebench import ir

ORDER_PASSES = """
from ge.passes import FusionBasePass, PassStage, register_fusion_pass

CALLS = []


class Recorder(FusionBasePass):
    def run(self, graph, context):
        nodes = {n.name: n for n in graph.get_direct_nodes()}
        shape = nodes["input_0"].get_output_desc(0).get_shape() if "input_0" in nodes else None
        relu_shape = [n.get_output_desc(0).get_shape() for n in nodes.values() if n.type == "Relu"]
        # the instance and the context themselves, not their ids: an id can be reused once its object is freed
        CALLS.append((context.get_pass_name(), graph.name, self, context, context.get_error_message(),
                      list(relu_shape[0]) if relu_shape else None))
        context.set_error_message("set by " + context.get_pass_name())
        return True


def make(name, stage):
    cls = type(name, (Recorder,), {})
    return register_fusion_pass(name=name, stage=stage)(cls)


make("b_second", PassStage.BEFORE_INFER_SHAPE)
make("B_first", PassStage.BEFORE_INFER_SHAPE)      # upper case sorts first (byte order)
make("a_after", PassStage.AFTER_INFER_SHAPE)
make("z_builtin", PassStage.AFTER_BUILTIN_FUSION_PASS)
make("y_origin", PassStage.AFTER_ORIGIN_GRAPH_OPTIMIZE)
"""


def module_of(run):
    return sys.modules[run.passes[0].module_name]


@pytest.fixture
def order_file(tmp_path):
    path = tmp_path / "order_passes.py"
    path.write_text(textwrap.dedent(ORDER_PASSES))
    return str(path)


def graph_with_subgraph():
    from ge.es.all import Relu
    from ge.es.graph_builder import GraphBuilder

    b = GraphBuilder("root")
    out = Relu(b.create_input(0, shape=[3, 5]))
    root = b.build_and_reset([out])
    sb = GraphBuilder("body")
    sub = sb.build_and_reset([Relu(sb.create_input(0, shape=[7]))])
    root.ir.add_subgraph(sub.ir, parent_node=root.ir.node_by_name("Relu_0"))
    return root


def test_stage_order_pass_order_instances_contexts_subgraphs(order_file):
    run = gebench.compile(graph_with_subgraph(), passes=[order_file])
    assert run.status == "SUCCESS", run.failure_reason
    calls = module_of(run).CALLS
    assert [(c[0], c[1]) for c in calls] == [
        ("B_first", "root"), ("B_first", "body"), ("b_second", "root"), ("b_second", "body"),
        ("a_after", "root"), ("a_after", "body"), ("z_builtin", "root"), ("z_builtin", "body"),
        ("y_origin", "root"), ("y_origin", "body"),
    ]
    # one instance per pass per stage run, shared by root and subgraph
    assert calls[0][2] is calls[1][2] and calls[2][2] is calls[3][2] and calls[0][2] is not calls[2][2]
    # one context per stage run; an earlier pass's error message is not cleared
    assert calls[0][3] is calls[2][3] and calls[0][3] is not calls[4][3]
    assert calls[2][4] == "set by B_first" and calls[4][4] == ""
    # inference ran between BeforeInferShape and AfterInferShape
    assert calls[0][5] == [] and calls[4][5] == [3, 5]
    assert list(run.snapshots) == ["PreRunBegin", "RunCustomPassBeforeInfershape", "RunCustomPass_AfterInferShape",
                                   "RunCustomPassAfterBuiltinFusionPass", "RunCustomPassAfterOriginGraphOptimize"]
    assert [r["status"] for r in run.pass_results] == ["SUCCESS"] * 10


def test_stage_selection(order_file):
    run = gebench.compile(graph_with_subgraph(), passes=[order_file], stages=["AfterInferShape"])
    calls = module_of(run).CALLS
    assert [c[0] for c in calls] == ["a_after", "a_after"]
    assert list(run.snapshots) == ["PreRunBegin", "RunCustomPass_AfterInferShape"]
    with pytest.raises(ValueError, match="unknown stage"):
        gebench.compile(graph_with_subgraph(), passes=[], stages=["Never"])


def test_options_reach_the_context(tmp_path):
    path = tmp_path / "opt.py"
    path.write_text(textwrap.dedent("""
        from ge.passes import FusionBasePass, PassStage, register_fusion_pass

        SEEN = []


        @register_fusion_pass(name="Opt", stage=PassStage.BEFORE_INFER_SHAPE)
        class Opt(FusionBasePass):
            def run(self, graph, context):
                SEEN.append(context.get_option_value("ge.exec.precision_mode"))
    """))
    run = gebench.compile(graph_with_subgraph(), passes=[str(path)],
                          options={"ge.exec.precision_mode": "allow_fp32_to_fp16"})
    assert module_of(run).SEEN == ["allow_fp32_to_fp16", "allow_fp32_to_fp16"]


def test_run_graph_and_snapshots_are_ge_graph_views(order_file):
    from ge.graph import Graph

    run = gebench.compile(graph_with_subgraph(), passes=[order_file])
    assert isinstance(run.graph, Graph)
    names = [n.name for n in run.graph.get_direct_nodes()]
    assert names == ["input_0", "Relu_0", "NetOutput_root"]
    assert run.graph.find_node_by_name("Relu_0").type == "Relu"
    snap = run.snapshots["PreRunBegin"]
    assert [n.name for n in snap.get_direct_nodes()] == names
    with pytest.raises(RuntimeError):
        snap.find_node_by_name("nope")
    # snapshots are copies: the PreRunBegin graph has no inferred shape
    assert list(snap.find_node_by_name("Relu_0").get_output_desc(0).get_shape()) == []


def test_compile_does_not_mutate_input_and_report_is_json(tmp_path):
    from ge.es.all import Relu
    from ge.es.graph_builder import GraphBuilder

    (tmp_path / "p.py").write_text(textwrap.dedent("""
        from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass
        from ge.es.all import Relu, Abs


        @register_fusion_pass(name="ReluToAbs", stage=PassStage.BEFORE_INFER_SHAPE)
        class ReluToAbs(PatternFusionPass):
            @pattern
            def relu(self, inputs):
                return Relu(inputs[0])

            def replacement(self, inputs):
                return Abs(inputs[0])
    """))
    b = GraphBuilder("g")
    graph = b.build_and_reset([Relu(b.create_input(0, shape=[2]))])
    before = ir.to_text(graph.ir)
    run = gebench.compile(graph, passes=str(tmp_path))
    assert ir.to_text(graph.ir) == before
    report = json.loads(json.dumps(run.report()))
    assert report["status"] == "SUCCESS"
    assert report["summary"]["ReluToAbs"] == {"candidates": 1, "replaced": 1, "rejected": {}, "lints": 0}
    assert report["passes"][0]["pass_name"] == "ReluToAbs" and report["passes"][0]["source"].endswith(".py:6")
    assert len(report["ledger"]["records"]) == 1
    (abs_node,) = run.ir_graph.nodes_of_type("Abs")
    assert [r.status.name for r in run.explain("Relu_0")] == ["REPLACED"]
    assert "ReluToAbs" in run.explain_text("Relu_0") and "REPLACED" in run.explain_text("Relu_0")
    assert run.explain_text("input_0") == "no pass considered 'input_0'"
    assert abs_node.provenance == "ReluToAbs"
    assert run.explain_text(abs_node.name) == f"{abs_node.name!r} was created by pass ReluToAbs"


def test_load_accepts_text_files_and_graphs(tmp_path):
    from ge.es.all import Relu
    from ge.es.graph_builder import GraphBuilder

    b = GraphBuilder("g")
    graph = b.build_and_reset([Relu(b.create_input(0, shape=[2]))])
    text = ir.to_text(graph.ir)
    assert gebench.load(graph) is graph
    assert gebench.load(graph.ir).ir is graph.ir
    assert ir.to_text(gebench.load(text).ir) == text
    f = tmp_path / "g.gir"
    f.write_text(text)
    assert ir.to_text(gebench.load(f).ir) == text
    assert ir.to_text(gebench.load(str(f)).ir) == text
    with pytest.raises(FileNotFoundError):
        gebench.load(str(tmp_path / "missing.gir"))
    with pytest.raises(TypeError):
        gebench.load(42)


def test_register_loader(tmp_path):
    from gebench import api

    f = tmp_path / "model.fake"
    f.write_text("ignored")
    seen = []

    def fake_loader(path):
        seen.append(path)
        return ir.parse_text("graph fake\n")

    api.register_loader(".fake", fake_loader)
    try:
        assert gebench.load(f).name == "fake" and seen == [f]
    finally:
        api._LOADERS.pop(".fake")


def test_passes_as_classes_and_no_env(monkeypatch):
    from ge.passes import FusionBasePass, PassStage, register_fusion_pass

    from gebench.ge.passes import registry

    with registry.registering_into(registry.PassRegistry()):
        @register_fusion_pass(name="InlineClass", stage=PassStage.BEFORE_INFER_SHAPE)
        class InlineClass(FusionBasePass):
            def run(self, graph, context):
                return True

    run = gebench.compile(graph_with_subgraph(), passes=[InlineClass])
    assert run.status == "SUCCESS" and [d.pass_name for d in run.passes] == ["InlineClass"]
    monkeypatch.delenv("ASCEND_GE_PY_PASS_PATH", raising=False)
    run = gebench.compile(graph_with_subgraph())
    assert run.status == "SUCCESS" and run.passes == []


def test_fusion_switch_turns_passes_off(order_file, tmp_path):
    switch = tmp_path / "fusion_switch.json"
    switch.write_text(json.dumps({"Switch": {"GraphFusion": {"ALL": "off", "a_after": "on"}}}))
    run = gebench.compile(graph_with_subgraph(), passes=[order_file], fusion_switch=str(switch))
    assert [c[0] for c in module_of(run).CALLS] == ["a_after", "a_after"]
    disabled = sorted(r["pass_name"] for r in run.pass_results if r["status"] == "DISABLED")
    assert disabled == ["B_first", "b_second", "y_origin", "z_builtin"]
    run = gebench.compile(graph_with_subgraph(), passes=[order_file],
                          fusion_switch={"Switch": {"GraphFusion": {"b_second": "off"}}})
    assert "b_second" not in {c[0] for c in module_of(run).CALLS}
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="bad.json"):
        gebench.compile(graph_with_subgraph(), passes=[], fusion_switch=str(bad))


ADOPT_PASSES = """
from ge.es.graph_builder import GraphBuilder
from ge.es.math import Add, Mul
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass
from kept_store import KEPT


@register_fusion_pass(name="A_ExpressionBuilt", stage=PassStage.BEFORE_INFER_SHAPE)
class ExpressionBuilt(PatternFusionPass):
    @pattern
    def relu(self, inputs):
        from ge.es.nn import Relu
        return Relu(inputs[0])

    def meet_requirements(self, match_result):
        return True

    def replacement(self, inputs):
        return Mul(inputs[0], 2.0)


@register_fusion_pass(name="B_OwnGraph", stage=PassStage.BEFORE_INFER_SHAPE)
class OwnGraph(PatternFusionPass):
    @pattern
    def mul(self, inputs):
        return Mul(inputs[0], inputs[1])

    def meet_requirements(self, match_result):
        return True

    def replacement(self, inputs):
        b = GraphBuilder("own")
        x, y = b.create_input(0), b.create_input(1)
        graph = b.build_and_reset([Add(x, y)])
        KEPT.append(graph)  # the pass keeps its graph: it must be copied, not moved
        return graph
"""


def test_replacements_made_for_the_runtime_are_recorded_and_pass_graphs_copied(tmp_path, monkeypatch):
    from ge.es.graph_builder import GraphBuilder
    from ge.es.nn import Relu

    from gebench.fusion import runtime

    calls = []
    real = runtime.rewrite

    def spy(*args, **kwargs):
        calls.append((args[2].name, kwargs.get("adopt")))
        return real(*args, **kwargs)

    real_recorded = runtime.rewrite_recorded

    def spy_recorded(*args, **kwargs):
        calls.append((args[2].name, "recorded"))
        return real_recorded(*args, **kwargs)

    monkeypatch.setattr(runtime, "rewrite", spy)
    monkeypatch.setattr(runtime, "rewrite_recorded", spy_recorded)
    (tmp_path / "kept_store.py").write_text("KEPT = []\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "kept_store", raising=False)
    path = tmp_path / "adopt_passes.py"
    path.write_text(ADOPT_PASSES)
    b = GraphBuilder("g")
    x = b.create_input(0, shape=[2])
    graph = b.build_and_reset([Relu(x)])
    run = gebench.compile(graph, passes=[str(path)], verify_rewrites=True)
    assert run.status == "SUCCESS", run.failure_reason
    # the expression-style replacement is recorded, not built (its nodes are made in the target); the graph
    # pass code built and kept is copied
    assert calls == [("ExpressionBuilt_replacement", "recorded"), ("own", False)]
    assert [n.op_type for n in run.ir_graph.nodes()] == ["Data", "Const", "Add", "NetOutput"]
    kept = sys.modules["kept_store"].KEPT
    assert [n.op_type for n in kept[0]._ir.nodes()] == ["Data", "Data", "Add", "NetOutput"]


GEMM_PASS = str(Path(__file__).resolve().parents[1] / "bench" / "gemm_fusion_pass.py")


def test_the_pre_run_snapshot_follows_the_callers_graph_so_first_stage_rewrites_keep_no_pre_images(monkeypatch,
                                                                                                   synthetic):
    graph = synthetic.transformer_ir(120)[1]
    before = ir.to_text(graph)
    kept: list[int] = []
    real = ir.Graph._keep_removed

    def counting(self, node):
        if self._journals and node.id < self._journal_below:
            kept.append(node.id)
        return real(self, node)

    monkeypatch.setattr(ir.Graph, "_keep_removed", counting)
    run = gebench.compile(graph, passes=[GEMM_PASS])
    assert run.status == "SUCCESS" and len(run.ir_graph.nodes_of_type("GEMM")) == 12
    assert kept == []  # 24 nodes removed in the first stage, and no journal on the run's graph wanted them
    assert len(graph._journals) == 1  # the PreRunBegin snapshot: a journal on the caller's graph
    # the caller changes its graph after the run: the snapshot still is the graph the run started from
    relu = graph.nodes_of_type("Relu")[0]
    graph.remove_node(relu)
    assert kept == [relu.id]  # the caller's change is what the journal keeps
    pre = run.ir_snapshots["PreRunBegin"]
    assert ir.to_text(pre) == before and pre.find(relu.name) is not None
    assert not graph._journals  # built: the journal no longer follows the graph


def test_a_run_dropped_unread_stops_its_journals_following_the_graphs_that_outlive_it(synthetic):
    import gc

    graph = synthetic.transformer_ir(120)[1]
    run = gebench.compile(graph, passes=[GEMM_PASS])
    result = run.ir_graph
    assert graph._journals and result._journals  # PreRunBegin on the caller's graph, the later dump points on the run's
    del run
    gc.collect()
    assert not graph._journals and not result._journals
    # both graphs are whole and usable: a change now records nothing
    result.remove_node(result.nodes_of_type("Relu")[0])
    result.verify()
    graph.verify()


def test_the_collector_is_paused_while_passes_run_and_restored_after(tmp_path):
    """A run keeps what it makes: no automatic collector pass scans it while the passes run, and the collector is
    as the caller left it afterwards."""
    import gc

    (tmp_path / "p.py").write_text(textwrap.dedent("""
        import gc
        from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass
        from ge.es.all import Relu, Abs

        SEEN = []


        @register_fusion_pass(name="ReluToAbsSeesTheCollector", stage=PassStage.BEFORE_INFER_SHAPE)
        class ReluToAbsSeesTheCollector(PatternFusionPass):
            @pattern
            def relu(self, inputs):
                return Relu(inputs[0])

            def meet_requirements(self, match_result):
                SEEN.append(gc.isenabled())
                return True

            def replacement(self, inputs):
                return Abs(inputs[0])
    """))
    from ge.es.all import Relu
    from ge.es.graph_builder import GraphBuilder

    b = GraphBuilder("relus")
    x = b.create_input(0, shape=[2])
    for _ in range(6):
        x = Relu(x)
    graph = b.build_and_reset([x])
    assert gc.isenabled()
    threshold = gc.get_threshold()
    run = gebench.compile(graph, passes=str(tmp_path))
    assert run.status == "SUCCESS" and len(run.ir_graph.nodes_of_type("Abs")) == 6
    (desc,) = run.passes
    assert sys.modules[desc.cls.__module__].SEEN == [False] * 6  # one verdict per Relu, each with the collector off
    assert gc.isenabled() and gc.get_threshold() == threshold
    gc.disable()
    try:  # a caller that turned the collector off finds it off after the run
        assert gebench.compile(graph, passes=str(tmp_path)).status == "SUCCESS"
        assert not gc.isenabled()
    finally:
        gc.enable()

