"""Process isolation for sweep tasks: a crash, a hang or a memory blow-up costs one task, never the worker.

Each worker keeps one *task server* per concurrently running task: a ``python -m gebench.sweep._isolate``
child process that has imported gebench once (about a second, plus a tiny warm-up task) and then forks
*task processes* that run :func:`~gebench.sweep._task.run_task`. The server watches the task process:

* it reads the task's messages (the pass about to run, then the result row) from a pipe;
* past ``spec.timeout`` seconds it kills the task process: status ``TIMEOUT``;
* above ``spec.memory_limit_mb`` of resident memory (polled every 0.1 s) it kills it: ``OUT_OF_MEMORY``;
* a task process that dies without a row (``os._exit``, a segfault, the kernel's OOM killer) is ``CRASHED``,
  with its exit status or signal, the pass that was running and the tail of its output.

A task process runs up to ``spec.tasks_per_process`` tasks one after another (then it exits and the next task
gets a fresh fork), and is replaced early after any failure, when a task brings other custom ops (they register
globally), or when it has grown by :data:`RECYCLE_GROWTH_MB`. Reusing it matters for small tasks: the first
task in a fresh fork pays the copy-on-write faults of touching the server's heap (about 30 ms), the next ones do
not; large tasks get a fresh process each, so the garbage they leave is never collected, only discarded. The
next task process is made right after a row is sent (the worn one retired, a fresh one forked), while the row
travels back and the next task comes, so neither is on a task's clock. Pass files are loaded anew by every task,
so tasks do not see each other's passes. A task writes its ledger file itself when it can (see
:mod:`gebench.sweep._task`), so what crosses the pipes is a small row.

``peak_mem_mb`` of an isolated task is the task process's peak RSS during that task (Linux: ``VmHWM`` reset
at the task's start; elsewhere the process's lifetime peak), which includes the pages it shares with the server
(the imported gebench, about 70 MiB).

The server reads requests on its stdin and answers on its stdout (length-prefixed pickles), after moving
those to private descriptors so stray prints of pass files go to stderr. It exits when its stdin closes
(the worker ended or died), killing a running task first. POSIX only (``os.fork``).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from ._task import TaskSpec, base_row, finish_row

__all__ = ["run_isolated", "warm_up", "shutdown", "isolation_available"]

_log = logging.getLogger(__name__)

_HEADER = struct.Struct(">Q")
#: Seconds a new task server may take to import gebench and say it is ready.
SERVER_START_TIMEOUT = 300.0
#: Extra seconds the worker waits for a server's answer past the task timeout before it gives up on it.
SERVER_GRACE = 60.0
#: Grown this much (MiB of resident memory) since its fork, a task process is replaced after its task. A task
#: leaves its graph as cyclic garbage that only a full collection frees (costing about half the task's own
#: time), while a fresh fork costs a few tens of milliseconds: so small tasks share a process, large ones
#: (which leave more) get a fresh one each, and a task's peak stays that of the task alone.
RECYCLE_GROWTH_MB = 8.0
_MEMORY_POLL = 0.1
_TAIL_BYTES = 2000


def isolation_available() -> bool:
    """Whether tasks can run isolated here (POSIX ``fork``)."""
    return hasattr(os, "fork")


# ------------------------------------------------------------------------------------------- framing
def _write_frame(fd: int, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes:
    chunks = []
    while n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError("no answer in time")
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise EOFError("the other side closed the pipe")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _read_frame(fd: int, deadline: float | None = None) -> Any:
    (size,) = _HEADER.unpack(_read_exact(fd, _HEADER.size, deadline))
    return pickle.loads(_read_exact(fd, size, deadline))


# ------------------------------------------------------------------------------------------- worker side
class _Server:
    """A task server process seen from the worker."""

    def __init__(self) -> None:
        import gebench

        env = dict(os.environ)
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env.setdefault(var, "1")  # one task per core: no nested BLAS threads (Dask's nanny does the same)
        root = str(Path(gebench.__file__).resolve().parents[1])
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self.proc = subprocess.Popen([sys.executable, "-m", "gebench.sweep._isolate"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env, close_fds=True)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin.fileno()
        self._out = self.proc.stdout.fileno()
        self._ready = False

    def wait_ready(self) -> None:
        """Wait for the server's hello (it has imported gebench). Raises (and kills it) when it does not come
        within :data:`SERVER_START_TIMEOUT`."""
        if self._ready:
            return
        try:
            _read_frame(self._out, time.monotonic() + SERVER_START_TIMEOUT)
        except BaseException:
            self.kill()
            raise
        self._ready = True

    def run(self, spec: TaskSpec) -> dict[str, Any]:
        """Send ``spec``, return the row. Raises EOFError/OSError/TimeoutError when the server is lost."""
        _write_frame(self._in, spec)
        deadline = None if spec.timeout is None else time.monotonic() + spec.timeout + SERVER_GRACE
        return _read_frame(self._out, deadline)

    def kill(self) -> None:
        try:
            self.proc.kill()
        except OSError:
            pass
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()

    def close(self) -> None:
        """Ask the server to exit (stdin EOF); kill it if it does not within 5 s."""
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            self.proc.wait(5)
        except (OSError, subprocess.TimeoutExpired):
            self.kill()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


_idle: list[_Server] = []
_idle_lock = threading.Lock()


def _take() -> _Server:
    with _idle_lock:
        if _idle:
            return _idle.pop()
    server = _Server()
    server.wait_ready()
    return server


def run_isolated(spec: TaskSpec) -> dict[str, Any]:
    """Run ``spec`` in a forked task process of an idle task server (one is started when none is idle).

    Returns the row; a lost server (it was killed, or did not answer within the timeout plus
    :data:`SERVER_GRACE`) gives a ``CRASHED`` row and is replaced on the next call.

    Raises:
        RuntimeError: a task server could not start (gebench not importable by ``sys.executable``).
    """
    try:
        server = _take()
    except (OSError, EOFError, TimeoutError) as exc:
        raise RuntimeError(f"cannot start a gebench task server with {sys.executable}: {exc}") from exc
    try:
        row = server.run(spec)
    except (OSError, EOFError, TimeoutError, pickle.UnpicklingError) as exc:
        server.kill()
        row = base_row(spec)
        row["status"] = "CRASHED"
        row["reason"] = f"the task server was lost ({type(exc).__name__}: {exc}); exit status {server.proc.returncode}"
        return finish_row(row)
    with _idle_lock:
        _idle.append(server)
    return row


def warm_up(count: int = 1) -> int:
    """Start task servers until ``count`` are idle in this process (run on workers before a sweep so the
    import cost is paid once, in parallel, off the task clock). Returns the number idle."""
    with _idle_lock:
        missing = max(0, count - len(_idle))
    started = [_Server() for _ in range(missing)]  # they import gebench in parallel
    for server in started:
        server.wait_ready()
    with _idle_lock:
        _idle.extend(started)
        return len(_idle)


def shutdown() -> None:
    """Close every idle task server of this process."""
    with _idle_lock:
        servers = list(_idle)
        _idle.clear()
    for server in servers:
        server.close()


# ------------------------------------------------------------------------------------------- server side
def _rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    try:
        import psutil

        return psutil.Process(pid).memory_info().rss / (1 << 20)
    except Exception:  # noqa: BLE001 - psutil missing or the process is gone
        return None


def _tail(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - _TAIL_BYTES))
            return fh.read().decode("utf-8", "replace").strip()
    except OSError:
        return ""


class _TaskProcess:
    """A forked task process, seen from its server: it runs the tasks sent on a pipe, one at a time, until
    the pipe closes (or it is killed). Invariant: at most one task is in flight."""

    def __init__(self, ops_key: str, close_in_child: list[int]) -> None:
        import tempfile

        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()
        log_fd, self.log_path = tempfile.mkstemp(prefix="gebench-task-", suffix=".log")
        self.ops_key = ops_key
        self.tasks = 0
        self.base_rss = _rss_mb(os.getpid()) or 0.0
        # no gc.freeze() before the fork: gebench's compile freezes the heap itself while it runs, and checks
        # gc.get_freeze_count() first, which walks every frozen object (tens of ms per task on a frozen heap)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the task process
            _task_process_main(to_child_r, from_child_w,
                               [self.to_child, self.from_child, *close_in_child], log_fd)
        self.pid = pid
        os.close(to_child_r)
        os.close(from_child_w)
        os.close(log_fd)

    def worn(self, spec: TaskSpec, ops_key: str) -> bool:
        """Whether the next task should get a fresh process: enough tasks run, other custom ops (they register
        globally), or resident memory grown by more than :data:`RECYCLE_GROWTH_MB` since the fork."""
        if self.tasks >= max(1, spec.tasks_per_process) or ops_key != self.ops_key:
            return True
        rss = _rss_mb(self.pid)
        return rss is not None and rss - self.base_rss > RECYCLE_GROWTH_MB

    def reap(self, kill: bool) -> tuple[int, Any]:
        """End the process (SIGKILL, or closing its pipe so it exits) and return ``wait4``'s status and usage."""
        if kill:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.close(self.to_child)
        _, status, usage = os.wait4(self.pid, 0)
        with contextlib.suppress(OSError):
            os.close(self.from_child)
        with contextlib.suppress(OSError):
            os.unlink(self.log_path)
        return status, usage


