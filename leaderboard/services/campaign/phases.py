"""Phases of a subtask: windows and deadlines, late runs and corrections, quotas, visibility."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, bindparam, select, update
from sqlalchemy.orm import Session

from leaderboard.clock import utc_and_local
from leaderboard.db import insert_missing
from leaderboard.formats.issues import quoted
from leaderboard.models import EvalSet, Phase, QuotaUsage, Run, Subtask, Task, Team
from leaderboard.services.common.audit import record
from leaderboard.services.common.errors import Conflict, InvalidInput, NotFound
from leaderboard.services.common.revisions import bump
from leaderboard.services.common.text import header_safe
from leaderboard.services.notify.notices import results_released
from leaderboard.states import (
    BoardKind,
    DiagnosticsAudience,
    NameMode,
    RunKind,
    RunStatus,
    Shown,
    Switch,
)
from leaderboard.targets import Target
from leaderboard.unit_of_work import unit_of


def show_time(value: datetime, zone: str = "UTC") -> str:
    """Render a time in UTC, plus the organizers' zone when it differs (always with zones)."""
    return utc_and_local(value, zone, "%Y-%m-%d %H:%M UTC", "%Y-%m-%d %H:%M %Z")


#: The years a phase time may fall in: a far one overflows when shown in another zone.
FIRST_YEAR, LAST_YEAR = 2000, 2999


def check_year(value: datetime | None, what: str) -> None:
    """Refuse a phase time outside the years 2000 to 2999, naming the field."""
    if value is not None and not FIRST_YEAR <= value.year <= LAST_YEAR:
        raise InvalidInput(
            f"The {what} must fall in the years {FIRST_YEAR} to {LAST_YEAR}, "
            f"not {value.isoformat()}."
        )


@dataclass(frozen=True)
class PhaseChange:
    """The options of ``leaderboard phase``; None leaves a setting as it is."""

    set_slug: str | None = None
    start: datetime | None = None
    end: datetime | None = None
    late: bool | None = None
    corrections: bool | None = None
    results: str | None = None  # "hidden" | "visible"
    daily_quota: int | None = None  # 0 removes the quota
    total_quota: int | None = None
    names: str | None = None  # "public" | "anonymous"
    diagnostics: str | None = None  # "teams" (own runs only) | "public" (every run's)
    # A split set's private part: "hidden" (participants see the public part) | "visible".
    private: str | None = None
    # The live board: "slots" | "best" | "ladder", and the Ladder's bootstrap alpha.
    board: str | None = None
    ladder_alpha: float | None = None
    # The worker's own analysis of the set whenever its visible scores change: "on" | "off".
    analysis: str | None = None
    release_at: datetime | None = None  # hidden results become visible then (by the worker)
    clear_release: bool = False  # drop the scheduled release (refused together with release_at)


_MEMO = "leaderboard.phases"
_PHASES = select(Phase).where(Phase.subtask_id == bindparam("subtask_id"))


def phases_of(session: Session, subtask: Subtask) -> list[Phase]:
    """Return a subtask's phases in time order.

    An upload asks twice (may it be accepted, are its scores hidden); the answer is kept until
    the session next flushes or ends its transaction, so the second asking costs no query.
    """
    memo: dict[int, list[Phase]] = unit_of(session).cache.setdefault(_MEMO, {})
    if subtask.id not in memo:
        rows = session.scalars(_PHASES, {"subtask_id": subtask.id}).all()
        memo[subtask.id] = sorted(
            rows, key=lambda p: (p.starts_at is not None, p.starts_at or p.created_at, p.id)
        )
    return list(memo[subtask.id])


