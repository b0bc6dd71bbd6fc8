"""TREC run and qrels records, the settings a task gives its format, and the format's limits."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from leaderboard.formats.trec.patterns import ANY_ID

#: Longest accepted line, in bytes without the line ending.
MAX_LINE_BYTES = 4096
#: The UTF-8 byte-order mark some editors write at the start of a file.
BOM = b"\xef\xbb\xbf"
#: The bytes a line may hold: printable ASCII and TAB.
PRINTABLE_TAB = bytes(range(0x20, 0x7F)) + b"\t"
#: Grades are stored as 32-bit integers, whatever range a task allows.
GRADE_MIN, GRADE_MAX = -(1 << 31), (1 << 31) - 1


class Readable(Protocol):
    """A binary stream read in blocks (a file, a gzip stream, a capped reader)."""

    def read(self, size: int = -1, /) -> bytes: ...


#: Physical lines as bytes, or a binary stream read in large blocks (faster, same result).
RunSource = Iterable[bytes] | Readable


#: What a topic with more than ``max_per_query`` lines does to a run.
OVER_LIMIT = ("refuse", "truncate")


@dataclass(frozen=True)
class TrecSettings:
    """What differs between tasks of the TREC family; the defaults suit any TREC-style track.

    A track with stricter rules (TREC CAR's 40-hex paragraph ids, grades -2 to 3) states them
    in its definition's ``[format]`` table.
    """

    docid_pattern: str = ANY_ID
    docid_hint: str = "a non-empty id without white space"
    doc_noun: str = "document"
    max_per_query: int = 1000
    tag_pattern: str = r"[!-~]{1,64}"
    tag_hint: str = "1–64 printable ASCII characters without white space"
    #: The name of the topic set, shown when a query id is not one of its topics.
    topic_set: str = ""
    #: Added to the unknown-query message, e.g. to explain ids of another release.
    topic_hint: str = ""
    #: The hint is added only for unknown ids starting with this prefix ("" = always).
    topic_hint_prefix: str = ""
    #: Lowest and highest accepted qrels grade; None leaves that side open.
    min_grade: int | None = None
    max_grade: int | None = None
    #: A topic with more than ``max_per_query`` lines: "refuse" the run, or "truncate" it to
    #: its first ``max_per_query`` results by score (trec_eval's -M) with a warning.
    over_limit: str = "refuse"

    def __post_init__(self) -> None:
        """Refuse an over_limit rule that is neither refuse nor truncate."""
        if self.over_limit not in OVER_LIMIT:
            raise ValueError(
                f"over_limit must be one of {', '.join(OVER_LIMIT)}, not {self.over_limit!r}"
            )


class _QueryLines:
    """Lines held column-wise, one entry of ``query_index`` a line."""

    query_index: NDArray[np.int32]

    def __len__(self) -> int:
        """Return the number of lines."""
        return len(self.query_index)


@dataclass(frozen=True, eq=False)
class TrecRun(_QueryLines):
    """A run, column-wise: per line a query index into ``queries``, an id and a float32 score."""

    tag: str
    queries: tuple[str, ...]
    query_index: NDArray[np.int32]
    docids: NDArray[np.bytes_]
    scores: NDArray[np.float32]


@dataclass(frozen=True, eq=False)
class Qrels(_QueryLines):
    """One qrels variant's judgments, column-wise; ``queries`` are in file order."""

    queries: tuple[str, ...]
    query_index: NDArray[np.int32]
    docids: NDArray[np.bytes_]
    grades: NDArray[np.int32]

    def grade_histogram(self) -> dict[int, int]:
        """Return {grade: number of judgments}, by ascending grade."""
        grades, counts = np.unique(self.grades, return_counts=True)
        return {int(g): int(c) for g, c in zip(grades, counts, strict=True)}
