"""Task pages: Markdown sections as tabs, and the schedule (countdown, uploads open) by the clock."""

from __future__ import annotations

import re
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from flask import Flask
from sqlalchemy import select

from leaderboard.cli import leaderboard_group
from leaderboard.clock import FixedClock
from leaderboard.models import Task
from leaderboard.web.common import pagecache
from tests.conftest import AppFactory, csrf_from, login
from tests.runs import make_organizer, make_participant, own_campaign
from tests.security import scan

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tiny-cqa"
T3 = "semeval2016-task3"
TASK_A = f"/tasks/{T3}/A"

HOSTILE_MARKDOWN = """# Welcome

Read *carefully*. <script>alert(1)</script>

[safe](https://example.org/guide) · [bad](javascript:alert(1)) · [data](data:text/html,hi)

<img src=x onerror=alert(1)> <iframe src="https://evil.example"></iframe>

![pic](javascript:alert(2))
"""


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def cli(app: Flask, *args: str) -> str:
    result = app.test_cli_runner().invoke(args=["leaderboard", *args])
    assert result.exit_code == 0, result.output
    return result.output


def add_task(app: Flask, tmp_path: Path, extra: str, files: dict[str, str]) -> None:
    """Host a copy of tiny-cqa with ``extra`` top-level TOML and Markdown files beside it."""
    folder = tmp_path / "tiny"
    shutil.copytree(FIXTURE, folder)
    head, sep, rest = (folder / "task.toml").read_text().partition("\n[runs]")
    (folder / "task.toml").write_text(head + "\n" + extra + "\n" + sep + rest)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    cli(app, "add-task", str(folder / "task.toml"))
    # Nothing is read from the folder once the task is hosted.
    shutil.rmtree(folder)


def section_ids(html: str) -> list[str]:
    return re.findall(r'<section id="(tab-[a-z]+)" class="tab-panel"', html)


# ------------------------------------------------------------------------------------ tabs


def test_only_the_sections_the_definition_has_are_tabs(app: Flask, tmp_path: Path) -> None:
    add_task(
        app,
        tmp_path,
        'overview = { file = "overview.md" }\nterms = "Use for **research** only."',
        {"overview.md": "Rank the *answers* of each question.\n"},
    )
    page = app.test_client().get("/tasks/tiny-cqa")
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert section_ids(html) == ["tab-overview", "tab-terms"]
    assert 'id="tab-evaluation"' not in html and 'id="tab-data"' not in html
    nav = re.search(r'<nav class="tabs"[^>]*>(.*?)</nav>', html, re.S)
    assert nav is not None
    assert re.findall(r'href="#([a-z-]+)"', nav.group(1)) == ["tab-overview", "tab-terms"]
    assert "<p>Rank the <em>answers</em> of each question.</p>" in html
    assert "<p>Use for <strong>research</strong> only.</p>" in html
    assert '<script src="/static/tabs.js" defer></script>' in html
    # The subtasks table stays.
    assert 'href="/tasks/tiny-cqa/main"' in html


def test_every_section_has_its_tab(app: Flask, tmp_path: Path) -> None:
    add_task(
        app,
        tmp_path,
        'overview = "O"\nevaluation = { file = "e.md" }\n'
        'data_description = { file = "d.md" }\nterms = { file = "t.md" }',
        {"e.md": "E", "d.md": "D", "t.md": "T"},
    )
    html = app.test_client().get("/tasks/tiny-cqa").get_data(as_text=True)
    assert section_ids(html) == ["tab-overview", "tab-evaluation", "tab-data", "tab-terms"]
    for letter in "OEDT":
        assert f"<p>{letter}</p>" in html


