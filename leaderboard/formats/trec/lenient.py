"""Lenient import of historical runs, read as trec_eval 9.0.8 reads them."""

from __future__ import annotations

import re
from array import array

import numpy as np

from leaderboard.formats.issues import MAX_LISTED_ERRORS, Issue, quote
from leaderboard.formats.trec.blocks import BATCH_LINES, line_chunks
from leaderboard.formats.trec.columns import STRICT_NUMBER, Columns, six_columns, strict_numbers
from leaderboard.formats.trec.messages import (
    MAX_COLLECTED_ERRORS,
    TooManyErrors,
    by_line,
    decoded,
    plural,
)
from leaderboard.formats.trec.records import BOM, RunSource, TrecRun
from leaderboard.formats.trec.strict import repeated_pairs

# C strtod/atof grammar (C locale): hex float, decimal, inf/infinity, nan; longest prefix wins.
_C_ATOF = re.compile(
    rb"""[+-]?(?:
        (?P<hex>0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)
      | (?P<dec>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)
      | (?P<inf>[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)
      | (?P<nan>[nN][aA][nN](?:\([0-9A-Za-z_]*\))?)
    )""",
    re.VERBOSE,
)


def c_atof(text: bytes) -> tuple[float, int]:
    """Read a score as C ``atof`` does: return (value, bytes used); 0 bytes used means 0.0.

    NaN is returned as NaN for the caller to refuse.
    """
    match = _C_ATOF.match(text)
    if match is None:
        return 0.0, 0
    used = match.group()
    negative = used.startswith(b"-")
    if match.group("hex") is not None:
        try:
            value = float.fromhex(used.decode())
        except OverflowError:
            value = -np.inf if negative else np.inf
    elif match.group("dec") is not None:
        value = float(used)
    elif match.group("inf") is not None:
        value = -np.inf if negative else np.inf
    else:
        value = np.nan
    return value, match.end()


def _number_text(value: float) -> str:
    """Format a read score for the report: integers without a decimal point."""
    if np.isfinite(value) and float(value).is_integer():
        return str(int(value))
    return repr(float(value))


