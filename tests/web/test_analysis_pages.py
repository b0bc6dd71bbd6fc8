"""The analysis pages: queue on the organizer's page, the worker computes, pages and charts show
it, a new run makes it out of date; a run's per-query diagnostics page and downloads."""

from __future__ import annotations

import csv
import io
import re

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner

from tests.conftest import csrf_from, login
from tests.dispatch import draw_asked, work_off
from tests.helpers.cli import invoke
from tests.helpers.sentiment import PATH, SENTIMENT
from tests.runs import api_upload, make_organizer, open_phase, token_for

PAGE = "/organizer/tasks/example-sentiment/A/analysis"


def test_queue_compute_show_and_outdate(app: Flask, hosted: FlaskCliRunner) -> None:
    make_organizer(app, "org@example.org")
    org = app.test_client()
    login(org, "org@example.org", "organizer password")
    page = org.get(PAGE)
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "No analysis of this set has been computed yet." in html
    public = app.test_client()
    assert public.get("/tasks/example-sentiment/A/analysis/measure.svg").status_code == 404

    form = {"csrf_token": csrf_from(html), "measure": "macro-F1", "method": "randomization",
            "samples": "300", "seed": "5"}  # fmt: skip
    assert org.post(PAGE, data=form).status_code == 302
    assert "is queued or running" in org.get(PAGE).get_data(as_text=True)
    # Out-of-range samples are refused by the form, nothing queued beyond the first.
    bad = org.post(PAGE, data={**form, "samples": "0"})
    assert bad.status_code == 400
    assert hosted.invoke(args=["leaderboard", "worker", "--once"]).output.count(": done") == 1

    html = org.get(PAGE).get_data(as_text=True)
    assert "describes the current scores" in html
    assert "randomization, 300 samples, seed 5" in html
    clusters = [
        int(c) for c in re.findall(r"<tr(?: class=\"cluster-start\")?>\s*<td>(\d+)</td>", html)
    ]
    assert len(clusters) == 5 and clusters[0] == 1 and clusters == sorted(clusters)
    matrix_rows = re.findall(r"<tr><th><bdi>", html)
    assert len(matrix_rows) == 4  # five runs: four rows of the upper triangle
    svg = public.get("/tasks/example-sentiment/A/analysis/measure.svg")
    assert svg.status_code == 200 and svg.mimetype == "image/svg+xml"
    assert b"macro-F1 (95 % bootstrap interval)" in svg.data
    numbers = public.get("/tasks/example-sentiment/A/analysis/measure.csv")
    rows = list(csv.reader(io.StringIO(numbers.get_data(as_text=True))))
    assert rows[0] == ["run", "macro-F1", "ci_low", "ci_high", "cluster"] and len(rows) == 6
    for _label, value, low, high, _cluster in rows[1:]:
        assert float(low) <= float(high)
        assert 0.0 <= float(value) <= 1.0
    assert public.get("/tasks/example-sentiment/A/analysis/matrix.pdf").data.startswith(b"%PDF")

    # A new run: the page says the analysis is out of date; the public chart is gone.
    resp = api_upload(app.test_client(), token_for(app, "bob@example.org"),
                      (SENTIMENT / "run-valid.tsv").read_bytes(), path=PATH, slot="contrastive1")  # fmt: skip
    assert resp.status_code == 201
    assert "Out of date" in org.get(PAGE).get_data(as_text=True)
    assert public.get("/tasks/example-sentiment/A/analysis/measure.svg").status_code == 404


#: Alice's oracle run, the first upload to the hosted example.
RUN = 1


@pytest.fixture
def alice(app: Flask, hosted: FlaskCliRunner) -> FlaskClient:
    """Log Alice in on the hosted example."""
    client = app.test_client()
    login(client, "alice@example.org", "correct horse battery")
    return client


@pytest.fixture
def summarized(app: Flask, alice: FlaskClient) -> FlaskClient:
    """Let the worker summarize the set per item (and draw its charts)."""
    assert work_off(app) >= 1
    return alice


