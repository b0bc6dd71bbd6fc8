"""Organizer pages: phases, deadlines, quotas, visibility, baselines, imports, gold, freeze, verify."""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

from flask import Blueprint, Response, abort, flash, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue
from flask_login import current_user

from leaderboard.clock import parse_instant
from leaderboard.formats.issues import quoted
from leaderboard.models import User
from leaderboard.services.accounts.core import list_teams
from leaderboard.services.campaign.phases import (
    PhaseChange,
    delete_phase,
    phase_settings,
    phases_of,
    upsert_phase,
)
from leaderboard.services.campaign.zones import (
    edited_instant,
    wall_clock,
    zone_names,
    zone_of,
)
from leaderboard.services.common.audit import events_of_subtask, latest_events
from leaderboard.services.common.audit_log import (
    audit_actions,
    audit_actors,
    audit_page,
    describe,
    parse_page,
)
from leaderboard.services.common.errors import DomainError, InvalidInput, RunRejected
from leaderboard.services.freeze.analysis import describe_analysis
from leaderboard.services.freeze.core import (
    MAX_REASON,
    DeadlineAhead,
    deadline_ahead,
    frozen_of,
    frozen_versions,
)
from leaderboard.services.gold.core import (
    gold_choices,
    gold_history,
    gold_target_by_role,
    store_gold,
)
from leaderboard.services.jobs.analyses import latest_job, request_job
from leaderboard.services.operations.health import ago, health
from leaderboard.services.results.listing import LISTING_FORMATS, run_listing
from leaderboard.services.runs.baselines import add_baselines
from leaderboard.services.runs.core import prepare_run
from leaderboard.services.tasks.catalog import list_tasks, resolve
from leaderboard.services.tasks.data import add_data_file, data_files, delete_data_file
from leaderboard.states import JobPurpose
from leaderboard.targets import Target
from leaderboard.unit_of_work import retried, unit_of
from leaderboard.web.analysis.context import analysis_context
from leaderboard.web.common.context import db, now, settings, store
from leaderboard.web.common.forms import (
    ConfirmForm,
    DataFileForm,
    GoldForm,
    ImportForm,
    PhaseForm,
    confirmed,
    import_modes,
    options,
)
from leaderboard.web.common.guards import organizer_post, organizer_required
from leaderboard.web.common.uploads import form_submission, upload_fields
from leaderboard.web.organizer.job_states import set_jobs

bp = Blueprint("organizer", __name__, url_prefix="/organizer")

LISTING_MIME = {
    "json": "application/json",
    "csv": "text/csv",
    "md": "text/markdown",
    "latex": "application/x-tex",
}

Number = TypeVar("Number", int, float)


def _actor() -> str:
    return str(current_user.email)


def _user() -> User:
    return current_user._get_current_object()


#: The audit events the dashboard shows; the audit page has them all.
DASHBOARD_EVENTS = 10


@bp.route("/")
@organizer_required
def dashboard() -> ResponseReturnValue:
    """Show the workers' health, tasks, teams and the latest audit events."""
    session = db()
    return render_template(
        "organizer/dashboard.html",
        health=health(session, campaign_now=now()),
        ago=ago,
        tasks=list_tasks(session, with_hidden=True),
        teams=list_teams(session),
        events=latest_events(session, limit=DASHBOARD_EVENTS),
        describe=describe,
        form=ConfirmForm(),
    )


def _phase_choices(target: Target) -> list[Any]:
    return options([(p.name, p.name) for p in phases_of(db(), target.subtask)])


