"""Stored files reach the disk inline, or on threads whose end a commit waits for."""

from __future__ import annotations

import errno
import io
import os
import threading
import time
from pathlib import Path

import pytest

from leaderboard import storage
from leaderboard.storage import Flushes, LocalStore


def test_without_flushes_the_file_is_flushed_before_put_stream_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flushed: list[int] = []
    monkeypatch.setattr(storage.os, "fsync", lambda fd: flushed.append(fd))
    key, sha = LocalStore(tmp_path).put_stream(io.BytesIO(b"run"))
    assert len(flushed) == 1
    assert (tmp_path / key).read_bytes() == b"run"


def test_with_flushes_the_flush_runs_on_a_thread_until_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    done: list[bytes] = []

    def slow_fsync(fd: int) -> None:
        release.wait(5)
        done.append(os.pread(fd, 3, 0))  # the thread's own descriptor is still open

    monkeypatch.setattr(storage.os, "fsync", slow_fsync)
    flushes = Flushes()
    key, _ = LocalStore(tmp_path).put_stream(io.BytesIO(b"run"), flushes)
    # put_stream returned while the flush still waits: the caller goes on meanwhile.
    assert done == [] and (tmp_path / key).read_bytes() == b"run"
    release.set()
    flushes.wait()
    assert done == [b"run"]


def test_wait_raises_what_the_flush_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def failing(fd: int) -> None:
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(storage.os, "fsync", failing)
    flushes = Flushes()
    LocalStore(tmp_path).put_stream(io.BytesIO(b"run"), flushes)
    flushes.join()  # joining alone never raises
    with pytest.raises(OSError, match="I/O error"):
        flushes.wait()


def test_descriptors_are_closed_after_the_flush(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = len(os.listdir("/proc/self/fd"))
    monkeypatch.setattr(storage.os, "fsync", lambda fd: time.sleep(0.01))
    flushes = Flushes()
    for k in range(20):
        LocalStore(tmp_path).put_stream(io.BytesIO(f"run {k}".encode()), flushes)
    flushes.wait()
    assert len(os.listdir("/proc/self/fd")) <= before
