"""Read the audit log: pages of events, filtered by actor and action, each as a readable line."""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from leaderboard.formats.issues import quoted
from leaderboard.models import AuditEvent
from leaderboard.services.common.errors import InvalidInput, NotFound

#: Events on one page of /organizer/audit.
PER_PAGE = 50
#: The actor name that stands for every command-line user (recorded as ``cli`` or ``cli:NAME``).
CLI = "cli"
_MAX_FILTER = 320


@dataclass(frozen=True)
class AuditPage:
    """One page of the audit log, newest first, with the filters that chose it."""

    events: list[AuditEvent]
    page: int
    pages: int
    total: int
    actor: str
    action: str


def _clean_filter(value: str | None, what: str) -> str:
    value = (value or "").strip()
    if len(value) > _MAX_FILTER or any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise InvalidInput(f"The {what} filter {quoted(value[:80])} is not a name the log records.")
    return value


def _actor_clause(actor: str) -> ColumnElement[bool]:
    if actor == CLI:
        # Commands record their user as cli:NAME; ``cli`` asks for all of them.
        return or_(AuditEvent.actor == CLI, AuditEvent.actor.startswith(f"{CLI}:"))
    # E-mail addresses are stored in lower case.
    return AuditEvent.actor == (actor.lower() if "@" in actor else actor)


def parse_page(text: str | None) -> int:
    """Return the page number of a ``?page=`` value (1 when absent); refuse anything else."""
    if text is None or text == "":
        return 1
    if not text.isascii() or not text.isdigit() or len(text) > 9 or int(text) < 1:
        raise InvalidInput(f"The page must be a whole number from 1, not {quoted(text[:40])}.")
    return int(text)


