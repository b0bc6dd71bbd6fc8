"""SemEval-2016 Task 3 against the official data: scores, baselines, validators and tables.

Reference values come from the official scorer's outputs in ../shared/data (.score files,
random_baselines_MAP.txt) and from the spec's tables; the gold and the dev baselines' predictions
are read from the copies the preset ships, so the tests that need nothing else run anywhere.
"""

from __future__ import annotations

import functools
import random
import re
from pathlib import Path

import numpy as np
import pytest

from leaderboard.formats.cqa import (
    CqaGold,
    CqaRun,
    CqaVerdict,
    Truncation,
    parse_gold,
    parse_lenient,
    validate_strict,
)
from leaderboard.scoring.cqa import CQA_MEASURES, official
from leaderboard.tasks.families.cqa.baselines import baseline_run
from leaderboard.tasks.families.cqa.scoring import score_run
from tests.shared_data import preset_path, shared_path

pytestmark = pytest.mark.fidelity

TASK = "semeval2016-task3"

#: The gold file of each (phase, subtask).
GOLD_FILES = {
    ("test", "A"): "SemEval2016-Task3-CQA-QL-test-subtaskA.xml.subtaskA.relevancy",
    ("test", "B"): "SemEval2016-Task3-CQA-QL-test.xml.subtaskB.relevancy",
    ("test", "C"): "SemEval2016-Task3-CQA-QL-test.xml.subtaskC.relevancy",
    ("test", "D"): "SemEval2016-Task3-CQA-MD-test.xml.subtaskD.relevancy",
    ("dev", "A"): "SemEval2016-Task3-CQA-QL-dev-subtaskA.xml.subtaskA.relevancy",
    ("dev", "B"): "SemEval2016-Task3-CQA-QL-dev.xml.subtaskB.relevancy",
    ("dev", "C"): "SemEval2016-Task3-CQA-QL-dev.xml.subtaskC.relevancy",
    ("dev", "D"): "SemEval2016-Task3-CQA-MD-dev-subtaskD.xml.relevancy",
}

#: Per test gold: lines, questions, and questions without any `true` comment.
GOLD_SHAPE = {"A": (3270, 327, 12), "B": (700, 70, 8), "C": (7000, 70, 15), "D": (7369, 250, 43)}

RUN_TYPES = {"p": "primary", "c1": "contrastive1", "c2": "contrastive2"}

#: The 95 official runs in DATA/submissions/ (team -> subtask:run types).
SUBMISSIONS = {
    "ConvKN": "A:p,c1,c2 B:p,c1 C:p,c1,c2 D:p,c1,c2",
    "ECNU": "A:p,c1,c2 B:p,c1,c2 C:p,c1,c2",
    "ICL00": "B:p,c1,c2 C:p,c1,c2",
    "ICRC-HIT": "A:p,c1",
    "ITNLP-AiKF": "A:p B:p C:p",
    "Kelp": "A:p B:p,c1,c2 C:p,c1,c2",
    "MTE-NN": "A:p,c1,c2 C:p,c1,c2",
    "PMI-cool": "A:p",
    "QAIIIT": "A:p,c1,c2 B:p,c1,c2",
    "QU-IR": "D:p,c1,c2",
    "RDI_team": "D:p,c1,c2",
    "SLS": "A:p,c1,c2 B:p,c1,c2 C:p,c1,c2 D:p,c1,c2",
    "SUper_team": "A:p,c1,c2 B:p,c1 C:p,c1,c2",
    "SemanticZ": "A:p,c1,c2 C:p,c1,c2",
    "UH-PRHLT": "A:p,c1,c2 B:p,c1,c2 C:p,c1,c2",
    "UPC_USMBA": "D:p",
    "UniMelb": "B:p",
    "overfitting": "B:p",
}


def _submission_runs() -> list[tuple[str, str]]:
    """Return (relative path under the task folder, subtask) for every official run."""
    runs = []
    for team, spec in SUBMISSIONS.items():
        for group in spec.split():
            subtask, kinds = group.split(":")
            for kind in kinds.split(","):
                runs.append(
                    (f"submissions/{team}/subtask_{subtask}_{RUN_TYPES[kind]}.txt", subtask)
                )
    return runs


