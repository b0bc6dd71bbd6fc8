// The schedule without this script shows UTC times and the time left when the page was made;
// with it each time gets the reader's own zone, and the countdown runs (by the reader's clock).
(function () {
  "use strict";
  var schedule = document.getElementById("schedule");
  if (!schedule || typeof Intl === "undefined") {
    return;
  }
  var local = new Intl.DateTimeFormat(undefined, {
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    timeZoneName: "short"
  });
  // A reader in UTC already reads their own time.
  var zone = local.resolvedOptions().timeZone;
  var inUtc = zone === "UTC" || zone === "Etc/UTC";
  Array.prototype.forEach.call(schedule.querySelectorAll("time[datetime]"), function (el) {
    if (inUtc) {
      return;
    }
    var at = new Date(el.getAttribute("datetime"));
    if (isNaN(at.getTime())) {
      return;
    }
    var span = document.createElement("span");
    span.className = "local-time";
    span.textContent = " (your time: " + local.format(at) + ")";
    el.parentNode.insertBefore(span, el.nextSibling);
  });

  var countdown = document.getElementById("countdown");
  if (!countdown) {
    return;
  }
  var deadline = new Date(countdown.getAttribute("data-deadline")).getTime();
  if (isNaN(deadline)) {
    return;
  }

  function plural(n, unit) {
    return n + " " + unit + (n === 1 ? "" : "s");
  }

  // As the server words it (services/campaign/schedule.py time_left), with seconds in the
  // last hour, when they are worth watching.
  function left(ms) {
    var total = Math.floor(ms / 1000);
    var days = Math.floor(total / 86400);
    var hours = Math.floor((total % 86400) / 3600);
    var minutes = Math.floor((total % 3600) / 60);
    var seconds = total % 60;
    var parts;
    if (days) {
      parts = [plural(days, "day")].concat(hours ? [plural(hours, "hour")] : []);
    } else if (hours) {
      parts = [plural(hours, "hour")].concat(minutes ? [plural(minutes, "minute")] : []);
    } else if (minutes) {
      parts = [plural(minutes, "minute"), plural(seconds, "second")];
    } else {
      parts = [plural(seconds, "second")];
    }
    return parts.join(" ") + " left";
  }

  var timer = null;
  function tick() {
    var ms = deadline - Date.now();
    if (ms <= 0) {
      countdown.textContent = "the deadline has passed";
      window.clearInterval(timer);
      return;
    }
    countdown.textContent = left(ms);
  }
  tick();
  timer = window.setInterval(tick, 1000);
})();
