"""Freeze the official ranking as an immutable, verifiable snapshot, and verify it later."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.config import Settings
from leaderboard.models import FreezeSupersession, FrozenTable, GoldFile, Phase, Run
from leaderboard.scoring import SCORER_VERSION
from leaderboard.services.campaign.phases import phases_of, show_time
from leaderboard.services.common.audit import record_for
from leaderboard.services.common.errors import Conflict, InvalidInput, NotFound
from leaderboard.services.common.revisions import touch
from leaderboard.services.common.text import clean_text
from leaderboard.services.freeze.analysis import (
    RescoredRun,
    analyse_frozen,
    freeze_request,
    recheck,
)
from leaderboard.services.results.anonymity import PUBLIC, masked_names
from leaderboard.services.results.parts import private_released, split_of
from leaderboard.services.results.significance import Request, stored_scores
from leaderboard.services.results.tables import TableInputs, official_runs, render, table_inputs
from leaderboard.services.tasks.catalog import current_files, load_set
from leaderboard.storage import Store, key_for
from leaderboard.tables import exports
from leaderboard.tables.html import to_html
from leaderboard.tables.model import Entry, Value, ranks_of, with_shakeup
from leaderboard.targets import Target
from leaderboard.tasks.families.base import Family, MeasureResult
from leaderboard.tasks.splitting import SplitRefused, split_of_record, split_record, split_set

RENDERERS = {
    "json": exports.to_json,
    "csv": exports.to_csv,
    "md": exports.to_markdown,
    "tex": exports.to_latex,
    "html": to_html,
}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def entry_record(entry: Entry) -> dict[str, Any]:
    """Return a JSON form of a table entry, with its values."""
    return {
        "kind": entry.kind,
        "team": entry.team,
        "run": entry.run,
        "slot": entry.slot,
        "late": entry.late,
        "corrected": entry.corrected,
        "label": entry.label,
        "baseline_order": entry.baseline_order,
        "markers": list(entry.markers),
        "run_id": entry.run_id,
        "submitted": entry.submitted,
        "values": {
            k: {"raw": v.raw, "official": v.official, "note": v.note}
            for k, v in entry.values.items()
        },
    }


def entry_from_record(record_: dict[str, Any], values: dict[str, Value] | None = None) -> Entry:
    """Rebuild a table entry from its JSON form, optionally with other values."""
    stored = {k: Value(v["raw"], v["official"], v["note"]) for k, v in record_["values"].items()}
    return Entry(
        kind=record_["kind"],
        team=record_["team"],
        run=record_["run"],
        slot=record_["slot"],
        values=stored if values is None else values,
        late=record_["late"],
        corrected=record_["corrected"],
        label=record_["label"],
        baseline_order=record_["baseline_order"],
        markers=tuple(record_["markers"]),
        run_id=record_["run_id"],
        # A snapshot frozen before uploads were counted has no count: its rows show none.
        submitted=record_.get("submitted"),
    )


def frozen_of(session: Session, target: Target) -> FrozenTable | None:
    """Return the official frozen table of a target's set (its newest version), if it was frozen."""
    return session.scalar(
        select(FrozenTable)
        .where(
            FrozenTable.subtask_id == target.subtask.id,
            FrozenTable.eval_set_id == target.eval_set.id,
        )
        .order_by(FrozenTable.version.desc())
        .limit(1)
    )


@dataclass(frozen=True)
class FrozenVersion:
    """One frozen version of a set's official ranking, and its supersession if it has one."""

    snapshot: FrozenTable
    superseded: FreezeSupersession | None


def frozen_versions(session: Session, target: Target) -> list[FrozenVersion]:
    """Return every frozen version of a target's set, oldest first, each with its supersession."""
    snapshots = list(
        session.scalars(
            select(FrozenTable)
            .where(
                FrozenTable.subtask_id == target.subtask.id,
                FrozenTable.eval_set_id == target.eval_set.id,
            )
            .order_by(FrozenTable.version)
        )
    )
    ids = [s.id for s in snapshots]
    supersessions = {
        row.superseded_id: row
        for row in session.scalars(
            select(FreezeSupersession).where(FreezeSupersession.superseded_id.in_(ids))
        )
    }
    return [FrozenVersion(s, supersessions.get(s.id)) for s in snapshots]