def audit_page(
    session: Session,
    *,
    page: int = 1,
    actor: str | None = None,
    action: str | None = None,
    per_page: int = PER_PAGE,
) -> AuditPage:
    """Return one page of audit events, newest first, of one actor and/or one action."""
    actor = _clean_filter(actor, "actor")
    action = _clean_filter(action, "action")
    clauses: list[ColumnElement[bool]] = []
    if actor:
        clauses.append(_actor_clause(actor))
    if action:
        clauses.append(AuditEvent.action == action)
    total = session.scalar(select(func.count(AuditEvent.id)).where(*clauses)) or 0
    pages = max(1, -(-total // per_page))
    if page < 1 or page > pages:
        raise NotFound(
            f"There is no page {page} of this audit log: it has {pages} page(s) of {per_page}."
        )
    events = session.scalars(
        select(AuditEvent)
        .where(*clauses)
        # Newest first in the order recorded: a rehearsal's clock may go back in time.
        .order_by(AuditEvent.id.desc())
        .limit(per_page)
        .offset((page - 1) * per_page)
    ).all()
    return AuditPage(list(events), page, pages, total, actor, action)


def audit_actions(session: Session) -> list[str]:
    """Return every action name the log holds, in alphabetical order."""
    return list(session.scalars(select(AuditEvent.action).distinct().order_by(AuditEvent.action)))


def audit_actors(session: Session) -> list[str]:
    """Return the actors to filter by: ``cli`` for every command-line user, then the others."""
    names = session.scalars(select(AuditEvent.actor).distinct().order_by(AuditEvent.actor))
    out = {CLI if n == CLI or n.startswith(f"{CLI}:") else n for n in names}
    return sorted(out, key=lambda n: (n != CLI, n))


# ---- one readable line per event

_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")


def _show(value: Any) -> str:
    """Render one detail value for a sentence: times in UTC, lists joined, no JSON."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str) and _ISO.match(value):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return value
        return moment.strftime("%Y-%m-%d %H:%M UTC") if moment.tzinfo else value
    if isinstance(value, list | tuple):
        return ", ".join(_show(v) for v in value) or "none"
    if isinstance(value, Mapping):
        return "; ".join(f"{k}: {_show(v)}" for k, v in value.items()) or "none"
    return str(value)


#: What each recorded action says, with its details by name ({where} is the task, subtask, set).
SENTENCES: dict[str, str] = {
    "create-phase": "created phase {phase} {where}: {starts_at} to {ends_at}, results {results}",
    "update-phase": "updated phase {phase} {where}: {starts_at} to {ends_at}, results {results}",
    "delete-phase": "deleted phase {phase} {where} ({runs} run(s) left in no phase)",
    "freeze": "froze the official ranking {where}: {runs} run(s), snapshot {manifest_sha256}",
    "set-gold": "stored {role} version {version} {where}",
    "rescore": "re-scored {rescored} run(s) {where} ({reason})",
    "request-analysis": "asked for a significance analysis ({method}) {where}",
    "compute-analysis": "computed a significance analysis ({method}) {where}",
    "request-freeze": "asked for a freeze {where}",
    "request-verify": "asked for a verification of the frozen ranking {where}",
    "request-rescore": "asked for a re-scoring {where}",
    "add-baselines": "added the baselines {roles} {where}",
    "import-baseline": "imported baseline {label} {where}",
    "import-run": "imported a run of team {team} into slot {slot} {where}",
    "withdraw-run": "withdrew run {run} of team {team} from slot {slot} {where}",
    "add-data-file": "added data file {filename} to phase {phase} {where}",
    "delete-data-file": "deleted data file {filename} of phase {phase} {where}",
    "install-task": "installed task {task}",
    "update-task": "updated task {task}",
    "hide-task": "hid task {task} from everyone but organizers",
    "show-task": "showed task {task} to everyone again",
    "delete-task": "deleted task {task} ({title})",
    "supersede-freeze": "superseded frozen version {superseded_version} {where} by version "
    "{version}: {reason}",
    "create-team": "created team {team}",
    "join-team": "joined team {team} by {via}",
    "request-join": "asked to join team {team}",
    "regenerate-invite": "made a new invite link for team {team}",
    "accept-join": "accepted {email} into team {team}",
    "decline-join": "declined the request of {email} to join team {team}",
    "withdraw-join-request": "withdrew the request to join team {team}",
    "hand-over-captaincy": "handed the captaincy of team {team} to {to}",
    "remove-member": "removed {email} from team {team}",
    "leave-team": "left team {team}",
    "approve-team": "approved team {team}",
    "rename-team": "renamed team {old} to {team}",
    "merge-teams": "merged team {merged} into team {team} ({runs} run(s) moved)",
    "withdraw-team": "withdrew team {team}",
    "delete-team": "deleted team {team}",
    "add-member": "added {email} to team {team}",
    "create-user": "created the {role} account {email}",
    "set-password": "set the password of {email}",
    "disable-user": "disabled the account {email}",
    "enable-user": "enabled the account {email}",
    "issue-token": "issued API token {name} for {email}",
    "revoke-token": "revoked API token {name} of {email}",
    "revoke-tokens": "revoked {count} API token(s) of {email}",
    "resend-verification": "sent the address check to {email} again",
    "invite-user": "invited {email}",
    "set-setting": "set {name} from {old} to {new}",
}

#: Details the sentences above leave out: hashes and ids only a reader of the raw log needs.
_QUIET = {"sha256", "previous_sha256", "definition_sha256", "file_id", "set", "size"}


class _Details(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "?"


def _where(event: AuditEvent) -> str:
    parts = [p for p in (event.task_slug, event.subtask_slug) if p]
    place = " ".join(parts)
    eval_set = event.details.get("set") if isinstance(event.details, Mapping) else None
    if place and eval_set:
        return f"of {place} ({eval_set} set)"
    return f"of {place}" if place else ""


#: How a phase change names each setting it records.
PHASE_SETTINGS = {
    "set": "set",
    "starts_at": "start",
    "ends_at": "deadline",
    "release_at": "scheduled release",
    "results": "results",
    "late": "late runs",
    "corrections": "corrections",
    "daily_quota": "daily quota",
    "total_quota": "total quota",
    "names": "team names",
    "diagnostics": "diagnostics",
    "analysis": "automatic analysis",
}


def _changes(changed: Mapping[str, Any]) -> str:
    """Return a phase change's settings as "deadline A → B; daily quota none → 3"."""
    parts = []
    for key, pair in changed.items():
        old, new = pair if isinstance(pair, list | tuple) and len(pair) == 2 else (None, pair)
        parts.append(
            f"{PHASE_SETTINGS.get(key, key.replace('_', ' '))} {_show(old)} → {_show(new)}"
        )
    return "; ".join(parts)


def _extras(action: str, details: Mapping[str, Any]) -> list[str]:
    out = []
    if details.get("before_deadline"):
        deadline = f" ({_show(details['deadline'])})" if details.get("deadline") else ""
        out.append(f"before the deadline of phase {_show(details.get('phase'))}{deadline}")
    if action == "leave-team":
        if details.get("deleted_team"):
            out.append("the empty team was deleted")
        if details.get("captain"):
            out.append(f"{_show(details['captain'])} is its captain now")
    if action == "import-run" and "lenient" in details:
        out.append("read leniently" if details["lenient"] else "read strictly")
    if action == "rescore" and details.get("failed"):
        out.append(f"runs {_show(details['failed'])} could not be re-scored")
    if action == "add-member" and details.get("captain"):
        out.append("as its captain")
    if action == "request-freeze" and details.get("supersede"):
        out.append(f"superseding the frozen ranking: {_show(details['supersede'])}")
    return out


def describe(event: AuditEvent) -> str:
    """Return a sentence saying what an audit event records (its actor and time aside)."""
    details: Mapping[str, Any] = event.details if isinstance(event.details, Mapping) else {}
    template = SENTENCES.get(event.action)
    if event.action == "update-phase" and isinstance(details.get("changed"), Mapping):
        # Events recorded since the change lists came in say what changed, old and new.
        where = _where(event)
        return f"updated phase {_show(details.get('phase'))} {where}: " + _changes(
            details["changed"]
        )
    if template is None:
        # An action without a sentence yet: its name, place and details, spelled out.
        where = _where(event)
        shown = "; ".join(
            f"{k.replace('_', ' ')}: {_show(v)}" for k, v in details.items() if k not in _QUIET
        )
        return " ".join(p for p in (event.action.replace("-", " "), where) if p) + (
            f" ({shown})" if shown else ""
        )
    values = _Details({k: _show(v) for k, v in details.items()})
    values["where"] = _where(event)
    values["task"] = event.task_slug or "?"
    if "manifest_sha256" in details:
        values["manifest_sha256"] = str(details["manifest_sha256"])[:12] + "…"
    if details.get("starts_at") is None and "starts_at" in details:
        values["starts_at"] = "no start"
    if details.get("ends_at") is None and "ends_at" in details:
        values["ends_at"] = "no deadline"
    text = string.Formatter().vformat(template, (), values)
    text = re.sub(r" {2,}", " ", text).replace(" :", ":").strip()
    extras = _extras(event.action, details)
    return text + ("; " + "; ".join(extras) if extras else "")