def upsert_phase(
    session: Session, target: Target, name: str, change: PhaseChange, *, actor: str, now: datetime
) -> Phase:
    """Create or update a phase; times are aware datetimes, stored in UTC."""
    name = name.strip()
    if not name or len(name) > 64:
        raise InvalidInput("A phase needs a name of 1 to 64 characters.")
    # The name reaches the subject of the deadline reminder.
    header_safe(name, "phase name (field name)")
    check_year(change.start, "start (field start)")
    check_year(change.end, "end (field end)")
    check_year(change.release_at, "release time (field release_at)")
    phase = session.scalar(
        select(Phase).where(Phase.subtask_id == target.subtask.id, Phase.name == name)
    )
    created = phase is None
    before = {} if phase is None else phase_settings(phase, phase.eval_set.slug)
    released = False
    touched = [target.eval_set.id] + ([phase.eval_set_id] if phase is not None else [])
    if phase is None:
        phase = Phase(subtask_id=target.subtask.id, name=name, eval_set_id=target.eval_set.id)
        session.add(phase)
    if change.set_slug is not None:
        phase.eval_set_id = target.eval_set.id
    if change.start is not None:
        phase.starts_at = change.start
    if change.end is not None:
        phase.ends_at = change.end
    if change.release_at is not None and change.clear_release:
        raise InvalidInput("Give a scheduled release time or clear it, not both.")
    if change.release_at is not None:
        phase.release_at = change.release_at
    elif change.clear_release:
        phase.release_at = None
    if phase.starts_at and phase.ends_at and phase.ends_at <= phase.starts_at:
        raise InvalidInput("A phase must end after it starts.")
    if change.late is not None:
        phase.late_allowed = change.late
    if change.corrections is not None:
        phase.corrections_allowed = change.corrections
    if change.results is not None:
        if change.results not in tuple(Shown):
            raise InvalidInput("Results must be 'hidden' or 'visible'.")
        hidden = change.results == Shown.HIDDEN
        if phase.results_hidden and not hidden:
            phase.released_at = now
            released = True
        phase.results_hidden = hidden
    if change.names is not None:
        if change.names not in tuple(NameMode):
            raise InvalidInput(
                f"Names must be 'public' or 'anonymous', not {quoted(change.names)}."
            )
        phase.names = NameMode(change.names)
    if change.diagnostics is not None:
        if change.diagnostics not in tuple(DiagnosticsAudience):
            raise InvalidInput(
                f"Diagnostics must be 'teams' or 'public', not {quoted(change.diagnostics)}."
            )
        phase.public_diagnostics = change.diagnostics == DiagnosticsAudience.PUBLIC
    if change.private is not None:
        if change.private not in tuple(Shown):
            raise InvalidInput(
                f"The private part must be 'hidden' or 'visible', not {quoted(change.private)}."
            )
        phase.private_visible = change.private == Shown.VISIBLE
    if change.board is not None:
        if change.board not in tuple(BoardKind):
            raise InvalidInput(
                f"The board must be one of {', '.join(BoardKind)}, not {quoted(change.board)}."
            )
        phase.board = change.board
    if change.ladder_alpha is not None:
        if not 0 < change.ladder_alpha < 1:
            raise InvalidInput(
                f"The Ladder's alpha must lie strictly between 0 and 1, not {change.ladder_alpha}."
            )
        phase.ladder_alpha = change.ladder_alpha
    if change.analysis is not None:
        if change.analysis not in tuple(Switch):
            raise InvalidInput(
                f"The analysis must be 'on' or 'off', not {quoted(change.analysis)}."
            )
        phase.auto_analysis = change.analysis == Switch.ON
    for attr in ("daily_quota", "total_quota"):
        value = getattr(change, attr)
        if value is not None:
            if value < 0:
                raise InvalidInput("A quota cannot be negative (0 removes it).")
            setattr(phase, attr, value or None)
    session.flush()
    # Without a set in the change the phase keeps its own, which the target may not name.
    same_set = created or phase.eval_set_id == target.eval_set.id
    after = phase_settings(phase, target.eval_set.slug if same_set else before["set"])
    changed = {k: [before[k], v] for k, v in after.items() if not created and before[k] != v}
    # A save that changes nothing is no event: it writes no audit line.
    if created or changed:
        bump(session, *touched)
        details = {"changed": changed} if changed else {}
        record(
            session,
            actor,
            "create-phase" if created else "update-phase",
            at=now,
            task=target.task.slug,
            subtask=target.subtask.slug,
            phase=name,
            **after,
            **details,
        )
    if released:
        # Queued in this transaction: the mails go once the release is committed.
        results_released(session, phase)
    return phase