SUBMISSION_RUNS = _submission_runs()
BASELINE_RUNS = [
    (f"baselines-test/subtask_{subtask}_baseline_{kind}.txt", subtask)
    for subtask in "ABCD"
    for kind in ("random", "true", "false")
]
ALL_RUNS = SUBMISSION_RUNS + BASELINE_RUNS

CRLF = "The file uses Windows (CRLF) line endings; they were normalised."
SPACES = "700 lines (first: line 1) separate columns with spaces; the format asks for one TAB."
RESORTED = (
    "Lines are not in the official order (first difference at line 1). The run was re-sorted "
    "into the official order; equal scores are ranked in official order."
)


def _ranks_warning(first: int) -> str:
    return (
        f"1,634 lines (first: line {first}) have a non-integer rank such as '0.00E+00'; "
        "column 3 is ignored."
    )


def _ties_warning(count: int) -> str:
    noun = "question" if count == 1 else "questions"
    return (
        f"In {count} {noun} all candidates have the same score; they are ranked in the "
        "official order."
    )


#: The tolerances the legacy import must report for these runs; every other run needs none.
LEGACY_TOLERANCES = {
    "submissions/overfitting/subtask_B_primary.txt": (
        "700 lines (first: line 1) separate columns with spaces or other whitespace instead of "
        "one TAB",
    ),
    "submissions/ConvKN/subtask_C_contrastive2.txt": (
        "Windows (CRLF) line endings on 7,000 lines",
    ),
    "submissions/SemanticZ/subtask_A_primary.txt": ("Windows (CRLF) line endings on 3,270 lines",),
    "submissions/SemanticZ/subtask_A_contrastive1.txt": (
        "Windows (CRLF) line endings on 3,270 lines",
    ),
    "submissions/SemanticZ/subtask_A_contrastive2.txt": (
        "Windows (CRLF) line endings on 3,270 lines",
    ),
    "submissions/SemanticZ/subtask_C_primary.txt": ("Windows (CRLF) line endings on 7,000 lines",),
    "submissions/SemanticZ/subtask_C_contrastive1.txt": (
        "Windows (CRLF) line endings on 7,000 lines",
    ),
    "submissions/SemanticZ/subtask_C_contrastive2.txt": (
        "Windows (CRLF) line endings on 7,000 lines",
    ),
    # The first non-integer rank is on line 60 / 59 (checked with awk on the raw files).
    "submissions/RDI_team/subtask_D_contrastive1.txt": (
        "1,634 lines (first: line 60) have a non-integer rank such as '0.00E+00' "
        "(column 3 is never read)",
    ),
    "submissions/RDI_team/subtask_D_contrastive2.txt": (
        "1,634 lines (first: line 59) have a non-integer rank such as '0.00E+00' "
        "(column 3 is never read)",
    ),
    "submissions/ConvKN/subtask_D_contrastive1.txt": (
        "truncated: scored on the first 7,339 of 7,369 lines (249 of 250 questions)",
    ),
    "submissions/ConvKN/subtask_D_contrastive2.txt": (
        "truncated: scored on the first 7,339 of 7,369 lines (249 of 250 questions)",
    ),
}
TRUNCATED = {
    "submissions/ConvKN/subtask_D_contrastive1.txt",
    "submissions/ConvKN/subtask_D_contrastive2.txt",
}

