"""The trec family: ranked lists scored per qrels variant with trec_eval's measures."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import IO, Any

import numpy as np

from leaderboard.formats import trec as fmt
from leaderboard.formats.issues import quoted
from leaderboard.scoring.registry import UnknownMeasure
from leaderboard.scoring.resampling import SummedRows, UnitRows
from leaderboard.scoring.trec_measures import GEO_MEAN_FLOOR, TREC_REGISTRY, TrecMeasureKey
from leaderboard.tables.model import MeasureSpec
from leaderboard.tasks.definition import DefinitionError, TaskDefinition
from leaderboard.tasks.families.base import (
    BaselineRun,
    Context,
    GoldAddress,
    GoldAddressOption,
    GoldSlot,
    MeasureResult,
    PartGold,
    ReferenceFileError,
    SingleFileFamily,
    StoredScore,
    Verdict,
    check_units,
)
from leaderboard.tasks.families.trec.parts import (
    part_result,
    restrict_qrels,
    restrict_run,
    separable,
)
from leaderboard.tasks.families.trec.scoring import score_variant, truncated
from leaderboard.tasks.families.trec.style import STYLE
from leaderboard.tasks.families.trec.variants import (
    MEASURE_OPTIONS,
    Variant,
    canonical,
    check_measure_options,
    check_measures,
    check_set,
    measure_options,
    missing_topics,
    set_variants,
    variant_measures,
)


@dataclass(frozen=True)
class TrecGold:
    """A set's topics and loaded qrels variants, with the measures asked of each variant."""

    topics: frozenset[str]
    qrels: dict[str, fmt.Qrels]
    #: Every variant of the set by slug, loaded or not.
    variants: dict[str, Variant]
    settings: fmt.TrecSettings
    #: Per variant slug, the measures to compute.
    measures: dict[str, tuple[TrecMeasureKey, ...]] = field(default_factory=dict)
    missing: str = "zero"

    @property
    def thresholds(self) -> dict[str, int]:
        """Return each variant's relevance threshold by slug."""
        return {slug: v.threshold for slug, v in self.variants.items()}


def trec_settings(definition: TaskDefinition) -> fmt.TrecSettings:
    """Build the run-format settings from the definition's ``[format]`` table."""
    known = {f.name for f in fields(fmt.TrecSettings)}
    unknown = sorted(set(definition.format) - known)
    if unknown:
        raise DefinitionError(f"format.{unknown[0]}", f"unknown setting; known: {sorted(known)}")
    try:
        return fmt.TrecSettings(**definition.format)
    except (TypeError, ValueError) as exc:
        raise DefinitionError("format", str(exc)) from None


