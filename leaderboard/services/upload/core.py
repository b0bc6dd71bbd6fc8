"""Tasks from uploaded definition files: stage, check, preview, then create or edit a task.

Uploads are staged in a folder of the instance under a random token and checked exactly as
``leaderboard add-task`` reads a definition and its files (``tasks.checking``); nothing reaches
the database or the file store until the organizer confirms the preview.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import shutil
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.config import Settings
from leaderboard.formats.archive import ArchiveError, ArchiveLimits, read_archive
from leaderboard.formats.issues import quoted
from leaderboard.models import Task
from leaderboard.services.common.errors import Conflict, DomainError, NotFound
from leaderboard.services.gold.core import store_gold
from leaderboard.services.jobs.analyses import request_job
from leaderboard.services.tasks.catalog import current_files, install_definition, resolve
from leaderboard.services.tasks.data import data_copying
from leaderboard.states import JobPurpose
from leaderboard.storage import Store
from leaderboard.tasks.checking import Problem, check_task_folder
from leaderboard.tasks.definition import TaskDefinition, subtask_heading
from leaderboard.tasks.families import get_family
from leaderboard.tasks.families.base import Context

#: The definition's name in a bundle, and beside the files of the two-field form.
DEFINITION_NAME = "task.toml"
#: How long a staged upload waits for its confirmation.
STAGED_SECONDS = 3600
#: The most files one upload may hold (a bundle's members, or the form's files).
MAX_FILES = 64
#: A staged upload's token: its owner (one organizer session) and its own random part.
_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,64}\.[A-Za-z0-9_-]{20,64}")
_OWNER = re.compile(r"[A-Za-z0-9_-]{16,64}")
#: The suffix of a staged folder taken by a confirmation (renamed, so only one may take it).
CLAIMED = ".claimed"
_BAD_NAME = re.compile(r"[\x00-\x1f\\/:]")


class TaskRefused(DomainError):
    """An uploaded task was refused; ``problems`` lists every problem found."""

    status = 422

    def __init__(self, problems: list[Problem]) -> None:
        count = len(problems)
        super().__init__(f"The task was refused: {count} problem{'s' if count != 1 else ''}.")
        self.problems = problems


@dataclass(frozen=True)
class UploadedFile:
    """A file as uploaded: its name on the uploader's machine and its bytes."""

    name: str
    data: bytes


@dataclass(frozen=True)
class SetPreview:
    """An evaluation set and its reference files (role, file name)."""

    slug: str
    title: str
    files: list[tuple[str, str]]


@dataclass(frozen=True)
class SubtaskPreview:
    """A subtask: its sets and its measures as (key, label, official)."""

    slug: str
    heading: str
    default_set: str
    sets: list[SetPreview]
    measures: list[tuple[str, str, bool]]


@dataclass(frozen=True)
class TaskPreview:
    """What confirming would create (or change, for an edit)."""

    slug: str
    title: str
    family: str
    table_style: str
    subtasks: list[SubtaskPreview]
    changes: list[str] = field(default_factory=list)


def staging_root(settings: Settings) -> Path:
    """Return the folder where uploads wait for their confirmation."""
    return settings.instance_dir / "staged-tasks"


def _limits(settings: Settings) -> ArchiveLimits:
    cap = settings.max_decompressed_bytes
    return ArchiveLimits(max_members=MAX_FILES, max_member_bytes=cap, max_total_bytes=cap)


def new_owner() -> str:
    """Return a random name for the staged uploads of one organizer session."""
    return secrets.token_urlsafe(12)


def stage_upload(
    settings: Settings,
    *,
    owner: str,
    bundle: UploadedFile | None,
    definition: UploadedFile | None,
    files: list[UploadedFile],
) -> str:
    """Write an upload (a bundle, or a definition and its files) to a new staging folder.

    Return the folder's token; raise TaskRefused, with nothing kept, if the upload is unusable.
    The owner's earlier staged uploads are removed first: one session keeps one staged upload.
    """
    if not _OWNER.fullmatch(owner):
        raise ValueError("not a staging owner")
    root = staging_root(settings)
    sweep(root)
    for old in root.glob(f"{owner}.*") if root.is_dir() else ():
        if not old.name.endswith(CLAIMED):
            shutil.rmtree(old, ignore_errors=True)
    members = _members(settings, bundle, definition, files)
    token = f"{owner}.{secrets.token_urlsafe(24)}"
    folder = root / token
    for rel, data in members.items():
        target = folder / rel
        try:
            _private_dirs(target.parent)
            # The instance folder's files are the operator's alone (0600, folders 0700).
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
        except OSError as exc:
            # E.g. a member named like another member's folder ("a" and "a/b").
            shutil.rmtree(folder, ignore_errors=True)
            raise TaskRefused(
                [Problem(_shown(rel), f"cannot be stored ({exc.strerror or exc})")]
            ) from None
    return token


