"""The generation family: outputs per source segment against references, sacrebleu's scorers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import IO, Any

import numpy as np

from leaderboard.formats import segments
from leaderboard.formats.issues import MAX_KEPT_ERRORS, Issue
from leaderboard.scoring.generation import (
    GENERATION_REGISTRY,
    GenerationOptions,
    check_option,
    default_tokenizer,
    measure_arguments,
    merge_tables,
    parse_measure,
    parse_options,
    score_run,
    scores_from_sums,
)
from leaderboard.scoring.registry import UnknownMeasure
from leaderboard.scoring.resampling import NotResampled, SummedRows, UnitRows
from leaderboard.scoring.sacrebleu_stats import ReferenceCache
from leaderboard.tables.model import MeasureSpec
from leaderboard.tasks.definition import DefinitionError, SetDef, SubtaskDef, TaskDefinition
from leaderboard.tasks.families.base import (
    BaselineRun,
    Context,
    MeasureResult,
    ReferenceFileError,
    SingleFileFamily,
    StoredScore,
    Verdict,
    check_units,
    read_all,
)

RECIPES = ("copy-source",)
#: A run may hold this many lines beyond the source's, so that a count error can be reported.
SPARE_LINES = 100
#: An output line may be this many times as long as the longest reference segment (and at
#: least LONGEST_FLOOR characters): TER's cost grows with the square of a line's length, so an
#: unbounded line could hold a worker for minutes.
LONGEST_FACTOR = 4
LONGEST_FLOOR = 1000


@dataclass(frozen=True, eq=False)
class GenerationGold:
    """A set's source and reference segments, with the measures and sacrebleu options."""

    source: list[str]
    references: list[list[str]]
    measures: tuple[str, ...]
    options: GenerationOptions
    #: The references tokenized once and kept with the cached gold for every later run.
    cache: ReferenceCache = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "cache", ReferenceCache(self.references))


def reference_roles(files: Mapping[str, Any]) -> list[str]:
    """Return the roles of a set's reference files in their listed order."""
    return sorted(
        (r for r in files if r.startswith("references:")), key=lambda r: int(r.partition(":")[2])
    )


def options_of(
    definition: TaskDefinition, subtask: SubtaskDef, evaluation_set: SetDef | None = None
) -> GenerationOptions:
    """Return a set's sacrebleu options: the top level's, then the subtask's, then the set's."""
    levels = [
        ("sacrebleu", definition.options.get("sacrebleu")),
        ("sacrebleu", subtask.options.get("sacrebleu")),
        ("sets.sacrebleu", evaluation_set.options.get("sacrebleu") if evaluation_set else None),
    ]
    for where, table in levels:
        if table is not None and not isinstance(table, dict):
            raise DefinitionError(where, 'must be a table, e.g. { tokenize = "13a" }')
        try:
            parse_options(table)
        except ValueError as exc:
            raise DefinitionError(where, str(exc)) from None
    options = parse_options(merge_tables(*(table for _, table in levels)))
    language = evaluation_set.options.get("target_language") if evaluation_set else None
    if not isinstance(language, str) or not language:
        return options
    options = replace(options, target_language=language)
    default = default_tokenizer(language)
    if options.tokenize is None and default != "13a":
        # sacrebleu picks BLEU's tokenizer by target language; MeCab's need their packages.
        for key in subtask.measures:
            try:
                name, arguments = measure_arguments(key, options)
            except ValueError:
                continue  # an unknown or wrong measure is refused with its own message
            if name != "BLEU" or arguments["tokenize"] != default:
                continue
            try:
                check_option("tokenize", default)
            except ValueError as exc:
                raise DefinitionError(
                    "sacrebleu",
                    f"sacrebleu's BLEU tokenizer for target language {language!r} is "
                    f"{default!r}; {exc}; state tokenize in the sacrebleu table to use another",
                ) from None
    return options


