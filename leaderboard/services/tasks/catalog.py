"""Install task definitions with their reference files, and resolve task/subtask/set names."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NoReturn

from sqlalchemy import String, bindparam, func, select
from sqlalchemy.orm import Session

from leaderboard.formats.issues import quoted
from leaderboard.models import EvalSet, GoldFile, Phase, Subtask, Task
from leaderboard.services.common.audit import record
from leaderboard.services.common.errors import InvalidInput, NotFound
from leaderboard.services.common.revisions import bump
from leaderboard.services.tasks.deletion import deleted_slugs, forget_deletion
from leaderboard.storage import Store
from leaderboard.targets import Target
from leaderboard.tasks.definition import TaskDefinition, preset_paths, slug_like
from leaderboard.tasks.families import get_family
from leaderboard.tasks.families.base import Context, Family
from leaderboard.tasks.loading import load_definition_file, stored_definition
from leaderboard.tasks.splitting import SetSplit, SplitRefused, split_set


def install_definition(
    session: Session,
    store: Store,
    definition: TaskDefinition,
    *,
    actor: str,
    open_from: datetime | None = None,
) -> Task:
    """Create or update a task from a checked definition; safe to run twice.

    Reference files are stored only where a set has no current file of that role yet, so
    re-running never undoes an organizer's later gold correction. A new subtask has no phase,
    so it is closed to participants; with ``open_from`` (the presets, whose gold is public)
    each set of a new subtask gets an open post-evaluation phase from then on. Only a new
    subtask does: a phase the organizers later change or delete is never made again.
    """
    task = session.scalar(select(Task).where(Task.slug == definition.slug))
    created = task is None
    if task is None:
        # Added again on purpose: a later ``init`` keeps it like any other task.
        forget_deletion(session, definition.slug)
        task = Task(slug=definition.slug)
        session.add(task)
    # Re-installing the same definition (``leaderboard init`` at every start) is no event.
    changed = created or task.definition_sha256 != definition.sha256
    task.title = definition.title
    task.family = definition.family
    task.definition = definition.raw
    task.definition_sha256 = definition.sha256
    existing = {st.slug: st for st in task.subtasks}
    new_subtasks: list[Subtask] = []
    for pos, sd in enumerate(definition.subtasks):
        st = existing.get(sd.slug)
        if st is None:
            st = Subtask(slug=sd.slug, title=sd.title, position=pos, default_set=sd.default_set)
            task.subtasks.append(st)
            new_subtasks.append(st)
        st.title, st.position, st.default_set = sd.title, pos, sd.default_set
        sets = {es.slug: es for es in st.eval_sets}
        for spos, setdef in enumerate(sd.sets):
            es = sets.get(setdef.slug)
            if es is None:
                changed = True
                es = EvalSet(slug=setdef.slug, title=setdef.title, position=spos)
                st.eval_sets.append(es)
                session.flush()
            es.title, es.position = setdef.title, spos
            current = {g.role for g in es.gold_files if g.active_key is not None}
            for role, rel in setdef.files.items():
                if role in current:
                    continue
                changed = True
                path = definition.file_path(rel)
                key, sha = store.put(path.read_bytes())
                session.add(
                    GoldFile(
                        eval_set=es,
                        role=role,
                        version=1,
                        sha256=sha,
                        storage_key=key,
                        filename=path.name,
                        active_key=f"{es.id}:{role}",
                        created_by=actor,
                    )
                )
    session.flush()
    if open_from is not None:
        for st in new_subtasks:
            _open_post_evaluation(session, definition.slug, st, open_from, actor=actor)
    if changed or new_subtasks:
        bump(session, *(es.id for st in task.subtasks for es in st.eval_sets))
        record(
            session,
            actor,
            "install-task" if created else "update-task",
            task=definition.slug,
            definition_sha256=definition.sha256,
        )
    return task


#: Name of the open phase a preset's subtask is installed with, on its default set; its other
#: sets' phases add "-<set>".
POST_EVALUATION = "post-evaluation"

#: When each preset's post-evaluation opens: after its original evaluation ended (SemEval-2016
#: evaluation closed on 31 January 2016; TREC CAR 2017 presented its results in November 2017).
POST_EVALUATION_STARTS = {
    "semeval2016-task1": datetime(2016, 2, 1, tzinfo=UTC),
    "semeval2016-task3": datetime(2016, 2, 1, tzinfo=UTC),
    "trec-car-2017": datetime(2017, 12, 1, tzinfo=UTC),
}


def post_evaluation_name(subtask: Subtask, set_slug: str) -> str:
    """Return the name of a preset's post-evaluation phase on one of its subtask's sets."""
    return POST_EVALUATION if set_slug == subtask.default_set else f"{POST_EVALUATION}-{set_slug}"


def _open_post_evaluation(
    session: Session, task_slug: str, subtask: Subtask, start: datetime, *, actor: str
) -> None:
    """Give each set of a new subtask an open phase: no deadline, no quota, results visible."""
    for es in subtask.eval_sets:
        name = post_evaluation_name(subtask, es.slug)
        session.add(Phase(subtask_id=subtask.id, eval_set_id=es.id, name=name, starts_at=start))
        record(
            session,
            actor,
            "create-phase",
            task=task_slug,
            subtask=subtask.slug,
            phase=name,
            set=es.slug,
            starts_at=start.isoformat(),
            ends_at=None,
            results="visible",
            names="public",
        )
    session.flush()


def install_presets(session: Session, store: Store, *, actor: str = "init") -> list[str]:
    """Install every bundled preset; return their slugs.

    A preset's subtask is installed with an open post-evaluation phase on each of its sets
    (its gold has been public for years); installing again leaves existing subtasks' phases
    as the organizers left them, a hidden preset hidden, and a deleted one deleted.
    """
    slugs = []
    deleted = deleted_slugs(session)
    for path in preset_paths():
        definition = load_definition_file(path)
        if definition.slug in deleted:
            continue
        start = POST_EVALUATION_STARTS.get(definition.slug, datetime(2000, 1, 1, tzinfo=UTC))
        install_definition(session, store, definition, actor=actor, open_from=start)
        slugs.append(definition.slug)
    return slugs


def list_tasks(session: Session, *, with_hidden: bool = False) -> list[Task]:
    """Return the hosted tasks by slug; hidden ones only ``with_hidden`` (for organizers)."""
    query = select(Task).order_by(Task.slug)
    if not with_hidden:
        query = query.where(Task.hidden.is_(False))
    return list(session.scalars(query))


def definition_of(task: Task) -> TaskDefinition:
    """Return the checked definition stored with a task."""
    return stored_definition(task.definition, task.definition_sha256)


def resolve(
    session: Session, task_slug: str, subtask_slug: str, set_slug: str | None = None
) -> Target:
    """Return the target named by slugs; the set defaults to the subtask's default set.

    One query finds the task, subtask and set with the set's current reference files (every
    upload resolves its target); only a name that matches nothing takes the slower path that
    says which part is unknown.
    """
    names = {"task": task_slug, "subtask": subtask_slug, "set": set_slug or None}
    if not all(slug_like(name) for name in names.values() if name is not None):
        _refuse_unknown(session, task_slug, subtask_slug, set_slug)
    rows = session.execute(_TARGET, names).all()
    if not rows:
        _refuse_unknown(session, task_slug, subtask_slug, set_slug)
    task, subtask, eval_set, _ = rows[0]
    files = {g.role: g for *_, g in rows if g is not None}
    definition = definition_of(task)
    sd = definition.subtask(subtask.slug)
    if sd is None:
        raise NotFound(f"Subtask {quoted(subtask_slug)} is not in the task definition.")
    return Target(
        task,
        subtask,
        eval_set,
        definition,
        sd,
        get_family(definition.family),
        frozenset(files),
        files,
    )


# Built once: every upload and page resolves its target.
_TARGET = (
    select(Task, Subtask, EvalSet, GoldFile)
    .join(Subtask, Subtask.task_id == Task.id)
    .join(EvalSet, EvalSet.subtask_id == Subtask.id)
    .outerjoin(GoldFile, (GoldFile.eval_set_id == EvalSet.id) & GoldFile.active_key.is_not(None))
    .where(
        Task.slug == bindparam("task"),
        Subtask.slug == bindparam("subtask"),
        EvalSet.slug == func.coalesce(bindparam("set", type_=String), Subtask.default_set),
    )
)


def _refuse_unknown(
    session: Session, task_slug: str, subtask_slug: str, set_slug: str | None
) -> NoReturn:
    """Raise NotFound naming the part of a task/subtask/set name that matches nothing."""
    task = (
        session.scalar(select(Task).where(Task.slug == task_slug)) if slug_like(task_slug) else None
    )
    if task is None:
        raise NotFound(f"No task {quoted(task_slug)}.")
    subtask = next((s for s in task.subtasks if s.slug == subtask_slug), None)
    if subtask is None:
        raise NotFound(f"Task {quoted(task_slug)} has no subtask {quoted(subtask_slug)}.")
    wanted = set_slug or subtask.default_set
    known = ", ".join(s.slug for s in subtask.eval_sets)
    raise NotFound(
        f"Subtask {quoted(subtask_slug)} has no evaluation set {quoted(wanted)} (known: {known})."
    )


def current_files(session: Session, eval_set: EvalSet) -> dict[str, GoldFile]:
    """Return the current reference file of each role of a set."""
    rows = session.scalars(
        select(GoldFile).where(
            GoldFile.eval_set_id == eval_set.id, GoldFile.active_key.is_not(None)
        )
    )
    return {g.role: g for g in rows}


class _GoldCache:
    """A small LRU of parsed gold objects keyed by the hashes of their files."""

    def __init__(self, size: int = 32) -> None:
        self.size = size
        self._items: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> Any:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        return None

    def put(self, key: tuple[Any, ...], value: Any) -> None:
        with self._lock:
            self._items[key] = value
            while len(self._items) > self.size:
                self._items.popitem(last=False)


_cache = _GoldCache()


@dataclass(frozen=True)
class LoadedSet:
    """A set's parsed gold, the file rows it came from and, when the set is split, its parts."""

    gold: Any
    files: dict[str, GoldFile]
    split: SetSplit | None

    def gold_of(self, part: str) -> Any:
        """Return the parsed gold of one part of the set ("all": the whole set's)."""
        if part == "all" or self.split is None:
            return self.gold
        return self.split.golds[part].gold


