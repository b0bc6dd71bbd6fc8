"""Serve a results page of 300 teams and 900 scored runs under load, against a static file.

A fresh instance (SQLite) gets 300 teams with 3 runs each (primary, contrastive1, contrastive2)
in SemEval-2016 Task 3 subtask B (700 test pairs), stored and scored through the services, plus
the baselines. One gunicorn then serves both the live results page and, from a temporary static
folder, a copy of that page's HTML (same size); a load generator (wrk if installed, else a
thread pool) hits each in turn. Printed: requests per second of both, their ratio, p50/p99
latency. Target: the page at least half the static throughput, p99 under 50 ms.

    .venv/bin/python -m bench.results_page [--teams 300] [--workers N] [--threads 1]
        [--connections 10] [--seconds 10]

Workers and threads default to gunicorn.conf.py's: one sync worker per core.
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import re
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from bench._common import REPO, Instance, gunicorn, median, percentile, random_cqa_run

TASK, SUBTASK = "semeval2016-task3", "B"
GOLD_B = (
    REPO
    / "leaderboard/tasks/presets/semeval2016-task3/gold/test"
    / "SemEval2016-Task3-CQA-QL-test.xml.subtaskB.relevancy"
)
SLOTS = ("primary", "contrastive1", "contrastive2")
PAGE = f"/tasks/{TASK}/{SUBTASK}"
STATIC_NAME = "results-copy.html"

# Loaded by gunicorn from the temporary folder: the production app, with its static folder
# moved to where the copy of the page is.
WSGI = """\
from leaderboard.web import create_app

