"""The workbench on a 100k-node model in JupyterLab, driven through the page: the first view, expanding a layer,
a candidate of the pass, stepping through its rewrites and exporting its repro bundle.

The notebook builds the synthetic transformer of ``bench/_make_model.py`` at 100,000 ONNX nodes (5,263 layers, about
168k IR nodes) into a temporary folder, compiles it with ``bench/gemm_fusion_pass.py`` (MatMul + Add -> GEMM, six
rewrites a layer) and opens ``Workbench(run)``. Everything after that is done with clicks and keys in the page: a
group box is expanded in place, then a box inside its frame, down to a layer's ops (nested frames; the level stays the root), the pass and its first replaced
candidate are clicked (its focused view is drawn), the rewrite slider is moved with the arrow keys and its ◀ button
(each step draws another graph), and the toolbar's Repro button writes the candidate's bundle, whose files are then
checked on disk. Any page error or error output (whatever its MIME type) fails the test.

Screenshots of each step go to ``$GEBENCH_TEST_ARTIFACTS`` (default ``<tmp>/gebench-test-artifacts``); with
``GEBENCH_UPDATE_DOC_IMAGES=1`` they are also copied to ``docs/images/`` (``workbench-large-*.png``). Needs what
``tests/test_browser_workbench.py`` needs; about 1.5 minutes on two cores, most of it building, loading and compiling
the model in the kernel.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gebench.viz._lab import LabServer
from test_browser_workbench import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_FLAGS,
    DRAWING,
    PANEL,
    ROOT,
    _assert_no_error_output,
    _open_notebook,
    _run_all_cells,
    _settle,
    _wait_for_widget,
    _watch_console,
)

pytestmark = pytest.mark.timeout(600)

sys.path.insert(0, str(ROOT / "bench"))
import _make_model as mm  # noqa: E402 - the bench folder is not a package

ONNX_NODES = 100_000
LAYERS = mm.layers_for(ONNX_NODES)
PASS = "BenchFuseMatMulAddToGemm"
REWRITES = LAYERS * mm.SITES_PER_LAYER  # every MatMul + Add site of every layer is replaced
SHOTS = ("overview", "layer", "candidate", "step", "repro")

COMPILE_CELL = """import sys
sys.path.insert(0, {bench!r})
import _make_model as mm
import onnx
import gebench
onnx.save(mm.make(mm.layers_for({nodes}), mm.hidden_for({nodes})), {model!r})
run = gebench.compile(gebench.load({model!r}), passes=[{gemm_pass!r}])
print(len(run.graph.ir), "IR nodes,", run.status)"""

WIDGET_CELL = """from gebench.viz import Workbench
wb = Workbench(run, export_dir={exports!r})
wb"""


#: the id of the top-most group box drawn inside the frame with id ``frame`` (anywhere when ``frame`` is empty)
FIRST_BOX_IN_FRAME = f"""frame => {{
  const svg = {DRAWING}('.gb-main-pane').querySelector('svg');
  const inside = frame ? svg.querySelector('g#' + frame).getBBox() : null;
  const boxes = [...svg.querySelectorAll('g.node.gb_group')].map(g => [g.id, g.getBBox()]).filter(([, b]) =>
    !inside || (b.x >= inside.x && b.y >= inside.y && b.x + b.width <= inside.x + inside.width
                && b.y + b.height <= inside.y + inside.height));
  boxes.sort((a, b) => a[1].y - b[1].y || a[1].x - b[1].x);
  return boxes.length ? boxes[0][0] : null;
}}"""


def _node_ids(root, cls: str = "") -> set[str]:
    return set(root.locator(f".gb-main-pane svg g.node{cls}").evaluate_all("els => els.map(e => e.id)"))


def _crumbs(root) -> list[str]:
    return root.locator(".gb-crumbs .gb-crumb").all_inner_texts()


def _shot(root, name: str) -> None:
    root.screenshot(path=str(ARTIFACTS / f"workbench-large-{name}.png"))


def test_100k_model_expand_candidate_rewrites_and_repro(tmp_path: Path) -> None:
    assert Path(CHROMIUM).exists(), "Chromium is missing: run scripts/install_browser_deps.sh"
    import nbformat
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for name in SHOTS:
        (ARTIFACTS / f"workbench-large-{name}.png").unlink(missing_ok=True)
    exports = tmp_path / "exports"
    book = nbformat.v4.new_notebook()
    book.cells = [
        nbformat.v4.new_code_cell(
            COMPILE_CELL.format(
                bench=str(ROOT / "bench"),
                nodes=ONNX_NODES,
                model=str(tmp_path / "transformer_100k.onnx"),
                gemm_pass=str(ROOT / "bench" / "gemm_fusion_pass.py"),
            )
        ),
        nbformat.v4.new_code_cell(WIDGET_CELL.format(exports=str(exports))),
    ]
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(book, tmp_path / "large.ipynb")
    with LabServer(tmp_path) as lab, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1500, "height": 1100})
        page.set_default_timeout(60_000)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        console = _watch_console(page)
        try:
            _open_notebook(page, lab, tmp_path / "large.ipynb")
            _run_all_cells(page)

            # the first view: the root level of the hierarchy, group boxes only
            _wait_for_widget(page, ".gb-root svg g.node.gb_group", 300_000, console)
            last_prompt = page.locator(f"{PANEL} .jp-CodeCell .jp-InputPrompt").last
            page.wait_for_function(
                "el => /\\[\\d+\\]/.test(el.textContent)", arg=last_prompt.element_handle()
            )
            _assert_no_error_output(page)
            out = page.locator(f"{PANEL} .jp-CodeCell").first.locator(".jp-OutputArea-output").inner_text()
            assert "IR nodes, SUCCESS" in out and int(out.split()[0]) > 150_000, out
            root = page.locator(f"{PANEL} .gb-root").first
            _settle(page, root)
            boxes = _node_ids(root)
            assert 2 <= len(boxes) <= 64 and all(i.startswith("g") for i in boxes), boxes
            assert _crumbs(root) == ["model"]
            assert root.locator(".gb-main-pane svg g.node.gb_group").first.is_visible()
            _shot(root, "overview")

            # expand in place: click a group box, then the first box inside its frame, and so on, until the frame
            # of a layer holds its ops; the level stays the root (one breadcrumb), each frame around its items
            frame = ""
            for _depth in range(1, 7):
                box_id = page.evaluate(FIRST_BOX_IN_FRAME, frame)
                assert box_id, f"no group box inside frame {frame!r}"
                serial = root.get_attribute("data-svg-serial")
                root.locator(f".gb-main-pane svg g#{box_id}").click()
                page.wait_for_function(
                    "([el, s]) => el.dataset.svgSerial !== s", arg=[root.element_handle(), serial]
                )
                _settle(page, root)
                frame = "x" + box_id[1:]
                assert _crumbs(root) == ["model"]
                assert box_id not in _node_ids(root)
                title = root.locator(f".gb-main-pane svg g#{frame} > text").first.text_content()
                if re.match(r"l\d+:", title):  # a layer (above it: ranges of layers, "x … l16")
                    break
            else:
                raise AssertionError(f"no layer reached after {_depth} expansions: {title}")
            assert title.startswith("l0:"), title  # the first box of each frame leads to the first layer
            assert root.locator(".gb-main-pane svg g.cluster.gb_cluster").count() == _depth
            ops = root.locator(
                ".gb-main-pane svg g.node.gb_op_BatchMatMulV2, .gb-main-pane svg g.node.gb_op_Softmax,"
                " .gb-main-pane svg g.node.gb_op_SoftmaxV2, .gb-main-pane svg g.node.gb_op_Relu"
            )
            assert ops.count() >= 3 and ops.first.is_visible()
            _shot(root, "layer")

            # select the pass: the level's boxes are coloured and counted; then its first replaced candidate
            root.locator(f".gb-pass[data-pass='{PASS}']").click()
            _settle(page, root)
            page.wait_for_function(
                "el => el.classList.contains('gb-pass-sel')",
                arg=root.locator(f".gb-pass[data-pass='{PASS}']").element_handle(),
            )
            assert root.locator(".gb-main-pane svg text.gb-gcount").count() >= 1
            assert f"{REWRITES} repl." in root.locator(f".gb-pass[data-pass='{PASS}']").inner_text()
            row = root.locator(".gb-cand").filter(has=page.locator(".gb_st_replaced")).first
            index = row.get_attribute("data-index")
            serial = root.get_attribute("data-svg-serial")
            row.click()
            _settle(page, root)
            page.wait_for_function(
                "([el, s]) => el.dataset.svgSerial !== s", arg=[root.element_handle(), serial]
            )
            details = root.locator(".gb-details")
            page.wait_for_function(
                "el => el.textContent.includes('candidate #')", arg=details.element_handle()
            )
            text = details.inner_text()
            assert f"candidate #{index}" in text and "replaced" in text and PASS in text, text
            focused = _node_ids(root)
            selected = _node_ids(root, ".gb_sel")
            assert len(selected) == 2 and selected <= focused, selected  # the MatMul and the Add it fuses
            assert len(focused) < 200 and all(i.startswith("n") for i in focused), (
                "a focused view, not a level"
            )
            # the status line describes the focused view, no longer the layer it replaced
            status_text = root.locator(".gb-status").inner_text()
            assert f"focused view around candidate #{index}" in status_text, status_text
            assert "nodes of its own" not in status_text, status_text
            # F (fit the selection) brings both of the candidate's nodes into the pane
            root.focus()
            page.keyboard.press("F")
            page.wait_for_timeout(300)
            pane = root.locator(".gb-main-pane").bounding_box()
            for box in root.locator(".gb-main-pane svg g.node.gb_sel").all():
                b = box.bounding_box()
                assert pane["x"] <= b["x"] and b["x"] + b["width"] <= pane["x"] + pane["width"], (b, pane)
                assert pane["y"] <= b["y"] and b["y"] + b["height"] <= pane["y"] + pane["height"], (b, pane)
            _shot(root, "candidate")

            # step through the pass's rewrites: arrow keys on the slider, then its ◀ button
            stepper = root.locator(".gb-stepper")
            assert stepper.is_visible() and root.locator(".gb-step-k").inner_text() == f"\u2013 / {REWRITES}"
            slider = root.locator("input.gb-step-range")
            drawn: dict[int, tuple[set[str], set[str], set[str]]] = {}
            for k in (1, 2):
                slider.focus()
                page.keyboard.press("ArrowRight")
                page.wait_for_function(
                    f"el => el.dataset.step === '{k}'", arg=root.element_handle(), timeout=120_000
                )
                _settle(page, root)
                assert root.locator(".gb-step-k").inner_text() == f"{k} / {REWRITES}"
                assert (
                    f"rewrite {k} of {REWRITES}" in root.locator(".gb-main-pane .gb-pane-head").inner_text()
                )
                made, targets = _node_ids(root, ".gb_step_new"), _node_ids(root, ".gb_step_next")
                assert made and targets, "rewrite k's nodes and rewrite k+1's targets are marked"
                drawn[k] = (_node_ids(root), made, targets)
            assert drawn[1][0] != focused and drawn[2][0] != drawn[1][0], "each step draws another graph"
            assert drawn[2][1].isdisjoint(drawn[1][1]), "rewrite 2 made other nodes than rewrite 1"
            assert drawn[1][2].isdisjoint(drawn[2][0]), "rewrite 2 replaced the nodes marked as its targets"
            _shot(root, "step")
            root.locator(".gb-step-prev").click()
            page.wait_for_function(
                "el => el.dataset.step === '1'", arg=root.element_handle(), timeout=120_000
            )
            _settle(page, root)
            again = (_node_ids(root), _node_ids(root, ".gb_step_new"), _node_ids(root, ".gb_step_next"))
            assert again == drawn[1], "back to rewrite 1: the same drawing"

            # the repro bundle of the selected candidate, from the toolbar's Repro button
            repro = root.locator("button[data-action='export_repro']")
            assert repro.is_enabled()
            repro.click()
            status = root.locator(".gb-status")
            page.wait_for_function(
                "el => el.textContent.includes('wrote the repro bundle')",
                arg=status.element_handle(),
                timeout=120_000,
            )
            _settle(page, root)
            bundle = exports / f"repro_{index}"
            assert f"candidate #{index}" in status.inner_text() and str(bundle) in status.inner_text()
            _shot(root, "repro")
            _assert_no_error_output(page)
        except Exception:
            page.screenshot(path=str(ARTIFACTS / "workbench-large-failure.png"))
            raise
        finally:
            browser.close()
    assert not errors, f"JavaScript errors in the page: {errors}"

    # the files the bundle promises (docs/workbench.md, "Repro bundle"), describing the candidate clicked
    promised = [
        "subgraph_ge_proto.txt",
        "subgraph.onnx",
        "passes/gemm_fusion_pass.py",
        "fusion_switch.json",
        "candidate.json",
        "repro.sh",
        "atc.sh",
        "README.md",
    ]
    for name in promised:
        assert (bundle / name).is_file() and (bundle / name).stat().st_size > 0, name
    record = json.loads((bundle / "candidate.json").read_text())
    assert record["pass_name"] == PASS and record["status"] == "REPLACED", record
    assert sorted(record["target_node_names"]) == sorted(f"l0_q_{op}" for op in ("MatMul", "Add")), record
    import onnx

    sub = onnx.load(str(bundle / "subgraph.onnx"))
    assert sorted(n.op_type for n in sub.graph.node) == ["Add", "MatMul"], (
        "the graph the pass saw: MatMul + Add"
    )
    atc = (bundle / "atc.sh").read_text()
    assert "ASCEND_GE_PY_PASS_PATH" in atc and "DUMP_GE_GRAPH=1" in atc and "atc " in atc
    switch = json.loads((bundle / "fusion_switch.json").read_text())["Switch"]["GraphFusion"]
    assert switch == {"ALL": "off", PASS: "on"}, switch
    # repro.sh reproduces the verdict on the subgraph
    assert (
        "compile subgraph_ge_proto.txt --passes passes/gemm_fusion_pass.py"
        in (bundle / "repro.sh").read_text()
    )
    done = subprocess.run(
        ["bash", str(bundle / "repro.sh")],
        env={**os.environ, "GEBENCH": f"{sys.executable} -m gebench"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((bundle / "report.json").read_text())["summary"][PASS]
    assert summary["candidates"] == 1 and summary["replaced"] == 1, summary

    if os.environ.get("GEBENCH_UPDATE_DOC_IMAGES") == "1":  # tests leave tracked files alone unless asked
        for name in SHOTS:
            shutil.copy(ARTIFACTS / f"workbench-large-{name}.png", ROOT / "docs" / "images")
