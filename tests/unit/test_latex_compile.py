"""The LaTeX exports compile: real tables of all three styles, built through the app, in pdflatex.

The tables hold what a campaign produces: primary and contrastive runs, a late run (*), a run
scored on a truncated file (‡), baselines (†), the STS summary table, TREC qrels variants as
column groups, a frozen official table and the run listings; team, run and description text is
full of LaTeX specials (and of hostile strings). Each export is pasted into a minimal
``article`` with booktabs and must compile with exit status 0 and no missing character.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from flask import Flask

from leaderboard.clock import FixedClock
from tests.conftest import app_on_copy, dispose, login
from tests.runs import (
    GOLD_TEST_A,
    accepted,
    api_upload,
    constant_run,
    make_organizer,
    make_participant,
    oracle_run,
    own_campaign,
    token_for,
)
from tests.security import compile_latex

PRESETS = Path(__file__).resolve().parents[2] / "leaderboard" / "tasks" / "presets"
T3, T1, CAR = "semeval2016-task3", "semeval2016-task1", "trec-car-2017"
STS_SETS = ("answer-answer", "headlines", "plagiarism", "postediting", "question-question")
QRELS = PRESETS / CAR / "qrels.car17v1.5.benchmarkY1test.txt"

SPECIALS = "R&D_Lab #1"
BRACES = "50% {Team} ~^ \\ $x$"
BRACKET = "[x] *star* O'Brien--Smith"
ACCENTS = "Ünïcödé Zürich — “quoted” …"
SCRIPT = "<script>alert(1)</script>"
DDE = "=cmd|' /C calc'!A0"
ARABIC = "\u202eفريق\u202c"
DESCRIPTION = "Line one & 100% #1\nline_two {x} ~ ^ \\ $y$ [z] * — “q”"
PARTICIPANTS = {SPECIALS: "a@example.org", BRACES: "b@example.org", BRACKET: "c@example.org"}


def at(day: int) -> datetime:
    return datetime(2016, 1, day, 12, tzinfo=UTC)


def sts_output(slug: str, noise: float) -> bytes:
    lines = (PRESETS / T1 / "english" / f"STS2016.gs.{slug}.txt").read_text().splitlines()
    return "".join(
        f"{(float(v) if v else 2.5) + (i % 5) * noise:.3f}\n" for i, v in enumerate(lines)
    ).encode()


def trec_run(tag: str, skip: int) -> bytes:
    rows = [line.split() for line in QRELS.read_text().splitlines()]
    kept = [r for k, r in enumerate(rows) if k % 7 >= skip]
    return "".join(
        f"{q} Q0 {d} {i} {100 - i} {tag}\n" for i, (q, _, d, _) in enumerate(kept)
    ).encode()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, template_instance: Path) -> Iterator[Flask]:
    """Run a small campaign on all three preset tasks through the API and the CLI."""
    root = tmp_path_factory.mktemp("latex")
    clock = FixedClock(at(5))
    app = app_on_copy(template_instance, root, clock=clock)
    make_organizer(app, "org@example.org")
    for team, email in PARTICIPANTS.items():
        make_participant(app, team, email)
    tokens = {team: token_for(app, email) for team, email in PARTICIPANTS.items()}
    runner = app.test_cli_runner()

    def cli(*args: str) -> str:
        result = runner.invoke(args=["leaderboard", *args])
        assert result.exit_code == 0, result.output
        return result.output

    api = app.test_client()
    cqa = f"/api/v1/tasks/{T3}/A/runs"
    own_campaign(app, T3, ("A",))
    cli(
        "phase",
        T3,
        "A",
        "test",
        "--set",
        "test",
        "--start",
        "2016-01-01T00:00:00Z",
        "--end",
        "2016-01-10T00:00:00Z",
        "--late",
    )
    accepted(
        api_upload(
            api,
            tokens[SPECIALS],
            {"file": oracle_run()},
            path=cqa,
            slot="primary",
            name="oracle & co",
            description=DESCRIPTION,
        )
    )
    accepted(
        api_upload(
            api,
            tokens[SPECIALS],
            {"file": constant_run()},
            path=cqa,
            slot="contrastive1",
            name="const_1",
            description=DESCRIPTION,
        )
    )
    accepted(
        api_upload(
            api,
            tokens[BRACES],
            {"file": constant_run(label="true")},
            path=cqa,
            slot="primary",
            name="{braces}",
            description=DESCRIPTION,
        )
    )
    clock.set(at(20))  # after the deadline: a late run, marked *
    late = accepted(
        api_upload(api, tokens[BRACKET], {"file": oracle_run()}, path=cqa, slot="primary")
    )
    assert late["late"] is True
    # Organizer imports: hostile team names, and a truncated legacy run (scored with a note ‡).
    runs = root / "runs"
    runs.mkdir()
    lines = oracle_run().splitlines(keepends=True)
    (runs / "truncated.txt").write_bytes(b"".join(lines[: len(lines) // 2]))
    (runs / "full.txt").write_bytes(constant_run(GOLD_TEST_A, "true"))
    for team, name, lenient in (
        (ACCENTS, "truncated.txt", True),
        (SCRIPT, "full.txt", False),
        (DDE, "full.txt", False),
        (ARABIC, "full.txt", False),
    ):
        cli(
            "import-runs",
            T3,
            "A",
            "--team",
            team,
            "--slot",
            "primary",
            "--name",
            team,
            "--description",
            DESCRIPTION,
            *(["--lenient"] if lenient else []),
            str(runs / name),
        )
    cli("add-baselines", T3, "A")
    cli("freeze", T3, "A")

    # The other presets take runs in their post-evaluation phases (open since 2016 and 2017).
    clock.set(datetime(2018, 1, 5, 12, tzinfo=UTC))
    sts = f"/api/v1/tasks/{T1}/en/runs"
    for k, team in enumerate(PARTICIPANTS):
        for slot, noise in (("run1", 0.2 + k * 0.1), ("run2", 1.5)):
            files = {s: sts_output(s, noise) for s in STS_SETS}
            accepted(
                api_upload(api, tokens[team], files, path=sts, slot=slot, name=f"{team} {slot}")
            )
    cli("add-baselines", T1, "en")
    cli("add-baselines", T1, "es-en")

    trec = f"/api/v1/tasks/{CAR}/passage/runs"
    for k, team in enumerate(PARTICIPANTS):
        accepted(
            api_upload(
                api,
                tokens[team],
                {"file": trec_run(f"run-{k}", k)},
                path=trec,
                slot="primary",
                name=team,
                description=DESCRIPTION,
            )
        )
    graded = root / "graded.qrels"
    graded.write_text(
        "".join(
            f"{q} 0 {d} {k % 3}\n"
            for k, (q, _, d, _g) in enumerate(
                line.split() for line in QRELS.read_text().splitlines()
            )
        )
    )
    for variant in ("lenient", "manual"):
        cli("set-gold", CAR, "passage", str(graded), "--variant", variant)
    yield app
    dispose(app)


def _get(app: Flask, path: str) -> str:
    client = app.test_client()
    if path.startswith("/organizer/"):
        login(client, "org@example.org", "organizer password")
    resp = client.get(path)
    assert resp.status_code == 200, resp.get_data(as_text=True)[:500]
    return resp.get_data(as_text=True)


EXPORTS = {
    "cqa-live": f"/tasks/{T3}/A/results.tex?view=live",
    "cqa-official": f"/tasks/{T3}/A/results.tex?view=official",
    "sts-en": f"/tasks/{T1}/en/results.tex",
    "sts-es-en-baseline-only": f"/tasks/{T1}/es-en/results.tex",
    "trec-variants": f"/tasks/{CAR}/passage/results.tex",
    "listing-cqa": f"/organizer/tasks/{T3}/A/test/runs.latex",
    "listing-sts": f"/organizer/tasks/{T1}/en/test/runs.latex",
    "listing-trec": f"/organizer/tasks/{CAR}/passage/test/runs.latex",
}
#: What each export must show, so that an empty table cannot pass.
MUST_HOLD = {
    "cqa-live": [r"R\&D\_Lab \#1-primary", "Baseline 1 (IR)", "\n1* & {[}x{]}", r"\ddag{}"],
    "cqa-official": [r"R\&D\_Lab \#1-primary", r"\textbackslash{} \$x\$-primary"],
    "sts-en": [r"R\&D\_Lab \#1 run1", r"baseline\dag{}", "Median", r"$\Delta$"],
    "sts-es-en-baseline-only": [r"\dag{}", "unofficial baseline"],
    "trec-variants": [r"\cmidrule(lr)", "Lenient", "Manual", r"R\&D\_Lab \#1"],
    "listing-cqa": [r"R\&D\_Lab \#1", r"Line one \& 100\% \#1 line\_two"],
    "listing-sts": [r"R\&D\_Lab \#1 run1"],
    "listing-trec": [r"{[}x{]} {*}star{*} O'Brien-{}-Smith"],
}


def arabic_as_marks(body: str) -> dict[str, str]:
    """Map the Arabic letters of ``body`` to '?', which pdflatex's Latin fonts can print.

    A paper would set up an Arabic-capable font; everything else must be typeset as it is.
    """
    return {ch: "?" for ch in body if "\u0600" <= ch <= "\u06ff"}


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_latex_export_compiles(built: Flask, name: str, tmp_path: Path) -> None:
    body = _get(built, EXPORTS[name])
    for needle in MUST_HOLD[name]:
        assert needle in body, f"{needle!r} not in the {name} export"
    done = compile_latex(body, tmp_path, name, declare=arabic_as_marks(body))
    log = (tmp_path / f"{name}.log").read_text(errors="replace")
    assert done.returncode == 0, log[-3000:]
    assert "Missing character" not in log, log[-3000:]
    assert (tmp_path / f"{name}.pdf").stat().st_size > 1000


def test_cli_latex_equals_the_downloads_and_compiles(built: Flask, tmp_path: Path) -> None:
    runner = built.test_cli_runner()

    def cli(*args: str) -> str:
        result = runner.invoke(args=["leaderboard", *args])
        assert result.exit_code == 0, result.output
        return result.output

    official = cli("table", T3, "A", "--official", "--format", "latex")
    assert official == _get(built, EXPORTS["cqa-official"])
    listing = cli("runs", CAR, "passage", "--format", "latex")
    assert listing == _get(built, EXPORTS["listing-trec"])
    frozen = json.loads(cli("table", T3, "A", "--official", "--format", "json"))
    assert frozen["official"] is True
    body = official + "\n\\clearpage\n" + listing
    done = compile_latex(body, tmp_path, "cli", declare=arabic_as_marks(body))
    assert done.returncode == 0, (tmp_path / "cli.log").read_text(errors="replace")[-3000:]
