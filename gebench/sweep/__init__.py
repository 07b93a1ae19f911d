"""Pass regression over a model corpus on Dask: every pass set over every model, in parallel.

``gebench.sweep(models, passes=..., out=...)`` (this package is callable: it is :func:`sweep`) runs one task
per (model, pass set) — load, compile, optional per-rewrite verification — on a ``distributed.LocalCluster``
or an existing Dask cluster, writes each task's row to ``out/results.jsonl`` as it finishes, and ends with
``results.csv`` and ``report.html``. ``gebench sweep`` / ``gebench sweep-diff`` are the command line.

Modules, one concern each: ``_corpus`` (models and pass bundles), ``_task`` (one task and its row),
``_isolate`` (the per-task process), ``_engine`` (Dask), ``_progress`` (the bar), ``_store`` (the out
folder, resume), ``_diff`` (comparing two sweeps), ``_report`` (HTML), ``_result`` (:class:`SweepResult`).
Nothing here is imported by the rest of gebench; Dask is imported only when a sweep runs.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import time
import types
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ._corpus import ModelRef, PassBundle, SweepInputError, bundle_passes, expand_models
from ._diff import Change, SweepDiff, diff_rows
from ._result import SweepResult, load
from ._task import COMPLETED_STATUSES, STATUSES, TaskSpec, run_task

__all__ = [
    "Change",
    "ModelRef",
    "PassBundle",
    "STATUSES",
    "SweepDiff",
    "SweepInputError",
    "SweepResult",
    "TaskSpec",
    "bundle_passes",
    "diff",
    "diff_rows",
    "expand_models",
    "load",
    "local_client",
    "run_task",
    "sweep",
]

_log = logging.getLogger(__name__)

PassSpec = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def local_client(workers: int | None = None, **kwargs: Any) -> Any:
    """Context manager: a Dask client on a new ``LocalCluster`` (see :func:`gebench.sweep._engine.local_client`),
    for running several sweeps on one cluster (``sweep(..., client=c)``)."""
    from ._engine import local_client as make

    return make(workers, **kwargs)


def diff(old: str | os.PathLike[str] | SweepResult, new: str | os.PathLike[str] | SweepResult,
         **kwargs: Any) -> SweepDiff:
    """Compare two sweeps (folders or results); ``kwargs`` as :func:`diff_rows` (``time_rel``, ``time_abs``,
    ``slowdown_is_regression``).

    Raises:
        SweepInputError: a folder holds no sweep.
    """
    new_result = new if isinstance(new, SweepResult) else SweepResult.load(new)
    return new_result.compare(old, **kwargs)


def _pass_bundles(passes: PassSpec | None, pass_sets: Mapping[str, PassSpec] | None) -> list[PassBundle]:
    if (passes is None) == (pass_sets is None):
        raise SweepInputError("give the passes either as passes= (one pass set) or as pass_sets= (several)")
    if pass_sets is not None:
        if not pass_sets:
            raise SweepInputError("pass_sets is empty")
        return [bundle_passes(spec, label) for label, spec in pass_sets.items()]
    assert passes is not None
    return [bundle_passes(passes)]


def sweep(models: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], passes: PassSpec | None = None, *,
          pass_sets: Mapping[str, PassSpec] | None = None, out: str | os.PathLike[str] | None = None,
          verify: bool = False, scheduler: str | None = None, client: Any = None, workers: int | None = None,
          task_timeout: float | None = None, task_memory_mb: float | None = None, resume: bool = False,
          overwrite: bool = False, retry_failed: bool = False,
          baseline: str | os.PathLike[str] | SweepResult | None = None, isolate: bool = True,
          progress: bool | None = None, ledger: str = "compact", tasks_per_process: int = 20,
          custom_ops: Sequence[str | os.PathLike[str]] | None = None, connect_timeout: float = 10.0,
          time_rel: float = 0.5, time_abs: float = 0.25, slowdown_is_regression: bool = False) -> SweepResult:
    """Run every pass set over every model on Dask and return the :class:`SweepResult`.

    Args:
        models: files, folders (searched recursively for ``.onnx``/``.air``/``.gir``/``.ir`` and
            ``PreRunBegin`` GE dumps) and globs. Workers read them by absolute path: on a real cluster the
            corpus must be on storage every worker (and the driver) sees at the same path.
        passes: one pass set, as :func:`gebench.compile` takes it (a path, ``a:b`` or a list of paths);
            or ``pass_sets``: label -> such a spec, for several sets (one task per model and set).
        out: the out folder (default: a new temporary folder); see :mod:`gebench.sweep._store`.
        verify: check every pattern/decompose rewrite numerically as it happens.
        scheduler: ``tcp://host:port`` of an existing Dask scheduler; ``client``: an existing
            ``distributed.Client`` (left open); neither: a ``LocalCluster`` of ``workers`` processes
            (default: the cores), closed at the end.
        task_timeout, task_memory_mb: per-task limits (seconds; MiB of resident memory), enforced by
            killing the task's process; they need ``isolate``.
        isolate: run each task in its own forked process on the worker (POSIX), so a crash, hang or memory
            blow-up costs only that task. Off: tasks run in the worker process, faster for tiny models, and a
            crash kills the worker (Dask's KilledWorker, then one isolated re-run to confirm).
        tasks_per_process: with ``isolate``, how many tasks one task process runs before a fresh one is forked
            (also after any failure, other custom ops, or 8 MiB of growth); 1: a fresh process per task.
        resume: continue the sweep in ``out``: tasks with a row are skipped (``retry_failed``: except those
            that did not finish their compile). ``overwrite``: start ``out`` afresh.
        baseline: a previous sweep (folder or result) to diff against; the diff is ``result.diff`` and shows
            in the report. ``time_rel``/``time_abs``/``slowdown_is_regression``: see :mod:`gebench.sweep._diff`.
        progress: the bar on stderr (None: iff stderr is a terminal).
        ledger: ``"compact"`` (default), ``"full"`` or ``"none"``: what is kept in ``out/ledgers``.
        custom_ops: JSON files declaring custom ops, shipped with the tasks like the pass files.
        connect_timeout: seconds to reach ``scheduler`` and see a worker.

    Returns:
        The result of everything in ``out`` (resumed rows included), with ``ran``, ``resumed``, ``elapsed``.

    Raises:
        SweepInputError: a missing model or pass path, a bad scheduler address, an out folder holding another
            sweep, limits without isolation, a baseline folder without a sweep.
        KeyboardInterrupt: propagated after cancelling the outstanding tasks; the rows written so far, the
            table and the report stay in ``out``.
    """
    from ._store import ResultStore

    started = time.perf_counter()
    if ledger not in ("compact", "full", "none"):
        raise SweepInputError(f"ledger must be 'compact', 'full' or 'none', not {ledger!r}")
    for name, value in (("task timeout", task_timeout), ("task memory limit", task_memory_mb)):
        if value is not None and value <= 0:
            raise SweepInputError(f"the {name} must be positive, not {value!r}")
    if not isolate and (task_timeout is not None or task_memory_mb is not None):
        raise SweepInputError("--task-timeout and --task-memory need isolated tasks (drop --no-isolate)")
    if isolate:
        from ._isolate import isolation_available

        if not isolation_available():
            raise SweepInputError("isolated tasks need os.fork (POSIX); pass isolate=False (--no-isolate)")
    if scheduler is not None and client is not None:
        raise SweepInputError("give either scheduler= or client=, not both")
    if tasks_per_process < 1:
        raise SweepInputError(f"tasks per process must be at least 1, not {tasks_per_process}")
    if workers is not None and workers < 1:
        raise SweepInputError(f"--workers must be at least 1, not {workers}")
    model_refs = expand_models([models] if isinstance(models, (str, os.PathLike)) else models)
    bundles = _pass_bundles(passes, pass_sets)
    ops: tuple[tuple[str, bytes], ...] = ()
    for path in custom_ops or ():
        try:
            ops += ((Path(path).name, Path(path).read_bytes()),)
        except OSError as exc:
            raise SweepInputError(f"cannot read custom ops file {os.fspath(path)!r}: {exc}") from exc
    base = None
    if baseline is not None:
        base = baseline if isinstance(baseline, SweepResult) else SweepResult.load(baseline)
    if out is None:
        out = tempfile.mkdtemp(prefix="gebench-sweep-")
        _log.info("sweep results go to %s", out)
    meta = {
        "verify": verify,
        "pass_sets": {b.label: {"digest": b.digest, "paths": list(b.origins)} for b in bundles},
        "models": [{"path": m.path, "name": m.name} for m in model_refs],
        "engine": {"scheduler": scheduler or ("client" if client is not None else "local"), "workers": workers,
                   "isolate": isolate, "task_timeout": task_timeout, "task_memory_mb": task_memory_mb,
                   "tasks_per_process": tasks_per_process},
    }
    remote = None
    if scheduler is not None:  # before the out folder is touched: a bad address leaves nothing behind
        from ._engine import connect

        remote = connect(scheduler, connect_timeout)
    try:
        store = ResultStore.open(out, meta, resume=resume, overwrite=overwrite)
    except BaseException:
        if remote is not None:
            remote.close()
        raise
    sweep_id = uuid.uuid4().hex[:8]
    ledger_dir = store.allow_direct_ledgers(sweep_id) if ledger != "none" else ""
    specs = [TaskSpec(m.path, m.name, b, verify=verify, custom_ops=ops, timeout=task_timeout,
                      memory_limit_mb=task_memory_mb, isolate=isolate, ledger=ledger, sweep_id=sweep_id,
                      tasks_per_process=tasks_per_process, ledger_dir=ledger_dir)
             for m in model_refs for b in bundles]
    done = store.rows
    todo = [s for s in specs if s.task_id not in done
            or (retry_failed and done[s.task_id]["status"] not in COMPLETED_STATUSES)]
    resumed = len(specs) - len(todo)
    ran = 0
    try:
        if todo:
            ran = _run(todo, store, client=client or remote, workers=workers, progress=progress)
    finally:
        if remote is not None:
            remote.close()
        store.close()
        result = SweepResult.load(store.out)
        result.ran, result.resumed = ran, resumed
        result.elapsed = time.perf_counter() - started
        if base is not None:
            result.diff = result.compare(base, time_rel=time_rel, time_abs=time_abs,
                                         slowdown_is_regression=slowdown_is_regression)
            store.write_diff(result.diff)
        store.write_table(result.rows)
        result.write_report()
    return result


def _run(todo: list[TaskSpec], store: Any, *, client: Any, workers: int | None, progress: bool | None) -> int:
    from ._engine import local_client as make_local
    from ._engine import run_tasks
    from ._progress import SweepProgress

    bar = SweepProgress(len(todo), enabled=progress)
    try:
        if client is not None:
            return run_tasks(client, todo, store, bar)
        with make_local(workers or min(len(todo), os.cpu_count() or 1)) as local:
            return run_tasks(local, todo, store, bar)
    finally:
        bar.close()


class _CallableModule(types.ModuleType):
    """``gebench.sweep`` is both this package and :func:`sweep`: calling the package runs a sweep."""

    def __call__(self, *args: Any, **kwargs: Any) -> SweepResult:
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
