"""Records, lints and errors point at the pass author's code and files: ``file:line`` of the pass file, the
file a damaged input came from, and each distinct hook exception in the CLI summary."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

import gebench
from gebench import cli, ir

PKG_DIR = os.path.dirname(os.path.abspath(gebench.__file__))

PASSES = """
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass
from ge.es.all import Relu, Abs


@register_fusion_pass(name="Raises", stage=PassStage.BEFORE_INFER_SHAPE)
class Raises(PatternFusionPass):
    @pattern
    def relu(self, inputs):
        return Relu(inputs[0])

    def meet_requirements(self, match_result):
        node = match_result.get_matched_nodes()[0]
        node.set_attr("_checked", True)
        raise ValueError(f"no shapes on {node.name}")

    def replacement(self, inputs):
        return Abs(inputs[0])


@register_fusion_pass(name="BadPattern", stage=PassStage.BEFORE_INFER_SHAPE)
class BadPattern(PatternFusionPass):
    @pattern
    def relu(self, inputs):
        raise RuntimeError("pattern broke")

    def replacement(self, inputs):
        return Abs(inputs[0])


@register_fusion_pass(name="Defaults", stage=PassStage.AFTER_INFER_SHAPE)
class Defaults(PatternFusionPass):
    @pattern
    def relu(self, inputs):
        return Relu(inputs[0])

    def replacement(self, inputs):
        return Abs(inputs[0])
"""


@pytest.fixture(autouse=True)
def _no_ge_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """GE's dump and pass-path variables of the caller's shell must not reach these runs."""
    for name in [n for n in os.environ if n.startswith("DUMP_") or n == "ASCEND_GE_PY_PASS_PATH"]:
        monkeypatch.delenv(name)


def line_of(path: Path, needle: str) -> int:
    """The 1-based line of ``path`` holding ``needle`` (the first one)."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


@pytest.fixture
def model(tmp_path: Path) -> Path:
    from ge.es.all import Relu
    from ge.es.graph_builder import GraphBuilder

    b = GraphBuilder("model")
    x = b.create_input(0, shape=[2])
    graph = b.build_and_reset([Relu(x), Relu(Relu(x))])
    path = tmp_path / "model.gir"
    path.write_text(ir.to_text(graph.ir), encoding="utf-8")
    return path


@pytest.fixture
def passes(tmp_path: Path) -> Path:
    path = tmp_path / "passes.py"
    path.write_text(textwrap.dedent(PASSES), encoding="utf-8")
    return path.resolve()


def test_every_record_points_into_the_pass_file(model, passes):
    run = gebench.compile(model, passes=str(passes))
    assert run.status == "SUCCESS" and run.ledger.records
    for r in run.ledger:
        sources = [s for s in (r.pattern_source, r.hook_source, (r.detail or {}).get("source", "")) if s]
        assert sources, r
        assert all(s.startswith(f"{passes}:") for s in sources), r
    replaced = [r for r in run.ledger if r.status.name == "REPLACED"]
    # Defaults keeps the default meet_requirements: the records point at its class (decorator line)
    defaults = line_of(passes, '@register_fusion_pass(name="Defaults"')
    assert replaced and all(r.hook_source == f"{passes}:{defaults}" for r in replaced)


def test_a_raising_pattern_is_linted_at_the_raising_line(model, passes):
    run = gebench.compile(model, passes=str(passes))
    (lint,) = [r for r in run.ledger if r.detail.get("rule") == "patterns_failed"]
    assert lint.detail["source"] == f"{passes}:{line_of(passes, 'pattern broke')}" and "RuntimeError: pattern broke" in lint.reason


def test_meet_requirements_changing_the_graph_is_linted_once_and_kept(model, passes):
    run = gebench.compile(model, passes=str(passes))
    lints = [r for r in run.ledger if r.detail.get("rule") == "meet_requirements_changes_graph"]
    assert len(lints) == 1
    assert lints[0].detail["source"] == f"{passes}:{line_of(passes, 'set_attr')}" and "attr '_checked'" in lints[0].reason
    # GE keeps the change although every match was rejected (seen after the stage; a later pass replaces the nodes)
    after = run.ir_snapshots["RunCustomPassBeforeInfershape"]
    changed = [n for n in after.nodes() if n.attrs.get("_checked") is True]
    assert len(changed) == 3


def test_cli_summary_prints_each_distinct_hook_exception(model, passes, capsys):
    assert cli.main(["compile", str(model), "--passes", str(passes)]) == 0
    out = capsys.readouterr().out
    exceptions = [line for line in out.splitlines() if line.startswith("  exception Raises:")]
    at = f"{passes}:{line_of(passes, 'raise ValueError')}"
    assert exceptions == [f"  exception Raises: ValueError: no shapes on Relu_{i} (at {at})" for i in range(3)]
    assert "meet_requirements changed attr '_checked' of node 'Relu_0'" in out


def test_repeated_hook_exceptions_are_counted(model, tmp_path, capsys):
    same = tmp_path / "same.py"
    same.write_text(textwrap.dedent(PASSES).replace('f"no shapes on {node.name}"', '"no shapes"'),
                    encoding="utf-8")
    assert cli.main(["compile", str(model), "--passes", str(same)]) == 0
    out = capsys.readouterr().out
    at = f"{same.resolve()}:{line_of(same, 'raise ValueError')}"
    assert f"  exception Raises: ValueError: no shapes (at {at}) (3 candidates)" in out.splitlines()


def test_a_misnamed_or_damaged_graph_file_is_named_in_the_error(model, tmp_path):
    from gebench.io import ge_dump

    (dump,) = ge_dump.write_dumps({"PreRunBegin": gebench.load(model)}, tmp_path / "d", formats=["ge_proto"])
    misnamed = tmp_path / "looks_like_ir.gir"
    misnamed.write_text(dump.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(ir.TextFormError, match=rf"^{misnamed}: line 1, column \d+: .*is it a graph file"):
        gebench.load(misnamed)
    binary = tmp_path / "binary.gir"
    binary.write_bytes(b"\xff\xfe\x00\x01")
    with pytest.raises(ir.TextFormError, match=rf"^{binary}: not UTF-8 text"):
        gebench.load(binary)
    bad_port = tmp_path / "bad_port.gir"
    bad_port.write_text(model.read_text(encoding="utf-8").replace("Relu(x=input_0:0)", "Relu(x=input_0:9)", 1),
                        encoding="utf-8")
    with pytest.raises(ir.TextFormError, match=rf"^{bad_port}: line \d+: input 0 of 'Relu_\d': .*has no output 9"):
        gebench.load(bad_port)
    truncated = tmp_path / "cut.txt"
    truncated.write_text(dump.read_text(encoding="utf-8")[:700], encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^{truncated}:\d+:\d+: malformed ge_proto dump"):
        gebench.load(truncated)