def too_long(hypotheses: list[str], gold: GenerationGold) -> list[Issue]:
    """Return an error for each output line far longer than any reference segment."""
    longest = max((len(s) for ref in gold.references for s in ref), default=0)
    limit = max(LONGEST_FLOOR, LONGEST_FACTOR * longest)
    return [
        Issue(
            n,
            f"Line {n}: {len(text):,} characters; an output line may have at most {limit:,} "
            f"({LONGEST_FACTOR} × the longest reference segment).",
        )
        for n, text in enumerate(hypotheses, 1)
        if len(text) > limit
    ][:MAX_KEPT_ERRORS]


def segment_rows(units: frozenset[str]) -> list[int]:
    """Return the 0-based rows of segments named by their 1-based line numbers, in order."""
    return sorted(int(u) - 1 for u in units)


class GenerationFamily(SingleFileFamily[GenerationGold, list[str]]):
    """Runs give one output line per source segment; BLEU, chrF, chrF++ and TER by sacrebleu."""

    name = "generation"
    file_roles = {"source": True}
    list_roles = ("references",)
    option_keys = ("sacrebleu",)
    table_styles = ("ranked",)
    unit = "segment"
    unit_plural = "segments"
    recipes = RECIPES
    #: Long segments are a few hundred bytes.
    average_line_bytes = 4096

    def check_definition(self, definition: TaskDefinition) -> None:
        """Refuse unknown measures, options, set keys and recipes, naming the key."""
        self.check_recipes(definition)
        for i, st in enumerate(definition.subtasks):
            where = f"subtasks[{i}]"
            self.check_subtask_keys(st, where)
            options_of(definition, st)
            seen: dict[tuple[str, tuple[tuple[str, Any], ...]], str] = {}
            for key in st.measures:
                try:
                    GENERATION_REGISTRY.get(key)
                except UnknownMeasure as exc:
                    raise DefinitionError(f"{where}.measures", str(exc)) from None
                name, named = parse_measure(key)
                same = seen.setdefault((name, tuple(sorted(named))), key)
                if same != key:
                    raise DefinitionError(
                        f"{where}.measures", f"{key[:80]!r} is {same[:80]!r} written again"
                    )
            for j, s in enumerate(st.sets):
                swhere = f"{where}.sets[{j}]"
                extra = sorted(set(s.options) - {"target_language", "sacrebleu"})
                if extra:
                    raise DefinitionError(
                        f"{swhere}.{extra[0]}",
                        "unknown key; a generation set names source, references, "
                        "target_language and sacrebleu",
                    )
                try:
                    options = options_of(definition, st, s)
                except DefinitionError as exc:
                    raise DefinitionError(f"{swhere}.sacrebleu", exc.message) from None
                for key in st.measures:
                    try:
                        measure_arguments(key, options)
                    except ValueError as exc:
                        raise DefinitionError(f"{where}.measures", str(exc)) from None
                language = s.options.get("target_language")
                if not isinstance(language, str) or not language:
                    raise DefinitionError(f"{swhere}.target_language", 'is required (e.g. "de")')
                if not reference_roles(s.files):
                    raise DefinitionError(
                        f"{swhere}.references", "is required: a list of reference files"
                    )

    def measure_specs(self, ctx: Context) -> list[MeasureSpec]:
        """Return the subtask's measures as the registry describes them."""
        return self.registry_specs(GENERATION_REGISTRY, ctx)

    def upload_hint(self, ctx: Context) -> str:
        """Say what a run holds."""
        language = ctx.set.options.get("target_language", "")
        return f"One output line per source segment, UTF-8 ({language})."

    def load_gold(self, files: Mapping[str, bytes], ctx: Context) -> GenerationGold:
        """Parse the source and every reference file; they must have one line per segment."""
        source, issues = segments.parse_segments(files["source"], "source")
        if source is None:
            raise ReferenceFileError.listing("source", issues)
        references: list[list[str]] = []
        roles = reference_roles(files)
        for role in roles:
            parsed, issues = segments.parse_segments(files[role], f"reference {role[11:]}")
            if parsed is None:
                raise ReferenceFileError.listing(role, issues)
            references.append(parsed)
        problems = segments.check_references(references, len(source))
        if problems:
            raise ReferenceFileError.listing(roles[0] if roles else "source", problems)
        return GenerationGold(
            source,
            references,
            tuple(ctx.subtask.measures),
            options_of(ctx.definition, ctx.subtask, ctx.set),
        )

    def describe_gold(self, gold: GenerationGold, role: str) -> list[str]:
        """Report the number of segments and references."""
        return [f"{len(gold.source):,} segments, {len(gold.references)} reference(s)."]

    def run_lines(self, gold: GenerationGold, ctx: Context) -> tuple[int, str]:
        """Bound a run by the source: its segments plus a few lines, 4 KiB a line on average."""
        n = len(gold.source)
        return (
            n + SPARE_LINES,
            f"a run for {ctx.where} has one line per source segment, {n:,} lines",
        )

    def validate_file(
        self,
        stream: IO[bytes],
        gold: GenerationGold,
        ctx: Context,
        *,
        lenient: bool,
        options: Mapping[str, Any],
    ) -> Verdict[list[str]]:
        """Validate the output file: UTF-8, one line per source segment; empty lines warned."""
        hypotheses, errors, warnings = segments.validate_output(read_all(stream), len(gold.source))
        if hypotheses is not None:
            errors = too_long(hypotheses, gold)
        return Verdict(errors, warnings, hypotheses if not errors else None)

    def score(self, parsed: list[str], gold: GenerationGold) -> dict[str, MeasureResult]:
        """Score with sacrebleu's corpus scorers; keep each signature and segment statistics."""
        found = score_run(parsed, gold.cache, gold.measures, gold.options)
        return {
            key: MeasureResult(
                result.score,
                GENERATION_REGISTRY.get(key).official(result.score),
                note=result.signature,
                item_stats=result.stats.tolist(),
            )
            for key, result in found.items()
        }

    def unit_rows(
        self, key: str, gold: GenerationGold, stored: StoredScore
    ) -> tuple[list[str], UnitRows]:
        """Return each segment's statistics; the corpus score follows from their sums."""
        if stored.item_stats is None:
            raise NotResampled(f"{key}: the run keeps no segment statistics")
        rows = np.asarray(stored.item_stats, dtype=np.float64)
        units = [str(i) for i in range(1, len(rows) + 1)]
        return units, SummedRows(rows, lambda sums: scores_from_sums(key, sums, gold.options))

    def unit_ids(self, gold: GenerationGold) -> list[str]:
        """Return the segments' line numbers, "1" to "n" (as ``unit_rows`` names them)."""
        return [str(i) for i in range(1, len(gold.source) + 1)]

    def restrict_gold(self, gold: GenerationGold, units: frozenset[str]) -> GenerationGold:
        """Return the source and references of these segments; measures and options stay."""
        check_units(units, self.unit_ids(gold))
        rows = segment_rows(units)
        return GenerationGold(
            [gold.source[i] for i in rows],
            [[reference[i] for i in rows] for reference in gold.references],
            gold.measures,
            gold.options,
        )

    def restrict_run(
        self, parsed: list[str], gold: GenerationGold, units: frozenset[str]
    ) -> list[str]:
        """Return the run's outputs for these segments, in source order."""
        return [parsed[i] for i in segment_rows(units)]

    def baselines(
        self, gold: GenerationGold, files: Mapping[str, bytes], ctx: Context
    ) -> list[BaselineRun]:
        """Build the copy-source run: each output is its source segment."""
        return [
            BaselineRun(
                "copy-source",
                "Copy source",
                1,
                tuple(ctx.subtask.measures),
                {"file": "".join(f"{s}\n" for s in gold.source).encode()},
                "Each output line is the source segment, unchanged.",
            )
            for recipe in ctx.definition.baseline_recipes
            if recipe == "copy-source"
        ]
