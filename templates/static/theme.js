// Runs before the stylesheet applies, so a remembered theme never flashes the other one.
(function () {
  try {
    var t = localStorage.getItem("commonplace-theme");
    if (t === "dark" || t === "light") document.documentElement.setAttribute("data-theme", t);
  } catch (e) { /* storage blocked: follow the system */ }
})();
