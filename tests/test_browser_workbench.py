"""The workbench in a real browser: JupyterLab + headless Chromium (Debian's) driven by Playwright.

Runs the quickstart notebook top to bottom in JupyterLab, then clicks a pass and a candidate in the
widget and checks the highlighted SVG elements and the details panel; then checks, one test each, that the
header, the details and the diff panes never describe something other than what is on screen, and that the
candidate table, search and keyboard work at 20,000 candidates. Screenshots are written to a temporary folder
(``$GEBENCH_TEST_ARTIFACTS``, default ``<tmp>/gebench-test-artifacts``); with ``GEBENCH_UPDATE_DOC_IMAGES=1``
``workbench.png`` is also copied to ``docs/images/`` (otherwise the tests leave tracked files alone).

Needs ``/usr/bin/chromium`` and graphviz (``scripts/install_browser_deps.sh`` installs both; the test
command runs it first).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gebench.viz._lab import LabServer

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-quic", "--no-first-run", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(os.environ.get("GEBENCH_TEST_ARTIFACTS", Path(tempfile.gettempdir()) / "gebench-test-artifacts"))
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
#: in the page: the shadow root holding the drawing of a pane (``DRAWING + "('.gb-main-pane')"``)
DRAWING = "(pane => document.querySelector(pane + ' .gb-content').shadowRoot)"

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def lab_root(tmp_path: Path) -> Path:
    """A copy of the notebooks (so running them never rewrites the repo's files) next to the real
    assets and passes, as in a checkout."""
    (tmp_path / "notebooks").mkdir()
    shutil.copy(ROOT / "notebooks" / "01_quickstart.ipynb", tmp_path / "notebooks")
    for folder in ("assets", "passes"):
        (tmp_path / folder).symlink_to(ROOT / folder, target_is_directory=True)
    return tmp_path


def _run_all_cells(page) -> None:
    """Run > Run All Cells; retried while the freshly started kernel is not yet taking requests."""
    first_prompt = page.locator(f"{PANEL} .jp-CodeCell .jp-InputPrompt").first
    dialog = page.locator(".jp-Dialog .jp-mod-accept")
    for _ in range(6):
        if dialog.count() and dialog.first.is_visible():  # "Select Kernel": accept the notebook's kernel
            dialog.first.click()
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)
        try:
            page.click(".lm-MenuBar-item:has-text('Run')", timeout=5_000)
            page.click(".lm-Menu-item:has-text('Run All Cells') >> nth=0", timeout=5_000)
        except Exception:  # noqa: BLE001 - a dialog got in the way: accept it (never dismiss it) and retry
            if not (dialog.count() and dialog.first.is_visible()):
                page.keyboard.press("Escape")
            continue
        try:
            page.wait_for_function("el => /\\[(\\*|\\d+)\\]/.test(el.textContent)",
                                   arg=first_prompt.element_handle(), timeout=15_000)
            return
        except Exception:  # noqa: BLE001 - playwright's TimeoutError: try again
            continue
    raise AssertionError("JupyterLab never started running the notebook's cells")


def _open_notebook(page, lab: LabServer, notebook: Path) -> None:
    """Start the notebook's kernel on the server, open the notebook, and wait until JupyterLab is
    connected to that kernel (the status bar says "Idle"). Running cells before that races JupyterLab's
    own kernel start-up (see :meth:`LabServer.start_kernel`)."""
    lab.start_kernel(notebook)
    page.goto(lab.url(f"/lab/tree/{notebook.name}?reset"))
    page.wait_for_selector(f"{PANEL} .jp-Notebook", timeout=60_000)
    page.wait_for_function(
        "() => [...document.querySelectorAll('#jp-main-statusbar .jp-StatusBar-TextItem')]"
        ".some(el => /\\|\\s*Idle/.test(el.textContent))", timeout=60_000)


def _wait_for_widget(page, selector: str, timeout_ms: int, console: list[str]) -> None:
    """Wait until ``selector`` shows in the visible notebook; fail at once, with the browser console,
    when a widget output says it cannot be displayed. (Playwright's CSS selectors look inside the shadow
    roots that hold the widget's drawings.)"""
    error = page.locator(f"{PANEL} .jp-OutputArea-output:has-text('Error displaying widget')")
    page.locator(f"{PANEL} {selector}").or_(error).first.wait_for(state="attached", timeout=timeout_ms)
    assert not error.count(), f"{error.first.inner_text()}; browser console:\n" + "\n".join(console[-30:])


ERROR_OUTPUT = (f"{PANEL} .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr'], "
                f"{PANEL} .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error'], "
                f"{PANEL} .jp-OutputArea-output[data-mime-type*='error']")


def _assert_no_error_output(page) -> None:
    """No cell printed an error or anything on stderr, whatever the output's MIME type (a widget's
    traceback shows as ``application/vnd.jupyter.stderr``, a raised exception as ``...jupyter.error``)."""
    outputs = page.locator(ERROR_OUTPUT)
    assert outputs.count() == 0, outputs.first.inner_text()


def _luminance(css_colour: str) -> float:
    """Relative luminance (0 black .. 1 white) of a computed CSS ``rgb(...)``/``rgba(...)`` colour."""
    r, g, b = (float(v) for v in re.findall(r"[\d.]+", css_colour)[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


def _watch_console(page) -> list[str]:
    """Collect the page's console warnings and errors (shown when a test fails)."""
    lines: list[str] = []
    page.on("console", lambda msg: lines.append(f"{msg.type}: {msg.text}") if msg.type in ("error", "warning") else None)
    return lines


@contextlib.contextmanager
def notebook_page(folder: Path, name: str, cell: str) -> Iterator[tuple[Any, list[str], list[str]]]:
    """A notebook ``name`` holding one code cell ``cell``, written into ``folder`` and opened in JupyterLab in a
    headless Chromium: yields ``(page, page errors, console lines)``; the browser and server stop afterwards."""
    assert Path(CHROMIUM).exists(), "Chromium is missing: run scripts/install_browser_deps.sh"
    import nbformat
    from playwright.sync_api import sync_playwright

    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_code_cell(cell)]
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(book, folder / name)
    with LabServer(folder) as lab, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1500, "height": 1100})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        console = _watch_console(page)
        _open_notebook(page, lab, folder / name)
        try:
            yield page, errors, console
        finally:
            browser.close()


def fresh_widget(lab_page: tuple[Any, list[str], list[str]], test_name: str) -> Iterator[tuple[Any, Any]]:
    """For a fixture: run the page's cell again and yield ``(page, the new widget's root)``; a failure screenshot
    goes to the artifacts folder, and page errors or error outputs fail the test afterwards."""
    page, errors, console = lab_page
    page.evaluate("() => document.querySelectorAll('.gb-root').forEach(r => r.dataset.old = '1')")
    errors.clear()
    ok = False
    try:
        _run_all_cells(page)
        _wait_for_widget(page, ".gb-root:not([data-old]) svg g.node", 60_000, console)
        root = page.locator(f"{PANEL} .gb-root:not([data-old])").first
        _settle(page, root)
        yield page, root
        ok = True
    finally:
        if not ok:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"{test_name}-failure.png"))
    _assert_no_error_output(page)
    assert not errors, f"JavaScript errors in the page: {errors}"


