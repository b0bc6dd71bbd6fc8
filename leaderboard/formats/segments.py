"""Plain-text segment files (one segment per line): sources, references and system outputs.

Lines are read as the ``sacrebleu`` command line reads a file, so that what the scorer sees is
what ``sacrebleu -i FILE`` sees: UTF-8, lines split on LF only (a final LF is optional and a
file ending in an empty line has that extra line), and every line right-stripped with
``str.rstrip()`` (trailing blanks, a CR of CRLF endings and Unicode spaces go). Departures,
each reported: a UTF-8 byte-order mark at the start is removed with a warning (sacrebleu would
keep it glued to the first word), and control characters other than TAB are errors (NUL,
ESC, a CR inside a line, C1 controls: they mean a binary or mis-encoded file).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from leaderboard.formats.issues import Issue, IssueLog

BOM = b"\xef\xbb\xbf"
#: How many line numbers a message about many lines lists before "…".
LISTED_LINES = 5

# Every C0 control but TAB and LF, DEL and the C1 controls; a CR is allowed only at a line's end.
_CONTROL_OR_CR = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROL_NAMES = {0: "NUL", 0x1B: "ESC", 0x0D: "CR", 0x7F: "DEL", 0x0B: "VT", 0x0C: "FF"}


def _listed(numbers: Sequence[int]) -> str:
    """Return the first line numbers of ``numbers``, with "…" when there are more."""
    listed = ", ".join(f"{n:,}" for n in numbers[:LISTED_LINES])
    return listed + (", …" if len(numbers) > LISTED_LINES else "")


def _plural(count: int, noun: str) -> str:
    """Return ``count`` with ``noun``, pluralised with an s when it is not 1."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _char_name(char: str) -> str:
    """Return a control character as U+XXXX with its short name when it has one."""
    code = ord(char)
    name = _CONTROL_NAMES.get(code) or unicodedata.name(char, "control character")
    return f"U+{code:04X} ({name})"


def _bad_utf8(line: bytes) -> tuple[int, int] | None:
    """Return (1-based byte position in the line, byte value) of the first invalid byte."""
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start + 1, line[exc.start]
    return None


def _read(data: bytes, where: str, errors: IssueLog, warnings: list[Issue]) -> list[str] | None:
    """Return the right-stripped lines of ``data``, or None after logging why they are unusable.

    ``where`` prefixes line messages ("Line" for runs, "source, line" for organizer files).
    """
    if data.startswith(BOM):
        data = data[len(BOM) :]
        warnings.append(
            Issue(
                None,
                f"{_lead(where) or 'The '}{'the ' if _lead(where) else ''}file starts with a "
                "UTF-8 byte-order mark; it was removed.",
                "warning",
            )
        )
    raw = data.split(b"\n")
    if raw[-1] == b"":
        raw.pop()  # the final LF ends the last line; it does not start a new one
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        # LF never occurs inside a UTF-8 sequence: the lines can be decoded one by one.
        for number, raw_line in enumerate(raw, start=1):
            bad = _bad_utf8(raw_line)
            if bad is not None:
                position, value = bad
                errors.append(
                    Issue(
                        number,
                        f"{where} {number:,}: byte {position:,} (0x{value:02x}) is not valid "
                        "UTF-8; save the file as UTF-8.",
                    )
                )
        return None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    crlf: list[int] = []
    if _CONTROL_OR_CR.search(text) is not None:
        for number, segment in enumerate(lines, start=1):
            kept = segment.rstrip()
            found = _CONTROL_OR_CR.search(kept)
            if found is not None:
                where_char = found.start() + 1
                errors.append(
                    Issue(
                        number,
                        f"{where} {number:,}: control character {_char_name(found.group())} at "
                        f"character {where_char:,}; a segment is plain text on one line.",
                    )
                )
            elif segment.endswith("\r"):
                crlf.append(number)
    if len(errors):
        return None
    if crlf:
        warnings.append(
            Issue(
                crlf[0],
                f"{_lead(where)}{_plural(len(crlf), 'line')} end in CR LF (Windows line endings; "
                f"line {_listed(crlf)}); the CR was removed, as sacrebleu does.",
                "warning",
            )
        )
    return [line.rstrip() for line in lines]


