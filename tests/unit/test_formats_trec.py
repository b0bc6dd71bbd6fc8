"""TREC formats: strict run validation, lenient import (as trec_eval reads runs), qrels upload."""

from __future__ import annotations

import gzip
import io
import zipfile
from dataclasses import replace

import numpy as np
import pytest

from leaderboard.formats.issues import Issue
from leaderboard.formats.trec import (
    Qrels,
    TrecRun,
    TrecSettings,
    blocks,
    c_atof,
    parse_lenient,
    parse_qrels,
    qrels_report,
    strict,
    validate_run,
)
from leaderboard.formats.trec import lenient as lenient_module
from leaderboard.tasks.families.trec.scoring import score_run, score_variant
from tests.trec_car import CAR_SETTINGS

CAR = CAR_SETTINGS
T1 = "Aftertaste/Aftertaste%20processing%20in%20the%20cerebral%20cortex"
T2 = "Aftertaste/Distinguishing%20aftertaste%20and%20flavor"
T3 = "Zebra/Stripes"
TOPICS = frozenset({T1, T2, T3})
P1 = "38c1bd25ddca2705164677a3f598c46df85afba7"


def pid(n: int) -> str:
    """Return the n-th distinct valid paragraph id."""
    return f"{n:040x}"


def line(
    q: str = T1,
    d: str = P1,
    rank: str = "1",
    score: str = "17.25",
    tag: str = "aurora-rm3",
    q0: str = "Q0",
    sep: str = " ",
) -> str:
    return sep.join([q, q0, d, rank, score, tag]) + "\n"


def lines_for(n: int, q: str = T1, start: int = 0) -> list[str]:
    """Return n valid lines of one query with distinct ids and decreasing scores."""
    return [line(q, pid(start + i), str(i + 1), str(100 - i)) for i in range(n)]


def check(
    data: bytes | str,
    topics: frozenset[str] = TOPICS,
    settings: TrecSettings = CAR,
    form_run_name: str | None = None,
    **named: str,
) -> tuple[TrecRun | None, list[Issue], list[Issue]]:
    """Validate as a line iterator and as a file-like stream; both must agree."""
    raw = data.encode() if isinstance(data, str) else data
    by_lines = validate_run(
        io.BytesIO(raw).readlines(),
        topics=topics,
        settings=settings,
        form_run_name=form_run_name,
        **named,
    )
    by_stream = validate_run(
        io.BytesIO(raw), topics=topics, settings=settings, form_run_name=form_run_name, **named
    )
    assert by_lines[1:] == by_stream[1:]
    assert (by_lines[0] is None) == (by_stream[0] is None)
    return by_stream


def messages(issues: list[Issue]) -> list[str]:
    return [issue.message for issue in issues]


def only_error(data: bytes | str, **kwargs: object) -> str:
    run, errors, _ = check(data, **kwargs)  # type: ignore[arg-type]
    assert run is None
    assert len(errors) == 1, messages(errors)
    return errors[0].message


# -- accepted runs ----------------------------------------------------------------------------


def test_valid_run_is_parsed_column_wise() -> None:
    data = (
        line(T1, pid(1), "1", "2.5") + line(T2, pid(2), "1", "-1e-3") + line(T1, pid(3), "2", "1")
    )
    run, errors, warnings = check(data)
    assert errors == []
    assert messages(warnings) == [
        "1 of 3 topics has no results ('Zebra/Stripes'). It counts as 0 on every measure."
    ]
    assert run is not None
    assert run.tag == "aurora-rm3"
    assert len(run) == 3
    assert [run.queries[i] for i in run.query_index] == [T1, T2, T1]
    assert run.docids.tolist() == [pid(1).encode(), pid(2).encode(), pid(3).encode()]
    assert run.scores.dtype == np.float32
    assert run.scores.tolist() == [2.5, np.float32(-1e-3), 1.0]


def test_tabs_and_repeated_separators_accepted() -> None:
    data = line(T1, pid(1), sep="\t") + "  " + line(T1, pid(2)).replace(" ", "  ")
    run, errors, _ = check(data)
    assert errors == []
    assert run is not None and len(run) == 2


@pytest.mark.parametrize("text", ["+1", "-2.5e-3", ".5", "5.", "1E5", "007", "3.4028234e38"])
def test_decimal_score_forms_accepted(text: str) -> None:
    run, errors, _ = check(line(score=text))
    assert errors == []
    assert run is not None
    assert run.scores[0] == np.float32(float(text))


def test_run_without_final_newline() -> None:
    run, errors, warnings = check((line(T1, pid(1)) + line(T2, pid(2))).rstrip("\n"))
    assert errors == [] and run is not None and len(run) == 2
    assert len(warnings) == 1  # only the topic-coverage warning


# -- rows 1-15: errors ------------------------------------------------------------------------


@pytest.mark.parametrize("data", [b"", b"\n", b"\n \n\t\n"])
def test_row1_empty_file(data: bytes) -> None:
    assert only_error(data) == "The file is empty."


def test_row2_invalid_utf8() -> None:
    body = lines_for(16)
    body.append("x" * 29 + "\udcff" + " rest\n")
    raw = "".join(body).encode("utf-8", "surrogateescape")
    assert only_error(raw) == "Line 17: not valid UTF-8 (byte 0xFF at column 30)."


