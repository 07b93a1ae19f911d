"""Layered (Sugiyama-style) layouts drawn as SVG without graphviz, for views too large for ``dot``.

Two engines, both in-process and both producing the same SVG structure as :func:`._dot.render_svg` (a
``<g id="gb_graph">`` holding ``<g id="n…" class="node …">`` boxes drawn as ``<polygon>`` and ``<g id="e…"
class="edge …">`` edges drawn as ``<path>``), so highlighting and clicks work the same whatever laid a view out:

* ``"sugiyama"``: `fast-sugiyama <https://pypi.org/project/fast-sugiyama/>`_ (Rust): layers, crossing
  minimisation, edges bent through their dummy vertices. Its cost grows with the number of dummy vertices (the
  sum of the layer spans of the edges), so it is used only when nodes plus dummies are at most
  :data:`SUGIYAMA_MAX_WORK`.
* ``"simple"``: longest-path layers in the view's order (graph order; edges going backwards are drawn but do not
  push layers), nodes in a layer in view order, straight edges. O(n + e); it cannot fail and is the last resort.

:func:`layered_svg` picks the engine; neither mutates the view.
"""

from __future__ import annotations

import html
import logging
import re
import time

from ._dot import CONST_OP_TYPES, GraphView, ViewNode

__all__ = ["SUGIYAMA_MAX_WORK", "layered_svg"]

_log = logging.getLogger(__name__)

#: nodes plus dummy vertices above which fast-sugiyama is not used (about a second of its time here)
SUGIYAMA_MAX_WORK = 30_000

_CLASS_SAFE = re.compile(r"[^A-Za-z0-9_]")
_LABEL_MAX = 28
_CHAR_W = 6.2  # px per character of the 10 pt op type line
_BOX_H = 34.0
_BOX_H3 = 44.0
_GAP_X = 18.0
_GAP_Y = 34.0


def _short(text: str) -> str:
    return text if len(text) <= _LABEL_MAX else text[: _LABEL_MAX - 1] + "\u2026"


def _element(view: GraphView, n: ViewNode) -> str:
    return n.element or f"{view.element_prefix}{n.id}"


def _extra(n: ViewNode) -> str:
    extra = []
    if n.folded_consts:
        extra.append(f"+{n.folded_consts} const")
    if n.hidden_neighbours:
        extra.append(f"{n.hidden_neighbours} hidden edge" + ("s" if n.hidden_neighbours > 1 else ""))
    return ", ".join(extra)


def _size(n: ViewNode) -> tuple[float, float]:
    chars = max(len(_short(n.op_type)), int(len(_short(n.name)) * 0.8), int(len(_extra(n)) * 0.7), 4)
    return chars * _CHAR_W + 16.0, _BOX_H3 if _extra(n) else _BOX_H


def _longest_path_layers(view: GraphView) -> dict[int, int]:
    """Layer of each node: 1 + the highest layer of its producers earlier in the view's order. O(n + e)."""
    index = {n.id: i for i, n in enumerate(view.nodes)}
    preds: dict[int, list[int]] = {}
    for e in view.edges:
        if e.src in index and e.dst in index and index[e.src] < index[e.dst]:
            preds.setdefault(e.dst, []).append(e.src)
    layer: dict[int, int] = {}
    for n in view.nodes:
        layer[n.id] = 1 + max((layer[p] for p in preds.get(n.id, ())), default=-1)
    return layer


def _dummy_work(view: GraphView, layer: dict[int, int]) -> int:
    """Nodes plus the dummy vertices a layered layout would add (sum of edge spans beyond one layer)."""
    spans = sum(
        max(0, abs(layer[e.dst] - layer[e.src]) - 1) for e in view.edges if e.src in layer and e.dst in layer
    )
    return len(view.nodes) + spans


