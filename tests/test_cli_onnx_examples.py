"""End to end: ONNX models of the example passes' targets import to GE's op types, and ``gebench compile``
rewrites them with the example pass files, writes dumps under GE's names, and ``--verify`` agrees."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import gebench
from gebench import cli

ROOT = Path(__file__).resolve().parents[1]
PASSES = ROOT / "passes"
STAGE_FILES = re.compile(r"ge_proto_\d{8}_graph_0_(PreRunBegin|RunCustomPassBeforeInfershape|"
                         r"RunCustomPass_AfterInferShape|RunCustomPassAfterBuiltinFusionPass|"
                         r"RunCustomPassAfterOriginGraphOptimize)\.txt")


def _model(nodes, inputs, output, inits=(), elem=TensorProto.FLOAT) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "example", [helper.make_tensor_value_info(n, elem, [2, 8]) for n in inputs],
        [helper.make_tensor_value_info(output, elem, [2, 8])], initializer=list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


def _scalar(name: str, value: float) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(value, np.float32), name)


CASES = {
    # pass file, ONNX model, GE op types the import must produce, pass name, op types after the passes
    "mul_one": ("mul_one_pass.py",
                _model([helper.make_node("Mul", ["x", "one"], ["m"], name="times_one"),
                        helper.make_node("Relu", ["m"], ["y"], name="relu")], ["x"], "y", [_scalar("one", 1.0)]),
                {"Mul", "Relu"}, "GebenchMulOnePass", {"Relu"}),
    "double_neg": ("double_neg_pass.py",
                   _model([helper.make_node("Neg", ["x"], ["n1"], name="neg1"),
                           helper.make_node("Neg", ["n1"], ["n2"], name="neg2"),
                           helper.make_node("Relu", ["n2"], ["y"], name="relu")], ["x"], "y"),
                   {"Neg", "Relu"}, "GebenchDoubleNegPass", {"Relu"}),
    "relu_forms": ("relu_forms_pass.py",
                   _model([helper.make_node("LeakyRelu", ["x"], ["y"], name="leaky", alpha=0.0)], ["x"], "y"),
                   {"LeakyRelu"}, "GebenchReluFormsPass", {"Relu"}),
    "swish": ("swish_pass.py",
              _model([helper.make_node("Sigmoid", ["x"], ["s"], name="sig"),
                      helper.make_node("Mul", ["x", "s"], ["m"], name="gate"),
                      helper.make_node("Add", ["m", "s"], ["y"], name="use_both")], ["x"], "y"),
              {"Sigmoid", "Mul", "Add"}, "GebenchSwishPass", {"Swish", "Sigmoid", "Add"}),
    "identity": ("remove_identity_pass.py",
                 _model([helper.make_node("Identity", ["x"], ["i"], name="ident"),
                         helper.make_node("Relu", ["i"], ["y"], name="relu")], ["x"], "y"),
                 {"Identity", "Relu"}, "GebenchRemoveIdentityPass", {"Relu"}),
    "cast_round_trip": ("cast_round_trip_pass.py",
                        _model([helper.make_node("Cast", ["x"], ["c1"], name="widen", to=TensorProto.FLOAT),
                                helper.make_node("Cast", ["c1"], ["c2"], name="narrow", to=TensorProto.FLOAT16),
                                helper.make_node("Relu", ["c2"], ["y"], name="relu")], ["x"], "y",
                               elem=TensorProto.FLOAT16),
                        {"Cast", "Relu"}, "GebenchCastRoundTripPass", {"Relu"}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_example_pass_rewrites_its_onnx_target(case, tmp_path, capsys):
    pass_file, model, ge_types, pass_name, final_types = CASES[case]
    path = tmp_path / f"{case}.onnx"
    onnx.save(model, path)
    imported = gebench.load(path).ir
    ops = {n.op_type for n in imported.nodes()} - {"Data", "Const", "NetOutput"}
    assert ops == ge_types

    dumps, report = tmp_path / "dumps", tmp_path / "report.json"
    code = cli.main(["compile", str(path), "--passes", str(PASSES / pass_file), "--dump-dir", str(dumps),
                     "--report", str(report)])
    out = capsys.readouterr().out
    assert code == 0, out
    summary = json.loads(report.read_text())["summary"][pass_name]
    assert summary["replaced"] >= 1, out
    names = sorted(p.name for p in dumps.iterdir() if p.suffix == ".txt")
    assert len(names) == 5 and all(STAGE_FILES.fullmatch(n) for n in names), names

    # the last dump reads back as the rewritten graph
    final = gebench.load(dumps / names[-1]).ir
    final.verify()
    assert {n.op_type for n in final.nodes()} - {"Data", "Const", "NetOutput"} == final_types

    # the rewrite keeps results: --verify runs every rewrite on the reference executor
    assert cli.main(["compile", str(path), "--passes", str(PASSES / pass_file), "--verify"]) == 0
    capsys.readouterr()


def test_swish_then_decompose_round_trip(tmp_path, capsys):
    """Both Swish passes on one model: BeforeInferShape fuses x * Sigmoid(x), AfterInferShape decomposes it."""
    path = tmp_path / "swish.onnx"
    onnx.save(CASES["swish"][1], path)
    report = tmp_path / "r.json"
    code = cli.main(["compile", str(path), "--passes",
                     f"{PASSES / 'swish_pass.py'}:{PASSES / 'swish_decompose_pass.py'}", "--report", str(report)])
    assert code == 0, capsys.readouterr().out
    summary = json.loads(report.read_text())["summary"]
    assert summary["GebenchSwishPass"]["replaced"] == 1
    assert summary["GebenchSwishDecomposePass"]["replaced"] == 1
