"""Pack several stored files into one zip on disk, to be streamed back."""

from __future__ import annotations

import tempfile
import zipfile
from collections.abc import Mapping
from typing import IO

from leaderboard.services.runs.core import RunFile


def zip_of(files: Mapping[str, RunFile]) -> IO[bytes]:
    """Return a temporary file holding a zip of ``files``, one ``<field>/<name>`` entry each.

    The zip is written to disk, not memory; the file disappears when the response closes it.
    """
    out = tempfile.TemporaryFile()  # noqa: SIM115 (the response closes it)
    try:
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for fieldname, stored in files.items():
                archive.write(stored.path, arcname=f"{fieldname}/{stored.filename}")
        out.seek(0)
    except BaseException:
        out.close()
        raise
    return out
