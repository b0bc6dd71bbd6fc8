"""Content-addressed file stores: a local folder (the default) or an S3-compatible bucket."""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol
from urllib.parse import quote, unquote, urlparse

CHUNK = 1 << 20
#: How long a presigned download link stays valid.
PRESIGNED_SECONDS = 300


@dataclass(frozen=True)
class Staged:
    """A file copied to a local temporary file, not yet in the store, with its SHA-256."""

    path: Path
    sha256: str


def key_for(sha256: str) -> str:
    """Return the storage key of the file with this hash."""
    return f"objects/{sha256[:2]}/{sha256}"


def sha_of_key(key: str) -> str:
    """Return the hash a content key names (its last part)."""
    return key.rsplit("/", 1)[-1]


class Flushes:
    """Flushes of spooled files to disk, each on a thread while the caller goes on.

    Whoever commits a row naming the files calls ``wait`` first: the row never names a file a
    crash could lose, and the disk's flush overlaps the work done meanwhile (an upload's rows).
    """

    def __init__(self) -> None:
        self._threads: list[threading.Thread] = []
        self._errors: list[OSError] = []

    def add(self, fd: int) -> None:
        """Flush the file open as ``fd`` on a thread (of its own descriptor, closed after)."""
        thread = threading.Thread(target=self._flush, args=(os.dup(fd),), daemon=True)
        thread.start()
        self._threads.append(thread)

    def _flush(self, fd: int) -> None:
        try:
            os.fsync(fd)
        except OSError as exc:  # raised in the caller's thread by wait()
            self._errors.append(exc)
        finally:
            os.close(fd)

    def join(self) -> None:
        """Block until every flush is done, whether it failed or not."""
        for thread in self._threads:
            thread.join()

    def wait(self) -> None:
        """Block until every file is on disk; raise the first flush's error."""
        self.join()
        if self._errors:
            raise self._errors[0]


@contextmanager
def _spool(
    stream: IO[bytes], tmp_dir: Path | None, flushes: Flushes | None = None
) -> Iterator[Staged]:
    """Copy a stream to a temporary file while hashing it; remove the file at the end.

    The file is flushed to disk before this yields, or by ``flushes`` when given.
    """
    if tmp_dir is not None:
        tmp_dir.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(dir=tmp_dir, prefix="upload-")
    try:
        with os.fdopen(fd, "wb") as out:
            while chunk := stream.read(CHUNK):
                digest.update(chunk)
                out.write(chunk)
            out.flush()
            if flushes is None:
                os.fsync(out.fileno())
            else:
                flushes.add(out.fileno())
        yield Staged(Path(tmp_name), digest.hexdigest())
    finally:
        Path(tmp_name).unlink(missing_ok=True)


class Store(Protocol):
    """What the server needs of a content-addressed store; a key is ``objects/<aa>/<sha256>``."""

    #: Where the store is, as a ``file://`` or ``s3://`` URL.
    url: str

    def __hash__(self) -> int:
        """Return an identity hash (a store is a cache key of what is read from it)."""
        ...

    def put(self, data: bytes) -> tuple[str, str]:
        """Store ``data`` and return ``(key, sha256)``."""
        ...

    def put_stream(self, stream: IO[bytes], flushes: Flushes | None = None) -> tuple[str, str]:
        """Store a stream's bytes and return ``(key, sha256)``; ``flushes`` may flush it later."""
        ...

    def staged(self, stream: IO[bytes]) -> AbstractContextManager[Staged]:
        """Spool a stream to a local temporary file while hashing it; remove it unless kept."""
        ...

    def keep(self, staged: Staged) -> tuple[str, str]:
        """Put a staged file into the store; return ``(key, sha256)``."""
        ...

    def open(self, key: str) -> IO[bytes]:
        """Return a reader of a stored file's bytes, streamed."""
        ...

    def read(self, key: str) -> bytes:
        """Return a stored file's bytes."""
        ...

    def exists(self, key: str) -> bool:
        """Return whether a stored file exists."""
        ...

    def size(self, key: str) -> int:
        """Return a stored file's size in bytes."""
        ...

    def iter_keys(self) -> Iterator[str]:
        """Yield the key of every stored file."""
        ...

    def local_path(self, key: str) -> Path | None:
        """Return the local path of a stored file, or None when it is not on this disk."""
        ...

    def presigned_url(self, key: str, filename: str) -> str | None:
        """Return a short-lived download URL for a stored file, or None when not offered."""
        ...


