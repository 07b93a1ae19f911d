"""How the ``gebench`` script's process ends (``gebench.cli.run`` / ``end_process``): exit handlers run and output
is flushed, the exit code is the command's, and a process with a running thread still waits for it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import gebench

ROOT = Path(gebench.__file__).resolve().parent.parent


def _python(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": ""})


def test_the_script_runs_exit_handlers_and_flushes_before_it_ends(tmp_path):
    done = _python("""
        import atexit, sys
        import gebench.cli
        atexit.register(lambda: print("handler ran"))
        print("buffered, not flushed", end="")
        sys.argv = ["gebench", "--help"]
        gebench.cli.run()
        """, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("buffered, not flushed") and "usage: gebench" in done.stdout
    assert done.stdout.rstrip().endswith("handler ran")


@pytest.mark.parametrize(("code", "status", "stderr"), [(None, 0, ""), (3, 3, ""), ("a message", 1, "a message")])
def test_end_process_reads_the_code_as_sys_exit_does(tmp_path, code, status, stderr):
    done = _python(f"""
        import gebench.cli
        gebench.cli.end_process({code!r})
        """, tmp_path)
    assert done.returncode == status and done.stderr.strip() == stderr


def test_a_bad_flag_exits_2_through_the_script_entry(tmp_path):
    done = _python("""
        import sys
        import gebench.cli
        sys.argv = ["gebench", "compile", "model.onnx", "--no-such-flag"]
        gebench.cli.run()
        """, tmp_path)
    assert done.returncode == 2 and "--no-such-flag" in done.stderr


def test_a_running_thread_is_waited_for(tmp_path):
    done = _python("""
        import threading, time
        import gebench.cli
        def late():
            time.sleep(0.5)
            print("thread finished", flush=True)
        threading.Thread(target=late).start()
        gebench.cli.end_process(0)
        """, tmp_path)
    assert done.returncode == 0 and "thread finished" in done.stdout
