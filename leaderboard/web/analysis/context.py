"""The analysis section of a set: its queue form, and its status, report, matrix and rows.

The analysis page shows it whole; the organizer's subtask page includes it.
"""

from __future__ import annotations

from typing import Any

from flask import request
from flask_wtf import FlaskForm
from wtforms import IntegerField, SelectField
from wtforms.validators import InputRequired, NumberRange

from leaderboard.services.freeze.analysis import compared
from leaderboard.services.jobs.analyses import status
from leaderboard.services.results.chart_data import matrix, measure_rows
from leaderboard.services.results.report_scale import in_table_scale, scales_of
from leaderboard.services.results.significance import METHODS
from leaderboard.tables.model import official_key
from leaderboard.targets import Target
from leaderboard.web.common.context import db
from leaderboard.web.common.forms import options


class AnalysisForm(FlaskForm):
    """Queue an analysis: measure, method, samples and seed."""

    measure = SelectField("Measure")
    method = SelectField(
        "Method", choices=options((m, m) for m in METHODS), default="randomization"
    )
    samples = IntegerField(
        "Samples", default=10_000, validators=[InputRequired(), NumberRange(1, 1_000_000)]
    )
    seed = IntegerField("Seed", default=0, validators=[InputRequired(), NumberRange(0, 2**62)])


def analysis_form(target: Target) -> AnalysisForm:
    """Return the queue form with the target's measures, the official one chosen."""
    form = AnalysisForm()
    columns = target.family.measure_specs(target.context())
    form.measure.choices = options((c.key, c.label) for c in columns)
    if request.method == "GET":
        form.measure.data = official_key(columns)
    return form


def analysis_context(target: Target, form: AnalysisForm | None = None) -> dict[str, Any]:
    """Return what the analysis section shows: status, queue form, report, matrix and rows."""
    context = analysis_page(target, form or analysis_form(target))
    del context["target"]  # the including page has its own
    return context


def analysis_page(target: Target, form: AnalysisForm) -> dict[str, Any]:
    """Return what the analysis page shows of the target, with its queue form."""
    state = status(db(), target)
    report = state.analysis.report if state.analysis is not None else None
    if report is not None:
        report = in_table_scale(report, scales_of(target))
    return {
        "target": target,
        "form": form,
        "state": state,
        "report": report,
        "matrix": matrix(report) if report else [],
        "rows": measure_rows(report) if report else [],
        "summary": compared(report).capitalize() if report else "",
    }
