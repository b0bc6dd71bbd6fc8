"""Keep the instance folder private: the folder 0700, its files 0600, whoever creates them.

The folder holds the database (password hashes), the queue, the secret key and staged
uploads; a local user who can read them can forge a session or read a link out of a mail.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from sqlalchemy.engine import make_url

FOLDER_MODE = 0o700
FILE_MODE = 0o600
#: What a server process withholds from group and others on every file and folder it creates.
UMASK = 0o077


def restrict_umask() -> None:
    """Make every file and folder this process creates from now on its owner's only."""
    os.umask(UMASK)


def make_private_dir(path: Path) -> None:
    """Create a folder (and its missing parents) readable by its owner only."""
    path.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)


def create_private_file(path: Path) -> None:
    """Create an empty file readable by its owner only, unless it exists (or its folder does not)."""
    if not path.parent.is_dir():
        return
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))


def sqlite_file(url: str) -> Path | None:
    """Return the file of a SQLite database URL (``sqla+`` prefix allowed), None for others."""
    parsed = make_url(url.removeprefix("sqla+"))
    database = parsed.database or ""
    if parsed.get_backend_name() != "sqlite" or database in ("", ":memory:"):
        return None
    return Path(database)


def tighten(folder: Path) -> list[Path]:
    """Make a folder and everything in it its owner's only; return the paths changed."""
    changed: list[Path] = []

    def fix(path: Path, mode: int) -> None:
        current = stat.S_IMODE(path.lstat().st_mode)
        # The owner keeps what it had (an executable stays one); group and others lose all.
        wanted = (current & 0o700) | mode
        if wanted != current:
            path.chmod(wanted)
            changed.append(path)

    if not folder.is_dir():
        return changed
    fix(folder, FOLDER_MODE)
    for root, dirs, files in os.walk(folder):
        for name in dirs:
            if not (Path(root) / name).is_symlink():
                fix(Path(root) / name, FOLDER_MODE)
        for name in files:
            path = Path(root) / name
            if not path.is_symlink():
                fix(path, FILE_MODE)
    return changed