def load_set(
    session: Session,
    store: Store,
    target: Target,
    max_decompressed: int = 1 << 30,
    *,
    fresh: bool = True,
) -> LoadedSet:
    """Return the parsed gold of a target's set, the file rows it came from and its split.

    With ``fresh=False`` the files read when the target was resolved are used, saving a query
    where nothing in the request can have changed them (an upload); the default reads again.
    """
    files = dict(target.files) if not fresh else current_files(session, target.eval_set)
    if "gold" not in files and target.family.file_roles.get("gold"):
        raise NotFound(f"Set {target.eval_set.slug!r} has no gold file yet.")
    # Parsed gold depends on the definition (e.g. a TREC variant's threshold) and the set's
    # options as much as on the files: all of them are part of the key.
    key = (
        target.definition.family,
        target.definition.sha256,
        target.subtask.slug,
        target.eval_set.slug,
        tuple(sorted((r, g.sha256) for r, g in files.items())),
    )
    cached = _cache.get(key)
    if cached is None:
        contents = {role: store.read(g.storage_key) for role, g in files.items()}
        ctx = target.context(max_decompressed)
        gold = target.family.load_gold(contents, ctx)
        setdef = target.subtask_def.set(target.eval_set.slug)
        split = None
        if setdef is not None and setdef.split is not None:
            # The split was checked when the definition was installed; a gold replaced since
            # may drop a listed unit, which refuses the set's uploads until it is fixed.
            try:
                split = split_set(target.family, gold, setdef.split, contents)
            except SplitRefused as exc:
                raise InvalidInput(
                    f"Set {target.eval_set.slug!r}'s public/private split no longer fits its "
                    f"gold: {exc}"
                ) from None
        cached = (gold, split)
        _cache.put(key, cached)
    gold, split = cached
    return LoadedSet(gold, files, split)


