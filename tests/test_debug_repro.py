"""Repro bundles (``Run.repro_bundle``): the written ``gebench compile`` command reproduces the candidate's verdict."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap

import pytest

import gebench
from gebench import ir
from gebench.debug import ReproError

PASSES = """
from ge.es.all import Abs, Mul, Relu
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass


@register_fusion_pass(name="MulReluToMulAbs", stage=PassStage.AFTER_INFER_SHAPE)
class MulRelu(PatternFusionPass):
    @pattern
    def mul_relu(self, inputs):
        return Relu(Mul(inputs[0], inputs[1]))

    def meet_requirements(self, match_result):
        return not any(n.name.startswith("keep") for n in match_result.get_matched_nodes())

    def replacement(self, inputs):
        return Abs(Mul(inputs[0], inputs[1]))
"""

GRAPH = """\
graph g
  #0 x = Data() {index=0} -> (y: DT_FLOAT[2,2])
  #1 c = Const() {value=tensor(DT_FLOAT[2,2], [0.5, -1.0, 2.0, 3.0])} -> (y: DT_FLOAT[2,2])
  #2 m1 = Mul(x1=x:0, x2=c:0) -> (y: DT_FLOAT[2,2])
  #3 r1 = Relu(x=m1:0) -> (y: DT_FLOAT[2,2])
  #4 m2 = Mul(x1=r1:0, x2=c:0) -> (y: DT_FLOAT[2,2])
  #5 keep_r2 = Relu(x=m2:0) -> (y: DT_FLOAT[2,2])
  #6 m3 = Mul(x1=keep_r2:0, x2=c:0) -> (y: DT_FLOAT[2,2])
  #7 keep_r3 = Relu(x=m3:0) -> (y: DT_FLOAT[2,2])
  #8 tail = Exp(x=keep_r3:0) -> (y: DT_FLOAT[2,2])
  #9 s = Exp(x=x:0) -> (y: DT_FLOAT[2,2])
  #10 lone = Relu(x=s:0) -> (y: DT_FLOAT[2,2])
  #11 out = NetOutput(x0=tail:0, x1=m2:0, x2=lone:0)
