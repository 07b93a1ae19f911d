"""The workbench's front end: an anywidget ES module and its stylesheet, shipped as package files.

``static/workbench.js`` and ``static/workbench.css`` are plain files (checked by eslint, see
``eslint.config.js`` at the repository root) that anywidget loads as they are: there is no build step.
The front end only draws what the kernel sends: a gzipped graphviz SVG (inflated in the browser), a map
``element id -> CSS classes`` for highlighting, the pass list, the candidate table (columnar, virtualized)
and an HTML details panel. Highlighting restyles existing SVG elements; it never asks for a new layout.
User actions come back as trait changes or messages ``{"action": ..., "seq": n}``; answers that carry an
older ``seq`` than the latest request of their kind are dropped by the front end.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["CSS", "CSS_PATH", "ESM_PATH", "STATIC"]

#: the folder holding the front end's files (package data)
STATIC = Path(__file__).resolve().parent / "static"
#: the ES module anywidget loads (``Workbench._esm``)
ESM_PATH = STATIC / "workbench.js"
#: the stylesheet anywidget loads (``Workbench._css``)
CSS_PATH = STATIC / "workbench.css"
#: the stylesheet's text (the SVG export embeds its ``g.`` rules)
CSS = CSS_PATH.read_text(encoding="utf-8")
