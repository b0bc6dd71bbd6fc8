"""Hostile text in team names, e-mails, run names and descriptions: escaped everywhere.

Every page is parsed and must hold nothing executable (no script element, no event handler, no
javascript: URL) while showing the hostile text as text. Every export is checked in its own
syntax: CSV cells that a spreadsheet would run are neutralised (numbers stay numbers), JSON
round-trips without raw <, >, &, Markdown tables keep their columns, LaTeX escapes its
specials; bidi overrides never leak out of their isolate.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from leaderboard.services.accounts import core as accounts
from leaderboard.services.common.errors import NotFound
from leaderboard.unit_of_work import opened
from tests.conftest import app_on_copy, csrf_from, dispose, login
from tests.dispatch import draw_asked, summarize_changed
from tests.runs import (
    GOLD_TEST_A,
    accepted,
    api_upload,
    constant_run,
    make_organizer,
    oracle_run,
    token_for,
)
from tests.security import PageScan, scan

SCRIPT = "<script>alert(1)</script>"
QUOTES = "O\"Brien' & <b>Co</b>"
JS_URL = "javascript:alert(1)"
RLO = "\u202eevil\u202c فريق"
DDE = "=cmd|' /C calc'!A0"
PLUS = "+1"
MINUS = "-1+1"
AT = "@SUM(1)"
IMG = "<img src=x onerror=alert(1)>"
HUGE = (SCRIPT * 500)[:10_240]
#: Run names (an STS row's run) matplotlib would parse as mathtext: an unknown command, and
#: nesting it recursed on.
MATH_TAG = "$\\undefinedcmd$"
BRACES_TAG = "{" * 50
#: The STS runs of two more teams carry them.
MATH_RUNS = {4: MATH_TAG, 5: BRACES_TAG}

#: Team names; the participant of the first one has a hostile e-mail address too.
TEAMS = (SCRIPT, QUOTES, JS_URL, RLO, DDE, PLUS, MINUS, AT)
HOSTILE_EMAIL = f"{SCRIPT}@example.org"
#: Run names (at most 100 characters) and descriptions, hostile too.
NAMES = (DDE, SCRIPT, AT, MINUS, QUOTES, JS_URL, RLO, PLUS)
DESCRIPTION = f"{SCRIPT}\n{DDE}\n{RLO} | *bold* \\textbf{{x}} $x$ % # _ ~ ^ & {{}}"
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")

T3, T1, CAR = "semeval2016-task3", "semeval2016-task1", "trec-car-2017"
PRESETS = Path(__file__).resolve().parents[2] / "leaderboard" / "tasks" / "presets"
STS_SETS = ("answer-answer", "headlines", "plagiarism", "postediting", "question-question")
QRELS = PRESETS / CAR / "qrels.car17v1.5.benchmarkY1test.txt"
TARGETS = ((T3, "A"), (T1, "en"), (CAR, "passage"))


def email_of(i: int) -> str:
    return HOSTILE_EMAIL if i == 0 else f"p{i}@example.org"


def sts_output(slug: str, sign: int) -> bytes:
    """Return a run correlated (sign 1) or anti-correlated (sign -1) with the preset gold."""
    lines = (PRESETS / T1 / "english" / f"STS2016.gs.{slug}.txt").read_text().splitlines()
    values = [(float(v) if v else 2.5) * sign + (i % 7) * 0.9 for i, v in enumerate(lines)]
    return "".join(f"{v:.3f}\n" for v in values).encode()


def trec_oracle(tag: str) -> bytes:
    rows = [line.split() for line in QRELS.read_text().splitlines()]
    return "".join(
        f"{q} Q0 {d} {i} {100 - i} {tag}\n" for i, (q, _, d, _) in enumerate(rows)
    ).encode()


@dataclass
class World:
    """The app with hostile teams, runs and an organizer, and each visitor's client."""

    app: Flask
    org: FlaskClient
    participants: list[FlaskClient]
    run_ids: list[int]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, template_instance: Path) -> Iterator[World]:
    app = app_on_copy(template_instance, tmp_path_factory.mktemp("hostile"))
    make_organizer(app, "org@example.org")
    with opened(app.extensions["leaderboard"]["sessionmaker"]) as unit:
        session = unit.session
        for i, team in enumerate(TEAMS):
            accounts.create_team(session, team, actor="org@example.org")
            accounts.create_user(
                session,
                email_of(i),
                role="participant",
                team=team,
                password="correct horse battery",
                actor="org@example.org",
            )
    api = app.test_client()
    run_ids = []
    for i, _team in enumerate(TEAMS):
        token = token_for(app, email_of(i))
        # CQA: every team, a run named and described with hostile text.
        run = oracle_run() if i % 2 else constant_run(GOLD_TEST_A, "true" if i % 3 else "false")
        run_ids.append(
            int(
                accepted(
                    api_upload(
                        api,
                        token,
                        {"file": run},
                        path=f"/api/v1/tasks/{T3}/A/runs",
                        slot="primary",
                        name=NAMES[i],
                        description=DESCRIPTION,
                    )
                )["id"]
            )
        )
        if i < 4:  # STS: one correlated and one anti-correlated run per team (negative values)
            for slot, sign in (("run1", 1), ("run2", -1)):
                files = {s: sts_output(s, sign) for s in STS_SETS}
                int(
                    accepted(
                        api_upload(
                            api,
                            token,
                            files,
                            path=f"/api/v1/tasks/{T1}/en/runs",
                            slot=slot,
                            name=NAMES[-1 - i],
                        )
                    )["id"]
                )
        if i in MATH_RUNS:  # STS: a run named with text matplotlib would parse
            files = {s: sts_output(s, 1 if i % 2 else -1) for s in STS_SETS}
            accepted(api_upload(api, token, files, path=f"/api/v1/tasks/{T1}/en/runs",
                                slot="run1", name=MATH_RUNS[i]))  # fmt: skip
        if i in (0, 3, 4, 5):  # TREC: hostile team names around a valid run tag
            int(
                accepted(
                    api_upload(
                        api,
                        token,
                        {"file": trec_oracle(f"t{i}")},
                        path=f"/api/v1/tasks/{CAR}/passage/runs",
                        slot="primary",
                        name=NAMES[i],
                        description=DESCRIPTION,
                    )
                )["id"]
            )
    runner = app.test_cli_runner()
    for task, subtask in TARGETS:
        result = runner.invoke(args=["leaderboard", "add-baselines", task, subtask])
        assert result.exit_code == 0, result.output
    org = app.test_client()
    login(org, "org@example.org", "organizer password")
    # The organizer imports a run for a new team named with an HTML injection, through the form.
    page = org.get(f"/organizer/tasks/{T3}/A").get_data(as_text=True)
    resp = org.post(
        f"/organizer/tasks/{T3}/A/import",
        data={
            "csrf_token": csrf_from(page),
            "eval_set": "test",
            "team": IMG,
            "slot": "contrastive1",
            "name": IMG,
            "description": DESCRIPTION,
            "mode": "strict",
            "file": (io.BytesIO(oracle_run()), "run.txt"),
        },
        content_type="multipart/form-data",
    )
    assert resp.status_code == 302, resp.get_data(as_text=True)[-2000:]
    frozen = runner.invoke(args=["leaderboard", "freeze", T3, "A"])
    assert frozen.exit_code == 0, frozen.output
    participants = []
    for i in range(len(TEAMS)):
        client = app.test_client()
        if i == 0:
            # The e-mail address itself is hostile; it is a valid login all the same.
            login(client, HOSTILE_EMAIL, "correct horse battery")
        else:
            login(client, email_of(i), "correct horse battery")
        participants.append(client)
    yield World(app, org, participants, run_ids)
    dispose(app)


