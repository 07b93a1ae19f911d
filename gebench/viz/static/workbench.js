// The workbench's front end (an anywidget ES module). It only draws what the kernel sends; see
// gebench/viz/_frontend.py for the protocol. Every request to the kernel carries a growing `seq`; the
// kernel sets its `seq` trait to the request's after handling it. While an answer is outstanding, trait
// changes are not drawn (they may describe an older request); they are drawn together once the kernel's
// `seq` reaches the latest request. Asynchronous loads (SVG inflation) are guarded by serial numbers, and
// table pages by the table's version, so a late answer never overwrites a newer one.

const ROW_H = 22; // px, one candidate row (the table is virtualized: only rows in sight are in the DOM)
const PAGE = 80; // rows per page asked from the kernel
const MIN_FIT = 0.35; // "Fit" never zooms out further than this (text stays legible; scroll for the rest)
const STATUS_ICON = {
  REPLACED: "\u2714", REJECTED_BY_MEET_REQUIREMENTS: "\u2716", STRUCTURAL_MISMATCH: "\u2248",
  BOUNDARY_VIOLATION: "\u2298", WOULD_CREATE_CYCLE: "\u21BB", LOST_TO_OVERLAP: "\u2229",
  REPLACEMENT_FAILED: "\u26A0", LINT: "\u2691",
};
const STATUS_CSS = {
  REPLACED: "replaced", REJECTED_BY_MEET_REQUIREMENTS: "rejected", STRUCTURAL_MISMATCH: "nearmiss",
  BOUNDARY_VIOLATION: "boundary", WOULD_CREATE_CYCLE: "cycle", LOST_TO_OVERLAP: "overlap",
  REPLACEMENT_FAILED: "failed", LINT: "lint",
};
// the same icons as small stroked paths (8x8) for node boxes: paths cost far less to draw than text
const STATUS_PATH = {
  REPLACED: "M1 4.2L3.2 6.6L7 1.4",
  REJECTED_BY_MEET_REQUIREMENTS: "M1.5 1.5L6.5 6.5M6.5 1.5L1.5 6.5",
  STRUCTURAL_MISMATCH: "M0.8 3Q2.4 1.4 4 3T7.2 3M0.8 6Q2.4 4.4 4 6T7.2 6",
  BOUNDARY_VIOLATION: "M4 0.8A3.2 3.2 0 1 0 4.01 0.8ZM1.8 6.2L6.2 1.8",
  WOULD_CREATE_CYCLE: "M6.6 4.4A2.7 2.7 0 1 1 4.6 1.4M3.6 0.2L5 1.4L3.6 2.8",
  LOST_TO_OVERLAP: "M1.5 7.2V4A2.5 2.5 0 0 1 6.5 4V7.2",
  REPLACEMENT_FAILED: "M4 0.6L7.6 7.2H0.4ZM4 3V5M4 5.9V6.3",
  LINT: "M1.6 7.6V0.8H6.6L5.2 2.5L6.6 4.2H1.6",
};
// a glyph's path data moved to (x, y): absolute coordinates, so that the path needs no transform (each
// transformed SVG element becomes a paint chunk of its own, and a thousand of them slow down every frame)
const GLYPH_ARGS = { M: 2, L: 2, T: 2, Q: 4, A: 7, H: 1, V: 1, Z: 0 };
function glyphAt(st, x, y) {
  const out = [];
  let cmd = "", k = 0;
  for (const tok of STATUS_PATH[st].match(/[A-Za-z]|-?[\d.]+/g)) {
    if (/[A-Za-z]/.test(tok)) { cmd = tok; k = 0; out.push(tok); continue; }
    const n = GLYPH_ARGS[cmd], j = n ? k % n : 0;
    let v = parseFloat(tok);
    if (cmd === "H" || (cmd === "A" ? j === 5 : cmd !== "V" && j % 2 === 0)) v += x;
    else if (cmd === "V" || (cmd === "A" ? j === 6 : j % 2 === 1)) v += y;
    k++;
    out.push(String(Math.round(v * 100) / 100));
  }
  return out.join(" ");
}
const CSS_STATUS = Object.fromEntries(Object.entries(STATUS_CSS).map(([k, v]) => [v, k]));
const COLUMNS = [
  ["i", "#", "i"], ["status", "status", "status"], ["pattern", "pattern", "pattern"],
  ["targets", "targets", "targets"], ["reason", "reason", "reason"], ["captures", "captures", null],
  ["meet", "meet_requirements", null], ["verify", "verify", "verify"], ["source", "source", null],
];

async function inflate(dv) {
  if (!dv || dv.byteLength === 0) return "";
  const bytes = new Uint8Array(dv.buffer, dv.byteOffset, dv.byteLength);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return await new Response(stream).text();
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
}

// a duration in milliseconds, short: 0.42 ms, 12 ms, 1.3 s
function fmtMs(ms) {
  if (ms >= 1000) return `${(ms / 1000).toFixed(1)} s`;
  return ms >= 10 ? `${Math.round(ms)} ms` : `${ms.toFixed(ms >= 1 ? 1 : 2)} ms`;
}

// the hover text of a pass in the pass list: its times and counts, then each pattern's
function passTip(p) {
  const t = p.time;
  if (!t) return p.name;
  const lines = [`${p.name}: ${fmtMs(t.wall_ms)} wall, ${fmtMs(t.cpu_ms)} CPU, ${t.graphs} graph(s); ` +
    `${t.anchors} anchors, ${t.matches} matches, ${t.rewrites} rewrites`];
  for (const q of t.patterns || []) {
    lines.push(`  ${q.name}: ${fmtMs(q.wall_ms)} \u00B7 ${q.candidates} cand \u00B7 ${q.replaced} repl \u00B7 ` +
      `${q.anchors} anchors \u00B7 ${q.matches} matches` + (q.lints ? ` \u00B7 ${q.lints} lint` : ""));
  }
  return lines.join("\n");
}

function statusLabel(status) {
  return status.toLowerCase().replaceAll("_", " ");
}

function chip(status) {
  const c = el("span", "gb-chip gb_st_" + (STATUS_CSS[status] || "other"));
  c.append(el("span", "gb-icon", STATUS_ICON[status] || "\u2022"), document.createTextNode(" " + statusLabel(status)));
  c.title = status;
  return c;
}

// pan and zoom of one pane; listeners are told of every change (to link panes and move the minimap)
function panZoom(pane, content, drawing) {
  const st = { s: 1, x: 0, y: 0, drag: null, moved: false };
  const listeners = [];
  const apply = (quiet) => {
    content.style.transform = `translate(${st.x}px, ${st.y}px) scale(${st.s})`;
    if (!quiet) for (const f of listeners) f(st);
  };
  pane.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const r = pane.getBoundingClientRect();
    const mx = ev.clientX - r.left, my = ev.clientY - r.top;
    const k = Math.exp(-ev.deltaY * 0.0015);
    const s2 = Math.min(8, Math.max(0.05, st.s * k));
    st.x = mx - (mx - st.x) * (s2 / st.s);
    st.y = my - (my - st.y) * (s2 / st.s);
    st.s = s2; apply();
  }, { passive: false });
  pane.addEventListener("mousedown", (ev) => { st.drag = [ev.clientX - st.x, ev.clientY - st.y]; st.moved = false; });
  window.addEventListener("mousemove", (ev) => {
    if (!st.drag) return;
    st.x = ev.clientX - st.drag[0]; st.y = ev.clientY - st.drag[1]; st.moved = true; apply();
  });
  window.addEventListener("mouseup", () => { st.drag = null; });
  const size = () => {
    const svg = drawing.querySelector("svg");
    if (!svg) return null;
    return [svg.width.baseVal.value || 1, svg.height.baseVal.value || 1];
  };
  return {
    st,
    onChange(f) { listeners.push(f); },
    set(other) { st.s = other.s; st.x = other.x; st.y = other.y; apply(true); },
    // whole: the whole drawing (never below MIN_FIT: then top-left aligned, scroll for the rest);
    // otherwise the first view: the width fitted, top aligned, readable
    fit(whole) {
      const wh = size();
      if (!wh) return;
      const [w, h] = wh;
      const pw = pane.clientWidth || 600, ph = pane.clientHeight || 400;
      if (whole) st.s = Math.min(1.5, Math.max(MIN_FIT, Math.min(pw / w, ph / h) * 0.95));
      else st.s = Math.min(1.2, Math.max((pw / w) * 0.95, 0.75));
      st.x = w * st.s <= pw ? (pw - w * st.s) / 2 : 4;
      st.y = h * st.s < ph ? (ph - h * st.s) / 2 : 4;
      apply();
    },
    // zoom and pan so that the elements' union box fills the pane (zoom kept in [MIN_FIT, 2])
    fitTo(elements) {
      const pr = pane.getBoundingClientRect();
      let box = null;
      for (const e of elements) {
        const r = e.getBoundingClientRect();
        box = box ? [Math.min(box[0], r.left), Math.min(box[1], r.top), Math.max(box[2], r.right), Math.max(box[3], r.bottom)]
          : [r.left, r.top, r.right, r.bottom];
      }
      if (!box) return false;
      // the box in drawing coordinates (before scale)
      const x0 = (box[0] - pr.left - st.x) / st.s, y0 = (box[1] - pr.top - st.y) / st.s;
      const bw = (box[2] - box[0]) / st.s + 40, bh = (box[3] - box[1]) / st.s + 40;
      const pw = pane.clientWidth || 600, ph = pane.clientHeight || 400;
      st.s = Math.min(2, Math.max(MIN_FIT, Math.min(pw / bw, ph / bh)));
      st.x = pw / 2 - (x0 + bw / 2 - 20) * st.s;
      st.y = ph / 2 - (y0 + bh / 2 - 20) * st.s;
      apply();
      return true;
    },
    visible(target) {
      const pr = pane.getBoundingClientRect(), tr = target.getBoundingClientRect();
      return tr.right > pr.left && tr.left < pr.right && tr.bottom > pr.top && tr.top < pr.bottom;
    },
    zoom(f) { st.s = Math.min(8, Math.max(0.05, st.s * f)); apply(); },
    center(target) {
      const pr = pane.getBoundingClientRect(), tr = target.getBoundingClientRect();
      st.x += pr.left + pr.width / 2 - (tr.left + tr.width / 2);
      st.y += pr.top + pr.height / 2 - (tr.top + tr.height / 2);
      apply();
    },
    // the drawing point at the pane's centre, to move the view to (mx, my) in drawing coordinates
    moveTo(mx, my) {
      st.x = (pane.clientWidth || 600) / 2 - mx * st.s;
      st.y = (pane.clientHeight || 400) / 2 - my * st.s;
      apply();
    },
    size,
  };
}

