// Site search. Served by `commonplace serve`, it asks /v1/search (hybrid); opened from
// disk or a static host, it falls back to the bundled data in _/search-data/*.js.
(function () {
  "use strict";
  var params = new URLSearchParams(window.location.search);
  var q = (params.get("q") || "").trim();
  var input = document.getElementById("q");
  var list = document.getElementById("results");
  var status = document.getElementById("search-status");
  var data = window.COMMONPLACE_SEARCH || { root: "", docs: [] };
  var root = document.querySelector('link[rel="stylesheet"]').getAttribute("href").replace(/_\/static\/style\.css$/, "");
  input.value = q;
  if (!q) { status.textContent = "Type a query and press Enter."; return; }

  function pageUrl(path) { return root + path.replace(/\.md$/, "") + "/index.html"; }

  function show(results, how) {
    list.textContent = "";
    status.textContent = results.length + " result" + (results.length === 1 ? "" : "s") + " (" + how + ")";
    results.forEach(function (r) {
      var li = document.createElement("li");
      var a = document.createElement("a");
      a.href = pageUrl(r.path);
      a.textContent = r.title || r.path;
      li.appendChild(a);
      var p = document.createElement("div");
      p.className = "path";
      p.textContent = r.path + (r.lines ? ":" + r.lines : "");
      li.appendChild(p);
      if (r.snippet) {
        var s = document.createElement("div");
        // Snippets are plain text; matched terms are marked with [[ ]] by the server,
        // so no server- or corpus-supplied HTML is ever injected.
        r.snippet.split(/(\[\[.*?\]\])/).forEach(function (part) {
          if (/^\[\[.*\]\]$/.test(part)) {
            var m = document.createElement("mark"); m.textContent = part.slice(2, -2); s.appendChild(m);
          } else { s.appendChild(document.createTextNode(part)); }
        });
        li.appendChild(s);
      }
      list.appendChild(li);
    });
  }

  function local() {
    var terms = q.toLowerCase().split(/\s+/).filter(Boolean);
    var scored = [];
    data.docs.forEach(function (d) {
      var hay = (d.title + " " + d.tags.join(" ") + " " + d.headings.join(" ") + " " + d.text).toLowerCase();
      var title = d.title.toLowerCase();
      var score = 0;
      terms.forEach(function (t) {
        if (hay.indexOf(t) >= 0) score += 1;
        if (title.indexOf(t) >= 0) score += 2;
      });
      if (score > 0) scored.push({ score: score, doc: d });
    });
    scored.sort(function (a, b) { return b.score - a.score || a.doc.path.localeCompare(b.doc.path); });
    show(scored.slice(0, 50).map(function (s) { return { path: s.doc.path, title: s.doc.title, snippet: s.doc.text.slice(0, 200) }; }), "offline index");
  }

  if (window.location.protocol === "http:" || window.location.protocol === "https:") {
    fetch(root + "v1/search", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ query: q, k: 20, mode: "hybrid", snippet_marks: "brackets" })
    }).then(function (r) { if (!r.ok) throw new Error(r.status); return r.json(); })
      .then(function (j) { show(j.results || [], "hybrid search"); })
      .catch(local);
  } else { local(); }
})();