def test_quickstart_in_jupyterlab(lab_root: Path) -> None:
    assert Path(CHROMIUM).exists(), "Chromium is missing: run scripts/install_browser_deps.sh"
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "workbench.png"
    for old in (shot, ARTIFACTS / "workbench-failure.png"):
        old.unlink(missing_ok=True)
    with LabServer(lab_root / "notebooks") as lab, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1500, "height": 1100})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        console = _watch_console(page)
        try:
            _open_notebook(page, lab, lab_root / "notebooks" / "01_quickstart.ipynb")
            _run_all_cells(page)

            # every cell ran (no "[*]" left, the last one numbered) and none raised
            last_prompt = page.locator(f"{PANEL} .jp-CodeCell .jp-InputPrompt").last
            page.wait_for_function(
                "el => /\\[\\d+\\]/.test(el.textContent)", arg=last_prompt.element_handle(), timeout=120_000)
            _assert_no_error_output(page)

            _wait_for_widget(page, ".gb-root svg g.node", 30_000, console)
            root = page.locator(f"{PANEL} .gb-root").first
            n_nodes = root.locator(".gb-main-pane svg g.node").count()
            assert n_nodes > 20

            # click a pass that replaced something: its candidates are restyled in place
            fired = root.locator(".gb-pass").filter(has=page.locator(".gb-count.gb_st_replaced:not(:text-is('0 repl.'))"))
            assert fired.count() > 0, "the pass list shows no pass that replaced anything"
            svg_serial = root.get_attribute("data-svg-serial")
            pass_name = fired.first.get_attribute("data-pass")
            fired.first.click()
            page.wait_for_function("el => el.classList.contains('gb-pass-sel')", arg=fired.first.element_handle())
            replaced = root.locator(".gb-main-pane svg g.node.gb_st_replaced")
            replaced.first.wait_for(state="attached", timeout=20_000)
            assert replaced.count() >= 2
            assert root.get_attribute("data-svg-serial") == svg_serial, "selecting a pass must not redraw the SVG"
            fill = replaced.first.locator("polygon").first.evaluate("el => getComputedStyle(el).fill")
            assert fill == "rgb(199, 238, 226)", f"replaced nodes are not restyled: fill={fill}"
            # the status is also told by a glyph on the box, not by colour alone
            assert replaced.first.locator("path.gb-glyph").get_attribute("data-status") == "REPLACED"

            # click a replaced candidate: its nodes get the selection class, the details panel fills
            row = root.locator(".gb-cand").filter(has=page.locator(".gb_st_replaced")).first
            row.click()
            root.locator(".gb-main-pane svg g.node.gb_sel").first.wait_for(state="attached", timeout=20_000)
            details = root.locator(".gb-details")
            page.wait_for_function("el => el.textContent.includes('candidate #')", arg=details.element_handle())
            text = details.inner_text()
            assert "replaced" in text and pass_name in text and "source" in text
            assert root.locator(".gb-cand.gb-cand-sel").count() == 1

            # click a node: its attrs and tensor descs are shown, with "why not here?"
            node = root.locator(".gb-main-pane svg g.node.gb_op_Add, .gb-main-pane svg g.node.gb_op_BatchMatMulV2").first
            node.dispatch_event("click")
            page.wait_for_function("el => el.textContent.includes('why not here?')", arg=details.element_handle())
            assert "inputs" in details.inner_text() and "outputs" in details.inner_text()
            # for the picture: the pass with the most candidates, and its first candidate
            busiest = max(root.locator(".gb-pass").all(),
                          key=lambda el: int(el.locator(".gb-count").first.inner_text().split()[0]))
            busiest.click()
            root.locator(".gb-cand").first.click()
            page.wait_for_function("el => el.textContent.includes('candidate #')", arg=details.element_handle())
            root.locator(".gb-main-pane svg g.node.gb_sel").first.wait_for(state="attached", timeout=20_000)
            root.screenshot(path=str(shot))
        finally:
            if not shot.exists():
                page.screenshot(path=str(ARTIFACTS / "workbench-failure.png"))
            browser.close()
    assert not errors, f"JavaScript errors in the page: {errors}"
    assert shot.stat().st_size > 10_000
    if os.environ.get("GEBENCH_UPDATE_DOC_IMAGES") == "1":  # tests leave tracked files alone unless asked
        shutil.copy(shot, ROOT / "docs" / "images" / "workbench.png")


