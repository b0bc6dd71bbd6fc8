"""The server's clock: system time, or a controlled time for tests and rehearsals."""

from __future__ import annotations

import os
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo


class Clock:
    """Tell the current time (aware, UTC)."""

    def now(self) -> datetime:
        """Return the current time."""
        return datetime.now(UTC)


class FixedClock(Clock):
    """A clock that stays where it is set (tests move it explicitly)."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def now(self) -> datetime:
        """Return the set time."""
        return self.at

    def set(self, at: datetime) -> None:
        """Move the clock."""
        self.at = at


class FileClock(Clock):
    """Read the time from a file (an ISO 8601 instant) so a rehearsal can move a running server's clock."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def now(self) -> datetime:
        """Return the file's time, or system time while the file is absent."""
        try:
            text = self.path.read_text().strip()
        except FileNotFoundError:
            return datetime.now(UTC)
        return parse_instant(text)


def in_zone(value: datetime, zone: tzinfo) -> datetime | None:
    """Return an instant in ``zone``, or None when that falls outside the years datetime holds."""
    # A stored 9999-12-31 23:59 UTC is year 10000 east of UTC: shown in UTC only, never a 500.
    try:
        return value.astimezone(zone)
    except OverflowError:
        return None


def utc_and_local(value: datetime, zone: str, utc_format: str, local_format: str) -> str:
    """Render a time in UTC, plus its time in ``zone`` when that zone is not UTC."""
    utc = value.strftime(utc_format)
    if zone in ("UTC", "Etc/UTC"):
        return utc
    local = in_zone(value, ZoneInfo(zone))
    if local is None:
        return utc
    return f"{utc} ({local.strftime(local_format)})"


def parse_instant(text: str) -> datetime:
    """Parse an ISO 8601 time that states its zone; refuse a naive one."""
    value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    if value.tzinfo is None:
        raise ValueError(f"{text!r} has no time zone; write it like 2016-01-31T23:59:00+00:00")
    return value.astimezone(UTC)


def clock_from_environment() -> Clock:
    """Return the system clock, or a file clock when LEADERBOARD_CLOCK_FILE is set."""
    path = os.environ.get("LEADERBOARD_CLOCK_FILE")
    return FileClock(Path(path)) if path else Clock()
