"""``gebench lab``: JupyterLab on 127.0.0.1, token required, URL printed without a browser."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from gebench.viz._lab import LabError, LabServer, default_notebook

ROOT = Path(__file__).resolve().parents[1]


def test_empty_token_is_refused(tmp_path):
    with pytest.raises(LabError, match="disable authentication"):
        LabServer(tmp_path, token="  ")


def test_command_binds_localhost_with_a_token(tmp_path):
    server = LabServer(tmp_path, port=8899, token="abc123")
    cmd = server.command()
    assert "--ServerApp.ip=127.0.0.1" in cmd
    assert "--IdentityProvider.token=abc123" in cmd
    assert not any("token=" in c and c.endswith("=") for c in cmd)
    assert server.url("/lab") == "http://127.0.0.1:8899/lab?token=abc123"


def test_quickstart_is_the_default_notebook():
    assert default_notebook() == ROOT / "notebooks" / "01_quickstart.ipynb"
    assert default_notebook().is_file()


def test_gebench_lab_prints_the_url_and_requires_the_token(tmp_path):
    env = dict(os.environ, HOME=str(tmp_path))
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    proc = subprocess.Popen([sys.executable, "-c", "import sys; from gebench.cli import main; sys.exit(main())", "lab", "--no-browser"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        line = ""
        for _ in range(200):
            line = proc.stdout.readline()
            if "running at" in line or not line:
                break
        m = re.search(r"(http://127\.0\.0\.1:\d+)/lab/tree/01_quickstart\.ipynb\?token=([0-9a-f]{16,})", line)
        assert m, f"no URL line from gebench lab: {line!r}"
        base, token = m.groups()
        with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=10) as resp:
            assert resp.status == 200
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"{base}/api/contents", timeout=10)
        assert err.value.code == 403
    finally:
        os.killpg(os.getpgid(proc.pid), signal.SIGTERM)
        proc.wait(timeout=30)
    # stopping `gebench lab` stops the JupyterLab it started (which runs in its own session)
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5)


def test_start_kernel_needs_a_running_server_and_a_notebook_inside_the_root(tmp_path):
    server = LabServer(tmp_path / "root")
    with pytest.raises(LabError, match="not running"):
        server.start_kernel(tmp_path / "root" / "a.ipynb")
    server.proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        with pytest.raises(LabError, match="not inside the served folder"):
            server.start_kernel(tmp_path / "elsewhere.ipynb")
    finally:
        server.proc.kill()
        server.proc.wait()


def _processes_mentioning(text: str) -> list[int]:
    """Pids of the processes whose command line contains ``text`` (a test's own temporary folder)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if text.encode() in cmdline:
            found.append(int(entry))
    return found


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_gebench_lab_stops_cleanly_on_a_signal(tmp_path, signum):
    """Ctrl-C, SIGTERM and a closed terminal stop `gebench lab` and the JupyterLab and kernel it started within
    2 s, with exit code 0, no traceback and nothing killed."""
    import json
    import time

    from jupyter_client import BlockingKernelClient

    env = dict(os.environ, HOME=str(tmp_path))
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    proc = subprocess.Popen([sys.executable, "-m", "gebench.cli", "lab", "--no-browser"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        line = ""
        while "running at" not in line:
            line = proc.stdout.readline()
            assert line, f"gebench lab ended before printing its URL: {proc.stderr.read()}"
        base, token = re.search(r"(http://127\.0\.0\.1:\d+)/\S*\?token=(\w+)", line).groups()
        with urllib.request.urlopen(f"{base}/api/kernels?token={token}", timeout=10) as resp:
            (kernel,) = json.loads(resp.read())
        # the notebook's kernel answers, as when a user stops the lab after working in it
        connection = next(tmp_path.rglob(f"kernel-{kernel['id']}.json"))
        client = BlockingKernelClient(connection_file=str(connection))
        client.load_connection_file()
        client.start_channels()
        try:
            client.wait_for_ready(timeout=60)
        finally:
            client.stop_channels()
        started = _processes_mentioning(str(tmp_path))  # the JupyterLab server and its kernel
        assert len(started) >= 2, started
        t0 = time.monotonic()
        os.kill(proc.pid, signum)
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert took <= 2.0, f"gebench lab took {took:.2f} s to stop after {signum.name}"
    assert proc.returncode == 0, (proc.returncode, out, err)
    assert "Traceback" not in out + err and err == "", err
    assert f"JupyterLab stopped ({signum.name})." in out
    log = (tmp_path / ".gebench" / "lab" / "lab.log").read_text()
    assert "Traceback" not in log
    assert _processes_mentioning(str(tmp_path)) == []  # nothing left running
