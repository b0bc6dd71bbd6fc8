"""Web forms (Flask-WTF: CSRF on every form)."""

from __future__ import annotations

from flask_wtf import FlaskForm
from wtforms import PasswordField, SelectField, StringField, TextAreaField
from wtforms.validators import DataRequired, Length, Optional, Regexp


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
    name = StringField("Run name", validators=[Optional(), Length(max=100)])
    description = TextAreaField(
        "Short system description", validators=[Optional(), Length(max=5000)]
    )


class ConfirmForm(FlaskForm):
    """An organizer action button: CSRF token only."""
