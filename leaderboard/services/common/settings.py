"""Site-wide settings kept in the database: registration mode, team size, site terms."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.formats.issues import quoted
from leaderboard.models import SiteSetting
from leaderboard.services.common.audit import record
from leaderboard.services.common.errors import InvalidInput
from leaderboard.services.common.text import clean_text

REGISTRATION_MODES = ("open", "approval", "invite", "closed")


def _mode(value: str) -> str:
    value = value.strip().lower()
    if value not in REGISTRATION_MODES:
        raise InvalidInput(
            f"registration must be one of {', '.join(REGISTRATION_MODES)}, not {quoted(value)}."
        )
    return value


def _team_size(value: str) -> str:
    try:
        size = int(value.strip())
    except ValueError:
        raise InvalidInput(f"max_team_size must be a whole number, not {quoted(value)}.") from None
    if not 1 <= size <= 1000:
        raise InvalidInput(f"max_team_size must be between 1 and 1000, not {size}.")
    return str(size)


def _text(limit: int) -> Callable[[str], str]:
    def check(value: str) -> str:
        if len(value) > limit:
            raise InvalidInput(f"The text is longer than {limit} characters.")
        return value.strip()

    return check


def _header(what: str, limit: int) -> Callable[[str], str]:
    # A text that reaches a mail header (the site name heads every subject) is one clean line.
    def check(value: str) -> str:
        return clean_text(value, what, limit=limit)

    return check


@dataclass(frozen=True)
class SettingSpec:
    """A setting's name, default, meaning and the check that normalizes a new value."""

    name: str
    default: str
    help: str
    check: Callable[[str], str]


SPECS = {
    spec.name: spec
    for spec in (
        SettingSpec(
            "registration",
            "open",
            "Who may take part: open, approval (an organizer approves each new team), "
            "invite (only people invited by an organizer or a team) or closed.",
            _mode,
        ),
        SettingSpec("max_team_size", "10", "The most members a team may have.", _team_size),
        SettingSpec(
            "site_name",
            "Shared-task leaderboard",
            "The site's name, in mails and pages.",
            _header("site name (setting site_name)", 200),
        ),
        SettingSpec(
            "terms",
            "",
            "Terms every new account accepts at sign-up (plain text; empty: none).",
            _text(20000),
        ),
    )
}


def _spec(name: str) -> SettingSpec:
    spec = SPECS.get(name)
    if spec is None:
        raise InvalidInput(f"Unknown setting {quoted(name)}; settings are {', '.join(SPECS)}.")
    return spec


def get(session: Session, name: str) -> str:
    """Return a setting's value, or its default when it was never set."""
    spec = _spec(name)
    stored = session.get(SiteSetting, name)
    return spec.default if stored is None else stored.value


def registration(session: Session) -> str:
    """Return the registration mode: open, approval, invite or closed."""
    return get(session, "registration")


def max_team_size(session: Session) -> int:
    """Return the most members a team may have."""
    return int(get(session, "max_team_size"))


def all_settings(session: Session) -> dict[str, str]:
    """Return every setting's current value by name."""
    stored = {s.name: s.value for s in session.scalars(select(SiteSetting))}
    return {name: stored.get(name, spec.default) for name, spec in SPECS.items()}


def set_value(session: Session, name: str, value: str, *, actor: str) -> str:
    """Check, store and audit a setting's new value; return it as stored."""
    spec = _spec(name)
    clean = spec.check(value)
    stored = session.get(SiteSetting, name)
    old = spec.default if stored is None else stored.value
    if stored is None:
        session.add(SiteSetting(name=name, value=clean))
    else:
        stored.value = clean
    record(session, actor, "set-setting", name=name, old=old, new=clean)
    return clean


def set_values(session: Session, values: dict[str, str], *, actor: str) -> list[str]:
    """Check every new value first, then store and audit the changed ones; return their names."""
    checked = {name: _spec(name).check(value) for name, value in values.items()}
    current = all_settings(session)
    changed = [name for name, value in checked.items() if value != current[name]]
    for name in changed:
        stored = session.get(SiteSetting, name)
        if stored is None:
            session.add(SiteSetting(name=name, value=checked[name]))
        else:
            stored.value = checked[name]
        record(session, actor, "set-setting", name=name, old=current[name], new=checked[name])
    return changed
