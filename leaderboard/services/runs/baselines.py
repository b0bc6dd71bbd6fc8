"""Store a set's baseline rows: generated from its gold data, shipped, or imported from a file."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from sqlalchemy.orm import Session

from leaderboard.config import Settings
from leaderboard.formats.issues import quoted
from leaderboard.models import GoldFile, Run, run_report
from leaderboard.services.common.audit import record_for
from leaderboard.services.common.errors import InvalidInput, RunRejected
from leaderboard.services.runs.core import (
    Placement,
    Upload,
    active_key,
    manifest_sha,
    rejection,
    score_values,
    store_inputs,
)
from leaderboard.services.tasks.catalog import load_set
from leaderboard.states import RunKind
from leaderboard.storage import Store
from leaderboard.targets import Target
from leaderboard.tasks.families.base import Evaluation
from leaderboard.tasks.splitting import SetSplit

MAX_LABEL = 100
#: Imported baselines come after the generated ones (whose order is 1 to 4 at most).
IMPORTED_ORDER = 100


def add_baselines(
    session: Session, store: Store, settings: Settings, target: Target, *, actor: str
) -> Iterator[Placement]:
    """Generate and score each baseline recipe of the target's set, replacing older ones.

    Yields each baseline's placement in turn, for the entry point to commit (with ``retried``)
    before the next is made; once all are placed, records the action in the session.
    """
    loaded = load_set(session, store, target, settings.max_decompressed_bytes)
    gold, gold_files = loaded.gold, loaded.files
    parts = None if loaded.split is None else loaded.split.golds
    ctx = target.context(settings.max_decompressed_bytes)
    contents = {role: store.read(g.storage_key) for role, g in gold_files.items()}
    roles: list[str] = []
    for b in target.family.baselines(gold, contents, ctx):
        # Baseline files come from the organizers' side: read them as the official scorer did.
        upload = Upload.from_bytes(b.files, {k: f"baseline_{b.role}_{k}.txt" for k in b.files})
        evaluation = target.family.evaluate(
            upload.files, gold, ctx, lenient=True, options={}, part_golds=parts
        )
        if evaluation.results is None:
            raise RunRejected(
                f"Baseline {quoted(b.label)} could not be read.", evaluation.verdict.errors
            )
        report = {"shown": list(b.visible_measures), "order": b.order}
        yield _placement(session, store, target, upload, b.role, b.label, b.description,
                         report, evaluation, gold_files, actor, lenient=True,
                         split=loaded.split)  # fmt: skip
        roles.append(b.role)
    record_for(session, actor, "add-baselines", target, roles=roles)


def import_baseline(
    session: Session,
    store: Store,
    settings: Settings,
    target: Target,
    upload: Upload,
    *,
    label: str,
    lenient: bool = False,
    description: str = "",
    actor: str,
) -> Placement:
    """Validate and score a run file, store it; return its placement as a baseline (no team).

    The row is labelled ``label``; the entry point commits it with ``retried``. A baseline
    imported again under the same label replaces the earlier one. The upload's files are closed
    when this returns or raises.
    """
    try:
        label = label.strip()
        if not label or len(label) > MAX_LABEL or any(ord(c) < 32 for c in label):
            raise InvalidInput(
                f"A baseline label is 1 to {MAX_LABEL} printable characters, not {quoted(label)}."
            )
        loaded = load_set(session, store, target, settings.max_decompressed_bytes)
        gold, gold_files = loaded.gold, loaded.files
        ctx = target.context(settings.max_decompressed_bytes)
        evaluation = target.family.evaluate(
            upload.files,
            gold,
            ctx,
            lenient=lenient,
            options={},
            part_golds=None if loaded.split is None else loaded.split.golds,
        )
        if evaluation.results is None:
            raise rejection(evaluation.verdict, "baseline")
        role = "import-" + (re.sub(r"[^A-Za-z0-9_.-]+", "-", label).strip("-")[:48] or "baseline")
        report: dict[str, Any] = {
            "shown": list(evaluation.results),
            "order": IMPORTED_ORDER,
            **evaluation.verdict.report,
        }

        def record(run: Run) -> None:
            record_for(
                session, actor, "import-baseline", target, label=label, sha256=run.file_sha256
            )

        return _placement(session, store, target, upload, role, label, description, report,
                          evaluation, gold_files, actor, lenient=lenient, before_commit=record,
                          split=loaded.split)  # fmt: skip
    finally:
        upload.close()


def _placement(
    session: Session,
    store: Store,
    target: Target,
    upload: Upload,
    role: str,
    label: str,
    description: str,
    report: Mapping[str, Any],
    evaluation: Evaluation,
    gold_files: Mapping[str, GoldFile],
    actor: str,
    *,
    lenient: bool,
    before_commit: Callable[[Run], None] | None = None,
    split: SetSplit | None = None,
) -> Placement:
    """Store a scored baseline's files; return its placement in the slot of its role.

    Placed, it replaces the role's previous row; ``before_commit`` runs in its transaction.
    """
    stored = store_inputs(store, upload)

    def make() -> Run:
        return Run(
            subtask_id=target.subtask.id,
            eval_set_id=target.eval_set.id,
            team_id=None,
            kind=RunKind.BASELINE,
            slot=role,
            name=role,
            label=label,
            description=description,
            # Re-scoring and verify read the file the way it was accepted.
            lenient=lenient,
            file_sha256=manifest_sha(stored),
            files=stored,
            item_values=evaluation.item_values,
            report=run_report(report),
            submitted_via="cli" if actor == "cli" else "web",
        )

    assert evaluation.results is not None
    rows: Sequence[Mapping[str, Any]] = score_values(
        evaluation.results, gold_files, evaluation.by_part, split
    )
    key = active_key(target.eval_set.id, None, role)
    return Placement(session, key, make, before_commit or _no_op, rows)


def _no_op(_run: Run) -> None:
    """Do nothing before the commit (baselines use no quota)."""
