"""Task data files of a subtask's phases: attach, list, delete, and hand them to participants."""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import IO, Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from leaderboard.db import get_row
from leaderboard.formats.fingerprint import DAMAGED, InspectionLimit, fingerprints
from leaderboard.formats.issues import quoted
from leaderboard.models import (
    EvalSet,
    GoldFile,
    Phase,
    Subtask,
    Task,
    TaskDataFile,
    TermsAcceptance,
    User,
)
from leaderboard.services.common.audit import record
from leaderboard.services.common.errors import Forbidden, InvalidInput, NotFound
from leaderboard.services.tasks.catalog import definition_of
from leaderboard.storage import Store

SAFE_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.+")


def safe_filename(name: str) -> str:
    """Return the base name of an uploaded file with only plain characters (for headers and disks)."""
    base = PureWindowsPath(PurePosixPath(name).name).name
    cleaned = "".join(c if c in SAFE_CHARS else "_" for c in base).strip("._")
    return cleaned[:200] or "data"


def _phase(session: Session, subtask: Subtask, name: str) -> Phase:
    phase = session.scalar(select(Phase).where(Phase.subtask_id == subtask.id, Phase.name == name))
    if phase is None:
        names = session.scalars(select(Phase.name).where(Phase.subtask_id == subtask.id)).all()
        known = ", ".join(sorted(names)) or "none yet (create one with leaderboard phase)"
        raise NotFound(f"No phase {quoted(name)} in subtask {subtask.slug}; its phases: {known}.")
    return phase


#: Reference files that are no gold, by role prefix: what participants are meant to receive
#: (STS inputs, generation sources, TREC topics) and baseline runs (whose scores are public).
#: Every other role (gold, qrels, references, mappings, any new one) is gold.
PUBLIC_ROLES = frozenset({"input", "source", "topics", "random_baseline"})
#: The most a data file may decompress to (all archive members together) to be checked.
INSPECT_LIMIT = 4 << 30
#: What reading a file too large or damaged to fingerprint raises.
UNREADABLE: tuple[type[Exception], ...] = (InspectionLimit, *DAMAGED)


def is_secret(role: str) -> bool:
    """Return whether a reference file of this role is gold (never given to participants)."""
    return role.split(":", 1)[0] not in PUBLIC_ROLES


def task_gold(session: Session, task: Task) -> list[GoldFile]:
    """Return every version of every gold file (labels, qrels, references) of the task's sets."""
    rows = session.scalars(
        select(GoldFile)
        .join(EvalSet, GoldFile.eval_set_id == EvalSet.id)
        .join(Subtask, EvalSet.subtask_id == Subtask.id)
        .where(Subtask.task_id == task.id)
        .options(selectinload(GoldFile.eval_set).selectinload(EvalSet.subtask))
        .order_by(GoldFile.id)
    )
    return [g for g in rows if is_secret(g.role)]


@lru_cache(maxsize=512)
def _stored_prints(store: Store, key: str, sha256: str) -> frozenset[str]:
    """Return the fingerprints of a stored file (its name is its hash, so caching is safe)."""
    with store.open(key) as f:
        return frozenset(p.value for p in fingerprints(f, limit=INSPECT_LIMIT))


def gold_prints(store: Store, gold: GoldFile) -> frozenset[str]:
    """Return the fingerprints of a stored gold file."""
    return _stored_prints(store, gold.storage_key, gold.sha256)


def describe_gold(gold: GoldFile) -> str:
    """Name a gold file for a message: file name, role, set, subtask and version."""
    es = gold.eval_set
    return (
        f"{quoted(gold.filename)} ({gold.role} of set {es.slug}, subtask {es.subtask.slug}, "
        f"version {gold.version})"
    )


def gold_copy(
    store: Store, golds: list[GoldFile], path: Path, sha256: str, filename: str
) -> str | None:
    """Return why a file copies one of the gold files (a message), or None if it copies none.

    The file is compared as bytes, then as normalised text once decompressed, member by member
    if it is an archive; reading is streamed and stops at INSPECT_LIMIT.
    """
    for gold in golds:
        if gold.sha256 == sha256:
            return (
                f"The file {quoted(filename)} has the same bytes as the reference (gold) file "
                f"{describe_gold(gold)}; gold files are never given to participants."
            )
    try:
        with path.open("rb") as f:
            found = fingerprints(f, limit=INSPECT_LIMIT)
    except InspectionLimit:
        return (
            f"The file {quoted(filename)} decompresses to more than {INSPECT_LIMIT >> 30} GiB, "
            "too much to check that it holds no gold file; split it into smaller files."
        )
    except DAMAGED as exc:
        return (
            f"The file {quoted(filename)} looks compressed or archived but cannot be read "
            f"({exc.__class__.__name__}), so it cannot be checked against the gold files."
        )
    for gold in golds:
        prints = gold_prints(store, gold)
        for p in found:
            if p.value in prints:
                inside = f"its member {quoted(p.member)}" if p.member else "its text"
                return (
                    f"The file {quoted(filename)} is a copy of the reference (gold) file "
                    f"{describe_gold(gold)}: {inside} holds the same lines once decompressed "
                    "and normalised (line endings, spaces, blank lines, order); gold files are "
                    "never given to participants."
                )
    return None


