"""50 teams upload a 7,000-line CQA run at the same moment, through gunicorn on PostgreSQL.

A fresh PostgreSQL database gets the presets, a test phase of SemEval-2016 Task 3 subtask C
closing in an hour, and 50 teams per round with one participant and API token each. Each team's run is
a valid subtask C test run (all 7,000 gold pairs, its own random scores). Gunicorn serves the
app as gunicorn.conf.py does (one sync worker per core); 50 threads wait at a barrier and then
each POSTs its team's run to the API. The burst is fired in several rounds, each by 50 other
teams, because a shared 2-core machine runs some rounds markedly slower than others. Printed
per round: how many uploads succeeded (201), p50/p95/max latency and the CPU time of the
workers, PostgreSQL and the load generator; then the workers' peak RSS and a check that the
database holds exactly one active primary run per team. Target: all succeed, p95 < 250 ms
(the median of the rounds' p95).

With ``--split F`` the subtask's test set declares a public/private split (``public = {
fraction = F, seed = 1234 }``), so every upload is scored on all units and on each part and
stores three score rows per measure; the check at the end counts them per run.

    .venv/bin/python -m bench.deadline_burst [--teams 50] [--rounds 3] [--workers N]
                                             [--threads 1] [--server URL] [--split F]

The server defaults to $LEADERBOARD_BENCH_PG, else postgres@127.0.0.1:5432 (trust auth).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import selectors
import shutil
import socket
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

from sqlalchemy.engine import make_url

from bench._common import (
    REPO,
    Instance,
    cpu_seconds,
    gunicorn,
    median,
    peak_rss_mb,
    percentile,
    random_cqa_run,
    worker_pids,
)

TASK, SUBTASK = "semeval2016-task3", "C"
PRESET = REPO / "leaderboard/tasks/presets/semeval2016-task3"
GOLD_C = PRESET / "gold/test" / "SemEval2016-Task3-CQA-QL-test.xml.subtaskC.relevancy"
SPLIT_SEED = 1234
SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
WARM = ("contrastive1", "contrastive2")
#: Issue 22: about 10 ms of work per 7,000-line upload, so 50 at once on two cores in 250 ms.
TARGET_MS = 250


@dataclass(frozen=True)
class Upload:
    """One upload's outcome."""

    status: int
    seconds: float
    body: str