BIG_NOTEBOOK_CELL = """from gebench.viz import Workbench
from gebench.viz._synthetic import transformer_like
wb = Workbench(transformer_like(3000), overview_groups=40)
wb"""


def test_large_graph_levels_expand_and_collapse(tmp_path: Path) -> None:
    assert Path(CHROMIUM).exists(), "Chromium is missing: run scripts/install_browser_deps.sh"
    import nbformat
    from playwright.sync_api import sync_playwright

    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_code_cell(BIG_NOTEBOOK_CELL)]
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(book, tmp_path / "big.ipynb")
    with LabServer(tmp_path) as lab, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        console = _watch_console(page)
        try:
            _open_notebook(page, lab, tmp_path / "big.ipynb")
            _run_all_cells(page)
            _wait_for_widget(page, ".gb-root svg g.node.gb_group", 60_000, console)
            root = page.locator(f"{PANEL} .gb-root").first
            groups = root.locator(".gb-main-pane svg g.node.gb_group").count()
            assert 2 <= groups <= 40
            assert "overview" in root.locator(".gb-title").inner_text()
            crumbs = "() => document.querySelectorAll('.gb-crumbs .gb-crumb').length"
            assert page.evaluate(crumbs) == 1
            # a click expands a group box in place: a frame holds its items, the level stays (one breadcrumb)
            root.locator(".gb-main-pane svg g#g3").dispatch_event("click")
            page.wait_for_function(f"() => !!{DRAWING}('.gb-main-pane').querySelector('svg g#x3.gb_cluster')")
            assert page.evaluate(crumbs) == 1
            assert root.locator(".gb-main-pane svg g#g3").count() == 0
            assert root.locator(".gb-main-pane svg g.node.gb_group").count() > groups  # its boxes joined the root's
            # the frame's title collapses it again (the layout of the root comes from the cache)
            root.locator(".gb-main-pane svg g#x3 > text").first.dispatch_event("click")
            root.locator(".gb-main-pane svg g#g3").wait_for(state="attached", timeout=30_000)
            assert root.locator(".gb-main-pane svg g.cluster").count() == 0
            # keys: "e" expands the box under the pointer, "c" collapses the last frame
            root.locator(".gb-main-pane svg g#g3").dispatch_event("mouseover")
            root.focus()
            page.keyboard.press("e")
            root.locator(".gb-main-pane svg g#x3").wait_for(state="attached", timeout=30_000)
            page.keyboard.press("c")
            root.locator(".gb-main-pane svg g#g3").wait_for(state="attached", timeout=30_000)
            assert root.locator(".gb-main-pane svg g.cluster").count() == 0
            # Shift+click opens a group as a level of its own (the breadcrumb grows), down to the ops
            root.locator(".gb-main-pane svg g#g3").dispatch_event("click", {"shiftKey": True})
            page.wait_for_function(f"() => ({crumbs})() === 2 && !{DRAWING}('.gb-main-pane').querySelector('svg g#g3')")
            inner = root.locator(".gb-main-pane svg g.node.gb_group").first
            inner.wait_for(state="attached", timeout=30_000)
            inner.dispatch_event("click", {"shiftKey": True})
            root.locator(".gb-main-pane svg g.node.gb_op_MatMul").first.wait_for(state="attached", timeout=30_000)
            page.wait_for_function(f"() => ({crumbs})() === 3")
            # the up button collapses back to the level above; Overview goes to the root
            root.locator(".gb-crumbs .gb-up").dispatch_event("click")
            page.wait_for_function(f"() => ({crumbs})() === 2")
            root.locator("button[data-action='overview']").click()
            root.locator(".gb-main-pane svg g#g3").wait_for(state="attached", timeout=30_000)
            page.wait_for_function(f"() => ({crumbs})() === 1")
        except Exception:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "overview-failure.png"))
            raise
        finally:
            browser.close()
    assert not errors, f"JavaScript errors in the page: {errors}"


