"""Accept runs: validate, store, score and put them into their slot, atomically."""

from __future__ import annotations

import hashlib
import io
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import PurePosixPath
from typing import IO, Any, cast

from sqlalchemy import Table, bindparam, select, update
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from leaderboard.config import Settings
from leaderboard.db import expire_loaded, get_row
from leaderboard.formats.issues import Issue, quoted, summarise
from leaderboard.models import (
    GoldFile,
    GoldVersion,
    Run,
    Score,
    Subtask,
    Task,
    Team,
    User,
    run_report,
    utcnow,
)
from leaderboard.run_rows import add_scores, insert_as_loaded
from leaderboard.scoring import SCORER_VERSION
from leaderboard.services.accounts.core import team_for_import
from leaderboard.services.campaign.phases import (
    Admission,
    admit,
    check_quota,
    check_withdrawal,
    claim_quota,
    current_phase,
)
from leaderboard.services.common.audit import record
from leaderboard.services.common.errors import (
    Conflict,
    Forbidden,
    InvalidInput,
    NotFound,
    RunRejected,
)
from leaderboard.services.common.revisions import bump
from leaderboard.services.common.text import clean_text
from leaderboard.services.results.boards import board_of, decide_upload
from leaderboard.services.tasks.catalog import load_set
from leaderboard.services.tasks.hiding import sees_hidden
from leaderboard.states import Role, RunKind, RunStatus
from leaderboard.storage import Flushes, Store
from leaderboard.targets import Target
from leaderboard.tasks.families.base import Evaluation, MeasureResult, Verdict
from leaderboard.tasks.splitting import SetSplit
from leaderboard.unit_of_work import Lost

MAX_NAME = 100
MAX_DESCRIPTION = 5000
_SLOT_RETRIES = 60
# Table-level statements, built once: every upload runs them, and the ORM's bookkeeping
# would cost more than the statements themselves.
_RUNS = cast(Table, Run.__table__)
_FREE_SLOT = (
    update(_RUNS)
    .where(_RUNS.c.active_key == bindparam("slot_key"))
    .values(status=RunStatus.REPLACED, active_key=None, replaced_at=bindparam("at"))
    .returning(_RUNS.c.id)
)
_REPLACED_BY = (
    update(_RUNS)
    .where(_RUNS.c.id == bindparam("old_id"))
    .values(replaced_by_id=bindparam("new_id"))
)


@dataclass(frozen=True)
class Upload:
    """The files of one upload, keyed by form field (``file`` or a set slug), with their names."""

    files: Mapping[str, IO[bytes]]
    filenames: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_bytes(
        cls, files: Mapping[str, bytes], filenames: Mapping[str, str] | None = None
    ) -> Upload:
        """Return an upload of in-memory contents."""
        return cls({k: io.BytesIO(v) for k, v in files.items()}, dict(filenames or {}))

    def close(self) -> None:
        """Close every file of the upload."""
        for stream in self.files.values():
            stream.close()


#: How a warning names where the run name was given, by the surface of the upload.
NAME_SOURCES = {
    "web": "entered in the form",
    "api": "sent in the upload's name field",
    "cli": "given on the command line",
}


@dataclass(frozen=True)
class Submission:
    """Who submits what, where: the input of :func:`prepare_run`."""

    target: Target
    slot: str
    upload: Upload
    name: str = ""
    description: str = ""
    via: str = "web"
    lenient: bool = False
    options: Mapping[str, Any] = field(default_factory=dict)


def is_lock_error(exc: OperationalError) -> bool:
    """Return whether a database error is a transient lock conflict (SQLite)."""
    return "database is locked" in str(exc) or "database table is locked" in str(exc)


def active_key(eval_set_id: int, team_id: int | None, slot: str) -> str:
    """Return the value that makes a run the one active run of its slot."""
    owner = str(team_id) if team_id is not None else "baseline"
    return f"{eval_set_id}:{owner}:{slot}"


def manifest_sha(files: Mapping[str, Mapping[str, Any]]) -> str:
    if len(files) == 1:
        return str(next(iter(files.values()))["sha256"])
    text = "\n".join(f"{k} {v['sha256']}" for k, v in sorted(files.items()))
    return hashlib.sha256(text.encode()).hexdigest()


def primary_gold(gold_files: Mapping[str, GoldFile]) -> GoldFile:
    """Return the file a score refers to when its measure names no gold role."""
    return gold_files["gold"] if "gold" in gold_files else gold_files[sorted(gold_files)[0]]