def _positions_simple(view: GraphView, layer: dict[int, int]) -> tuple[dict[int, tuple[float, float]], dict]:
    sizes = {n.id: _size(n) for n in view.nodes}
    rows: dict[int, list[int]] = {}
    for n in view.nodes:
        rows.setdefault(layer[n.id], []).append(n.id)
    pos: dict[int, tuple[float, float]] = {}
    y = 0.0
    for li in sorted(rows):
        x = 0.0
        height = max(sizes[i][1] for i in rows[li])
        for nid in rows[li]:
            w = sizes[nid][0]
            pos[nid] = (x + w / 2, y + height / 2)
            x += w + _GAP_X
        y += height + _GAP_Y
    return pos, {}


def _positions_sugiyama(view: GraphView) -> tuple[dict[int, tuple[float, float]], dict]:
    """Positions from fast-sugiyama and, per (src, dst), the bend points through dummy vertices."""
    import fast_sugiyama

    sizes = {n.id: _size(n) for n in view.nodes}
    ids = [n.id for n in view.nodes]
    dense = {nid: i for i, nid in enumerate(ids)}
    pairs = sorted(
        {
            (dense[e.src], dense[e.dst])
            for e in view.edges
            if e.src in dense and e.dst in dense and e.src != e.dst
        }
    )
    unit_x = max((w for w, _ in sizes.values()), default=80.0) + _GAP_X
    unit_y = max((h for _, h in sizes.values()), default=_BOX_H) + _GAP_Y
    pos: dict[int, tuple[float, float]] = {}
    bends: dict[tuple[int, int], list[tuple[float, float]]] = {}
    x_off = 0.0
    placed: set[int] = set()
    if pairs:
        layouts = fast_sugiyama.from_edges(pairs, vertex_spacing=1, dummy_vertices=True)
        for positions, width, height, edge_list in layouts:
            coords = {}
            for v, (x, y) in positions:
                coords[v] = (x_off + x * unit_x + unit_x / 2, (height - y) * unit_y + unit_y / 2)
            for v, xy in coords.items():
                if isinstance(v, int) and v < len(ids):
                    pos[ids[v]] = xy
                    placed.add(v)
            nxt: dict[int, int] = {}
            for s, t in edge_list or []:
                if s >= len(ids):
                    nxt[s] = t
            for s, t in edge_list or []:
                if s < len(ids):
                    pts = []
                    while t >= len(ids) and t in nxt:
                        pts.append(coords[t])
                        t = nxt[t]
                    if t < len(ids) and pts:
                        bends[(ids[s], ids[t])] = pts
            x_off += (width + 1) * unit_x
    # nodes without edges: a row under everything else
    lone = [i for i in range(len(ids)) if i not in placed]
    if lone:
        y = max((xy[1] for xy in pos.values()), default=-unit_y) + unit_y
        x = 0.0
        for i in lone:
            w = sizes[ids[i]][0]
            pos[ids[i]] = (x + w / 2, y)
            x += w + _GAP_X
    return pos, bends


def layered_svg(view: GraphView, *, engine: str | None = None) -> tuple[str, str]:
    """Lay ``view`` out in layers and draw it as SVG; returns ``(svg, engine used)``.

    Args:
        view: what to draw (read-only).
        engine: ``"sugiyama"`` or ``"simple"``; None picks fast-sugiyama when nodes plus dummy vertices are at
            most :data:`SUGIYAMA_MAX_WORK`, else the simple engine. When fast-sugiyama fails (not installed,
            an error) the simple engine draws the view instead; this function does not raise for any view.

    Cost: O(n + e) for the simple engine; fast-sugiyama's time for the other (about a second at the cap).
    """
    start = time.perf_counter()
    layer = _longest_path_layers(view)
    if engine is None:
        engine = "sugiyama" if _dummy_work(view, layer) <= SUGIYAMA_MAX_WORK else "simple"
    pos: dict[int, tuple[float, float]]
    bends: dict
    if engine == "sugiyama":
        try:
            pos, bends = _positions_sugiyama(view)
        except Exception:  # noqa: BLE001 - any failure of the optional engine: the simple one draws the view
            _log.warning(
                "fast-sugiyama failed on a view of %d nodes; using the simple layered layout",
                len(view.nodes),
                exc_info=True,
            )
            engine = "simple"
    if engine == "simple":
        pos, bends = _positions_simple(view, layer)
    svg = _draw(view, pos, bends)
    _log.debug(
        "layered layout (%s) of %d nodes in %.2f s", engine, len(view.nodes), time.perf_counter() - start
    )
    return svg, engine


