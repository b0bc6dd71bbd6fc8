"""The STS family's hooks: parts, uploads and archives, gold, validation, scoring, baseline."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

import numpy as np

from leaderboard.formats import sts as fmt
from leaderboard.formats.archive import ArchiveError, ArchiveLimits, match_members, read_archive
from leaderboard.formats.bounded import InputBound
from leaderboard.formats.issues import Issue, quoted
from leaderboard.scoring.correlation import MEASURES
from leaderboard.scoring.resampling import UnitRows
from leaderboard.tables.model import MeasureSpec
from leaderboard.tasks.definition import DefinitionError, TaskDefinition
from leaderboard.tasks.families.base import (
    SET_OPTION,
    BaselineRun,
    Context,
    Family,
    GoldAddress,
    GoldSlot,
    MarkerNote,
    MeasureResult,
    RunInputs,
    RunPathError,
    StoredScore,
    UploadField,
    Verdict,
    check_units,
    read_all,
)
from leaderboard.tasks.families.sts import parts
from leaderboard.tasks.families.sts.baseline import baseline_scores
from leaderboard.tasks.families.sts.scoring import (
    CONSTANT_ON_SCORED,
    CONSTANT_ON_SCORED_NOTE,
    item_values,
    measure_results,
    unit_rows,
)
from leaderboard.tasks.families.sts.style import STYLE

RECIPES = ("cosine-bow",)
#: Why a part of the set has no value on a split's part holding none of its pairs.
NO_PAIRS = "none of this part's pairs is in this split's part"
#: Upload field for a whole run sent as one .zip or .tar.gz.
ARCHIVE_FIELD = "archive"
#: What an archive may hold beyond the run files themselves (headers, a README).
ARCHIVE_SLACK = 4 << 20


@dataclass(frozen=True)
class StsGoldBundle:
    """The gold of every part of a set, the parts' file specs and their weights."""

    golds: dict[str, fmt.StsGold]
    specs: tuple[fmt.StsSetSpec, ...]
    weights: dict[str, int]
    overall: str
    #: The parts whose weight is their number of scored pairs (no ``weight`` declared): on a
    #: split's part of the set, their weight is the part's number of their pairs.
    counted: frozenset[str] = frozenset()


def _parts(ctx: Context) -> list[dict[str, Any]]:
    return list(ctx.set.options.get("parts", []))


def _spec(part: Mapping[str, Any]) -> fmt.StsSetSpec:
    return fmt.StsSetSpec(
        slug=str(part["slug"]),
        lines=int(part["lines"]),
        input_name=str(part.get("input_name", f"the {part['slug']} input file")),
        ascii_hint=bool(part.get("ascii_hint", False)),
        filtered_lines=int(part["filtered_lines"]) if "filtered_lines" in part else None,
    )


