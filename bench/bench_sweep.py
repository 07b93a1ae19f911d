"""Sweep speed: 40 tasks on a LocalCluster of 2 workers vs the same tasks one after another in one process, the
peak memory per worker vs the largest task alone, and the scheduling overhead per task.

Usage: ``.venv/bin/python bench/bench_sweep.py [--tasks 40] [--sizes 2000,3000,4000] [--workers 2]
[--trivial 200] [--rounds 1]``

The corpus: ``--tasks`` synthetic transformers (:mod:`_synthetic`, sizes cycled from ``--sizes`` ONNX nodes)
written to a temporary folder, swept with ``bench/gemm_fusion_pass.py`` (MatMul+Add -> GEMM, six sites per
layer). Not timed: writing the models, starting Python and the imports.

* **sequential**: :func:`gebench.sweep.run_task` for every task in one fresh process, one after another (after
  one untimed warm-up task), doing what a sweep does with each task (load, compile, the row, the compact
  ledger, its peak memory) and writing the same out folder (``results.jsonl``, the ledger files, the CSV table,
  the report; the time spent writing is printed beside it). Not in this process: it also hosts the local
  cluster's scheduler, whose threads would then work on a heap full of the sequential run's garbage;
* **sweep**: ``gebench.sweep(models, passes=..., client=c)`` on a ``LocalCluster`` of ``--workers`` single-thread
  worker processes that is already running with its task servers started (the second sweep on a cluster); the
  time includes submitting, the isolated task processes, moving rows and ledgers back and writing the out
  folder (JSON lines, CSV, report). Also given: the ratio with the cluster start and the task servers'
  start-up added to the sweep (a cold ``gebench sweep`` command).

Judged (the issue's targets): ``sweep / sequential <= 0.6`` with 2 workers; per worker, the peak RSS of the
task processes it ran ``<= 1.2 x`` the peak RSS of the largest task run alone in a fresh process (both include
the imported gebench); the scheduling overhead per task ``<= 50 ms``, measured with ``--trivial`` tasks on a
5-node model: ``(sweep wall x workers - sum of the tasks' own wall time) / tasks``, i.e. everything a task
costs besides its work (Dask, the fork, result transfer and storage). Dask's own overhead (``client.map`` of a
no-op) is printed beside it. With ``--rounds N`` the sequential and sweep runs alternate N times and each side's
median counts. The worker processes' own peak RSS and the task servers' RSS are printed for reference, and the
load average (1/5/15 min) at the start and end, and how much two CPU-bound processes at once get done compared
with one right now: the parallel side needs idle cores to show its speed-up.
Exit status 1 when the sweep and the sequential run disagree on the sites replaced.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BENCH))

PASS_FILE = BENCH / "gemm_fusion_pass.py"

_SINGLE = """
import json, pickle, sys
from gebench.sweep._task import run_task
with open(sys.argv[1], "rb") as fh:
    spec = pickle.load(fh)
row = run_task(spec)
print(json.dumps({"peak_mem_mb": row["peak_mem_mb"], "status": row["status"]}))
"""

_SEQUENTIAL = """
import json, pickle, sys, time
from gebench.sweep import SweepResult
from gebench.sweep._store import ResultStore
from gebench.sweep._task import run_task
with open(sys.argv[1], "rb") as fh:
    warm, specs, out, meta = pickle.load(fh)
run_task(warm)
start = time.perf_counter()
store = ResultStore.open(out, meta, overwrite=True)
writing = 0.0
for spec in specs:
    row = run_task(spec)
    t = time.perf_counter()
    store.append(row)
    writing += time.perf_counter() - t