def _draw(view: GraphView, pos: dict[int, tuple[float, float]], bends: dict) -> str:
    e = html.escape
    sizes = {n.id: _size(n) for n in view.nodes}
    frames = _frame_boxes(view, pos, sizes) if view.clusters else {}
    left = min((b[0] for b in frames.values()), default=0.0)
    top = min((b[1] for b in frames.values()), default=0.0)
    left, top = min(left, 0.0), min(top, 0.0)
    width = max([*(pos[i][0] + sizes[i][0] / 2 for i in pos), *(b[2] for b in frames.values()), 0.0]) - left + 8
    height = max([*(pos[i][1] + sizes[i][1] / 2 for i in pos), *(b[3] for b in frames.values()), 0.0]) - top + 8
    out = [
        f'<svg width="{width:.0f}pt" height="{height:.0f}pt" viewBox="0.00 0.00 {width:.2f} {height:.2f}" '
        'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">',
        f'<g id="gb_graph" class="graph" transform="translate({4 - left:g} {4 - top:g})">',
    ]
    for gid, (x0, y0, x1, y1) in frames.items():
        out.append(f'<g id="x{gid}" class="cluster gb_cluster">')
        out.append(
            f'<polygon fill="none" stroke="#8a909a" stroke-dasharray="5,2" points="{x1:.1f},{y0:.1f} '
            f'{x0:.1f},{y0:.1f} {x0:.1f},{y1:.1f} {x1:.1f},{y1:.1f} {x1:.1f},{y0:.1f}"/>'
        )
        out.append(f'<text x="{x0 + 4:.1f}" y="{y0 + 10:.1f}" font-size="9.00">'
                   f"{html.escape(_short(view.clusters[gid][1]))}</text>")
        out.append("</g>")
    for n in view.nodes:
        if n.id not in pos:
            continue
        x, y = pos[n.id]
        w, h = sizes[n.id]
        el = _element(view, n)
        if view.element_prefix == "g" or n.element.startswith("g"):
            cls = "gb_node gb_group"
        else:
            cls = f"gb_node gb_op_{_CLASS_SAFE.sub('_', n.op_type)}"
        if n.op_type in CONST_OP_TYPES:
            cls += " gb_const"
        if n.hidden_neighbours:
            cls += " gb_cut"
        x0, y0, x1, y1 = x - w / 2, y - h / 2, x + w / 2, y + h / 2
        out.append(f'<g id="{e(el)}" class="node {cls}">')
        out.append(
            f'<polygon fill="#ffffff" stroke="#5a6270" points="{x1:.1f},{y0:.1f} {x0:.1f},{y0:.1f} '
            f'{x0:.1f},{y1:.1f} {x1:.1f},{y1:.1f} {x1:.1f},{y0:.1f}"/>'
        )
        out.append(
            f'<text text-anchor="middle" x="{x:.1f}" y="{y0 + 13:.1f}" font-weight="bold" '
            f'font-size="10.00">{e(_short(n.op_type))}</text>'
        )
        out.append(
            f'<text text-anchor="middle" x="{x:.1f}" y="{y0 + 24:.1f}" font-size="8.00">'
            f"{e(_short(n.name))}</text>"
        )
        extra = _extra(n)
        if extra:
            out.append(
                f'<text text-anchor="middle" x="{x:.1f}" y="{y0 + 35:.1f}" font-size="7.00" '
                f'fill="#6b7280">{e(extra)}</text>'
            )
        out.append("</g>")
    for edge in view.edges:
        if edge.src not in pos or edge.dst not in pos:
            continue
        (sx, sy), (tx, ty) = pos[edge.src], pos[edge.dst]
        sh, th = sizes[edge.src][1], sizes[edge.dst][1]
        down = ty >= sy
        start = (sx, sy + sh / 2 if down else sy - sh / 2)
        end = (tx, ty - th / 2 - 1 if down else ty + th / 2 + 1)
        pts = [start, *bends.get((edge.src, edge.dst), []), end]
        d = "M" + " L".join(f"{px:.1f},{py:.1f}" for px, py in pts)
        if edge.src_port == -2:
            cls = "gb_edge gb_group_edge"
        elif edge.src_port < 0:
            cls = "gb_edge gb_ctrl"
        else:
            cls = "gb_edge"
        dash = ' stroke-dasharray="5,2"' if edge.src_port == -1 else ""
        (ax, ay), (bx, by) = pts[-2], pts[-1]
        length = max(((bx - ax) ** 2 + (by - ay) ** 2) ** 0.5, 1e-6)
        ux, uy = (bx - ax) / length, (by - ay) / length
        p1 = (bx - 6 * ux + 3 * uy, by - 6 * uy - 3 * ux)
        p2 = (bx - 6 * ux - 3 * uy, by - 6 * uy + 3 * ux)
        out.append(f'<g id="{e(edge.element_id)}" class="edge {cls}">')
        out.append(f'<path fill="none" stroke="#8a909a"{dash} d="{d}"/>')
        out.append(
            f'<polygon fill="#8a909a" stroke="#8a909a" points="{bx:.1f},{by:.1f} {p1[0]:.1f},{p1[1]:.1f} '
            f'{p2[0]:.1f},{p2[1]:.1f} {bx:.1f},{by:.1f}"/>'
        )
        if edge.label and edge.src_port == -2:
            mx, my = pts[len(pts) // 2 - 1] if len(pts) > 2 else ((ax + bx) / 2, (ay + by) / 2)
            out.append(
                f'<text text-anchor="start" x="{mx + 3:.1f}" y="{my:.1f}" font-size="8.00">'
                f"{e(edge.label)}</text>"
            )
        out.append("</g>")
    out.append("</g>\n</svg>\n")
    return "\n".join(out)


def _frame_boxes(view: GraphView, pos: dict[int, tuple[float, float]],
                 sizes: dict[int, tuple[float, float]]) -> dict[int, tuple[float, float, float, float]]:
    """The dashed frames of the groups expanded in place (``view.clusters``), as graphviz draws clusters: each
    around the boxes of its items and the frames inside it, with room for its title above. This layout does not
    keep a frame's items together, so a frame may also pass over other boxes; it is an outline only.
    O(nodes * depth + frames)."""
    bounds: dict[int, list[float]] = {}
    depth: dict[int, int] = {}
    for gid, (parent, _label) in view.clusters.items():  # parents come before their children
        depth[gid] = depth.get(parent, -1) + 1
    for n in view.nodes:
        if n.cluster < 0 or n.id not in pos:
            continue
        (x, y), (w, h) = pos[n.id], sizes[n.id]
        gid = n.cluster
        while gid >= 0 and gid in view.clusters:  # the node widens its frame and every frame around it
            b = bounds.setdefault(gid, [x - w / 2, y - h / 2, x + w / 2, y + h / 2])
            b[0], b[1] = min(b[0], x - w / 2), min(b[1], y - h / 2)
            b[2], b[3] = max(b[2], x + w / 2), max(b[3], y + h / 2)
            gid = view.clusters[gid][0]
    deepest = max(depth.values(), default=0)
    out: dict[int, tuple[float, float, float, float]] = {}
    for gid in view.clusters:
        if gid in bounds:
            levels = deepest - depth[gid] + 1  # outer frames sit around inner ones and their titles
            x0, y0, x1, y1 = bounds[gid]
            out[gid] = (x0 - 6 * levels, y0 - 14 * levels, x1 + 6 * levels, y1 + 6 * levels)
    return out