#: Strict-mode warnings of the 93 accepted runs: the tolerated deviations, plus equal scores
#: in a whole question, whose counts were checked independently with awk on the raw files.
STRICT_WARNINGS = {
    "submissions/overfitting/subtask_B_primary.txt": [SPACES],
    "submissions/ConvKN/subtask_C_contrastive2.txt": [CRLF],
    "submissions/SemanticZ/subtask_A_primary.txt": [CRLF],
    "submissions/SemanticZ/subtask_A_contrastive1.txt": [CRLF],
    "submissions/SemanticZ/subtask_A_contrastive2.txt": [CRLF],
    "submissions/SemanticZ/subtask_C_primary.txt": [CRLF],
    "submissions/SemanticZ/subtask_C_contrastive1.txt": [CRLF],
    "submissions/SemanticZ/subtask_C_contrastive2.txt": [CRLF],
    "submissions/RDI_team/subtask_D_contrastive1.txt": [_ranks_warning(60)],
    "submissions/RDI_team/subtask_D_contrastive2.txt": [_ranks_warning(59)],
    "submissions/ECNU/subtask_A_contrastive2.txt": [_ties_warning(2)],
    "submissions/ICL00/subtask_B_contrastive2.txt": [_ties_warning(1)],
    "submissions/ICRC-HIT/subtask_A_primary.txt": [_ties_warning(2)],
    "submissions/ICRC-HIT/subtask_A_contrastive1.txt": [_ties_warning(2)],
    "submissions/ITNLP-AiKF/subtask_A_primary.txt": [_ties_warning(2)],
    "submissions/QAIIIT/subtask_A_primary.txt": [_ties_warning(2)],
    "submissions/QAIIIT/subtask_A_contrastive1.txt": [_ties_warning(2)],
    "submissions/QAIIIT/subtask_A_contrastive2.txt": [_ties_warning(2)],
    "submissions/UPC_USMBA/subtask_D_primary.txt": [_ties_warning(182)],
}
STRICT_ERRORS_TRUNCATED = [
    "Expected 7,369 lines for subtask D (test), found 7,339.",
    "30 of 7,369 candidates are missing, in 1 question: 201129 (all 30 candidates), "
    "e.g. (201129, 69).",
]


@functools.cache
def _gold_cached(phase: str, subtask: str, path: Path) -> CqaGold:
    return parse_gold(path.read_bytes())


def gold(phase: str, subtask: str) -> CqaGold:
    path = preset_path(TASK, "gold", phase, GOLD_FILES[(phase, subtask)])
    return _gold_cached(phase, subtask, path)


def data_file(relative: str) -> Path:
    return shared_path(TASK, *relative.split("/"))


def all_scores_line(score_file: Path) -> list[str]:
    match = re.search(r"^ALL SCORES:\t(.*)$", score_file.read_text(), re.MULTILINE)
    assert match is not None, f"no ALL SCORES line in {score_file}"
    return match.group(1).split("\t")


def ranking_block(text: str) -> dict[str, tuple[str, str]]:
    """Return {"MAP"|"AvgRec"|"MRR": (IR, SYS)} from the scorer's "IR SYS" block."""
    found = {}
    for name, label in (("MAP", "MAP   :"), ("AvgRec", "AvgRec:"), ("MRR", "MRR   :")):
        match = re.search(rf"^{re.escape(label)}\s+(\S+)\s+(\S+)\s*$", text, re.MULTILINE)
        assert match is not None, f"no {label} line"
        found[name] = (match.group(1), match.group(2))
    return found


def classification_block(text: str) -> dict[str, str]:
    """Return {"Acc"|"P"|"R"|"F1": value} from the scorer's classification block."""
    found = {}
    for name in ("Acc", "P", "R", "F1"):
        match = re.search(rf"^{name}\s*= (\S+)\s*$", text, re.MULTILINE)
        assert match is not None, f"no {name} line"
        found[name] = match.group(1)
    return found


def ir_values(gold_data: CqaGold, rows: int) -> dict[str, float]:
    ir = baseline_run(gold_data, "ir")
    run = CqaRun(rows=rows, scores=ir.scores[:rows], predicted=ir.predicted[:rows])
    return score_run(gold_data, run).values


# --------------------------------------------------------------------------------------------
# Inventory


def test_inventory_matches_the_data_folder() -> None:
    folder = shared_path(TASK, "submissions")
    on_disk = sorted(
        path.relative_to(folder.parent).as_posix() for path in folder.glob("*/subtask_*.txt")
    )
    assert sorted(path for path, _ in SUBMISSION_RUNS) == on_disk
    assert len(SUBMISSION_RUNS) == 95
    per_subtask = {s: sum(1 for _, x in SUBMISSION_RUNS if x == s) for s in "ABCD"}
    assert per_subtask == {"A": 29, "B": 25, "C": 28, "D": 13}
    assert len(ALL_RUNS) == 107


@pytest.mark.parametrize("subtask", "ABCD")
def test_test_gold_shape(subtask: str) -> None:
    data = gold("test", subtask)
    lines, questions, without_true = GOLD_SHAPE[subtask]
    assert len(data) == lines
    assert len(data.questions) == questions
    relevant = np.add.reduceat(data.labels.astype(int), data.question_starts)
    assert int(np.count_nonzero(relevant == 0)) == without_true


