"""The fast path of strict CQA validation gives exactly the verdicts of the line-by-line checker."""

from __future__ import annotations

import math
import random

import pytest

from leaderboard.formats import cqa
from tests.runs import GOLD_TEST_A

GOLD = cqa.parse_gold(GOLD_TEST_A.read_bytes())
LINES = GOLD_TEST_A.read_text().splitlines()


def run_text(transform=None) -> bytes:  # type: ignore[no-untyped-def]
    rng = random.Random(7)
    rows = []
    for i, line in enumerate(LINES):
        q, c, _pos, _ir, label = line.split("\t")
        rows.append([q, c, "0", f"{rng.random():.6f}", label])
        if transform:
            transform(i, rows[-1])
    return ("\n".join("\t".join(r) for r in rows) + "\n").encode()


def validate(data: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[list[bool], cqa.CqaVerdict]:
    """Validate ``data``; return whether each call of the fast path took the file, and the verdict."""
    real = cqa._clean_rows
    calls: list[bool] = []

    def spy(joined: bytes, gold: cqa.CqaGold):  # type: ignore[no-untyped-def]
        result = real(joined, gold)
        calls.append(result is not None)
        return result

    with monkeypatch.context() as m:
        m.setattr(cqa, "_clean_rows", spy)
        verdict = cqa.validate_strict(data, GOLD, where="subtask A (test)")
    return calls, verdict


def slow_only(data: bytes, monkeypatch: pytest.MonkeyPatch) -> cqa.CqaVerdict:
    """Return the verdict of the line-by-line checker alone (the fast path declines everything)."""
    with monkeypatch.context() as m:
        m.setattr(cqa, "_clean_rows", lambda joined, gold: None)
        return cqa.validate_strict(data, GOLD, where="subtask A (test)")


def same(fast: cqa.CqaVerdict, slow: cqa.CqaVerdict) -> None:
    assert fast.errors == slow.errors
    assert fast.warnings == slow.warnings
    assert (fast.run is None) == (slow.run is None)
    if fast.run is not None and slow.run is not None:
        assert fast.run.scores.tolist() == slow.run.scores.tolist()
        assert fast.run.predicted.tolist() == slow.run.predicted.tolist()


def shuffled() -> bytes:
    lines = run_text().decode().splitlines()
    random.Random(3).shuffle(lines)
    return ("\n".join(lines) + "\n").encode()


def exactly_4096(i: int, r: list[str]) -> None:
    """Pad line 8's score so that the line is exactly MAX_LINE_BYTES long."""
    if i == 7:
        r[3] = "0." + "1" * (4096 - len("\t".join(r)) + len(r[3]) - 2)


#: Files the fast path accepts whole: its verdict must be the line-by-line checker's.
FAST = {
    "clean": run_text(),
    "shuffled": shuffled(),
    "equal scores": run_text(lambda i, r: r.__setitem__(3, "1")),
    "exponents and signs": run_text(
        lambda i, r: r.__setitem__(3, f"{'-' if i % 2 else '+'}{i}e-3")
    ),
    "bare dots and upper-case exponents": run_text(
        lambda i, r: r.__setitem__(3, (".5", "5.", "1E-3", "2.5E+2", "-0", "+.25e1")[i % 6])
    ),
    "extreme finite scores": run_text(
        lambda i, r: r.__setitem__(3, ("1e308", "-1.7976931348623157e308", "4.9e-324")[i % 3])
    ),
    "zero-padded and huge ranks": run_text(
        lambda i, r: r.__setitem__(2, ("007", "123456789012345678901234567890", "0")[i % 3])
    ),
    "every label false": run_text(lambda i, r: r.__setitem__(4, "false")),
    "no final line break": run_text()[:-1],
    "windows line endings": run_text().replace(b"\n", b"\r\n"),
    "old mac line endings": run_text().replace(b"\n", b"\r"),
    "byte-order mark": b"\xef\xbb\xbf" + run_text(),
    "a line of exactly 4096 bytes": run_text(exactly_4096),
}

#: Files the fast path must leave to the line-by-line checker, with what the checker says:
#: "error" (refused), "warning" (accepted with a format warning) or "accepted" (accepted as is;
#: the fast path declines anything it is unsure of, e.g. a space or a signed rank).
FALLBACK = {
    "bad label": (run_text(lambda i, r: r.__setitem__(4, "True") if i == 9 else None), "error"),
    "nan": (run_text(lambda i, r: r.__setitem__(3, "nan") if i == 3 else None), "error"),
    "overflow": (run_text(lambda i, r: r.__setitem__(3, "1e400") if i == 3 else None), "error"),
    "underscore": (run_text(lambda i, r: r.__setitem__(3, "1_0") if i == 3 else None), "error"),
    "float rank": (run_text(lambda i, r: r.__setitem__(2, "0.00E+00")), "warning"),
    "unknown id": (
        run_text(lambda i, r: r.__setitem__(1, r[1] + "9") if i == 5 else None),
        "error",
    ),
    "space": (run_text(lambda i, r: r.__setitem__(4, r[4] + " ") if i == 5 else None), "accepted"),
    "nbsp": (
        run_text(lambda i, r: r.__setitem__(3, r[3] + "\u00a0") if i == 5 else None),
        "error",
    ),
    "dot only": (run_text(lambda i, r: r.__setitem__(3, ".") if i == 5 else None), "error"),
    "empty score": (run_text(lambda i, r: r.__setitem__(3, "") if i == 5 else None), "error"),
    "exponent without digits": (
        run_text(lambda i, r: r.__setitem__(3, "1e") if i == 5 else None),
        "error",
    ),
    "signed ranks": (
        run_text(lambda i, r: r.__setitem__(2, "+1" if i % 2 else "-2")),
        "accepted",
    ),
    "empty rank": (run_text(lambda i, r: r.__setitem__(2, "") if i == 5 else None), "warning"),
    # 6 fields on one line and 4 on the next: the field count of the whole file is right.
    "fields shifted between lines": (
        run_text(lambda i, r: r.append("x") if i == 5 else (r.__delitem__(2) if i == 6 else None)),
        "error",
    ),
    "form feed": (
        run_text(lambda i, r: r.__setitem__(3, r[3] + "\f") if i == 5 else None),
        "error",
    ),
    "trailing blank lines": (run_text() + b"\n\n", "warning"),
    "trailing blank line with a space": (run_text() + b" \n", "warning"),
    "a line over 4096 bytes": (
        run_text(lambda i, r: r.__setitem__(3, "0." + "1" * 4100) if i == 7 else None),
        "error",
    ),
    "a line missing": (b"".join(run_text().splitlines(keepends=True)[:-1]), "error"),
    "an id changed in place (same length)": (
        run_text(lambda i, r: r.__setitem__(1, r[1][:-1] + "X") if i == 5 else None),
        "error",
    ),
    "a duplicate pair": (
        b"".join([*run_text().splitlines(keepends=True)[:-1], run_text().splitlines(True)[0]]),
        "error",
    ),
}


@pytest.mark.parametrize("name", sorted(FAST))
def test_the_fast_path_takes_the_file_and_agrees_with_the_checker(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls, fast = validate(FAST[name], monkeypatch)
    assert calls == [True], "the fast path did not take this file"
    assert fast.run is not None and fast.errors == []
    same(fast, slow_only(FAST[name], monkeypatch))


@pytest.mark.parametrize("name", sorted(FALLBACK))
def test_the_fast_path_leaves_the_file_to_the_checker(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, outcome = FALLBACK[name]
    calls, verdict = validate(data, monkeypatch)
    assert calls == [False], "the fast path took a file it must leave to the checker"
    if outcome == "error":
        assert verdict.errors and verdict.run is None
    elif outcome == "warning":
        assert verdict.errors == [] and verdict.run is not None and verdict.warnings
    else:
        assert (verdict.errors, verdict.warnings) == ([], []) and verdict.run is not None


def test_the_fast_path_takes_clean_files_and_leaves_others() -> None:
    lines = FAST["clean"].split(b"\n")[:-1]
    fast = cqa._clean_rows(b"\n".join(lines), GOLD)
    assert fast is not None
    rows, scores, labels = fast
    assert rows.tolist() == list(range(len(GOLD)))
    first = lines[0].decode().split("\t")
    assert scores[0] == float(first[3]) and labels[0] == (first[4] == "true")
    shuffled_lines = FAST["shuffled"].split(b"\n")[:-1]
    fast = cqa._clean_rows(b"\n".join(shuffled_lines), GOLD)
    assert fast is not None
    assert sorted(fast[0].tolist()) == list(range(len(GOLD))) != fast[0].tolist()
    assert cqa._clean_rows(b"\n".join(lines[:-1]), GOLD) is None  # a line missing
    assert cqa._clean_rows(b"\n".join([*lines[:-1], lines[0]]), GOLD) is None  # a duplicate pair
    assert cqa._clean_rows(b"\n".join([*lines, b""]), GOLD) is None  # a trailing blank line
    longest = FAST["a line of exactly 4096 bytes"][:-1]
    assert max(map(len, longest.split(b"\n"))) == cqa.MAX_LINE_BYTES
    assert cqa._clean_rows(longest, GOLD) is not None
    assert cqa._clean_rows(FALLBACK["a line over 4096 bytes"][0][:-1], GOLD) is None


#: Files the array path (gold order, ``%.kf`` scores) takes as well as files it declines.
ARRAY = {
    **{name: FAST[name] for name in ("clean", "every label false", "windows line endings")},
    "three decimals, signs": run_text(
        lambda i, r: r.__setitem__(3, f"{'-' if i % 3 else '+'}{i / 7:.3f}")
    ),
    "integer part of many digits": run_text(lambda i, r: r.__setitem__(3, f"{i * 99991:.4f}")),
    "multi-digit ranks": run_text(lambda i, r: r.__setitem__(2, str(i))),
    "mixed decimals": run_text(lambda i, r: r.__setitem__(3, f"{0.5:.{1 + i % 3}f}")),
    "a rank of 9 digits": run_text(lambda i, r: r.__setitem__(2, "123456789" if i == 4 else "1")),
    "a label in capitals": run_text(lambda i, r: r.__setitem__(4, "TRUE" if i == 4 else r[4])),
    "a label cut short": run_text(lambda i, r: r.__setitem__(4, "fals" if i == 4 else r[4])),
    "a pair changed in place": FALLBACK["an id changed in place (same length)"][0],
    "a question id one byte longer": run_text(
        lambda i, r: (r.__setitem__(0, r[0] + "0"), r.__setitem__(1, r[1][1:])) if i == 4 else None
    ),
}


@pytest.mark.parametrize("name", sorted(ARRAY))
def test_the_array_path_gives_the_bytes_paths_arrays(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = ARRAY[name].replace(b"\r\n", b"\n")
    joined = data[:-1]
    taken = cqa._gold_order_rows(joined, GOLD)
    with monkeypatch.context() as m:
        m.setattr(cqa, "_gold_order_rows", lambda joined, gold: None)
        bytes_path = cqa._clean_rows(joined, GOLD)
    if name in ("clean", "every label false", "windows line endings", "three decimals, signs"):
        assert taken is not None, "the array path did not take this file"
    if taken is None:
        return
    assert bytes_path is not None, "the array path took a file the bytes path declines"
    for ours, theirs in zip(taken, bytes_path, strict=True):
        assert ours.tolist() == theirs.tolist()
    assert [math.copysign(1, x) for x in taken[1]] == [math.copysign(1, x) for x in bytes_path[1]]