class _StagingStore(ABC):
    """What both stores share: a file is spooled to ``tmp_dir`` while hashed, then kept."""

    tmp_dir: Path | None

    key_for = staticmethod(key_for)

    def put(self, data: bytes) -> tuple[str, str]:
        """Store ``data`` and return ``(key, sha256)``; storing the same bytes twice is a no-op."""
        return self.put_stream(io.BytesIO(data))

    def put_stream(self, stream: IO[bytes], flushes: Flushes | None = None) -> tuple[str, str]:
        """Copy a stream into the store while hashing it; return ``(key, sha256)``.

        With ``flushes``, the copy reaches the disk on a thread: ``flushes.wait()`` before
        committing anything that names it.
        """
        with _spool(stream, self.tmp_dir, flushes) as staged:
            return self.keep(staged)

    @contextmanager
    def staged(self, stream: IO[bytes]) -> Iterator[Staged]:
        """Copy a stream to a local temporary file while hashing it; remove it unless kept."""
        with _spool(stream, self.tmp_dir) as staged:
            yield staged

    @abstractmethod
    def keep(self, staged: Staged) -> tuple[str, str]:
        """Put a staged file into the store; return ``(key, sha256)``."""


class LocalStore(_StagingStore):
    """Store immutable files under ``<root>/objects/<aa>/<sha256>``."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.url = self.root.resolve().as_uri()
        # Next to the objects, so that keeping a file is a rename on the same disk.
        self.tmp_dir = self.root / "tmp"

    def _final(self, sha256: str) -> Path:
        return self.root / "objects" / sha256[:2] / sha256

    def keep(self, staged: Staged) -> tuple[str, str]:
        """Move a staged file into the store; return ``(key, sha256)``."""
        final = self._final(staged.sha256)
        final.parent.mkdir(parents=True, exist_ok=True)
        # rename is atomic: a reader sees either no file or the complete one.
        os.replace(staged.path, final)
        return key_for(staged.sha256), staged.sha256

    def path(self, key: str) -> Path:
        """Return the filesystem path of a stored file, refusing keys that leave the store."""
        path = (self.root / key).resolve()
        if self.root.resolve() not in path.parents:
            raise ValueError(f"storage key outside the store: {key!r}")
        return path

    def open(self, key: str) -> IO[bytes]:
        """Return the stored file opened for reading."""
        return self.path(key).open("rb")

    def read(self, key: str) -> bytes:
        """Return a stored file's bytes."""
        return self.path(key).read_bytes()

    def exists(self, key: str) -> bool:
        """Return whether a stored file exists."""
        return self.path(key).is_file()

    def size(self, key: str) -> int:
        """Return a stored file's size in bytes."""
        return self.path(key).stat().st_size

    def iter_keys(self) -> Iterator[str]:
        """Yield the key of every stored file, in order."""
        objects = self.root / "objects"
        if objects.is_dir():
            for path in sorted(objects.rglob("*")):
                if path.is_file():
                    yield path.relative_to(self.root).as_posix()

    def local_path(self, key: str) -> Path | None:
        """Return the stored file's path."""
        return self.path(key)

    def presigned_url(self, key: str, filename: str) -> str | None:
        """Return None: a local file is sent by the server itself."""
        return None


class _ObjectReader(io.RawIOBase):
    """A seekable reader of one object: each (re)start is a ranged GET streamed from there."""

    def __init__(self, client: Any, bucket: str, name: str) -> None:
        self._client, self._bucket, self._name = client, bucket, name
        self._pos = 0
        self._body: Any = None
        self._size: int | None = None
        self._open_body()  # fail here, not at the first read, when the object is missing

    def _open_body(self) -> None:
        extra = {"Range": f"bytes={self._pos}-"} if self._pos else {}
        answer = self._client.get_object(Bucket=self._bucket, Key=self._name, **extra)
        if self._size is None and not self._pos:
            self._size = int(answer["ContentLength"])
        self._body = answer["Body"]

    def readable(self) -> bool:
        """Return True."""
        return True

    def seekable(self) -> bool:
        """Return True: a seek starts a new ranged read."""
        return True

    def tell(self) -> int:
        """Return the position."""
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        """Move the position; the next read starts a ranged GET there."""
        if whence == io.SEEK_CUR:
            offset += self._pos
        elif whence == io.SEEK_END:
            if self._size is None:
                head = self._client.head_object(Bucket=self._bucket, Key=self._name)
                self._size = int(head["ContentLength"])
            offset += self._size
        if offset != self._pos:
            self._drop_body()
            self._pos = offset
        return self._pos

    def readinto(self, buffer: Any) -> int:
        """Read into ``buffer``; return how many bytes came."""
        if self._size is not None and self._pos >= self._size:
            return 0
        if self._body is None:
            self._open_body()
        data = self._body.read(len(buffer))
        n = len(data)
        buffer[:n] = data
        self._pos += n
        return n

    def _drop_body(self) -> None:
        if self._body is not None:
            self._body.close()
            self._body = None

    def close(self) -> None:
        """Close the current download."""
        self._drop_body()
        super().close()


