"""Qrels: the organizer's judgments, validated line by line or column-wise when clean."""

from __future__ import annotations

from typing import Any

import numpy as np

from leaderboard.formats.issues import Issue, quote
from leaderboard.formats.trec.columns import INTEGER, grade_value
from leaderboard.formats.trec.messages import (
    char_error,
    decoded,
    grade_error,
    plural,
    short_id,
    unknown_query_message,
)
from leaderboard.formats.trec.patterns import ANY_ID, all_full_match, compiled
from leaderboard.formats.trec.records import (
    BOM,
    GRADE_MAX,
    GRADE_MIN,
    PRINTABLE_TAB,
    Qrels,
    TrecSettings,
)


def parse_qrels(
    data: bytes, *, topics: frozenset[str] | None, settings: TrecSettings
) -> tuple[Qrels | None, list[Issue]]:
    """Validate an organizer's qrels file (4 fields: query, iteration, id, integer grade).

    Checks every line: field count, query id among ``topics`` (unless None), id pattern,
    integer grade in settings' range, no duplicate (query, id) pair. Lines whose first
    non-blank character is ``#`` are comments, as trec_eval 10 reads them; line numbers count
    them. Returns (qrels or None, issues); issues hold errors and warnings (severity
    "warning"), errors ordered by line.
    """
    issues: list[Issue] = []
    if data.startswith(BOM):
        data = data[len(BOM) :]
        issues.append(
            Issue(None, "The file started with a byte-order mark; it was removed.", "warning")
        )
    raw_lines = data.split(b"\n")
    if raw_lines[-1] == b"":
        raw_lines.pop()
    trailing = 0
    while raw_lines and not raw_lines[-1].strip():
        raw_lines.pop()
        trailing += 1
    if not raw_lines:
        return None, [Issue(None, "The file is empty.")]
    if trailing:
        verb = "was" if trailing == 1 else "were"
        issues.append(
            Issue(
                None,
                f"{plural(trailing, 'empty line', 'empty lines')} at the end of the file {verb}"
                " ignored.",
                "warning",
            )
        )
    if any(line.endswith(b"\r") for line in raw_lines):
        issues.append(Issue(None, "Windows (CRLF) line endings were normalised.", "warning"))
    judgments = [line for line in raw_lines if not _is_comment(line)] if b"#" in data else raw_lines
    if not judgments:
        return None, [Issue(None, "The file has no judgments, only comment lines.")]
    fast = _qrels_fast(judgments, topics, settings)
    if fast is not None:
        return fast, issues
    errors: list[Issue] = []
    # Split fields always match the generic pattern: no regex for it.
    id_matches = None if settings.docid_pattern == ANY_ID else compiled(settings.docid_pattern)
    topic_bytes = None if topics is None else {t.encode() for t in topics}
    query_map: dict[bytes, int] = {}
    first_line: dict[tuple[bytes, bytes], int] = {}
    query_index: list[int] = []
    docids: list[bytes] = []
    grades: list[int] = []
    noun = settings.doc_noun
    for line, content in enumerate(raw_lines, 1):
        content = content.rstrip(b"\r")
        if _is_comment(content):
            continue
        if not content.strip():
            errors.append(Issue(line, f"Line {line} is empty."))
            continue
        message = char_error(line, content)
        if message is not None:
            errors.append(Issue(line, message))
            continue
        fields = content.split()
        if len(fields) != 4:
            errors.append(
                Issue(
                    line,
                    f"Line {line}: expected 4 fields (query id, iteration, {noun} id, grade),"
                    f" found {len(fields)}.",
                )
            )
            continue
        qid, _, docid, grade = fields
        ok = True
        if topic_bytes is not None and qid not in topic_bytes:
            errors.append(Issue(line, unknown_query_message(line, qid, settings)))
            ok = False
        if id_matches is not None and not id_matches.fullmatch(docid):
            errors.append(
                Issue(
                    line,
                    f"Line {line}: {noun} id '{quote(decoded(docid))}'"
                    f" must be {settings.docid_hint}.",
                )
            )
            ok = False
        message = grade_error(line, grade, settings)
        if message is not None:
            errors.append(Issue(line, message))
            ok = False
        if not ok:
            continue
        earlier = first_line.setdefault((qid, docid), line)
        if earlier != line:
            errors.append(
                Issue(
                    line,
                    f"Line {line}: {noun} {short_id(docid)} is judged twice for query"
                    f" '{quote(decoded(qid))}' (first on line {earlier}).",
                )
            )
            continue
        query_index.append(query_map.setdefault(qid, len(query_map)))
        docids.append(docid)
        grades.append(int(grade))
    if errors:
        return None, errors + issues
    qrels = Qrels(
        queries=tuple(decoded(q) for q in query_map),
        query_index=np.array(query_index, dtype=np.int32),
        docids=np.array(docids),
        grades=np.array(grades, dtype=np.int32),
    )
    return qrels, issues


def _qrels_fast(
    raw_lines: list[bytes], topics: frozenset[str] | None, settings: TrecSettings
) -> Qrels | None:
    """Return the qrels of lines that are all valid, checked column-wise; else None.

    None sends the lines through the line-by-line checks, which report every error.
    """
    if b"".join(raw_lines).translate(None, PRINTABLE_TAB):
        return None
    rows = [line.split() for line in raw_lines]
    if any(len(row) != 4 for row in rows):
        return None
    qids, _, docids, grades = (list(column) for column in zip(*rows, strict=True))
    if topics is not None and not {t.encode() for t in topics}.issuperset(qids):
        return None
    if not all_full_match(docids, settings.docid_pattern):
        return None
    if not all(map(INTEGER.fullmatch, grades)):
        return None
    values = list(map(grade_value, grades))
    low = GRADE_MIN if settings.min_grade is None else max(settings.min_grade, GRADE_MIN)
    high = GRADE_MAX if settings.max_grade is None else min(settings.max_grade, GRADE_MAX)
    if min(values) < low or max(values) > high:
        return None
    if len(set(zip(qids, docids, strict=True))) != len(rows):
        return None
    query_map = {q: i for i, q in enumerate(dict.fromkeys(qids))}
    return Qrels(
        queries=tuple(decoded(q) for q in query_map),
        query_index=np.array([query_map[q] for q in qids], dtype=np.int32),
        docids=np.array(docids),
        grades=np.array(values, dtype=np.int32),
    )


def _is_comment(line: bytes) -> bool:
    """Return whether a qrels line is a comment: its first non-blank character is ``#``."""
    return line.lstrip(b" \t").startswith(b"#")


def qrels_report(qrels: Qrels, threshold: int) -> dict[str, Any]:
    """Summarise qrels for the organizer at one relevance threshold.

    Keys: ``lines``, ``queries``, ``grade_histogram``, ``threshold``,
    ``queries_without_relevant`` (no grade >= threshold; they score 0) and
    ``queries_all_negative`` (every grade < 0; trec_eval 9.0.8 fails on them, we score 0).
    """
    n = len(qrels.queries)
    relevant = np.bincount(qrels.query_index[qrels.grades >= threshold], minlength=n)
    non_negative = np.bincount(qrels.query_index[qrels.grades >= 0], minlength=n)
    return {
        "lines": len(qrels),
        "queries": n,
        "grade_histogram": qrels.grade_histogram(),
        "threshold": threshold,
        "queries_without_relevant": [qrels.queries[i] for i in np.flatnonzero(relevant == 0)],
        "queries_all_negative": [qrels.queries[i] for i in np.flatnonzero(non_negative == 0)],
    }
