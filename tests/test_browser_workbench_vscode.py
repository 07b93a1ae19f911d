"""The workbench's front end under VS Code's notebook themes, in headless Chromium without JupyterLab.

VS Code renders notebook outputs in a webview that defines ``--vscode-*`` colour variables and marks the body
with ``data-vscode-theme-kind`` (``vscode-light``, ``vscode-dark``, ``vscode-high-contrast``); no ``--jp-*``
variable exists there. JupyterLab cannot stand in for that page (its own theme variables win), so these tests
load the widget's real ES module and stylesheet into such a page, served from a temporary folder, and render it
the way anywidget does (the stylesheet added to the page, ``render({model, el})``) with a model that answers ``get`` from the state of a real
:class:`~gebench.viz.Workbench` (the quickstart model with the example passes, one pass selected). What is
checked is what a user would see: the widget's background, text and status colours follow the theme kind.

Needs ``/usr/bin/chromium`` (``scripts/install_browser_deps.sh``).
"""

from __future__ import annotations

import base64
import contextlib
import functools
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import gebench
from gebench.viz import Workbench
from test_browser_workbench import ARTIFACTS, CHROMIUM, CHROMIUM_FLAGS, ROOT, _luminance

pytestmark = pytest.mark.timeout(300)

STATIC = ROOT / "gebench" / "viz" / "static"
PASS = "GebenchRemoveIdentityPass"

#: per theme kind: the variables VS Code's default theme of that kind defines (a subset the widget reads)
VSCODE_VARIABLES = {
    "vscode-light": {"--vscode-editor-background": "#ffffff", "--vscode-editor-foreground": "#3b3b3b",
                     "--vscode-sideBar-background": "#f8f8f8"},
    "vscode-dark": {"--vscode-editor-background": "#1f1f1f", "--vscode-editor-foreground": "#cccccc",
                    "--vscode-sideBar-background": "#181818"},
    "vscode-high-contrast": {"--vscode-editor-background": "#000000", "--vscode-editor-foreground": "#ffffff",
                             "--vscode-sideBar-background": "#000000"},
}

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><style>body {{ margin: 0; {variables} }}</style>
<link rel="stylesheet" href="./workbench.css"><link rel="icon" href="data:,"></head>
<body data-vscode-theme-kind="{kind}" class="{kind}">
<div id="host" style="width: 1100px; height: 720px"></div>
<script type="module">
import widget from "./workbench.js";
const state = await (await fetch("./state.json")).json();
for (const [key, value] of Object.entries(state)) {{
  if (value && typeof value === "object" && "__bytes__" in value) {{
    const bytes = Uint8Array.from(atob(value.__bytes__), (c) => c.charCodeAt(0));
    state[key] = new DataView(bytes.buffer);
  }}
}}
const listeners = {{}};
window.sent = [];
const model = {{
  get: (key) => state[key],
  set: (key, value) => {{ state[key] = value; }},
  save_changes: () => {{}},
  on: (event, callback) => {{ (listeners[event] ||= []).push(callback); }},
  off: () => {{}},
  send: (message) => {{ window.sent.push(message); }},
}};
widget.render({{ model, el: document.getElementById("host") }});
document.body.dataset.rendered = "1";
</script></body></html>
"""


def _jsonable(state: dict[str, Any]) -> dict[str, Any]:
    """The widget's synced state as JSON; bytes (the gzipped drawings) as ``{"__bytes__": base64}``."""
    out: dict[str, Any] = {}
    for key, value in state.items():
        if isinstance(value, (bytes, bytearray, memoryview)):
            out[key] = {"__bytes__": base64.b64encode(bytes(value)).decode("ascii")}
        else:
            out[key] = value
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[str]:
    """A folder served over HTTP with the widget's module, its state (a pass selected) and one page per theme
    kind; yields the base URL."""
    folder = tmp_path_factory.mktemp("vscode")
    wb = Workbench(gebench.load(ROOT / "assets" / "small_transformer.onnx"), passes=[str(ROOT / "passes")])
    wb.select(pass_name=PASS)
    state = _jsonable(wb.get_state())
    state["_css"] = (STATIC / "workbench.css").read_text(encoding="utf-8")
    (folder / "state.json").write_text(json.dumps(state), encoding="utf-8")
    for name in ("workbench.js", "workbench.css"):  # anywidget loads the module and adds the stylesheet to the page
        (folder / name).write_text((STATIC / name).read_text(encoding="utf-8"), encoding="utf-8")
    for kind, variables in VSCODE_VARIABLES.items():
        css = " ".join(f"{name}: {value};" for name, value in variables.items())
        (folder / f"{kind}.html").write_text(PAGE.format(kind=kind, variables=css), encoding="utf-8")
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        return


@pytest.fixture(scope="module")
def browser():
    playwright = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run scripts/install_browser_deps.sh")
    with playwright.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            yield b
        finally:
            b.close()


@contextlib.contextmanager
def _themed_page(browser, site: str, kind: str) -> Iterator[Any]:
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    try:
        page.goto(f"{site}/{kind}.html")
        page.wait_for_selector("body[data-rendered='1']", timeout=30_000)
        # the drawing is inflated asynchronously; the selected pass's replaced nodes carry its status class
        page.locator(".gb-main-pane svg g.node.gb_st_replaced polygon").first.wait_for(state="attached",
                                                                                       timeout=30_000)
        yield page
        assert not errors, errors
    finally:
        page.close()


def _colours(page) -> dict[str, str]:
    root = page.locator(".gb-root")
    fill = page.locator(".gb-main-pane svg g.node.gb_st_replaced polygon").first
    return {"background": root.evaluate("el => getComputedStyle(el).backgroundColor"),
            "text": page.locator(".gb-title").evaluate("el => getComputedStyle(el).color"),
            "status fill": fill.evaluate("el => getComputedStyle(el).fill")}


def test_vscode_light_theme_draws_on_a_light_background(browser, site):
    with _themed_page(browser, site, "vscode-light") as page:
        colours = _colours(page)
        assert _luminance(colours["background"]) > 0.8, colours
        assert _luminance(colours["text"]) < 0.4, colours


@pytest.mark.parametrize("kind", ["vscode-dark", "vscode-high-contrast"])
def test_vscode_dark_themes_turn_the_widget_dark(browser, site, kind):
    with _themed_page(browser, site, "vscode-light") as page:
        light = _colours(page)
    with _themed_page(browser, site, kind) as page:
        dark = _colours(page)
        # the page's own editor background, not the widget's light default
        expected_bg = VSCODE_VARIABLES[kind]["--vscode-editor-background"]
        assert _luminance(dark["background"]) < 0.2, dark
        assert dark["background"] == _rgb(expected_bg), (dark, expected_bg)
        assert _luminance(dark["text"]) > 0.6, dark
        assert dark["status fill"] != light["status fill"] and _luminance(dark["status fill"]) < 0.5, (dark, light)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.locator(".gb-root").screenshot(path=str(ARTIFACTS / f"workbench-{kind}.png"))


def _rgb(hex_colour: str) -> str:
    value = hex_colour.lstrip("#")
    r, g, b = (int(value[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgb({r}, {g}, {b})"