def _settle(page, root) -> None:
    """Wait until the kernel has answered the widget's latest request and its drawings are inflated."""
    page.wait_for_function(
        "el => (!el.dataset.pending || +el.dataset.seq >= +el.dataset.pending)"
        " && el.querySelector('.gb-main-pane .gb-content').shadowRoot.querySelector('svg')",
        arg=root.element_handle(), timeout=60_000)
    page.wait_for_timeout(150)  # inflating a drawing is asynchronous (a few ms)


def _click_pass(page, root, name: str) -> None:
    root.locator(f".gb-pass[data-pass='{name}']").click()
    _settle(page, root)


TABLE_CELL = """from gebench.viz import Workbench
from gebench.viz._synthetic import transformer_like

class Run:  # a ledger-shaped stand-in: 20,000 candidates of one pass over a 2,400-node graph
    status, failed_pass = "SUCCESS", None
    def __init__(self, graph, ledger):
        self.graph, self.snapshots, self.ledger = graph, {"PreRunBegin": graph}, ledger

g = transformer_like(2400)
ops = [n for n in g.nodes() if n.op_type in ("MatMul", "Add", "Relu")]
statuses = ["REPLACED", "STRUCTURAL_MISMATCH", "REJECTED_BY_MEET_REQUIREMENTS"]
ledger = [{"pass_name": "Big", "stage": "BeforeInferShape", "status": statuses[k % 3], "pattern_name": "p",
           "reason": f"reason {k}", "target_node_ids": [ops[k % len(ops)].id],
           "target_node_names": [ops[k % len(ops)].name]} for k in range(20000)]
ledger.append({"pass_name": "Small", "stage": "BeforeInferShape", "status": "REPLACED",
               "target_node_ids": [ops[0].id], "target_node_names": [ops[0].name]})
wb = Workbench(Run(g, ledger), threshold=1500, hops=1, max_focus_nodes=40)
wb"""


