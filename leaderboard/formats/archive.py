"""Read multi-file runs from .zip / .tar / .tar.gz bytes safely, and match members to sets."""

from __future__ import annotations

import gzip
import io
import lzma
import re
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, cast

from leaderboard.formats.issues import Issue, quote

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

CHUNK_BYTES = 64 * 1024
GZIP_MAGIC = b"\x1f\x8b"
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")  # local file header; empty archive
_DRIVE = re.compile(r"[A-Za-z]:")
#: Member names that set slugs may also be matched by (the es-en README's STS.output.multi.txt).
DEFAULT_ALIASES: Mapping[str, tuple[str, ...]] = {"multisource": ("multi",)}
# Codec failures a damaged archive can raise from the standard library readers.
_DAMAGE = (
    zipfile.BadZipFile,
    tarfile.TarError,
    zlib.error,
    lzma.LZMAError,  # a damaged LZMA-compressed zip member
    EOFError,
    OSError,
    ValueError,
)


class ArchiveError(ValueError):
    """An archive was refused; the message is meant for the uploader."""


@dataclass(frozen=True)
class ArchiveLimits:
    """Caps on what an archive may hold once decompressed."""

    max_members: int = 64
    max_member_bytes: int = 50_000_000
    max_total_bytes: int = 200_000_000

    @property
    def max_entries(self) -> int:
        """Return the cap on all entries, directories and macOS junk included."""
        return 4 * self.max_members + 16


def read_archive(
    data: bytes, *, limits: ArchiveLimits, keep_dirs: bool = False
) -> dict[str, bytes]:
    """Return ``{basename: content}`` of the regular files in a .zip / .tar / .tar.gz archive.

    Nothing touches the disk; each member is inflated in chunks and refused as soon as a cap
    is passed, whatever sizes the archive declares. With ``keep_dirs`` the keys are the
    members' relative paths (``gold/test.txt``) instead of their basenames.
    """
    if data.startswith(_ZIP_MAGICS):
        return _read_zip(data, limits, keep_dirs)
    if data.startswith(GZIP_MAGIC) or data[257:262] == b"ustar":
        return _read_tar(data, limits, keep_dirs)
    raise ArchiveError("the upload is not a .zip, .tar or .tar.gz archive.")


def match_members(
    members: Mapping[str, bytes],
    set_slugs: Sequence[str],
    *,
    aliases: Mapping[str, Sequence[str]] = DEFAULT_ALIASES,
) -> tuple[dict[str, bytes], list[Issue]]:
    """Assign archive members to sets by name; return the assignment and the issues found.

    A member matches set s when its basename holds s (or an alias of s) as a token, i.e. not
    glued to a letter or digit, case-insensitively. A member matching several sets and a set
    matched by several members are errors; a member matching no set is ignored with a warning.
    Sets that no member matches are left out: the run validator reports them.
    """
    patterns = {s: _token_pattern([s, *aliases.get(s, ())]) for s in set_slugs}
    by_set: dict[str, list[str]] = {s: [] for s in set_slugs}
    issues: list[Issue] = []
    for name in members:
        hits = [s for s, pattern in patterns.items() if pattern.search(name)]
        if not hits:
            issues.append(
                Issue(
                    None,
                    f"'{quote(name)}' matches no evaluation set and was ignored; name each file "
                    f"after its set ({', '.join(set_slugs)}).",
                    "warning",
                )
            )
        elif len(hits) > 1:
            issues.append(Issue(None, f"'{quote(name)}' matches several sets ({', '.join(hits)})."))
        else:
            by_set[hits[0]].append(name)
    assigned: dict[str, bytes] = {}
    for slug, names in by_set.items():
        if len(names) == 1:
            assigned[slug] = members[names[0]]
        elif names:
            listed = ", ".join(f"'{quote(n)}'" for n in names)
            issues.append(Issue(None, f"{slug}: several files match this set ({listed})."))
    return assigned, issues


def _token_pattern(tokens: Sequence[str]) -> re.Pattern[str]:
    """Return a regex finding any of ``tokens`` not glued to a letter or digit."""
    alternatives = "|".join(re.escape(t) for t in sorted(tokens, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9])(?:{alternatives})(?![A-Za-z0-9])", re.IGNORECASE)