def _private_dirs(folder: Path) -> None:
    """Create ``folder`` and its missing parents, each readable by the owner only."""
    missing = []
    while not folder.is_dir():
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir(mode=0o700)


def _members(
    settings: Settings,
    bundle: UploadedFile | None,
    definition: UploadedFile | None,
    files: list[UploadedFile],
) -> dict[str, bytes]:
    """Return the upload's files by relative path, the definition as ``task.toml`` in them."""
    if bundle is not None and (definition is not None or files):
        raise TaskRefused(
            [Problem("bundle", "send either a bundle or a definition with its files, not both")]
        )
    if bundle is not None:
        try:
            members = read_archive(bundle.data, limits=_limits(settings), keep_dirs=True)
        except ArchiveError as exc:
            raise TaskRefused([Problem(_shown(bundle.name), str(exc))]) from None
        found = [rel for rel in members if rel.rsplit("/", 1)[-1] == DEFINITION_NAME]
        if len(found) != 1:
            said = "holds no" if not found else "holds more than one"
            raise TaskRefused(
                [
                    Problem(
                        _shown(bundle.name), f"the bundle {said} definition file {DEFINITION_NAME}"
                    )
                ]
            )
        # The definition's folder becomes the staging folder: its names resolve as on disk.
        prefix = found[0][: -len(DEFINITION_NAME)]
        return {rel[len(prefix) :]: data for rel, data in members.items() if rel.startswith(prefix)}
    if definition is None:
        raise TaskRefused(
            [Problem("definition", "send a bundle (a zip), or a definition file with its files")]
        )
    if len(files) > MAX_FILES:
        raise TaskRefused([Problem("files", f"send at most {MAX_FILES} files (or a zip bundle)")])
    out = {DEFINITION_NAME: definition.data}
    problems: list[Problem] = []
    total = len(definition.data)
    for f in files:
        name = f.name.replace("\\", "/").rsplit("/", 1)[-1]
        total += len(f.data)
        if not name or name in (".", "..") or _BAD_NAME.search(name):
            problems.append(Problem(_shown(f.name), "is not a usable file name"))
        elif name in out:
            problems.append(
                Problem(
                    _shown(f.name), "two uploaded files share this name (or it is the definition's)"
                )
            )
        else:
            out[name] = f.data
    if total > settings.max_decompressed_bytes:
        problems.append(
            Problem(
                "files", f"the files add up to more than {settings.max_decompressed_bytes:,} bytes"
            )
        )
    if problems:
        raise TaskRefused(problems)
    return out


def _shown(name: str) -> str:
    """Return an uploaded file's name as problems show it (short, one line)."""
    return re.sub(r"[\x00-\x1f]", "?", name)[:200] or "(no name)"


def _folder(settings: Settings, token: str) -> Path:
    """Return a staged upload's folder; raise NotFound if the token names none (or expired)."""
    folder = staging_root(settings) / token
    if not _TOKEN.fullmatch(token) or not folder.is_dir():
        raise NotFound("The uploaded task expired or was already added; upload it again.")
    if time.time() - folder.stat().st_mtime > STAGED_SECONDS:
        discard(settings, token)
        raise NotFound("The uploaded task expired (after an hour); upload it again.")
    return folder


def check_staged(settings: Settings, token: str, folder: Path | None = None) -> TaskDefinition:
    """Return the staged definition checked with all its files; raise TaskRefused otherwise."""
    folder = folder or _folder(settings, token)
    checked = check_task_folder(folder / DEFINITION_NAME, folder, settings.max_decompressed_bytes)
    if checked.definition is None:
        raise TaskRefused(checked.problems)
    return checked.definition


def claim(settings: Settings, token: str) -> Path:
    """Take a staged upload for its confirmation; return its folder, renamed so no other can.

    Raise Conflict when another confirmation took it (or it was cancelled): of several
    confirmations of one preview exactly one installs it.
    """
    folder = staging_root(settings) / token
    if not _TOKEN.fullmatch(token):
        raise NotFound("The uploaded task expired or was already added; upload it again.")
    try:
        expired = time.time() - folder.stat().st_mtime > STAGED_SECONDS
    except OSError:
        expired = False
    if expired:
        discard(settings, token)
        raise NotFound("The uploaded task expired (after an hour); upload it again.")
    claimed = folder.with_name(folder.name + CLAIMED)
    try:
        # A rename is atomic: the first confirmation moves the folder, the others find none.
        os.rename(folder, claimed)
    except OSError:
        raise Conflict(
            "This upload was already confirmed or cancelled; upload the task again."
        ) from None
    return claimed


