// A chart the worker has not drawn yet is announced, not shown as a broken image; this script
// asks for it every few seconds and puts it in place once it is stored (no page reload, so a
// reader's place and focus stay). Without it, the announcement's link reloads the page.
(function () {
  "use strict";
  var PAUSE_MS = 3000;
  var MAX_TRIES = 100;
  Array.prototype.forEach.call(document.querySelectorAll("[data-chart-src]"), function (el) {
    var src = el.getAttribute("data-chart-src");
    var tries = 0;
    function show() {
      var img = document.createElement("img");
      img.src = src;
      img.alt = el.getAttribute("data-chart-alt") || "";
      var p = document.createElement("p");
      p.appendChild(img);
      el.parentNode.replaceChild(p, el);
    }
    function again() {
      tries += 1;
      if (tries < MAX_TRIES) {
        window.setTimeout(check, PAUSE_MS);
      }
    }
    function check() {
      fetch(src, { credentials: "same-origin", cache: "no-store" }).then(function (resp) {
        if (resp.ok) {
          show();
        } else if (resp.status === 404) {
          again(); // still being drawn
        }
      }, again);
    }
    window.setTimeout(check, PAUSE_MS);
  });
})();
