"""``gebench lab [NOTEBOOK]``: JupyterLab on 127.0.0.1 with token authentication, opening a notebook.

Token authentication is never turned off: a random token is generated unless the user gives one, and an
empty token is refused. Without a usable browser the URL (token included) is reported for the user to
open. :class:`LabServer` is also what the browser test uses to start and stop an isolated JupyterLab.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import webbrowser
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["LabServer", "LabError", "default_notebook", "notebooks_dir", "add_lab_command", "lab_main"]

_log = logging.getLogger(__name__)

QUICKSTART = "01_quickstart.ipynb"

#: JupyterLab settings for a predictable, quiet session: every cell rendered (no virtualisation, so
#: cells can be reached by tests and screen readers), the notebook's kernel started without asking,
#: no news or update checks.
LAB_OVERRIDES: dict[str, Any] = {
    "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none", "autoStartDefaultKernel": True},
    "@jupyterlab/apputils-extension:notification": {"checkForUpdates": False, "fetchNews": "false"},
}


#: How the server process runs JupyterLab: as ``python -m jupyterlab`` does, but once JupyterLab has stopped (its
#: kernels shut down, its files removed) and the exit handlers have run, the process ends without tearing down
#: the interpreter's modules one by one, which takes longer than the whole shutdown (about a second on a busy
#: machine). Arguments after ``-c`` reach JupyterLab as its command line.
_LAUNCHER = (
    "import atexit, os, sys\n"
    "from jupyterlab.labapp import main\n"
    "try:\n"
    "    code = main()\n"
    "except SystemExit as exc:\n"
    "    code = exc.code\n"
    "atexit._run_exitfuncs()\n"
    "sys.stdout.flush()\n"
    "sys.stderr.flush()\n"
    "os._exit(code if isinstance(code, int) else (0 if code is None else 1))\n"
)


class LabError(RuntimeError):
    """JupyterLab could not be started (the message says why and how to fix it)."""


def notebooks_dir() -> Path:
    """The project's ``notebooks/`` folder (next to the package in a checkout), else ``./notebooks``."""
    here = Path(__file__).resolve().parents[2] / "notebooks"
    return here if here.is_dir() else Path.cwd() / "notebooks"


def default_notebook() -> Path:
    return notebooks_dir() / QUICKSTART


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _has_browser() -> bool:
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return False
    try:
        webbrowser.get()
    except webbrowser.Error:
        return False
    return True


