"""The path users take, at LLM scale: load, ``compile()`` with its defaults, the ``gebench compile`` process, GE
dump write/read and the workbench, each against its peer (onnx_ir / onnxscript), in one run.

Usage::

    .venv/bin/python bench/bench_scale.py                        # 10k, 40k, 100k nodes + the 20k-consumer graph
    .venv/bin/python bench/bench_scale.py --sizes 10000 --shared 0 --rounds 1
    .venv/bin/python bench/bench_scale.py --quick                # a few hundred nodes, 1 round (seconds)

Models (:mod:`_make_model`): transformer-like stacks of 19-node layers with 6 MatMul+Add sites each, at about
``--sizes`` ONNX nodes (hidden size 16 at 10k, 8 above), and a chain in which one scalar initializer feeds
``--shared`` ``Mul`` nodes. Rules: ``bench/gemm_fusion_pass.py`` (``BatchMatMulV2(a, b) + c -> GEMM``) against
onnxscript's ``RewriteRule(Add(MatMul(x, w), b) -> Gemm(x, w, b))`` on the transformers, and
``bench/mul_past_relu_pass.py`` (``Relu(x * s) -> Relu(x) * s``, the shared Const bound to ``s``) against the same
rule in onnxscript on the shared-constant graph.

Every measurement runs in a fresh subprocess. Per model and round, interleaved, the sides alternating which goes
first:

* ``load`` + ``compile``: after the imports (timed apart, reported as the ``import`` part), ``gebench.load(path)``
  then ``gebench.compile(graph, passes=[pass file])`` with every default (a copy of the graph, the ledger with
  ``record_all``, snapshots at every dump point, shape inference between the stages); the peer does
  ``onnx_ir.load(path)`` then ``RewriteRule(target, replacement).apply_to_model(model)`` (rule built in the timed
  region, as gebench loads the pass file in it). Beside the peer, with no target, the same load + apply with a
  rule whose replacement makes the nodes GE's makes (a ``GEMM`` fed by two scalar ``Constant`` nodes: GE's GEMM
  takes alpha and beta as inputs, where ONNX ``Gemm`` has attrs), so the table shows what the extra nodes cost
  each side; and gebench's load + compile with ``bench/matmul_bias_pass.py``, whose replacement makes one node as
  the peer's does (``BatchMatMulV2`` with the addend as its bias), against the peer's rule. Each gebench run of
  the two rules then also times ``compile(graph, passes=[])`` on the same loaded graph (the part of ``compile()``
  no pass changes: the copy of the caller's graph and GE's ``InferShape`` over the whole graph after the first
  stage), so the table splits ``compile()`` into that and the pass loop (the rest: matching, replacements,
  rewrites, ledger, snapshot journals), each against the peer's whole ``apply_to_model``. ``--skip same`` leaves
  all of these out. Peak RSS is ``VmHWM`` reset through ``/proc/self/clear_refs``
  after the imports: the peak of the load step, then of load + compile (apply);
* the process (in the first ``--process-rounds`` rounds, default 1: it has no target and is by far the slowest
  step): ``gebench compile MODEL --passes P --dump-dir D`` against a Python process that loads with onnx_ir,
  applies the rule and saves the model with ``onnx_ir.save``. Wall clock from spawn to exit; CPU time and peak
  RSS from ``wait4``. The gebench process runs this file's ``--child cli`` entry, which calls
  ``gebench.cli.main`` and ends the process as the ``gebench`` script does (``gebench.cli.end_process``),
  with timers around a few stage-level functions (a few dozen calls) so the process figure comes with its parts;
* at the largest size only: the GE dump of the imported model (``write_dumps({"PreRunBegin": graph},
  formats=["ge_proto"], level=1)``) against ``onnx_ir.save`` of the same model, and reading it back
  (``load_ge_dump``) against ``onnx_ir.load``: seconds, MB/s of file, ONNX nodes per second, peak RSS of the step
  (reading may run ``protoc`` in a helper process: its CPU time and peak RSS are added to gebench's);
* at the largest size only: the workbench, in one subprocess that compiles the model with both pass files and
  then, per round with a cold layout cache, times ``Workbench(run)`` (the first drawn view: the root level of the
  final graph's hierarchy, dump points not built), expanding one of its groups (no target), selecting the MatMul
  pass (which builds the dump point its candidates live in: no target), selecting one of its candidates far from
  the first ones (its focused view) and switching between the two passes (no browser: the times are those of the
  Python side that sends the drawing).

Where gebench's time goes: once per model an extra, instrumented subprocess repeats load + compile with timers
around internal functions (``ir.Graph.copy``, ``fusion.runtime._run_stage``/``_infer``/``_execute``, the ledger
recorder, snapshot journals, ``api.resolve_passes``, the ONNX importer's steps); those parts are printed under the
table, beside the instrumented total. The headline ``compile()`` figure is the real call without any timer (the
ledger timers run once per candidate). The process, dump and workbench steps carry coarse timers (a few dozen
calls) in the measured run itself. A part whose function no longer exists shows "—", one never called "0": the
code under test changes while this benchmark is used, so the timers look functions up by name and skip the
missing ones.

Judging: every figure is the median over ``--rounds`` rounds; every ratio is the median of the ratios of the
two sides measured in the same round (each round's ratio is printed). Times are judged on process CPU time
(steadier than wall clock on a shared machine; wall clock is printed beside); the workbench is judged on wall
clock (it waits for graphviz). Targets (at every size):

* ``compile()`` <= 1.0x onnxscript's ``apply_to_model``; compile CPU per ONNX node at the largest size <= 1.2x
  that at the smallest;
* ``load`` <= 1.2x ``onnx_ir.load`` in time and <= 1.3x in peak RSS; peak RSS of load + compile <= 1.5x that of
  onnx_ir load + apply;
* GE dump write and read each >= 1/2 the speed of ``onnx_ir`` save/load of the same model (per ONNX node);
* workbench at the largest size: first view <= 2 s, focused view of a candidate <= 0.5 s, pass switch <= 100 ms.

The process comparison has no target; its ratio is printed. A step whose subprocess uses more than
``--timeout`` CPU seconds (or 4x that in wall clock) is killed and printed as timed out (NOT met), and is not run
again in later rounds.
Exit status 0 unless the two sides rewrite different numbers of sites. Linux only (``/proc``, ``wait4``).

``--quick`` is a preset (300 nodes, a 300-consumer Const, 1 round); ``--in-process`` runs the steps in this
interpreter instead of fresh ones, which checks that the benchmark works in seconds (``tests/test_bench_smoke.py``)
but measures nothing; ``--skip process,dumps,viz,parts`` leaves sections out. Nothing is written outside a
temporary directory.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import importlib
import io
import json
import os
import platform
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
MB = 1024 * 1024

DEFAULT_SIZES = "10000,40000,100000"
DEFAULT_SHARED = 20000
DEFAULT_TIMEOUT = 120.0

# targets (ratios gebench/peer unless said otherwise)
COMPILE_TARGET = 1.0
PER_NODE_TARGET = 1.2
LOAD_TIME_TARGET = 1.2
LOAD_RSS_TARGET = 1.3
PEAK_RSS_TARGET = 1.5
DUMP_SPEED_TARGET = 0.5  # gebench speed / onnx_ir speed, at least
FIRST_VIEW_TARGET = 2.0  # seconds
FOCUS_TARGET = 0.5
SWITCH_TARGET = 0.1

#: rule name -> the gebench pass file (in bench/) and what the benchmark prints about it
RULES: dict[str, dict[str, str]] = {
    "gemm": {"pass": "gemm_fusion_pass.py", "label": "MatMul+Add -> Gemm"},
    "relu_mul": {"pass": "mul_past_relu_pass.py", "label": "Relu(Mul(x, s)) -> Mul(Relu(x), s)"},
    "gemm_one_node": {"pass": "matmul_bias_pass.py", "label": "MatMul+Add -> BatchMatMulV2 with bias"},
}

#: rule -> the peer rule that makes the nodes GE's replacement makes, timed beside the peer (no target): GE's
#: ``GEMM`` takes alpha and beta as inputs, so each rewrite makes a GEMM and two scalar Consts, where the peer's
#: ONNX ``Gemm`` is one node with attrs
SAME_NODES_RULES: dict[str, str] = {"gemm": "gemm_same_nodes"}

#: rule -> a gebench rule whose replacement makes one node, as the peer's does (``BatchMatMulV2`` with the addend
#: as its bias), timed beside gebench against the peer's rule (no target)
ONE_NODE_RULES: dict[str, str] = {"gemm": "gemm_one_node"}

#: onnxscript's side of :data:`RULES` (source text: the peer process runs it with ``python -c``)
OX_RULES_SRC = """
RULES = {
    "gemm": (lambda op, x, w, b: op.Add(op.MatMul(x, w), b), lambda op, x, w, b: op.Gemm(x, w, b)),
    "relu_mul": (lambda op, x, s: op.Relu(op.Mul(x, s)), lambda op, x, s: op.Mul(op.Relu(x), s)),
    # the nodes GE's replacement makes: a GEMM fed by two scalar Consts (GE's GEMM takes alpha and beta as inputs)
    "gemm_same_nodes": (lambda op, x, w, b: op.Add(op.MatMul(x, w), b),
                        lambda op, x, w, b: op.GEMM(x, w, b, op.Constant(value_float=1.0),
                                                    op.Constant(value_float=1.0), _domain="ge")),
}


