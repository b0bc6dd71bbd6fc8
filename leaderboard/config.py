"""Read the server's configuration from the environment, with safe defaults."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_INSTANCE = REPO_ROOT / "instance"


@dataclass(frozen=True)
class Settings:
    """The settings every part of the server reads."""

    instance_dir: Path
    database_url: str
    storage_dir: Path
    secret_key: str
    max_upload_bytes: int
    max_decompressed_bytes: int
    display_timezone: str


def _persisted_secret(instance_dir: Path) -> str:
    """Return the install's random secret key, creating it on first use."""
    path = instance_dir / "secret_key"
    if path.exists():
        return path.read_text().strip()
    instance_dir.mkdir(parents=True, exist_ok=True)
    key = secrets.token_hex(32)
    # Create with owner-only permissions; another process may have raced us, so re-read after.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as fh:
        fh.write(key)
    return key


def load_settings(overrides: dict[str, object] | None = None) -> Settings:
    """Build settings from ``LEADERBOARD_*`` environment variables and explicit overrides."""
    o = dict(overrides or {})
    env = os.environ
    instance_dir = Path(
        str(o.get("instance_dir") or env.get("LEADERBOARD_INSTANCE_DIR") or DEFAULT_INSTANCE)
    )
    database_url = str(
        o.get("database_url")
        or env.get("LEADERBOARD_DATABASE_URL")
        or f"sqlite:///{instance_dir / 'leaderboard.sqlite3'}"
    )
    storage_dir = Path(
        str(o.get("storage_dir") or env.get("LEADERBOARD_STORAGE_DIR") or instance_dir / "storage")
    )
    secret_key = str(o.get("secret_key") or env.get("LEADERBOARD_SECRET_KEY") or "")
    if not secret_key:
        secret_key = _persisted_secret(instance_dir)
    mb = float(str(o.get("max_upload_mb") or env.get("LEADERBOARD_MAX_UPLOAD_MB") or 200))
    dmb = float(
        str(o.get("max_decompressed_mb") or env.get("LEADERBOARD_MAX_DECOMPRESSED_MB") or 1024)
    )
    tz = str(o.get("display_timezone") or env.get("LEADERBOARD_TIMEZONE") or "UTC")
    return Settings(
        instance_dir=instance_dir,
        database_url=database_url,
        storage_dir=storage_dir,
        secret_key=secret_key,
        max_upload_bytes=int(mb * 1024 * 1024),
        max_decompressed_bytes=int(dmb * 1024 * 1024),
        display_timezone=tz,
    )