def frozen_version(session: Session, target: Target, version: int) -> FrozenVersion:
    """Return one frozen version of a target's set by number, or raise NotFound naming the known ones."""
    versions = frozen_versions(session, target)
    found = next((v for v in versions if v.snapshot.version == version), None)
    if found is None:
        if not versions:
            raise not_frozen(target)
        known = ", ".join(str(v.snapshot.version) for v in versions)
        raise NotFound(
            f"{target.task.slug} {target.subtask.slug} ({target.eval_set.slug}) has no frozen "
            f"version {version} (versions: {known})."
        )
    return found


def frozen_once(target: Target, existing: FrozenTable) -> Conflict:
    """Return the refusal of a second freeze of a set that does not supersede the first."""
    return Conflict(
        f"{target.task.slug} {target.subtask.slug} ({target.eval_set.slug}) was frozen at "
        f"{existing.frozen_at:%Y-%m-%d %H:%M:%S} UTC; an official ranking is frozen once. To "
        "replace it, supersede it with a reason (leaderboard freeze ... --supersede --reason "
        "TEXT, or Supersede on the organizer's page): it stays kept and verifiable."
    )


#: The longest reason for superseding a frozen ranking (it is shown on the public page).
MAX_REASON = 500


def check_reason(target: Target, reason: str) -> str:
    """Return the reason for superseding, trimmed; refuse an empty, overlong or control-laden one."""
    if not reason.strip():
        raise InvalidInput(
            f"A reason is required to supersede the frozen ranking of {target.task.slug} "
            f"{target.subtask.slug} ({target.eval_set.slug}): it is shown with the old version."
        )
    return clean_text(reason, "reason for superseding", limit=MAX_REASON)


def nothing_to_supersede(target: Target) -> Conflict:
    """Return the refusal of superseding a set that was never frozen."""
    return Conflict(
        f"{target.task.slug} {target.subtask.slug} ({target.eval_set.slug}) has no frozen "
        "ranking to supersede; freeze it without superseding."
    )


def check_supersede(
    target: Target, existing: FrozenTable | None, supersede: str | None
) -> str | None:
    """Return the checked reason of a freeze (None for a first freeze); refuse what does not fit."""
    if supersede is None:
        if existing is not None:
            raise frozen_once(target, existing)
        return None
    if existing is None:
        raise nothing_to_supersede(target)
    return check_reason(target, supersede)


def not_frozen(target: Target) -> NotFound:
    """Return the refusal of verifying a set that was never frozen."""
    return NotFound(
        f"{target.task.slug} {target.subtask.slug} ({target.eval_set.slug}) has not been frozen."
    )


class DeadlineAhead(Conflict):
    """A freeze asked while a phase of the set still takes on-time runs."""

    def __init__(self, phase: Phase, zone: str = "UTC") -> None:
        assert phase.ends_at is not None
        super().__init__(
            f"Phase {phase.name} of the {phase.eval_set.slug} set has its deadline at "
            f"{show_time(phase.ends_at, zone)}, still ahead: freezing now would leave out runs "
            "submitted on time before it. Freeze after the deadline, or confirm that you "
            "freeze before it."
        )
        self.phase = phase


def deadline_ahead(session: Session, target: Target, now: datetime) -> Phase | None:
    """Return the set's phase with the latest deadline still ahead of ``now``, if any."""
    ahead = [
        p
        for p in phases_of(session, target.subtask)
        if p.eval_set_id == target.eval_set.id and p.ends_at is not None and now < p.ends_at
    ]
    return max(ahead, key=lambda p: p.ends_at or now, default=None)


def check_deadline(
    session: Session, target: Target, now: datetime, *, before_deadline: bool, zone: str = "UTC"
) -> Phase | None:
    """Refuse a freeze while a deadline of the set is ahead, unless confirmed; return that phase."""
    phase = deadline_ahead(session, target, now)
    if phase is not None and not before_deadline:
        raise DeadlineAhead(phase, zone)
    return phase


#: Table JSON keys added since tables were first frozen, with the value they then always had.
TABLE_DEFAULTS = {"part": "all", "board": "slots"}


def _values(results: Mapping[str, MeasureResult], old: Mapping[str, Any]) -> dict[str, Value]:
    """Return a re-scored run's values of the measures a frozen entry had, with their notes."""
    out = {}
    for measure, stored in old.items():
        new = results.get(measure)
        if new is not None and new.raw is not None:
            out[measure] = Value(new.raw, new.official, stored["note"])
    return out