class _LenientParser:
    """State of one lenient import pass."""

    def __init__(self) -> None:
        self.errors: list[Issue] = []
        self.query_map: dict[bytes, int] = {}
        self.line_no = 0
        self.any_field = False
        self.bom = False
        self.crlf = 0
        self.extra_fields = 0
        self.first_extra = 0
        self.coercions: list[str] = []
        self.coercion_count = 0
        self.tags: dict[bytes, int] = {}
        self.last_tag = b""
        self.buffer_lines: array[int] = array("i")
        self.buffer_query: array[int] = array("i")
        self.buffer_scores: array[float] = array("d")
        self.buffer_docids: list[bytes] = []
        self.columns = Columns()

    def error(self, line: int | None, message: str) -> None:
        """Record an error; stop the pass once MAX_COLLECTED_ERRORS are collected."""
        self.errors.append(Issue(line, message))
        if len(self.errors) >= MAX_COLLECTED_ERRORS:
            raise TooManyErrors

    def feed(self, raw: bytes) -> None:
        """Read a chunk of whole lines."""
        pieces = raw.split(b"\n")
        if pieces[-1] == b"":
            pieces.pop()
        if pieces and self._bulk(raw, pieces):
            return
        for piece in pieces:
            self.line_no += 1
            self._line(self.line_no, piece)
        if len(self.buffer_docids) >= BATCH_LINES:
            self._flush()

    def _bulk(self, raw: bytes, pieces: list[bytes]) -> bool:
        """Read a chunk of plain 6-field lines with strict decimal scores at once, if it is one."""
        columns = six_columns(raw, pieces)
        if columns is None:
            return False
        qids, _, docids, _, scores, tags = columns
        values = strict_numbers(scores)
        if values is None:
            return False
        self._flush()
        start = self.line_no + 1
        self.line_no += len(pieces)
        self.any_field = True
        self.crlf += raw.count(b"\r")
        index = list(map(self.query_map.get, qids))
        if None in index:
            for i, value in enumerate(index):
                if value is None:
                    index[i] = self.query_map.setdefault(qids[i], len(self.query_map))
        if len(set(tags)) != 1 or tags[0] not in self.tags:
            for i, tag in enumerate(tags):
                self.tags.setdefault(tag, start + i)
        self.last_tag = tags[-1]
        lines = np.arange(start, self.line_no + 1, dtype=np.int32)
        self.columns.extend(lines, np.array(index, dtype=np.int32), docids, values)
        return True

    def _line(self, line: int, content: bytes) -> None:
        """Read one line as trec_eval 9.0.8 does, noting what strict mode would not accept."""
        if line == 1 and content.startswith(BOM):
            self.bom = True
        fields = content.split()
        if fields:
            self.any_field = True
        if len(fields) < 6:
            self.error(
                line,
                f"Line {line}: expected 6 fields (query id, Q0, document id, rank, score, run tag),"
                f' found {len(fields)}; trec_eval refuses the file ("Malformed line").',
            )
            return
        if content.endswith(b"\r"):
            self.crlf += 1
        if len(fields) > 6:
            self.extra_fields += 1
            self.first_extra = self.first_extra or line
        qid, _, docid, _, score, tag = fields[:6]
        value, used = c_atof(score)
        if np.isnan(value):
            self.error(
                line,
                f"Line {line}: score '{quote(decoded(score))}' is not a number;"
                " trec_eval's ordering with NaN is undefined.",
            )
            return
        if used != len(score) or not STRICT_NUMBER.fullmatch(score):
            self.coercion_count += 1
            if len(self.coercions) < MAX_LISTED_ERRORS:
                self.coercions.append(
                    f"Line {line}: score '{quote(decoded(score))}' was read as"
                    f" {_number_text(value)}, as C atof reads it."
                )
        if tag not in self.tags:
            self.tags[tag] = line
        self.last_tag = tag
        self.buffer_lines.append(line)
        self.buffer_query.append(self.query_map.setdefault(qid, len(self.query_map)))
        self.buffer_docids.append(docid)
        self.buffer_scores.append(value)

    def _flush(self) -> None:
        """Move the buffered lines into the column store."""
        self.columns.extend(
            np.frombuffer(self.buffer_lines, dtype=np.int32),
            np.frombuffer(self.buffer_query, dtype=np.int32),
            self.buffer_docids,
            np.frombuffer(self.buffer_scores, dtype=np.float64),
        )
        self.buffer_lines = array("i")
        self.buffer_query = array("i")
        self.buffer_scores = array("d")
        self.buffer_docids = []

    def finish(self) -> tuple[TrecRun | None, list[Issue], list[str]]:
        """Check for duplicates and return (run or None, errors, tolerance report)."""
        self._flush()
        if not self.any_field:
            return None, [Issue(None, "The file is empty.")], []
        queries = tuple(decoded(q) for q in self.query_map)
        lines, query_index, docids, doubles = self.columns.arrays()
        with np.errstate(over="ignore"):
            scores = doubles.astype(np.float32)
        for line, message in repeated_pairs(lines, query_index, docids, queries, "document"):
            self.error(line, f"{message}; trec_eval stops on duplicate documents.")
        if self.errors:
            return None, by_line(self.errors), self.report()
        return (
            TrecRun(decoded(self.last_tag), queries, query_index, docids, scores),
            [],
            self.report(),
        )

    def report(self) -> list[str]:
        """Return the tolerance report: what was read differently from strict mode."""
        report = []
        if self.bom:
            report.append(
                "Line 1 starts with a byte-order mark; as in trec_eval it is part of the query id."
            )
        if self.crlf:
            report.append(
                f"{plural(self.crlf, 'line ends', 'lines end')} with CR LF;"
                " the CR was read as white space."
            )
        if self.extra_fields:
            report.append(
                f"{plural(self.extra_fields, 'line has', 'lines have')} more than 6 fields"
                f" (first: line {self.first_extra}); the extra fields were ignored."
            )
        report.extend(self.coercions)
        if self.coercion_count > len(self.coercions):
            rest = self.coercion_count - len(self.coercions)
            report.append(f"… and {plural(rest, 'more score coercion', 'more score coercions')}.")
        if len(self.tags) > 1:
            first_tag, first_line = next(iter(self.tags.items()))
            report.append(
                f"The run has {len(self.tags):,} different run tags"
                f" (first '{quote(decoded(first_tag))}' on line {first_line}); the last line's tag"
                f" '{quote(decoded(self.last_tag))}' is kept, as trec_eval does."
            )
        return report


def parse_lenient(lines: RunSource) -> tuple[TrecRun | None, list[Issue], list[str]]:
    """Read a historical run with trec_eval 9.0.8's input tolerance.

    Fields are split on any white space and fields after the 6th are ignored; fields 2 and 4
    are never read; scores are read as C ``atof`` reads them (longest numeric prefix, hex
    floats, inf; no prefix = 0), each coercion reported; NaN is refused; any id string is
    accepted with no per-query cap; mixed run tags keep the last line's. Refused: lines with
    fewer than 6 fields, a duplicate document within a query, an empty file. Returns (run or
    None, errors, tolerance report lines).
    """
    parser = _LenientParser()
    try:
        for chunk in line_chunks(lines):
            parser.feed(chunk)
        return parser.finish()
    except TooManyErrors:
        errors = by_line(parser.errors)
        errors.append(
            Issue(
                None,
                f"Reading stopped after {MAX_COLLECTED_ERRORS:,} errors;"
                " the rest of the file was not checked.",
            )
        )
        return None, errors, parser.report()
