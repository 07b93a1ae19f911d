"""What one MatMul+Add -> GEMM rewrite costs: ``gebench.compile`` with its defaults, the same rewrites made with
IR primitives alone, and onnxscript's ``apply_to_model``, per rewrite, in one run.

Usage: ``.venv/bin/python bench/bench_rewrite_floor.py [--nodes 10000] [--rounds 3]`` (``--quick``: 300 nodes, one
round, to check that it works).

The model is the transformer of ``_make_model.py`` (``bench_scale.py``'s), the rule ``gemm_fusion_pass.py`` against
onnxscript's ``Add(MatMul(x, w), b) -> Gemm(x, w, b)``. Three sides, each timed in process CPU seconds after a
``gc.collect()``, interleaved over ``--rounds`` rounds (medians printed):

* ``compile()``: ``gebench.compile(graph, passes=[gemm_fusion_pass.py])`` with every default (copy, ledger,
  snapshots, inference), on a freshly loaded graph, as ``bench_scale.py`` times it;
* ``IR floor``: on a copy-on-write copy of a freshly loaded graph (the copy is timed), for every ``Add`` fed by a
  ``BatchMatMulV2`` that nothing else reads: a ``GEMM`` node and its two scalar ``Const`` inputs made with
  ``add_node_trusted``, placed with ``place_between``, the two nodes removed with ``remove_nodes`` and the edges
  linked with ``add_edge_trusted``. No pass hooks, no replacement graph, no ledger, no inference, no new-node
  attrs: what the IR itself costs per rewrite, a lower bound for any pass runtime on it;
* ``onnxscript``: ``RewriteRule(target, replacement).apply_to_model(onnx_ir.load(path))`` (the load not timed).

Prints microseconds per rewrite for each side and the ratios; exit status 1 when the three do not rewrite the same
number of sites (each side's result is counted: GEMM nodes, Gemm nodes).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import onnx

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))

import _make_model  # noqa: E402 - after the path set-up

PASS = str(BENCH / "gemm_fusion_pass.py")


def compile_once(path: str) -> tuple[float, int]:
    """CPU seconds of ``gebench.compile`` with its defaults on a freshly loaded graph, and its GEMM count."""
    import gebench

    graph = gebench.load(path)
    gc.collect()
    t = time.process_time()
    run = gebench.compile(graph, passes=[PASS])
    cpu = time.process_time() - t
    if run.status != "SUCCESS":
        raise RuntimeError(f"compile {run.status}: {run.failure_reason}")
    return cpu, sum(1 for _ in run.ir_graph.nodes_of_type("GEMM"))


def floor_once(path: str) -> tuple[float, int]:
    """CPU seconds of the same rewrites made with IR primitives on a copy-on-write copy, and its GEMM count."""
    import gebench
    from gebench import ir

    graph = gebench.load(path).ir
    one = ir.TensorValue(ir.DataType.DT_FLOAT, np.array(1.0, np.float32))
    gc.collect()
    t = time.process_time()
    with ir.full_collections_deferred():  # as compile() runs
        g = graph.copy(share=True)
        rewrites = 0
        for add in list(g.nodes_of_type("Add")):
            src = g.input_sources(add)[0]
            if src is None:
                continue
            mm = g.node(src[0])
            if mm.op_type != "BatchMatMulV2" or g.num_uses(mm) != 1:
                continue
            a, b = g.input_sources(mm)[:2]
            bias = g.input_sources(add)[1]
            if a is None or b is None or bias is None:
                continue
            consumers = list(g.uses(add, 0))
            gemm = g.add_node_trusted("GEMM", None, {"transpose_a": False, "transpose_b": False},
                                      [ir.TensorDesc() for _ in range(5)], [ir.TensorDesc()],
                                      ["a", "b", "c", "alpha", "beta"], ["y"])
            alpha = g.add_node_trusted("Const", None, {"value": one}, [], [one.desc()], [], ["y"])
            beta = g.add_node_trusted("Const", None, {"value": one}, [], [one.desc()], [], ["y"])
            producers = [g.node(a[0]), g.node(b[0]), g.node(bias[0])]
            g.place_between([alpha, beta, gemm], producers, [c for c, _ in consumers])
            g.remove_nodes([add, mm])
            for port, (node, src_port) in enumerate(zip(producers, (a[1], b[1], bias[1]), strict=True)):
                g.add_edge_trusted(node, src_port, gemm, port)
            g.add_edge_trusted(alpha, 0, gemm, 3)
            g.add_edge_trusted(beta, 0, gemm, 4)
            for consumer, port in consumers:
                g.add_edge_trusted(gemm, 0, consumer, port)
            rewrites += 1
    return time.process_time() - t, rewrites


def onnxscript_once(path: str) -> tuple[float, int]:
    """CPU seconds of onnxscript's ``apply_to_model`` on a freshly loaded model, and its Gemm count."""
    import onnx_ir
    from onnxscript.rewriter import pattern

    model = onnx_ir.load(path)
    gc.collect()
    t = time.process_time()
    pattern.RewriteRule(lambda op, x, w, b: op.Add(op.MatMul(x, w), b),
                        lambda op, x, w, b: op.Gemm(x, w, b)).apply_to_model(model)
    cpu = time.process_time() - t
    return cpu, sum(1 for n in model.graph if n.op_type == "Gemm")


SIDES = {"compile()": compile_once, "IR floor": floor_once, "onnxscript": onnxscript_once}


def measure(nodes: int, rounds: int, out: Any = print) -> bool:
    """Run the three sides ``rounds`` times on a model of about ``nodes`` ONNX nodes; print the table. Returns
    whether every side rewrote the model's sites."""
    model = _make_model.make(_make_model.layers_for(nodes), _make_model.hidden_for(nodes))
    sites = _make_model.count_sites(model)
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "model.onnx")
        onnx.save(model, path)
        for once in SIDES.values():  # warm-up: imports and first-call set-up stay out of the rounds
            once(path)
        cpu: dict[str, list[float]] = {name: [] for name in SIDES}
        counts: dict[str, int] = {}
        for r in range(rounds):
            order = list(SIDES) if r % 2 == 0 else list(reversed(SIDES))
            for name in order:
                seconds, counts[name] = SIDES[name](path)
                cpu[name].append(seconds)
    out(f"model: {len(model.graph.node)} ONNX nodes, {sites} MatMul+Add sites; {rounds} round(s), medians of CPU time")
    ok = all(count == sites for count in counts.values())
    per = {name: statistics.median(values) / max(sites, 1) * 1e6 for name, values in cpu.items()}
    out("| side | rewrites | CPU s | us per rewrite |")
    out("|---|---|---|---|")
    for name in SIDES:
        out(f"| {name} | {counts[name]} | {statistics.median(cpu[name]):.3f} | {per[name]:.1f} |")
    out(f"ratio compile()/onnxscript = {per['compile()'] / per['onnxscript']:.2f}; "
        f"IR floor/onnxscript = {per['IR floor'] / per['onnxscript']:.2f}; "
        f"compile()/IR floor = {per['compile()'] / per['IR floor']:.2f}")
    if not ok:
        out(f"rewrite counts differ: {counts} (sites: {sites})")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10000, help="ONNX nodes of the model (about)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--quick", action="store_true", help="300 nodes, one round: does it work?")
    args = parser.parse_args(argv)
    if args.quick:
        args.nodes, args.rounds = 300, 1
    return 0 if measure(args.nodes, args.rounds) else 1


if __name__ == "__main__":
    sys.exit(main())
