"""I/O speed: import an ONNX model with gebench and write its ge_proto dump, vs ``onnx.load`` + ``onnx.checker``.

Usage: ``.venv/bin/python bench/bench_io.py [--size 30000] [--repeat 3] [--no-trace]``

:mod:`_synthetic` writes a transformer ONNX model with exactly ``--size`` nodes to a temporary file. Then, each
side in its own fresh subprocess (so peaks are not mixed up and both start cold):

* gebench: ``gebench.io.load_onnx(path)`` then ``gebench.io.write_dumps({"PreRunBegin": graph}, dir,
  formats=["ge_proto"], level=1)`` (one ``ge_proto_00000000_graph_0_PreRunBegin.txt``);
* onnx: ``onnx.load(path)`` then ``onnx.checker.check_model(model)``.

Time: best of ``--repeat`` runs inside the subprocess, wall clock and process CPU time (CPU time is the steadier
one on a busy machine). Imports of gebench/onnx happen before the clock starts. Memory, per side: the
subprocess's peak RSS while working (Linux: ``VmHWM`` after resetting it via ``/proc/self/clear_refs`` once the
imports are done; elsewhere ``ru_maxrss``), also given above the RSS it had after its imports; and, in a
second subprocess run once under ``tracemalloc`` (slower, not timed), the peak of Python/numpy allocations.

Prints the model size, per-side seconds and peaks, then ``ratio gebench/onnx time`` and ``ratio gebench/onnx
peak memory`` lines. There is no target in the issue: the numbers are reported.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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

MB = 1024 * 1024


def _proc_status(field: str) -> int | None:
    """``VmRSS``/``VmHWM`` of this process in bytes from /proc (Linux), or None."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _reset_peak() -> bool:
    """Reset this process's peak RSS (Linux ``clear_refs``) so it covers only what follows; False if unsupported."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
    except OSError:
        return False
    return True


def _rss_now() -> int:
    rss = _proc_status("VmRSS")
    return rss if rss is not None else _rss_peak()


def _rss_peak() -> int:
    """Peak RSS: ``VmHWM`` (since the last reset) on Linux, else ``ru_maxrss`` (KiB on Linux, bytes on macOS)."""
    hwm = _proc_status("VmHWM")
    if hwm is not None:
        return hwm
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


# ------------------------------------------------------------------------------------------------ child side
def _gebench_steps(model: Path, out_dir: Path) -> tuple[list[tuple[str, float, float]], dict[str, Any]]:
    from gebench.io import load_onnx, write_dumps

    c0, t0 = time.process_time(), time.perf_counter()
    graph = load_onnx(model)
    c1, t1 = time.process_time(), time.perf_counter()
    paths = write_dumps({"PreRunBegin": graph}, out_dir, formats=["ge_proto"], level=1)
    c2, t2 = time.process_time(), time.perf_counter()
    info = {"ir_nodes": len(graph), "dump_bytes": sum(p.stat().st_size for p in paths),
            "dump_files": [p.name for p in paths]}
    return [("import", t1 - t0, c1 - c0), ("dump", t2 - t1, c2 - c1)], info


def _onnx_steps(model: Path, out_dir: Path) -> tuple[list[tuple[str, float, float]], dict[str, Any]]:
    import onnx

    c0, t0 = time.process_time(), time.perf_counter()
    proto = onnx.load(str(model))
    c1, t1 = time.process_time(), time.perf_counter()
    onnx.checker.check_model(proto)
    c2, t2 = time.process_time(), time.perf_counter()
    return [("load", t1 - t0, c1 - c0), ("check", t2 - t1, c2 - c1)], {"onnx_nodes": len(proto.graph.node)}


def child(side: str, model: Path, repeat: int, trace: bool) -> dict[str, Any]:
    """Run one side ``repeat`` times (or once under tracemalloc) in this process; returns a JSON-able result."""
    import gc
    import shutil
    import tracemalloc

    if side == "gebench":
        import gebench.io  # noqa: F401  (import cost not timed)
        steps_fn = _gebench_steps
    else:
        import onnx  # noqa: F401
        steps_fn = _onnx_steps
    gc.collect()
    base_rss = _rss_now()
    _reset_peak()
    runs: list[list[tuple[str, float, float]]] = []
    info: dict[str, Any] = {}
    peak_traced = 0
    with tempfile.TemporaryDirectory(prefix="bench_io_") as tmp:
        for i in range(1 if trace else repeat):
            out_dir = Path(tmp) / f"run{i}"
            gc.collect()
            if trace:
                tracemalloc.start()
            steps, info = steps_fn(model, out_dir)
            if trace:
                peak_traced = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
            runs.append(steps)
            shutil.rmtree(out_dir, ignore_errors=True)
    best = min(runs, key=lambda steps: sum(s[1] for s in steps))
    return {"side": side, "steps": best, "wall": sum(s[1] for s in best),
            "cpu": min(sum(s[2] for s in steps) for steps in runs), "peak_rss": _rss_peak(),
            "base_rss": base_rss, "peak_traced": peak_traced, "info": info}


# ------------------------------------------------------------------------------------------------ parent side
def _run_child(side: str, model: Path, repeat: int, trace: bool) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", side, "--model", str(model),
           "--repeat", str(repeat)]
    if trace:
        cmd.append("--trace")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{side} subprocess failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(size: int, repeat: int, trace: bool, out: Any) -> None:
    from _synthetic import transformer_onnx

    synth = transformer_onnx(size)
    with tempfile.TemporaryDirectory(prefix="bench_io_model_") as tmp:
        model = Path(tmp) / f"transformer_{size}.onnx"
        model.write_bytes(synth.model.SerializeToString())
        res = {side: _run_child(side, model, repeat, False) for side in ("gebench", "onnx")}
        traced = {side: _run_child(side, model, 1, True) for side in ("gebench", "onnx")} if trace else {}
        file_bytes = model.stat().st_size
    ge, ox = res["gebench"], res["onnx"]
    out(f"model: {synth.onnx_nodes} ONNX nodes ({synth.layers} layers), file {file_bytes / MB:.2f} MB; "
        f"gebench IR {ge['info']['ir_nodes']} nodes; ge_proto dump {ge['info']['dump_bytes'] / MB:.2f} MB "
        f"({', '.join(ge['info']['dump_files'])})")
    for name, r in (("gebench", ge), ("onnx", ox)):
        steps = " + ".join(f"{label} {wall:.3f}" for label, wall, _ in r["steps"])
        mem = (f"peak RSS {r['peak_rss'] / MB:.0f} MB ({(r['peak_rss'] - r['base_rss']) / MB:.0f} MB above "
               f"{r['base_rss'] / MB:.0f} MB after imports)")
        if trace:
            mem += f", tracemalloc peak {traced[name]['peak_traced'] / MB:.1f} MB"
        out(f"  {name:8s} {steps} = {r['wall']:.3f} s wall ({r['cpu']:.3f} s cpu); {mem}")
    out(f"  ratio gebench/onnx time = {ge['wall'] / ox['wall']:.1f} wall, {ge['cpu'] / max(ox['cpu'], 1e-9):.1f} cpu")
    grow_ge = max(ge["peak_rss"] - ge["base_rss"], MB)
    grow_ox = max(ox["peak_rss"] - ox["base_rss"], MB)  # at least 1 MB: RSS moves in pages
    line = (f"  ratio gebench/onnx peak memory = {ge['peak_rss'] / ox['peak_rss']:.1f} (peak RSS), "
            f"{grow_ge / grow_ox:.1f} (RSS above imports)")
    if trace:
        line += f", {traced['gebench']['peak_traced'] / max(traced['onnx']['peak_traced'], 1):.1f} (tracemalloc)"
    out(line)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=30000, help="ONNX node count of the model")
    parser.add_argument("--repeat", type=int, default=3, help="runs per side; the best is reported")
    parser.add_argument("--no-trace", dest="trace", action="store_false",
                        help="skip the tracemalloc subprocesses (peak RSS is still reported)")
    parser.add_argument("--child", choices=("gebench", "onnx"), help=argparse.SUPPRESS)
    parser.add_argument("--model", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--trace", dest="child_trace", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.model, args.repeat, args.child_trace)), flush=True)
        return 0
    print(f"bench_io: gebench load_onnx + ge_proto dump vs onnx.load + onnx.checker.check_model, same file, "
          f"each side in its own subprocess; best of {args.repeat}", flush=True)
    measure(args.size, args.repeat, args.trace, lambda line: print(line, flush=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