def count_ox(model, rule):
    if rule == "gemm":
        return sum(1 for n in model.graph if n.op_type == "Gemm")
    if rule == "gemm_same_nodes":
        return sum(1 for n in model.graph if n.op_type == "GEMM")
    return sum(1 for n in model.graph if n.op_type == "Relu"
               and any(u.op_type == "Mul" for u in n.outputs[0].consumers()))
"""

#: the peer process: load with onnx_ir, apply the rule with onnxscript, save with onnx_ir
PEER_PROCESS_SRC = OX_RULES_SRC + """
import json, sys
import onnx_ir
from onnxscript.rewriter import pattern

model = onnx_ir.load(sys.argv[1])
target, replacement = RULES[sys.argv[3]]
applied = pattern.RewriteRule(target, replacement).apply_to_model(model)
onnx_ir.save(model, sys.argv[2])
print(json.dumps({"result": {"rewrites": count_ox(model, sys.argv[3]), "applied": applied}}))
"""

#: modules gebench's load + compile use, imported before the clock starts (missing ones are skipped)
#: gebench's modules imported before the clock starts: those ``load`` runs (it returns a ``ge.graph.Graph``), then
#: those ``compile`` and the pass file import on first use (the facade's ``ge.es`` builders, the inference rules),
#: as onnxscript's rewriter and ``onnx_ir`` are imported before the peer's clock
GE_LOAD_IMPORTS = ("gebench", "gebench.api", "gebench.io", "gebench.ge.graph")
GE_COMPILE_IMPORTS = ("gebench.fusion.runtime", "gebench.fusion.ledger", "gebench.fusion.reload", "gebench.ge.passes",
                      "gebench.ge.passes.base", "gebench.ge.es.all", "gebench.ops", "gebench.ops._infer_nn",
                      "gebench.ops._infer_elementwise", "gebench.ops._infer_index", "gebench.ops._infer_shape_ops",
                      "gebench.fusion.timing", "gebench.ge.passes.registry", "gebench.ge.passes._bridge",
                      "gebench.ge.passes._engine", "gebench.ge.passes._reflect")
OX_IMPORTS = ("onnx_ir", "onnxscript.rewriter.pattern", "onnxscript.optimizer")

#: instrumented parts: (module, qualified name, part). Part "copy|snapshots" is decided per call.
LOAD_PARTS = (
    ("gebench.io.onnx_import", "read_model_file", "read file"),
    ("gebench.io.onnx_import", "_read_model", "read file"),
    ("gebench.io.onnx_import", "_check_model", "check"),
    ("gebench.io._onnx_source", "_c_checker.check_model_path", "check"),  # the file reader's calls into ONNX
    ("onnx.shape_inference", "infer_shapes", "ONNX shape inference"),
    ("gebench.io._onnx_source", "_c_shape_inference.infer_shapes", "ONNX shape inference"),
    ("gebench.io.onnx_import", "_Importer.run_root", "build IR"),
)
COMPILE_PARTS = (
    ("gebench.api", "resolve_passes", "pass loading"),
    ("gebench.ir", "Graph.copy", "copy|snapshots"),
    ("gebench.fusion.runtime", "_execute", "runtime"),
    ("gebench.fusion.runtime", "_run_stage", "passes"),
    ("gebench.fusion.runtime", "_infer", "inference"),
    ("gebench.fusion.runtime", "_Recorder.add", "ledger"),
    ("gebench.fusion.runtime", "_Recorder.lint", "ledger"),
    ("gebench.fusion.runtime", "_Recorder.structural_mismatch", "ledger"),
    ("gebench.fusion.runtime", "_Recorder.boundary_violation", "ledger"),
    ("gebench.fusion.runtime", "_capture_list", "ledger"),
    ("gebench.ir", "GraphJournal.__init__", "snapshots"),  # snapshots kept as journals of later changes
    ("gebench.ir", "GraphJournal.materialize", "snapshot build"),  # a journal built into a graph when read
)
CLI_PARTS = (
    ("gebench.api", "_load_ir", "load"),  # what load() and compile() read a graph with
    ("gebench.api", "compile", "compile"),
    ("gebench.api", "write_dumps", "dumps"),
    ("gebench.io.ge_dump", "_write_atomically", "dump text + file write"),
    ("gebench.io.ge_dump", "_copy_atomically", "dump file copy"),
)
#: the writer streams the text into the file as it makes it: the two are one part
DUMP_WRITE_PARTS = (
    ("gebench.io.ge_dump", "_write_atomically", "text + file write"),
    ("gebench.io.ge_dump", "_copy_atomically", "file copy"),
)
VIZ_PARTS = (
    ("gebench.ir", "GraphJournal.materialize", "snapshot build"),
    ("gebench.viz._workbench", "candidate_rows", "ledger rows"),
    ("gebench.viz._workbench", "pass_summaries", "pass list"),
    ("gebench.viz._levels", "derive_hierarchy", "hierarchy"),
    ("gebench.viz._hierarchy", "Hierarchy.level_view", "level"),
    ("gebench.viz._workbench", "build_view", "view"),
    ("gebench.viz._workbench", "k_hop", "k-hop"),
    ("gebench.viz._workbench", "view_to_dot", "DOT text"),
    ("gebench.viz._layout_cache", "render_svg", "graphviz layout"),
    ("gebench.viz._layout_cache", "layered_svg", "layered layout"),
    ("gebench.viz._workbench", "compress_svg", "compress"),
)
#: "protobuf text parse" runs inside "split by op signature" (once per op signature; nested parts, both shown)
DUMP_READ_PARTS = (
    ("gebench.io.ge_dump", "_read_dump_bytes", "file read"),
    ("gebench.io.ge_dump", "split_dump_text", "split by op signature"),
    ("gebench.io._ge_dump_read", "SplitDump.build", "decode to IR"),
    ("gebench.io.ge_dump", "_parse_with_protoc", "protoc parse"),
    ("google.protobuf.text_format", "Parse", "protobuf text parse"),
)


# ============================================================================================ process measures
def _proc_status(field_name: str) -> int | None:
    """``VmRSS``/``VmHWM`` of this process in bytes (Linux /proc), or None."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _reset_peak() -> None:
    """Reset this process's peak RSS (``VmHWM``) to its current RSS, so the peak covers what follows."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
    except OSError:
        pass


def _peak() -> int:
    """Peak RSS in bytes since the last :func:`_reset_peak` (``ru_maxrss`` where /proc is missing)."""
    hwm = _proc_status("VmHWM")
    if hwm is not None:
        return hwm
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _rss() -> int:
    rss = _proc_status("VmRSS")
    return rss if rss is not None else _peak()


def _children_peak() -> int:
    """Largest peak RSS of the helper processes this process has waited for (bytes; 0 when none)."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024