# --------------------------------------------------------------------------------------------
# Legacy fidelity: all 107 runs score as their .score files; the IR baseline column


@pytest.mark.parametrize(("relative", "subtask"), ALL_RUNS, ids=[p for p, _ in ALL_RUNS])
def test_legacy_scores_match_official(relative: str, subtask: str) -> None:
    gold_data = gold("test", subtask)
    path = data_file(relative)
    verdict = parse_lenient(path.read_bytes(), gold_data)
    assert verdict.ok, verdict.errors[:3]
    assert verdict.run is not None
    assert verdict.tolerances == LEGACY_TOLERANCES.get(relative, ())
    if relative in TRUNCATED:
        assert verdict.truncation == Truncation(7339, 7369, 249, 250)
    else:
        assert verdict.truncation is None
    scores = score_run(gold_data, verdict.run)
    assert scores.flags == ()
    ours = [official(scores.values[name]) for name in CQA_MEASURES]
    assert ours == all_scores_line(path.with_name(path.name + ".score"))


@pytest.mark.parametrize(("relative", "subtask"), ALL_RUNS, ids=[p for p, _ in ALL_RUNS])
def test_ir_column_matches_baseline_1(relative: str, subtask: str) -> None:
    gold_data = gold("test", subtask)
    path = data_file(relative)
    rows = 7339 if relative in TRUNCATED else len(gold_data)
    reference = ranking_block(path.with_name(path.name + ".score").read_text())
    ours = ir_values(gold_data, rows)
    assert official(ours["MAP"]) == reference["MAP"][0]
    assert official(ours["AvgRec"]) == reference["AvgRec"][0]
    assert format(ours["MRR"], ".2f") == reference["MRR"][0]


@pytest.mark.parametrize("subtask", "ABCD")
@pytest.mark.parametrize("kind", ["true", "false"])
def test_generated_true_false_baselines_match_official_classification(
    subtask: str, kind: str
) -> None:
    gold_data = gold("test", subtask)
    score_file = data_file(f"baselines-test/subtask_{subtask}_baseline_{kind}.txt.score")
    reference = all_scores_line(score_file)
    values = score_run(gold_data, baseline_run(gold_data, kind)).values
    # Only the classification measures: the official files' scores came from random values.
    ours = [official(values[name]) for name in ("P", "R", "F1", "Acc")]
    assert ours == reference[3:]


# --------------------------------------------------------------------------------------------
# The dev random baselines


DEV_PREDICTIONS = {
    "A": "SemEval2016-Task3-CQA-QL-dev-subtaskA.xml.subtaskA.pred",
    "B": "SemEval2016-Task3-CQA-QL-dev.xml.subtaskB.pred",
    "C": "SemEval2016-Task3-CQA-QL-dev.xml.subtaskC.pred",
    "D": "SemEval2016-Task3-CQA-MD-dev-subtaskD.xml.pred",
}


def dev_block(prediction: str) -> str:
    """Return the scorer's printed output for ``prediction`` in random_baselines_MAP.txt."""
    text = shared_path(TASK, "baselines-dev", "random_baselines_MAP.txt").read_text()
    blocks = re.split(r"^\$ +python ", text, flags=re.MULTILINE)[1:]
    matching = [block for block in blocks if block.split("\n", 1)[0].split()[-1] == prediction]
    assert len(matching) == 1
    return matching[0]


@pytest.mark.parametrize("subtask", "ABCD")
def test_dev_random_baselines(subtask: str) -> None:
    gold_data = gold("dev", subtask)
    prediction = DEV_PREDICTIONS[subtask]
    block = dev_block(prediction)
    assert block.split("\n", 1)[0].split()[-2] == GOLD_FILES[("dev", subtask)]
    data = preset_path(TASK, "baselines", "dev", prediction).read_bytes()
    verdict = parse_lenient(data, gold_data)
    assert verdict.ok and verdict.tolerances == ()
    assert verdict.run is not None
    values = score_run(gold_data, verdict.run).values
    ir = ir_values(gold_data, len(gold_data))
    ranking = ranking_block(block)
    assert (official(ir["MAP"]), official(values["MAP"])) == ranking["MAP"]
    assert (official(ir["AvgRec"]), official(values["AvgRec"])) == ranking["AvgRec"]
    assert (format(ir["MRR"], ".2f"), format(values["MRR"], ".2f")) == ranking["MRR"]
    assert {name: official(values[name]) for name in ("Acc", "P", "R", "F1")} == (
        classification_block(block)
    )


