// Draws the page's ```mermaid blocks (rendered as <pre class="mermaid">) with the
// vendored mermaid. Loaded only by pages that have a diagram; works from file://.
// Redrawn in the other palette when the reader switches the theme.
(function () {
  "use strict";
  var mermaid = window.mermaid;
  if (!mermaid) return;
  var blocks = Array.prototype.slice.call(document.querySelectorAll(".content pre.mermaid"));
  blocks.forEach(function (el) { el.setAttribute("data-source", el.textContent); });

  function dark() {
    var t = document.documentElement.getAttribute("data-theme");
    if (t) return t === "dark";
    return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  }

  function draw() {
    mermaid.initialize({ startOnLoad: false, securityLevel: "strict", theme: dark() ? "dark" : "default" });
    blocks.forEach(function (el) {
      el.removeAttribute("data-processed");
      el.textContent = el.getAttribute("data-source");
    });
    mermaid.run({ nodes: blocks, suppressErrors: true }).then(function () {
      document.documentElement.setAttribute("data-diagrams", "drawn");
    });
  }

  draw();
  document.addEventListener("commonplace:theme", draw);
})();
