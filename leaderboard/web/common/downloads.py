"""Send a stored file: from the local disk, streamed from the store, or by a presigned link."""

from __future__ import annotations

import shutil
import tempfile
import zipfile
from collections.abc import Mapping
from typing import IO

from flask import redirect, send_file
from flask.typing import ResponseReturnValue

from leaderboard.models import Run
from leaderboard.services.runs.core import RunFile, run_files
from leaderboard.storage import CHUNK, Store


def send_stored(
    store: Store, key: str, filename: str, *, etag: str | bool = True
) -> ResponseReturnValue:
    """Answer with a stored file as an attachment; the caller has checked who may have it."""
    url = store.presigned_url(key, filename)
    if url is not None:
        return redirect(url, code=302)
    path = store.local_path(key)
    # send_file on a path or a reader answers with a file wrapper: streamed, never loaded.
    response = send_file(
        path if path is not None else store.open(key),
        mimetype="application/octet-stream",
        as_attachment=True,
        download_name=filename,
        etag=etag,
        max_age=0,
    )
    if path is None:
        response.content_length = store.size(key)
    return response


def zip_of(store: Store, files: Mapping[str, RunFile]) -> IO[bytes]:
    """Return a temporary file holding a zip of ``files``, one ``<field>/<name>`` entry each.

    The zip is written to disk, not memory; the file disappears when the response closes it.
    """
    out = tempfile.TemporaryFile()  # noqa: SIM115 (the response closes it)
    try:
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for fieldname, stored in files.items():
                name = f"{fieldname}/{stored.filename}"
                with store.open(stored.key) as src, archive.open(name, "w") as dest:
                    shutil.copyfileobj(src, dest, CHUNK)
        out.seek(0)
    except BaseException:
        out.close()
        raise
    return out


def send_run(store: Store, run: Run) -> ResponseReturnValue:
    """Send a run back as uploaded, a multi-file run as a zip; the caller has checked access."""
    files = run_files(store, run)
    if len(files) == 1:
        only = next(iter(files.values()))
        return send_stored(store, only.key, only.filename)
    return send_file(
        zip_of(store, files),
        mimetype="application/zip",
        as_attachment=True,
        download_name=f"run-{run.id}.zip",
        max_age=0,
    )
