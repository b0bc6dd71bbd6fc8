"""A family scores a run on part of its set's units as files holding only those units score.

For each family: ``score_part`` on a restricted gold equals scoring, from scratch, a gold file
and a run file cut to the part's units (written as text, read by the family's own load_gold and
validation); corpus-level measures (F1, kappa, Pearson, BLEU, chrF, AvgRec) are recomputed on the
part. ``unit_ids`` are the ids ``unit_rows`` gives a full run, in the same order.
"""

from __future__ import annotations

import io
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn import metrics

from leaderboard.cli.references import read_definition
from leaderboard.scoring.resampling import NotResampled
from leaderboard.tasks.definition import SplitDef
from leaderboard.tasks.families import all_families, get_family
from leaderboard.tasks.families.base import (
    Context,
    Family,
    MeasureResult,
    PartGold,
    StoredScore,
    UnitParts,
)
from leaderboard.tasks.families.classification.family import ZERO_WEIGHT
from leaderboard.tasks.families.cqa.family import TRUNCATED_OUTSIDE
from leaderboard.tasks.families.sts.family import NO_PAIRS
from leaderboard.tasks.families.sts.scoring import CONSTANT_ON_SCORED
from leaderboard.tasks.splitting import SetSplit
from tests.helpers.item_tasks import pairs
from tests.helpers.sts import noisy_output
from tests.runs import gold_lines

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "docs" / "examples"
PRESETS = ROOT / "leaderboard" / "tasks" / "presets"
LIMIT = 10 << 20


@dataclass
class Task:
    """A set of a task definition: its family, context and reference files as bytes."""

    family: Family[Any, Any]
    ctx: Context
    files: dict[str, bytes]

    def gold(self, files: Mapping[str, bytes] | None = None, ctx: Context | None = None) -> Any:
        """Return the gold parsed from ``files`` (the set's own by default)."""
        return self.family.load_gold(files or self.files, ctx or self.ctx)

    def run(
        self,
        files: Mapping[str, bytes],
        gold: Any,
        ctx: Context | None = None,
        lenient: bool = False,
    ) -> Any:
        """Return the run validated against ``gold``; it must be accepted."""
        inputs = {k: io.BytesIO(v) for k, v in files.items()}
        verdict = self.family.validate(inputs, gold, ctx or self.ctx, lenient=lenient, options={})
        assert verdict.ok, verdict.errors
        return verdict.parsed


def task(toml: Path, subtask: str | None = None) -> Task:
    """Return the default set of a definition's subtask (the first unless named)."""
    definition = read_definition(toml)
    st = next(s for s in definition.subtasks if subtask in (None, s.slug))
    setdef = st.set(st.default_set)
    assert setdef is not None
    files = {role: definition.file_path(rel).read_bytes() for role, rel in setdef.files.items()}
    return Task(get_family(definition.family), Context(definition, st, setdef.slug, LIMIT), files)


