// The graph page (every page and link, from _/graph-data.js) and the local graph under
// each page (the page, the pages it links to and the pages linking to it, read from the
// page's own lists). Drawn on a canvas by force-graph (vendored), so 10,000 pages stay
// usable; both work from file://.
(function () {
  "use strict";
  if (window.CommonplaceGraph) return;
  var C = window.Commonplace;
  var PALETTE = ["#1a73e8", "#e8710a", "#188038", "#d93025", "#9334e6", "#12b5cb", "#e52592", "#b06000",
                 "#5f6368", "#1e8e3e", "#a142f4", "#c5221f"];

  function css(name) { return getComputedStyle(document.documentElement).getPropertyValue(name).trim(); }

  function sized(el, graph) {
    function fit() { graph.width(el.clientWidth).height(el.clientHeight); }
    fit();
    if ("ResizeObserver" in window) new ResizeObserver(fit).observe(el);
    else window.addEventListener("resize", fit);
  }

  function whole(el) {
    var data = window.COMMONPLACE_GRAPH;
    var types = [];
    data.nodes.forEach(function (n) { if (types.indexOf(n[2]) < 0) types.push(n[2]); });
    types.sort();
    var color = {};
    types.forEach(function (t, i) { color[t] = PALETTE[i % PALETTE.length]; });
    document.querySelectorAll(".legend-dot[data-type]").forEach(function (dot) {
      dot.style.background = color[dot.getAttribute("data-type")] || PALETTE[8];
    });
    var nodes = data.nodes.map(function (n, i) {
      return { id: i, path: n[0], title: n[1], type: n[2], tags: n[3], url: n[4], degree: 0 };
    });
    data.edges.forEach(function (e) { nodes[e[0]].degree++; nodes[e[1]].degree++; });
    var big = nodes.length > 2000;
    var controls = document.getElementById("graph-controls");
    var count = document.getElementById("graph-count");
    var found = null;

    var graph = window.ForceGraph()(el)
      .nodeId("id")
      .nodeLabel(function (n) { return n.title; })
      .nodeColor(function (n) { return n === found ? css("--broken") : color[n.type]; })
      .nodeVal(function (n) { return 1 + Math.sqrt(n.degree); })
      .nodeRelSize(big ? 2 : 3)
      .linkColor(function () { return css("--line"); })
      .linkWidth(big ? 0.3 : 0.6)
      .cooldownTicks(big ? 120 : 300)
      .d3AlphaDecay(big ? 0.05 : 0.0228)
      .onNodeClick(function (n) { location.href = C.root + n.url; });
    // Short-range repulsion: pages without links stay near the rest instead of drifting off.
    graph.d3Force("charge").strength(big ? -12 : -40).distanceMax(big ? 120 : 250);
    if (!big) {
      graph.nodeCanvasObjectMode(function () { return "after"; })
        .nodeCanvasObject(function (n, ctx, scale) {
          if (scale < 1.6) return; // names once zoomed in far enough to read them
          ctx.font = (10 / scale) + "px system-ui, sans-serif";
          ctx.fillStyle = css("--muted");
          ctx.textAlign = "center";
          ctx.textBaseline = "top";
          ctx.fillText(n.title.length > 30 ? n.title.slice(0, 29) + "…" : n.title, n.x, n.y + 5);
        });
    }
    sized(el, graph);
    el.setAttribute("data-nodes", String(nodes.length));

    function apply() {
      var on = {};
      controls.querySelectorAll('input[name="type"]').forEach(function (c) { on[c.value] = c.checked; });
      var tag = controls.querySelector('select[name="tag"]').value;
      var keep = nodes.filter(function (n) { return on[n.type] !== false && (!tag || n.tags.indexOf(tag) >= 0); });
      var kept = {};
      keep.forEach(function (n) { kept[n.id] = true; });
      var links = data.edges.filter(function (e) { return kept[e[0]] && kept[e[1]]; })
        .map(function (e) { return { source: e[0], target: e[1] }; });
      graph.graphData({ nodes: keep, links: links });
      el.setAttribute("data-shown", String(keep.length));
      count.textContent = keep.length + " of " + nodes.length + " pages, " + links.length + " links";
    }
    controls.addEventListener("change", apply);
    var find = controls.querySelector('input[name="find"]');
    find.addEventListener("input", function () {
      var q = find.value.trim().toLowerCase();
      found = null;
      if (q) {
        var shown = graph.graphData().nodes;
        for (var i = 0; i < shown.length; i++) if (shown[i].title.toLowerCase().indexOf(q) >= 0) { found = shown[i]; break; }
      }
      if (found && found.x !== undefined) { graph.centerAt(found.x, found.y, 600); graph.zoom(4, 600); }
      graph.nodeColor(graph.nodeColor());
    });
    document.addEventListener("commonplace:theme", function () { graph.linkColor(graph.linkColor()); graph.nodeColor(graph.nodeColor()); });
    apply();
    var fitted = false;
    graph.onEngineStop(function () {
      if (!found && !fitted) { fitted = true; graph.zoomToFit(400, 20); }
      el.setAttribute("data-settled", "true");
    });
    window.CommonplaceGraph.instance = graph;
  }

  function local(el) {
    var title = (document.querySelector(".doc-title") || {}).textContent || document.title;
    var nodes = [{ id: "", title: title.trim(), kind: "self" }];
    var byId = { "": nodes[0] };
    var links = [];
    function add(selector, outgoing) {
      document.querySelectorAll(selector).forEach(function (a) {
        var id = a.href;
        if (!byId[id]) { byId[id] = { id: id, title: a.textContent, kind: outgoing ? "out" : "in" }; nodes.push(byId[id]); }
        else if (byId[id].kind !== (outgoing ? "out" : "in")) byId[id].kind = "both";
        links.push(outgoing ? { source: "", target: id } : { source: id, target: "" });
      });
    }
    add(".links ul.outgoing > li > a", true);
    add(".links ul.backlinks > li > a", false);
    var few = nodes.length <= 40;
    var graph = window.ForceGraph()(el)
      .graphData({ nodes: nodes, links: links })
      .nodeId("id")
      .nodeLabel(function (n) { return n.title; })
      .nodeRelSize(4)
      .linkColor(function () { return css("--line"); })
      .linkDirectionalArrowLength(3)
      .linkDirectionalArrowRelPos(1)
      .cooldownTicks(100)
      .nodeCanvasObject(function (n, ctx, scale) {
        var r = n.kind === "self" ? 6 : 4;
        ctx.beginPath();
        ctx.arc(n.x, n.y, r, 0, 2 * Math.PI);
        ctx.fillStyle = n.kind === "self" ? css("--broken") : (n.kind === "in" ? PALETTE[2] : css("--accent"));
        ctx.fill();
        if (few || n.kind === "self") {
          var size = 11 / scale;
          ctx.font = size + "px system-ui, sans-serif";
          ctx.fillStyle = css("--fg");
          ctx.textAlign = "center";
          ctx.textBaseline = "top";
          var label = n.title.length > 28 ? n.title.slice(0, 27) + "…" : n.title;
          ctx.fillText(label, n.x, n.y + r + 2 / scale);
        }
      })
      .nodePointerAreaPaint(function (n, colour, ctx) {
        ctx.fillStyle = colour;
        ctx.beginPath();
        ctx.arc(n.x, n.y, 7, 0, 2 * Math.PI);
        ctx.fill();
      })
      .onNodeClick(function (n) { if (n.id) location.href = n.id; });
    sized(el, graph);
    el.setAttribute("data-nodes", String(nodes.length));
    graph.onEngineStop(function () { graph.zoomToFit(300, 30); });
  }

  window.CommonplaceGraph = { whole: whole, local: local };
})();