def read_topics(data: bytes) -> frozenset[str]:
    """Return the topic ids of a topics file: each line's first field; ``#`` lines are comments.

    A line may carry the query text after its id (e.g. ``qid<TAB>text``); it is not read.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReferenceFileError("topics", f"the topics file is not UTF-8 text ({exc}).") from None
    ids = set()
    for line in text.splitlines():
        first = line.split(None, 1)
        if first and not first[0].startswith("#"):
            ids.add(first[0])
    if not ids:
        raise ReferenceFileError("topics", "the topics file lists no topic.")
    return frozenset(ids)


#: ``set-gold --variant NAME`` names one qrels variant of a set.
VARIANT = GoldAddressOption("variant", "Qrels variant, e.g. lenient or manual.")


class TrecFamily(SingleFileFamily[TrecGold, fmt.TrecRun]):
    """TREC run files scored per qrels variant with trec_eval 9.0.8 semantics."""

    name = "trec"
    file_roles = {"topics": False, "qrels": False}
    group_keys = {"variants": ("qrels",)}
    table_styles = (STYLE,)
    gold_address_options = (VARIANT,)
    #: Measure options at the top level or per subtask (a set may override them too).
    option_keys = MEASURE_OPTIONS
    #: Real runs average about 100 bytes a line.
    average_line_bytes = 1024

    def check_definition(self, definition: TaskDefinition) -> None:
        """Require qrels (one file or variants with thresholds), known measures and settings."""
        self.check_recipes(definition)
        trec_settings(definition)
        try:
            canonical(definition.official_measure)
        except UnknownMeasure as exc:
            raise DefinitionError("official_measure", str(exc)) from None
        check_measure_options(definition.options, "")
        for i, st in enumerate(definition.subtasks):
            self.check_subtask_keys(st, f"subtasks[{i}]")
            check_measure_options(st.options, f"subtasks[{i}].")
            slugs: set[str] = set()
            for j, s in enumerate(st.sets):
                where = f"subtasks[{i}].sets[{j}]"
                variants = check_set(s, where, "qrels" in s.files)
                check_measures(st, variants, f"subtasks[{i}]")
                slugs.update(v.slug for v in variants)
            sort_variant = definition.table.get("sort_variant")
            if sort_variant is not None and sort_variant not in slugs:
                raise DefinitionError(
                    "table.sort_variant", f"{quoted(sort_variant)} is not a variant of every set"
                )

    def measure_specs(self, ctx: Context) -> list[MeasureSpec]:
        """Return the listed measures per variant with loaded qrels (all variants if unknown)."""
        official = canonical(ctx.subtask.official_measure)
        specs = []
        for v in set_variants(ctx.set):
            if ctx.loaded is not None and v.role not in ctx.loaded:
                continue
            for m in variant_measures(ctx.subtask, v):
                key = v.key(m.key)
                specs.append(
                    MeasureSpec.of(
                        TREC_REGISTRY.get(m.key).renamed(key),
                        official=key == official,
                        group=v.label or None,
                    )
                )
        return specs

    def gold_slots(self, ctx: Context) -> list[GoldSlot]:
        """Return one qrels file per variant of the set."""
        return [
            GoldSlot(
                v.role,
                f"qrels {v.slug} (relevant ≥ {v.threshold})"
                if v.slug
                else f"qrels (relevant ≥ {v.threshold})",
                GoldAddress(VARIANT.name, v.slug, "variant") if v.slug else None,
            )
            for v in set_variants(ctx.set)
        ]

    def load_gold(self, files: Mapping[str, bytes], ctx: Context) -> TrecGold:
        """Parse the topics (or take them from the qrels) and every loaded qrels variant."""
        settings = trec_settings(ctx.definition)
        topics = read_topics(files["topics"]) if "topics" in files else None
        qrels: dict[str, fmt.Qrels] = {}
        variants = {v.slug: v for v in set_variants(ctx.set)}
        measures: dict[str, tuple[TrecMeasureKey, ...]] = {}
        options = measure_options(ctx.definition, ctx.subtask, ctx.set)
        for v in variants.values():
            measures[v.slug] = tuple(variant_measures(ctx.subtask, v, options))
            data = files.get(v.role)
            if data is None:
                continue
            parsed, issues = fmt.parse_qrels(data, topics=topics, settings=settings)
            if parsed is None:
                raise ReferenceFileError.listing(v.role, issues)
            qrels[v.slug] = parsed
        if topics is None:
            topics = frozenset(q for parsed in qrels.values() for q in parsed.queries)
        return TrecGold(topics, qrels, variants, settings, measures, missing_topics(ctx.set))

    def run_lines(self, gold: TrecGold, ctx: Context) -> tuple[int, str]:
        """Bound a run by its topics and depth: at most ``max_per_query`` lines per topic."""
        topics = len(gold.topics)
        depth = gold.settings.max_per_query
        reason = (
            f"a run for {ctx.where} ranks at most {depth:,} results for each of {topics:,} topics"
        )
        if gold.settings.over_limit == "truncate":
            # Deeper runs are cut at scoring; a topic with twice the depth still stops the check.
            return topics * depth * 2 + 1000, reason
        return topics * depth + 1000, reason

    def validate_file(
        self,
        stream: IO[bytes],
        gold: TrecGold,
        ctx: Context,
        *,
        lenient: bool,
        options: Mapping[str, Any],
    ) -> Verdict[fmt.TrecRun]:
        """Validate a run in one streaming pass (strict) or as trec_eval read it (lenient)."""
        if lenient:
            run, errors, tolerated = fmt.parse_lenient(stream)
            info: dict[str, Any] = {"tolerances": tolerated} if tolerated else {}
            if run is not None:
                info["run_tag"] = run.tag
            return Verdict(errors, [], run if not errors else None, tuple(tolerated), info)
        run, errors, warnings = fmt.validate_run(
            stream,
            topics=gold.topics,
            settings=gold.settings,
            form_run_name=options.get("run_name"),
            name_source=options.get("run_name_source") or fmt.NAME_SOURCE,
        )
        return Verdict(errors, warnings, run, (), {"run_tag": run.tag} if run is not None else {})

    def score(self, parsed: fmt.TrecRun, gold: TrecGold) -> dict[str, MeasureResult]:
        """Score against every loaded variant, keeping each measure's per-query values."""
        out: dict[str, MeasureResult] = {}
        if gold.settings.over_limit == "truncate":
            parsed = truncated(parsed, gold.settings.max_per_query)
        for slug, qrels in gold.qrels.items():
            variant = gold.variants[slug]
            measures = gold.measures[slug]
            scores = score_variant(parsed, qrels, variant.threshold, measures, missing=gold.missing)
            for m in measures:
                value = scores.evaluation.means[m.key]
                out[variant.key(m.key)] = MeasureResult(
                    value,
                    TREC_REGISTRY.get(m.key).official(value),
                    gold_role=variant.role,
                    per_query=scores.per_query(m.key),
                )
        return out

    def unit_rows(
        self, key: str, gold: TrecGold, stored: StoredScore
    ) -> tuple[list[str], UnitRows]:
        """Return per-topic rows: means as they are, gm_* as logs of floored values, counts summed."""
        units, rows = super().unit_rows(key, gold, stored)
        kind = next(
            (m for slug, ms in gold.measures.items() for m in ms
             if gold.variants[slug].key(m.key) == key),
            None,
        )  # fmt: skip
        values = rows.rows[:, 0]
        n = len(values)
        if kind is not None and kind.is_geometric:
            logs = np.log(np.maximum(values, GEO_MEAN_FLOOR)).reshape(-1, 1)
            return units, SummedRows(logs, lambda s: np.exp(s[..., 0] / n))
        if kind is not None and kind.is_count:
            return units, SummedRows(values.reshape(-1, 1), lambda s: s[..., 0])
        return units, rows

    def unit_ids(self, gold: TrecGold) -> list[str]:
        """Return the judged queries of every loaded variant, in qrels order (the first's first)."""
        return list(dict.fromkeys(q for qrels in gold.qrels.values() for q in qrels.queries))

    def restrict_gold(self, gold: TrecGold, units: frozenset[str]) -> TrecGold:
        """Return the topics and qrels of these queries; measures and settings stay the set's."""
        check_units(units, self.unit_ids(gold))
        return replace(
            gold,
            topics=gold.topics & units,
            qrels={slug: restrict_qrels(qrels, units) for slug, qrels in gold.qrels.items()},
        )

    def restrict_run(
        self, parsed: fmt.TrecRun, gold: TrecGold, units: frozenset[str]
    ) -> fmt.TrecRun:
        """Return the run's lines for these queries, as trec_eval reads a run cut to them."""
        return restrict_run(parsed, units)

    def score_parts(
        self,
        parsed: fmt.TrecRun,
        gold: TrecGold,
        results: Mapping[str, MeasureResult],
        parts: Mapping[str, PartGold],
    ) -> dict[str, dict[str, MeasureResult]]:
        """Score a run on each part: from its per-query values where every measure allows it.

        trec_eval on the part's qrels and the run cut to them computes each query's value from
        that query alone and averages over the part's evaluated queries; our kernel does the
        same bit for bit for separable measures, so cutting, re-ranking and re-matching the run
        for each part would only repeat the whole run's work (and hold copies of its arrays).
        """
        if not separable(gold.measures):
            return super().score_parts(parsed, gold, results, parts)
        keys = [
            (m, gold.variants[slug].key(m.key)) for slug in gold.qrels for m in gold.measures[slug]
        ]
        return {
            name: {key: part_result(m, results[key], part.units) for m, key in keys}
            for name, part in parts.items()
        }

    def describe_gold(self, gold: TrecGold, role: str) -> list[str]:
        """Report a qrels variant: counts, grade histogram, queries scoring 0 by construction."""
        slug = role.partition(":")[2]
        if slug not in gold.qrels:
            return []
        r = fmt.qrels_report(gold.qrels[slug], gold.variants[slug].threshold)
        hist = ", ".join(f"{g}: {n:,}" for g, n in r["grade_histogram"].items())
        name = f"{slug}: " if slug else ""
        noun = gold.settings.doc_noun
        lines = [
            f"{name}{r['lines']:,} judgments for {r['queries']:,} queries; grades {hist}; relevant iff grade ≥ {r['threshold']}.",
        ]
        if r["queries_without_relevant"]:
            n = len(r["queries_without_relevant"])
            lines.append(
                f"{n:,} queries have no {noun} at or above the threshold; they score 0 (first: {r['queries_without_relevant'][0]!r})."
            )
        if r["queries_all_negative"]:
            n = len(r["queries_all_negative"])
            lines.append(
                f"Warning: {n:,} queries have only negative grades; trec_eval 9.0.8 fails on runs that retrieve for them, we score them 0."
            )
        return lines

    def style_options(self, ctx: Context) -> dict[str, Any]:
        """Return the document noun and the missing-topics rule the footnotes state."""
        return {
            "doc_noun": trec_settings(ctx.definition).doc_noun,
            "missing_topics": missing_topics(ctx.set),
        }

    def table_options(self, gold: TrecGold) -> dict[str, Any]:
        """Return the query counts and thresholds the table's footnotes state."""
        return {
            "query_counts": {slug: len(q.queries) for slug, q in gold.qrels.items()},
            "thresholds": gold.thresholds,
        }

    def baselines(
        self, gold: TrecGold, files: Mapping[str, bytes], ctx: Context
    ) -> list[BaselineRun]:
        """Return no generated baseline: the server holds no corpus (organizers import one)."""
        return []