def test_add_task_again_takes_the_edited_file_and_score_reads_it(
    app: Flask, tmp_path: Path
) -> None:
    folder = tmp_path / "tiny"
    shutil.copytree(FIXTURE, folder)
    toml = (folder / "task.toml").read_text()
    (folder / "task.toml").write_text(
        toml.replace("[runs]", 'overview = { file = "overview.md" }\n[runs]')
    )
    (folder / "overview.md").write_text("First *words*.")
    cli(app, "add-task", str(folder / "task.toml"))
    assert "<p>First <em>words</em>.</p>" in app.test_client().get("/tasks/tiny-cqa").text
    (folder / "overview.md").write_text("Second words.")
    cli(app, "add-task", str(folder / "task.toml"))
    html = app.test_client().get("/tasks/tiny-cqa").get_data(as_text=True)
    assert "<p>Second words.</p>" in html and "First" not in html
    # The offline scorer loads the same definition, files and all.
    run = tmp_path / "run.txt"
    run.write_bytes((FIXTURE / "gold.txt").read_bytes())
    scored = CliRunner().invoke(
        leaderboard_group,
        ["score", "tiny-cqa", "main", str(run), "--definition", str(folder / "task.toml")],
    )
    assert scored.exit_code == 0, scored.output
    assert "MAP" in scored.output


def test_a_preset_description_is_the_overview(client) -> None:  # type: ignore[no-untyped-def]
    html = client.get(f"/tasks/{T3}").get_data(as_text=True)
    assert section_ids(html) == ["tab-overview"]
    assert "<p>Systems re-rank the candidates of each question" in html


def test_markdown_on_the_task_page_is_sanitized(app: Flask, tmp_path: Path) -> None:
    add_task(app, tmp_path, 'evaluation = { file = "eval.md" }', {"eval.md": HOSTILE_MARKDOWN})
    html = app.test_client().get("/tasks/tiny-cqa").get_data(as_text=True)
    page = scan(html)
    assert not page.dangers, page.dangers
    assert "<script>alert" not in html and "<iframe" not in html and "<img src=x" not in html
    # Such links stay text: no attribute holds a javascript: or data: URL.
    assert not re.search(r'(?:href|src)="\s*(?:javascript|data):', html)
    assert "[bad](javascript:alert(1))" in html
    assert "<h1>Welcome</h1>" in html and "<em>carefully</em>" in html
    assert '<a href="https://example.org/guide" rel="nofollow noopener">safe</a>' in html
    # Raw HTML shows as text, never as markup.
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_the_terms_page_renders_markdown(make_app: AppFactory, tmp_path: Path) -> None:
    app = make_app(clock=FixedClock(at("2016-01-15T12:00:00")))
    make_participant(app, "Aurora", "alice@example.org")
    own_campaign(app, T3)
    cli(app, "phase", T3, "A", "trial", "--start", "2016-01-01T00:00:00Z")
    data = tmp_path / "inputs.txt"
    data.write_bytes(b"inputs\n")
    cli(app, "data", "add", T3, "A", str(data), "--phase", "trial")
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        task = s.scalar(select(Task).where(Task.slug == T3))
        assert task is not None
        terms = "Use for **research** only.\n\n- cite [the paper](https://example.org)\n\n<b>x</b>"
        task.definition = {**task.definition, "terms": terms}
        task.definition_sha256 = "1" * 64
        s.commit()
    alice = app.test_client()
    login(alice, "alice@example.org", "correct horse battery")
    page = alice.get(f"{TASK_A}/data/1")
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and csrf_from(html)
    assert "<p>Use for <strong>research</strong> only.</p>" in html
    assert (
        '<li>cite <a href="https://example.org" rel="nofollow noopener">the paper</a></li>' in html
    )
    assert "&lt;b&gt;x&lt;/b&gt;" in html and "<b>x</b>" not in html


# -------------------------------------------------------------------------------- schedule


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(at("2016-01-29T20:59:00"))


@pytest.fixture
def campaign(make_app: AppFactory, clock: FixedClock) -> Flask:
    """Subtask A's own campaign: trial on dev in early January, test until 01-31 23:59 UTC."""
    app = make_app(clock=clock)
    own_campaign(app, T3)
    cli(app, "phase", T3, "A", "trial", "--set", "dev",
        "--start", "2016-01-01T00:00:00Z", "--end", "2016-01-09T00:00:00Z")  # fmt: skip
    cli(app, "phase", T3, "A", "test", "--set", "test",
        "--start", "2016-01-10T00:00:00Z", "--end", "2016-01-31T23:59:00Z")  # fmt: skip
    return app


