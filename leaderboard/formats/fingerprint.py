"""Content fingerprints that survive compression, archiving and whitespace or line-order edits.

A fingerprint summarises a text file's normalised lines: a byte-order mark is dropped, lines
end at LF, CRLF or CR, runs of whitespace become one space, leading and trailing whitespace
and blank lines are ignored. It is the count of such lines and the sum of their SHA-256
values, so it does not depend on line order either. A gzip, bzip2 or xz file is fingerprinted
after decompression, a zip or tar archive member by member (nested up to a few levels): two
files whose fingerprints meet hold the same text. Reading is streamed, one line at a time.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

_BOM = b"\xef\xbb\xbf"
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
_TAR_MAGIC_OFFSET = 257
_DEPTH = 6
# A longer "line" is cut: text lines are far shorter, so this only bounds memory for binaries.
_MAX_LINE = 1 << 20
_MOD = 1 << 256
_COPY = 1 << 20


class InspectionLimit(Exception):
    """A file decompresses to more than the inspection limit allows, so it cannot be checked."""


@dataclass(frozen=True)
class Fingerprint:
    """The fingerprint of one text, and where it sits ("" for the file itself, else a member)."""

    value: str
    member: str = ""


def text_fingerprint(stream: IO[bytes]) -> str | None:
    """Return the fingerprint of a stream's normalised lines, or None if it has none."""
    count = 0
    total = 0
    first = True
    while line := stream.readline(_MAX_LINE):
        if first:
            line = line.removeprefix(_BOM)
            first = False
        for part in line.split(b"\r"):
            words = part.split()
            if not words:
                continue
            count += 1
            total += int.from_bytes(hashlib.sha256(b" ".join(words)).digest())
    if count == 0:
        return None
    return f"{count}:{total % _MOD:064x}"


class _Budget:
    """The decompressed bytes an inspection may still read."""

    def __init__(self, limit: int) -> None:
        self.left = limit

    def spool(self, source: IO[bytes] | io.BufferedIOBase) -> IO[bytes]:
        """Copy a stream into a temporary file within the budget; return it rewound."""
        out = tempfile.TemporaryFile()  # noqa: SIM115 (returned open; the caller closes it)
        try:
            while chunk := source.read(_COPY):
                self.left -= len(chunk)
                if self.left < 0:
                    raise InspectionLimit
                out.write(chunk)
        except BaseException:
            out.close()
            raise
        out.seek(0)
        return out


def _decompressed(f: IO[bytes], head: bytes) -> gzip.GzipFile | bz2.BZ2File | lzma.LZMAFile | None:
    """Return a decompressing reader of a gzip, bzip2 or xz file, else None."""
    if head.startswith(b"\x1f\x8b"):
        return gzip.GzipFile(fileobj=f)
    if head.startswith(b"BZh"):
        return bz2.BZ2File(f)
    if head.startswith(b"\xfd7zXZ\x00"):
        return lzma.LZMAFile(f)
    return None


def _members(f: IO[bytes], head: bytes) -> Iterator[tuple[str, IO[bytes]]] | None:
    if head.startswith(_ZIP_MAGICS) and zipfile.is_zipfile(f):
        f.seek(0)
        return _zip_members(f)
    if head[_TAR_MAGIC_OFFSET : _TAR_MAGIC_OFFSET + 5] == b"ustar":
        return _tar_members(f)
    return None


def _zip_members(f: IO[bytes]) -> Iterator[tuple[str, IO[bytes]]]:
    with zipfile.ZipFile(f) as archive:
        for info in archive.infolist():
            if not info.is_dir():
                with archive.open(info) as member:
                    yield info.filename, member


def _tar_members(f: IO[bytes]) -> Iterator[tuple[str, IO[bytes]]]:
    with tarfile.open(fileobj=f, mode="r:") as archive:
        for info in archive:
            member = archive.extractfile(info) if info.isfile() else None
            if member is not None:
                with member:
                    yield info.name, member


def _walk(f: IO[bytes], where: str, depth: int, budget: _Budget) -> Iterator[Fingerprint]:
    head = f.read(512)
    f.seek(0)
    decompressed = _decompressed(f, head) if depth > 0 else None
    if decompressed is not None:
        with decompressed as inner, budget.spool(inner) as spooled:
            yield from _walk(spooled, where, depth - 1, budget)
        return
    members = _members(f, head) if depth > 0 else None
    if members is None:
        value = text_fingerprint(f)
        if value is not None:
            yield Fingerprint(value, where)
        return
    for name, member in members:
        inside = f"{where}/{name}" if where else name
        with budget.spool(member) as spooled:
            yield from _walk(spooled, inside, depth - 1, budget)


def fingerprints(f: IO[bytes], *, limit: int) -> list[Fingerprint]:
    """Return the fingerprint of a seekable file's text, or of each text inside it.

    Raises InspectionLimit when more than ``limit`` bytes would have to be read once
    decompressed; raises ValueError (or an OSError, EOFError, tarfile or zipfile error) for a
    damaged compressed file or archive.
    """
    return list(_walk(f, "", _DEPTH, _Budget(limit)))


#: What a damaged compressed file or archive raises while it is fingerprinted.
DAMAGED: tuple[type[Exception], ...] = (
    OSError,
    EOFError,
    ValueError,
    lzma.LZMAError,
    tarfile.TarError,
    zipfile.BadZipFile,
)