# --------------------------------------------------------------------------------------------
# The strict validator on the 95 official runs


@pytest.mark.parametrize(
    ("relative", "subtask"), SUBMISSION_RUNS, ids=[p for p, _ in SUBMISSION_RUNS]
)
def test_strict_on_official_runs(relative: str, subtask: str) -> None:
    gold_data = gold("test", subtask)
    path = data_file(relative)
    verdict = validate_strict(path.read_bytes(), gold_data, where=f"subtask {subtask} (test)")
    if relative in TRUNCATED:
        assert not verdict.ok and verdict.run is None
        assert [issue.message for issue in verdict.errors] == STRICT_ERRORS_TRUNCATED
        assert verdict.warnings == []
        return
    assert verdict.ok, verdict.errors[:3]
    assert [issue.message for issue in verdict.warnings] == STRICT_WARNINGS.get(relative, [])
    assert all(issue.severity == "warning" for issue in verdict.warnings)
    # Complete runs in gold order: strict scoring equals the official values too.
    assert verdict.run is not None
    values = score_run(gold_data, verdict.run).values
    ours = [official(values[name]) for name in CQA_MEASURES]
    assert ours == all_scores_line(path.with_name(path.name + ".score"))


# --------------------------------------------------------------------------------------------
# The 2016 format checker's examples


EXAMPLES = {
    "A": "SemEval2016-Task3-CQA-QL-test-subtaskA.xml.subtaskA.pred",
    "B": "SemEval2016-Task3-CQA-QL-test.xml.subtaskB.pred",
    "C": "SemEval2016-Task3-CQA-QL-test.xml.subtaskC.pred",
    "D": "SemEval2016-Task3-CQA-MD-test-subtaskD.xml.pred",
}


def check_example(subtask: str, suffix: str) -> CqaVerdict:
    path = shared_path(TASK, "format-checker", "examples", EXAMPLES[subtask] + suffix)
    return validate_strict(
        path.read_bytes(), gold("test", subtask), where=f"subtask {subtask} (test)"
    )


@pytest.mark.parametrize("subtask", "ACD")
def test_format_checker_ok_examples_are_accepted(subtask: str) -> None:
    verdict = check_example(subtask, ".OK")
    assert verdict.ok
    assert verdict.warnings == []


def test_format_checker_d_ok_has_no_final_newline() -> None:
    path = shared_path(TASK, "format-checker", "examples", EXAMPLES["D"] + ".OK")
    assert not path.read_bytes().endswith(b"\n")


def test_format_checker_a_bad() -> None:
    verdict = check_example("A", ".Bad")
    assert not verdict.ok
    assert [(issue.line, issue.message) for issue in verdict.errors] == [
        (
            None,
            "1 of 3,270 candidates is missing, in 1 question: Q318_R6 (1 of 10 candidates), "
            "e.g. (Q318_R6, Q318_R6_C2).",
        ),
        (2, "Line 2: 'Q318_R6_C22' is not a candidate of question 'Q318_R6'."),
    ]


@pytest.mark.parametrize("suffix", [".OK", ".Bad"])
def test_format_checker_b_examples_are_rejected(suffix: str) -> None:
    verdict = check_example("B", suffix)
    assert not verdict.ok
    assert [issue.line for issue in verdict.errors] == list(range(92, 610))
    assert {issue.message.split(": ", 1)[1] for issue in verdict.errors} == {
        "label '' must be 'true' or 'false' (lower case)."
    }


@pytest.mark.parametrize("subtask", "CD")
def test_format_checker_moved_lines_are_resorted(subtask: str) -> None:
    bad = check_example(subtask, ".Bad")
    assert bad.ok
    assert [issue.message for issue in bad.warnings] == [RESORTED]
    good = check_example(subtask, ".OK")
    assert bad.run is not None and good.run is not None
    assert bad.run.scores.tolist() == good.run.scores.tolist()
    gold_data = gold("test", subtask)
    assert score_run(gold_data, bad.run) == score_run(gold_data, good.run)


