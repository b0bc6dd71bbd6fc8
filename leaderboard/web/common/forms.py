"""Web forms (Flask-WTF: CSRF on every form)."""

from __future__ import annotations

from collections.abc import Iterable

from flask import abort
from flask_wtf import FlaskForm
from wtforms import (
    BooleanField,
    HiddenField,
    PasswordField,
    SelectField,
    StringField,
    TextAreaField,
)
from wtforms.fields.choices import SelectChoice
from wtforms.validators import DataRequired, Length, Optional, Regexp

from leaderboard.services.common.errors import InvalidInput
from leaderboard.tasks.families.base import Family


def options(pairs: Iterable[tuple[str, str]]) -> list[SelectChoice]:
    """Return select options from (value, label) pairs."""
    return [SelectChoice(value, label) for value, label in pairs]


def required_text(label: str, limit: int) -> StringField:
    """Return a text field that must be filled, with at most ``limit`` characters."""
    return StringField(label, validators=[DataRequired(), Length(max=limit)])


def optional_text(label: str, limit: int) -> StringField:
    """Return a text field that may stay empty, with at most ``limit`` characters."""
    return StringField(label, validators=[Optional(), Length(max=limit)])


class LoginForm(FlaskForm):
    """E-mail and password."""

    email = StringField(
        "E-mail",
        validators=[
            DataRequired(),
            Regexp(r"^[^@\s]+@[^@\s]+$", message="Enter an e-mail address."),
            Length(max=320),
        ],
    )
    password = PasswordField("Password", validators=[DataRequired(), Length(max=1000)])


class UploadForm(FlaskForm):
    """A run upload into a slot of a subtask's evaluation set.

    Run files are read from the request by field name (one per evaluation part for multi-file
    runs), so they are not WTForms fields; the page renders them from ``upload_fields``.
    """

    eval_set = SelectField("Evaluation set", validators=[DataRequired()])
    slot = SelectField("Run slot", validators=[DataRequired()])
    name = optional_text("Run name", 100)
    description = TextAreaField(
        "Short system description", validators=[Optional(), Length(max=5000)]
    )


class ConfirmForm(FlaskForm):
    """An organizer action button: CSRF token only."""


class PhaseForm(FlaskForm):
    """Create or update a phase (times in ISO 8601 with a zone)."""

    name = required_text("Phase name", 64)
    eval_set = SelectField("Evaluation set", validators=[DataRequired()])
    start = optional_text("Start (ISO 8601 with zone)", 64)
    end = optional_text("Deadline (ISO 8601 with zone)", 64)
    late = SelectField(
        "Late runs", choices=options([("", "unchanged"), ("yes", "accepted"), ("no", "refused")])
    )
    corrections = SelectField(
        "Corrections after the deadline",
        choices=options([("", "unchanged"), ("yes", "accepted"), ("no", "refused")]),
    )
    results = SelectField(
        "Results",
        choices=options(
            [("", "unchanged"), ("hidden", "hidden"), ("visible", "visible (release)")]
        ),
    )
    daily_quota = StringField(
        "Runs per team per day (0: none)", validators=[Optional(), Length(max=9)]
    )
    total_quota = StringField(
        "Runs per team in the phase (0: none)", validators=[Optional(), Length(max=9)]
    )
    # Optional in the post: a form from before the field existed leaves the names unchanged.
    names = SelectField(
        "Team names in public tables",
        default="",
        choices=options(
            [
                ("", "unchanged"),
                ("public", "public (reveal)"),
                ("anonymous", "anonymous (Team 1, Team 2, ...)"),
            ]
        ),
    )
    diagnostics = SelectField(
        "Per-query diagnostics",
        default="",
        choices=options([("", "unchanged"), ("teams", "each run's team"), ("public", "everyone")]),
    )
    private = SelectField(
        "Private part of a split set",
        default="",
        choices=options(
            [
                ("", "unchanged"),
                ("hidden", "hidden (public part only)"),
                ("visible", "visible (released)"),
            ]
        ),
    )
    board = SelectField(
        "Live board",
        default="",
        choices=options(
            [
                ("", "unchanged"),
                ("slots", "slots (each ranked slot's run)"),
                ("best", "best (each team's best run so far)"),
                ("ladder", "ladder (released only on a real gain)"),
            ]
        ),
    )
    ladder_alpha = StringField("Ladder alpha (0 to 1)", validators=[Optional(), Length(max=16)])
    analysis = SelectField(
        "Automatic analysis of the visible table",
        default="",
        choices=options(
            [
                ("", "unchanged"),
                ("on", "on (clusters and rank intervals whenever scores change)"),
                ("off", "off (only when an organizer asks)"),
            ]
        ),
    )
    release_at = StringField(
        "Scheduled release of hidden results", validators=[Optional(), Length(max=64)]
    )
    release_clear = BooleanField("No scheduled release (clear it)")
    # Sent by the phase page, whose start and end are date-time inputs: wall-clock times in this
    # zone. Without it (the subtask page, scripts) a time must state its offset.
    zone = StringField(
        "Time zone of the times above (IANA name)",
        default="UTC",
        validators=[Optional(), Length(max=64)],
    )
    # What the phase page filled the times with: the stored UTC instants and the zone they were
    # written in. A time still reading that instant keeps it when only the zone changes.
    shown_zone = HiddenField(validators=[Optional(), Length(max=64)])
    start_was = HiddenField(validators=[Optional(), Length(max=64)])
    end_was = HiddenField(validators=[Optional(), Length(max=64)])
    release_at_was = HiddenField(validators=[Optional(), Length(max=64)])