def test_row2_column_counts_characters() -> None:
    raw = "é Q0".encode() + b"\xff\n"
    assert only_error(raw) == "Line 1: not valid UTF-8 (byte 0xFF at column 5)."


def test_row3_nbsp_separator() -> None:
    body = lines_for(3)
    # "Zebra/Stripes" is 13 characters, then a space and "Q0": the NBSP is column 17.
    body.append(line(T3, pid(9)).replace("Q0 ", "Q0\u00a0"))
    assert only_error("".join(body)) == (
        "Line 4: unexpected character U+00A0 at column 17; separate fields with spaces or TABs."
    )


def test_row3_control_character_without_separator_hint() -> None:
    assert only_error(line(q="Af\x01ter")) == "Line 1: unexpected character U+0001 at column 3."


def test_row4_long_line() -> None:
    body = lines_for(8)
    body.append(line(q="A" * 4100))
    assert only_error("".join(body)) == "Line 9 is longer than 4096 bytes."


def test_row4_4096_bytes_is_not_too_long() -> None:
    long_line = line(q="A" * 10)
    long_line = long_line.replace("A" * 10, "A" * (10 + 4096 - (len(long_line) - 1)))
    assert len(long_line) - 1 == 4096
    message = only_error(long_line)
    assert message.startswith("Line 1: unknown query id 'AAAA")


def test_row5_empty_line_inside() -> None:
    body = lines_for(119)
    body.append(" \t\n")
    body.extend(lines_for(1, start=500))
    assert only_error("".join(body)) == "Line 120 is empty."


def test_row6_field_count() -> None:
    data = f"{T1} Q0 {P1} 1 17.25\n"
    assert only_error(data) == (
        "Line 1: expected 6 fields (query id, Q0, paragraph id, rank, score, run tag), found 5."
    )
    run, errors, _ = check(line() + line(d=pid(5), tag="aurora-rm3 extra"))
    assert messages(errors) == [
        "Line 2: expected 6 fields (query id, Q0, paragraph id, rank, score, run tag), found 7."
    ]


def test_row7_unknown_query_with_v2_hint() -> None:
    data = line(T1, pid(1)) + line(T1, pid(2)) + line("enwiki:Aftertaste", pid(3))
    assert only_error(data) == (
        "Line 3: unknown query id 'enwiki:Aftertaste' (not a benchmarkY1test topic)."
        " Ids with the 'enwiki:' prefix belong to the v2.0 release; this task uses v1.5 ids."
    )


def test_row7_unknown_query_without_hint_and_case_sensitive() -> None:
    assert only_error(line(q=T1.lower())) == (
        f"Line 1: unknown query id '{T1.lower()}' (not a benchmarkY1test topic)."
    )


def test_row7_long_query_id_quoted_to_80_characters() -> None:
    long_id = "Q" * 100
    assert only_error(line(q=long_id)) == (
        f"Line 1: unknown query id '{'Q' * 79}…' (not a benchmarkY1test topic)."
    )


def test_row8_paragraph_id() -> None:
    body = lines_for(4)
    body.append(line(d="38C1BD25"))
    assert only_error("".join(body)) == (
        "Line 5: paragraph id '38C1BD25' must be 40 lowercase hexadecimal characters."
    )


@pytest.mark.parametrize("bad", [P1 + "0", P1[:-1], P1.upper(), "g" * 40])
def test_row8_paragraph_id_variants(bad: str) -> None:
    assert "must be 40 lowercase hexadecimal characters." in only_error(line(d=bad))


def test_row9_rank() -> None:
    body = lines_for(5)
    body.append(line(d=pid(99), rank="1.0"))
    assert only_error("".join(body)) == "Line 6: rank '1.0' must be an integer."
    run, errors, _ = check(line(rank="-3") + line(d=pid(2), rank="+4"))
    assert errors == []


@pytest.mark.parametrize("text", ["abc", "3,5", "0x10", "1_0", "1e", "--1", ".", "1.2.3"])
def test_row10_score_not_a_number(text: str) -> None:
    body = lines_for(6)
    body.append(line(d=pid(99), score=text))
    assert only_error("".join(body)) == f"Line 7: score '{text}' is not a number."


@pytest.mark.parametrize("text", ["inf", "nan", "-Infinity", "NaN", "1e39", "-3.5e38", "1e400"])
def test_row11_score_not_finite(text: str) -> None:
    body = lines_for(6)
    body.append(line(d=pid(99), score=text))
    assert only_error("".join(body)) == f"Line 7: score '{text}' must be a finite number."


def test_row12_duplicate_paragraph() -> None:
    body = [line(T2, pid(i)) for i in range(56)]
    body[11] = line(T1, P1)
    body.append(line(T1, P1, rank="57", score="1"))
    assert only_error("".join(body)) == (
        f"Line 57: paragraph 38c1bd25… already listed for query '{T1}' on line 12."
    )


