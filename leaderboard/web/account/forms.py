"""Forms of self-service accounts and the organizer's users and settings pages."""

from __future__ import annotations

from flask_wtf import FlaskForm
from wtforms import BooleanField, PasswordField, SelectField, StringField, TextAreaField
from wtforms.validators import DataRequired, EqualTo, Length, Optional, Regexp

from leaderboard.services.common.settings import REGISTRATION_MODES
from leaderboard.web.common.forms import optional_text, options, required_text

_EMAIL = [
    DataRequired(message="Enter your e-mail address."),
    Regexp(r"^[^@\s]+@[^@\s]+$", message="Enter an e-mail address."),
    Length(max=320),
]
_NEW_PASSWORD = [DataRequired(message="Choose a password."), Length(max=1000)]
_CONFIRM = [
    DataRequired(message="Repeat the password."),
    EqualTo("password", message="The two passwords differ."),
]


class SignupForm(FlaskForm):
    """A new account: address, name, password twice, affiliation, terms."""

    email = StringField("E-mail", validators=_EMAIL)
    display_name = StringField(
        "Your name", validators=[DataRequired(message="Enter your name."), Length(max=255)]
    )
    affiliation = optional_text("Affiliation (optional)", 255)
    password = PasswordField("Password (at least 10 characters)", validators=_NEW_PASSWORD)
    password_confirm = PasswordField("Password again", validators=_CONFIRM)
    accept_terms = BooleanField("I accept the terms above")


class EmailForm(FlaskForm):
    """An e-mail address (password reset, resending the verification link, invitations)."""

    email = StringField("E-mail", validators=_EMAIL)


class NewPasswordForm(FlaskForm):
    """A new password, twice."""

    password = PasswordField("New password (at least 10 characters)", validators=_NEW_PASSWORD)
    password_confirm = PasswordField("New password again", validators=_CONFIRM)


class PasswordChangeForm(NewPasswordForm):
    """The current password and a new one, twice."""

    current_password = PasswordField(
        "Current password",
        validators=[DataRequired(message="Enter your current password."), Length(max=1000)],
    )


class ProfileForm(FlaskForm):
    """The display name and affiliation."""

    display_name = StringField(
        "Your name", validators=[DataRequired(message="Enter your name."), Length(max=255)]
    )
    affiliation = optional_text("Affiliation", 255)


class SiteSettingsForm(FlaskForm):
    """The site settings an organizer sets."""

    registration = SelectField(
        "Registration", choices=options([(m, m) for m in REGISTRATION_MODES])
    )
    max_team_size = required_text("Largest team", 9)
    site_name = required_text("Site name", 200)
    terms = TextAreaField("Terms (empty: none)", validators=[Optional(), Length(max=20000)])


class NotificationsForm(FlaskForm):
    """Which kinds of notification mail the user wants (all on by default)."""

    notify_join_requests = BooleanField("Join requests to my team, and decisions on my requests")
    notify_results_released = BooleanField("Results released for a subtask my team submitted to")
    notify_deadline = BooleanField("A deadline 24 hours ahead while my team has no ranked run")
    notify_rejected_api = BooleanField("My runs refused when uploaded through the API")
    notify_organizer_messages = BooleanField("Messages from the organizers")
