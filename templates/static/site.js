// What every page needs: the menu, the theme toggle, heading permalinks, the table of
// contents, keyboard shortcuts, link previews and the local graph. Search code and data
// load only when the search is opened (or a preview is wanted), as <script> files, so
// all of it works from file:// too. Under `commonplace serve` the page also listens for
// rebuilds and reloads when one touched it.
(function () {
  "use strict";
  if (window.Commonplace) return; // loaded twice (the 404 page asks for it two ways)
  var script = document.currentScript;
  var src = script ? script.src : "";
  var root = src.replace(/_\/static\/site\.js(\?.*)?$/, "");
  var loaded = {};

  function load(path) {
    if (!loaded[path]) {
      loaded[path] = new Promise(function (resolve, reject) {
        var s = document.createElement("script");
        s.src = root + path;
        s.onload = function () { resolve(); };
        s.onerror = function () { delete loaded[path]; reject(new Error("cannot load " + path)); };
        document.head.appendChild(s);
      });
    }
    return loaded[path];
  }

  // Served by `commonplace serve`? Its /healthz answers JSON; a static host or file://
  // does not. Search then asks /v1/search and the page listens for rebuilds.
  var server = new Promise(function (resolve) {
    if (!/^https?:$/.test(location.protocol) || !window.fetch) return resolve(false);
    var meta = document.querySelector('meta[name="commonplace-server"]');
    if (meta) return resolve(true);
    fetch(root + "healthz", { headers: { Accept: "application/json" }, cache: "no-store" })
      .then(function (r) {
        var type = r.headers.get("Content-Type") || "";
        resolve((r.status === 200 || r.status === 503) && type.indexOf("json") >= 0);
      })
      .catch(function () { resolve(false); });
  });

  // The page's path relative to the site root, as the build names it ("a/b/index.html").
  function sitePath(href) {
    var u = new URL(href, location.href);
    var p = decodeURIComponent(u.href.split("#")[0].split("?")[0]);
    var r = decodeURIComponent(root);
    if (p.indexOf(r) !== 0) return null;
    p = p.slice(r.length);
    if (p === "" || p.slice(-1) === "/") p += "index.html";
    return p;
  }

  window.Commonplace = { root: root, load: load, server: server, sitePath: sitePath };

  var body = document.body;
  document.querySelectorAll(".needs-script").forEach(function (el) { el.remove(); });

  // The 404 page is served at any depth: its relative links are right from disk and at
  // the top of the site; when this script came from the site root, point them there.
  if (body.classList.contains("not-found") && /^https?:$/.test(location.protocol)) {
    document.querySelectorAll('a[href^="./"]').forEach(function (a) {
      a.setAttribute("href", root + a.getAttribute("href").slice(2));
    });
    document.querySelectorAll('form[action^="./"]').forEach(function (f) {
      f.setAttribute("action", root + f.getAttribute("action").slice(2));
    });
  }

  // Menu (phones)
  var menu = document.querySelector(".menu-toggle");
  function setMenu(open) {
    body.classList.toggle("menu-open", open);
    if (menu) menu.setAttribute("aria-expanded", open ? "true" : "false");
  }
  if (menu) menu.addEventListener("click", function () { setMenu(!body.classList.contains("menu-open")); });
  document.addEventListener("click", function (e) {
    if (body.classList.contains("menu-open") && !e.target.closest(".side, .menu-toggle")) setMenu(false);
  });

  // Theme: remembered across pages (theme.js applies it before the first paint).
  var toggle = document.querySelector(".theme-toggle");
  function isDark() {
    var t = document.documentElement.getAttribute("data-theme");
    if (t) return t === "dark";
    return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  }
  function showTheme() {
    if (!toggle) return;
    toggle.setAttribute("aria-pressed", isDark() ? "true" : "false");
    toggle.title = isDark() ? "Switch to light mode" : "Switch to dark mode";
  }
  if (toggle) {
    toggle.hidden = false;
    showTheme();
    toggle.addEventListener("click", function () {
      var next = isDark() ? "light" : "dark";
      document.documentElement.setAttribute("data-theme", next);
      try { localStorage.setItem("commonplace-theme", next); } catch (e) { /* not remembered */ }
      showTheme();
      document.dispatchEvent(new CustomEvent("commonplace:theme"));
    });
  }

  // Heading permalinks
  document.querySelectorAll(".content :is(h1,h2,h3,h4,h5,h6)[id]").forEach(function (h) {
    var a = document.createElement("a");
    a.className = "anchor";
    a.href = "#" + h.id;
    a.setAttribute("aria-label", "Link to this section");
    a.textContent = "#";
    h.appendChild(a);
  });

  // Table of contents: open beside the page, folded above it on narrow screens.
  var toc = document.querySelector(".toc");
  if (toc && window.matchMedia && window.matchMedia("(max-width: 1100px)").matches) toc.open = false;
  if (toc && "IntersectionObserver" in window) {
    var links = {};
    toc.querySelectorAll("a[href^='#']").forEach(function (a) { links[decodeURIComponent(a.getAttribute("href").slice(1))] = a; });
    var current = null;
    var seen = new IntersectionObserver(function (entries) {
      entries.forEach(function (en) {
        if (en.isIntersecting && links[en.target.id]) {
          if (current) current.classList.remove("current");
          current = links[en.target.id];
          current.classList.add("current");
        }
      });
    }, { rootMargin: "0px 0px -70% 0px" });
    Object.keys(links).forEach(function (id) { var h = document.getElementById(id); if (h) seen.observe(h); });
  }

  // Words a search result asked to show (?h=word+word): marked in the page text.
  var wanted = new URLSearchParams(location.search).get("h");
  if (wanted) markWords(document.querySelector(".content"), wanted);

  function markWords(container, words) {
    if (!container) return;
    var terms = words.toLowerCase().match(/[\p{L}\p{N}]+/gu);
    if (!terms) return;
    var re = new RegExp("(?<![\\p{L}\\p{N}])(" + terms.map(function (t) {
      return t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    }).join("|") + ")[\\p{L}\\p{N}]*", "giu");
    var walker = document.createTreeWalker(container, NodeFilter.SHOW_TEXT);
    var nodes = [];
    while (walker.nextNode()) nodes.push(walker.currentNode);
    var first = null;
    nodes.forEach(function (node) {
      var text = node.nodeValue;
      re.lastIndex = 0;
      if (!re.test(text)) return;
      re.lastIndex = 0;
      var frag = document.createDocumentFragment();
      var last = 0, m;
      while ((m = re.exec(text))) {
        frag.appendChild(document.createTextNode(text.slice(last, m.index)));
        var mark = document.createElement("mark");
        mark.className = "hit";
        mark.textContent = m[0];
        frag.appendChild(mark);
        if (!first) first = mark;
        last = m.index + m[0].length;
      }
      frag.appendChild(document.createTextNode(text.slice(last)));
      node.parentNode.replaceChild(frag, node);
    });
    if (first && !location.hash) first.scrollIntoView({ block: "center" });
  }

  // Search: `/` or Ctrl-K anywhere, or the header box. The search code loads now; what
  // is typed meanwhile goes into the header box and moves to the search box with it.
  var headerBox = document.querySelector(".top .search input");
  var searchPage = document.getElementById("search-page");
  function openSearch(text) {
    load("_/static/vendor/minisearch.js")
      .then(function () { return load("_/static/search.js"); })
      .then(function () {
        if (headerBox && !searchPage && document.activeElement === headerBox) {
          text = headerBox.value;
          headerBox.value = "";
        }
        window.CommonplaceSearch.open(text || "");
      })
      .catch(function () {
        location.href = root + "_/search/index.html" + (text ? "?q=" + encodeURIComponent(text) : "");
      });
  }
  function startSearch() {
    if (headerBox && !searchPage && !(window.CommonplaceSearch && window.CommonplaceSearch.ready)) headerBox.focus();
    openSearch("");
  }
  document.addEventListener("keydown", function (e) {
    var el = document.activeElement;
    var typing = el && (el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.isContentEditable);
    if ((e.key === "k" || e.key === "K") && (e.ctrlKey || e.metaKey) && !e.altKey) {
      e.preventDefault();
      startSearch();
    } else if (e.key === "/" && !typing && !e.ctrlKey && !e.metaKey && !e.altKey) {
      e.preventDefault();
      startSearch();
    } else if (e.key === "Escape" && body.classList.contains("menu-open")) {
      setMenu(false);
    }
  });
  if (headerBox && !searchPage) {
    headerBox.addEventListener("focus", function () { openSearch(headerBox.value); });
    headerBox.addEventListener("input", function () { openSearch(headerBox.value); });
  }
  if (searchPage) openSearch(new URLSearchParams(location.search).get("q") || "");

  // Link previews: hover a link to another page of the site for its title and first lines.
  var previewBox = null, hoverTimer = null, hovered = null;
  function hidePreview() {
    clearTimeout(hoverTimer);
    hovered = null;
    if (previewBox) { previewBox.remove(); previewBox = null; }
  }
  function showPreview(a, info) {
    if (hovered !== a || !info) return;
    hidePreview();
    hovered = a;
    previewBox = document.createElement("div");
    previewBox.className = "preview";
    previewBox.setAttribute("role", "tooltip");
    var t = document.createElement("strong");
    t.textContent = info.title;
    var p = document.createElement("p");
    p.textContent = info.text;
    previewBox.appendChild(t);
    previewBox.appendChild(p);
    document.body.appendChild(previewBox);
    var r = a.getBoundingClientRect();
    var w = previewBox.offsetWidth;
    var left = Math.max(8, Math.min(window.scrollX + r.left, window.scrollX + document.documentElement.clientWidth - w - 8));
    previewBox.style.left = left + "px";
    previewBox.style.top = (window.scrollY + r.bottom + 6) + "px";
  }
  document.addEventListener("mouseover", function (e) {
    var a = e.target.closest && e.target.closest("main a[href]");
    if (!a || a === hovered || a.closest(".search-results, .toc, .chips, .crumbs") || a.classList.contains("anchor")) return;
    var href = a.getAttribute("href");
    if (!href || href.charAt(0) === "#" || /^[a-z]+:/i.test(href)) return;
    var path = sitePath(a.href);
    if (!path || path.indexOf("_/") === 0 || !/index\.html$/.test(path)) return;
    hidePreview();
    hovered = a;
    hoverTimer = setTimeout(function () {
      load("_/static/data.js")
        .then(function () { return window.CommonplaceData.preview(path); })
        .then(function (info) { showPreview(a, info); })
        .catch(function () { /* no preview */ });
    }, 350);
  });
  document.addEventListener("mouseout", function (e) {
    if (hovered && e.target.closest && e.target.closest("main a[href]") === hovered &&
        !(e.relatedTarget && hovered.contains(e.relatedTarget))) hidePreview();
  });
  window.addEventListener("scroll", function () { if (previewBox) hidePreview(); }, { passive: true });

  // Local graph: drawn when it scrolls into view, from the page's own link lists.
  var local = document.querySelector("[data-local-graph]");
  if (local) {
    var start = function () {
      load("_/static/vendor/force-graph.min.js")
        .then(function () { return load("_/static/graph.js"); })
        .then(function () { window.CommonplaceGraph.local(local); })
        .catch(function () { /* no graph */ });
    };
    if ("IntersectionObserver" in window) {
      var io = new IntersectionObserver(function (entries) {
        if (entries.some(function (en) { return en.isIntersecting; })) { io.disconnect(); start(); }
      }, { rootMargin: "200px" });
      io.observe(local);
    } else start();
  }
  var whole = document.getElementById("graph");
  if (whole) {
    load("_/graph-data.js")
      .then(function () { return load("_/static/vendor/force-graph.min.js"); })
      .then(function () { return load("_/static/graph.js"); })
      .then(function () { window.CommonplaceGraph.whole(whole); })
      .catch(function (err) { whole.textContent = "The graph could not be drawn: " + err.message; });
  }

  // Live reload under `commonplace serve`: the server sends an event after each rebuild
  // naming the files it wrote; reload when this page is among them.
  server.then(function (yes) {
    if (!yes || !window.EventSource) return;
    var here = sitePath(location.href);
    var events = new EventSource(root + "_/events");
    events.addEventListener("rebuilt", function (e) {
      var data = {};
      try { data = JSON.parse(e.data); } catch (err) { return; }
      var urls = data.urls || [];
      if (data.all || urls.indexOf(here) >= 0) location.reload();
    });
  });
})();
