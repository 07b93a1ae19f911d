"""The sweep report: a models x passes matrix coloured by what each pass did on each model.

The table is rendered here, complete, as static HTML (so it reads without JavaScript, in a browser or as a
notebook cell output; a model's name links to its ledger file); ``report.js`` adds sorting by any column, a
model filter and a detail panel per cell (the pass's numbers, failures, the diff's changes, the ledger link
and the line that opens the workbench on that model and pass). ``report.css`` and ``report.js`` are package files inlined into the page, so
``report.html`` is one self-contained file.

Cell colours: green = the pass replaced sites (the number), yellow = it matched but replaced nothing, grey =
no match, orange = a rewrite changed results (verify), red = the pass failed the compile, dark red = the
task did not finish (crash, timeout, out of memory, error). A red/green outline marks sites lost/gained
against the baseline.
"""

from __future__ import annotations

import html
import json
import uuid
from importlib import resources
from typing import Any

from gebench.fusion.stages import STAGE_ORDER

from ._task import COMPLETED_STATUSES

__all__ = ["render_report", "pass_columns"]


def _asset(name: str) -> str:
    return resources.files("gebench.sweep").joinpath(name).read_text(encoding="utf-8")


def pass_columns(rows: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(pass name, stage) of every pass seen in ``rows``, in GE's stage order then by name."""
    seen: dict[str, str] = {}
    for row in rows:
        for name, p in (row.get("passes") or {}).items():
            if not seen.get(name):
                seen[name] = p.get("stage") or ""
    rank = {s: i for i, s in enumerate(STAGE_ORDER)}
    return sorted(seen.items(), key=lambda item: (rank.get(item[1], len(rank)), item[0]))


def _cell(row: dict[str, Any], name: str, changes: list[Any]) -> tuple[str, str, str, str]:
    """(css classes, text, sort key, tooltip) of one matrix cell."""
    status = row["status"]
    if status not in COMPLETED_STATUSES:
        return "gbs-dead", "\u2014", "-2", f"{status}: {row.get('reason') or ''}"
    p = (row.get("passes") or {}).get(name)
    if p is None:
        return "gbs-none", "", "-3", f"{name} did not run on this model"
    rejected = ", ".join(f"{k}={v}" for k, v in sorted((p.get("rejected") or {}).items()))
    tip = (f"{name}: {p['replaced']} replaced, {p['matches']} matches, {p['candidates']} candidates"
           + (f"; rejected {rejected}" if rejected else "") + (f"; {p['lints']} lints" if p.get("lints") else "")
           + (f"; {p['seconds']:.3f} s" if p.get("seconds") is not None else "")
           + (f"; verify max abs error {p['verify_max_abs_error']:.3g}" if p.get("verify_max_abs_error") is not None
              else ""))
    if p.get("failures"):
        cls, text, key = "gbs-failed", "\u2717", "-1"
        tip += "; FAILED: " + "; ".join(p["failures"])[:400]
    elif p.get("verify_errors"):
        cls, text, key = "gbs-verify", f"{p['replaced']}\u26a0", str(p["replaced"])
        tip += f"; {p['verify_errors']} rewrite(s) change results"
    elif p.get("replaced"):
        cls, text, key = "gbs-fired", str(p["replaced"]), str(p["replaced"])
    elif p.get("matches"):
        cls, text, key = "gbs-rejected", "0", "0"
    else:
        cls, text, key = "gbs-idle", "\u00b7", "0"
    for c in changes:
        if c.kind in ("sites_lost", "sites_gained"):
            cls += " gbs-lost" if c.kind == "sites_lost" else " gbs-gained"
            delta = int(c.new) - int(c.old)
            text += f'<span class="gbs-delta">{delta:+d}</span>'
            tip += f"; baseline {c.old}"
    return cls, text, key, tip


def render_report(result: Any, *, for_notebook: bool = False) -> str:
    """The report of a :class:`~gebench.sweep.SweepResult` as HTML.

    ``for_notebook`` gives a fragment for a cell output (ledger paths as text: links would resolve against the
    notebook server); otherwise a whole page with links relative to the out folder, for ``report.html``.
    Cost: O(models x passes) string building.
    """
    rows: list[dict[str, Any]] = list(result.rows)
    columns = pass_columns(rows)
    diff = getattr(result, "diff", None)
    uid = uuid.uuid4().hex[:8]
    e = html.escape
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    meta = result.meta
    sets = ", ".join(f"{label} ({info.get('digest', '')[:10]})" for label, info in meta.get("pass_sets", {}).items())
    summary = (f"{len(rows)} tasks: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
               + f" &middot; verify {'on' if meta.get('verify') else 'off'} &middot; pass sets: {e(sets)}"
               + f" &middot; out: <code>{e(str(result.out))}</code>")
    parts = [f'<div class="gbs" id="gbs-{uid}" data-gebench-sweep>', "<h2>gebench sweep</h2>",
             f'<p class="gbs-summary">{summary}</p>']
    changes_by_cell: dict[str, list[str]] = {}
    if diff is not None:
        cls = "gbs-diff gbs-regression" if diff.has_regression else "gbs-diff"
        parts.append(f'<div class="{cls}">{e(diff.summary(limit=40))}</div>')
    parts.append('<div class="gbs-tools"><input class="gbs-filter" type="search" placeholder="filter models">'
                 '<span class="gbs-legend"><span class="gbs-fired">replaced</span><span class="gbs-rejected">'
                 'matched, none replaced</span><span class="gbs-idle">no match</span><span class="gbs-verify">'
                 'verify error</span><span class="gbs-failed">pass failed</span><span class="gbs-dead">'
                 'task did not finish</span><span class="gbs-lost">sites lost</span><span class="gbs-gained">'
                 'sites gained</span></span></div>')
    head = ['<th data-type="text">model</th>', '<th data-type="text">pass set</th>',
            '<th data-type="text">status</th>', '<th data-type="num" title="nodes before the passes">nodes</th>',
            '<th data-type="num" title="nodes after">after</th>', '<th data-type="num">wall s</th>',
            '<th data-type="num">peak MiB</th>']
    head += [f'<th class="gbs-pass" data-type="num" title="{e(stage)}">{e(name)}</th>' for name, stage in columns]
    parts.append(f'<div class="gbs-scroll"><table class="gbs-matrix"><thead><tr>{"".join(head)}</tr></thead><tbody>')
    for row in rows:
        task = row["task"]
        model_changes = diff.for_cell(row["model_name"], row["pass_set"], None) if diff is not None else []
        if model_changes:
            changes_by_cell[task + "\0"] = [c.text() for c in model_changes]
        status_title = e(row.get("reason") or "", quote=True)
        label = e(row["model_name"])
        if row.get("ledger") and not for_notebook:
            label = f'<a href="{e(row["ledger"], quote=True)}">{label}</a>'
        cells = [f'<td class="gbs-model" data-task="{e(task)}" title="{e(row["model"], quote=True)}">{label}</td>',
                 f'<td class="gbs-set">{e(row["pass_set"])}</td>',
                 f'<td class="gbs-status-{e(row["status"])}" title="{status_title}">{e(row["status"])}'
                 + ("*" if model_changes and any(c.regression for c in model_changes) else "") + "</td>",
                 _num(row.get("nodes_before")), _num(row.get("nodes_after")), _num(row.get("wall_s"), 2),
                 _num(row.get("peak_mem_mb"), 0)]
        for name, _ in columns:
            cell_changes = diff.for_cell(row["model_name"], row["pass_set"], name) if diff is not None else []
            if cell_changes:
                changes_by_cell[task + "\0" + name] = [c.text() for c in cell_changes]
            cls, text, key, tip = _cell(row, name, cell_changes)
            cells.append(f'<td class="gbs-cell {cls}" data-task="{e(task)}" data-pass="{e(name, quote=True)}" '
                         f'data-sort="{key}" title="{e(tip, quote=True)}">{text}</td>')
        parts.append(f"<tr>{''.join(cells)}</tr>")
    parts.append('</tbody></table></div><div class="gbs-detail" hidden></div>')
    data = {"out": str(result.out), "links": not for_notebook, "changes": changes_by_cell,
            "rows": {r["task"]: {k: r.get(k) for k in ("model_name", "pass_set", "status", "reason", "failed_pass",
                                                       "ledger", "passes")} for r in rows}}
    payload = json.dumps(data, default=str).replace("<", "\\u003c")  # no "</script>" can end the data
    parts.append(f'<script type="application/json" class="gbs-data">{payload}</script></div>')
    body = "\n".join(parts)
    style = f"<style>{_asset('report.css')}</style>"
    script = f"<script>{_asset('report.js')}</script>"
    if for_notebook:
        return style + body + script
    return ('<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>gebench sweep</title>'
            f"{style}</head><body>{body}{script}</body></html>\n")


def _num(value: Any, digits: int | None = None) -> str:
    if value is None:
        return '<td data-sort="">-</td>'
    text = f"{value:.{digits}f}" if digits is not None and isinstance(value, float) else str(value)
    return f'<td data-sort="{value}">{text}</td>'
