"""Fuzz the archive reader (.zip, .tar, .tar.gz) and the matching of members to evaluation sets."""

from __future__ import annotations

import io
import re
import tarfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import event, example, given
from hypothesis import strategies as st

from leaderboard.formats.archive import ArchiveError, ArchiveLimits, match_members, read_archive
from tests.fuzz import FUZZ, check_issues, flipped, hostile_bytes, mutated

PRESET = Path(__file__).resolve().parents[2] / "leaderboard/tasks/presets/semeval2016-task1"
SETS = ["answer-answer", "headlines", "plagiarism", "postediting", "question-question"]
# Small caps, so that inflating past them is quick to reach and to refuse.
LIMITS = ArchiveLimits(max_members=4, max_member_bytes=3000, max_total_bytes=6000)


def output(slug: str) -> bytes:
    """Return the first 40 lines of a preset gold file, as a run output would look."""
    lines = (PRESET / "english" / f"STS2016.gs.{slug}.txt").read_text().splitlines()[:40]
    return "".join(f"{v or '2.5'}\n" for v in lines).encode()


MEMBERS = [
    ("out/STS2016.OUTPUT.answer-answer.txt", output("answer-answer")),
    ("out/STS2016.OUTPUT.headlines.txt", output("headlines")),
    ("__MACOSX/out/._STS2016.OUTPUT.headlines.txt", b"\x00\x05\x16\x07"),
    ("README", b"a system\n"),
]


def make_zip(members: list[tuple[str, bytes]], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        archive.writestr(zipfile.ZipInfo("out/"), b"")
        for name, content in members:
            archive.writestr(zipfile.ZipInfo(name, (2016, 1, 1, 0, 0, 0)), content, method)
    return buffer.getvalue()


def make_tar(members: list[tuple[str, bytes]], mode: str, link: str = "") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as archive:  # type: ignore[call-overload]
        for name, content in members:
            info = tarfile.TarInfo(name)
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))
        if link:
            symlink = tarfile.TarInfo("out/link")
            symlink.type = tarfile.SYMTYPE
            symlink.linkname = link
            archive.addfile(symlink)
    return buffer.getvalue()


VALID = (
    make_zip(MEMBERS),
    make_zip(MEMBERS, zipfile.ZIP_STORED),
    make_zip(MEMBERS, zipfile.ZIP_BZIP2),
    make_zip(MEMBERS, zipfile.ZIP_LZMA),
    make_tar(MEMBERS, "w"),
    make_tar(MEMBERS, "w:gz"),
)
BOMB = [("headlines.txt", b"0\n" * 50_000)]
#: Archives that must be refused, with a fragment of the refusal.
HOSTILE = (
    (make_zip(BOMB), "larger than 3,000 bytes once decompressed"),
    (make_tar(BOMB, "w:gz"), "larger than 3,000 bytes once decompressed"),
    (make_tar(MEMBERS, "w:gz", link="../../etc/passwd"), "is a link"),
    (make_zip([("../headlines.txt", b"1\n")]), "path traversal"),
    (make_zip([("/etc/headlines.txt", b"1\n")]), "absolute path"),
    (make_zip([(f"{i}.txt", b"1\n") for i in range(5)]), "more than 4 files"),
)
SEEDS = VALID + tuple(data for data, _ in HOSTILE)


def damaged(data: bytes, offset: int) -> bytes:
    """Return a zip with one byte of its first file's compressed data inverted."""
    info = zipfile.ZipFile(io.BytesIO(data)).infolist()[1]
    at = info.header_offset + 30 + len(info.filename.encode()) + offset
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]


