"""The workbench in JupyterLab never shows stale state: one test per case, on one server and one page.

The header, the details panel and the diff panes always describe what is on screen, whatever the order in
which the kernel's answers arrive (see "The front end and what it asks" in docs/workbench.md). Each test runs
the notebook again, so it starts on a new widget (the quickstart model with the example passes). Needs what
``tests/test_browser_workbench.py`` needs.
"""

from __future__ import annotations

import pytest

from test_browser_workbench import (
    ARTIFACTS,
    ROOT,
    _click_pass,
    _luminance,
    _settle,
    fresh_widget,
    notebook_page,
)

pytestmark = pytest.mark.timeout(600)


# One JupyterLab and one page for the tests below; each test runs the notebook again, so it starts on a
# new widget (the quickstart model with the example passes).
STALE_CELL = """import gebench
from gebench.viz import Workbench
wb = Workbench(gebench.load({model!r}), passes=[{passes!r}])
wb"""


@pytest.fixture(scope="module")
def lab_page(tmp_path_factory):
    cell = STALE_CELL.format(model=str(ROOT / "assets" / "small_transformer.onnx"), passes=str(ROOT / "passes"))
    with notebook_page(tmp_path_factory.mktemp("stale"), "stale.ipynb", cell) as opened:
        yield opened


@pytest.fixture
def fresh(lab_page, request):
    """A new widget (the cell run again); fails the test on page errors or error outputs."""
    yield from fresh_widget(lab_page, request.node.name)


def _set_diff(page, root, mode: str) -> None:
    root.locator("select.gb-diff").select_option(mode)
    _settle(page, root)


def _main_nodes(root) -> int:
    return root.locator(".gb-main-pane svg g.node").count()


def test_header_follows_the_diff_dropdown(fresh):
    page, root = fresh
    _click_pass(page, root, "GebenchRemoveIdentityPass")
    _set_diff(page, root, "pass:side")
    head = root.locator(".gb-diff-head")
    assert "pass diff" in head.inner_text() and "removed" in head.inner_text()
    _set_diff(page, root, "")
    assert root.locator("select.gb-diff").input_value() == ""
    assert not head.is_visible() and head.inner_text() == ""
    assert "diff" not in root.locator(".gb-status").inner_text() + root.locator(".gb-title").inner_text()


def test_one_after_graph_only_after_rapid_diff_switches(fresh):
    page, root = fresh
    _click_pass(page, root, "GebenchRemoveIdentityPass")
    diff = root.locator("select.gb-diff")
    for mode in ("pass:side", "pass:overlay", "stage:side", "pass:side", "candidate:side", "pass:side"):
        diff.select_option(mode)  # no waiting: answers arrive while newer requests are out
    _settle(page, root)
    assert root.get_attribute("data-diff") == "pass:side"
    assert root.locator(".gb-side-pane svg").count() == 1 and root.locator(".gb-main-pane svg").count() == 1
    assert _main_nodes(root) == int(root.get_attribute("data-drawn"))
    assert root.locator(".gb-side-pane svg g.node").count() == int(root.get_attribute("data-side-drawn"))


def test_another_pass_clears_the_previous_candidates_details(fresh):
    page, root = fresh
    _click_pass(page, root, "GebenchMulOnePass")
    root.locator(".gb-cand").nth(1).click()
    _settle(page, root)
    assert "candidate #" in root.locator(".gb-details").inner_text()
    assert root.locator(".gb-side-pane").is_visible()  # the candidate's pattern
    _click_pass(page, root, "GebenchSwishPass")
    assert "candidate #" not in root.locator(".gb-details").inner_text()
    assert root.locator(".gb-cand.gb-cand-sel").count() == 0 and not root.locator(".gb-side-pane").is_visible()
    assert root.locator(".gb-main-pane svg g.node.gb_sel").count() == 0


def test_run_clears_the_previous_candidates_details(fresh):
    page, root = fresh
    _click_pass(page, root, "GebenchMulOnePass")
    root.locator(".gb-cand").first.click()
    _settle(page, root)
    assert "candidate #" in root.locator(".gb-details").inner_text()
    root.locator("button[data-action='run']").click()
    _settle(page, root)
    page.wait_for_function("el => el.textContent.includes('gained')", arg=root.locator(".gb-status").element_handle())
    assert "candidate #" not in root.locator(".gb-details").inner_text()
    assert root.locator(".gb-cand.gb-cand-sel").count() == 0
    assert root.locator(".gb-main-pane svg g.node.gb_sel").count() == 0