class _Collector:
    """Admit members one by one, enforcing names, counts and byte caps."""

    def __init__(self, limits: ArchiveLimits, keep_dirs: bool = False) -> None:
        self.limits = limits
        self.keep_dirs = keep_dirs
        self.files: dict[str, bytes] = {}
        self.paths: dict[str, str] = {}
        self.entries = 0
        self.total = 0

    def admit(self, name: str, *, is_dir: bool, is_link: bool, is_special: bool) -> str | None:
        """Return the basename to store ``name`` under, or None to skip it; raise to refuse."""
        self.entries += 1
        if self.entries > self.limits.max_entries:
            raise ArchiveError(f"the archive has more than {self.limits.max_entries:,} entries.")
        path = name.replace("\\", "/")
        parts = path.split("/")
        if "\x00" in name or path.startswith("/") or _DRIVE.match(path):
            raise ArchiveError(f"'{quote(name)}' has an absolute path; the archive was refused.")
        if ".." in parts:
            raise ArchiveError(
                f"'{quote(name)}' points outside the archive (path traversal); "
                "the archive was refused."
            )
        if is_link:
            raise ArchiveError(f"'{quote(name)}' is a link; only regular files are accepted.")
        if is_special:
            raise ArchiveError(
                f"'{quote(name)}' is a device or special file; only regular files are accepted."
            )
        base = parts[-1]
        if is_dir or base in ("", "."):
            return None
        if "__MACOSX" in parts[:-1] or base.startswith("._") or base == ".DS_Store":
            return None
        if self.keep_dirs:
            base = "/".join(p for p in parts if p not in ("", "."))
        if base in self.paths:
            raise ArchiveError(
                f"two files in the archive are named '{quote(base)}' ('{quote(self.paths[base])}' "
                f"and '{quote(name)}'); file names must be unique."
            )
        if len(self.paths) >= self.limits.max_members:
            raise ArchiveError(f"the archive holds more than {self.limits.max_members:,} files.")
        self.paths[base] = name
        return base

    def store(self, base: str, stream: IO[bytes]) -> None:
        """Read ``stream`` in chunks under the per-member and total caps, and keep it."""
        name = self.paths[base]
        room = self.limits.max_total_bytes - self.total
        if self.limits.max_member_bytes <= room:
            content = _read_capped(stream, self.limits.max_member_bytes, f"'{quote(name)}'")
        else:
            try:
                content = _read_capped(stream, room, f"'{quote(name)}'")
            except ArchiveError as exc:
                raise ArchiveError(
                    f"the archive's files add up to more than {self.limits.max_total_bytes:,} "
                    "bytes once decompressed."
                ) from exc
        self.total += len(content)
        self.files[base] = content


def _read_capped(stream: IO[bytes], cap: int, what: str) -> bytes:
    """Return all of ``stream``, raising as soon as it yields more than ``cap`` bytes."""
    buffer = io.BytesIO()
    size = 0
    while chunk := stream.read(CHUNK_BYTES):
        size += len(chunk)
        if size > cap:
            raise ArchiveError(f"{what} is larger than {cap:,} bytes once decompressed.")
        buffer.write(chunk)
    return buffer.getvalue()


def _read_zip(data: bytes, limits: ArchiveLimits, keep_dirs: bool = False) -> dict[str, bytes]:
    """Return the regular files of a zip archive."""
    collector = _Collector(limits, keep_dirs)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                mode = info.external_attr >> 16 if info.create_system == 3 else 0
                kind = stat.S_IFMT(mode)
                base = collector.admit(
                    info.filename,
                    is_dir=info.is_dir() or kind == stat.S_IFDIR,
                    is_link=kind == stat.S_IFLNK,
                    is_special=kind not in (0, stat.S_IFREG, stat.S_IFDIR, stat.S_IFLNK),
                )
                if base is None:
                    continue
                if info.flag_bits & 0x1:
                    raise ArchiveError(
                        f"'{quote(info.filename)}' is encrypted; encrypted archives are refused."
                    )
                with archive.open(info) as stream:
                    collector.store(base, stream)
    except ArchiveError:
        raise
    except (*_DAMAGE, NotImplementedError, RuntimeError) as exc:
        raise ArchiveError(f"the .zip archive is damaged or unsupported ({exc}).") from exc
    return collector.files


def _read_tar(data: bytes, limits: ArchiveLimits, keep_dirs: bool = False) -> dict[str, bytes]:
    """Return the regular files of a tar or gzip-compressed tar archive."""
    collector = _Collector(limits, keep_dirs)
    # Skipped entries (junk, directories, tar headers) are inflated too: cap the whole stream.
    stream_cap = limits.max_total_bytes + 512 * (2 * limits.max_entries + 8) + (1 << 20)
    try:
        source: IO[bytes] = io.BytesIO(data)
        if data.startswith(GZIP_MAGIC):
            source = cast(IO[bytes], gzip.GzipFile(fileobj=source, mode="rb"))
        capped = cast(IO[bytes], _CappedReader(source, stream_cap))
        with tarfile.open(fileobj=capped, mode="r|") as archive:
            for member in archive:  # admit() caps the entries tarfile keeps
                base = collector.admit(
                    member.name,
                    is_dir=member.isdir(),
                    is_link=member.issym() or member.islnk(),
                    is_special=not (member.isreg() or member.isdir()),
                )
                if base is None:
                    continue
                if member.size > limits.max_member_bytes:
                    raise ArchiveError(
                        f"'{quote(member.name)}' is larger than {limits.max_member_bytes:,} "
                        "bytes once decompressed."
                    )
                extracted = archive.extractfile(member)
                if extracted is None:  # pragma: no cover - isreg() members always extract
                    raise ArchiveError(f"'{quote(member.name)}' cannot be read.")
                collector.store(base, extracted)
    except ArchiveError:
        raise
    except _DAMAGE as exc:
        raise ArchiveError(f"the tar archive is damaged or unsupported ({exc}).") from exc
    return collector.files


class _CappedReader(io.RawIOBase):
    """A read-only stream that raises ArchiveError once more than ``cap`` bytes were read."""

    def __init__(self, source: IO[bytes], cap: int) -> None:
        self.source = source
        self.cap = cap
        self.done = 0

    def readable(self) -> bool:
        """Return True: this stream is for reading."""
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        """Fill ``buffer`` from the source, counting bytes against the cap."""
        view = memoryview(buffer).cast("B")
        chunk = self.source.read(len(view))
        self.done += len(chunk)
        if self.done > self.cap:
            raise ArchiveError(f"the archive is larger than {self.cap:,} bytes once decompressed.")
        view[: len(chunk)] = chunk
        return len(chunk)