def _page(target: Target, **extra: Any) -> str:
    session = db()
    sets = [(s.slug, s.title) for s in target.subtask.eval_sets]
    phase_form = extra.pop("phase_form", None) or PhaseForm()
    phase_form.eval_set.choices = options(sets)
    import_form = extra.pop("import_form", None) or ImportForm()
    import_form.eval_set.choices = options(sets)
    import_form.slot.choices = options([(s, s) for s in target.definition.runs.slots])
    import_form.mode.choices = import_modes(target.family)
    gold_form = GoldForm()
    gold_form.target.choices = options(gold_choices(target))
    data_form = extra.pop("data_form", None) or DataFileForm()
    data_form.phase.choices = _phase_choices(target)
    gold_files = gold_history(session, target)
    events = events_of_subtask(session, target.task.slug, target.subtask.slug)
    targets = {
        s.slug: resolve(session, target.task.slug, target.subtask.slug, s.slug)
        for s in target.subtask.eval_sets
    }
    frozen = {slug: frozen_of(session, t) for slug, t in targets.items()}
    versions = {slug: frozen_versions(session, t) for slug, t in targets.items() if frozen[slug]}
    frozen_notes = {
        slug: describe_analysis(snap.manifest.get("analysis"))
        for slug, snap in frozen.items()
        if snap is not None
    }
    jobs = {
        slug: set_jobs(
            {
                p: latest_job(session, t, p)
                for p in (JobPurpose.FREEZE, JobPurpose.VERIFY, JobPurpose.RESCORE)
            },
            frozen=frozen[slug] is not None,
        )
        for slug, t in targets.items()
    }
    deadlines = {slug: deadline_ahead(session, t, now()) for slug, t in targets.items()}
    return render_template(
        "organizer/subtask.html",
        **analysis_context(target),
        target=target,
        phases=phases_of(session, target.subtask),
        phase_form=phase_form,
        import_form=import_form,
        gold_form=gold_form,
        confirm=ConfirmForm(),
        gold_files=gold_files,
        data_form=data_form,
        data_files=data_files(session, target.subtask),
        frozen=frozen,
        versions=versions,
        max_reason=MAX_REASON,
        jobs=jobs,
        deadlines=deadlines,
        frozen_notes=frozen_notes,
        events=events,
        describe=describe,
        upload_fields=upload_fields(target),
        zone=settings().display_timezone,
        now=now(),
        **extra,
    )


@bp.route("/tasks/<task>/<subtask>")
@organizer_required
def subtask_page(task: str, subtask: str) -> ResponseReturnValue:
    """Show a subtask's campaign: phases, gold, baselines, imports, freeze, verify, audit log."""
    return _page(resolve(db(), task, subtask))


def _back(task: str, subtask: str) -> ResponseReturnValue:
    return redirect(url_for("organizer.subtask_page", task=task, subtask=subtask))


def _number_or_none(value: str | None, what: str, number: type[Number]) -> Number | None:
    """Return a form field's int or float (None when left empty); refuse text that is not one."""
    if not value:
        return None
    try:
        return number(value)
    except ValueError:
        noun = "a whole number" if number is int else "a number"
        raise InvalidInput(f"{what} must be {noun}, not {quoted(value[:40])}.") from None


def _bool_or_none(value: str | None) -> bool | None:
    return {"yes": True, "no": False}.get(value or "")


def _phase_form_page(
    target: Target, form: PhaseForm, zone: ZoneInfo, error: str | None = None
) -> str:
    phases = phases_of(db(), target.subtask)
    # Beside a phase's times as the form shows them (unedited), their UTC instants.
    current = next((p for p in phases if p.name == form.name.data), None)
    stored = {}
    if current is not None and error is None:
        stored = {
            "start": current.starts_at,
            "end": current.ends_at,
            "release_at": current.release_at,
        }
    return render_template(
        "organizer/phase.html",
        target=target,
        phases=phases,
        form=form,
        zone=zone.key,
        zones=zone_names(),
        stored=stored,
        error=error,
        now=now(),
    )


