"""Content-addressed file store: files are written to a temporary name, flushed and renamed."""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

CHUNK = 1 << 20


@dataclass(frozen=True)
class Staged:
    """A file copied next to the store, not yet in it, with its SHA-256."""

    path: Path
    sha256: str


class FileStore:
    """Store immutable files under ``objects/<aa>/<sha256>``; a key is that relative path."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _final(self, sha256: str) -> Path:
        return self.root / "objects" / sha256[:2] / sha256

    def put(self, data: bytes) -> tuple[str, str]:
        """Store ``data`` and return ``(key, sha256)``; storing the same bytes twice is a no-op."""
        import io

        return self.put_stream(io.BytesIO(data))

    def put_stream(self, stream: IO[bytes]) -> tuple[str, str]:
        """Copy a stream into the store while hashing it; return ``(key, sha256)``."""
        with self.staged(stream) as staged:
            return self.keep(staged)

    @contextmanager
    def staged(self, stream: IO[bytes]) -> Iterator[Staged]:
        """Copy a stream to a temporary file while hashing it; remove the file unless kept."""
        tmp_dir = self.root / "tmp"
        tmp_dir.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        fd, tmp_name = tempfile.mkstemp(dir=tmp_dir, prefix="upload-")
        try:
            with os.fdopen(fd, "wb") as out:
                while chunk := stream.read(CHUNK):
                    digest.update(chunk)
                    out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
            yield Staged(Path(tmp_name), digest.hexdigest())
        finally:
            Path(tmp_name).unlink(missing_ok=True)

    def keep(self, staged: Staged) -> tuple[str, str]:
        """Move a staged file into the store; return ``(key, sha256)``."""
        final = self._final(staged.sha256)
        final.parent.mkdir(parents=True, exist_ok=True)
        # rename is atomic: a reader sees either no file or the complete one.
        os.replace(staged.path, final)
        return self.key_for(staged.sha256), staged.sha256

    @staticmethod
    def key_for(sha256: str) -> str:
        """Return the storage key of the file with this hash."""
        return f"objects/{sha256[:2]}/{sha256}"

    def path(self, key: str) -> Path:
        """Return the filesystem path of a stored file, refusing keys that leave the store."""
        path = (self.root / key).resolve()
        if self.root.resolve() not in path.parents:
            raise ValueError(f"storage key outside the store: {key!r}")
        return path

    def read(self, key: str) -> bytes:
        """Return a stored file's bytes."""
        return self.path(key).read_bytes()

    def exists(self, key: str) -> bool:
        """Return whether a stored file exists."""
        return self.path(key).is_file()
