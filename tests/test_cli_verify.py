"""`gebench compile --verify` / compile(verify=True) / Run.verify(): numerical checks of rewrites."""

from __future__ import annotations

import textwrap

import pytest

import gebench
from gebench import cli, ir

GEMM_PASS = """
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass
from ge.es.all import GEMM, MatMul


@register_fusion_pass(name="{name}", stage=PassStage.BEFORE_INFER_SHAPE)
class {name}(PatternFusionPass):
    @pattern
    def matmul_add(self, inputs):
        a, b, c = inputs[:3]
        return MatMul(a, b) + c

    def replacement(self, inputs):
        a, b, c = inputs[:3]
        return GEMM({order}, c, 1.0, 1.0)
"""


@pytest.fixture
def model(tmp_path):
    from ge.es.all import MatMul
    from ge.es.graph_builder import GraphBuilder

    b = GraphBuilder("mm")
    x, y, z = (b.create_input(i, shape=[3, 3]) for i in range(3))
    graph = b.build_and_reset([MatMul(x, y) + z])
    path = tmp_path / "mm.gir"
    path.write_text(ir.to_text(graph.ir))
    return path


def pass_file(tmp_path, name, order):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(GEMM_PASS.format(name=name, order=order)))
    return str(path)


def test_correct_rewrite_verifies(model, tmp_path):
    run = gebench.compile(model, passes=[pass_file(tmp_path, "GoodGemm", "a, b")], verify=True)
    assert run.status == "SUCCESS"
    (rec,) = [r for r in run.ledger if r.status.name == "REPLACED"]
    assert rec.detail["verify"]["ok"] is True and rec.max_abs_error is not None and rec.max_abs_error < 1e-5
    report = run.verify()
    assert report.ok


def test_swapped_operands_flagged(model, tmp_path, capsys):
    path = pass_file(tmp_path, "SwappedGemm", "b, a")
    run = gebench.compile(model, passes=[path], verify=True)
    (rec,) = [r for r in run.ledger if r.status.name == "REPLACED"]
    assert rec.detail.get("verify_failed") is True and rec.max_abs_error > 1e-3
    assert cli.main(["compile", str(model), "--passes", path, "--verify"]) == cli.EXIT_VERIFY_MISMATCH
    assert "MISMATCH" in capsys.readouterr().out


def test_cli_verify_ok_exit_zero(model, tmp_path, capsys):
    path = pass_file(tmp_path, "GoodGemm2", "a, b")
    assert cli.main(["compile", str(model), "--passes", path, "--verify"]) == 0
    assert ": OK" in capsys.readouterr().out