def phase_settings(phase: Phase, set_slug: str) -> dict[str, Any]:
    """Return a phase's settings as its audit events record them and its options take them.

    Times are in ISO 8601; the options (results, names, diagnostics, private, board,
    analysis) are the values ``leaderboard phase`` and the phase page accept.
    """
    return {
        "set": set_slug,
        "starts_at": phase.starts_at.isoformat() if phase.starts_at else None,
        "ends_at": phase.ends_at.isoformat() if phase.ends_at else None,
        "release_at": phase.release_at.isoformat() if phase.release_at else None,
        "late": phase.late_allowed,
        "corrections": phase.corrections_allowed,
        "results": (Shown.HIDDEN if phase.results_hidden else Shown.VISIBLE).value,
        "daily_quota": phase.daily_quota,
        "total_quota": phase.total_quota,
        "names": str(phase.names),
        "diagnostics": (
            DiagnosticsAudience.PUBLIC if phase.public_diagnostics else DiagnosticsAudience.TEAMS
        ).value,
        "private": (Shown.VISIBLE if phase.private_visible else Shown.HIDDEN).value,
        "board": phase.board,
        "ladder_alpha": phase.ladder_alpha,
        "analysis": (Switch.ON if phase.auto_analysis else Switch.OFF).value,
    }


def _open(phase: Phase, now: datetime) -> bool:
    return (phase.starts_at is None or phase.starts_at <= now) and (
        phase.ends_at is None or now < phase.ends_at
    )


def _latest_start(phase: Phase) -> tuple[bool, datetime, int]:
    return (phase.starts_at is not None, phase.starts_at or phase.created_at, phase.id)


def current_phase(
    session: Session, subtask: Subtask, now: datetime, eval_set: EvalSet | None = None
) -> Phase | None:
    """Return the phase open now (of one set, if given), if any.

    When two phases are open at once, the one that started last wins: an organizer's new
    phase takes over from an older open one (e.g. a preset's post-evaluation phase).
    """
    open_now = [
        p
        for p in phases_of(session, subtask)
        if _open(p, now) and (eval_set is None or p.eval_set_id == eval_set.id)
    ]
    return max(open_now, key=_latest_start, default=None)


def closed_notice(task: str, subtask: str) -> str:
    """Return what add-task and the pages say of a subtask no phase opens."""
    return (
        f"Subtask {subtask} is closed: no phase is open; open one with "
        f"`leaderboard phase {task} {subtask} NAME --start ISO [--end ISO]`"
    )


def closed_subtasks(session: Session, task: Task, now: datetime) -> list[Subtask]:
    """Return the task's subtasks that no open phase opens to participants now."""
    return [st for st in task.subtasks if current_phase(session, st, now) is None]


def _closed(target: Target) -> Conflict:
    return Conflict(
        f"Uploads to {target.task.slug} {target.subtask.slug} ({target.eval_set.slug} set) are "
        "closed: no phase is open. A subtask takes runs only while the organizers open a phase."
    )


@dataclass(frozen=True)
class Admission:
    """Whether and how an upload is accepted: its phase and its late/corrected marks."""

    phase: Phase | None
    late: bool = False
    corrected: bool = False