def halves(ids: list[str], seed: int = 3) -> list[frozenset[str]]:
    """Return about half the units (drawn with a seed) and a single unit (the first)."""
    rng = random.Random(seed)
    return [frozenset(rng.sample(ids, len(ids) // 2)), frozenset(ids[:1])]


def keep_lines(data: bytes, wanted: Callable[[str], bool]) -> bytes:
    """Return the lines of a text file whose text ``wanted`` accepts (comments go)."""
    lines = data.decode("utf-8").splitlines()
    kept = (f"{line}\n" for line in lines if not line.startswith("#") and wanted(line))
    return "".join(kept).encode()


def first_field(units: frozenset[str]) -> Callable[[str], bool]:
    """Return whether a line's first field is one of ``units``."""
    return lambda line: bool(line.split()) and line.split()[0] in units


def assert_same(part: Mapping[str, MeasureResult], scratch: Mapping[str, MeasureResult]) -> None:
    """Assert both scorings give every measure the same value, string, flags and per-unit data."""
    assert list(part) == list(scratch)
    for key, expected in scratch.items():
        assert part[key] == expected, key


def score_part(t: Task, gold: Any, parsed: Any, units: frozenset[str]) -> dict[str, MeasureResult]:
    """Return the run's scores on a part through the family's restriction."""
    part_gold = t.family.restrict_gold(gold, units)
    return t.family.score_part(parsed, gold, part_gold, units)


def assert_unit_ids_are_unit_rows_ids(
    t: Task, gold: Any, parsed: Any, keys: tuple[str, ...] | None = None
) -> None:
    """Assert every measure (of ``keys``) resampled from a full run has ``unit_ids``' units."""
    results = t.family.score(parsed, gold)
    if keys is not None:
        results = {k: results[k] for k in keys}
    stored_values = t.family.item_values(parsed, gold)
    checked = 0
    for key, result in results.items():
        stored = StoredScore(result.per_query, result.item_stats, stored_values)
        try:
            units, _rows = t.family.unit_rows(key, gold, stored)
        except NotResampled:
            continue
        checked += 1
        assert units == t.family.unit_ids(gold), key
    assert checked > 0


def test_every_built_in_family_writes_its_unit_parts() -> None:
    for family in all_families():
        for method in ("unit_ids", "restrict_gold", "restrict_run"):
            assert getattr(type(family), method) is not getattr(UnitParts, method), (
                family.name,
                method,
            )


# --------------------------------------------------------------------------------------------
# Classification and regression: one value per item


@pytest.mark.parametrize(
    ("folder", "toml", "gold_file"),
    [
        ("classification", "task.toml", "gold.tsv"),
        ("classification", "task-weighted.toml", "gold-weighted.tsv"),
        ("regression", "task.toml", "gold.tsv"),
    ],
)
def test_an_item_family_on_part_of_the_items_scores_as_files_of_those_items(
    folder: str, toml: str, gold_file: str
) -> None:
    t = task(EXAMPLES / folder / toml)
    gold = t.gold()
    run_text = (EXAMPLES / folder / "run-valid.tsv").read_bytes()
    parsed = t.run({"file": run_text}, gold)
    ids = [line.split()[0] for line in keep_lines(t.files["gold"], bool).decode().splitlines()]
    assert t.family.unit_ids(gold) == ids
    assert_unit_ids_are_unit_rows_ids(t, gold, parsed)
    for units in halves(ids):
        scratch_gold = t.gold({"gold": keep_lines(t.files["gold"], first_field(units))})
        scratch_run = t.run({"file": keep_lines(run_text, first_field(units))}, scratch_gold)
        part = score_part(t, gold, parsed, units)
        assert_same(part, t.family.score(scratch_run, scratch_gold))
        assert set(part) == set(t.ctx.subtask.measures)


def test_item_measures_on_a_part_are_recomputed_on_it_not_taken_from_the_whole_set() -> None:
    t = task(EXAMPLES / "regression" / "task.toml")
    gold = t.gold()
    parsed = t.run({"file": (EXAMPLES / "regression" / "run-valid.tsv").read_bytes()}, gold)
    units = halves(list(gold.gold.ids))[0]
    part = score_part(t, gold, parsed, units)
    rows = [gold.gold.index[u] for u in sorted(units, key=gold.gold.index.__getitem__)]
    expected = float(np.corrcoef(gold.gold.values[rows], parsed[rows])[0, 1])
    assert part["Pearson"].raw == pytest.approx(expected, abs=1e-12)
    assert part["Pearson"].raw != t.family.score(parsed, gold)["Pearson"].raw
    one = score_part(t, gold, parsed, frozenset([gold.gold.ids[0]]))
    assert one["Pearson"].raw is None and one["Pearson"].reason
    assert one["MSE"].raw == pytest.approx((gold.gold.values[0] - parsed[0]) ** 2)


def test_classification_keeps_the_declared_labels_on_a_part_missing_some() -> None:
    t = task(EXAMPLES / "classification" / "task.toml")
    gold = t.gold()
    parsed = t.run({"file": (EXAMPLES / "classification" / "run-valid.tsv").read_bytes()}, gold)
    labels = gold.extra["labels"]
    truth = pairs(EXAMPLES / "classification" / "gold.tsv")
    predicted = pairs(EXAMPLES / "classification" / "run-valid.tsv")
    only = frozenset(i for i, label in truth.items() if label == "negative")
    part_gold = t.family.restrict_gold(gold, only)
    assert part_gold.extra["labels"] == labels
    assert part_gold.gold.ids == tuple(i for i in gold.gold.ids if i in only)
    part = t.family.score_part(parsed, gold, part_gold, only)
    chosen = [i for i in truth if i in only]
    expected = metrics.f1_score(
        [truth[i] for i in chosen], [predicted[i] for i in chosen], labels=labels, average="macro"
    )
    assert part["macro-F1"].raw == pytest.approx(expected, abs=1e-12)


def test_a_part_whose_items_all_weigh_zero_has_no_values() -> None:
    t = task(EXAMPLES / "classification" / "task-weighted.toml")
    gold = t.gold()
    parsed = t.run({"file": (EXAMPLES / "classification" / "run-valid.tsv").read_bytes()}, gold)
    weightless = frozenset(
        i for i, w in zip(gold.gold.ids, gold.gold.weights.tolist(), strict=True) if w == 0
    )
    assert len(weightless) == 7
    part = score_part(t, gold, parsed, weightless)
    assert list(part) == list(t.ctx.subtask.measures)
    assert all(r.raw is None and r.reason == ZERO_WEIGHT for r in part.values())


def test_a_unit_the_set_does_not_have_is_refused() -> None:
    t = task(EXAMPLES / "classification" / "task.toml")
    with pytest.raises(ValueError, match="not units of the set: 'nope'"):
        t.family.restrict_gold(t.gold(), frozenset(["tw-001", "nope"]))


# --------------------------------------------------------------------------------------------
# Generation: segments, by line number


@pytest.mark.parametrize("toml", ["task.toml", "task-options.toml"])
def test_generation_on_part_of_the_segments_scores_as_files_of_those_segments(toml: str) -> None:
    t = task(EXAMPLES / "generation" / toml)
    gold = t.gold()
    run_text = (EXAMPLES / "generation" / "run-valid.de").read_bytes()
    parsed = t.run({"file": run_text}, gold)
    n = len(gold.source)
    assert t.family.unit_ids(gold) == [str(i) for i in range(1, n + 1)]
    assert_unit_ids_are_unit_rows_ids(t, gold, parsed)

    def cut(data: bytes, units: frozenset[str]) -> bytes:
        lines = data.decode("utf-8").splitlines()
        return "".join(f"{line}\n" for i, line in enumerate(lines, 1) if str(i) in units).encode()

    for units in halves(t.family.unit_ids(gold)):
        scratch_gold = t.gold({role: cut(data, units) for role, data in t.files.items()})
        scratch_run = t.run({"file": cut(run_text, units)}, scratch_gold)
        part = score_part(t, gold, parsed, units)
        assert_same(part, t.family.score(scratch_run, scratch_gold))
        whole = t.family.score(parsed, gold)
        assert {"BLEU", "chrF++", "TER"} <= set(part)
        assert part["chrF++"].raw != whole["chrF++"].raw
        assert len(part["BLEU"].item_stats or []) == len(units)


# --------------------------------------------------------------------------------------------
# TREC: queries, as trec_eval scores a qrels and a run cut to them


@pytest.mark.parametrize("folder", ["trec", "trec-infap"])
def test_trec_on_part_of_the_queries_scores_as_a_qrels_and_run_cut_to_them(folder: str) -> None:
    t = task(EXAMPLES / folder / "task.toml")
    gold = t.gold()
    run_text = (EXAMPLES / folder / "run-valid.txt").read_bytes()
    parsed = t.run({"file": run_text}, gold)
    ids = t.family.unit_ids(gold)
    qrels = keep_lines(t.files["qrels"], bool).decode().splitlines()
    qrels_queries = [line.split()[0] for line in qrels]
    assert ids == list(dict.fromkeys(qrels_queries))
    assert_unit_ids_are_unit_rows_ids(t, gold, parsed)
    for units in halves(ids):
        scratch_gold = t.gold(
            {role: keep_lines(d, first_field(units)) for role, d in t.files.items()}
        )
        scratch_run = t.run({"file": keep_lines(run_text, first_field(units))}, scratch_gold)
        part = score_part(t, gold, parsed, units)
        assert_same(part, t.family.score(scratch_run, scratch_gold))
        for result in part.values():
            assert result.per_query is None or set(result.per_query) <= units
    restricted = t.family.restrict_run(parsed, gold, frozenset(ids[:2]))
    assert set(restricted.queries) == set(ids[:2]) < set(parsed.queries)


def test_trec_measures_on_a_part_are_means_over_the_parts_queries() -> None:
    t = task(EXAMPLES / "trec" / "task.toml")
    gold = t.gold()
    parsed = t.run({"file": (EXAMPLES / "trec" / "run-valid.txt").read_bytes()}, gold)
    whole = t.family.score(parsed, gold)
    units = halves(t.family.unit_ids(gold))[0]
    part = score_part(t, gold, parsed, units)
    for key in ("MAP", "nDCG@10", "P@10"):
        values = whole[key].per_query or {}
        expected = sum(values[u] for u in units) / len(units)
        assert part[key].raw == pytest.approx(expected, abs=1e-12), key


# --------------------------------------------------------------------------------------------
# CQA: questions


def cqa_run_text(seed: int = 5) -> bytes:
    """Return a run of subtask A's test gold with seeded scores and labels."""
    rng = random.Random(seed)
    lines = []
    for q, c, *_ in gold_lines():
        score = rng.random()
        lines.append(f"{q}\t{c}\t0\t{score:.6f}\t{'true' if score > 0.6 else 'false'}\n")
    return "".join(lines).encode()


def test_cqa_on_part_of_the_questions_scores_as_files_of_those_questions() -> None:
    t = task(PRESETS / "semeval2016-task3" / "task.toml", "A")
    gold = t.gold()
    run_text = cqa_run_text()
    parsed = t.run({"file": run_text}, gold)
    ids = t.family.unit_ids(gold)
    assert ids == list(dict.fromkeys(line[0] for line in gold_lines()))
    assert_unit_ids_are_unit_rows_ids(t, gold, parsed)
    for units in halves(ids):
        scratch_gold = t.gold({"gold": keep_lines(t.files["gold"], first_field(units))})
        scratch_run = t.run({"file": keep_lines(run_text, first_field(units))}, scratch_gold)
        part = score_part(t, gold, parsed, units)
        assert_same(part, t.family.score(scratch_run, scratch_gold))
        assert {"MAP", "AvgRec", "MRR", "F1"} <= set(part)
        assert part["AvgRec"].raw != t.family.score(parsed, gold)["AvgRec"].raw


def test_a_truncated_cqa_run_on_a_part_scores_as_the_part_of_its_truncated_file() -> None:
    t = task(PRESETS / "semeval2016-task3" / "task.toml", "A")
    gold = t.gold()
    ids = t.family.unit_ids(gold)
    # A legacy file cut in the middle of a question, read leniently as the 2016 scorer did.
    cut = int(gold.question_starts[len(ids) // 2]) + 2
    lines = cqa_run_text().decode().splitlines(keepends=True)[:cut]
    truncated = "".join(lines).encode()
    parsed = t.run({"file": truncated}, gold, lenient=True)
    assert parsed.rows == cut
    units = halves(ids)[0]
    scratch_gold = t.gold({"gold": keep_lines(t.files["gold"], first_field(units))})
    scratch_run = t.run(
        {"file": keep_lines(truncated, first_field(units))}, scratch_gold, lenient=True
    )
    assert_same(score_part(t, gold, parsed, units), t.family.score(scratch_run, scratch_gold))
    beyond = frozenset(ids[-3:])
    outside = score_part(t, gold, parsed, beyond)
    assert outside and all(
        r.raw is None and r.reason == TRUNCATED_OUTSIDE for r in outside.values()
    )


# --------------------------------------------------------------------------------------------
# STS: scored pairs, by part and run line


def sts_task() -> tuple[Task, Any, Any, dict[str, bytes]]:
    """Return the English STS set, its gold, a noisy run and the run's files."""
    t = task(PRESETS / "semeval2016-task1" / "task.toml", "en")
    gold = t.gold()
    run_files = {slug: noisy_output(slug) for slug in gold.golds}
    return t, gold, t.run(run_files, gold), run_files


def sts_scratch(
    t: Task, gold: Any, run_files: Mapping[str, bytes], units: frozenset[str]
) -> dict[str, MeasureResult]:
    """Score gold and run files holding only the chosen pairs of each part that has some."""
    parts, files, runs = [], {}, {}
    for part in t.ctx.set.options["parts"]:
        slug = part["slug"]
        gold_lines_ = t.files[f"gold:{slug}"].decode().splitlines()
        run_lines = run_files[slug].decode().splitlines()
        # The gold's scored lines are its non-empty ones; a pair's id is its 1-based line.
        chosen = [i for i, v in enumerate(gold_lines_, 1) if v.strip() and f"{slug}:{i}" in units]
        if not chosen:
            continue
        parts.append(
            {k: v for k, v in part.items() if k != "filtered_lines"} | {"lines": len(chosen)}
        )
        files[f"gold:{slug}"] = "".join(f"{gold_lines_[i - 1]}\n" for i in chosen).encode()
        runs[slug] = "".join(f"{run_lines[i - 1]}\n" for i in chosen).encode()
    setdef = replace(t.ctx.set, options={**t.ctx.set.options, "parts": parts})
    ctx = replace(t.ctx, subtask=replace(t.ctx.subtask, sets=(setdef,)))
    scratch_gold = t.gold(files, ctx)
    return t.family.score(t.run(runs, scratch_gold, ctx), scratch_gold)


def test_sts_on_part_of_the_pairs_scores_as_files_of_those_pairs() -> None:
    t, gold, parsed, run_files = sts_task()
    ids = t.family.unit_ids(gold)
    expected_ids = [
        f"{slug}:{i}"
        for slug in gold.golds
        for i, v in enumerate(
            (PRESETS / "semeval2016-task1" / "english" / f"STS2016.gs.{slug}.txt")
            .read_text()
            .splitlines(),
            1,
        )
        if v.strip()
    ]
    assert ids == expected_ids
    # A part's own measure resamples its own pairs; the overall one every pair of the set.
    assert_unit_ids_are_unit_rows_ids(t, gold, parsed, ("ALL",))
    units = halves(ids)[0]
    part = score_part(t, gold, parsed, units)
    assert_same(part, sts_scratch(t, gold, run_files, units))
    assert part["ALL"].raw != t.family.score(parsed, gold)["ALL"].raw


def test_an_sts_part_without_pairs_in_the_split_has_no_value_and_no_weight() -> None:
    t, gold, parsed, run_files = sts_task()
    headlines = [u for u in t.family.unit_ids(gold) if u.startswith("headlines:")]
    units = frozenset(headlines[::2])
    part = score_part(t, gold, parsed, units)
    scratch = sts_scratch(t, gold, run_files, units)
    assert list(part) == ["ALL", *gold.golds]
    assert part["ALL"] == scratch["ALL"] and part["headlines"] == scratch["headlines"]
    assert part["ALL"].raw == part["headlines"].raw
    for slug in gold.golds:
        if slug != "headlines":
            assert part[slug].raw is None and part[slug].reason == NO_PAIRS


def test_an_sts_part_of_one_pair_counts_its_constant_output_as_zero() -> None:
    t, gold, parsed, _ = sts_task()
    one = frozenset([t.family.unit_ids(gold)[5]])
    part = score_part(t, gold, parsed, one)
    assert part["answer-answer"].raw == 0.0
    assert part["answer-answer"].flags == (CONSTANT_ON_SCORED,)
    assert part["ALL"].raw == 0.0


def test_a_declared_sts_weight_stays_and_a_counted_one_follows_the_part() -> None:
    t, gold, _, _ = sts_task()
    declared = replace(
        gold, counted=gold.counted - {"headlines"}, weights={**gold.weights, "headlines": 7}
    )
    units = frozenset(
        u for u in t.family.unit_ids(gold) if u.split(":")[0] in ("headlines", "plagiarism")
    )
    chosen = frozenset(sorted(units)[::3])
    part_gold = t.family.restrict_gold(declared, chosen)
    plagiarism = sum(1 for u in chosen if u.startswith("plagiarism:"))
    assert part_gold.weights == {"headlines": 7, "plagiarism": plagiarism}
    assert gold.counted == frozenset(gold.golds)


# --------------------------------------------------------------------------------------------
# A part's per-unit values are the whole run's on its units: stored once, derived when read


def _item_run(folder: str, name: str) -> Callable[[Task, Any], Any]:
    return lambda t, gold: t.run({"file": (EXAMPLES / folder / name).read_bytes()}, gold)


def _cqa_run(t: Task, gold: Any) -> Any:
    return t.run({"file": cqa_run_text()}, gold)


def _sts_run(t: Task, gold: Any) -> Any:
    return t.run({slug: noisy_output(slug) for slug in gold.golds}, gold)


PER_UNIT_CASES = [
    (EXAMPLES / "classification" / "task.toml", None, _item_run("classification", "run-valid.tsv")),
    (EXAMPLES / "regression" / "task.toml", None, _item_run("regression", "run-valid.tsv")),
    (EXAMPLES / "generation" / "task-options.toml", None, _item_run("generation", "run-valid.de")),
    (EXAMPLES / "trec" / "task.toml", None, _item_run("trec", "run-valid.txt")),
    (EXAMPLES / "trec-infap" / "task.toml", None, _item_run("trec-infap", "run-valid.txt")),
    (PRESETS / "semeval2016-task3" / "task.toml", "A", _cqa_run),
    # STS keeps no per-unit values in its scores: it resamples the stored predictions.
    (PRESETS / "semeval2016-task1" / "task.toml", "en", _sts_run),
]  # fmt: skip


@pytest.mark.parametrize(("toml", "subtask", "make_run"), PER_UNIT_CASES)
def test_a_parts_per_unit_values_are_the_whole_runs_on_its_units(
    toml: Path, subtask: str | None, make_run: Callable[[Task, Any], Any]
) -> None:
    t = task(toml, subtask)
    gold = t.gold()
    parsed = make_run(t, gold)
    whole = t.family.score(parsed, gold)
    ids = t.family.unit_ids(gold)
    public = halves(ids)[0]
    split = SetSplit(
        SplitDef(0.5, 1),
        tuple(ids),
        public,
        {
            name: PartGold(units, t.family.restrict_gold(gold, units))
            for name, units in (("public", public), ("private", frozenset(ids) - public))
        },
    )
    kept = 0
    for name, part_gold in split.golds.items():
        part = t.family.score_part(parsed, gold, part_gold.gold, part_gold.units)
        for key, result in part.items():
            if result.per_query is None and result.item_stats is None:
                assert not split.derives(name, whole[key], result)
                continue
            kept += 1
            assert split.derives(name, whole[key], result), key
            per_query, item_stats = split.on_part(name, whole[key].per_query, whole[key].item_stats)
            assert per_query == (None if result.per_query is None else dict(result.per_query))
            assert item_stats == result.item_stats
    assert kept > 0 or t.family.name == "sts"


def test_values_that_are_not_the_whole_runs_on_the_part_are_not_derived() -> None:
    units = ("a", "b", "c")
    split = SetSplit(
        SplitDef(0.5, 1),
        units,
        frozenset({"a", "c"}),
        {"public": PartGold(frozenset({"a", "c"}), None)},
    )
    whole = MeasureResult(
        0.5, "0.5", per_query={"a": 1.0, "b": 0.0, "c": 0.5}, item_stats=[[1], [2], [3]]
    )
    assert split.on_part("public", whole.per_query, whole.item_stats) == (
        {"a": 1.0, "c": 0.5},
        [[1], [3]],
    )
    same = MeasureResult(0.75, "0.75", per_query={"a": 1.0, "c": 0.5}, item_stats=[[1], [3]])
    assert split.derives("public", whole, same)
    # A value recomputed differently on the part (a non-separable measure) is stored, not derived.
    other = MeasureResult(0.75, "0.75", per_query={"a": 1.0, "c": 0.4999}, item_stats=[[1], [3]])
    assert not split.derives("public", whole, other)
    assert not split.derives("public", None, same)
    # Statistics not one row per unit cannot be restricted.
    short = MeasureResult(0.5, "0.5", per_query=None, item_stats=[[1], [2]])
    with pytest.raises(ValueError, match="2 rows of statistics for 3 units"):
        split.on_part("public", None, short.item_stats)
    assert not split.derives("public", short, MeasureResult(0.5, "0.5", item_stats=[[1]]))
