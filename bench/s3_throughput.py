"""Upload and download a 1,000,000-line TREC CAR run through a gunicorn worker storing files in
a local folder, then in S3 (SeaweedFS on loopback); print MB/s, worker peaks and S3/local ratios.

    .venv/bin/python -m bench.s3_throughput [--queries 2000] [--per-query 500] [--repeat 1]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench._common import Instance, cpu_seconds, gunicorn, median, peak_rss_mb, worker_pids
from bench.trec_api_memory import write_run

STORES = ("local", "S3")
UPLOAD_PATH = "/api/v1/tasks/trec-car-2017/passage/runs"


@dataclass
class Served:
    """What one upload and download through a fresh one-worker gunicorn measured."""

    start_mb: float
    upload_s: float
    upload_cpu_s: float
    upload_peak_mb: float
    before_download_mb: float
    download_s: float
    download_cpu_s: float
    download_peak_mb: float
    worker_peak_mb: float


@dataclass
class Raw:
    """What one in-process ``put_stream`` and ``open`` read of the run measured."""

    put_s: float
    read_s: float


def sha256_of(path: Path) -> str:
    """Return the SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def rss_mb(pid: int) -> float:
    """Return a live process's current resident set size (VmRSS) in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _reset_peak(pid: int) -> None:
    """Reset a process's peak RSS (VmHWM) to its current RSS, so the next peak is its own."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def _curl(*args: str) -> int:
    """Run curl quietly with ``args``; return the HTTP status."""
    out = subprocess.run(
        ["curl", "-s", "-w", "%{http_code}", *args], check=True, capture_output=True, text=True
    )
    return int(out.stdout)


def serve_once(workdir: Path, run: Path, sha: str, storage: dict[str, str]) -> Served:
    """Upload ``run`` through the API of a fresh instance and download it back; read the worker."""
    instance = Instance(workdir)
    # The CLI stores the presets' gold files too, so it must use the same store as the server.
    instance.env.update(storage)
    instance.init()
    token = instance.participant_token("Bench", "bench@example.org", "bench password")
    auth = f"Authorization: Bearer {token}"
    response, copy = workdir / "response.json", workdir / "downloaded.txt"
    with gunicorn(instance.env, workers=1) as (url, server):
        (worker,) = worker_pids(server.pid)
        start_mb = rss_mb(worker)
        cpu = cpu_seconds(worker)
        start = time.perf_counter()
        status = _curl(
            "-o", str(response), "-H", auth,
            "-F", "slot=primary", "-F", "name=bench-run", "-F", f"file=@{run}",
            url + UPLOAD_PATH,
        )  # fmt: skip
        upload_s = time.perf_counter() - start
        upload_cpu = cpu_seconds(worker) - cpu
        upload_peak = peak_rss_mb(worker)
        if status != 201:
            raise RuntimeError(f"upload answered {status}: {response.read_text()[:500]}")
        run_id = int(json.loads(response.read_text())["id"])
        before_download = rss_mb(worker)
        _reset_peak(worker)
        cpu = cpu_seconds(worker)
        start = time.perf_counter()
        status = _curl("-o", str(copy), "-H", auth, f"{url}/api/v1/runs/{run_id}/file")
        download_s = time.perf_counter() - start
        download_cpu = cpu_seconds(worker) - cpu
        download_peak = peak_rss_mb(worker)
    if status != 200:
        raise RuntimeError(f"download answered {status}")
    if sha256_of(copy) != sha:
        raise RuntimeError("the downloaded file differs from the uploaded one")
    return Served(
        start_mb, upload_s, upload_cpu, upload_peak,
        before_download, download_s, download_cpu, download_peak,
        max(upload_peak, download_peak),
    )  # fmt: skip


def raw_once(store_url: str, root: Path, run: Path, sha: str, endpoint: str) -> Raw:
    """Time one ``put_stream`` of ``run`` into a fresh store and one streamed read back."""
    from leaderboard.storage import open_store

    store = open_store(store_url, default_dir=root, endpoint_url=endpoint)
    start = time.perf_counter()
    with run.open("rb") as f:
        key, got = store.put_stream(f)
    put_s = time.perf_counter() - start
    digest = hashlib.sha256()
    start = time.perf_counter()
    with store.open(key) as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    read_s = time.perf_counter() - start
    if got != sha or digest.hexdigest() != sha:
        raise RuntimeError(f"{store.url} did not give back the bytes put")
    return Raw(put_s, read_s)


