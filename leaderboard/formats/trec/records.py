"""TREC run and qrels records, the settings a task gives its format, and the format's limits."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

#: Longest accepted line, in bytes without the line ending.
MAX_LINE_BYTES = 4096
BOM = b"\xef\xbb\xbf"
PRINTABLE_TAB = bytes(range(0x20, 0x7F)) + b"\t"


class Readable(Protocol):
    """A binary stream read in blocks (a file, a gzip stream, a capped reader)."""

    def read(self, size: int = -1, /) -> bytes: ...


#: Physical lines as bytes, or a binary stream read in large blocks (faster, same result).
RunSource = Iterable[bytes] | Readable


@dataclass(frozen=True)
class TrecSettings:
    """What differs between tasks of the TREC family; defaults are TREC CAR 2017's."""

    docid_pattern: str = r"[0-9a-f]{40}"
    docid_hint: str = "40 lowercase hexadecimal characters"
    doc_noun: str = "paragraph"
    max_per_query: int = 1000
    tag_pattern: str = r"[A-Za-z0-9_.-]{1,20}"
    tag_hint: str = "1–20 characters from A–Z, a–z, 0–9, '_', '.', '-'"
    topic_set: str = "benchmarkY1test"
    topic_hint: str = (
        "Ids with the 'enwiki:' prefix belong to the v2.0 release; this task uses v1.5 ids."
    )
    #: The hint is added only for unknown ids starting with this prefix ("" = always).
    topic_hint_prefix: str = "enwiki:"
    min_grade: int = -2
    max_grade: int = 3


@dataclass(frozen=True, eq=False)
class TrecRun:
    """A run, column-wise: per line a query index into ``queries``, an id and a float32 score."""

    tag: str
    queries: tuple[str, ...]
    query_index: NDArray[np.int32]
    docids: NDArray[np.bytes_]
    scores: NDArray[np.float32]

    def __len__(self) -> int:
        """Return the number of lines."""
        return len(self.query_index)


@dataclass(frozen=True, eq=False)
class Qrels:
    """One qrels variant's judgments, column-wise; ``queries`` are in file order."""

    queries: tuple[str, ...]
    query_index: NDArray[np.int32]
    docids: NDArray[np.bytes_]
    grades: NDArray[np.int32]

    def __len__(self) -> int:
        """Return the number of judgments (lines)."""
        return len(self.query_index)

    def grade_histogram(self) -> dict[int, int]:
        """Return {grade: number of judgments}, by ascending grade."""
        grades, counts = np.unique(self.grades, return_counts=True)
        return {int(g): int(c) for g, c in zip(grades, counts, strict=True)}
