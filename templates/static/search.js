// Search as you type, over every word of every page, keyboard first: `/` or Ctrl-K opens
// it, arrows move, Enter opens, Esc closes. Loaded only when the search is opened.
//
// Offline (file://, static hosts) it searches with MiniSearch over the build's term
// postings (compiler/site_search.py): a word's shard loads on its first keystroke.
// Under `commonplace serve` the same box asks POST /v1/search (hybrid) and falls back to
// the offline data if that fails. Snippets are plain text; matches are marked by
// building text nodes, never by parsing markup, so page text such as `[[x]]` stays text.
(function () {
  "use strict";
  if (window.CommonplaceSearch) return;
  var C = window.Commonplace;
  var MAX_RESULTS = 20;
  var SNIPPET = 180;
  var WORD = /[\p{L}\p{N}]+/gu;
  var MAX_TERM = 40;
  // Under serve, results whose normalised score (0-1) is below this are weak: the
  // server's own cut-off for "nothing matched well" (compiler/search/fusion.py,
  // WEAK_VECTOR_ONLY). The server also says so in `warnings`; either is enough.
  var WEAK = 0.35;

  function tokenize(text) {
    return (text.toLowerCase().match(WORD) || []).filter(function (t) { return t.length <= MAX_TERM; });
  }

  // ---------------------------------------------------------------- offline engine
  var engine = null; // Promise<MiniSearch>
  var meta = null; // the page list, once the engine has it
  var loadedKeys = {};
  var textIn = {}; // text shards known to be loaded

  function dataReady() {
    return window.CommonplaceData ? Promise.resolve() : C.load("_/static/data.js");
  }

  function getEngine() {
    if (!engine) {
      engine = dataReady().then(function () { return window.CommonplaceData.loadMeta(); }).then(function (m) {
        meta = m;
        var ids = {}, lengths = {};
        for (var i = 0; i < m.docs.length; i++) {
          ids[i] = i;
          lengths[i] = [m.lengths[2 * i], m.lengths[2 * i + 1]];
        }
        var ms = window.MiniSearch.loadJS({
          documentCount: m.docs.length, nextId: m.docs.length, documentIds: ids, fieldIds: { title: 0, text: 1 },
          fieldLength: lengths, averageFieldLength: m.avg, storedFields: {}, dirtCount: 0, index: [],
          serializationVersion: 2
        }, { fields: m.fields, tokenize: tokenize, processTerm: function (t) { return t; } });
        var titles = new Map();
        for (var d = 0; d < m.titles.length; d++) addWords(titles, m.titles[d], d);
        merge(ms, titles, 0);
        return ms;
      });
    }
    return engine;
  }

  // Term postings arrive per shard; they go straight into MiniSearch's term map (the
  // shape its own loadJS builds), so MiniSearch does the prefix, fuzzy and BM25 work.
  // "term count term count ..." of page `id` into term -> page -> count.
  function addWords(terms, text, id) {
    if (!text) return;
    var words = text.split(" ");
    for (var k = 0; k < words.length; k += 2) {
      var docs = terms.get(words[k]);
      if (!docs) { docs = new Map(); terms.set(words[k], docs); }
      docs.set(id, +words[k + 1]);
    }
  }

  // Into MiniSearch's own term map (term -> field -> page -> count: the shape its loadJS
  // builds), so MiniSearch does the prefix, fuzzy and BM25 work.
  function merge(ms, terms, field) {
    terms.forEach(function (docs, term) {
      var data = ms._index.get(term);
      if (!data) { data = new Map(); ms._index.set(term, data); }
      data.set(field, docs);
    });
  }

  // A term file has a row per page of its block, in order, rows joined by ",": the
  // page's text words starting with the file's letter (sorted), ":", their counts (empty
  // if it has none). Loaded files stay as text (`raw[key].blocks`: [[first page number
  // of the block, rows], ...]); only the words a query can match go into MiniSearch's
  // term map (`want`), so a keystroke pays for those, not for the whole letter
  // (measured at 10,000 pages: 10-57 ms to take in every word of a letter).
  var raw = {};

  // The words starting with `p` ("" for all; only `p` itself if `exact`) in `blocks`, as
  // term -> page -> count.
  function wordsWith(blocks, p, exact, terms) {
    var needle = " " + p;
    blocks.forEach(function (blk) {
      var rows = blk[1];
      if (!rows) return;
      var id = blk[0], pos = 0, n = rows.length;
      // The next " p" in the file: rows without one are skipped by comparing positions.
      var hit = p ? rows.indexOf(needle) : 0;
      while (pos < n) {
        var nl = rows.indexOf(",", pos);
        if (nl < 0) nl = n;
        var tab = rows.indexOf(":", pos);
        var at = -1;
        if (tab > pos && tab < nl) {
          if (!p || rows.startsWith(p, pos)) at = pos;
          else {
            while (hit >= 0 && hit < pos) hit = rows.indexOf(needle, pos);
            if (hit >= 0 && hit < tab) at = hit + 1;
          }
        }
        if (at >= 0) addRow(terms, rows, at, tab, nl, countAt(rows, pos, at, tab), id, p, exact);
        id++;
        pos = nl + 1;
      }
    });
    return terms;
  }

  // The position of the count that goes with the word starting at `at` (words before it
  // in the row have their counts before it too).
  function countAt(rows, pos, at, tab) {
    var k = 0, c = tab + 1;
    for (var i = pos; i < at; i++) if (rows.charCodeAt(i) === 32) k++;
    while (k-- > 0) c = rows.indexOf(" ", c) + 1;
    return c;
  }

  // The words of one row from `at` on while they start with `p` (they are sorted).
  function addRow(terms, rows, at, tab, nl, c, id, p, exact) {
    while (at < tab) {
      var end = rows.indexOf(" ", at);
      if (end < 0 || end > tab) end = tab;
      var cend = rows.indexOf(" ", c);
      if (cend < 0 || cend > nl) cend = nl;
      if (exact && end - at !== p.length) return;
      var w = rows.slice(at, end);
      if (p && !w.startsWith(p)) return;
      var docs = terms.get(w);
      if (!docs) { docs = new Map(); terms.set(w, docs); }
      docs.set(id, +rows.slice(c, cend));
      if (exact) return;
      at = end + 1;
      c = cend + 1;
    }
  }

  function idle(fn) { (window.requestIdleCallback || setTimeout)(fn); }

  // Make sure MiniSearch knows the text words of letter `k` that `spec` asks for: "" all
  // of them, two characters those starting with them, "=word" that word.
  function want(ms, k, spec) {
    var r = raw[k];
    if (!r || r.done[""] || r.done[spec]) return;
    var exact = spec.charAt(0) === "=", p = exact ? spec.slice(1) : spec;
    if (p && r.done[p.slice(0, 2)]) return;  // that word is in already
    var terms = wordsWith(r.blocks, p, exact, new Map());
    if (!p) terms.forEach(function (docs, term) { if (r.done[term.slice(0, 2)]) terms.delete(term); });
    merge(ms, terms, 1);
    r.done[spec] = true;
  }

  // A short word as the last one typed would expand to every word starting with it
  // (one letter: thousands at 10,000 pages, a second of scoring; two: hundreds, 10-170
  // ms of scoring): it matches the start of title words (all loaded with the page list)
  // and, from two letters on, itself as a whole word of the text. The third letter
  // searches every word it starts.
  var SHORT = 3;
  function shortLast(words) { return words[words.length - 1].length < SHORT; }

  function runQuery(ms, query) {
    var words = tokenize(query);
    if (!shortLast(words)) return ms.search(query, OPTIONS);
    var w = words[words.length - 1];
    var last = { queries: [w], fields: ["title"], prefix: true };
    if (w.length > 1) last = { combineWith: "OR", queries: [last, { queries: [w], fields: ["text"], prefix: false }] };
    var head = words.slice(0, -1).join(" ");
    return ms.search(head ? { queries: [head, last], combineWith: "AND" } : last, OPTIONS);
  }

  // A letter's term files, loaded once and kept as text. Needs only the page list, not
  // the engine: the first keystroke starts it while the engine is still being made.
  function loadKey(k) {
    if (!loadedKeys[k]) {
      loadedKeys[k] = dataReady().then(function () { return window.CommonplaceData.loadTerms(k); })
        .then(function (blocks) { raw[k] = { blocks: blocks, done: {} }; })
        .catch(function (e) { delete loadedKeys[k]; throw e; });
    }
    return loadedKeys[k];
  }

  function prefetch(words) {
    if (!words.length) return;
    var k = window.CommonplaceData && window.CommonplaceData.termKey(words[words.length - 1]);
    if (k) loadKey(k).catch(function () {});
  }

  // The term files the query's words need, in MiniSearch; `all` for every word of their
  // letters (fuzzy matching may change any character but the first).
  function ensureTerms(ms, words, all) {
    var termKey = window.CommonplaceData.termKey;
    var need = [];
    var last = words.length - 1;
    words.forEach(function (w, i) {
      if (i === last && w.length < 2) return;  // title words only
      need.push([termKey(w), all || w.length < 2 ? "" : i === last && w.length < SHORT ? "=" + w : w.slice(0, 2)]);
    });
    prefetch(words);  // a short last word: not all needed now, surely on the next keystroke
    return Promise.all(need.map(function (n) { return loadKey(n[0]); })).then(function () {
      need.forEach(function (n) {
        want(ms, n[0], n[1]);
        // A two-letter last word: its third letter will want every word it starts.
        if (n[1].charAt(0) === "=") idle(function () { want(ms, n[0], n[1].slice(1, 3)); });
      });
    });
  }

  var OPTIONS = { prefix: true, boost: { title: 3 }, combineWith: "AND" };

  // MiniSearch's own hits for a query, once the shards its words need are in.
  function engineSearch(query) {
    var words = tokenize(query);
    if (!words.length) return Promise.resolve([]);
    return getEngine().then(function (ms) {
      return ensureTerms(ms, words, false).then(function () { return runQuery(ms, query); });
    });
  }

  var FIRST = 8; // results described (snippet text loaded) before the list first shows

  // Resolves to the first results; `more(all)` gets the whole list once its snippets are in.
  // When no page holds every word typed (as a word or the start of one), the list is
  // what a fuzzy or any-word search finds, marked `weak`: the box says nothing matched well.
  function offlineSearch(query, more) {
    var words = tokenize(query);
    if (!words.length) return Promise.resolve([]);
    dataReady().then(function () { prefetch(words); }, function () {});
    return getEngine().then(function (ms) {
      return ensureTerms(ms, words, false).then(function () {
        var opts = OPTIONS;
        var hits = runQuery(ms, query);
        if (shortLast(words)) return describeAll(hits, more, !hits.length);  // keep it cheap
        if (hits.length) return describeAll(hits, more, false);
        // Nothing holds every word: a fuzzy search (every word of their letters), else any word.
        return ensureTerms(ms, words, true).then(function () {
          hits = ms.search(query, Object.assign({}, opts, { fuzzy: function (t) { return t.length >= 5 ? 0.2 : false; } }));
          if (!hits.length && words.length > 1) hits = ms.search(query, Object.assign({}, opts, { combineWith: "OR" }));
          return describeAll(hits, more, true);
        });
      });
    });
  }

  // The rest of the list is described once the person pauses (MORE_AFTER ms without a
  // newer search): while they type, its text files would only slow the next keystroke.
  var MORE_AFTER = 150;
  var searches = 0;

  // The first results show at once; those whose page text is not loaded yet show their
  // title and path (`pending`) until it is, then the list is drawn again with every
  // snippet (`more`). A keystroke so waits for the matching, not for text files.
  function describeAll(hits, more, weak) {
    hits = hits.slice(0, MAX_RESULTS);
    var flag = function (list) { list.weak = !!weak; return list; };
    var mine = ++searches;
    var current = function () { return mine === searches; };
    var head = hits.slice(0, FIRST);
    var first = Promise.all(head.map(describe)).then(flag);
    var rest = function (done) {
      if (hits.length <= FIRST) return;
      setTimeout(function () {
        if (!current()) return;
        Promise.all(hits.slice(FIRST).map(describe)).then(function (tail) { if (current()) more(flag(done.concat(tail))); });
      }, MORE_AFTER);
    };
    if (!more) return first;
    if (!head.every(function (h) { return textIn[meta.docs[h.id][2]]; })) {
      first.then(function (done) { if (current()) { more(done); rest(done); } });
      return Promise.resolve(flag(head.map(pending)));
    }
    return first.then(function (done) { rest(done); return done; });
  }

  function pending(hit) {
    var d = meta.docs[hit.id];
    return { path: d[0], title: d[1], url: C.root + window.CommonplaceData.pageUrl(d[0]), anchor: "", heading: "",
             snippet: "", words: hit.terms, pending: true };
  }

  // The section of a page where the matched words are, and the text around them.
  function describe(hit) {
    var m = window.CommonplaceData;
    return m.loadMeta().then(function (meta) {
      var d = meta.docs[hit.id];
      return m.sections(hit.id).then(function (secs) {
        textIn[d[2]] = true;
        var best = pickSection(secs, hit.terms);
        return {
          path: d[0], title: d[1], url: C.root + m.pageUrl(d[0]),
          anchor: best ? best.anchor : "", heading: best ? best.heading : "",
          snippet: best ? best.snippet : "", words: hit.terms
        };
      });
    });
  }

  function wordRegex(words) {
    var alts = words.filter(Boolean).map(function (w) { return w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); });
    if (!alts.length) return null;
    alts.sort(function (a, b) { return b.length - a.length; });
    return new RegExp("(?<![\\p{L}\\p{N}])(?:" + alts.join("|") + ")(?![\\p{L}\\p{N}])", "giu");
  }

  function pickSection(secs, words) {
    var re = wordRegex(words);
    var best = null;
    secs.forEach(function (s) {
      var text = s[2] || "";
      if (!re) return;
      re.lastIndex = 0;
      var found = {}, first = -1, m;
      while ((m = re.exec(text))) {
        found[m[0].toLowerCase()] = true;
        if (first < 0) first = m.index;
      }
      var score = Object.keys(found).length;
      if (score && (!best || score > best.score)) best = { score: score, at: first, anchor: s[0], heading: s[1], text: text };
    });
    if (!best && secs.length) best = { score: 0, at: 0, anchor: "", heading: "", text: secs[0][2] || "" };
    if (!best) return null;
    best.snippet = around(best.text, best.at);
    return best;
  }

  function around(text, at) {
    var start = Math.max(0, at - SNIPPET / 3);
    var end = Math.min(text.length, start + SNIPPET);
    if (start > 0) start = text.indexOf(" ", start) + 1 || start;
    if (end < text.length) { var sp = text.lastIndexOf(" ", end); if (sp > at) end = sp; }
    return (start > 0 ? "… " : "") + text.slice(start, end) + (end < text.length ? " …" : "");
  }

  // ---------------------------------------------------------------- served engine
  var aborter = null;
  function serverSearch(query) {
    if (aborter) aborter.abort();
    aborter = window.AbortController ? new AbortController() : null;
    return fetch(C.root + "v1/search", {
      method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ query: query, k: MAX_RESULTS, mode: "hybrid", snippet_marks: "none" }),
      signal: aborter ? aborter.signal : undefined
    }).then(function (r) {
      if (!r.ok) throw new Error("search answered " + r.status);
      return r.json();
    }).then(function (j) {
      var words = tokenize(query);
      var results = (j.results || []).map(function (r) {
        return {
          path: r.path, title: r.title || r.path,
          url: C.root + window.CommonplaceData.pageUrl(r.path), anchor: r.anchor || "",
          heading: r.heading || "", snippet: r.snippet || "", words: words, prefix: true,
          score: typeof r.score_normalized === "number" ? r.score_normalized : null
        };
      });
      var scored = results.filter(function (r) { return r.score !== null; });
      results.weak = !results.length || (scored.length === results.length && scored.every(function (r) { return r.score < WEAK; })) ||
        (j.warnings || []).some(function (w) { return /^nothing matched/i.test(String(w)); });
      return results;
    });
  }

  // ---------------------------------------------------------------- the box
  var ui = null;

  function build(inline) {
    var wrap = document.createElement("div");
    wrap.className = inline ? "search-inline-box" : "search-backdrop";
    var box = document.createElement("div");
    box.className = "search-box";
    if (!inline) { box.setAttribute("role", "dialog"); box.setAttribute("aria-modal", "true"); box.setAttribute("aria-label", "Search"); }
    var input = document.createElement("input");
    input.type = "search";
    input.placeholder = "Search every word of every page";
    input.setAttribute("aria-label", "Search");
    input.setAttribute("autocomplete", "off");
    input.setAttribute("role", "combobox");
    input.setAttribute("aria-controls", "search-results");
    input.setAttribute("aria-expanded", "true");
    var status = document.createElement("p");
    status.className = "search-status";
    status.setAttribute("aria-live", "polite");
    var list = document.createElement("ol");
    list.className = "search-results";
    list.id = "search-results";
    list.setAttribute("role", "listbox");
    var help = document.createElement("div");
    help.className = "search-help";
    help.textContent = inline ? "↑ ↓ to move, Enter to open" : "↑ ↓ to move, Enter to open, Esc to close";
    box.appendChild(input); box.appendChild(status); box.appendChild(list); box.appendChild(help);
    wrap.appendChild(box);
    return { wrap: wrap, box: box, input: input, status: status, list: list, inline: inline, selected: -1, results: [], seq: 0 };
  }

  function mark(el, text, words, prefix) {
    var re = prefix ? prefixRegex(words) : wordRegex(words);
    if (!re) { el.textContent = text; return; }
    var last = 0, m;
    re.lastIndex = 0;
    while ((m = re.exec(text))) {
      if (!m[0]) { re.lastIndex++; continue; }
      el.appendChild(document.createTextNode(text.slice(last, m.index)));
      var b = document.createElement("mark");
      b.textContent = m[0];
      el.appendChild(b);
      last = m.index + m[0].length;
    }
    el.appendChild(document.createTextNode(text.slice(last)));
  }

  function prefixRegex(words) {
    var alts = words.filter(Boolean).map(function (w) { return w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); });
    if (!alts.length) return null;
    return new RegExp("(?<![\\p{L}\\p{N}])(?:" + alts.join("|") + ")[\\p{L}\\p{N}]*", "giu");
  }

  function href(r) {
    var words = (r.words || []).join(" ");
    return r.url + (words ? "?h=" + encodeURIComponent(words) : "") + (r.anchor ? "#" + encodeURIComponent(r.anchor) : "");
  }

  function render(results, how, keep) {
    var was = ui.selected;
    ui.results = results;
    ui.list.textContent = "";
    ui.list.classList.toggle("search-weak", !!results.weak);
    results.forEach(function (r, i) {
      var li = document.createElement("li");
      li.id = "search-result-" + i;
      li.setAttribute("role", "option");
      if (results.weak) li.style.opacity = "0.6";  // shown, but as a guess
      var a = document.createElement("a");
      a.href = href(r);
      var t = document.createElement("div");
      t.className = "r-title";
      mark(t, r.title, r.words, r.prefix);
      a.appendChild(t);
      if (r.heading) {
        var h = document.createElement("div");
        h.className = "r-section";
        h.textContent = "§ " + r.heading;
        a.appendChild(h);
      }
      if (r.snippet || r.pending) {
        var s = document.createElement("div");
        s.className = "r-snippet";
        if (r.pending) { li.classList.add("r-pending"); s.textContent = "\u00a0"; } // its line, kept for the snippet
        else mark(s, r.snippet, r.words, r.prefix);
        a.appendChild(s);
      }
      var p = document.createElement("div");
      p.className = "r-path";
      p.textContent = r.path;
      a.appendChild(p);
      li.appendChild(a);
      li.addEventListener("mousemove", function () { select(i); });
      ui.list.appendChild(li);
    });
    var count = results.length + (results.length === MAX_RESULTS ? "+" : "") + " page" + (results.length === 1 ? "" : "s");
    ui.status.textContent = !results.weak ? count + " (" + how + ")"
      : results.length ? "Nothing matched well. Weak matches, dimmed: " + count + " (" + how + ")"
      : "Nothing matched well (" + how + ").";
    select(results.length ? (keep && was >= 0 && was < results.length ? was : 0) : -1);
  }

  function select(i) {
    var items = ui.list.children;
    if (ui.selected >= 0 && items[ui.selected]) items[ui.selected].setAttribute("aria-selected", "false");
    ui.selected = i;
    if (i >= 0 && items[i]) {
      items[i].setAttribute("aria-selected", "true");
      ui.input.setAttribute("aria-activedescendant", items[i].id);
      items[i].scrollIntoView({ block: "nearest" });
    } else ui.input.removeAttribute("aria-activedescendant");
  }

  function run() {
    var q = ui.input.value;
    if (ui.input.scrollWidth <= ui.input.clientWidth) ui.input.scrollLeft = 0;
    var seq = ++ui.seq;
    if (ui.inline && window.history && history.replaceState) {
      history.replaceState(null, "", q ? "?q=" + encodeURIComponent(q) : location.pathname);
    }
    if (!tokenize(q).length) {
      ui.list.textContent = ""; ui.results = [];
      ui.status.textContent = "Type to search every word of every page.";
      return;
    }
    var t0 = performance.now();
    C.server.then(function (served) {
      var offline = function () {
        return offlineSearch(q, function (all) {
          if (seq === ui.seq) render(all, "offline index", true);
        }).then(function (rs) { return [rs, "offline index"]; });
      };
      var p = served
        ? dataReady().then(function () { return serverSearch(q); }).then(function (rs) { return [rs, "hybrid search"]; }, offline)
        : offline();
      return p.then(function (out) {
        if (seq !== ui.seq) return;
        render(out[0], out[1]);
        window.COMMONPLACE_SEARCH_MS = performance.now() - t0;
      });
    }).catch(function (e) {
      if (seq === ui.seq) ui.status.textContent = "Search is unavailable: " + e.message;
    });
  }

  function keys(e) {
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      var n = ui.results.length;
      if (!n) return;
      select(((ui.selected + (e.key === "ArrowDown" ? 1 : -1)) % n + n) % n);
    } else if (e.key === "Enter") {
      e.preventDefault();
      var item = ui.list.children[ui.selected >= 0 ? ui.selected : 0];
      if (item) item.querySelector("a").click();
    } else if (e.key === "Escape" && !ui.inline) {
      e.preventDefault();
      close();
    }
  }

  var returnFocus = null;
  function close() {
    if (!ui || ui.inline) return;
    ui.wrap.remove();
    document.body.style.overflow = "";
    if (returnFocus && returnFocus.focus) returnFocus.focus();
  }

  function open(text) {
    var host = document.getElementById("search-page");
    if (!ui) {
      ui = build(!!host);
      ui.input.addEventListener("input", run);
      ui.input.addEventListener("keydown", keys);
      if (host) {
        var form = host.querySelector("form");
        if (form) form.remove();
        host.appendChild(ui.wrap);
      } else {
        ui.wrap.addEventListener("mousedown", function (e) { if (e.target === ui.wrap) close(); });
      }
    }
    if (!ui.inline && !ui.wrap.isConnected) {
      returnFocus = document.activeElement;
      if (returnFocus && returnFocus.closest && returnFocus.closest(".top .search")) returnFocus = null;
      document.body.appendChild(ui.wrap);
      document.body.style.overflow = "hidden";
    }
    if (text) ui.input.value = text;
    ui.input.focus();
    var end = ui.input.value.length;
    ui.input.setSelectionRange(end, end);
    if (ui.input.scrollWidth <= ui.input.clientWidth) ui.input.scrollLeft = 0;
    run();
    // Warm the index while the person types: the page list and the usual first letters.
    getEngine().catch(function () {});
  }

  window.CommonplaceSearch = { ready: true, open: open, close: close, search: offlineSearch, engineSearch: engineSearch };
})();
