// Typesets the page's `$...$` and `$$...$$` (rendered as .math spans and divs) with the
// vendored KaTeX. Loaded only by pages that have math; works from file://.
(function () {
  "use strict";
  if (!window.katex) return;
  var nodes = document.querySelectorAll(".content .math.inline, .content .math.block");
  for (var i = 0; i < nodes.length; i++) {
    var el = nodes[i];
    var tex = el.textContent;
    try {
      window.katex.render(tex, el, { displayMode: el.classList.contains("block"), throwOnError: false });
      el.setAttribute("data-tex", tex);
    } catch (e) {
      el.classList.add("math-error");
    }
  }
})();