def _cpu() -> float:
    """CPU seconds of this process plus the helper processes it has waited for (``protoc``, graphviz)."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


@dataclass
class Clock:
    """Wall and CPU seconds and the peak RSS of one timed step (started with :meth:`start`)."""

    wall: float = 0.0
    cpu: float = 0.0
    peak: int = 0
    base: int = 0
    _t: float = 0.0
    _c: float = 0.0

    @classmethod
    def start(cls, reset: bool = True) -> Clock:
        """Start timing; ``reset`` restarts the peak-RSS window here."""
        gc.collect()
        clock = cls(base=_rss())
        if reset:
            _reset_peak()
        clock._t, clock._c = time.perf_counter(), _cpu()
        return clock

    def stop(self) -> dict[str, float]:
        """Stop; returns ``{"wall", "cpu", "peak", "base"}`` (peak and base in bytes)."""
        self.wall = time.perf_counter() - self._t
        self.cpu = _cpu() - self._c
        self.peak = _peak()
        return {"wall": self.wall, "cpu": self.cpu, "peak": self.peak, "base": self.base}


# ============================================================================================ instrumentation
_LIVE_PARTS: list[Parts] = []  # undone after a child run in this process (``--in-process``)


class Parts:
    """Timers wrapped around internal functions, summed by part name (CPU and wall seconds, calls).

    A call nested in a call of the same part is not timed again. Functions that no longer exist are listed in
    :attr:`missing` (their part prints as "—"): the code under test changes while the benchmark is used.
    """

    def __init__(self, children: bool = False) -> None:
        self._clock = _cpu if children else time.process_time  # children: count helper processes' CPU too
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self.missing: list[str] = []
        self.installed: list[str] = []
        self.installed_parts: set[str] = set()
        self._active: dict[str, int] = {}
        self._undo: list[Callable[[], None]] = []
        _LIVE_PARTS.append(self)

    def active(self, part: str) -> bool:
        """True while a call of ``part`` is running."""
        return self._active.get(part, 0) > 0

    def _part_for(self, part: str) -> str | None:
        if part != "copy|snapshots":
            return part
        # a graph copy made by the runtime itself is a snapshot; one made inside another part belongs to that part
        if any(self.active(p) for p in ("passes", "inference", "snapshots", "snapshot build", "dumps", "ledger")):
            return None
        return "snapshots" if self.active("runtime") else "copy"

    def _timed(self, fn: Callable[..., Any], part: str) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            name = self._part_for(part)
            if name is None or self.active(name):
                return fn(*args, **kwargs)
            self._active[name] = self._active.get(name, 0) + 1
            t0, c0 = time.perf_counter(), self._clock()
            try:
                return fn(*args, **kwargs)
            finally:
                self.cpu[name] = self.cpu.get(name, 0.0) + self._clock() - c0
                self.wall[name] = self.wall.get(name, 0.0) + time.perf_counter() - t0
                self.calls[name] = self.calls.get(name, 0) + 1
                self._active[name] -= 1

        return wrapper

    def wrap(self, module: str, qualname: str, part: str) -> bool:
        """Replace ``module.qualname`` (a function, or a method as ``Class.name``) by a timed wrapper."""
        label = f"{module}.{qualname}"
        try:
            owner: Any = importlib.import_module(module)
            *path, name = qualname.split(".")
            for attr in path:
                owner = getattr(owner, attr)
            raw = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
        except (ImportError, AttributeError, KeyError):
            self.missing.append(label)
            return False
        if isinstance(raw, (staticmethod, classmethod)):
            new: Any = type(raw)(self._timed(raw.__func__, part))
        elif callable(raw):
            new = self._timed(raw, part)
        else:
            self.missing.append(label)
            return False
        setattr(owner, name, new)
        self._undo.append(lambda: setattr(owner, name, raw))
        self.installed.append(label)
        self.installed_parts.update(part.split("|"))
        return True

    def replace(self, owner: Any, name: str, value: Any) -> None:
        """Set ``owner.name = value`` until :meth:`undo`."""
        old = getattr(owner, name)
        setattr(owner, name, value)
        self._undo.append(lambda: setattr(owner, name, old))

    def wrap_all(self, specs: Sequence[tuple[str, str, str]]) -> None:
        """:meth:`wrap` every ``(module, qualname, part)``."""
        for module, qualname, part in specs:
            self.wrap(module, qualname, part)

    def undo(self) -> None:
        """Put the original functions back."""
        while self._undo:
            self._undo.pop()()

    def to_dict(self) -> dict[str, Any]:
        return {"cpu": self.cpu, "wall": self.wall, "calls": self.calls, "missing": self.missing,
                "installed": sorted(self.installed_parts)}

    def snapshot(self) -> dict[str, float]:
        """Wall seconds per part so far (to take differences around one action)."""
        return dict(self.wall)


# ============================================================================================ child side
def _on_path(directory: Path) -> None:
    if str(directory) not in sys.path:
        sys.path.insert(0, str(directory))


def _import_all(names: Sequence[str]) -> dict[str, float]:
    """Import ``names`` (missing ones skipped); returns the import's wall and CPU seconds."""
    t0, c0 = time.perf_counter(), time.process_time()
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    return {"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0}


def count_ge(graph: Any, rule: str) -> int:
    """Sites rewritten by ``rule`` in a gebench IR graph, counted on the graph (not from the ledger)."""
    if rule == "gemm":
        return len(graph.nodes_of_type("GEMM"))
    if rule == "gemm_one_node":
        return sum(1 for node in graph.nodes_of_type("BatchMatMulV2")
                   if (sources := graph.input_sources(node))[2:3] and sources[2] is not None)  # bias fed
    return sum(1 for node in graph.nodes_of_type("Relu")
               if any(user.op_type == "Mul" for user, _ in graph.uses(node, 0)))


def _ox_rules() -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(OX_RULES_SRC, namespace)  # noqa: S102 - our own source text, shared with the peer process
    return namespace


def child_make(spec: dict[str, Any]) -> dict[str, Any]:
    """Write the model of ``spec`` (``kind``: transformer or shared) to ``spec["path"]``; returns its facts."""
    _on_path(BENCH)
    import onnx

    import _make_model

    if spec["kind"] == "shared":
        model = _make_model.make_shared_const(spec["n"])
        facts = {"blocks": spec["n"], "sites": spec["n"], "hidden": 8}
    else:
        layers, hidden = _make_model.layers_for(spec["n"]), _make_model.hidden_for(spec["n"])
        model = _make_model.make(layers, hidden)
        facts = {"layers": layers, "hidden": hidden, "sites": _make_model.count_sites(model)}
        if facts["sites"] != layers * _make_model.SITES_PER_LAYER:
            raise RuntimeError(f"{facts['sites']} MatMul+Add sites, expected {layers * _make_model.SITES_PER_LAYER}")
    onnx.save(model, spec["path"])
    consumers = 0
    if spec["kind"] == "shared":
        consumers = sum(1 for n in model.graph.node for i in n.input if i == "scale")
    return {**facts, "onnx_nodes": len(model.graph.node), "file_bytes": os.path.getsize(spec["path"]),
            "initializers": len(model.graph.initializer), "shared_consumers": consumers}


def _full_collection() -> dict[str, float]:
    """Time one full collection of the garbage collector (what the step just measured leaves due: an interpreter
    with a heap this large runs one soon after, on whatever allocates next)."""
    t, c = time.perf_counter(), _cpu()
    gc.collect()
    return {"wall": time.perf_counter() - t, "cpu": _cpu() - c}


def child_ge(spec: dict[str, Any]) -> dict[str, Any]:
    """gebench: ``load(path)`` then ``compile(graph, passes=[pass])`` with its defaults (``parts``: instrumented)."""
    _on_path(ROOT)
    imports = _import_all(GE_LOAD_IMPORTS)
    import gebench

    parts = Parts() if spec.get("parts") else None
    if parts is not None:
        parts.wrap_all(LOAD_PARTS)
    clock = Clock.start()
    graph = gebench.load(spec["model"]).ir
    load = clock.stop()
    imports_rest = _import_all(GE_COMPILE_IMPORTS)  # what compile imports lazily, outside the clock (as onnxscript's)
    if parts is not None:
        parts.wrap_all(COMPILE_PARTS)
    clock = Clock.start(reset=False)  # the peak keeps covering load + compile
    run = gebench.compile(graph, passes=[str(BENCH / RULES[spec["rule"]]["pass"])])
    comp = clock.stop()
    if run.status != "SUCCESS":
        raise RuntimeError(f"compile {run.status}: {run.failure_reason}")
    summary: dict[str, Any] = {}
    try:
        summary = {name: {k: v for k, v in entry.items() if k in ("candidates", "replaced")}
                   for name, entry in run.summary().items()}
    except Exception as exc:  # noqa: BLE001 - informative only
        summary = {"error": repr(exc)}
    result = {"import": {"wall": imports["wall"] + imports_rest["wall"], "cpu": imports["cpu"] + imports_rest["cpu"]},
              "load": load, "compile": comp, "gc_after": _full_collection(), "ir_nodes": len(graph),
              "rewrites": count_ge(run.ir_graph, spec["rule"]),
              "ledger_records": len(run.ledger), "summary": summary, "snapshots": len(run.ir_snapshots),
              "parts": parts.to_dict() if parts is not None else None}
    if spec.get("no_pass"):
        # after everything above, so that it changes none of it: the part of compile() that does not depend on
        # the pass (the copy of the caller's graph and GE's InferShape over the whole graph after the first stage)
        clock = Clock.start(reset=False)
        bare = gebench.compile(graph, passes=[])
        result["no_pass"] = clock.stop()
        if bare.status != "SUCCESS":
            raise RuntimeError(f"compile without passes {bare.status}: {bare.failure_reason}")
    return result


def child_ox(spec: dict[str, Any]) -> dict[str, Any]:
    """Peer: ``onnx_ir.load(path)`` then ``RewriteRule(target, replacement).apply_to_model(model)``."""
    imports = _import_all(OX_IMPORTS[:1])
    import onnx_ir

    clock = Clock.start()
    model = onnx_ir.load(spec["model"])
    load = clock.stop()
    imports_rest = _import_all(OX_IMPORTS[1:])
    from onnxscript.rewriter import pattern

    rules = _ox_rules()
    clock = Clock.start(reset=False)
    target, replacement = rules["RULES"][spec["rule"]]
    applied = pattern.RewriteRule(target, replacement).apply_to_model(model)
    comp = clock.stop()
    return {"import": {"wall": imports["wall"] + imports_rest["wall"], "cpu": imports["cpu"] + imports_rest["cpu"]},
            "load": load, "compile": comp, "gc_after": _full_collection(),
            "rewrites": rules["count_ox"](model, spec["rule"]), "applied": applied}


def child_cli(spec: dict[str, Any]) -> dict[str, Any]:
    """``gebench compile ARGS`` in this process, as the ``gebench`` script runs it, with stage-level timers."""
    t0, c0 = time.perf_counter(), time.process_time()
    _on_path(ROOT)
    _import_all(("gebench", "gebench.cli", "gebench.api", "gebench.io"))
    import gebench.cli

    parts = Parts()
    parts.wrap_all(LOAD_PARTS + CLI_PARTS + COMPILE_PARTS)  # imports what the wrapped functions live in
    imports = {"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0}
    runs: list[Any] = []
    api = sys.modules["gebench.api"]
    real_compile = api.compile

    def keep(*args: Any, **kwargs: Any) -> Any:
        run = real_compile(*args, **kwargs)
        runs.append(run)
        return run

    parts.replace(api, "compile", keep)
    code = gebench.cli.main(spec["argv"])
    sys.stdout.flush()
    rewrites = count_ge(runs[-1].ir_graph, spec["rule"]) if runs else -1
    dump_bytes = sum(p.stat().st_size for p in Path(spec["dump_dir"]).iterdir()) if Path(spec["dump_dir"]).is_dir() \
        else 0
    return {"exit": code, "rewrites": rewrites, "import": imports, "parts": parts.to_dict(), "dump_bytes": dump_bytes,
            "inside": {"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0}}


def child_dump(spec: dict[str, Any]) -> dict[str, Any]:
    """One step of the dump comparison (``spec["step"]``: ge-write, ge-read, ox-save, ox-load)."""
    step, out = spec["step"], spec.get("out", "")
    parts = Parts(children=True)
    if step.startswith("ge-"):
        _on_path(ROOT)
        imports = _import_all(("gebench", "gebench.api", "gebench.io"))
        import gebench
        import gebench.io

        if step == "ge-write":
            graph = gebench.load(spec["model"]).ir
            parts.wrap_all(DUMP_WRITE_PARTS)
            clock = Clock.start()
            paths = gebench.io.write_dumps({"PreRunBegin": graph}, out, formats=["ge_proto"], level=1)
            res = clock.stop()
            return {"import": imports, "step": res, "bytes": sum(p.stat().st_size for p in paths),
                    "path": str(paths[0]), "nodes": len(graph), "parts": parts.to_dict()}
        parts.wrap_all(DUMP_READ_PARTS)
        clock = Clock.start()
        graph = gebench.io.load_ge_dump(spec["path"])
        res = clock.stop()
        res["peak"] += _children_peak()  # protoc runs beside this process while it holds the text
        return {"import": imports, "step": res, "bytes": os.path.getsize(spec["path"]), "nodes": len(graph),
                "helper_peak": _children_peak(), "parts": parts.to_dict()}
    imports = _import_all(("onnx_ir",))
    import onnx_ir

    if step == "ox-save":
        model = onnx_ir.load(spec["model"])
        clock = Clock.start()
        onnx_ir.save(model, out)
        res = clock.stop()
        return {"import": imports, "step": res, "bytes": os.path.getsize(out), "path": out}
    clock = Clock.start()
    model = onnx_ir.load(spec["path"])
    res = clock.stop()
    return {"import": imports, "step": res, "bytes": os.path.getsize(spec["path"]),
            "nodes": sum(1 for _ in model.graph)}


def _emit(line: dict[str, Any]) -> None:
    print(json.dumps(line), flush=True)


def _viz_step(rnd: int, name: str, fn: Callable[[], Any], box: list[Any], parts: Parts) -> bool | None:
    """Time ``fn`` (one workbench action); prints start and end lines (the end line with the wall seconds of the
    parts inside it). None when it raised (the error is printed)."""
    _emit({"start": name, "round": rnd})
    before = parts.snapshot()
    t = time.perf_counter()
    error = ""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - reported as the step's error
        error = f"{type(exc).__name__}: {exc}"[:500]
    wall = time.perf_counter() - t
    spent = {k: v - before.get(k, 0.0) for k, v in parts.snapshot().items() if v - before.get(k, 0.0) > 0}
    line: dict[str, Any] = {"round": rnd, "step": name, "parts": spent, "installed": sorted(parts.installed_parts)}
    if error:
        _emit({**line, "error": error, "failed_after": wall})
        return None
    info = dict(getattr(box[0], "view_info", {}) or {}) if box else {}
    _emit({**line, "wall": wall, "info": {k: info.get(k) for k in ("drawn", "total", "focused", "overview", "level",
                                                                     "snapshot", "engine")}})
    return True


def child_viz(spec: dict[str, Any]) -> dict[str, Any]:
    """The workbench on the compiled model: per round, first view, pass selection, focused candidate, switches.

    Prints a JSON line when each step starts and ends, so a killed child still tells what it was doing. Timers
    around a few drawing functions (a handful of calls per action) split each action into its parts.
    """
    _on_path(ROOT)
    import gebench
    import gebench.viz._workbench as wbmod
    from gebench.viz import Workbench

    t0 = time.perf_counter()
    graph = gebench.load(spec["model"]).ir
    _emit({"done": "load", "wall": time.perf_counter() - t0})
    t0 = time.perf_counter()
    run = gebench.compile(graph, passes=[str(BENCH / RULES[r]["pass"]) for r in ("gemm", "relu_mul")])
    _emit({"done": "compile", "wall": time.perf_counter() - t0, "status": run.status, "ir_nodes": len(graph)})
    t0 = time.perf_counter()
    gc.collect()  # the full collection the compile leaves due, apart: else the first view of round 0 pays it
    _emit({"done": "collect", "wall": time.perf_counter() - t0})
    cache_cls = None
    try:
        from gebench.viz._layout_cache import LayoutCache as cache_cls
    except ImportError:
        pass
    cold = cache_cls is not None and hasattr(wbmod, "_SHARED_CACHE")
    _emit({"done": "setup", "cache": "cold each round" if cold else "not reset (cache class not found)"})
    parts = Parts()
    parts.wrap_all(VIZ_PARTS)
    switches = spec.get("switches", 6)
    for rnd in range(spec["rounds"]):
        if cold:
            parts.replace(wbmod, "_SHARED_CACHE", cache_cls(capacity=128))  # cold layout cache: the first view lays out
        box: list[Any] = []
        if _viz_step(rnd, "first view", lambda box=box: box.append(Workbench(run)), box, parts) is None:
            return {"stopped": "first view failed"}
        wb = box[0]
        groups = wb.hierarchy().root.children if wb.view_info.get("level") is not None else []
        if groups:  # expand a group of the first view's level (laid out alone), then back to the first view
            middle = groups[len(groups) // 2]
            _viz_step(rnd, "expand", lambda wb=wb, g=middle: wb.open_group(g), box, parts)
            wb.show_overview()
        names = [p["name"] for s in wb.stages for p in s["passes"] if p["candidates"]]
        gemm = next((n for n in names if "Gemm" in n or "GEMM" in n), names[0] if names else "")
        other = next((n for n in names if n != gemm), "")
        if not gemm:
            _emit({"round": rnd, "step": "select pass", "error": "no pass with candidates"})
            continue
        _viz_step(rnd, "select pass", lambda wb=wb, name=gemm: wb.select_pass(name), box, parts)
        rows = [r for r in wb.pass_rows(gemm) if r.status == "REPLACED"] or wb.pass_rows(gemm)
        if rows:
            index = rows[len(rows) * 2 // 3].index  # far from the first candidates the pass view is drawn around
            _viz_step(rnd, "focused candidate", lambda wb=wb, i=index: wb.select_candidate(i), box, parts)
        if not other:
            _emit({"round": rnd, "step": "switch", "error": "only one pass has candidates"})
            continue
        for i in range(switches):
            name = other if i % 2 == 0 else gemm
            _viz_step(rnd, "switch", lambda wb=wb, name=name: wb.select_pass(name), box, parts)
    return {"rounds": spec["rounds"]}


CHILDREN: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "make": child_make, "ge": child_ge, "ox": child_ox, "cli": child_cli, "dump": child_dump, "viz": child_viz,
}


# ============================================================================================ parent side
@dataclass
class Proc:
    """A finished child process: what it printed and what the kernel says it used."""

    ok: bool
    timed_out: bool
    wall: float
    cpu: float
    maxrss: int
    lines: list[dict[str, Any]]
    error: str = ""

    @property
    def result(self) -> dict[str, Any]:
        """The child's ``{"result": ...}`` line (empty when it printed none)."""
        for line in reversed(self.lines):
            if "result" in line:
                return line["result"]
        return {}


def _child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DUMP_GE_GRAPH", "DUMP_GRAPH_LEVEL", "DUMP_GRAPH_FORMAT", "DUMP_GRAPH_PATH",
                        "ASCEND_GE_PY_PASS_PATH")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    return env


#: a step's wall clock may run to this many times its CPU timeout (a busy machine) before it is killed anyway
WALL_FACTOR = 4.0


def _cpu_of(pid: int) -> float | None:
    """CPU seconds used so far by process ``pid`` and the children it has waited for (Linux /proc), or None."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime stime cutime cstime


def spawn(cmd: list[str], timeout: float, cwd: Path) -> Proc:
    """Run ``cmd`` in its own process group; kill the group once it has used ``timeout`` CPU seconds or
    ``WALL_FACTOR * timeout`` wall seconds. Wall, CPU and peak RSS of the process from ``wait4``."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=cwd, env=_child_env(), start_new_session=True)
        done: dict[str, Any] = {}

        def wait() -> None:
            done["wait"] = os.wait4(proc.pid, 0)
            done["t"] = time.perf_counter()

        waiter = threading.Thread(target=wait, daemon=True)
        waiter.start()
        timed_out = ""
        while True:
            waiter.join(0.25)
            if not waiter.is_alive():
                break
            cpu = _cpu_of(proc.pid)
            if cpu is not None and cpu > timeout:
                timed_out = f"timed out after {timeout:.0f} s of CPU"
            elif time.perf_counter() - t0 > WALL_FACTOR * timeout:
                timed_out = f"timed out after {WALL_FACTOR * timeout:.0f} s of wall clock"
            if timed_out:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                waiter.join()
                break
        _, status, usage = done["wait"]
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = done["t"] - t0
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    lines = []
    for text in stdout.splitlines():
        if text.startswith("{"):
            try:
                lines.append(json.loads(text))
            except ValueError:
                pass
    ok = not timed_out and proc.returncode == 0
    error = timed_out
    if not timed_out and proc.returncode != 0:
        tail = [t for t in stderr.strip().splitlines() if t.strip()]
        error = f"exit {proc.returncode}: " + (tail[-1] if tail else "(no message)")
    return Proc(ok, bool(timed_out), wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, lines, error)


#: ``--in-process``: children run in this interpreter (a quick check that the benchmark works; not a measure)
_IN_PROCESS = [False]


def _run_inline(kind: str, spec: dict[str, Any]) -> Proc:
    """``CHILDREN[kind](spec)`` in this process, its printed lines captured; timers it installed are removed."""
    buf = io.StringIO()
    t0, c0 = time.perf_counter(), time.process_time()
    ok, error = True, ""
    try:
        with contextlib.redirect_stdout(buf):
            _emit({"result": CHILDREN[kind](spec)})
    except Exception as exc:  # noqa: BLE001 - reported like a failed child
        ok, error = False, f"{type(exc).__name__}: {exc}"
    finally:
        while _LIVE_PARTS:
            _LIVE_PARTS.pop().undo()
    lines = [json.loads(t) for t in buf.getvalue().splitlines() if t.startswith("{")]
    return Proc(ok, False, time.perf_counter() - t0, time.process_time() - c0, _peak(), lines, error)


def run_child(kind: str, spec: dict[str, Any], timeout: float, cwd: Path) -> Proc:
    """Run ``CHILDREN[kind](spec)`` in a fresh interpreter (in this one with ``--in-process``)."""
    if _IN_PROCESS[0]:
        return _run_inline(kind, spec)
    return spawn(_child_cmd(kind, spec), timeout, cwd)


def _child_cmd(kind: str, spec: dict[str, Any]) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--child", kind, "--spec", json.dumps(spec)]


def _median(values: Sequence[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


@dataclass
class Side:
    """One side of one step over the rounds: CPU and wall seconds, peak RSS, errors."""

    cpu: list[float | None] = field(default_factory=list)
    wall: list[float | None] = field(default_factory=list)
    peak: list[float | None] = field(default_factory=list)
    base: list[float | None] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def add(self, cpu: float | None, wall: float | None, peak: float | None = None, base: float | None = None,
            error: str = "") -> None:
        self.cpu.append(cpu)
        self.wall.append(wall)
        self.peak.append(peak)
        self.base.append(base)
        if error:
            self.errors.append(error)

    def add_missing(self, error: str) -> None:
        self.add(None, None, None, None, error)

    def med(self, what: str = "cpu") -> float | None:
        return _median(getattr(self, what))


@dataclass
class Verdict:
    """A target and what was measured against it."""

    name: str
    value: float | None
    limit: float
    at_most: bool = True
    note: str = ""

    @property
    def met(self) -> bool:
        if self.value is None:
            return False
        return self.value <= self.limit if self.at_most else self.value >= self.limit

    def text(self) -> str:
        sign = "<=" if self.at_most else ">="
        if self.value is None:
            return f"{self.name}: — (target {sign} {self.limit:g}: NOT met; {self.note or 'not measured'})"
        note = f"; {self.note}" if self.note else ""
        return f"{self.name} = {self.value:.2f} (target {sign} {self.limit:g}: {'met' if self.met else 'NOT met'}{note})"


def paired(a: Side, b: Side, what: str = "cpu", invert: bool = False) -> tuple[float | None, list[float | None]]:
    """Median of same-round ratios a/b (b/a with ``invert``), and the per-round ratios (None where missing)."""
    ratios: list[float | None] = []
    for x, y in zip(getattr(a, what), getattr(b, what), strict=False):
        if x is None or y is None or (y if not invert else x) <= 0:
            ratios.append(None)
        else:
            ratios.append(y / x if invert else x / y)
    return _median(ratios), ratios


def _fmt_s(v: float | None) -> str:
    if v is None:
        return "—"
    return f"{v:.3f}" if v < 10 else f"{v:.1f}"


def _fmt_mb(v: float | None) -> str:
    return "—" if v is None else f"{v / MB:.0f}"


def _fmt_rounds(ratios: Sequence[float | None]) -> str:
    return " ".join("—" if r is None else f"{r:.2f}" for r in ratios)


class Report:
    """Prints lines and tables through ``out`` and collects the verdicts (the targets list at the end)."""

    def __init__(self, out: Callable[[str], None]) -> None:
        self.out = out
        self.verdicts: list[Verdict] = []
        self.mismatch = False

    def __call__(self, line: str = "") -> None:
        self.out(line)

    def table(self, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
        """A markdown table, columns padded."""
        widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
        self.out("| " + " | ".join(str(h).ljust(w) for h, w in zip(header, widths, strict=True)) + " |")
        self.out("|" + "|".join("-" * (w + 2) for w in widths) + "|")
        for r in rows:
            self.out("| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) + " |")

    def judge(self, verdict: Verdict) -> Verdict:
        self.verdicts.append(verdict)
        return verdict


@dataclass
class Model:
    """A model file and its facts (from the ``make`` child)."""

    key: str
    label: str
    kind: str
    path: Path
    rule: str
    facts: dict[str, Any]


def _verdict_cell(v: Verdict) -> str:
    sign = "<=" if v.at_most else ">="
    return f"{sign} {v.limit:g}: " + ("met" if v.met else "NOT met")


def _parts_line(parts: dict[str, Any] | None, order: Sequence[str], total: float | None,
                extra: dict[str, float] | None = None, what: str = "cpu") -> str:
    """``name s (p %)`` for each part in ``order``; "0" for parts never called, "—" for parts whose functions
    no longer exist."""
    if not parts:
        return "—"
    values = dict(parts.get(what, {}))
    values.update(extra or {})
    installed = set(parts.get("installed", [])) | set(extra or {})
    bits = []
    for name in order:
        v = values.get(name)
        if v is None:
            bits.append(f"{name} 0" if name in installed else f"{name} —")
        elif total:
            bits.append(f"{name} {v:.3f} s ({100 * v / total:.0f} %)")
        else:
            bits.append(f"{name} {v:.3f} s")
    return ", ".join(bits)


def _compile_breakdown(parts: dict[str, Any]) -> tuple[dict[str, float], list[str]]:
    """Derived parts of compile(): ``passes`` without ledger, runtime bookkeeping, what is left outside."""
    cpu = parts.get("cpu", {})
    derived: dict[str, float] = {}
    if "passes" in cpu and "ledger" in cpu:
        derived["matching+rewrites"] = cpu["passes"] - cpu["ledger"]
    if "runtime" in cpu:
        derived["runtime other"] = cpu["runtime"] - sum(cpu.get(k, 0.0) for k in ("passes", "inference",
                                                                                  "snapshots"))
    order = ["pass loading", "copy", "passes", "matching+rewrites", "ledger", "inference", "snapshots",
             "snapshot build", "runtime other"]
    return derived, order


def _add_split(no_pass: Side | None, loop: Side, result: dict[str, Any]) -> None:
    """One round of a gebench child that also timed ``compile()`` with no pass: that time into ``no_pass`` (when
    given), and the rest of its ``compile()`` (the pass loop: matching, replacements, rewrites, ledger, journals)
    into ``loop``."""
    bare = result.get("no_pass")
    if bare is None:
        for side in (no_pass, loop):
            if side is not None:
                side.add_missing("not timed")
        return
    if no_pass is not None:
        no_pass.add(bare["cpu"], bare["wall"])
    comp = result["compile"]
    loop.add(comp["cpu"] - bare["cpu"], comp["wall"] - bare["wall"])


def measure_model(model: Model, args: argparse.Namespace, tmp: Path, report: Report) -> dict[str, Any]:
    """Rounds of load + compile and of the process, both sides, interleaved; prints the model's table."""
    f = model.facts
    sides = {k: Side() for k in ("ge_load", "ox_load", "ge_comp", "ox_comp", "ge_total", "ox_total",
                                 "ge_proc", "ox_proc", "ge_import", "ox_import", "ge_gc", "ox_gc", "same_comp",
                                 "one_comp", "ge_no_pass", "ge_loop", "one_loop")}
    rewrites: dict[str, set[int]] = {"gebench": set(), "onnxscript": set(), "gebench process": set(),
                                     "onnxscript process": set(), "onnxscript same nodes": set(),
                                     "gebench one node": set()}
    same_rule = SAME_NODES_RULES.get(model.rule) if "same" not in args.skip else None
    one_rule = ONE_NODE_RULES.get(model.rule) if "same" not in args.skip else None
    split_loop = "same" not in args.skip  # time compile() without passes too, to split off the pass loop
    skip: set[str] = set()
    pass_file = str(BENCH / RULES[model.rule]["pass"])
    info: dict[str, Any] = {}
    cli_parts: list[dict[str, Any]] = []
    cli_inside: list[dict[str, Any]] = []
    for rnd in range(args.rounds):
        order = ("ge", "ox") if rnd % 2 == 0 else ("ox", "ge")
        for side in order:
            key = f"{side}_api"
            if key in skip:
                for k in (f"{side}_load", f"{side}_comp", f"{side}_total", f"{side}_import", f"{side}_gc"):
                    sides[k].add_missing("not repeated after a timeout")
                if side == "ge" and split_loop:
                    for k in ("ge_no_pass", "ge_loop"):
                        sides[k].add_missing("not repeated after a timeout")
                continue
            spec = {"model": str(model.path), "rule": model.rule, "no_pass": side == "ge" and split_loop}
            p = run_child(side, spec, args.timeout, tmp)
            r = p.result
            if not p.ok or not r:
                if p.timed_out:
                    skip.add(key)
                for k in (f"{side}_load", f"{side}_comp", f"{side}_total", f"{side}_import", f"{side}_gc"):
                    sides[k].add_missing(p.error or "no result")
                if side == "ge" and split_loop:
                    for k in ("ge_no_pass", "ge_loop"):
                        sides[k].add_missing(p.error or "no result")
                continue
            if side == "ge" and split_loop:
                _add_split(sides["ge_no_pass"], sides["ge_loop"], r)
            sides[f"{side}_load"].add(r["load"]["cpu"], r["load"]["wall"], r["load"]["peak"], r["load"]["base"])
            sides[f"{side}_comp"].add(r["compile"]["cpu"], r["compile"]["wall"])
            if "gc_after" in r:
                sides[f"{side}_gc"].add(r["gc_after"]["cpu"], r["gc_after"]["wall"])
            sides[f"{side}_total"].add(None, None, r["compile"]["peak"], r["load"]["base"])
            sides[f"{side}_import"].add(r["import"]["cpu"], r["import"]["wall"])
            rewrites["gebench" if side == "ge" else "onnxscript"].add(r["rewrites"])
            if side == "ge":
                info.update(ir_nodes=r["ir_nodes"], ledger=r["ledger_records"], summary=r["summary"],
                            snapshots=r["snapshots"])
        # informative, no target: the peer making the nodes GE's replacement makes (SAME_NODES_RULES), and gebench
        # with a rule that makes one node per rewrite, as the peer's (ONE_NODE_RULES)
        for side, rule, key, label in (("ox", same_rule, "same", "onnxscript same nodes"),
                                       ("ge", one_rule, "one", "gebench one node")):
            if rule is None or f"{key}_api" in skip:
                if key == "one" and split_loop:
                    sides["one_loop"].add_missing("not run")
                continue
            p = run_child(side, {"model": str(model.path), "rule": rule, "no_pass": key == "one"}, args.timeout, tmp)
            if p.ok and p.result:
                sides[f"{key}_comp"].add(p.result["compile"]["cpu"], p.result["compile"]["wall"])
                rewrites[label].add(p.result["rewrites"])
                if key == "one":
                    _add_split(None, sides["one_loop"], p.result)
            else:
                if p.timed_out:
                    skip.add(f"{key}_api")
                sides[f"{key}_comp"].add_missing(p.error or "no result")
                if key == "one":
                    sides["one_loop"].add_missing(p.error or "no result")
        if "process" in args.skip or rnd >= args.process_rounds:
            continue
        for side in order:
            key = f"{side}_proc"
            if key in skip:
                sides[key].add_missing("not repeated after a timeout")
                continue
            out_dir = tmp / f"proc_{model.key}_{rnd}"
            out_dir.mkdir()
            if side == "ge":
                argv = ["compile", str(model.path), "--passes", pass_file, "--dump-dir", str(out_dir / "dumps")]
                spec = {"argv": argv, "rule": model.rule, "dump_dir": str(out_dir / "dumps")}
                p = spawn(_child_cmd("cli", spec), args.timeout, tmp)  # a process even with --in-process
            else:
                p = spawn([sys.executable, "-c", PEER_PROCESS_SRC, str(model.path), str(out_dir / "out.onnx"),
                           model.rule], args.timeout, tmp)
            r = p.result
            if p.ok and r and r.get("exit", 0) == 0:
                sides[key].add(p.cpu, p.wall, p.maxrss)
                rewrites[("gebench" if side == "ge" else "onnxscript") + " process"].add(r["rewrites"])
                if side == "ge":
                    cli_parts.append(r["parts"])
                    cli_inside.append({"inside": r["inside"], "import": r["import"], "wall": p.wall, "cpu": p.cpu,
                                       "dump_bytes": r["dump_bytes"]})
            else:
                if p.timed_out:
                    skip.add(key)
                sides[key].add_missing(p.error or f"exit {r.get('exit')}")
            shutil.rmtree(out_dir, ignore_errors=True)

    parts_run = None
    if "parts" not in args.skip:
        p = run_child("ge", {"model": str(model.path), "rule": model.rule, "parts": True}, args.timeout, tmp)
        parts_run = p.result if p.ok else {"error": p.error}

    # ---------------------------------------------------------------- print
    n = f["onnx_nodes"]
    what = (f"{f.get('layers')} layers, d={f.get('hidden')}" if model.kind == "transformer"
            else f"one Const feeding {f.get('shared_consumers')} Mul nodes")
    report()
    report(f"### {model.label}: {n} ONNX nodes ({what}), {info.get('ir_nodes', '?')} gebench IR nodes, "
           f"file {f['file_bytes'] / MB:.1f} MB; rule {RULES[model.rule]['label']}, {f['sites']} sites")
    expected = f["sites"]
    seen = {k: sorted(v) for k, v in rewrites.items() if v}
    agree = all(v == [expected] for v in seen.values())
    if not agree:
        report.mismatch = True
    report("rewrites: " + ", ".join(f"{k} {'/'.join(map(str, v))}" for k, v in seen.items())
           + f", expected {expected}: {'equal' if agree else 'MISMATCH'}")
    rows: list[list[str]] = []
    verdicts: dict[str, Verdict] = {}

    def row(step: str, a: Side, b: Side, what: str, verdict_name: str | None, limit: float | None,
            fmt: Callable[[float | None], str], unit: str, invert: bool = False, wall_too: bool = False) -> None:
        ratio, per_round = paired(a, b, what, invert)
        ga, pb = fmt(a.med(what)), fmt(b.med(what))
        if wall_too:
            ga += f" ({fmt(a.med('wall'))} wall)"
            pb += f" ({fmt(b.med('wall'))} wall)"
        errors = sorted(set(a.errors + b.errors))
        if ratio is None and a.med(what) is None and a.errors:
            ga = _short("; ".join(sorted(set(a.errors))))
        if ratio is None and b.med(what) is None and b.errors:
            pb = _short("; ".join(sorted(set(b.errors))))
        target = "no target"
        if verdict_name is not None and limit is not None:
            v = report.judge(Verdict(f"{model.label}: {verdict_name}", ratio, limit, not invert,
                                     "; ".join(errors)))
            verdicts[verdict_name] = v
            target = _verdict_cell(v)
        rows.append([step, unit, ga, pb, "—" if ratio is None else f"{ratio:.2f}", _fmt_rounds(per_round), target])

    row("load: gebench.load vs onnx_ir.load", sides["ge_load"], sides["ox_load"], "cpu", "load time",
        LOAD_TIME_TARGET, _fmt_s, "cpu s", wall_too=True)
    row("load: peak RSS", sides["ge_load"], sides["ox_load"], "peak", "load peak RSS", LOAD_RSS_TARGET, _fmt_mb, "MB")
    row("compile() defaults vs apply_to_model", sides["ge_comp"], sides["ox_comp"], "cpu", "compile time",
        COMPILE_TARGET, _fmt_s, "cpu s", wall_too=True)
    row("load + compile: peak RSS", sides["ge_total"], sides["ox_total"], "peak", "load+compile peak RSS",
        PEAK_RSS_TARGET, _fmt_mb, "MB")
    if same_rule is not None:
        row("compile() defaults vs apply_to_model making the same nodes (GEMM + 2 scalar Constants)",
            sides["ge_comp"], sides["same_comp"], "cpu", None, None, _fmt_s, "cpu s", wall_too=True)
    if one_rule is not None:
        row("compile() defaults with a one-node rule (BatchMatMulV2 with bias) vs apply_to_model",
            sides["one_comp"], sides["ox_comp"], "cpu", None, None, _fmt_s, "cpu s", wall_too=True)
    if split_loop:
        row("compile() with no pass (the copy + GE's InferShape over the graph) vs apply_to_model",
            sides["ge_no_pass"], sides["ox_comp"], "cpu", None, None, _fmt_s, "cpu s", wall_too=True)
        row("the pass loop (compile() minus compile() with no pass) vs apply_to_model", sides["ge_loop"],
            sides["ox_comp"], "cpu", None, None, _fmt_s, "cpu s", wall_too=True)
        if one_rule is not None:
            row("the pass loop with the one-node rule vs apply_to_model", sides["one_loop"], sides["ox_comp"], "cpu",
                None, None, _fmt_s, "cpu s", wall_too=True)
    row("the full collection load + compile leaves due (gc.collect() after)", sides["ge_gc"], sides["ox_gc"], "cpu",
        None, None, _fmt_s, "cpu s", wall_too=True)
    if "process" not in args.skip:
        row("process: gebench compile --dump-dir vs load+apply+save", sides["ge_proc"], sides["ox_proc"], "cpu",
            None, None, _fmt_s, "cpu s", wall_too=True)
        row("process: peak RSS", sides["ge_proc"], sides["ox_proc"], "peak", None, None, _fmt_mb, "MB")
    report()
    report.table(["step", "unit", "gebench", "peer", "ratio", "rounds", "target"], rows)
    report()
    for name in ("load time", "load peak RSS", "compile time", "load+compile peak RSS"):
        a, b = {"load time": ("ge_load", "ox_load"), "load peak RSS": ("ge_load", "ox_load"),
                "compile time": ("ge_comp", "ox_comp"), "load+compile peak RSS": ("ge_total", "ox_total")}[name]
        what = "peak" if "RSS" in name else "cpu"
        ratio, per_round = paired(sides[a], sides[b], what)
        v = verdicts[name]
        report(f"ratio gebench/peer {name} = " + ("—" if ratio is None else f"{ratio:.2f}")
               + f" (median of {args.rounds} same-round ratios: {_fmt_rounds(per_round)}; "
               + f"target <= {v.limit:g}: {'met' if v.met else 'NOT met'})")
    if "process" not in args.skip:
        ratio, per_round = paired(sides["ge_proc"], sides["ox_proc"], "cpu")
        wall_ratio, _ = paired(sides["ge_proc"], sides["ox_proc"], "wall")
        report("ratio gebench/peer process = " + ("—" if ratio is None else f"{ratio:.2f}")
               + f" cpu, {'—' if wall_ratio is None else f'{wall_ratio:.2f}'} wall (rounds: {_fmt_rounds(per_round)}; "
               f"{min(args.process_rounds, args.rounds)} round(s); no target)")
    comp = sides["ge_comp"].med()
    ox_comp = sides["ox_comp"].med()
    if comp is not None and ox_comp is not None:
        report(f"cpu per ONNX node: compile() {comp / n * 1e6:.1f} us, apply_to_model {ox_comp / n * 1e6:.1f} us; "
               f"per rewrite: {comp / max(expected, 1) * 1e6:.0f} us vs {ox_comp / max(expected, 1) * 1e6:.0f} us")
    if info.get("summary"):
        report(f"gebench run: {info.get('ledger')} ledger records, {info.get('snapshots')} snapshots, "
               f"summary {json.dumps(info['summary'])}")

    # ---------------------------------------------------------------- parts
    imp = sides["ge_import"].med()
    imp_ox = sides["ox_import"].med()
    report(f"imports (not timed above): gebench {_fmt_s(imp)} s cpu, onnx_ir + onnxscript {_fmt_s(imp_ox)} s cpu; "
           f"RSS before loading: gebench {_fmt_mb(sides['ge_load'].med('base'))} MB, "
           f"onnx_ir {_fmt_mb(sides['ox_load'].med('base'))} MB")
    if parts_run is not None:
        if "error" in parts_run:
            report(f"parts of gebench (instrumented run): {parts_run['error']}")
        else:
            pr = parts_run
            lp = pr["parts"]
            load_total = pr["load"]["cpu"]
            report(f"parts of load (instrumented run, cpu; total {load_total:.3f} s): "
                   + _parts_line(lp, list(dict.fromkeys(p for _, _, p in LOAD_PARTS)), load_total)
                   + " (check and ONNX shape inference are parts of read file)")
            derived, order = _compile_breakdown(lp)
            comp_total = pr["compile"]["cpu"]
            accounted = sum(lp["cpu"].get(k, 0.0) for k in ("pass loading", "copy", "runtime"))
            derived["outside the runtime"] = comp_total - accounted
            report(f"parts of compile() (instrumented run, cpu; total {comp_total:.3f} s, headline median "
                   f"{_fmt_s(comp)} s): " + _parts_line(lp, [*order, "outside the runtime"], comp_total, derived))
            if lp.get("missing"):
                report("  (not found, shown as —: " + ", ".join(lp["missing"]) + ")")
    if cli_parts:
        pp = cli_parts[len(cli_parts) // 2]
        ins = cli_inside[len(cli_inside) // 2]
        cpu = pp.get("cpu", {})
        derived, _ = _compile_breakdown(pp)
        total = ins["cpu"]
        # the CLI's compile() loads the model itself: "load" is a part of "compile"
        extra = {**derived, "interpreter start + exit": total - ins["inside"]["cpu"], "import": ins["import"]["cpu"],
                 "other": ins["inside"]["cpu"] - ins["import"]["cpu"] - cpu.get("compile", 0.0) - cpu.get("dumps", 0.0)}
        report(f"parts of the gebench compile process (cpu; total {total:.1f} s, {ins['dump_bytes'] / MB:.0f} MB of "
               "dumps written): " + _parts_line(pp, ["interpreter start + exit", "import", "compile", "load",
                                                    "pass loading", "copy", "passes", "ledger", "inference",
                                                    "snapshots", "dumps", "snapshot build",
                                                    "dump text + file write", "dump file copy", "other"], total,
                                                   extra)
               + " (load ... snapshots are parts of compile; snapshot build ... dump file copy parts of dumps)")
    return {"model": model, "sides": sides, "n": n}


def measure_dumps(model: Model, args: argparse.Namespace, tmp: Path, report: Report) -> None:
    """GE dump write/read of ``model`` vs onnx_ir save/load; rounds interleaved."""
    sides = {k: Side() for k in ("ge-write", "ox-save", "ge-read", "ox-load")}
    sizes: dict[str, int] = {}
    parts: dict[str, list[dict[str, Any]]] = {"ge-write": [], "ge-read": []}
    skip: set[str] = set()
    helper_peak: list[int] = []
    for rnd in range(args.rounds):
        work = tmp / f"dump_{rnd}"
        work.mkdir()
        paths: dict[str, str] = {}
        order = (("ge-write", "ox-save"), ("ge-read", "ox-load")) if rnd % 2 == 0 else \
            (("ox-save", "ge-write"), ("ox-load", "ge-read"))
        for pair in order:
            for step in pair:
                if step in skip:
                    sides[step].add_missing("not repeated after a timeout")
                    continue
                spec: dict[str, Any] = {"step": step, "model": str(model.path)}
                if step == "ge-write":
                    spec["out"] = str(work / "dumps")
                elif step == "ox-save":
                    spec["out"] = str(work / "saved.onnx")
                elif step == "ge-read":
                    if "ge" not in paths:
                        sides[step].add_missing("no dump was written")
                        continue
                    spec["path"] = paths["ge"]
                else:
                    spec["path"] = paths.get("ox", str(model.path))
                p = run_child("dump", spec, args.timeout, tmp)
                r = p.result
                if not p.ok or not r:
                    if p.timed_out:
                        skip.add(step)
                    sides[step].add_missing(p.error or "no result")
                    continue
                s = r["step"]
                sides[step].add(s["cpu"], s["wall"], s["peak"], s["base"])
                sizes[step] = r["bytes"]
                if step == "ge-write":
                    paths["ge"] = r["path"]
                    parts["ge-write"].append(r["parts"])
                elif step == "ox-save":
                    paths["ox"] = r["path"]
                elif step == "ge-read":
                    parts["ge-read"].append(r["parts"])
                    helper_peak.append(r.get("helper_peak", 0))
        shutil.rmtree(work, ignore_errors=True)
    n = model.facts["onnx_nodes"]
    report()
    report(f"### GE dump write/read: {model.label} ({n} ONNX nodes), ge_proto dump (level 1) vs the ONNX file "
           "through onnx_ir")
    rows = []
    for ge, ox, label in (("ge-write", "ox-save", "write"), ("ge-read", "ox-load", "read")):
        a, b = sides[ge], sides[ox]
        ratio, per_round = paired(a, b, "cpu", invert=True)
        errors = "; ".join(sorted(set(a.errors + b.errors)))
        v = report.judge(Verdict(f"{model.label}: GE dump {label} speed vs onnx_ir", ratio, DUMP_SPEED_TARGET, False,
                                 errors))
        ga, ob = a.med(), b.med()
        gw, ow = a.med("wall"), b.med("wall")
        gmb = sizes.get(ge, 0) / MB
        omb = sizes.get(ox, 0) / MB

        def speed(secs: float | None, mb: float) -> str:
            if secs is None or secs <= 0:
                return "—"
            return f"{mb / secs:.1f} MB/s, {n / secs / 1000:.0f}k nodes/s"

        rows.append([label, "cpu s (wall)", f"{_fmt_s(ga)} ({_fmt_s(gw)})" if ga is not None else _short(errors) or "—",
                     f"{_fmt_s(ob)} ({_fmt_s(ow)})" if ob is not None else _short(errors) or "—",
                     "—" if ratio is None else f"{ratio:.2f}", _fmt_rounds(per_round), _verdict_cell(v)])
        rows.append([f"{label}: speed (cpu)", "", f"{speed(ga, gmb)} of {gmb:.1f} MB",
                     f"{speed(ob, omb)} of {omb:.1f} MB", "", "", ""])
        rows.append([f"{label}: peak RSS", "MB", _fmt_mb(a.med("peak")), _fmt_mb(b.med("peak")),
                     "—" if paired(a, b, "peak")[0] is None else f"{paired(a, b, 'peak')[0]:.2f}", "", "no target"])
    report()
    report.table(["step", "unit", "gebench", "onnx_ir", "speed ratio", "rounds", "target"], rows)
    report()
    for label, ge, ox in (("write", "ge-write", "ox-save"), ("read", "ge-read", "ox-load")):
        ratio, per_round = paired(sides[ge], sides[ox], "cpu", invert=True)
        report(f"ratio gebench/onnx_ir dump {label} speed = " + ("—" if ratio is None else f"{ratio:.2f}")
               + f" (median of same-round ratios: {_fmt_rounds(per_round)}; target >= {DUMP_SPEED_TARGET:g}: "
               + ("met" if ratio is not None and ratio >= DUMP_SPEED_TARGET else "NOT met") + ")")
    for step, order in (("ge-write", ["text + file write", "file copy"]),
                        ("ge-read", ["file read", "split by op signature", "protobuf text parse", "protoc parse",
                                     "decode to IR"])):
        if parts[step]:
            pp = parts[step][len(parts[step]) // 2]
            total = sides[step].med()
            report(f"parts of GE dump {step[3:]} (cpu, helper processes included): "
                   + _parts_line(pp, order, total))
    if helper_peak and max(helper_peak):
        report(f"  (reading ran a helper process peaking at {max(helper_peak) / MB:.0f} MB; counted in gebench's "
               "peak and its CPU time in gebench's time)")


def measure_viz(model: Model, args: argparse.Namespace, tmp: Path, report: Report) -> None:
    """The workbench on ``model`` (its own subprocess, bounded by twice the step timeout)."""
    p = run_child("viz", {"model": str(model.path), "rounds": args.rounds}, 2 * args.timeout, tmp)
    steps: dict[str, list[dict[str, Any]]] = {}
    errors: dict[str, str] = {}
    failed: dict[str, dict[str, Any]] = {}
    started = ""
    extra: dict[str, Any] = {}
    for line in p.lines:
        if "start" in line:
            started = line["start"]
        elif "done" in line:
            extra[line["done"]] = line
        elif "step" in line:
            if "error" in line:
                errors.setdefault(line["step"], line["error"])
                if "failed_after" in line:
                    failed.setdefault(line["step"], line)
            else:
                steps.setdefault(line["step"], []).append(line)
            started = ""
    if not p.ok:
        where = f" during {started!r}" if started else ""
        errors.setdefault(started or "first view", f"{p.error}{where}")
    report()
    comp = extra.get("compile", {})
    report(f"### workbench: {model.label} ({model.facts['onnx_nodes']} ONNX nodes, {comp.get('ir_nodes', '?')} IR "
           f"nodes), compiled with both bench passes in {_fmt_s(comp.get('wall'))} s, then the full garbage "
           f"collection the compile left due in {_fmt_s(extra.get('collect', {}).get('wall'))} s (neither judged); "
           "wall clock, "
           f"layout cache {extra.get('setup', {}).get('cache', '?')}")
    rows = []
    part_lines = []
    order = ["snapshot build", "ledger rows", "pass list", "hierarchy", "level", "view", "k-hop", "DOT text",
             "graphviz layout", "layered layout", "compress"]
    for step, limit in (("first view", FIRST_VIEW_TARGET), ("expand", None), ("select pass", None),
                        ("focused candidate", FOCUS_TARGET), ("switch", SWITCH_TARGET)):
        lines = steps.get(step, [])
        vals = [line["wall"] for line in lines]
        med = _median(vals)
        err = errors.get(step, "")
        if not vals and not err and step != "first view" and errors.get("first view"):
            err = "not measured: the first view failed"
        info = lines[-1].get("info", {}) if lines else {}
        drawn = (f"drawn {info.get('drawn')} of {info.get('total')}"
                 + (", focused" if info.get("focused") else "")
                 + (f", level {info['level']}" if info.get("level") is not None else "")
                 + (f", {info['snapshot']}" if info.get("snapshot") else "")
                 + (f", {info['engine']}" if info.get("engine") else "")
                 if info else "")
        target = "no target"
        if limit is not None:
            v = report.judge(Verdict(f"{model.label}: workbench {step} (s)", med, limit, True, err))
            target = _verdict_cell(v)
        spread = f"{len(vals)} runs, max {max(vals):.3f} s" if len(vals) > 1 else ""
        rows.append([step, "—" if med is None else f"{med:.3f} s", spread, drawn, _short(err), target])
        if lines:
            mid = sorted(lines, key=lambda line: line["wall"])[len(lines) // 2]
            part_lines.append(f"parts of workbench {step} (the median run, wall): "
                              + _parts_line({"wall": mid.get("parts", {}), "installed": mid.get("installed", [])},
                                            order, mid["wall"], what="wall"))
        elif step in failed:
            bad = failed[step]
            part_lines.append(f"parts of workbench {step} (failed after {bad['failed_after']:.1f} s, wall): "
                              + _parts_line({"wall": bad.get("parts", {}), "installed": bad.get("installed", [])},
                                            order, bad["failed_after"], what="wall"))
    report()
    report.table(["step", "median", "spread", "view", "error", "target"], rows)
    report()
    for line in part_lines:
        report(line)


def _short(text: str, limit: int = 90) -> str:
    """``text`` cut to ``limit`` characters for a table cell (the targets list has it whole)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _versions() -> str:
    from importlib import metadata

    bits = []
    for name in ("onnx-ir", "onnxscript", "onnx", "protobuf"):
        try:
            bits.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            pass
    try:
        rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, check=False, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "gebench"],
                               capture_output=True, text=True, check=False, timeout=10).stdout.strip()
        if rev:
            bits.insert(0, f"gebench {rev}" + (" + uncommitted changes in gebench/" if dirty else ""))
    except (OSError, subprocess.SubprocessError):
        pass
    return ", ".join(bits)


def _models(args: argparse.Namespace, tmp: Path, report: Report) -> Iterator[Model]:
    specs = [("transformer", n) for n in args.size_list]
    if args.shared:
        specs.append(("shared", args.shared))
    for kind, n in specs:
        key = f"{kind}_{n}"
        path = tmp / f"{key}.onnx"
        p = run_child("make", {"kind": kind, "n": n, "path": str(path)}, max(args.timeout, 600.0), tmp)
        if not p.ok or not p.result:
            report(f"cannot make the {kind} model of {n}: {p.error}")
            continue
        count = f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n)
        label = f"transformer {count}" if kind == "transformer" else f"shared Const x{count}"
        yield Model(key, label, kind, path, "gemm" if kind == "transformer" else "relu_mul", p.result)


def run_benchmark(args: argparse.Namespace, out: Callable[[str], None]) -> int:
    """Everything; returns the exit status (1 when the two sides rewrote different numbers of sites)."""
    report = Report(out)
    started = time.perf_counter()
    report(f"bench_scale: gebench vs onnx_ir/onnxscript on the path users take; sizes {args.sizes}, shared "
           f"{args.shared or 'off'}, {args.rounds} interleaved round(s), step timeout {args.timeout:.0f} s of CPU "
           f"({WALL_FACTOR * args.timeout:.0f} s wall)")
    report(f"machine: {os.cpu_count()} cores, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}, "
           f"Python {platform.python_version()}; {_versions()}")
    if _IN_PROCESS[0]:
        report("in-process run: the steps share this interpreter, so their times and peaks are not measurements")
    report("figures: medians over rounds; ratios: median of same-round ratios gebench/peer; times judged on process "
           "CPU seconds (wall beside), peak RSS in MB")
    with tempfile.TemporaryDirectory(prefix="bench_scale_") as tmp_name:
        tmp = Path(tmp_name)
        results = []
        for model in _models(args, tmp, report):
            results.append(measure_model(model, args, tmp, report))
            if model.kind == "transformer" and model.facts.get("onnx_nodes") and \
                    model.path.name == f"transformer_{max(args.size_list)}.onnx":
                if "dumps" not in args.skip:
                    measure_dumps(model, args, tmp, report)
                if "viz" not in args.skip:
                    measure_viz(model, args, tmp, report)
        trans = sorted((r for r in results if r["model"].kind == "transformer"), key=lambda r: r["n"])
        if len(trans) >= 2:
            small, large = trans[0], trans[-1]
            a = small["sides"]["ge_comp"].med()
            b = large["sides"]["ge_comp"].med()
            growth = None if a is None or b is None else (b / large["n"]) / (a / small["n"])
            oa, ob = small["sides"]["ox_comp"].med(), large["sides"]["ox_comp"].med()
            peer = "" if oa is None or ob is None else f"; onnxscript: {(ob / large['n']) / (oa / small['n']):.2f}"
            report()
            v = report.judge(Verdict(f"compile() cpu per node, {large['model'].label} / {small['model'].label}",
                                     growth, PER_NODE_TARGET, True, peer.lstrip("; ")))
            report("per-node growth: " + v.text())
    report()
    report("### targets")
    met = sum(v.met for v in report.verdicts)
    for v in report.verdicts:
        report(("  met      " if v.met else "  NOT met  ") + v.text())
    report(f"{met} of {len(report.verdicts)} targets met; {time.perf_counter() - started:.0f} s in all")
    return 1 if report.mismatch else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=DEFAULT_SIZES, help="comma-separated ONNX node counts of the transformers")
    parser.add_argument("--shared", type=int, default=DEFAULT_SHARED,
                        help="Mul consumers of the shared Const (0: no shared-constant graph)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; medians are reported")
    parser.add_argument("--process-rounds", type=int, default=1,
                        help="rounds of the process step (no target, and by far the slowest step)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                        help=f"CPU seconds per step (subprocess; wall clock up to {WALL_FACTOR:g}x that)")
    parser.add_argument("--skip", default="", help="comma-separated: process, dumps, viz, parts, same (the rows "
                        "that compare equal work: the same-nodes peer and the one-node gebench rule, and the split of "
                        "compile() into compile() with no pass and the pass loop)")
    parser.add_argument("--quick", action="store_true", help="a few hundred nodes, 1 round (a check that it works)")
    parser.add_argument("--in-process", action="store_true",
                        help="run the steps in this interpreter, not in fresh ones (checks the benchmark works; its "
                        "times and peaks are not measurements); the process step still starts processes")
    parser.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    parser.add_argument("--spec", default="{}", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        result = CHILDREN[args.child](json.loads(args.spec))
        _emit({"result": result})
        if args.child == "cli":  # the process ends as the gebench script's does (gebench.cli.run)
            sys.modules["gebench.cli"].end_process(0)
        return 0
    if args.quick:
        args.sizes, args.shared, args.rounds = "300", 300, 1
    args.size_list = [int(s) for s in args.sizes.split(",") if s.strip()]
    args.skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    _IN_PROCESS[0] = args.in_process
    try:
        return run_benchmark(args, lambda line: print(line, flush=True))
    finally:
        _IN_PROCESS[0] = False


if __name__ == "__main__":
    raise SystemExit(main())