class S3Store(_StagingStore):
    """Store immutable files as objects ``<prefix>objects/<aa>/<sha256>`` in an S3 bucket."""

    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        *,
        endpoint_url: str | None = None,
        presigned: bool = False,
        tmp_dir: Path | None = None,
        part_bytes: int = 8 * 1024 * 1024,
        client: Any = None,
    ) -> None:
        import boto3
        from boto3.s3.transfer import TransferConfig
        from botocore.config import Config

        self.bucket = bucket
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        self.url = f"s3://{bucket}/{self.prefix}"
        self.presigned = presigned
        self.tmp_dir = tmp_dir
        # Credentials and region come from the standard AWS variables and files.
        # Signature v4: what AWS requires, and what presigned links with a file name need.
        self.client = client or boto3.client(
            "s3", endpoint_url=endpoint_url or None, config=Config(signature_version="s3v4")
        )
        # Files larger than one part go up in parts: never whole in memory.
        self.transfer = TransferConfig(
            multipart_threshold=part_bytes, multipart_chunksize=part_bytes, max_concurrency=4
        )

    def _name(self, key: str) -> str:
        if key.startswith("/") or ".." in key.split("/"):
            raise ValueError(f"storage key outside the store: {key!r}")
        return self.prefix + key

    def keep(self, staged: Staged) -> tuple[str, str]:
        """Upload a staged file under its hash (skipped when already there)."""
        key = key_for(staged.sha256)
        if not self.exists(key):
            # By path, not as a stream: boto3 then reads each part from the file as it sends it
            # instead of buffering up to ten 8 MB parts (90 MB more at the worker's peak).
            self.client.upload_file(
                str(staged.path), self.bucket, self._name(key), Config=self.transfer
            )
        return key, staged.sha256

    def upload(self, key: str, stream: IO[bytes]) -> None:
        """Upload a stream under ``key``, in parts when it is large."""
        self.client.upload_fileobj(stream, self.bucket, self._name(key), Config=self.transfer)

    def open(self, key: str) -> IO[bytes]:
        """Return a streamed, seekable reader of the object."""
        return io.BufferedReader(_ObjectReader(self.client, self.bucket, self._name(key)), CHUNK)

    def read(self, key: str) -> bytes:
        """Return a stored file's bytes."""
        with self.open(key) as f:
            return f.read()

    def _head(self, key: str) -> dict[str, Any] | None:
        from botocore.exceptions import ClientError

        try:
            head: dict[str, Any] = self.client.head_object(Bucket=self.bucket, Key=self._name(key))
            return head
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                return None
            raise

    def exists(self, key: str) -> bool:
        """Return whether the object exists."""
        return self._head(key) is not None

    def size(self, key: str) -> int:
        """Return the object's size in bytes."""
        head = self._head(key)
        if head is None:
            raise FileNotFoundError(key)
        return int(head["ContentLength"])

    def iter_keys(self) -> Iterator[str]:
        """Yield the key of every stored object, in order."""
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=self.prefix + "objects/"
        )
        for page in pages:
            for item in page.get("Contents", []):
                yield item["Key"][len(self.prefix) :]

    def local_path(self, key: str) -> Path | None:
        """Return None: objects are not on this disk."""
        return None

    def ensure_bucket(self) -> bool:
        """Create the bucket when it is missing; return whether it was created.

        Raise StorageError when it cannot be reached or made (the credentials may not allow it).
        """
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.client.head_bucket(Bucket=self.bucket)
            return False
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") not in ("404", "NoSuchBucket", "NotFound"):
                raise StorageError(f"bucket {self.bucket}: {exc}") from exc
        except BotoCoreError as exc:
            raise StorageError(f"bucket {self.bucket}: {exc}") from exc
        try:
            self.client.create_bucket(Bucket=self.bucket)
        except (ClientError, BotoCoreError) as exc:
            raise StorageError(
                f"bucket {self.bucket} is missing and cannot be made: {exc}"
            ) from exc
        return True

    def presigned_url(self, key: str, filename: str) -> str | None:
        """Return a download URL valid for a few minutes when presigned links are on."""
        if not self.presigned:
            return None
        plain = filename.encode("ascii", "ignore").decode().replace('"', "").replace("\\", "")
        disposition = f'attachment; filename="{plain or "download"}"'
        if plain != filename:
            disposition += f"; filename*=UTF-8''{quote(filename)}"
        url: str = self.client.generate_presigned_url(
            "get_object",
            Params={
                "Bucket": self.bucket,
                "Key": self._name(key),
                "ResponseContentDisposition": disposition,
                "ResponseContentType": "application/octet-stream",
            },
            ExpiresIn=PRESIGNED_SECONDS,
        )
        return url