def test_a_runs_diagnostics_wait_for_the_worker(alice: FlaskClient) -> None:
    waiting = alice.get(f"/runs/{RUN}/queries").get_data(as_text=True)
    assert 'id="summary-pending"' in waiting and "query-table" not in waiting
    assert alice.get(f"/runs/{RUN}/queries.csv").status_code == 404


def test_a_runs_diagnostics_compare_on_acc_and_say_why(summarized: FlaskClient) -> None:
    page = summarized.get(f"/runs/{RUN}/queries")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "Acc per item" in html  # macro-F1 is not a mean over items; Acc is
    # The official measure comes first, with the run's value as the table shows it (the oracle
    # is perfect), and the page says why the per-item values are of another measure.
    official = re.search(r'<p id="official-measure">(.*?)</p>', html)
    assert official is not None
    assert official.group(1) == (
        "Official measure: macro-F1; this run's is <strong>1.0000</strong>. It is not a mean "
        "over items, so this page compares the runs per item on Acc."
    )
    # Two teams' runs are compared; the three baselines in the table are not counted.
    assert "the median and the best of the 2 ranked runs of the teams (baselines left out)" in html
    assert "<th>Item</th>" in html and "Query" not in html  # a classification task's unit
    assert "summary-pending" not in html and "summary-updating" not in html
    assert 'id="chart-pending"' not in html  # the worker drew the official measure's chart


def test_a_runs_per_item_numbers_download_as_csv_and_svg(summarized: FlaskClient) -> None:
    numbers = summarized.get(f"/runs/{RUN}/queries.csv").get_data(as_text=True)
    rows = list(csv.reader(io.StringIO(numbers)))
    assert rows[0] == ["item", "Acc", "median", "best", "difference"]
    svg = summarized.get(f"/runs/{RUN}/queries.svg").get_data(as_text=True)
    assert "items, sorted by difference (60)" in svg
    assert len(rows) == 61  # every gold item
    # The oracle is right everywhere: never below the median, and its difference is 1 − median.
    for _q, value, median, best, diff in rows[1:]:
        assert float(value) == 1.0 and float(best) == 1.0
        assert abs(float(diff) - (1.0 - float(median))) < 1e-12
    differences = [float(r[4]) for r in rows[1:]]
    assert differences == sorted(differences)


def test_a_runs_pdf_is_drawn_when_first_asked_for(app: Flask, summarized: FlaskClient) -> None:
    pdf = summarized.get(f"/runs/{RUN}/queries.pdf")
    assert pdf.status_code == 404 and "being drawn" in pdf.get_data(as_text=True)
    assert pdf.headers["Retry-After"] == "5"
    assert draw_asked(app) == 1
    pdf = summarized.get(f"/runs/{RUN}/queries.pdf")
    assert pdf.status_code == 200 and pdf.data.startswith(b"%PDF")
    assert pdf.headers["Cache-Control"] == "private, max-age=60" and pdf.headers["ETag"]
    etag = {"If-None-Match": pdf.headers["ETag"]}
    again = summarized.get(f"/runs/{RUN}/queries.pdf", headers=etag)
    assert again.status_code == 304 and again.data == b""


def test_a_new_run_keeps_the_last_summary_shown_while_it_is_updated(
    app: Flask, summarized: FlaskClient
) -> None:
    resp = api_upload(app.test_client(), token_for(app, "bob@example.org"),
                      (SENTIMENT / "run-valid.tsv").read_bytes(), path=PATH, slot="contrastive1")  # fmt: skip
    assert resp.status_code == 201
    stale = summarized.get(f"/runs/{RUN}/queries").get_data(as_text=True)
    assert 'id="summary-updating"' in stale and "query-table" in stale
    assert work_off(app) >= 1
    page = summarized.get(f"/runs/{RUN}/queries").get_data(as_text=True)
    assert "summary-updating" not in page


def test_another_teams_diagnostics_are_not_found(app: Flask, summarized: FlaskClient) -> None:
    assert summarized.get("/runs/2/queries").status_code == 404
    assert app.test_client().get(f"/runs/{RUN}/queries").status_code == 404