def _filled_form(target: Target, name: str, zone: ZoneInfo) -> PhaseForm:
    """Return the phase form holding a phase's settings (a blank one for a new name)."""
    form = PhaseForm(formdata=None)
    form.eval_set.choices = options([(s.slug, s.title) for s in target.subtask.eval_sets])
    form.zone.data = zone.key
    current = next((p for p in phases_of(db(), target.subtask) if p.name == name), None)
    form.name.data = name
    if current is None:
        return form
    form.eval_set.data = current.eval_set.slug
    form.shown_zone.data = zone.key
    for field, was, at in (
        (form.start, form.start_was, current.starts_at),
        (form.end, form.end_was, current.ends_at),
        (form.release_at, form.release_at_was, current.release_at),
    ):
        field.data = wall_clock(at, zone)
        was.data = at.isoformat() if at is not None else ""
    form.late.data = "yes" if current.late_allowed else "no"
    form.corrections.data = "yes" if current.corrections_allowed else "no"
    settings = phase_settings(current, current.eval_set.slug)
    for option in ("results", "names", "diagnostics", "private", "board", "analysis"):
        getattr(form, option).data = settings[option]
    form.ladder_alpha.data = f"{current.ladder_alpha:g}"
    form.daily_quota.data = str(current.daily_quota or 0)
    form.total_quota.data = str(current.total_quota or 0)
    return form


def _change(
    form: PhaseForm,
    start: datetime | None,
    end: datetime | None,
    release_at: datetime | None = None,
) -> PhaseChange:
    return PhaseChange(
        set_slug=form.eval_set.data,
        start=start,
        end=end,
        late=_bool_or_none(form.late.data),
        corrections=_bool_or_none(form.corrections.data),
        results=form.results.data or None,
        daily_quota=_number_or_none(form.daily_quota.data, "The daily quota", int),
        total_quota=_number_or_none(form.total_quota.data, "The total quota", int),
        names=form.names.data or None,
        diagnostics=form.diagnostics.data or None,
        private=form.private.data or None,
        board=form.board.data or None,
        ladder_alpha=_number_or_none(form.ladder_alpha.data, "The Ladder's alpha", float),
        analysis=form.analysis.data or None,
        release_at=release_at,
        clear_release=bool(form.release_clear.data),
    )


def _zone_or_utc(name: str | None) -> ZoneInfo:
    try:
        return zone_of(name)
    except DomainError:
        return zone_of(None)


def _save_zoned(base: Target, form: PhaseForm) -> ResponseReturnValue:
    """Save a phase from the phase page: start and end are wall-clock times in its zone."""
    task, subtask = base.task.slug, base.subtask.slug
    shown = zone_of(None)
    try:
        zone = shown = zone_of(form.zone.data)
        # The zone the page wrote the times in, and the chosen one (the script converts them).
        written = (_zone_or_utc(form.shown_zone.data), zone) if form.shown_zone.data else (zone,)

        def read(text: str | None, was: str | None, what: str) -> datetime | None:
            return edited_instant(text, was, written, zone, what) if text else None

        start = read(form.start.data, form.start_was.data, "The start")
        end = read(form.end.data, form.end_was.data, "The deadline")
        # The box wins over the field, which the page fills with the release it clears.
        release = None if form.release_clear.data else form.release_at.data
        release_at = read(release, form.release_at_was.data, "The release time")
        target = resolve(db(), task, subtask, form.eval_set.data)
        change = _change(form, start, end, release_at)
        with unit_of(db()) as unit:
            saved = upsert_phase(
                unit.session, target, form.name.data or "", change, actor=_actor(), now=now()
            )
    except DomainError as exc:
        return _phase_form_page(base, form, shown, error=exc.message), exc.status
    flash(f"Phase {saved.name} saved.", "info")
    return redirect(
        url_for("organizer.phase", task=task, subtask=subtask, name=saved.name, zone=zone.key)
    )