"""


@pytest.fixture
def run(tmp_path):
    path = tmp_path / "src" / "mul_relu_passes.py"
    path.parent.mkdir()
    path.write_text(textwrap.dedent(PASSES))
    result = gebench.compile(ir.parse_text(GRAPH), passes=[str(path)])
    assert result.status == "SUCCESS", result.failure_reason
    return result


def _candidate(run, status):
    return next(i for i, r in enumerate(run.ledger.records) if r.pass_name == "MulReluToMulAbs" and r.status.value == status)


def _run_repro_sh(directory):
    env = dict(os.environ, GEBENCH=f"{sys.executable} -m gebench")
    proc = subprocess.run(["bash", str(directory / "repro.sh")], env=env, capture_output=True, text=True,
                          timeout=120, cwd="/")
    assert proc.returncode == 0, proc.stderr
    return json.loads((directory / "report.json").read_text())


@pytest.mark.parametrize("status", ["REPLACED", "BOUNDARY_VIOLATION", "STRUCTURAL_MISMATCH"])
def test_repro_sh_reproduces_the_verdict(run, tmp_path, status):
    index = _candidate(run, status)
    record = run.ledger.records[index]
    assert list(record.target_node_names) == {"REPLACED": ["m1", "r1"], "BOUNDARY_VIOLATION": ["m2", "keep_r2"],
                                              "STRUCTURAL_MISMATCH": ["lone"]}[status]
    bundle = run.repro_bundle(index, tmp_path / "bundle")
    assert bundle.expected == status
    report = _run_repro_sh(bundle.directory)
    again = [r for r in report["ledger"]["records"] if r["pass_name"] == "MulReluToMulAbs" and r["status"] != "LINT"]
    assert [(r["status"], r["target_node_names"]) for r in again] == [(status, list(record.target_node_names))]
    assert report["status"] == "SUCCESS"
    if status == "STRUCTURAL_MISMATCH":  # the node it failed at (Exp, not Mul) is in the subgraph: same reason
        assert again[0]["reason"] == record.reason and "'s'" in record.reason


def test_rejected_candidate_bundle_holds_the_subgraph_and_commands(run, tmp_path):
    index = _candidate(run, "REJECTED_BY_MEET_REQUIREMENTS")
    record = run.ledger.records[index]
    assert list(record.target_node_names) == ["m3", "keep_r3"]
    bundle = run.repro_bundle(run.ledger.records[index], tmp_path / "b")  # a record works as well as an index
    out = bundle.directory
    assert set(bundle.files) >= {"subgraph_ge_proto.txt", "subgraph.onnx", "passes/mul_relu_passes.py", "repro.sh",
                                 "atc.sh", "README.md", "fusion_switch.json", "candidate.json"}
    # the smallest subgraph: the two matched nodes, the Const producer copied, the other producer as a Data input
    for name in ("subgraph_ge_proto.txt", "subgraph.onnx"):
        graph = gebench.load(out / name).ir
        ops = sorted(n.op_type for n in graph.nodes())
        assert ops in (["Const", "Data", "Mul", "NetOutput", "Relu"], ["Data", "Data", "Mul", "NetOutput", "Relu"]), \
            (name, ops)
        assert {n.name for n in graph.nodes()} >= {"m3", "keep_r3"}
    dumped = gebench.load(out / "subgraph_ge_proto.txt").ir
    const = next(n for n in dumped.nodes() if n.op_type == "Const")
    assert const.attrs["value"].array.ravel().tolist() == [0.5, -1.0, 2.0, 3.0]
    # keep_r3 is read by Exp outside the match: the subgraph's one output
    net = next(n for n in dumped.nodes() if n.op_type == "NetOutput")
    assert [p[0].name for p in dumped.producers(net)] == ["keep_r3"]
    assert (out / "passes/mul_relu_passes.py").read_text() == textwrap.dedent(PASSES)
    switch = json.loads((out / "fusion_switch.json").read_text())
    assert switch == {"Switch": {"GraphFusion": {"ALL": "off", "MulReluToMulAbs": "on"}}}
    atc = (out / "atc.sh").read_text()
    for part in ('ASCEND_GE_PY_PASS_PATH="$PWD/passes/mul_relu_passes.py"', "DUMP_GE_GRAPH=1", "atc --model=subgraph.onnx",
                 "--framework=5", "--fusion_switch_file=fusion_switch.json", "--soc_version="):
        assert part in atc
    readme = (out / "README.md").read_text()
    assert "REJECTED_BY_MEET_REQUIREMENTS" in readme and "m3, keep_r3" in readme
    assert json.loads((out / "candidate.json").read_text())["target_node_names"] == ["m3", "keep_r3"]
    report = _run_repro_sh(out)
    again = [r for r in report["ledger"]["records"] if r["pass_name"] == "MulReluToMulAbs" and r["status"] != "LINT"]
    assert [(r["status"], r["target_node_names"]) for r in again] == [("REJECTED_BY_MEET_REQUIREMENTS",
                                                                      ["m3", "keep_r3"])]


def test_repro_bundle_errors_name_the_record(run, tmp_path):
    with pytest.raises(ReproError, match="out of range"):
        run.repro_bundle(10_000, tmp_path / "x")
    stranger = dataclasses.replace(run.ledger.records[0], reason="not from this run")
    with pytest.raises(ReproError, match="neither a ledger index nor a record"):
        run.repro_bundle(stranger, tmp_path / "y")
    nameless = dataclasses.replace(run.ledger.records[0], target_node_ids=(), target_node_names=())
    run.ledger.append(nameless)
    with pytest.raises(ReproError, match=r"record \d+ \(.* of pass 'MulReluToMulAbs'.*names no node"):
        run.repro_bundle(len(run.ledger) - 1, tmp_path / "z")
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_subgraph_around_is_a_ge_graph(run):
    """``gebench.debug.subgraph_around`` hands out GE's graph API (``.ir``: the IR graph), as ``Run.graph`` does;
    ``subgraph_around_ir`` is the IR-returning core the repro bundle uses."""
    from gebench.debug import subgraph_around
    from gebench.debug.repro import subgraph_around_ir
    from gebench.ge.graph import Graph

    index = _candidate(run, "REJECTED_BY_MEET_REQUIREMENTS")
    sub, record = subgraph_around(run, index)
    assert isinstance(sub, Graph) and isinstance(sub.ir, ir.Graph)
    assert record is run.ledger.records[index]
    assert sub.find_node_by_name("keep_r3").type == "Relu"
    assert sorted(n.type for n in sub.get_direct_nodes()) in (["Const", "Data", "Mul", "NetOutput", "Relu"],
                                                               ["Data", "Data", "Mul", "NetOutput", "Relu"])
    assert {n.name for n in sub.get_all_nodes()} >= {"m3", "keep_r3"}
    ir_sub, same = subgraph_around_ir(run, index)
    assert type(ir_sub) is ir.Graph and same is record and ir.to_text(ir_sub) == ir.to_text(sub.ir)