def multipart(fields: dict[str, str], filename: str, content: bytes) -> tuple[bytes, str]:
    """Return (body, content type) of a multipart form with the fields and one file ``file``."""
    boundary = secrets.token_hex(16)
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
        for k, v in fields.items()
    ]
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
        "Content-Type: text/plain\r\n\r\n".encode()
        + content
        + b"\r\n"
    )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def database(server: str, name: str, create: bool) -> None:
    """Create or drop a database on the server (connecting to its maintenance database)."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.pool import NullPool

    engine = create_engine(server, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        if create:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        else:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    engine.dispose()


def split_definition(folder: Path, fraction: float) -> Path:
    """Copy the preset's folder into ``folder`` with subtask C's test set split; return its file.

    The presets ship in the package and stay untouched; ``add-task`` on the copy updates the
    installed task (same slug) with the split.
    """
    copy = folder / "definition"
    shutil.copytree(PRESET, copy)
    path = copy / "task.toml"
    lines = path.read_text().splitlines(keepends=True)
    # Subtask C's test set is the one inline table naming the gold file the runs are built from.
    gold = f'gold = "{GOLD_C.relative_to(PRESET).as_posix()}"'
    found = [k for k, line in enumerate(lines) if gold in line and 'slug = "test"' in line]
    if len(found) != 1:
        raise SystemExit(f"{path}: expected one set line naming {gold}, found {len(found)}")
    line = lines[found[0]].rstrip()
    head, brace, tail = line.rpartition("}")
    if not brace:
        raise SystemExit(f"{path}: the set line does not end with an inline table: {line}")
    split = f"public = {{ fraction = {fraction}, seed = {SPLIT_SEED} }}"
    lines[found[0]] = f"{head.rstrip()}, {split} {brace}{tail}\n"
    path.write_text("".join(lines))
    return path


def prepare(instance: Instance, teams: int) -> list[str]:
    """Open the phase and create the teams, participants and tokens; return the tokens.

    The last token is the warm-up team's.
    """
    end = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    # The bench runs its own campaign: the preset's open post-evaluation phase goes first.
    instance.cli("phase", TASK, SUBTASK, "post-evaluation", "--delete")
    instance.cli("phase", TASK, SUBTASK, "test", "--end", end)
    from leaderboard.services.accounts import core as accounts
    from leaderboard.unit_of_work import unit_of

    ext = instance.app().extensions["leaderboard"]
    tokens = []
    with ext["sessionmaker"]() as session, unit_of(session):
        for t in range(teams + 1):
            name, email = f"Squad {t:02d}", f"team{t:02d}@example.org"
            accounts.create_team(session, name, actor="bench")
            accounts.create_user(
                session, email, role="participant", team=name, password=None, actor="bench"
            )
            tokens.append(accounts.issue_token(session, email, actor="bench"))
    ext["engine"].dispose()
    return tokens


def burst(
    url: str, tokens: list[str], runs: list[bytes], slots: tuple[str, ...] = ("primary",)
) -> list[Upload]:
    """POST every run at once and return the outcomes, in upload order.

    Upload k goes with token k into slot k modulo the slots given. The load generator shares
    the server's cores, so it spends as little CPU as it can: whole requests are built first,
    then one thread opens every connection at the same moment and drives them all with a
    selector (non-blocking sends and reads, no thread per upload).
    """
    parts = urlsplit(url)
    path = f"/api/v1/tasks/{TASK}/{SUBTASK}/runs"
    requests = []
    for k, run in enumerate(runs[: len(tokens)]):
        body, content_type = multipart(
            {"slot": slots[k % len(slots)], "name": f"burst-{k}", "description": "burst"},
            f"subtask_{SUBTASK}_primary.txt",
            run,
        )
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
            f"Authorization: Bearer {tokens[k]}\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        )
        requests.append(memoryview(head.encode() + body))
    selector = selectors.DefaultSelector()
    sent = [0] * len(requests)
    received: list[list[bytes]] = [[] for _ in requests]
    done: dict[int, float] = {}
    errors: dict[int, str] = {}
    start = time.perf_counter()
    for k in range(len(requests)):
        conn = socket.socket()
        conn.setblocking(False)
        conn.connect_ex((parts.hostname or "127.0.0.1", parts.port or 80))
        selector.register(conn, selectors.EVENT_WRITE, k)
    while len(done) < len(requests):
        for key, events in selector.select(timeout=300):
            conn, k = key.fileobj, key.data
            assert isinstance(conn, socket.socket)
            try:
                if events & selectors.EVENT_WRITE:
                    sent[k] += conn.send(requests[k][sent[k] :])
                    if sent[k] == len(requests[k]):
                        selector.modify(conn, selectors.EVENT_READ, k)
                    continue
                chunk = conn.recv(65536)
                if chunk:
                    received[k].append(chunk)
                    continue
            except BlockingIOError:
                continue
            except OSError as exc:
                errors[k] = repr(exc)
            done[k] = time.perf_counter() - start
            selector.unregister(conn)
            conn.close()
    selector.close()
    results = []
    for k in range(len(requests)):
        head, _, text = b"".join(received[k]).partition(b"\r\n\r\n")
        try:
            status = int(head.split(b" ", 2)[1])
        except (IndexError, ValueError):
            status, text = 0, errors.get(k, "no HTTP response").encode()
        results.append(Upload(status, done[k], text.decode("utf-8", "replace")))
    return results


def postgres_cpu() -> float:
    """Return the CPU time so far of this machine's PostgreSQL processes (0 if none is local)."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue  # the process ended meanwhile
        if "(postgres)" in text or "(postmaster)" in text:
            total += cpu_seconds(int(stat.parent.name))
    return total


