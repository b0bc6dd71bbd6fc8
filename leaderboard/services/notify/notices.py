"""The campaign's notification mails: join requests, decisions, refused API runs, releases, deadlines."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from leaderboard.db import insert_missing
from leaderboard.formats.issues import Issue
from leaderboard.models import NoticeSent, Phase, Subtask, Team, User
from leaderboard.services.common.audit import record
from leaderboard.services.common.revisions import bump
from leaderboard.services.notify import audience
from leaderboard.services.notify.core import (
    DEADLINE,
    JOIN_REQUESTS,
    REJECTED_API,
    RESULTS_RELEASED,
    notify,
    notify_all,
)
from leaderboard.services.notify.links import site_link

#: How many of a refused run's issues its mail lists (the rest are counted).
MAX_ISSUES = 20
#: The deadline notice goes out in this window before a deadline.
DEADLINE_AHEAD = timedelta(hours=24)
DEADLINE_WINDOW = timedelta(hours=1)


def _name(user: User) -> str:
    return user.display_name.strip() or user.email


def join_requested(session: Session, team: Team, requester: User) -> int:
    """Queue a mail to the team's captain(s) about a new join request (sent on commit)."""
    captains = audience.members(session, [team.id], captains=True)
    return notify_all(
        session,
        captains,
        JOIN_REQUESTS,
        f"{_name(requester)} asks to join {team.name}",
        f"{_name(requester)} <{requester.email}> asks to join your team {team.name}.\n"
        f"Accept or decline the request on the team page: {site_link(session, '/team')}",
    )


def join_decided(session: Session, team: Team, applicant: User, *, accepted: bool) -> bool:
    """Queue a mail to a requester about the captain's decision (sent on commit)."""
    if accepted:
        subject = f"You joined {team.name}"
        body = f"The captain of {team.name} accepted your request: you are a member of it now."
    else:
        subject = f"Your request to join {team.name} was declined"
        body = (
            f"The captain of {team.name} declined your request to join the team.\n"
            "You may ask another team, or create a team of your own."
        )
    return notify(session, applicant, JOIN_REQUESTS, subject, body)


def issue_lines(issues: list[Issue], limit: int = MAX_ISSUES) -> str:
    """Return a verdict's issues one a line, the first ``limit`` of them (then how many more)."""
    lines = [f"- {issue.text[:300]}" for issue in issues[:limit]]
    if len(issues) > limit:
        lines.append(f"- ... and {len(issues) - limit} more")
    return "\n".join(lines)


def run_refused(
    session: Session, user: User, task: str, subtask: str, message: str, issues: list[Issue]
) -> bool:
    """Queue the mail of a run refused through the API with its verdict to its uploader.

    The caller commits it in a transaction of its own and must not let a failure here change
    the refusal's answer.
    """
    return notify(
        session,
        user,
        REJECTED_API,
        f"Run refused: {task} {subtask}",
        f"A run you uploaded through the API to {task} subtask {subtask} was refused; "
        "nothing was stored.\n\n"
        f"{message[:1000]}\n\n{issue_lines(issues)}\n\n"
        "Fix the file and upload it again.",
    )


def _once(session: Session, key: str) -> bool:
    """Claim a notice's key (in the caller's transaction); False when it was sent already."""
    if session.get(NoticeSent, key) is not None:
        return False
    # One INSERT that skips a key another worker claimed a moment ago. No savepoint: opened
    # before any write on SQLite, its release would commit the key before the notice's mails.
    return insert_missing(session, NoticeSent, "key", {"key": key})


def release_key(phase: Phase) -> str:
    """Return the key of a phase's results release (one per release time)."""
    stamp = phase.released_at.isoformat() if phase.released_at else "visible"
    return f"release:{phase.id}:{stamp}"


def results_released(session: Session, phase: Phase) -> int:
    """Queue the "results released" mail to the members of teams with a run in the subtask.

    Announced once per release (a key is kept); the caller commits. Returns how many queued.
    A hidden task's phases announce nothing (its pages answer 404 to the teams).
    """
    if phase.subtask.task.hidden or not _once(session, release_key(phase)):
        return 0
    subtask: Subtask = phase.subtask
    task = subtask.task
    teams = audience.teams_with_runs(session, subtask)
    users = audience.members(session, _active(session, teams))
    sent = notify_all(
        session,
        users,
        RESULTS_RELEASED,
        f"Results released: {task.slug} {subtask.slug}",
        f"The results of {task.title}, subtask {subtask.slug} ({subtask.title}), "
        f"phase {phase.name}, are released: your team's scores and the ranking are visible "
        f"now on the subtask page: {site_link(session, f'/tasks/{task.slug}/{subtask.slug}')}",
    )
    _count(session, release_key(phase), sent)
    return sent