def test_row12_each_repeat_names_the_first_line() -> None:
    data = line(T1, P1) + line(T2, P1) + line(T1, P1) + line(T1, P1)
    _, errors, _ = check(data)
    assert messages(errors) == [
        f"Line 3: paragraph 38c1bd25… already listed for query '{T1}' on line 1.",
        f"Line 4: paragraph 38c1bd25… already listed for query '{T1}' on line 1.",
    ]


def test_row12_duplicates_found_despite_hash_collisions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(strict, "pair_hash", lambda q, d: np.zeros(len(q), dtype=np.uint64))
    data = line(T1, pid(1)) + line(T1, pid(2)) + line(T2, pid(1)) + line(T1, pid(1))
    _, errors, _ = check(data)
    assert messages(errors) == [
        f"Line 4: paragraph 00000000… already listed for query '{T1}' on line 1."
    ]


def test_row13_too_many_lines_for_a_query() -> None:
    assert only_error("".join(lines_for(1523))) == (
        f"Query '{T1}' has 1,523 lines; at most 1,000 are allowed."
    )
    _, errors, _ = check("".join(lines_for(1000)))
    assert errors == []


def test_row13_counts_lines_with_other_errors() -> None:
    body = lines_for(1001)
    body[0] = line(d="bad", rank="1", score="200")
    _, errors, _ = check("".join(body))
    assert messages(errors) == [
        "Line 1: paragraph id 'bad' must be 40 lowercase hexadecimal characters.",
        f"Query '{T1}' has 1,001 lines; at most 1,000 are allowed.",
    ]


def test_row13_limit_is_a_setting() -> None:
    settings = replace(CAR, max_per_query=2)
    data = "".join(lines_for(3)) + "".join(lines_for(2, q=T2))
    assert only_error(data, settings=settings) == (
        f"Query '{T1}' has 3 lines; at most 2 are allowed."
    )


def test_row14_tag_differs() -> None:
    body = [line(T1, pid(i)) for i in range(87)]
    body.append(line(T2, pid(1), tag="run2"))
    assert (
        only_error("".join(body)) == "Line 88: run tag 'run2' differs from 'aurora-rm3' on line 1."
    )


@pytest.mark.parametrize("tag", ["my-run!", "a" * 21, "run:1"])
def test_row15_tag_malformed_reported_once(tag: str) -> None:
    data = line(tag=tag) + line(d=pid(2), tag=tag)
    assert only_error(data) == (
        f"Line 1: run tag '{tag}' must be 1–20 characters from A–Z, a–z, 0–9, '_', '.', '-'."
    )


def test_several_errors_on_one_line_in_field_order() -> None:
    data = line() + line("nope", "XYZ", "r", "s", "other")
    _, errors, _ = check(data)
    assert [e.line for e in errors] == [2, 2, 2, 2, 2]
    assert messages(errors) == [
        "Line 2: unknown query id 'nope' (not a benchmarkY1test topic).",
        "Line 2: paragraph id 'XYZ' must be 40 lowercase hexadecimal characters.",
        "Line 2: rank 'r' must be an integer.",
        "Line 2: score 's' is not a number.",
        "Line 2: run tag 'other' differs from 'aurora-rm3' on line 1.",
    ]


def test_errors_sorted_by_line_with_file_level_last() -> None:
    body = lines_for(1002)
    body.insert(3, "\n")
    body[10] = line(d="bad")
    _, errors, _ = check("".join(body))
    assert [e.line for e in errors] == [4, 11, None]


def test_collection_stops_at_the_error_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(strict, "MAX_COLLECTED_ERRORS", 5)
    run, errors, _ = check("x\n" * 50)
    assert run is None
    assert [e.line for e in errors] == [1, 2, 3, 4, 5, None]
    assert errors[-1].message == (
        "Checking stopped after 5 errors; the rest of the file was not checked."
    )


def test_archives_refused() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("run.txt", line())
    assert only_error(buffer.getvalue()) == (
        "The file is a zip archive; upload a plain-text or .gz run file."
    )
    assert only_error(gzip.compress(line().encode())) == (
        "The file is gzip-compressed; upload a plain-text or .gz run file."
    )


def test_gzip_stream_accepted() -> None:
    packed = gzip.compress((line(T1, pid(1)) + line(T2, pid(2))).encode())
    with gzip.GzipFile(fileobj=io.BytesIO(packed)) as stream:
        run, errors, _ = validate_run(stream, topics=TOPICS, settings=CAR)
    assert errors == [] and run is not None and len(run) == 2
    with gzip.open(io.BytesIO(packed)) as stream:
        run, errors, _ = validate_run(list(stream), topics=TOPICS, settings=CAR)
    assert errors == [] and run is not None and len(run) == 2


def test_small_chunks_give_identical_results(monkeypatch: pytest.MonkeyPatch) -> None:
    body = lines_for(40) + ["\n", line(d="bad\xa0id"), "\r\n"] + lines_for(30, start=100)
    body[5] = body[5].replace("\n", "\r\n")
    data = "".join(body).encode()
    expected = check(data)
    monkeypatch.setattr(blocks, "CHUNK_BYTES", 7)
    monkeypatch.setattr(blocks, "BATCH_LINES", 3)
    assert check(data)[1:] == expected[1:]
    assert [e.line for e in expected[1]] == [41, 42, 43]