def active_primary_runs(database_url: str) -> int:
    """Count the active primary runs of the subtask's test set."""
    from sqlalchemy import create_engine, text

    engine = create_engine(database_url)
    with engine.connect() as conn:
        count = conn.execute(
            text(
                "SELECT count(*) FROM runs r JOIN eval_sets e ON r.eval_set_id = e.id"
                " JOIN subtasks s ON e.subtask_id = s.id JOIN tasks t ON s.task_id = t.id"
                " WHERE t.slug = :task AND s.slug = :subtask AND e.slug = 'test'"
                " AND r.kind = 'run' AND r.slot = 'primary' AND r.status = 'active'"
            ),
            {"task": TASK, "subtask": SUBTASK},
        ).scalar_one()
    engine.dispose()
    return int(count)


def score_rows_per_part(database_url: str) -> dict[tuple[str, int], int]:
    """Count the active primary runs of the set by part and number of score rows in that part.

    Without a split every run has its rows in "all" only; with one, as many in each part.
    """
    from sqlalchemy import create_engine, text

    engine = create_engine(database_url)
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT part, n, count(*) FROM (SELECT sc.run_id, sc.part, count(*) AS n"
                " FROM scores sc JOIN runs r ON sc.run_id = r.id"
                " JOIN eval_sets e ON r.eval_set_id = e.id"
                " JOIN subtasks s ON e.subtask_id = s.id JOIN tasks t ON s.task_id = t.id"
                " WHERE t.slug = :task AND s.slug = :subtask AND e.slug = 'test'"
                " AND r.kind = 'run' AND r.slot = 'primary' AND r.status = 'active'"
                " GROUP BY sc.run_id, sc.part) per_run GROUP BY part, n ORDER BY part, n"
            ),
            {"task": TASK, "subtask": SUBTASK},
        ).all()
    engine.dispose()
    return {(str(part), int(n)): int(runs) for part, n, runs in rows}


@dataclass(frozen=True)
class Round:
    """One burst's outcome and what it cost."""

    results: list[Upload]
    worker_cpu: float
    postgres_cpu: float
    client_cpu: float

    @property
    def ok(self) -> int:
        """Return how many uploads got HTTP 201."""
        return sum(r.status == 201 for r in self.results)

    def latencies(self) -> list[float]:
        """Return the latencies in milliseconds."""
        return [r.seconds * 1000 for r in self.results]


def fire(base: str, workers: list[int], tokens: list[str], runs: list[bytes]) -> Round:
    """Fire one burst and measure the CPU time it cost the workers, PostgreSQL and us."""
    cpu_before, pg_before = sum(map(cpu_seconds, workers)), postgres_cpu()
    client_before = time.process_time()
    results = burst(base, tokens, runs)
    return Round(
        results,
        sum(map(cpu_seconds, workers)) - cpu_before,
        postgres_cpu() - pg_before,
        time.process_time() - client_before,
    )


def report(k: int, r: Round) -> None:
    """Print one round's figures."""
    ms = r.latencies()
    n = len(r.results)
    print(
        f"round {k}: {r.ok} of {n} succeeded; p50 {median(ms):.0f} ms, p95"
        f" {percentile(ms, 95):.0f} ms, max {max(ms):.0f} ms; CPU: workers {r.worker_cpu:.2f} s"
        f" ({r.worker_cpu / n * 1000:.0f} ms per upload), PostgreSQL {r.postgres_cpu:.2f} s,"
        f" load generator {r.client_cpu:.2f} s"
    )
    for u in r.results:
        if u.status != 201:
            print(f"  HTTP {u.status}: {u.body[:200]}")


