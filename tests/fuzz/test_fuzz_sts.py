"""Fuzz the STS (SemEval-2016 Task 1) gold parser, strict file and run validators, lenient reader."""

from __future__ import annotations

import gzip
import math
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import event, example, given
from hypothesis import strategies as st

from leaderboard.formats import sts
from leaderboard.formats.issues import Issue
from leaderboard.tasks.families.sts import StsFamily, StsGoldBundle
from tests.fuzz import FUZZ, check_finite, check_issues, fuzz_input, mutated, per_case

PRESET = Path(__file__).resolve().parents[2] / "leaderboard/tasks/presets/semeval2016-task1"
FAMILY = StsFamily()


def head(path: Path, lines: int) -> bytes:
    """Return the first ``lines`` lines of a preset file."""
    return ("\n".join(path.read_text().splitlines()[:lines]) + "\n").encode()


@dataclass(frozen=True)
class Case:
    """A small set cut from a preset gold file: its spec, gold, mapping and a valid run."""

    spec: sts.StsSetSpec
    gold_data: bytes
    mapping: bytes | None
    gold: sts.StsGold
    run: bytes


def _case(spec: sts.StsSetSpec, gold_data: bytes, mapping: bytes | None = None) -> Case:
    gold = sts.parse_gold(gold_data, slug=spec.slug, mapping=mapping)
    values = np.full(spec.lines, 2.5)
    values[gold.scored_index] = gold.values
    # Correlated with the gold but not equal to it, and never constant.
    run = "".join(f"{v + (i % 3) * 0.25:.3f}\n" for i, v in enumerate(values)).encode()
    return Case(spec, gold_data, mapping, gold, run)


PLAGIARISM = _case(
    sts.StsSetSpec("plagiarism", 12, "STS2016.input.plagiarism.txt", ascii_hint=True),
    head(PRESET / "english/STS2016.gs.plagiarism.txt", 12),
)
NEWS = _case(
    sts.StsSetSpec("news", 10, "STS.input.news.txt"),
    head(PRESET / "crosslingual/STS.gs.news.txt", 10),
)
# Multisource: 6 preset gold values scored on run lines given by a (synthetic) mapping file,
# so that a 16-line run and its filtered 6-line form are both possible.
MULTI = _case(
    sts.StsSetSpec("multisource", 16, "STS.input.multi.txt", filtered_lines=6),
    head(PRESET / "crosslingual/STS.gs.multisource.txt", 6),
    b"1\n4\n6\n9\n12\n14\n",
)
CASES = (PLAGIARISM, NEWS, MULTI)


def reference_pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    """Return Pearson's r computed exactly with fractions (None when either side is constant)."""
    xs = [Fraction(float(v)) for v in x]
    ys = [Fraction(float(v)) for v in y]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxy = sum((a - mx) * (b - my) for a, b in zip(xs, ys, strict=True))
    sxx = sum((a - mx) ** 2 for a in xs)
    syy = sum((b - my) ** 2 for b in ys)
    if sxx == 0 or syy == 0:
        return None
    return math.sqrt(sxy * sxy / (sxx * syy)) * (1 if sxy >= 0 else -1)


def check_scores(case: Case, values: np.ndarray) -> None:
    """Score one set's values with the family scorer: finite, and equal to the exact r."""
    slug = case.spec.slug
    weight = int(case.gold.scored_index.size)
    bundle = StsGoldBundle({slug: case.gold}, (case.spec,), {slug: weight}, "ALL")
    results = FAMILY.score({slug: values}, bundle)
    assert set(results) == {"ALL", slug}
    check_finite({k: r.raw for k, r in results.items()})
    expected = reference_pearson(values[case.gold.scored_index], case.gold.values)
    if expected is None:
        assert results[slug].raw == 0.0 and results[slug].flags == ("constant-on-scored",)
    else:
        assert results[slug].raw == pytest.approx(expected, abs=1e-9)
    assert results["ALL"].raw == pytest.approx(results[slug].raw, rel=1e-15, abs=1e-15)


