"""The CQA family's hooks: definitions, uploads, gold, validation, scoring and baselines."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from leaderboard.formats.cqa_score import parse_all_scores
from leaderboard.formats.issues import quoted
from leaderboard.scoring.cqa_measures import AVGREC_UNDEFINED, CQA_MEASURES, MEASURES, TOP_K
from leaderboard.scoring.registry import UnknownMeasure
from leaderboard.tables.model import MeasureSpec
from leaderboard.tasks.definition import DefinitionError, TaskDefinition
from leaderboard.tasks.families.base import (
    BaselineRun,
    Context,
    FolderRun,
    ImportOption,
    MarkerNote,
    MeasureResult,
    PartGold,
    ScoreFile,
    SingleFileFamily,
    StoredScore,
    Verdict,
    check_units,
    read_all,
)

# The run format, the scoring kernels and the baselines need numpy: they are imported by the
# hooks that read, score or build runs, so that a table (definitions, measures, notes) does not
# pay for numpy.
if TYPE_CHECKING:
    from leaderboard.formats.cqa import CqaGold, CqaRun
    from leaderboard.scoring.resampling import UnitRows

#: The 2016 overview paper's note on the scale of its seven measures.
SCALE_NOTE = (
    "MAP, AvgRec, P, R, F1, Acc ×100; MRR is ×100 by definition; "
    "MAP, AvgRec and MRR use the top 10 of each question."
)
#: A run file of the 2016 submissions archive, e.g. ``subtask_A_primary.txt``.
_RUN_FILE = re.compile(
    r"^subtask_(?P<subtask>[A-Za-z0-9]+)_(?P<slot>primary|contrastive1|contrastive2)\.txt$"
)
#: The baseline recipes of the 2016 overview: IR order, random, all 'true' and all 'false'.
RECIPES = ("ir", "random", "true", "false")
#: The longest system description taken from a team's README.txt.
MAX_README = 5000

#: The row marker of a legacy run scored on the part of a truncated file present.
TRUNCATED_MARKER = "‡"
#: The note of a truncated run whose own note the table does not have (a baseline's).
TRUNCATED_NOTE = "legacy run with a truncated file, scored on the part present"
#: Why a truncated legacy run has no values on a part: its file stops before the part starts.
TRUNCATED_OUTSIDE = "the run's truncated file covers no question of this part"
#: The import mode reading a run leniently after re-sorting it into gold order.
RESORT = ImportOption(
    "resort",
    "lenient, re-sorted into gold order",
    "With --lenient: re-sort into gold order first.",
    "Lenient mode: re-sort the run into gold order first.",
)


class CqaFamily(SingleFileFamily["CqaGold", "CqaRun"]):
    """Reranking with binary labels: MAP, AvgRec, MRR over the top 10; P, R, F1, Acc."""

    name = "cqa"
    file_roles = {"gold": True, "random_baseline": False}
    table_styles = ("semeval-cqa",)
    flag_notes = {
        AVGREC_UNDEFINED: MarkerNote(
            "¶", "no scored question has a relevant candidate, so AvgRec is undefined; counted as 0"
        )
    }
    run_marker_notes = {TRUNCATED_MARKER: TRUNCATED_NOTE}
    import_options = (RESORT,)

    def run_notes(self, report: Mapping[str, Any]) -> list[MarkerNote]:
        """Return the note of a legacy run scored on the part of its truncated file present."""
        if "truncation" not in report:
            return []
        return [MarkerNote(TRUNCATED_MARKER, report["truncation"]["note"])]

    def stored_table_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """Read the options of a table frozen before run notes were generic ("truncation_notes")."""
        out = dict(options)
        legacy = out.pop("truncation_notes", None)
        if legacy is not None:
            out.setdefault(
                "row_notes", {label: [[TRUNCATED_MARKER, note]] for label, note in legacy.items()}
            )
            out["note_texts"] = {**self.marker_texts(), **out.get("note_texts", {})}
        return out

    def score_file(self, run_path: Path) -> ScoreFile | None:
        """Return the values of the 2016 scorer's ``<run>.score`` file beside the run, if any."""
        found = run_path.with_name(run_path.name + ".score")
        if not found.is_file():
            return None
        scores = parse_all_scores(found.read_text(errors="replace"))
        return ScoreFile(found.name, scores, "" if scores is not None else "no ALL SCORES line")

    recipes = RECIPES
    #: Real runs average about 40 bytes a line.
    average_line_bytes = 1024

    def check_definition(self, definition: TaskDefinition) -> None:
        """Raise DefinitionError for unknown measures, recipes or a wrong table style."""
        for m in {m for st in definition.subtasks for m in st.measures}:
            try:
                MEASURES.get(m)
            except UnknownMeasure as exc:
                raise DefinitionError("measures", str(exc)) from None
        self.check_recipes(definition)
        for i, st in enumerate(definition.subtasks):
            recipe = st.options.get("random_recipe", "uniform")
            if recipe not in ("uniform", "rank-top"):
                raise DefinitionError(
                    f"subtasks[{i}].random_recipe", f"unknown random recipe {quoted(recipe)}"
                )

    def measure_specs(self, ctx: Context) -> list[MeasureSpec]:
        """Return the CQA columns as the registry describes them."""
        return self.registry_specs(MEASURES, ctx)

    def style_options(self, ctx: Context) -> dict[str, Any]:
        """Return the overview paper's scale note when the table has the seven 2016 measures."""
        if set(ctx.subtask.measures) == set(CQA_MEASURES):
            return {"measure_note": SCALE_NOTE}
        return {}

    def upload_hint(self, ctx: Context) -> str:
        """Return the 2016 habit of naming run files."""
        return f"Recommended file name: subtask_{ctx.subtask.slug}_<slot>.txt."

    def runs_in_folder(self, folder: Path, ctx: Context) -> list[FolderRun]:
        """Return the subtask's runs in a folder laid out as the 2016 submissions archive.

        The folder holds ``<TEAM>/subtask_<X>_<slot>.txt`` (the team is the folder name and
        ``README.txt`` describes the system), or is itself one team's folder.
        """
        entries = sorted(folder.iterdir())
        team_dirs = (
            [folder]
            if any(_RUN_FILE.match(p.name) for p in entries)
            else [p for p in entries if p.is_dir()]
        )
        found: list[FolderRun] = []
        for tdir in team_dirs:
            readme = tdir / "README.txt"
            description = (
                readme.read_text(errors="replace")[:MAX_README] if readme.is_file() else None
            )
            for f in sorted(tdir.iterdir()):
                m = _RUN_FILE.match(f.name)
                if m is not None and m["subtask"] == ctx.subtask.slug:
                    found.append(FolderRun(tdir.name, m["slot"], f, description))
        return found

    def load_gold(self, files: Mapping[str, bytes], ctx: Context) -> CqaGold:
        """Parse the set's relevancy file."""
        from leaderboard.formats.cqa import parse_gold

        return parse_gold(files["gold"])

    def run_lines(self, gold: CqaGold, ctx: Context) -> tuple[int, str]:
        """Bound a run by the gold: one line per candidate, room for twice as many lines."""
        lines = len(gold)
        return 2 * lines + 100, f"a run for {ctx.where} has one line per candidate, {lines:,} lines"

    def validate_file(
        self,
        stream: IO[bytes],
        gold: CqaGold,
        ctx: Context,
        *,
        lenient: bool,
        options: Mapping[str, Any],
    ) -> Verdict[CqaRun]:
        """Validate one run file strictly (participants) or as the 2016 scorer did (lenient)."""
        from leaderboard.formats.cqa import parse_lenient, validate_strict

        data = read_all(stream)
        if lenient:
            v = parse_lenient(data, gold, resort=bool(options.get("resort")))
        else:
            v = validate_strict(data, gold, where=ctx.where)
        report: dict[str, Any] = {}
        if v.truncation is not None:
            t = v.truncation
            report["truncation"] = {
                "lines_used": t.lines_used,
                "lines_total": t.lines_total,
                "questions_used": t.questions_used,
                "questions_total": t.questions_total,
                "note": t.note(),
            }
        if v.tolerances:
            report["tolerances"] = list(v.tolerances)
        return Verdict(
            list(v.errors),
            list(v.warnings),
            v.run if v.ok else None,
            tuple(v.tolerances),
            report,
            more_errors=v.more_errors,
        )

    def score(self, parsed: CqaRun, gold: CqaGold) -> dict[str, MeasureResult]:
        """Score with the official 2016 definitions (see leaderboard.scoring.cqa)."""
        from leaderboard.tasks.families.cqa.scoring import measure_results

        return measure_results(gold, parsed)

    def unit_rows(self, key: str, gold: CqaGold, stored: StoredScore) -> tuple[list[str], UnitRows]:
        """Return the question ids and rows: per-question values (MAP, MRR) or counts.

        AvgRec sums each question's hits@k and min(k, R_q), P, R, F1 and Acc its TP, FP, FN
        and TN; the measure follows from the sums with the scorer's own formula.
        """
        import numpy as np

        from leaderboard.scoring.classification import binary_from_counts
        from leaderboard.scoring.cqa import avgrec_from_sums
        from leaderboard.scoring.resampling import NotResampled, SummedRows

        if key in ("MAP", "MRR"):
            return super().unit_rows(key, gold, stored)
        width = 2 * TOP_K if key == "AvgRec" else 4
        if stored.item_stats is None:
            raise NotResampled(
                f"{key}: the run keeps no per-question counts (scored before they were); "
                "re-score the set"
            )
        rows = np.asarray(stored.item_stats, dtype=np.float64)
        if rows.ndim != 2 or rows.shape[1] != width or not 0 < len(rows) <= len(gold.questions):
            raise NotResampled(f"{key}: the stored counts do not match the gold; re-score")
        units = list(gold.questions[: len(rows)])
        if key == "AvgRec":
            return units, SummedRows(rows, avgrec_from_sums)
        return units, SummedRows(rows, lambda sums: binary_from_counts(sums)[key])

    def unit_ids(self, gold: CqaGold) -> list[str]:
        """Return the question ids in gold order."""
        return list(gold.questions)

    def restrict_gold(self, gold: CqaGold, units: frozenset[str]) -> CqaGold:
        """Return the gold rows of these questions, as a gold file of only them would parse."""
        from leaderboard.tasks.families.cqa.parts import restrict_gold

        check_units(units, gold.questions)
        return restrict_gold(gold, units)

    def restrict_run(self, parsed: CqaRun, gold: CqaGold, units: frozenset[str]) -> CqaRun:
        """Return the run on these questions' rows (a truncated run keeps its covered rows)."""
        from leaderboard.tasks.families.cqa.parts import restrict_run

        return restrict_run(parsed, gold, units)

    def score_part(
        self, parsed: CqaRun, gold: CqaGold, part_gold: CqaGold, units: frozenset[str]
    ) -> dict[str, MeasureResult]:
        """Score a run on a part; a truncated legacy run covering none of it has no values."""
        from leaderboard.tasks.families.cqa.parts import restrict_run

        run = restrict_run(parsed, gold, units)
        if run.rows == 0:
            return {m: MeasureResult.undefined(TRUNCATED_OUTSIDE) for m in CQA_MEASURES}
        return self.score(run, part_gold)

    def score_parts(
        self,
        parsed: CqaRun,
        gold: CqaGold,
        results: Mapping[str, MeasureResult],
        parts: Mapping[str, PartGold],
    ) -> dict[str, dict[str, MeasureResult]]:
        """Score a run on each part from its per-question values, equal to cutting and re-scoring.

        A question's AP, hits@k, relevant count and [TP, FP, FN, TN] depend on its rows alone;
        the measures follow from them by exact sums, so re-ranking each part's rows would only
        repeat the whole run's work. A truncated legacy run is cut and re-scored.
        """
        from leaderboard.tasks.families.cqa.parts import part_results, question_values

        values = question_values(gold, results) if parsed.rows == len(gold) else None
        if values is None:
            return super().score_parts(parsed, gold, results, parts)
        scored = {}
        for name, part in parts.items():
            derived = part_results(gold, values, part.units)
            scored[name] = (
                derived
                if derived is not None
                else self.score_part(parsed, gold, part.gold, part.units)
            )
        return scored

    def baselines(
        self, gold: CqaGold, files: Mapping[str, bytes], ctx: Context
    ) -> list[BaselineRun]:
        """Build IR, random (shipped file or seeded), all-true and all-false baselines."""
        from leaderboard.tasks.families.cqa.baselines import baseline_runs

        return baseline_runs(gold, files, ctx)