class LabServer:
    """A JupyterLab server in its own process group, stopped by that group only.

    Args:
        root_dir: the folder JupyterLab serves (the notebook must be inside it).
        port: 0 picks a free port.
        token: the auth token; ``None`` generates one. Empty tokens are refused.
        settings_dir: where ``overrides.json`` and user settings go (default: a fresh temporary dir), so a
            session never reads or changes the user's own JupyterLab state.
        open_browser: let JupyterLab open the system browser.
        default_url: the page to open first (``/lab/tree/<notebook>``).

    Raises:
        LabError: an empty token.
    """

    def __init__(self, root_dir: str | Path, *, port: int = 0, token: str | None = None,
                 settings_dir: str | Path | None = None, open_browser: bool = False,
                 default_url: str | None = None, log_path: str | Path | None = None) -> None:
        if token is not None and not token.strip():
            raise LabError("an empty token would disable authentication; give a token or let gebench make one")
        self.root_dir = Path(root_dir).resolve()
        self.port = port or _free_port()
        self.token = token or secrets.token_hex(24)
        self._tmp = tempfile.TemporaryDirectory(prefix="gebench-lab-") if settings_dir is None else None
        self.settings_dir = Path(settings_dir) if settings_dir is not None else Path(self._tmp.name)
        self.open_browser = open_browser
        self.default_url = default_url
        self.log_path = Path(log_path) if log_path is not None else self.settings_dir / "lab.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "/lab") -> str:
        """A URL that logs in with the token."""
        sep = "&" if "?" in path else "?"
        return f"{self.base_url}{path}{sep}token={self.token}"

    def command(self) -> list[str]:
        app = self.settings_dir / "app-settings"
        cmd = [
            sys.executable, "-c", _LAUNCHER,
            "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}", f"--ServerApp.root_dir={self.root_dir}",
            f"--LabApp.app_settings_dir={app}",
            f"--LabApp.user_settings_dir={self.settings_dir / 'user-settings'}",
            f"--LabApp.workspaces_dir={self.settings_dir / 'workspaces'}",
            # a kernel still running 0.2 s after its shutdown request gets SIGTERM from JupyterLab (SIGKILL after
            # 0.4 s), so stopping `gebench lab` takes about a second, not up to jupyter_client's default of five
            "--KernelManager.shutdown_wait_time=0.4",
            "--LabApp.news_url=", "--ServerApp.open_browser=" + ("True" if self.open_browser else "False"),
        ]
        if self.default_url:
            cmd.append(f"--ServerApp.default_url={self.default_url}")
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")
        return cmd

    def start(self, *, timeout: float = 60.0) -> LabServer:
        """Start the server and wait until ``/api/status`` answers.

        Raises:
            LabError: JupyterLab is not installed, exited, or did not answer within ``timeout`` seconds.
        """
        app = self.settings_dir / "app-settings"
        app.mkdir(parents=True, exist_ok=True)
        (app / "overrides.json").write_text(json.dumps(LAB_OVERRIDES, indent=1))
        # found, not imported: JupyterLab runs in its own process, and importing it here would only make this
        # process slower to start and to exit
        if importlib.util.find_spec("jupyterlab") is None:
            raise LabError("JupyterLab is not installed; run: pip install 'gebench[lab]'")
        log = open(self.log_path, "wb")  # noqa: SIM115 - kept open for the child's lifetime
        env = dict(os.environ, JUPYTER_PLATFORM_DIRS="1", PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT, env=env,
                                     start_new_session=True, cwd=self.root_dir)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise LabError(f"JupyterLab exited with {self.proc.returncode}; see {self.log_path}:\n"
                               + self.log_path.read_text(errors="replace")[-2000:])
            try:
                with urllib.request.urlopen(self.url("/api/status"), timeout=2) as resp:
                    if resp.status == 200:
                        return self
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.25)
        self.stop()
        raise LabError(f"JupyterLab did not answer on {self.base_url} within {timeout:g} s; see {self.log_path}")

    def start_kernel(self, notebook: str | Path, *, timeout: float = 60.0) -> str:
        """Start the kernel session of ``notebook`` on the server before a browser opens it.

        JupyterLab connects to that session when it opens the notebook, so the kernel is ready (the
        status bar says "Idle") about as soon as the page is. This narrows, but cannot close, a JupyterLab
        race: a cell run before the notebook is connected to its kernel (``Run All`` right after opening)
        makes JupyterLab start the session again, and the notebook can end up on a second connection to
        the same kernel that ignores comm messages; every widget then shows "Error displaying widget:
        model not found" until the page is reloaded. Idempotent: an existing session is reused.

        Args:
            notebook: the notebook file (inside :attr:`root_dir`).
            timeout: seconds to wait for the server's answer (the kernel process starts meanwhile).

        Returns:
            the kernel id.

        Raises:
            LabError: the server is not running, the notebook is outside ``root_dir``, or the server
                refused the request.
        """
        if self.proc is None or self.proc.poll() is not None:
            raise LabError("the JupyterLab server is not running; call start() first")
        path = Path(notebook)
        path = (self.root_dir / path) if not path.is_absolute() else path
        try:
            rel = path.resolve().relative_to(self.root_dir).as_posix()
        except ValueError:
            raise LabError(f"notebook {path} is not inside the served folder {self.root_dir}") from None
        kernel = "python3"
        try:
            meta = json.loads(path.read_text(encoding="utf-8")).get("metadata", {})
            kernel = meta.get("kernelspec", {}).get("name") or kernel
        except (OSError, ValueError):
            _log.debug("could not read the kernelspec of %s; using %s", path, kernel, exc_info=True)
        body = json.dumps({"path": rel, "name": path.name, "type": "notebook", "kernel": {"name": kernel}}).encode()
        request = urllib.request.Request(self.url("/api/sessions"), data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as resp:
                answer = json.loads(resp.read())
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise LabError(f"JupyterLab did not start a kernel for {rel}: {exc}; see {self.log_path}") from exc
        return str(answer["kernel"]["id"])

    def stop(self, *, timeout: float = 10.0) -> None:
        """Stop the server's process group (only the processes this object started).

        JupyterLab gets SIGTERM and shuts its kernels down itself; only a server still running after
        ``timeout`` seconds is killed.
        """
        if self.proc is None or self.proc.poll() is not None:
            return
        pgid = os.getpgid(self.proc.pid)
        os.killpg(pgid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _log.warning("JupyterLab (pid %d) did not stop within %g s of SIGTERM; killing it", self.proc.pid, timeout)
            os.killpg(pgid, signal.SIGKILL)
            self.proc.wait(timeout=timeout)

    def wait(self) -> int:
        """Block until the server exits (Ctrl-C stops it); returns its exit code."""
        assert self.proc is not None
        try:
            return self.proc.wait()
        except KeyboardInterrupt:
            self.stop()
            return 0

    def __enter__(self) -> LabServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
        if self._tmp is not None:
            self._tmp.cleanup()


def lab_main(notebook: str | None = None, *, port: int = 0, token: str | None = None,
             browser: bool | None = None, out: Callable[[str], None] | None = None) -> int:
    """Run ``gebench lab``: serve the notebook's folder, open it, report the URL; blocks until stopped.

    Args:
        notebook: a notebook path (default: the quickstart).
        port / token: as for :class:`LabServer`.
        browser: open a browser (default: when one is available).
        out: where the URL line goes (the CLI passes ``print``).

    Raises:
        LabError: the notebook does not exist, or the server did not start.
    """
    nb = Path(notebook) if notebook else default_notebook()
    if not nb.is_file():
        raise LabError(f"notebook {nb} not found; give a path to an .ipynb file (default: notebooks/{QUICKSTART})")
    nb = nb.resolve()
    use_browser = _has_browser() if browser is None else browser
    server = LabServer(nb.parent, port=port, token=token, open_browser=False,
                       default_url=f"/lab/tree/{nb.name}", settings_dir=Path.home() / ".gebench" / "lab")
    # Ctrl-C, SIGTERM and SIGHUP (the terminal closed) all end the same way: the handler only unwinds the main
    # thread (stopping the server from inside a signal handler would wait on the server while the interrupted
    # wait still holds it), and the server is stopped once, below, while further signals are ignored.
    previous = _set_handlers(_raise_stop)
    stopped_by: str | None = None
    try:
        server.start()
        try:
            # the kernel is up when the page opens: less time in which a quick "Run All" races JupyterLab's start-up
            server.start_kernel(nb)
        except LabError as exc:
            _log.warning("%s; JupyterLab will start the kernel when the notebook opens", exc)
        url = server.url(f"/lab/tree/{nb.name}")
        if use_browser:
            webbrowser.open(url)
        if out is not None:
            out(f"JupyterLab is running at {url}" + ("" if use_browser else "  (no browser found: open this URL)"))
            out("Stop it with Ctrl-C.")
        assert server.proc is not None
        code = server.proc.wait()
    except KeyboardInterrupt:
        stopped_by = "SIGINT"
    except _StopSignal as exc:
        stopped_by = signal.Signals(exc.signum).name
    finally:
        if previous:
            _set_handlers(signal.SIG_IGN)
        try:
            server.stop()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    if stopped_by is None:
        return code
    if out is not None:
        try:
            out(f"JupyterLab stopped ({stopped_by}).")
        except OSError:  # SIGHUP: the terminal may be gone
            pass
    return 0


#: The signals that stop ``gebench lab`` (and the JupyterLab it started) cleanly.
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class _StopSignal(BaseException):
    """Raised by the signal handler of ``gebench lab`` to unwind to the code that stops the server."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _set_handlers(handler: Any) -> dict[int, Any]:
    """Install ``handler`` for :data:`_STOP_SIGNALS`; returns the previous handlers (none outside the main thread,
    where Python cannot set signal handlers: the caller's own handling applies there)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.signal(sig, handler) for sig in _STOP_SIGNALS}


def _raise_stop(signum: int, _frame: Any) -> None:
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise _StopSignal(signum)


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def add_lab_command(parser: Any) -> Callable[[Any], int]:
    """Set up the ``lab`` subcommand's arguments on ``parser``; returns its handler (args -> exit code)."""
    parser.add_argument("notebook", nargs="?", default=None, help=f"notebook to open (default: {QUICKSTART})")
    parser.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    parser.add_argument("--token", default=None, help="auth token (default: a random one; never disabled)")
    parser.add_argument("--no-browser", action="store_true", help="only print the URL")

    def run(args: Any) -> int:
        try:
            return lab_main(args.notebook, port=args.port, token=args.token,
                            browser=False if args.no_browser else None, out=_say)
        except LabError as exc:
            sys.stderr.write(f"gebench lab: {exc}\n")
            return 2

    return run


def _standalone(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="gebench lab", description="Open the gebench workbench in JupyterLab.")
    handler = add_lab_command(parser)
    return handler(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(_standalone())