# ------------------------------------------------------------------------------------ checks


def _isolated_in_text(text: str) -> bool:
    """Return whether every U+202E of ``text`` sits between an isolate initiator and a U+2069."""
    for at in (i for i, ch in enumerate(text) if ch == "\u202e"):
        opened = max(text.rfind(ch, 0, at) for ch in "\u2066\u2067\u2068")
        if opened < 0 or text.find("\u2069", at) < 0:
            return False
    return True


def check_page(html: str, shown: tuple[str, ...] = ()) -> PageScan:
    """Assert a page holds nothing executable and shows each of ``shown`` as plain text."""
    page = scan(html)
    assert not page.dangers, page.dangers
    for raw in (SCRIPT, IMG, "<b>Co</b>"):
        assert raw not in html, f"unescaped {raw!r} in the page"
    for text in shown:
        assert page.contains(text), f"{text!r} is not shown on the page"
    # A right-to-left override never leaves its isolate (<bdi>, dir="auto", or U+2068...U+2069
    # where no tag may stand, as in a <title>).
    for node in page.texts:
        if "\u202e" in node.value:
            isolated = any(
                tag == "bdi" or attrs.get("dir") == "auto" for tag, attrs in node.ancestors
            ) or _isolated_in_text(node.value)
            in_attribute = node.ancestors and node.value in node.ancestors[-1][1].values()
            assert isolated or in_attribute, f"U+202E outside an isolate in {node.value!r}"
    return page