# -- rows 16-22: warnings ---------------------------------------------------------------------


def test_row16_byte_order_mark_removed() -> None:
    run, errors, warnings = check(b"\xef\xbb\xbf" + (line(T1) + line(T2) + line(T3)).encode())
    assert errors == [] and run is not None
    assert messages(warnings) == ["The file started with a byte-order mark; it was removed."]
    assert [run.queries[i] for i in run.query_index] == [T1, T2, T3]


def test_row17_crlf_normalised() -> None:
    data = (line(T1) + line(T2) + line(T3)).replace("\n", "\r\n")
    run, errors, warnings = check(data)
    assert errors == [] and run is not None and run.tag == "aurora-rm3"
    assert messages(warnings) == ["Windows (CRLF) line endings were normalised."]


def test_row17_cr_only_line_endings() -> None:
    data = (line(T1) + line(T2) + line(T3, tag="x")).replace("\n", "\r")
    _, errors, warnings = check(data)
    assert messages(errors) == ["Line 3: run tag 'x' differs from 'aurora-rm3' on line 1."]
    assert messages(warnings) == ["Classic Mac (CR) line endings were normalised."]


def test_row18_trailing_empty_lines() -> None:
    run, errors, warnings = check(line(T1) + line(T2) + line(T3) + "\n\n \n")
    assert errors == [] and run is not None
    assert messages(warnings) == ["3 empty lines at the end of the file were ignored."]
    _, _, warnings = check(line(T1) + line(T2) + line(T3) + "\n")
    assert messages(warnings) == ["1 empty line at the end of the file was ignored."]


def test_row19_field_two_not_q0() -> None:
    topics = frozenset(f"t{i}" for i in range(2))
    body = [line(f"t{i % 2}", pid(i), q0="0") for i in range(2000)]
    run, errors, warnings = check("".join(body), topics=topics)
    assert errors == [] and run is not None
    assert messages(warnings) == [
        "2,000 lines (first: line 1) have '0' instead of 'Q0' in field 2; the field is ignored."
    ]
    _, _, warnings = check(line(T1) + line(T2, q0="q0") + line(T3))
    assert messages(warnings) == [
        "1 line (line 2) has 'q0' instead of 'Q0' in field 2; the field is ignored."
    ]


def test_row20_topics_without_results() -> None:
    topics = frozenset(f"T{i:04d}/s" for i in range(2125))
    covered = sorted(topics)[312:]
    data = "".join(line(q, pid(i)) for i, q in enumerate(covered))
    run, errors, warnings = check(data, topics=topics)
    assert errors == [] and run is not None
    assert messages(warnings) == [
        "312 of 2,125 topics have no results (first: 'T0000/s'). Each counts as 0 on every measure."
    ]


def test_row21_single_precision_ties() -> None:
    body = [line(T1, pid(i), score=str(10 + i)) for i in range(9)]
    body.append(line(T1, pid(20), score="0.5000000002"))  # line 10
    body.append(line(T1, pid(21), score="0.5000000001"))  # line 11: pair 1
    body.append(line(T1, pid(22), score="0.5000000002"))  # same double as line 10: no pair
    body.append(line(T2, pid(23), score="0.5000000001"))  # other query: no pair
    body.append(line(T2, pid(24), score="0.25"))
    body.append(line(T3, pid(25), score="1.00000001"))
    body.append(line(T3, pid(26), score="1.00000002"))  # pair 2
    body.append(line(T3, pid(27), score="1.00000003"))  # pair 3 (all equal as float32)
    run, errors, warnings = check("".join(body))
    assert errors == [] and run is not None
    assert messages(warnings) == [
        "3 score pairs differ only beyond single precision (e.g. line 10 '0.5000000002' and"
        " line 11 '0.5000000001'); they are treated as ties and ordered by paragraph id,"
        " as trec_eval does."
    ]


def test_row21_single_pair_wording() -> None:
    data = line(T1, pid(1), score="2.00000001") + line(T1, pid(2), score="2") + line(T2) + line(T3)
    _, _, warnings = check(data)
    assert messages(warnings) == [
        "1 score pair differs only beyond single precision (line 1 '2.00000001' and line 2"
        " '2.0'); it is treated as a tie and ordered by paragraph id, as trec_eval does."
    ]


def test_row22_form_run_name() -> None:
    data = line(T1, tag="aur-rm3") + line(T2, tag="aur-rm3") + line(T3, tag="aur-rm3")
    run, errors, warnings = check(
        data, form_run_name="aurora-rm3", name_source="entered in the form"
    )
    assert errors == [] and run is not None
    assert messages(warnings) == [
        "The run tag 'aur-rm3' differs from the run name 'aurora-rm3' entered in the form."
    ]
    assert check(data, form_run_name="aur-rm3")[2] == []
    # Without a form, the warning does not mention one.
    assert messages(check(data, form_run_name="aurora-rm3")[2]) == [
        "The run tag 'aur-rm3' differs from the run name 'aurora-rm3' given with the upload."
    ]