t = time.perf_counter()
store.close()
result = SweepResult.load(out)
store.write_table(result.rows)
result.write_report()
writing += time.perf_counter() - t
took = time.perf_counter() - start
rows = [{k: r[k] for k in ("status", "wall_s", "passes")} for r in result.rows]
print(json.dumps({"seconds": took, "writing": writing, "rows": rows}))
"""


def _bench_env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")


def _sequential(warm: Any, specs: list[Any], tmp: Path, round_: int) -> tuple[float, float, list[dict[str, Any]]]:
    """The tasks one after another in one fresh process (after an untimed warm-up task there), writing the same
    out folder a sweep writes: (seconds, of which writing the out folder, rows)."""
    spec_file = tmp / "sequential_specs.pickle"
    meta = {"verify": False, "pass_sets": {specs[0].passes.label: {"digest": specs[0].passes.digest,
                                                                   "paths": list(specs[0].passes.origins)}},
            "models": [{"path": s.model, "name": s.model_name} for s in specs], "engine": {"scheduler": "none"}}
    spec_file.write_bytes(pickle.dumps((warm, specs, str(tmp / f"sequential{round_}"), meta)))
    out = subprocess.run([sys.executable, "-c", _SEQUENTIAL, str(spec_file)], capture_output=True, text=True,
                         env=_bench_env(), check=True, timeout=3600)
    data = json.loads(out.stdout.strip().splitlines()[-1])
    return float(data["seconds"]), float(data["writing"]), data["rows"]


def _write_corpus(folder: Path, tasks: int, sizes: list[int]) -> tuple[list[Path], dict[int, int]]:
    import onnx

    from _synthetic import transformer_onnx

    folder.mkdir(parents=True, exist_ok=True)
    sites: dict[int, int] = {}
    files: dict[int, bytes] = {}
    for n in sizes:
        synth = transformer_onnx(n)
        sites[n] = synth.matmul_add_sites
        files[n] = synth.model.SerializeToString()
    paths = []
    for i in range(tasks):
        n = sizes[i % len(sizes)]
        path = folder / f"t{i:03d}_{n}.onnx"
        path.write_bytes(files[n])
        paths.append(path)
    onnx.checker.check_model(str(paths[0]))
    return paths, sites


def _write_trivial(folder: Path, count: int) -> list[Path]:
    import onnx
    from onnx import TensorProto, helper

    folder.mkdir(parents=True, exist_ok=True)
    graph = helper.make_graph([helper.make_node("Relu", ["X"], ["Y"], name="relu")], "trivial",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])])
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    paths = []
    for i in range(count):
        path = folder / f"trivial{i:04d}.onnx"
        path.write_bytes(data)
        paths.append(path)
    onnx.checker.check_model(str(paths[0]))
    return paths


def _single_task_peak(spec: Any, tmp: Path) -> float:
    """Peak RSS (MiB) of a fresh Python process that imports gebench and runs ``spec`` alone."""
    spec_file = tmp / "single_spec.pickle"
    spec_file.write_bytes(pickle.dumps(spec))
    out = subprocess.run([sys.executable, "-c", _SINGLE, str(spec_file)], capture_output=True, text=True,
                         env=_bench_env(), check=True, timeout=600)
    data = json.loads(out.stdout.strip().splitlines()[-1])
    assert data["status"] == "SUCCESS", data
    return float(data["peak_mem_mb"])


def _worker_hwm() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _server_rss() -> list[float]:
    from gebench.sweep import _isolate

    out = []
    with _isolate._idle_lock:
        for server in _isolate._idle:
            out.append(_isolate._rss_mb(server.proc.pid) or float("nan"))
    return out


_BURN = "import time\nt = time.process_time()\ns = 0\nfor i in range(4_000_000):\n    s += i * i\n"


def _parallelism(workers: int) -> float:
    """How many times the work of ``workers`` CPU-bound processes gets done, running them at once, compared with
    one of them alone (``workers`` on idle cores; less when other processes hold the cores)."""
    def run(n: int) -> float:
        start = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, "-c", _BURN]) for _ in range(n)]
        for proc in procs:
            proc.wait()
        return time.perf_counter() - start

    one = run(1)
    return workers * one / run(workers)


def _load() -> str:
    try:
        return "/".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "?"


def _noop(x: int) -> int:
    return x


def _replaced(rows: list[dict[str, Any]]) -> int:
    return sum(p["replaced"] for r in rows for p in (r.get("passes") or {}).values())


def _verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--sizes", default="2000,3000,4000", help="ONNX node counts, cycled over the tasks")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--trivial", type=int, default=200, help="trivial tasks for the overhead measurement")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]

    import gebench
    from gebench.sweep import TaskSpec, bundle_passes, local_client
    from gebench.sweep._engine import _warm

    with tempfile.TemporaryDirectory(prefix="gebench-bench-sweep-") as tmp_name:
        tmp = Path(tmp_name)
        models, sites = _write_corpus(tmp / "corpus", args.tasks, sizes)
        trivial = _write_trivial(tmp / "trivial", args.trivial)
        bundle = bundle_passes(str(PASS_FILE))
        specs = [TaskSpec(str(p), str(p), bundle) for p in models]
        expected = sum(sites[sizes[i % len(sizes)]] for i in range(args.tasks))
        print(f"corpus: {args.tasks} synthetic transformers of {'/'.join(map(str, sizes))} ONNX nodes, pass "
              f"{PASS_FILE.name}: {expected} MatMul+Add sites; {args.workers} workers, {os.cpu_count()} cores, "
              f"load average {_load()} at the start")

        warm = TaskSpec(str(trivial[0]), "warm", bundle)  # imports and caches, as a warm worker has them
        largest = max(range(args.tasks), key=lambda i: sizes[i % len(sizes)])
        single_peak = _single_task_peak(specs[largest], tmp)

        seq_times: list[float] = []
        seq_writing: list[float] = []
        sweep_times: list[float] = []
        seq_rows: list[dict[str, Any]] = []
        sweep_rows: list[dict[str, Any]] = []
        start = time.perf_counter()
        with local_client(args.workers) as client:
            cluster_s = time.perf_counter() - start
            start = time.perf_counter()
            client.run(_warm)
            warm_s = time.perf_counter() - start
            for r in range(args.rounds):
                seconds, writing, seq_rows = _sequential(warm, specs, tmp, r)
                seq_times.append(seconds)
                seq_writing.append(writing)
                start = time.perf_counter()
                result = gebench.sweep([str(p) for p in models], passes=str(PASS_FILE), out=tmp / f"sweep{r}",
                                       client=client, progress=False)
                sweep_times.append(time.perf_counter() - start)
                sweep_rows = result.rows
            worker_hwm = client.run(_worker_hwm)
            server_rss = client.run(_server_rss)

            start = time.perf_counter()
            trivial_result = gebench.sweep([str(p) for p in trivial], passes=str(PASS_FILE), out=tmp / "trivial_out",
                                           client=client, progress=False)
            trivial_s = time.perf_counter() - start
            start = time.perf_counter()
            client.gather(client.map(_noop, range(args.trivial), pure=False))
            noop_s = time.perf_counter() - start

        seq_s, sweep_s = statistics.median(seq_times), statistics.median(sweep_times)
        work_s = sum(r["wall_s"] for r in seq_rows)
        print(f"sequential, one process: {seq_s:.2f} s (tasks' own wall time {work_s:.2f} s, writing the out folder "
              f"{statistics.median(seq_writing):.2f} s)"
              + (f"; rounds {', '.join(f'{t:.2f}' for t in seq_times)}" if args.rounds > 1 else ""))
        print(f"sweep, LocalCluster of {args.workers} workers, running: {sweep_s:.2f} s"
              + (f"; rounds {', '.join(f'{t:.2f}' for t in sweep_times)}" if args.rounds > 1 else "")
              + f" (cluster start {cluster_s:.2f} s, task servers {warm_s:.2f} s)")
        ok_sites = _replaced(seq_rows) == _replaced(sweep_rows) == expected
        statuses = {r["status"] for r in sweep_rows} | {r["status"] for r in seq_rows}
        print(f"  sites replaced: sequential {_replaced(seq_rows)}, sweep {_replaced(sweep_rows)}, expected {expected}: "
              + ("equal" if ok_sites else "DIFFERENT") + f"; statuses {sorted(statuses)}")
        speedup = _parallelism(args.workers)
        print(f"  the cores now: {args.workers} CPU-bound processes at once do {speedup:.2f}x the work of one "
              f"({args.workers:.2f}x on idle cores); the best ratio this machine allows now is about {1 / speedup:.2f}")
        ratio = sweep_s / seq_s
        cold = (sweep_s + cluster_s + warm_s) / seq_s
        paired = statistics.median(w / q for w, q in zip(sweep_times, seq_times))
        print(f"ratio sweep/sequential = {ratio:.2f} (target <= 0.6: {_verdict(ratio <= 0.6)}); "
              f"with cluster start and task servers: {cold:.2f}"
              + (f"; median of same-round ratios {paired:.2f}" if args.rounds > 1 else ""))

        per_worker: dict[str, float] = {}
        for row in sweep_rows:
            per_worker[row["worker"]] = max(per_worker.get(row["worker"], 0.0), row["peak_mem_mb"] or 0.0)
        worst = max(per_worker.values())
        mem_ratio = worst / single_peak
        print(f"peak memory: largest task alone {single_peak:.0f} MiB; task processes per worker "
              + ", ".join(f"{v:.0f}" for v in per_worker.values())
              + f" MiB; ratio = {mem_ratio:.2f} (target <= 1.2: {_verdict(mem_ratio <= 1.2)})")
        servers = [x for v in server_rss.values() for x in v]
        print("  worker processes' own peak RSS " + ", ".join(f"{v:.0f}" for v in worker_hwm.values())
              + " MiB; task servers' RSS " + ", ".join(f"{v:.0f}" for v in servers) + " MiB")

        trivial_work = sum(r["wall_s"] for r in trivial_result.rows)
        overhead_ms = (trivial_s * args.workers - trivial_work) / args.trivial * 1000
        noop_ms = noop_s * args.workers / args.trivial * 1000
        ok_trivial = all(r["status"] == "SUCCESS" for r in trivial_result.rows)
        print(f"load average {_load()} at the end (other processes on the cores slow the parallel side most)")
        print(f"scheduling overhead per task ({args.trivial} trivial tasks, {trivial_s:.2f} s, their own work "
              f"{trivial_work:.2f} s): {overhead_ms:.1f} ms (target <= 50 ms: {_verdict(overhead_ms <= 50)}); "
              f"Dask alone (client.map of a no-op): {noop_ms:.1f} ms")
        return 0 if ok_sites and ok_trivial else 1


if __name__ == "__main__":
    sys.exit(main())