#: Explicit bidi embeddings, overrides and isolates; no plain-text export may keep one.
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
CSV_FORMS = {RLO: "evil فريق"}  # bidi controls dropped, as in the Markdown and LaTeX exports


def check_csv(text: str, names: tuple[str, ...]) -> list[str]:
    """Assert no CSV cell can start a formula (numbers excepted) or holds a bidi control."""
    assert not BIDI_CONTROLS & set(text), "a bidi control in a CSV export"
    cells = [cell for row in csv.reader(io.StringIO(text)) for cell in row]
    for cell in cells:
        if cell.startswith(FORMULA_STARTS):
            assert NUMBER.fullmatch(cell), f"formula-like CSV cell {cell!r}"
    for name in names:
        plain = CSV_FORMS.get(name, name)
        shown = "'" + plain if plain.startswith(FORMULA_STARTS) else plain
        assert any(cell.startswith(shown) for cell in cells), f"{shown!r} missing from the CSV"
    return cells


def check_json(text: str, names: tuple[str, ...], *, html_safe: bool = True) -> object:
    """Assert JSON round-trips the hostile names (and, ``html_safe``, has no raw <, > or &)."""
    for ch in "<>&" if html_safe else "":
        assert ch not in text, f"raw {ch!r} in a JSON export"
    data = json.loads(text)
    dumped = json.dumps(data, ensure_ascii=False)
    for name in names:
        assert json.dumps(name, ensure_ascii=False)[1:-1] in dumped, f"{name!r} lost in the JSON"
    return data


_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")
MD_FORMS = {
    SCRIPT: r"\<script\>alert(1)\</script\>",
    DDE: r"=cmd\|' /C calc'!A0",
    QUOTES: r"O\"Brien' \& \<b\>Co\</b\>".replace('\\"', '"'),
    IMG: r"\<img src=x onerror=alert(1)\>",
    RLO: "evil فريق",  # bidi controls dropped; the Arabic isolated in U+2068 ... U+2069
}


def check_markdown(text: str, names: tuple[str, ...]) -> None:
    """Assert Markdown tables keep their columns, specials are escaped, no bidi override."""
    assert "\u202e" not in text and SCRIPT not in text and IMG not in text
    tables: list[list[int]] = [[]]
    for line in text.splitlines():
        if line.startswith("|"):
            tables[-1].append(len(_UNESCAPED_PIPE.findall(line)))
        elif tables[-1]:
            tables.append([])
    for widths in tables:
        assert len(set(widths)) <= 1, f"a Markdown table with rows of different widths: {widths}"
    for name in names:
        assert MD_FORMS.get(name, name) in text, f"{name!r} not escaped as expected in Markdown"
    if RLO in names:
        assert "\u2068" in text and "\u2069" in text


LATEX_FORMS = {
    SCRIPT: r"\textless{}script\textgreater{}alert(1)\textless{}/script\textgreater{}",
    DDE: r"=cmd\textbar{}' /C calc'!A0",
    QUOTES: r"O\"Brien' \& \textless{}b\textgreater{}Co\textless{}/b\textgreater{}".replace(
        '\\"', '"'
    ),
    IMG: r"\textless{}img src=x onerror=alert(1)\textgreater{}",
    RLO: "evil فريق",
}


def check_latex(text: str, names: tuple[str, ...]) -> None:
    """Assert LaTeX escapes the specials of user text and drops bidi controls."""
    assert "\u202e" not in text and "\u202c" not in text
    assert SCRIPT not in text and "<" not in text and ">" not in text
    for name in names:
        assert LATEX_FORMS.get(name, name) in text, f"{name!r} not escaped as expected in LaTeX"


# ------------------------------------------------------------------------------------- pages


def test_public_pages_escape_everything(world: World) -> None:
    anon = world.app.test_client()
    check_page(anon.get("/").get_data(as_text=True))
    for view in ("official", "live"):
        html = anon.get(f"/tasks/{T3}/A?view={view}").get_data(as_text=True)
        check_page(html, TEAMS)
    live = anon.get(f"/tasks/{T3}/A?view=live").get_data(as_text=True)
    check_page(live, (IMG,))
    check_page(anon.get(f"/tasks/{T1}/en").get_data(as_text=True), TEAMS[:4] + NAMES[-4:])
    check_page(anon.get(f"/tasks/{CAR}/passage").get_data(as_text=True), (SCRIPT, RLO, DDE, PLUS))