app = create_app()
app.static_folder = {static!r}
"""


@dataclass(frozen=True)
class Load:
    """What one load run measured."""

    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    errors: int

    @property
    def rps(self) -> float:
        """Return requests per second."""
        return self.requests / self.seconds if self.seconds else 0.0


def populate(instance: Instance, teams: int, seed: int = 3) -> int:
    """Create the teams and their runs through the services; return the number of runs."""
    from leaderboard.services.accounts import core as accounts
    from leaderboard.services.runs.core import Submission, Upload, prepare_run
    from leaderboard.services.tasks.catalog import resolve
    from leaderboard.unit_of_work import retried

    ext = instance.app().extensions["leaderboard"]
    rng = random.Random(seed)
    stored = 0
    with ext["sessionmaker"]() as session:
        target = resolve(session, TASK, SUBTASK)
        for t in range(teams):
            team = accounts.create_team(
                session, f"Team {t:03d} ({rng.choice('αβγ')})", actor="bench"
            )
            for slot in SLOTS:
                sub = Submission(
                    target=target,
                    slot=slot,
                    upload=Upload.from_bytes(
                        {"file": random_cqa_run(GOLD_B, rng)}, {"file": "run.txt"}
                    ),
                    name=f"sys-{t}-{slot}",
                    description="synthetic benchmark run",
                    via="cli",
                )
                retried(
                    session,
                    prepare_run(session, ext["store"], ext["settings"], sub, user=None, team=team),
                )
                stored += 1
    ext["engine"].dispose()
    return stored


_LATENCY = re.compile(r"^\s+(50|99)(?:\.0+)?%\s+([\d.]+)(us|ms|s)\s*$", re.MULTILINE)
_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def wrk_load(url: str, connections: int, seconds: int) -> Load:
    """Load ``url`` with wrk (2 threads) and read its summary."""
    threads = min(2, connections)
    out = subprocess.run(
        [
            "wrk",
            f"-t{threads}",
            f"-c{connections}",
            f"-d{seconds}s",
            "--timeout",
            "60s",
            "--latency",
            url,
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    latency = {p: float(v) * _UNITS[u] for p, v, u in _LATENCY.findall(out)}
    done = re.search(r"(\d+) requests in ([\d.]+)(ms|s|m)", out)
    if done is None or "50" not in latency or "99" not in latency:
        raise RuntimeError(f"unexpected wrk output:\n{out}")
    span = float(done.group(2)) * {"ms": 0.001, "s": 1.0, "m": 60.0}[done.group(3)]
    failed = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    errors = (int(failed.group(1)) if failed else 0) + (
        sum(map(int, socket.groups())) if socket else 0
    )
    return Load(int(done.group(1)), span, latency["50"], latency["99"], errors)


def thread_load(url: str, connections: int, seconds: int) -> Load:
    """Load ``url`` from ``connections`` threads, one request at a time each, for ``seconds``."""
    parts = urlsplit(url)
    deadline = time.monotonic() + seconds
    latencies: list[list[float]] = [[] for _ in range(connections)]
    errors = [0] * connections

    def worker(k: int) -> None:
        while time.monotonic() < deadline:
            start = time.perf_counter()
            conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
            try:
                conn.request("GET", parts.path)
                response = conn.getresponse()
                response.read()
                if response.status != 200:
                    errors[k] += 1
            except OSError:
                errors[k] += 1
            finally:
                conn.close()
            latencies[k].append((time.perf_counter() - start) * 1000)

    started = time.perf_counter()
    pool = [threading.Thread(target=worker, args=(k,)) for k in range(connections)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    span = time.perf_counter() - started
    flat = [x for xs in latencies for x in xs]
    return Load(len(flat), span, percentile(flat, 50), percentile(flat, 99), sum(errors))


def load(url: str, connections: int, seconds: int) -> Load:
    """Load ``url`` with wrk when it is installed, else with threads."""
    if shutil.which("wrk"):
        return wrk_load(url, connections, seconds)
    return thread_load(url, connections, seconds)


def fetch(url: str) -> bytes:
    """GET a URL; fail unless it answers 200."""
    with urllib.request.urlopen(url, timeout=60) as response:
        assert response.status == 200, response.status
        return bytes(response.read())


def main() -> None:
    """Build the instance, serve it, load page and static copy alternately, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--teams", type=int, default=300)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="threads per worker (gthread, with keep-alive; 1 = sync workers, a new connection per request)",
    )
    parser.add_argument("--connections", type=int, default=10)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--analysed",
        action="store_true",
        help="store a significance analysis first: the page then shows clusters and intervals",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lb-bench-page-") as tmp:
        root = Path(tmp)
        instance = Instance(root)
        instance.init()
        instance.cli("add-baselines", TASK, SUBTASK)
        start = time.perf_counter()
        runs = populate(instance, args.teams)
        print(
            f"stored and scored {runs} runs of {args.teams} teams in {time.perf_counter() - start:.0f} s"
        )
        if args.analysed:
            start = time.perf_counter()
            instance.cli("significance", TASK, SUBTASK, "--samples", "1000", "--format", "csv")
            print(
                f"analysed (1,000 samples, all pairs, every run's intervals) in {time.perf_counter() - start:.0f} s"
            )
        static = root / "static"
        static.mkdir()
        (root / "bench_wsgi.py").write_text(WSGI.format(static=str(static)))
        tool = "wrk" if shutil.which("wrk") else "a thread pool"
        with gunicorn(
            instance.env,
            workers=args.workers,
            threads=args.threads,
            app="bench_wsgi:app",
            extra=("--pythonpath", str(root)),
        ) as (base, _server):
            html = fetch(base + PAGE)
            rows = html.count(b"<tr")
            (static / STATIC_NAME).write_bytes(html)
            assert fetch(f"{base}/static/{STATIC_NAME}") == html
            print(f"page {PAGE}: {len(html) / 1e3:.0f} kB, {rows} table rows")
            print(
                f"gunicorn: {args.workers} workers x {args.threads} threads; load: {tool}, {args.connections}"
                f" connections, {args.seconds} s per run, {args.rounds} rounds alternating"
            )
            # Each worker builds the table once per revision of the set and then serves it from
            # its cache; warm every worker first so the figures show the steady state.
            for attempt in range(1, 6):
                warm = load(base + PAGE, max(args.connections, 2 * args.workers), 3)
                print(
                    f"warm-up {attempt}: {warm.rps:.0f} req/s, p99 {warm.p99_ms:.0f} ms (discarded)"
                )
                time.sleep(warm.p99_ms / 1000 + 1)
                if warm.p99_ms < 50:
                    break
            page: list[Load] = []
            copy: list[Load] = []
            for _ in range(args.rounds):
                page.append(load(base + PAGE, args.connections, args.seconds))
                # Requests the load generator abandoned at its deadline still occupy the
                # workers for up to one page latency: let them finish before the next run.
                time.sleep(page[-1].p99_ms / 1000 + 1)
                copy.append(load(f"{base}/static/{STATIC_NAME}", args.connections, args.seconds))
                time.sleep(1)
        for label, runs_ in (("results page", page), ("static copy", copy)):
            rps = median([r.rps for r in runs_])
            print(
                f"{label:<13} {rps:8.1f} req/s   p50 {median([r.p50_ms for r in runs_]):7.1f} ms"
                f"   p99 {max(r.p99_ms for r in runs_):7.1f} ms   errors {sum(r.errors for r in runs_)}"
            )
        ratio = median([r.rps for r in page]) / median([r.rps for r in copy])
        p99 = max(r.p99_ms for r in page)
        print(f"throughput ratio page/static: {ratio:.3f}  (target >= 0.50)")
        print(
            f"targets: throughput {'met' if ratio >= 0.5 else 'MISSED'},"
            f" page p99 {'met' if p99 < 50 else 'MISSED'} ({p99:.1f} ms, target < 50 ms)"
        )


if __name__ == "__main__":
    main()
