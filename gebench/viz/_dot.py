"""Graph views and their DOT/SVG rendering with stable element ids and CSS classes.

A :class:`GraphView` is a compact, read-only picture of (part of) an :class:`~gebench.ir.Graph`: which
nodes are drawn, which Const nodes were folded into their consumers, and the edges between drawn nodes
with their dtype/shape labels. Building a view never mutates the graph.

Every drawn node becomes an SVG ``<g id="n<ID>" class="node gb_node gb_op_<OpType>">`` and every edge a
``<g id="e<SRC>_<SP>_<DST>_<DP>" class="edge gb_edge">`` (control edges ``c<SRC>_<DST>``), so the front
end highlights candidates by adding CSS classes to existing elements and never lays the graph out again.
"""

from __future__ import annotations

import gzip
import html
import logging
import re
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field

from gebench import ir

__all__ = [
    "GraphView",
    "LayoutError",
    "LayoutTimeout",
    "ViewEdge",
    "ViewNode",
    "build_view",
    "compress_svg",
    "dtype_short",
    "edge_element_id",
    "node_element_id",
    "render_svg",
    "tensor_label",
    "view_to_dot",
]

_log = logging.getLogger(__name__)

#: Op types folded into their consumers when a view folds constants.
CONST_OP_TYPES = frozenset({"Const", "Constant"})

_DTYPE_SHORT = {
    "DT_FLOAT": "f32", "DT_FLOAT16": "f16", "DT_BF16": "bf16", "DT_DOUBLE": "f64",
    "DT_INT8": "i8", "DT_INT16": "i16", "DT_INT32": "i32", "DT_INT64": "i64",
    "DT_UINT8": "u8", "DT_UINT16": "u16", "DT_UINT32": "u32", "DT_UINT64": "u64",
    "DT_BOOL": "bool", "DT_STRING": "str", "DT_COMPLEX64": "c64", "DT_COMPLEX128": "c128",
    "DT_UNDEFINED": "?",
}

_CLASS_SAFE = re.compile(r"[^A-Za-z0-9_]")
_LABEL_MAX = 28


class LayoutError(RuntimeError):
    """graphviz could not lay out a view (the message carries graphviz's own error text)."""


class LayoutTimeout(LayoutError):
    """The layout took longer than its time limit; show a smaller (focused) view instead."""


def dtype_short(dtype: ir.DataType) -> str:
    """A short dtype name for labels: ``DT_FLOAT`` -> ``f32``."""
    name = ir.DataType(dtype).name
    return _DTYPE_SHORT.get(name, name.removeprefix("DT_").lower())


def tensor_label(desc: ir.TensorDesc) -> str:
    """``f32[1,3,224,224]``; ``?`` dims print as ``-1``, unknown rank as ``[*]``."""
    if desc.shape == (ir.UNKNOWN_RANK,):
        dims = "*"
    else:
        dims = ",".join(str(d) for d in desc.shape)
    return f"{dtype_short(desc.dtype)}[{dims}]"


def node_element_id(node_id: int) -> str:
    """The SVG element id of a drawn node."""
    return f"n{node_id}"


def edge_element_id(src: int, src_port: int, dst: int, dst_port: int) -> str:
    """The SVG element id of a drawn data edge."""
    return f"e{src}_{src_port}_{dst}_{dst_port}"


@dataclass(frozen=True)
class ViewNode:
    """A drawn node: ids, names and how many Const producers were folded into it.

    ``element`` is the SVG element id (and DOT node name) when it is not the view's prefix plus ``id``: a group
    box of a hierarchy level (``g<group id>``, with a negative ``id``) drawn beside graph nodes.
    """

    id: int
    name: str
    op_type: str
    folded_consts: int = 0
    hidden_neighbours: int = 0
    element: str = ""
    #: the group whose open frame holds this node (``GraphView.clusters``); -1 outside every frame
    cluster: int = -1


@dataclass(frozen=True)
class ViewEdge:
    """A drawn edge; ``src_port == -1`` marks a control edge."""

    src: int
    src_port: int
    dst: int
    dst_port: int
    label: str

    @property
    def element_id(self) -> str:
        if self.src_port == -2:
            return f"ge{self.src}_{self.dst}"
        if self.src_port < 0:
            return f"c{self.src}_{self.dst}"
        return edge_element_id(self.src, self.src_port, self.dst, self.dst_port)