class StsFamily(Family[StsGoldBundle, Mapping[str, np.ndarray]]):
    """Similarity scores per pair; Pearson per part and their pair-weighted mean."""

    name = "sts"
    file_roles: dict[str, bool] = {}
    group_keys = {"parts": ("gold", "input", "mapping")}
    table_styles = (STYLE,)
    flag_notes = {CONSTANT_ON_SCORED: MarkerNote("§", CONSTANT_ON_SCORED_NOTE)}
    multi_file = True
    unit = "pair"
    unit_plural = "pairs"
    recipes = RECIPES

    def check_definition(self, definition: TaskDefinition) -> None:
        """Require parts with line counts and gold files, and measures = overall + part slugs."""
        self.check_recipes(definition)
        for i, st in enumerate(definition.subtasks):
            where = f"subtasks[{i}]"
            if st.measures[0] != st.official_measure:
                raise DefinitionError(
                    f"{where}.measures", "must start with the overall (official) measure"
                )
            for j, s in enumerate(st.sets):
                parts = s.options.get("parts")
                if not parts:
                    raise DefinitionError(
                        f"{where}.sets[{j}].parts", "is required: the evaluation parts of the set"
                    )
                for k, part in enumerate(parts):
                    pkey = f"{where}.sets[{j}].parts[{k}]"
                    lines = part.get("lines")
                    if not isinstance(lines, int) or lines < 2:
                        raise DefinitionError(
                            f"{pkey}.lines", "must be the run's line count (an integer ≥ 2)"
                        )
                    if f"gold:{part['slug']}" not in s.files:
                        raise DefinitionError(f"{pkey}.gold", "is required (a file path)")
                    if part["slug"] not in st.measures:
                        raise DefinitionError(
                            f"{where}.measures", f"must list the part {quoted(part['slug'])}"
                        )
                    if (
                        "cosine-bow" in definition.baseline_recipes
                        and f"input:{part['slug']}" not in s.files
                    ):
                        raise DefinitionError(
                            f"{pkey}.input", "is required by the cosine-bow baseline"
                        )
                    weight = part.get("weight")
                    if weight is not None and (not isinstance(weight, int) or weight <= 0):
                        raise DefinitionError(f"{pkey}.weight", "must be a positive integer")

    def measure_specs(self, ctx: Context) -> list[MeasureSpec]:
        """Return the overall column, then one column per part of the set (Pearson, 5 decimals)."""
        overall = ctx.subtask.official_measure
        label = str(ctx.subtask.options.get("overall_label", overall))
        specs = [MeasureSpec.of(MEASURES.get(overall).renamed(overall, label), official=True)]
        for part in _parts(ctx):
            slug = str(part["slug"])
            measure = MEASURES.get(slug).renamed(slug, str(part.get("label", slug)))
            specs.append(MeasureSpec.of(measure))
        return specs

    def run_fields(self, ctx: Context) -> list[str]:
        """Return one upload field per part (or one archive field holding them all)."""
        return [str(p["slug"]) for p in _parts(ctx)]

    def upload_fields(self, ctx: Context) -> list[UploadField]:
        """Return one field per part, then the archive field that may hold them all instead."""
        fields = [
            UploadField(
                str(p["slug"]),
                f"Output for {p.get('label', p['slug'])} (plain text or .gz)",
                f"The output for the part {p['slug']}, plain text or gzip.",
            )
            for p in _parts(ctx)
        ]
        fields.append(
            UploadField(
                ARCHIVE_FIELD,
                "Or all outputs in one .zip or .tar.gz",
                "All parts' outputs in one .zip, .tar or .tar.gz, each named after its part.",
            )
        )
        return fields

    def gold_slots(self, ctx: Context) -> list[GoldSlot]:
        """Return the gold file of each part (chosen with ``--set PART``)."""
        return [
            GoldSlot(
                f"gold:{p['slug']}",
                f"gold of {p['slug']}",
                GoldAddress(SET_OPTION, str(p["slug"]), "part"),
            )
            for p in _parts(ctx)
        ]

    def load_gold(self, files: Mapping[str, bytes], ctx: Context) -> StsGoldBundle:
        """Parse every part's gold (with its mapping, if any) and fix the weights."""
        golds: dict[str, fmt.StsGold] = {}
        weights: dict[str, int] = {}
        counted: set[str] = set()
        for part in _parts(ctx):
            slug = str(part["slug"])
            gold = fmt.parse_gold(
                files[f"gold:{slug}"], slug=slug, mapping=files.get(f"mapping:{slug}")
            )
            golds[slug] = gold
            weights[slug] = int(part.get("weight") or gold.scored_index.size)
            if not part.get("weight"):
                counted.add(slug)
        return StsGoldBundle(
            golds,
            tuple(_spec(p) for p in _parts(ctx)),
            weights,
            ctx.subtask.official_measure,
            frozenset(counted),
        )

    def inputs_from_path(self, path: Path, ctx: Context) -> dict[str, IO[bytes]]:
        """Open a run given as a folder (files matched to parts by name) or as an archive."""
        if path.is_file():
            return {ARCHIVE_FIELD: path.open("rb")}
        members = {p.name: p.read_bytes() for p in sorted(path.iterdir()) if p.is_file()}
        matched, problems = match_members(members, self.run_fields(ctx))
        errors = [p.message for p in problems if p.severity == "error"]
        if errors:
            raise RunPathError(" ".join(errors))
        return self.memory_inputs(matched)

    def input_bounds(self, gold: StsGoldBundle, ctx: Context) -> dict[str, InputBound]:
        """Bound each part's file by its line count, and an archive by all parts together."""
        bounds = {
            spec.slug: InputBound(
                max_bytes=min(fmt.max_file_bytes(spec), ctx.max_decompressed),
                max_lines=2 * spec.lines + 100,
                reason=f"a run file for {spec.slug} has one score per line, {spec.lines:,} lines",
                label=f"{spec.slug}: the file",
            )
            for spec in gold.specs
        }
        total = sum(b.max_bytes for b in bounds.values())
        bounds[ARCHIVE_FIELD] = InputBound(
            # Room for every part, tar headers and a few ignored files such as a README.
            max_bytes=min(total + ARCHIVE_SLACK, ctx.max_decompressed),
            reason=f"it would hold more than the {len(bounds)} run files of {ctx.where} need",
            label="The archive",
        )
        return bounds

    def _expand(
        self, inputs: RunInputs, gold: StsGoldBundle, ctx: Context
    ) -> tuple[dict[str, bytes], list[Issue], list[Issue]]:
        """Return the files by part: form fields as given, or an archive's members by name."""
        fields = self.run_fields(ctx)
        files = {k: read_all(v) for k, v in inputs.items() if k in fields}
        unknown = sorted(set(inputs) - set(fields) - {ARCHIVE_FIELD})
        errors = [
            Issue(
                None, f"{k}: a file was given for an unknown set; this run has {', '.join(fields)}."
            )
            for k in unknown
        ]
        warnings: list[Issue] = []
        if ARCHIVE_FIELD in inputs:
            if files:
                errors.append(Issue(None, "Send either one archive or one file per set, not both."))
                return {}, errors, warnings
            bounds = self.input_bounds(gold, ctx)
            limits = ArchiveLimits(
                max_member_bytes=max(b.max_bytes for k, b in bounds.items() if k in fields),
                max_total_bytes=bounds[ARCHIVE_FIELD].max_bytes,
            )
            try:
                members = read_archive(read_all(inputs[ARCHIVE_FIELD]), limits=limits)
            except ArchiveError as exc:
                return {}, [*errors, Issue(None, str(exc))], warnings
            matched, problems = match_members(members, fields)
            errors += [p for p in problems if p.severity == "error"]
            warnings += [p for p in problems if p.severity == "warning"]
            files = matched
        return files, errors, warnings

    def validate_inputs(
        self,
        inputs: RunInputs,
        gold: StsGoldBundle,
        ctx: Context,
        *,
        lenient: bool,
        options: Mapping[str, Any],
    ) -> Verdict[Mapping[str, np.ndarray]]:
        """Validate every part's file; one error anywhere rejects the whole run."""
        files, errors, warnings = self._expand(inputs, gold, ctx)
        if errors:
            return Verdict(errors, warnings)
        if not lenient:
            values, errs, warns = fmt.validate_run(files, gold.specs)
            return Verdict(errs, warnings + warns, values if not errs else None)
        parsed: dict[str, np.ndarray] = {}
        report: list[str] = []
        for spec in gold.specs:
            if spec.slug not in files:
                errors.append(Issue(None, f"{spec.slug}: no output file was given."))
                continue
            vals, errs, notes = fmt.parse_lenient_file(
                files[spec.slug], spec, gold.golds[spec.slug]
            )
            errors += errs
            report += notes
            if vals is not None:
                parsed[spec.slug] = vals
        if errors:
            return Verdict(errors, warnings, tolerances=tuple(report))
        return Verdict(
            [], warnings, parsed, tuple(report), {"tolerances": report} if report else {}
        )

    def score(
        self, parsed: Mapping[str, np.ndarray], gold: StsGoldBundle
    ) -> dict[str, MeasureResult]:
        """Pearson per part over its scored pairs; overall = sum(n_s r_s) / sum(n_s)."""
        return measure_results(parsed, gold.golds, gold.weights, gold.overall)

    def item_values(
        self, parsed: Mapping[str, np.ndarray], gold: StsGoldBundle
    ) -> dict[str, float]:
        """Return the prediction on every scored pair, by part and 1-based run line."""
        return item_values(parsed, gold.golds)

    def unit_rows(
        self, key: str, gold: StsGoldBundle, stored: StoredScore
    ) -> tuple[list[str], UnitRows]:
        """Return the scored pairs and their rows (Pearson's sums per part) for one measure."""
        return unit_rows(key, gold.golds, gold.weights, gold.overall, stored)

    def unit_ids(self, gold: StsGoldBundle) -> list[str]:
        """Return the scored pairs' ids (``headlines:12``), part by part, as ``unit_rows`` does."""
        return parts.unit_ids(gold.golds)

    def restrict_gold(self, gold: StsGoldBundle, units: frozenset[str]) -> StsGoldBundle:
        """Return the gold of these pairs, each part's as its own gold file of them would parse.

        Parts with none of the pairs are left out. A declared part weight stays; a counted one
        becomes the part's number of chosen pairs, as its own gold file would count them.
        """
        check_units(units, self.unit_ids(gold))
        golds = parts.restrict_golds(gold.golds, units)
        return replace(
            gold,
            golds=golds,
            specs=tuple(
                replace(spec, lines=golds[spec.slug].scored_index.size, filtered_lines=None)
                for spec in gold.specs
                if spec.slug in golds
            ),
            weights={
                slug: golds[slug].scored_index.size if slug in gold.counted else gold.weights[slug]
                for slug in golds
            },
        )

    def restrict_run(
        self, parsed: Mapping[str, np.ndarray], gold: StsGoldBundle, units: frozenset[str]
    ) -> Mapping[str, np.ndarray]:
        """Return each part's values on these pairs, one per chosen pair in gold order."""
        return parts.restrict_values(parsed, gold.golds, units)

    def score_part(
        self,
        parsed: Mapping[str, np.ndarray],
        gold: StsGoldBundle,
        part_gold: StsGoldBundle,
        units: frozenset[str],
    ) -> dict[str, MeasureResult]:
        """Score a run on a part of the pairs; a part of the set without any has no value."""
        found = self.score(self.restrict_run(parsed, gold, units), part_gold)
        out = {gold.overall: found[gold.overall]}
        for slug in gold.golds:
            out[slug] = found[slug] if slug in found else MeasureResult.undefined(NO_PAIRS)
        return out

    def baselines(
        self, gold: StsGoldBundle, files: Mapping[str, bytes], ctx: Context
    ) -> list[BaselineRun]:
        """Build the cosine of binary bag-of-words baseline from the parts' input files."""
        out: list[BaselineRun] = []
        if "cosine-bow" not in ctx.definition.baseline_recipes:
            return out
        run_files = {
            slug: fmt.render_scores(baseline_scores(files[f"input:{slug}"].decode("utf-8")))
            for slug in self.run_fields(ctx)
        }
        note = str(ctx.subtask.options.get("baseline_note", ""))
        out.append(
            BaselineRun(
                role="cosine-bow",
                label="baseline",
                order=1,
                visible_measures=tuple(s.key for s in self.measure_specs(ctx)),
                files=run_files,
                description="Cosine of binary bag-of-words vectors (whitespace tokens, case and punctuation kept)"
                + (f"; {note}" if note else "."),
            )
        )
        return out
