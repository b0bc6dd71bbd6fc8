"""Public pages: the task list and the results tables (official and live) with their downloads."""

from __future__ import annotations

from flask import Blueprint, Response, abort, make_response, render_template, request
from flask.typing import ResponseReturnValue
from markupsafe import Markup

from leaderboard.formats.issues import quoted
from leaderboard.models import FrozenTable
from leaderboard.services.campaign.schedule import subtask_schedule, task_schedule
from leaderboard.services.campaign.visibility import hiding_phase
from leaderboard.services.common.errors import InvalidInput
from leaderboard.services.common.settings import registration
from leaderboard.services.freeze.core import (
    RENDERERS,
    FrozenVersion,
    frozen_version,
    frozen_versions,
)
from leaderboard.services.jobs.analyses import shown_report
from leaderboard.services.results import chart_files
from leaderboard.services.results.anonymity import (
    audience_for,
    audience_key,
    is_anonymous,
)
from leaderboard.services.results.parts import chosen_part, readable_parts
from leaderboard.services.results.standing import team_submissions
from leaderboard.services.results.tables import has_active_runs, live_table
from leaderboard.services.tasks.catalog import definition_of, list_tasks
from leaderboard.services.tasks.data import available_files
from leaderboard.services.tasks.hiding import sees_hidden
from leaderboard.services.tasks.pages import task_sections
from leaderboard.targets import Target
from leaderboard.unit_of_work import unit_of
from leaderboard.web.common import pagecache
from leaderboard.web.common.context import db, now, store, viewer
from leaderboard.web.common.forms import ConfirmForm
from leaderboard.web.common.hidden_notice import seen_hidden
from leaderboard.web.common.live_results import live_rank_texts, progress_of
from leaderboard.web.common.pagecache import cached_page, remember
from leaderboard.web.public.context import asked_target, chosen_view, visible_target

bp = Blueprint("public", __name__)

DOWNLOADS = {
    "csv": "text/csv",
    "json": "application/json",
    "md": "text/markdown",
    "tex": "application/x-tex",
}


def chosen_snapshot(target: Target) -> tuple[FrozenTable | None, list[FrozenVersion]]:
    """Return the frozen version asked for (``?version=N``, else the official newest) and all."""
    versions = frozen_versions(db(), target)
    asked = request.args.get("version")
    if asked is None:
        return (versions[-1].snapshot if versions else None), versions
    if not asked.isdigit():
        raise InvalidInput(f"Unknown version {quoted(asked)}: a frozen version is a number.")
    return frozen_version(db(), target, int(asked)).snapshot, versions


@bp.route("/")
def home() -> ResponseReturnValue:
    """List the hosted tasks and their subtasks."""
    tasks = list_tasks(db(), with_hidden=sees_hidden(viewer()))
    return render_template("public/home.html", tasks=[(t, definition_of(t)) for t in tasks])


@bp.route("/tasks/<task>")
def task_page(task: str) -> ResponseReturnValue:
    """Describe a task and link its subtasks' tables."""
    t = next(
        (x for x in list_tasks(db(), with_hidden=sees_hidden(viewer())) if x.slug == task), None
    )
    if t is None:
        abort(404)
    definition = definition_of(t)
    # Sanitized by render_markdown (an allow-list): safe to insert as HTML.
    sections = [(s, Markup(s.html)) for s in task_sections(definition)]
    return render_template(
        "public/task.html",
        task=t,
        definition=definition,
        sections=sections,
        schedule=task_schedule(db(), t.slug, now()),
        task_form=ConfirmForm() if sees_hidden(viewer()) else None,
    )


def rendered(
    target: Target, view: str, fmt: str, snapshot: FrozenTable | None, part: str = "all"
) -> str:
    """Return the table of a view in a format (html, csv, json, md, tex), cached by revision.

    A live table of a split set is on ``part`` (the reader's choice, checked by the caller).
    """
    if view == "official" and snapshot is not None:
        return str(snapshot.renders[fmt])
    audience = audience_for(viewer())
    # Anonymous tables differ by reader (their own team by name): the reader is in the key.
    names = audience_key(db(), target, audience)
    key = (
        target.eval_set.id,
        target.eval_set.revision,
        target.eval_set.analysed,
        view,
        fmt,
        names,
        part,
    )
    return pagecache.tables().get_or_make(
        key, lambda: RENDERERS[fmt](live_table(db(), store(), target, audience, part=part))
    )