def main() -> None:
    """Set up the database and teams, serve, fire the bursts, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--teams", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3, help="bursts, each by its own teams")
    # The defaults are those of gunicorn.conf.py: one sync worker per core.
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--server", default=os.environ.get("LEADERBOARD_BENCH_PG", SERVER))
    parser.add_argument(
        "--split",
        type=float,
        metavar="FRACTION",
        help="declare a public/private split of the test set (public fraction, seed 1234)",
    )
    args = parser.parse_args()
    name = f"lb_bench_burst_{secrets.token_hex(4)}"
    database_url = make_url(args.server).set(database=name).render_as_string(hide_password=False)
    database(args.server, name, create=True)
    try:
        with tempfile.TemporaryDirectory(prefix="lb-bench-burst-") as tmp:
            instance = Instance(Path(tmp), database_url)
            instance.init()
            if args.split is not None:
                instance.cli("add-task", str(split_definition(Path(tmp), args.split)))
            *tokens, warm_token = prepare(instance, args.teams * args.rounds)
            rng = random.Random(5)
            runs = [random_cqa_run(GOLD_C, rng) for _ in range(args.teams)]
            lines = runs[0].count(b"\n")
            kind = "sync workers" if args.threads == 1 else f"workers × {args.threads} threads"
            split = "no split" if args.split is None else f"split: public {args.split}"
            print(
                f"{args.rounds} rounds of {args.teams} teams, each team uploading a"
                f" {lines:,}-line run ({len(runs[0]) / 1e3:.0f} kB) to {TASK} {SUBTASK} at"
                f" once ({split}); gunicorn: {args.workers} {kind}; database: PostgreSQL ({name})"
            )
            rounds = []
            with gunicorn(instance.env, workers=args.workers, threads=args.threads) as (
                base,
                server,
            ):
                # A server meets a deadline warm: a warm-up team's concurrent uploads make each
                # worker load the code and gold first (first uploads take seconds).
                for _ in range(2):
                    n = args.workers * args.threads
                    warm = burst(base, [warm_token] * n, runs[:n], WARM)
                    assert all(w.status == 201 for w in warm), [w.body[:200] for w in warm]
                workers = worker_pids(server.pid)
                for k in range(args.rounds):
                    team_tokens = tokens[k * args.teams : (k + 1) * args.teams]
                    rounds.append(fire(base, workers, team_tokens, runs))
                    report(k + 1, rounds[-1])
                worker_peak = max(map(peak_rss_mb, workers))
            first = next((u for u in rounds[0].results if u.status == 201), None)
            if first is not None:
                print(f"a response's scores: {json.dumps(json.loads(first.body)['scores'])[:150]}")
            print(f"largest worker peak RSS: {worker_peak:.0f} MB")
            active = active_primary_runs(database_url)
            succeeded = sum(r.ok for r in rounds)
            print(f"active primary runs in the database: {active} (expected {succeeded})")
            per_part = score_rows_per_part(database_url)
            print(
                "score rows per run, by part: "
                + ", ".join(f"{part} {n} ({runs} runs)" for (part, n), runs in per_part.items())
            )
            parts = {part for part, _ in per_part}
            expected = {"all"} if args.split is None else {"all", "public", "private"}
            counts = {n for _, n in per_part}
            stored = (
                parts == expected
                and len(counts) == 1
                and all(runs == active for runs in per_part.values())
            )
            print(
                f"every run stores {len(expected)} part(s) with the same measures:"
                f" {'yes' if stored else 'NO'}"
            )
            p95s = sorted(percentile(r.latencies(), 95) for r in rounds)
            p95 = median(p95s)
            everyone = succeeded == args.teams * args.rounds and stored
            print(
                f"targets: all succeed {'met' if everyone else 'MISSED'};"
                f" p95 (median of the rounds' {', '.join(f'{x:.0f}' for x in p95s)} ms)"
                f" {p95:.0f} ms {'met' if p95 < TARGET_MS else 'MISSED'} (target < {TARGET_MS} ms)"
            )
    finally:
        database(args.server, name, create=False)


if __name__ == "__main__":
    main()
