"""Time ``leaderboard score`` on a 2,000,000-line TREC run against a pytrec_eval script.

Both are timed as whole processes (interpreter start, imports, parsing, evaluation), alternating,
on the same synthetic run and qrels, twice: with the three measures MAP, R-Prec and MRR, and with
the ten measures MAP, nDCG, nDCG@10, P@10, R@100, R@1000, MRR, MRR@10, bpref and R-Prec. The
figures printed are median wall and CPU times, their ratios, and each side's peak RSS. Targets:
ours at most half pytrec_eval's wall time and peak under 300 MB (three measures); ten measures
cost at most 1.5 times three. Beside pytrec_eval, ``trec_eval -O2`` itself is timed on the same
files with the ten measures (the nine it has) when it can be had: ``$TREC_EVAL`` or
``trec_eval`` on the PATH, else built with -O2 from the trec_eval C source that the
pytrec-eval-terrier source distribution carries, when a C compiler is present; otherwise the
reason it is skipped is printed.

With ``--split F`` the definitions' set declares a public/private split (``public = { fraction
= F, seed = 1234 }``): ``leaderboard score`` then scores the run on all queries and on each
part, as an upload is scored, and prints the parts' means beside the others (pytrec_eval's
side is unchanged: the ratio is the cost of the parts over the same plain evaluation).

    .venv/bin/python -m bench.scoring [--queries 2000] [--per-query 1000] [--repeat 7] [--split F]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from bench._common import LEADERBOARD, REPO, Timed, median, run_timed

#: Our measure keys and pytrec_eval's names; MRR@10 has none (pytrec_eval computes the other nine).
MEASURES = {"MAP": "map", "R-Prec": "Rprec", "MRR": "recip_rank"}
TEN_MEASURES = {
    "MAP": "map",
    "nDCG": "ndcg",
    "nDCG@10": "ndcg_cut_10",
    "P@10": "P_10",
    "R@100": "recall_100",
    "R@1000": "recall_1000",
    "MRR": "recip_rank",
    "MRR@10": None,
    "bpref": "bpref",
    "R-Prec": "Rprec",
}
#: pytrec_eval's parameterised measure names for the ten-measure evaluator.
PYTREC_TEN = {
    "map",
    "ndcg",
    "ndcg_cut.10",
    "P.10",
    "recall.100,1000",
    "recip_rank",
    "bpref",
    "Rprec",
}
#: trec_eval's options for the nine of the ten measures it has.
TREC_EVAL_TEN = [
    *("-m", "map", "-m", "ndcg", "-m", "ndcg_cut.10", "-m", "P.10", "-m", "recall.100,1000"),
    *("-m", "recip_rank", "-m", "bpref", "-m", "Rprec"),
]
#: Where the pytrec-eval-terrier source distribution is listed.
SDIST_INDEX = "https://pypi.org/pypi/pytrec-eval-terrier/json"
RELEVANT_IN_RUN = 6
NON_RELEVANT_IN_RUN = 3
RELEVANT_UNRETRIEVED = 4

TASK_TOML = """\
slug = "bench-trec"
title = "Synthetic TREC task for the scoring benchmark"
family = "trec"
table_style = "trec"
official_measure = "automatic/MAP"
measures = [{measures}]

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
{split}"""
SPLIT_SEED = 1234


def definition_text(per_query: int, measures: Sequence[str], split: float | None = None) -> str:
    """Return the benchmark task's definition asking for ``measures``, its set split or not."""
    listed = ", ".join(f'"automatic/{m}"' for m in measures)
    line = "" if split is None else f"public = {{ fraction = {split}, seed = {SPLIT_SEED} }}\n"
    return TASK_TOML.format(per_query=per_query, measures=listed, split=line)


def write_files(
    folder: Path, queries: int, per_query: int, seed: int = 7, split: float | None = None
) -> tuple[Path, Path]:
    """Write the task definitions, topics, qrels and run; return (definition, run) paths.

    ``task.toml`` asks for the three measures, ``task10.toml`` beside it for the ten; both
    split their set when ``split`` (the public fraction) is given.

    Per query the qrels judge some retrieved paragraphs relevant (grade 1 or 2), some
    retrieved ones non-relevant (grade 0) and some never retrieved relevant ones.
    """
    # The tests' generator is reused so the benchmark run has the same shape as the tests'.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.trec_synthetic import hex_id, run_lines, synthetic_topics

    topics = synthetic_topics(queries)
    (folder / "topics.txt").write_text("".join(f"{t}\n" for t in topics))
    (folder / "task.toml").write_text(definition_text(per_query, list(MEASURES), split))
    (folder / "task10.toml").write_text(definition_text(per_query, list(TEN_MEASURES), split))
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