def asked_part(target: Target) -> str:
    """Return the part of a split set the reader asks for (``?part=``), or the default."""
    user = viewer()
    organizer = user is not None and user.is_organizer
    return chosen_part(db(), target, request.args.get("part"), organizer=organizer)


def progress_state(target: Target) -> str:
    """Return "drawn" or "drawing" for the set's progress chart ("" for none); ask the worker if not.

    Asking here, once per revision, has the chart drawn before most readers look; until then
    the page says so and reloads, rather than showing a broken image.
    """
    data = progress_of(target, audience_for(viewer()))
    if not data["teams"]:
        return ""
    if chart_files.is_drawn(db(), store(), "progress", "svg", data):
        return "drawn"
    with unit_of(db()) as unit:
        chart_files.request_chart(unit.session, "progress", "svg", data)
    return "drawing"


@bp.route("/tasks/<task>/<subtask>")
def results(task: str, subtask: str) -> ResponseReturnValue:
    """Show the official (frozen) or live results table of a subtask's evaluation set."""
    schedule = subtask_schedule(db(), task, subtask, now())
    key, cached = cached_page(task, subtask, schedule.key)
    if cached is not None:
        return cached
    target = asked_target(task, subtask)
    snapshot, versions = chosen_snapshot(target)
    view = chosen_view(snapshot)
    # An older version's page shows its table and exports; the charts are the official one's.
    superseded = snapshot is not None and snapshot is not versions[-1].snapshot
    part = asked_part(target)
    hidden = hiding_phase(db(), target.eval_set, viewer())
    table_html = None
    empty = not has_active_runs(db(), target)
    charted = False
    progressed = ""
    if hidden is None:
        # Rendered (and escaped) by our own table template, now or at freeze time.
        table_html = Markup(rendered(target, view, "html", snapshot, part))
        charted = not superseded and shown_report(db(), target, view, snapshot) is not None
        progressed = "" if empty else progress_state(target)
    user = viewer()
    # A member's own runs: only ever on a page for that member (never cached, see below).
    ours = None
    if user is not None and not user.is_organizer and user.team is not None:
        ours = team_submissions(db(), user.team, target, user, now(), live_rank_texts, store())
    # A participant without a team learns here why there is no upload link.
    teamless = user is not None and not user.is_organizer and user.team is None
    page = render_template(
        "public/results.html",
        target=target,
        snapshot=snapshot,
        versions=versions if view == "official" else [],
        view=view,
        hidden=hidden,
        table_html=table_html,
        empty=empty,
        data_files=available_files(db(), target.subtask, viewer(), now()),
        anonymous=is_anonymous(db(), target),
        charted=charted,
        progressed=progressed,
        ours=ours,
        teamless=teamless,
        registration=registration(db()) if teamless else "",
        withdraw_form=ConfirmForm() if ours is not None else None,
        schedule=schedule,
        seen_hidden=seen_hidden(target.eval_set),
        part=part,
        readable=readable_parts(db(), target, organizer=user is not None and user.is_organizer),
    )
    resp = make_response(page)
    if ours is not None:
        resp.headers["Cache-Control"] = "private, no-store"
    elif progressed == "drawing":
        # A page saying the chart is being drawn is not kept: its reload must find the chart.
        resp.headers["Cache-Control"] = "no-store"
        return resp
    return remember(key, resp)


@bp.route("/tasks/<task>/<subtask>/results.<ext>")
def download(task: str, subtask: str, ext: str) -> ResponseReturnValue:
    """Download the official or live table as CSV, JSON, Markdown or LaTeX."""
    if ext not in DOWNLOADS:
        abort(404)
    key, cached = cached_page(task, subtask)
    if cached is not None:
        return cached
    target = visible_target(task, subtask)
    snapshot, versions = chosen_snapshot(target)
    view = chosen_view(snapshot)
    part = asked_part(target)
    if view == "official" and snapshot is None:
        raise InvalidInput(
            "This table has not been frozen yet; download the live view (?view=live)."
        )
    version = (
        f"-v{snapshot.version}" if view == "official" and len(versions) > 1 and snapshot else ""
    )
    name = f"{task}-{subtask}-{target.eval_set.slug}-{view}{version}.{ext}"
    resp = Response(
        rendered(target, view, ext, snapshot, part),
        mimetype=DOWNLOADS[ext],
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )
    return remember(key, resp)
