"""Analysis pages: the organizer's significance page, its charts, and per-query diagnostics.

Pages only read stored analyses; computing is queued for ``leaderboard worker``.
"""

from __future__ import annotations

import csv
import hashlib
import io
from dataclasses import replace
from typing import Any

from flask import Blueprint, Response, abort, flash, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue
from flask_login import current_user

from leaderboard.services.common.errors import InvalidInput, NotFound
from leaderboard.services.freeze.core import frozen_of
from leaderboard.services.jobs.analyses import (
    finished_analysis,
    request_analysis,
    shown_report,
)
from leaderboard.services.results import chart_files
from leaderboard.services.results.anonymity import audience_for
from leaderboard.services.results.chart_data import (
    CHARTS,
    chart_spec,
    measure_rows,
    relabel,
)
from leaderboard.services.results.diagnostics import (
    RunDiagnostics,
    diagnosable_run,
    diagnostics_access,
    run_diagnostics,
    shown_name,
    target_of,
)
from leaderboard.services.results.parts import set_part
from leaderboard.services.results.query_summaries import chart_data as chart_data_of
from leaderboard.services.results.query_summaries import summarized_revision
from leaderboard.services.results.report_scale import in_table_scale, scales_of
from leaderboard.services.results.significance import Request
from leaderboard.services.tasks.catalog import resolve
from leaderboard.tables.exports import csv_safe
from leaderboard.unit_of_work import unit_of
from leaderboard.web.analysis.context import analysis_form, analysis_page
from leaderboard.web.common import pagecache
from leaderboard.web.common.context import db, now, store, viewer
from leaderboard.web.common.guards import organizer_required
from leaderboard.web.common.hidden_notice import seen_hidden
from leaderboard.web.common.live_results import live_labels, progress_of
from leaderboard.web.common.pagecache import cached_page, remember
from leaderboard.web.public.context import asked_target, chosen_view, visible_target

bp = Blueprint("analysis", __name__)

MIME = {"svg": "image/svg+xml", "pdf": "application/pdf", "csv": "text/csv"}
#: How long a browser may keep a chart or its numbers before asking again (with its ETag).
CACHE_SECONDS = 60
BEING_DRAWN = "This chart is being drawn; try again in a few seconds.\n"


def _chart(report: dict[str, Any], name: str, fmt: str) -> Response:
    """Return a stored analysis' chart or its numbers, values on the table's scale."""
    if name not in CHARTS or fmt not in MIME:
        abort(404)
    filename = f"{report['task']}-{report['subtask']}-{report['set']}-{name}.{fmt}"
    if fmt != "csv":
        kind, data = chart_spec(report, name)
        return _stored(kind, fmt, data, filename)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if name == "measure":
        writer.writerow(["run", report["measure"], "ci_low", "ci_high", "cluster"])
        for row in measure_rows(report):
            low, high = row["interval"] or ("", "")
            writer.writerow(
                [csv_safe(row["label"], text=True), row["value"], low, high, row["cluster"]]
            )
    else:
        writer.writerow(["a", "b", "p", "p_adjusted", "significant"])
        for p in report["pairs"]:
            writer.writerow([csv_safe(p["a"], text=True), csv_safe(p["b"], text=True),
                             p["p"], p["p_adjusted"], p["significant"]])  # fmt: skip
    body = out.getvalue().encode()
    return _file(body, fmt, filename, hashlib.sha256(body).hexdigest())


def _find_or_ask(kind: str, fmt: str, data: dict[str, Any]) -> chart_files.StoredChart | None:
    """Return the stored chart of ``data``; if there is none, ask the worker to draw it."""
    found = chart_files.find_chart(db(), store(), kind, fmt, data)
    if found is None:
        with unit_of(db()) as unit:
            chart_files.request_chart(unit.session, kind, fmt, data)
    return found


