"""The workbench in Jupyter Notebook 7 (the classic notebook's current form), in headless Chromium.

The same core check as ``tests/test_browser_workbench.py`` (JupyterLab), in the other front end the
workbench supports: ``jupyter notebook`` serves a copy of the quickstart, the page at
``/notebooks/01_quickstart.ipynb`` runs all its cells, and the widget must render its graph and restyle
a pass's candidates when the pass is clicked. The screenshot is kept as a test artifact
(``build/test-artifacts/notebook.png``).

Needs ``/usr/bin/chromium``, graphviz (``scripts/install_browser_deps.sh``) and the ``notebook`` package
(the ``dev`` extra).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from gebench.viz._lab import LabServer
from test_browser_workbench import (  # the JupyterLab test's settings and helpers
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_FLAGS,
    PANEL,
    _wait_for_widget,
    _watch_console,
)
from test_browser_workbench import lab_root as lab_root  # noqa: F401 - a fixture, used by name

pytestmark = pytest.mark.timeout(300)

NOTEBOOK = "01_quickstart.ipynb"

#: A page error Notebook 7.6 raises by itself on every notebook page, before any cell runs, also for a
#: notebook holding only ``1+1`` with no widget and no ``overrides.json``: its keyboard-shortcuts settings
#: handler reads ``schema`` of a plugin missing from its settings registry. It is not the workbench's
#: (its stack is entirely inside Notebook's own bundle), so it is the only page error this test allows.
NOTEBOOK_OWN_ERROR = ("Cannot read properties of undefined (reading 'schema')", "/static/notebook/notebook_core.")


def _is_notebook_own_error(exc) -> bool:
    message, bundle = NOTEBOOK_OWN_ERROR
    stack = exc.stack or ""
    frames = [line for line in stack.splitlines() if line.strip().startswith("at ")]
    return exc.message == message and bool(frames) and all(bundle in line for line in frames
                                                           if "http" in line)


class NotebookServer(LabServer):
    """:class:`LabServer` (own process group, token auth, settings in a temporary folder, the same
    ``overrides.json``) running ``jupyter notebook`` instead of ``jupyter lab``."""

    def command(self) -> list[str]:
        app = "--JupyterNotebookApp."
        cmd = [
            sys.executable, "-m", "notebook", "--no-browser",
            "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}", f"--ServerApp.root_dir={self.root_dir}",
            f"{app}app_settings_dir={self.settings_dir / 'app-settings'}",
            f"{app}user_settings_dir={self.settings_dir / 'user-settings'}",
            f"{app}workspaces_dir={self.settings_dir / 'workspaces'}",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")
        return cmd


def _open_notebook(page, server: NotebookServer, notebook: Path) -> None:
    """Start the notebook's kernel on the server, open the notebook page, and wait until the page is
    connected to that kernel (the toolbar's execution indicator says idle)."""
    server.start_kernel(notebook)
    page.goto(server.url(f"/notebooks/{notebook.name}"))
    page.wait_for_selector(f"{PANEL} .jp-Notebook", timeout=60_000)
    page.wait_for_selector(f"{PANEL} .jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)


def _run_all_cells(page, n_code_cells: int, notes: list[str]) -> None:
    """Run > Run All Cells in Notebook 7's menu bar, once every code cell of the file is on the page;
    retried (accepting a kernel dialog, never dismissing it) until a cell prompt shows ``[*]`` or a
    number. What each failed attempt saw goes to ``notes`` (shown when the test fails)."""
    page.wait_for_function(
        "([sel, n]) => document.querySelectorAll(sel).length >= n",
        arg=[f"{PANEL} .jp-CodeCell .jp-InputPrompt", n_code_cells], timeout=60_000)
    started = "sel => [...document.querySelectorAll(sel)].some(el => /\\[(\\*|\\d+)\\]/.test(el.textContent))"
    prompts = f"{PANEL} .jp-CodeCell .jp-InputPrompt"
    dialog = page.locator(".jp-Dialog .jp-mod-accept")
    for attempt in range(6):
        if dialog.count() and dialog.first.is_visible():  # "Select Kernel": accept the notebook's kernel
            notes.append(f"attempt {attempt}: dialog {page.locator('.jp-Dialog').first.inner_text()!r}")
            dialog.first.click()
            page.wait_for_selector(f"{PANEL} .jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)
        try:
            page.click(".lm-MenuBar-item:has-text('Run')", timeout=5_000)
            page.click(".lm-Menu-item:has-text('Run All Cells') >> nth=0", timeout=5_000)
        except Exception as exc:  # noqa: BLE001 - playwright's TimeoutError: a dialog or menu got in the way
            notes.append(f"attempt {attempt}: menu click failed: {str(exc).splitlines()[0]}")
            if not (dialog.count() and dialog.first.is_visible()):
                page.keyboard.press("Escape")
            continue
        try:
            page.wait_for_function(started, arg=prompts, timeout=15_000)
            return
        except Exception:  # noqa: BLE001 - playwright's TimeoutError: look at the page, try again
            status = page.locator(f"{PANEL} .jp-Notebook-ExecutionIndicator").first.get_attribute("data-status")
            shown = page.locator(prompts).all_inner_texts()[:3]
            notes.append(f"attempt {attempt}: no cell started; kernel status {status!r}, prompts {shown}")
            page.screenshot(path=str(ARTIFACTS / f"notebook-attempt-{attempt}.png"))
    raise AssertionError("Notebook 7 never started running the notebook's cells:\n" + "\n".join(notes))


def test_quickstart_in_notebook7(lab_root: Path) -> None:
    assert Path(CHROMIUM).exists(), "Chromium is missing: run scripts/install_browser_deps.sh"
    try:
        import notebook
    except ImportError:
        raise AssertionError("the notebook package is missing: pip install -e '.[dev]'") from None
    assert int(notebook.__version__.split(".")[0]) >= 7, f"needs notebook>=7, found {notebook.__version__}"
    import nbformat
    from playwright.sync_api import sync_playwright

    notes: list[str] = []
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "notebook.png"
    failure = ARTIFACTS / "notebook-failure.png"
    for old in (shot, failure, *ARTIFACTS.glob("notebook-attempt-*.png")):
        old.unlink(missing_ok=True)
    server = NotebookServer(lab_root / "notebooks")
    try:
        server.start()
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            page = browser.new_page(viewport={"width": 1500, "height": 1100})
            errors: list[str] = []
            page.on("pageerror", lambda exc: None if _is_notebook_own_error(exc) else errors.append(
                f"{exc.message}\n{exc.stack}"))
            console = _watch_console(page)
            try:
                _open_notebook(page, server, lab_root / "notebooks" / NOTEBOOK)
                assert "/notebooks/" in page.url and "/lab" not in page.url, f"not the Notebook 7 page: {page.url}"
                book = nbformat.read(lab_root / "notebooks" / NOTEBOOK, as_version=4)
                _run_all_cells(page, sum(cell.cell_type == "code" for cell in book.cells), notes)

                # every cell ran (every prompt numbered, none left at "[*]") and none raised
                page.wait_for_function(
                    "sel => [...document.querySelectorAll(sel)].every(el => /\\[\\d+\\]/.test(el.textContent))",
                    arg=f"{PANEL} .jp-CodeCell .jp-InputPrompt", timeout=120_000)
                error_outputs = page.locator(f"{PANEL} [data-mime-type='application/vnd.jupyter.error']")
                assert error_outputs.count() == 0, error_outputs.first.inner_text()

                _wait_for_widget(page, ".gb-root svg g.node", 30_000, console)
                root = page.locator(f"{PANEL} .gb-root").first
                assert root.locator(".gb-main-pane svg g.node").count() > 20

                # click a pass that replaced something: its candidates are restyled in place
                fired = root.locator(".gb-pass").filter(
                    has=page.locator(".gb-count.gb_st_replaced:not(:text-is('0 repl.'))"))
                assert fired.count() > 0, "the pass list shows no pass that replaced anything"
                svg_serial = root.get_attribute("data-svg-serial")
                fired.first.click()
                page.wait_for_function("el => el.classList.contains('gb-pass-sel')", arg=fired.first.element_handle())
                replaced = root.locator(".gb-main-pane svg g.node.gb_st_replaced")
                replaced.first.wait_for(state="attached", timeout=20_000)
                assert replaced.count() >= 2
                assert root.get_attribute("data-svg-serial") == svg_serial, "selecting a pass must not redraw the SVG"
                fill = replaced.first.locator("polygon").first.evaluate("el => getComputedStyle(el).fill")
                assert fill == "rgb(199, 238, 226)", f"replaced nodes are not restyled: fill={fill}"
                root.scroll_into_view_if_needed()
                root.screenshot(path=str(shot))
            finally:
                if not shot.exists():
                    page.screenshot(path=str(failure))
                browser.close()
    finally:
        server.__exit__(None, None, None)  # stops the server's process group, removes its settings folder
    assert server.proc is not None and server.proc.poll() is not None, "the notebook server is still running"
    assert not errors, f"JavaScript errors in the page: {errors}"
    assert shot.stat().st_size > 10_000
