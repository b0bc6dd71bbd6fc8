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
from leaderboard.models import FrozenTable, GoldFile, Run
from leaderboard.scoring import SCORER_VERSION
from leaderboard.services.anonymity import PUBLIC, masked_names
from leaderboard.services.audit import record_for
from leaderboard.services.catalog import Target, current_files, load_gold
from leaderboard.services.errors import Conflict, InvalidInput, NotFound
from leaderboard.services.revisions import touch
from leaderboard.services.significance import (
    Request,
    ScoreLookup,
    Source,
    analyse,
    stored_scores,
)
from leaderboard.services.table_analysis import annotate, current_report
from leaderboard.services.tables import TableInputs, official_runs, render, table_inputs
from leaderboard.storage import FileStore
from leaderboard.tables import exports
from leaderboard.tables.html import to_html
from leaderboard.tables.model import Entry, Table, Value
from leaderboard.tasks.families.base import MeasureResult, StoredScore

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
    )


def frozen_of(session: Session, target: Target) -> FrozenTable | None:
    """Return the frozen official table of a target's set, if it was frozen."""
    return session.scalar(
        select(FrozenTable).where(
            FrozenTable.subtask_id == target.subtask.id,
            FrozenTable.eval_set_id == target.eval_set.id,
        )
    )


def frozen_once(target: Target, existing: FrozenTable) -> Conflict:
    """Return the refusal of a second freeze of a set."""
    return Conflict(
        f"{target.task.slug} {target.subtask.slug} ({target.eval_set.slug}) was frozen at "
        f"{existing.frozen_at:%Y-%m-%d %H:%M:%S} UTC; an official ranking is frozen once."
    )


def not_frozen(target: Target) -> NotFound:
    """Return the refusal of verifying a set that was never frozen."""
    return NotFound(
        f"{target.task.slug} {target.subtask.slug} ({target.eval_set.slug}) has not been frozen."
    )


def _run_record(run: Run, entry: Entry) -> dict[str, Any]:
    return {
        "entry": entry_record(entry),
        "files": {name: meta["sha256"] for name, meta in sorted(run.files.items())},
        "file_sha256": run.file_sha256,
        "lenient": run.lenient,
        "options": {"resort": bool(run.report.get("resort", False))},
        "shown": run.report.get("shown"),
        "gold": {s.measure: s.gold_sha256 for s in run.scores if s.current},
    }


def freeze_request(session: Session, target: Target, official: str) -> Request:
    """Return how a freeze analyses its table: as the set's current analysis, or the defaults."""
    report = current_report(session, target, official)
    return Request() if report is None else _request_of(report)


def _request_of(report: Mapping[str, Any]) -> Request:
    """Return the request of the official measure over the ranked runs a report was made with."""
    default = Request()
    return Request(
        method=report["method"],
        # A t-test or Wilcoxon report has no samples; its intervals take the defaults.
        samples=report["samples"] or default.samples,
        seed=report["seed"] if report["seed"] is not None else default.seed,
        alpha=report["alpha"],
        correction=report["correction"],
    )


def _request_record(request: Request) -> dict[str, Any]:
    return {
        "method": request.method,
        "samples": request.samples,
        "seed": request.seed,
        "alpha": request.alpha,
        "correction": request.correction,
    }


def _analysis(
    target: Target, table: Table, gold: Any, scores: ScoreLookup, request: Request
) -> dict[str, Any]:
    """Return the analysis of a frozen table, or why it has none (fewer than two runs, ...)."""
    try:
        return analyse(target, Source(table, gold, scores), request)
    except InvalidInput as exc:
        return {**_request_record(request), "unavailable": exc.message}


def describe_analysis(analysis: Mapping[str, Any] | None) -> str:
    """Return one line saying how a frozen table was analysed, or why it was not."""
    if analysis is None:
        return "Frozen before freezes stored an analysis."
    if "unavailable" in analysis:
        return f"No analysis frozen with it: {analysis['unavailable']}"
    how = analysis["method"]
    if analysis["samples"] is not None:
        how += f", {analysis['samples']:,} samples, seed {analysis['seed']}"
    count = len(analysis["clusters"])
    return (
        f"Analysis frozen with it ({how}; {analysis['correction']}-adjusted p < "
        f"{analysis['alpha']}): {count} cluster{'' if count == 1 else 's'} of "
        f"{len(analysis['runs'])} ranked runs."
    )


def freeze(
    session: Session,
    store: FileStore,
    settings: Settings,
    target: Target,
    *,
    actor: str,
    now: datetime,
    request: Request | None = None,
) -> FrozenTable:
    """Store the official ranking as displayed, with its analysis and the hashes to verify both.

    The analysis (``request``, else as the set's current one, else the defaults) is computed on
    the frozen table's own runs, so that ``verify`` can recompute it from the re-scored runs.
    """
    existing = frozen_of(session, target)
    if existing is not None:
        raise frozen_once(target, existing)
    runs = official_runs(session, target)
    # The snapshot keeps what the public was shown: anonymous names stay after a reveal.
    masked = masked_names(session, target, PUBLIC)
    inputs = table_inputs(session, store, target, runs, include_late=False, masked=masked)
    frozen_at = now.isoformat()
    table = render(target, inputs, official=True, frozen_at=frozen_at)
    parsed_gold, _files = load_gold(session, store, target)
    analysis = _analysis(
        target,
        table,
        parsed_gold,
        partial(stored_scores, session),
        request or freeze_request(session, target, table.official_key),
    )
    if "unavailable" not in analysis:
        table = annotate(table, analysis, target.family.measure_specs(target.context()))
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
        "runs": [_run_record(run, entry) for run, entry in zip(runs, inputs.entries, strict=True)],
        "analysis": analysis,
    }
    table_json = exports.table_to_dict(table)
    renders = {fmt: render_fn(table) for fmt, render_fn in RENDERERS.items()}
    snapshot = FrozenTable(
        subtask_id=target.subtask.id,
        eval_set_id=target.eval_set.id,
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
    )
    session.commit()
    return snapshot


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
    session: Session, store: FileStore, target: Target, gold: dict[str, Any], report: VerifyReport
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


