"""The phase page (date-time inputs in a chosen zone) and the paged, filtered audit log."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select

from leaderboard.clock import FixedClock
from leaderboard.models import AuditEvent, Phase
from leaderboard.services.common.audit import record
from tests.conftest import AppFactory, csrf_from, login
from tests.runs import make_organizer, make_participant, own_campaign

T3 = "semeval2016-task3"
PAGE = f"/organizer/tasks/{T3}/A/phase"


@pytest.fixture
def org_app(make_app: AppFactory) -> Flask:
    app = make_app(clock=FixedClock(datetime(2016, 1, 20, 12, tzinfo=UTC)))
    make_organizer(app, "org@example.org")
    make_participant(app, "Aurora", "alice@example.org")
    own_campaign(app)
    return app


@pytest.fixture
def org(org_app: Flask) -> FlaskClient:
    client = org_app.test_client()
    login(client, "org@example.org", "organizer password")
    return client


def save(client: FlaskClient, **fields: str) -> Any:
    """Post the phase page's form (as the page sends it: with a zone) with its CSRF token."""
    token = csrf_from(client.get(PAGE).get_data(as_text=True))
    data = {"name": "test", "eval_set": "test", "zone": "UTC", "late": "", "corrections": ""}
    data.update(results="", names="", diagnostics="", daily_quota="", total_quota="")
    return client.post(PAGE, data={**data, **fields, "csrf_token": token})


def phases(app: Flask) -> list[tuple[str, str, datetime | None, datetime | None, bool]]:
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        rows = session.scalars(select(Phase).order_by(Phase.id)).all()
        return [
            (p.name, p.eval_set.slug, p.starts_at, p.ends_at, p.results_hidden)
            for p in rows
            if p.subtask.task.slug == T3 and p.subtask.slug == "A"
        ]


def audit_count(app: Flask) -> int:
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        return session.scalar(select(func.count(AuditEvent.id))) or 0


def test_the_phase_page_shows_a_form_with_date_time_inputs(org: FlaskClient) -> None:
    resp = org.get(PAGE)
    assert resp.status_code == 200
    html = resp.get_data(as_text=True)
    for name in ("start", "end"):
        assert re.search(
            rf'<input[^>]*id="{name}"[^>]*name="{name}"[^>]*type="datetime-local"', html
        )
    assert re.search(r'<input[^>]*id="zone"[^>]*name="zone"[^>]*value="UTC"', html)
    assert '<label for="zone">' in html and '<label for="start">' in html
    assert 'src="/static/phase-times.js"' in html and "<script>" not in html
    # The zone list offers the IANA names.
    assert '<option value="Europe/Paris">' in html
    # The subtask page links here.
    assert f'href="{PAGE}"' in org.get(f"/organizer/tasks/{T3}/A").get_data(as_text=True)


def test_a_paris_time_is_stored_in_utc_and_shown_again_in_paris(
    org_app: Flask, org: FlaskClient
) -> None:
    # Winter in Paris is UTC+1, summer UTC+2.
    resp = save(org, zone="Europe/Paris", start="2016-03-01T09:00", end="2016-07-01T18:30")
    assert resp.status_code == 302, resp.get_data(as_text=True)[:2000]
    assert resp.headers["Location"] == f"{PAGE}?name=test&zone=Europe/Paris"
    assert phases(org_app) == [
        (
            "test",
            "test",
            datetime(2016, 3, 1, 8, 0, tzinfo=UTC),
            datetime(2016, 7, 1, 16, 30, tzinfo=UTC),
            False,
        )
    ]
    html = org.get(resp.headers["Location"]).get_data(as_text=True)
    assert "Phase test saved." in html
    assert 'value="2016-03-01T09:00"' in html and 'value="2016-07-01T18:30"' in html
    # Beside each input and in the list: the UTC instant, with a datetime for the reader's time.
    assert "= 2016-03-01 08:00:00 UTC" in html and "= 2016-07-01 16:30:00 UTC" in html
    assert (
        '<time datetime="2016-07-01T16:30:00Z" class="reader-local">2016-07-01 16:30:00 UTC' in html
    )
    # The same phase seen in New York (UTC-5 in March, UTC-4 in July).
    ny = org.get(f"{PAGE}?name=test&zone=America/New_York").get_data(as_text=True)
    assert 'value="2016-03-01T03:00"' in ny and 'value="2016-07-01T12:30"' in ny
    # The audit log records it, from the web, by the organizer.
    log = org.get("/organizer/audit?action=create-phase&actor=org@example.org")
    assert "created phase test of semeval2016-task3 A (test set): 2016-03-01 08:00 UTC to " in (
        log.get_data(as_text=True)
    )