def score_values(
    results: Mapping[str, MeasureResult],
    gold_files: Mapping[str, GoldFile],
    parts: Mapping[str, Mapping[str, MeasureResult]] | None = None,
    split: SetSplit | None = None,
) -> list[dict[str, Any]]:
    """Return the columns of score rows, each pointing at the gold file version behind it.

    A split set's run has a row per measure and part: "all", then each part given. A part's
    per-unit values that are the "all" row's on its units are not stored twice.
    """
    rows = []
    every = [("all", results), *(parts or {}).items()]
    for part, scored in every:
        for m, r in scored.items():
            role = r.gold_role or ""
            gold = gold_files[role] if role in gold_files else primary_gold(gold_files)
            derived = split is not None and part != "all" and split.derives(part, results.get(m), r)
            rows.append(
                {
                    "measure": m,
                    "part": part,
                    "value": r.raw,
                    "official": r.official,
                    "gold_file_id": gold.id,
                    "gold_sha256": gold.sha256,
                    "scorer_version": SCORER_VERSION,
                    "flags": list(r.flags),
                    "per_query": None if derived or r.per_query is None else dict(r.per_query),
                    "note": r.note,
                    "item_stats": None if derived else r.item_stats,
                    "units_from_all": derived,
                }
            )
    return rows


def score_rows(
    results: Mapping[str, MeasureResult],
    gold_files: Mapping[str, GoldFile],
    parts: Mapping[str, Mapping[str, MeasureResult]] | None = None,
    split: SetSplit | None = None,
) -> list[Score]:
    """Return score rows, each pointing at the gold file version that produced it."""
    return [Score(**values) for values in score_values(results, gold_files, parts, split)]


def gold_versions(gold_files: Mapping[str, GoldFile]) -> dict[str, GoldVersion]:
    """Return the hash and version of each reference file a run was scored against."""
    return {r: {"sha256": g.sha256, "version": g.version} for r, g in gold_files.items()}


def store_inputs(
    store: Store, upload: Upload, flushes: Flushes | None = None
) -> dict[str, dict[str, Any]]:
    """Copy an upload's (already validated) files into the store; return the files manifest."""
    stored: dict[str, dict[str, Any]] = {}
    for fieldname, stream in upload.files.items():
        stream.seek(0)
        key, sha = store.put_stream(stream, flushes)
        stored[fieldname] = {
            "key": key,
            "sha256": sha,
            "filename": upload.filenames.get(fieldname, "")[:255],
            "size": stream.tell(),
        }
    return stored


def rejection(verdict: Verdict, what: str) -> RunRejected:
    """Return the refusal of a rejected upload: its error count and the first errors listed."""
    errors = verdict.errors or [Issue(None, "The run could not be read.")]
    n = len(errors) + verdict.more_errors
    return RunRejected(
        f"The {what} was rejected: {n:,} error{'s' if n != 1 else ''}.",
        summarise(errors, unlisted=verdict.more_errors),
        verdict.warnings,
    )


@dataclass(frozen=True)
class ScoredUpload:
    """An upload that passed validation, scored: what its run row and score rows are made of."""

    evaluation: Evaluation
    #: A copy of the family's verdict report: the run's report grows from it.
    report: dict[str, Any]
    #: The reference files scored against, by gold role.
    gold_files: dict[str, GoldFile]
    #: The set's public/private split, when it has one.
    split: SetSplit | None = None

    @property
    def results(self) -> dict[str, MeasureResult]:
        """Return the run's scores by measure key."""
        results = self.evaluation.results
        assert results is not None  # only an accepted upload is a ScoredUpload
        return results

    @property
    def warnings(self) -> list[Issue]:
        """Return what validation warned about (the upload was accepted all the same)."""
        return self.evaluation.verdict.warnings


def check_and_score(
    session: Session, store: Store, settings: Settings, sub: Submission
) -> ScoredUpload:
    """Validate and score an upload without storing anything; raise RunRejected on errors."""
    target = sub.target
    loaded = load_set(session, store, target, settings.max_decompressed_bytes, fresh=False)
    gold, gold_files = loaded.gold, loaded.files
    evaluation = target.family.evaluate(
        sub.upload.files,
        gold,
        target.context(settings.max_decompressed_bytes),
        lenient=sub.lenient,
        options={
            "run_name": sub.name or None,
            "run_name_source": NAME_SOURCES.get(sub.via, "given with the upload"),
            **sub.options,
        },
        part_golds=None if loaded.split is None else loaded.split.golds,
    )
    verdict = evaluation.verdict
    if evaluation.results is None:
        raise rejection(verdict, "run")
    return ScoredUpload(evaluation, dict(verdict.report), gold_files, loaded.split)


