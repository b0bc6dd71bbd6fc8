"""A throw-away family: one yes/no answer per item, scored by agreement with the gold.

It shows what a new family declares (docs/families.md walks through it): its measure, a
score flag with its note, a run note, an import mode and a gold slot address. Nothing in the
package names it; a test registers it (``registered_family``) and removes it again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from leaderboard.formats.issues import Issue
from leaderboard.tables.model import MeasureSpec
from leaderboard.tasks.definition import DefinitionError, TaskDefinition
from leaderboard.tasks.families.base import (
    BaselineRun,
    Context,
    GoldAddress,
    GoldAddressOption,
    GoldSlot,
    ImportOption,
    MarkerNote,
    MeasureResult,
    ReferenceFileError,
    SingleFileFamily,
    Verdict,
    read_all,
)

ANSWERS = {"yes": True, "no": False}
#: The score flag of a run giving one answer to every item, and its table note.
SAME_ANSWER = "same-answer"
SAME_NOTE = MarkerNote("◊", "the run gives the same answer to every item")
#: The row marker of a run imported with items missing, and the note when its own is unknown.
MISSING_MARKER = "⁑"
MISSING_NOTE = "imported with items missing, counted as wrong"
#: The import mode reading a run whose system answered the negated question.
FLIP = ImportOption(
    "flip", "lenient, answers flipped", "With --lenient: flip every answer.", "Flip every answer."
)
#: ``set-gold --judge NAME`` names one judge's gold file.
JUDGE = GoldAddressOption("judge", "The judge whose answers the file holds.")


def parse_pairs(data: bytes) -> tuple[dict[str, bool], list[Issue]]:
    """Return the answers of ``id<TAB>yes|no`` lines by id, and the problems found."""
    answers: dict[str, bool] = {}
    issues = []
    for number, line in enumerate(data.decode("utf-8").splitlines(), 1):
        fields = line.split("\t")
        if len(fields) != 2 or fields[1] not in ANSWERS:
            issues.append(Issue(number, f"expected '<id>\\t<yes|no>', got {line[:40]!r}"))
        elif fields[0] in answers:
            issues.append(Issue(number, f"item {fields[0]!r} is answered twice"))
        else:
            answers[fields[0]] = ANSWERS[fields[1]]
    return answers, issues


#: The gold and a parsed run alike: each item's answer by id.
Answers = dict[str, bool]


class YesNoFamily(SingleFileFamily[Answers, Answers]):
    """One yes/no answer per item; Agree is the share of items answered as the gold."""

    name = "throwaway-yesno"
    file_roles = {"gold": True}
    table_styles = ("ranked",)
    unit, unit_plural = "item", "items"
    flag_notes = {SAME_ANSWER: SAME_NOTE}
    run_marker_notes = {MISSING_MARKER: MISSING_NOTE}
    import_options = (FLIP,)
    gold_address_options = (JUDGE,)
    average_line_bytes = 200

    def check_definition(self, definition: TaskDefinition) -> None:
        """Refuse any measure but Agree."""
        for subtask in definition.subtasks:
            if set(subtask.measures) - {"Agree"}:
                raise DefinitionError("measures", "this family measures Agree only")

    def measure_specs(self, ctx: Context) -> list[MeasureSpec]:
        """Return the one column: Agree, shown x100."""
        return [MeasureSpec("Agree", "Agree", official=True, scale=100, display_decimals=1)]

    def gold_slots(self, ctx: Context) -> list[GoldSlot]:
        """Return the set's gold, named ``--judge main`` on the command line."""
        return [GoldSlot("gold", "gold", GoldAddress(JUDGE.name, "main", "judge"))]

    def load_gold(self, files: Mapping[str, bytes], ctx: Context) -> Answers:
        """Parse the gold answers."""
        gold, issues = parse_pairs(files["gold"])
        if issues or not gold:
            raise ReferenceFileError.listing("gold", issues or [Issue(None, "no item")])
        return gold

    def run_lines(self, gold: Answers, ctx: Context) -> tuple[int, str]:
        """Allow one line per item, and a few more."""
        return len(gold) + 10, "one line per item"

    def validate_file(
        self,
        stream: IO[bytes],
        gold: Answers,
        ctx: Context,
        *,
        lenient: bool,
        options: Mapping[str, Any],
    ) -> Verdict[Answers]:
        """Read the answers; strictly every item once, leniently missing ones count as wrong."""
        answers, issues = parse_pairs(read_all(stream))
        unknown = sorted(set(answers) - set(gold))
        issues += [Issue(None, f"item {item!r} is not in the gold") for item in unknown[:5]]
        missing = [item for item in gold if item not in answers]
        report: dict[str, Any] = {}
        if missing and not lenient:
            issues.append(Issue(None, f"{len(missing)} item(s) are not answered"))
        elif missing:
            report["missing"] = {"note": f"{len(missing)} of {len(gold)} items missing"}
        if lenient and options.get(FLIP.name):
            answers = {item: not answer for item, answer in answers.items()}
        return Verdict(issues, [], None if issues else answers, report=report)

    def score(self, parsed: Answers, gold: Answers) -> dict[str, MeasureResult]:
        """Return Agree with each item's 1 or 0, flagged when every answer is the same."""
        per_item = {item: float(parsed.get(item) == answer) for item, answer in gold.items()}
        value = sum(per_item.values()) / len(per_item)
        flags = (SAME_ANSWER,) if len(set(parsed.values())) == 1 else ()
        return {"Agree": MeasureResult(value, f"{value:.4f}", flags, "gold", per_item)}

    def run_notes(self, report: Mapping[str, Any]) -> list[MarkerNote]:
        """Return the note of a run imported with items missing."""
        if "missing" not in report:
            return []
        return [MarkerNote(MISSING_MARKER, report["missing"]["note"])]

    def baselines(
        self, gold: Answers, files: Mapping[str, bytes], ctx: Context
    ) -> list[BaselineRun]:
        """Return no baseline."""
        return []