def _active(session: Session, team_ids: set[int]) -> set[int]:
    """Return the teams of ``team_ids`` that are not withdrawn."""
    if not team_ids:
        return set()
    return set(
        session.scalars(
            select(Team.id).where(Team.id.in_(sorted(team_ids)), Team.withdrawn_at.is_(None))
        )
    )


def _count(session: Session, key: str, sent: int) -> None:
    row = session.get(NoticeSent, key)
    if row is not None:
        row.recipients = sent


def deadline_key(phase: Phase) -> str:
    """Return the key of a phase's deadline notice (a moved deadline gets a notice of its own)."""
    assert phase.ends_at is not None
    return f"deadline:{phase.id}:{phase.ends_at.isoformat()}"


def deadline_ahead(session: Session, phase: Phase, now: datetime) -> int:
    """Queue the "deadline ahead" mail to the task's participating teams without a ranked run.

    Only between 24 and 23 hours before the deadline, and once per phase and deadline; the
    caller commits. Returns how many mails were queued; none for a hidden task's phase.
    """
    ends = phase.ends_at
    if phase.subtask.task.hidden:
        return 0
    if ends is None or not (ends - DEADLINE_AHEAD <= now < ends - DEADLINE_AHEAD + DEADLINE_WINDOW):
        return 0
    if not _once(session, deadline_key(phase)):
        return 0
    subtask: Subtask = phase.subtask
    task = subtask.task
    teams = {t.id for t in audience.participating_teams(session, task)}
    waiting = teams - audience.teams_with_ranked_run(session, phase)
    users = audience.members(session, waiting)
    sent = notify_all(
        session,
        users,
        DEADLINE,
        f"24 hours left: {task.slug} {subtask.slug} ({phase.name})",
        f"The deadline of {task.title}, subtask {subtask.slug}, phase {phase.name}, is "
        f"{ends.strftime('%Y-%m-%d %H:%M UTC')}, about 24 hours from now, and your team has "
        "no run in a ranked slot of it yet.\n"
        "Upload on the subtask page or through the API: "
        f"{site_link(session, f'/tasks/{task.slug}/{subtask.slug}')}",
    )
    _count(session, deadline_key(phase), sent)
    return sent


def due_releases(session: Session, now: datetime) -> list[Phase]:
    """Return the phases whose results are hidden and whose scheduled release time passed."""
    return list(
        session.scalars(
            select(Phase)
            .where(
                Phase.results_hidden.is_(True),
                Phase.release_at.is_not(None),
                Phase.release_at <= now,
            )
            .order_by(Phase.id)
        )
    )


def _deadlines_near(session: Session, now: datetime) -> list[Phase]:
    start = now + DEADLINE_AHEAD - DEADLINE_WINDOW
    return list(
        session.scalars(
            select(Phase)
            .where(Phase.ends_at > start, Phase.ends_at <= now + DEADLINE_AHEAD)
            .order_by(Phase.id)
        )
    )


@dataclass(frozen=True)
class DueWork:
    """The campaign's work due now: results to release, and deadlines to announce."""

    releases: list[Phase]
    deadlines: list[Phase]


def due_work(session: Session, now: datetime) -> DueWork:
    """List the phases whose scheduled release passed and those whose deadline notice is due.

    Run every minute by whichever worker claims it, and by ``leaderboard worker --once``; the
    caller runs ``release_due`` or ``deadline_ahead`` on each phase in a transaction of its own,
    so one that fails leaves the others done.
    """
    return DueWork(due_releases(session, now), _deadlines_near(session, now))


def release_due(session: Session, phase: Phase, now: datetime) -> int | None:
    """Release a phase's results and queue their mails; None when another worker released them.

    Returns how many mails were queued; the caller commits the release with them.
    """
    scheduled = phase.release_at
    # Conditional: of two workers checking at once, one releases (and announces) it. The
    # schedule is spent: hiding the results again later does not release them again.
    taken = session.execute(
        update(Phase)
        .where(Phase.id == phase.id, Phase.results_hidden.is_(True))
        .values(results_hidden=False, released_at=now, release_at=None)
        .execution_options(synchronize_session=False)
    )
    if taken.rowcount != 1:  # type: ignore[attr-defined]
        return None  # nothing was written
    session.refresh(phase)
    bump(session, phase.eval_set_id)
    record(
        session,
        "system",
        "release-results",
        at=now,
        task=phase.subtask.task.slug,
        subtask=phase.subtask.slug,
        phase=phase.name,
        scheduled=scheduled.isoformat() if scheduled else None,
    )
    return results_released(session, phase)
