"""Serve runs' per-query pages, their charts and numbers: the 29 SemEval-2016 Task 3 A runs.

A fresh instance (SQLite) imports the historical subtask A runs (327 questions each) from the
shared data folder beside the repository, opens a phase that shows per-query diagnostics to
everyone, and starts gunicorn (as gunicorn.conf.py: one sync worker per core) and
``leaderboard worker`` (which summarizes the set and draws each run's page chart). Once every
run's page shows its chart, every PDF is asked for (the worker draws them), then each round
fetches every run's page, SVG, PDF and CSV once, in turn from a few threads. Printed: the cold
requests (first page and first PDF ask) and, per kind, p50/p95/max over the warm rounds.
Targets: the page p95 < 50 ms, a chart or its CSV p95 < 20 ms.

    .venv/bin/python -m bench.diagnostics [--rounds 5] [--threads 1]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from bench._common import LEADERBOARD, REPO, Instance, gunicorn, median, percentile

TASK, SUBTASK = "semeval2016-task3", "A"
RUNS = REPO.parent / "shared" / "data" / TASK / "submissions"
KINDS = ("page", "svg", "pdf", "csv")


def fetch(url: str) -> tuple[int, float]:
    """Return a GET's status and wall time in seconds."""
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=60) as resp:
            resp.read()
            status = resp.status
    except urllib.error.HTTPError as exc:
        exc.read()
        status = exc.code
    return status, time.perf_counter() - start


def path_of(run_id: int, kind: str) -> str:
    """Return the path of a run's page or file."""
    return f"/runs/{run_id}/queries" + ("" if kind == "page" else f".{kind}")


def wait_all(base: str, run_ids: list[int], kind: str, seconds: float = 300) -> float:
    """Ask for every run's ``kind`` until all answer 200; return how long that took."""
    start = time.perf_counter()
    pending = set(run_ids)
    while pending and time.perf_counter() - start < seconds:
        for run_id in sorted(pending):
            status, _ = fetch(base + path_of(run_id, kind))
            if status == 200 and (kind != "page" or _page_ready(base, run_id)):
                pending.discard(run_id)
        if pending:
            time.sleep(0.5)
    if pending:
        raise RuntimeError(f"{kind} of runs {sorted(pending)} not ready within {seconds} s")
    return time.perf_counter() - start


def _page_ready(base: str, run_id: int) -> bool:
    with urllib.request.urlopen(base + path_of(run_id, "page"), timeout=60) as resp:
        html = resp.read().decode()
    return "summary-pending" not in html and "chart-pending" not in html


def main() -> None:
    """Build the instance, serve it, warm it, and print the latency of each kind."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    if not RUNS.is_dir():
        raise SystemExit(f"the historical runs are not at {RUNS} (the shared data folder)")
    with tempfile.TemporaryDirectory(prefix="bench-diagnostics-") as tmp:
        instance = Instance(Path(tmp))
        instance.init()
        out = subprocess.run(
            [LEADERBOARD, "import-runs", TASK, SUBTASK, str(RUNS)],
            env=instance.env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        run_ids = sorted(
            int(line.split(" as run ")[1].split(":")[0])
            for line in out.stdout.splitlines()
            if " as run " in line
        )
        instance.cli("phase", TASK, SUBTASK, "bench", "--start", "2000-01-01T00:00:00Z",
                     "--diagnostics", "public")  # fmt: skip
        print(f"{len(run_ids)} runs of {TASK} {SUBTASK} imported")
        worker = subprocess.Popen(
            [LEADERBOARD, "worker", "--loglevel", "warning"],
            env=instance.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            with gunicorn(instance.env, workers=os.cpu_count() or 1) as (base, _server):
                first_page = fetch(base + path_of(run_ids[0], "page"))
                ready = wait_all(base, run_ids, "page")
                print(f"first page request: HTTP {first_page[0]} in {first_page[1] * 1000:.1f} ms;"
                      f" every page summarized and charted after {ready:.1f} s")  # fmt: skip
                first_pdf = fetch(base + path_of(run_ids[0], "pdf"))
                drawn = wait_all(base, run_ids, "pdf")
                print(f"first PDF request: HTTP {first_pdf[0]} in {first_pdf[1] * 1000:.1f} ms;"
                      f" every PDF drawn after {drawn:.1f} s")  # fmt: skip
                times: dict[str, list[float]] = {k: [] for k in KINDS}
                lock = threading.Lock()
                for _ in range(args.rounds):
                    urls = [(k, base + path_of(r, k)) for r in run_ids for k in KINDS]

                    def work(share: list[tuple[str, str]]) -> None:
                        for kind, url in share:
                            status, seconds = fetch(url)
                            if status != 200:
                                raise RuntimeError(f"{url}: HTTP {status}")
                            with lock:
                                times[kind].append(seconds)

                    threads = [
                        threading.Thread(target=work, args=(urls[i :: args.threads],))
                        for i in range(args.threads)
                    ]
                    for t in threads:
                        t.start()
                    for t in threads:
                        t.join()
        finally:
            worker.terminate()
            worker.wait(30)
    print(f"\n{args.rounds} warm rounds x {len(run_ids)} runs, {args.threads} threads")
    print(f"{'kind':<6} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}  target")
    for kind in KINDS:
        values = [t * 1000 for t in times[kind]]
        target = "p95 < 50 ms" if kind == "page" else "p95 < 20 ms"
        print(f"{kind:<6} {median(values):8.1f} {percentile(values, 95):8.1f} "
              f"{max(values):8.1f}  {target}")  # fmt: skip


if __name__ == "__main__":
    main()
