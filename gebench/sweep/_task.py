"""One sweep task: load a model, compile it through a pass set, optionally verify each rewrite, and boil the
run down to a compact result row (a JSON-able dict).

Row schema (``ROW_VERSION``), one per (model, pass set):

* ``task`` (id), ``model`` (absolute path), ``model_name`` (diff key), ``pass_set`` (label), ``pass_digest``,
  ``verify``;
* ``status``: ``SUCCESS``; ``FAILED`` (GE would fail the compile: a pass failed, a pass file did not load,
  inference failed); ``ERROR`` (gebench could not run it: unreadable model, an exception outside the passes);
  ``CRASHED`` (the task process died: ``os._exit``, a signal, the worker lost); ``TIMEOUT``;
  ``OUT_OF_MEMORY`` (over the task memory limit);
* ``reason``, ``failed_pass``, ``failed_stage``, ``load_errors``;
* ``nodes_before``, ``nodes_after``, ``wall_s`` (load + compile + verify), ``load_s``, ``compile_s``,
  ``peak_mem_mb`` (peak RSS of the process that ran the task), ``worker``, ``attempts``, ``finished_at``;
* ``passes``: pass name -> ``{stage, candidates, matches, replaced, rejected {status: n}, lints, failures
  [reasons], seconds, verify_max_abs_error, verify_errors, verify_unchecked}``. ``candidates`` are the
  ledger's non-lint records; ``matches`` those past the structural match (not ``STRUCTURAL_MISMATCH`` or
  ``BOUNDARY_VIOLATION``); ``replaced`` the sites rewritten.

:func:`run_task` runs in whatever process calls it (the isolated task process, a worker thread, or the
benchmark's sequential loop) and never raises for a model's or a pass's failure.

The ledger is JSON-encoded where the task ran (in parallel with the other tasks, with the C encoder), never
by the driver. When the driver's ``ledgers`` folder is visible there (``spec.ledger_dir`` holds the sweep's
marker file :func:`ledger_marker`: a local cluster, or shared storage) the task writes
``ledgers/<task>.json`` itself (atomically: a temporary file renamed) and its row carries only the relative
path under ``"ledger"``; otherwise the row carries the encoded text under ``"_ledger_json"`` and the driver's
store writes it. Either way what travels back through the task server, Dask and the driver is a row of about
a kilobyte plus, at most, one string.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import functools
import hashlib
import json
import logging
import os
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from ._corpus import PassBundle

__all__ = ["TaskSpec", "run_task", "base_row", "ledger_marker", "ROW_VERSION", "STATUSES", "COMPLETED_STATUSES"]

_log = logging.getLogger(__name__)

ROW_VERSION = 1
STATUSES = ("SUCCESS", "FAILED", "ERROR", "CRASHED", "TIMEOUT", "OUT_OF_MEMORY")
#: Statuses where the compile ran to its end (the per-pass numbers are meaningful).
COMPLETED_STATUSES = ("SUCCESS", "FAILED")
#: Ledger records kept per task with ``ledger="compact"`` (structural mismatches are never kept there).
COMPACT_LEDGER_LIMIT = 5000


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """Everything a worker needs for one (model, pass set) task; pickled to the worker.

    ``timeout`` (seconds) and ``memory_limit_mb`` are enforced only with ``isolate`` (the task runs in a
    task process, see :mod:`gebench.sweep._isolate`; ``tasks_per_process`` tasks at most share one, 1 gives
    each task a fresh process). ``ledger`` is ``"compact"`` (no structural mismatches, at most
    :data:`COMPACT_LEDGER_LIMIT` records), ``"full"`` or ``"none"``. ``ledger_dir`` is the absolute path of
    the driver's ``ledgers`` folder (empty: the ledger always travels back in the row, see the module
    docstring).
    """

    model: str
    model_name: str
    passes: PassBundle
    verify: bool = False
    custom_ops: tuple[tuple[str, bytes], ...] = ()
    timeout: float | None = None
    memory_limit_mb: float | None = None
    isolate: bool = True
    ledger: str = "compact"
    sweep_id: str = ""
    tasks_per_process: int = 20
    ledger_dir: str = ""

    @functools.cached_property
    def task_id(self) -> str:
        """16 hex digits identifying the work (model path, pass digest, verify, custom ops); equal ids mean a
        resumed sweep may skip the task."""
        h = hashlib.sha256()
        h.update(self.model.encode() + b"\0" + self.passes.digest.encode() + b"\0" + str(self.verify).encode())
        for name, content in self.custom_ops:
            h.update(b"\0" + name.encode() + b"\0" + hashlib.sha256(content).digest())
        return h.hexdigest()[:16]


def base_row(spec: TaskSpec) -> dict[str, Any]:
    """The row fields known before the task runs (every status fills at least these)."""
    return {
        "row_version": ROW_VERSION, "task": spec.task_id, "model": spec.model, "model_name": spec.model_name,
        "pass_set": spec.passes.label, "pass_digest": spec.passes.digest, "verify": spec.verify,
        "status": "ERROR", "reason": "", "failed_pass": None, "failed_stage": None, "load_errors": [],
        "nodes_before": None, "nodes_after": None, "wall_s": None, "load_s": None, "compile_s": None,
        "peak_mem_mb": None, "worker": None, "attempts": 1, "finished_at": None, "passes": {},
    }


def ledger_marker(sweep_id: str) -> str:
    """Name of the file the driver puts in its ``ledgers`` folder for the sweep ``sweep_id``: a task that sees it
    there writes its ledger file itself (the folder is the driver's, not a same-named folder elsewhere)."""
    return f".sweep-{sweep_id}"


def finish_row(row: dict[str, Any]) -> dict[str, Any]:
    row["finished_at"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    return row


# ---------------------------------------------------------------------------------------- per-pass clock
class PassClock:
    """Seconds per pass name of the compile running on this thread, and an optional ``on_start(pass_name)``
    callback (the isolated task process reports the running pass with it, so a crash names its pass)."""

    def __init__(self, on_start: Callable[[str], None] | None = None) -> None:
        self.seconds: dict[str, float] = {}
        self.on_start = on_start


_clock_local = threading.local()
_clock_lock = threading.Lock()


def _install_pass_clock() -> bool:
    """Wrap ``gebench.fusion.runtime._run_pass_on_graph`` (called once per pass and graph) with a timer that
    adds to the current thread's :class:`PassClock`, if any. Idempotent; False when the runtime has no such
    function (then per-pass ``seconds`` are None). The wrapper costs two clock reads per pass and graph."""
    from gebench.fusion import runtime

    with _clock_lock:
        inner = getattr(runtime, "_run_pass_on_graph", None)
        if inner is None:
            return False
        if getattr(inner, "_gebench_sweep_clock", False):
            return True

        @functools.wraps(inner)
        def timed(state: Any, desc: Any, *args: Any, **kwargs: Any) -> Any:
            clock = getattr(_clock_local, "clock", None)
            if clock is None:
                return inner(state, desc, *args, **kwargs)
            name = desc.pass_name
            if clock.on_start is not None:
                clock.on_start(name)
            start = time.perf_counter()
            try:
                return inner(state, desc, *args, **kwargs)
            finally:
                clock.seconds[name] = clock.seconds.get(name, 0.0) + time.perf_counter() - start

        timed._gebench_sweep_clock = True  # type: ignore[attr-defined]
        runtime._run_pass_on_graph = timed
        return True


# ---------------------------------------------------------------------------------------- peak memory
def reset_peak_rss() -> bool:
    """Reset this process's peak RSS (Linux ``/proc/self/clear_refs``); False where that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def peak_rss_mb() -> float | None:
    """This process's peak RSS in MiB (``VmHWM``; ``ru_maxrss`` elsewhere), None if unknown."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    try:
        import resource
        import sys

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024
    except (ImportError, OSError):
        return None


# ---------------------------------------------------------------------------------------- the task
def run_task(spec: TaskSpec, *, on_pass_start: Callable[[str], None] | None = None,
             cache_dir: str | os.PathLike[str] | None = None, measure_memory: bool = True) -> dict[str, Any]:
    """Run one task in this process and return its row (schema in the module docstring).

    Never raises for the model or the passes (their failures are the row's status); ``BaseException`` other
    than ``Exception`` (KeyboardInterrupt) propagates. With ``measure_memory`` the process's peak RSS is reset
    first (Linux) so ``peak_mem_mb`` is this task's; the caller may overwrite it with a better measurement.
    Unless ``spec.ledger == "none"``, the ledger is encoded here and either written to
    ``spec.ledger_dir`` (row key ``"ledger"``) or carried as text (row key ``"_ledger_json"``; the store writes
    it); see the module docstring. Cost: one model load and one compile (plus the per-rewrite checks with
    ``verify``); encoding and writing the ledger (a few ms for hundreds of records) is not in ``wall_s``.
    """
    from gebench import api

    row = base_row(spec)
    if measure_memory:
        reset_peak_rss()
    start = time.perf_counter()
    item_paths: list[str] = []
    ledger: dict[str, Any] | None = None
    try:
        item_paths = spec.passes.materialize(cache_dir)
        ops_paths = _materialize_custom_ops(spec, cache_dir)
        try:
            graph = api._load_ir(spec.model)
        except FileNotFoundError:
            row["reason"] = (f"model {spec.model!r} not found on this worker ({_hostname()}); the corpus must be on "
                             "storage every worker sees at the same path")
            return _done(row, start, measure_memory)
        except Exception as exc:  # noqa: BLE001 - an unreadable model is that model's result
            row["reason"] = f"cannot load the model: {type(exc).__name__}: {exc}"
            return _done(row, start, measure_memory)
        row["load_s"] = time.perf_counter() - start
        row["nodes_before"] = len(graph)
        from gebench.fusion.plugins.reload import PassSet

        pass_set = PassSet(item_paths)
        clock = PassClock(on_pass_start)
        timed = _install_pass_clock()
        _clock_local.clock = clock
        compile_start = time.perf_counter()
        try:
            run = api.compile(graph, passes=pass_set, custom_ops=ops_paths or None, copy=False, snapshots=False,
                              verify=spec.verify)
        finally:
            _clock_local.clock = None
        row["compile_s"] = time.perf_counter() - compile_start
        _fill_from_run(row, run, clock.seconds if timed else None)
        if spec.ledger != "none":
            ledger = _ledger_payload(run, spec.ledger)
    except Exception as exc:  # noqa: BLE001 - gebench itself failed on this model: record it, go on
        row["status"] = "ERROR"
        row["reason"] = f"{type(exc).__name__}: {exc}"
        row["traceback"] = traceback.format_exc(limit=-8)
    finally:
        if item_paths:
            _unmap_row(row, spec.passes, item_paths)
    row = _done(row, start, measure_memory)
    if ledger is not None:
        _emit_ledger(row, spec, ledger, item_paths)
    return row


def _emit_ledger(row: dict[str, Any], spec: TaskSpec, ledger: dict[str, Any], item_paths: list[str]) -> None:
    """Encode ``ledger`` (one ``json.dumps``, C encoder; worker-side pass paths replaced by the driver's in the
    text) and write it to ``spec.ledger_dir`` when the sweep's marker is there (row key ``"ledger"``: the path
    relative to the out folder), else keep the text in the row (``"_ledger_json"``). A failed write falls back
    to the row; never raises for an ``OSError``."""
    text = json.dumps({"task": row["task"], "model": row["model"], "model_name": row["model_name"],
                       "pass_set": row["pass_set"], **ledger}, default=str)
    for local, origin in zip(item_paths, spec.passes.origins):
        text = text.replace(json.dumps(local)[1:-1], json.dumps(origin)[1:-1])
    folder = spec.ledger_dir
    if folder and spec.sweep_id and os.path.exists(os.path.join(folder, ledger_marker(spec.sweep_id))):
        name = f"{row['task']}.json"
        tmp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, os.path.join(folder, name))
            row["ledger"] = f"{os.path.basename(folder.rstrip(os.sep))}/{name}"
            return
        except OSError as exc:
            _log.warning("cannot write the ledger of %s to %s (%s); sending it back instead", row["task"],
                         folder, exc)
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    row["_ledger_json"] = text


def _done(row: dict[str, Any], start: float, measure_memory: bool) -> dict[str, Any]:
    row["wall_s"] = time.perf_counter() - start
    if measure_memory:
        row["peak_mem_mb"] = peak_rss_mb()
    return finish_row(row)


def _hostname() -> str:
    import socket

    return socket.gethostname()


def _materialize_custom_ops(spec: TaskSpec, cache_dir: str | os.PathLike[str] | None) -> list[str]:
    if not spec.custom_ops:
        return []
    files = tuple((f"ops/{i}/{name}", content) for i, (name, content) in enumerate(spec.custom_ops))
    digest = hashlib.sha256(b"".join(rel.encode() + b"\0" + hashlib.sha256(c).digest() for rel, c in files))
    bundle = PassBundle("custom ops", (), tuple(rel for rel, _ in files), files, "ops-" + digest.hexdigest())
    return bundle.materialize(cache_dir)


_MATCHED_OUT = {"STRUCTURAL_MISMATCH", "BOUNDARY_VIOLATION"}


def _fill_from_run(row: dict[str, Any], run: Any, seconds: dict[str, float] | None) -> None:
    """Status, failure, node counts and the per-pass numbers of ``run``."""
    row["status"] = "SUCCESS" if run.status == "SUCCESS" else "FAILED"
    row["reason"] = run.failure_reason
    row["failed_pass"] = run.failed_pass
    row["failed_stage"] = run.failed_stage
    row["load_errors"] = [str(e) for e in run.load_errors]
    row["nodes_after"] = len(run.ir_graph)
    passes: dict[str, dict[str, Any]] = {}

    def entry(name: str, stage: str = "") -> dict[str, Any]:
        if name not in passes:
            passes[name] = {"stage": stage, "candidates": 0, "matches": 0, "replaced": 0, "rejected": {},
                            "lints": 0, "failures": [], "seconds": None if seconds is None else 0.0,
                            "verify_max_abs_error": None, "verify_errors": 0, "verify_unchecked": 0}
        elif stage and not passes[name]["stage"]:
            passes[name]["stage"] = stage
        return passes[name]

    for desc in run.passes:
        entry(desc.pass_name, getattr(desc.stage, "value", str(desc.stage)))
    for record in run.ledger.records:
        if not record.pass_name:
            continue
        e = entry(record.pass_name, record.stage)
        status = record.status.value
        if status == "LINT":
            e["lints"] += 1
            continue
        e["candidates"] += 1
        if status not in _MATCHED_OUT:
            e["matches"] += 1
        if status == "REPLACED":
            e["replaced"] += 1
            check = record.detail.get("verify") if isinstance(record.detail, dict) else None
            if record.max_abs_error is not None:
                prev = e["verify_max_abs_error"]
                e["verify_max_abs_error"] = record.max_abs_error if prev is None else max(prev, record.max_abs_error)
            if isinstance(record.detail, dict) and record.detail.get("verify_failed"):
                e["verify_errors"] += 1
            elif isinstance(check, dict) and check.get("ok") is None:
                e["verify_unchecked"] += 1
        else:
            e["rejected"][status] = e["rejected"].get(status, 0) + 1
    for result in run.pass_results:
        if result.get("status") == "FAILED":
            entry(result["pass_name"], result.get("stage", ""))["failures"].append(result.get("reason", ""))
    if run.failed_pass and not entry(run.failed_pass)["failures"]:
        entry(run.failed_pass)["failures"].append(run.failure_reason)
    for name, value in (seconds or {}).items():
        entry(name)["seconds"] = value
    row["passes"] = passes


def _ledger_payload(run: Any, mode: str) -> dict[str, Any]:
    records = run.ledger.records
    kept = records if mode == "full" else [r for r in records if r.status.value != "STRUCTURAL_MISMATCH"]
    omitted = len(records) - len(kept)
    if mode != "full" and len(kept) > COMPACT_LEDGER_LIMIT:
        omitted += len(kept) - COMPACT_LEDGER_LIMIT
        kept = kept[:COMPACT_LEDGER_LIMIT]
    return {"status": run.status, "failed_pass": run.failed_pass, "failure_reason": run.failure_reason,
            "summary": run.summary(), "mode": mode, "omitted_records": omitted,
            "records": [r.to_dict() for r in kept]}


def _unmap_row(row: dict[str, Any], bundle: PassBundle, item_paths: list[str]) -> None:
    """Worker-side pass paths in messages -> the driver's paths."""
    row["reason"] = bundle.unmap(row.get("reason") or "", item_paths)
    row["load_errors"] = [bundle.unmap(e, item_paths) for e in row.get("load_errors", [])]
    for e in row.get("passes", {}).values():
        e["failures"] = [bundle.unmap(f, item_paths) for f in e["failures"]]
    if "traceback" in row:
        row["traceback"] = bundle.unmap(row["traceback"], item_paths)