#: The import modes of every family: validation as for participants, or as the official scorer.
BASIC_IMPORT_MODES = (
    ("strict", "strict (as for participants)"),
    ("lenient", "lenient (as the official scorer)"),
)


def import_modes(family: Family) -> list[SelectChoice]:
    """Return the import form's validation choices: strict, lenient and the family's modes."""
    return options([*BASIC_IMPORT_MODES, *((o.name, o.label) for o in family.import_options)])


class ImportForm(FlaskForm):
    """Organizer import of one run file into a team's slot."""

    eval_set = SelectField("Evaluation set", validators=[DataRequired()])
    team = required_text("Team (created if missing)", 255)
    slot = SelectField("Slot", validators=[DataRequired()])
    name = optional_text("Run name", 100)
    description = TextAreaField("Description", validators=[Optional(), Length(max=5000)])
    #: Strict and lenient; the view adds the subtask's family's import modes (import_modes).
    mode = SelectField("Validation", choices=options(BASIC_IMPORT_MODES))


class GoldForm(FlaskForm):
    """Add or replace a reference file (gold, a part's gold, or a qrels variant)."""

    target = SelectField("File to replace", validators=[DataRequired()])


class TeamForm(FlaskForm):
    """A new team: its name and affiliation."""

    name = required_text("Team name", 255)
    affiliation = optional_text("Affiliation", 255)


class NewTeamForm(FlaskForm):
    """An organizer creates a team (members join through its invite link or are added)."""

    name = required_text("Name", 255)


class RenameTeamForm(FlaskForm):
    """An organizer renames a team."""

    name = required_text("New name", 255)


class MergeTeamForm(FlaskForm):
    """An organizer merges a team into another (members and runs move)."""

    into = required_text("Merge into (team name)", 255)


class AddMemberForm(FlaskForm):
    """An organizer adds an account (by e-mail) to a team."""

    email = required_text("E-mail address", 320)


class TokenForm(FlaskForm):
    """Create a named API token."""

    name = required_text("Token name", 100)


class DataFileForm(FlaskForm):
    """Attach a file for participants (the file itself is the multipart field ``file``)."""

    phase = SelectField("Phase", validators=[DataRequired()])
    title = optional_text("Title (default: the file name)", 255)


class TermsForm(FlaskForm):
    """Accept a task's terms before downloading its data: CSRF token only."""


#: What a form posted with an expired or missing CSRF token is told, with a 400.
EXPIRED = "The form expired; reload the page and try again."


def confirmed(form: FlaskForm | None = None) -> None:
    """Refuse (400) a form, a confirm button by default, whose posted token does not validate."""
    if not (form if form is not None else ConfirmForm()).validate_on_submit():
        abort(400, EXPIRED)


def filled(form: FlaskForm, missing: str) -> None:
    """Refuse a form that does not validate: 400 if its token expired, else say what is missing."""
    if not form.validate_on_submit():
        if form.csrf_token.errors:
            abort(400, EXPIRED)
        raise InvalidInput(missing)
