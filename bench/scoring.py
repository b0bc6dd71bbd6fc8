"""Time ``leaderboard score`` on a 2,000,000-line TREC run against a pytrec_eval script.

Both are timed as whole processes (interpreter start, imports, parsing, evaluation), alternating,
on the same synthetic run and qrels; the figures printed are median wall and CPU times, their
ratios, and each side's peak RSS. Target: ours at most half pytrec_eval's wall time, peak under
300 MB.

    .venv/bin/python -m bench.scoring [--queries 2000] [--per-query 1000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import compileall
import json
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench._common import LEADERBOARD, REPO, Timed, median, run_timed

MEASURES = {"MAP": "map", "R-Prec": "Rprec", "MRR": "recip_rank"}
RELEVANT_IN_RUN = 6
NON_RELEVANT_IN_RUN = 3
RELEVANT_UNRETRIEVED = 4

TASK_TOML = """\
slug = "bench-trec"
title = "Synthetic TREC task for the scoring benchmark"
family = "trec"
table_style = "trec"
official_measure = "automatic/MAP"
measures = ["automatic/MAP", "automatic/R-Prec", "automatic/MRR"]

[runs]
slots = ["primary"]
ranked_slots = ["primary"]

[format]
max_per_query = {per_query}
topic_set = "synthetic"

[[subtasks]]
slug = "passage"
title = "Synthetic passage ranking"
default_set = "test"

[[subtasks.sets]]
slug = "test"
title = "Synthetic test"
topics = "topics.txt"
variants = [
  {{ slug = "automatic", label = "Automatic", threshold = 1, qrels = "qrels.txt" }},
]
"""


def write_files(folder: Path, queries: int, per_query: int, seed: int = 7) -> tuple[Path, Path]:
    """Write the task definition, topics, qrels and run; return (definition, run) paths.

    Per query the qrels judge some retrieved paragraphs relevant (grade 1 or 2), some
    retrieved ones non-relevant (grade 0) and some never retrieved relevant ones.
    """
    # The tests' generator is reused so the benchmark run has the same shape as the tests'.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.trec_synthetic import hex_id, run_lines, synthetic_topics

    topics = synthetic_topics(queries)
    (folder / "topics.txt").write_text("".join(f"{t}\n" for t in topics))
    (folder / "task.toml").write_text(TASK_TOML.format(per_query=per_query))
    rng = random.Random(seed)
    run = folder / "run.txt"
    with run.open("wb") as out, (folder / "qrels.txt").open("w") as qrels:
        for topic, block in zip(topics, run_lines(topics, per_query, seed=seed), strict=True):
            out.write(block)
            docids = [line.split(b" ", 3)[2].decode() for line in block.splitlines()]
            picked = rng.sample(docids, min(len(docids), RELEVANT_IN_RUN + NON_RELEVANT_IN_RUN))
            for k, docid in enumerate(picked):
                grade = 0 if k >= RELEVANT_IN_RUN else rng.choice((1, 1, 2))
                qrels.write(f"{topic} 0 {docid} {grade}\n")
            for _ in range(RELEVANT_UNRETRIEVED):
                qrels.write(f"{topic} 0 {hex_id(rng)} 1\n")
    return folder / "task.toml", run


def pytrec_main(run: str, qrels: str) -> None:
    """Parse the run and qrels with pytrec_eval's own parsers, evaluate, print the means as JSON."""
    import pytrec_eval

    with open(qrels) as f:
        judged = pytrec_eval.parse_qrel(f)
    with open(run) as f:
        ranked = pytrec_eval.parse_run(f)
    evaluator = pytrec_eval.RelevanceEvaluator(judged, set(MEASURES.values()))
    per_query = evaluator.evaluate(ranked)
    # Every query of the qrels has lines in this run, so these means equal trec_eval -c's.
    means = {
        ours: sum(q[theirs] for q in per_query.values()) / len(per_query)
        for ours, theirs in MEASURES.items()
    }
    print(json.dumps(means))


def ours_argv(definition: Path, run: Path) -> list[str]:
    """Return the ``leaderboard score`` command line."""
    return [
        LEADERBOARD, "score", "--json", "--definition", str(definition),
        "bench-trec", "passage", str(run),
    ]  # fmt: skip


def pytrec_argv(folder: Path, run: Path) -> list[str]:
    """Return the pytrec_eval script's command line."""
    return [sys.executable, "-m", "bench.scoring", "--pytrec", str(run), str(folder / "qrels.txt")]


def ours_means(out: str) -> dict[str, float]:
    """Read MAP, R-Prec and MRR from ``leaderboard score --json`` output."""
    measures = json.loads(out)["measures"]
    return {m: float(measures[f"automatic/{m}"]) for m in MEASURES}


def summary(label: str, times: Sequence[Timed]) -> str:
    """Return one line: median and range of wall times, median CPU time, maximum peak RSS."""
    seconds = [t.seconds for t in times]
    return (
        f"{label:<20} median {median(seconds):5.2f} s"
        f" (min {min(seconds):.2f}, max {max(seconds):.2f})"
        f"  CPU {median([t.cpu_seconds for t in times]):5.2f} s"
        f"  peak RSS {max(t.peak_mb for t in times):4.0f} MB"
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Generate the files, time both sides alternately and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--per-query", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--pytrec", nargs=2, metavar=("RUN", "QRELS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.pytrec:
        pytrec_main(*args.pytrec)
        return
    with tempfile.TemporaryDirectory(prefix="lb-bench-scoring-") as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        definition, run = write_files(folder, args.queries, args.per_query)
        lines = args.queries * args.per_query
        print(
            f"run: {lines:,} lines ({args.queries:,} queries x {args.per_query:,}),"
            f" {run.stat().st_size / 1e6:.0f} MB; written in {time.perf_counter() - start:.1f} s"
        )
        # An installed package has its bytecode compiled; this environment may set
        # PYTHONDONTWRITEBYTECODE, which would make every run recompile edited modules.
        compileall.compile_dir(REPO / "leaderboard", quiet=1)
        ours: list[Timed] = []
        theirs: list[Timed] = []
        for i in range(args.repeat):
            # Alternate which side goes first so neither always meets a warm or cold cache.
            pair = [
                (ours, ours_argv(definition, run)),
                (theirs, pytrec_argv(folder, run)),
            ]
            for bucket, cmd in pair if i % 2 == 0 else pair[::-1]:
                bucket.append(run_timed(cmd))
        a, b = ours_means(ours[0].stdout), json.loads(theirs[0].stdout)
        print(f"leaderboard score:  {json.dumps(a)}")
        print(f"pytrec_eval:        {json.dumps(b)}")
        agree = all(abs(a[m] - b[m]) < 1e-9 for m in MEASURES)
        print(f"measures agree to 1e-9: {'yes' if agree else 'NO'}")
        print(summary("leaderboard score", ours))
        print(summary("pytrec_eval script", theirs))
        ratio = median([t.seconds for t in ours]) / median([t.seconds for t in theirs])
        peak = max(t.peak_mb for t in ours)
        cpu = median([t.cpu_seconds for t in ours]) / median([t.cpu_seconds for t in theirs])
        print(f"ratio ours/pytrec_eval: median wall {ratio:.2f} (target <= 0.50), CPU {cpu:.2f}")
        print(
            f"targets: wall {'met' if ratio <= 0.5 else 'MISSED'},"
            f" peak {'met' if peak < 300 else 'MISSED'} ({peak:.0f} MB, target < 300 MB)"
        )


if __name__ == "__main__":
    main()
