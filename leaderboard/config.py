"""Read the server's configuration from the environment, with safe defaults."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from leaderboard.private_files import make_private_dir

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_INSTANCE = REPO_ROOT / "instance"
#: Where a session keeps the process's settings (services that mail read the base URL there).
SESSION_SETTINGS = "leaderboard.settings"
#: The brokers a queue URL may name; ``memory://`` is one process's own (for tests).
_BROKERS = ("redis://", "rediss://", "amqp://", "amqps://", "pyamqp://", "sqla+", "memory://")


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
    #: How long a log-in lasts, from the moment of log-in.
    session_hours: float = 12.0
    #: The public address of the site (``https://…``); empty when not set.
    site_url: str = ""
    #: Whether cookies carry ``Secure`` (sent over HTTPS only).
    secure_cookies: bool = False
    #: How many reverse proxies in front of the app set ``X-Forwarded-*`` (0: ignore them).
    trusted_proxies: int = 0
    #: Where mail goes: ``console`` (standard error), ``smtp://…`` or ``smtps://…``.
    mail_url: str = "console"
    #: The sender of every mail.
    mail_from: str = "leaderboard@localhost"
    #: The start of links in mail; empty: the site URL, else none (mailing links is refused).
    base_url: str = ""
    #: Where files are stored: empty for ``storage_dir``, ``file:///path`` or ``s3://bucket/prefix``.
    storage_url: str = ""
    #: The S3 server's address (empty: AWS itself).
    s3_endpoint_url: str = ""
    #: Whether S3 downloads redirect to a short-lived presigned URL instead of passing through.
    s3_presigned: bool = False
    #: The broker of background jobs: empty for the embedded one (a SQLite file in the
    #: instance folder), ``redis://host:port/n`` or ``amqp://…`` for several hosts.
    queue_url: str = ""
    #: Seconds between a running job's signs of life; three missed ones hand it to another worker.
    job_heartbeat_seconds: float = 10.0

    @property
    def broker_url(self) -> str:
        """Return the broker's URL: the configured one, else the embedded SQLite file."""
        if self.queue_url:
            return self.queue_url
        return f"sqla+sqlite:///{(self.instance_dir / 'queue.sqlite3').resolve()}"


def _persisted_secret(instance_dir: Path) -> str:
    """Return the install's random secret key, creating it on first use."""
    path = instance_dir / "secret_key"
    if path.exists():
        return path.read_text().strip()
    make_private_dir(instance_dir)
    key = secrets.token_hex(32)
    # Create with owner-only permissions; another process may have raced us, so re-read after.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as fh:
        fh.write(key)
    return key


def _flag(value: object, name: str) -> bool | None:
    """Read an on/off setting; None when it is not set."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{name} must be 1 or 0, not {value!r}")


def _pick(o: dict[str, object], key: str, env_name: str) -> object:
    """Return an override (even a false one) or else the environment's value."""
    value = o.get(key)
    return value if value is not None else os.environ.get(env_name)


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
    hours_text = _pick(o, "session_hours", "LEADERBOARD_SESSION_HOURS")
    hours = float(str(hours_text)) if hours_text not in (None, "") else 12.0
    if not 0 < hours <= 24 * 366:
        raise ValueError("LEADERBOARD_SESSION_HOURS must be more than 0 and at most a year")
    site_url = str(_pick(o, "site_url", "LEADERBOARD_SITE_URL") or "").strip()
    secure = _flag(
        _pick(o, "secure_cookies", "LEADERBOARD_SECURE_COOKIES"), "LEADERBOARD_SECURE_COOKIES"
    )
    proxies_text = _pick(o, "trusted_proxies", "LEADERBOARD_TRUSTED_PROXIES")
    proxies = int(str(proxies_text)) if proxies_text not in (None, "") else 0
    if proxies < 0:
        raise ValueError("LEADERBOARD_TRUSTED_PROXIES must be 0 or more")
    mail_url = str(_pick(o, "mail_url", "LEADERBOARD_MAIL_URL") or "console").strip()
    if mail_url != "console" and not mail_url.lower().startswith(("smtp://", "smtps://")):
        raise ValueError("LEADERBOARD_MAIL_URL must be console, smtp://… or smtps://…")
    mail_from = str(_pick(o, "mail_from", "LEADERBOARD_MAIL_FROM") or "leaderboard@localhost")
    base_url = str(_pick(o, "base_url", "LEADERBOARD_BASE_URL") or "").strip().rstrip("/")
    storage_url = str(_pick(o, "storage_url", "LEADERBOARD_STORAGE_URL") or "").strip()
    if storage_url and not storage_url.lower().startswith(("file://", "s3://")):
        raise ValueError("LEADERBOARD_STORAGE_URL must be file:///path or s3://bucket/prefix")
    endpoint = str(_pick(o, "s3_endpoint_url", "LEADERBOARD_S3_ENDPOINT_URL") or "").strip()
    presigned = _flag(
        _pick(o, "s3_presigned", "LEADERBOARD_S3_PRESIGNED"), "LEADERBOARD_S3_PRESIGNED"
    )
    queue_url = str(_pick(o, "queue_url", "LEADERBOARD_QUEUE_URL") or "").strip()
    if queue_url and not queue_url.lower().startswith(_BROKERS):
        raise ValueError(
            "LEADERBOARD_QUEUE_URL must be redis://HOST:PORT/N, amqp://… or sqla+<database URL> "
            "(unset: the embedded broker)"
        )
    beat_text = _pick(o, "job_heartbeat_seconds", "LEADERBOARD_JOB_HEARTBEAT_SECONDS")
    heartbeat = float(str(beat_text)) if beat_text not in (None, "") else 10.0
    if not 0 < heartbeat <= 3600:
        raise ValueError("LEADERBOARD_JOB_HEARTBEAT_SECONDS must be more than 0 and at most 3600")
    return Settings(
        instance_dir=instance_dir,
        database_url=database_url,
        storage_dir=storage_dir,
        secret_key=secret_key,
        max_upload_bytes=int(mb * 1024 * 1024),
        max_decompressed_bytes=int(dmb * 1024 * 1024),
        display_timezone=tz,
        session_hours=hours,
        site_url=site_url,
        # An https site sends its cookies over https only unless told otherwise.
        secure_cookies=site_url.lower().startswith("https://") if secure is None else secure,
        trusted_proxies=proxies,
        mail_url=mail_url,
        mail_from=mail_from.strip(),
        base_url=base_url,
        storage_url=storage_url,
        s3_endpoint_url=endpoint,
        s3_presigned=bool(presigned),
        queue_url=queue_url,
        job_heartbeat_seconds=heartbeat,
    )
