// gebench sweep report: sorting, filtering and the detail panel of the models x passes matrix.
// The table is complete without this script (rendered by gebench/sweep/_report.py); this only adds
// behaviour. Every report root ([data-gebench-sweep]) is set up once, so several reports can share a page.
(function () {
  "use strict";

  function sortValue(cell, numeric) {
    var raw = cell.getAttribute("data-sort");
    if (raw === null) raw = cell.textContent.trim();
    if (!numeric) return raw.toLowerCase();
    var v = parseFloat(raw);
    return isNaN(v) ? -Infinity : v;
  }

  function sortBy(table, th, index) {
    var numeric = th.getAttribute("data-type") === "num";
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = sortValue(a.cells[index], numeric), y = sortValue(b.cells[index], numeric);
      if (x < y) return ascending ? -1 : 1;
      if (x > y) return ascending ? 1 : -1;
      return 0;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }

  function esc(text) {
    return String(text === undefined || text === null ? "" : text)
      .replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  }

  function showDetail(root, data, cell) {
    var panel = root.querySelector(".gbs-detail");
    var row = data.rows[cell.getAttribute("data-task")];
    if (!panel || !row) return;
    root.querySelectorAll(".gbs-selected").forEach(function (c) { c.classList.remove("gbs-selected"); });
    cell.classList.add("gbs-selected");
    var pass = cell.getAttribute("data-pass");
    var p = pass ? (row.passes || {})[pass] : null;
    var lines = ["<b>" + esc(row.model_name) + "</b> [" + esc(row.pass_set) + "] &mdash; " + esc(row.status)];
    if (row.reason) lines.push("<pre>" + esc(row.reason) + "</pre>");
    if (p) {
      var rejected = Object.keys(p.rejected || {}).map(function (k) { return k + "=" + p.rejected[k]; });
      lines.push("<b>" + esc(pass) + "</b> (" + esc(p.stage) + "): " + p.replaced + " replaced, " + p.matches +
        " matches, " + p.candidates + " candidates" + (rejected.length ? "; rejected " + esc(rejected.join(", ")) : "") +
        (p.lints ? "; " + p.lints + " lints" : "") +
        (p.seconds !== null && p.seconds !== undefined ? "; " + p.seconds.toFixed(3) + " s" : "") +
        (p.verify_max_abs_error !== null && p.verify_max_abs_error !== undefined ?
          "; verify max abs error " + p.verify_max_abs_error.toPrecision(3) : "") +
        (p.verify_errors ? "; <b>" + p.verify_errors + " rewrites change results</b>" : ""));
      (p.failures || []).forEach(function (f) { lines.push("<pre>" + esc(f) + "</pre>"); });
    }
    (data.changes[cell.getAttribute("data-task") + "\u0000" + (pass || "")] || []).forEach(function (c) {
      lines.push("<div>" + esc(c) + "</div>");
    });
    if (row.ledger && data.links) {
      lines.push("ledger: <a href=\"" + esc(row.ledger) + (pass ? "#" + esc(pass) : "") + "\">" + esc(row.ledger) + "</a>");
    } else if (row.ledger) {
      lines.push("ledger: <code>" + esc(data.out + "/" + row.ledger) + "</code>");
    }
    var code = "gebench.sweep.load(" + JSON.stringify(data.out) + ").open(" + JSON.stringify(row.model_name) +
      (pass ? ", " + JSON.stringify(pass) : "") + ")";
    lines.push("open in the workbench (notebook): <code class=\"gbs-open\">" + esc(code) + "</code>");
    panel.innerHTML = lines.join("<br>");
    panel.hidden = false;
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(code).catch(function () {});
  }

  function setup(root) {
    if (root.getAttribute("data-ready")) return;
    root.setAttribute("data-ready", "1");
    var table = root.querySelector("table.gbs-matrix");
    var holder = root.querySelector("script.gbs-data");
    var data = holder ? JSON.parse(holder.textContent) : { rows: {}, changes: {}, out: "" };
    if (!table) return;
    table.querySelectorAll("thead th").forEach(function (th, index) {
      th.addEventListener("click", function () { sortBy(table, th, index); });
    });
    table.tBodies[0].addEventListener("click", function (event) {
      var cell = event.target.closest("td");
      if (!cell || !cell.hasAttribute("data-task")) return;
      if (event.target.closest("a")) return;  // the model's ledger link
      showDetail(root, data, cell);
    });
    var filter = root.querySelector(".gbs-filter");
    if (filter) {
      filter.addEventListener("input", function () {
        var needle = filter.value.toLowerCase();
        Array.prototype.forEach.call(table.tBodies[0].rows, function (r) {
          r.hidden = needle && r.cells[0].textContent.toLowerCase().indexOf(needle) < 0;
        });
      });
    }
  }

  document.querySelectorAll("[data-gebench-sweep]").forEach(setup);
})();