def test_public_diagnostics_is_a_phase_option(app: Flask, hosted: FlaskCliRunner) -> None:
    anonymous = app.test_client()
    assert anonymous.get("/runs/2/queries").status_code == 404
    result = hosted.invoke(
        args=["leaderboard", "phase", "example-sentiment", "A", "test", "--diagnostics", "public"]
    )
    assert result.exit_code == 0, result.output
    assert "per-query diagnostics for everyone" in result.output
    assert anonymous.get("/runs/2/queries").status_code == 200
    # Hidden results hide diagnostics again, whatever the option says.
    hidden = hosted.invoke(
        args=["leaderboard", "phase", "example-sentiment", "A", "test", "--results", "hidden"]
    )
    assert hidden.exit_code == 0, hidden.output
    assert anonymous.get("/runs/2/queries").status_code == 404
    # Bob opens his own run's page, which says its values are hidden and shows none of them.
    bob = app.test_client()
    login(bob, "bob@example.org", "correct horse battery")
    own = bob.get("/runs/2/queries")
    assert own.status_code == 200
    html = own.get_data(as_text=True)
    assert "they are hidden, like the run's scores" in html
    assert "query-table" not in html and "<img" not in html
    for fmt in ("csv", "svg", "pdf"):
        assert bob.get(f"/runs/2/queries.{fmt}").status_code == 404
    assert bob.get("/runs/1/queries").status_code == 404
    bad = hosted.invoke(
        args=["leaderboard", "phase", "example-sentiment", "A", "test", "--diagnostics", "all"]
    )
    assert bad.exit_code == 2


def test_the_table_takes_clusters_and_intervals_of_the_current_analysis(
    app: Flask,
    hosted: FlaskCliRunner,
    tmp_path,  # type: ignore[no-untyped-def]
) -> None:
    from tests.security import compile_latex

    public = app.test_client()
    before = public.get("/tasks/example-sentiment/A/results.json").get_json()
    assert all("cluster" not in row for row in before["rows"])
    page_before = public.get("/tasks/example-sentiment/A").get_data(as_text=True)  # now cached
    assert "significance clusters" not in page_before

    result = hosted.invoke(
        args=["leaderboard", "significance", "example-sentiment", "A", "--samples", "400"]
    )
    assert result.exit_code == 0, result.output
    report = __import__("json").loads(result.output)
    table = public.get("/tasks/example-sentiment/A/results.json").get_json()
    by_label = {row["label"]: row for row in table["rows"]}
    for n, group in enumerate(report["clusters"], 1):
        for label in group:
            assert by_label[label]["cluster"] == n
    for run_id, label in zip(report["run_ids"], report["runs"], strict=True):
        low, high = report["intervals"][str(run_id)]["macro-F1"]
        cell = by_label[label]["cells"]["macro-F1"]
        # The cell's scale is the stored one here (fractions shown as fractions).
        assert cell["ci"] == [low, high]
    assert any("significance clusters" in note for note in table["footnotes"])

    # The cached anonymous page is rebuilt: storing an analysis advances the set's counter.
    page = public.get("/tasks/example-sentiment/A").get_data(as_text=True)
    assert "significance clusters" in page
    starts = page.count("cluster-start")
    assert starts == len(report["clusters"]) - 1
    assert page.count('class="ci"') == sum(
        1 for row in table["rows"] for cell in row["cells"].values() if cell and "ci" in cell
    )
    latex = public.get("/tasks/example-sentiment/A/results.tex").get_data(as_text=True)
    assert latex.count(r"\midrule") >= 1 + starts  # the header rule and one per cluster start
    compiled = compile_latex(latex, tmp_path, "clusters")
    assert compiled.returncode == 0, compiled.stdout[-2000:]
    # The caption is the task's title and the subtask's ("Subtask A: ..." once), not slugs.
    assert (
        r"\caption{Example message polarity classification --- Subtask A: message polarity --- Test}"
    ) in latex
    # The LaTeX table has rules between clusters and rank intervals but no cells' intervals: its
    # notes say just that.
    assert "Rules separate significance clusters" in latex
    assert "Intervals are" not in latex and "bootstrap intervals" not in latex
    assert "Rank interval (lo--hi): 2.5th--97.5th percentile of the run's rank over 400" in latex
    # Fractions shown as computed need no note ("Values as stored." told a reader nothing).
    assert "as stored" not in latex
    markdown = public.get("/tasks/example-sentiment/A/results.md").get_data(as_text=True)
    assert markdown.startswith(
        "**Example message polarity classification — Subtask A: message polarity — Test**"
    )
    # A pipe table shows the intervals (in each cell) but no cluster rules.
    cis = sum(1 for row in table["rows"] for cell in row["cells"].values() if cell and "ci" in cell)
    assert cis > 0 and len(re.findall(r" \\\[-?\d+\.\d+, -?\d+\.\d+\\\]", markdown)) == cis
    assert "Intervals are 95 % bootstrap intervals." in markdown
    assert "Rules separate" not in markdown and "as stored" not in markdown


