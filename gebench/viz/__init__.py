"""Drawing gebench graphs and the Jupyter workbench.

Public surface: :class:`Workbench` (the widget), :func:`build_view` / :func:`view_to_dot` /
:func:`render_svg` (graph -> DOT -> SVG with stable element ids), :func:`diff_graphs`, :func:`k_hop`,
:class:`LayoutCache`. ``graphviz`` and ``ipywidgets``/``anywidget`` are used only inside this package.
"""

from ._diff import GraphDiff, diff_graphs
from ._dot import (
    GraphView,
    LayoutError,
    LayoutTimeout,
    build_view,
    edge_element_id,
    node_element_id,
    render_svg,
    view_to_dot,
)
from ._focus import k_hop, search_nodes
from ._layout_cache import LayoutCache

__all__ = [
    "GraphDiff",
    "GraphView",
    "LayoutCache",
    "LayoutError",
    "LayoutTimeout",
    "Workbench",
    "build_view",
    "diff_graphs",
    "edge_element_id",
    "k_hop",
    "node_element_id",
    "render_svg",
    "search_nodes",
    "view_to_dot",
]


def __getattr__(name: str):
    # The widget pulls in anywidget/ipywidgets; load it only when asked for.
    if name == "Workbench":
        from ._workbench import Workbench

        return Workbench
    raise AttributeError(f"module 'gebench.viz' has no attribute {name!r}")