def admit(
    session: Session, target: Target, team: Team, slot: str, now: datetime, zone: str = "UTC"
) -> Admission:
    """Decide, by the server's clock, whether a participant upload into a slot is accepted.

    A set takes runs only while one of its phases is open (the one that started last, when
    several are); without a phase it is closed. After its last phase ends, a run is accepted
    as late if the phase allows late submission, or as a correction of the team's on-time run
    in that slot if the phase allows corrections. Otherwise it is refused with the reason.
    """
    all_phases = phases_of(session, target.subtask)
    if not all_phases:
        raise _closed(target)
    mine = [p for p in all_phases if p.eval_set_id == target.eval_set.id]
    if not mine:
        names = ", ".join(f"{p.name} ({p.eval_set.slug})" for p in all_phases)
        raise Conflict(
            f"No phase is open on the {target.eval_set.slug} set: no phase of this subtask "
            f"takes runs on it; its phases are {names}."
        )
    current = current_phase(session, target.subtask, now, target.eval_set)
    if current is not None:
        return Admission(current)
    upcoming = [p for p in mine if p.starts_at is not None and now < p.starts_at]
    ended = [p for p in mine if p.ends_at is not None and p.ends_at <= now]
    if not ended:
        first = min(upcoming, key=lambda p: p.starts_at or now)
        assert first.starts_at is not None
        raise Conflict(
            f"Phase {first.name} opens at {show_time(first.starts_at, zone)}; uploads are not open yet."
        )
    last = max(ended, key=lambda p: p.ends_at or now)
    assert last.ends_at is not None
    on_time = session.scalar(
        select(Run.id).where(
            Run.eval_set_id == target.eval_set.id,
            Run.team_id == team.id,
            Run.slot == slot,
            Run.status == RunStatus.ACTIVE,
            Run.late.is_(False),
            Run.corrected.is_(False),
        )
    )
    if on_time is not None and last.corrections_allowed:
        return Admission(last, corrected=True)
    if last.late_allowed:
        return Admission(last, late=True)
    extra = " Corrections of on-time runs are not open either." if on_time is not None else ""
    raise Conflict(
        f"The deadline of phase {last.name} passed at {show_time(last.ends_at, zone)}; "
        f"late submissions are closed.{extra}"
    )


def check_withdrawal(session: Session, run: Run, now: datetime, zone: str = "UTC") -> None:
    """Refuse withdrawing a run unless its set takes on-time runs now (by the server clock).

    Runs are withdrawn while a phase of their set is open, as they are uploaded; a set with no
    phase is closed.
    """
    mine = [p for p in phases_of(session, run.subtask) if p.eval_set_id == run.eval_set_id]
    if any(_open(p, now) for p in mine):
        return
    ended = [p for p in mine if p.ends_at is not None and p.ends_at <= now]
    if not ended:
        raise Conflict("No phase of this set is open; runs can be withdrawn while one is.")
    last = max(ended, key=lambda p: p.ends_at or now)
    assert last.ends_at is not None
    raise Conflict(
        f"The deadline of phase {last.name} passed at {show_time(last.ends_at, zone)}; "
        "runs can no longer be withdrawn."
    )


def may_withdraw(session: Session, run: Run, now: datetime) -> bool:
    """Return whether a run's team could withdraw it now (active, and its set still open)."""
    if run.status != RunStatus.ACTIVE or run.kind != RunKind.RUN:
        return False
    try:
        check_withdrawal(session, run, now)
    except Conflict:
        return False
    return True


def delete_phase(
    session: Session, subtask: Subtask, task_slug: str, name: str, *, actor: str, now: datetime
) -> None:
    """Delete a phase; its runs stay (no longer in a phase). Refused while data files are attached."""
    name = name.strip()
    # PostgreSQL refuses a NUL byte in a parameter: such a name matches nothing, unasked.
    phase = (
        session.scalar(select(Phase).where(Phase.subtask_id == subtask.id, Phase.name == name))
        if 0 < len(name) <= 64 and "\x00" not in name
        else None
    )
    if phase is None:
        known = ", ".join(p.name for p in phases_of(session, subtask)) or "none"
        raise NotFound(f"Subtask {subtask.slug} has no phase {quoted(name)} (its phases: {known}).")
    if phase.data_files:
        raise Conflict(
            f"Phase {phase.name} has {len(phase.data_files)} task data file(s) attached; "
            "delete them (Delete in the task data list of the subtask's organizer page, or "
            "`leaderboard data delete`) before deleting the phase."
        )
    set_slug = phase.eval_set.slug
    eval_set_id = phase.eval_set_id
    runs = session.execute(
        update(Run)
        .where(Run.phase_id == phase.id)
        .values(phase_id=None)
        .execution_options(synchronize_session=False)
    )
    session.delete(phase)
    session.flush()
    bump(session, eval_set_id)
    record(
        session,
        actor,
        "delete-phase",
        at=now,
        task=task_slug,
        subtask=subtask.slug,
        phase=name,
        set=set_slug,
        runs=runs.rowcount,  # type: ignore[attr-defined]
    )


