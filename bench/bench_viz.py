"""Workbench speed: Run -> highlighted graph, bytes per node sent, time to switch the highlighted pass.

Usage: ``.venv/bin/python bench/bench_viz.py [--sizes 1000,10000]``

For each size a synthetic transformer-like graph is compiled (when ``gebench.compile`` and the bundled
example passes are available; otherwise a ledger-shaped stand-in run marks every MatMul+Add pair) and
shown in a :class:`gebench.viz.Workbench`:

* ``Run -> highlighted``: ``gebench.compile`` plus ``first paint``;
* ``first paint``: from ``Workbench(run)`` to the SVG and highlight traits being set for the first pass
  (layout included, layout cache cold);
* ``bytes/node``: gzipped SVG bytes sent to the front end per node of the model and per drawn node;
* ``switch``: mean time to select another pass (highlight recomputed, no layout);
* ``select a candidate``: above the threshold this lays out the candidate's focused k-hop view.

Targets (issue 5): first paint <= 3 s at 1k nodes, focused view <= 3 s at 10k, switching <= 200 ms,
<= 200 bytes per node.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gebench import ir  # noqa: E402
from gebench.viz import Workbench  # noqa: E402
from gebench.viz._dot import LayoutError  # noqa: E402
from gebench.viz._layout_cache import LayoutCache  # noqa: E402
from gebench.viz._synthetic import transformer_like  # noqa: E402


@dataclass
class _StandInRun:
    snapshots: dict[str, ir.Graph]
    graph: ir.Graph
    ledger: list[dict[str, Any]] = field(default_factory=list)
    status: str = "SUCCESS"
    failed_pass: str | None = None


def _stand_in_run(graph: ir.Graph) -> _StandInRun:
    """Two passes' worth of records over every block (the shape the real ledger has)."""
    records = []
    for mm in graph.nodes_of_type("MatMul"):
        add = graph.uses(mm, 0)[0][0]
        records.append({"pass_name": "FuseMatMulAdd", "stage": "BeforeInferShape", "status": "REPLACED",
                        "target_node_ids": [mm.id, add.id], "target_node_names": [mm.name, add.name],
                        "pattern_name": "FuseMatMulAdd_matmul_add_pattern"})
    for relu in graph.nodes_of_type("Relu"):
        records.append({"pass_name": "AddZero", "stage": "BeforeInferShape", "status": "STRUCTURAL_MISMATCH",
                        "target_node_ids": [relu.id], "target_node_names": [relu.name],
                        "pattern_name": "AddZero_add_zero_pattern"})
    return _StandInRun({"PreRunBegin": graph}, graph, records)


BENCH_PASSES = {
    "bench_fuse_matmul_add.py": """from ge.es.all import GEMM, MatMul
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass


@register_fusion_pass(name="BenchFuseMatMulAdd", stage=PassStage.BEFORE_INFER_SHAPE)
class BenchFuseMatMulAdd(PatternFusionPass):
    @pattern
    def matmul_add(self, inputs):
        a, b, c = inputs[:3]
        return MatMul(a, b) + c

    def meet_requirements(self, match_result):
        return True

    def replacement(self, inputs):
        a, b, c = inputs[:3]
        return GEMM(a, b, c, 1.0, 1.0)
""",
    "bench_add_zero.py": """from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass


@register_fusion_pass(name="BenchAddZero", stage=PassStage.BEFORE_INFER_SHAPE)
class BenchAddZero(PatternFusionPass):
    @pattern
    def add_zero(self, inputs):
        return inputs[0] + 0

    def meet_requirements(self, match_result):
        return False

    def replacement(self, inputs):
        return inputs[0]
""",
}


