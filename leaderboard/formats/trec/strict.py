"""Strict validation of participant runs, in one streaming pass."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from leaderboard.formats.issues import Issue, quote
from leaderboard.formats.trec.blocks import line_chunks, padded_blocks
from leaderboard.formats.trec.columns import (
    INTEGER,
    STRICT_NUMBER,
    VECTOR_MAX_FIELD,
    Columns,
    as_strings,
    decimal_values,
    digits_only,
    field_rows,
    fixed_point_values,
    six_columns,
    strict_numbers,
)
from leaderboard.formats.trec.messages import (
    MAX_COLLECTED_ERRORS,
    TooManyErrors,
    by_line,
    char_error,
    decoded,
    plural,
    short_id,
    unknown_query_message,
)
from leaderboard.formats.trec.patterns import ANY_ID, all_full_match, compiled, simple_class
from leaderboard.formats.trec.records import (
    BOM,
    MAX_LINE_BYTES,
    Readable,
    RunSource,
    TrecRun,
    TrecSettings,
)
from leaderboard.scoring.ranking import pair_hash, query_score_key

_NON_FINITE = re.compile(rb"[+-]?(?:inf(?:inity)?|nan)", re.IGNORECASE)
_ARCHIVE_MAGIC = {b"PK\x03\x04": "a zip archive", b"\x1f\x8b": "gzip-compressed"}


def _repeated(keys: NDArray[Any]) -> NDArray[np.intp]:
    """Return, ascending, the positions of values that occur more than once in ``keys``."""
    # Runs are mostly written query by query in score order, so the (query, score) keys often
    # arrive sorted: checking that costs a few milliseconds where a sort of 2 million costs 0.1 s.
    presorted = len(keys) < 2 or bool((keys[1:] >= keys[:-1]).all())
    ordered = keys if presorted else np.sort(keys)
    same = ordered[1:] == ordered[:-1]
    if not same.any():
        return np.zeros(0, dtype=np.intp)
    values = np.unique(ordered[1:][same])
    del ordered, same
    at = np.searchsorted(values, keys).clip(max=len(values) - 1)
    return np.flatnonzero(values[at] == keys)


def find_duplicates(
    query_index: NDArray[Any], docids: NDArray[Any], *, limit: int | None = None
) -> list[tuple[int, int]]:
    """Return (position, first position) for lines repeating an earlier (query, id) pair.

    With ``limit``, only the first ``limit`` repeats (by position) are returned: a file of
    one line repeated a million times costs no more than one with ``limit`` repeats.
    """
    first: dict[tuple[int, bytes], int] = {}
    repeats: list[tuple[int, int]] = []
    # Equal hashes are candidates only; the dictionary compares the pairs themselves.
    for position in _repeated(pair_hash(query_index, docids)).tolist():
        earlier = first.setdefault((int(query_index[position]), bytes(docids[position])), position)
        if earlier != position:
            repeats.append((position, earlier))
            if limit is not None and len(repeats) >= limit:
                break
    return repeats


def repeated_pairs(
    lines: NDArray[Any],
    query_index: NDArray[Any],
    docids: NDArray[Any],
    queries: Sequence[str],
    noun: str,
) -> Iterator[tuple[int, str]]:
    """Yield (line, message) for the first lines that repeat an earlier (query, id) pair.

    The message ends without a full stop, for the caller to say what a repeat means.
    """
    for position, earlier in find_duplicates(query_index, docids, limit=MAX_COLLECTED_ERRORS):
        line = int(lines[position])
        yield (
            line,
            (
                f"Line {line}: {noun} {short_id(bytes(docids[position]))} already listed for query"
                f" '{quote(queries[query_index[position]])}' on line {lines[earlier]}"
            ),
        )


def _precision_ties(
    query_index: NDArray[Any], doubles: NDArray[np.float64]
) -> tuple[int, int, int]:
    """Count adjacent distinct doubles of one query that are equal as float32.

    Returns (count, position, position) with the example pair whose first line comes first;
    count 0 when there are none.
    """
    key = query_score_key(query_index, doubles)
    tied = _repeated(key)
    if not len(tied):
        return 0, -1, -1
    tied = tied[np.lexsort((doubles[tied], key[tied]))]
    pair = (key[tied][1:] == key[tied][:-1]) & (doubles[tied][1:] != doubles[tied][:-1])
    count = int(pair.sum())
    if not count:
        return 0, -1, -1
    at = np.flatnonzero(pair)
    left, right = tied[at], tied[at + 1]
    best = int(np.argmin(np.minimum(left, right)))
    a, b = int(left[best]), int(right[best])
    return count, min(a, b), max(a, b)


#: Where a run name came from when the caller does not say (the web form says "entered in the form").
NAME_SOURCE = "given with the upload"


class _StrictValidator:
    """State of one strict validation pass."""

    def __init__(self, topics: frozenset[str], settings: TrecSettings) -> None:
        self.settings = settings
        self.queries = tuple(sorted(topics))
        self.query_map = {q.encode(): i for i, q in enumerate(self.queries)}
        self.tag_re = compiled(settings.tag_pattern)
        self.errors: list[Issue] = []
        self.warnings: list[Issue] = []
        self.line_no = 0
        self.started = False
        self.seen_data = False
        self.pending_blank: list[int] = []
        self.crlf = False
        self.cr = False
        self.first_tag: bytes | None = None
        self.first_tag_line = 0
        self.q0_wrong = 0
        self.q0_first: tuple[int, bytes] | None = None
        self.columns = Columns()
        # Lines per query, counting lines with other errors too: the per-query cap counts every
        # line, so a run cannot pass it by making its surplus lines malformed.
        self.query_lines = np.zeros(len(self.queries), dtype=np.int64)

    def error(self, line: int | None, message: str) -> None:
        """Record an error; stop the pass once MAX_COLLECTED_ERRORS are collected."""
        self.errors.append(Issue(line, message))
        if len(self.errors) >= MAX_COLLECTED_ERRORS:
            raise TooManyErrors

    def warn(self, message: str) -> None:
        """Record a file-level warning."""
        self.warnings.append(Issue(None, message, "warning"))

    # -- physical lines ---------------------------------------------------------------------

    def feed(self, blob: bytes) -> None:
        """Check a chunk of whole physical lines (ending with b"\\n" unless it ends the file)."""
        self.feed_padded(np.frombuffer(blob + bytes(VECTOR_MAX_FIELD), dtype=np.uint8), len(blob))

    def feed_padded(self, padded: NDArray[np.uint8], size: int) -> None:
        """Check a chunk given as its ``size`` bytes followed by VECTOR_MAX_FIELD spare bytes.

        The spare bytes may hold anything; the array may be a view of a reused buffer.
        """
        if not self.started:
            self.started = True
            if size >= len(BOM) and padded[: len(BOM)].tobytes() == BOM:
                padded, size = padded[len(BOM) :], size - len(BOM)
                self.warn("The file started with a byte-order mark; it was removed.")
            head = padded[: min(size, 4)].tobytes()
            for magic, kind in _ARCHIVE_MAGIC.items():
                if head.startswith(magic):
                    self.seen_data = True
                    self.error(None, f"The file is {kind}; upload a plain-text or .gz run file.")
                    raise TooManyErrors
        if not self._feed_vector(padded, size):
            blob = padded[:size].tobytes()
            lines = blob.split(b"\n")
            if lines[-1] == b"":
                lines.pop()
            if lines and not self._feed_fast(blob, lines):
                self._feed_slow(blob)
        self._check_depth()

    def _check_depth(self) -> None:
        """Stop at once when a query has far more lines than allowed: the file is no run.

        Up to twice the limit, the whole file is read and the exact count reported.
        """
        cap = 2 * self.settings.max_per_query
        over = np.flatnonzero(self.query_lines > cap)
        if len(over):
            self.errors.append(
                Issue(
                    None,
                    f"Query '{quote(self.queries[over[0]])}' has more than {cap:,} lines by line"
                    f" {self.line_no:,}; at most {self.settings.max_per_query:,} are allowed."
                    " Checking stopped there.",
                )
            )
            raise TooManyErrors

    def _feed_vector(self, padded: NDArray[np.uint8], size: int) -> bool:
        """Accept a chunk of lines without any error using array operations alone.

        Handles the common shape (printable ASCII, single space/TAB separators, LF endings,
        the generic or a simple id pattern, digit ranks, plain decimal scores, one run tag) without a Python
        object per field. Returns False, having changed nothing, for any chunk it cannot
        accept whole; the per-field paths then report exactly what is wrong.
        """
        settings = self.settings
        any_id = settings.docid_pattern == ANY_ID
        id_class = None if any_id else simple_class(settings.docid_pattern)
        if (id_class is None and not any_id) or self.pending_blank or not size:
            return False
        data = padded[:size]
        if data.max() > 0x7E:
            return False
        ends = np.flatnonzero(data <= 32)
        separator = padded[ends]
        # Bytes up to 0x20 must be TAB, LF or space: these end the fields.
        if not ((separator == 32) | (separator == 9) | (separator == 10)).all():
            return False
        newlines = int(np.count_nonzero(separator == 10))
        if data[-1] != 10:
            ends = np.append(ends, size)
        n = len(ends) // 6
        if n == 0 or len(ends) != 6 * n or newlines not in (n, n - 1):
            return False
        line_ends = ends[5::6]
        # Every LF ends the 6th field of a line: each line has exactly 5 separators.
        if not (padded[line_ends[:newlines]] == 10).all():
            return False
        begins = np.empty_like(ends)
        begins[0] = 0
        begins[1:] = ends[:-1] + 1
        widths = ends - begins
        # An empty field means a blank line or a leading, trailing or doubled separator.
        if widths.min() < 1 or widths.max() > VECTOR_MAX_FIELD:
            return False
        if (line_ends - begins[0::6]).max() > MAX_LINE_BYTES:
            return False
        starts, lengths = begins.reshape(n, 6), widths.reshape(n, 6)

        qids = as_strings(field_rows(padded, starts[:, 0], lengths[:, 0], 0))
        segment = np.flatnonzero(qids[1:] != qids[:-1]) + 1
        segment = np.concatenate(([0], segment))
        known = list(map(self.query_map.get, qids[segment].tolist()))
        if None in known:
            return False
        sizes = np.diff(segment, append=n)
        query_index = np.repeat(np.array(known, dtype=np.int32), sizes)

        if id_class is None:
            # Every byte checked above is printable and no separator: the generic pattern holds.
            ids = field_rows(padded, starts[:, 2], lengths[:, 2], 0)
        else:
            allowed, low, high = id_class
            if lengths[:, 2].min() < low or lengths[:, 2].max() > high:
                return False
            ids = field_rows(padded, starts[:, 2], lengths[:, 2], allowed[0])
            if ids.tobytes().translate(None, allowed):
                return False
            if lengths[:, 2].min() < ids.shape[1]:
                ids[np.arange(ids.shape[1]) >= lengths[:, 2, None]] = 0
        if not digits_only(padded, starts[:, 3], lengths[:, 3]):
            return False
        values = fixed_point_values(padded, starts[:, 4], lengths[:, 4])
        if values is None:
            values = decimal_values(field_rows(padded, starts[:, 4], lengths[:, 4], 0))
        if values is None:
            return False
        with np.errstate(over="ignore"):
            if not np.isfinite(values.astype(np.float32)).all():
                return False
        tags = as_strings(field_rows(padded, starts[:, 5], lengths[:, 5], 0))
        first = self.first_tag if self.first_tag is not None else bytes(tags[0])
        if self.first_tag is None and not self.tag_re.fullmatch(first):
            return False
        if not (tags == first).all():
            return False
        q0 = starts[:, 1]
        is_q0 = (lengths[:, 1] == 2) & (padded[q0] == ord("Q")) & (padded[q0 + 1] == ord("0"))

        start = self.line_no + 1
        self.line_no += n
        self._flush_blank()
        if self.first_tag is None:
            self.first_tag, self.first_tag_line = first, start
        wrong_q0 = n - int(is_q0.sum())
        if wrong_q0:
            if self.q0_first is None:
                i = int(np.argmin(is_q0))
                self.q0_first = (start + i, padded[q0[i] : q0[i] + lengths[i, 1]].tobytes())
            self.q0_wrong += wrong_q0
        self.query_lines += np.bincount(query_index, minlength=len(self.queries))
        lines = np.arange(start, self.line_no + 1, dtype=np.int32)
        self.columns.extend_strings(lines, query_index, as_strings(ids), values)
        return True

    def _feed_fast(self, blob: bytes, lines: list[bytes]) -> bool:
        """Accept a chunk of well-formed lines in bulk; return False to take the slow path."""
        columns = six_columns(blob, lines)
        if columns is None:
            return False
        start = self.line_no + 1
        self.line_no += len(lines)
        self.crlf = self.crlf or b"\r" in blob
        self._flush_blank()
        self._accept(range(start, self.line_no + 1), *columns)
        return True

    def _feed_slow(self, blob: bytes) -> None:
        """Check a chunk line by line, with exact messages for every malformed line."""
        linenos: list[int] = []
        columns: list[list[bytes]] = [[] for _ in range(6)]
        for content in self._physical_lines(blob):
            self.line_no += 1
            fields = self._check_line(self.line_no, content)
            if fields is not None:
                linenos.append(self.line_no)
                for column, value in zip(columns, fields, strict=True):
                    column.append(value)
        self._accept(linenos, *columns)

    def _physical_lines(self, raw: bytes) -> Iterator[bytes]:
        """Yield the lines of a chunk without endings, splitting CR-only endings too."""
        pieces = raw.split(b"\n")
        terminated = len(pieces) - 1
        if pieces[-1] == b"":
            pieces.pop()
        for k, piece in enumerate(pieces):
            if k < terminated and piece.endswith(b"\r"):
                piece = piece[:-1]
                self.crlf = True
            if b"\r" in piece:
                self.cr = True
                parts = piece.split(b"\r")
                if parts[-1] == b"":
                    parts.pop()
                yield from parts
            else:
                yield piece

    def _check_line(self, line: int, content: bytes) -> list[bytes] | None:
        """Return the 6 fields of a line, or None after recording why it has none."""
        if len(content) > MAX_LINE_BYTES:
            self._flush_blank()
            self.error(line, f"Line {line} is longer than {MAX_LINE_BYTES} bytes.")
            return None
        if not content.strip(b" \t"):
            self.pending_blank.append(line)
            return None
        self._flush_blank()
        message = char_error(line, content)
        if message is not None:
            self.error(line, message)
            return None
        fields = content.split()
        if len(fields) != 6:
            noun = self.settings.doc_noun
            self.error(
                line,
                f"Line {line}: expected 6 fields (query id, Q0, {noun} id, rank, score, run tag),"
                f" found {len(fields)}.",
            )
            return None
        return fields

    def _flush_blank(self) -> None:
        """Report the empty lines seen so far as errors: a data line follows them."""
        self.seen_data = True
        pending, self.pending_blank = self.pending_blank, []
        for line in pending:
            self.error(line, f"Line {line} is empty.")

    # -- fields -----------------------------------------------------------------------------

    def _accept(
        self,
        linenos: Sequence[int],
        qids: list[bytes],
        q0s: list[bytes],
        docids: list[bytes],
        ranks: list[bytes],
        scores: list[bytes],
        tags: list[bytes],
    ) -> None:
        """Check the fields of 6-field lines and keep the good ones as arrays."""
        n = len(qids)
        if n == 0:
            return
        settings = self.settings
        bad = np.zeros(n, dtype=bool)
        index = list(map(self.query_map.get, qids))
        if None in index:
            for i, value in enumerate(index):
                if value is None:
                    index[i] = -1
                    bad[i] = True
                    self.error(linenos[i], unknown_query_message(linenos[i], qids[i], settings))
        if not all_full_match(docids, settings.docid_pattern):
            docid_re = compiled(settings.docid_pattern)
            for i, docid in enumerate(docids):
                if not docid_re.fullmatch(docid):
                    bad[i] = True
                    self.error(
                        linenos[i],
                        f"Line {linenos[i]}: {settings.doc_noun} id '{quote(decoded(docid))}'"
                        f" must be {settings.docid_hint}.",
                    )
        if not b"".join(ranks).isdigit():
            for i, rank in enumerate(ranks):
                if not INTEGER.fullmatch(rank):
                    bad[i] = True
                    self.error(
                        linenos[i],
                        f"Line {linenos[i]}: rank '{quote(decoded(rank))}' must be an integer.",
                    )
        values = self._scores(linenos, scores, bad)
        self._tags(linenos, tags, bad)
        wrong_q0 = n - q0s.count(b"Q0")
        if wrong_q0:
            if self.q0_first is None:
                i = next(i for i, value in enumerate(q0s) if value != b"Q0")
                self.q0_first = (linenos[i], q0s[i])
            self.q0_wrong += wrong_q0
        if isinstance(linenos, range):
            lines = np.arange(linenos.start, linenos.stop, dtype=np.int32)
        else:
            lines = np.asarray(linenos, dtype=np.int32)
        query_index = np.asarray(index, dtype=np.int32)
        self.query_lines += np.bincount(query_index + 1, minlength=len(self.queries) + 1)[1:]
        if bad.any():
            keep = ~bad
            lines, query_index, values = lines[keep], query_index[keep], values[keep]
            docids = list(itertools.compress(docids, keep.tolist()))
        self.columns.extend(lines, query_index, docids, values)

    def _scores(
        self, linenos: Sequence[int], scores: list[bytes], bad: NDArray[np.bool_]
    ) -> NDArray[np.float64]:
        """Parse scores as doubles; record scores that are not numbers or not finite as float32."""
        values = strict_numbers(scores)
        if values is None:
            values = np.zeros(len(scores))
            for i, text in enumerate(scores):
                if STRICT_NUMBER.fullmatch(text):
                    values[i] = float(text)
                elif _NON_FINITE.fullmatch(text):
                    values[i] = np.inf
                else:
                    bad[i] = True
                    self.error(
                        linenos[i],
                        f"Line {linenos[i]}: score '{quote(decoded(text))}' is not a number.",
                    )
        with np.errstate(over="ignore"):
            infinite = ~np.isfinite(values.astype(np.float32)) & ~bad
        for i in np.flatnonzero(infinite).tolist():
            bad[i] = True
            self.error(
                linenos[i],
                f"Line {linenos[i]}: score '{quote(decoded(scores[i]))}' must be a finite number.",
            )
        return values

    def _tags(self, linenos: Sequence[int], tags: list[bytes], bad: NDArray[np.bool_]) -> None:
        """Check the first run tag against the pattern and every other tag against the first."""
        if self.first_tag is None:
            self.first_tag, self.first_tag_line = tags[0], linenos[0]
            if not self.tag_re.fullmatch(tags[0]):
                self.error(
                    linenos[0],
                    f"Line {linenos[0]}: run tag '{quote(decoded(tags[0]))}' must be"
                    f" {self.settings.tag_hint}.",
                )
        first = self.first_tag
        if len(set(tags)) == 1 and tags[0] == first:
            return
        for i, tag in enumerate(tags):
            if tag != first:
                bad[i] = True
                self.error(
                    linenos[i],
                    f"Line {linenos[i]}: run tag '{quote(decoded(tag))}' differs from"
                    f" '{quote(decoded(first))}' on line {self.first_tag_line}.",
                )

    # -- whole file -------------------------------------------------------------------------

    def finish(
        self, form_run_name: str | None, name_source: str = NAME_SOURCE
    ) -> tuple[TrecRun | None, list[Issue], list[Issue]]:
        """Run the whole-file checks and return (run or None, errors, warnings)."""
        if not self.seen_data:
            return None, [Issue(None, "The file is empty.")], self.warnings
        settings = self.settings
        if self.crlf:
            self.warn("Windows (CRLF) line endings were normalised.")
        if self.cr:
            self.warn("Classic Mac (CR) line endings were normalised.")
        if self.pending_blank:
            count = len(self.pending_blank)
            verb = "was" if count == 1 else "were"
            self.warn(
                f"{plural(count, 'empty line', 'empty lines')} at the end of the file"
                f" {verb} ignored."
            )
        if self.q0_first is not None:
            line, value = self.q0_first
            count = self.q0_wrong
            counted = plural(count, "line", "lines")
            first = f"line {line}" if count == 1 else f"first: line {line}"
            verb = "has" if count == 1 else "have"
            self.warn(
                f"{counted} ({first}) {verb} '{quote(decoded(value))}' instead of 'Q0' in field 2;"
                " the field is ignored."
            )
        lines, query_index, docids, doubles = self.columns.arrays()

        counts = self.query_lines
        over = np.flatnonzero(counts > settings.max_per_query).tolist()
        if over and settings.over_limit == "truncate":
            listed = ", ".join(f"'{quote(self.queries[q])}' ({counts[q]:,})" for q in over[:10])
            more = f" and {len(over) - 10:,} more" if len(over) > 10 else ""
            self.warn(
                f"{plural(len(over), 'query has', 'queries have')} more than"
                f" {settings.max_per_query:,} lines: {listed}{more}; only the first"
                f" {settings.max_per_query:,} by score are scored (trec_eval -M)."
            )
            over = []
        for q in over:
            self.error(
                None,
                f"Query '{quote(self.queries[q])}' has {counts[q]:,} lines;"
                f" at most {settings.max_per_query:,} are allowed.",
            )
        for line, message in repeated_pairs(
            lines, query_index, docids, self.queries, settings.doc_noun
        ):
            self.error(line, f"{message}.")
        if not self.errors:
            self._coverage_warnings(counts, lines, query_index, doubles)
        tag = decoded(self.first_tag or b"")
        if form_run_name is not None and tag != form_run_name:
            self.warn(
                f"The run tag '{quote(tag)}' differs from the run name '{quote(form_run_name)}'"
                f" {name_source}."
            )
        if self.errors:
            return None, by_line(self.errors), self.warnings
        with np.errstate(over="ignore"):
            scores = doubles.astype(np.float32)
        run = TrecRun(tag, self.queries, query_index, docids, scores)
        return run, [], self.warnings

    def _coverage_warnings(
        self,
        counts: NDArray[np.int64],
        lines: NDArray[np.int32],
        query_index: NDArray[np.int32],
        doubles: NDArray[np.float64],
    ) -> None:
        """Warn about topics without lines and distinct scores that tie as float32."""
        missing = np.flatnonzero(counts == 0)
        if len(missing):
            total = len(self.queries)
            first = quote(self.queries[missing[0]])
            if len(missing) == 1:
                self.warn(
                    f"1 of {total:,} topics has no results ('{first}')."
                    " It counts as 0 on every measure."
                )
            else:
                self.warn(
                    f"{len(missing):,} of {total:,} topics have no results (first: '{first}')."
                    " Each counts as 0 on every measure."
                )
        count, a, b = _precision_ties(query_index, doubles)
        if count:
            example = (
                f"line {lines[a]} '{float(doubles[a])!r}'"
                f" and line {lines[b]} '{float(doubles[b])!r}'"
            )
            noun = self.settings.doc_noun
            if count == 1:
                self.warn(
                    f"1 score pair differs only beyond single precision ({example}); it is"
                    f" treated as a tie and ordered by {noun} id, as trec_eval does."
                )
            else:
                self.warn(
                    f"{count:,} score pairs differ only beyond single precision (e.g. {example});"
                    f" they are treated as ties and ordered by {noun} id, as trec_eval does."
                )

    def stopped(self) -> list[Issue]:
        """Return the errors collected before validation stopped early."""
        errors = by_line(self.errors)
        if len(errors) >= MAX_COLLECTED_ERRORS:
            errors.append(
                Issue(
                    None,
                    f"Checking stopped after {MAX_COLLECTED_ERRORS:,} errors;"
                    " the rest of the file was not checked.",
                )
            )
        return errors


def validate_run(
    lines: RunSource,
    *,
    topics: frozenset[str],
    settings: TrecSettings,
    form_run_name: str | None = None,
    name_source: str = NAME_SOURCE,
) -> tuple[TrecRun | None, list[Issue], list[Issue]]:
    """Validate a participant run strictly in one streaming pass.

    ``form_run_name`` is the run name given with the upload, if any; ``name_source`` says where
    it was given, as the warning about a different run tag words it ("entered in the form").

    ``lines`` are physical lines as bytes (each ending with b"\\n" except possibly the last),
    e.g. a file or gzip stream iterated line by line. Returns (run or None, errors, warnings);
    the run is None whenever there is an error. Errors are ordered by line number.
    """
    validator = _StrictValidator(topics, settings)
    try:
        if callable(getattr(lines, "read", None)):
            for padded, size in padded_blocks(cast(Readable, lines)):
                validator.feed_padded(padded, size)
        else:
            for chunk in line_chunks(lines):
                validator.feed(chunk)
    except TooManyErrors:
        return None, validator.stopped(), validator.warnings
    try:
        return validator.finish(form_run_name, name_source)
    except TooManyErrors:
        return None, validator.stopped(), validator.warnings