def test_generic_settings() -> None:
    settings = TrecSettings(
        docid_pattern=r"[A-Z0-9]+-[0-9]+",
        docid_hint="a collection document id",
        doc_noun="document",
        topic_set="robust04",
        topic_hint="",
    )
    data = "301 Q0 FBIS3-10 1 2.0 r\n301 Q0 fbis 2 1.0 r\n999 Q0 FT-1 3 0.5 r\n"
    _, errors, _ = check(data, topics=frozenset({"301"}), settings=settings)
    assert messages(errors) == [
        "Line 2: document id 'fbis' must be a collection document id.",
        "Line 3: unknown query id '999' (not a robust04 topic).",
    ]


# -- lenient import ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value", "used"),
    [
        (b"abc", 0.0, 0),
        (b"3,5", 3.0, 1),
        (b"0x10", 16.0, 4),
        (b"inf", np.inf, 3),
        (b"-Infinity", -np.inf, 9),
        (b"infinit", np.inf, 3),
        (b"1e5x", 1e5, 3),
        (b"1e", 1.0, 1),
        (b"1e+", 1.0, 1),
        (b".5.5", 0.5, 2),
        (b"+.5", 0.5, 3),
        (b"0x", 0.0, 1),
        (b"0x1p3", 8.0, 5),
        (b"0x1.8p1", 3.0, 7),
        (b"-0X1P-2", -0.25, 7),
        (b"0x.8", 0.5, 4),
        (b"1e400", np.inf, 5),
        (b"0x1p5000", np.inf, 8),
        (b"17.25", 17.25, 5),
    ],
)
def test_c_atof(text: bytes, value: float, used: int) -> None:
    assert c_atof(text) == (value, used)


@pytest.mark.parametrize("text", [b"nan", b"-NaN", b"nan(0x1)", b"nan(123)"])
def test_c_atof_nan(text: bytes) -> None:
    assert np.isnan(c_atof(text)[0])


def lenient(data: str | bytes) -> tuple[TrecRun | None, list[Issue], list[str]]:
    raw = data.encode() if isinstance(data, str) else data
    result = parse_lenient(io.BytesIO(raw).readlines())
    again = parse_lenient(io.BytesIO(raw))
    assert result[1:] == again[1:]
    return result


def test_lenient_score_coercions_reported() -> None:
    data = "".join(
        f"q1 Q0 d{i} {i} {s} tag\n" for i, s in enumerate(["abc", "3,5", "0x10", "inf", "2.5"])
    )
    run, errors, report = lenient(data)
    assert errors == [] and run is not None
    assert run.scores.tolist() == [0.0, 3.0, 16.0, np.inf, 2.5]
    assert report == [
        "Line 1: score 'abc' was read as 0, as C atof reads it.",
        "Line 2: score '3,5' was read as 3, as C atof reads it.",
        "Line 3: score '0x10' was read as 16, as C atof reads it.",
        "Line 4: score 'inf' was read as inf, as C atof reads it.",
    ]


def test_lenient_coercion_listing_is_capped() -> None:
    data = "".join(f"q1 Q0 d{i} 1 x{i} tag\n" for i in range(30))
    _, errors, report = lenient(data)
    assert errors == []
    assert len(report) == 26
    assert report[-1] == "… and 5 more score coercions."


def test_lenient_nan_refused() -> None:
    run, errors, _ = lenient("q1 Q0 d1 1 1 t\nq1 Q0 d2 2 nan t\n")
    assert run is None
    assert messages(errors) == [
        "Line 2: score 'nan' is not a number; trec_eval's ordering with NaN is undefined."
    ]


def test_lenient_whitespace_extra_fields_crlf_and_ids() -> None:
    data = (
        "  q1\tQ0   anything-goes 7 1.5 tagA extra fields\r\n"
        "q1 x DOC\x0b? 2.5 tagA\r\n"
        "enwiki:q2 Q0 d 1 3 tagB\n"
    )
    run, errors, report = lenient(data)
    assert errors == [] and run is not None
    assert run.queries == ("q1", "enwiki:q2")
    assert run.docids.tolist() == [b"anything-goes", b"DOC", b"d"]
    assert run.tag == "tagB"
    assert report == [
        "2 lines end with CR LF; the CR was read as white space.",
        "1 line has more than 6 fields (first: line 1); the extra fields were ignored.",
        "The run has 2 different run tags (first 'tagA' on line 1); the last line's tag"
        " 'tagB' is kept, as trec_eval does.",
    ]


def test_lenient_bulk_and_line_by_line_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = "".join(f"q{i % 3} Q0 d{i} {i} {i / 7!r} t{i % 2}\r\n" for i in range(50))
    mixed = plain + "q1 Q0 x 1 0x10 t0 extra\n" + plain.replace("d", "e")
    bulk = lenient(mixed)
    monkeypatch.setattr(lenient_module, "six_columns", lambda blob, lines: None)
    by_line = lenient(mixed)
    assert bulk[1:] == by_line[1:]
    assert bulk[0] is not None and by_line[0] is not None
    for name in ("tag", "queries"):
        assert getattr(bulk[0], name) == getattr(by_line[0], name)
    for name in ("query_index", "docids", "scores"):
        assert getattr(bulk[0], name).tolist() == getattr(by_line[0], name).tolist()
    assert bulk[2][:2] == [
        "100 lines end with CR LF; the CR was read as white space.",
        "1 line has more than 6 fields (first: line 51); the extra fields were ignored.",
    ]