def _task_process_main(r: int, w: int, close_fds: list[int], log_fd: int) -> None:
    """The forked task process: run each task read from ``r``, send its messages and row on ``w``; exit when ``r``
    closes (never returns). Its stdout and stderr go to a log file emptied at each task's start."""
    code = 0
    try:
        for fd in close_fds:
            os.close(fd)
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        os.close(log_fd)
        import faulthandler

        faulthandler.enable()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        _die_with_parent()
        from ._task import run_task

        while True:
            try:
                spec = _read_frame(r)
            except EOFError:
                break
            sys.stdout.flush()
            sys.stderr.flush()
            os.ftruncate(1, 0)
            os.lseek(1, 0, os.SEEK_SET)
            row = run_task(spec, on_pass_start=lambda name: _write_frame(w, ("pass", name)))
            _write_frame(w, ("row", row))
    except BaseException:  # noqa: BLE001 - whatever happens, the process must end here
        import traceback

        traceback.print_exc()
        code = 70
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _die_with_parent() -> None:
    """Linux: have the kernel kill this process when its server dies, even by SIGKILL (no orphaned hung task)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() == 1:  # the server died before prctl took effect
        os._exit(0)


_current: list[_TaskProcess] = []  # the server's task process, if one is alive


def _ops_key(spec: TaskSpec) -> str:
    h = hashlib.sha256()
    for name, content in spec.custom_ops:
        h.update(name.encode() + b"\0" + hashlib.sha256(content).digest())
    return h.hexdigest()


#: :func:`_ops_key` of a task without custom ops (the task process forked before the first task has this key).
_NO_OPS_KEY = hashlib.sha256().hexdigest()


def _prepare_next(spec: TaskSpec, proto_in: int, proto_out: int) -> None:
    """After a task's row is sent: retire a worn task process (its exit and the freeing of its memory) and fork
    the next one now, while the row travels back and the next task comes, instead of on the next task's clock
    (about 20-60 ms per fresh process, more on busy cores). A next task with other custom ops or a lower
    ``tasks_per_process`` still gets a fresh process in :func:`_run_supervised`."""
    ops_key = _ops_key(spec)
    if _current and _current[0].worn(spec, ops_key):
        _current.pop().reap(kill=False)
    if not _current:
        _current.append(_TaskProcess(ops_key, [proto_in, proto_out]))


def _run_supervised(spec: TaskSpec, proto_in: int, proto_out: int) -> dict[str, Any]:
    """Run ``spec`` in the server's task process (forking a fresh one when there is none or it is worn) and
    watch it: timeout, memory limit, death. Returns the row."""
    ops_key = _ops_key(spec)
    if _current and _current[0].worn(spec, ops_key):
        _current.pop().reap(kill=False)
    if not _current:
        _current.append(_TaskProcess(ops_key, [proto_in, proto_out]))
    proc = _current[0]
    start = time.monotonic()
    try:
        _write_frame(proc.to_child, spec)
    except BrokenPipeError:  # it died between tasks: start a fresh one for this task
        _current.pop().reap(kill=True)
        proc = _TaskProcess(ops_key, [proto_in, proto_out])
        _current.append(proc)
        _write_frame(proc.to_child, spec)
    deadline = start + spec.timeout if spec.timeout else None
    buf = b""
    row: dict[str, Any] | None = None
    current_pass: str | None = None
    killed_for: str | None = None
    rss_seen = 0.0
    while row is None:
        wait = _MEMORY_POLL if spec.memory_limit_mb else 1.0
        if deadline is not None:
            wait = max(0.0, min(wait, deadline - time.monotonic()))
        ready = select.select([proc.from_child, proto_in], [], [], wait)[0]
        if proto_in in ready and not os.read(proto_in, 1):  # the worker is gone: so are we
            proc.reap(kill=True)
            os._exit(0)
        if proc.from_child in ready:
            chunk = os.read(proc.from_child, 1 << 20)
            if not chunk:
                break  # the task process died
            buf += chunk
            while len(buf) >= _HEADER.size:
                (size,) = _HEADER.unpack_from(buf)
                if len(buf) < _HEADER.size + size:
                    break
                kind, value = pickle.loads(buf[_HEADER.size:_HEADER.size + size])
                buf = buf[_HEADER.size + size:]
                if kind == "pass":
                    current_pass = value
                elif kind == "row":
                    row = value
        if row is not None:
            break
        if spec.memory_limit_mb:
            rss = _rss_mb(proc.pid) or 0.0
            rss_seen = max(rss_seen, rss)
            if rss > spec.memory_limit_mb:
                killed_for = "memory"
        if deadline is not None and time.monotonic() >= deadline:
            killed_for = "timeout"
        if killed_for:
            break
    if row is not None:
        proc.tasks += 1
        return row
    tail = _tail(proc.log_path)
    _current.clear()
    status, usage = proc.reap(kill=True)
    peak = usage.ru_maxrss / (1 << 20) if sys.platform == "darwin" else usage.ru_maxrss / 1024
    return _failed_row(spec, status, killed_for, current_pass, time.monotonic() - start, peak, rss_seen, tail)


def _failed_row(spec: TaskSpec, status: int, killed_for: str | None, current_pass: str | None, elapsed: float,
                peak: float, rss_seen: float, tail: str) -> dict[str, Any]:
    row = base_row(spec)
    where = f" in pass {current_pass}" if current_pass else ""
    if killed_for == "timeout":
        row["status"] = "TIMEOUT"
        row["reason"] = f"exceeded the task timeout of {spec.timeout:g} s{where}"
    elif killed_for == "memory":
        row["status"] = "OUT_OF_MEMORY"
        row["reason"] = (f"exceeded the task memory limit of {spec.memory_limit_mb:g} MiB (resident {rss_seen:.0f} "
                         f"MiB){where}")
    elif os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        row["status"] = "CRASHED"
        hint = " (the system's out-of-memory killer?)" if sig == signal.SIGKILL else ""
        row["reason"] = f"the task process was killed by {name}{hint}{where}"
    else:
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
        row["status"] = "CRASHED"
        row["reason"] = f"the task process exited with status {code} without a result{where}"
    row["failed_pass"] = current_pass
    row["wall_s"] = elapsed
    row["peak_mem_mb"] = peak
    if tail:
        row["output_tail"] = tail
    return finish_row(row)


def _preload() -> None:
    """Import what every task needs, once, before the first fork."""
    import gebench  # noqa: F401
    import gebench.api  # noqa: F401
    import gebench.exec.equivalence  # noqa: F401
    import gebench.fusion.plugins.reload  # noqa: F401
    import gebench.ge.passes._engine  # noqa: F401 - the pass API the runtime calls
    import gebench.io  # noqa: F401

    from ._corpus import default_cache_dir
    from ._task import _install_pass_clock

    _install_pass_clock()
    default_cache_dir()  # made (and later removed) by the server, shared by its task processes
    try:
        _warm_task()
    except Exception as exc:  # noqa: BLE001 - only a speed-up: tasks do the same work if it fails
        _log.warning("task server warm-up failed (every fresh task process will pay about 0.15 s to fill the "
                     "caches it would have filled): %s", exc)


#: The pass of the warm-up task: ``x * 1.0 -> x``, written the way pass files are.
_WARM_PASS = """
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass


