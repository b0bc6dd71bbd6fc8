"""The states a row can be in, as types; each is stored as its string value, which it equals."""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    """What an account is: an organizer of the site or a participant in one team."""

    ORGANIZER = "organizer"
    PARTICIPANT = "participant"


class RunKind(StrEnum):
    """Whether a run was submitted for a team or stands in a table as a baseline."""

    RUN = "run"
    BASELINE = "baseline"


class RunStatus(StrEnum):
    """Where a run stands: in its slot, replaced by a later run, or withdrawn by its team."""

    ACTIVE = "active"
    REPLACED = "replaced"
    # By its team before the deadline: the slot is empty.
    WITHDRAWN = "withdrawn"


class JoinStatus(StrEnum):
    """Where a request to join a team stands."""

    PENDING = "pending"
    ACCEPTED = "accepted"
    DECLINED = "declined"
    WITHDRAWN = "withdrawn"


class JobStatus(StrEnum):
    """Where an analysis job stands: queued, claimed by a worker, then done or failed."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class JobPurpose(StrEnum):
    """What a job is for: the live table's analysis, a freeze, its verification, or a re-score."""

    TABLE = "table"
    FREEZE = "freeze"
    VERIFY = "verify"
    #: Every run of the set scored again against its current gold (after a gold change).
    RESCORE = "rescore"


class NameMode(StrEnum):
    """How a phase's public tables name teams: by name, or "Team 1", "Team 2", ... until revealed."""

    PUBLIC = "public"
    ANONYMOUS = "anonymous"


class Shown(StrEnum):
    """Whether a phase shows something it may hold back: its results, or a split's private part."""

    HIDDEN = "hidden"
    VISIBLE = "visible"


class DiagnosticsAudience(StrEnum):
    """Who sees each run's per-query values once results are visible: its team, or anyone."""

    TEAMS = "teams"
    PUBLIC = "public"


class Switch(StrEnum):
    """Whether a phase option is on or off (the automatic analysis of its set's table)."""

    ON = "on"
    OFF = "off"


class BoardKind(StrEnum):
    """What a phase's live board shows per team: its ranked slots, its best run, or the Ladder's."""

    SLOTS = "slots"
    BEST = "best"
    LADDER = "ladder"


class MailStatus(StrEnum):
    """Where an outbox mail stands: waiting, taken by a worker, or sent, dropped or failed."""

    QUEUED = "queued"
    SENDING = "sending"
    SENT = "sent"
    #: A mail built for an address that gets none (its work hides which addresses exist).
    DROPPED = "dropped"
    FAILED = "failed"