def check_values(values: np.ndarray | None, errors: list[Issue], spec: sts.StsSetSpec) -> None:
    """Assert accepted values cover the set's lines and a refusal says why."""
    check_issues(errors)
    assert all(i.severity == "error" for i in errors)
    if values is None:
        assert errors
    else:
        assert not errors
        assert values.shape == (spec.lines,)


_runs = per_case(
    CASES, lambda c: st.one_of(fuzz_input(c.run), mutated(gzip.compress(c.run, mtime=0), 2))
)


@FUZZ
@given(_runs)
@example((NEWS, NEWS.run.replace(b"\n", b"e200\n")))
@example((NEWS, NEWS.run.replace(b"\n", b"e-320\n")))
@example((NEWS, b"1e308\n" * 4 + b"0\n" * 6))
# max - min of these overflows: the constant check must not compute it.
@example((NEWS, b"-1.7976931348623157e308\n6.77e293\n" * 5))
@example((MULTI, b"".join(line + b"\n" for line in MULTI.run.splitlines()[:6])))
@example((PLAGIARISM, b"\xef\xbb\xbf" + PLAGIARISM.run.replace(b"\n", b" \r\n")))
def test_run_readers_give_a_verdict_or_a_finite_exact_score(drawn: tuple[Case, bytes]) -> None:
    case, data = drawn
    spec = case.spec
    verdict = sts.validate_file(data, spec)
    check_values(verdict.values, verdict.errors, spec)
    check_issues(verdict.warnings)
    assert all(i.severity == "warning" for i in verdict.warnings)
    event(f"strict: {'accepted' if verdict.values is not None else 'refused'}")
    if verdict.values is not None:
        assert np.all(np.isfinite(verdict.values))
        check_scores(case, verdict.values)

    values, refusals, report = sts.parse_lenient_file(data, spec, case.gold)
    check_values(values, refusals, spec)
    assert all(isinstance(line, str) and line for line in report)
    event(f"lenient: {'accepted' if values is not None else 'refused'}")
    if values is not None:
        assert np.all(np.isfinite(values[case.gold.scored_index]))
        check_scores(case, values)

    # The whole-run validator: this file beside a valid one of another set, plus a stray name.
    other = NEWS if case is not NEWS else PLAGIARISM
    files = {spec.slug: data, other.spec.slug: other.run, "stray": data[:10]}
    run_values, errors, warnings = sts.validate_run(files, [spec, other.spec])
    check_issues(errors)
    check_issues(warnings)
    assert run_values is None and any("stray" in e.message for e in errors)
    del files["stray"]
    run_values, errors, warnings = sts.validate_run(files, [spec, other.spec])
    check_issues(errors)
    check_issues(warnings)
    assert (run_values is None) == bool(errors) == (verdict.values is None)


_golds = per_case(
    CASES,
    lambda c: st.tuples(
        fuzz_input(c.gold_data),
        st.none() if c.mapping is None else st.one_of(st.just(c.mapping), fuzz_input(c.mapping)),
    ),
)


@FUZZ
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@given(_golds)
@example((NEWS, (b"1\n1\n1\n", None)))
@example((NEWS, (b"1e308\n-1e308\n", None)))
@example((MULTI, (MULTI.gold_data, b"1\n1\n2\n3\n4\n5\n")))
@example((MULTI, (MULTI.gold_data, b"0\n1\n2\n3\n4\n9223372036854775808\n")))
def test_gold_parser_gives_a_gold_or_a_message(
    drawn: tuple[Case, tuple[bytes, bytes | None]],
) -> None:
    case, (data, mapping) = drawn
    try:
        gold = sts.parse_gold(data, slug=case.spec.slug, mapping=mapping)
    except ValueError as exc:
        assert type(exc) is ValueError and str(exc).strip()
        return
    assert gold.slug == case.spec.slug
    assert gold.scored_index.shape == gold.values.shape and gold.values.size >= 2
    assert np.all(np.isfinite(gold.values)) and np.ptp(gold.values) > 0
    assert len(set(gold.scored_index.tolist())) == gold.scored_index.size
    assert gold.scored_index.min() >= 0