@bp.route("/tasks/<task>/<subtask>/phase", methods=["GET", "POST"])
@organizer_required
def phase(task: str, subtask: str) -> ResponseReturnValue:
    """Show the phase page (GET: ``?name=`` edits that phase, ``?zone=`` its zone); save a phase.

    A post with a ``zone`` (the phase page's) reads start and end as wall-clock times in that
    zone; one without (the subtask page's form, scripts) needs times with their offset.
    """
    base = resolve(db(), task, subtask)
    if request.method == "GET":
        # Without a choice, the organizers' own zone (LEADERBOARD_TIMEZONE).
        chosen = request.args.get("zone")
        zone = zone_of(chosen) if chosen else _zone_or_utc(settings().display_timezone)
        name = (request.args.get("name") or "").strip()[:64]
        return _phase_form_page(base, _filled_form(base, name, zone), zone)
    form = PhaseForm()
    form.eval_set.choices = options([(s.slug, s.title) for s in base.subtask.eval_sets])
    zoned = "zone" in request.form
    if not form.validate_on_submit():
        if zoned:
            return _phase_form_page(
                base, form, _zone_or_utc(form.zone.data), "Check the fields below."
            ), 400
        return _page(base, phase_form=form), 400
    if zoned:
        return _save_zoned(base, form)
    try:
        start = parse_instant(form.start.data) if form.start.data else None
        end = parse_instant(form.end.data) if form.end.data else None
        release = None if form.release_clear.data else form.release_at.data
        release_at = parse_instant(release) if release else None
    except (ValueError, OverflowError) as exc:
        flash(f"Phase not saved: {exc}", "error")
        return _page(base, phase_form=form), 400
    target = resolve(db(), task, subtask, form.eval_set.data)
    change = _change(form, start, end, release_at)
    with unit_of(db()) as unit:
        upsert_phase(unit.session, target, form.name.data or "", change, actor=_actor(), now=now())
    flash(f"Phase {form.name.data} saved.", "info")
    return _back(task, subtask)


@organizer_post(bp, "/tasks/<task>/<subtask>/phase/delete")
def delete_phase_view(task: str, subtask: str) -> ResponseReturnValue:
    """Delete a phase (field ``name``); its runs stay, no longer in a phase."""
    confirmed()
    target = resolve(db(), task, subtask)
    name = request.form.get("name", "")
    with unit_of(db()) as unit:
        delete_phase(unit.session, target.subtask, task, name, actor=_actor(), now=now())
    flash(f"Phase {name} deleted.", "info")
    return _back(task, subtask)


@organizer_post(bp, "/tasks/<task>/<subtask>/<eval_set>/baselines")
def baselines(task: str, subtask: str, eval_set: str) -> ResponseReturnValue:
    """Generate and store the baselines of one set."""
    confirmed()
    target = resolve(db(), task, subtask, eval_set)
    try:
        # Each baseline committed once placed; the record of the action last.
        with unit_of(db()):
            placements = add_baselines(db(), store(), settings(), target, actor=_actor())
            runs = [retried(db(), placement) for placement in placements]
    except DomainError as exc:
        flash(exc.message, "error")
    else:
        flash(f"{len(runs)} baselines added to {task} {subtask} ({eval_set}).", "info")
    if request.form.get("back") == "dashboard":
        return redirect(url_for("organizer.dashboard"))
    return _back(task, subtask)


@organizer_post(bp, "/tasks/<task>/<subtask>/import")
def import_run(task: str, subtask: str) -> ResponseReturnValue:
    """Import one run for a team, strictly or as the official scorer read it."""
    base = resolve(db(), task, subtask)
    form = ImportForm()
    form.eval_set.choices = options([(s.slug, s.title) for s in base.subtask.eval_sets])
    form.slot.choices = options([(s, s) for s in base.definition.runs.slots])
    form.mode.choices = import_modes(base.family)
    if not form.validate_on_submit():
        return _page(base, import_form=form), 400
    target = resolve(db(), task, subtask, form.eval_set.data)
    sub = form_submission(
        target,
        form,
        # A family's import mode reads the run leniently, then as the mode says.
        lenient=form.mode.data != "strict",
        options={o.name: form.mode.data == o.name for o in target.family.import_options},
    )
    try:
        placement = prepare_run(
            db(), store(), settings(), sub, user=_user(), team=form.team.data or "", now=now()
        )
        run = retried(db(), placement)
    except RunRejected as exc:
        return _page(
            base, import_form=form, import_error=exc.message, import_issues=exc.issues
        ), 422
    flash(f"Imported run {run.id} for {run.team.name if run.team else ''} ({run.slot}).", "info")
    return _back(task, subtask)