def test_the_subtask_page_queues_and_shows_the_p_value_matrix(
    app: Flask,
    hosted: FlaskCliRunner,
) -> None:
    make_organizer(app, "org@example.org")
    org = app.test_client()
    login(org, "org@example.org", "organizer password")
    subtask_page = "/organizer/tasks/example-sentiment/A"
    html = org.get(subtask_page).get_data(as_text=True)
    assert 'id="analysis-form"' in html and "No analysis of this set has been computed yet." in html
    form = {"csrf_token": csrf_from(html), "measure": "macro-F1", "method": "bootstrap",
            "samples": "300", "seed": "2"}  # fmt: skip
    assert org.post(PAGE + "?set=test", data=form).status_code == 302
    assert hosted.invoke(args=["leaderboard", "worker", "--once"]).exit_code == 0
    html = org.get(subtask_page).get_data(as_text=True)
    assert 'id="pvalue-matrix"' in html and "bootstrap, 300 samples, seed 2" in html
    assert len(re.findall(r"<tr><th><bdi>", html)) == 4


def test_a_title_starting_with_its_label_is_not_labelled_twice(
    app: Flask,
    hosted: FlaskCliRunner,
) -> None:
    # The definition's subtask title is "Subtask A: message polarity".
    public = app.test_client()
    for url in ("/", "/tasks/example-sentiment", "/tasks/example-sentiment/A"):
        page = public.get(url).get_data(as_text=True)
        assert "Subtask A: message polarity" in page, url
        assert "Subtask A: Subtask A" not in page and "A: Subtask A" not in page, url
    table = public.get("/tasks/example-sentiment/A/results.json").get_json()
    assert table["title"] == (
        "Example message polarity classification — Subtask A: message polarity — Test"
    )


def test_baselines_are_compared_with_the_teams_runs_never_with_each_other(
    app: Flask, runner: FlaskCliRunner
) -> None:
    assert invoke(runner, "add-task", str(SENTIMENT / "task.toml")).exit_code == 0
    open_phase(app, "example-sentiment", "A", "test")
    assert invoke(runner, "add-baselines", "example-sentiment", "A").exit_code == 0
    assert work_off(app) >= 1
    make_organizer(app, "org@example.org")
    org = app.test_client()
    login(org, "org@example.org", "organizer password")
    page = org.get("/runs/1/queries")
    html = page.get_data(as_text=True)
    # Summarized, but only baselines have values: no median, and no endless "being computed".
    assert page.status_code == 200 and 'id="no-ranked-runs"' in html
    assert "summary-pending" not in html and "query-table" not in html
    assert 'id="official-measure">Official measure: macro-F1; this run' in html
    svg = org.get("/runs/1/queries.svg")
    assert svg.status_code == 404
    assert "No ranked run has per-item values to compare with yet" in svg.get_data(as_text=True)
