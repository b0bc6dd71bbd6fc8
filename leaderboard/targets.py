"""The resolved target of a request: a task, subtask and evaluation set."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from leaderboard.models import EvalSet, GoldFile, Subtask, Task
from leaderboard.tasks.definition import SubtaskDef, TaskDefinition
from leaderboard.tasks.families.base import Context, Family


@dataclass(frozen=True)
class Target:
    """A resolved (task, subtask, set) with its definition and family."""

    task: Task
    subtask: Subtask
    eval_set: EvalSet
    definition: TaskDefinition
    subtask_def: SubtaskDef
    family: Family
    loaded: frozenset[str]
    #: The set's current reference files when the target was resolved, by role.
    files: Mapping[str, GoldFile] = field(default_factory=dict)

    def context(self, max_decompressed: int = 1 << 30, *, set_slug: str | None = None) -> Context:
        """Return the family context for uploads into this target (or another set of it)."""
        if set_slug is not None and set_slug != self.eval_set.slug:
            return Context(self.definition, self.subtask_def, set_slug, max_decompressed)
        return Context(
            self.definition, self.subtask_def, self.eval_set.slug, max_decompressed, self.loaded
        )
