"""Gzip detection and size-capped decompression of uploads; archive detection for refusals."""

from __future__ import annotations

import io

from leaderboard.formats.bounded import GZIP_MAGIC, BoundedReader, InputBound, InputRefused

_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")
_TAR_MAGIC_OFFSET = 257


class DecompressionError(ValueError):
    """Raised for a gzip upload that is corrupt or inflates beyond the size limit."""


def maybe_gunzip(data: bytes, *, limit: int) -> bytes:
    """Return ``data`` unchanged unless it starts with the gzip magic, else its decompressed bytes.

    Decompression is incremental and stops as soon as more than ``limit`` bytes come out, so a
    gzip bomb is never inflated fully. Concatenated gzip members are joined, as ``gunzip`` does.
    Raises DecompressionError when the output would exceed ``limit`` or the stream is corrupt.
    """
    if not data.startswith(GZIP_MAGIC):
        return data
    if limit < 0:
        raise ValueError("limit must not be negative")
    try:
        return BoundedReader(io.BytesIO(data), InputBound(max_bytes=limit)).readall()
    except InputRefused as exc:
        raise DecompressionError(exc.message) from None


def is_zip_or_tar(data: bytes) -> bool:
    """Return whether ``data`` is a ZIP or (ustar/GNU) tar archive, which uploads must not be."""
    if data.startswith(_ZIP_MAGICS):
        return True
    magic = data[_TAR_MAGIC_OFFSET : _TAR_MAGIC_OFFSET + 5]
    return magic == b"ustar"
