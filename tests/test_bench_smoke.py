"""The speed benchmarks in bench/ run end to end at a tiny size and print their ratio lines.

Not a timing test: it proves the benchmark code works (same rewrite count on both sides, ratio lines present,
the ledger switch restored) so the full-size numbers can be trusted to come from working code.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import onnx
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _load(name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_synthetic_model_has_exact_size_and_is_deterministic(synthetic):
    a = synthetic.transformer_onnx(237)
    b = synthetic.transformer_onnx(237)
    assert len(a.model.graph.node) == a.onnx_nodes == 237
    assert a.model.SerializeToString() == b.model.SerializeToString()
    onnx.checker.check_model(a.model, full_check=True)
    ops = [n.op_type for n in a.model.graph.node]
    assert a.layers == 4 and a.matmul_add_sites == 24
    for op in ("MatMul", "Add", "Softmax", "Reshape", "Transpose", "ReduceMean", "Erf", "Relu"):
        assert op in ops, op
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for n in a.model.graph.node:
        for name in n.input:
            consumers.setdefault(name, []).append(n)
    sites = sum(1 for n in a.model.graph.node if n.op_type == "MatMul"
                and [c.op_type for c in consumers[n.output[0]]] == ["Add"]
                and consumers[n.output[0]][0].input[0] == n.output[0])
    assert sites == a.matmul_add_sites


def test_synthetic_model_refuses_a_size_below_one_layer(synthetic):
    with pytest.raises(ValueError, match="at least 50"):
        synthetic.transformer_onnx(10)


def test_synthetic_ir_uses_ge_op_types(synthetic):
    synth, graph = synthetic.transformer_ir(120)
    counts: dict[str, int] = {}
    for node in graph.nodes():
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    assert "MatMul" not in counts
    assert counts["BatchMatMulV2"] == sum(1 for n in synth.model.graph.node if n.op_type == "MatMul")
    assert counts["Const"] >= len(synth.model.graph.initializer)


def test_bench_fusion_main_prints_equal_rewrites_and_ratios(synthetic, capsys):
    bench = _load("bench_fusion")
    assert bench.main(["--sizes", "120", "--repeat", "1"]) == 0
    text = capsys.readouterr().out
    assert "pass application only" in text
    m = re.search(r"rewrites: gebench (\d+) \(record_all=False (\d+), ledger off (\d+), with snapshots (\d+)\), "
                  r"onnxscript (\d+), expected (\d+): equal", text)
    assert m is not None, text
    assert len(set(m.groups())) == 1 and int(m.group(1)) == 12
    assert re.search(r"ratio gebench/onnxscript = \d+\.\d\d \(median of 1 same-round CPU ratios: \d+\.\d\d; "
                     r"target <= 1\.0: (met|NOT met)\); best of 1: \d+\.\d\d cpu, \d+\.\d\d wall", text), text
    assert re.search(r"ratio ledger/no-ledger = \d+\.\d\d \(median of same-round ratios; target <= 2\.0: "
                     r"(met|NOT met)\); best of 1: \d+\.\d\d cpu, \d+\.\d\d wall", text), text
    m = re.search(r"gebench, ledger \(record_all=True\): .*\((\d+) ledger records\)", text)
    assert m is not None and int(m.group(1)) >= 12, text
    assert re.search(r"gebench, ledger off: .*\(0 ledger records\)", text), text


def test_paired_ratio_is_the_median_of_same_round_ratios():
    bench = _load("bench_fusion")
    # rounds: 2/1, 4/4, 9/3 -> ratios 2, 1, 3; the best-of ratio would be min(2, 4, 9) / min(1, 4, 3) = 2
    assert bench.paired_ratio([2.0, 4.0, 9.0], [1.0, 4.0, 3.0]) == 2.0
    assert bench.paired_ratio([1.0, 3.0], [1.0, 1.0]) == 2.0  # an even count: the mean of the middle two


def test_bench_io_main_prints_time_and_memory_ratios(synthetic, capsys):
    bench = _load("bench_io")
    assert bench.main(["--size", "120", "--repeat", "1", "--no-trace"]) == 0
    text = capsys.readouterr().out
    assert re.search(r"gebench IR \d+ nodes; ge_proto dump [\d.]+ MB \(ge_proto_00000000_graph_0_PreRunBegin\.txt\)",
                     text), text
    assert re.search(r"ratio gebench/onnx time = [\d.]+ wall, [\d.]+ cpu", text), text
    assert re.search(r"ratio gebench/onnx peak memory = [\d.]+ \(peak RSS\)", text), text


def test_ledger_switch_and_loaded_graph_snapshot(synthetic, tmp_path):
    import gebench
    from gebench import ir

    _, graph = synthetic.transformer_ir(120)
    model = tmp_path / "model.gir"
    model.write_text(ir.to_text(graph), encoding="utf-8")
    pass_file = str(BENCH / "gemm_fusion_pass.py")
    with_ledger = gebench.compile(str(model), passes=[pass_file], stages=["BeforeInferShape"])
    without = gebench.compile(str(model), passes=[pass_file], stages=["BeforeInferShape"], ledger=False)
    assert with_ledger.status == without.status == "SUCCESS"
    assert len(with_ledger.ledger) >= 12 and len(without.ledger) == 0
    # same graph (new node names carry a process-wide counter, so compare structure)
    assert [n.op_type for n in with_ledger.ir_graph.nodes()] == [n.op_type for n in without.ir_graph.nodes()]
    assert len(with_ledger.ir_graph.data_edges()) == len(without.ir_graph.data_edges())
    assert len(without.ir_graph.nodes_of_type("GEMM")) == 12
    # the graph loaded from the file is the PreRunBegin snapshot; the run worked on its copy
    pre = without.ir_snapshots["PreRunBegin"]
    assert pre is not without.ir_graph and ir.to_text(pre) == ir.to_text(graph)
    assert not pre.nodes_of_type("GEMM")
    # an in-memory graph is never aliased by a snapshot
    run = gebench.compile(graph, passes=[pass_file], stages=["BeforeInferShape"])
    assert run.ir_snapshots["PreRunBegin"] is not graph and run.ir_graph is not graph
    assert ir.to_text(run.ir_snapshots["PreRunBegin"]) == ir.to_text(graph)


def test_bench_scale_prints_tables_ratios_and_equal_rewrites(capsys):
    """Every section at a few hundred nodes, steps in this interpreter (the process step has its own test)."""
    bench = _load("bench_scale")
    assert bench.main(["--sizes", "300", "--shared", "150", "--rounds", "1", "--in-process", "--skip", "process"]) == 0
    text = capsys.readouterr().out
    for label, sites, same in (("transformer 300", 96, True), ("shared Const x150", 150, False)):
        # the transformer's rule also runs on the peer with a replacement making GE's nodes, and on gebench with a
        # one-node replacement (no target)
        m = re.search(rf"### {re.escape(label)}: \d+ ONNX nodes .*, (\d+) sites\n"
                      r"rewrites: gebench (\d+), onnxscript (\d+), "
                      + (r"onnxscript same nodes (\d+), gebench one node (\d+), " if same else "")
                      + r"expected (\d+): equal", text)
        assert m is not None, text
        assert {int(g) for g in m.groups()} == {sites}, m.group(0)
    assert len(re.findall(r"\| compile\(\) defaults vs apply_to_model making the same nodes \(GEMM \+ 2 scalar "
                          r"Constants\) +\| cpu s +\| [\d.]+ \([\d.]+ wall\) +\| [\d.]+ \([\d.]+ wall\) +\| \d+\.\d\d +"
                          r"\| [\d. ]+\| no target +\|", text)) == 1, text
    assert len(re.findall(r"\| compile\(\) defaults with a one-node rule \(BatchMatMulV2 with bias\) vs apply_to_model"
                          r" +\| cpu s +\| [\d.]+ \([\d.]+ wall\) +\| [\d.]+ \([\d.]+ wall\) +\| \d+\.\d\d +"
                          r"\| [\d. ]+\| no target +\|", text)) == 1, text
    # compile() split into compile() with no pass and the pass loop, on both models; with one round the two parts
    # add up to the headline (each printed to the millisecond)
    cell = r" +\| cpu s +\| ([\d.]+) \([\d.]+ wall\) +\| [\d.]+ \([\d.]+ wall\) +\| \d+\.\d\d +\| [\d. ]+\| no target +\|"
    headline = re.findall(r"\| compile\(\) defaults vs apply_to_model" + cell.replace("no target", "<= 1: (?:NOT )?met"),
                          text)
    bare = re.findall(r"\| compile\(\) with no pass \(the copy \+ GE's InferShape over the graph\) vs apply_to_model"
                      + cell, text)
    loop = re.findall(r"\| the pass loop \(compile\(\) minus compile\(\) with no pass\) vs apply_to_model" + cell, text)
    assert len(headline) == len(bare) == len(loop) == 2, text
    for total, fixed, rest in zip(headline, bare, loop, strict=True):
        assert float(fixed) > 0 and abs(float(fixed) + float(rest) - float(total)) <= 0.0021, (total, fixed, rest)
    assert len(re.findall(r"\| the pass loop with the one-node rule vs apply_to_model" + cell, text)) == 1, text
    assert text.count("| step ") >= 4, text  # two model tables, the dump table, the workbench table
    for name, limit in (("load time", "1.2"), ("load peak RSS", "1.3"), ("compile time", "1"),
                        ("load\\+compile peak RSS", "1.5")):
        assert len(re.findall(rf"ratio gebench/peer {name} = \d+\.\d\d \(median of 1 same-round ratios: \d+\.\d\d; "
                              rf"target <= {re.escape(limit)}: (met|NOT met)\)", text)) == 2, (name, text)
    for step in ("write", "read"):
        assert re.search(rf"ratio gebench/onnx_ir dump {step} speed = \d+\.\d\d \(median of same-round ratios: "
                         rf"\d+\.\d\d; target >= 0\.5: (met|NOT met)\)", text), text
    for step in ("first view", "focused candidate", "switch"):
        assert re.search(rf"\| {step} +\| \d+\.\d+ s ", text), (step, text)
    assert re.search(r"parts of compile\(\) \(instrumented run, cpu; total [\d.]+ s, headline median [\d.]+ s\): "
                     r"pass loading [\d.]+ s", text), text
    assert re.search(r"per-node growth: compile\(\) cpu per node", text) is None  # one transformer size only
    m = re.search(r"(\d+) of (\d+) targets met", text)
    assert m is not None and int(m.group(2)) == 13, text


def test_bench_scale_process_step_runs_both_processes(capsys):
    """``gebench compile --dump-dir`` and the onnxscript load+apply+save script, as processes, same rewrites."""
    bench = _load("bench_scale")
    assert bench.main(["--sizes", "250", "--shared", "0", "--rounds", "1", "--in-process",
                       "--skip", "dumps,viz,parts"]) == 0
    text = capsys.readouterr().out
    assert re.search(r"rewrites: gebench 78, onnxscript 78, gebench process 78, onnxscript process 78, "
                     r"onnxscript same nodes 78, gebench one node 78, expected 78: equal", text), text
    assert re.search(r"ratio gebench/peer process = \d+\.\d\d cpu, \d+\.\d\d wall "
                     r"\(rounds: \d+\.\d\d; 1 round\(s\); no target\)", text), text
    assert re.search(r"parts of the gebench compile process \(cpu; total [\d.]+ s, \d+ MB of dumps written\): "
                     r"interpreter start \+ exit [\d.]+ s", text), text


def test_bench_scale_models_count_what_the_rules_rewrite():
    make = _load("_make_model")
    model = make.make(3, 8)
    assert len(model.graph.node) == 3 * make.NODES_PER_LAYER == 57
    assert make.count_sites(model) == 3 * make.SITES_PER_LAYER == 18
    assert make.layers_for(100000) == 5263 and make.hidden_for(10000) == 16 and make.hidden_for(40000) == 8
    shared = make.make_shared_const(40)
    onnx.checker.check_model(shared, full_check=True)
    assert sum(1 for n in shared.graph.node for i in n.input if i == "scale") == 40
    assert make.make(2, 8).SerializeToString() == make.make(2, 8).SerializeToString()


def test_bench_rewrite_floor_makes_the_same_rewrites_on_every_side(capsys):
    """compile(), the IR-primitives floor and onnxscript each rewrite every MatMul+Add site of a small model."""
    bench = _load("bench_rewrite_floor")
    assert bench.main(["--quick"]) == 0
    text = capsys.readouterr().out
    sites = int(re.search(r"(\d+) MatMul\+Add sites", text).group(1))
    for side in ("compile\\(\\)", "IR floor", "onnxscript"):
        m = re.search(rf"\| {side} \| (\d+) \| [\d.]+ \| [\d.]+ \|", text)
        assert m is not None and int(m.group(1)) == sites, (side, text)
    assert re.search(r"ratio compile\(\)/onnxscript = \d+\.\d\d; IR floor/onnxscript = \d+\.\d\d; "
                     r"compile\(\)/IR floor = \d+\.\d\d", text), text
