"""A ten-model corpus and a pass folder for the sweep tests (tests/test_sweep_*.py), written into a tmp dir.

Models ``m0.onnx`` .. ``m9.onnx``: ``X[2,3] -> ... -> Y`` with ``SITES[i]`` multiplications by 1.0 (the sites
of ``SweepMulOne``), a ``Tanh`` in ``CRASH_MODEL`` (``SweepCrashOnTanh`` calls ``os._exit(3)`` there) and an
``Abs`` in ``FAIL_MODEL`` (``SweepFailOnAbs`` fails the compile there). One multiplication of ``m5`` is named
``keep_me``: the "edited" pass set (``write_passes(..., lose_keep_me=True)``) rejects that one site.
"""

from __future__ import annotations

from pathlib import Path

import onnx
from onnx import TensorProto, helper

SITES = [0, 1, 2, 0, 1, 3, 0, 1, 0, 2]
CRASH_MODEL = "m3"
FAIL_MODEL = "m6"
LOSE_MODEL = "m5"

MUL_ONE = '''
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass


@register_fusion_pass(name="SweepMulOne", stage=PassStage.BEFORE_INFER_SHAPE)
class SweepMulOne(PatternFusionPass):
    @pattern
    def mul_one(self, inputs):
        return inputs[0] * 1.0

    def meet_requirements(self, match_result):
        names = [n.name for n in match_result.get_matched_nodes()]
        return LOSE_KEEP_ME not in names

    def replacement(self, inputs):
        return inputs[0]


LOSE_KEEP_ME = "{lose}"
'''

FAIL_ON_ABS = '''
from ge.passes import FusionBasePass, PassStage, register_fusion_pass


@register_fusion_pass(name="SweepFailOnAbs", stage=PassStage.AFTER_INFER_SHAPE)
class SweepFailOnAbs(FusionBasePass):
    def run(self, graph, context):
        if any(n.type == "Abs" for n in graph.get_direct_nodes()):
            context.set_error_message("SweepFailOnAbs cannot handle Abs")
            return False
        return True
'''

CRASH_ON_TANH = '''
import os

from ge.passes import FusionBasePass, PassStage, register_fusion_pass


@register_fusion_pass(name="SweepCrashOnTanh", stage=PassStage.AFTER_INFER_SHAPE)
class SweepCrashOnTanh(FusionBasePass):
    def run(self, graph, context):
        if any(n.type == "Tanh" for n in graph.get_direct_nodes()):
            os._exit(3)
        return True
'''


def make_models(folder: Path) -> list[Path]:
    """Write the ten models; returns their paths in order."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, sites in enumerate(SITES):
        name = f"m{i}"
        nodes, inits = [], []
        current = "X"
        for s in range(sites):
            one = f"one_{s}"
            inits.append(helper.make_tensor(one, TensorProto.FLOAT, [], [1.0]))
            node_name = "keep_me" if (name == LOSE_MODEL and s == 0) else f"mul_{s}"
            nodes.append(helper.make_node("Mul", [current, one], [f"mul_out_{s}"], name=node_name))
            current = f"mul_out_{s}"
            nodes.append(helper.make_node("Relu", [current], [f"relu_out_{s}"], name=f"relu_{s}"))
            current = f"relu_out_{s}"
        if name == CRASH_MODEL:
            nodes.append(helper.make_node("Tanh", [current], ["tanh_out"], name="tanh"))
            current = "tanh_out"
        if name == FAIL_MODEL:
            nodes.append(helper.make_node("Abs", [current], ["abs_out"], name="abs"))
            current = "abs_out"
        nodes.append(helper.make_node("Sigmoid", [current], ["Y"], name="out"))
        graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])],
                                  [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        onnx.checker.check_model(model)
        path = folder / f"{name}.onnx"
        onnx.save(model, path)
        paths.append(path)
    return paths


def write_passes(folder: Path, *, lose_keep_me: bool = False) -> Path:
    """Write the three pass files into ``folder``; with ``lose_keep_me`` SweepMulOne rejects the ``keep_me``
    site of m5 (one site lost against the unedited set)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "mul_one.py").write_text(MUL_ONE.format(lose="keep_me" if lose_keep_me else "-"), encoding="utf-8")
    (folder / "fail_on_abs.py").write_text(FAIL_ON_ABS, encoding="utf-8")
    (folder / "crash_on_tanh.py").write_text(CRASH_ON_TANH, encoding="utf-8")
    return folder


def check_rows(rows: list[dict], models_dir: Path) -> None:
    """Assert every row of a sweep of the corpus with the unedited pass set."""
    assert len(rows) == len(SITES)
    by_name = {Path(r["model"]).stem: r for r in rows}
    assert sorted(by_name) == [f"m{i}" for i in range(len(SITES))]
    for i, sites in enumerate(SITES):
        name = f"m{i}"
        row = by_name[name]
        assert row["model"] == str((models_dir / f"{name}.onnx").resolve()), row["model"]
        assert row["worker"] and row["worker"].startswith("tcp://127.0.0.1:"), row["worker"]
        assert row["finished_at"] and row["wall_s"] is not None and row["wall_s"] >= 0
        if name == CRASH_MODEL:
            assert row["status"] == "CRASHED", row
            assert "exited with status 3" in row["reason"] and "SweepCrashOnTanh" in row["reason"], row["reason"]
            assert row["failed_pass"] == "SweepCrashOnTanh"
            assert row["passes"] == {} and row["nodes_after"] is None
            continue
        # Data, Sigmoid, NetOutput; per site Mul, its Const and Relu; the Abs of the failing model
        n_before = 3 + 3 * sites + (name == FAIL_MODEL)
        assert row["nodes_before"] == n_before, (name, row["nodes_before"], n_before)
        assert row["peak_mem_mb"] and row["peak_mem_mb"] > 10
        mul = row["passes"]["SweepMulOne"]
        assert mul["stage"] == "BeforeInferShape"
        assert mul["replaced"] == sites and mul["matches"] == sites, (name, mul)
        assert mul["candidates"] >= sites and mul["failures"] == []
        assert isinstance(mul["seconds"], float) and mul["seconds"] >= 0
        if sites:
            assert mul["verify_max_abs_error"] == 0.0 and mul["verify_errors"] == 0, mul
        if name == FAIL_MODEL:
            assert row["status"] == "FAILED", row
            assert row["failed_pass"] == "SweepFailOnAbs" and "cannot handle Abs" in row["reason"]
            assert row["passes"]["SweepFailOnAbs"]["failures"], row["passes"]
            continue
        assert row["status"] == "SUCCESS", row
        assert row["nodes_after"] == n_before - 2 * sites  # each site: the Mul and its Const
        assert set(row["passes"]) == {"SweepMulOne", "SweepFailOnAbs", "SweepCrashOnTanh"}
        assert row["passes"]["SweepFailOnAbs"]["failures"] == []