@dataclass
class GraphView:
    """What one drawing shows. ``element_of`` maps every represented node id (folded Consts included)
    to the SVG element id that stands for it."""

    graph_name: str
    nodes: list[ViewNode]
    edges: list[ViewEdge]
    element_of: dict[int, str] = field(default_factory=dict)
    total_nodes: int = 0
    edge_labels: bool = True
    focused: bool = False
    #: SVG id prefix of drawn nodes: ``n`` (graph nodes) or ``g`` (overview groups).
    element_prefix: str = "n"
    #: For an overview: group id -> member node ids.
    groups: dict[int, list[int]] = field(default_factory=dict)
    #: For a level of a hierarchy (:mod:`._hierarchy`): the id of the group whose content is drawn.
    level: int | None = None
    #: Groups of a level expanded in place, drawn as frames around their items: group id -> (id of the frame
    #: holding it, -1 for none; frame label). Parents come before their children.
    clusters: dict[int, tuple[int, str]] = field(default_factory=dict)
    #: The groups expanded in place (``clusters``' keys, in the order they were opened).
    expanded: tuple[int, ...] = ()

    @property
    def overview(self) -> bool:
        """A grouped view (a whole-model overview, or one level of a hierarchy): boxes stand for many nodes."""
        return self.element_prefix == "g" or self.level is not None

    @property
    def node_ids(self) -> set[int]:
        return {n.id for n in self.nodes}

    def elements_for(self, node_ids: Iterable[int]) -> list[str]:
        """Element ids standing for ``node_ids`` (absent ids are skipped, duplicates merged, order kept)."""
        seen: dict[str, None] = {}
        for nid in node_ids:
            el = self.element_of.get(nid)
            if el is not None:
                seen[el] = None
        return list(seen)


def build_view(
    graph: ir.Graph,
    *,
    node_ids: Iterable[int] | None = None,
    fold_consts: bool | None = None,
    edge_labels: bool | None = None,
    fold_threshold: int = 150,
    label_threshold: int = 400,
) -> GraphView:
    """Describe what to draw for ``graph`` (or only the nodes ``node_ids``). O(n + e); read-only.

    Args:
        graph: the graph; never mutated.
        node_ids: restrict the view to these nodes (a focused view); edges to nodes outside are dropped
            and counted in ``ViewNode.hidden_neighbours``.
        fold_consts: hide Const/Constant nodes and count them on their consumers. ``None`` folds when
            the view has more than ``fold_threshold`` nodes (constants make dot layouts explode).
        edge_labels: put dtype/shape on edges. ``None`` labels views of at most ``label_threshold`` drawn
            nodes (edge labels cost layout time).
    """
    if node_ids is None:
        chosen = graph.nodes()
        focused = False
    else:
        # O(selection log selection): a focused view of a huge graph never walks the whole graph
        wanted = {i for i in node_ids if graph.has_node_id(i)}
        chosen = sorted((graph.node(i) for i in wanted), key=graph.position)
        focused = True
    if fold_consts is None:
        fold_consts = len(chosen) > fold_threshold
    chosen_ids = {n.id for n in chosen}
    folded: dict[int, int] = {}
    drawn: list[ir.Node] = []
    for node in chosen:
        if fold_consts and node.op_type in CONST_OP_TYPES:
            consumers = [c for _, c, _ in graph.all_uses(node) if c.id in chosen_ids and c.op_type not in CONST_OP_TYPES]
            if consumers:
                folded[node.id] = consumers[0].id
                continue
        drawn.append(node)
    drawn_ids = {n.id for n in drawn}
    if edge_labels is None:
        edge_labels = len(drawn) <= label_threshold
    fold_count: dict[int, int] = {}
    for target in folded.values():
        fold_count[target] = fold_count.get(target, 0) + 1
    hidden: dict[int, int] = {}
    edges: list[ViewEdge] = []
    for src, sp, dst, dp in (graph.data_edges() if not focused else _edges_touching(graph, chosen)):
        s_in, d_in = src.id in drawn_ids, dst.id in drawn_ids
        if s_in and d_in:
            edges.append(ViewEdge(src.id, sp, dst.id, dp, tensor_label(src.outputs[sp]) if edge_labels else ""))
        elif focused and (s_in or d_in) and src.id not in folded:
            inside = src.id if s_in else dst.id
            hidden[inside] = hidden.get(inside, 0) + 1
    if focused:
        ctrl = [(u, v) for u in drawn for v in graph.control_successors(u)]
    else:
        ctrl = graph.control_edges()
    for src, dst in ctrl:
        if src.id in drawn_ids and dst.id in drawn_ids:
            edges.append(ViewEdge(src.id, -1, dst.id, -1, ""))
    view_nodes = [ViewNode(n.id, n.name, n.op_type, fold_count.get(n.id, 0), hidden.get(n.id, 0)) for n in drawn]
    element_of = {n.id: node_element_id(n.id) for n in drawn}
    element_of.update({cid: node_element_id(target) for cid, target in folded.items()})
    return GraphView(graph.name, view_nodes, edges, element_of, total_nodes=len(graph),
                     edge_labels=edge_labels, focused=focused)