def pytrec_main(run: str, qrels: str, ten: bool) -> None:
    """Parse the run and qrels with pytrec_eval's own parsers, evaluate, print the means as JSON."""
    import pytrec_eval

    with open(qrels) as f:
        judged = pytrec_eval.parse_qrel(f)
    with open(run) as f:
        ranked = pytrec_eval.parse_run(f)
    names = PYTREC_TEN if ten else set(MEASURES.values())
    evaluator = pytrec_eval.RelevanceEvaluator(judged, names)
    per_query = evaluator.evaluate(ranked)
    # Every query of the qrels has lines in this run, so these means equal trec_eval -c's.
    asked = TEN_MEASURES if ten else MEASURES
    means = {
        ours: sum(q[theirs] for q in per_query.values()) / len(per_query)
        for ours, theirs in asked.items()
        if theirs is not None
    }
    print(json.dumps(means))


def ours_argv(definition: Path, run: Path) -> list[str]:
    """Return the ``leaderboard score`` command line."""
    return [
        LEADERBOARD, "score", "--json", "--definition", str(definition),
        "bench-trec", "passage", str(run),
    ]  # fmt: skip


def pytrec_argv(folder: Path, run: Path, ten: bool = False) -> list[str]:
    """Return the pytrec_eval script's command line."""
    argv = [sys.executable, "-m", "bench.scoring", "--pytrec", str(run), str(folder / "qrels.txt")]
    return [*argv, "--ten"] if ten else argv


def fetch_sdist(folder: Path) -> Path:
    """Download the newest pytrec-eval-terrier source distribution into ``folder``."""
    with urllib.request.urlopen(SDIST_INDEX, timeout=60) as resp:
        index = json.load(resp)
    sdist = next(f for f in index["urls"] if f["packagetype"] == "sdist")
    path = folder / sdist["filename"]
    with urllib.request.urlopen(urllib.parse.urljoin(SDIST_INDEX, sdist["url"]), timeout=120) as r:
        path.write_bytes(r.read())
    return path


def trec_eval_binary(folder: Path) -> tuple[str | None, str]:
    """Return a trec_eval executable and where it came from, or None and why there is none."""
    found = os.environ.get("TREC_EVAL") or shutil.which("trec_eval")
    if found:
        return found, f"trec_eval at {found}"
    if shutil.which("cc") is None:
        return None, "no C compiler to build trec_eval with"
    try:
        sdist = fetch_sdist(folder)
    except (OSError, StopIteration, ValueError) as exc:
        return None, f"the pytrec-eval-terrier source distribution could not be fetched ({exc})"
    with tarfile.open(sdist) as tar:
        mains = [n for n in tar.getnames() if n.endswith("/trec_eval.c")]
        if not mains:
            return None, (
                f"{sdist.name} carries no trec_eval C source (its setup.py fetches it from "
                "GitHub when it builds, and GitHub is not reachable from this machine)"
            )
        tar.extractall(folder / "src", filter="data")
    source = (folder / "src" / mains[0]).parent
    built = subprocess.run(["make", "-C", str(source), "CC=cc", "CFLAGS=-O2"],
                           capture_output=True, text=True, check=False)  # fmt: skip
    if built.returncode != 0:
        return None, f"trec_eval did not build: {built.stderr.strip()[-300:]}"
    return str(source / "trec_eval"), f"trec_eval built with -O2 from {sdist.name}"


def trec_eval_means(out: str) -> dict[str, float]:
    """Return trec_eval's means (its ``all`` lines) under pytrec_eval's measure names."""
    means = {}
    for line in out.splitlines():
        name, query, value = line.split()
        if query == "all" and name in set(TEN_MEASURES.values()):
            means[name] = float(value)
    return means


