"""Safe reading of .zip / .tar / .tar.gz multi-file runs, and matching members to sets."""

from __future__ import annotations

import gzip
import io
import stat
import tarfile
import zipfile
from collections.abc import Callable

import pytest

from leaderboard.formats.archive import ArchiveError, ArchiveLimits, match_members, read_archive

LIMITS = ArchiveLimits()
STS_EN = ["answer-answer", "headlines", "plagiarism", "postediting", "question-question"]


def make_zip(entries: list[tuple[str, bytes]], *, unix_mode: int | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in entries:
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            if unix_mode is not None:
                info.create_system = 3
                info.external_attr = unix_mode << 16
            archive.writestr(info, content)
    return buffer.getvalue()


def make_tar(members: list[tarfile.TarInfo | tuple[str, bytes]], *, gz: bool = True) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz" if gz else "w") as archive:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                archive.addfile(member)
            else:
                name, content = member
                info = tarfile.TarInfo(name)
                info.size = len(content)
                archive.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def tar_entry(name: str, kind: bytes, linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info


def zeros_zip(name: str, size: int) -> bytes:
    """Return a zip with one member of ``size`` zero bytes, written in chunks."""
    buffer = io.BytesIO()
    with (
        zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive,
        archive.open(name, "w", force_zip64=True) as member,
    ):
        block = bytes(1 << 20)
        for _ in range(size // len(block)):
            member.write(block)
    return buffer.getvalue()


def counting(monkeypatch: pytest.MonkeyPatch, cls: type, method: str = "read") -> list[int]:
    """Count the bytes that ``cls.method`` returns; the list holds the running total."""
    total = [0]
    original: Callable[..., bytes] = getattr(cls, method)

    def wrapped(self: object, *args: object, **kwargs: object) -> bytes:
        data = original(self, *args, **kwargs)
        total[0] += len(data)
        return data

    monkeypatch.setattr(cls, method, wrapped)
    return total


# --- happy paths ------------------------------------------------------------------------------


def test_zip_happy_path_with_folders_and_macos_junk() -> None:
    data = make_zip(
        [
            ("run1/", b""),
            ("run1/STS2016.OUTPUT.headlines.txt", b"1\n2\n"),
            ("run1/STS2016.OUTPUT.plagiarism.txt", b"3\n4\n"),
            ("__MACOSX/run1/._STS2016.OUTPUT.headlines.txt", b"\x00\x05junk"),
            ("run1/.DS_Store", b"junk"),
        ]
    )
    assert read_archive(data, limits=LIMITS) == {
        "STS2016.OUTPUT.headlines.txt": b"1\n2\n",
        "STS2016.OUTPUT.plagiarism.txt": b"3\n4\n",
    }


def test_tar_gz_happy_path() -> None:
    data = make_tar(
        [
            tar_entry("out", tarfile.DIRTYPE),
            ("out/STS.output.news.txt", b"1\n2\n"),
            ("out/STS.output.multi.txt", b"3\r\n4\r\n"),
            ("out/._STS.output.news.txt", b"junk"),
        ]
    )
    assert data[:2] == b"\x1f\x8b"
    assert read_archive(data, limits=LIMITS) == {
        "STS.output.news.txt": b"1\n2\n",
        "STS.output.multi.txt": b"3\r\n4\r\n",
    }


def test_plain_tar_happy_path() -> None:
    data = make_tar([("SYSTEM_OUT.headlines.txt", b"5\n")], gz=False)
    assert read_archive(data, limits=LIMITS) == {"SYSTEM_OUT.headlines.txt": b"5\n"}


def test_zip_regular_file_with_unix_mode_is_accepted() -> None:
    data = make_zip([("a.txt", b"1\n")], unix_mode=stat.S_IFREG | 0o644)
    assert read_archive(data, limits=LIMITS) == {"a.txt": b"1\n"}


def test_not_an_archive() -> None:
    with pytest.raises(ArchiveError, match="not a .zip, .tar or .tar.gz archive"):
        read_archive(b"1\n2\n3\n", limits=LIMITS)


def test_damaged_zip_and_gzip_that_is_not_tar() -> None:
    good = make_zip([("a.txt", b"1\n" * 1000)])
    with pytest.raises(ArchiveError, match="damaged"):
        read_archive(good[: len(good) // 2], limits=LIMITS)
    with pytest.raises(ArchiveError, match="damaged"):
        read_archive(gzip.compress(b"1\n2\n" * 300), limits=LIMITS)


# --- refused names and entry types ------------------------------------------------------------


@pytest.mark.parametrize("name", ["../evil.txt", "run/../../evil.txt", "run\\..\\evil.txt"])
def test_zip_path_traversal_refused(name: str) -> None:
    with pytest.raises(ArchiveError, match="path traversal"):
        read_archive(make_zip([(name, b"1\n")]), limits=LIMITS)


@pytest.mark.parametrize("name", ["/etc/passwd", "C:/x/headlines.txt", "C:\\headlines.txt"])
def test_zip_absolute_paths_refused(name: str) -> None:
    with pytest.raises(ArchiveError, match="absolute path"):
        read_archive(make_zip([(name, b"1\n")]), limits=LIMITS)


def test_tar_path_traversal_and_absolute_refused() -> None:
    with pytest.raises(ArchiveError, match="path traversal"):
        read_archive(make_tar([("../evil.txt", b"1\n")]), limits=LIMITS)
    with pytest.raises(ArchiveError, match="absolute path"):
        read_archive(make_tar([("/tmp/evil.txt", b"1\n")]), limits=LIMITS)


def test_zip_symlink_refused() -> None:
    data = make_zip([("headlines.txt", b"/etc/passwd")], unix_mode=stat.S_IFLNK | 0o777)
    with pytest.raises(
        ArchiveError, match="'headlines.txt' is a link; only regular files are accepted"
    ) as caught:
        read_archive(data, limits=LIMITS)
    assert str(caught.value) == "'headlines.txt' is a link; only regular files are accepted."


@pytest.mark.parametrize("kind", [tarfile.SYMTYPE, tarfile.LNKTYPE])
def test_tar_links_refused(kind: bytes) -> None:
    data = make_tar([("a.txt", b"1\n"), tar_entry("headlines.txt", kind, "/etc/passwd")])
    with pytest.raises(
        ArchiveError, match="'headlines.txt' is a link; only regular files are accepted"
    ) as caught:
        read_archive(data, limits=LIMITS)
    assert str(caught.value) == "'headlines.txt' is a link; only regular files are accepted."


@pytest.mark.parametrize("kind", [tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.FIFOTYPE])
def test_tar_devices_refused(kind: bytes) -> None:
    with pytest.raises(ArchiveError, match="device or special file"):
        read_archive(make_tar([tar_entry("dev", kind)]), limits=LIMITS)


def test_zip_device_mode_refused() -> None:
    data = make_zip([("dev", b"")], unix_mode=stat.S_IFCHR | 0o600)
    with pytest.raises(ArchiveError, match="device or special file"):
        read_archive(data, limits=LIMITS)


def test_duplicate_basenames_refused() -> None:
    data = make_zip([("a/headlines.txt", b"1\n"), ("b/headlines.txt", b"2\n")])
    with pytest.raises(
        ArchiveError,
        match=r"two files in the archive are named 'headlines.txt' \('a/headlines.txt' and 'b/headlines.txt'\)",
    ) as caught:
        read_archive(data, limits=LIMITS)
    assert str(caught.value) == (
        "two files in the archive are named 'headlines.txt' ('a/headlines.txt' and "
        "'b/headlines.txt'); file names must be unique."
    )


def test_too_many_members_refused() -> None:
    limits = ArchiveLimits(max_members=3)
    ok = make_zip([(f"f{i}.txt", b"1\n") for i in range(3)])
    assert len(read_archive(ok, limits=limits)) == 3
    with pytest.raises(ArchiveError, match="more than 3 files"):
        read_archive(make_zip([(f"f{i}.txt", b"1\n") for i in range(4)]), limits=limits)
    with pytest.raises(ArchiveError, match="more than 3 files"):
        read_archive(make_tar([(f"f{i}.txt", b"1\n") for i in range(4)]), limits=limits)


def test_too_many_entries_even_if_junk_refused() -> None:
    limits = ArchiveLimits(max_members=1)  # entries cap: 4 * 1 + 16 = 20
    junk = [(f"__MACOSX/._f{i}", b"") for i in range(21)]
    with pytest.raises(ArchiveError, match="more than 20 entries"):
        read_archive(make_zip(junk), limits=limits)


# --- decompression bombs ----------------------------------------------------------------------


def test_zip_bomb_refused_without_inflating_it(monkeypatch: pytest.MonkeyPatch) -> None:
    data = zeros_zip("headlines.txt", 64 << 20)  # 64 MiB of zeros, ~64 KiB compressed
    assert len(data) < 1 << 20
    inflated = counting(monkeypatch, zipfile.ZipExtFile)
    limits = ArchiveLimits(max_member_bytes=1 << 20)
    with pytest.raises(
        ArchiveError, match="'headlines.txt' is larger than 1,048,576 bytes once decompressed"
    ) as caught:
        read_archive(data, limits=limits)
    assert str(caught.value) == "'headlines.txt' is larger than 1,048,576 bytes once decompressed."
    # Stopped one chunk past the cap, far from the 64 MiB the member holds.
    assert (1 << 20) < inflated[0] <= (1 << 20) + 64 * 1024


def test_zip_total_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    data = make_zip([("a.txt", bytes(600_000)), ("b.txt", bytes(600_000))])
    limits = ArchiveLimits(max_member_bytes=1_000_000, max_total_bytes=1_000_000)
    inflated = counting(monkeypatch, zipfile.ZipExtFile)
    with pytest.raises(
        ArchiveError,
        match="the archive's files add up to more than 1,000,000 bytes once decompressed",
    ) as caught:
        read_archive(data, limits=limits)
    assert str(caught.value) == (
        "the archive's files add up to more than 1,000,000 bytes once decompressed."
    )
    assert inflated[0] <= 1_000_000 + 64 * 1024


def test_tar_gz_bomb_in_a_skipped_member_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # Junk members are not kept but must still be inflated to be skipped: the stream is capped.
    data = make_tar([("__MACOSX/._big", bytes(32 << 20)), ("headlines.txt", b"1\n")])
    assert len(data) < 1 << 20
    limits = ArchiveLimits(max_members=4, max_member_bytes=1 << 20, max_total_bytes=1 << 20)
    inflated = counting(monkeypatch, gzip.GzipFile)
    with pytest.raises(ArchiveError, match="the archive is larger than"):
        read_archive(data, limits=limits)
    assert inflated[0] < 4 << 20


def test_tar_member_over_cap_refused() -> None:
    data = make_tar([("headlines.txt", bytes(2 << 20))])
    limits = ArchiveLimits(max_member_bytes=1 << 20)
    with pytest.raises(ArchiveError, match="'headlines.txt' is larger than 1,048,576 bytes"):
        read_archive(data, limits=limits)


def test_tar_total_cap() -> None:
    data = make_tar([("a.txt", bytes(700_000)), ("b.txt", bytes(700_000))])
    limits = ArchiveLimits(max_member_bytes=1_000_000, max_total_bytes=1_000_000)
    with pytest.raises(ArchiveError, match="add up to more than 1,000,000 bytes"):
        read_archive(data, limits=limits)


# --- matching members to sets -----------------------------------------------------------------


def test_match_members_by_token() -> None:
    members = {
        "STS2016.OUTPUT.headlines.txt": b"h",
        "SYSTEM_OUT.answer-answer.txt": b"a",
        "team-run1-plagiarism.txt": b"p",
        "POSTEDITING.txt": b"e",
        "out question-question.txt.gz": b"q",
    }
    assigned, issues = match_members(members, STS_EN)
    assert issues == []
    assert assigned == {
        "headlines": b"h",
        "answer-answer": b"a",
        "plagiarism": b"p",
        "postediting": b"e",
        "question-question": b"q",
    }


def test_match_members_multisource_alias() -> None:
    assigned, issues = match_members(
        {"STS.output.news.txt": b"n", "STS.output.multi.txt": b"m"}, ["news", "multisource"]
    )
    assert issues == []
    assert assigned == {"news": b"n", "multisource": b"m"}
    assigned, _ = match_members({"STS.output.multisource.txt": b"f"}, ["news", "multisource"])
    assert assigned == {"multisource": b"f"}


def test_match_members_needs_a_whole_token() -> None:
    assigned, issues = match_members(
        {"newsletter.txt": b"x", "multiple.txt": b"y"}, ["news", "multisource"]
    )
    assert assigned == {}
    assert [(i.severity, i.message) for i in issues] == [
        (
            "warning",
            "'newsletter.txt' matches no evaluation set and was ignored; name each file after "
            "its set (news, multisource).",
        ),
        (
            "warning",
            "'multiple.txt' matches no evaluation set and was ignored; name each file after its "
            "set (news, multisource).",
        ),
    ]


def test_match_members_ambiguous_member_and_set() -> None:
    members = {
        "headlines-vs-plagiarism.txt": b"x",
        "run1.answer-answer.txt": b"1",
        "run2.answer-answer.txt": b"2",
    }
    assigned, issues = match_members(members, STS_EN)
    assert assigned == {}
    assert [(i.severity, i.message) for i in issues] == [
        ("error", "'headlines-vs-plagiarism.txt' matches several sets (headlines, plagiarism)."),
        (
            "error",
            "answer-answer: several files match this set ('run1.answer-answer.txt', "
            "'run2.answer-answer.txt').",
        ),
    ]


def test_match_members_custom_aliases() -> None:
    assigned, issues = match_members(
        {"out.hl.txt": b"h"}, ["headlines"], aliases={"headlines": ["hl"]}
    )
    assert issues == [] and assigned == {"headlines": b"h"}
