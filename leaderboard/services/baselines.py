"""Compute and store a set's baseline rows from its gold data (or the shipped official files)."""

from __future__ import annotations

from sqlalchemy.orm import Session

from leaderboard.config import Settings
from leaderboard.models import Run
from leaderboard.services.audit import record_for
from leaderboard.services.catalog import Target, load_gold
from leaderboard.services.errors import RunRejected
from leaderboard.services.runs import (
    Upload,
    active_key,
    manifest_sha,
    place_run,
    score_values,
    store_inputs,
)
from leaderboard.storage import FileStore


def add_baselines(
    session: Session, store: FileStore, settings: Settings, target: Target, *, actor: str
) -> list[Run]:
    """Generate, score and store every baseline recipe of the target's set; replaces older ones."""
    gold, gold_files = load_gold(session, store, target, settings.max_decompressed_bytes)
    ctx = target.context(settings.max_decompressed_bytes)
    contents = {role: store.read(g.storage_key) for role, g in gold_files.items()}
    placed: list[Run] = []
    for b in target.family.baselines(gold, contents, ctx):
        # Baseline files come from the organizers' side: read them as the official scorer did.
        upload = Upload.from_bytes(b.files, {k: f"baseline_{b.role}_{k}.txt" for k in b.files})
        verdict = target.family.validate(upload.files, gold, ctx, lenient=True, options={})
        if not verdict.ok:
            raise RunRejected(f"Baseline {b.label!r} could not be read.", verdict.errors)
        results = target.family.score(verdict.parsed, gold)
        stored = store_inputs(store, upload)
        sha_all = manifest_sha(stored)

        def make(b=b, stored=stored, sha_all=sha_all, results=results) -> Run:
            return Run(
                subtask_id=target.subtask.id,
                eval_set_id=target.eval_set.id,
                team_id=None,
                kind="baseline",
                slot=b.role,
                name=b.role,
                label=b.label,
                description=b.description,
                lenient=True,
                file_sha256=sha_all,
                files=stored,
                report={"shown": list(b.shown), "order": b.order},
                submitted_via="cli" if actor == "cli" else "web",
            )

        run = place_run(
            session,
            active_key(target.eval_set.id, None, b.role),
            make,
            lambda _r: None,
            score_values(results, gold_files),
        )
        placed.append(run)
    record_for(
        session,
        actor,
        "add-baselines",
        target,
        roles=[r.slot for r in placed],
    )
    session.commit()
    return placed