def test_participant_pages_escape_everything(world: World) -> None:
    for i, client in enumerate(world.participants):
        home = check_page(client.get("/").get_data(as_text=True), (TEAMS[i], email_of(i)))
        assert home.contains(TEAMS[i])
        check_page(client.get("/team").get_data(as_text=True), (TEAMS[i], NAMES[i]))
        run = client.get(f"/runs/{world.run_ids[i]}")
        assert run.status_code == 200
        check_page(run.get_data(as_text=True), (TEAMS[i], NAMES[i], DESCRIPTION.split("\n")[0]))
        check_page(client.get(f"/tasks/{T3}/A/submit").get_data(as_text=True))


def test_our_submissions_and_the_progress_chart_show_hostile_names_as_text(
    world: World,
) -> None:
    """A team's own runs on the subtask page; team names in the progress chart and its CSV."""
    import xml.etree.ElementTree as ET

    for i, client in enumerate(world.participants):
        html = client.get(f"/tasks/{T3}/A?view=live").get_data(as_text=True)
        assert f'data-run-id="{world.run_ids[i]}"' in html
        check_page(html, (TEAMS[i], NAMES[i]))
    anon = world.app.test_client()
    # T3 A: every team's primary; T1 en: six teams' runs (every slot ranked).
    charted = ((f"/tasks/{T3}/A/progress", TEAMS), (f"/tasks/{T1}/en/progress", TEAMS[:6]))
    for base, names in charted:
        numbers = anon.get(f"{base}.csv")
        assert numbers.status_code == 200
        check_csv(numbers.get_data(as_text=True), names)
        assert anon.get(f"{base}.svg").status_code == 404  # being drawn
    draw_asked(world.app)
    for base, names in charted:
        svg = anon.get(f"{base}.svg")
        assert svg.status_code == 200 and svg.mimetype == "image/svg+xml"
        # The names are text of the drawing: never markup of the SVG.
        assert b"<script" not in svg.data and b"<b>" not in svg.data
        text = "".join(ET.fromstring(svg.data).itertext())
        for name in names:
            assert (name if name != RLO else "evil") in text, (base, name)


def test_organizer_pages_and_audit_log_escape_everything(world: World) -> None:
    dashboard = world.org.get("/organizer/").get_data(as_text=True)
    check_page(dashboard, (*TEAMS, IMG))
    # The audit log reads as sentences, with the hostile names in them shown as text.
    log = world.org.get("/organizer/audit?actor=org@example.org").get_data(as_text=True)
    check_page(log, (f"created team {SCRIPT}", f"created team {IMG}"))
    for task, subtask in TARGETS:
        html = world.org.get(f"/organizer/tasks/{task}/{subtask}").get_data(as_text=True)
        check_page(html)
    audit = world.org.get(f"/organizer/tasks/{T3}/A").get_data(as_text=True)
    # The import's team, in the subtask page's log.
    check_page(audit, (f"imported a run of team {IMG} into slot contrastive1",))
    run = world.org.get(f"/runs/{world.run_ids[0]}").get_data(as_text=True)
    check_page(run, (SCRIPT, DDE))
    check_page(world.org.get("/organizer/teams/").get_data(as_text=True), TEAMS)


def test_audit_filters_and_phase_zones_escape_everything(world: World) -> None:
    """Hostile text typed into the audit filters and the phase page's zone is shown as text."""
    from urllib.parse import urlencode

    query = urlencode({"actor": SCRIPT, "action": IMG})
    log = world.org.get(f"/organizer/audit?{query}")
    assert log.status_code == 200
    check_page(log.get_data(as_text=True), (SCRIPT, IMG))
    phase_page = f"/organizer/tasks/{T3}/A/phase"
    shown = world.org.get(f"{phase_page}?{urlencode({'zone': SCRIPT})}")
    assert shown.status_code == 400
    check_page(shown.get_data(as_text=True), (f"Time zone {SCRIPT!r} is not an IANA zone name",))
    token = csrf_from(world.org.get(phase_page).get_data(as_text=True))
    form = {"csrf_token": token, "name": "open", "eval_set": "test", "zone": IMG, "end": QUOTES}
    form.update(late="", corrections="", results="")
    refused = world.org.post(phase_page, data=form)
    assert refused.status_code == 400
    check_page(refused.get_data(as_text=True), (f"Time zone {IMG!r} is not an IANA zone name",))
    form["zone"], form["name"] = "UTC", RLO
    bad_time = world.org.post(phase_page, data=form)
    assert bad_time.status_code == 400
    check_page(bad_time.get_data(as_text=True), (QUOTES,))
    # The scheduled release is typed too.
    form.update(end="", release_at=SCRIPT)
    bad_release = world.org.post(phase_page, data=form)
    assert bad_release.status_code == 400
    check_page(bad_release.get_data(as_text=True), (f"The release time {SCRIPT!r} is not",))


