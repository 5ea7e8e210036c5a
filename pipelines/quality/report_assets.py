"""The data-quality report's style sheet and script, inlined into the page: it works offline
(mailed, archived next to the warehouse, opened from a file share) and loads nothing.

The script only adds behaviour to a complete page: the filters (failing only, layer, severity)
and sortable columns. Without it every row is shown, in the page's own order (worst first).
"""

from __future__ import annotations

CSS = """
*{box-sizing:border-box}[hidden]{display:none!important}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1c2833;background:#f4f6f7}
header{background:#1c2833;color:#fff;padding:16px 24px}header h1{margin:0 0 2px;font-size:22px}
header p{margin:0;color:#d5d8dc;overflow-wrap:anywhere}
main{padding:8px 24px 40px;max-width:1400px}
section{background:#fff;border:1px solid #d5d8dc;border-radius:6px;margin:18px 0;padding:6px 16px 14px;min-width:0}
h2{font-size:18px;border-bottom:1px solid #e5e8e8;padding-bottom:6px}h3{font-size:15px;margin:20px 0 6px;overflow-wrap:anywhere}
.scroll{overflow-x:auto;max-width:100%;margin:6px 0 10px}
table{border-collapse:collapse;font-size:13px}
th,td{border:1px solid #e5e8e8;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f2f3f4;white-space:nowrap}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.type code{white-space:nowrap;word-break:normal}
th button{font:inherit;font-weight:600;border:0;background:none;padding:0;cursor:pointer;color:inherit}
th button::after{content:" \\2195";color:#aab7b8}th[aria-sort=ascending] button::after{content:" \\2191";color:#1c2833}
th[aria-sort=descending] button::after{content:" \\2193";color:#1c2833}
tr.fail td{background:#fdedec}tr.not-evaluated td{color:#707b7c;background:#f8f9f9}
.status{font-weight:600;white-space:nowrap}.pass{color:#1e8449}.fail .status,.bad{color:#c0392b}
.warn{color:#9a6400}.muted{color:#707b7c}
code{background:#f2f3f4;padding:0 3px;border-radius:3px;font-size:12px;overflow-wrap:anywhere}
.sev{display:inline-block;border-radius:3px;padding:0 6px;font-size:12px;font-weight:600;white-space:nowrap}
.sev-fail{background:#c0392b;color:#fff}.sev-drop{background:#d35400;color:#fff}.sev-warn{background:#f4d03f;color:#1c2833}
.sev-none{background:#d5d8dc;color:#1c2833}
.verdicts{display:flex;gap:12px;flex-wrap:wrap;margin-top:12px}
.verdict{border-radius:6px;padding:8px 14px;background:#273746;border-left:6px solid #aab7b8;min-width:230px;flex:1 1 260px}
.verdict .label{display:block;font-size:12px;text-transform:uppercase;letter-spacing:.05em;color:#d5d8dc}
.verdict b{display:block;font-size:20px}.verdict span.detail{display:block;color:#eaeded}
.v-fail{border-left-color:#e74c3c}.v-drop{border-left-color:#e67e22}.v-warn{border-left-color:#f4d03f}
.v-pass{border-left-color:#2ecc71}.v-muted{border-left-color:#aab7b8}
.legend-sev{margin:6px 0 0;color:#d5d8dc;font-size:12px}
.filters{display:flex;gap:14px;flex-wrap:wrap;align-items:center;background:#fff;border:1px solid #d5d8dc;
border-radius:6px;padding:8px 14px;margin:14px 0}.filters label{white-space:nowrap}
details{margin:4px 0}summary{cursor:pointer;color:#2471a3}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:12px;margin:2px 0 8px}.legend span{white-space:nowrap}
svg.trend{max-width:100%;height:auto;display:block}
ul.values{margin:0;padding-left:16px}ul.values li{margin:0}td.values{min-width:17em}code.key{white-space:nowrap}
.reach{font-size:13px;margin:4px 0}
"""

SCRIPT = """
(function () {
  var bar = document.getElementById("filters");
  if (!bar) return;
  bar.hidden = false;
  var only = document.getElementById("f-failing");
  var layer = document.getElementById("f-layer");
  var severity = document.getElementById("f-severity");
  function has(list, value) { return (" " + (list || "") + " ").indexOf(" " + value + " ") >= 0; }
  function apply() {
    var failing = only.checked, l = layer.value, s = severity.value, shown = 0, total = 0;
    document.querySelectorAll("[data-dq-table]").forEach(function (el) {
      var ok = l === "all" || el.getAttribute("data-layer") === l;
      if (ok && failing) {
        var failed = el.getAttribute("data-failing-severities") || "";
        ok = s === "all" ? failed !== "" : has(failed, s);
      } else if (ok && s !== "all") {
        ok = has(el.getAttribute("data-severities"), s);
      }
      el.hidden = !ok;
      if (el.tagName === "TR") { total += 1; if (ok) shown += 1; }
    });
    document.querySelectorAll("tr[data-severity]").forEach(function (tr) {
      tr.hidden = !((s === "all" || tr.getAttribute("data-severity") === s) &&
        (!failing || tr.getAttribute("data-state") === "fail"));
    });
    document.getElementById("f-count").textContent = shown + " of " + total + " tables shown";
  }
  [only, layer, severity].forEach(function (control) { control.addEventListener("change", apply); });
  apply();

  function key(cell, numeric) {
    var value = cell.hasAttribute("data-value") ? cell.getAttribute("data-value") : cell.textContent.trim();
    return numeric ? (parseFloat(value) || 0) : value;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, index) {
      var button = th.querySelector("button");
      if (!button) return;
      button.addEventListener("click", function () {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var numeric = th.getAttribute("data-type") === "num";
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a.cells[index], numeric), y = key(b.cells[index], numeric);
          var order = numeric ? x - y : String(x).localeCompare(String(y));
          return ascending ? order : -order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  });
})();
"""

# Series of a trend chart are told apart by marker shape and dash pattern as well as colour.
COLORS = ("#c0392b", "#2471a3", "#b9770e", "#7d3c98", "#138d75", "#5d6d7e", "#a04000", "#1e8449")
DASHES = ("", "6 3", "2 3", "8 3 2 3")
MARKERS = ("circle", "square", "triangle", "diamond")