@organizer_post(bp, "/tasks/<task>/<subtask>/gold")
def gold(task: str, subtask: str) -> ResponseReturnValue:
    """Add or replace a reference file and queue the re-scoring of every run of its set."""
    base = resolve(db(), task, subtask)
    form = GoldForm()
    form.target.choices = options(gold_choices(base))
    if not form.validate_on_submit():
        abort(400, "Choose the file to replace.")
    upload = request.files.get("file")
    if upload is None or not upload.filename:
        raise InvalidInput("Choose the new reference file.")
    set_slug, _, role = (form.target.data or "").partition("|")
    target, role = gold_target_by_role(db(), task, subtask, set_slug, role)
    with unit_of(db()):
        gold_file = store_gold(
            db(),
            store(),
            settings(),
            target,
            role,
            upload.stream.read(),
            upload.filename,
            actor=_actor(),
        )
    with unit_of(db()):
        job = request_job(db(), target, JobPurpose.RESCORE, actor=_actor(), now=now())
    flash(
        f"Stored {role} version {gold_file.version}; "
        + QUEUED[JobPurpose.RESCORE].format(set=set_slug, job=job.id),
        "info",
    )
    return _back(task, subtask)


@organizer_post(bp, "/tasks/<task>/<subtask>/<eval_set>/rescore")
def rescore(task: str, subtask: str, eval_set: str) -> ResponseReturnValue:
    """Queue the re-scoring of every run of a set against its current gold."""
    return _queue(task, subtask, eval_set, JobPurpose.RESCORE)


#: What the page says once a freeze, a verification or a re-score is queued for the worker.
QUEUED = {
    JobPurpose.FREEZE: "Freeze of {set} queued (job {job}): `leaderboard worker` computes the official "
    "table's significance analysis, then freezes the table with it. A freeze is permanent: "
    "it can only be superseded by a new frozen version, the old one kept and shown as superseded.",
    JobPurpose.VERIFY: "Verification of {set} queued (job {job}): `leaderboard worker` re-scores the "
    "frozen runs and recomputes their analysis; this page shows what it finds.",
    JobPurpose.RESCORE: "re-scoring of {set} queued (job {job}): `leaderboard worker` scores every "
    "run of the set again against its current gold; this page shows how it went.",
}


#: What the page says once a supersession is queued.
SUPERSEDE_QUEUED = (
    "Supersession of {set} queued (job {job}): `leaderboard worker` freezes a new version of the "
    "official ranking; the current one is kept, verifiable, and shown as superseded."
)


def _queue(
    task: str,
    subtask: str,
    eval_set: str,
    purpose: JobPurpose,
    supersede: str | None = None,
) -> ResponseReturnValue:
    confirmed()
    target = resolve(db(), task, subtask, eval_set)
    try:
        with unit_of(db()):
            job = request_job(
                db(),
                target,
                purpose,
                actor=_actor(),
                now=now(),
                before_deadline=purpose == JobPurpose.FREEZE
                and bool(request.form.get("before_deadline")),
                zone=settings().display_timezone,
                supersede=supersede,
            )
    except DeadlineAhead as exc:
        # Said at once, on the page whose freeze form offers the confirmation.
        flash(f"Not frozen: {exc.message}", "error")
        return _page(resolve(db(), task, subtask)), exc.status
    said = (SUPERSEDE_QUEUED if supersede is not None else QUEUED[purpose]).format(
        set=eval_set, job=job.id
    )
    flash(said[:1].upper() + said[1:], "info")
    return _back(task, subtask)