def _edges_touching(graph: ir.Graph, nodes: list[ir.Node]) -> list[tuple[ir.Node, int, ir.Node, int]]:
    """Data edges with at least one end in ``nodes`` (each once), ordered like :meth:`ir.Graph.data_edges` for
    edges into ``nodes``. O(degree of ``nodes``)."""
    inside = {n.id for n in nodes}
    out: list[tuple[ir.Node, int, ir.Node, int]] = []
    for dst in nodes:
        for port, prod in enumerate(graph.producers(dst)):
            if prod is not None:
                out.append((prod[0], prod[1], dst, port))
    for src in nodes:
        for port in range(len(src.outputs)):
            for dst, dp in graph.uses(src, port):
                if dst.id not in inside:
                    out.append((src, port, dst, dp))
    return out



def _short(text: str) -> str:
    return text if len(text) <= _LABEL_MAX else text[: _LABEL_MAX - 1] + "\u2026"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def view_to_dot(view: GraphView, *, rankdir: str = "TB") -> str:
    """DOT source for ``view``; deterministic, so its hash keys the layout cache."""
    lines = [
        "digraph G {",
        f'graph [rankdir={rankdir}, nodesep=0.25, ranksep=0.35, id="gb_graph", bgcolor="transparent"];',
        'node [shape=box, style=filled, fillcolor="#ffffff", color="#5a6270", fontsize=10, '
        'height=0.3, margin="0.08,0.03"];',
        'edge [fontsize=8, color="#8a909a", arrowsize=0.6];',
    ]
    name_of = {n.id: n.element or f"{view.element_prefix}{n.id}" for n in view.nodes}
    framed: dict[int, list[str]] = {}  # frame (group id) -> its node lines
    for n in view.nodes:
        sub = html.escape(_short(n.name))
        extra = []
        if n.folded_consts:
            extra.append(f"+{n.folded_consts} const")
        if n.hidden_neighbours:
            extra.append(f"{n.hidden_neighbours} hidden edge" + ("s" if n.hidden_neighbours > 1 else ""))
        label = f"<<b>{html.escape(_short(n.op_type))}</b><br/><font point-size=\"8\">{sub}</font>"
        if extra:
            label += f"<br/><font point-size=\"7\" color=\"#6b7280\">{html.escape(', '.join(extra))}</font>"
        label += ">"
        if view.element_prefix == "g" or n.element.startswith("g"):
            cls = "gb_node gb_group"
        else:
            cls = f"gb_node gb_op_{_CLASS_SAFE.sub('_', n.op_type)}"
        if n.op_type in CONST_OP_TYPES:
            cls += " gb_const"
        if n.hidden_neighbours:
            cls += " gb_cut"
        el = name_of[n.id]
        line = f'{el} [id="{el}", class="{cls}", label={label}];'
        if n.cluster >= 0 and n.cluster in view.clusters:
            framed.setdefault(n.cluster, []).append(line)
        else:
            lines.append(line)
    if view.clusters:
        _frames(view, framed, lines)
    for e in view.edges:
        attrs = [f'id="{e.element_id}"']
        if e.src_port == -2:
            attrs.append('class="gb_edge gb_group_edge"')
            if e.label:
                attrs.append(f"label={_quote(' ' + e.label)}")
        elif e.src_port < 0:
            attrs.append('class="gb_edge gb_ctrl", style=dashed')
        else:
            attrs.append('class="gb_edge"')
            if e.label:
                attrs.append(f"label={_quote(' ' + e.label)}")
        lines.append(f"{name_of[e.src]} -> {name_of[e.dst]} [{', '.join(attrs)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def cluster_element_id(gid: int) -> str:
    """The SVG element id of the frame of a group expanded in place."""
    return f"x{gid}"


def _frames(view: GraphView, framed: dict[int, list[str]], lines: list[str]) -> None:
    """Append the frames of ``view.clusters`` to ``lines`` as nested DOT clusters holding their node lines."""
    inner: dict[int, list[int]] = {}
    for gid, (parent, _label) in view.clusters.items():
        inner.setdefault(parent, []).append(gid)

    def emit(gid: int, indent: str) -> None:
        label = view.clusters[gid][1]
        el = cluster_element_id(gid)
        lines.append(f"{indent}subgraph cluster_{gid} {{")
        lines.append(f'{indent}  graph [id="{el}", class="gb_cluster", label={_quote(_short(label))}, '
                     'labeljust=l, fontsize=9, style="rounded,dashed", color="#8a909a"];')
        for line in framed.get(gid, ()):
            lines.append(f"{indent}  {line}")
        for sub in inner.get(gid, ()):
            emit(sub, indent + "  ")
        lines.append(f"{indent}}}")

    for gid in inner.get(-1, ()):
        emit(gid, "")


_STRIP = [
    (re.compile(r"<\?xml[^>]*\?>\s*"), ""),
    (re.compile(r"<!DOCTYPE[^>]*>\s*", re.S), ""),
    (re.compile(r"<!--.*?-->\s*", re.S), ""),
    (re.compile(r"<title>[^<]*</title>\s*"), ""),
    (re.compile(r' font-family="[^"]*"'), ""),
    (re.compile(r"&#45;"), "-"),
]


def _tidy_svg(svg: str) -> str:
    for pattern, repl in _STRIP:
        svg = pattern.sub(repl, svg)
    return svg


def dot_executable() -> str | None:
    """Path of graphviz's ``dot`` or None when graphviz is not installed."""
    return shutil.which("dot")


def render_svg(dot_source: str, *, timeout: float = 30.0, nslimit: float | None = 2.0,
               extra_args: Iterable[str] = ()) -> str:
    """Lay out ``dot_source`` with graphviz ``dot`` and return tidied SVG text.

    Costs: dot's layout time, which depends on the graph's shape more than its size (see
    ``docs/workbench.md``); ``nslimit`` bounds network-simplex iterations, which keeps wide or
    constant-heavy graphs tractable at a small cost in edge lengths.

    Raises:
        LayoutError: graphviz is not installed or reported an error.
        LayoutTimeout: the layout ran longer than ``timeout`` seconds (the process is killed).
    """
    exe = dot_executable()
    if exe is None:
        raise LayoutError("graphviz's `dot` is not on PATH; install it (Debian: apt-get install -y graphviz)")
    args = [exe, "-Tsvg"]
    if nslimit is not None:
        args += [f"-Gnslimit={nslimit}", f"-Gnslimit1={nslimit}"]
    args += list(extra_args)
    try:
        proc = subprocess.run(args, input=dot_source.encode(), capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise LayoutTimeout(f"graphviz layout took longer than {timeout:g} s; use a focused view") from None
    if proc.returncode != 0:
        raise LayoutError(f"graphviz failed ({proc.returncode}): {proc.stderr.decode(errors='replace').strip()}")
    return _tidy_svg(proc.stdout.decode())


def compress_svg(svg: str) -> bytes:
    """gzip bytes of ``svg`` (sent to the front end as a binary buffer and inflated there)."""
    return gzip.compress(svg.encode(), compresslevel=6, mtime=0)