def test_utc_by_default_and_an_explicit_offset_wins(org_app: Flask, org: FlaskClient) -> None:
    assert save(org, zone="", start="2016-01-10T00:00").status_code == 302
    assert save(org, zone="Asia/Tokyo", end="2016-01-31T23:59:00+01:00").status_code == 302
    assert phases(org_app) == [
        (
            "test",
            "test",
            datetime(2016, 1, 10, tzinfo=UTC),
            datetime(2016, 1, 31, 22, 59, tzinfo=UTC),
            False,
        )
    ]


@pytest.mark.parametrize(
    ("fields", "status", "message"),
    [
        (
            {"zone": "Mars/Olympus_Mons"},
            400,
            "Time zone 'Mars/Olympus_Mons' is not an IANA zone name",
        ),
        ({"zone": "../../etc/passwd"}, 400, "is not an IANA zone name"),
        # 2016-03-27 02:00 in Paris: the clocks jump to 03:00.
        (
            {"zone": "Europe/Paris", "start": "2016-03-27T02:30"},
            400,
            "does not exist in Europe/Paris",
        ),
        # 2016-10-30 03:00 in Paris: the clocks go back to 02:00.
        ({"zone": "Europe/Paris", "end": "2016-10-30T02:30"}, 400, "happens twice in Europe/Paris"),
        ({"start": "2016-02-01T00:00", "end": "2016-01-01T00:00"}, 400, "must end after it starts"),
        (
            {"end": "31/01/2016 23:59"},
            400,
            "The deadline '31/01/2016 23:59' is not a date and time",
        ),
        ({"start": "0001-01-01T00:00", "zone": "Asia/Tokyo"}, 400, "is not a date and time"),
        ({"daily_quota": "-1"}, 400, "A quota cannot be negative"),
        ({"total_quota": "many"}, 400, "The total quota must be a whole number"),
        ({"ladder_alpha": "often"}, 400, "The Ladder's alpha must be a number, not 'often'"),
        ({"name": ""}, 400, "Check the fields below"),
    ],
)
def test_refusals_change_nothing(
    org_app: Flask, org: FlaskClient, fields: dict[str, str], status: int, message: str
) -> None:
    assert (
        save(org, name="test", start="2016-01-10T00:00", end="2016-01-31T00:00").status_code == 302
    )
    before, events = phases(org_app), audit_count(org_app)
    resp = save(org, **fields)
    assert resp.status_code == status
    html = resp.get_data(as_text=True)
    assert message.replace("'", "&#39;") in html, html[:3000]
    # The refusal is said on the phase page itself, the entered values kept.
    assert 'id="phase-error"' in html and 'id="phase-form"' in html
    assert phases(org_app) == before
    assert audit_count(org_app) == events


def test_a_new_phase_refused_is_not_created(org_app: Flask, org: FlaskClient) -> None:
    resp = save(org, name="fresh", start="2016-05-01T00:00", end="2016-04-01T00:00")
    assert resp.status_code == 400
    assert phases(org_app) == []


