"""Hostile uploads through the API of one gunicorn worker: time to the 4xx and the worker's peak.

For each family a participant uploads files no run of the task can be: a small .gz that
inflates to 900 MB of well-formed lines, a plain 190 MB file of well-formed lines, and for
STS a 1 MB .tar.gz that unpacks to 1 GB. Printed per upload: its size, the HTTP status, the
first message, the wall time to the answer, the CPU time the worker spent and the worker's
peak RSS during that upload (VmHWM, reset before each upload). Targets: every answer is a
4xx within 5 s, every peak under 300 MB.

    .venv/bin/python -m bench.hostile_uploads [--plain-mb 190] [--inflated-mb 900]
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bench._common import REPO, Instance, cpu_seconds, gunicorn, peak_rss_mb, worker_pids

PRESETS = REPO / "leaderboard" / "tasks" / "presets"
CQA_GOLD_C = (
    PRESETS / "semeval2016-task3/gold/test/SemEval2016-Task3-CQA-QL-test.xml.subtaskC.relevancy"
)
TREC_TOPICS = PRESETS / "trec-car-2017" / "topics.car17v1.5.benchmarkY1test.txt"
MB = 1_000_000
# The uncompressed block a gzip bomb repeats: one compressed member, concatenated many times.
_BLOCK = 1 << 20


@dataclass(frozen=True)
class Hostile:
    """One hostile upload: where it goes, its multipart field and file."""

    family: str
    what: str
    path: str  # API path of the subtask
    field: str
    file: Path


@dataclass(frozen=True)
class Result:
    """What one hostile upload cost."""

    upload: Hostile
    file_mb: float
    status: int
    message: str
    seconds: float
    worker_cpu: float
    worker_peak_mb: float


def _line_block(line: bytes, size: int = _BLOCK) -> bytes:
    """Return ``line`` repeated to about ``size`` bytes."""
    return line * max(1, size // len(line))


def _write_plain(path: Path, line: bytes, megabytes: int) -> Path:
    block = _line_block(line)
    with path.open("wb") as out:
        for _ in range(megabytes * MB // len(block) + 1):
            out.write(block)
    return path


def _gzip_members(parts: Iterator[bytes]) -> Iterator[bytes]:
    """Yield one compressed gzip member per part, reusing the last one for equal parts."""
    last: tuple[bytes, bytes] | None = None
    for part in parts:
        if last is None or last[0] != part:
            last = (part, gzip.compress(part, compresslevel=9, mtime=0))
        yield last[1]


def _write_bomb(path: Path, line: bytes, megabytes: int) -> Path:
    """Write a .gz inflating to ``megabytes`` of ``line`` (concatenated members, as gzip allows)."""
    block = _line_block(line)
    count = megabytes * MB // len(block) + 1
    with path.open("wb") as out:
        for member in _gzip_members(block for _ in range(count)):
            out.write(member)
    return path


def _write_tar_bomb(path: Path, member: str, megabytes: int) -> Path:
    """Write a .tar.gz holding one ``member`` of ``megabytes`` of scores."""
    size = megabytes * MB
    info = tarfile.TarInfo(member)
    info.size = size
    header = info.tobuf(format=tarfile.USTAR_FORMAT)
    block = _line_block(b"2.5\n", 4096) * 256  # 1 MiB, a whole number of lines
    full, rest = divmod(size, len(block))

    def parts() -> Iterator[bytes]:
        yield header
        for _ in range(full):
            yield block
        padding = (-size) % 512
        yield block[:rest] + b"\0" * padding + b"\0" * 1024  # end of archive

    with path.open("wb") as out:
        for compressed in _gzip_members(parts()):
            out.write(compressed)
    return path


def hostile_files(folder: Path, plain_mb: int, inflated_mb: int) -> list[Hostile]:
    """Write the hostile files of every family into ``folder``."""
    q, c, *_ = CQA_GOLD_C.read_text().splitlines()[0].split("\t")
    cqa_line = f"{q}\t{c}\t0\t0.5\ttrue\n".encode()
    topic = TREC_TOPICS.read_text().split()[0]
    trec_line = f"{topic} Q0 {'ab' * 20} 1 1.5 hostile\n".encode()
    cqa = "/api/v1/tasks/semeval2016-task3/C/runs"
    sts = "/api/v1/tasks/semeval2016-task1/en/runs"
    trec = "/api/v1/tasks/trec-car-2017/passage/runs"
    return [
        Hostile("cqa", f"{inflated_mb} MB in a .gz", cqa, "file",
                _write_bomb(folder / "cqa.txt.gz", cqa_line, inflated_mb)),
        Hostile("cqa", f"{plain_mb} MB plain", cqa, "file",
                _write_plain(folder / "cqa.txt", cqa_line, plain_mb)),
        Hostile("sts", f"{inflated_mb} MB in a .gz", sts, "headlines",
                _write_bomb(folder / "sts.headlines.txt.gz", b"2.5\n", inflated_mb)),
        Hostile("sts", f"{plain_mb} MB plain", sts, "headlines",
                _write_plain(folder / "sts.headlines.txt", b"2.5\n", plain_mb)),
        Hostile("sts", f"{inflated_mb} MB in a .tar.gz", sts, "archive",
                _write_tar_bomb(folder / "sts.tar.gz", "STS.output.headlines.txt", inflated_mb)),
        Hostile("trec", f"{inflated_mb} MB in a .gz", trec, "file",
                _write_bomb(folder / "trec.run.gz", trec_line, inflated_mb)),
        Hostile("trec", f"{plain_mb} MB plain", trec, "file",
                _write_plain(folder / "trec.run", trec_line, plain_mb)),
    ]  # fmt: skip


def _reset_peak(pid: int) -> None:
    """Reset a process's peak RSS (VmHWM) to its current RSS, so a peak is per upload."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def _post(url: str, token: str, up: Hostile, file: Path, response: Path) -> int:
    """POST ``file`` as the upload's field with curl; return the HTTP status."""
    if not file.exists():
        file.write_bytes(b"warm-up\n")
    out = subprocess.run(
        [
            "curl", "-s", "-o", str(response), "-w", "%{http_code}",
            "-H", f"Authorization: Bearer {token}",
            "-F", "slot=run1" if up.family == "sts" else "slot=primary",
            "-F", f"{up.field}=@{file}",
            url,
        ],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return int(out.stdout)


def measure(
    workdir: Path | None = None, *, plain_mb: int = 190, inflated_mb: int = 900
) -> list[Result]:
    """Start one gunicorn worker on a fresh instance and send every hostile upload to it."""
    root = Path(workdir or tempfile.mkdtemp(prefix="lb-hostile-"))
    instance = Instance(root)
    instance.init()
    token = instance.participant_token("Hostile", "h@example.org", "hostile password")
    uploads = hostile_files(root, plain_mb, inflated_mb)
    results = []
    with gunicorn(instance.env, workers=1) as (url, server):
        (worker,) = worker_pids(server.pid)
        # A worker meets a deadline warm: its first upload of a task loads code and gold.
        for up in uploads:
            _post(url + up.path, token, up, root / "warm.txt", root / "response.json")
        for up in uploads:
            _reset_peak(worker)
            cpu = cpu_seconds(worker)
            start = time.perf_counter()
            status = _post(url + up.path, token, up, up.file, root / "response.json")
            seconds = time.perf_counter() - start
            body = json.loads((root / "response.json").read_text() or "{}")
            issues = body.get("issues") or [{}]
            message = str(issues[0].get("message") or body.get("error", ""))
            results.append(
                Result(
                    up,
                    up.file.stat().st_size / MB,
                    status,
                    message,
                    seconds,
                    cpu_seconds(worker) - cpu,
                    peak_rss_mb(worker),
                )
            )
    return results


def main() -> None:
    """Print the figures of every hostile upload."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--plain-mb", type=int, default=190)
    parser.add_argument("--inflated-mb", type=int, default=900)
    args = parser.parse_args()
    results = measure(plain_mb=args.plain_mb, inflated_mb=args.inflated_mb)
    print(f"{'family':6} {'upload':24} {'file':>9} {'HTTP':>4} {'wall':>7} {'CPU':>7} {'peak':>8}")
    for r in results:
        print(
            f"{r.upload.family:6} {r.upload.what:24} {r.file_mb:7.1f}MB {r.status:4} "
            f"{r.seconds:6.2f}s {r.worker_cpu:6.2f}s {r.worker_peak_mb:6.0f}MB"
        )
        print(f"       {r.message[:110]}")
    ok = all(400 <= r.status < 500 and r.seconds < 5 and r.worker_peak_mb < 300 for r in results)
    print(f"targets (4xx within 5 s, peak < 300 MB): {'met' if ok else 'NOT met'}")


if __name__ == "__main__":
    main()
