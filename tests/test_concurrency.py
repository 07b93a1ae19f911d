"""Several processes compiling into one dump and report folder: every file they leave is complete."""

from __future__ import annotations

import json
import multiprocessing
import os
import textwrap
from pathlib import Path

import pytest

from gebench import ir

RELU_PASS = """
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass
from ge.es.all import Relu, Abs


@register_fusion_pass(name="ReluToAbs", stage=PassStage.BEFORE_INFER_SHAPE)
class ReluToAbs(PatternFusionPass):
    @pattern
    def relu(self, inputs):
        return Relu(inputs[0])

    def replacement(self, inputs):
        return Abs(inputs[0])
"""

WRITERS = 4
ROUNDS = 10


@pytest.fixture(autouse=True)
def _no_ge_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """GE's dump and pass-path variables of the caller's shell must not reach these runs."""
    for name in [n for n in os.environ if n.startswith("DUMP_") or n == "ASCEND_GE_PY_PASS_PATH"]:
        monkeypatch.delenv(name)


def _compile_into(args: tuple[str, str, str]) -> int:
    """One ``gebench compile`` with dumps and a report into the shared folder (runs in a pool process)."""
    import contextlib
    import io

    from gebench import cli

    model, passes, folder = args
    for name in [n for n in os.environ if n.startswith("DUMP_") or n == "ASCEND_GE_PY_PASS_PATH"]:
        del os.environ[name]  # a pool process started earlier may carry the shell's variables
    with contextlib.redirect_stdout(io.StringIO()):
        return cli.main(["compile", model, "--passes", passes, "--dump-dir", folder,
                         "--report", str(Path(folder) / "report.json")])


@pytest.fixture
def model_and_passes(tmp_path: Path) -> tuple[Path, Path]:
    from ge.es.all import Relu
    from ge.es.graph_builder import GraphBuilder

    b = GraphBuilder("model")
    x = b.create_input(0, shape=[8, 8])
    graph = b.build_and_reset([Relu(Relu(x) * x)])
    model = tmp_path / "model.gir"
    model.write_text(ir.to_text(graph.ir), encoding="utf-8")
    passes = tmp_path / "relu.py"
    passes.write_text(textwrap.dedent(RELU_PASS), encoding="utf-8")
    return model, passes


@pytest.mark.timeout(300)
def test_four_compiles_into_one_folder_leave_every_file_complete(model_and_passes, tmp_path):
    from gebench.io import list_dumps, load_ge_dump

    model, passes = model_and_passes
    ctx = multiprocessing.get_context("forkserver")
    with ctx.Pool(WRITERS) as pool:
        for round_no in range(ROUNDS):
            folder = tmp_path / f"round{round_no}"
            codes = pool.map(_compile_into, [(str(model), str(passes), str(folder))] * WRITERS)
            assert codes == [0] * WRITERS, f"round {round_no}: exit codes {codes}"
            names = sorted(p.name for p in folder.iterdir())
            assert not [n for n in names if n.endswith(".part")], f"round {round_no}: temporary files left: {names}"
            dumps = list_dumps(folder)
            assert {name.kind for name, _ in dumps} == {"ge_proto", "onnx"}
            assert len(dumps) == 10, names  # 5 dump points x 2 formats, every writer wrote the same names
            for name, path in dumps:
                if name.kind == "ge_proto":
                    graph = load_ge_dump(path)  # a cut-short file fails here
                    assert len(graph) >= 4, path
                else:
                    text = path.read_text(encoding="utf-8")
                    assert text.rstrip().endswith("}"), path
            report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
            assert report["status"] == "SUCCESS" and report["summary"]["ReluToAbs"]["replaced"] == 2