def _run_record(run: Run, entry: Entry, family: Family, part: str) -> dict[str, Any]:
    return {
        "entry": entry_record(entry),
        "files": {name: meta["sha256"] for name, meta in sorted(run.files.items())},
        "file_sha256": run.file_sha256,
        "lenient": run.lenient,
        "options": family.stored_options(run.report),
        "shown": run.report.get("shown"),
        "gold": {s.measure: s.gold_sha256 for s in run.scores if s.current and s.part == part},
    }


def freeze(
    session: Session,
    store: Store,
    settings: Settings,
    target: Target,
    *,
    actor: str,
    now: datetime,
    request: Request | None = None,
    before_deadline: bool = False,
    checked_at: datetime | None = None,
    supersede: str | None = None,
) -> FrozenTable:
    """Store the official ranking as displayed, with its analysis and the hashes to verify both.

    The analysis (``request``, else as the set's current one, else the defaults) is computed on
    the frozen table's own runs, so that ``verify`` can recompute it from the re-scored runs.
    While a deadline of the set is ahead (at ``checked_at``, default ``now``) the freeze is
    refused unless ``before_deadline`` confirms it; the audit log records such a freeze.
    The snapshot is flushed; the caller's unit of work commits it (a job's, with its row).
    With ``supersede`` (the reason) a set already frozen gets a new version, the official one
    from then on; the old one is kept as it was, marked superseded, and stays verifiable.
    """
    existing = frozen_of(session, target)
    reason = check_supersede(target, existing, supersede)
    early = check_deadline(
        session,
        target,
        checked_at or now,
        before_deadline=before_deadline,
        zone=settings.display_timezone,
    )
    split = split_of(target)
    if (
        split is not None
        and split.official_part != "public"
        and not private_released(session, target)
    ):
        # A frozen ranking is public: on a part not yet released it would publish it.
        raise InvalidInput(
            f"Set {target.eval_set.slug} ranks by its {split.official_part} part, which is not "
            "released yet: release it first (leaderboard phase ... --private visible, or the "
            "phase page), then freeze."
        )
    runs = official_runs(session, target)
    # The snapshot keeps what the public was shown: anonymous names stay after a reveal.
    masked = masked_names(session, target, PUBLIC)
    # A split set's official ranking is on its official part (the private one by default).
    loaded = load_set(session, store, target)
    part = "all" if split is None else split.official_part
    inputs = table_inputs(
        session, store, target, runs, include_late=False, masked=masked, part=part
    )
    frozen_at = now.isoformat()
    table = render(target, inputs, official=True, frozen_at=frozen_at)
    if loaded.split is not None:
        public = table_inputs(
            session, store, target, runs, include_late=False, masked=masked, part="public"
        )
        table = with_shakeup(table, ranks_of(render(target, public)))
    parsed_gold = loaded.gold_of(part)
    table, analysis = analyse_frozen(
        target,
        table,
        parsed_gold,
        partial(stored_scores, session, part=part, split=loaded.split),
        request or freeze_request(session, target, table.official_key),
    )
    gold = {
        role: {"sha256": g.sha256, "version": g.version, "filename": g.filename}
        for role, g in sorted(current_files(session, target.eval_set).items())
    }
    manifest = {
        "task": target.task.slug,
        "subtask": target.subtask.slug,
        "set": target.eval_set.slug,
        "family": target.definition.family,
        "definition_sha256": target.task.definition_sha256,
        "scorer_version": SCORER_VERSION,
        "frozen_at": frozen_at,
        "gold": gold,
        "options": inputs.options,
        "runs": [
            _run_record(run, entry, target.family, part)
            for run, entry in zip(runs, inputs.entries, strict=True)
        ],
        "analysis": analysis,
    }
    if loaded.split is not None:
        # Published with the ranking: anyone can check the split once the seed is out.
        manifest["split"] = split_record(loaded.split, part)
    if existing is not None and reason is not None:
        # In the new version's hashed manifest: the chain of versions is itself verifiable.
        manifest["supersedes"] = {
            "version": existing.version,
            "manifest_sha256": existing.manifest_sha256,
            "reason": reason,
        }
    table_json = exports.table_to_dict(table)
    renders = {fmt: render_fn(table) for fmt, render_fn in RENDERERS.items()}
    snapshot = FrozenTable(
        subtask_id=target.subtask.id,
        eval_set_id=target.eval_set.id,
        version=existing.version + 1 if existing is not None else 1,
        frozen_at=now,
        frozen_by=actor,
        table=table_json,
        renders=renders,
        manifest=manifest,
        manifest_sha256=_sha256(
            _canonical({"manifest": manifest, "table": table_json, "renders": renders})
        ),
    )
    session.add(snapshot)
    if existing is not None and reason is not None:
        _supersede(session, target, existing, snapshot, reason, actor=actor, now=now)
    # The scores are unchanged (their analyses stay current); the pages show the frozen table.
    touch(session, target.eval_set.id)
    record_for(
        session,
        actor,
        "freeze",
        target,
        at=now,
        runs=len(runs),
        manifest_sha256=snapshot.manifest_sha256,
        version=snapshot.version,
        **early_details(early),
    )
    session.flush()
    return snapshot


