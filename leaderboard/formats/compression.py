"""Gzip detection and size-capped decompression of uploads; archive detection for refusals."""

from __future__ import annotations

import zlib

GZIP_MAGIC = b"\x1f\x8b"
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")
_TAR_MAGIC_OFFSET = 257
# Feed the decompressor in slices so one call never holds much more than `limit` of output.
_INPUT_SLICE = 64 * 1024


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
    out = bytearray()
    rest = memoryview(data)
    while True:
        rest = _inflate_member(rest, out, limit)
        # Trailing zero padding after the last member is tolerated, as gzip itself does.
        if not bytes(rest).strip(b"\x00"):
            return bytes(out)
        if bytes(rest[:2]) != GZIP_MAGIC:
            raise DecompressionError(
                "The file looks like gzip but has unexpected data after the compressed stream."
            )


def _inflate_member(data: memoryview, out: bytearray, limit: int) -> memoryview:
    """Append one gzip member of ``data`` to ``out`` within ``limit``; return the bytes after it."""
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    position = 0
    pending = b""
    while not inflater.eof:
        if not pending:
            if position >= len(data):
                raise DecompressionError(
                    "The file looks like gzip but could not be decompressed (truncated stream)."
                )
            pending = bytes(data[position : position + _INPUT_SLICE])
            position += len(pending)
        try:
            # max_length > 0 always: we stop as soon as out exceeds limit.
            chunk = inflater.decompress(pending, limit + 1 - len(out))
        except zlib.error as exc:
            raise DecompressionError(
                f"The file looks like gzip but could not be decompressed ({exc})."
            ) from exc
        out += chunk
        if len(out) > limit:
            raise DecompressionError(
                f"The file is larger than {limit:,} bytes when decompressed; upload a smaller file."
            )
        pending = inflater.unconsumed_tail
    tail = inflater.unused_data
    return memoryview(tail + bytes(data[position:]))


def is_zip_or_tar(data: bytes) -> bool:
    """Return whether ``data`` is a ZIP or (ustar/GNU) tar archive, which uploads must not be."""
    if data.startswith(_ZIP_MAGICS):
        return True
    magic = data[_TAR_MAGIC_OFFSET : _TAR_MAGIC_OFFSET + 5]
    return magic == b"ustar"
