"""The generation scorer against the ``sacrebleu`` command line on the same files.

Each seeded case writes a hypothesis file and one to three reference files, reads them with the
format's readers, scores them with ``score_run`` and compares with what the ``sacrebleu``
command prints (``--format json -w 4``): scores to the 4 decimals it prints, signatures equal.
Cases cover CJK, Arabic, combining marks, emoji, very long lines, empty hypotheses, outputs
identical to a reference, one-segment sets, the 13a, intl, char, none and zh tokenizers, lowercase
on and off, CRLF and missing final newlines. Statistics are checked too: summed over all
segments they give the scorer's score exactly, over a resampled subset sacrebleu's own
``corpus_score`` on that subset.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from sacrebleu.metrics import BLEU, CHRF, TER

from leaderboard.formats.segments import check_references, parse_segments, validate_output
from leaderboard.scoring.generation import (
    GenerationOptions,
    corpus_score_from_stats,
    score_run,
)

SACREBLEU = Path(sys.executable).parent / "sacrebleu"
CASES = 32

_LATIN = (
    "the a of cat dog sat on mat house Garden river Bank is was not very quickly Slowly "
    "Paris London café naïve straße Über résumé señor"
)
LATIN = _LATIN.split()
CJK = ["東京", "北京", "机器", "翻译", "日本語", "の", "は", "漢字", "한국어", "서울"]
ARABIC = ["مرحبا", "العالم", "كتاب", "ال", "مدرسة", "و"]
COMBINING = ["e\u0301", "a\u0308b", "n\u0303o", "Z\u0335", "o\u0302\u0323"]
EMOJI = ["😀", "👍🏽", "👨\u200d👩\u200d👧", "🇫🇷", "❤️", "✨"]
PUNCT = [".", ",", "!", "?", "«", "»", "—", "(", ")", "'s", "n't", "$5", "3.14"]


def vocabulary(rng: random.Random) -> list[str]:
    """Return a case's vocabulary: Latin words with one or two scripts mixed in."""
    extra = rng.sample([CJK, ARABIC, COMBINING, EMOJI, PUNCT], k=rng.randint(1, 3))
    return LATIN + [w for group in extra for w in group]


def sentence(rng: random.Random, vocab: list[str], length: int) -> str:
    """Return ``length`` words; CJK words are sometimes glued without spaces."""
    words = [rng.choice(vocab) for _ in range(length)]
    text = ""
    for word in words:
        glue = text and not (word in CJK and text[-1] in "".join(CJK) and rng.random() < 0.5)
        text += (" " if glue else "") + word
    return text


def variant(rng: random.Random, vocab: list[str], text: str) -> str:
    """Return ``text`` with words replaced, dropped, moved or re-cased."""
    words = text.split()
    out: list[str] = []
    for word in words:
        r = rng.random()
        if r < 0.1:
            out.append(rng.choice(vocab))
        elif r < 0.15:
            continue
        elif r < 0.2:
            out.append(word.upper())
        else:
            out.append(word)
    if len(out) > 3 and rng.random() < 0.3:
        i = rng.randrange(len(out))
        out.insert(rng.randrange(len(out)), out.pop(i))
    return " ".join(out)


@dataclass
class Case:
    """One generated run: options, files' bytes, and whether TER is cheap enough to compare."""

    seed: int
    options: GenerationOptions
    hyp: bytes
    refs: list[bytes]
    ter: bool


def make_case(seed: int) -> Case:
    """Return the seeded case ``seed``; a few seeds force the edge cases."""
    rng = random.Random(seed)
    vocab = vocabulary(rng)
    n = 1 if seed % 8 == 3 else rng.randint(2, 40)
    n_refs = rng.randint(1, 3)
    long_lines = seed % 7 == 5
    refs_text: list[list[str]] = [[] for _ in range(n_refs)]
    hyps: list[str] = []
    for _ in range(n):
        length = rng.randint(800, 2000) if long_lines and rng.random() < 0.3 else rng.randint(1, 30)
        base = sentence(rng, vocab, length)
        for k in range(n_refs):
            refs_text[k].append(base if k == 0 else variant(rng, vocab, base))
        r = rng.random()
        if r < 0.1:
            hyps.append("")  # an empty output
        elif r < 0.2 or seed % 11 == 4:
            hyps.append(base)  # identical to the first reference
        else:
            hyps.append(variant(rng, vocab, base))
    tokenize = ["13a", "intl", "char", "none", "zh"][seed % 5]
    options = GenerationOptions(tokenize=tokenize, lowercase=seed % 3 == 1)
    words = sum(len(h.split()) for h in hyps)
    return Case(
        seed=seed,
        options=options,
        hyp=encode(hyps, rng),
        refs=[encode(ref, rng) for ref in refs_text],
        ter=words <= 400,
    )


def encode(lines: list[str], rng: random.Random) -> bytes:
    """Return ``lines`` as a file: LF or CRLF endings, final newline present or not."""
    end = "\r\n" if rng.random() < 0.15 else "\n"
    text = end.join(lines)
    if rng.random() < 0.8:
        text += end
    return text.encode()