def schedule_of(html: str) -> str:
    found = re.search(r'<section id="schedule".*?</section>', html, re.S)
    assert found is not None, "no schedule on the page"
    return found.group(0)


def countdown(html: str) -> tuple[str, str] | None:
    found = re.search(r'id="countdown" role="timer" data-deadline="([^"]+)">([^<]*)<', html)
    return (found.group(1), found.group(2)) if found else None


def uploads(html: str) -> str:
    found = re.search(r'<strong id="uploads-open">([^<]*)</strong>', html)
    assert found is not None, "no uploads-open element"
    return found.group(1)


def test_the_subtask_page_shows_phases_countdown_and_uploads_open(campaign: Flask) -> None:
    html = campaign.test_client().get(TASK_A).get_data(as_text=True)
    schedule = schedule_of(html)
    rows = re.findall(r"<tr class=\"phase-(\w+)\">(.*?)</tr>", schedule, re.S)
    assert [(state, re.findall(r'datetime="([^"]+)"', row)) for state, row in rows] == [
        ("ended", ["2016-01-01T00:00:00Z", "2016-01-09T00:00:00Z"]),
        ("open", ["2016-01-10T00:00:00Z", "2016-01-31T23:59:00Z"]),
    ]
    assert '<td dir="auto">trial</td>' in rows[0][1] and "<td>Development</td>" in rows[0][1]
    assert '<time datetime="2016-01-31T23:59:00Z">2016-01-31 23:59:00 UTC</time>' in rows[1][1]
    assert countdown(html) == ("2016-01-31T23:59:00Z", "2 days 3 hours left")
    assert uploads(html) == "open"
    assert '<script src="/static/schedule.js" defer></script>' in html
    assert not scan(html).dangers


TRIAL_END, TEST_END = "2016-01-09T00:00:00Z", "2016-01-31T23:59:00Z"


@pytest.mark.parametrize(
    ("now", "deadline", "left"),
    [
        ("2016-01-05T12:00:00", TRIAL_END, "3 days 12 hours left"),  # the trial's on dev first
        ("2016-01-05T23:00:00", TRIAL_END, "3 days 1 hour left"),
        ("2016-01-07T23:30:00", TRIAL_END, "1 day left"),
        ("2016-01-31T22:58:00", TEST_END, "1 hour 1 minute left"),
        ("2016-01-31T21:59:00", TEST_END, "2 hours left"),
        ("2016-01-31T23:00:00", TEST_END, "59 minutes left"),
        ("2016-01-31T23:57:59", TEST_END, "1 minute left"),
        ("2016-01-31T23:58:30", TEST_END, "30 seconds left"),
        ("2016-01-31T23:58:59", TEST_END, "1 second left"),
    ],
)
def test_the_countdown_counts_to_the_next_deadline(
    campaign: Flask, clock: FixedClock, now: str, deadline: str, left: str
) -> None:
    clock.set(at(now))
    html = campaign.test_client().get(TASK_A).get_data(as_text=True)
    assert countdown(html) == (deadline, left)
    assert uploads(html) == "open"


def test_between_phases_uploads_are_closed_and_the_countdown_stays(
    campaign: Flask, clock: FixedClock
) -> None:
    clock.set(at("2016-01-09T12:00:00"))  # trial ended, test starts tomorrow
    html = campaign.test_client().get(TASK_A).get_data(as_text=True)
    assert uploads(html) == "closed"
    assert countdown(html) == ("2016-01-31T23:59:00Z", "22 days 11 hours left")