def test_team_pages_and_invite_links_escape_everything(world: World) -> None:
    """The team page, the invite page and the participants table show hostile names as text."""
    from sqlalchemy import select

    from leaderboard.models import Team

    with world.app.extensions["leaderboard"]["sessionmaker"]() as session:
        codes = {t.name: t.invite_code for t in session.scalars(select(Team))}
        session.scalar(select(Team).where(Team.name == TEAMS[0])).affiliation = IMG  # type: ignore[union-attr]
        session.commit()
    for i, client in enumerate(world.participants):
        check_page(client.get("/team").get_data(as_text=True), (TEAMS[i],))
        other = TEAMS[(i + 1) % len(TEAMS)]
        join = client.get(f"/teams/join/{codes[other]}")
        assert join.status_code == 200
        check_page(join.get_data(as_text=True), (other,))
    check_page(world.participants[0].get("/team").get_data(as_text=True), (IMG,))
    runner = world.app.test_cli_runner()
    out = runner.invoke(args=["leaderboard", "teams", "--format", "json"]).output
    assert set(TEAMS) <= {row["team"] for row in json.loads(out)}
    csv_out = runner.invoke(args=["leaderboard", "teams", "--format", "csv"]).output
    for line in csv_out.splitlines()[1:]:
        assert not line.startswith(FORMULA_STARTS), line
    latex = runner.invoke(args=["leaderboard", "teams", "--format", "latex"]).output
    assert "\u202e" not in latex and "<script>" not in latex
    assert r"\textless{}script\textgreater{}alert(1)\textless{}/script\textgreater{}" in latex


def test_errors_and_refusals_escape_the_input(world: World) -> None:
    anon = world.app.test_client()
    for path in (f"/tasks/{SCRIPT}", f"/tasks/{T3}/{IMG}", f"/tasks/{T3}/A?set={SCRIPT}"):
        resp = anon.get(path)
        assert resp.status_code == 404
        check_page(resp.get_data(as_text=True))
    # A failed log-in shows the e-mail address again, escaped in the form.
    page = anon.get("/login").get_data(as_text=True)
    resp = anon.post(
        "/login",
        data={"csrf_token": csrf_from(page), "email": HOSTILE_EMAIL, "password": "nope nope"},
    )
    assert resp.status_code == 401
    check_page(resp.get_data(as_text=True), (HOSTILE_EMAIL,))
    resp = anon.post("/login", data={"csrf_token": csrf_from(page), "email": HUGE, "password": "x"})
    assert resp.status_code == 400
    check_page(resp.get_data(as_text=True))
    # A 10 kB team name through the import form: refused with a 400, echoed only escaped.
    org_page = world.org.get(f"/organizer/tasks/{T3}/A").get_data(as_text=True)
    resp = world.org.post(
        f"/organizer/tasks/{T3}/A/import",
        data={
            "csrf_token": csrf_from(org_page),
            "eval_set": "test",
            "team": HUGE,
            "slot": "primary",
            "name": "x",
            "description": "",
            "mode": "strict",
            "file": (io.BytesIO(oracle_run()), "run.txt"),
        },
        content_type="multipart/form-data",
    )
    assert resp.status_code == 400
    check_page(resp.get_data(as_text=True))
    # 10 kB run names and descriptions through the API: refused, never echoed.
    token = token_for(world.app, email_of(1))
    for field, limit in (("name", 100), ("description", 5000)):
        resp = anon.post(
            f"/api/v1/tasks/{T3}/A/runs",
            data={"slot": "contrastive2", field: HUGE, "file": (io.BytesIO(oracle_run()), "r.txt")},
            headers={"Authorization": f"Bearer {token}"},
            content_type="multipart/form-data",
        )
        assert resp.status_code == 400
        assert resp.get_json()["error"] == (
            f"The {'run name' if field == 'name' else 'description'} is longer than {limit} characters."
        )
    # And a 10 kB team name at the command line: refused, nothing stored.
    result = world.app.test_cli_runner().invoke(args=["leaderboard", "create-team", HUGE])
    assert result.exit_code == 1 and "longer than 255 characters" in result.output
    with (
        world.app.extensions["leaderboard"]["sessionmaker"]() as session,
        pytest.raises(NotFound, match="^No team named '<script>"),
    ):
        accounts.find_team(session, HUGE)