def discard(settings: Settings, token: str) -> None:
    """Remove a staged upload (after its confirmation, or when it was refused)."""
    if _TOKEN.fullmatch(token):
        shutil.rmtree(staging_root(settings) / token, ignore_errors=True)
        shutil.rmtree(staging_root(settings) / (token + CLAIMED), ignore_errors=True)


def sweep(root: Path) -> None:
    """Remove staged uploads older than an hour."""
    if not root.is_dir():
        return
    cutoff = time.time() - STAGED_SECONDS
    for folder in root.iterdir():
        try:
            old = folder.stat().st_mtime < cutoff
        except OSError:
            continue
        if old:
            shutil.rmtree(folder, ignore_errors=True)


def preview_of(definition: TaskDefinition, changes: list[str] | None = None) -> TaskPreview:
    """Return what a checked definition holds: subtasks, sets, measures and table style."""
    family = get_family(definition.family)
    subtasks = []
    for sd in definition.subtasks:
        specs = family.measure_specs(Context(definition, sd, sd.default_set))
        subtasks.append(
            SubtaskPreview(
                slug=sd.slug,
                heading=subtask_heading(sd.slug, sd.title),
                default_set=sd.default_set,
                sets=[SetPreview(s.slug, s.title, sorted(s.files.items())) for s in sd.sets],
                measures=[(m.key, m.label, m.official) for m in specs],
            )
        )
    return TaskPreview(
        slug=definition.slug,
        title=definition.title,
        family=definition.family,
        table_style=family.table_style(definition),
        subtasks=subtasks,
        changes=changes or [],
    )


def refuse_existing(session: Session, definition: TaskDefinition) -> None:
    """Raise TaskRefused if a task with the definition's slug is hosted already."""
    if session.scalar(select(Task.id).where(Task.slug == definition.slug)) is not None:
        raise TaskRefused(
            [
                Problem(
                    DEFINITION_NAME,
                    f"a task {quoted(definition.slug)} exists already; edit its definition "
                    "from its organizer page instead",
                    key="slug",
                )
            ]
        )


def create_task(
    session: Session, store: Store, settings: Settings, token: str, *, actor: str
) -> Task:
    """Check the staged upload again and host it as ``leaderboard add-task`` does.

    The upload is claimed first and removed whatever the outcome.
    """
    folder = claim(settings, token)
    try:
        definition = check_staged(settings, token, folder)
        refuse_existing(session, definition)
        return install_definition(session, store, definition, actor=actor)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@dataclass(frozen=True)
class _FileChange:
    subtask: str
    set_slug: str
    role: str
    data: bytes
    filename: str


def _removed(what: str, may: str, key: str) -> Problem:
    """Return the problem of an edit that removes what it may only add or replace."""
    return Problem(
        DEFINITION_NAME, f"{what} is missing; an edit may {may}, not remove them", key=key
    )


