"""Replace or add reference files (gold, qrels variants) and re-score the runs of a set."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import IO

from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from leaderboard.config import Settings
from leaderboard.formats.issues import quoted
from leaderboard.models import GoldFile, Run, run_report
from leaderboard.services.common.audit import record_for
from leaderboard.services.common.errors import InvalidInput, NotFound
from leaderboard.services.common.revisions import bump
from leaderboard.services.results.boards import forget_decisions
from leaderboard.services.runs.core import gold_versions, score_rows
from leaderboard.services.tasks.catalog import current_files, load_set, resolve
from leaderboard.services.tasks.data import data_copying
from leaderboard.storage import Store
from leaderboard.targets import Target
from leaderboard.tasks.families.base import SET_OPTION, GoldAddress, GoldSlot, reference_problem
from leaderboard.tasks.splitting import SplitRefused, split_set


@dataclass
class RescoreReport:
    """What a re-scoring did: runs re-scored, and runs that could not be (with why)."""

    rescored: int = 0
    failed: dict[int, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def gold_target(
    session: Session,
    task: str,
    subtask: str,
    set_or_slot: str | None,
    address: Mapping[str, str] | None = None,
) -> tuple[Target, str]:
    """Resolve ``--set`` and the family's address options to a target set and a file's role.

    ``--set`` names an evaluation set (``test``) or a slot addressed in its place (an STS part,
    ``headlines``); ``address`` holds the family's other options given (``{"variant":
    "manual"}``). The family says which reference files a set has (its gold slots).
    """
    try:
        target = resolve(session, task, subtask, set_or_slot)
        named: GoldSlot | None = None
    except NotFound:
        base = resolve(session, task, subtask)
        owner = next(
            (
                (s.slug, slot)
                for s in base.subtask_def.sets
                for slot in base.family.gold_slots(base.context(set_slug=s.slug))
                if slot.address is not None
                and slot.address.option == SET_OPTION
                and slot.address.value == set_or_slot
            ),
            None,
        )
        if owner is None:
            raise
        target, named = resolve(session, task, subtask, owner[0]), owner[1]
    slots = target.family.gold_slots(target.context())
    for option, value in (address or {}).items():
        addressed = [s.address for s in slots if s.address and s.address.option == option]
        found = [s for s in slots if s.address in addressed and s.address.value == value]
        if not found:
            known = ", ".join(a.value for a in addressed) or "none"
            raise InvalidInput(
                f"Unknown {_noun(addressed, option)} {quoted(value)}; this set has {known}."
            )
        return target, found[0].role
    if named is not None:
        return target, named.role
    single = [s for s in slots if s.address is None]
    if single:
        return target, single[0].role
    first = next(s.address for s in slots if s.address is not None)
    values = ", ".join(
        s.address.value for s in slots if s.address and s.address.option == first.option
    )
    if first.option == SET_OPTION:
        raise InvalidInput(f"Name the {first.noun} whose gold to replace with --set ({values}).")
    raise InvalidInput(f"Name the {first.noun} with --{first.option} ({values}).")


def _noun(addresses: list[GoldAddress], default: str = "") -> str:
    """Return what the family calls the values of an address option (its name if unknown)."""
    return addresses[0].noun if addresses else default


def gold_target_by_role(
    session: Session, task: str, subtask: str, set_slug: str, role: str
) -> tuple[Target, str]:
    """Return the target set and role an organizer chose from the set's gold slots."""
    target = resolve(session, task, subtask, set_slug)
    if role not in {s.role for s in target.family.gold_slots(target.context())}:
        raise InvalidInput(f"Set {quoted(set_slug)} has no reference file {quoted(role)}.")
    return target, role


def gold_choices(base: Target) -> list[tuple[str, str]]:
    """Return the reference files an organizer may replace, as ("set|role", label) pairs."""
    out = []
    for es in base.subtask.eval_sets:
        ctx = base.context(set_slug=es.slug)
        for slot in base.family.gold_slots(ctx):
            out.append((f"{es.slug}|{slot.role}", f"{es.slug}: {slot.label}"))
    return out


