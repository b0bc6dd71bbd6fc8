"""Typed SQLAlchemy models: tasks, sets and gold, teams, users, runs, scores, audit log."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, TypedDict, TypeVar, cast

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship, validates
from sqlalchemy.sql.expression import false, true

from leaderboard.states import (
    JobPurpose,
    JobStatus,
    JoinStatus,
    MailStatus,
    NameMode,
    Role,
    RunKind,
    RunStatus,
)

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    """Return the current time as an aware UTC datetime."""
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Store datetimes as UTC and always return them timezone-aware (SQLite drops the zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given; the server stores aware UTC times only")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


State = TypeVar("State", bound=StrEnum)


class StateType(TypeDecorator[State]):
    """Store a state as its string value in a String column; read it back as the enum member."""

    impl = String
    cache_ok = True

    def __init__(self, states: type[State], length: int) -> None:
        super().__init__(length)
        self.states = states
        self.length = length

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        # Through the enum, so that a misspelt state fails here instead of landing in a row.
        return None if value is None else self.states(value).value

    def process_result_value(self, value: str | None, dialect: Dialect) -> State | None:
        return None if value is None else self.states(value)


class Base(DeclarativeBase):
    """Declarative base with a naming convention so migrations name constraints stably."""

    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map = {datetime: UTCDateTime, dict[str, Any]: JSON, list[Any]: JSON}


class Task(Base):
    """A hosted shared task, created from a task definition file."""

    __tablename__ = "tasks"

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(64), unique=True)
    title: Mapped[str] = mapped_column(String(255))
    family: Mapped[str] = mapped_column(String(32))
    definition: Mapped[dict[str, Any]]
    definition_sha256: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # Hidden by an organizer: a 404 for everyone else, uploads refused, nothing deleted.
    hidden: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())

    subtasks: Mapped[list[Subtask]] = relationship(
        back_populates="task", order_by="Subtask.position", cascade="all, delete-orphan"
    )


class Subtask(Base):
    """A subtask of a task: its own runs, sets and table."""

    __tablename__ = "subtasks"
    __table_args__ = (UniqueConstraint("task_id", "slug"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"))
    slug: Mapped[str] = mapped_column(String(64))
    title: Mapped[str] = mapped_column(String(255))
    position: Mapped[int] = mapped_column(Integer, default=0)
    default_set: Mapped[str] = mapped_column(String(64))

    task: Mapped[Task] = relationship(back_populates="subtasks")
    eval_sets: Mapped[list[EvalSet]] = relationship(
        back_populates="subtask", order_by="EvalSet.position", cascade="all, delete-orphan"
    )


class EvalSet(Base):
    """An evaluation set (phase data) of a subtask, e.g. ``test`` or ``dev``."""

    __tablename__ = "eval_sets"
    __table_args__ = (UniqueConstraint("subtask_id", "slug"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    subtask_id: Mapped[int] = mapped_column(ForeignKey("subtasks.id", ondelete="CASCADE"))
    slug: Mapped[str] = mapped_column(String(64))
    title: Mapped[str] = mapped_column(String(255))
    position: Mapped[int] = mapped_column(Integer, default=0)
    # Bumped by every change that can alter the set's tables; caches are keyed by it.
    revision: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # Advanced when an analysis of the set is stored, so cached tables take its clusters.
    analysed: Mapped[int] = mapped_column(Integer, default=0, server_default="0")

    subtask: Mapped[Subtask] = relationship(back_populates="eval_sets")
    gold_files: Mapped[list[GoldFile]] = relationship(
        back_populates="eval_set", order_by="GoldFile.id", cascade="all, delete-orphan"
    )


class Phase(Base):
    """A phase of a subtask (trial, dev, test): its set, window, visibility, quotas and late rules."""

    __tablename__ = "phases"
    __table_args__ = (UniqueConstraint("subtask_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    subtask_id: Mapped[int] = mapped_column(ForeignKey("subtasks.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(64))
    eval_set_id: Mapped[int] = mapped_column(ForeignKey("eval_sets.id", ondelete="CASCADE"))
    starts_at: Mapped[datetime | None]
    ends_at: Mapped[datetime | None]
    late_allowed: Mapped[bool] = mapped_column(Boolean, default=False)
    corrections_allowed: Mapped[bool] = mapped_column(Boolean, default=False)
    results_hidden: Mapped[bool] = mapped_column(Boolean, default=False)
    released_at: Mapped[datetime | None]
    # When hidden results become visible by themselves (the worker's periodic check releases them).
    release_at: Mapped[datetime | None]
    daily_quota: Mapped[int | None] = mapped_column(Integer)
    total_quota: Mapped[int | None] = mapped_column(Integer)
    # Anonymous: public tables name teams "Team 1", "Team 2", ... until revealed.
    names: Mapped[NameMode] = mapped_column(
        StateType(NameMode, 16), default=NameMode.PUBLIC, server_default="public"
    )
    # Whether anyone may see each run's per-query diagnostics once results are visible (else
    # only the run's own team and the organizers).
    public_diagnostics: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # Whether a split set's private part is shown to participants and the public (released);
    # until then everything they see is computed on the public part.
    private_visible: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # What the live board shows per team: "slots" (each ranked slot's run), "best" (the team's
    # best run so far) or "ladder" (the value the Ladder released), and the Ladder's alpha.
    board: Mapped[str] = mapped_column(String(8), default="slots", server_default="slots")
    ladder_alpha: Mapped[float] = mapped_column(Float, default=0.05, server_default="0.05")
    # Whether the worker analyses the set's table by itself whenever its scores change while
    # results are visible (clusters and rank intervals on the public board); off on any phase
    # of the set turns it off for the set.
    auto_analysis: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    subtask: Mapped[Subtask] = relationship()
    eval_set: Mapped[EvalSet] = relationship()
    data_files: Mapped[list[TaskDataFile]] = relationship(
        back_populates="phase", cascade="all, delete-orphan", order_by="TaskDataFile.id"
    )


class QuotaUsage(Base):
    """How many accepted runs a team has used of a phase's quota, per UTC day or in total."""

    __tablename__ = "quota_usage"
    __table_args__ = (UniqueConstraint("phase_id", "team_id", "period"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"))
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"))
    period: Mapped[str] = mapped_column(String(16))  # "total" or a UTC date "2016-01-31"
    used: Mapped[int] = mapped_column(Integer, default=0)


class FrozenTable(Base):
    """The official ranking of a subtask's set, stored as displayed; immutable (a trigger refuses changes).

    A set may have several versions: the newest is the official ranking, each older one was
    superseded (a ``FreezeSupersession`` row says when and why) and stays verifiable.
    """

    __tablename__ = "frozen_tables"
    __table_args__ = (UniqueConstraint("subtask_id", "eval_set_id", "version"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    subtask_id: Mapped[int] = mapped_column(ForeignKey("subtasks.id", ondelete="RESTRICT"))
    eval_set_id: Mapped[int] = mapped_column(ForeignKey("eval_sets.id", ondelete="RESTRICT"))
    version: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    frozen_at: Mapped[datetime]
    frozen_by: Mapped[str] = mapped_column(String(320))
    # The Table JSON as displayed, each export rendered at freeze time, and what produced them.
    table: Mapped[dict[str, Any]]
    renders: Mapped[dict[str, Any]]
    manifest: Mapped[dict[str, Any]]
    manifest_sha256: Mapped[str] = mapped_column(String(64))


class FreezeSupersession(Base):
    """That a frozen version was superseded by a newer one: when, by whom and why.

    A row of its own, so that the superseded frozen table itself is never written again.
    """

    __tablename__ = "freeze_supersessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    superseded_id: Mapped[int] = mapped_column(
        ForeignKey("frozen_tables.id", ondelete="RESTRICT"), unique=True
    )
    successor_id: Mapped[int] = mapped_column(
        ForeignKey("frozen_tables.id", ondelete="RESTRICT"), unique=True
    )
    reason: Mapped[str] = mapped_column(Text)
    superseded_at: Mapped[datetime]
    superseded_by: Mapped[str] = mapped_column(String(320))


class DeletedTask(Base):
    """A task an organizer deleted, by slug, so that ``leaderboard init`` never installs it again."""

    __tablename__ = "deleted_tasks"

    slug: Mapped[str] = mapped_column(String(64), primary_key=True)
    deleted_at: Mapped[datetime] = mapped_column(default=utcnow)
    deleted_by: Mapped[str] = mapped_column(String(320))


class GoldFile(Base):
    """One version of a reference file of a set (gold labels, qrels variant, mapping, input)."""

    __tablename__ = "gold_files"

    id: Mapped[int] = mapped_column(primary_key=True)
    eval_set_id: Mapped[int] = mapped_column(ForeignKey("eval_sets.id", ondelete="CASCADE"))
    role: Mapped[str] = mapped_column(String(64))  # "gold", "qrels:manual", "mapping", "input", ...
    version: Mapped[int] = mapped_column(Integer, default=1)
    sha256: Mapped[str] = mapped_column(String(64))
    storage_key: Mapped[str] = mapped_column(String(255))
    filename: Mapped[str] = mapped_column(String(255))
    # "<eval_set_id>:<role>" while this version is the current one, NULL afterwards: the unique
    # constraint lets the database itself refuse two current versions of one file.
    active_key: Mapped[str | None] = mapped_column(String(128), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    created_by: Mapped[str] = mapped_column(String(255), default="system")

    eval_set: Mapped[EvalSet] = relationship(back_populates="gold_files")


#: The longest key a team name may have (NFKC can lengthen a name; an index must hold it).
MAX_NAME_KEY = 512


def team_name_key(name: str) -> str:
    """Return what makes two team names the same to a reader: NFKC case folded, spaces collapsed.

    Format characters (zero-width spaces, joiners, bidi controls) are left out: invisible, they
    would let ``Bore\u200balis`` pass for a second ``Borealis``.
    """
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    visible = "".join(c for c in folded if unicodedata.category(c) != "Cf")
    return " ".join(visible.split())


class Team(Base):
    """A participating team."""

    __tablename__ = "teams"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(255), unique=True)
    # team_name_key(name), kept in step by the model: unique, so no two teams read alike.
    name_key: Mapped[str] = mapped_column(String(MAX_NAME_KEY), unique=True)
    affiliation: Mapped[str] = mapped_column(String(255), default="", server_default="")
    # False while an organizer has not approved a team created in "approval" registration mode.
    approved: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    # The code of the team's invite link; regenerating it invalidates the old link.
    invite_code: Mapped[str | None] = mapped_column(String(64), unique=True)
    # Withdrawn teams' runs leave every live table; history and frozen tables keep them.
    withdrawn_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    members: Mapped[list[User]] = relationship(back_populates="team")

    @validates("name")
    def _keep_key(self, _field: str, name: str) -> str:
        self.name_key = team_name_key(name)
        return name


class User(Base):
    """A person who logs in: an organizer or a participant of one team."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(String(320), unique=True)
    password_hash: Mapped[str | None] = mapped_column(String(255))
    role: Mapped[Role] = mapped_column(StateType(Role, 16))
    team_id: Mapped[int | None] = mapped_column(ForeignKey("teams.id", ondelete="SET NULL"))
    # One member of each team is its captain: they manage invites, requests and members.
    is_captain: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # When the user joined their current team: a leaving captain hands over to the earliest.
    joined_team_at: Mapped[datetime | None]
    display_name: Mapped[str] = mapped_column(String(255), default="", server_default="")
    affiliation: Mapped[str] = mapped_column(String(255), default="", server_default="")
    # None until the address is verified; accounts made by an organizer start verified.
    verified_at: Mapped[datetime | None]
    terms_accepted_at: Mapped[datetime | None]
    is_active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # Stored in each log-in session and compared on every request: bumping it (log-out, new
    # password, disabling) ends every session of the user at once, wherever the cookie is.
    session_generation: Mapped[int] = mapped_column(Integer, default=0, server_default="0")

    team: Mapped[Team | None] = relationship(back_populates="members")

    @property
    def is_organizer(self) -> bool:
        """Return whether this user may act as an organizer."""
        return self.role == Role.ORGANIZER

    # The login library's user protocol, written out so models need no web import.
    is_authenticated = True
    is_anonymous = False

    def get_id(self) -> str:
        """Return the id the login session stores."""
        return str(self.id)


class ApiToken(Base):
    """A bearer token for the API; only its SHA-256 is stored."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))
    name: Mapped[str] = mapped_column(String(255), default="", server_default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_used_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]

    user: Mapped[User] = relationship()


class JoinRequest(Base):
    """A user's request to join a team, accepted or declined by its captain."""

    __tablename__ = "join_requests"

    id: Mapped[int] = mapped_column(primary_key=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    status: Mapped[JoinStatus] = mapped_column(
        StateType(JoinStatus, 16), default=JoinStatus.PENDING
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    decided_at: Mapped[datetime | None]

    team: Mapped[Team] = relationship()
    user: Mapped[User] = relationship()


class SiteSetting(Base):
    """One site-wide setting (registration mode, team size, terms) by name."""

    __tablename__ = "site_settings"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class TaskDataFile(Base):
    """A file an organizer attaches to a phase for participants: inputs, trial data, code."""

    __tablename__ = "task_data_files"

    id: Mapped[int] = mapped_column(primary_key=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"))
    title: Mapped[str] = mapped_column(String(255))
    filename: Mapped[str] = mapped_column(String(255))
    storage_key: Mapped[str] = mapped_column(String(255))
    sha256: Mapped[str] = mapped_column(String(64))
    # 64-bit: a corpus or input archive may exceed 2 GiB.
    size: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    created_by: Mapped[str] = mapped_column(String(320))

    phase: Mapped[Phase] = relationship(back_populates="data_files")


class TermsAcceptance(Base):
    """A user's acceptance of a task's terms, required before its data files are served."""

    __tablename__ = "terms_acceptances"
    __table_args__ = (UniqueConstraint("user_id", "task_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"))
    accepted_at: Mapped[datetime] = mapped_column(default=utcnow)


class GoldVersion(TypedDict):
    """Which version of a reference file a run was scored against."""

    sha256: str
    version: int


class RunReport(TypedDict, total=False):
    """What a run's report holds for the generic layers; a family's own keys ride along untyped.

    A family's verdict report is the report's base, so it may add keys of its own (stored in
    the same JSON object); code outside the family reads those through the family's methods
    (``Family.run_notes``, ``Family.stored_options``).
    """

    #: The run's name as its file gives it (a TREC run tag), shown instead of the run name.
    run_tag: str
    #: What lenient reading tolerated in a legacy file, one line each.
    tolerances: list[str]
    #: Per gold role, the reference file version the current scores come from.
    gold_files: dict[str, GoldVersion]
    #: Why the last re-scoring failed (its first errors); gone once a re-scoring succeeds.
    rescore_error: list[str]
    #: Baselines only: the measures a baseline shows, and its place among the baselines.
    shown: list[str]
    order: int


def run_report(entries: Mapping[str, Any]) -> RunReport:
    """Return a run's report of a family's verdict report and the generic entries."""
    # A cast, not a check: the family's own keys pass through as the family wrote them.
    return cast(RunReport, dict(entries))


class Run(Base):
    """A submitted (or imported, or generated baseline) run in a slot of a subtask and set."""

    __tablename__ = "runs"

    id: Mapped[int] = mapped_column(primary_key=True)
    subtask_id: Mapped[int] = mapped_column(ForeignKey("subtasks.id", ondelete="CASCADE"))
    eval_set_id: Mapped[int] = mapped_column(ForeignKey("eval_sets.id", ondelete="CASCADE"))
    team_id: Mapped[int | None] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"))
    kind: Mapped[RunKind] = mapped_column(StateType(RunKind, 16), default=RunKind.RUN)
    slot: Mapped[str] = mapped_column(String(64))  # "primary", ...; baselines: their role
    name: Mapped[str] = mapped_column(String(255))
    description: Mapped[str] = mapped_column(Text, default="")
    status: Mapped[RunStatus] = mapped_column(StateType(RunStatus, 16), default=RunStatus.ACTIVE)
    # "<set>:<team or 'baseline'>:<slot>" while active, NULL once replaced: a unique column, so
    # two concurrent uploads can never both leave an active run in one slot.
    active_key: Mapped[str | None] = mapped_column(String(255), unique=True)
    label: Mapped[str | None] = mapped_column(String(255))
    lenient: Mapped[bool] = mapped_column(Boolean, default=False)
    late: Mapped[bool] = mapped_column(Boolean, default=False)
    corrected: Mapped[bool] = mapped_column(Boolean, default=False)
    # SHA-256 of the run file, or for multi-file runs of the sorted "<field> <sha256>" manifest.
    file_sha256: Mapped[str] = mapped_column(String(64))
    # {field: {"key": storage key, "sha256": ..., "filename": ..., "size": bytes}}
    files: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # What the run predicts per item, by item id (a label, a number), for the families whose
    # corpus-level measures analysis recomputes on samples of items; None for the others.
    item_values: Mapped[dict[str, Any] | None] = mapped_column(deferred=True)
    warnings: Mapped[list[Any]] = mapped_column(default=list)
    report: Mapped[RunReport] = mapped_column(JSON, default=dict)
    submitted_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    submitted_via: Mapped[str] = mapped_column(String(16), default="web")  # web | api | cli
    phase_id: Mapped[int | None] = mapped_column(ForeignKey("phases.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    replaced_at: Mapped[datetime | None]
    replaced_by_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))

    subtask: Mapped[Subtask] = relationship()
    eval_set: Mapped[EvalSet] = relationship()
    team: Mapped[Team | None] = relationship()
    submitted_by: Mapped[User | None] = relationship(foreign_keys=[submitted_by_id])
    phase: Mapped[Phase | None] = relationship()
    scores: Mapped[list[Score]] = relationship(
        back_populates="run", cascade="all, delete-orphan", order_by="Score.id"
    )

    @property
    def is_active(self) -> bool:
        """Return whether this run currently occupies its slot."""
        return self.status == RunStatus.ACTIVE

    def current_score(self, measure: str, part: str = "all") -> Score | None:
        """Return the run's current score of a measure on a part (scores loaded), or None."""
        return next(
            (s for s in self.scores if s.current and s.part == part and s.measure == measure),
            None,
        )

    def visible_measures(self, measures: Iterable[str]) -> set[str]:
        """Return which of ``measures`` the run shows: all for a team, a baseline's chosen ones."""
        if self.kind == RunKind.BASELINE:
            return set(self.report.get("shown", measures))
        return set(measures)


class Score(Base):
    """One measure of one run on one set, with the gold and scorer versions that produced it."""

    __tablename__ = "scores"

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    measure: Mapped[str] = mapped_column(String(64))
    #: The units the value is computed on: "all", or a split set's "public" or "private" part.
    part: Mapped[str] = mapped_column(String(8), default="all", server_default="all")
    #: None when the measure is undefined for the run (e.g. a correlation of a constant
    #: prediction); ``official`` is then empty and the table shows "—".
    value: Mapped[float | None] = mapped_column(Float)
    official: Mapped[str] = mapped_column(String(32))
    gold_file_id: Mapped[int] = mapped_column(ForeignKey("gold_files.id", ondelete="RESTRICT"))
    gold_sha256: Mapped[str] = mapped_column(String(64))
    scorer_version: Mapped[str] = mapped_column(String(64))
    current: Mapped[bool] = mapped_column(Boolean, default=True)
    flags: Mapped[list[Any]] = mapped_column(default=list)
    #: What the value depends on beyond the gold, shown in the table's notes (sacrebleu's
    #: signature, e.g. "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0").
    note: Mapped[str] = mapped_column(Text, default="", server_default="")
    #: The per-query (per-item) values the measure is the mean of, by query id; deferred, since
    #: tables read only ``value`` and ``official`` while analysis reads these.
    per_query: Mapped[dict[str, Any] | None] = mapped_column(deferred=True)
    #: Per item, the statistics a corpus-level measure is computed from (BLEU's n-gram counts
    #: per segment), in item order; deferred like ``per_query``.
    item_stats: Mapped[list[Any] | None] = mapped_column(deferred=True)
    #: A part's row whose per-unit values are the run's "all" row's on the part's units keeps
    #: none of its own (``per_query`` and ``item_stats`` empty): they are derived when read.
    units_from_all: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    run: Mapped[Run] = relationship(back_populates="scores")


class LadderDecision(Base):
    """The Ladder's decision on one run: did it beat its team's released value, and what is shown.

    Stored once per run, measure, part and alpha (the decision depends on the team's earlier
    runs, which never change); a re-score of the set deletes its decisions, to be made again.
    """

    __tablename__ = "ladder_decisions"
    __table_args__ = (UniqueConstraint("run_id", "measure", "part", "alpha"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    eval_set_id: Mapped[int] = mapped_column(ForeignKey("eval_sets.id", ondelete="CASCADE"))
    measure: Mapped[str] = mapped_column(String(64))
    part: Mapped[str] = mapped_column(String(8))
    alpha: Mapped[float] = mapped_column(Float)
    replaced: Mapped[bool] = mapped_column(Boolean)
    #: The value the board shows for the team after this run (stored scale).
    released: Mapped[float] = mapped_column(Float)
    #: The run's own value on the board's units (organizers only).
    value: Mapped[float] = mapped_column(Float)
    threshold: Mapped[float | None] = mapped_column(Float)
    p_value: Mapped[float | None] = mapped_column(Float)
    reason: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Job(Base):
    """A job on a set's scores at one revision: an analysis, a freeze, a verify or a re-score.

    The web action or command adds it ``queued``, ``leaderboard worker`` claims it (``running``)
    and stores the report (``done``) or the reason it failed (``failed``). A ``freeze`` job
    analyses the official table and then freezes it with its analysis.
    """

    # The table keeps its first name: most jobs are analyses, and renaming it needs no migration.
    __tablename__ = "analyses"

    id: Mapped[int] = mapped_column(primary_key=True)
    eval_set_id: Mapped[int] = mapped_column(ForeignKey("eval_sets.id", ondelete="CASCADE"))
    # The set's score revision the analysis was asked for: a later run or re-score outdates it.
    revision: Mapped[int] = mapped_column(Integer)
    measure: Mapped[str] = mapped_column(String(64))
    method: Mapped[str] = mapped_column(String(16))
    samples: Mapped[int] = mapped_column(Integer)
    seed: Mapped[int] = mapped_column(BigInteger)
    alpha: Mapped[float] = mapped_column(Float)
    correction: Mapped[str] = mapped_column(String(8))
    runs: Mapped[str] = mapped_column(String(8))
    # "table": the live table's analysis; "freeze": the official table's, then the freeze.
    purpose: Mapped[JobPurpose] = mapped_column(
        StateType(JobPurpose, 8), default=JobPurpose.TABLE, server_default="table"
    )
    # A freeze the organizer confirmed although a deadline of the set was still ahead.
    before_deadline: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # A freeze that supersedes the set's official ranking, with the organizer's reason.
    supersede_reason: Mapped[str | None] = mapped_column(Text)
    status: Mapped[JobStatus] = mapped_column(
        StateType(JobStatus, 16), default=JobStatus.QUEUED, index=True
    )
    report: Mapped[dict[str, Any] | None] = mapped_column(deferred=True)
    error: Mapped[str] = mapped_column(Text, default="")
    requested_by: Mapped[str] = mapped_column(String(320))
    requested_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
    # Who runs the job now: host, process and a claim token, so a worker whose claim was handed
    # on cannot store its result over the new claimant's.
    worker: Mapped[str] = mapped_column(String(128), default="")
    #: How many times a worker took the job; more than one means it was retried.
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    #: The running worker's last sign of life; a job silent for three heartbeats is handed on.
    heartbeat_at: Mapped[datetime | None]
    #: When the job's task was last sent to the broker (the sweep sends a lost one again).
    enqueued_at: Mapped[datetime | None]

    eval_set: Mapped[EvalSet] = relationship()


class ChartFile(Base):
    """A chart drawn once and stored: the hash of everything it shows, and its stored file.

    The key covers the chart's kind, format and every label and number drawn, so each
    audience's variant (anonymous or named runs) is a file of its own and none is served to
    another audience. Charts can be drawn again, so a missing file is simply redrawn.
    """

    __tablename__ = "chart_files"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    sha256: Mapped[str] = mapped_column(String(64))
    storage_key: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class SummarizedSet(Base):
    """The revision of a set whose per-query summaries are stored (behind: being updated)."""

    __tablename__ = "summarized_sets"

    eval_set_id: Mapped[int] = mapped_column(
        ForeignKey("eval_sets.id", ondelete="CASCADE"), primary_key=True
    )
    revision: Mapped[int] = mapped_column(Integer)


class QuerySummary(Base):
    """The best, median and worst value per query of a set's ranked runs on one measure.

    Computed by the worker when the set's scores change (and by analysis jobs), so a run's
    diagnostics page reads one row instead of every run's per-query values.
    """

    __tablename__ = "query_summaries"

    eval_set_id: Mapped[int] = mapped_column(
        ForeignKey("eval_sets.id", ondelete="CASCADE"), primary_key=True
    )
    measure: Mapped[str] = mapped_column(String(64), primary_key=True)
    #: The set's revision the summary was computed at.
    revision: Mapped[int] = mapped_column(Integer)
    #: How many ranked runs it covers.
    runs: Mapped[int] = mapped_column(Integer)
    #: ``{query: [best, median, worst, runs]}``.
    values: Mapped[dict[str, Any]] = mapped_column()
    computed_at: Mapped[datetime] = mapped_column(default=utcnow)


class LoginCounter(Base):
    """Log-in attempts in one window, for an account, an address, or an account from an address."""

    # Each attempt takes a slot with a conditional UPDATE before its password is checked, so the
    # count and the decision are one atomic step on every worker and host.
    __tablename__ = "login_counters"
    __table_args__ = (UniqueConstraint("scope", "key"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    scope: Mapped[str] = mapped_column(String(16))  # "pair", "account" or "address"
    key: Mapped[str] = mapped_column(String(400))
    count: Mapped[int] = mapped_column(Integer, default=0)
    window_start: Mapped[datetime] = mapped_column(index=True)


class AuditEvent(Base):
    """An organizer or system action, recorded with who and when."""

    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[datetime] = mapped_column(default=utcnow)
    actor: Mapped[str] = mapped_column(String(320))
    action: Mapped[str] = mapped_column(String(64))
    task_slug: Mapped[str | None] = mapped_column(String(64))
    subtask_slug: Mapped[str | None] = mapped_column(String(64))
    details: Mapped[dict[str, Any]] = mapped_column(default=dict)


class NotificationOptOut(Base):
    """A kind of notification mail a user turned off (every kind is on without a row)."""

    __tablename__ = "notification_opt_outs"
    __table_args__ = (UniqueConstraint("user_id", "kind"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(32))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class NoticeSent(Base):
    """A campaign notice already sent (a release, a deadline ahead), so it goes out once."""

    __tablename__ = "notices_sent"

    key: Mapped[str] = mapped_column(String(128), primary_key=True)
    sent_at: Mapped[datetime] = mapped_column(default=utcnow)
    recipients: Mapped[int] = mapped_column(Integer, default=0)


class WorkerSeen(Base):
    """A background worker's last sign of life, so the health check tells whether any runs."""

    __tablename__ = "workers"

    #: Host and process id, as in the jobs it claims.
    name: Mapped[str] = mapped_column(String(128), primary_key=True)
    host: Mapped[str] = mapped_column(String(255), default="")
    pid: Mapped[int] = mapped_column(Integer, default=0)
    queues: Mapped[str] = mapped_column(String(64), default="")
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    seen_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)


class PeriodicRun(Base):
    """A periodic job's schedule: the worker that claims a run moves ``due_at`` one period on.

    The conditional update of ``due_at`` is the claim, so each period runs once on one worker.
    """

    __tablename__ = "periodic_runs"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    due_at: Mapped[datetime] = mapped_column(default=utcnow)
    claimed_by: Mapped[str] = mapped_column(String(128), default="")
    claimed_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
    runs: Mapped[int] = mapped_column(Integer, default=0)


class DataDownload(Base):
    """That a user downloaded a task's data (the first time): it makes their team a participant."""

    __tablename__ = "data_downloads"
    __table_args__ = (UniqueConstraint("user_id", "task_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"))
    first_at: Mapped[datetime] = mapped_column(default=utcnow)


class OutboxMail(Base):
    """A mail to send, written in the transaction of what caused it; the queue carries its id.

    A worker takes it (``sending``), sends it and clears its body (``sent``): links in mail
    hold secrets, so a mail that is done (sent, dropped or failed) keeps no text.
    """

    __tablename__ = "outbox"

    id: Mapped[int] = mapped_column(primary_key=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    #: What the mail is for ("verification", "reset", a notification kind): never a secret.
    kind: Mapped[str] = mapped_column(String(32))
    recipient: Mapped[str] = mapped_column(String(320))
    #: The composed message; NULL once the mail is done.
    message: Mapped[str | None] = mapped_column(Text)
    #: False for a mail built only so that the work looks alike: a worker drops it unsent.
    deliver: Mapped[bool] = mapped_column(Boolean, default=True)
    status: Mapped[MailStatus] = mapped_column(
        StateType(MailStatus, 16), default=MailStatus.QUEUED, index=True
    )
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    #: Why the last attempt failed (the transport's answer, never the mail's text).
    last_error: Mapped[str] = mapped_column(Text, default="")
    sent_at: Mapped[datetime | None]
    #: When its id was last handed to the broker, or when its retry is due after a failure:
    #: a queued mail not taken a while after it is counted lost and sent again by the sweep.
    queued_at: Mapped[datetime | None]
