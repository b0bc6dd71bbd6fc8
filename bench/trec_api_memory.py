"""Upload a 2,000-query, 1,000,000-line TREC CAR run through the API of a gunicorn worker and
print the worker's peak memory and the request's wall time.

    .venv/bin/python -m bench.trec_api_memory [--queries 2000] [--per-query 500]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench._common import REPO, Instance, gunicorn, peak_rss_mb, worker_pids

TOPICS = (
    REPO
    / "leaderboard"
    / "tasks"
    / "presets"
    / "trec-car-2017"
    / "topics.car17v1.5.benchmarkY1test.txt"
)


@dataclass
class Result:
    """What one upload measured."""

    lines: int
    file_mb: float
    status: int
    seconds: float
    worker_peak_mb: float
    body: dict[str, object]


def write_run(path: Path, queries: int, per_query: int, seed: int = 1) -> int:
    """Write a run of ``per_query`` random paragraphs for each of the first ``queries`` topics."""
    rng = random.Random(seed)
    topics = TOPICS.read_text().split()[:queries]
    with path.open("w") as out:
        for topic in topics:
            out.write(
                "".join(
                    f"{topic} Q0 {rng.getrandbits(160):040x} {rank} {1000 - rank * 0.5:.3f} bench-run\n"
                    for rank in range(1, per_query + 1)
                )
            )
    return len(topics) * per_query


def measure(queries: int = 2000, per_query: int = 500, workdir: Path | None = None) -> Result:
    """Start a one-worker gunicorn on a fresh instance, upload the run, read the worker's peak RSS."""
    tmp = Path(workdir or tempfile.mkdtemp(prefix="lb-trec-mem-"))
    instance = Instance(tmp)
    instance.init()
    instance.cli("create-team", "Bench")
    instance.cli(
        "create-user",
        "bench@example.org",
        "--role",
        "participant",
        "--team",
        "Bench",
        "--password",
        "bench password",
    )
    token = instance.cli("token", "bench@example.org").strip()
    run = tmp / "run.txt"
    lines = write_run(run, queries, per_query)
    with gunicorn(instance.env, workers=1) as (url, server):
        (worker,) = worker_pids(server.pid)
        start = time.perf_counter()
        out = subprocess.run(
            [
                "curl", "-s", "-o", str(tmp / "response.json"), "-w", "%{http_code}",
                "-H", f"Authorization: Bearer {token}",
                "-F", "slot=primary", "-F", "name=bench-run", "-F", f"file=@{run}",
                f"{url}/api/v1/tasks/trec-car-2017/passage/runs",
            ],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        seconds = time.perf_counter() - start
        peak = peak_rss_mb(worker)
    body = json.loads((tmp / "response.json").read_text() or "{}")
    return Result(lines, run.stat().st_size / 1e6, int(out.stdout), seconds, peak, body)


def main() -> None:
    """Print the figures of one measurement."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--per-query", type=int, default=500)
    args = parser.parse_args()
    r = measure(args.queries, args.per_query)
    print(f"run: {r.lines:,} lines, {r.file_mb:.1f} MB")
    print(f"HTTP {r.status} in {r.seconds:.2f} s (upload, validation, scoring, storage)")
    print(f"gunicorn worker peak RSS: {r.worker_peak_mb:.0f} MB")
    print(f"scores: {r.body.get('official')}")


if __name__ == "__main__":
    main()