def data_copying(
    session: Session, store: Store, task: Task, role: str, data: bytes
) -> TaskDataFile | None:
    """Return a data file of the task that copies ``data``, a new version of a reference file."""
    if not is_secret(role):
        return None
    gold = frozenset(p.value for p in fingerprints(io.BytesIO(data), limit=INSPECT_LIMIT))
    sha = hashlib.sha256(data).hexdigest()
    rows = session.scalars(
        select(TaskDataFile)
        .join(Phase, TaskDataFile.phase_id == Phase.id)
        .join(Subtask, Phase.subtask_id == Subtask.id)
        .where(Subtask.task_id == task.id)
        .order_by(TaskDataFile.id)
    )
    for row in rows:
        if row.sha256 == sha:
            return row
        try:
            prints = _stored_prints(store, row.storage_key, row.sha256)
        except UNREADABLE:
            # Accepted before files were read at all (older rules); it cannot be compared.
            continue
        if gold & prints:
            return row
    return None


def _record_file(
    session: Session,
    actor: str,
    action: str,
    data: TaskDataFile,
    subtask: Subtask,
    phase: Phase,
    now: datetime,
    **facts: Any,
) -> None:
    """Audit a change to a data file of a phase, with the facts of the file."""
    record(
        session,
        actor,
        action,
        task=subtask.task.slug,
        subtask=subtask.slug,
        at=now,
        phase=phase.name,
        file_id=data.id,
        **facts,
    )


def add_data_file(
    session: Session,
    store: Store,
    subtask: Subtask,
    phase_name: str,
    stream: IO[bytes],
    filename: str,
    *,
    title: str = "",
    actor: str,
    now: datetime,
) -> TaskDataFile:
    """Store a file for participants of a phase; refuse one that copies a gold file of the task."""
    phase = _phase(session, subtask, phase_name.strip())
    name = safe_filename(filename)
    title = (title.strip() or name)[:255]
    with store.staged(stream) as staged:
        problem = gold_copy(
            store, task_gold(session, subtask.task), staged.path, staged.sha256, filename
        )
        if problem is not None:
            raise InvalidInput(problem)
        key, sha = store.keep(staged)
    size = store.size(key)
    data = TaskDataFile(
        phase_id=phase.id,
        title=title,
        filename=name,
        storage_key=key,
        sha256=sha,
        size=size,
        created_by=actor,
        created_at=now,
    )
    session.add(data)
    session.flush()
    _record_file(
        session,
        actor,
        "add-data-file",
        data,
        subtask,
        phase,
        now,
        filename=name,
        title=title,
        sha256=sha,
        size=size,
    )
    return data


def data_files(session: Session, subtask: Subtask) -> list[TaskDataFile]:
    """Return every data file of a subtask's phases, by phase and upload order."""
    return list(
        session.scalars(
            select(TaskDataFile)
            .join(Phase, TaskDataFile.phase_id == Phase.id)
            .where(Phase.subtask_id == subtask.id)
            .options(selectinload(TaskDataFile.phase))
            .order_by(Phase.id, TaskDataFile.id)
        )
    )


def _started(phase: Phase, now: datetime) -> bool:
    return phase.starts_at is None or phase.starts_at <= now


def _file_of(session: Session, subtask: Subtask, file_id: int) -> TaskDataFile:
    data = get_row(session, TaskDataFile, file_id)
    if data is None or data.phase.subtask_id != subtask.id:
        raise NotFound(f"No data file {file_id} in subtask {subtask.slug}.")
    return data


def delete_data_file(
    session: Session, subtask: Subtask, file_id: int, *, actor: str, now: datetime
) -> TaskDataFile:
    """Remove a data file from its phase (the stored bytes stay: other rows may share them)."""
    data = _file_of(session, subtask, file_id)
    _record_file(
        session,
        actor,
        "delete-data-file",
        data,
        subtask,
        data.phase,
        now,
        filename=data.filename,
        sha256=data.sha256,
    )
    session.delete(data)
    return data


def may_download(user: User | None) -> bool:
    """Return whether a user may download task data at all: organizers and approved teams' members."""
    if user is None:
        return False
    if user.is_organizer:
        return True
    team = user.team
    return team is not None and team.approved and team.withdrawn_at is None


def available_files(
    session: Session, subtask: Subtask, user: User | None, now: datetime
) -> list[TaskDataFile]:
    """Return the files a user may see listed: of started phases (organizers: all), else none."""
    if not may_download(user):
        return []
    assert user is not None
    return [f for f in data_files(session, subtask) if user.is_organizer or _started(f.phase, now)]


@dataclass(frozen=True)
class Download:
    """A data file a user may fetch, and the task's terms if they must accept them first."""

    file: TaskDataFile
    terms: str


def terms_accepted(session: Session, user: User, task: Task) -> bool:
    """Return whether the user accepted the task's terms."""
    return (
        session.scalar(
            select(TermsAcceptance.id).where(
                TermsAcceptance.user_id == user.id, TermsAcceptance.task_id == task.id
            )
        )
        is not None
    )


def download(
    session: Session, subtask: Subtask, file_id: int, user: User, now: datetime
) -> Download:
    """Return a file the user may download; ``terms`` is set while they have not accepted them.

    A file of a phase that has not started answers like a missing one, to anyone but organizers.
    """
    if not may_download(user):
        raise Forbidden(
            "Task data is for members of approved teams; ask your captain or the organizers."
        )
    data = _file_of(session, subtask, file_id)
    if not user.is_organizer and not _started(data.phase, now):
        raise NotFound(f"No data file {file_id} in subtask {subtask.slug}.")
    terms = definition_of(subtask.task).terms
    if user.is_organizer or not terms or terms_accepted(session, user, subtask.task):
        terms = ""
    return Download(data, terms)


def accept_terms(session: Session, user: User, task: Task, now: datetime) -> None:
    """Record that the user accepts the task's terms (accepting twice changes nothing)."""
    if not terms_accepted(session, user, task):
        session.add(TermsAcceptance(user_id=user.id, task_id=task.id, accepted_at=now))
