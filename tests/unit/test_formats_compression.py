"""Gzip detection, capped decompression and archive detection."""

from __future__ import annotations

import gzip
import io
import tarfile
import tracemalloc
import zipfile
import zlib

import pytest

from leaderboard.formats.compression import DecompressionError, is_zip_or_tar, maybe_gunzip

TEXT = b"Q1\tQ1_C1\t0\t0.5\ttrue\n" * 100  # 20 bytes x 100


def test_plain_data_is_returned_unchanged() -> None:
    assert maybe_gunzip(TEXT, limit=10) is TEXT
    assert maybe_gunzip(b"", limit=0) == b""


def test_gzip_is_decompressed() -> None:
    assert maybe_gunzip(gzip.compress(TEXT), limit=len(TEXT)) == TEXT


def test_limit_is_inclusive_and_exceeding_it_fails() -> None:
    packed = gzip.compress(TEXT)
    assert maybe_gunzip(packed, limit=len(TEXT)) == TEXT
    with pytest.raises(DecompressionError, match=r"larger than 1,999 bytes when decompressed"):
        maybe_gunzip(packed, limit=len(TEXT) - 1)


def test_concatenated_members_are_joined() -> None:
    packed = gzip.compress(b"first\n") + gzip.compress(b"second\n")
    assert maybe_gunzip(packed, limit=100) == b"first\nsecond\n"


def test_trailing_zero_padding_is_tolerated() -> None:
    assert maybe_gunzip(gzip.compress(b"abc") + b"\x00" * 8, limit=10) == b"abc"


def test_corrupt_stream() -> None:
    with pytest.raises(DecompressionError, match="could not be decompressed"):
        maybe_gunzip(b"\x1f\x8b" + b"not really gzip at all", limit=1000)


def test_truncated_stream() -> None:
    with pytest.raises(DecompressionError, match="truncated"):
        maybe_gunzip(gzip.compress(TEXT)[:-12], limit=10_000)


def test_trailing_garbage() -> None:
    with pytest.raises(DecompressionError, match="unexpected data"):
        maybe_gunzip(gzip.compress(TEXT) + b"garbage", limit=10_000)


def _bomb(size: int) -> bytes:
    """Return a gzip stream of ``size`` zero bytes, compressed without holding them at once."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(1 << 20)
    parts = [packer.compress(block) for _ in range(size // len(block))]
    parts.append(packer.flush())
    return b"".join(parts)


def test_bomb_is_never_inflated_fully() -> None:
    bomb = _bomb(256 << 20)  # 256 MiB of zeros in a few hundred KiB
    assert len(bomb) < 1 << 20
    limit = 1 << 20
    tracemalloc.start()
    try:
        with pytest.raises(DecompressionError, match=r"larger than 1,048,576 bytes"):
            maybe_gunzip(bomb, limit=limit)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # A full inflate would need 256 MiB; the cap keeps the peak near the limit.
    assert peak < 16 << 20


def test_archives_are_detected() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("subtask_A_primary.txt", TEXT)
    assert is_zip_or_tar(buffer.getvalue())

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo("subtask_A_primary.txt")
        info.size = len(TEXT)
        archive.addfile(info, io.BytesIO(TEXT))
    assert is_zip_or_tar(buffer.getvalue())

    assert is_zip_or_tar(b"PK\x05\x06" + bytes(18))  # an empty zip
    assert not is_zip_or_tar(TEXT)
    assert not is_zip_or_tar(gzip.compress(TEXT))
    assert not is_zip_or_tar(b"")
