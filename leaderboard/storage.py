"""Content-addressed file store: files are written to a temporary name, flushed and renamed."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import IO

CHUNK = 1 << 20


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
            sha = digest.hexdigest()
            final = self._final(sha)
            final.parent.mkdir(parents=True, exist_ok=True)
            # rename is atomic: a reader sees either no file or the complete one.
            os.replace(tmp_name, final)
        except BaseException:
            Path(tmp_name).unlink(missing_ok=True)
            raise
        return self.key_for(sha), sha

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