def _medians(rounds: Mapping[str, Sequence[object]], field: str) -> tuple[float, float]:
    """Return the median of one field over the rounds, for the local store and for S3."""
    local, s3 = (median([float(getattr(r, field)) for r in rounds[name]]) for name in STORES)
    return local, s3


def _row(label: str, local: float, s3: float, unit: str, digits: int) -> str:
    """Format one table row: the figure for each store and their ratio S3 / local."""
    ratio = f"{s3 / local:.2f}" if local else ""
    return f"| {label} | {local:,.{digits}f} {unit} | {s3:,.{digits}f} {unit} | {ratio} |"


def print_table(
    served: Mapping[str, Sequence[Served]], raw: Mapping[str, Sequence[Raw]], mb: float, repeat: int
) -> None:
    """Print the medians of each store as a Markdown table with the ratios S3 / local."""
    timed: list[tuple[str, str, Mapping[str, Sequence[object]]]] = [
        ("API upload (validate, score, store)", "upload_s", served),
        ("API upload, worker CPU", "upload_cpu_s", served),
        ("download `/api/v1/runs/<id>/file`", "download_s", served),
        ("download, worker CPU", "download_cpu_s", served),
        ("in-process `put_stream`", "put_s", raw),
        ("in-process `open` + read", "read_s", raw),
    ]
    print(f"\nmedians of {repeat} round(s); {mb:.1f} MB file; ratio = S3 / local\n")
    print("| | local folder | S3 (SeaweedFS) | S3 / local |")
    print("|---|---|---|---|")
    for label, field, rounds in timed:
        local, s3 = _medians(rounds, field)
        if field.endswith("cpu_s"):
            print(_row(label, local, s3, "s", 2))
        else:
            print(_row(label + ", wall", local, s3, "s", 2))
            print(_row(label + ", throughput", mb / local, mb / s3, "MB/s", 0))
    for label, field in (
        ("worker RSS when serving, before the upload", "start_mb"),
        ("worker peak RSS during the upload", "upload_peak_mb"),
        ("worker RSS after the upload, before the download", "before_download_mb"),
        ("worker peak RSS during the download (reset before it)", "download_peak_mb"),
        ("**worker peak RSS, upload and download**", "worker_peak_mb"),
    ):
        print(_row(label, *_medians(served, field), "MB", 0))


def main() -> None:
    """Measure both stores and print the table."""
    from tests import seaweed

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--per-query", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="lb-s3-bench-"))
    (tmp / "seaweedfs").mkdir()
    server = seaweed.start(tmp / "seaweedfs")
    # As the tests' s3_server fixture: the server, its CLI and this process's store use these.
    try:
        with seaweed.use_credentials():
            run = tmp / "run.txt"
            lines = write_run(run, args.queries, args.per_query)
            mb = run.stat().st_size / 1e6
            sha = sha256_of(run)
            print(f"run: {lines:,} lines, {mb:.1f} MB; S3: SeaweedFS {server.endpoint}")
            served: dict[str, list[Served]] = {name: [] for name in STORES}
            raw: dict[str, list[Raw]] = {name: [] for name in STORES}
            for i in range(args.repeat):
                for name in STORES:
                    # A fresh prefix each round: a content-addressed put of bytes already there is skipped.
                    storage = {}
                    if name == "S3":
                        storage = {
                            "LEADERBOARD_STORAGE_URL": f"s3://{server.bucket}/served-{i}",
                            "LEADERBOARD_S3_ENDPOINT_URL": server.endpoint,
                        }
                    s = serve_once(tmp / f"served-{i}-{name}", run, sha, storage)
                    served[name].append(s)
                    raw_url = f"s3://{server.bucket}/raw-{i}" if name == "S3" else ""
                    r = raw_once(raw_url, tmp / f"raw-{i}-{name}", run, sha, server.endpoint)
                    raw[name].append(r)
                    print(
                        f"round {i + 1} {name}: upload {s.upload_s:.2f} s, download "
                        f"{s.download_s:.2f} s, worker peak {s.worker_peak_mb:.0f} MB; "
                        f"put_stream {r.put_s:.2f} s, read {r.read_s:.2f} s"
                    )
                    shutil.rmtree(tmp / f"served-{i}-{name}", ignore_errors=True)
                    shutil.rmtree(tmp / f"raw-{i}-{name}", ignore_errors=True)
    finally:
        seaweed.stop(server)
        shutil.rmtree(tmp, ignore_errors=True)

    print_table(served, raw, mb, args.repeat)


if __name__ == "__main__":
    main()
