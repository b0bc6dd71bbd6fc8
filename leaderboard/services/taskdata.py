"""Task data files of a subtask's phases: attach, list, delete, and hand them to participants."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePosixPath, PureWindowsPath
from typing import IO

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from leaderboard.formats.issues import shown
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
from leaderboard.services.audit import record
from leaderboard.services.catalog import definition_of
from leaderboard.services.errors import Forbidden, InvalidInput, NotFound
from leaderboard.storage import FileStore

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
        raise NotFound(f"No phase {shown(name)} in subtask {subtask.slug}; its phases: {known}.")
    return phase


def _gold_hashes(session: Session, task: Task) -> set[str]:
    """Return the SHA-256 of every reference file, current or old, of every set of the task."""
    return set(
        session.scalars(
            select(GoldFile.sha256)
            .join(EvalSet, GoldFile.eval_set_id == EvalSet.id)
            .join(Subtask, EvalSet.subtask_id == Subtask.id)
            .where(Subtask.task_id == task.id)
        )
    )


def add_data_file(
    session: Session,
    store: FileStore,
    subtask: Subtask,
    phase_name: str,
    stream: IO[bytes],
    filename: str,
    *,
    title: str = "",
    actor: str,
    now: datetime,
) -> TaskDataFile:
    """Store a file for participants of a phase; refuse one whose bytes are a reference file."""
    phase = _phase(session, subtask, phase_name.strip())
    name = safe_filename(filename)
    title = (title.strip() or name)[:255]
    key, sha = store.put_stream(stream)
    # Content-addressed: bytes equal to a gold file share its object, so nothing is left over.
    if sha in _gold_hashes(session, subtask.task):
        raise InvalidInput(
            f"The file {shown(filename)} has the same bytes as a reference (gold) file of "
            f"task {subtask.task.slug}; gold files are never given to participants."
        )
    size = store.path(key).stat().st_size
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
    record(
        session,
        actor,
        "add-data-file",
        task=subtask.task.slug,
        subtask=subtask.slug,
        at=now,
        phase=phase.name,
        file_id=data.id,
        filename=name,
        title=title,
        sha256=sha,
        size=size,
    )
    session.commit()
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
    data = session.get(TaskDataFile, file_id) if 0 < file_id < 2**63 else None
    if data is None or data.phase.subtask_id != subtask.id:
        raise NotFound(f"No data file {file_id} in subtask {subtask.slug}.")
    return data


def delete_data_file(
    session: Session, subtask: Subtask, file_id: int, *, actor: str, now: datetime
) -> TaskDataFile:
    """Remove a data file from its phase (the stored bytes stay: other rows may share them)."""
    data = _file_of(session, subtask, file_id)
    record(
        session,
        actor,
        "delete-data-file",
        task=subtask.task.slug,
        subtask=subtask.slug,
        at=now,
        phase=data.phase.name,
        file_id=data.id,
        filename=data.filename,
        sha256=data.sha256,
    )
    session.delete(data)
    session.commit()
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
        session.commit()
