"""Wall-clock times in a named zone: the phase page's date-time inputs, turned into UTC instants."""

from __future__ import annotations

import functools
import zoneinfo
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from leaderboard.clock import in_zone, parse_instant
from leaderboard.formats.issues import quoted
from leaderboard.services.common.errors import InvalidInput


@functools.cache
def zone_names() -> tuple[str, ...]:
    """Return the IANA zone names this server knows, sorted."""
    return tuple(sorted(zoneinfo.available_timezones() | {"UTC"}))


def zone_of(name: str | None) -> ZoneInfo:
    """Return the zone of an IANA name (``UTC`` when empty); refuse a name that is none."""
    name = (name or "").strip() or "UTC"
    if name not in zone_names():
        raise InvalidInput(
            f"Time zone {quoted(name[:80])} is not an IANA zone name; write one like "
            "'UTC', 'Europe/Paris' or 'America/New_York'."
        )
    return ZoneInfo(name)


def local_instant(text: str, zone: ZoneInfo, what: str) -> datetime:
    """Return the UTC instant of a date-time input: wall-clock time in ``zone``, or with an offset.

    A wall-clock time the zone skips (a daylight-saving gap) or passes twice (a fold) is refused:
    no guess is made about which instant the organizer meant.
    """
    text = text.strip()
    try:
        return _instant(text, zone, what)
    except (ValueError, OverflowError):
        raise InvalidInput(
            f"{what} {quoted(text[:80])} is not a date and time; write it like 2016-01-31T23:59."
        ) from None


def _instant(text: str, zone: ZoneInfo, what: str) -> datetime:
    naive = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if naive.tzinfo is not None:
        # An explicit offset says which instant it is, whatever the zone field says.
        return parse_instant(text)
    early = naive.replace(tzinfo=zone, fold=0)
    late = naive.replace(tzinfo=zone, fold=1)
    if early.utcoffset() != late.utcoffset():
        shown = naive.strftime("%Y-%m-%d %H:%M")
        back = early.astimezone(UTC).astimezone(zone).replace(tzinfo=None)
        if back != naive:
            raise InvalidInput(
                f"{what} {shown} does not exist in {zone.key}: the clocks skip it when "
                "daylight saving time starts; choose a time outside the gap."
            )
        raise InvalidInput(
            f"{what} {shown} happens twice in {zone.key} (when daylight saving time ends, "
            f"at {early.tzname()} and at {late.tzname()}); choose another time, or give it "
            "with its UTC offset."
        )
    return early.astimezone(UTC)


def wall_clock(value: datetime | None, zone: ZoneInfo) -> str:
    """Return an instant as a date-time input's value in ``zone`` (empty for none)."""
    if value is None:
        return ""
    local = in_zone(value, zone)
    if local is None:
        return ""
    # Seconds only when there are some: a save of the text shown must not drop them.
    return local.strftime("%Y-%m-%dT%H:%M:%S" if local.second else "%Y-%m-%dT%H:%M")


def _stored(text: str | None) -> datetime | None:
    try:
        return parse_instant(text) if text else None
    except (ValueError, OverflowError):
        return None


def edited_instant(
    text: str, was: str | None, zones: tuple[ZoneInfo, ...], zone: ZoneInfo, what: str
) -> datetime:
    """Return the instant a date-time input means: the one it was filled with, unless edited.

    ``was`` is the stored instant the page filled the input with and ``zones`` the zones its
    text may be written in (the one the page used, the one its script converted it to). A
    text still showing that instant in one of them keeps it exactly, whichever zone is chosen
    now: changing only the zone moves nothing. An edited text is read in ``zone``.
    """
    stored = _stored(was)
    if stored is not None:
        try:
            typed = datetime.fromisoformat(text.strip())
        except ValueError:
            typed = None
        if typed is not None and typed.tzinfo is None:
            for shown in zones:
                local = in_zone(stored, shown)
                if local is not None and local.replace(tzinfo=None, microsecond=0) == typed:
                    return stored
    return local_instant(text, zone, what)
