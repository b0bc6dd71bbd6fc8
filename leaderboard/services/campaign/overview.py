"""What a participant's client needs to know about the hosted tasks: sets, phases and quotas."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from leaderboard.models import Phase, Team
from leaderboard.services.campaign.phases import current_phase, phases_of, remaining_quota
from leaderboard.services.tasks.catalog import definition_of, list_tasks
from leaderboard.tasks.families import get_family
from leaderboard.tasks.families.base import Context


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat().replace("+00:00", "Z")


def _phase(session: Session, phase: Phase, team: Team | None, now: datetime) -> dict[str, Any]:
    opened = phase.starts_at is None or phase.starts_at <= now
    return {
        "name": phase.name,
        "starts_at": _iso(phase.starts_at),
        "ends_at": _iso(phase.ends_at),
        "open": opened and (phase.ends_at is None or now < phase.ends_at),
        "late_allowed": phase.late_allowed,
        "corrections_allowed": phase.corrections_allowed,
        "results": "hidden" if phase.results_hidden else "visible",
        "daily_quota": phase.daily_quota,
        "total_quota": phase.total_quota,
        "quota_remaining": remaining_quota(session, phase, team, now) if team else None,
    }


def tasks_overview(session: Session, team: Team | None, now: datetime) -> list[dict[str, Any]]:
    """Return every task with its subtasks, sets, run slots, phases and the team's quotas.

    Nothing about reference files is named: only the version number of a set's current gold
    (1 as installed, higher after a correction), so a client can tell whether its own copy of
    a bundled task's data is still the server's.
    """
    out = []
    for task in list_tasks(session):
        definition = definition_of(task)
        family = get_family(definition.family)
        subtasks = []
        for subtask in task.subtasks:
            sd = definition.subtask(subtask.slug)
            if sd is None:
                continue
            phases = phases_of(session, subtask)
            sets = []
            for es in subtask.eval_sets:
                ctx = Context(definition, sd, es.slug)
                versions = [g.version for g in es.gold_files if g.active_key is not None]
                sets.append(
                    {
                        "slug": es.slug,
                        "title": es.title,
                        "gold_version": max(versions, default=0),
                        "upload_fields": [f.name for f in family.upload_fields(ctx)],
                        "measures": [
                            {
                                "key": m.key,
                                "label": m.label,
                                "official": m.official,
                                "decimals": m.display_decimals,
                            }
                            for m in family.measure_specs(ctx)
                        ],
                        "phases": [
                            _phase(session, p, team, now) for p in phases if p.eval_set_id == es.id
                        ],
                        # A set with no open phase is closed to participants' uploads.
                        "uploads_open": current_phase(session, subtask, now, es) is not None,
                    }
                )
            subtasks.append(
                {
                    "slug": subtask.slug,
                    "title": subtask.title,
                    "default_set": subtask.default_set,
                    "slots": list(definition.runs.slots),
                    "sets": sets,
                }
            )
        out.append(
            {
                "slug": task.slug,
                "title": task.title,
                "family": task.family,
                "definition_sha256": task.definition_sha256,
                "subtasks": subtasks,
            }
        )
    return out