@organizer_post(bp, "/tasks/<task>/<subtask>/<eval_set>/freeze")
def freeze_set(task: str, subtask: str, eval_set: str) -> ResponseReturnValue:
    """Queue the freeze of a set's official ranking: the worker analyses it, then freezes."""
    return _queue(task, subtask, eval_set, JobPurpose.FREEZE)


@organizer_post(bp, "/tasks/<task>/<subtask>/<eval_set>/supersede")
def supersede_set(task: str, subtask: str, eval_set: str) -> ResponseReturnValue:
    """Queue a new frozen version of a set's official ranking; the current one is kept."""
    return _queue(
        task, subtask, eval_set, JobPurpose.FREEZE, supersede=request.form.get("reason", "")
    )


@organizer_post(bp, "/tasks/<task>/<subtask>/<eval_set>/verify")
def verify_set(task: str, subtask: str, eval_set: str) -> ResponseReturnValue:
    """Queue the verification of a frozen ranking: re-scoring every run and its analysis."""
    return _queue(task, subtask, eval_set, JobPurpose.VERIFY)


@bp.route("/tasks/<task>/<subtask>/<eval_set>/runs.<ext>")
@organizer_required
def listing(task: str, subtask: str, eval_set: str, ext: str) -> ResponseReturnValue:
    """Download the per-team run listing with descriptions."""
    if ext not in LISTING_FORMATS:
        abort(404)
    target = resolve(db(), task, subtask, eval_set)
    body = LISTING_FORMATS[ext](run_listing(db(), target))
    name = f"{task}-{subtask}-{eval_set}-runs.{'tex' if ext == 'latex' else ext}"
    return Response(
        body,
        mimetype=LISTING_MIME[ext],
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


@organizer_post(bp, "/tasks/<task>/<subtask>/data")
def add_data(task: str, subtask: str) -> ResponseReturnValue:
    """Attach a file for participants to one of the subtask's phases."""
    target = resolve(db(), task, subtask)
    form = DataFileForm()
    form.phase.choices = _phase_choices(target)
    if not form.validate_on_submit():
        return _page(target, data_form=form), 400
    upload = request.files.get("file")
    if upload is None or not upload.filename:
        raise InvalidInput("Choose the file participants should download.")
    with unit_of(db()) as unit:
        data = add_data_file(
            unit.session,
            store(),
            target.subtask,
            form.phase.data or "",
            upload.stream,
            upload.filename,
            title=form.title.data or "",
            actor=_actor(),
            now=now(),
        )
    flash(f"Data file {data.filename} added to phase {form.phase.data}.", "info")
    return _back(task, subtask)


@organizer_post(bp, "/tasks/<task>/<subtask>/data/<int:file_id>/delete")
def delete_data(task: str, subtask: str, file_id: int) -> ResponseReturnValue:
    """Remove a data file from its phase."""
    confirmed()
    with unit_of(db()) as unit:
        gone = delete_data_file(
            unit.session, resolve(db(), task, subtask).subtask, file_id, actor=_actor(), now=now()
        )
    flash(f"Data file {gone.filename} deleted.", "info")
    return _back(task, subtask)


@bp.route("/audit")
@organizer_required
def audit() -> ResponseReturnValue:
    """Show the audit log, 50 events a page, newest first; ``?actor=`` and ``?action=`` filter it."""
    session = db()
    shown = audit_page(
        session,
        page=parse_page(request.args.get("page")),
        actor=request.args.get("actor"),
        action=request.args.get("action"),
    )
    return render_template(
        "organizer/audit.html",
        log=shown,
        describe=describe,
        actors=audit_actors(session),
        actions=audit_actions(session),
    )
