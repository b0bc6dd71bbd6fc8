// The phase page, progressively enhanced (the CSP allows scripts from this site only):
// each stored instant also in the reader's own time, each date-time input also in UTC, and
// the inputs re-written in a newly chosen zone.
(function () {
  "use strict";

  function pad(n) { return String(n).padStart(2, "0"); }

  function utcText(ms) {
    var d = new Date(ms);
    return d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate()) +
      " " + pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes()) +
      (d.getUTCSeconds() ? ":" + pad(d.getUTCSeconds()) : "") + " UTC";
  }

  // The zone's offset from UTC at an instant, in milliseconds; null for an unknown zone.
  function offsetAt(ms, zone) {
    var format;
    try {
      format = new Intl.DateTimeFormat("en-US", {
        timeZone: zone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit",
        hour: "2-digit", minute: "2-digit", second: "2-digit"
      });
    } catch (e) {
      return null;
    }
    var parts = {};
    format.formatToParts(new Date(ms)).forEach(function (p) { parts[p.type] = p.value; });
    var wall = Date.UTC(+parts.year, +parts.month - 1, +parts.day, +parts.hour % 24,
      +parts.minute, +parts.second);
    return wall - Math.floor(ms / 1000) * 1000;
  }

  // The UTC instant of a wall-clock time in a zone: null when the zone skips that time.
  function toUtc(wall, zone) {
    var first = offsetAt(wall, zone);
    if (first === null) { return undefined; }
    var guess = wall - offsetAt(wall - first, zone);
    return guess + offsetAt(guess, zone) === wall ? guess : null;
  }

  function parseWall(value) {
    var m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?/.exec(value || "");
    if (!m) { return null; }
    return Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +(m[6] || 0));
  }

  function readerTimes() {
    var format = new Intl.DateTimeFormat(undefined, {
      year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit",
      timeZoneName: "short"
    });
    document.querySelectorAll("time.reader-local[datetime]").forEach(function (el) {
      var ms = Date.parse(el.getAttribute("datetime"));
      if (isNaN(ms) || el.querySelector(".reader-time")) { return; }
      var span = document.createElement("span");
      span.className = "reader-time";
      span.textContent = " (your time: " + format.format(new Date(ms)) + ")";
      el.appendChild(span);
    });
  }

  function utcHints() {
    var zoneInput = document.getElementById("zone");
    var hints = document.querySelectorAll(".utc-hint[data-input]");
    function update() {
      var zone = (zoneInput && zoneInput.value.trim()) || "UTC";
      hints.forEach(function (hint) {
        var input = document.getElementById(hint.getAttribute("data-input"));
        if (!input) { return; }
        var wall = parseWall(input.value);
        if (wall === null) { hint.textContent = ""; return; }
        var utc = toUtc(wall, zone);
        if (utc === undefined) {
          hint.textContent = "unknown time zone " + zone;
        } else if (utc === null) {
          hint.textContent = "this time does not exist in " + zone;
        } else {
          hint.textContent = "= " + utcText(utc);
        }
      });
    }
    hints.forEach(function (hint) {
      var input = document.getElementById(hint.getAttribute("data-input"));
      if (input) { input.addEventListener("input", update); }
    });
    if (zoneInput) { zoneInput.addEventListener("input", update); }
    update();
  }

  function wallText(ms, zone) {
    var d = new Date(ms + offsetAt(ms, zone));
    return d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate()) +
      "T" + pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes()) +
      (d.getUTCSeconds() ? ":" + pad(d.getUTCSeconds()) : "");
  }

  // When the zone changes, each time is re-written in the new zone: the same instant shown, so
  // choosing a zone moves nothing. The hidden shown_zone says which zone the texts are in.
  function followZone() {
    var zoneInput = document.getElementById("zone");
    var shownZone = document.getElementById("shown_zone");
    if (!zoneInput) { return; }
    var current = zoneInput.value.trim() || "UTC";
    if (offsetAt(0, current) === null) { current = null; }
    var inputs = ["start", "end", "release_at"].map(function (id) {
      var input = document.getElementById(id);
      var was = document.getElementById(id + "_was");
      var ms = was && was.value ? Date.parse(was.value) : NaN;
      var filledIn = (shownZone && shownZone.value) || current;
      // The instant each input shows as last written, to convert it exactly (even in a fold);
      // a text the page did not fill from the stored instant (a refused save) is read as typed.
      if (isNaN(ms) || !input || offsetAt(0, filledIn) === null ||
          parseWall(wallText(ms, filledIn)) !== parseWall(input.value)) { ms = NaN; }
      return input && { input: input, written: input.value, ms: isNaN(ms) ? null : ms };
    }).filter(Boolean);
    zoneInput.addEventListener("input", function () {
      var zone = zoneInput.value.trim() || "UTC";
      if (offsetAt(0, zone) === null || zone === current) { return; }
      inputs.forEach(function (item) {
        var ms = item.input.value === item.written ? item.ms : null;
        if (ms === null && current !== null) {
          var wall = parseWall(item.input.value);
          ms = wall === null ? null : toUtc(wall, current);
        }
        if (ms === null || ms === undefined) { return; }
        item.input.value = wallText(ms, zone);
        item.input.step = item.input.value.length > 16 ? "1" : item.input.step;
        item.written = item.input.value;
        item.ms = ms;
      });
      current = zone;
      if (shownZone) { shownZone.value = zone; }
    });
  }

  readerTimes();
  followZone();
  utcHints();
})();
