"""SemEval-2016 Task 3 (CQA) files: gold parser, strict validator, legacy importer, writer."""

from __future__ import annotations

import functools
import math
import unicodedata
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from leaderboard.formats.issues import Issue, IssueLog, quote
from leaderboard.formats.trec.columns import digits_only, fixed_point_values

#: Longest accepted line of an upload, in bytes (strict mode).
MAX_LINE_BYTES = 4096
#: How many questions the "candidates are missing" message names before "and N more".
MISSING_QUESTIONS_NAMED = 5

_BOM = b"\xef\xbb\xbf"
_LABELS = {"true": True, "false": False}
_LEGACY_LABELS = {b"true": True, b"false": False}
_SCORE_CHARS = frozenset("0123456789+-.eE")
_NON_FINITE_NAMES = frozenset({"nan", "inf", "infinity"})


class GoldFormatError(ValueError):
    """Raised for a malformed gold file; ``line`` is 1-based (None for file-level problems)."""

    def __init__(self, line: int | None, message: str) -> None:
        self.line = line
        self.message = message
        super().__init__(message if line is None else f"Line {line}: {message}")


@dataclass(frozen=True, eq=False)
class CqaGold:
    """A parsed gold ("relevancy") file: one row per line, rows in gold order."""

    qids: tuple[str, ...]
    cids: tuple[str, ...]
    positions: tuple[str, ...]
    ir_scores: np.ndarray
    labels: np.ndarray
    questions: tuple[str, ...]
    question_starts: np.ndarray
    index: dict[tuple[str, str], int]

    @functools.cached_property
    def qid_bytes(self) -> list[bytes]:
        """Return the question ids in gold order, as ASCII bytes (for the fast path)."""
        return [q.encode() for q in self.qids]

    @functools.cached_property
    def cid_bytes(self) -> list[bytes]:
        """Return the candidate ids in gold order, as ASCII bytes (for the fast path)."""
        return [c.encode() for c in self.cids]

    @functools.cached_property
    def pair_lengths(self) -> np.ndarray:
        """Return the length of each row's "question TAB candidate" in bytes (array path)."""
        return np.array(
            [len(q) + 1 + len(c) for q, c in zip(self.qid_bytes, self.cid_bytes, strict=True)],
            dtype=np.intp,
        )

    @functools.cached_property
    def pair_words(self) -> tuple[np.ndarray, np.ndarray]:
        """Return each row's "question TAB candidate" and a mask of its bytes, as 64-bit words.

        Row i holds the pair's bytes zero-padded to a multiple of 8 bytes (the widest pair's);
        the mask has 0xFF on the pair's bytes and 0 after them (array path).
        """
        width = -(-int(self.pair_lengths.max()) // 8) * 8
        text = np.zeros((len(self), width), dtype=np.uint8)
        mask = np.zeros((len(self), width), dtype=np.uint8)
        for row, (q, c) in enumerate(zip(self.qid_bytes, self.cid_bytes, strict=True)):
            pair = q + b"\t" + c
            text[row, : len(pair)] = np.frombuffer(pair, dtype=np.uint8)
            mask[row, : len(pair)] = 0xFF
        return text.view(np.uint64), mask.view(np.uint64)

    def __len__(self) -> int:
        """Return the number of gold lines."""
        return len(self.qids)


@dataclass(frozen=True)
class Truncation:
    """How much of the gold file a truncated legacy run covered."""

    lines_used: int
    lines_total: int
    questions_used: int
    questions_total: int

    def note(self) -> str:
        """Return the table footnote text for a run scored on a truncated file."""
        return (
            f"scored on the first {self.lines_used:,} of {self.lines_total:,} lines "
            f"({self.questions_used:,} of {self.questions_total:,} questions), "
            "as in the official 2016 evaluation"
        )


@dataclass(frozen=True, eq=False)
class CqaRun:
    """A run's scores and predicted labels for the first ``rows`` gold rows, in gold order."""

    rows: int
    scores: np.ndarray
    predicted: np.ndarray


@dataclass(frozen=True)
class CqaVerdict:
    """The outcome of validating or importing one run file."""

    run: CqaRun | None
    errors: list[Issue]
    warnings: list[Issue]
    tolerances: tuple[str, ...] = ()
    truncation: Truncation | None = None
    #: Errors found beyond those kept in ``errors`` (a validation keeps a bounded number).
    more_errors: int = 0

    @property
    def ok(self) -> bool:
        """Return whether the file was accepted."""
        return not self.errors


# --------------------------------------------------------------------------------------------
# Gold files


def parse_gold(data: bytes) -> CqaGold:
    """Parse a gold file: 5 TAB columns, contiguous question blocks, labels ``true``/``false``."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GoldFormatError(None, f"not valid UTF-8 (byte offset {exc.start})") from exc
    text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if not lines:
        raise GoldFormatError(None, "the gold file is empty")
    qids: list[str] = []
    cids: list[str] = []
    positions: list[str] = []
    ir_scores: list[float] = []
    labels: list[bool] = []
    questions: list[str] = []
    starts: list[int] = []
    index: dict[tuple[str, str], int] = {}
    seen_questions: set[str] = set()
    for row, line in enumerate(lines):
        number = row + 1
        fields = line.split("\t")
        if len(fields) != 5:
            raise GoldFormatError(number, f"expected 5 TAB-separated columns, found {len(fields)}")
        qid, cid, position, ir_text, label = fields
        if not qid or not cid:
            raise GoldFormatError(number, "empty question or candidate id")
        try:
            ir_score = float(ir_text)
        except ValueError:
            raise GoldFormatError(number, f"IR score '{quote(ir_text)}' is not a number") from None
        if not math.isfinite(ir_score):
            raise GoldFormatError(number, f"IR score '{quote(ir_text)}' is not finite")
        if label not in _LABELS:
            raise GoldFormatError(number, f"label '{quote(label)}' is not 'true' or 'false'")
        if not questions or questions[-1] != qid:
            if qid in seen_questions:
                raise GoldFormatError(number, f"question '{qid}' occurs in more than one block")
            seen_questions.add(qid)
            questions.append(qid)
            starts.append(row)
        if (qid, cid) in index:
            raise GoldFormatError(
                number, f"duplicate pair ({qid}, {cid}); first on line {index[(qid, cid)] + 1}"
            )
        index[(qid, cid)] = row
        qids.append(qid)
        cids.append(cid)
        positions.append(position)
        ir_scores.append(ir_score)
        labels.append(_LABELS[label])
    return CqaGold(
        qids=tuple(qids),
        cids=tuple(cids),
        positions=tuple(positions),
        ir_scores=np.array(ir_scores, dtype=np.float64),
        labels=np.array(labels, dtype=bool),
        questions=tuple(questions),
        question_starts=np.array(starts, dtype=np.int64),
        index=index,
    )


# --------------------------------------------------------------------------------------------
# Strict validation of participant uploads: every error at once, no gold label revealed


def validate_strict(data: bytes, gold: CqaGold, *, where: str) -> CqaVerdict:
    """Validate an upload strictly, collecting every error and warning, and return its verdict.

    ``where`` (e.g. "subtask D (test)") names the phase in messages. ``data`` is the decompressed
    file content. A valid run is re-sorted into gold order (with a warning if it was not in it).
    Any error rejects the file; warnings (BOM, CRLF or CR, blank lines at the end, spaces as
    separators, non-integer ranks, lines out of gold order, questions with all scores equal)
    do not.
    """
    if not data.strip():
        return _refused([Issue(None, "The file is empty.")])
    warnings: list[Issue] = []
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
        warnings.append(
            Issue(None, "The file started with a byte-order mark; it was removed.", "warning")
        )
        if not data.strip():
            return _refused([Issue(None, "The file is empty.")], warnings)
    if b"\r" in data:
        warnings.append(Issue(None, _line_ending_message(data), "warning"))
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    # A clean file (the usual case) is accepted whole; anything else is checked line by line.
    clean = _clean_rows(data[:-1] if data.endswith(b"\n") else data, gold)
    if clean is not None:
        run, order_warnings = _ordered_run(gold, *clean)
        return CqaVerdict(run=run, errors=[], warnings=warnings + order_warnings)
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # the final newline ends the last line; it does not start an empty one
    used = len(lines)
    while used > 0 and not lines[used - 1].strip():
        used -= 1
    trailing = len(lines) - used
    if trailing:
        warnings.append(Issue(None, _trailing_message(trailing), "warning"))

    checker = _StrictChecker(gold, where)
    for number in range(1, used + 1):
        checker.check_line(number, lines[number - 1])
    errors = checker.file_errors(used) + checker.errors.kept
    warnings.extend(checker.format_warnings())
    if errors:
        return CqaVerdict(
            run=None, errors=errors, warnings=warnings, more_errors=checker.errors.dropped
        )
    run, order_warnings = checker.build_run()
    return CqaVerdict(run=run, errors=[], warnings=warnings + order_warnings)


_PRINTABLE = bytes(range(0x21, 0x7F)) + b"\t\n"
_SCORE_BYTES = b"0123456789+-.eE"
_CLEAN_LABELS = frozenset({b"true", b"false"})


def _clean_rows(joined: bytes, gold: CqaGold) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Return the gold rows, scores and labels of a file that breaks no rule, else None.

    ``joined`` is the text without its final line break. A fast path over the whole text, in
    C-level bytes and array operations: it accepts a file only if the line-by-line checker
    would accept it with no error and no warning about blank lines, separators or ranks, so
    the verdicts are identical. Any doubt (a space, a signed rank, an odd score) returns None.
    """
    n = len(gold)
    if not joined or joined.count(b"\n") != n - 1:
        return None
    if joined.translate(None, _PRINTABLE):
        return None  # a space, or a character other than printable ASCII and TAB
    in_order = _gold_order_rows(joined, gold)
    if in_order is not None:
        return in_order
    breaks = np.flatnonzero(np.frombuffer(joined, dtype=np.uint8) == 0x0A)
    if np.diff(breaks, prepend=-1, append=len(joined)).max() - 1 > MAX_LINE_BYTES:
        return None
    # Every line has exactly 5 TAB-separated fields iff every 6th field is the line break.
    fields = joined.replace(b"\n", b"\t\n\t").split(b"\t")
    if len(fields) != 6 * n - 1 or fields[5::6] != [b"\n"] * (n - 1):
        return None
    qids, cids, ranks, scores_text, labels = (fields[k::6] for k in range(5))
    if b"" in ranks or not b"".join(ranks).isdigit():
        return None  # a signed, empty or non-integer rank: the checker decides
    if b"".join(scores_text).translate(None, _SCORE_BYTES) or not set(labels) <= _CLEAN_LABELS:
        return None
    try:
        scores = np.fromiter(map(float, scores_text), dtype=np.float64, count=n)
    except ValueError:
        return None  # e.g. "", "." or "1e": the checker names the line
    if not np.isfinite(scores).all():
        return None
    if qids == gold.qid_bytes and cids == gold.cid_bytes:
        rows = np.arange(n)  # the usual case: the run is in the official order
    else:
        index = gold.index
        found = [index.get((q.decode(), c.decode())) for q, c in zip(qids, cids, strict=True)]
        if None in found or len(set(found)) != n:
            return None
        rows = np.array(found, dtype=np.int64)
    # Labels are "true" or "false" (checked above): their lengths tell them apart.
    return rows, scores, np.fromiter(map(len, labels), dtype=np.int64, count=n) == 4


#: Widest rank the array path reads; a file with a wider one takes the bytes path.
_ARRAY_MAX_RANK = 8
_TRUE_WORD = np.uint64(int.from_bytes(b"true", "little"))
_FALSE_WORD = np.uint64(int.from_bytes(b"false", "little"))
_LOW4 = np.uint64(0xFFFF_FFFF)
_LOW5 = np.uint64(0xFF_FFFF_FFFF)


def _gold_order_rows(
    joined: bytes, gold: CqaGold
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Return what _clean_rows returns for a clean file in gold order with ``%.kf`` scores.

    The usual upload, read with array operations over the bytes alone (no field objects, no
    float() per score): ``joined`` has passed _clean_rows' line count and character checks.
    Any other file (another order, other score layouts, long ranks) returns None and takes
    the bytes path, which accepts every file this path accepts, with the same arrays.
    """
    n = len(gold)
    raw = np.frombuffer(joined, dtype=np.uint8)
    # Only TAB (9) and LF (10) are below "!" here; every line needs 4 TABs and then its LF.
    separators = np.flatnonzero(raw <= 10)
    if separators.size != 5 * n - 1 or (raw[separators[4::5]] != 10).any():
        return None
    # ends[i, k]: where field k of line i ends (at its TAB or LF); a field starts after the
    # end of the one before it.
    flat = np.empty(5 * n, dtype=np.intp)
    flat[:-1] = separators
    flat[-1] = raw.size
    ends = flat.reshape(n, 5)
    line = np.empty(n, dtype=np.intp)
    line[0] = 0
    line[1:] = ends[:-1, 4] + 1
    if int((ends[:, 4] - line).max()) > MAX_LINE_BYTES:
        return None
    # Question and candidate ids: each line's "q TAB c" has the gold row's length and bytes.
    if not np.array_equal(ends[:, 1] - line, gold.pair_lengths):
        return None
    words, mask = gold.pair_words
    width = words.shape[1] * 8
    padded = np.zeros(raw.size + max(width, _ARRAY_MAX_RANK, 8), dtype=np.uint8)
    padded[: raw.size] = raw
    # Each line's first bytes as 64-bit words, compared under the mask of its gold pair.
    lines = sliding_window_view(padded, width)[line].view(np.uint64)
    if not np.array_equal(lines & mask, words):
        return None
    rank = ends[:, 1] + 1
    ranks = ends[:, 2] - rank
    if int(ranks.min()) < 1 or int(ranks.max()) > _ARRAY_MAX_RANK:
        return None
    if not digits_only(padded, rank, ranks):
        return None
    # Labels: "true" or "false" exactly, as the first 4 or 5 bytes of a little-endian word
    # (the padding reads past the last one).
    label = ends[:, 3] + 1
    words8 = sliding_window_view(padded, 8)[label].view("<u8").ravel()
    length = ends[:, 4] - label
    true = (length == 4) & (words8 & _LOW4 == _TRUE_WORD)
    false = (length == 5) & (words8 & _LOW5 == _FALSE_WORD)
    if not (true | false).all():
        return None
    # Exactly float()'s values (integer / 10**k), or None for any other layout.
    score = ends[:, 2] + 1
    scores = fixed_point_values(padded, score, ends[:, 3] - score)
    if scores is None:
        return None
    return np.arange(n), scores, true


def _line_ending_message(data: bytes) -> str:
    """Return the row-16 warning for a file with CRLF or lone-CR line endings."""
    if b"\r\n" in data:
        return "The file uses Windows (CRLF) line endings; they were normalised."
    return "The file uses old Mac (CR) line endings; they were normalised."


def _trailing_message(count: int) -> str:
    """Return the row-17 warning for ``count`` empty lines at the end of the file."""
    if count == 1:
        return "1 empty line at the end of the file was ignored."
    return f"{count:,} empty lines at the end of the file were ignored."


def _counted_lines(count: int, first: int, plural: str, singular: str) -> str:
    """Return "N lines (first: line L) <plural>" or "1 line (line L) <singular>"."""
    if count == 1:
        return f"1 line (line {first}) {singular}"
    return f"{count:,} lines (first: line {first}) {plural}"


class _StrictChecker:
    """Accumulate per-line checks of one strict validation."""

    def __init__(self, gold: CqaGold, where: str) -> None:
        self.gold = gold
        self.where = where
        self.known_questions = frozenset(gold.questions)
        self.errors = IssueLog()
        self.rows: list[int] = []
        self.scores: list[float] = []
        self.predicted: list[bool] = []
        self.first_line: dict[int, int] = {}  # gold row -> line that gave it
        self.spaced: list[int] = []
        self.bad_ranks: list[int] = []
        self.bad_rank_example = ""

    def error(self, number: int, message: str) -> None:
        """Record an error of line ``number``."""
        self.errors.append(Issue(number, message))

    def check_line(self, number: int, raw: bytes) -> None:
        """Check one line (without its line ending) and record its row if it is valid."""
        if len(raw) > MAX_LINE_BYTES:
            self.error(number, f"Line {number} is longer than {MAX_LINE_BYTES} bytes.")
            self._salvage(raw)
            return
        if not raw.strip():
            self.error(number, f"Line {number} is empty; every line must describe one candidate.")
            return
        line = self._decode(number, raw)
        if line is None:
            self._salvage(raw)
            return
        fields = line.split("\t")
        if len(fields) == 5:
            fields = [field.strip(" ") for field in fields]
        else:
            spaced = line.split()  # the line is printable ASCII: this splits on spaces and TABs
            if len(spaced) != 5:
                self.error(
                    number,
                    f"Line {number}: expected 5 TAB-separated columns (question id, candidate id, "
                    f"rank, score, label), found {len(fields)}.",
                )
                self._salvage(raw)
                return
            self.spaced.append(number)
            fields = spaced
        self._check_fields(number, fields)

    def _decode(self, number: int, raw: bytes) -> str | None:
        """Return the line as text if it is printable ASCII (plus TAB), else record an error."""
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.error(
                number,
                f"Line {number}: not valid UTF-8 (byte 0x{raw[exc.start]:02X} "
                f"at column {exc.start + 1}).",
            )
            return None
        if line.isascii() and line.replace("\t", " ").isprintable():
            return line
        column, char = next(
            (i, c) for i, c in enumerate(line, 1) if c != "\t" and not (" " <= c <= "~")
        )
        if unicodedata.category(char) == "Zs":
            advice = "separate columns with a TAB"
        else:
            advice = "only printable ASCII characters are allowed"
        self.error(
            number,
            f"Line {number}: unexpected character U+{ord(char):04X} at column {column}; {advice}.",
        )
        return None

    def _check_fields(self, number: int, fields: list[str]) -> None:
        """Check the rank, score, label and ids of a 5-field line.

        Rank: an integer, else a warning. Score: a finite decimal number. Label: 'true' or
        'false'. Ids: a known (question, candidate) pair, given once.
        """
        qid, cid, rank, score_text, label = fields
        ok = True
        if not _is_integer(rank):
            if not self.bad_ranks:
                self.bad_rank_example = rank
            self.bad_ranks.append(number)
        score = _strict_score(score_text)
        if isinstance(score, str):
            self.error(number, f"Line {number}: score '{quote(score_text)}' {score}.")
            ok = False
        if label not in _LABELS:
            self.error(
                number,
                f"Line {number}: label '{quote(label)}' must be 'true' or 'false' (lower case).",
            )
            ok = False
        row = self.gold.index.get((qid, cid))
        if row is None:
            if qid not in self.known_questions:
                message = f"unknown question id '{quote(qid)}' for {self.where}."
            else:
                message = f"'{quote(cid)}' is not a candidate of question '{quote(qid)}'."
            self.error(number, f"Line {number}: {message}")
            return
        if row in self.first_line:
            self.error(
                number,
                f"Line {number}: duplicate pair ({qid}, {cid}); "
                f"first given on line {self.first_line[row]}.",
            )
            return
        self.first_line[row] = number
        if ok:
            assert isinstance(score, float)
            self.rows.append(row)
            self.scores.append(score)
            self.predicted.append(_LABELS[label])

    def _salvage(self, raw: bytes) -> None:
        """Count an unreadable line's pair as present, so it is not also reported missing."""
        text = raw.decode("utf-8", "replace")
        for fields in (text.split("\t"), text.split()):
            if len(fields) >= 2:
                row = self.gold.index.get((fields[0].strip(), fields[1].strip()))
                if row is not None:
                    self.first_line.setdefault(row, 0)
                    return

    def file_errors(self, line_count: int) -> list[Issue]:
        """Return the file-level errors: a line count other than the gold's, missing gold pairs."""
        errors: list[Issue] = []
        total = len(self.gold)
        if line_count != total:
            errors.append(
                Issue(None, f"Expected {total:,} lines for {self.where}, found {line_count:,}.")
            )
        if len(self.first_line) < total:
            present = np.zeros(total, dtype=bool)
            present[list(self.first_line)] = True
            errors.append(Issue(None, _missing_message(self.gold, np.flatnonzero(~present))))
        return errors

    def format_warnings(self) -> list[Issue]:
        """Return the warnings about spaces as separators and non-integer ranks, each counted."""
        warnings: list[Issue] = []
        if self.spaced:
            text = _counted_lines(
                len(self.spaced),
                self.spaced[0],
                "separate columns with spaces; the format asks for one TAB.",
                "separates columns with spaces; the format asks for one TAB.",
            )
            warnings.append(Issue(None, text, "warning"))
        if self.bad_ranks:
            example = quote(self.bad_rank_example)
            text = _counted_lines(
                len(self.bad_ranks),
                self.bad_ranks[0],
                f"have a non-integer rank such as '{example}'; column 3 is ignored.",
                f"has a non-integer rank '{example}'; column 3 is ignored.",
            )
            warnings.append(Issue(None, text, "warning"))
        return warnings

    def build_run(self) -> tuple[CqaRun, list[Issue]]:
        """Return the run re-sorted into gold order, with the order and equal-score warnings."""
        return _ordered_run(
            self.gold,
            np.array(self.rows, dtype=np.int64),
            np.array(self.scores, dtype=np.float64),
            np.array(self.predicted, dtype=bool),
        )


def _ordered_run(
    gold: CqaGold, rows: np.ndarray, row_scores: np.ndarray, row_predicted: np.ndarray
) -> tuple[CqaRun, list[Issue]]:
    """Return a run whose line i gave gold row ``rows[i]``, re-sorted into gold order.

    Also return a warning if the lines were not in gold order, and one counting the questions
    whose candidates all have the same score.
    """
    scores = np.empty(len(gold), dtype=np.float64)
    predicted = np.empty(len(gold), dtype=bool)
    scores[rows] = row_scores
    predicted[rows] = row_predicted
    warnings: list[Issue] = []
    out_of_order = np.flatnonzero(rows != np.arange(rows.size))
    if out_of_order.size:
        warnings.append(
            Issue(
                None,
                f"Lines are not in the official order (first difference at line "
                f"{out_of_order[0] + 1}). The run was re-sorted into the official order; "
                "equal scores are ranked in official order.",
                "warning",
            )
        )
    flat = _constant_questions(gold.question_starts, scores)
    if flat:
        noun = "question" if flat == 1 else "questions"
        warnings.append(
            Issue(
                None,
                f"In {flat:,} {noun} all candidates have the same score; "
                "they are ranked in the official order.",
                "warning",
            )
        )
    return CqaRun(rows=len(gold), scores=scores, predicted=predicted), warnings


def _is_integer(text: str) -> bool:
    """Return whether ``text`` is an optionally signed run of ASCII digits."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    return digits.isascii() and digits.isdigit()


def _strict_score(text: str) -> float | str:
    """Return the score as a float, or the error message's tail if not a finite decimal number."""
    try:
        value = float(text)
    except ValueError:
        return "is not a number"
    if set(text) <= _SCORE_CHARS:
        return value if math.isfinite(value) else "must be a finite number"
    if text.lstrip("+-").lower() in _NON_FINITE_NAMES:
        return "must be a finite number"
    return "is not a number"  # e.g. digit underscores, which float() accepts


def _constant_questions(question_starts: np.ndarray, scores: np.ndarray) -> int:
    """Return how many questions with at least 2 candidates have all scores equal."""
    sizes = np.diff(np.append(question_starts, scores.size))
    highest = np.maximum.reduceat(scores, question_starts)
    lowest = np.minimum.reduceat(scores, question_starts)
    return int(np.count_nonzero((highest == lowest) & (sizes > 1)))


def _missing_message(gold: CqaGold, missing: np.ndarray) -> str:
    """Return the row-13 message for the gold rows ``missing`` (ascending), grouped by question."""
    starts = gold.question_starts
    sizes = np.diff(np.append(starts, len(gold)))
    question_of = np.searchsorted(starts, missing, side="right") - 1
    questions, counts = np.unique(question_of, return_counts=True)
    parts = []
    for question, count in zip(
        questions[:MISSING_QUESTIONS_NAMED], counts[:MISSING_QUESTIONS_NAMED], strict=True
    ):
        size = int(sizes[question])
        if count == size:
            extent = "its only candidate" if size == 1 else f"all {size:,} candidates"
        else:
            extent = f"{int(count):,} of {size:,} candidates"
        parts.append(f"{gold.questions[question]} ({extent})")
    if questions.size > MISSING_QUESTIONS_NAMED:
        parts.append(f"and {questions.size - MISSING_QUESTIONS_NAMED:,} more")
    first = int(missing[0])
    verb = "is" if missing.size == 1 else "are"
    noun = "question" if questions.size == 1 else "questions"
    return (
        f"{missing.size:,} of {len(gold):,} candidates {verb} missing, in {questions.size:,} "
        f"{noun}: {', '.join(parts)}, e.g. ({gold.qids[first]}, {gold.cids[first]})."
    )


def _refused(errors: list[Issue], warnings: list[Issue] | None = None) -> CqaVerdict:
    """Return the verdict of a refused file."""
    return CqaVerdict(run=None, errors=errors, warnings=list(warnings or []))


# --------------------------------------------------------------------------------------------
# Lenient legacy import, organizers only: read a run exactly as the 2016 scorer did


def parse_lenient(data: bytes, gold: CqaGold, *, resort: bool = False) -> CqaVerdict:
    """Import a historical run exactly as the 2016 scorer (v2.2) read it; report tolerances.

    Gold line i pairs with run line i (up to the shorter file); ids are compared as raw bytes;
    columns are split on any ASCII whitespace; extra lines and columns are ignored; a truncated
    file is scored on its aligned prefix. ``resort`` first re-orders the run into gold order by
    (question, candidate) and then needs every gold pair exactly once.
    """
    if not data:
        return _refused([Issue(None, "The file is empty.")])
    raw_lines = data.split(b"\n")
    if raw_lines[-1] == b"":
        raw_lines.pop()  # a final LF does not start another line
    numbered = list(enumerate(raw_lines, 1))
    tolerances: list[str] = []
    if resort:
        resorted = _resort(numbered, gold)
        if isinstance(resorted, Issue):
            return _refused([resorted])
        if resorted != numbered:
            tolerances.append("re-sorted into the official order (organizer option 'resort')")
        numbered = resorted

    reader = _LegacyReader(gold)
    aligned = min(len(gold), len(numbered))
    for row in range(aligned):
        reader.read(row, *numbered[row])
    if reader.errors:
        return _refused(reader.errors)

    truncation = None
    if aligned < len(gold):
        truncation = Truncation(
            lines_used=aligned,
            lines_total=len(gold),
            questions_used=int(np.count_nonzero(gold.question_starts < aligned)),
            questions_total=len(gold.questions),
        )
        tolerances.append(
            f"truncated: scored on the first {aligned:,} of {len(gold):,} lines "
            f"({truncation.questions_used:,} of {truncation.questions_total:,} questions)"
        )
    extra = len(numbered) - aligned
    if extra:
        noun = "line" if extra == 1 else "lines"
        tolerances.append(f"{extra:,} extra {noun} after the last gold line ignored")
    tolerances.extend(reader.tolerances())
    run = CqaRun(
        rows=aligned,
        scores=np.array(reader.scores, dtype=np.float64),
        predicted=np.array(reader.predicted, dtype=bool),
    )
    return CqaVerdict(
        run=run, errors=[], warnings=[], tolerances=tuple(tolerances), truncation=truncation
    )


def _shown(token: bytes) -> str:
    """Return a raw token as quotable text; non-ASCII bytes show as escapes (e.g. a BOM)."""
    return quote(token.decode("ascii", "backslashreplace"))


def _resort(numbered: list[tuple[int, bytes]], gold: CqaGold) -> list[tuple[int, bytes]] | Issue:
    """Return the lines in gold order (unkeyed lines after them), or the refusal."""
    keys = {(qid.encode(), cid.encode()): row for (qid, cid), row in gold.index.items()}
    placed: list[tuple[int, bytes] | None] = [None] * len(gold)
    rest: list[tuple[int, bytes]] = []
    for number, raw in numbered:
        fields = raw.split()
        if not fields:
            rest.append((number, raw))  # empty lines end up after the gold lines, ignored
            continue
        if len(fields) < 2:
            return Issue(number, f"Line {number}: expected at least 5 columns, found 1.")
        row = keys.get((fields[0], fields[1]))
        if row is None:
            rest.append((number, raw))
            continue
        previous = placed[row]
        if previous is not None:
            return Issue(
                number,
                f"Cannot re-sort: duplicate pair ({_shown(fields[0])}, {_shown(fields[1])}) "
                f"on line {number}; first given on line {previous[0]}.",
            )
        placed[row] = (number, raw)
    missing = [row for row, line in enumerate(placed) if line is None]
    if missing:
        first = missing[0]
        verb = "is" if len(missing) == 1 else "are"
        return Issue(
            None,
            f"Cannot re-sort: {len(missing):,} of {len(gold):,} gold pairs {verb} missing, "
            f"the first is ({gold.qids[first]}, {gold.cids[first]}).",
        )
    return [line for line in placed if line is not None] + rest


class _LegacyReader:
    """Read aligned lines the way the 2016 scorer did, noting each tolerance it relied on."""

    def __init__(self, gold: CqaGold) -> None:
        self.qids = [qid.encode() for qid in gold.qids]
        self.cids = [cid.encode() for cid in gold.cids]
        self.errors: list[Issue] = []
        self.scores: list[float] = []
        self.predicted: list[bool] = []
        self.crlf = 0
        self.spaced: list[int] = []
        self.extra_columns: list[int] = []
        self.bad_ranks: list[int] = []
        self.bad_rank_example = b""

    def read(self, row: int, number: int, raw: bytes) -> None:
        """Read physical line ``number`` as the counterpart of gold row ``row``."""
        fields = raw.split()  # any run of ASCII whitespace, ends stripped, as str.split() did
        if not fields:
            self.errors.append(Issue(number, f"Line {number} is empty."))
            return
        if len(fields) < 5:
            self.errors.append(
                Issue(number, f"Line {number}: expected at least 5 columns, found {len(fields)}.")
            )
            return
        qid, cid, rank, score_text, label = fields[:5]
        if qid != self.qids[row] or cid != self.cids[row]:
            self.errors.append(
                Issue(
                    number,
                    f"ID mismatch on line {number}: gold ({_shown(self.qids[row])}, "
                    f"{_shown(self.cids[row])}), run ({_shown(qid)}, {_shown(cid)})",
                )
            )
            return
        if label not in _LEGACY_LABELS:
            self.errors.append(
                Issue(number, f"Line {number}: label '{_shown(label)}' must be 'true' or 'false'.")
            )
            return
        score = _legacy_score(score_text)
        if isinstance(score, str):
            self.errors.append(
                Issue(number, f"Line {number}: score '{_shown(score_text)}' {score}.")
            )
            return
        self.scores.append(score)
        self.predicted.append(_LEGACY_LABELS[label])
        self._note_tolerances(number, raw, fields, rank)

    def _note_tolerances(self, number: int, raw: bytes, fields: list[bytes], rank: bytes) -> None:
        """Record which departures from the strict format an accepted line relied on."""
        if raw.endswith(b"\r"):
            self.crlf += 1
            raw = raw[:-1]
        if raw.split(b"\t") != fields:
            self.spaced.append(number)
        if len(fields) > 5:
            self.extra_columns.append(number)
        if not _is_integer(rank.decode("latin-1")):
            if not self.bad_ranks:
                self.bad_rank_example = rank
            self.bad_ranks.append(number)

    def tolerances(self) -> list[str]:
        """Return the human-readable list of tolerances used by the aligned lines."""
        found: list[str] = []
        if self.spaced:
            found.append(
                _counted_lines(
                    len(self.spaced),
                    self.spaced[0],
                    "separate columns with spaces or other whitespace instead of one TAB",
                    "separates columns with spaces or other whitespace instead of one TAB",
                )
            )
        if self.crlf:
            found.append(f"Windows (CRLF) line endings on {self.crlf:,} lines")
        if self.bad_ranks:
            example = _shown(self.bad_rank_example)
            found.append(
                _counted_lines(
                    len(self.bad_ranks),
                    self.bad_ranks[0],
                    f"have a non-integer rank such as '{example}' (column 3 is never read)",
                    f"has a non-integer rank '{example}' (column 3 is never read)",
                )
            )
        if self.extra_columns:
            found.append(
                _counted_lines(
                    len(self.extra_columns),
                    self.extra_columns[0],
                    "have more than 5 columns; the extra columns were ignored",
                    "has more than 5 columns; the extra columns were ignored",
                )
            )
        return found


def _legacy_score(token: bytes) -> float | str:
    """Return the score as Python 2's float() read it, or the tail of the refusal message."""
    if not token.isascii() or b"_" in token:
        return "is not a number"  # Python 2 had no digit underscores
    try:
        value = float(token)
    except ValueError:
        return "is not a number"
    if math.isnan(value):
        return "is NaN, which cannot be ranked"
    return value


# --------------------------------------------------------------------------------------------
# Rendering


def render_run(gold: CqaGold, run: CqaRun) -> bytes:
    """Write ``run`` as a valid 5-column TAB file in gold order (rank 0, score as repr, LF)."""
    lines = [
        f"{gold.qids[row]}\t{gold.cids[row]}\t0\t{float(score)!r}\t{'true' if label else 'false'}\n"
        for row, (score, label) in enumerate(
            zip(run.scores.tolist(), run.predicted.tolist(), strict=True)
        )
    ]
    return "".join(lines).encode("utf-8")
