"""Pack several stored files into one zip on disk, to be streamed back."""

from __future__ import annotations

import shutil
import tempfile
import zipfile
from collections.abc import Mapping
from typing import IO

from leaderboard.services.runs.core import RunFile
from leaderboard.storage import CHUNK, Store


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