def test_after_the_last_deadline_no_countdown_and_closed(
    campaign: Flask, clock: FixedClock
) -> None:
    clock.set(at("2016-02-01T00:00:00"))
    html = campaign.test_client().get(TASK_A).get_data(as_text=True)
    assert countdown(html) is None and 'id="countdown"' not in html
    assert uploads(html) == "closed"
    assert "<td>ended</td>" in schedule_of(html)
    # A phase taking late runs keeps uploads open, as the upload itself would accept them.
    cli(campaign, "phase", T3, "A", "test", "--late")
    html = campaign.test_client().get(TASK_A).get_data(as_text=True)
    assert uploads(html) == "open"
    assert "<td>ended, late runs accepted</td>" in schedule_of(html)


def test_a_subtask_without_phases_is_closed(make_app: AppFactory) -> None:
    app = make_app(clock=FixedClock(at("2016-03-01T12:00:00")))
    own_campaign(app, T3)
    html = app.test_client().get(TASK_A).get_data(as_text=True)
    assert uploads(html) == "closed" and countdown(html) is None
    assert "No phase is scheduled yet." in schedule_of(html)


def test_the_preset_post_evaluation_is_open_without_deadline(client) -> None:  # type: ignore[no-untyped-def]
    html = client.get(TASK_A).get_data(as_text=True)
    assert uploads(html) == "open" and countdown(html) is None
    assert "<td>none</td>" in schedule_of(html)


def test_the_task_page_lists_every_subtasks_phases(campaign: Flask) -> None:
    cli(campaign, "phase", T3, "B", "test-b", "--start", "2016-01-12T00:00:00Z",
        "--end", "2016-02-02T00:00:00Z")  # fmt: skip
    html = campaign.test_client().get(f"/tasks/{T3}").get_data(as_text=True)
    schedule = schedule_of(html)
    subtasks = re.findall(r'<td><a href="/tasks/semeval2016-task3/(\w+)">', schedule)
    assert subtasks[:2] == ["A", "A"] and "B" in subtasks
    assert '<time datetime="2016-02-02T00:00:00Z">2016-02-02 00:00:00 UTC</time>' in schedule
    # The task page has no countdown and no uploads state: those are each subtask's.
    assert 'id="countdown"' not in html and 'id="uploads-open"' not in html


def test_the_anonymous_page_cache_follows_the_clock(campaign: Flask, clock: FixedClock) -> None:
    client = campaign.test_client()
    first = client.get(TASK_A).get_data(as_text=True)
    assert countdown(first) == ("2016-01-31T23:59:00Z", "2 days 3 hours left")
    with campaign.app_context():
        cached = len(pagecache.pages()._items)
    assert cached == 1  # the page was cached...
    assert client.get(TASK_A).get_data(as_text=True) == first  # ...and served from the cache
    clock.set(at("2016-01-29T21:59:00"))
    assert countdown(client.get(TASK_A).get_data(as_text=True)) == (
        "2016-01-31T23:59:00Z",
        "2 days 2 hours left",
    )
    clock.set(at("2016-01-31T23:59:00"))
    after = client.get(TASK_A).get_data(as_text=True)
    assert countdown(after) is None and uploads(after) == "closed"
    with campaign.app_context():
        assert len(pagecache.pages()._items) == 3


def test_a_logged_in_reader_sees_the_same_schedule(campaign: Flask) -> None:
    make_organizer(campaign, "org@example.org")
    org = campaign.test_client()
    login(org, "org@example.org", "organizer password")
    html = org.get(TASK_A).get_data(as_text=True)
    assert countdown(html) == ("2016-01-31T23:59:00Z", "2 days 3 hours left")
    assert uploads(html) == "open"


def test_names_no_slug_can_be_are_not_found(client) -> None:  # type: ignore[no-untyped-def]
    for path in (
        f"/tasks/{T3}/A%00",
        f"/tasks/{T3}%00/A",
        f"/tasks/{T3}/A?set=te%00st",
        f"/tasks/{T3}/A/results.csv?set=te%00st",
        "/tasks/%00",
        f"/tasks/{T3}/{'x' * 65}",
    ):
        assert client.get(path).status_code == 404, path
