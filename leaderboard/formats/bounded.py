"""Read an upload as a stream within the bounds its task sets: gunzip on the fly, stop early."""

from __future__ import annotations

import io
import zlib
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

GZIP_MAGIC = b"\x1f\x8b"
# Compressed input is fed to the inflater in slices, so one call never holds much of it.
_INPUT_SLICE = 64 * 1024
# What one readall() call asks for at a time: large enough that the loop costs nothing.
_READ_BLOCK = 1 << 20
_NEWLINE = 0x0A


def stream_size(stream: IO[bytes]) -> int:
    """Return a seekable stream's size in bytes, leaving it rewound to its start."""
    stream.seek(0, io.SEEK_END)
    size = stream.tell()
    stream.seek(0)
    return size


class InputRefused(Exception):
    """An upload cannot be read within its bounds; ``message`` is meant for the uploader.

    Not a ValueError on purpose: readers that catch their own parse errors must not swallow it.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class InputBound:
    """The most one upload field can hold once decompressed, and why."""

    max_bytes: int
    #: Line breaks the content may hold (None: not counted, e.g. for an archive).
    max_lines: int | None = None
    #: Why a larger file cannot be a run, e.g. "subtask C (test) has 7,000 candidates".
    reason: str = ""
    #: How messages name the file, e.g. "The file" or "headlines: the file".
    label: str = "The file"


class BoundedReader(io.RawIOBase):
    """A read-only view of an upload's content, gunzipped if it is gzip, within an InputBound.

    Reading past ``max_bytes`` decompressed bytes or ``max_lines`` line breaks raises
    InputRefused at once, so a file larger than its task can need is never read in full, and a
    gzip bomb is never inflated. Concatenated gzip members are joined and trailing zero padding
    is tolerated, as ``gunzip`` does; a damaged stream raises InputRefused too. ``seek(0)``
    starts over from the beginning of the source.
    """

    def __init__(self, source: IO[bytes], bound: InputBound) -> None:
        super().__init__()
        self._source = source
        self.bound = bound
        self._rewind()

    def _rewind(self) -> None:
        self._source.seek(0)
        head = self._source.read(2)
        self._source.seek(0)
        self.compressed = head == GZIP_MAGIC
        self._inflater: zlib._Decompress | None = (
            zlib.decompressobj(wbits=16 + zlib.MAX_WBITS) if self.compressed else None
        )
        self._pending = b""  # compressed bytes read from the source, not yet inflated
        self._source_done = False
        self._finished = False
        self.bytes_read = 0
        self.lines_read = 0

    def readable(self) -> bool:
        """Return True: this stream is for reading."""
        return True

    def seekable(self) -> bool:
        """Return True: the stream can start over (only ``seek(0)`` is supported)."""
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        """Start over from the beginning when asked for position 0; nothing else is supported."""
        if offset == 0 and whence == io.SEEK_SET:
            self._rewind()
            return 0
        raise io.UnsupportedOperation("a bounded upload can only be rewound to its start")

    def tell(self) -> int:
        """Return how many content bytes were read since the start."""
        return self.bytes_read

    def readinto(self, buffer: WriteableBuffer) -> int:
        """Fill ``buffer`` with the next content bytes; 0 at the end."""
        view = memoryview(buffer).cast("B")
        if not len(view):
            return 0
        count = self._inflate_into(view) if self.compressed else self._copy_into(view)
        self._account(view[:count])
        return count

    def readall(self) -> bytes:
        """Return the rest of the content, read in large blocks."""
        blocks = []
        if not self.compressed:
            # Plain content is read as it is, never more than one byte past the bound.
            while block := self._source.read(self.bound.max_bytes + 1 - self.bytes_read):
                self._account(block)
                blocks.append(block)
            return b"".join(blocks)
        while block := self.read(_READ_BLOCK):
            blocks.append(block)
        return b"".join(blocks)

    def _copy_into(self, view: memoryview) -> int:
        readinto = getattr(self._source, "readinto", None)
        if callable(readinto):
            return int(readinto(view) or 0)
        block = self._source.read(len(view))
        view[: len(block)] = block
        return len(block)

    def _account(self, chunk: memoryview | bytes) -> None:
        """Count what was read; refuse as soon as a bound is passed."""
        size = len(chunk) if isinstance(chunk, bytes) else chunk.nbytes
        self.bytes_read += size
        bound = self.bound
        if self.bytes_read > bound.max_bytes:
            where = " when decompressed" if self.compressed else ""
            raise InputRefused(
                f"{bound.label} is larger than {bound.max_bytes:,} bytes{where}; {self._because()}"
            )
        if bound.max_lines is not None and size:
            if isinstance(chunk, bytes):
                self.lines_read += chunk.count(b"\n")
            else:
                # Counted in place, without a copy; numpy is imported here, not at load: a
                # command that reads no upload (a table) does not need it.
                import numpy as np

                self.lines_read += int(np.count_nonzero(np.frombuffer(chunk, np.uint8) == _NEWLINE))
            if self.lines_read > bound.max_lines:
                raise InputRefused(
                    f"{bound.label} has more than {bound.max_lines:,} lines; {self._because()}"
                )

    def _because(self) -> str:
        reason = self.bound.reason
        return f"{reason}. Nothing was stored." if reason else "upload a smaller file."

    # -- gzip ---------------------------------------------------------------------------------

    def _fill(self) -> bool:
        """Read more compressed input into ``_pending``; return False at the source's end."""
        if self._source_done:
            return False
        block = self._source.read(_INPUT_SLICE)
        if not block:
            self._source_done = True
            return False
        self._pending += block
        return True

    def _inflate_into(self, view: memoryview) -> int:
        while not self._finished:
            if self._inflater is None and not self._next_member():
                break
            assert self._inflater is not None
            if not self._pending and not self._fill():
                raise InputRefused(
                    "The file looks like gzip but could not be decompressed (truncated stream)."
                )
            try:
                out = self._inflater.decompress(self._pending, len(view))
            except zlib.error as exc:
                raise InputRefused(
                    f"The file looks like gzip but could not be decompressed ({exc})."
                ) from exc
            self._pending = self._inflater.unconsumed_tail
            if self._inflater.eof:
                self._pending = self._inflater.unused_data + self._pending
                self._inflater = None
            if out:
                view[: len(out)] = out
                return len(out)
        return 0

    def _next_member(self) -> bool:
        """Start the next gzip member; return False at a clean end (zero padding allowed)."""
        while len(self._pending) < 2 and self._fill():
            pass
        if not self._pending:
            self._finished = True
            return False
        if self._pending[:1] == b"\x00":
            # Padding after the last member must be zeros to the end.
            while True:
                if self._pending.strip(b"\x00"):
                    break
                self._pending = b""
                if not self._fill():
                    self._finished = True
                    return False
        elif self._pending[:2] == GZIP_MAGIC:
            self._inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
            return True
        raise InputRefused(
            "The file looks like gzip but has unexpected data after the compressed stream."
        )