def open_store(
    url: str,
    *,
    default_dir: Path,
    endpoint_url: str = "",
    presigned: bool = False,
    part_bytes: int = 8 * 1024 * 1024,
) -> Store:
    """Return the store a URL names: empty for ``default_dir``, ``file:///path`` or ``s3://…``."""
    if not url:
        return LocalStore(default_dir)
    parsed = urlparse(url)
    if parsed.scheme == "file":
        if parsed.netloc not in ("", "localhost"):
            raise ValueError(f"a file:// storage URL names a local folder, not {url!r}")
        return LocalStore(Path(unquote(parsed.path)))
    if parsed.scheme == "s3":
        if not parsed.netloc:
            raise ValueError(
                f"an s3:// storage URL names a bucket: s3://bucket/prefix, not {url!r}"
            )
        return S3Store(
            parsed.netloc,
            parsed.path,
            endpoint_url=endpoint_url,
            presigned=presigned,
            # Spooled to the system's temporary folder: nothing of an S3 site is kept on disk.
            tmp_dir=None,
            part_bytes=part_bytes,
        )
    raise ValueError(
        f"LEADERBOARD_STORAGE_URL must be file:///path or s3://bucket/prefix, not {url!r}"
    )


class StorageError(Exception):
    """A store cannot be reached, or a stored file is not what its key says."""


@dataclass
class CopyReport:
    """What a copy from one store to another did."""

    copied: list[str]
    skipped: list[str]
    corrupt: list[str]
    bytes_copied: int = 0


def _hash_of(stream: IO[bytes]) -> str:
    digest = hashlib.sha256()
    while chunk := stream.read(CHUNK):
        digest.update(chunk)
    return digest.hexdigest()


def copy_store(source: Store, target: Store) -> CopyReport:
    """Copy every file of ``source`` missing from ``target``, checking each against its hash.

    A file already in the target is checked and skipped; nothing is deleted. A file whose bytes
    do not hash to its key is not copied and is listed as corrupt.
    """
    report = CopyReport([], [], [])
    try:
        keys = list(source.iter_keys())
    except Exception as exc:
        raise StorageError(f"cannot list {source.url}: {exc}") from exc
    try:
        target.exists(key_for("0" * 64))
    except Exception as exc:
        raise StorageError(f"cannot reach {target.url}: {exc}") from exc
    for key in keys:
        sha = sha_of_key(key)
        try:
            if target.exists(key):
                with target.open(key) as f:
                    if _hash_of(f) != sha:
                        report.corrupt.append(f"{target.url.rstrip('/')}/{key}")
                        continue
                report.skipped.append(key)
                continue
            with source.open(key) as src, target.staged(src) as staged:
                if staged.sha256 != sha:
                    report.corrupt.append(f"{source.url.rstrip('/')}/{key}")
                    continue
                size = staged.path.stat().st_size
                target.keep(staged)
                report.bytes_copied += size
            report.copied.append(key)
        except StorageError:
            raise
        except Exception as exc:
            raise StorageError(f"copying {key} to {target.url} failed: {exc}") from exc
    return report