def test_lenient_no_per_query_cap() -> None:
    data = "".join(f"q1 Q0 d{i} {i} {i} t\n" for i in range(1500))
    run, errors, _ = lenient(data)
    assert errors == [] and run is not None and len(run) == 1500


def test_lenient_refusals() -> None:
    assert lenient("")[1] == [Issue(None, "The file is empty.")]
    run, errors, _ = lenient("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 1 2.0\n\n")
    assert run is None
    assert messages(errors) == [
        "Line 2: expected 6 fields (query id, Q0, document id, rank, score, run tag), found 5;"
        ' trec_eval refuses the file ("Malformed line").',
        "Line 3: expected 6 fields (query id, Q0, document id, rank, score, run tag), found 0;"
        ' trec_eval refuses the file ("Malformed line").',
    ]
    run, errors, _ = lenient("q1 Q0 d1 1 2.0 t\nq2 Q0 d1 1 2.0 t\nq1 Q0 d1 5 1.0 t\n")
    assert run is None
    assert messages(errors) == [
        "Line 3: document d1 already listed for query 'q1' on line 1;"
        " trec_eval stops on duplicate documents."
    ]


def test_lenient_bom_kept_in_query_id() -> None:
    run, errors, report = lenient(b"\xef\xbb\xbfq1 Q0 d1 1 2 t\n")
    assert errors == [] and run is not None
    assert run.queries == ("\ufeffq1",)
    assert report == [
        "Line 1 starts with a byte-order mark; as in trec_eval it is part of the query id."
    ]


def test_lenient_scores_like_trec_eval_default_and_c() -> None:
    qrels, issues = parse_qrels(
        f"q1 0 {pid(1)} 1\nq2 0 {pid(2)} 1\n".encode(), topics=None, settings=CAR
    )
    assert qrels is not None and issues == []
    run, errors, _ = lenient(f"q1 Q0 {pid(1)} 1 0x10 t\nq9 Q0 {pid(1)} 1 1 t\n")
    assert run is not None and errors == []
    detail = score_variant(run, qrels, 1)
    assert detail.evaluation.means["MAP"] == 0.5  # q2 missing counts 0
    assert score_variant(run, qrels, 1, missing="skip").evaluation.means["MAP"] == 1.0
    assert detail.ignored_queries == ("q9",)


# -- qrels ------------------------------------------------------------------------------------

GRADED_QRELS = (
    f"{T1} 0 {pid(1)} 3\n{T1} 0 {pid(2)} 0\n{T2} 0 {pid(3)} -1\n"
    f"{T2} 0 {pid(4)} -2\n{T3} 0 {pid(5)} 0\n{T1} 0 {pid(6)} 1\n"
)


def test_qrels_parsed_and_reported() -> None:
    qrels, issues = parse_qrels(GRADED_QRELS.encode(), topics=TOPICS, settings=CAR)
    assert issues == []
    assert qrels is not None
    assert qrels.queries == (T1, T2, T3)
    assert len(qrels) == 6
    assert qrels.grade_histogram() == {-2: 1, -1: 1, 0: 2, 1: 1, 3: 1}
    assert qrels_report(qrels, 1) == {
        "lines": 6,
        "queries": 3,
        "grade_histogram": {-2: 1, -1: 1, 0: 2, 1: 1, 3: 1},
        "threshold": 1,
        "queries_without_relevant": [T2, T3],
        "queries_all_negative": [T2],
    }
    assert qrels_report(qrels, 0)["queries_without_relevant"] == [T2]


def test_qrels_errors() -> None:
    data = (
        f"{T1} 0 {pid(1)} 4\n"
        f"{T1} 0 {pid(2)} 1.5\n"
        f"{T1} 0 {pid(3)} -3\n"
        f"{T1} 0 ABC 1\n"
        f"enwiki:Aftertaste 0 {pid(4)} 1\n"
        f"{T1} 0 {pid(5)} 1\n"
        f"{T1} 0 {pid(5)} 2\n"
        f"{T1} 0 {pid(6)}\n"
        "\n"
        f"{T2} 0 {pid(7)} 1\n"
    )
    qrels, issues = parse_qrels(data.encode(), topics=TOPICS, settings=CAR)
    assert qrels is None
    assert messages(issues) == [
        "Line 1: grade '4' must be an integer from -2 to 3.",
        "Line 2: grade '1.5' must be an integer from -2 to 3.",
        "Line 3: grade '-3' must be an integer from -2 to 3.",
        "Line 4: paragraph id 'ABC' must be 40 lowercase hexadecimal characters.",
        "Line 5: unknown query id 'enwiki:Aftertaste' (not a benchmarkY1test topic)."
        " Ids with the 'enwiki:' prefix belong to the v2.0 release; this task uses v1.5 ids.",
        f"Line 7: paragraph 00000000… is judged twice for query '{T1}' (first on line 6).",
        "Line 8: expected 4 fields (query id, iteration, paragraph id, grade), found 3.",
        "Line 9 is empty.",
    ]