def cli_json(paths: list[Path], hyp: Path, metrics: list[str], extra: list[str]) -> list[dict]:
    """Return the JSON records the sacrebleu command prints for ``metrics``."""
    argv = [str(SACREBLEU), *map(str, paths), "-i", str(hyp), "-m", *metrics]
    argv += ["-w", "4", "--format", "json", *extra]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    records = json.loads(done.stdout)
    return records if isinstance(records, list) else [records]


def cli_scores(case: Case, tmp: Path) -> dict[str, dict]:
    """Return {measure key: sacrebleu's JSON record} from two command runs."""
    hyp = tmp / f"hyp{case.seed}.txt"
    hyp.write_bytes(case.hyp)
    refs = []
    for k, data in enumerate(case.refs):
        refs.append(tmp / f"ref{case.seed}.{k}.txt")
        refs[-1].write_bytes(data)
    common = ["-tok", case.options.tokenize]
    if case.options.lowercase:
        common += ["-lc", "--chrf-lowercase"]
    first = cli_json(refs, hyp, ["bleu", "chrf", *(["ter"] if case.ter else [])], common)
    plus = cli_json(refs, hyp, ["chrf"], [*common, "--chrf-word-order", "2"])
    keys = ["BLEU", "chrF", "TER"]
    found = dict(zip(keys, first, strict=False))
    found["chrF++"] = plus[0]
    return found


ALL_CASES = [make_case(seed) for seed in range(CASES)]


@pytest.fixture(scope="module")
def cli_results(tmp_path_factory: pytest.TempPathFactory) -> dict[int, dict[str, dict]]:
    """Run the sacrebleu command for every case, two at a time."""
    tmp = tmp_path_factory.mktemp("sacrebleu")
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = pool.map(lambda case: cli_scores(case, tmp), ALL_CASES)
        return {case.seed: found for case, found in zip(ALL_CASES, results, strict=True)}


def read_case(case: Case) -> tuple[list[str], list[list[str]]]:
    """Read the case's files with the format's readers, as an upload would be."""
    refs: list[list[str]] = []
    for k, data in enumerate(case.refs):
        segments, issues = parse_segments(data, f"reference {k + 1}")
        assert segments is not None, issues
        refs.append(segments)
    assert check_references(refs, len(refs[0])) == []
    hyps, errors, _ = validate_output(case.hyp, len(refs[0]))
    assert hyps is not None and errors == [], errors
    return hyps, refs


def test_the_cases_cover_the_edge_cases() -> None:
    assert len(ALL_CASES) >= 30
    assert {c.options.tokenize for c in ALL_CASES} == {"13a", "intl", "char", "none", "zh"}
    assert {c.options.lowercase for c in ALL_CASES} == {True, False}
    assert {len(c.refs) for c in ALL_CASES} == {1, 2, 3}
    assert any(c.hyp.count(b"\n") <= 1 and len(read_case(c)[0]) == 1 for c in ALL_CASES)
    assert any(b"\r\n" in c.hyp for c in ALL_CASES)
    assert any(not c.hyp.endswith(b"\n") for c in ALL_CASES)
    texts = b"".join(c.hyp for c in ALL_CASES).decode()
    for sample in ("東京", "مرحبا", "\u0301", "👍🏽"):
        assert sample in texts
    assert any(max(len(h.split()) for h in read_case(c)[0]) >= 800 for c in ALL_CASES)
    assert any("" in read_case(c)[0] for c in ALL_CASES)
    assert sum(c.ter for c in ALL_CASES) >= 15


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda c: f"seed{c.seed}")
def test_scores_and_signatures_equal_the_sacrebleu_command(
    case: Case, cli_results: dict[int, dict[str, dict]]
) -> None:
    expected = cli_results[case.seed]
    hyps, refs = read_case(case)
    ours = score_run(hyps, refs, list(expected), case.options)
    for key, record in expected.items():
        assert format(ours[key].score, ".4f") == format(record["score"], ".4f"), key
        assert ours[key].signature == record["signature"], key
        assert len(ours[key].stats) == len(hyps)


def reference_metric(key: str, options: GenerationOptions) -> BLEU | CHRF | TER:
    """Return sacrebleu's metric for ``key``, built here independently of the scorer."""
    if key == "BLEU":
        return BLEU(tokenize=options.tokenize, lowercase=options.lowercase)
    if key == "TER":
        return TER()
    return CHRF(word_order=2 if key == "chrF++" else 0, lowercase=options.lowercase)


@pytest.mark.parametrize("case", ALL_CASES[:12], ids=lambda c: f"seed{c.seed}")
def test_statistics_give_the_corpus_score_of_any_resample(case: Case) -> None:
    hyps, refs = read_case(case)
    keys = ["BLEU", "chrF", "chrF++", *(["TER"] if case.ter else [])]
    ours = score_run(hyps, refs, keys, case.options)
    rng = np.random.default_rng(case.seed)
    index = rng.integers(0, len(hyps), size=len(hyps))  # a bootstrap resample, with repeats
    for key in keys:
        stats = ours[key].stats
        assert corpus_score_from_stats(key, stats, case.options) == ours[key].score, key
        sub_hyps = [hyps[i] for i in index]
        sub_refs = [[ref[i] for i in index] for ref in refs]
        expected = reference_metric(key, case.options).corpus_score(sub_hyps, sub_refs).score
        assert corpus_score_from_stats(key, stats[index], case.options) == expected, key