def archive_inputs() -> st.SearchStrategy[bytes]:
    """Return valid archives, mutated archives and arbitrary bytes behind archive magics."""
    magics = st.sampled_from((b"PK\x03\x04", b"PK\x05\x06", b"\x1f\x8b", b"\x1f\x8b\x08\x00"))
    return st.one_of(
        st.one_of(*(mutated(a, 3) for a in SEEDS)),
        st.one_of(*(flipped(a) for a in SEEDS)),
        st.tuples(magics, hostile_bytes(512)).map(b"".join),
        hostile_bytes(512).map(lambda b: b.ljust(262, b"\x00")[:257] + b"ustar" + b[257:]),
    )


def check_members(members: dict[str, bytes]) -> None:
    """Assert what an archive gave is within the caps, with plain base names."""
    assert len(members) <= LIMITS.max_members
    assert sum(map(len, members.values())) <= LIMITS.max_total_bytes
    for name, content in members.items():
        assert isinstance(name, str) and name and "/" not in name and "\\" not in name
        assert name not in (".", "..") and "\x00" not in name
        assert isinstance(content, bytes) and len(content) <= LIMITS.max_member_bytes


def check_matching(members: dict[str, bytes]) -> None:
    """Assert matching members to sets gives only known sets and well-formed issues."""
    assigned, issues = match_members(members, SETS)
    check_issues(issues)
    assert set(assigned) <= set(SETS)
    for slug, content in assigned.items():
        assert any(content is v for v in members.values()), slug


@FUZZ
@given(archive_inputs())
@example(VALID[0])
@example(HOSTILE[0][0])
@example(damaged(VALID[3], 12))
@example(damaged(VALID[2], 12))
@example(VALID[0][:-22] + b"PK\x05\x06" + b"\xff" * 18)
def test_read_archive_gives_members_or_a_refusal(data: bytes) -> None:
    try:
        members = read_archive(data, limits=LIMITS)
    except ArchiveError as exc:
        assert type(exc) is ArchiveError and str(exc).strip()
        event("refused")
        return
    event("read")
    check_members(members)
    check_matching(members)


def test_unmutated_archives_are_read_and_hostile_ones_refused() -> None:
    expected = {
        "STS2016.OUTPUT.answer-answer.txt": output("answer-answer"),
        "STS2016.OUTPUT.headlines.txt": output("headlines"),
        "README": b"a system\n",
    }
    for data in VALID:
        assert read_archive(data, limits=LIMITS) == expected
    assert match_members(read_archive(VALID[0], limits=LIMITS), SETS)[0] == {
        "answer-answer": output("answer-answer"),
        "headlines": output("headlines"),
    }
    damage = [(damaged(VALID[k], 12), "damaged or unsupported") for k in (0, 2, 3)]
    for data, fragment in [*HOSTILE, *damage]:
        with pytest.raises(ArchiveError, match=re.escape(fragment)) as refused:
            read_archive(data, limits=LIMITS)
        assert fragment in str(refused.value)


_pieces = st.one_of(
    st.text(st.characters(codec="utf-8"), max_size=6),
    st.sampled_from(["-", "_", ".", "/", "\\", " ", "\u202e", "\u00a0", "multi", "news"]),
    st.sampled_from(SETS).map(str.upper),
)
_names = st.lists(_pieces, max_size=6).map("".join)


@FUZZ
@given(
    st.dictionaries(
        st.one_of(_names, st.sampled_from([n for n, _ in MEMBERS])),
        st.binary(max_size=4),
        max_size=8,
    )
)
@example({"STS.output.multi.txt": b"1\n", "STS.output.multisource.txt": b"2\n"})
@example({"headlines-answer-answer.txt": b"1\n"})
def test_match_members_gives_sets_and_issues(members: dict[str, bytes]) -> None:
    assigned, issues = match_members(members, [*SETS, "multisource"])
    check_issues(issues)
    assert set(assigned) <= {*SETS, "multisource"}
    named = {i.message for i in issues}
    for slug, content in assigned.items():
        assert any(content is v for v in members.values()), slug
    # A member matching two sets is an error naming both; it is assigned to neither.
    if "headlines-answer-answer.txt" in members:
        assert any("matches several sets" in m for m in named)