def _run_for(graph: ir.Graph) -> tuple[Any, str, float]:
    try:
        import tempfile

        import gebench

        if hasattr(gebench, "compile"):
            pass_dir = Path(tempfile.mkdtemp(prefix="gebench-bench-viz-"))
            for name, text in BENCH_PASSES.items():
                (pass_dir / name).write_text(text)
            start = time.perf_counter()
            run = gebench.compile(graph, passes=[str(pass_dir)])
            return run, "gebench.compile(MatMul+Add->GEMM, AddZero)", time.perf_counter() - start
    except Exception as exc:  # noqa: BLE001 - fall back to the stand-in, say so in the output
        print(f"  (compile unavailable: {type(exc).__name__}: {exc}; using a stand-in ledger)")
    return _stand_in_run(graph), "stand-in ledger", 0.0


def bench(size: int) -> dict[str, Any]:
    graph = transformer_like(size)
    run, source, compile_s = _run_for(graph)
    import gebench.viz._workbench as wbmod

    wbmod._SHARED_CACHE = LayoutCache(capacity=128)  # cold cache for an honest first paint
    start = time.perf_counter()
    try:
        wb = Workbench(run, threshold=1500)
        names = [p["name"] for s in wb.stages for p in s["passes"] if p["candidates"]]
        if names:
            wb.select_pass(names[0])
    except LayoutError as exc:
        return {"size": size, "error": str(exc)}
    first_paint = time.perf_counter() - start
    switches = []
    svg_before = wb.svg_gz
    for i in range(10):
        if len(names) < 2:
            break
        t = time.perf_counter()
        wb.select_pass(names[i % 2 + 0] if i % 2 else names[1])
        switches.append(time.perf_counter() - t)
    relaid = wb.svg_gz is not svg_before and wb.svg_gz != svg_before
    overview = bool(wb.view_info.get("overview"))
    info = dict(wb.view_info)
    sent, per_drawn, highlighted = len(wb.svg_gz), wb.bytes_per_node(), len(wb.highlight)
    t = time.perf_counter()
    first_row = wb.candidates[0]["i"] if wb.candidates else -1
    if first_row >= 0:
        wb.select_candidate(first_row)
    candidate_s = time.perf_counter() - t
    return {
        "overview": overview, "candidate_s": candidate_s, "candidate_focused": bool(wb.view_info.get("focused")),
        "size": len(graph), "source": source, "compile_s": compile_s, "first_paint_s": first_paint,
        "drawn": info["drawn"], "focused": info["focused"],
        "bytes": sent, "bytes_per_model_node": sent / len(graph),
        "bytes_per_drawn_node": per_drawn, "highlighted": highlighted,
        "switch_ms_mean": statistics.mean(switches) * 1000 if switches else float("nan"),
        "switch_ms_max": max(switches) * 1000 if switches else float("nan"),
        "switch_relayout": relaid,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    args = parser.parse_args(argv)
    for size in (int(s) for s in args.sizes.split(",")):
        r = bench(size)
        if "error" in r:
            print(f"{size:>6} nodes: layout error: {r['error']}")
            continue
        print(f"{r['size']:>6} nodes [{r['source']}]: Run->highlighted {r['compile_s'] + r['first_paint_s']:.2f} s, "
              f"first paint {r['first_paint_s']:.2f} s "
              f"(drawn {r['drawn']}{', focused' if r['focused'] else ''}{', overview' if r['overview'] else ''}; "
              f"compile {r['compile_s']:.2f} s), select a candidate {r['candidate_s']:.2f} s"
              f"{' (focused view)' if r['candidate_focused'] else ''}, "
              f"{r['bytes']} B sent = {r['bytes_per_model_node']:.0f} B/model node, "
              f"{r['bytes_per_drawn_node']:.0f} B/drawn node; switch pass {r['switch_ms_mean']:.1f} ms mean, "
              f"{r['switch_ms_max']:.1f} ms max, re-layout on switch: {r['switch_relayout']}; "
              f"{r['highlighted']} elements highlighted")
    return 0


if __name__ == "__main__":
    sys.exit(main())