# ----------------------------------------------------------------------------------- exports


def _download(world: World, task: str, subtask: str, ext: str, view: str) -> str:
    resp = world.app.test_client().get(f"/tasks/{task}/{subtask}/results.{ext}?view={view}")
    assert resp.status_code == 200, resp.get_data(as_text=True)
    return resp.get_data(as_text=True)


@pytest.mark.parametrize(
    ("task", "subtask", "view", "names"),
    [
        (T3, "A", "official", TEAMS),
        (T3, "A", "live", (*TEAMS, IMG)),
        (T1, "en", "live", TEAMS[:4] + NAMES[-4:]),
        (CAR, "passage", "live", (SCRIPT, RLO, DDE, PLUS)),
    ],
)
def test_table_exports_escape_user_text(
    world: World, task: str, subtask: str, view: str, names: tuple[str, ...]
) -> None:
    cells = check_csv(_download(world, task, subtask, "csv", view), names)
    if task == T1:
        # Anti-correlated runs: negative Pearson values stay numbers, not neutralised text.
        assert any(re.fullmatch(r"-0\.\d{5}", cell) for cell in cells), cells
    check_json(_download(world, task, subtask, "json", view), names)
    check_markdown(_download(world, task, subtask, "md", view), names)
    check_latex(_download(world, task, subtask, "tex", view), names)


@pytest.mark.parametrize(("task", "subtask"), TARGETS)
def test_cli_tables_escape_user_text(world: World, task: str, subtask: str) -> None:
    runner = world.app.test_cli_runner()
    out = {
        fmt: runner.invoke(args=["leaderboard", "table", task, subtask, "--format", fmt]).output
        for fmt in ("csv", "json", "md", "latex")
    }
    teams = {row["team"] for row in json.loads(out["json"])["rows"]}
    names = tuple(t for t in TEAMS if t in teams)
    assert len(names) >= 3 and SCRIPT in names, teams
    check_csv(out["csv"], names)
    check_json(out["json"], names)
    check_markdown(out["md"], names)
    check_latex(out["latex"], names)


def _listing_checks(outputs: dict[str, str], names: tuple[str, ...]) -> None:
    check_csv(outputs["csv"], names)
    rows = check_json(outputs["json"], names, html_safe=False)
    assert isinstance(rows, list) and any(r["description"] == DESCRIPTION for r in rows)
    check_markdown(outputs["md"], names)
    check_latex(outputs["latex"], names)
    # The description stays on one line in Markdown and LaTeX, specials escaped.
    assert (
        r"\textbackslash{}textbf\{x\} \$x\$ \% \# \_ \textasciitilde{} \textasciicircum{} \& \{\}"
        in outputs["latex"]
    )
    assert r"\| \*bold\* \\textbf{x} \$x\$ % # \_ \~ ^ \& {}" in outputs["md"]


@pytest.mark.parametrize(("task", "subtask"), [(T3, "A"), (CAR, "passage")])
def test_run_listings_escape_user_text(world: World, task: str, subtask: str) -> None:
    names = (SCRIPT, DDE, PLUS) if task == CAR else (*TEAMS, IMG)
    web = {}
    for ext in ("json", "csv", "md", "latex"):
        resp = world.org.get(f"/organizer/tasks/{task}/{subtask}/test/runs.{ext}")
        assert resp.status_code == 200
        web[ext] = resp.get_data(as_text=True)
    _listing_checks(web, names)
    runner = world.app.test_cli_runner()
    cli = {
        fmt: runner.invoke(args=["leaderboard", "runs", task, subtask, "--format", fmt]).output
        for fmt in ("json", "csv", "md", "latex")
    }
    _listing_checks(cli, names)


