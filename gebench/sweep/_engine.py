"""Running sweep tasks on Dask: a ``distributed.LocalCluster`` on this machine, or an existing cluster.

Failure handling, in order of what usually happens:

* a pass that fails, raises or breaks numerics: part of the task's row (``FAILED``, verify errors);
* a pass that kills its process (``os._exit``, a segfault), hangs past the task timeout or grows past the
  task memory limit: with isolation (the default) the task runs in a forked process of a task server on the
  worker (:mod:`gebench.sweep._isolate`), so only that process dies: ``CRASHED``/``TIMEOUT``/
  ``OUT_OF_MEMORY``, and the worker goes on with the next task;
* a worker process that dies anyway (``isolate=False``, the nanny's memory limit, a lost machine): Dask
  retries the task on another worker until it has killed ``allowed-failures + 1`` workers, then raises
  ``KilledWorker``. The driver then runs the task once more in an isolated process, which tells a culprit
  (it crashes again: ``CRASHED``) from a bystander that was merely running on the same worker (its real
  result, with a note). A task already isolated is recorded ``CRASHED`` right away.

The task timeout is enforced inside the worker, by the task server killing the task process; nothing
needs to cancel Dask futures or restart workers for it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import time
import uuid
from collections.abc import Iterator
from typing import Any

from ._corpus import SweepInputError
from ._progress import SweepProgress
from ._store import ResultStore
from ._task import TaskSpec, base_row, finish_row

__all__ = ["local_client", "connect", "run_tasks", "worker_task"]

_log = logging.getLogger(__name__)

#: Dask event topic on which tasks announce that they started (for the progress bar).
EVENT_TOPIC = "gebench-sweep"
#: ``distributed.scheduler.allowed-failures`` of the local cluster: a task that kills its worker twice is
#: given up on (KilledWorker) and confirmed in an isolated process.
LOCAL_ALLOWED_FAILURES = 1


@contextlib.contextmanager
def local_client(workers: int | None = None, *, allowed_failures: int = LOCAL_ALLOWED_FAILURES,
                 **cluster_kwargs: Any) -> Iterator[Any]:
    """A ``distributed.Client`` on a new ``LocalCluster`` of ``workers`` processes (default: the number of
    cores) with one thread each, on 127.0.0.1 (free ports, no dashboard); closed on exit.

    Cost: starting worker processes takes a second or two. ``cluster_kwargs`` go to ``LocalCluster``.
    """
    import dask
    from distributed import Client, LocalCluster

    n = workers or os.cpu_count() or 1
    # the scheduler always serves HTTP (health, metrics): on a free loopback port, without the dashboard
    options = {"n_workers": n, "threads_per_worker": 1, "processes": True, "host": "127.0.0.1",
               "dashboard_address": "127.0.0.1:0", "scheduler_kwargs": {"dashboard": False},
               "silence_logs": logging.ERROR, **cluster_kwargs}
    with dask.config.set({"distributed.scheduler.allowed-failures": allowed_failures}):
        cluster = LocalCluster(**options)
    try:
        client = Client(cluster)
    except BaseException:
        cluster.close()
        raise
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def connect(address: str, timeout: float = 10.0) -> Any:
    """A ``distributed.Client`` on the scheduler at ``address`` (``tcp://host:port``) with at least one worker.

    Raises:
        SweepInputError: the address is malformed, nothing answers there within ``timeout`` seconds, or no
            worker joins within ``timeout`` seconds.
    """
    from distributed import Client

    try:
        client = Client(address, timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - any failure to connect is a bad --scheduler
        raise SweepInputError(f"cannot reach the Dask scheduler at {address!r}: {type(exc).__name__}: {exc}") from exc
    try:
        client.wait_for_workers(1, timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - TimeoutError, or the scheduler went away
        client.close()
        raise SweepInputError(f"no worker joined the Dask scheduler at {address!r} within {timeout:g} s") from exc
    return client


def worker_task(spec: TaskSpec, key: str) -> dict[str, Any]:
    """What a Dask worker runs for one task: announce the start, run (isolated or in this thread), return
    the row with the worker's address."""
    from distributed import get_worker

    address = None
    try:
        worker = get_worker()
        address = worker.address
        worker.log_event(EVENT_TOPIC, {"sweep": spec.sweep_id, "key": key, "t": time.time()})
    except Exception as exc:  # noqa: BLE001 - not on a worker (tests), or the event could not be sent
        _log.debug("no start event for %s: %s", key, exc)
    if spec.isolate:
        from ._isolate import run_isolated

        row = run_isolated(spec)
    else:
        from ._task import run_task

        row = run_task(spec)
    row["worker"] = address
    return row


def _warm(dask_worker: Any) -> int:
    from ._isolate import warm_up

    nthreads = getattr(dask_worker, "nthreads", None) or getattr(getattr(dask_worker, "state", None), "nthreads", 1)
    return warm_up(int(nthreads))


def _failed(spec: TaskSpec, status: str, reason: str) -> dict[str, Any]:
    row = base_row(spec)
    row["status"] = status
    row["reason"] = reason
    return finish_row(row)


def run_tasks(client: Any, specs: list[TaskSpec], store: ResultStore, progress: SweepProgress) -> int:
    """Submit ``specs`` to ``client``, append each row to ``store`` as it arrives, and return the number of
    rows written. On an exception (KeyboardInterrupt included) the outstanding tasks are cancelled and the
    exception propagates; rows already written stay.

    Cost per task: one submit, one result transfer (the row and its compact ledger), one JSON line.
    """
    from distributed import KilledWorker, as_completed

    if not specs:
        return 0
    sweep_id = specs[0].sweep_id or uuid.uuid4().hex[:8]
    by_key: dict[str, TaskSpec] = {}
    attempts: dict[str, int] = {}
    names: dict[str, str] = {}

    def on_event(event: Any) -> None:
        msg = event[1] if isinstance(event, tuple) and len(event) == 2 else event
        if isinstance(msg, dict) and msg.get("sweep") == sweep_id and msg.get("key") in names:
            progress.started(msg["key"], names[msg["key"]], msg.get("t"))

    subscribed = False
    try:
        client.subscribe_topic(EVENT_TOPIC, on_event)
        subscribed = True
    except Exception as exc:  # noqa: BLE001 - no progress detail is no reason to stop
        _log.debug("cannot subscribe to task start events: %s", exc)
    if any(s.isolate for s in specs):
        progress.note("starting task servers on the workers")
        try:
            client.run(_warm)
        except Exception as exc:  # noqa: BLE001 - the tasks themselves will report what is wrong
            _log.warning("starting task servers on the workers failed: %s", exc)

    def submit(spec: TaskSpec, suffix: str = "") -> Any:
        key = f"gebench-sweep-{sweep_id}-{spec.task_id}{suffix}"
        by_key[key] = spec
        names[key] = spec.model_name
        attempts[spec.task_id] = attempts.get(spec.task_id, 0) + 1
        return client.submit(worker_task, spec, key, key=key, pure=False, retries=0)

    futures = [submit(dataclasses.replace(s, sweep_id=sweep_id)) for s in specs]
    pending = as_completed(futures)
    written = 0
    try:
        for future in pending:
            spec = by_key[future.key]
            confirming = future.key.endswith("-confirm")
            try:
                row = future.result()
            except KilledWorker as exc:
                if not spec.isolate:
                    _log.info("%s: its worker died (%s); running it once more in an isolated process",
                              spec.model_name, exc)
                    new = submit(dataclasses.replace(spec, isolate=True), "-confirm")
                    pending.add(new)
                    futures.append(new)
                    continue
                row = _failed(spec, "CRASHED", f"the worker running it died repeatedly (KilledWorker: {exc})")
            except Exception as exc:  # noqa: BLE001 - cancelled, or the task raised on the worker
                row = _failed(spec, "ERROR", f"the task failed on the worker: {type(exc).__name__}: {exc}")
            row["attempts"] = attempts.get(spec.task_id, 1)
            if confirming:
                row["note"] = ("its worker died while running it in the worker process; this result comes from a "
                               "second run in an isolated process")
            store.append(row)
            written += 1
            progress.finished(future.key, row["status"] == "SUCCESS")
            _log.info("%s [%s]: %s %s", row["model_name"], row["pass_set"], row["status"], row.get("reason") or "")
            future.release()
    except BaseException:
        with contextlib.suppress(Exception):
            client.cancel([f for f in futures if not f.done()])
        raise
    finally:
        if subscribed:
            with contextlib.suppress(Exception):
                client.unsubscribe_topic(EVENT_TOPIC)
    return written
