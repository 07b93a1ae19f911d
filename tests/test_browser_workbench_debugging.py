"""The workbench's debugging views in JupyterLab: the pass list's times, stepping through a pass's rewrites with the
slider (and its arrow keys), and provenance marks across the panes of a side-by-side diff.

A two-pass run (``A_AbsAbs`` folds four ``Abs(Abs(x))`` pairs, ``B_ExpNeg`` fuses ``Exp(Neg(x))``; the passes and
graph of ``tests/test_debug_bisect.py``) in one JupyterLab page; each test runs the cell again, so it starts on a
new widget. Any page error or error output fails a test. Needs what ``tests/test_browser_workbench.py`` needs.
"""

from __future__ import annotations

import textwrap

import pytest

from test_browser_workbench import (
    ARTIFACTS,
    _click_pass,
    _settle,
    fresh_widget,
    notebook_page,
)
from test_debug_bisect import PASSES, _graph

pytestmark = pytest.mark.timeout(600)

CELL = """from pathlib import Path
from gebench import ir
from gebench.viz import Workbench
wb = Workbench(ir.parse_text(Path({graph!r}).read_text()), passes=[{passes!r}])
wb"""


@pytest.fixture(scope="module")
def lab_page(tmp_path_factory):
    folder = tmp_path_factory.mktemp("debugging")
    (folder / "graph.txt").write_text(_graph(4))
    (folder / "debug_passes.py").write_text(textwrap.dedent(PASSES))
    cell = CELL.format(graph=str(folder / "graph.txt"), passes=str(folder / "debug_passes.py"))
    with notebook_page(folder, "debugging.ipynb", cell) as opened:
        yield opened


@pytest.fixture
def fresh(lab_page, request):
    """A new widget (the cell run again); fails the test on page errors or error outputs."""
    yield from fresh_widget(lab_page, request.node.name)


def _node_ids(root, pane: str, cls: str = "") -> set[str]:
    return set(root.locator(f"{pane} svg g.node{cls}").evaluate_all("els => els.map(e => e.id)"))


MAIN, SIDE = ".gb-main-pane", ".gb-side-pane"


def test_pass_times_and_the_rewrite_slider(fresh):
    page, root = fresh
    item = root.locator(".gb-pass[data-pass='A_AbsAbs']")
    assert item.locator(".gb-pass-counts .gb-time").inner_text().endswith(" ms")
    assert "AbsAbs_abs_abs_pattern" in item.get_attribute("title") and "4 rewrites" in item.get_attribute(
        "title"
    )
    stepper = root.locator(".gb-stepper")
    assert not stepper.is_visible(), "no pass selected: no slider"
    _click_pass(page, root, "A_AbsAbs")
    assert item.locator(".gb-pass-pattern").count() == 1, "the selected pass lists its pattern"
    assert stepper.is_visible() and root.locator(".gb-step-k").inner_text() == "\u2013 / 4"
    before = _node_ids(root, MAIN)
    assert {"n1", "n2", "n4", "n5"} <= before

    # the slider, focused, moved with the arrow keys: one rewrite per key
    slider = root.locator("input.gb-step-range")
    slider.focus()
    page.keyboard.press("ArrowRight")
    _settle(page, root)
    assert root.get_attribute("data-step") == "1" and root.locator(".gb-step-k").inner_text() == "1 / 4"
    page.wait_for_function(
        "el => el.querySelector('.gb-content').shadowRoot.querySelectorAll('svg g.node').length === 15", arg=root.locator(MAIN).element_handle()
    )
    step1 = _node_ids(root, MAIN)
    assert "n1" not in step1 and "n2" not in step1 and "n16" in step1, "rewrite 1 folded a0, b0 into one Abs"
    assert _node_ids(root, MAIN, ".gb_step_new") == {"n16"}
    assert _node_ids(root, MAIN, ".gb_step_next") == {"n4", "n5"}, "the nodes rewrite 2 replaces"
    assert "rewrite 1 of 4" in root.locator(f"{MAIN} .gb-pane-head").inner_text()
    assert "A_AbsAbs: after rewrite 1 of 4" in root.locator(".gb-status").inner_text()

    page.keyboard.press("ArrowRight")
    _settle(page, root)
    page.wait_for_function(
        "el => el.querySelector('.gb-content').shadowRoot.querySelectorAll('svg g.node').length === 14", arg=root.locator(MAIN).element_handle()
    )
    step2 = _node_ids(root, MAIN)
    assert step2 != step1 and "n17" in step2 and "n4" not in step2
    assert root.locator(".gb-step-k").inner_text() == "2 / 4"

    # the ◀ button goes back (a kept graph: no replay) and ✕ draws the snapshot again
    root.locator(".gb-step-prev").click()
    _settle(page, root)
    page.wait_for_function(
        "el => el.querySelector('.gb-content').shadowRoot.querySelectorAll('svg g.node').length === 15", arg=root.locator(MAIN).element_handle()
    )
    assert _node_ids(root, MAIN) == step1 and root.get_attribute("data-step") == "1"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    root.screenshot(path=str(ARTIFACTS / "workbench-stepper.png"))
    root.locator(".gb-step-off").click()
    _settle(page, root)
    page.wait_for_function(
        "el => el.querySelector('.gb-content').shadowRoot.querySelectorAll('svg g.node').length === 16", arg=root.locator(MAIN).element_handle()
    )
    assert _node_ids(root, MAIN) == before and root.get_attribute("data-step") == "-1"
    assert root.locator(f"{MAIN} [class*='gb_step_']").count() == 0
    assert "rewrite" not in root.locator(".gb-status").inner_text()


def test_a_fused_node_marks_its_origins_in_the_before_pane(fresh):
    page, root = fresh
    _click_pass(page, root, "B_ExpNeg")
    root.locator("select.gb-diff").select_option("pass:side")
    _settle(page, root)
    assert root.locator(f"{MAIN} .gb-pane-head").inner_text().startswith("before: ")
    # B_ExpNeg replaced n (#13) and e (#14) by Exp (#20) and Reciprocal (#21)
    assert {"n13", "n14"} <= _node_ids(root, MAIN) and {"n20", "n21"} <= _node_ids(root, SIDE)
    assert not _node_ids(root, MAIN, ".gb_prov_origin")

    root.locator(f"{SIDE} svg g.node#n20").dispatch_event("click")
    _settle(page, root)
    assert _node_ids(root, MAIN, ".gb_prov_origin") == {"n13", "n14"}
    assert _node_ids(root, SIDE, ".gb_clicked") == {"n20"}
    details = root.locator(".gb-details").inner_text()
    assert "made by B_ExpNeg" in details and "from n, e" in details, details

    # the reverse: an original node in the "before" pane marks what was made from it in the "after" pane
    root.locator(f"{MAIN} svg g.node#n13").dispatch_event("click")
    _settle(page, root)
    assert _node_ids(root, SIDE, ".gb_prov_made") == {"n20", "n21"}
    assert not _node_ids(root, MAIN, ".gb_prov_origin") and not _node_ids(root, SIDE, ".gb_clicked")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    root.screenshot(path=str(ARTIFACTS / "workbench-provenance.png"))