def test_qrels_without_topic_list_trailing_lines_and_crlf() -> None:
    data = f"any/query 0 {pid(1)} 1\r\nother 0 {pid(1)} -2\r\n\r\n\n"
    qrels, issues = parse_qrels(data.encode(), topics=None, settings=CAR)
    assert qrels is not None
    assert qrels.queries == ("any/query", "other")
    assert messages(issues) == [
        "2 empty lines at the end of the file were ignored.",
        "Windows (CRLF) line endings were normalised.",
    ]
    assert all(issue.severity == "warning" for issue in issues)


def test_qrels_empty() -> None:
    assert parse_qrels(b"", topics=TOPICS, settings=CAR) == (
        None,
        [Issue(None, "The file is empty.")],
    )


def test_score_run_over_all_qrels_queries() -> None:
    qrels, _ = parse_qrels(GRADED_QRELS.encode(), topics=TOPICS, settings=CAR)
    assert qrels is not None
    # T1 ranked: pid(2) (grade 0), pid(1) (grade 3); T2 and T3 absent.
    run, errors, _ = check(line(T1, pid(2), score="2") + line(T1, pid(1), score="1"))
    assert run is not None and errors == []
    # Threshold 1: T1 has R = 2 (pid 1, pid 6): AP = (1/2)/2; RR = 1/2; R-Prec = 1/2.
    assert score_run(run, qrels, 1) == pytest.approx(
        {"MAP": 0.25 / 3, "R-Prec": 0.5 / 3, "MRR": 0.5 / 3}
    )
    # Threshold 0: T1 has R = 3: AP = (1 + 1)/3; R-Prec = 2/3; RR = 1. T3 (grade 0) absent.
    assert score_run(run, qrels, 0) == pytest.approx(
        {"MAP": (2 / 3) / 3, "R-Prec": (2 / 3) / 3, "MRR": 1 / 3}
    )


def test_qrels_dataclass_is_plain_arrays() -> None:
    qrels = Qrels(
        queries=("a",),
        query_index=np.zeros(2, dtype=np.int32),
        docids=np.array([b"x", b"y"]),
        grades=np.array([1, 1], dtype=np.int32),
    )
    assert qrels.grade_histogram() == {1: 2}


# -- generic defaults (any TREC-style track) --------------------------------------------------

GENERIC = TrecSettings()
CAR_WORDS = ("CAR", "paragraph", "benchmarkY1test", "enwiki")


def no_car_wording(issues: list[Issue]) -> bool:
    return not any(word in issue.message for issue in issues for word in CAR_WORDS)


def test_preset_states_every_car_rule() -> None:
    car = replace(
        GENERIC,
        docid_pattern=r"[0-9a-f]{40}",
        docid_hint="40 lowercase hexadecimal characters",
        doc_noun="paragraph",
        tag_pattern=r"[A-Za-z0-9_.-]{1,20}",
        tag_hint="1–20 characters from A–Z, a–z, 0–9, '_', '.', '-'",
        topic_set="benchmarkY1test",
        topic_hint=(
            "Ids with the 'enwiki:' prefix belong to the v2.0 release; this task uses v1.5 ids."
        ),
        topic_hint_prefix="enwiki:",
        min_grade=-2,
        max_grade=3,
    )
    assert car == CAR


@pytest.mark.parametrize("array_path_only", [False, True])
def test_generic_run_accepts_any_docid(
    monkeypatch: pytest.MonkeyPatch, array_path_only: bool
) -> None:
    if array_path_only:
        # The generic id pattern must not cost the array path: no per-field fallback needed.
        monkeypatch.setattr(strict._StrictValidator, "_feed_fast", None)
        monkeypatch.setattr(strict._StrictValidator, "_feed_slow", None)
    ids = ["clueweb09-en0000-00-00000", "GX000-00-0000000", "doc#1:/a?b=c", "x"]
    data = "".join(
        line("301", f"{ids[i % 4]}.{i}", str(i + 1), f"{100 - i}.5", tag="run:1/x")
        for i in range(300)
    )
    run, errors, warnings = check(data, topics=frozenset({"301"}), settings=GENERIC)
    assert errors == [] and run is not None
    assert run.docids.tolist()[:2] == [b"clueweb09-en0000-00-00000.0", b"GX000-00-0000000.1"]
    assert no_car_wording(warnings)


def test_generic_run_tag_pattern() -> None:
    topics = frozenset({"301"})
    assert check(line("301", tag="run:1/x"), topics, GENERIC)[1] == []
    assert only_error(line("301", tag="t" * 65), topics=topics, settings=GENERIC) == (
        f"Line 1: run tag '{'t' * 65}' must be 1–64 printable ASCII characters without white space."
    )


def test_generic_unknown_query_without_car_wording() -> None:
    data = line("301", "d1") + line("enwiki:Zebra", "d2") + line("302", "d1", "1", "1.0")
    _, errors, _ = check(data, topics=frozenset({"301"}), settings=GENERIC)
    assert messages(errors) == [
        "Line 2: unknown query id 'enwiki:Zebra' (not a topic of this set).",
        "Line 3: unknown query id '302' (not a topic of this set).",
    ]
    qrels, issues = parse_qrels(
        b"301 0 d1 1\n999 0 d1 1\n", topics=frozenset({"301"}), settings=GENERIC
    )
    assert qrels is None
    assert messages(issues) == ["Line 2: unknown query id '999' (not a topic of this set)."]