def test_big_table_search_keys_and_expanding_a_focused_view(tmp_path: Path) -> None:
    assert Path(CHROMIUM).exists(), "Chromium is missing: run scripts/install_browser_deps.sh"
    import nbformat
    from playwright.sync_api import sync_playwright

    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_code_cell(TABLE_CELL)]
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(book, tmp_path / "table.ipynb")
    with LabServer(tmp_path) as lab, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1500, "height": 1100})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        console = _watch_console(page)
        try:
            _open_notebook(page, lab, tmp_path / "table.ipynb")
            _run_all_cells(page)
            _wait_for_widget(page, ".gb-root svg g.node", 90_000, console)
            root = page.locator(f"{PANEL} .gb-root").first
            _settle(page, root)

            # the status line describes the drawing: the root level here (a candidate's focused view below)
            status = root.locator(".gb-status")
            assert status.inner_text().startswith("model: "), status.inner_text()
            # passes sent ahead: once idle after a drawing, the page asks the kernel for the passes it does not
            # hold, as a switch would show them on that drawing. Here a switch draws the snapshot the candidates
            # were found in (not the final graph shown first): nothing is sent for the first drawing
            ready = "el => el.dataset.prefetch === 'done' && el.dataset.prefetchFor === el.dataset.svgSerial"
            page.wait_for_function(ready, arg=root.element_handle(), timeout=30_000)
            assert int(root.get_attribute("data-prefetched") or 0) == 0
            _click_pass(page, root, "Small")  # draws that snapshot (around Small's candidate)
            page.wait_for_function(ready, arg=root.element_handle(), timeout=30_000)
            assert int(root.get_attribute("data-prefetched")) >= 1  # Big, for this drawing
            paints = int(root.get_attribute("data-cache-paints") or 0)
            # the first switch to Big is painted from what was sent ahead, before the kernel answers
            root.locator(".gb-pass[data-pass='Big']").click()
            assert root.get_attribute("data-cache-paint") == "prefetch:Big"
            assert int(root.get_attribute("data-cache-paints")) == paints + 1
            assert "20000 shown" in root.locator(".gb-table-count").inner_text()
            # 20,000 candidates: only the rows in sight are in the page; scrolling asks for the others
            _settle(page, root)
            assert root.get_attribute("data-hl-pass") == "Big"
            assert "20000 shown" in root.locator(".gb-table-count").inner_text()
            assert 5 < root.locator(".gb-cand").count() < 100
            root.locator(".gb-tviewport").evaluate("el => { el.scrollTop = el.scrollHeight; }")
            root.locator(".gb-cand[data-index='19999']").wait_for(state="attached", timeout=20_000)
            assert root.locator(".gb-cand").count() < 100

            # filter by status, then sort by status (replaced first by precedence) descending and back
            root.locator(".gb-filter[data-status='STRUCTURAL_MISMATCH']").click()
            _settle(page, root)
            assert "6667 shown" in root.locator(".gb-table-count").inner_text()
            statuses = root.locator(".gb-cand .gb-chip").evaluate_all("els => els.map(e => e.title)")
            assert statuses and set(statuses) == {"STRUCTURAL_MISMATCH"}
            root.locator(".gb-filter").first.click()  # all
            _settle(page, root)
            root.locator(".gb-th[data-sort='status']").click()
            _settle(page, root)
            assert root.locator(".gb-cand .gb-chip").first.get_attribute("title") == "REPLACED"
            assert root.locator(".gb-cand").first.get_attribute("data-index") == "0"
            root.locator(".gb-th[data-sort='i']").click()
            _settle(page, root)
            root.locator(".gb-th[data-sort='i']").click()  # again: descending
            _settle(page, root)
            assert root.locator(".gb-cand").first.get_attribute("data-index") == "19999"

            # keyboard: j selects the next candidate in the table's order, k the previous, Backspace goes back
            root.focus()
            for key, index in (("j", "19999"), ("j", "19998"), ("k", "19999")):
                page.keyboard.press(key)
                _settle(page, root)
                assert root.locator(".gb-cand.gb-cand-sel").get_attribute("data-index") == index
                assert f"candidate #{index}" in root.locator(".gb-details").inner_text()
                # the candidate's focused view replaced the level, and the status line says so
                assert "(focused)" in root.locator(".gb-title").inner_text()
                assert "focused view around candidate #" in status.inner_text(), status.inner_text()
                assert "model:" not in status.inner_text(), status.inner_text()
            page.keyboard.press("Backspace")
            _settle(page, root)
            assert "candidate #19998" in root.locator(".gb-details").inner_text()

            # search: a regular expression, run on Enter; its hits are listed and walked
            search = root.locator("input.gb-search")
            search.fill(r"blk1\d/relu")
            search.press("Enter")
            _settle(page, root)
            assert root.locator(".gb-hit-count").inner_text() == "1/10"
            assert root.locator(".gb-hits .gb-hit").count() == 10 and root.locator(".gb-hits").is_visible()
            search.press("Enter")  # the same query again: the next hit
            _settle(page, root)
            assert root.locator(".gb-hit-count").inner_text() == "2/10"
            root.locator(".gb-hits .gb-hit").nth(4).click()
            _settle(page, root)
            assert root.locator(".gb-hit-count").inner_text() == "5/10"
            assert "blk14/relu" in root.locator(".gb-details").inner_text()
            assert root.locator(".gb-main-pane g.node.gb_clicked").count() == 1

            # the focused view grows outward from a node with hidden edges when its marker is clicked
            drawn = int(root.get_attribute("data-drawn"))
            marker = root.locator(".gb-main-pane g.gb-expand").first
            marker.dispatch_event("click")
            _settle(page, root)
            assert int(root.get_attribute("data-drawn")) > drawn
            assert "expanded" in root.locator(".gb-status").inner_text()

            # readable: Fit keeps a minimum zoom, the minimap shows when the drawing overflows, panels fold
            root.locator("button.gb-fit").click()
            scale = float(root.locator(".gb-main-pane > .gb-content").evaluate(
                "el => /scale\\(([^)]+)\\)/.exec(el.style.transform)[1]"))
            assert scale >= 0.35
            root.locator("button.gb-fit-sel").click()
            root.locator("button.gb-toggle-passes").click()
            assert not root.locator(".gb-passes").is_visible()
            root.locator("button.gb-toggle-passes").click()
            assert root.locator(".gb-passes").is_visible()
            _assert_no_error_output(page)
        except Exception:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "table-failure.png"))
            raise
        finally:
            browser.close()
    assert not errors, f"JavaScript errors in the page: {errors}"
