// scholargraph graph view: a dependency-free canvas viewer for the data in <script id="graph-data">.
// Positions are precomputed (seeded layout); this draws, pans (drag), zooms (wheel), shows a node on
// hover, highlights its neighbours on click, filters by community (legend) and finds names (search).
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("graph-data").textContent);
  var canvas = document.getElementById("view"), ctx = canvas.getContext("2d");
  var tip = document.getElementById("tip"), panel = document.getElementById("panel");
  var palette = ["#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C",
                 "#CCB974", "#64B5CD", "#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02"];
  var nodes = data.nodes, edges = data.edges, adj = nodes.map(function () { return []; });
  edges.forEach(function (e) { adj[e[0]].push(e[1]); adj[e[1]].push(e[0]); });
  var view = {x: 0, y: 0, k: 1}, selected = -1, hidden = {}, found = {};
  function colour(n) { return n.c < 0 ? "#BBBBBB" : palette[n.c % palette.length]; }
  function radius(n) { return 2 + Math.sqrt(n.d); }
  function fit() {
    var w = canvas.clientWidth, h = canvas.clientHeight, dpr = window.devicePixelRatio || 1;
    canvas.width = w * dpr; canvas.height = h * dpr; ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    var xs = nodes.map(function (n) { return n.x; }), ys = nodes.map(function (n) { return n.y; });
    var minx = Math.min.apply(null, xs.concat([0])), maxx = Math.max.apply(null, xs.concat([1]));
    var miny = Math.min.apply(null, ys.concat([0])), maxy = Math.max.apply(null, ys.concat([1]));
    view.k = 0.9 * Math.min(w / (maxx - minx || 1), h / (maxy - miny || 1));
    view.x = w / 2 - view.k * (minx + maxx) / 2; view.y = h / 2 - view.k * (miny + maxy) / 2;
  }
  function sx(n) { return view.x + view.k * n.x; }
  function sy(n) { return view.y + view.k * n.y; }
  function visible(i) { return !hidden[nodes[i].c]; }
  function draw() {
    var w = canvas.clientWidth, h = canvas.clientHeight;
    ctx.clearRect(0, 0, w, h);
    var near = {};
    if (selected >= 0) { near[selected] = true; adj[selected].forEach(function (j) { near[j] = true; }); }
    ctx.lineWidth = 0.6;
    edges.forEach(function (e) {
      if (!visible(e[0]) || !visible(e[1])) return;
      var on = selected >= 0 && (e[0] === selected || e[1] === selected);
      ctx.strokeStyle = on ? "rgba(20,20,20,0.8)" : (selected >= 0 ? "rgba(150,150,150,0.08)" : "rgba(150,150,150,0.35)");
      ctx.beginPath(); ctx.moveTo(sx(nodes[e[0]]), sy(nodes[e[0]])); ctx.lineTo(sx(nodes[e[1]]), sy(nodes[e[1]])); ctx.stroke();
    });
    nodes.forEach(function (n, i) {
      if (!visible(i)) return;
      ctx.globalAlpha = selected < 0 || near[i] ? 1 : 0.15;
      ctx.fillStyle = colour(n);
      ctx.beginPath(); ctx.arc(sx(n), sy(n), radius(n), 0, 2 * Math.PI); ctx.fill();
      if (found[i]) { ctx.strokeStyle = "#000"; ctx.lineWidth = 2; ctx.stroke(); ctx.lineWidth = 0.6; }
      if (near[i] || found[i] || (view.k > 0 && radius(n) * view.k / 40 > 1.2 && n.d > 8)) {
        ctx.fillStyle = "#222"; ctx.font = "11px sans-serif"; ctx.fillText(n.n, sx(n) + radius(n) + 2, sy(n) + 3);
      }
    });
    ctx.globalAlpha = 1;
  }
  function hit(px, py) {
    var best = -1, dist = 1e9;
    nodes.forEach(function (n, i) {
      if (!visible(i)) return;
      var dx = sx(n) - px, dy = sy(n) - py, d = dx * dx + dy * dy, r = radius(n) + 3;
      if (d < r * r && d < dist) { best = i; dist = d; }
    });
    return best;
  }
  function esc(s) { return String(s).replace(/[&<>"]/g, function (c) { return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]; }); }
  function describe(i) {
    var n = nodes[i], com = n.c >= 0 ? data.communities[n.c] : null;
    var html = "<b>" + esc(n.n) + "</b> <i>" + esc(n.t) + "</i><br>degree " + n.d +
      (com ? "<br>community: " + esc(com.title) : "") + (n.s ? "<p>" + esc(n.s) + "</p>" : "");
    if (n.p && n.p.length) html += "<p>papers: " + n.p.map(function (p) { return esc(data.papers[p] || p); }).join("; ") + "</p>";
    var names = adj[i].slice(0, 30).map(function (j) { return esc(nodes[j].n); });
    if (names.length) html += "<p>neighbours: " + names.join(", ") + (adj[i].length > 30 ? " …" : "") + "</p>";
    return html;
  }
  var drag = null;
  canvas.addEventListener("mousedown", function (ev) { drag = {x: ev.offsetX, y: ev.offsetY, vx: view.x, vy: view.y, moved: false}; });
  canvas.addEventListener("mousemove", function (ev) {
    if (drag) {
      var dx = ev.offsetX - drag.x, dy = ev.offsetY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
      view.x = drag.vx + dx; view.y = drag.vy + dy; draw(); return;
    }
    var i = hit(ev.offsetX, ev.offsetY);
    if (i >= 0) { tip.style.display = "block"; tip.style.left = (ev.offsetX + 14) + "px"; tip.style.top = (ev.offsetY + 14) + "px";
                  tip.innerHTML = "<b>" + esc(nodes[i].n) + "</b> (" + esc(nodes[i].t) + ", degree " + nodes[i].d + ")"; }
    else tip.style.display = "none";
  });
  canvas.addEventListener("mouseup", function (ev) {
    if (drag && !drag.moved) { selected = hit(ev.offsetX, ev.offsetY); panel.innerHTML = selected >= 0 ? describe(selected) : data.help; draw(); }
    drag = null;
  });
  canvas.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var f = ev.deltaY < 0 ? 1.15 : 1 / 1.15;
    view.x = ev.offsetX - f * (ev.offsetX - view.x); view.y = ev.offsetY - f * (ev.offsetY - view.y); view.k *= f; draw();
  }, {passive: false});
  document.getElementById("search").addEventListener("input", function (ev) {
    var q = ev.target.value.trim().toLowerCase(); found = {};
    if (q.length >= 2) nodes.forEach(function (n, i) { if (n.n.toLowerCase().indexOf(q) >= 0) found[i] = true; });
    draw();
  });
  var legend = document.getElementById("legend");
  data.communities.forEach(function (c, ci) {
    var item = document.createElement("div");
    item.className = "item";
    item.innerHTML = '<span class="dot" style="background:' + palette[ci % palette.length] + '"></span>' + esc(c.title) + " (" + c.size + ")";
    item.title = "click to hide or show";
    item.addEventListener("click", function () { hidden[ci] = !hidden[ci]; item.style.opacity = hidden[ci] ? 0.35 : 1; draw(); });
    legend.appendChild(item);
  });
  panel.innerHTML = data.help;
  window.addEventListener("resize", function () { fit(); draw(); });
  fit(); draw();
}());
