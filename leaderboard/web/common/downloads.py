"""Send a stored file: from the local disk, streamed from the store, or by a presigned link."""

from __future__ import annotations

from flask import redirect, send_file
from flask.typing import ResponseReturnValue

from leaderboard.storage import Store


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
