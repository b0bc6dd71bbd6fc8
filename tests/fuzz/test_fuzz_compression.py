"""Fuzz the size-capped gzip reader used for every single-file upload."""

from __future__ import annotations

import gzip
import zlib

import pytest
from hypothesis import event, example, given
from hypothesis import strategies as st

from leaderboard.formats.compression import DecompressionError, maybe_gunzip
from tests.fuzz import FUZZ, flipped, hostile_bytes, mutated
from tests.runs import oracle_run

PLAIN = oracle_run()[:3000]
LIMIT = 4000
GZ = gzip.compress(PLAIN, mtime=0)
# Two members (as `cat a.gz b.gz` gives), a stream with zero padding, and a bomb past LIMIT.
TWO = GZ + gzip.compress(b"tail\n", mtime=0)
PADDED = GZ + b"\x00" * 64
BOMB = gzip.compress(b"\x00" * 1_000_000, mtime=0)
RAW_DEFLATE = zlib.compress(PLAIN)


def gzip_inputs() -> st.SearchStrategy[bytes]:
    """Return mutated gzip streams, and arbitrary bytes with or without the gzip magic."""
    seeds = (GZ, TWO, PADDED, BOMB)
    return st.one_of(
        st.one_of(*(flipped(s) for s in seeds)),
        st.one_of(*(mutated(s, 3) for s in seeds)),
        hostile_bytes(512).map(lambda b: b"\x1f\x8b" + b),
        hostile_bytes(512),
    )


@FUZZ
@given(gzip_inputs(), st.sampled_from((0, 100, LIMIT, LIMIT, 1 << 30)))
@example(GZ, LIMIT)
@example(BOMB, LIMIT)
@example(GZ[:-4], LIMIT)
@example(GZ + b"garbage", LIMIT)
@example(b"\x1f\x8b", LIMIT)
def test_maybe_gunzip_gives_bytes_within_the_limit_or_a_refusal(data: bytes, limit: int) -> None:
    try:
        out = maybe_gunzip(data, limit=limit)
    except DecompressionError as exc:
        assert type(exc) is DecompressionError and str(exc).strip()
        assert data.startswith(b"\x1f\x8b")
        event("refused")
        return
    assert isinstance(out, bytes)
    if not data.startswith(b"\x1f\x8b"):
        assert out is data  # not gzip: passed through untouched, whatever its size
        event("passed through")
        return
    event("inflated")
    assert len(out) <= limit


def test_known_streams() -> None:
    assert maybe_gunzip(GZ, limit=LIMIT) == PLAIN
    assert maybe_gunzip(TWO, limit=LIMIT) == PLAIN + b"tail\n"
    assert maybe_gunzip(PADDED, limit=LIMIT) == PLAIN
    assert maybe_gunzip(RAW_DEFLATE, limit=10) == RAW_DEFLATE
    with pytest.raises(DecompressionError, match="larger than 4,000 bytes when decompressed"):
        maybe_gunzip(BOMB, limit=LIMIT)
    with pytest.raises(DecompressionError, match="truncated stream"):
        maybe_gunzip(GZ[:-4], limit=LIMIT)
    with pytest.raises(DecompressionError, match="unexpected data after the compressed stream"):
        maybe_gunzip(GZ + b"garbage", limit=LIMIT)