def _stored(kind: str, fmt: str, data: dict[str, Any], filename: str) -> Response:
    """Return a chart drawn and stored by the worker; 404 saying it is being drawn if not yet."""
    found = _find_or_ask(kind, fmt, data)
    if found is None:
        return Response(
            BEING_DRAWN, status=404, mimetype="text/plain", headers={"Retry-After": "5"}
        )
    return _file(found.body, fmt, filename, found.key)


def _file(body: bytes, fmt: str, filename: str, etag: str) -> Response:
    """Return a chart or numbers file, with an ETag and a short cache lifetime."""
    response = Response(body, mimetype=MIME[fmt])
    disposition = "attachment" if fmt != "svg" else "inline"
    response.headers["Content-Disposition"] = f'{disposition}; filename="{filename}"'
    response.set_etag(etag)
    # A reader's own variant (their team named) must not be kept by a shared cache.
    scope = "private" if viewer() is not None else "public"
    response.headers["Cache-Control"] = f"{scope}, max-age={CACHE_SECONDS}"
    return response


@bp.route("/organizer/tasks/<task>/<subtask>/analysis", methods=["GET", "POST"])
@organizer_required
def organizer_page(task: str, subtask: str) -> ResponseReturnValue:
    """Show the set's latest analysis (or that it is out of date) and queue a new one."""
    target = asked_target(task, subtask)
    form = analysis_form(target)
    if form.validate_on_submit():
        with unit_of(db()):
            analysis = request_analysis(
                db(),
                target,
                Request(
                    measure=form.measure.data,
                    method=form.method.data or "randomization",
                    samples=int(form.samples.data or 0),
                    seed=int(form.seed.data or 0),
                ),
                actor=str(current_user.email),
                now=now(),
            )
        flash(f"Analysis {analysis.id} is queued; `leaderboard worker` computes it.", "info")
        return redirect(
            url_for("analysis.organizer_page", task=task, subtask=subtask, set=target.eval_set.slug)
        )
    if request.method == "POST":
        return render_template("analysis/organizer.html", **analysis_page(target, form)), 400
    return render_template("analysis/organizer.html", **analysis_page(target, form))


@bp.route("/organizer/analyses/<int:analysis_id>/<name>.<fmt>")
@organizer_required
def organizer_chart(analysis_id: int, name: str, fmt: str) -> ResponseReturnValue:
    """Return a stored analysis' chart (SVG, PDF) or numbers (CSV), current or not."""
    analysis, report = finished_analysis(db(), analysis_id)
    subtask = analysis.eval_set.subtask
    target = resolve(db(), subtask.task.slug, subtask.slug, analysis.eval_set.slug)
    report = in_table_scale(report, scales_of(target))
    return _chart(report, name, fmt).make_conditional(request)


@bp.route("/tasks/<task>/<subtask>/analysis/<name>.<fmt>")
def public_chart(task: str, subtask: str, name: str, fmt: str) -> ResponseReturnValue:
    """Return the chart or numbers of the analysis a results view shows, where it is visible.

    The official view (the default once frozen) shows the analysis frozen with the table, the
    live view the analysis of the current scores.
    """
    key, cached = cached_page(task, subtask)
    if cached is not None:
        return cached.make_conditional(request)
    target = visible_target(task, subtask)
    snapshot = frozen_of(db(), target)
    view = chosen_view(snapshot)
    report = shown_report(db(), target, view, snapshot)
    if report is None:
        raise NotFound(
            "The official ranking has no analysis (not frozen yet, or frozen without one)."
            if view == "official"
            else "No analysis of the current results yet."
        )
    if view != "official":
        # Runs are named as this reader's table names them (anonymous phases hide teams); the
        # official view names them as frozen, as the official table does.
        report = relabel(report, live_labels(target, audience_for(viewer())))
    return remember(key, _chart(report, name, fmt)).make_conditional(request)


