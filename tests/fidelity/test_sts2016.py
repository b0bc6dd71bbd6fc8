"""STS 2016 on the shipped data: Pearson, gold as output, mapping, baseline recipe (spec 9)."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest

from leaderboard.formats.sts import (
    StsGold,
    StsSetSpec,
    parse_gold,
    parse_lenient_file,
    render_scores,
    validate_file,
    validate_run,
)
from leaderboard.scoring.correlation import official
from leaderboard.tasks.families.sts import baseline_scores, cosine_bow, score_run
from tests.shared_data import preset_path, shared_path

pytestmark = pytest.mark.fidelity

TASK = "sts2016"
PRESET = "semeval2016-task1"
#: The cross-lingual files the preset ships (the others come from ../shared/data).
XL_SHIPPED = {
    "STS.gs.news.txt",
    "STS.gs.multisource.txt",
    "multi.gs.mapping.lines.txt",
    "STS.input.news.txt",
    "STS.input.multi.txt",
}
# Spec 1 and 6.2: set slug -> (pairs in the file, scored pairs).
EN = {
    "answer-answer": (1572, 254),
    "headlines": (1498, 249),
    "plagiarism": (1271, 230),
    "postediting": (3287, 244),
    "question-question": (1555, 209),
}
EN_SPECS = [StsSetSpec(s, n, f"STS2016.input.{s}.txt", ascii_hint=True) for s, (n, _) in EN.items()]
EN_WEIGHTS = {s: w for s, (_, w) in EN.items()}
NEWS = StsSetSpec("news", 301, "STS.input.news.txt")
MULTI = StsSetSpec("multisource", 2973, "STS.input.multi.txt", filtered_lines=294)
XL_WEIGHTS = {"news": 301, "multisource": 294}


def en_file(kind: str, slug: str, suffix: str = "txt") -> bytes:
    """Return an English gold or input file; the preset ships the .txt ones, not the .ascii."""
    name = f"STS2016.{kind}.{slug}.{suffix}"
    if suffix == "txt":
        return preset_path(PRESET, "english", name).read_bytes()
    return shared_path(TASK, "english", name).read_bytes()


def xl_file(name: str) -> bytes:
    """Return a cross-lingual file, from the preset where it ships one."""
    if name in XL_SHIPPED:
        return preset_path(PRESET, "crosslingual", name).read_bytes()
    return shared_path(TASK, "crosslingual", name).read_bytes()


@pytest.fixture(scope="module")
def en_golds() -> dict[str, StsGold]:
    return {s: parse_gold(en_file("gs", s), slug=s) for s in EN}


@pytest.fixture(scope="module")
def xl_golds() -> dict[str, StsGold]:
    return {
        "news": parse_gold(xl_file("STS.gs.news.txt"), slug="news"),
        "multisource": parse_gold(
            xl_file("STS.gs.multisource.txt"),
            slug="multisource",
            mapping=xl_file("multi.gs.mapping.lines.txt"),
        ),
    }


@pytest.fixture(scope="module")
def en_baseline() -> dict[str, np.ndarray]:
    return {s: np.array(baseline_scores(en_file("input", s).decode())) for s in EN}


def mapping_indices() -> list[int]:
    return [int(line) for line in xl_file("multi.gs.mapping.lines.txt").decode().split()]


# --- gold -------------------------------------------------------------------------------------


def test_gold_scored_counts_and_first_scored_lines(en_golds: dict[str, StsGold]) -> None:
    first = {
        "answer-answer": 9,
        "headlines": 13,
        "plagiarism": 3,
        "postediting": 11,
        "question-question": 5,
    }  # spec 2.1, 1-based
    for slug, (_, scored) in EN.items():
        gold = en_golds[slug]
        assert gold.scored_index.size == scored
        assert int(gold.scored_index[0]) + 1 == first[slug]
        assert set(gold.values.tolist()) <= {0.0, 1.0, 2.0, 3.0, 4.0, 5.0}


def test_gold_scored_lines_are_the_non_empty_ones(en_golds: dict[str, StsGold]) -> None:
    for slug in EN:
        lines = en_file("gs", slug).decode().split("\n")[:-1]
        expected = [i for i, line in enumerate(lines) if line != ""]
        assert en_golds[slug].scored_index.tolist() == expected
        assert en_golds[slug].values.tolist() == [float(lines[i]) for i in expected]


def test_crosslingual_gold(xl_golds: dict[str, StsGold]) -> None:
    assert xl_golds["news"].scored_index.tolist() == list(range(301))
    multi = xl_golds["multisource"]
    assert multi.scored_index[:3].tolist() == [953, 769, 802]  # spec 2.2: not sorted
    assert multi.scored_index.tolist() == mapping_indices()
    assert (int(multi.scored_index.min()), int(multi.scored_index.max())) == (1, 2960)


# --- 9.1 Pearson vs numpy.corrcoef -----------------------------------------------------------


def noisy(golds: dict[str, StsGold], specs: list[StsSetSpec], seed: int) -> dict[str, np.ndarray]:
    """Return run values: gold plus noise on scored lines, random values elsewhere."""
    rng = np.random.default_rng(seed)
    out = {}
    for spec in specs:
        values = rng.uniform(0, 5, spec.lines)
        gold = golds[spec.slug]
        values[gold.scored_index] = gold.values + rng.normal(0, 1.5, gold.values.size)
        out[spec.slug] = values
    return out


def test_pearson_matches_numpy_corrcoef(
    en_golds: dict[str, StsGold], xl_golds: dict[str, StsGold], en_baseline: dict[str, np.ndarray]
) -> None:
    runs = [
        (en_golds, noisy(en_golds, EN_SPECS, 1), EN_WEIGHTS),
        (en_golds, en_baseline, EN_WEIGHTS),
        (xl_golds, noisy(xl_golds, [NEWS, MULTI], 2), XL_WEIGHTS),
    ]
    for golds, values, weights in runs:
        result = score_run(values, golds, weights)
        expected = {}
        for slug, gold in golds.items():
            x = values[slug][gold.scored_index]
            expected[slug] = float(np.corrcoef(x, gold.values)[0, 1])
            assert official(result["per_set"][slug]) == official(expected[slug])
            assert result["per_set"][slug] == pytest.approx(expected[slug], abs=1e-12)
        overall = sum(weights[s] * expected[s] for s in golds) / sum(weights.values())
        assert official(result["overall"]) == official(overall)


# --- 9.2 gold as output, 9.3 unscored lines inert, 9.4 affine invariance ---------------------


def gold_as_output(gold: StsGold, lines: int) -> bytes:
    values = np.zeros(lines)
    values[gold.scored_index] = gold.values
    return render_scores(values.tolist())


def test_gold_as_output_scores_one_everywhere(
    en_golds: dict[str, StsGold], xl_golds: dict[str, StsGold]
) -> None:
    for golds, specs, weights in [
        (en_golds, EN_SPECS, EN_WEIGHTS),
        (xl_golds, [NEWS, MULTI], XL_WEIGHTS),
    ]:
        files = {spec.slug: gold_as_output(golds[spec.slug], spec.lines) for spec in specs}
        values, errors, _ = validate_run(files, specs)
        assert errors == [] and values is not None
        result = score_run(values, golds, weights)
        assert {s: official(r) for s, r in result["per_set"].items()} == {
            spec.slug: "1.00000" for spec in specs
        }
        assert official(result["overall"]) == "1.00000"


def test_unscored_lines_are_inert(
    en_golds: dict[str, StsGold], en_baseline: dict[str, np.ndarray]
) -> None:
    before = score_run(en_baseline, en_golds, EN_WEIGHTS)
    rng = np.random.default_rng(3)
    changed = {}
    for spec in EN_SPECS:
        values = rng.uniform(-100, 100, spec.lines)
        index = en_golds[spec.slug].scored_index
        values[index] = en_baseline[spec.slug][index]
        changed[spec.slug] = values
    after = score_run(changed, en_golds, EN_WEIGHTS)
    assert after["per_set"] == before["per_set"]
    assert after["overall"] == before["overall"]


def test_affine_invariance(
    en_golds: dict[str, StsGold], en_baseline: dict[str, np.ndarray]
) -> None:
    base = score_run(en_baseline, en_golds, EN_WEIGHTS)["per_set"]
    scaled = score_run({s: 2 * v + 1 for s, v in en_baseline.items()}, en_golds, EN_WEIGHTS)
    negated = score_run({s: -v for s, v in en_baseline.items()}, en_golds, EN_WEIGHTS)
    for slug, r in base.items():
        assert official(scaled["per_set"][slug]) == official(r)
        assert negated["per_set"][slug] == pytest.approx(-r, abs=1e-12)
        assert abs(r) > 0.01  # the check would be empty for r = 0


# --- 9.5 multi-source mapping ----------------------------------------------------------------


def test_mapping_selects_the_annotated_lines() -> None:
    multi = xl_file("STS.input.multi.txt").decode().split("\r\n")
    assert multi[-1] == "" and len(multi) == 2974  # CRLF on every one of the 2,973 lines
    subset = xl_file("STS.input.multisource.txt").decode().split("\n")[:-1]
    indices = mapping_indices()
    assert len(subset) == len(indices) == 294
    for k, index in enumerate(indices):
        assert multi[index] == subset[k]  # 1-based line index_k + 1
        assert len(subset[k].split("\t")) == 4


def test_baseline_on_subset_equals_full_then_mapped() -> None:
    full = baseline_scores(xl_file("STS.input.multi.txt").decode())
    subset = baseline_scores(xl_file("STS.input.multisource.txt").decode())
    assert len(full) == 2973 and len(subset) == 294
    assert [full[i] for i in mapping_indices()] == subset


def test_multisource_lenient_full_and_filtered_agree(xl_golds: dict[str, StsGold]) -> None:
    gold = xl_golds["multisource"]
    full = baseline_scores(xl_file("STS.input.multi.txt").decode())
    subset = baseline_scores(xl_file("STS.input.multisource.txt").decode())
    a, refusals_a, _ = parse_lenient_file(render_scores(full), MULTI, gold)
    b, refusals_b, _ = parse_lenient_file(render_scores(subset), MULTI, gold)
    assert refusals_a == [] == refusals_b and a is not None and b is not None
    assert a[gold.scored_index].tolist() == b[gold.scored_index].tolist()
    strict = validate_file(render_scores(full), MULTI)
    assert strict.values is not None
    r_strict = score_run(
        {"multisource": strict.values}, {"multisource": gold}, {"multisource": 294}
    )
    r_lenient = score_run({"multisource": b}, {"multisource": gold}, {"multisource": 294})
    assert r_strict == r_lenient


# --- 9.6 baseline recipe ----------------------------------------------------------------------


def test_cosine_bow_recipe_by_hand() -> None:
    # spec 7: case and punctuation kept; duplicates collapse
    first = en_file("input", "headlines").decode().split("\n")[0]
    s1, s2 = first.split("\t")[:2]
    assert s1 == "Digital era threatens tenuous future of drive-ins"
    assert s2 == "Digital Era Threatens Future of Drive-Ins"
    # shared tokens: {Digital, of} -> 2 / sqrt(7 * 6)
    assert cosine_bow(s1, s2) == pytest.approx(2 / 42**0.5, abs=1e-15)
    assert cosine_bow("a a b", "a b b") == 1.0
    assert cosine_bow("talks.", "talks") == 0.0
    assert cosine_bow("", "x") == 0.0


def score_variant(golds: dict[str, StsGold], make: Callable[[str], list[float]]) -> dict[str, str]:
    values = {s: np.array(make(s)) for s in EN}
    return {s: official(r) for s, r in score_run(values, golds, EN_WEIGHTS)["per_set"].items()}


def pairs_scores(slug: str, transform: Callable[[str], str]) -> list[float]:
    lines = en_file("input", slug).decode().split("\n")[:-1]
    out = []
    for line in lines:
        fields = line.split("\t")
        out.append(cosine_bow(transform(fields[0]), transform(fields[1])))
    return out


def strip_punct(text: str) -> str:
    return re.sub(r"[^\w\s]", "", text)


def test_baseline_variants_differ(en_golds: dict[str, StsGold]) -> None:
    official_recipe = score_variant(
        en_golds, lambda s: baseline_scores(en_file("input", s).decode())
    )
    lowered = score_variant(en_golds, lambda s: pairs_scores(s, str.lower))
    stripped = score_variant(en_golds, lambda s: pairs_scores(s, strip_punct))
    both = score_variant(en_golds, lambda s: pairs_scores(s, lambda t: strip_punct(t.lower())))
    for variant in (lowered, stripped, both):
        assert any(variant[s] != official_recipe[s] for s in EN)


def test_baseline_ascii_input_changes_only_plagiarism_and_postediting(
    en_golds: dict[str, StsGold],
) -> None:
    def from_ascii(slug: str) -> list[float]:
        scores = baseline_scores(en_file("input", slug, "ascii").decode("ascii"))
        assert len(scores) == EN[slug][0] + 1 and scores[-1] == 0.0  # the extra empty line
        return scores[:-1]

    official_recipe = score_variant(
        en_golds, lambda s: baseline_scores(en_file("input", s).decode())
    )
    ascii_variant = score_variant(en_golds, from_ascii)
    changed = {s for s in EN if ascii_variant[s] != official_recipe[s]}
    assert changed == {"plagiarism", "postediting"}


def test_rendered_baseline_is_a_valid_run_with_same_scores(
    en_golds: dict[str, StsGold], en_baseline: dict[str, np.ndarray]
) -> None:
    files = {s: render_scores(v.tolist()) for s, v in en_baseline.items()}
    values, errors, warnings = validate_run(files, EN_SPECS)
    assert errors == [] and warnings == [] and values is not None
    for slug in EN:
        assert values[slug].tolist() == en_baseline[slug].tolist()
    assert score_run(values, en_golds, EN_WEIGHTS) == score_run(en_baseline, en_golds, EN_WEIGHTS)


# --- 9.7 validator fixtures ------------------------------------------------------------------


def test_fixture_trailing_empty_lines_accepted(en_baseline: dict[str, np.ndarray]) -> None:
    data = render_scores(en_baseline["headlines"].tolist()) + b"\n\n"
    verdict = validate_file(data, EN_SPECS[1])
    assert verdict.errors == [] and verdict.values is not None
    assert [w.message for w in verdict.warnings] == [
        "headlines: 2 empty lines at the end of the file were ignored."
    ]


def test_fixture_scoring_every_ascii_line_gets_the_hint() -> None:
    scores = baseline_scores(en_file("input", "headlines", "ascii").decode("ascii"))
    verdict = validate_file(render_scores(scores), EN_SPECS[1])
    assert [e.message for e in verdict.errors] == [
        "headlines: expected 1,498 lines (one per pair of STS2016.input.headlines.txt), found "
        "1,499. If you scored every line of the .ascii input, remove the last line: it belongs "
        "to the extra empty line at the end of the .ascii file."
    ]


def test_fixture_filtered_multisource_rejected() -> None:
    scores = baseline_scores(xl_file("STS.input.multisource.txt").decode())
    verdict = validate_file(render_scores(scores), MULTI)
    assert [e.message for e in verdict.errors] == [
        "multisource: expected 2,973 lines (one per line of STS.input.multi.txt), found 294. "
        "Submit the unfiltered output; the server selects the evaluated pairs."
    ]


def test_fixture_second_column_rejected(en_baseline: dict[str, np.ndarray]) -> None:
    lines = [f"{v!r}\t100" for v in en_baseline["answer-answer"].tolist()]
    verdict = validate_file(("\n".join(lines) + "\n").encode(), EN_SPECS[0])
    assert verdict.values is None
    assert len(verdict.errors) == 26  # 25 listed, then the count
    first = en_baseline["answer-answer"].tolist()[0]
    assert verdict.errors[0].message == (
        f"answer-answer line 1: expected one number, found 2 fields ('{first!r}', '100')."
    )
    assert verdict.errors[-1].message == "answer-answer: … and 1,547 more errors."
