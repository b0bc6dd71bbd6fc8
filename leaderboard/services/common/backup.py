"""Take a consistent backup: the database first (online), then the content-addressed files."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from leaderboard.models import GoldFile, Run
from leaderboard.services.common.errors import InvalidInput
from leaderboard.storage import CHUNK, Store


@dataclass(frozen=True)
class BackupReport:
    """What a backup wrote."""

    database_file: Path
    files_copied: int
    bytes_copied: int


def _backup_sqlite(url: str, dest: Path) -> Path:
    database = make_url(url).database
    if not database:
        raise InvalidInput("An in-memory SQLite database cannot be backed up.")
    target = dest / "leaderboard.sqlite3"
    src = sqlite3.connect(database)
    out = sqlite3.connect(target)
    try:
        # SQLite's online backup API: a consistent copy even while the server writes.
        src.backup(out)
    finally:
        out.close()
        src.close()
    return target


def _backup_postgres(url: str, dest: Path) -> Path:
    target = dest / "leaderboard.pgdump"
    libpq = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    try:
        subprocess.run(
            ["pg_dump", "--format=custom", "--file", str(target), libpq],
            check=True,
            capture_output=True,
            text=True,
        )
    except FileNotFoundError:
        raise InvalidInput(
            "pg_dump is not installed; install the PostgreSQL client to back up."
        ) from None
    except subprocess.CalledProcessError as exc:
        raise InvalidInput(f"pg_dump failed: {exc.stderr.strip()}") from None
    return target


def backup(
    session: Session, store: Store, database_url: str, dest: Path, now: datetime
) -> BackupReport:
    """Copy the database and every stored file into ``dest`` (which must be new or empty).

    Stored files are immutable and written before the rows that name them, so copying them after
    the database snapshot captures every file the snapshot refers to.
    """
    if dest.exists() and any(dest.iterdir()):
        raise InvalidInput(f"{dest} is not empty; back up into a new folder.")
    dest.mkdir(parents=True, exist_ok=True)
    if database_url.startswith("sqlite"):
        db_file = _backup_sqlite(database_url, dest)
    elif database_url.startswith("postgresql"):
        db_file = _backup_postgres(database_url, dest)
    else:
        raise InvalidInput(
            f"Backups support SQLite and PostgreSQL, not {make_url(database_url).drivername}."
        )
    copied = size = 0
    for key in store.iter_keys():
        target = dest / "storage" / key
        target.parent.mkdir(parents=True, exist_ok=True)
        path = store.local_path(key)
        if path is not None:
            shutil.copy2(path, target)
        else:
            with store.open(key) as src, target.open("wb") as out:
                shutil.copyfileobj(src, out, CHUNK)
        copied += 1
        size += target.stat().st_size
    referenced = {
        meta["key"] for files in session.scalars(select(Run.files)) for meta in files.values()
    }
    referenced |= set(session.scalars(select(GoldFile.storage_key)))
    missing = sorted(k for k in referenced if not (dest / "storage" / k).is_file())
    if missing:
        raise InvalidInput(
            f"{len(missing)} stored file(s) named by the database are missing, e.g. {missing[0]}."
        )
    (dest / "BACKUP.json").write_text(
        json.dumps(
            {"taken_at": now.isoformat(), "database": db_file.name, "files": copied, "bytes": size},
            indent=1,
        )
        + "\n"
    )
    return BackupReport(db_file, copied, size)
