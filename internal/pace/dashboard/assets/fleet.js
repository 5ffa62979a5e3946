// Draws the fleet's history charts from /fleet/series.json as inline SVG: one bar per step,
// none where nobody measured (a gap is not a zero). The tables need no script.
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var W = 400, H = 140, TOP = 14, BOTTOM = 16;
  var form = document.getElementById("ranges");
  var select = document.getElementById("range");
  var status = document.getElementById("chart-status");
  if (!form || !select) { return; }
  form.hidden = false;

  function el(name, attrs, text) {
    var e = document.createElementNS(SVG, name);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
    if (text !== undefined) { e.textContent = text; }
    return e;
  }

  function stamp(ms) {
    return new Date(ms).toISOString().replace("T", " ").slice(0, 16) + " UTC";
  }

  function draw(fig, series, view) {
    var old = fig.querySelectorAll("svg, p.summary");
    old.forEach(function (n) { n.remove(); });
    var points = series ? series.points : [];
    var n = Math.max(points.length, 1), bw = W / n, top = 0, total = 0, measured = 0;
    points.forEach(function (p) { if (p !== null) { top = Math.max(top, p); total += p; measured++; } });
    var scale = top > 0 ? (H - TOP - BOTTOM) / top : 0;
    var svg = el("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": fig.querySelector("figcaption").textContent });
    svg.appendChild(el("line", { x1: 0, y1: H - BOTTOM, x2: W, y2: H - BOTTOM, "class": "axis" }));
    points.forEach(function (p, i) {
      if (p === null) { return; }
      var h = Math.max(p * scale, p > 0 ? 1.5 : 0.5);
      var r = el("rect", { x: (i * bw).toFixed(2), y: (H - BOTTOM - h).toFixed(2), width: Math.max(bw - 1, 0.8).toFixed(2),
        height: h.toFixed(2), "class": "pt", "data-v": p, "data-i": i });
      r.appendChild(el("title", {}, stamp(view.start_unix_ms + i * view.step_seconds * 1000) + ": " + p + " " + series.unit));
      svg.appendChild(r);
    });
    svg.appendChild(el("text", { x: 2, y: 10 }, "max " + top));
    svg.appendChild(el("text", { x: 2, y: H - 3 }, stamp(view.start_unix_ms)));
    svg.appendChild(el("text", { x: W - 2, y: H - 3, "text-anchor": "end" }, "now"));
    fig.appendChild(svg);
    var summary = document.createElement("p");
    summary.className = "summary";
    summary.textContent = !series ? "not recorded by this build" :
      measured === 0 ? "no measurement in this range yet" :
      total + " " + series.unit + " over " + measured + " measured steps of " + view.step_seconds + " s (" + series.scope + ")";
    fig.appendChild(summary);
  }

  function render(view) {
    var byName = {};
    (view.series || []).forEach(function (s) { byName[s.name] = s; });
    document.querySelectorAll("figure.chart[data-series]").forEach(function (fig) {
      draw(fig, byName[fig.getAttribute("data-series")], view);
    });
    status.textContent = "updated " + new Date().toLocaleTimeString();
  }

  function load() {
    fetch("/fleet/series.json?range=" + encodeURIComponent(select.value), { cache: "no-cache", credentials: "same-origin" })
      .then(function (r) {
        if (!r.ok) { return r.text().then(function (t) { throw new Error(t.trim()); }); }
        return r.json();
      })
      .then(render)
      .catch(function (err) { status.textContent = "charts unavailable: " + err.message; });
  }

  select.addEventListener("change", load);
  load();
  setInterval(load, 30000);
})();