def test_generic_run_messages_without_car_wording() -> None:
    data = (
        line("301", "d1") + "301 Q0 d2 2 1.0\n" + line("301", "d1") + line("301", "d3", score="x")
    )
    _, errors, _ = check(data, topics=frozenset({"301", "302"}), settings=GENERIC)
    assert messages(errors) == [
        "Line 2: expected 6 fields (query id, Q0, document id, rank, score, run tag), found 5.",
        "Line 3: document d1 already listed for query '301' on line 1.",
        "Line 4: score 'x' is not a number.",
    ]
    assert no_car_wording(errors)


def test_generic_qrels_accept_any_docid_and_integer_grade() -> None:
    data = b"301 0 clueweb09-en0000-00-00000 4\n301 0 GX000-00-0000000 -1\n302 Q0 x 17\n"
    for topics in (None, frozenset({"301", "302"})):
        qrels, issues = parse_qrels(data, topics=topics, settings=GENERIC)
        assert issues == [] and qrels is not None
        assert qrels.grades.tolist() == [4, -1, 17]
        assert qrels.docids.tolist()[0] == b"clueweb09-en0000-00-00000"


def test_generic_qrels_grade_messages() -> None:
    data = (
        b"301 0 a 1.5\n301 0 b 99999999999999999999\n301 0 c -2147483649\n301 0 d 0002147483647\n"
    )
    qrels, issues = parse_qrels(data, topics=None, settings=GENERIC)
    assert qrels is None
    assert messages(issues) == [
        "Line 1: grade '1.5' must be an integer.",
        "Line 2: grade '99999999999999999999' is out of range; grades are 32-bit integers"
        " (-2,147,483,648 to 2,147,483,647).",
        "Line 3: grade '-2147483649' is out of range; grades are 32-bit integers"
        " (-2,147,483,648 to 2,147,483,647).",
    ]
    one_sided = replace(GENERIC, min_grade=0)
    _, issues = parse_qrels(b"301 0 a -1\n", topics=None, settings=one_sided)
    assert messages(issues) == ["Line 1: grade '-1' must be an integer of at least 0."]
    _, issues = parse_qrels(b"301 0 a 5\n", topics=None, settings=replace(GENERIC, max_grade=4))
    assert messages(issues) == ["Line 1: grade '5' must be an integer of at most 4."]


def test_car_preset_still_refuses_grade_4() -> None:
    qrels, issues = parse_qrels(f"{T1} 0 {pid(1)} 4\n".encode(), topics=TOPICS, settings=CAR)
    assert qrels is None
    assert messages(issues) == ["Line 1: grade '4' must be an integer from -2 to 3."]


def test_qrels_comment_lines_skipped_with_physical_line_numbers() -> None:
    data = (
        "# qrels of the test collection — judged in 2009\n"
        "301 0 d1 1\n"
        "   # a comment after blanks\n"
        "\t#tab\n"
        "302 0 d2 0\n"
    )
    for settings, topics in ((GENERIC, None), (GENERIC, frozenset({"301", "302"}))):
        qrels, issues = parse_qrels(data.encode(), topics=topics, settings=settings)
        assert issues == [] and qrels is not None
        assert qrels.queries == ("301", "302") and len(qrels) == 2
    bad = data + "# one more\n303 0 d3 x\n301 0 d1 2\n"
    qrels, issues = parse_qrels(bad.encode(), topics=None, settings=GENERIC)
    assert qrels is None
    assert messages(issues) == [
        "Line 7: grade 'x' must be an integer.",
        "Line 8: document d1 is judged twice for query '301' (first on line 2).",
    ]


def test_qrels_comment_lines_with_crlf_and_only_comments() -> None:
    data = f"#header\r\n{T1} 0 {pid(1)} 1\r\n# mid\r\n{T2} 0 {pid(2)} 4\r\n"
    qrels, issues = parse_qrels(data.encode(), topics=TOPICS, settings=CAR)
    assert qrels is None
    assert messages(issues) == [
        "Line 4: grade '4' must be an integer from -2 to 3.",
        "Windows (CRLF) line endings were normalised.",
    ]
    assert parse_qrels(b"# nothing\n  # judged\n", topics=None, settings=GENERIC) == (
        None,
        [Issue(None, "The file has no judgments, only comment lines.")],
    )


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        ([1, 2, 2, 3, 5, 5, 5], [1, 2, 4, 5, 6]),  # sorted already: no sort is made
        ([5, 2, 3, 5, 2, 9, 5], [0, 1, 3, 4, 6]),  # unsorted
        ([4, 3, 2, 1], []),
        ([7], []),
        ([], []),
    ],
)
def test_repeated_positions_sorted_or_not(keys: list[int], expected: list[int]) -> None:
    from leaderboard.formats.trec.strict import _repeated

    assert _repeated(np.array(keys, dtype=np.int64)).tolist() == expected
