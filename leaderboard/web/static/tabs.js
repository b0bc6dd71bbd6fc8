// Task page tabs: without this script every section shows, stacked under a nav of anchor links;
// with it only the chosen one shows (ARIA tabs, arrow keys, the URL hash selects a tab).
(function () {
  "use strict";
  var nav = document.querySelector("nav.tabs");
  if (!nav) {
    return;
  }
  var tabs = Array.prototype.slice.call(nav.querySelectorAll('a[href^="#"]'));
  var panels = tabs.map(function (tab) {
    return document.getElementById(tab.getAttribute("href").slice(1));
  });
  if (!tabs.length || panels.indexOf(null) !== -1) {
    return;
  }

  function select(index, focus) {
    tabs.forEach(function (tab, i) {
      var chosen = i === index;
      tab.setAttribute("aria-selected", chosen ? "true" : "false");
      tab.tabIndex = chosen ? 0 : -1;
      panels[i].hidden = !chosen;
    });
    if (focus) {
      tabs[index].focus();
    }
  }

  function fromHash() {
    var id = window.location.hash.slice(1);
    for (var i = 0; i < panels.length; i++) {
      if (panels[i].id === id) {
        return i;
      }
    }
    return -1;
  }

  nav.setAttribute("role", "tablist");
  nav.classList.add("tabs-active");
  tabs.forEach(function (tab, i) {
    var panel = panels[i];
    tab.id = panel.id + "-tab";
    tab.setAttribute("role", "tab");
    tab.setAttribute("aria-controls", panel.id);
    panel.setAttribute("role", "tabpanel");
    panel.setAttribute("aria-labelledby", tab.id);
    panel.tabIndex = 0;
    tab.addEventListener("click", function (event) {
      event.preventDefault();
      select(i, false);
      // The address names the tab (to share or reload) without jumping down the page.
      window.history.replaceState(null, "", "#" + panel.id);
    });
    tab.addEventListener("keydown", function (event) {
      var next = {
        ArrowRight: (i + 1) % tabs.length,
        ArrowLeft: (i - 1 + tabs.length) % tabs.length,
        Home: 0,
        End: tabs.length - 1
      }[event.key];
      if (next === undefined) {
        return;
      }
      event.preventDefault();
      select(next, true);
      window.history.replaceState(null, "", "#" + panels[next].id);
    });
  });
  window.addEventListener("hashchange", function () {
    var index = fromHash();
    if (index !== -1) {
      select(index, false);
    }
  });
  select(Math.max(fromHash(), 0), false);
})();
