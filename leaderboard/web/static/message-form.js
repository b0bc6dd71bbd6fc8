// The message form, progressively enhanced (the CSP allows scripts from this site only): the
// subtask list offers only the chosen task's subtasks (without the script it groups them by task).
(function () {
  "use strict";

  var task = document.getElementById("task");
  var subtask = document.getElementById("subtask");
  if (!task || !subtask) { return; }

  function follow() {
    subtask.querySelectorAll("optgroup[data-task]").forEach(function (group) {
      var mine = group.getAttribute("data-task") === task.value;
      group.hidden = !mine;
      group.disabled = !mine;
    });
    var chosen = subtask.options[subtask.selectedIndex];
    if (chosen && chosen.parentElement && chosen.parentElement.disabled) { subtask.value = ""; }
  }

  task.addEventListener("change", follow);
  follow();
})();
