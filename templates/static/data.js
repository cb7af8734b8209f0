// The offline search data (written by the build, see compiler/site_search.py), loaded on
// demand as <script> files so it works from file:// too: the page list (meta.js and one
// file per block of pages), term files per first character of a word and block, and the
// text of pages by section.
(function () {
  "use strict";
  if (window.CommonplaceData) return;
  var C = window.Commonplace;
  var meta = null, metaWaiters = [];
  var head = null, blocks = {}, blocksDue = 0; // meta.js and the page lists (p-<block>.js)
  var terms = {}, termWaiters = {};
  var texts = {}, textWaiters = {};
  var byPath = null, byUrl = null;

  function waitFor(table, waiters, key, path) {
    if (table[key]) return Promise.resolve(table[key]);
    return new Promise(function (resolve, reject) {
      (waiters[key] = waiters[key] || []).push(resolve);
      C.load(path).catch(function (e) { delete waiters[key]; reject(e); });
    });
  }
  function settle(table, waiters, key, value) {
    table[key] = value;
    (waiters[key] || []).forEach(function (fn) { fn(value); });
    delete waiters[key];
  }

  function pageUrl(path) {
    return path.replace(/\.md$/, "").split("/").map(encodeURIComponent).join("/") + "/index.html";
  }

  function fail(e) {
    var w = metaWaiters;
    metaWaiters = [];
    w.forEach(function (fn) { fn[1](e); });
  }

  function assemble() {
    var m = { version: head.version, fields: head.fields, avg: head.avg, terms: head.terms, offsets: [],
              docs: [], lengths: [], titles: [] };
    head.blocks.forEach(function (n, b) {
      m.offsets.push(m.docs.length);
      if (!n) return;
      var p = blocks[b];
      m.docs = m.docs.concat(p.docs);
      m.lengths = m.lengths.concat(p.lengths);
      m.titles = m.titles.concat(p.titles);
    });
    meta = m;
    byPath = {}; byUrl = {};
    m.docs.forEach(function (d, i) { byPath[d[0]] = i; byUrl[decodeURIComponent(pageUrl(d[0]))] = i; });
    var w = metaWaiters;
    metaWaiters = [];
    w.forEach(function (fn) { fn[0](m); });
  }

  var D = {
    // Called by the data files. meta.js says how many pages each block holds; each
    // block's page list (same call, with a block number) follows. Once all are in, they
    // become one list: page number = the pages of the blocks before + number in block.
    meta: function (m) {
      if (m.block === undefined) {
        head = m;
        blocksDue = 0;
        m.blocks.forEach(function (n, b) {
          if (n && !blocks[b]) { blocksDue++; C.load("_/search-data/p-" + b + ".js").catch(fail); }
        });
      } else {
        if (!blocks[m.block]) blocksDue--;
        blocks[m.block] = m;
      }
      if (head && blocksDue === 0) assemble();
    },
    terms: function (t) { settle(terms, termWaiters, t.key + "-" + t.block, t.rows); },
    text: function (t) {
      var map = {};
      t.pages.forEach(function (it) { map[it[0]] = it[1]; });
      settle(texts, textWaiters, t.shard, map);
    },

    // For search.js and previews.
    pageUrl: pageUrl,
    loadMeta: function () {
      if (meta) return Promise.resolve(meta);
      return new Promise(function (resolve, reject) {
        metaWaiters.push([resolve, reject]);
        if (metaWaiters.length === 1) C.load("_/search-data/meta.js").catch(fail);
      });
    },
    termKey: function (term) {
      var c = term.charAt(0);
      if (/^[a-z0-9]$/.test(c)) return c;
      var code = term.codePointAt(0);
      return "u" + ("000" + code.toString(16)).slice(-Math.max(4, code.toString(16).length));
    },
    // [[first page number of the block, rows], ...] for the words starting with `key`.
    loadTerms: function (key) {
      return D.loadMeta().then(function (m) {
        return Promise.all((m.terms[key] || []).map(function (b) {
          return waitFor(terms, termWaiters, key + "-" + b, "_/search-data/t-" + key + "-" + b + ".js")
            .then(function (rows) { return [m.offsets[b], rows]; });
        }));
      });
    },
    // [[anchor, heading, text], ...] of one page.
    sections: function (docId) {
      var d = meta.docs[docId];
      var k = d[2];
      var name = (k < 10 ? "0" : "") + k;
      return waitFor(texts, textWaiters, k, "_/search-data/" + name + ".js").then(function (map) { return map[d[0]] || []; });
    },
    docByPath: function (path) { return byPath ? byPath[path] : undefined; },
    // {title, text} for a link preview of the page at this site path ("a/b/index.html").
    preview: function (sitePath) {
      return D.loadMeta().then(function () {
        var id = byUrl[sitePath];
        if (id === undefined) return null;
        return D.sections(id).then(function (secs) {
          var text = secs.map(function (s) { return s[2]; }).join(" ").trim();
          if (text.length > 280) text = text.slice(0, 280).replace(/\s+\S*$/, "") + " …";
          return { title: meta.docs[id][1], text: text || "(empty page)" };
        });
      });
    }
  };
  window.CommonplaceData = D;
})();