function render({ model, el: root }) {
  root.classList.add("gb-root");
  root.tabIndex = 0;
  // JupyterLab (Lumino) leaves keys typed inside this element to the widget (j/k/Enter are notebook shortcuts)
  root.setAttribute("data-lm-suppress-shortcuts", "true");
  root.setAttribute("data-p-suppress-shortcuts", "true");

  // ------------------------------------------------------------------ requests and stale answers
  let latest = model.get("seq") || 0;
  const dirty = new Set();
  let staleTimer = null;
  const fresh = () => (model.get("seq") || 0) >= latest;
  const flush = () => {
    clearTimeout(staleTimer);
    const todo = [...dirty];
    dirty.clear();
    for (const f of todo) f();
  };
  const request = (action, extra) => {
    latest = Math.max(latest, model.get("seq") || 0) + 1;
    root.dataset.pending = String(latest);
    model.send(Object.assign({ action, seq: latest }, extra || {}));
    // a kernel that never answers (a lost connection) must not freeze the view
    clearTimeout(staleTimer);
    staleTimer = setTimeout(() => { latest = Math.min(latest, model.get("seq") || 0); flush(); }, 15000);
  };
  const watch = (names, f) => {
    const gated = () => { if (fresh()) f(); else dirty.add(f); };
    for (const n of names) model.on("change:" + n, gated);
  };
  // drawn ahead of the kernel's answer (a row or pass click draws what the page already knows at once): once
  // the answer is in, these are drawn again from the kernel's state, whether or not its traits changed
  const ahead = new Set();
  model.on("change:seq", () => {
    if (!fresh()) return;
    root.dataset.seq = String(model.get("seq"));
    for (const f of ahead) dirty.add(f);
    ahead.clear();
    previewSel = null; previewPos = null;
    flush();
    askAgain();
  });
  let previewSel = null; // the candidate a click selected, until the kernel's answer is in
  let previewPos = null; // and its position in the table (j/k keys step from there)

  // ------------------------------------------------------------------ toolbar
  const bar = el("div", "gb-bar");
  const title = el("span", "gb-title");
  const diffHead = el("span", "gb-diff-head");
  const snapSel = el("select", "gb-snap"); snapSel.title = "snapshot shown";
  const searchBox = el("span", "gb-searchbox");
  const search = el("input", "gb-search");
  search.type = "text"; search.placeholder = "search: regex over name / type / attr";
  search.title = "Enter: search (regular expression over node names, op types and attrs); Enter again: next hit, Shift+Enter: previous";
  const findBtn = el("button", "gb-btn gb-find", "Find");
  const prevHit = el("button", "gb-btn gb-hit-prev", "\u25B2"); prevHit.title = "previous hit";
  const nextHit = el("button", "gb-btn gb-hit-next", "\u25BC"); nextHit.title = "next hit";
  const hitCount = el("span", "gb-hit-count");
  const hitList = el("div", "gb-hits");
  searchBox.append(search, findBtn, prevHit, nextHit, hitCount, hitList);
  const mk = (label, action, cls, tip) => {
    const b = el("button", "gb-btn " + (cls || ""), label); b.dataset.action = action;
    if (tip) b.title = tip;
    b.onclick = () => request(action);
    return b;
  };
  const runBtn = mk("\u25B6 Run", "run", "gb-run", "reload changed pass files and run again");
  const verifyBtn = mk("Verify", "verify", "gb-verify", "check each rewrite numerically");
  const diffSel = el("select", "gb-diff");
  for (const [v, t] of [["", "no diff"], ["pass:side", "pass diff: side by side"], ["pass:overlay", "pass diff: overlay"],
    ["stage:side", "stage diff: side by side"], ["stage:overlay", "stage diff: overlay"],
    ["candidate:side", "rewrite diff: side by side"], ["candidate:overlay", "rewrite diff: overlay"]]) {
    const o = el("option", null, t); o.value = v; diffSel.appendChild(o);
  }
  diffSel.onchange = () => request("set_diff", { mode: diffSel.value });
  const expDump = mk("GE dumps", "export_dumps", "gb-exp");
  const expJson = mk("Report JSON", "export_report", "gb-exp");
  const expSvg = mk("SVG", "export_svg", "gb-exp");
  const expRepro = mk("Repro", "export_repro", "gb-exp gb-exp-repro",
    "the selected candidate's repro bundle: its subgraph (ONNX, GE dump), the pass file, gebench and atc commands");
  const overBtn = mk("Overview", "overview", "gb-over", "the whole model");
  const fitBtn = el("button", "gb-btn gb-fit", "Fit"); fitBtn.title = "the whole drawing (f)";
  const fitSelBtn = el("button", "gb-btn gb-fit-sel", "Fit selection"); fitSelBtn.title = "the selected nodes (F)";
  const zin = el("button", "gb-btn", "+"); const zout = el("button", "gb-btn", "\u2212");
  const backBtn = el("button", "gb-btn gb-back", "\u2190 Back"); backBtn.title = "the previous selection (Backspace)";
  backBtn.onclick = () => request("back");
  const togglePasses = el("button", "gb-btn gb-toggle-passes", "\u25E7"); togglePasses.title = "show/hide the pass list";
  const toggleDetails = el("button", "gb-btn gb-toggle-details", "\u25E8"); toggleDetails.title = "show/hide the details panel";
  togglePasses.onclick = () => { root.classList.toggle("gb-hide-passes"); };
  toggleDetails.onclick = () => { root.classList.toggle("gb-hide-details"); };
  const status = el("span", "gb-status");
  bar.append(togglePasses, title, diffHead, snapSel, searchBox, runBtn, verifyBtn, diffSel, el("span", "gb-sep", "export:"),
    expDump, expJson, expSvg, expRepro, overBtn, fitBtn, fitSelBtn, zin, zout, backBtn, toggleDetails, status);

  // ------------------------------------------------------------------ body
  const body = el("div", "gb-body");
  const passes = el("div", "gb-passes");
  const center = el("div", "gb-center");
  const panes = el("div", "gb-panes");
  const pane = el("div", "gb-pane gb-main-pane"); const content = el("div", "gb-content");
  const paneHead = el("div", "gb-pane-head");
  const minimap = el("div", "gb-minimap"); const miniImg = el("canvas"); const miniBox = el("div", "gb-minibox");
  miniImg.title = "minimap"; minimap.append(miniImg, miniBox);
  pane.append(content, paneHead, minimap);
  // the hierarchy level drawn (large graphs): model > group > ...; a click goes back to that level
  const crumbs = el("div", "gb-crumbs"); pane.appendChild(crumbs);
  const side = el("div", "gb-pane gb-side-pane"); const sideHead = el("div", "gb-side-head gb-pane-head");
  const sideContent = el("div", "gb-content"); side.append(sideContent, sideHead);
  panes.append(pane, side);
  const legend = el("div", "gb-legend");
  for (const [st, t] of [["REPLACED", "replaced"], ["REJECTED_BY_MEET_REQUIREMENTS", "meet_requirements false"],
    ["STRUCTURAL_MISMATCH", "near-miss"], ["BOUNDARY_VIOLATION", "boundary"], ["WOULD_CREATE_CYCLE", "cycle"],
    ["LOST_TO_OVERLAP", "overlap"], ["REPLACEMENT_FAILED", "replacement failed"], ["LINT", "lint"]]) {
    const c = chip(st); c.lastChild.textContent = " " + t; legend.appendChild(c);
  }
  legend.appendChild(el("span", "gb-keys", "keys: j/k candidates \u00B7 n/N rewrites \u00B7 Backspace back \u00B7 / search \u00B7 f fit \u00B7 e/c expand/collapse \u00B7 u level up"));
  // the candidate table: filter chips, a sortable header, a virtualized body
  const table = el("div", "gb-table");
  const filters = el("div", "gb-filters");
  const thead = el("div", "gb-thead gb-grid");
  const viewport = el("div", "gb-tviewport");
  const spacer = el("div", "gb-tspacer");
  const rowsEl = el("div", "gb-trows");
  viewport.append(spacer, rowsEl);
  // header and rows scroll sideways together when the table is narrower than its columns
  const hscroll = el("div", "gb-hscroll");
  hscroll.append(thead, viewport);
  table.append(filters, hscroll);
  center.append(panes, legend, table);
  // stepping through the selected pass's rewrites: the graph after rewrite k (arrow keys move the slider)
  const stepper = el("div", "gb-stepper");
  const stepLabel = el("span", "gb-step-label");
  const stepPrev = el("button", "gb-btn gb-step-prev", "\u25C0"); stepPrev.title = "the previous rewrite";
  const stepRange = el("input", "gb-step-range");
  stepRange.type = "range"; stepRange.min = "0"; stepRange.step = "1";
  stepRange.title = "the graph after rewrite k of the selected pass (0: before its first); arrow keys step";
  const stepNext = el("button", "gb-btn gb-step-next", "\u25B6"); stepNext.title = "the next rewrite";
  const stepK = el("span", "gb-step-k");
  const stepOff = el("button", "gb-btn gb-step-off", "\u2715"); stepOff.title = "stop stepping: the snapshot again";
  stepper.append(stepLabel, stepPrev, stepRange, stepNext, stepK, stepOff);
  center.insertBefore(stepper, legend);
  const details = el("div", "gb-details");
  body.append(passes, center, details);
  root.append(bar, body);

  // The drawings live in shadow roots holding only the widget's stylesheet: restyling a thousand boxes (a pass
  // click) then matches them against these rules alone, not against the thousands of rules of the notebook page
  // (which made style recalculation several times slower). Theme variables still inherit from the widget.
  const drawingRoot = (host) => {
    const shadow = host.attachShadow({ mode: "open" });
    try {
      const sheet = new window.CSSStyleSheet();
      sheet.replaceSync(model.get("_css") || "");
      shadow.adoptedStyleSheets = [sheet];
    } catch { // no constructable stylesheets: a copy of the rules in a style element
      shadow.appendChild(el("style", null, model.get("_css") || ""));
    }
    return shadow;
  };
  const drawing = drawingRoot(content);
  const sideDrawing = drawingRoot(sideContent);
  const setDrawing = (shadow, text) => {
    const keep = shadow.querySelector(":scope > style");
    shadow.innerHTML = text;
    if (keep) shadow.prepend(keep);
  };
  const pz = panZoom(pane, content, drawing);
  const spz = panZoom(side, sideContent, sideDrawing);
  let linking = false;
  const linked = () => model.get("side_kind") === "diff";
  pz.onChange((st) => { if (linked() && !linking) { linking = true; spz.set(st); linking = false; } });
  spz.onChange((st) => { if (linked() && !linking) { linking = true; pz.set(st); updateMinimap(); linking = false; } });
  let lastFit = "first"; // how the drawing was last fitted (re-fitted the same way when the pane resizes)
  fitBtn.onclick = () => { lastFit = "whole"; pz.fit(true); if (!linked()) spz.fit(true); };
  const fitSelection = () => {
    const sel = drawing.querySelectorAll("g.node.gb_sel, g.node.gb_clicked, g.node.gb_found");
    const els = sel.length ? sel : drawing.querySelectorAll("g.node[data-gbhl]");
    if (pz.fitTo(els)) lastFit = "";
  };
  fitSelBtn.onclick = fitSelection;
  zin.onclick = () => { lastFit = ""; pz.zoom(1.25); };
  zout.onclick = () => { lastFit = ""; pz.zoom(0.8); };

  // ------------------------------------------------------------------ minimap
  let hasMini = false; // a drawing is shown (the minimap shows when it overflows the pane)
  // the minimap is the drawing rasterized once into a canvas, after the drawing is shown (an <img> of the SVG
  // would be laid out and drawn again whenever anything in the minimap changes, e.g. its box on every pan)
  const rasterMinimap = (text, serial) => {
    const url = URL.createObjectURL(new Blob([text], { type: "image/svg+xml" }));
    const img = el("img");
    img.onerror = () => URL.revokeObjectURL(url);
    img.onload = () => {
      const draw = () => {
        URL.revokeObjectURL(url);
        if (serial !== svgSerial || !img.naturalWidth) return; // a newer drawing replaced this one
        const w = img.naturalWidth, h = img.naturalHeight;
        const r = Math.min(1, 360 / w, 900 / h);
        miniImg.width = Math.max(1, Math.round(w * r)); miniImg.height = Math.max(1, Math.round(h * r));
        miniImg.getContext("2d").drawImage(img, 0, 0, miniImg.width, miniImg.height); // as the <img> showed it
      };
      if (window.requestIdleCallback) window.requestIdleCallback(draw, { timeout: 1000 }); else setTimeout(draw, 50);
    };
    img.src = url;
  };
  const updateMinimap = () => {
    const wh = pz.size();
    if (!wh || !hasMini) { minimap.style.display = "none"; return; }
    minimap.style.display = "";
    const [w, h] = wh;
    const pw = pane.clientWidth, ph = pane.clientHeight;
    const st = pz.st;
    // only when the drawing does not fit in the pane
    if (w * st.s <= pw + 1 && h * st.s <= ph + 1 && st.x >= -1 && st.y >= -1) { minimap.style.display = "none"; return; }
    // the minimap keeps the drawing's proportions: at most 180 px wide and 45% of the pane high
    const k = Math.min(180 / w, Math.max(120, ph * 0.45) / h);
    minimap.style.width = `${Math.max(24, w * k)}px`; minimap.style.height = `${h * k}px`;
    const vx = -st.x / st.s, vy = -st.y / st.s, vw = pw / st.s, vh = ph / st.s;
    Object.assign(miniBox.style, { left: `${vx * k}px`, top: `${vy * k}px`, width: `${vw * k}px`, height: `${vh * k}px` });
    miniImg.style.width = `${w * k}px`; miniImg.style.height = `${h * k}px`;
    minimap.dataset.scale = String(k);
  };
  pz.onChange(updateMinimap);
  const miniMove = (ev) => {
    const k = parseFloat(minimap.dataset.scale || "0");
    if (!k) return;
    const r = minimap.getBoundingClientRect();
    lastFit = "";
    pz.moveTo((ev.clientX - r.left) / k, (ev.clientY - r.top) / k);
  };
  let miniDrag = false;
  minimap.addEventListener("mousedown", (ev) => { ev.stopPropagation(); miniDrag = true; miniMove(ev); });
  window.addEventListener("mousemove", (ev) => { if (miniDrag) miniMove(ev); });
  window.addEventListener("mouseup", () => { miniDrag = false; });
  minimap.addEventListener("wheel", (ev) => ev.stopPropagation());

  // ------------------------------------------------------------------ drawing and highlighting
  // the top-left corner of a node's box, read from its polygon's points (no layout needed)
  const corner = (g) => {
    const shape = g.querySelector("polygon");
    if (!shape) return null;
    let x = Infinity, y = Infinity;
    for (const p of (shape.getAttribute("points") || "").trim().split(/\s+/)) {
      const [px, py] = p.split(",").map(Number);
      if (px < x) x = px;
      if (py < y) y = py;
    }
    return Number.isFinite(x) && Number.isFinite(y) ? [x, y] : null;
  };
  // status shown by a shape too (colour-blind users): a glyph at the top-left of each coloured box
  // a node's glyph element is made once and then only changes its shape (inserting elements into a large
  // drawing costs far more than changing an attribute): made for every box while the page is idle after a
  // drawing is shown (makeGlyphs), so that the first colouring of a pass only sets attributes
  const glyphOf = (g) => {
    let t = g.gbGlyph;
    if (t !== undefined) return t;
    const xy = corner(g);
    if (!xy) { g.gbGlyph = null; return null; }
    t = document.createElementNS("http://www.w3.org/2000/svg", "path");
    t.setAttribute("class", "gb-glyph");
    g.appendChild(t);
    g.gbGlyph = t;
    t.gbAt = [xy[0] + 2, xy[1] + 2];
    return t;
  };
  const setGlyph = (g, cls) => {
    const m = cls ? /gb_st_(\w+)/.exec(cls) : null;
    const st = m && CSS_STATUS[m[1]];
    if (!st) return; // the stylesheet hides the glyph of a box without a status class
    const t = glyphOf(g);
    if (!t) return;
    if (t.dataset.status === st) return;
    t.setAttribute("d", glyphAt(st, t.gbAt[0], t.gbAt[1]));
    t.dataset.status = st;
  };
  // what is applied to the drawing now (element id -> classes): updates touch only what changed, so a
  // row click on a pass with thousands of coloured nodes restyles a handful of elements
  let shownHl = new Map();
  let shownClicked = null;
  const applyHighlight = (preview) => {
    const hl = (preview && typeof preview === "object" ? preview : null) || model.get("highlight") || {};
    const svg = drawing.querySelector("svg");
    if (!svg) { shownHl = new Map(); shownClicked = null; return; }
    const ids = new Set();
    for (const [id, cls] of shownHl) if (hl[id] !== cls) ids.add(id);
    for (const id in hl) if (shownHl.get(id) !== hl[id]) ids.add(id);
    let selMoved = false;
    for (const id of ids) {
      const g = svg.getElementById(id);
      const old = shownHl.get(id), now = hl[id];
      if (!g) { shownHl.delete(id); continue; }
      if (old) for (const c of old.split(" ")) if (c) g.classList.remove(c);
      if (now) {
        for (const c of now.split(" ")) if (c) g.classList.add(c);
        g.dataset.gbhl = now; shownHl.set(id, now);
      } else { delete g.dataset.gbhl; shownHl.delete(id); }
      if ((old || "").includes("gb_sel") !== (now || "").includes("gb_sel")) selMoved = true;
      if (g.classList.contains("node")) setGlyph(g, now);
    }
    root.dataset.hl = String(shownHl.size);
    // whose colours the drawing shows (a pass drawn ahead of the kernel's answer, else the selected pass)
    root.dataset.hlPass = hl === preview ? (previewPassName ?? root.dataset.hlPass ?? "") : (model.get("selected_pass") || "");
    const sel = model.get("selected_node");
    const clicked = sel >= 0 ? svg.getElementById("n" + sel) : null;
    if (clicked !== shownClicked) {
      if (shownClicked) shownClicked.classList.remove("gb_clicked");
      if (clicked) clicked.classList.add("gb_clicked");
      shownClicked = clicked; selMoved = true;
    }
    if (!selMoved && !ids.size) return;
    // bring the selection (or the first highlighted node) into view when it is off screen; measured in the
    // next frame, after every change of this answer is in the page (one layout, not one per change)
    if (!centerQueued) {
      centerQueued = true;
      requestAnimationFrame(() => {
        centerQueued = false;
        const focus = drawing.querySelector("g.node.gb_sel") || shownClicked || drawing.querySelector("g.node[data-gbhl]");
        if (focus && !pz.visible(focus)) { lastFit = ""; pz.center(focus); }
      });
    }
  };
  let centerQueued = false;
  const applySideHighlight = () => {
    const hl = model.get("side_highlight") || {};
    const svg = sideDrawing.querySelector("svg");
    if (!svg) return;
    for (const g of sideDrawing.querySelectorAll("[data-gbhl]")) {
      for (const c of g.dataset.gbhl.split(" ")) if (c) g.classList.remove(c);
      delete g.dataset.gbhl;
    }
    for (const [id, cls] of Object.entries(hl)) {
      const g = svg.getElementById(id);
      if (!g) continue;
      for (const c of cls.split(" ")) if (c) g.classList.add(c);
      g.dataset.gbhl = cls;
    }
  };
  // expansion markers on nodes whose edges leave a focused view: click one to draw its neighbours too
  const addExpanders = (svg) => {
    for (const g of svg.querySelectorAll("g.node.gb_cut")) {
      const shape = g.querySelector("polygon, path");
      if (!shape || !shape.getBBox || !g.id || g.id[0] !== "n") continue;
      const b = shape.getBBox();
      const ns = "http://www.w3.org/2000/svg";
      const m = document.createElementNS(ns, "g");
      m.setAttribute("class", "gb-expand");
      m.dataset.node = g.id.slice(1);
      const c = document.createElementNS(ns, "circle");
      c.setAttribute("cx", String(b.x + b.width)); c.setAttribute("cy", String(b.y)); c.setAttribute("r", "6");
      const t = document.createElementNS(ns, "text");
      t.setAttribute("x", String(b.x + b.width)); t.setAttribute("y", String(b.y + 3.5)); t.textContent = "+";
      const tip = document.createElementNS(ns, "title");
      tip.textContent = "hidden edges: click to draw this node's neighbours";
      m.append(c, t, tip);
      svg.querySelector("g#gb_graph, g").appendChild(m);
    }
  };
  // full names on hover for labels the drawing ellipsized
  const askNames = (svg, which) => {
    const ids = [];
    for (const g of svg.querySelectorAll("g.node")) {
      if (g.id && g.textContent.includes("\u2026")) ids.push(g.id);
    }
    if (ids.length) model.send({ action: "names", pane: which, ids: ids.slice(0, 5000) });
  };
  const setNames = (which, names) => {
    const svg = (which === "side" ? sideDrawing : drawing).querySelector("svg");
    if (!svg) return;
    for (const [id, name] of Object.entries(names)) {
      const g = svg.getElementById(id);
      if (!g || g.querySelector(":scope > title")) continue;
      const t = document.createElementNS("http://www.w3.org/2000/svg", "title");
      t.textContent = name;
      g.insertBefore(t, g.firstChild);
    }
  };

  let svgSerial = 0;
  const loadSvg = async () => {
    const my = ++svgSerial;
    const text = await inflate(model.get("svg_gz"));
    if (my !== svgSerial) return; // a newer drawing arrived while this one was inflating
    setDrawing(drawing, text);
    shownHl = new Map(); shownClicked = null;
    root.dataset.svgSerial = String(my);
    hasMini = !!text;
    if (text) rasterMinimap(text, my);
    const svg = drawing.querySelector("svg");
    if (svg) { addExpanders(svg); askNames(svg, "main"); }
    applyHighlight();
    applyGroupCounts();
    lastFit = "first";
    pz.fit(false);
    if (linked()) spz.set(pz.st);
    updateMinimap();
    makeGlyphs(my);
    schedulePrefetch();
  };
  // the glyph elements of every box of drawing `serial`, a few hundred per idle period
  const idle = (f) => { if (window.requestIdleCallback) window.requestIdleCallback(f, { timeout: 1000 }); else setTimeout(f, 30); };
  const makeGlyphs = (serial) => {
    const boxes = [...drawing.querySelectorAll("g.node")];
    let k = 0;
    const step = (deadline) => {
      if (serial !== svgSerial) return; // a newer drawing replaced this one
      const end = Math.min(boxes.length, k + 300);
      for (; k < end; k++) glyphOf(boxes[k]);
      if (k < boxes.length && !(deadline && deadline.timeRemaining && deadline.timeRemaining() > 5)) idle(step);
      else if (k < boxes.length) step(deadline);
      else root.dataset.glyphs = String(serial);
    };
    idle(step);
  };
  let sideSerial = 0;
  const loadSide = async () => {
    const my = ++sideSerial;
    const text = await inflate(model.get("side_svg_gz"));
    if (my !== sideSerial) return; // only the latest side drawing is shown, never two
    setDrawing(sideDrawing, text);
    side.dataset.serial = String(my);
    sideHead.textContent = model.get("side_title") || "";
    side.style.display = text ? "" : "none";
    const svg = sideDrawing.querySelector("svg");
    if (svg) askNames(svg, "side");
    applySideHighlight();
    if (linked()) spz.set(pz.st); else spz.fit(false);
  };
  const renderPaneHead = () => {
    const t = model.get("pane_title") || "";
    paneHead.textContent = t;
    paneHead.style.display = t ? "" : "none";
    sideHead.textContent = model.get("side_title") || "";
    side.classList.toggle("gb-linked", linked());
  };

  const renderCrumbs = () => {
    const levels = model.get("levels") || [];
    crumbs.innerHTML = "";
    crumbs.style.display = levels.length ? "" : "none";
    if (!levels.length) return;
    const up = el("button", "gb-btn gb-up", "\u2191");
    up.title = "collapse: the level above (u)";
    up.disabled = levels.length < 2;
    up.onclick = () => request("level_up");
    crumbs.appendChild(up);
    levels.forEach((lv, k) => {
      if (k) crumbs.appendChild(el("span", "gb-crumb-sep", "\u203A"));
      const a = el("a", "gb-crumb" + (k === levels.length - 1 ? " gb-crumb-cur" : ""), lv.label);
      a.href = "#"; a.title = lv.label; a.dataset.group = String(lv.group);
      a.onclick = (ev) => { ev.preventDefault(); request("open_level", { group: lv.group }); };
      crumbs.appendChild(a);
    });
  };
  // counts on group boxes: the selected pass's candidates (replaced) and the diff's changes under each box
  const applyGroupCounts = () => {
    const svg = drawing.querySelector("svg");
    if (!svg) return;
    const counts = model.get("group_counts") || {};
    for (const t of svg.querySelectorAll("text.gb-gcount")) t.remove();
    for (const [id, c] of Object.entries(counts)) {
      const g = svg.getElementById(id);
      const shape = g && g.querySelector("polygon, path");
      if (!shape) continue;
      const b = shape.getBBox();
      const parts = [];
      if (c.candidates) parts.push(`${c.candidates} cand`);
      if (c.replaced) parts.push(`${c.replaced} repl`);
      if (c.diff) parts.push(`${c.diff} diff`);
      if (!parts.length) continue;
      const t = document.createElementNS("http://www.w3.org/2000/svg", "text");
      t.setAttribute("class", "gb-gcount");
      t.setAttribute("x", String(b.x + b.width - 2)); t.setAttribute("y", String(b.y - 2));
      t.setAttribute("text-anchor", "end");
      t.textContent = parts.join(" \u00B7 ");
      g.appendChild(t);
    }
  };

  drawing.addEventListener("click", (ev) => {
    if (pz.st.moved) return;
    const x = ev.target.closest ? ev.target.closest("g.gb-expand") : null;
    if (x) { request("expand", { node: parseInt(x.dataset.node, 10) }); return; }
    const g = ev.target.closest ? ev.target.closest("g.node") : null;
    if (g && g.id && g.id[0] === "g") {
      // a group box expands in place; with Shift it opens as a level of its own (the breadcrumb grows)
      request(ev.shiftKey ? "open_group" : "expand_group", { group: parseInt(g.id.slice(1), 10) });
      return;
    }
    const frame = !g && ev.target.closest ? ev.target.closest("g.cluster") : null;
    if (frame && frame.id && frame.id[0] === "x" && ev.target.tagName === "text") {
      request("collapse_group", { group: parseInt(frame.id.slice(1), 10) });  // a frame's title collapses it
      return;
    }
    if (!g || !g.id || g.id[0] !== "n") return;
    if (shownClicked) shownClicked.classList.remove("gb_clicked");
    g.classList.add("gb_clicked"); shownClicked = g;
    request("select_node", { node: parseInt(g.id.slice(1), 10) });
  });

  // the "after" pane of a side-by-side diff: a click shows the node and marks what it was made from
  sideDrawing.addEventListener("click", (ev) => {
    if (spz.st.moved || !linked()) return;
    const g = ev.target.closest ? ev.target.closest("g.node") : null;
    if (!g || !g.id || g.id[0] !== "n") return;
    request("select_side_node", { node: parseInt(g.id.slice(1), 10) });
  });

  // ------------------------------------------------------------------ rewrite steps
  const stepState = () => model.get("rewrite_step") || {};
  const stepTo = (k) => {
    const s = stepState();
    if (!s.pass || k < 0 || k > s.n) return;
    stepRange.value = String(k);
    request("step_rewrite", { k });
  };
  stepRange.addEventListener("input", () => { stepK.textContent = `${stepRange.value} / ${stepState().n}`; });
  stepRange.addEventListener("change", () => stepTo(parseInt(stepRange.value, 10)));
  stepPrev.onclick = () => { const s = stepState(); stepTo(s.k > 0 ? s.k - 1 : 0); };
  stepNext.onclick = () => { const s = stepState(); stepTo(s.k >= 0 ? s.k + 1 : 0); };
  stepOff.onclick = () => request("leave_step");
  const renderStep = () => {
    const s = stepState();
    const on = !!s.pass && s.n > 0;
    stepper.style.display = on ? "" : "none";
    root.dataset.step = String(on ? s.k : -1);
    if (!on) return;
    stepLabel.textContent = `rewrites of ${s.pass}:`;
    stepLabel.title = stepLabel.textContent;
    stepRange.max = String(s.n);
    stepRange.value = String(Math.max(0, s.k));
    stepK.textContent = s.k >= 0 ? `${s.k} / ${s.n}` : `\u2013 / ${s.n}`;
    stepper.classList.toggle("gb-stepping", s.k >= 0);
    stepOff.disabled = s.k < 0;
    stepPrev.disabled = s.k <= 0;
    stepNext.disabled = s.k >= s.n;
  };

  // ------------------------------------------------------------------ passes
  const renderPasses = () => {
    passes.innerHTML = "";
    const sel = model.get("selected_pass");
    // a graph shown without a run has no passes and no candidates: the graph gets their room
    root.classList.toggle("gb-no-run", !(model.get("stages") || []).length && !(model.get("reload_report") || []).length);
    for (const group of model.get("stages") || []) {
      passes.appendChild(el("div", "gb-stage", group.stage));
      for (const p of group.passes) {
        const item = el("div", "gb-pass" + (p.name === sel ? " gb-pass-sel" : ""));
        item.dataset.pass = p.name;
        const name = el("div", "gb-pass-name", p.name); name.title = p.name;
        item.appendChild(name);
        const counts = el("div", "gb-pass-counts");
        if (p.time) counts.appendChild(el("span", "gb-time", fmtMs(p.time.wall_ms)));
        item.title = name.title = passTip(p);
        counts.appendChild(el("span", "gb-count", `${p.candidates} cand.`));
        counts.appendChild(el("span", "gb-count gb_st_replaced", `${p.replaced} repl.`));
        for (const [k, v] of Object.entries(p.rejected || {})) {
          const c = el("span", "gb-count", `${v} ${statusLabel(k)}`); c.title = k; counts.appendChild(c);
        }
        if (p.lints) counts.appendChild(el("span", "gb-count gb_st_lint", `${p.lints} lint`));
        item.appendChild(counts);
        if (p.name === sel && p.time && p.time.patterns.length) {
          // the selected pass: one line per pattern
          const pats = el("div", "gb-pass-patterns");
          for (const q of p.time.patterns) {
            const line = el("div", "gb-pass-pattern");
            line.append(el("span", "gb-pattern-name", q.name), el("span", "gb-time", fmtMs(q.wall_ms)),
              el("span", "gb-count", `${q.candidates} cand.`), el("span", "gb-count gb_st_replaced", `${q.replaced} repl.`));
            line.title = `${q.name}: ${q.anchors} anchors, ${q.matches} matches, ${q.rewrites} rewrites, ${fmtMs(q.cpu_ms)} CPU`;
            pats.appendChild(line);
          }
          item.appendChild(pats);
        }
        item.onclick = () => {
          for (const o of passes.querySelectorAll(".gb-pass-sel")) o.classList.remove("gb-pass-sel");
          item.classList.add("gb-pass-sel");
          request("select_pass", { name: p.name });
          previewPass(p.name);
        };
        passes.appendChild(item);
      }
    }
    const rep = model.get("reload_report") || [];
    if (rep.length) {
      passes.appendChild(el("div", "gb-stage", "last reload"));
      for (const r of rep) {
        const item = el("div", "gb-reload");
        item.appendChild(el("div", "gb-pass-name", r.pass));
        item.appendChild(el("div", "gb-gained", `+${r.gained.length} gained`));
        item.appendChild(el("div", "gb-lost", `\u2212${r.lost.length} lost`));
        passes.appendChild(item);
      }
    }
  };

  // ------------------------------------------------------------------ candidate table (virtualized)
  let tbl = { version: -1, total: 0 };
  let pages = new Map(); // page number -> columns, for tbl.version only
  const asked = new Set();
  const rowAt = (pos) => {
    const p = pages.get(Math.floor(pos / PAGE));
    if (!p) return null;
    const k = pos - p.offset;
    if (k < 0 || k >= p.i.length) return null;
    const r = {};
    for (const key of Object.keys(p)) if (Array.isArray(p[key])) r[key] = p[key][k];
    return r;
  };
  const cell = (cls, text) => { const c = el("div", "gb-td " + (cls || ""), text); if (text) c.title = text; return c; };
  const rowEl = (pos, r) => {
    const tr = el("div", "gb-cand gb-grid");
    tr.style.top = `${pos * ROW_H}px`;
    tr.dataset.pos = String(pos);
    if (!r) { tr.classList.add("gb-cand-loading"); tr.appendChild(cell("", "\u2026")); return tr; }
    tr.dataset.index = String(r.i);
    if (r.i === (previewSel ?? model.get("selected_candidate"))) tr.classList.add("gb-cand-sel");
    tr.appendChild(cell("", String(r.i)));
    const st = el("div", "gb-td"); st.appendChild(chip(r.status)); tr.appendChild(st);
    tr.appendChild(cell("", r.pattern));
    tr.appendChild(cell("", r.targets.join(", ") + (r.ntargets > r.targets.length ? " \u2026" : "")));
    tr.appendChild(cell("gb-reason", r.reason));
    tr.appendChild(cell("", (r.captures || []).join(", ")));
    tr.appendChild(cell(r.exception ? "gb-exc" : "", r.exception || r.meet));
    const v = el("div", "gb-td");
    if (r.verify) {
      const ok = r.verify.ok;
      v.appendChild(el("span", "gb-badge " + (ok ? "gb-ok" : "gb-bad"), `${ok ? "\u2714" : "\u2716"} max|err| ${r.verify.abs.toExponential(1)}`));
    }
    tr.appendChild(v);
    const src = el("div", "gb-td gb-src");
    for (const s of [r.pattern_src, r.hook_src]) {
      if (!s) continue;
      const line = el("a", "gb-srcline", s.split("/").pop()); line.href = "#"; line.title = s;
      line.onclick = (ev) => { ev.preventDefault(); ev.stopPropagation(); request("show_source", { src: s }); };
      src.appendChild(line);
    }
    tr.appendChild(src);
    tr.onclick = () => {
      for (const o of rowsEl.querySelectorAll(".gb-cand-sel")) o.classList.remove("gb-cand-sel");
      tr.classList.add("gb-cand-sel");
      request("select_candidate", { index: r.i });
      previewCandidate(r);
    };
    return tr;
  };
  const drawRows = () => {
    // the viewport's height and scroll offset are tracked (resize observer, scroll events), never read
    // here: reading them would force a layout of the whole page in the middle of an update
    const h = viewH || 200;
    const first = Math.max(0, Math.floor(scrollY / ROW_H) - 5);
    const last = Math.min(tbl.total, Math.ceil((scrollY + h) / ROW_H) + 5);
    const frag = document.createDocumentFragment();
    for (let pos = first; pos < last; pos++) {
      const r = rowAt(pos);
      if (!r) {
        const pg = Math.floor(pos / PAGE);
        if (!asked.has(pg)) { asked.add(pg); model.send({ action: "rows", version: tbl.version, offset: pg * PAGE, limit: PAGE }); }
      }
      frag.appendChild(rowEl(pos, r));
    }
    rowsEl.replaceChildren(frag);
  };
  let scrollQueued = false;
  let viewH = 0, scrollY = 0;
  const scrollTo = (y) => { y = Math.max(0, Math.min(y, tbl.total * ROW_H - (viewH || 0))); if (y !== scrollY) { scrollY = y; viewport.scrollTop = y; } };
  viewport.addEventListener("scroll", () => {
    scrollY = viewport.scrollTop;
    if (scrollQueued) return;
    scrollQueued = true;
    requestAnimationFrame(() => { scrollQueued = false; drawRows(); });
  });
  const sendQuery = (q) => request("table", q);
  const renderFilters = () => {
    filters.innerHTML = "";
    const q = tbl.query || { statuses: [], sort: "i", desc: false };
    const counts = tbl.counts || {};
    const allBtn = el("button", "gb-filter" + (q.statuses.length ? "" : " gb-on"), `all ${tbl.all || 0}`);
    allBtn.onclick = () => sendQuery({ statuses: [], sort: q.sort, desc: q.desc });
    filters.appendChild(allBtn);
    for (const [st, n] of Object.entries(counts)) {
      const on = q.statuses.includes(st);
      const b = el("button", "gb-filter" + (on ? " gb-on" : ""));
      b.dataset.status = st;
      b.append(chip(st), document.createTextNode(` ${n}`));
      b.title = (on ? "stop showing only " : "show only ") + statusLabel(st) + " (several can be on)";
      b.onclick = () => {
        const s = new Set(q.statuses);
        if (on) s.delete(st); else s.add(st);
        sendQuery({ statuses: [...s], sort: q.sort, desc: q.desc });
      };
      filters.appendChild(b);
    }
    filters.appendChild(el("span", "gb-table-count", tbl.pass ? `${tbl.total} shown` : ""));
  };
  const renderHead = () => {
    thead.innerHTML = "";
    const q = tbl.query || { sort: "i", desc: false };
    for (const [, label, key] of COLUMNS) {
      const th = el("div", "gb-th" + (key ? " gb-sortable" : ""), label);
      if (key) {
        th.dataset.sort = key;
        if (q.sort === key) th.textContent += q.desc ? " \u25BC" : " \u25B2";
        th.title = "sort by " + label;
        th.onclick = () => sendQuery({ statuses: q.statuses || [], sort: key, desc: q.sort === key ? !q.desc : false });
      }
      thead.appendChild(th);
    }
  };
  const renderTable = (cached) => {
    const t = (cached && typeof cached === "object" ? cached : null) || model.get("table") || {};
    if (t.version !== tbl.version) {
      tbl = Object.assign({ total: 0 }, t);
      pages = new Map();
      asked.clear();
      if (t.page && t.page.i) pages.set(0, t.page);
      spacer.style.height = `${(t.total || 0) * ROW_H}px`;
      scrollTo(t.selected_pos > 0 ? t.selected_pos * ROW_H - 2 * ROW_H : 0);
    }
    root.dataset.tableVersion = String(tbl.version);
    table.classList.toggle("gb-table-empty", !tbl.pass || !tbl.total);
    table.dataset.empty = !tbl.pass ? "select a pass" : (!tbl.all ? "no candidates" : (!tbl.total ? "no candidate passes the filter" : ""));
    spacer.style.height = `${tbl.total * ROW_H}px`;
    renderFilters(); renderHead(); drawRows();
  };
  const scrollToPos = (pos) => {
    if (pos < 0) return;
    const top = pos * ROW_H, h = viewH || 200;
    if (top < scrollY || top + ROW_H > scrollY + h) scrollTo(top - h / 2);
  };
  model.on("msg:custom", (msg) => {
    if (!msg || !msg.reply) return;
    if (msg.reply === "rows") {
      if (msg.version !== tbl.version) return; // a page of an older table
      pages.set(Math.floor(msg.offset / PAGE), msg);
      drawRows();
    } else if (msg.reply === "names") {
      setNames(msg.pane, msg.names || {});
    } else if (msg.reply === "prefetch") {
      takePrefetch(msg);
    }
  });

  // ------------------------------------------------------------------ details, search, header
  const renderDetails = () => {
    details.innerHTML = model.get("details_html") || "<i>click a node or a candidate</i>";
    wireDetails();
  };
  const wireDetails = () => {
    for (const b of details.querySelectorAll("button[data-action]")) {
      b.onclick = () => request(b.dataset.action, { node: parseInt(b.dataset.node || "-1", 10) });
    }
    for (const a of details.querySelectorAll("[data-src]")) {
      a.onclick = (ev) => { ev.preventDefault(); request("show_source", { src: a.dataset.src }); };
    }
    for (const a of details.querySelectorAll("[data-goto]")) {
      a.onclick = (ev) => { ev.preventDefault(); const g = drawing.querySelector("#" + CSS.escape(a.dataset.goto)); if (g) pz.center(g); };
    }
  };

  // ------------------------------------------------------------------ drawn ahead of the kernel's answer
  // A row click shows at once what the page already has: the row, the candidate's details from its table row
  // and its nodes marked on the drawing; the kernel's answer (full details, the pattern beside, a focused
  // view when the nodes are not drawn) replaces it when it comes. A pass click draws the pass's table and
  // colours as the page last saw them (same drawing, same filter and sort) until the kernel's answer.
  const SEL_CLASSES = new Set(["gb_sel", "gb_diverge"]);
  const strip = (hl, drop) => {
    const out = {};
    for (const [id, cls] of Object.entries(hl)) {
      const kept = cls.split(" ").filter((c) => c && !drop(c)).join(" ");
      if (kept) out[id] = kept;
    }
    return out;
  };
  const candidateHtml = (r) => {
    const esc = (v) => String(v ?? "").replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
    const items = [["pass", tbl.pass], ["pattern", r.pattern], ["reason", r.reason],
      ["targets", r.targets.join(", ") + (r.ntargets > r.targets.length ? ", \u2026" : "")],
      ["captures", (r.captures || []).join(", ")], ["meet_requirements", r.meet], ["exception", r.exception]];
    const rows = items.filter(([, v]) => v).map(([k, v]) =>
      `<tr><td><b>${esc(k)}</b></td><td${k === "exception" ? " class='gb-exc'" : ""}>${esc(v)}</td></tr>`);
    for (const [k, v] of [["pattern source", r.pattern_src], ["hook source", r.hook_src]]) {
      if (v) rows.push(`<tr><td><b>${k}</b></td><td><a href='#' class='gb-srcline' data-src='${esc(v)}'>${esc(v)}</a></td></tr>`);
    }
    return `<h4>candidate #${r.i} <span class='gb-chip gb_st_${STATUS_CSS[r.status] || "other"}'>${esc(r.status.toLowerCase())}</span></h4>` +
      `<table>${rows.join("")}</table><div class='gb-empty'>\u2026</div>`;
  };
  const previewCandidate = (r) => {
    previewSel = r.i;
    details.innerHTML = candidateHtml(r);
    wireDetails();
    const svg = drawing.querySelector("svg");
    const hl = strip(model.get("highlight") || {}, (c) => SEL_CLASSES.has(c));
    for (const id of r.ids || []) {
      if (svg && svg.getElementById("n" + id)) hl["n" + id] = hl["n" + id] ? hl["n" + id] + " gb_sel" : "gb_sel";
    }
    applyHighlight(hl);
    ahead.add(applyHighlight); ahead.add(renderDetails); ahead.add(drawRows);
  };
  // j/k: the next or previous row of the table as shown, when the page holds it (as step_candidate picks it)
  const previewStep = (delta) => {
    const sel = model.get("selected_candidate"), s = model.get("table_sel") || {};
    let pos;
    if (previewPos !== null) pos = previewPos;
    else if (sel < 0) pos = -1;
    else if (s.version === tbl.version && s.index === sel) pos = s.pos;
    else return;
    if (!tbl.total) return;
    pos = pos < 0 ? (delta >= 0 ? 0 : tbl.total - 1) : Math.min(Math.max(pos + delta, 0), tbl.total - 1);
    const r = rowAt(pos);
    if (!r) return;
    previewPos = pos;
    previewCandidate(r);
    scrollToPos(pos);
    drawRows();
  };
  // pass -> {serial, query, table, colours}: what the page drew for the pass the last time (kept for the drawing
  // it was drawn on only)
  const passSeen = new Map();
  let previewPassName = null;
  const remember = () => {
    const t = model.get("table") || {};
    if (!fresh() || !t.pass || t.pass !== model.get("selected_pass")) return;
    const colours = strip(model.get("highlight") || {}, (c) => !c.startsWith("gb_st_"));
    passSeen.set(t.pass, { serial: svgSerial, rows: t.rows_gen, query: JSON.stringify(t.query || {}), table: t, colours, from: "seen" });
  };
  // a pass the page holds is shown as it is for the drawing on screen, the ledger rows and the table's query
  const usable = (seen) => {
    const now = model.get("table") || {};
    return !!seen && seen.serial === svgSerial && seen.rows === now.rows_gen && seen.query === JSON.stringify(now.query || {});
  };
  const previewPass = (name) => {
    const seen = passSeen.get(name);
    const now = model.get("table") || {};
    // a diff follows the selected pass and a rewrite step ends with a switch: the answer draws something else
    if (!usable(seen) || now.pass === name || model.get("diff_mode") || (model.get("rewrite_step") || {}).k >= 0) return;
    // what was painted from the page's cache (counted: the tests read these)
    root.dataset.cachePaint = `${seen.from}:${name}`;
    root.dataset.cachePaints = String(+(root.dataset.cachePaints || 0) + 1);
    renderTable(Object.assign({}, seen.table, { selected_pos: -1 }));
    if (model.get("selected_candidate") >= 0) {
      previewSel = -1;
      details.innerHTML = "<i>click a node or a candidate</i>";
      drawRows();
    }
    const hl = strip(model.get("highlight") || {}, (c) => c.startsWith("gb_st_") || SEL_CLASSES.has(c));
    for (const [id, cls] of Object.entries(seen.colours)) hl[id] = hl[id] ? `${cls} ${hl[id]}` : cls;
    previewPassName = name;
    applyHighlight(hl);
    previewPassName = null;
    ahead.add(applyHighlight); ahead.add(renderDetails); ahead.add(renderTable); ahead.add(drawRows);
  };

  // Passes sent ahead: once a drawing is shown and the page is idle, it asks the kernel for the passes of the
  // pass list it does not hold yet, one at a time ({"action": "prefetch"}: the kernel answers with one pass's
  // first table page and its colouring of this drawing, the smallest passes first, at most 16, or "done").
  // Never while a request of the user is outstanding, and never more than one asked at a time, so a click
  // waits for at most one small answer. An answer is kept only when the drawing, the rows and the query are
  // still the ones it was asked for; what it holds is drawn ahead of a click like a pass seen before, and
  // replaced by the kernel's answer to the click.
  let pfKey = ""; // the kernel's name for what the last answer was made for (drawing, rows, query)
  let pfAsked = null; // what the outstanding question was asked for
  let pfQueued = false;
  let pfDone = ""; // the context the kernel said "done" for
  let pfVersion = -2; // table versions of passes sent ahead (negative: never the kernel's)
  // the kernel's messages go to every view of the widget: a view takes only the answers to its own questions
  const viewId = Math.random().toString(36).slice(2);
  const pfContext = () => {
    const t = model.get("table") || {};
    return `${svgSerial}|${t.rows_gen}|${JSON.stringify(t.query || {})}`;
  };
  // after an answer of the kernel: whether a switch keeps the drawing may have changed with it (the kernel
  // answers "done" at once when the page holds everything)
  const askAgain = () => { pfDone = ""; schedulePrefetch(); };
  const schedulePrefetch = () => {
    if (pfQueued || pfAsked || pfDone === pfContext() || !(model.get("stages") || []).length) return;
    pfQueued = true;
    idle(() => { pfQueued = false; prefetchNext(); });
  };
  const prefetchNext = () => {
    if (pfAsked || pfDone === pfContext()) return;
    // only when the page shows the kernel's latest answer (a change:seq or a drawing schedules it again)
    if (!fresh() || dirty.size || root.dataset.svgSerial !== String(svgSerial)) return;
    const have = [...passSeen].filter(([, s]) => usable(s)).map(([n]) => n);
    pfAsked = { context: pfContext(), serial: svgSerial };
    root.dataset.prefetch = "busy";
    model.send({ action: "prefetch", key: pfKey, have, tag: `${viewId}:${svgSerial}` });
  };
  const takePrefetch = (msg) => {
    if (typeof msg.tag !== "string" || !msg.tag.startsWith(viewId + ":")) return; // another view's answer
    const q = pfAsked;
    pfAsked = null;
    if (msg.key !== pfKey) { // the kernel's drawing, rows or query changed: what it sent before is void
      for (const [n, s] of [...passSeen]) if (s.from === "prefetch") passSeen.delete(n);
      pfKey = msg.key;
      pfDone = "";
    }
    if (!q || q.context !== pfContext() || msg.tag !== `${viewId}:${svgSerial}`) { schedulePrefetch(); return; }
    if (msg.done) {
      pfDone = q.context;
      root.dataset.prefetch = "done";
      root.dataset.prefetchFor = String(q.serial); // the drawing the page holds every pass for
      return;
    }
    const t = msg.table || {};
    if (t.rows_gen !== (model.get("table") || {}).rows_gen) { schedulePrefetch(); return; }
    passSeen.set(msg.pass, { serial: q.serial, rows: t.rows_gen, query: JSON.stringify(t.query || {}),
      table: Object.assign({}, t, { version: pfVersion-- }), colours: msg.colours || {}, from: "prefetch" });
    root.dataset.prefetched = String(+(root.dataset.prefetched || 0) + 1);
    root.dataset.prefetch = "busy";
    shapeGlyphs(msg.colours || {}, q.serial);
    schedulePrefetch();
  };
  // the glyphs of the boxes a pass sent ahead colours, given their shape while the page is idle (hidden until
  // the box has a status class; a box whose glyph has a shape keeps it: a switch changes only what differs)
  const shapeGlyphs = (colours, serial) => {
    const todo = Object.entries(colours);
    let k = 0;
    const step = () => {
      const svg = drawing.querySelector("svg");
      if (serial !== svgSerial || !svg) return;
      for (const end = Math.min(todo.length, k + 300); k < end; k++) {
        const g = svg.getElementById(todo[k][0]);
        if (g && g.classList.contains("node") && !(g.gbGlyph && g.gbGlyph.dataset.status)) setGlyph(g, todo[k][1]);
      }
      if (k < todo.length) idle(step);
    };
    idle(step);
  };

  const renderSnaps = () => {
    snapSel.innerHTML = "";
    for (const s of model.get("snapshots") || []) { const o = el("option", null, s); o.value = s; snapSel.appendChild(o); }
    snapSel.value = model.get("snapshot");
  };
  snapSel.onchange = () => request("select_snapshot", { label: snapSel.value });

  let lastQuery = null;
  const runSearch = (back) => {
    const q = search.value;
    const hits = model.get("search_hits") || {};
    if (q && q === lastQuery && hits.query === q && (hits.hits || []).length) request("search_step", { delta: back ? -1 : 1 });
    else { lastQuery = q; request("find", { query: q }); }
  };
  search.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") { ev.preventDefault(); ev.stopPropagation(); runSearch(ev.shiftKey); }
    else if (ev.key === "Escape") { hitList.classList.remove("gb-open"); search.blur(); root.focus(); }
    ev.stopPropagation(); // typing here is not a shortcut of the widget or of the notebook
  });
  findBtn.onclick = () => { lastQuery = search.value; request("find", { query: search.value }); };
  prevHit.onclick = () => request("search_step", { delta: -1 });
  nextHit.onclick = () => request("search_step", { delta: 1 });
  const renderHits = () => {
    const h = model.get("search_hits") || {};
    const list = h.hits || [];
    hitList.innerHTML = "";
    hitCount.textContent = h.query ? (list.length ? `${(h.pos ?? -1) + 1}/${h.total}` : "no match") : "";
    prevHit.disabled = nextHit.disabled = !list.length;
    list.forEach((hit, k) => {
      const item = el("div", "gb-hit" + (k === h.pos ? " gb-hit-cur" : ""));
      item.dataset.node = String(hit.id);
      const name = el("span", "gb-hit-name", hit.name); name.title = hit.name;
      item.append(name, el("span", "gb-hit-type", hit.type), el("span", "gb-hit-where", hit.where));
      item.onclick = () => request("search_step", { delta: k, absolute: true });
      hitList.appendChild(item);
    });
    if (h.total > list.length) hitList.appendChild(el("div", "gb-hit-more", `\u2026 ${h.total - list.length} more`));
    hitList.classList.toggle("gb-open", list.length > 0 && document.activeElement === search);
    const cur = hitList.querySelector(".gb-hit-cur");
    if (cur && cur.scrollIntoView) cur.scrollIntoView({ block: "nearest" });
  };
  search.addEventListener("focus", () => { if ((model.get("search_hits") || {}).hits?.length) hitList.classList.add("gb-open"); });
  search.addEventListener("blur", () => setTimeout(() => hitList.classList.remove("gb-open"), 200));

  // the group box or frame under the pointer, for the keys: "e" expands the box, "c" collapses the frame
  let hovered = null;
  drawing.addEventListener("mouseover", (ev) => {
    const t = ev.target.closest ? ev.target.closest("g.node, g.cluster") : null;
    hovered = t && t.id && (t.id[0] === "g" || t.id[0] === "x") ? t.id : null;
  });
  content.addEventListener("mouseleave", () => { hovered = null; });
  // "e": the box under the pointer expands in place ("E": opens as a level of its own); over no box, the groups
  // down to the selected node expand (where the selection sits in the model)
  const expandHovered = (alone) => {
    if (hovered && hovered[0] === "g") request(alone ? "open_group" : "expand_group", { group: parseInt(hovered.slice(1), 10) });
    else if (!alone) request("expand_group", { group: -1 });
  };
  // "c": collapse the frame under the pointer, else the group expanded last (with every frame inside it)
  const collapseLast = () => {
    if (hovered && hovered[0] === "x") { request("collapse_group", { group: parseInt(hovered.slice(1), 10) }); return; }
    const open = (model.get("view_info") || {}).expanded || [];
    if (open.length) request("collapse_group", { group: open[open.length - 1] });
  };
  const renderStatus = () => {
    status.textContent = model.get("status_text") || "";
    root.classList.toggle("gb-busy", !!model.get("busy"));
    const info = model.get("view_info") || {};
    const size = info.overview ? `${info.drawn} items of ${info.total} nodes (overview: click a group to expand it, Shift+click to open it alone)`
      : `${info.drawn}/${info.total} nodes${info.focused ? " (focused)" : ""}`;
    title.textContent = model.get("title") + (info.drawn !== undefined ? ` \u2014 ${size}` : "");
    title.title = title.textContent;
    root.dataset.drawn = String(info.drawn ?? "");
  };
  // the header's diff part and the dropdown always say the same thing: both come from the kernel's state
  const renderDiff = () => {
    const d = model.get("diff_info") || {};
    diffSel.value = model.get("diff_mode") || "";
    diffHead.textContent = d.text || (d.error ? `no diff: ${d.error}` : "");
    diffHead.title = diffHead.textContent;
    diffHead.style.display = diffHead.textContent ? "" : "none";
    root.dataset.diff = model.get("diff_mode") || "";
    root.dataset.sideDrawn = String(d.side_drawn ?? "");
  };

  // ------------------------------------------------------------------ keyboard
  root.addEventListener("keydown", (ev) => {
    const tag = ev.target && ev.target.tagName;
    // the slider's keys move the slider: JupyterLab's notebook takes ArrowLeft/ArrowRight for its own cursor otherwise
    if (ev.target === stepRange && /^(Arrow|Page|Home$|End$)/.test(ev.key)) { ev.stopPropagation(); return; }
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    let done = true;
    if (ev.key === "j" || ev.key === "ArrowDown") { request("step_candidate", { delta: 1 }); previewStep(1); }
    else if (ev.key === "k" || ev.key === "ArrowUp") { request("step_candidate", { delta: -1 }); previewStep(-1); }
    else if (ev.key === "n") request("next_rewrite", { delta: 1 });
    else if (ev.key === "N" || ev.key === "p") request("next_rewrite", { delta: -1 });
    else if (ev.key === "Backspace" || ev.key === "b") request("back");
    else if (ev.key === "u") request("level_up");
    else if (ev.key === "c") collapseLast();
    else if (ev.key === "e" || ev.key === "E") expandHovered(ev.key === "E");
    else if (ev.key === "/") search.focus();
    else if (ev.key === "f") fitBtn.onclick();
    else if (ev.key === "F") fitSelection();
    else if (ev.key === "Escape") hitList.classList.remove("gb-open");
    else done = false;
    if (done) { ev.preventDefault(); ev.stopPropagation(); }
  });
  pane.addEventListener("mousedown", () => root.focus({ preventScroll: true }));
  table.addEventListener("mousedown", (ev) => { if (!(ev.target.closest && ev.target.closest("a"))) root.focus({ preventScroll: true }); });

  // ------------------------------------------------------------------ size: the graph takes the free space
  const ro = new ResizeObserver((entries) => {
    for (const e of entries) if (e.target === viewport) viewH = e.contentRect.height;
    if (lastFit === "whole") pz.fit(true); else if (lastFit === "first") pz.fit(false);
    updateMinimap();
    drawRows();
  });
  ro.observe(pane);
  ro.observe(viewport);

  watch(["svg_gz"], loadSvg);
  watch(["side_svg_gz"], loadSide);
  watch(["side_highlight"], applySideHighlight);
  watch(["highlight", "selected_node"], applyHighlight);
  watch(["stages", "reload_report", "selected_pass"], renderPasses);
  watch(["table"], renderTable);
  // a run, a query or another drawing (the same picture may be another snapshot: the kernel's answer says)
  watch(["table", "stages", "view_info"], () => askAgain());
  watch(["table", "highlight", "selected_pass"], remember);
  watch(["selected_candidate"], drawRows);
  const renderRepro = () => { expRepro.disabled = !(model.get("selected_candidate") >= 0); };
  watch(["selected_candidate"], renderRepro);
  watch(["table_sel"], () => {
    const s = model.get("table_sel") || {};
    if (s.version === tbl.version) { scrollToPos(s.pos); drawRows(); }
  });
  watch(["details_html"], renderDetails);
  watch(["snapshots", "snapshot"], renderSnaps);
  watch(["status_text", "busy", "view_info", "title"], renderStatus);
  watch(["diff_mode", "diff_info"], renderDiff);
  watch(["pane_title", "side_title", "side_kind"], renderPaneHead);
  watch(["search_hits"], renderHits);
  watch(["levels"], renderCrumbs);
  watch(["rewrite_step"], renderStep);
  watch(["group_counts"], applyGroupCounts);

  renderPasses(); renderTable(); renderDetails(); renderSnaps(); renderStatus(); renderDiff(); renderPaneHead(); renderHits(); renderCrumbs(); renderStep();
  renderRepro();
  side.style.display = "none";
  loadSvg(); loadSide();
  return () => { ro.disconnect(); };
}

export default { render };
