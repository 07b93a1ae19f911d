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

function panZoom(pane, content) {
  const st = { s: 1, x: 0, y: 0, drag: null, moved: false };
  const apply = () => { content.style.transform = `translate(${st.x}px, ${st.y}px) scale(${st.s})`; };
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
  return {
    st,
    fit(whole) {
      const svg = content.querySelector("svg");
      if (!svg) return;
      const w = svg.width.baseVal.value || 1, h = svg.height.baseVal.value || 1;
      const pw = pane.clientWidth || 600, ph = pane.clientHeight || 400;
      // first view: readable (fit the width, top aligned); the Fit button shows the whole graph
      st.s = whole ? Math.min(1.5, Math.min(pw / w, ph / h) * 0.95) : Math.min(1.2, Math.max((pw / w) * 0.95, 0.75));
      st.x = (pw - w * st.s) / 2; st.y = h * st.s < ph ? (ph - h * st.s) / 2 : 4; apply();
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
  };
}

function render({ model, el: root }) {
  root.classList.add("gb-root");
  const send = (action, extra) => model.send(Object.assign({ action }, extra || {}));
  const set = (k, v) => { model.set(k, v); model.save_changes(); };

  // toolbar
  const bar = el("div", "gb-bar");
  const title = el("span", "gb-title");
  const snapSel = el("select", "gb-snap");
  const search = el("input", "gb-search"); search.placeholder = "search node / op type"; search.type = "search";
  const mk = (label, action, cls) => { const b = el("button", "gb-btn " + (cls || ""), label); b.dataset.action = action; b.onclick = () => send(action); return b; };
  const runBtn = mk("\u25B6 Run", "run", "gb-run");
  const verifyBtn = mk("Verify", "verify", "gb-verify");
  const diffSel = el("select", "gb-diff");
  for (const [v, t] of [["", "no diff"], ["pass:side", "pass diff: side by side"], ["pass:overlay", "pass diff: overlay"],
                        ["stage:side", "stage diff: side by side"], ["stage:overlay", "stage diff: overlay"],
                        ["candidate:side", "rewrite diff: side by side"], ["candidate:overlay", "rewrite diff: overlay"]]) {
    const o = el("option", null, t); o.value = v; diffSel.appendChild(o);
  }
  diffSel.onchange = () => set("diff_mode", diffSel.value);
  const expDump = mk("GE dumps", "export_dumps", "gb-exp");
  const expJson = mk("Report JSON", "export_report", "gb-exp");
  const expSvg = mk("SVG", "export_svg", "gb-exp");
  const overBtn = mk("Overview", "overview", "gb-over");
  const fitBtn = el("button", "gb-btn", "Fit"); const zin = el("button", "gb-btn", "+"); const zout = el("button", "gb-btn", "\u2212");
  const status = el("span", "gb-status");
  bar.append(title, snapSel, search, runBtn, verifyBtn, diffSel, el("span", "gb-sep", "export:"), expDump, expJson, expSvg,
             overBtn, fitBtn, zin, zout, status);

  // body
  const body = el("div", "gb-body");
  const passes = el("div", "gb-passes");
  const center = el("div", "gb-center");
  const panes = el("div", "gb-panes");
  const pane = el("div", "gb-pane gb-main-pane"); const content = el("div", "gb-content"); pane.appendChild(content);
  const side = el("div", "gb-pane gb-side-pane"); const sideHead = el("div", "gb-side-head");
  const sideContent = el("div", "gb-content"); side.append(sideHead, sideContent);
  panes.append(pane, side);
  const legend = el("div", "gb-legend");
  for (const [c, t] of [["replaced", "replaced"], ["rejected", "meet_requirements false"], ["nearmiss", "near-miss"],
                        ["boundary", "boundary"], ["cycle", "cycle"], ["overlap", "overlap"], ["failed", "replacement failed"]]) {
    const s = el("span", "gb-chip gb_st_" + c, t); legend.appendChild(s);
  }
  const table = el("div", "gb-table");
  center.append(panes, legend, table);
  const details = el("div", "gb-details");
  body.append(passes, center, details);
  root.append(bar, body);

  const pz = panZoom(pane, content);
  const spz = panZoom(side, sideContent);
  fitBtn.onclick = () => { pz.fit(true); spz.fit(true); };
  zin.onclick = () => pz.zoom(1.25); zout.onclick = () => pz.zoom(0.8);

  const applyHighlight = () => {
    const hl = model.get("highlight") || {};
    for (const g of content.querySelectorAll("[data-gbhl]")) {
      for (const c of g.dataset.gbhl.split(" ")) if (c) g.classList.remove(c);
      delete g.dataset.gbhl;
    }
    const svg = content.querySelector("svg");
    if (!svg) return;
    for (const [id, cls] of Object.entries(hl)) {
      const g = svg.getElementById ? svg.getElementById(id) : content.querySelector("#" + CSS.escape(id));
      if (!g) continue;
      for (const c of cls.split(" ")) if (c) g.classList.add(c);
      g.dataset.gbhl = cls;
    }
    const sel = model.get("selected_node");
    if (sel >= 0) { const g = svg.getElementById("n" + sel); if (g) g.classList.add("gb_clicked"); }
    // bring the selection (or the first highlighted node) into view when it is off screen
    const focus = content.querySelector("g.node.gb_sel") || content.querySelector("g.node[data-gbhl]");
    if (focus && !pz.visible(focus)) pz.center(focus);
  };
  const applySideHighlight = () => {
    const hl = model.get("side_highlight") || {};
    const svg = sideContent.querySelector("svg");
    if (!svg) return;
    for (const [id, cls] of Object.entries(hl)) {
      const g = svg.getElementById(id);
      if (g) for (const c of cls.split(" ")) if (c) g.classList.add(c);
    }
  };

  let svgSerial = 0;
  const loadSvg = async () => {
    const my = ++svgSerial;
    const text = await inflate(model.get("svg_gz"));
    if (my !== svgSerial) return;
    content.innerHTML = text;
    root.dataset.svgSerial = String(my);
    applyHighlight();
    pz.fit();
  };
  const loadSide = async () => {
    const text = await inflate(model.get("side_svg_gz"));
    sideContent.innerHTML = text;
    sideHead.textContent = model.get("side_title") || "";
    side.style.display = text ? "" : "none";
    applySideHighlight();
    spz.fit();
  };

  content.addEventListener("click", (ev) => {
    if (pz.st.moved) return;
    const g = ev.target.closest ? ev.target.closest("g.node") : null;
    if (g && g.id && g.id[0] === "g") { send("open_group", { group: parseInt(g.id.slice(1), 10) }); return; }
    if (!g || !g.id || g.id[0] !== "n") return;
    for (const o of content.querySelectorAll(".gb_clicked")) o.classList.remove("gb_clicked");
    g.classList.add("gb_clicked");
    const id = parseInt(g.id.slice(1), 10);
    if (id === model.get("selected_node")) send("select_node", { node: id }); else set("selected_node", id);
  });

  const renderPasses = () => {
    passes.innerHTML = "";
    const sel = model.get("selected_pass");
    for (const group of model.get("stages") || []) {
      passes.appendChild(el("div", "gb-stage", group.stage));
      for (const p of group.passes) {
        const item = el("div", "gb-pass" + (p.name === sel ? " gb-pass-sel" : ""));
        item.dataset.pass = p.name;
        item.appendChild(el("div", "gb-pass-name", p.name));
        const counts = el("div", "gb-pass-counts");
        counts.appendChild(el("span", "gb-count", `${p.candidates} cand.`));
        counts.appendChild(el("span", "gb-count gb_st_replaced", `${p.replaced} repl.`));
        for (const [k, v] of Object.entries(p.rejected || {})) {
          const c = el("span", "gb-count", `${v} ${k.toLowerCase().replaceAll("_", " ")}`); c.title = k; counts.appendChild(c);
        }
        if (p.lints) counts.appendChild(el("span", "gb-count gb_st_lint", `${p.lints} lint`));
        item.appendChild(counts);
        item.onclick = () => (p.name === model.get("selected_pass") ? send("select_pass", { name: p.name }) : set("selected_pass", p.name));
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

  const renderTable = () => {
    table.innerHTML = "";
    const rows = model.get("candidates") || [];
    if (!rows.length) { table.appendChild(el("div", "gb-empty", model.get("selected_pass") ? "no candidates" : "select a pass")); return; }
    const t = el("table", "gb-cands");
    const head = el("tr");
    for (const h of ["#", "status", "pattern", "targets", "reason", "captures", "meet_requirements", "verify", "source"]) head.appendChild(el("th", null, h));
    t.appendChild(head);
    const selC = model.get("selected_candidate");
    for (const r of rows) {
      const tr = el("tr", "gb-cand" + (r.i === selC ? " gb-cand-sel" : ""));
      tr.dataset.index = r.i;
      tr.appendChild(el("td", null, String(r.i)));
      const st = el("td"); st.appendChild(el("span", "gb-chip " + r.css, r.status.toLowerCase().replaceAll("_", " "))); tr.appendChild(st);
      tr.appendChild(el("td", null, r.pattern));
      tr.appendChild(el("td", null, r.targets.join(", ") + (r.ntargets > r.targets.length ? " \u2026" : "")));
      tr.appendChild(el("td", "gb-reason", r.reason));
      tr.appendChild(el("td", null, (r.captures || []).join(", ")));
      tr.appendChild(el("td", r.exception ? "gb-exc" : null, r.exception || r.meet));
      const v = el("td");
      if (r.verify) {
        const ok = r.verify.ok;
        v.appendChild(el("span", "gb-badge " + (ok ? "gb-ok" : "gb-bad"), `max|err| ${r.verify.abs.toExponential(1)}`));
      }
      tr.appendChild(v);
      const src = el("td", "gb-src");
      for (const s of [r.pattern_src, r.hook_src]) {
        if (!s) continue;
        const line = el("a", "gb-srcline", s); line.href = "#"; line.title = "show the source";
        line.onclick = (ev) => { ev.preventDefault(); ev.stopPropagation(); send("show_source", { src: s }); };
        src.appendChild(line);
      }
      tr.appendChild(src);
      tr.onclick = () => (r.i === model.get("selected_candidate") ? send("select_candidate", { index: r.i }) : set("selected_candidate", r.i));
      t.appendChild(tr);
    }
    table.appendChild(t);
  };

  const renderDetails = () => {
    details.innerHTML = model.get("details_html") || "<i>click a node or a candidate</i>";
    for (const b of details.querySelectorAll("button[data-action]")) {
      b.onclick = () => send(b.dataset.action, { node: parseInt(b.dataset.node || "-1", 10) });
    }
    for (const a of details.querySelectorAll("[data-src]")) {
      a.onclick = (ev) => { ev.preventDefault(); send("show_source", { src: a.dataset.src }); };
    }
    for (const a of details.querySelectorAll("[data-goto]")) {
      a.onclick = () => { const g = content.querySelector("#" + CSS.escape(a.dataset.goto)); if (g) pz.center(g); };
    }
  };

  const renderSnaps = () => {
    snapSel.innerHTML = "";
    for (const s of model.get("snapshots") || []) { const o = el("option", null, s); o.value = s; snapSel.appendChild(o); }
    snapSel.value = model.get("snapshot");
  };
  snapSel.onchange = () => set("snapshot", snapSel.value);
  search.onchange = () => set("search", search.value);

  const renderStatus = () => {
    status.textContent = model.get("status_text") || "";
    root.classList.toggle("gb-busy", !!model.get("busy"));
    const info = model.get("view_info") || {};
    const size = info.overview ? `${info.drawn} groups of ${info.total} nodes (overview; click a group)`
      : `${info.drawn}/${info.total} nodes${info.focused ? " (focused)" : ""}`;
    title.textContent = model.get("title") + (info.drawn !== undefined ? ` \u2014 ${size}` : "");
  };

  model.on("change:svg_gz", loadSvg);
  model.on("change:side_svg_gz", loadSide);
  model.on("change:side_highlight", applySideHighlight);
  model.on("change:highlight", applyHighlight);
  model.on("change:selected_node", applyHighlight);
  model.on("change:stages", renderPasses);
  model.on("change:reload_report", renderPasses);
  model.on("change:selected_pass", renderPasses);
  model.on("change:candidates", renderTable);
  model.on("change:selected_candidate", renderTable);
  model.on("change:details_html", renderDetails);
  model.on("change:snapshots", renderSnaps);
  model.on("change:snapshot", renderSnaps);
  model.on("change:status_text", renderStatus);
  model.on("change:busy", renderStatus);
  model.on("change:view_info", renderStatus);
  model.on("change:diff_mode", () => { diffSel.value = model.get("diff_mode"); });

  renderPasses(); renderTable(); renderDetails(); renderSnaps(); renderStatus();
  diffSel.value = model.get("diff_mode");
  side.style.display = "none";
  loadSvg(); loadSide();
}

export default { render };