def test_no_diff_after_an_overlay_restores_the_drawing(fresh):
    page, root = fresh
    plain = _main_nodes(root)
    _click_pass(page, root, "GebenchRemoveIdentityPass")
    _set_diff(page, root, "pass:overlay")
    assert root.locator(".gb-main-pane svg g.node.gb_diff_removed").count() > 0
    _set_diff(page, root, "")
    assert _main_nodes(root) == plain == int(root.get_attribute("data-drawn"))
    assert root.locator(".gb-main-pane [class*='gb_diff_']").count() == 0


def test_stage_diff_follows_the_selected_pass(fresh):
    page, root = fresh
    _click_pass(page, root, "GebenchRemoveIdentityPass")  # an AfterInferShape pass
    _set_diff(page, root, "stage:side")
    head = root.locator(".gb-diff-head")
    assert "RunCustomPassBeforeInfershape \u2192 RunCustomPass_AfterInferShape" in head.inner_text()
    _click_pass(page, root, "GebenchMulOnePass")  # a BeforeInferShape pass
    assert "PreRunBegin \u2192 RunCustomPassBeforeInfershape" in head.inner_text()
    assert root.locator(".gb-main-pane .gb-pane-head").inner_text() == "before: PreRunBegin"


def test_side_by_side_panes_are_labelled_and_pan_and_zoom_together(fresh):
    page, root = fresh
    _click_pass(page, root, "GebenchRemoveIdentityPass")
    _set_diff(page, root, "pass:side")
    assert root.locator(".gb-main-pane .gb-pane-head").inner_text().startswith("before: ")
    assert root.locator(".gb-side-pane .gb-pane-head").inner_text().startswith("after: ")
    main, side = root.locator(".gb-main-pane > .gb-content"), root.locator(".gb-side-pane > .gb-content")
    root.locator(".gb-main-pane").hover()
    page.mouse.wheel(0, -300)
    page.wait_for_timeout(100)
    assert main.get_attribute("style") == side.get_attribute("style")
    box = root.locator(".gb-side-pane").bounding_box()
    page.mouse.move(box["x"] + 40, box["y"] + 60)
    page.mouse.down()
    page.mouse.move(box["x"] + 140, box["y"] + 120, steps=4)
    page.mouse.up()
    assert "translate(" in main.get_attribute("style")
    assert main.get_attribute("style") == side.get_attribute("style")


def _set_lab_theme(page, name: str, light: bool) -> None:
    page.click(".lm-MenuBar-item:has-text('Settings')")
    page.click(".lm-Menu-item:has-text('Theme')")
    page.click(f".lm-Menu-item:has-text('{name}') >> nth=0")
    page.wait_for_selector(f"body[data-jp-theme-light='{str(light).lower()}']", state="attached", timeout=20_000)
    page.wait_for_timeout(300)


def test_dark_theme_is_respected(fresh):
    page, root = fresh
    _click_pass(page, root, "GebenchRemoveIdentityPass")
    replaced = root.locator(".gb-main-pane svg g.node.gb_st_replaced polygon").first
    light_bg = root.evaluate("el => getComputedStyle(el).backgroundColor")
    light_fill = replaced.evaluate("el => getComputedStyle(el).fill")
    assert _luminance(light_bg) > 0.8
    _set_lab_theme(page, "JupyterLab Dark", light=False)
    try:
        dark_bg = root.evaluate("el => getComputedStyle(el).backgroundColor")
        text = root.locator(".gb-title").evaluate("el => getComputedStyle(el).color")
        fill = replaced.evaluate("el => getComputedStyle(el).fill")
        assert _luminance(dark_bg) < 0.3 and _luminance(text) > 0.6, (dark_bg, text)
        assert fill != light_fill and _luminance(fill) < 0.5, fill  # status fills darken too
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        root.screenshot(path=str(ARTIFACTS / "workbench-dark.png"))
    finally:
        _set_lab_theme(page, "JupyterLab Light", light=True)
