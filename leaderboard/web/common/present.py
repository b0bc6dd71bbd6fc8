"""Turn stored runs into what pages and the API show."""

from __future__ import annotations

from typing import Any

from leaderboard.models import Run
from leaderboard.services.results.boards import LadderStatus
from leaderboard.services.tasks.catalog import definition_of
from leaderboard.tables.model import MISSING, MeasureSpec
from leaderboard.tasks.families import get_family
from leaderboard.tasks.families.base import Context, Family, MarkerNote


def run_family(run: Run) -> Family:
    """Return the family of a run's task."""
    return get_family(definition_of(run.subtask.task).family)


def run_notes(run: Run) -> list[MarkerNote]:
    """Return the notes a stored run carries, as its family reads them from its report."""
    return run_family(run).run_notes(run.report)


def measure_specs(run: Run) -> list[MeasureSpec]:
    """Return the measure columns of a run's task."""
    definition = definition_of(run.subtask.task)
    subtask = definition.subtask(run.subtask.slug)
    assert subtask is not None, "a stored run's subtask is always in its task's definition"
    return get_family(definition.family).measure_specs(
        Context(definition, subtask, run.eval_set.slug)
    )


def display(spec: MeasureSpec, official: str) -> str:
    """Render a stored official value as the table shows it (printf-style rounding).

    An undefined value (empty official string) shows "—".
    """
    if not official:
        return MISSING
    return format(float(official) * spec.scale, f".{spec.display_decimals}f")


def score_lines(run: Run, part: str = "all") -> list[dict[str, Any]]:
    """Return a run's current scores on a part in column order: label, display and value."""
    current = {s.measure: s for s in run.scores if s.current and s.part == part}
    visible = run.visible_measures(current)
    out = []
    for spec in measure_specs(run):
        s = current.get(spec.key)
        if s is None or spec.key not in visible:
            continue
        out.append(
            {
                "key": spec.key,
                "label": spec.label,
                "display": display(spec, s.official),
                "value": None if s.value is None else s.value * spec.scale,
                "official": s.official,
                "flags": list(s.flags),
                "note": s.note,
            }
        )
    return out


def run_json(
    run: Run,
    *,
    show_scores: bool = True,
    part: str = "all",
    ladder: LadderStatus | None = None,
) -> dict[str, Any]:
    """Return the API representation of a run; scores only where the viewer may see them.

    A split set's run is shown on ``part`` (public until the private part is released); a run
    on a Ladder board carries its verdict (``ladder``).
    """
    lines = score_lines(run, part) if show_scores else []
    return {
        "id": run.id,
        "task": run.subtask.task.slug,
        "subtask": run.subtask.slug,
        "set": run.eval_set.slug,
        "team": run.team.name if run.team is not None else None,
        "kind": run.kind,
        "slot": run.slot,
        "name": run.name,
        "description": run.description,
        "status": run.status,
        "late": run.late,
        "corrected": run.corrected,
        "created_at": run.created_at.isoformat(),
        "sha256": run.file_sha256,
        "warnings": list(run.warnings),
        "scores_hidden": not show_scores,
        "part": part,
        "scores": {line["key"]: line["value"] for line in lines},
        "official": {line["key"]: line["official"] for line in lines},
        "notes": [
            *(note.text for note in run_notes(run)),
            *(f"{line['key']}: {line['note']}" for line in lines if line["note"]),
        ],
        **({"ladder": ladder.as_dict()} if ladder is not None else {}),
    }
