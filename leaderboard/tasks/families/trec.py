"""The TREC family (TREC CAR 2017 style): ranked lists scored per qrels variant, as trec_eval."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from leaderboard.formats import trec as fmt
from leaderboard.formats.bounded import InputBound
from leaderboard.formats.issues import shown
from leaderboard.scoring.registry import Measure, MeasureRegistry
from leaderboard.tables.model import MeasureSpec
from leaderboard.tasks.definition import DefinitionError, TaskDefinition
from leaderboard.tasks.families.base import (
    BaselineRun,
    Context,
    Family,
    GoldSlot,
    MeasureResult,
    RunInputs,
    Verdict,
    single_file,
)

MEASURES = ("MAP", "R-Prec", "MRR")
_REGISTRY = MeasureRegistry("trec", [Measure(m, m, "fraction", 4, 4) for m in MEASURES])
#: The average line length a run may have; real runs average about 100 bytes a line.
AVERAGE_LINE_BYTES = 1024


@dataclass(frozen=True)
class TrecGold:
    """The topics and every loaded qrels variant of a set, with thresholds and format settings."""

    topics: frozenset[str]
    qrels: dict[str, fmt.Qrels]
    thresholds: dict[str, int]
    settings: fmt.TrecSettings


def variants(ctx: Context) -> list[dict[str, Any]]:
    """Return the set's qrels variants as the definition lists them."""
    return list(ctx.set.options.get("variants", []))


def trec_settings(definition: TaskDefinition) -> fmt.TrecSettings:
    """Build the run-format settings from the definition's ``[format]`` table."""
    known = {f.name for f in fields(fmt.TrecSettings)}
    unknown = sorted(set(definition.format) - known)
    if unknown:
        raise DefinitionError(f"format.{unknown[0]}", f"unknown setting; known: {sorted(known)}")
    return fmt.TrecSettings(**definition.format)


