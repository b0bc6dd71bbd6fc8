"""The fast path of strict CQA validation gives exactly the verdicts of the line-by-line checker."""

from __future__ import annotations

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


def both(data: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[cqa.CqaVerdict, cqa.CqaVerdict]:
    fast = cqa.validate_strict(data, GOLD, where="subtask A (test)")
    with monkeypatch.context() as m:
        m.setattr(cqa, "_clean_rows", lambda joined, gold: None)
        slow = cqa.validate_strict(data, GOLD, where="subtask A (test)")
    return fast, slow


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


CASES = {
    "clean": run_text(),
    "shuffled": shuffled(),
    "equal scores": run_text(lambda i, r: r.__setitem__(3, "1")),
    "exponents and signs": run_text(
        lambda i, r: r.__setitem__(3, f"{'-' if i % 2 else '+'}{i}e-3")
    ),
    "bad label": run_text(lambda i, r: r.__setitem__(4, "True") if i == 9 else None),
    "nan": run_text(lambda i, r: r.__setitem__(3, "nan") if i == 3 else None),
    "overflow": run_text(lambda i, r: r.__setitem__(3, "1e400") if i == 3 else None),
    "underscore": run_text(lambda i, r: r.__setitem__(3, "1_0") if i == 3 else None),
    "float rank": run_text(lambda i, r: r.__setitem__(2, "0.00E+00")),
    "unknown id": run_text(lambda i, r: r.__setitem__(1, r[1] + "9") if i == 5 else None),
    "space": run_text(lambda i, r: r.__setitem__(4, r[4] + " ") if i == 5 else None),
    "nbsp": run_text(lambda i, r: r.__setitem__(3, r[3] + "\u00a0") if i == 5 else None),
    "dot only": run_text(lambda i, r: r.__setitem__(3, ".") if i == 5 else None),
    "empty score": run_text(lambda i, r: r.__setitem__(3, "") if i == 5 else None),
    "exponent without digits": run_text(lambda i, r: r.__setitem__(3, "1e") if i == 5 else None),
    "signed ranks": run_text(lambda i, r: r.__setitem__(2, "+1" if i % 2 else "-2")),
    "empty rank": run_text(lambda i, r: r.__setitem__(2, "") if i == 5 else None),
    # 6 fields on one line and 4 on the next: the field count of the whole file is right.
    "fields shifted between lines": run_text(
        lambda i, r: r.append("x") if i == 5 else (r.__delitem__(2) if i == 6 else None)
    ),
    "form feed": run_text(lambda i, r: r.__setitem__(3, r[3] + "\f") if i == 5 else None),
    "trailing blank lines": run_text() + b"\n\n",
    "trailing blank line with a space": run_text() + b" \n",
    "no final line break": run_text()[:-1],
    "windows line endings": run_text().replace(b"\n", b"\r\n"),
    "byte-order mark": b"\xef\xbb\xbf" + run_text(),
    "a line over 4096 bytes": run_text(
        lambda i, r: r.__setitem__(3, "0." + "1" * 4100) if i == 7 else None
    ),
    "a line of exactly 4096 bytes": run_text(
        lambda i, r: (
            r.__setitem__(3, "0." + "1" * (4096 - len("\t".join(r)) + len(r[3]) - 2))
            if i == 7
            else None
        )
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fast_and_slow_paths_agree(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, slow = both(CASES[name], monkeypatch)
    same(fast, slow)


def test_the_fast_path_takes_clean_files_and_leaves_others() -> None:
    lines = CASES["clean"].split(b"\n")[:-1]
    fast = cqa._clean_rows(b"\n".join(lines), GOLD)
    assert fast is not None
    rows, scores, labels = fast
    assert rows.tolist() == list(range(len(GOLD)))
    first = lines[0].decode().split("\t")
    assert scores[0] == float(first[3]) and labels[0] == (first[4] == "true")
    shuffled_lines = CASES["shuffled"].split(b"\n")[:-1]
    fast = cqa._clean_rows(b"\n".join(shuffled_lines), GOLD)
    assert fast is not None
    assert sorted(fast[0].tolist()) == list(range(len(GOLD))) != fast[0].tolist()
    refused = (
        "bad label",
        "nan",
        "overflow",
        "underscore",
        "float rank",
        "space",
        "dot only",
        "empty score",
        "exponent without digits",
        "empty rank",
        "fields shifted between lines",
        "form feed",
    )
    for name in refused:
        assert cqa._clean_rows(CASES[name][:-1], GOLD) is None, name
    assert cqa._clean_rows(b"\n".join(lines[:-1]), GOLD) is None  # a line missing
    assert cqa._clean_rows(b"\n".join([*lines[:-1], lines[0]]), GOLD) is None  # a duplicate pair
    assert cqa._clean_rows(b"\n".join([*lines, b""]), GOLD) is None  # a trailing blank line
    longest = CASES["a line of exactly 4096 bytes"][:-1]
    assert max(map(len, longest.split(b"\n"))) == cqa.MAX_LINE_BYTES
    assert cqa._clean_rows(longest, GOLD) is not None
    assert cqa._clean_rows(CASES["a line over 4096 bytes"][:-1], GOLD) is None
