"""The bounded reader every upload goes through: gunzip as a stream, refuse past the bounds."""

from __future__ import annotations

import gzip
import io

import numpy as np
import pytest

from leaderboard.formats.bounded import BoundedReader, InputBound, InputRefused, stream_size
from leaderboard.formats.issues import Issue, IssueLog, summarise
from tests.helpers.streams import CountingStream

TEXT = b"".join(b"line %d\n" % i for i in range(1000))


def read(data: bytes, **bound: object) -> bytes:
    return BoundedReader(io.BytesIO(data), InputBound(**bound)).read()  # type: ignore[arg-type]


def test_plain_content_within_bounds_is_returned_unchanged() -> None:
    assert read(TEXT, max_bytes=len(TEXT), max_lines=1000) == TEXT


def test_gzip_is_decompressed_and_members_are_joined() -> None:
    packed = gzip.compress(TEXT[:500]) + gzip.compress(TEXT[500:])
    assert read(packed, max_bytes=len(TEXT)) == TEXT
    # Zero padding after the last member is tolerated, as gunzip does.
    assert read(gzip.compress(TEXT) + b"\0" * 100, max_bytes=len(TEXT)) == TEXT


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (gzip.compress(TEXT)[:-12], "truncated stream"),
        (gzip.compress(TEXT) + b"garbage", "unexpected data after the compressed stream"),
        (gzip.compress(TEXT) + b"\0\0x", "unexpected data after the compressed stream"),
        (b"\x1f\x8b" + b"not really gzip", "could not be decompressed"),
    ],
)
def test_damaged_gzip_is_refused_with_a_message(data: bytes, expected: str) -> None:
    with pytest.raises(InputRefused, match=expected):
        read(data, max_bytes=1 << 20)


def test_too_many_bytes_is_refused_naming_the_limit_and_the_reason() -> None:
    with pytest.raises(
        InputRefused,
        match=r"headlines: the file is larger than 100 bytes; a run has 7 lines\. Nothing was stored\.",
    ) as caught:
        read(
            TEXT,
            max_bytes=100,
            reason="a run has 7 lines",
            label="headlines: the file",
        )
    assert caught.value.message == (
        "headlines: the file is larger than 100 bytes; a run has 7 lines. Nothing was stored."
    )


def test_too_many_lines_is_refused_even_when_the_bytes_fit() -> None:
    with pytest.raises(InputRefused, match="has more than 999 lines; upload a smaller file"):
        read(TEXT, max_bytes=1 << 30, max_lines=999)


def test_an_endless_plain_stream_is_read_only_up_to_its_bound() -> None:
    source = CountingStream(b"Q1\tQ1_C1\t0\t0.5\ttrue\n")
    reader = BoundedReader(source, InputBound(max_bytes=10 << 20, max_lines=5000))
    with pytest.raises(InputRefused, match="more than 5,000 lines"):
        reader.read()
    assert source.taken <= (1 << 20) + 65536  # one read block past the bound at most


def test_a_gzip_bomb_is_inflated_only_up_to_its_bound() -> None:
    source = CountingStream(b"0.5\n" * 1000, gzipped=True)  # endless members of 64 KB each
    reader = BoundedReader(source, InputBound(max_bytes=1 << 20))
    with pytest.raises(InputRefused, match="larger than 1,048,576 bytes when decompressed"):
        reader.read()
    assert reader.bytes_read <= (1 << 20) + (1 << 20)
    assert source.taken < 200_000  # a few compressed members, not the endless stream


def test_readinto_fills_a_numpy_buffer_and_seek_zero_starts_over() -> None:
    reader = BoundedReader(io.BytesIO(gzip.compress(TEXT)), InputBound(max_bytes=len(TEXT)))
    buffer = np.zeros(len(TEXT) + 10, dtype=np.uint8)
    total = 0
    while count := reader.readinto(buffer.data[total:]):
        total += count
    assert buffer[:total].tobytes() == TEXT
    assert reader.lines_read == 0  # lines are counted only when bounded
    assert reader.seek(0) == 0
    assert reader.read(4) == TEXT[:4]
    with pytest.raises(
        io.UnsupportedOperation, match="a bounded upload can only be rewound to its start"
    ):
        reader.seek(5)


def test_lines_are_counted_across_reads() -> None:
    reader = BoundedReader(io.BytesIO(TEXT), InputBound(max_bytes=len(TEXT), max_lines=1000))
    while reader.read(7):
        pass
    assert reader.lines_read == 1000


def test_a_deflate_error_names_itself() -> None:
    broken = bytearray(gzip.compress(TEXT))
    broken[20:30] = b"\xff" * 10
    with pytest.raises(InputRefused, match="could not be decompressed"):
        read(bytes(broken), max_bytes=1 << 20)


def test_issue_log_keeps_a_bounded_number_and_counts_the_rest() -> None:
    log = IssueLog(keep=3)
    for n in range(1, 11):
        log.append(Issue(n, f"Line {n}: bad."))
    assert [i.line for i in log.kept] == [1, 2, 3]
    assert log.dropped == 7
    assert len(log) == 10


def test_summarise_counts_errors_that_were_not_kept() -> None:
    errors = [Issue(n, f"Line {n}: bad.") for n in range(1, 31)]
    shown = summarise(errors, 25, unlisted=970)
    assert len(shown) == 26
    assert shown[-1].message == "… and 975 more errors."
    assert summarise(errors[:2], 25, unlisted=1)[-1].message == "… and 1 more error."
    assert summarise(errors[:2], 25) == errors[:2]


def test_stream_size_counts_every_byte_and_rewinds() -> None:
    stream = io.BytesIO(TEXT)
    stream.read(10)
    assert stream_size(stream) == len(TEXT)
    assert stream.tell() == 0
