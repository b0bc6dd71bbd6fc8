"""Time the command line: its help, a database command, and the historical runs imported one by one.

Three figures, each over N rounds (whole processes, median of the rounds):

- ``leaderboard --help`` beside ``python -c "import flask, sqlalchemy"``, alternating, and their
  ratio (target: within 2x);
- ``leaderboard table semeval2016-task3 A --format json`` on a fresh ``init`` (target < 1 s);
- the 95 historical SemEval-2016 Task 3 runs (``../shared/data/semeval2016-task3/submissions``)
  imported by ``leaderboard import-runs TASK SUBTASK --team TEAM --slot SLOT --lenient FILE``,
  one process per run, two at a time, into a fresh instance (target < 60 s); every run must be
  stored. ``--lenient`` as for any historical import: two runs of subtask D miss a question the
  official scorer skipped, and a strict import (``--strict``) refuses them.

Wall times are printed beside CPU times (user + system, from ``wait4``): the machine may be shared.

    .venv/bin/python -m bench.cli_speed [--rounds 5] [--jobs 2] [--parts help,table,import]
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from bench._common import LEADERBOARD, REPO, Instance, median

SUBMISSIONS = REPO.parent / "shared" / "data" / "semeval2016-task3" / "submissions"
TASK = "semeval2016-task3"
RUN_NAME = re.compile(r"subtask_([A-Z])_(primary|contrastive1|contrastive2)\.txt")
PARTS = ("help", "table", "import")
HELP_TARGET = 2.0
TABLE_TARGET = 1.0
IMPORT_TARGET = 60.0


@dataclass(frozen=True)
class Finished:
    """One child process: its exit code, wall and CPU times, and its output."""

    code: int
    seconds: float
    cpu_seconds: float
    stdout: str


def run(argv: Sequence[str], env: Mapping[str, str] | None = None) -> Finished:
    """Run a command to completion, whatever its exit code; return its times and output."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        list(argv),
        env=dict(env) if env is not None else None,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Finished(proc.returncode, seconds, usage.ru_utime + usage.ru_stime, out)


def checked(argv: Sequence[str], env: Mapping[str, str] | None = None) -> Finished:
    """Run a command that must succeed; stop the benchmark with its output if it fails."""
    done = run(argv, env)
    if done.code != 0:
        sys.exit(f"{' '.join(argv)} exited with {done.code}:\n{done.stdout}")
    return done


def historical_runs() -> list[tuple[str, str, str, Path]]:
    """Return (subtask, team, slot, file) of every historical run, in a fixed order."""
    if not SUBMISSIONS.is_dir():
        sys.exit(
            f"The historical runs are missing: expected them in {SUBMISSIONS}"
            " (the shared data folder beside the repository)."
        )
    found = []
    for path in sorted(SUBMISSIONS.glob("*/*.txt")):
        match = RUN_NAME.fullmatch(path.name)
        if match:
            found.append((match[1], path.parent.name, match[2], path))
    return found


def line(label: str, walls: Sequence[float], cpus: Sequence[float]) -> str:
    """Return one figure: median wall with its range, and median CPU."""
    return (
        f"{label:<44} median {median(walls):6.2f} s (min {min(walls):.2f}, max {max(walls):.2f})"
        f"  CPU {median(cpus):6.2f} s"
    )


def time_help(rounds: int) -> None:
    """Time ``import flask, sqlalchemy`` and ``leaderboard --help`` alternately; print the ratio."""
    commands = {
        "python -c 'import flask, sqlalchemy'": [sys.executable, "-c", "import flask, sqlalchemy"],
        "leaderboard --help": [LEADERBOARD, "--help"],
    }
    times: dict[str, list[Finished]] = {name: [] for name in commands}
    for i in range(rounds):
        # Rotate which command goes first so none always meets a warm or cold cache.
        order = list(commands)[i % 2 :] + list(commands)[: i % 2]
        for name in order:
            times[name].append(checked(commands[name]))
    for name, done in times.items():
        print(line(name, [d.seconds for d in done], [d.cpu_seconds for d in done]))
    base, ours = (median([d.seconds for d in times[n]]) for n in commands)
    cpu_base, cpu_ours = (median([d.cpu_seconds for d in times[n]]) for n in commands)
    ratio = ours / base
    print(
        f"ratio help / import flask, sqlalchemy: median wall {ratio:.2f}"
        f" (target <= {HELP_TARGET:.0f}: {'met' if ratio <= HELP_TARGET else 'MISSED'}),"
        f" CPU {cpu_ours / cpu_base:.2f}"
    )


