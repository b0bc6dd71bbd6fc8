"""Block readers: a run's input as chunks of whole physical lines."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Iterator
from typing import cast

import numpy as np
from numpy.typing import NDArray

from leaderboard.formats.trec.columns import VECTOR_MAX_FIELD
from leaderboard.formats.trec.records import Readable, RunSource

#: Lines joined into one chunk when the input is an iterable of lines.
BATCH_LINES = 32_768
#: Bytes read at a time from a stream; large enough that per-block costs vanish.
CHUNK_BYTES = 1 << 22


def line_chunks(lines: RunSource) -> Iterator[bytes]:
    """Yield the input as chunks of whole physical lines.

    A binary file-like input (one with ``read``) is read in large blocks, which avoids a Python
    object per line; any other iterable is joined in batches of lines.
    """
    read = getattr(lines, "read", None)
    if callable(read):
        pieces: Iterator[bytes] = iter(functools.partial(read, CHUNK_BYTES), b"")
    else:
        iterator = iter(cast(Iterable[bytes], lines))
        batches = iter(lambda: list(itertools.islice(iterator, BATCH_LINES)), [])
        pieces = (b"".join(batch) for batch in batches)
    pending: list[bytes] = []
    for piece in pieces:
        cut = piece.rfind(b"\n") + 1
        if cut == 0:
            pending.append(piece)
            continue
        if pending:
            pending.append(piece)
            piece = b"".join(pending)
            cut = len(piece) - len(pending[-1]) + cut
            pending = []
        if cut < len(piece):
            pending.append(piece[cut:])
            piece = piece[:cut]
        yield piece
    if pending:
        yield b"".join(pending)


def padded_blocks(source: Readable) -> Iterator[tuple[NDArray[np.uint8], int]]:
    """Yield (array, size): whole lines read from a stream, followed by spare bytes.

    The lines are read into one buffer reused from block to block (a block is only valid
    until the next one is read), so reading a large file touches no fresh memory per block.
    """
    spare = VECTOR_MAX_FIELD
    buffer = np.zeros(2 * CHUNK_BYTES + spare, dtype=np.uint8)
    readinto = getattr(source, "readinto", None)
    start = end = 0
    while True:
        if end + CHUNK_BYTES + spare > len(buffer):
            # Keep the unfinished line, at the front; grow only for a line longer than a block.
            buffer[: end - start] = buffer[start:end]
            end, start = end - start, 0
            if end + CHUNK_BYTES + spare > len(buffer):
                buffer = np.concatenate((buffer, np.zeros(len(buffer), dtype=np.uint8)))
        if callable(readinto):
            count = int(readinto(buffer.data[end : end + CHUNK_BYTES]) or 0)
        else:
            piece = source.read(CHUNK_BYTES)
            count = len(piece)
            buffer[end : end + count] = np.frombuffer(piece, dtype=np.uint8)
        if not count:
            if start < end:
                yield buffer[start : end + spare], end - start
            return
        end += count
        cut = _last_line_end(buffer, end - count, end)
        if cut:
            yield buffer[start : cut + spare], cut - start
            start = cut


def _last_line_end(buffer: NDArray[np.uint8], low: int, high: int) -> int:
    """Return the position after the last LF in ``buffer[low:high]``, or 0 if there is none."""
    step = 4096
    while high > low:
        window = max(low, high - step)
        found = buffer[window:high].tobytes().rfind(b"\n")
        if found >= 0:
            return window + found + 1
        high, step = window, step * 4
    return 0