def verify(session: Session, store: FileStore, settings: Settings, target: Target) -> VerifyReport:
    """Re-score the frozen runs from the stored files and gold, and compare with the snapshot."""
    snapshot = frozen_of(session, target)
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
    entries: list[Entry] = []
    kept: dict[int, RescoredRun] = {}
    for item in manifest["runs"]:
        rec = item["entry"]
        label = rec["label"] or f"{rec['team']}-{rec['slot']}"
        report.checked_runs += 1
        streams = {}
        for name, sha in item["files"].items():
            key = FileStore.key_for(sha)
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
        )
        results = evaluation.results
        if results is None:
            errors = evaluation.verdict.errors
            first = errors[0].message if errors else "the run could not be read"
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
        table = render(
            target,
            TableInputs(entries, manifest["options"]),
            official=True,
            frozen_at=manifest["frozen_at"],
        )
        stored = manifest.get("analysis")
        if stored is not None:
            table = _recheck_analysis(target, table, gold, kept, stored, report)
        rebuilt = exports.table_to_dict(table)
        if report.ok and _canonical(rebuilt) != _canonical(snapshot.table):
            report.differences.append(
                "the table rebuilt from the re-scored runs differs from the frozen table"
            )
    return report


@dataclass(frozen=True)
class RescoredRun:
    """What verify re-scored of a frozen run: its measures and its per-item predictions."""

    results: Mapping[str, MeasureResult]
    item_values: Mapping[str, Any] | None

    def kept(self, measure: str) -> StoredScore | None:
        """Return what the run would keep of a measure, as stored scores do."""
        result = self.results.get(measure)
        if result is None or result.raw is None:
            return None
        return StoredScore(result.per_query, result.item_stats, self.item_values)


#: How many of an analysis' differing numbers verify lists.
LISTED_DIFFERENCES = 5


def _recheck_analysis(
    target: Target,
    table: Table,
    gold: Any,
    runs: Mapping[int, RescoredRun],
    stored: dict[str, Any],
    report: VerifyReport,
) -> Table:
    """Recompute the frozen analysis from the re-scored runs; report what differs from it."""

    def scores(run_ids: list[int], measure: str) -> dict[int, StoredScore]:
        found = {i: runs[i].kept(measure) for i in run_ids if i in runs}
        return {i: kept for i, kept in found.items() if kept is not None}

    again = _analysis(target, table, gold, scores, _request_of(stored))
    report.differences += analysis_differences(stored, again)
    if "unavailable" in again:
        return table
    return annotate(table, again, target.family.measure_specs(target.context()))


def analysis_differences(stored: dict[str, Any], again: dict[str, Any]) -> list[str]:
    """Return what differs between a frozen analysis and its recomputation, a line each."""
    if "unavailable" in stored or "unavailable" in again:
        if stored.get("unavailable") == again.get("unavailable"):
            return []
        was = stored.get("unavailable") or "computed"
        now = again.get("unavailable") or "computed"
        return [f"analysis: the snapshot's was {was}; recomputed, it is {now}"]
    found: list[str] = []
    for key in ("measure", "method", "samples", "seed", "alpha", "correction", "runs"):
        if stored[key] != again[key]:
            found.append(f"analysis: {key} is {again[key]!r}, the snapshot says {stored[key]!r}")
    old_pairs = {(p["a"], p["b"]): p for p in stored["pairs"]}
    for pair in again["pairs"]:
        old = old_pairs.get((pair["a"], pair["b"]))
        if old is None:
            found.append(f"analysis: the pair {pair['a']} / {pair['b']} is not in the snapshot")
            continue
        for key in ("diff", "p", "p_adjusted", "significant"):
            if pair[key] != old[key]:
                found.append(
                    f"analysis: {key} of {pair['a']} / {pair['b']} is {pair[key]!r}, "
                    f"the snapshot says {old[key]!r}"
                )
    if again["clusters"] != stored["clusters"]:
        found.append(
            f"analysis: the clusters are {again['clusters']}, the snapshot says {stored['clusters']}"
        )
    new_intervals, old_intervals = again["intervals"], stored["intervals"]
    for run_id in sorted({*new_intervals, *old_intervals}, key=int):
        measures = {**new_intervals.get(run_id, {}), **old_intervals.get(run_id, {})}
        for key in measures:
            interval = new_intervals.get(run_id, {}).get(key)
            old_interval = old_intervals.get(run_id, {}).get(key)
            if interval != old_interval:
                found.append(
                    f"analysis: the interval of run {run_id} on {key} is {interval}, "
                    f"the snapshot says {old_interval}"
                )
    if len(found) > LISTED_DIFFERENCES:
        more = len(found) - LISTED_DIFFERENCES
        found = [*found[:LISTED_DIFFERENCES], f"analysis: … and {more:,} more differences"]
    return found