def _edit_plan(
    session: Session, store: Store, task_slug: str, definition: TaskDefinition
) -> tuple[Task, list[str], list[_FileChange]]:
    """Return the task, what an edit changes (in words) and its new reference files.

    An edit keeps the task's slug and family and every subtask, set and reference file it has
    (new ones may be added); everything else may change. Raise TaskRefused otherwise.
    """
    task = session.scalar(select(Task).where(Task.slug == task_slug))
    if task is None:
        raise NotFound(f"No task {quoted(task_slug)}.")
    problems: list[Problem] = []
    for key, new, old, what in (
        ("slug", definition.slug, task.slug, "the task's slug"),
        ("family", definition.family, task.family, "the family"),
    ):
        if new != old:
            problems.append(
                Problem(
                    DEFINITION_NAME,
                    f"is {quoted(new)}; an edit keeps {what} {quoted(old)}",
                    key=key,
                )
            )
    changes: list[str] = []
    files: list[_FileChange] = []
    for st in task.subtasks:
        sd = definition.subtask(st.slug)
        if sd is None:
            problems.append(_removed(f"subtask {quoted(st.slug)}", "add subtasks", "subtasks"))
            continue
        for es in st.eval_sets:
            setdef = sd.set(es.slug)
            if setdef is None:
                problems.append(
                    _removed(
                        f"set {quoted(es.slug)} of subtask {quoted(st.slug)}",
                        "add sets",
                        "subtasks.sets",
                    )
                )
                continue
            current = current_files(session, es)
            for role in sorted(set(current) - set(setdef.files)):
                problems.append(
                    _removed(
                        f"the {role} file of subtask {st.slug} ({es.slug})",
                        "replace reference files",
                        f"subtasks.sets.{role}",
                    )
                )
            for role, rel in sorted(setdef.files.items()):
                path = definition.file_path(rel)
                data = path.read_bytes()
                if role in current and hashlib.sha256(data).hexdigest() == current[role].sha256:
                    continue
                leak = _copied_data(session, store, task, role, rel, data)
                if leak is not None:
                    problems.append(leak)
                    continue
                if role not in current:
                    continue
                version = current[role].version + 1
                changes.append(
                    f"subtask {st.slug} ({es.slug}): new {role} file {rel} "
                    f"(version {version} or later); its runs are re-scored"
                )
                files.append(_FileChange(st.slug, es.slug, role, data, path.name))
    known = {st.slug: {es.slug for es in st.eval_sets} for st in task.subtasks}
    # A new set's reference files are refused as a changed one's are (set-gold, data add).
    for sd in definition.subtasks:
        for setdef in sd.sets:
            if setdef.slug in known.get(sd.slug, ()):
                continue
            for role, rel in sorted(setdef.files.items()):
                leak = _copied_data(
                    session, store, task, role, rel, definition.file_path(rel).read_bytes()
                )
                if leak is not None:
                    problems.append(leak)
    if problems:
        raise TaskRefused(problems)
    for sd in definition.subtasks:
        if sd.slug not in known:
            changes.append(f"new subtask {sd.slug} ({', '.join(s.slug for s in sd.sets)})")
        else:
            changes.extend(
                f"subtask {sd.slug}: new set {s.slug}"
                for s in sd.sets
                if s.slug not in known[sd.slug]
            )
    if definition.sha256 != task.definition_sha256:
        changes.insert(0, "the definition changes; every set's runs are re-scored")
    elif not files and not changes:
        raise TaskRefused(
            [Problem(DEFINITION_NAME, "the definition and its files are unchanged; nothing to do")]
        )
    return task, changes, files


def _copied_data(
    session: Session, store: Store, task: Task, role: str, rel: str, data: bytes
) -> Problem | None:
    """Return the problem of a reference file that copies a data file participants may download."""
    leak = data_copying(session, store, task, role, data)
    if leak is None:
        return None
    return Problem(
        rel,
        f"is the text of the data file {quoted(leak.filename)} that participants may "
        "download; delete that data file first",
    )


def edit_changes(
    session: Session, store: Store, task_slug: str, definition: TaskDefinition
) -> list[str]:
    """Return what editing a task with this definition would change; raise TaskRefused if barred."""
    return _edit_plan(session, store, task_slug, definition)[1]


def edit_task(
    session: Session,
    store: Store,
    settings: Settings,
    token: str,
    task_slug: str,
    *,
    actor: str,
    now: datetime,
) -> tuple[Task, list[tuple[str, str, int]]]:
    """Apply a staged definition to a hosted task; queue the re-scoring of the sets it changes.

    Changed reference files become new versions as ``set-gold`` makes them; every check is
    done before the first write. Return the task and the queued jobs as (subtask, set, job id).
    """
    folder = claim(settings, token)
    try:
        return _apply_edit(session, store, settings, folder, token, task_slug, actor, now)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _apply_edit(
    session: Session,
    store: Store,
    settings: Settings,
    folder: Path,
    token: str,
    task_slug: str,
    actor: str,
    now: datetime,
) -> tuple[Task, list[tuple[str, str, int]]]:
    """Apply the claimed staged definition in ``folder`` (see ``edit_task``)."""
    definition = check_staged(settings, token, folder)
    task, _changes, files = _edit_plan(session, store, task_slug, definition)
    rescored = {
        (st.slug, es.slug)
        for st in task.subtasks
        for es in st.eval_sets
        if definition.sha256 != task.definition_sha256
    }
    task = install_definition(session, store, definition, actor=actor)
    for change in files:
        target = resolve(session, task_slug, change.subtask, change.set_slug)
        store_gold(
            session, store, settings, target, change.role, change.data, change.filename, actor=actor
        )
        rescored.add((change.subtask, change.set_slug))
    jobs = []
    for subtask, set_slug in sorted(rescored):
        target = resolve(session, task_slug, subtask, set_slug)
        if not current_files(session, target.eval_set):
            continue
        job = request_job(session, target, JobPurpose.RESCORE, actor=actor, now=now)
        jobs.append((subtask, set_slug, job.id))
    return task, jobs