def prepare_run(
    session: Session,
    store: Store,
    settings: Settings,
    sub: Submission,
    *,
    user: User | None,
    team: Team | str | None = None,
    now: datetime | None = None,
) -> Placement:
    """Validate, score and store a run's files; return its placement in the slot.

    The entry point commits the placement with ``retried``: the run replaces the slot's
    previous run, which is kept. Participants submit for their own team; organizers may import
    for any team (``team``, or its name: a team that does not exist yet is created with the
    run, and not at all when the run is refused) and alone may use the lenient mode. The slot
    swap is guarded by a unique column, so concurrent uploads into one slot can never leave two
    active runs. The upload's files are read here only, and closed when this returns or raises.
    """
    try:
        return _prepare_run(session, store, settings, sub, user=user, team=team, now=now)
    finally:
        # Files opened by a caller (the CLI opens run files by path) would otherwise stay
        # open until collected; a web request's are closed again by werkzeug, harmlessly.
        sub.upload.close()


def _prepare_run(
    session: Session,
    store: Store,
    settings: Settings,
    sub: Submission,
    *,
    user: User | None,
    team: Team | str | None,
    now: datetime | None,
) -> Placement:
    """Do the work of prepare_run, leaving the upload's files open."""
    target = sub.target
    # A hidden task takes no participant upload, whatever route it came by.
    if user is not None and target.task.hidden and not sees_hidden(user):
        raise NotFound(f"No task {quoted(target.task.slug)}.")
    # The team whose upload windows and quota the run counts against: a participant's own.
    counted: Team | None = None
    if user is not None and user.role == Role.PARTICIPANT:
        team = counted = _own_team(user, team, lenient=sub.lenient)
    if team is None:
        raise InvalidInput("A run must belong to a team.")
    _check_slot(target, sub.slot)
    name = clean_text(sub.name, "run name", limit=MAX_NAME) or sub.slot
    description = clean_text(sub.description, "description", limit=MAX_DESCRIPTION, multiline=True)
    now = now or utcnow()
    admission = _admission(session, settings, target, sub.slot, counted, now)
    # Asked now, while the set's phases are remembered: after the run's rows they are read again.
    board = board_of(session, target)
    scored = check_and_score(session, store, settings, sub)
    actor = user.email if user is not None else "cli"
    # An organizer's import may name a team that does not exist yet: found or added per attempt.
    owner = team if isinstance(team, Team) else None
    report, gold_files = scored.report, scored.gold_files

    # The files reach the disk while the run's rows are written; the commit waits for them.
    flushes = Flushes()
    stored = store_inputs(store, sub.upload, flushes)
    report["gold_files"] = gold_versions(gold_files)
    # Re-scoring and verify must read the stored file the same way.
    report.update(target.family.kept_options(sub.options, lenient=sub.lenient))

    def slot_key() -> str:
        nonlocal owner
        if isinstance(team, str):
            # Found or added in this attempt's transaction, which a retry starts over.
            owner = team_for_import(session, team, actor=actor)
        return active_key(target.eval_set.id, owner_of().id, sub.slot)

    def owner_of() -> Team:
        assert owner is not None
        return owner

    def new_run() -> Run:
        return Run(
            subtask_id=target.subtask.id,
            eval_set_id=target.eval_set.id,
            team_id=owner_of().id,
            kind=RunKind.RUN,
            slot=sub.slot,
            name=name,
            description=description,
            lenient=sub.lenient,
            file_sha256=manifest_sha(stored),
            files=stored,
            item_values=scored.evaluation.item_values,
            warnings=[w.text for w in scored.warnings],
            report=run_report(report),
            submitted_by_id=user.id if user is not None else None,
            submitted_via=sub.via,
            # The object, not its id: the response reads run.phase without another query.
            phase=admission.phase,
            late=admission.late,
            corrected=admission.corrected,
            created_at=now,
        )

    def claim_quota_and_record(run: Run) -> None:
        flushes.wait()
        # In the run's own transaction: a refused or lost upload uses no quota, leaves no entry.
        if counted is not None:
            claim_quota(session, admission.phase, counted, now)
        if user is None or user.is_organizer:
            _record_import(session, actor, sub, owner_of(), run, now)
        # On a Ladder board the team's new run is decided at once: its answer says the verdict.
        decide_upload(session, store, target, board, run)

    scores = score_values(scored.results, gold_files, scored.evaluation.by_part, scored.split)
    return Placement(session, slot_key, new_run, claim_quota_and_record, scores, flushes)