def store_gold(
    session: Session,
    store: Store,
    settings: Settings,
    target: Target,
    role: str,
    data: bytes,
    filename: str,
    *,
    actor: str,
) -> GoldFile:
    """Check and store a new version of a reference file (the runs are re-scored separately)."""
    files = current_files(session, target.eval_set)
    contents = {r: store.read(g.storage_key) for r, g in files.items()}
    contents[role] = data
    ctx = target.context(settings.max_decompressed_bytes)
    try:
        gold = target.family.load_gold(contents, ctx)
    except (ValueError, KeyError, UnicodeDecodeError) as exc:
        raise InvalidInput(
            f"{quoted(filename)}: the new {role} file was refused: {reference_problem(exc)}"
        ) from exc
    split = ctx.set.split
    if split is not None:
        # The set's listed public units must all remain units of the new gold.
        try:
            split_set(target.family, gold, split, contents)
        except SplitRefused as exc:
            raise InvalidInput(
                f"{quoted(filename)}: the new {role} file was refused: it breaks the set's "
                f"public/private split: {exc}"
            ) from None
    leak = data_copying(session, store, target.task, role, data)
    if leak is not None:
        raise InvalidInput(
            f"{quoted(filename)}: the new {role} file is the text of the data file "
            f"{quoted(leak.filename)} (id {leak.id}, phase {leak.phase.name}, subtask "
            f"{leak.phase.subtask.slug}) that participants may download; delete that data file "
            "first (leaderboard data delete, or the organizer's page), then set the gold again."
        )
    key, sha = store.put(data)
    previous = files.get(role)
    if previous is not None and previous.sha256 == sha:
        raise InvalidInput(f"The {role} file is unchanged (SHA-256 {sha[:12]}…); nothing to do.")
    version = (
        session.scalar(
            select(func.max(GoldFile.version)).where(
                GoldFile.eval_set_id == target.eval_set.id, GoldFile.role == role
            )
        )
        or 0
    ) + 1
    if previous is not None:
        previous.active_key = None
        session.flush()
    gold = GoldFile(
        eval_set_id=target.eval_set.id,
        role=role,
        version=version,
        sha256=sha,
        storage_key=key,
        filename=filename[:255],
        active_key=f"{target.eval_set.id}:{role}",
        created_by=actor,
    )
    session.add(gold)
    bump(session, target.eval_set.id)
    record_for(
        session,
        actor,
        "set-gold",
        target,
        role=role,
        version=version,
        sha256=sha,
        previous_sha256=previous.sha256 if previous is not None else None,
    )
    return gold


def _inputs(store: Store, run: Run) -> dict[str, IO[bytes]]:
    return {name: store.open(meta["key"]) for name, meta in run.files.items()}


def rescore_set(
    session: Session,
    store: Store,
    settings: Settings,
    target: Target,
    *,
    actor: str,
    reason: str = "rescore",
) -> RescoreReport:
    """Re-score every run of a set (replaced ones too) against the current reference files.

    The new scores are flushed; the caller's unit of work commits them (a job's, with its row).
    """
    loaded = load_set(session, store, target, settings.max_decompressed_bytes)
    gold, gold_files = loaded.gold, loaded.files
    parts = None if loaded.split is None else loaded.split.golds
    ctx = target.context(settings.max_decompressed_bytes)
    runs = session.scalars(
        select(Run)
        .where(Run.eval_set_id == target.eval_set.id)
        .options(selectinload(Run.scores))
        .order_by(Run.id)
    ).all()
    report = RescoreReport()
    # The Ladder's decisions were made on the old scores: made again from the new ones.
    forget_decisions(session, target.eval_set.id)
    for run in runs:
        inputs = _inputs(store, run)
        try:
            evaluation = target.family.evaluate(
                inputs,
                gold,
                ctx,
                lenient=run.lenient,
                options=target.family.stored_options(run.report),
                part_golds=parts,
            )
        finally:
            for stream in inputs.values():
                stream.close()
        results = evaluation.results
        if results is None:
            report.failed[run.id] = [i.text for i in evaluation.verdict.errors[:5]]
            run.report = {**run.report, "rescore_error": report.failed[run.id]}
            continue
        for s in run.scores:
            s.current = False
        run.scores.extend(score_rows(results, gold_files, evaluation.by_part, loaded.split))
        run.item_values = evaluation.item_values
        run.report = run_report(
            {
                **{k: v for k, v in run.report.items() if k != "rescore_error"},
                "gold_files": gold_versions(gold_files),
            }
        )
        report.rescored += 1
    bump(session, target.eval_set.id)
    record_for(
        session,
        actor,
        "rescore",
        target,
        reason=reason,
        rescored=report.rescored,
        failed=sorted(report.failed),
    )
    session.flush()
    return report


def gold_history(session: Session, target: Target) -> list[GoldFile]:
    """Return every version of every reference file of the target's subtask, by set and role."""
    set_ids = [s.id for s in target.subtask.eval_sets]
    return list(
        session.scalars(
            select(GoldFile)
            .where(GoldFile.eval_set_id.in_(set_ids))
            .order_by(GoldFile.eval_set_id, GoldFile.role, GoldFile.version)
        )
    )