def part_gold(session: Session, store: Store, target: Target, part: str) -> Any:
    """Return the parsed gold of one part of the target's set ("all": the whole set's)."""
    return load_set(session, store, target).gold_of(part)


def _default_contexts(session: Session) -> Iterator[tuple[str, Family, Context]]:
    """Yield, per hosted subtask, its "task/subtask" name, family and default set's context."""
    for task in list_tasks(session):
        definition = definition_of(task)
        family = get_family(definition.family)
        for sub in definition.subtasks:
            yield f"{task.slug}/{sub.slug}", family, Context(definition, sub, sub.default_set)


def upload_fields_by_subtask(session: Session) -> dict[str, list[tuple[str, str]]]:
    """Return, per hosted "task/subtask", the upload fields of its default set."""
    return {
        name: [(f.name, f.description) for f in family.upload_fields(ctx)]
        for name, family, ctx in _default_contexts(session)
    }


def measures_by_subtask(session: Session) -> dict[str, list[dict[str, object]]]:
    """Return, per hosted "task/subtask", its default set's measure columns from the registry."""
    return {
        name: [
            {
                "key": m.key,
                "label": m.label,
                "group": m.group,
                "official": m.official,
                "direction": "lower" if m.lower_is_better else "higher",
                "decimals": m.display_decimals,
            }
            for m in family.measure_specs(ctx)
        ]
        for name, family, ctx in _default_contexts(session)
    }
