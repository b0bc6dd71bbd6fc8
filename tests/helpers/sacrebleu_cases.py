"""Seeded generation runs and references for the fidelity checks against sacrebleu."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from leaderboard.formats.segments import check_references, parse_segments, validate_output
from leaderboard.scoring.generation import (
    GenerationOptions,
)

SACREBLEU = Path(sys.executable).parent / "sacrebleu"


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