class TrecFamily(Family):
    """TREC run files; MAP, R-Prec and MRR per qrels variant with trec_eval 9.0.8 semantics."""

    name = "trec"
    file_roles = {"topics": True}
    group_keys = {"variants": ("qrels",)}
    table_styles = ("trec",)

    def check_definition(self, definition: TaskDefinition) -> None:
        """Require variants with thresholds, known measures and valid format settings."""
        if definition.baseline_recipes:
            raise DefinitionError("baselines.recipes", "the trec family has no generated baselines")
        trec_settings(definition)
        for i, st in enumerate(definition.subtasks):
            for j, s in enumerate(st.sets):
                where = f"subtasks[{i}].sets[{j}].variants"
                vs = s.options.get("variants")
                if not vs:
                    raise DefinitionError(
                        where, "is required: the qrels variants with their thresholds"
                    )
                for k, v in enumerate(vs):
                    if not isinstance(v.get("threshold"), int):
                        raise DefinitionError(f"{where}[{k}].threshold", "must be an integer grade")
                    for m in MEASURES:
                        if f"{v['slug']}/{m}" not in st.measures:
                            raise DefinitionError(
                                f"subtasks[{i}].measures", f"must list {v['slug']}/{m}"
                            )
                if not any(f"qrels:{v['slug']}" in s.files for v in vs):
                    raise DefinitionError(where, "at least one variant needs a qrels file")
            for m in st.measures:
                variant, _, measure = m.partition("/")
                if measure not in MEASURES:
                    raise DefinitionError(
                        f"subtasks[{i}].measures",
                        f"unknown measure {shown(m)}; use <variant>/{'|'.join(MEASURES)}",
                    )

    def measure_specs(self, ctx: Context) -> list[MeasureSpec]:
        """Return MAP, R-Prec and MRR per variant with loaded qrels (all variants if unknown)."""
        specs = []
        for v in variants(ctx):
            slug = str(v["slug"])
            if ctx.loaded is not None and f"qrels:{slug}" not in ctx.loaded:
                continue
            for m in MEASURES:
                key = f"{slug}/{m}"
                specs.append(
                    MeasureSpec.of(
                        _REGISTRY.get(m).renamed(key),
                        official=key == ctx.subtask.official_measure,
                        group=str(v.get("label", slug.title())),
                    )
                )
        return specs

    def run_fields(self, ctx: Context) -> list[str]:
        """Return the single upload field."""
        return ["file"]

    def gold_slots(self, ctx: Context) -> list[GoldSlot]:
        """Return one qrels file per variant of the set."""
        return [
            GoldSlot(
                f"qrels:{v['slug']}",
                f"qrels {v['slug']} (relevant ≥ {v['threshold']})",
                variant=str(v["slug"]),
            )
            for v in variants(ctx)
        ]

    def load_gold(self, files: Mapping[str, bytes], ctx: Context) -> TrecGold:
        """Parse the topic list and every loaded qrels variant."""
        settings = trec_settings(ctx.definition)
        topics = frozenset(t for t in files["topics"].decode("ascii").split() if t)
        qrels: dict[str, fmt.Qrels] = {}
        thresholds: dict[str, int] = {}
        for v in variants(ctx):
            slug = str(v["slug"])
            thresholds[slug] = int(v["threshold"])
            data = files.get(f"qrels:{slug}")
            if data is None:
                continue
            parsed, issues = fmt.parse_qrels(data, topics=topics, settings=settings)
            if parsed is None:
                errors = [i.message for i in issues if i.severity == "error"][:5]
                raise ValueError(f"qrels {slug}: " + " ".join(errors))
            qrels[slug] = parsed
        return TrecGold(topics, qrels, thresholds, settings)

    def input_bounds(self, gold: TrecGold, ctx: Context) -> dict[str, InputBound]:
        """Bound a run by its topics and depth: at most ``max_per_query`` lines per topic."""
        topics = len(gold.topics)
        depth = gold.settings.max_per_query
        max_lines = topics * depth + 1000
        return {
            "file": InputBound(
                max_bytes=min(max_lines * AVERAGE_LINE_BYTES, ctx.max_decompressed),
                max_lines=max_lines,
                reason=(
                    f"a run for {ctx.where} ranks at most {depth:,} results "
                    f"for each of {topics:,} topics"
                ),
            )
        }

    def validate_inputs(
        self,
        inputs: RunInputs,
        gold: TrecGold,
        ctx: Context,
        *,
        lenient: bool,
        options: Mapping[str, Any],
    ) -> Verdict:
        """Validate a run in one streaming pass (strict) or as trec_eval read it (lenient)."""
        stream, problems = single_file(inputs)
        if stream is None:
            return Verdict(problems, [])
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
        )
        return Verdict(errors, warnings, run, (), {"run_tag": run.tag} if run is not None else {})

    def score(self, parsed: fmt.TrecRun, gold: TrecGold) -> dict[str, MeasureResult]:
        """Score against every loaded variant: means over all its queries, missing ones 0."""
        out: dict[str, MeasureResult] = {}
        for slug, qrels in gold.qrels.items():
            values = fmt.score_run(parsed, qrels, gold.thresholds[slug])
            for m in MEASURES:
                v = values[m]
                official = _REGISTRY.get(m).official(v)
                out[f"{slug}/{m}"] = MeasureResult(v, official, gold_role=f"qrels:{slug}")
        return out

    def describe_gold(self, gold: TrecGold, role: str) -> list[str]:
        """Report a qrels variant: counts, grade histogram, queries scoring 0 by construction."""
        slug = role.partition(":")[2]
        if slug not in gold.qrels:
            return []
        r = fmt.qrels_report(gold.qrels[slug], gold.thresholds[slug])
        hist = ", ".join(f"{g}: {n:,}" for g, n in r["grade_histogram"].items())
        lines = [
            f"{slug}: {r['lines']:,} judgments for {r['queries']:,} queries; grades {hist}; relevant iff grade ≥ {r['threshold']}.",
        ]
        if r["queries_without_relevant"]:
            n = len(r["queries_without_relevant"])
            lines.append(
                f"{n:,} queries have no paragraph at or above the threshold; they score 0 (first: {r['queries_without_relevant'][0]!r})."
            )
        if r["queries_all_negative"]:
            n = len(r["queries_all_negative"])
            lines.append(
                f"Warning: {n:,} queries have only negative grades; trec_eval 9.0.8 fails on runs that retrieve for them, we score them 0."
            )
        return lines

    def table_options(self, gold: TrecGold) -> dict[str, Any]:
        """Return the query counts and thresholds the table's footnotes state."""
        return {
            "query_counts": {slug: len(q.queries) for slug, q in gold.qrels.items()},
            "thresholds": dict(gold.thresholds),
        }

    def baselines(
        self, gold: TrecGold, files: Mapping[str, bytes], ctx: Context
    ) -> list[BaselineRun]:
        """Return no generated baseline: the server holds no corpus (organizers import one)."""
        return []