def _supersede(
    session: Session,
    target: Target,
    old: FrozenTable,
    new: FrozenTable,
    reason: str,
    *,
    actor: str,
    now: datetime,
) -> None:
    """Record that ``new`` supersedes ``old``, in a row of its own (``old`` is never written)."""
    session.flush()
    session.add(
        FreezeSupersession(
            superseded_id=old.id,
            successor_id=new.id,
            reason=reason,
            superseded_at=now,
            superseded_by=actor,
        )
    )
    record_for(
        session,
        actor,
        "supersede-freeze",
        target,
        at=now,
        superseded_version=old.version,
        superseded_sha256=old.manifest_sha256,
        superseded_frozen_at=old.frozen_at.isoformat(),
        version=new.version,
        manifest_sha256=new.manifest_sha256,
        reason=reason,
    )


def early_details(phase: Phase | None) -> dict[str, Any]:
    """Return what the audit log says of a freeze made before a deadline (nothing otherwise)."""
    if phase is None or phase.ends_at is None:
        return {}
    return {"before_deadline": True, "deadline": phase.ends_at.isoformat(), "phase": phase.name}


@dataclass
class VerifyReport:
    """The outcome of ``verify``: every difference found (none means the snapshot holds)."""

    checked_runs: int = 0
    differences: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Return whether the snapshot was confirmed."""
        return not self.differences


def _gold_contents(
    session: Session, store: Store, target: Target, gold: dict[str, Any], report: VerifyReport
) -> dict[str, bytes] | None:
    contents: dict[str, bytes] = {}
    for role, meta in gold.items():
        row = session.scalar(
            select(GoldFile).where(
                GoldFile.eval_set_id == target.eval_set.id,
                GoldFile.role == role,
                GoldFile.sha256 == meta["sha256"],
            )
        )
        if row is None or not store.exists(row.storage_key):
            report.differences.append(
                f"gold {role} version {meta['version']} ({meta['sha256'][:12]}…) is no longer stored"
            )
            return None
        data = store.read(row.storage_key)
        if _sha256(data) != meta["sha256"]:
            report.differences.append(
                f"gold {role}: the stored file's SHA-256 is {_sha256(data)}, the snapshot says {meta['sha256']}"
            )
            return None
        contents[role] = data
    return contents


def verify_all(
    session: Session, store: Store, settings: Settings, target: Target
) -> list[tuple[FrozenVersion, VerifyReport]]:
    """Verify every frozen version of a set, oldest first; superseded ones stay provable."""
    versions = frozen_versions(session, target)
    if not versions:
        raise not_frozen(target)
    return [(v, verify(session, store, settings, target, v.snapshot)) for v in versions]


def verify(
    session: Session,
    store: Store,
    settings: Settings,
    target: Target,
    snapshot: FrozenTable | None = None,
) -> VerifyReport:
    """Re-score the frozen runs from the stored files and gold, and compare with the snapshot.

    ``snapshot`` is the version to verify; by default the official (newest) one.
    """
    snapshot = snapshot or frozen_of(session, target)
    if snapshot is None:
        raise not_frozen(target)
    report = VerifyReport()
    manifest = snapshot.manifest
    expected_sha = _sha256(
        _canonical({"manifest": manifest, "table": snapshot.table, "renders": snapshot.renders})
    )
    if expected_sha != snapshot.manifest_sha256:
        report.differences.append(
            f"the snapshot's own hash is {expected_sha}, it was stored as {snapshot.manifest_sha256}"
        )
    if manifest["scorer_version"] != SCORER_VERSION:
        report.differences.append(
            f"scorer version is {SCORER_VERSION}, the snapshot used {manifest['scorer_version']}"
        )
    gold_contents = _gold_contents(session, store, target, manifest["gold"], report)
    if gold_contents is None:
        return report
    # Rebuild with the reference files of the freeze, not files added since (e.g. a new qrels variant).
    target = dataclasses.replace(target, loaded=frozenset(manifest["gold"]))
    ctx = target.context(settings.max_decompressed_bytes)
    gold = target.family.load_gold(gold_contents, ctx)
    part, parts = "all", None
    if "split" in manifest:
        record = manifest["split"]
        part = record["official_part"]
        try:
            split = split_set(target.family, gold, split_of_record(record), gold_contents)
        except SplitRefused as exc:
            report.differences.append(f"the set's public/private split cannot be rebuilt: {exc}")
            return report
        if split_record(split, part) != record:
            report.differences.append(
                "the public/private split rebuilt from the frozen gold differs from the stored one"
            )
        parts = split.golds
    entries: list[Entry] = []
    public_entries: list[Entry] = []
    kept: dict[int, RescoredRun] = {}
    for item in manifest["runs"]:
        rec = item["entry"]
        label = rec["label"] or f"{rec['team']}-{rec['slot']}"
        report.checked_runs += 1
        streams = {}
        for name, sha in item["files"].items():
            key = key_for(sha)
            if not store.exists(key):
                report.differences.append(
                    f"{label}: run file {name} ({sha[:12]}…) is no longer stored"
                )
                continue
            data = store.read(key)
            if _sha256(data) != sha:
                report.differences.append(
                    f"{label}: run file {name} has SHA-256 {_sha256(data)}, the snapshot says {sha}"
                )
            streams[name] = data
        if len(streams) != len(item["files"]):
            continue
        evaluation = target.family.evaluate(
            target.family.memory_inputs(streams),
            gold,
            ctx,
            lenient=item["lenient"],
            options=item["options"],
            part_golds=parts,
        )
        results = evaluation.results
        if results is not None and parts is not None:
            public_entries.append(
                entry_from_record(rec, _values(evaluation.by_part["public"], rec["values"]))
            )
        if results is not None and part != "all":
            results = evaluation.by_part[part]
        if results is None:
            errors = evaluation.verdict.errors
            first = errors[0].text if errors else "the run could not be read"
            report.differences.append(f"{label}: the stored run no longer validates: {first}")
            continue
        if rec["run_id"] is not None:
            kept[rec["run_id"]] = RescoredRun(results, evaluation.item_values)
        values = {}
        for measure, old in rec["values"].items():
            new = results.get(measure)
            if new is None or new.official != old["official"]:
                got = new.official if new is not None else "nothing"
                report.differences.append(
                    f"{label}: {measure} re-scores as {got}, the snapshot says {old['official']}"
                )
            # A value that became undefined is reported above; the snapshot's stands in for it.
            if new is not None and new.raw is not None:
                values[measure] = Value(new.raw, new.official, old["note"])
            else:
                values[measure] = Value(old["raw"], old["official"], old["note"])
        entries.append(entry_from_record(rec, values))
    if report.ok:
        options = target.family.stored_table_options(manifest["options"])
        table = render(
            target,
            TableInputs(entries, options, part),
            official=True,
            frozen_at=manifest["frozen_at"],
        )
        if parts is not None:
            public = render(target, TableInputs(public_entries, options, "public"))
            table = with_shakeup(table, ranks_of(public))
        stored = manifest.get("analysis")
        if stored is not None:
            analysed = gold if parts is None else parts[part].gold
            table, found = recheck(target, table, analysed, kept, stored)
            report.differences += found
        rebuilt = exports.table_to_dict(table)
        # A table frozen before tables stated their part and board has neither key: both were
        # then always the defaults.
        for key, default in TABLE_DEFAULTS.items():
            if key not in snapshot.table and rebuilt.get(key) == default:
                rebuilt.pop(key)
        if report.ok and _canonical(rebuilt) != _canonical(snapshot.table):
            report.differences.append(
                "the table rebuilt from the re-scored runs differs from the frozen table"
            )
    return report