def _lead(where: str) -> str:
    """Return the file-level prefix of messages: "" for runs, "source: " for organizer files."""
    head = where.rsplit(",", 1)[0] if "," in where else ""
    return f"{head}: " if head else ""


def _empty_warning(segments: list[str], where: str, what: str) -> Issue | None:
    """Return one warning naming the empty segments (count and first line numbers), if any."""
    empty = [number for number, text in enumerate(segments, start=1) if not text]
    if not empty:
        return None
    return Issue(
        empty[0],
        f"{_lead(where)}{_plural(len(empty), 'empty ' + what)} (line {_listed(empty)}); "
        f"{'it is' if len(empty) == 1 else 'they are'} scored as empty text.",
        "warning",
    )


def _closed(errors: IssueLog) -> list[Issue]:
    """Return the kept errors, plus one line counting the errors beyond the kept ones."""
    kept = list(errors.kept)
    if errors.dropped:
        noun = "error" if errors.dropped == 1 else "errors"
        kept.append(Issue(None, f"… and {errors.dropped:,} more {noun}."))
    return kept


def parse_segments(data: bytes, role: str) -> tuple[list[str] | None, list[Issue]]:
    """Return the segments of an organizer's source or reference file and every issue found.

    ``role`` names the file in messages ("source", "reference newstest.de"). The segments are
    None when an error was found; warnings (byte-order mark, CRLF, empty segments) keep them.
    """
    errors = IssueLog()
    warnings: list[Issue] = []
    where = f"{role}, line"
    segments = _read(data, where, errors, warnings)
    if segments is not None and not segments:
        errors.append(Issue(None, f"{role}: the file is empty; it needs one segment per line."))
        segments = None
    if segments is None:
        return None, [*_closed(errors), *warnings]
    empty = _empty_warning(segments, where, "segment")
    if empty is not None:
        warnings.append(empty)
    return segments, warnings


def validate_output(
    data: bytes, n_source: int
) -> tuple[list[str] | None, list[Issue], list[Issue]]:
    """Return (segments or None, errors, warnings) for a participant's output file.

    The file needs one UTF-8 line per source segment. Errors: invalid UTF-8 (every bad line
    with the position of its first bad byte), control characters, a wrong line count. Warnings:
    a byte-order mark, CRLF endings, empty output lines (one warning naming them).
    """
    errors = IssueLog()
    warnings: list[Issue] = []
    segments = _read(data, "Line", errors, warnings)
    count = len(segments) if segments is not None else _line_count(data)
    if count != n_source:
        errors.append(
            Issue(
                None,
                f"The file has {_plural(count, 'line')}; the source has "
                f"{_plural(n_source, 'segment')}: one output line per source line.",
            )
        )
    if len(errors) or segments is None:
        return None, _closed(errors), warnings
    empty = _empty_warning(segments, "Line", "output line")
    if empty is not None:
        warnings.append(empty)
    return segments, [], warnings


def _line_count(data: bytes) -> int:
    """Return how many lines sacrebleu would read from ``data`` (a final LF is optional)."""
    if data.startswith(BOM):
        data = data[len(BOM) :]
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def check_references(
    references: Sequence[Sequence[str]], n_source: int, names: Sequence[str] | None = None
) -> list[Issue]:
    """Return one error when the reference files' line counts differ from each other or the source.

    ``names`` are the files' names for the message (default "reference 1", "reference 2", ...).
    """
    if not references:
        return [Issue(None, "At least one reference file is needed.")]
    labels = list(names) if names is not None else []
    labels += [f"reference {i}" for i in range(len(labels) + 1, len(references) + 1)]
    counts = [len(ref) for ref in references]
    if all(count == n_source for count in counts):
        return []
    each = "; ".join(
        f"{label} has {_plural(count, 'line')}"
        for label, count in zip(labels, counts, strict=False)
    )
    return [
        Issue(
            None,
            f"The reference files must have one line per source segment "
            f"({_plural(n_source, 'segment')}): {each}.",
        )
    ]