def ours_means(out: str) -> dict[str, float]:
    """Read the means from ``leaderboard score --json`` output, by unprefixed measure key."""
    measures = json.loads(out)["measures"]
    return {k.partition("/")[2]: float(v) for k, v in measures.items()}


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
    parser.add_argument(
        "--split",
        type=float,
        metavar="FRACTION",
        help="split the set into public (this fraction, seed 1234) and private parts",
    )
    parser.add_argument("--pytrec", nargs=2, metavar=("RUN", "QRELS"), help=argparse.SUPPRESS)
    parser.add_argument("--ten", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.pytrec:
        pytrec_main(*args.pytrec, args.ten)
        return
    with tempfile.TemporaryDirectory(prefix="lb-bench-scoring-") as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        definition, run = write_files(folder, args.queries, args.per_query, split=args.split)
        lines = args.queries * args.per_query
        print(
            f"run: {lines:,} lines ({args.queries:,} queries x {args.per_query:,}),"
            f" {run.stat().st_size / 1e6:.0f} MB; written in {time.perf_counter() - start:.1f} s;"
            + (" no split" if args.split is None else f" split: public {args.split}")
        )
        # An installed package has its bytecode compiled; this environment may set
        # PYTHONDONTWRITEBYTECODE, which would make every run recompile edited modules.
        compileall.compile_dir(REPO / "leaderboard", quiet=1)
        sides: dict[str, list[Timed]] = {"ours3": [], "pytrec3": [], "ours10": [], "pytrec10": []}
        commands = {
            "ours3": ours_argv(definition, run),
            "pytrec3": pytrec_argv(folder, run),
            "ours10": ours_argv(folder / "task10.toml", run),
            "pytrec10": pytrec_argv(folder, run, ten=True),
        }
        trec_eval, origin = trec_eval_binary(folder)
        print(f"trec_eval: {origin}" if trec_eval else f"trec_eval: skipped, {origin}")
        if trec_eval:
            sides["trec_eval10"] = []
            commands["trec_eval10"] = [
                trec_eval,
                *TREC_EVAL_TEN,
                str(folder / "qrels.txt"),
                str(run),
            ]
        for i in range(args.repeat):
            # Rotate which command goes first so none always meets a warm or cold cache.
            order = list(commands)
            order = order[i % len(order) :] + order[: i % len(order)]
            for name in order:
                sides[name].append(run_timed(commands[name]))
        agree = split_scored = True
        for ours_side, their_side in (("ours3", "pytrec3"), ("ours10", "pytrec10")):
            a, b = ours_means(sides[ours_side][0].stdout), json.loads(sides[their_side][0].stdout)
            print(f"{ours_side:<8} {json.dumps(a)}")
            print(f"{their_side:<8} {json.dumps(b)}")
            agree = agree and all(abs(a[m] - b[m]) < 1e-9 for m in b)
            if args.split is not None:
                parts = json.loads(sides[ours_side][0].stdout).get("parts", {})
                for part, values in parts.items():
                    means = {k.partition("/")[2]: v for k, v in values.items()}
                    print(f"  {part:<8} {json.dumps(means)}")
                # Both parts must have been scored, or the figures measure no split.
                split_scored = split_scored and set(parts) == {"public", "private"}
        if trec_eval:
            a, b = (
                ours_means(sides["ours10"][0].stdout),
                trec_eval_means(sides["trec_eval10"][0].stdout),
            )
            print(f"{'trec_eval':<8} {json.dumps(b)}")
            # trec_eval prints four decimals.
            agree = agree and all(abs(a[m] - b[m]) < 5e-5 for m in b)
        print(f"measures agree to 1e-9 (trec_eval: to its 4 decimals): {'yes' if agree else 'NO'}")
        if args.split is not None:
            print(f"both parts in our output: {'yes' if split_scored else 'NO'}")
        labels = {
            "ours3": "ours, 3 measures",
            "pytrec3": "pytrec_eval, 3",
            "ours10": "ours, 10 measures",
            "pytrec10": "pytrec_eval, 9",
            "trec_eval10": "trec_eval -O2, 9",
        }
        for name, label in labels.items():
            if name in sides:
                print(summary(label, sides[name]))

        def wall(name: str) -> float:
            return median([t.seconds for t in sides[name]])

        def cpu(name: str) -> float:
            return median([t.cpu_seconds for t in sides[name]])

        ratio = wall("ours3") / wall("pytrec3")
        ratio10 = wall("ours10") / wall("pytrec10")
        growth = wall("ours10") / wall("ours3")
        peak = max(t.peak_mb for t in sides["ours3"] + sides["ours10"])
        print(
            f"ratio ours/pytrec_eval, 3 measures: median wall {ratio:.2f} (target <= 0.50),"
            f" CPU {cpu('ours3') / cpu('pytrec3'):.2f}"
        )
        print(
            f"ratio ours/pytrec_eval, 10 measures: median wall {ratio10:.2f},"
            f" CPU {cpu('ours10') / cpu('pytrec10'):.2f}"
        )
        if trec_eval:
            print(
                f"ratio ours/trec_eval -O2, 10 measures: median wall"
                f" {wall('ours10') / wall('trec_eval10'):.2f} (target <= 0.50),"
                f" CPU {cpu('ours10') / cpu('trec_eval10'):.2f}"
            )
        print(
            f"ten measures / three: median wall {growth:.2f} (target <= 1.50),"
            f" CPU {cpu('ours10') / cpu('ours3'):.2f}"
        )
        print(
            f"targets: wall {'met' if ratio <= 0.5 else 'MISSED'},"
            f" ten/three {'met' if growth <= 1.5 else 'MISSED'},"
            f" peak {'met' if peak < 300 else 'MISSED'} ({peak:.0f} MB, target < 300 MB)"
        )


if __name__ == "__main__":
    main()