def time_table(rounds: int) -> None:
    """Time the table command on a fresh instance each round (its first command after init)."""
    walls, cpus = [], []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory(prefix="lb-bench-cli-") as tmp:
            instance = Instance(Path(tmp))
            instance.init()
            done = checked([LEADERBOARD, "table", TASK, "A", "--format", "json"], instance.env)
            walls.append(done.seconds)
            cpus.append(done.cpu_seconds)
    print(line("leaderboard table semeval2016-task3 A (json)", walls, cpus))
    wall = median(walls)
    print(
        f"table: median wall {wall:.2f} s"
        f" (target < {TABLE_TARGET:.0f} s: {'met' if wall < TABLE_TARGET else 'MISSED'})"
    )


def import_all(
    instance: Instance, runs: Sequence[tuple[str, str, str, Path]], jobs: int, strict: bool
) -> tuple[float, float]:
    """Import every run, ``jobs`` processes at a time; print the round; return (wall, CPU)."""

    def one(entry: tuple[str, str, str, Path]) -> Finished:
        subtask, team, slot, path = entry
        argv = [LEADERBOARD, "import-runs", TASK, subtask, "--team", team, "--slot", slot]
        return run([*argv, *(() if strict else ("--lenient",)), str(path)], instance.env)

    start = time.perf_counter()
    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(one, runs))
    wall = time.perf_counter() - start
    cpu = sum(d.cpu_seconds for d in results)
    outcomes: Counter[str] = Counter()
    for (subtask, team, slot, _), done in zip(runs, results, strict=True):
        outcomes[f"exit {done.code}"] += 1
        outcomes["imported"] += len(re.findall(r"^imported ", done.stdout, re.M))
        outcomes["rejected"] += len(re.findall(r"^REJECTED ", done.stdout, re.M))
        outcomes["warned"] += "    warning: " in done.stdout
        outcomes["tolerated"] += "    tolerated: " in done.stdout
        outcomes[".score matches"] += ".score: matches" in done.stdout
        outcomes[".score differs"] += ".score: DIFFERS" in done.stdout
        if done.code != 0:
            print(f"    {subtask} {team} {slot}: exit {done.code}\n{done.stdout}")
    database = instance.database_url.removeprefix("sqlite:///")
    with sqlite3.connect(database) as db:
        (stored,) = db.execute("SELECT count(*) FROM runs WHERE team_id IS NOT NULL").fetchone()
    counts = ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items()))
    verdict = "all stored" if stored == len(runs) else f"ONLY {stored} of {len(runs)} STORED"
    print(
        f"  round: wall {wall:6.2f} s, CPU {cpu:6.2f} s; {stored} runs stored ({verdict}); {counts}"
    )
    return wall, cpu


def time_imports(rounds: int, jobs: int, strict: bool) -> None:
    """Import the historical runs into a fresh instance each round; print the medians."""
    runs = historical_runs()
    subtasks = Counter(subtask for subtask, *_ in runs)
    print(
        f"historical runs: {len(runs)} ("
        + ", ".join(f"{s} {n}" for s, n in sorted(subtasks.items()))
        + f"), one process each, {jobs} at a time, {'strict' if strict else 'lenient'}"
    )
    walls, cpus = [], []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory(prefix="lb-bench-cli-") as tmp:
            instance = Instance(Path(tmp))
            instance.init()
            wall, cpu = import_all(instance, runs, jobs, strict)
            walls.append(wall)
            cpus.append(cpu)
    print(line(f"import-runs x {len(runs)}", walls, cpus))
    wall = median(walls)
    per = wall / len(runs) * jobs
    print(
        f"import: median wall {wall:.1f} s, {per:.2f} s per process"
        f" (target < {IMPORT_TARGET:.0f} s: {'met' if wall < IMPORT_TARGET else 'MISSED'})"
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Compile the bytecode, then time each part over the rounds and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2, help="imports running at once")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="import without --lenient (two runs of subtask D are then refused)",
    )
    parser.add_argument(
        "--parts", default=",".join(PARTS), help="comma-separated: help,table,import"
    )
    args = parser.parse_args(argv)
    parts = args.parts.split(",")
    unknown = set(parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown parts: {', '.join(sorted(unknown))}")
    # An installed package has its bytecode compiled; this environment may set
    # PYTHONDONTWRITEBYTECODE, which would make every run recompile edited modules.
    compileall.compile_dir(REPO / "leaderboard", quiet=1)
    load = os.getloadavg()
    print(f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {args.rounds} rounds")
    if "help" in parts:
        time_help(args.rounds)
    if "table" in parts:
        time_table(args.rounds)
    if "import" in parts:
        time_imports(args.rounds, args.jobs, args.strict)
    load = os.getloadavg()
    print(f"load average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