def test_the_subtask_page_form_keeps_its_iso_times(org_app: Flask, org: FlaskClient) -> None:
    token = csrf_from(org.get(f"/organizer/tasks/{T3}/A").get_data(as_text=True))
    base = {"csrf_token": token, "name": "test", "eval_set": "test", "late": ""}
    base.update(corrections="", results="")
    ok = org.post(PAGE, data={**base, "start": "2016-01-10T00:00:00+02:00"})
    assert ok.status_code == 302 and ok.headers["Location"] == f"/organizer/tasks/{T3}/A"
    assert phases(org_app)[0][2] == datetime(2016, 1, 9, 22, tzinfo=UTC)
    # Without a zone field a time must state its offset, as before.
    naive = org.post(PAGE, data={**base, "end": "2016-01-31T23:59"})
    assert naive.status_code == 400 and "has no time zone" in naive.get_data(as_text=True)


class _FormReader(HTMLParser):
    """Collect what a browser without scripts would post from the phase form."""

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, str] = {}
        self._select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "input" and a.get("name") and a.get("type") not in ("checkbox", "submit"):
            self.values[a["name"]] = a.get("value", "")
        elif tag == "select":
            self._select = a.get("name")
            self.values.setdefault(self._select or "", "")
        elif tag == "option" and self._select and "selected" in a:
            self.values[self._select] = a.get("value", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._select = None


def form_of(client: FlaskClient, query: str) -> dict[str, str]:
    """Return the phase form's fields as the page at ``PAGE?query`` fills them."""
    html = client.get(f"{PAGE}?{query}").get_data(as_text=True)
    form = html[html.index('id="phase-form"') :]
    reader = _FormReader()
    reader.feed(form[: form.index("</form>")])
    return reader.values


@pytest.fixture
def saved_in_utc(org_app: Flask, org: FlaskClient) -> FlaskClient:
    """Return the organizer's client with phase test saved in UTC, a release scheduled."""
    resp = save(
        org,
        start="2016-03-01T09:00",
        end="2016-07-01T18:30",
        release_at="2016-07-08T12:00",
        results="hidden",
    )
    assert resp.status_code == 302
    return org


SAVED_START, SAVED_END = (
    datetime(2016, 3, 1, 9, tzinfo=UTC),
    datetime(2016, 7, 1, 18, 30, tzinfo=UTC),
)
SAVED_RELEASE = datetime(2016, 7, 8, 12, tzinfo=UTC)


def test_choosing_only_another_zone_moves_no_time(
    org_app: Flask, saved_in_utc: FlaskClient
) -> None:
    fields = form_of(saved_in_utc, "name=test")
    assert (fields["start"], fields["zone"]) == ("2016-03-01T09:00", "UTC")
    # Without the script the texts stay as the page wrote them (in UTC); only the zone changes.
    resp = saved_in_utc.post(PAGE, data={**fields, "zone": "Europe/Berlin"})
    assert resp.status_code == 302
    assert phases(org_app) == [("test", "test", SAVED_START, SAVED_END, True)]
    assert release_of(org_app) == SAVED_RELEASE


def test_a_deadline_edited_with_berlin_chosen_is_read_in_berlin_time_alone(
    org_app: Flask, saved_in_utc: FlaskClient
) -> None:
    fields = form_of(saved_in_utc, "name=test")
    # Berlin is UTC+2 in July (summer time): 20:30 there is 18:30 UTC.
    data = {**fields, "zone": "Europe/Berlin", "end": "2016-07-02T20:30"}
    assert saved_in_utc.post(PAGE, data=data).status_code == 302
    moved = datetime(2016, 7, 2, 18, 30, tzinfo=UTC)
    assert phases(org_app) == [("test", "test", SAVED_START, moved, True)]
    assert release_of(org_app) == SAVED_RELEASE
    # In winter Berlin is UTC+1: a start edited to 10:30 there is 09:30 UTC.
    fields = form_of(saved_in_utc, "name=test&zone=Europe/Berlin")
    data = {**fields, "start": "2016-03-01T10:30"}
    assert saved_in_utc.post(PAGE, data=data).status_code == 302
    assert phases(org_app) == [("test", "test", SAVED_START + timedelta(minutes=30), moved, True)]


def test_the_form_shows_the_times_in_the_chosen_zone(saved_in_utc: FlaskClient) -> None:
    fields = form_of(saved_in_utc, "name=test&zone=Europe/Berlin")
    assert (fields["start"], fields["end"], fields["release_at"]) == (
        "2016-03-01T10:00",
        "2016-07-01T20:30",
        "2016-07-08T14:00",
    )
    assert (fields["zone"], fields["shown_zone"]) == ("Europe/Berlin", "Europe/Berlin")


def test_the_phase_page_opens_in_the_organizers_zone(make_app: AppFactory) -> None:
    app = make_app(
        clock=FixedClock(datetime(2016, 1, 20, 12, tzinfo=UTC)), display_timezone="Europe/Berlin"
    )
    make_organizer(app, "org@example.org")
    client = app.test_client()
    login(client, "org@example.org", "organizer password")
    assert save(client, zone="UTC", start="2016-03-01T09:00").status_code == 302
    fields = form_of(client, "name=test")
    assert (fields["zone"], fields["start"]) == ("Europe/Berlin", "2016-03-01T10:00")


def test_an_unedited_time_with_seconds_keeps_them(org_app: Flask, org: FlaskClient) -> None:
    assert save(org, start="2016-03-01T09:00:30", end="2016-07-01T18:30").status_code == 302
    fields = form_of(org, "name=test&zone=Asia/Tokyo")
    assert fields["start"] == "2016-03-01T18:00:30"
    assert org.post(PAGE, data={**fields, "zone": "UTC"}).status_code == 302
    assert phases(org_app)[0][2] == SAVED_START + timedelta(seconds=30)


def test_a_phase_change_is_audited_field_by_field_and_a_save_of_nothing_not_at_all(
    org_app: Flask, saved_in_utc: FlaskClient
) -> None:
    events = audit_count(org_app)
    fields = form_of(saved_in_utc, "name=test")
    assert saved_in_utc.post(PAGE, data=fields).status_code == 302
    assert audit_count(org_app) == events
    data = {
        **fields,
        "end": "2016-07-02T18:30",
        "daily_quota": "3",
        "release_at": "",
        "late": "yes",
    }
    assert saved_in_utc.post(PAGE, data={**data, "release_clear": "y"}).status_code == 302
    assert audit_count(org_app) == events + 1
    log = saved_in_utc.get("/organizer/audit?action=update-phase").get_data(as_text=True)
    assert (
        "updated phase test of semeval2016-task3 A (test set): "
        "deadline 2016-07-01 18:30 UTC → 2016-07-02 18:30 UTC; "
        "scheduled release 2016-07-08 12:00 UTC → none; late runs no → yes; daily quota none → 3"
    ) in log


def test_only_organizers_open_the_phase_page(org_app: Flask) -> None:
    anon = org_app.test_client()
    assert anon.get(PAGE).status_code == 302
    alice = org_app.test_client()
    login(alice, "alice@example.org", "correct horse battery")
    assert alice.get(PAGE).status_code == 403
    assert alice.get("/organizer/audit").status_code == 403
    assert anon.get("/organizer/audit").status_code == 302


# ---- the audit log

START = datetime(2016, 1, 1, tzinfo=UTC)


@pytest.fixture
def log_app(make_app: AppFactory) -> Flask:
    app = make_app()
    make_organizer(app, "org@example.org")
    return app


@pytest.fixture
def log_org(log_app: Flask) -> FlaskClient:
    client = log_app.test_client()
    login(client, "org@example.org", "organizer password")
    return client


def fill_log(app: Flask) -> None:
    """Record 120 events a minute apart: every third by the command line, the others by two people."""
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        for i in range(120):
            actor = ("cli:root", "ann@example.org", "bea@example.org")[i % 3]
            if i % 3 == 1:
                record(session, actor, "create-team", at=START + timedelta(minutes=i), team=f"T{i}")
            else:
                record(
                    session,
                    actor,
                    "delete-phase",
                    at=START + timedelta(minutes=i),
                    task=T3,
                    subtask="A",
                    phase=f"p{i}",
                    set="dev",
                    runs=i,
                )
        session.commit()


def lines(html: str) -> list[str]:
    """Return the text of each audit line of a page, tags stripped."""
    items = re.findall(r'<li class="audit-event"[^>]*>(.*?)</li>', html, re.S)
    return [re.sub(r"<[^>]+>", "", item).strip() for item in items]


def test_the_audit_log_pages_50_lines_newest_first(log_app: Flask, log_org: FlaskClient) -> None:
    fill_log(log_app)
    # Only the 120 events recorded above (the preset installation records some of its own).
    first = lines(log_org.get("/organizer/audit?actor=bea@example.org").get_data(as_text=True))
    assert len(first) == 40
    every = log_org.get("/organizer/audit").get_data(as_text=True)
    total = int(re.search(r'id="audit-count" role="status">(\d+) events', every).group(1))  # type: ignore[union-attr]
    assert total == audit_count(log_app) and total >= 120
    page1 = lines(every)
    assert len(page1) == 50
    # The newest, minute 119 (by bea), first.
    assert page1[0] == (
        "2016-01-01 01:59:00 UTC bea@example.org delete-phase: deleted phase p119 of "
        "semeval2016-task3 A (dev set) (119 run(s) left in no phase)"
    )
    assert page1[1].startswith(
        "2016-01-01 01:58:00 UTC ann@example.org create-team: created team T118"
    )
    assert page1[49].startswith("2016-01-01 01:10:00 UTC")
    page2 = lines(log_org.get("/organizer/audit?page=2").get_data(as_text=True))
    assert len(page2) == 50 and page2[0].startswith("2016-01-01 01:09:00 UTC")
    assert 'href="/organizer/audit?page=3"' in every and 'rel="next"' in every
    # Readable sentences, not JSON.
    assert "{" not in "".join(page1 + page2) and '"runs"' not in every
    last = (total + 49) // 50
    assert log_org.get(f"/organizer/audit?page={last + 1}").status_code == 404
    assert log_org.get("/organizer/audit?page=0").status_code == 400
    bad = log_org.get("/organizer/audit?page=abc")
    assert bad.status_code == 400 and "The page must be a whole number" in bad.get_data(
        as_text=True
    )


def test_the_audit_log_filters_by_actor_and_action(log_app: Flask, log_org: FlaskClient) -> None:
    fill_log(log_app)
    cli = lines(log_org.get("/organizer/audit?actor=cli").get_data(as_text=True))
    assert len(cli) == 40 and all(" cli:root delete-phase: deleted phase p" in x for x in cli)
    ann = log_org.get("/organizer/audit?actor=ANN@example.org&action=create-team")
    shown = lines(ann.get_data(as_text=True))
    assert len(shown) == 40 and shown[-1].endswith("ann@example.org create-team: created team T1")
    # Page links keep the filters.
    two = log_org.get("/organizer/audit?action=delete-phase").get_data(as_text=True)
    assert len(lines(two)) == 50
    assert 'href="/organizer/audit?page=2&amp;action=delete-phase"' in two
    page2 = lines(log_org.get("/organizer/audit?action=delete-phase&page=2").get_data(as_text=True))
    assert len(page2) == 30
    # The filter form (GET) with labels, the current filter chosen.
    assert '<label for="actor">' in two and '<label for="action">' in two
    assert '<option value="delete-phase" selected>' in two
    none = log_org.get("/organizer/audit?actor=nobody@example.org").get_data(as_text=True)
    assert lines(none) == [] and ">0 events matching" in none


def test_the_dashboard_shows_the_latest_events_and_links_the_log(
    log_app: Flask, log_org: FlaskClient
) -> None:
    fill_log(log_app)
    html = log_org.get("/organizer/").get_data(as_text=True)
    shown = lines(html)
    assert len(shown) == 10 and shown[0].startswith("2016-01-01 01:59:00 UTC bea@example.org")
    assert 'href="/organizer/audit"' in html and "&#34;runs&#34;" not in html


# ---- the scheduled release (release_at) on the phase page


def release_of(app: Flask, name: str = "test") -> datetime | None:
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        phase = session.scalar(select(Phase).where(Phase.name == name))
        assert phase is not None
        return phase.release_at


def test_a_scheduled_release_is_set_in_the_zone_shown_again_and_cleared(
    org_app: Flask, org: FlaskClient
) -> None:
    # Hidden results, released at 18:30 in Paris in July (UTC+2).
    resp = save(org, zone="Europe/Paris", start="2016-03-01T09:00", end="2016-07-01T12:00",
                results="hidden", release_at="2016-07-01T18:30")  # fmt: skip
    assert resp.status_code == 302, resp.get_data(as_text=True)[:2000]
    assert release_of(org_app) == datetime(2016, 7, 1, 16, 30, tzinfo=UTC)
    html = org.get(resp.headers["Location"]).get_data(as_text=True)
    assert re.search(r'<input[^>]*id="release_at"[^>]*type="datetime-local"', html)
    assert '<label for="release_at">' in html
    assert re.search(r'<input[^>]*id="release_at"[^>]*value="2016-07-01T18:30"', html)
    assert "= 2016-07-01 16:30:00 UTC" in html
    assert 'released at <time datetime="2016-07-01T16:30:00Z"' in html
    # In Tokyo (UTC+9) the same instant reads 01:30 the next day.
    tokyo = org.get(f"{PAGE}?name=test&zone=Asia/Tokyo").get_data(as_text=True)
    assert re.search(r'<input[^>]*id="release_at"[^>]*value="2016-07-02T01:30"', tokyo)

    # An empty field leaves it as it is, like start and deadline.
    assert save(org, daily_quota="3").status_code == 302
    assert release_of(org_app) == datetime(2016, 7, 1, 16, 30, tzinfo=UTC)

    # The box clears it, whatever the field (which the page fills with the release) holds.
    events = audit_count(org_app)
    assert save(org, release_clear="y", release_at="2016-07-01T18:30").status_code == 302
    assert release_of(org_app) is None
    assert audit_count(org_app) == events + 1
    html = org.get(f"{PAGE}?name=test").get_data(as_text=True)
    assert re.search(r'<input[^>]*id="release_at"[^>]*value=""', html)
    assert "released at" not in html


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"release_at": "tomorrow"}, "The release time &#39;tomorrow&#39; is not a date and time"),
        # 2016-03-27 02:30 in Paris does not exist (the clocks jump from 02:00 to 03:00).
        (
            {"zone": "Europe/Paris", "release_at": "2016-03-27T02:30"},
            "does not exist in Europe/Paris",
        ),
        (
            {"release_at": "2016-02-01T00:00+25:00"},
            "The release time &#39;2016-02-01T00:00+25:00&#39;",
        ),
    ],
)
def test_a_bad_release_time_is_refused_and_nothing_changes(
    org_app: Flask, org: FlaskClient, fields: dict[str, str], message: str
) -> None:
    saved = save(org, start="2016-01-10T00:00", end="2016-01-31T00:00", results="hidden",
                 release_at="2016-02-05T12:00")  # fmt: skip
    assert saved.status_code == 302
    before, events = phases(org_app), audit_count(org_app)
    resp = save(org, daily_quota="5", **fields)
    assert resp.status_code == 400
    html = resp.get_data(as_text=True)
    assert message in html, html[:3000]
    assert 'id="phase-error"' in html
    assert phases(org_app) == before
    assert release_of(org_app) == datetime(2016, 2, 5, 12, tzinfo=UTC)
    assert audit_count(org_app) == events


def test_the_service_refuses_a_release_time_and_its_clearing_together(org_app: Flask) -> None:
    from leaderboard.services.campaign.phases import PhaseChange, upsert_phase
    from leaderboard.services.common.errors import InvalidInput
    from leaderboard.services.tasks.catalog import resolve

    at = datetime(2016, 2, 1, tzinfo=UTC)
    with org_app.extensions["leaderboard"]["sessionmaker"]() as session:
        target = resolve(session, T3, "A", "test")
        change = PhaseChange(release_at=at, clear_release=True)
        with pytest.raises(InvalidInput, match="Give a scheduled release time or clear it"):
            upsert_phase(session, target, "test", change, actor="cli", now=at)
    assert phases(org_app) == []
