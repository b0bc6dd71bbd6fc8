"""Time the generation scorer on a generated 10,000-segment run with two references.

Segments are about 25 words (Latin with accents, some CJK, Arabic and emoji), the run a noisy
copy of the first reference. Printed: validation of the run file, each measure through
``score_run`` (statistics equal to sacrebleu's, score, signature), once with the references
still to tokenize (a set's first run) and once with them prepared (every later run: the server
keeps them with the cached gold),
sacrebleu's plain ``corpus_score`` for comparison, recomputation from stored statistics, and
the process's peak RSS after the BLEU+chrF request path and after TER. Target for a request
(validation + BLEU + chrF): under 2 s and 300 MB.

    .venv/bin/python -m bench.generation_scoring [--segments 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import resource
import time
from collections.abc import Callable

from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

from leaderboard.formats.segments import validate_output
from leaderboard.scoring.generation import (
    GenerationOptions,
    corpus_score_from_stats,
    metric,
    score_run,
)
from leaderboard.scoring.sacrebleu_stats import ReferenceCache

_TEXT = (
    "the of and to in a is that for it as was with be by on not he this are or his from at "
    "which but have an they you were her she there been one all we their has would when if "
    "more will about into than can them only other new some could these two may first then "
    "café naïve über straße fiancée résumé Zürich señor coöperate déjà"
)
WORDS = _TEXT.split()
EXOTIC = ["東京", "北京大学", "机器翻译", "مرحبا", "العالم", "😀", "👍🏽", "é", "Ωμέγα", "Привет"]


def sentence(rng: random.Random, length: int) -> list[str]:
    """Return ``length`` words, about one in twelve from the non-Latin list."""
    return [rng.choice(EXOTIC) if rng.random() < 0.08 else rng.choice(WORDS) for _ in range(length)]


def noisy(rng: random.Random, words: list[str]) -> list[str]:
    """Return ``words`` with about a fifth of them replaced, dropped or doubled."""
    out: list[str] = []
    for word in words:
        r = rng.random()
        if r < 0.08:
            out.append(rng.choice(WORDS))
        elif r < 0.13:
            continue
        elif r < 0.18:
            out += [word, word]
        else:
            out.append(word)
    return out


def corpus(n: int, seed: int = 13) -> tuple[list[str], list[list[str]]]:
    """Return (hypotheses, [reference 1, reference 2]) of ``n`` segments."""
    rng = random.Random(seed)
    ref1, ref2, hyp = [], [], []
    for _ in range(n):
        words = sentence(rng, max(1, int(rng.gauss(25, 8))))
        ref1.append(" ".join(words) + ".")
        ref2.append(" ".join(noisy(rng, words)) + ".")
        hyp.append(" ".join(noisy(rng, words)) + ".")
    return hyp, [ref1, ref2]


def timed(label: str, repeat: int, call: Callable[[], object]) -> float:
    """Run ``call`` ``repeat`` times; print the best wall and CPU times and return the wall."""
    best, best_cpu = float("inf"), float("inf")
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        call()
        best = min(best, time.perf_counter() - start)
        best_cpu = min(best_cpu, time.process_time() - start_cpu)
    print(f"{label:<44} {best:8.3f} s wall {best_cpu:8.3f} s CPU")
    return best


def peak_mb() -> float:
    """Return this process's peak RSS in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    """Print the timings and peak memory."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--segments", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    hyp, refs = corpus(args.segments)
    data = ("\n".join(hyp) + "\n").encode()
    words = sum(len(h.split()) for h in hyp)
    print(f"{args.segments:,} segments, {words / args.segments:.1f} words each, 2 references")
    print(f"baseline peak RSS after imports and data: {peak_mb():.0f} MB")
    r = args.repeat
    t_valid = timed("validate_output", r, lambda: validate_output(data, args.segments))
    totals = {}
    cache = ReferenceCache(refs)
    for key in ("BLEU", "chrF"):
        # sacrebleu's tokenizers remember 65,536 lines: forget them, as for a new run.
        timed(f"score_run {key}, references not yet prepared", r, lambda k=key: score_run(
            hyp, (Tokenizer13a.__call__.cache_clear(), refs)[1], [k]))  # fmt: skip
        totals[key] = timed(f"score_run {key}, references prepared", r, lambda k=key: score_run(
            hyp, (Tokenizer13a.__call__.cache_clear(), cache)[1], [k]))  # fmt: skip
    request = t_valid + totals["BLEU"] + totals["chrF"]
    print(f"{'request path (validation + BLEU + chrF)':<44} {request:8.3f} s")
    print(f"peak RSS after the request path: {peak_mb():.0f} MB")
    for key in ("BLEU", "chrF"):
        label = f"sacrebleu corpus_score {key} alone"
        timed(label, r, lambda k=key: metric(k, _opts()).corpus_score(hyp, refs))
    print(f"peak RSS after sacrebleu's own corpus_score: {peak_mb():.0f} MB")
    timed("score_run chrF++ (score + stats)", r, lambda: score_run(hyp, refs, ["chrF++"]))
    results = score_run(hyp, refs, ["BLEU", "chrF", "TER"])
    for key in ("BLEU", "chrF"):
        stats = results[key].stats
        timed(
            f"corpus_score_from_stats {key}",
            r,
            lambda k=key, s=stats: corpus_score_from_stats(k, s),
        )
    timed("score_run TER (score + stats)", 1, lambda: score_run(hyp, refs, ["TER"]))
    timed(
        "corpus_score_from_stats TER",
        r,
        lambda: corpus_score_from_stats("TER", results["TER"].stats),
    )
    print(f"peak RSS after TER: {peak_mb():.0f} MB")


def _opts() -> GenerationOptions:
    """Return the default options."""
    return GenerationOptions()


if __name__ == "__main__":
    main()
