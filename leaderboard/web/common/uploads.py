"""Collect a run's files from a multipart request, for the forms and the API alike."""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from flask import request

from leaderboard.formats.bounded import stream_size
from leaderboard.services.common.errors import InvalidInput
from leaderboard.services.runs.core import Submission, Upload
from leaderboard.targets import Target
from leaderboard.web.common.context import settings
from leaderboard.web.common.forms import ImportForm, UploadForm


def upload_fields(target: Target) -> list[tuple[str, str]]:
    """Return the file fields of a run upload as (name, label) pairs."""
    ctx = target.context(settings().max_decompressed_bytes)
    return [(f.name, f.label) for f in target.family.upload_fields(ctx)]


def collect_upload(target: Target) -> Upload:
    """Return the request's run files; large ones stay spooled on disk by the web server."""
    files: dict[str, IO[bytes]] = {}
    names: dict[str, str] = {}
    for name, _label in upload_fields(target):
        f = request.files.get(name)
        # A browser sends an empty part with no file name for a file input left blank.
        if f is None or (not f.filename and not stream_size(f.stream)):
            continue
        files[name] = f.stream
        names[name] = f.filename or ""
    if not files:
        first = upload_fields(target)[0][0]
        raise InvalidInput(f"No run file was given; send it as the multipart field {first!r}.")
    return Upload(files, names)


def form_submission(
    target: Target,
    form: UploadForm | ImportForm,
    *,
    lenient: bool = False,
    options: Mapping[str, Any] | None = None,
) -> Submission:
    """Return the run a web form submits: its slot, name and description, and the request's files."""
    return Submission(
        target=target,
        slot=form.slot.data or "",
        upload=collect_upload(target),
        name=form.name.data or "",
        description=form.description.data or "",
        via="web",
        lenient=lenient,
        options=options or {},
    )