@bp.route("/tasks/<task>/<subtask>/progress.<fmt>")
def progress(task: str, subtask: str, fmt: str) -> ResponseReturnValue:
    """Return each team's best official score so far over time: a chart (SVG) or numbers (CSV).

    Public where the set's results are visible; teams named as the live table names them to
    this reader. The numbers are a cheap read cached by the set's revision, so the CSV is
    written per request; the chart is drawn by the worker and stored.
    """
    if fmt not in ("svg", "csv"):
        abort(404)
    key, cached = cached_page(task, subtask)
    if cached is not None:
        return cached.make_conditional(request)
    target = visible_target(task, subtask)
    data = progress_of(target, audience_for(viewer()))
    if not data["teams"]:
        raise NotFound("No run counts in the live ranking of this set yet: nothing to chart.")
    filename = f"{task}-{subtask}-{target.eval_set.slug}-progress.{fmt}"
    if fmt == "svg":
        return remember(key, _stored("progress", fmt, data, filename)).make_conditional(request)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["team", "time", "score", "best"])
    for team in data["teams"]:
        for at, value, best in team["points"]:
            writer.writerow([csv_safe(team["team"], text=True), at, value, best])
    body = out.getvalue().encode()
    resp = _file(body, fmt, filename, hashlib.sha256(body).hexdigest())
    return remember(key, resp).make_conditional(request)


def _diagnostics(run_id: int) -> RunDiagnostics:
    """Return a run's per-query diagnostics for this reader, or answer 404."""
    run = diagnosable_run(db(), viewer(), run_id)
    audience = audience_for(viewer())
    measure = request.args.get("measure") or None
    # Everything the comparison shows moves with the set's revision or its stored summaries.
    summarized = summarized_revision(db(), run.eval_set_id)
    key = (run.id, measure, run.eval_set.revision, summarized, audience.revealed)
    cached = pagecache.diagnostics().get(key)
    if cached is not None:
        # The cached rows with this request's own rows of the run and its target.
        return replace(cached, run=run, target=target_of(db(), run))
    try:
        found = run_diagnostics(db(), store(), run, measure, audience)
    except InvalidInput as exc:
        raise NotFound(exc.message) from None
    pagecache.diagnostics().put(key, found)
    return found


def _difference(found: RunDiagnostics) -> dict[str, Any]:
    """Return what the run's difference chart draws."""
    return chart_data_of(found.rows, found.measure, found.target)


@bp.route("/runs/<int:run_id>/queries")
def run_queries(run_id: int) -> ResponseReturnValue:
    """Show a run's per-query values against the median and best of the ranked runs."""
    access = diagnostics_access(db(), viewer(), run_id)
    if access.hidden:
        label, unit = shown_name(db(), access.run, audience_for(viewer()))
        return render_template(
            "analysis/queries_hidden.html",
            run=access.run,
            label=label,
            unit=unit,
            ladder=access.ladder,
        )
    found = _diagnostics(run_id)
    drawn = bool(found.rows) and _find_or_ask("difference", "svg", _difference(found)) is not None
    return render_template(
        "analysis/queries.html",
        d=found,
        chart_drawn=drawn,
        seen_hidden=seen_hidden(access.run.eval_set),
        part=set_part(db(), access.run.eval_set),
    )


@bp.route("/runs/<int:run_id>/queries.<fmt>")
def run_queries_file(run_id: int, fmt: str) -> ResponseReturnValue:
    """Return a run's per-query chart (SVG, PDF) or its numbers (CSV)."""
    if fmt not in MIME:
        abort(404)
    found = _diagnostics(run_id)
    if not found.summarized:
        raise NotFound(
            f"The per-{found.unit} summary of this set is being computed; try again soon."
        )
    filename = f"run-{found.run.id}-queries.{fmt}"
    if fmt != "csv" and not found.rows:
        raise NotFound(f"No ranked run has per-{found.unit} values to compare with yet.")
    if fmt != "csv":
        return _stored("difference", fmt, _difference(found), filename).make_conditional(request)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([found.unit, found.measure, "median", "best", "difference"])
    for r in found.rows:
        writer.writerow([csv_safe(r.query, text=True), r.value, r.median, r.best, r.difference])
    body = out.getvalue().encode()
    return _file(body, fmt, filename, hashlib.sha256(body).hexdigest()).make_conditional(request)