def _periods(phase: Phase, now: datetime) -> list[tuple[str, int, str]]:
    out = []
    if phase.daily_quota:
        out.append((now.strftime("%Y-%m-%d"), phase.daily_quota, f"today ({now:%Y-%m-%d} UTC)"))
    if phase.total_quota:
        out.append(("total", phase.total_quota, f"in phase {phase.name}"))
    return out


def _counter(phase: Phase, team: Team, period: str) -> tuple[ColumnElement[bool], ...]:
    """Return the conditions that pick a team's quota counter of one phase and period."""
    return (
        QuotaUsage.phase_id == phase.id,
        QuotaUsage.team_id == team.id,
        QuotaUsage.period == period,
    )


def _quota_reached(limit: int, label: str) -> Conflict:
    return Conflict(f"Your team has used its {limit} run(s) {label}; the quota is reached.")


def remaining_quota(
    session: Session, phase: Phase | None, team: Team, now: datetime
) -> dict[str, int | None]:
    """Return the runs a team may still submit today and in the phase (None: no quota)."""
    out: dict[str, int | None] = {"daily": None, "total": None}
    if phase is None:
        return out
    for period, limit, _label in _periods(phase, now):
        used = session.scalar(select(QuotaUsage.used).where(*_counter(phase, team, period)))
        out["total" if period == "total" else "daily"] = max(0, limit - (used or 0))
    return out


def check_quota(session: Session, phase: Phase | None, team: Team, now: datetime) -> None:
    """Refuse early, before validation, when a quota is already used up (the claim is atomic later)."""
    if phase is None:
        return
    left = remaining_quota(session, phase, team, now)
    for period, limit, label in _periods(phase, now):
        if left["total" if period == "total" else "daily"] == 0:
            raise _quota_reached(limit, label)


def claim_quota(session: Session, phase: Phase | None, team: Team, now: datetime) -> None:
    """Use one run of each quota inside the caller's transaction; refuse when one is used up.

    A conditional UPDATE (``used < limit``) is atomic in the database, so parallel uploads
    cannot exceed a quota; a rejected or rolled-back upload uses nothing. A team's first run of
    a day or phase finds no counter: it is made in the same transaction (a concurrent upload
    making it too is no error: PostgreSQL waits for that upload's transaction) and used.
    """
    if phase is None:
        return
    for period, limit, label in _periods(phase, now):
        if _use_one(session, phase, team, period, limit):
            continue
        # No counter yet (the team's first run of the day or phase), or no run left.
        values = {"phase_id": phase.id, "team_id": team.id, "period": period, "used": 0}
        insert_missing(session, QuotaUsage, ("phase_id", "team_id", "period"), values)
        if not _use_one(session, phase, team, period, limit):
            raise _quota_reached(limit, label)


def _use_one(session: Session, phase: Phase, team: Team, period: str, limit: int) -> bool:
    """Use one run of a counter with room left; return False if it is used up or missing."""
    result = session.execute(
        update(QuotaUsage)
        .where(*_counter(phase, team, period), QuotaUsage.used < limit)
        .values(used=QuotaUsage.used + 1)
        .execution_options(synchronize_session=False)
    )
    return bool(result.rowcount == 1)  # type: ignore[attr-defined]


def hidden_phase(session: Session, eval_set: EvalSet) -> Phase | None:
    """Return a phase hiding this set's results from participants and the public, if any."""
    return next(
        (
            p
            for p in phases_of(session, eval_set.subtask)
            if p.eval_set_id == eval_set.id and p.results_hidden
        ),
        None,
    )


def analysed_automatically(session: Session, eval_set: EvalSet) -> bool:
    """Return whether the worker analyses the set by itself: unless a phase of it says off.

    Several phases may score one set (an evaluation phase, then its post-evaluation): any of
    them with the analysis off turns it off for the set, as any phase hiding results hides them.
    """
    return all(
        p.auto_analysis
        for p in phases_of(session, eval_set.subtask)
        if p.eval_set_id == eval_set.id
    )
