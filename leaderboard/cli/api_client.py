"""A small JSON-over-HTTP client of the leaderboard API (standard library only)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import IO, Any
from urllib.error import HTTPError, URLError
from urllib.parse import quote
from urllib.request import Request, urlopen

from leaderboard.formats.bounded import stream_size

CHUNK = 1 << 20
TIMEOUT = 600


class Unreachable(Exception):
    """The server could not be reached, or did not answer in JSON."""


@dataclass(frozen=True)
class Answer:
    """An HTTP status and its JSON body (a dict; ``{"error": ...}`` when the body was not JSON)."""

    status: int
    body: Any


@dataclass(frozen=True)
class FilePart:
    """One file of a multipart upload: its field, the name to send and its open stream."""

    field: str
    filename: str
    stream: IO[bytes]


def _escape(value: str) -> str:
    """Return a value fit for a quoted multipart header parameter."""
    return value.replace("\\", "\\\\").replace('"', "%22").replace("\r", " ").replace("\n", " ")


def multipart(fields: Mapping[str, str], files: list[FilePart]) -> tuple[str, int, Iterator[bytes]]:
    """Return the content type, length and chunks of a multipart body; files are streamed."""
    boundary = f"leaderboard-{uuid.uuid4().hex}"
    head: list[bytes] = []
    for name, value in fields.items():
        head.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{_escape(name)}"\r\n\r\n'.encode()
            + value.encode()
            + b"\r\n"
        )
    parts: list[tuple[bytes, FilePart]] = [
        (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="{_escape(f.field)}"; '
                f'filename="{_escape(f.filename)}"\r\n'
                "Content-Type: application/octet-stream\r\n\r\n"
            ).encode(),
            f,
        )
        for f in files
    ]
    tail = f"--{boundary}--\r\n".encode()
    length = sum(map(len, head)) + len(tail)
    length += sum(len(h) + stream_size(f.stream) + 2 for h, f in parts)

    def chunks() -> Iterator[bytes]:
        yield from head
        for header, part in parts:
            yield header
            part.stream.seek(0)
            while chunk := part.stream.read(CHUNK):
                yield chunk
            yield b"\r\n"
        yield tail

    return f"multipart/form-data; boundary={boundary}", length, chunks()


class Client:
    """Calls the API of one server with one bearer token."""

    def __init__(self, server: str, token: str) -> None:
        self.server = server.rstrip("/")
        self.token = token

    def url(self, path: str) -> str:
        """Return the absolute URL of an API path."""
        return self.server + path

    def _send(self, request: Request) -> Answer:
        request.add_header("Authorization", f"Bearer {self.token}")
        request.add_header("Accept", "application/json")
        try:
            with urlopen(request, timeout=TIMEOUT) as response:
                return Answer(response.status, _json(response.read()))
        except HTTPError as exc:
            with exc:
                return Answer(exc.code, _json(exc.read()))
        except (URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            raise Unreachable(f"cannot reach {self.server}: {reason}") from None

    def get(self, path: str) -> Answer:
        """GET a JSON resource."""
        return self._send(Request(self.url(path), method="GET"))

    def post(self, path: str, fields: Mapping[str, str], files: list[FilePart]) -> Answer:
        """POST a multipart form with files, streamed from their open files."""
        content_type, length, body = multipart(fields, files)
        request = Request(self.url(path), data=body, method="POST")
        request.add_header("Content-Type", content_type)
        request.add_header("Content-Length", str(length))
        return self._send(request)


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        text = raw[:200].decode("utf-8", "replace").strip()
        return {"error": f"the server did not answer in JSON: {text!r}"}


def path_of(*parts: str) -> str:
    """Return an API path with each part quoted (``/api/v1/tasks/<task>/<subtask>/runs``)."""
    return "/" + "/".join(quote(p, safe="") for p in parts)
