"""Synthetic TREC runs for tests, and the validate + score benchmark.

Benchmark (prints wall time and peak RSS; not a test):
    .venv/bin/python -m tests.trec_synthetic [--queries 2000] [--per-query 1000] [--pytrec]
"""

from __future__ import annotations

import argparse
import random
import resource
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path


def hex_id(rng: random.Random) -> str:
    """Return a random 40-character lowercase hexadecimal paragraph id."""
    return f"{rng.getrandbits(160):040x}"


def synthetic_topics(n: int) -> list[str]:
    """Return n CAR-like section ids (title/heading with %20 for spaces)."""
    return [f"Topic%20{i:05d}/Section%20{i % 7}" for i in range(n)]


def run_lines(
    topics: Sequence[str], per_query: int, seed: int = 0, tag: str = "bench-run"
) -> Iterator[bytes]:
    """Yield a run of ``per_query`` lines per topic with random ids and 6-decimal scores."""
    rng = random.Random(seed)
    for topic in topics:
        score = 30.0
        out = []
        for rank in range(1, per_query + 1):
            score -= rng.random() * 0.03
            out.append(f"{topic} Q0 {hex_id(rng)} {rank} {score:.6f} {tag}\n")
        yield "".join(out).encode()


def write_run(path: Path, topics: Sequence[str], per_query: int, seed: int = 0) -> int:
    """Write a synthetic run file and return its size in bytes."""
    with path.open("wb") as out:
        for block in run_lines(topics, per_query, seed):
            out.write(block)
    return path.stat().st_size


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def benchmark(n_queries: int, per_query: int, with_pytrec: bool) -> None:
    """Generate a run file, then time strict validation + scoring of it in this process."""
    from leaderboard.formats.trec import Qrels, validate_run
    from leaderboard.tasks.families.trec.scoring import score_run
    from tests.trec_car import CAR_SETTINGS

    topics = synthetic_topics(n_queries)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.txt"
        size = write_run(path, topics, per_query)
        rss_before = _peak_rss_mb()
        import numpy as np

        rng = random.Random(1)
        judged = [(q, hex_id(rng)) for q in range(n_queries) for _ in range(3)]
        qrels = Qrels(
            queries=tuple(topics),
            query_index=np.array([q for q, _ in judged], dtype=np.int32),
            docids=np.array([d.encode() for _, d in judged], dtype="S40"),
            grades=np.ones(len(judged), dtype=np.int32),
        )
        start = time.perf_counter()
        with path.open("rb") as stream:
            run, errors, _ = validate_run(stream, topics=frozenset(topics), settings=CAR_SETTINGS)
        validated = time.perf_counter()
        assert run is not None, errors[:3]
        scores = score_run(run, qrels, 1)
        scored = time.perf_counter()
        print(f"run: {n_queries:,} queries x {per_query:,} lines, {size / 1e6:.0f} MB")
        print(f"validate {validated - start:.2f} s, score {scored - validated:.2f} s, {scores}")
        print(f"peak RSS {_peak_rss_mb():.0f} MB (before validation {rss_before:.0f} MB)")
        if with_pytrec:
            import pytrec_eval

            start = time.perf_counter()
            run_dict: dict[str, dict[str, float]] = {}
            with path.open() as stream:
                for line in stream:
                    q, _, d, _, s, _ = line.split()
                    run_dict.setdefault(q, {})[d] = float(s)
            loaded = time.perf_counter()
            qrels_dict: dict[str, dict[str, int]] = {}
            for qi, doc in judged:
                qrels_dict.setdefault(topics[qi], {})[doc] = 1
            evaluator = pytrec_eval.RelevanceEvaluator(qrels_dict, {"map", "Rprec", "recip_rank"})
            evaluator.evaluate(run_dict)
            done = time.perf_counter()
            print(f"pytrec_eval: read {loaded - start:.2f} s, evaluate {done - loaded:.2f} s")
            print(f"peak RSS incl. pytrec_eval {_peak_rss_mb():.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--per-query", type=int, default=1000)
    parser.add_argument("--pytrec", action="store_true")
    args = parser.parse_args()
    benchmark(args.queries, args.per_query, args.pytrec)


if __name__ == "__main__":
    main()