# --------------------------------------------------------------------------------------------
# Property checks on the real test gold


@pytest.mark.parametrize("subtask", "ABCD")
def test_oracle_run(subtask: str) -> None:
    gold_data = gold("test", subtask)
    oracle = CqaRun(
        rows=len(gold_data),
        scores=gold_data.labels.astype(np.float64),
        predicted=gold_data.labels.copy(),
    )
    values = score_run(gold_data, oracle).values
    _, questions, without_true = GOLD_SHAPE[subtask]
    share = without_true / questions
    assert values["AvgRec"] == 1.0
    assert official(values["AvgRec"] * 100) == "100.0000"
    assert 1.0 - values["MAP"] == pytest.approx(share, abs=1e-12)
    assert 100.0 - values["MRR"] == pytest.approx(100 * share, abs=1e-10)
    assert (values["P"], values["R"], values["F1"], values["Acc"]) == (1.0, 1.0, 1.0, 1.0)


@pytest.mark.parametrize("subtask", "ABCD")
def test_constant_score_run_versus_ir_baseline(subtask: str) -> None:
    gold_data = gold("test", subtask)
    constant = CqaRun(
        rows=len(gold_data),
        scores=np.zeros(len(gold_data)),
        predicted=np.zeros(len(gold_data), dtype=bool),
    )
    values = score_run(gold_data, constant).values
    ir = score_run(gold_data, baseline_run(gold_data, "ir")).values
    ranking = [official(values[name]) for name in ("MAP", "AvgRec", "MRR")]
    ir_ranking = [official(ir[name]) for name in ("MAP", "AvgRec", "MRR")]
    if subtask == "D":
        # D's gold order is by QAID, not by IR score.
        assert ranking[0] != ir_ranking[0]
    else:
        assert ranking == ir_ranking


SHUFFLED = [
    ("submissions/Kelp/subtask_A_primary.txt", "A"),
    ("submissions/UH-PRHLT/subtask_B_primary.txt", "B"),
    ("submissions/SemanticZ/subtask_C_primary.txt", "C"),
    ("submissions/SLS/subtask_D_primary.txt", "D"),
    ("submissions/UPC_USMBA/subtask_D_primary.txt", "D"),
]


@pytest.mark.parametrize(("relative", "subtask"), SHUFFLED, ids=[p for p, _ in SHUFFLED])
def test_shuffled_copy_gives_identical_scores(relative: str, subtask: str) -> None:
    gold_data = gold("test", subtask)
    where = f"subtask {subtask} (test)"
    data = data_file(relative).read_bytes()
    original = validate_strict(data, gold_data, where=where)
    lines = data.splitlines()
    random.Random(2016).shuffle(lines)
    shuffled = validate_strict(b"\n".join(lines) + b"\n", gold_data, where=where)
    assert original.ok and shuffled.ok
    assert any(
        issue.message.startswith("Lines are not in the official order (first difference at line ")
        for issue in shuffled.warnings
    )
    assert original.run is not None and shuffled.run is not None
    assert score_run(gold_data, shuffled.run) == score_run(gold_data, original.run)


@pytest.mark.parametrize(("relative", "subtask"), SHUFFLED, ids=[p for p, _ in SHUFFLED])
def test_legacy_resort_of_shuffled_copy(relative: str, subtask: str) -> None:
    gold_data = gold("test", subtask)
    data = data_file(relative).read_bytes()
    lines = data.splitlines()
    random.Random(7).shuffle(lines)
    shuffled = b"\n".join(lines) + b"\n"
    assert not parse_lenient(shuffled, gold_data).ok
    verdict = parse_lenient(shuffled, gold_data, resort=True)
    assert verdict.ok and verdict.run is not None
    assert verdict.tolerances[0] == "re-sorted into the official order (organizer option 'resort')"
    ours = [official(score_run(gold_data, verdict.run).values[name]) for name in CQA_MEASURES]
    path = data_file(relative)
    assert ours == all_scores_line(path.with_name(path.name + ".score"))