def test_analysis_pages_and_charts_show_hostile_labels_as_text(world: World) -> None:
    """Run tags matplotlib would parse ($...$, 50 "{") are drawn as text on every chart."""
    import xml.etree.ElementTree as ET

    from sqlalchemy import select

    from leaderboard.models import Run

    runner = world.app.test_cli_runner()
    args = ["leaderboard", "significance", T1, "en", "--samples", "50"]
    result = runner.invoke(args=args)
    assert result.exit_code == 0, result.output
    with world.app.extensions["leaderboard"]["sessionmaker"]() as session:
        runs = {
            r.name: r.id
            for r in session.scalars(select(Run).where(Run.kind == "run"))
            if r.name in (MATH_TAG, BRACES_TAG)
        }
        from leaderboard.models import Job

        analysis_id = max(session.scalars(select(Job.id)))
    assert set(runs) == {MATH_TAG, BRACES_TAG}
    page = world.org.get(f"/organizer/tasks/{T1}/en/analysis")
    assert page.status_code == 200
    check_page(page.get_data(as_text=True), (MATH_TAG, BRACES_TAG))

    def charts_of(client: FlaskClient, base: str) -> None:
        for name in ("measure", "matrix"):
            for fmt in ("svg", "pdf", "csv"):
                resp = client.get(f"{base}/{name}.{fmt}")
                assert resp.status_code == 200, (base, name, fmt)
                if fmt == "svg":
                    text = "".join(ET.fromstring(resp.data).itertext())
                    assert MATH_TAG in text and BRACES_TAG in text
                if fmt == "csv":
                    check_csv(resp.get_data(as_text=True), ())

    charts_of(world.org, f"/organizer/analyses/{analysis_id}")
    charts_of(world.app.test_client(), f"/tasks/{T1}/en/analysis")
    # STS keeps no per-pair value a mean is made of: its per-unit page says so, escaped.
    for run_id in runs.values():
        missing = world.org.get(f"/runs/{run_id}/queries")
        assert missing.status_code == 404
        check_page(missing.get_data(as_text=True))
    # The per-query pages and charts of runs named with hostile text (CQA, by team and slot),
    # once the worker has summarized the sets and drawn the charts asked for.
    summarize_changed(world.app)
    for run_id in world.run_ids[:3]:
        for fmt in ("svg", "pdf"):
            world.org.get(f"/runs/{run_id}/queries.{fmt}")
    draw_asked(world.app)
    for i, run_id in enumerate(world.run_ids[:3]):
        html = world.org.get(f"/runs/{run_id}/queries")
        assert html.status_code == 200
        check_page(html.get_data(as_text=True), (TEAMS[i],))
        for fmt in ("svg", "pdf", "csv"):
            assert world.org.get(f"/runs/{run_id}/queries.{fmt}").status_code == 200
    # Frozen with its analysis, the official view's charts draw the same labels.
    frozen = runner.invoke(args=["leaderboard", "freeze", T1, "en"])
    assert frozen.exit_code == 0, frozen.output
    charts_of(world.app.test_client(), f"/tasks/{T1}/en/analysis")


def test_adding_a_member_escapes_the_team_and_the_address(world: World) -> None:
    """The organizer's add-member answer shows a hostile team name and address as text."""
    from sqlalchemy import select

    from leaderboard.models import Team, User

    email = f"{IMG}@example.org"
    with world.app.extensions["leaderboard"]["sessionmaker"]() as session:
        session.add(User(email=email, role="participant", verified_at=None))
        session.commit()
        team_id = session.scalar(select(Team.id).where(Team.name == RLO))
    page = world.org.get("/organizer/teams/").get_data(as_text=True)
    resp = world.org.post(
        f"/organizer/teams/{team_id}/members",
        data={"csrf_token": csrf_from(page), "email": email},
        follow_redirects=True,
    )
    assert resp.status_code == 200
    check_page(resp.get_data(as_text=True), (RLO, email))
    refused = world.org.post(
        f"/organizer/teams/{team_id}/members",
        data={"csrf_token": csrf_from(page), "email": SCRIPT},
        follow_redirects=True,
    )
    assert refused.status_code == 404
    check_page(refused.get_data(as_text=True))