def _own_team(user: User, team: Team | str | None, *, lenient: bool) -> Team:
    """Return the participant's own team if it may upload; refuse another team or lenient mode."""
    if user.team is None:
        raise Forbidden("Your account is not in a team; ask the organizers to add you to one.")
    if team is not None and (isinstance(team, str) or team.id != user.team.id):
        raise Forbidden("You can only submit runs for your own team.")
    if lenient:
        raise Forbidden("Only organizers may use the lenient (legacy) import.")
    own = user.team
    if own.withdrawn_at is not None:
        raise Forbidden(f"Team {quoted(own.name)} has been withdrawn; it cannot upload runs.")
    if not own.approved:
        raise Forbidden(
            f"Team {quoted(own.name)} is waiting for an organizer's approval; "
            "it can upload runs once approved."
        )
    return own


def _check_slot(target: Target, slot: str) -> None:
    """Refuse a slot the task does not have."""
    slots = target.definition.runs.slots
    if slot not in slots:
        raise Conflict(
            f"Unknown run slot {quoted(slot)}; this task has the slots {', '.join(slots)}."
        )


def _admission(
    session: Session,
    settings: Settings,
    target: Target,
    slot: str,
    counted: Team | None,
    now: datetime,
) -> Admission:
    """Return the phase an upload falls in; a participant's must be open and within quota."""
    if counted is None:
        return Admission(current_phase(session, target.subtask, now, target.eval_set))
    admission = admit(session, target, counted, slot, now, settings.display_timezone)
    check_quota(session, admission.phase, counted, now)
    return admission


def _record_import(
    session: Session, actor: str, sub: Submission, team: Team, run: Run, now: datetime
) -> None:
    """Record an organizer's (or the command line's) import of a run in the audit log."""
    target = sub.target
    record(
        session,
        actor,
        "import-run",
        at=now,
        task=target.task.slug,
        subtask=target.subtask.slug,
        team=team.name,
        slot=sub.slot,
        set=target.eval_set.slug,
        lenient=sub.lenient,
        sha256=run.file_sha256,
    )


@dataclass(frozen=True)
class Placement:
    """A run ready to take its slot: each call is one attempt, in the caller's transaction.

    The entry point commits it with ``retried``, which rolls a lost attempt back and calls
    again (see ``place_run``).
    """

    session: Session
    key: str | Callable[[], str]
    make: Callable[[], Run]
    before_commit: Callable[[Run], None]
    scores: Sequence[Mapping[str, Any]]
    #: The flushes of the run's files, which ``before_commit`` waits for.
    flushes: Flushes | None = None

    def __call__(self, attempt: int) -> Run:
        """Place the run (attempt ``attempt``, counted from 0); Lost when another won the race."""
        try:
            return place_run(
                self.session, self.key, self.make, self.before_commit, self.scores, attempt
            )
        except Lost:
            raise
        except BaseException:
            # Given up: no thread is left flushing a file the run would have named.
            if self.flushes is not None:
                self.flushes.join()
            raise


def place_run(
    session: Session,
    key: str | Callable[[], str],
    make: Callable[[], Run],
    before_commit: Callable[[Run], None],
    scores: Sequence[Mapping[str, Any]],
    attempt: int = 0,
) -> Run:
    """Insert a new active run and its scores under ``key``; mark the slot's previous run replaced.

    The unique ``active_key`` column makes the database refuse a second active run; when a
    concurrent upload wins the race this raises Lost, and the caller's ``retried`` rolls back
    and calls again, so the other's run becomes the one replaced. SQLite reports a write after
    a stale read as "database is locked"; that is retried the same way, ``attempt`` counting
    the tries. Statements are few and plain (every upload of a deadline burst runs them): one
    UPDATE frees the slot, one INSERT adds the run and one its score rows (``run.scores``).
    """
    added: list[Any] = []
    try:
        slot_key = key() if callable(key) else key
        previous = session.execute(
            _FREE_SLOT, {"slot_key": slot_key, "at": utcnow()}
        ).scalar_one_or_none()
        if previous is not None:
            expire_loaded(session, Run, previous)
        run = make()
        run.status = RunStatus.ACTIVE
        run.active_key = slot_key
        added.append(run)
        insert_as_loaded(session, run)
        added.extend(add_scores(session, run, scores))
        set_committed_value(run, "scores", added[1:])
        if previous is not None:
            session.execute(_REPLACED_BY, {"old_id": previous, "new_id": run.id})
        bump(session, run.eval_set_id)
        before_commit(run)
        # Pending writes (an audit entry) go now: a clash or lock in them is this attempt's too.
        session.flush()
        return run
    except BaseException as exc:
        # The rows inserted as loaded are gone with the transaction (and SQLite may give
        # their ids again): the session must not keep them.
        for row in added:
            if row in session:
                session.expunge(row)
        if not isinstance(exc, IntegrityError | OperationalError):
            raise
        if isinstance(exc, OperationalError) and not is_lock_error(exc):
            raise
        if attempt + 1 >= _SLOT_RETRIES:
            raise Conflict(
                "Another upload into this slot happened at the same moment; please try again."
            ) from exc
        # Back off a little, randomly, so racing uploads do not collide again in lockstep.
        raise Lost(random.uniform(0.005, 0.02) * min(attempt + 1, 10)) from exc


