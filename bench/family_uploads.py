"""Upload a 100,000-item classification run, a regression run of the same size and a
10,000-segment generation run with two references (BLEU and chrF) through the API of one
gunicorn worker: the whole request's wall time and the worker's peak memory; then the same
generation runs scored with TER alone, whose cost (time and memory) is printed beside them.

Each task is hosted from a generated definition; the first upload of a worker also parses the
gold (cold), the second (another run, for generation: other outputs) is warm. Target: under 2 s per request, peak under 300 MB (TER is
reported, not targeted).

    .venv/bin/python -m bench.family_uploads [--items 100000] [--segments 10000]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import tempfile
import time
from pathlib import Path

from bench._common import Instance, gunicorn, peak_rss_mb, worker_pids

LABELS = ["positive", "negative", "neutral"]
CLASSIFICATION = """\
slug = "bench-classification"
title = "Benchmark classification"
family = "classification"
official_measure = "macro-F1"
measures = ["macro-F1", "Acc", "macro-F1[positive,negative]", "micro-F1", "weighted-F1", "MCC", "kappa"]
labels = ["positive", "negative", "neutral"]

[runs]
slots = ["primary", "contrastive1"]

[[subtasks]]
slug = "main"
title = "Main"

[[subtasks.sets]]
slug = "test"
gold = "gold.tsv"
"""
REGRESSION = """\
slug = "bench-regression"
title = "Benchmark regression"
family = "regression"
official_measure = "Spearman"
measures = ["Spearman", "Pearson", "Kendall", "MSE", "MAE", "RMSE"]

[runs]
slots = ["primary", "contrastive1"]

[[subtasks]]
slug = "main"
title = "Main"

[[subtasks.sets]]
slug = "test"
gold = "gold.tsv"
"""


GENERATION = """\
slug = "bench-{slug}"
title = "Benchmark generation"
family = "generation"
official_measure = "{official}"
measures = [{measures}]

[runs]
slots = ["primary", "contrastive1"]

[[subtasks]]
slug = "main"
title = "Main"

[[subtasks.sets]]
slug = "test"
source = "source.txt"
references = ["ref1.txt", "ref2.txt"]
target_language = "xx"
"""


def write_generation(folder: Path, segments: int, measures: tuple[str, ...]) -> tuple[Path, Path]:
    """Write a generation task asking for ``measures``, its files and two different runs."""
    from bench.generation_scoring import corpus, noisy

    folder.mkdir(parents=True)
    hypotheses, (ref1, ref2) = corpus(segments)
    listed = ", ".join(f'"{m}"' for m in measures)
    slug = "generation-ter" if measures == ("TER",) else "generation"
    (folder / "task.toml").write_text(
        GENERATION.format(slug=slug, official=measures[0], measures=listed)
    )
    for name, lines in (("source.txt", ref2), ("ref1.txt", ref1), ("ref2.txt", ref2)):
        (folder / name).write_text("".join(f"{line}\n" for line in lines))
    path = folder / "run.txt"
    path.write_text("".join(f"{line}\n" for line in hypotheses))
    # The second upload is another system's output: no tokenization of the first is reused.
    rng = random.Random(29)
    other = [" ".join(noisy(rng, line[:-1].split())) + "." for line in ref1]
    second = folder / "run2.txt"
    second.write_text("".join(f"{line}\n" for line in other))
    return path, second


def write_task(folder: Path, family: str, items: int, seed: int = 3) -> tuple[Path, Path]:
    """Write a definition, its gold and a run of ``items`` items; return its path twice."""
    rng = random.Random(seed)
    folder.mkdir(parents=True)
    ids = [f"item-{i:07d}" for i in range(items)]
    if family == "classification":
        (folder / "task.toml").write_text(CLASSIFICATION)
        gold = [rng.choice(LABELS) for _ in ids]
        run = [g if rng.random() < 0.7 else rng.choice(LABELS) for g in gold]
    else:
        (folder / "task.toml").write_text(REGRESSION)
        gold = [f"{rng.uniform(0, 5):.3f}" for _ in ids]
        run = [f"{float(g) + rng.gauss(0, 1):.4f}" for g in gold]
    (folder / "gold.tsv").write_text("".join(f"{i}\t{g}\n" for i, g in zip(ids, gold, strict=True)))
    order = list(range(items))
    rng.shuffle(order)  # runs come in any order
    path = folder / "run.tsv"
    path.write_text("".join(f"{ids[k]}\t{run[k]}\n" for k in order))
    return path, path


def open_phase(instance: Instance, task: str) -> None:
    """Open a phase on the task's subtask: a new subtask is closed until one is open."""
    instance.cli("phase", task, "main", "open", "--start", "2000-01-01T00:00:00Z")


def upload(url: str, token: str, task: str, run: Path, slot: str, out: Path) -> tuple[int, float]:
    """POST the run with curl; return (HTTP status, seconds)."""
    start = time.perf_counter()
    done = subprocess.run(
        [
            "curl", "-s", "-o", str(out), "-w", "%{http_code}",
            "-H", f"Authorization: Bearer {token}",
            "-F", f"slot={slot}", "-F", "name=bench-run", "-F", f"file=@{run}",
            f"{url}/api/v1/tasks/{task}/main/runs",
        ],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return int(done.stdout), time.perf_counter() - start


def main() -> None:
    """Host both tasks on a fresh instance and print each upload's figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--segments", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lb-bench-families-") as tmp:
        root = Path(tmp)
        instance = Instance(root / "instance")
        instance.init()
        runs = {}
        for family in ("classification", "regression"):
            runs[family] = write_task(root / family, family, args.items)
            instance.cli("add-task", str(root / family / "task.toml"))
            open_phase(instance, f"bench-{family}")
        for name, measures in (("generation", ("BLEU", "chrF")), ("generation-ter", ("TER",))):
            runs[name] = write_generation(root / name, args.segments, measures)
            instance.cli("add-task", str(root / name / "task.toml"))
            open_phase(instance, f"bench-{name}")
        token = instance.participant_token("Bench", "bench@example.org", "bench password")
        size = runs["classification"][0].stat().st_size / 1e6
        print(
            f"runs: {args.items:,} items (classification {size:.1f} MB, regression);"
            f" {args.segments:,} segments with 2 references (generation)"
        )
        with gunicorn(instance.env, workers=1) as (url, server):
            (worker,) = worker_pids(server.pid)
            worst = 0.0
            peak = 0.0
            for family, (first, second) in runs.items():
                if family == "generation-ter":
                    # The targets are for the requests above; TER's memory is its own figure.
                    peak = peak_rss_mb(worker)
                for attempt, slot, run in (
                    ("cold", "primary", first),
                    ("warm", "contrastive1", second),
                ):
                    out = root / f"{family}-{slot}.json"
                    status, seconds = upload(url, token, f"bench-{family}", run, slot, out)
                    if family != "generation-ter":
                        worst = max(worst, seconds)
                    official = json.loads(out.read_text() or "{}").get("official")
                    print(f"{family:<15} {attempt}: HTTP {status} in {seconds:.2f} s  {official}")
            with_ter = peak_rss_mb(worker)
        print(f"gunicorn worker peak RSS: {peak:.0f} MB (after TER as well: {with_ter:.0f} MB)")
        print(
            f"targets: every request < 2 s {'met' if worst < 2 else 'MISSED'} ({worst:.2f} s),"
            f" peak < 300 MB {'met' if peak < 300 else 'MISSED'}"
        )


if __name__ == "__main__":
    main()