@register_fusion_pass(name="GebenchSweepWarmUp", stage=PassStage.BEFORE_INFER_SHAPE)
class GebenchSweepWarmUp(PatternFusionPass):
    @pattern
    def mul_one(self, inputs):
        return inputs[0] * 1.0

    def meet_requirements(self, match_result):
        return True

    def replacement(self, inputs):
        return inputs[0]
"""


#: The warm-up model, ``Y = X * 1.0`` (X float[2, 3], the 1.0 an initializer), as the bytes of an opset-17 ONNX
#: file (ir_version 8, made once with ``onnx.helper`` and checked with ``onnx.checker``): the warm-up does not
#: depend on gebench's own ONNX writer.
_WARM_MODEL = ("CAgSB2dlYmVuY2g6XQoZCgFYCgNvbmUSAVkaB211bF9vbmUiA011bBIHd2FybV91cCoNEAEiBAAAgD9CA29uZVoTCgFYEg4K"
               "DAgBEggKAggCCgIIA2ITCgFZEg4KDAgBEggKAggCCgIIA0IECgAQEQ==")


def _warm_task() -> dict[str, Any]:
    """Run one tiny task (ONNX load, pass load, compile, verify, the ledger) so that the lazy imports and caches
    of those paths are filled once in the server instead of in every forked task process: without it each fresh
    task process pays about 0.15 s of CPU for them (measured: 20 tasks with a fresh process each, 8.0 s of task
    CPU without the warm-up, 4.8 s with it). Returns the warm-up row.

    Raises:
        RuntimeError: the warm-up task did not succeed (the server still works, only slower).
    """
    import base64
    import tempfile

    from ._corpus import bundle_passes
    from ._task import run_task

    with tempfile.TemporaryDirectory(prefix="gebench-sweep-warm-") as tmp:
        model = Path(tmp) / "warm_up.onnx"
        model.write_bytes(base64.b64decode(_WARM_MODEL))
        pass_file = Path(tmp) / "warm_up_pass.py"
        pass_file.write_text(_WARM_PASS, encoding="utf-8")
        spec = TaskSpec(str(model), "warm_up", bundle_passes(str(pass_file)), verify=True, ledger="compact")
        row = run_task(spec, cache_dir=Path(tmp) / "cache", measure_memory=False)
        if row["status"] != "SUCCESS":
            raise RuntimeError(f"warm-up task: {row['status']} {row['reason']}")
        return row


def serve() -> None:
    """The task server's main loop (``python -m gebench.sweep._isolate``)."""
    proto_in, proto_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C of the driver's terminal is the worker's business
    # terminated with its worker (a cluster shutting down): end like at EOF, so exit handlers remove the pass cache
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    _preload()
    _current.append(_TaskProcess(_NO_OPS_KEY, [proto_in, proto_out]))
    _write_frame(proto_out, ("ready", os.getpid()))
    try:
        while True:
            try:
                spec = _read_frame(proto_in)
            except EOFError:
                return
            _write_frame(proto_out, _run_supervised(spec, proto_in, proto_out))
            _prepare_next(spec, proto_in, proto_out)
    finally:
        if _current:
            _current.pop().reap(kill=True)


if __name__ == "__main__":  # pragma: no cover - the task server process
    serve()
