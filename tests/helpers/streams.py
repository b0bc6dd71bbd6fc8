"""Endless input streams that count what was read from them."""

from __future__ import annotations

import gzip
import io


class CountingStream(io.RawIOBase):
    """An endless source of ``line`` that counts how many bytes were taken from it."""

    def __init__(self, line: bytes, *, gzipped: bool = False) -> None:
        self.block = line * (65536 // len(line))
        if gzipped:
            self.block = gzip.compress(self.block)
        self.taken = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        assert (offset, whence) == (0, 0)
        self.taken = 0
        return 0

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        view = memoryview(buffer).cast("B")
        chunk = self.block[: len(view)]
        view[: len(chunk)] = chunk
        self.taken += len(chunk)
        return len(chunk)

    def read(self, size: int = -1) -> bytes:
        assert size > 0, "an endless stream cannot be read whole"
        chunk = self.block[:size]
        self.taken += len(chunk)
        return chunk