def visible_run(session: Session, user: User, run_id: int) -> Run:
    """Return a run the user may see: organizers any, participants their own team's.

    A run of a hidden task is gone with its task for everyone but organizers.
    """
    run = get_row(session, Run, run_id)
    if run is not None and user.is_organizer:
        return run
    # Another team's run (or a baseline) answers exactly like a missing id, so that polling
    # ids reveals neither how many runs others uploaded nor when.
    if (
        run is None
        or run.kind != RunKind.RUN
        or user.team_id is None
        or run.team_id != user.team_id
        or run.subtask.task.hidden
    ):
        raise NotFound(f"No run {run_id}.")
    return run


def team_runs(session: Session, team: Team) -> list[Run]:
    """Return all runs of a team, newest first, replaced ones included; none of a hidden task."""
    return list(
        session.scalars(
            select(Run)
            .join(Subtask, Subtask.id == Run.subtask_id)
            .join(Task, Task.id == Subtask.task_id)
            .where(Run.team_id == team.id, Task.hidden.is_(False))
            .order_by(Run.created_at.desc(), Run.id.desc())
        )
    )


def withdraw_run(
    session: Session, user: User, run_id: int, now: datetime, zone: str = "UTC"
) -> Run:
    """Withdraw the caller's team's active run before its deadline: its slot becomes empty.

    The run stays in the history (status "withdrawn") and leaves every live table; frozen
    tables keep what they showed. Participants withdraw their own team's runs only.
    """
    run = visible_run(session, user, run_id)
    if user.is_organizer:
        raise Forbidden("Runs are withdrawn by their own team; organizers do not withdraw runs.")
    if run.status != RunStatus.ACTIVE:
        raise Conflict(
            f"Run {run.id} is {run.status}; only the active run of a slot can be withdrawn."
        )
    check_withdrawal(session, run, now, zone)
    # Conditional on the run still being active: a concurrent upload may have replaced it.
    done = session.execute(
        update(_RUNS)
        .where(_RUNS.c.id == run.id, _RUNS.c.status == RunStatus.ACTIVE)
        .values(status=RunStatus.WITHDRAWN, active_key=None)
    )
    if done.rowcount != 1:  # type: ignore[attr-defined]
        raise Conflict(f"Run {run.id} left its slot meanwhile; it cannot be withdrawn.")
    expire_loaded(session, Run, run.id)
    bump(session, run.eval_set_id)
    record(
        session,
        user.email,
        "withdraw-run",
        at=now,
        task=run.subtask.task.slug,
        subtask=run.subtask.slug,
        run=run.id,
        team=run.team.name if run.team is not None else None,
        slot=run.slot,
        set=run.eval_set.slug,
    )
    session.refresh(run)
    return run


@dataclass(frozen=True)
class RunFile:
    """A stored run file to send back: its storage key and the name to give it."""

    key: str
    filename: str


def run_files(store: Store, run: Run) -> dict[str, RunFile]:
    """Return a run's stored files by upload field, with the names they were uploaded under."""
    out = {}
    for fieldname, meta in sorted(run.files.items()):
        # Only the last part of the uploaded name: it becomes a download or zip entry name.
        name = PurePosixPath(str(meta.get("filename") or "").replace("\\", "/")).name
        name = name if name not in ("", ".", "..") else f"run-{run.id}-{fieldname}.txt"
        out[fieldname] = RunFile(str(meta["key"]), name)
    return out