def test_task_upload_preview_and_problems_show_hostile_text_as_text(world: World) -> None:
    """Titles, file names and gold values of an uploaded task are escaped in its preview and
    in its problems; nothing is hosted (the preview is never confirmed here)."""
    import zipfile

    example = Path(__file__).resolve().parents[2] / "docs" / "examples" / "classification"
    definition = (example / "task.toml").read_text()
    definition = definition.replace(
        'title = "Example message polarity classification"', f"title = {json.dumps(SCRIPT + RLO)}"
    )
    definition = definition.replace(
        'title = "Subtask A: message polarity"', f"title = {json.dumps(IMG)}"
    )
    definition = definition.replace('title = "Test"', f"title = {json.dumps(QUOTES)}")
    gold_name = f"{IMG}.tsv"
    definition = definition.replace('gold = "gold.tsv"', f"gold = {json.dumps(gold_name)}")
    gold = (example / "gold.tsv").read_bytes()

    def post(files: dict[str, bytes]) -> tuple[int, str]:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            for name, content in files.items():
                archive.writestr(name, content)
        page = world.org.get("/organizer/tasks/new").get_data(as_text=True)
        resp = world.org.post(
            "/organizer/tasks/new",
            data={"csrf_token": csrf_from(page), "bundle": (io.BytesIO(buffer.getvalue()), RLO)},
            content_type="multipart/form-data",
        )
        return resp.status_code, resp.get_data(as_text=True)

    status, html = post({"task.toml": definition.encode(), gold_name: gold})
    assert status == 200 and 'id="task-preview"' in html, html
    check_page(html, (SCRIPT + RLO, IMG, QUOTES, gold_name))
    hostile_gold = gold.replace(b"tw-002\tneutral", f"tw-002\t{SCRIPT}".encode())
    status, html = post({"task.toml": definition.encode(), gold_name: hostile_gold})
    assert status == 422 and 'id="problems"' in html
    check_page(html, (gold_name, SCRIPT))
    status, html = post({f"{RLO}.txt": b"x"})
    assert status == 422
    check_page(html, (RLO,))


def test_markdown_sections_of_a_task_show_hostile_text_as_text(
    tmp_path: Path, template_instance: Path
) -> None:
    """Organizers' Markdown (task page tabs, the terms) keeps nothing executable or unisolated."""
    import shutil

    folder = tmp_path / "task"
    shutil.copytree(Path(__file__).resolve().parents[1] / "fixtures" / "tiny-cqa", folder)
    markdown = (
        f"# {RLO}\n\n{SCRIPT} {IMG}\n\n[click]({JS_URL}) [mail](mailto:{QUOTES})\n\n"
        f'<a href="{JS_URL}" onclick="x()">raw</a> <style>*{{}}</style>\n\n'
        f"![x](data:image/svg+xml,<svg onload=alert(1)>)\n\n| {DDE} | {QUOTES} |\n|---|---|\n"
    )
    for name in ("overview", "evaluation", "data", "terms"):
        (folder / f"{name}.md").write_text(f"{name}: {markdown}", encoding="utf-8")
    toml = (
        (folder / "task.toml")
        .read_text()
        .replace(
            "[runs]",
            'overview = { file = "overview.md" }\nevaluation = { file = "evaluation.md" }\n'
            'data_description = { file = "data.md" }\nterms = { file = "terms.md" }\n[runs]',
        )
    )
    (folder / "task.toml").write_text(toml)
    app = app_on_copy(template_instance, tmp_path / "app")
    try:
        added = app.test_cli_runner().invoke(
            args=["leaderboard", "add-task", str(folder / "task.toml")]
        )
        assert added.exit_code == 0, added.output
        html = app.test_client().get("/tasks/tiny-cqa").get_data(as_text=True)
        page = check_page(html, (RLO, SCRIPT, IMG, DDE))
        for section in ("tab-overview", "tab-evaluation", "tab-data", "tab-terms"):
            assert f'<section id="{section}"' in html
        # Raw HTML shows as text: no style element, no handler inside a tag.
        assert not re.search(r"<style|<[^>]*\sonclick=", html)
        assert not any(
            v.value.strip().lower().startswith(("javascript:", "data:"))
            for v in page.texts
            if v.ancestors and v.value in v.ancestors[-1][1].values()
        )
    finally:
        dispose(app)


def test_organizer_messages_show_hostile_subjects_and_bodies_as_text(world: World) -> None:
    """The message preview escapes the subject, sanitizes the Markdown, and refusals echo safely."""
    form = "/organizer/messages/new"
    token = csrf_from(world.org.get(form).get_data(as_text=True))
    subject = f"{SCRIPT} {QUOTES} {RLO}"
    body = f"{SCRIPT}\n\n{IMG}\n\n[x]({JS_URL}) {QUOTES}\n\n{RLO}\n\n{DDE}"
    data = {"csrf_token": token, "task": T3, "audience": "members", "subject": subject}
    preview = world.org.post(form, data={**data, "body": body})
    assert preview.status_code == 200
    page = check_page(preview.get_data(as_text=True), (subject,))
    assert page.contains(DDE)
    for hostile in (
        {"task": SCRIPT, "body": body},
        {"audience": IMG, "body": body},
        {"audience": "with-primary", "subtask": RLO, "body": body},
        {"body": HUGE * 3},
    ):
        refused = world.org.post(form, data={**data, **hostile})
        assert 400 <= refused.status_code < 500, hostile
        check_page(refused.get_data(as_text=True))
