"""STS 2016 through the API, the form and the CLI: multi-file runs, archives, baseline rank."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner

from tests.conftest import csrf_from, login
from tests.helpers.sts import API_EN, EN_SETS, PRESET, gold_as_output, noisy_output
from tests.runs import api_upload, make_participant, token_for


def test_api_upload_one_field_per_set(app: Flask, client: FlaskClient) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    token = token_for(app, "alice@example.org")
    resp = api_upload(
        client,
        token,
        {s: gold_as_output(s) for s in EN_SETS},
        path=API_EN,
        slot="run1",
        name="sys-run1",
    )
    assert resp.status_code == 201, resp.get_json()
    assert resp.get_json()["official"] == {k: "1.00000" for k in ("ALL", *EN_SETS)}


def test_api_upload_as_zip_and_tar_gz(app: Flask, client: FlaskClient) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    token = token_for(app, "alice@example.org")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for s in EN_SETS:
            z.writestr(f"out/STS2016.OUTPUT.{s}.txt", gold_as_output(s))
    assert (
        api_upload(
            client, token, {"archive": buf.getvalue()}, path=API_EN, slot="run1", name="sys-run1"
        ).status_code
        == 201
    )
    tbuf = io.BytesIO()
    with tarfile.open(fileobj=tbuf, mode="w:gz") as t:
        for s in EN_SETS:
            data = gold_as_output(s)
            info = tarfile.TarInfo(f"SYSTEM_OUT.{s}.txt")
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    resp = api_upload(
        client, token, {"archive": tbuf.getvalue()}, path=API_EN, slot="run2", name="sys-run2"
    )
    assert resp.status_code == 201, resp.get_json()


def test_archive_with_path_traversal_is_refused(app: Flask, client: FlaskClient) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    token = token_for(app, "alice@example.org")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("../../etc/STS2016.OUTPUT.headlines.txt", b"1\n")
    resp = api_upload(
        client, token, {"archive": buf.getvalue()}, path=API_EN, slot="run1", name="sys-run1"
    )
    assert resp.status_code == 422
    assert any("../" in i["message"] or "path" in i["message"] for i in resp.get_json()["issues"])


def test_missing_set_and_filtered_multisource_are_named(app: Flask, client: FlaskClient) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    token = token_for(app, "alice@example.org")
    files = {s: gold_as_output(s) for s in EN_SETS if s != "headlines"}
    resp = api_upload(client, token, files, path=API_EN, slot="run1", name="sys-run1")
    assert resp.status_code == 422
    assert {"line": None, "message": "headlines: no output file was given."} in resp.get_json()[
        "issues"
    ]
    short = {
        **{s: gold_as_output(s) for s in EN_SETS},
        "plagiarism": gold_as_output("plagiarism") + b"3\n",
    }
    resp = api_upload(client, token, short, path=API_EN, slot="run1", name="sys-run1")
    messages = [i["message"] for i in resp.get_json()["issues"]]
    assert resp.status_code == 422
    assert any(
        m.startswith(
            "plagiarism: expected 1,271 lines (one per pair of STS2016.input.plagiarism.txt), found 1,272."
        )
        for m in messages
    )


def test_multisource_filtered_file_is_refused_with_the_hint(
    app: Flask, client: FlaskClient
) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    token = token_for(app, "alice@example.org")
    news = (PRESET / "crosslingual" / "STS.gs.news.txt").read_bytes()
    multi = (PRESET / "crosslingual" / "STS.gs.multisource.txt").read_bytes()
    resp = api_upload(
        client,
        token,
        {"news": news, "multisource": multi},
        path="/api/v1/tasks/semeval2016-task1/es-en/runs",
        slot="run1",
    )
    assert resp.status_code == 422
    assert any(
        "multisource: expected 2,973 lines" in i["message"]
        and "Submit the unfiltered output" in i["message"]
        for i in resp.get_json()["issues"]
    )


def test_form_upload_with_one_file_per_set(app: Flask, client: FlaskClient) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    login(client, "alice@example.org", "correct horse battery")
    page = client.get("/tasks/semeval2016-task1/en/submit")
    html = page.get_data(as_text=True)
    for s in EN_SETS:
        assert f'name="{s}"' in html
    data: dict[str, object] = {
        "csrf_token": csrf_from(html),
        "eval_set": "test",
        "slot": "run2",
        "name": "form-run",
    }
    for s in EN_SETS:
        data[s] = (io.BytesIO(gold_as_output(s)), f"{s}.txt")
    data["archive"] = (io.BytesIO(b""), "")
    resp = client.post(
        "/tasks/semeval2016-task1/en/submit", data=data, content_type="multipart/form-data"
    )
    assert resp.status_code == 302, resp.get_data(as_text=True)[:2000]
    page = client.get(resp.headers["Location"]).get_data(as_text=True)
    assert page.count(">1.00000<") == 6


# Pearson correlations with the shipped English gold (scored lines only; ALL weights the sets
# by their scored lines), computed once outside the code under test: cosine-bow re-written
# from its definition (|T1 & T2| / sqrt(|T1| |T2|) over the sets of str.split() tokens of the
# two TAB fields of each input line) and noisy_output's values, both correlated with
# scipy.stats.pearsonr (SciPy 1.17.1).
COSINE_BOW = {
    "ALL": 0.5133360364875724,
    "answer-answer": 0.41133318592874335,
    "headlines": 0.5407272839049476,
    "plagiarism": 0.6960129871842372,
    "postediting": 0.8261511867625898,
    "question-question": 0.03843511834249612,
}
NOISY = {
    "ALL": 0.9433047246652319,
    "answer-answer": 0.9452981448844904,
    "headlines": 0.9438013350553682,
    "plagiarism": 0.9456737918414889,
    "postediting": 0.9442305491671906,
    "question-question": 0.9366024693932091,
}


def test_baseline_is_ranked_as_if_with_a_dagger(
    app: Flask, client: FlaskClient, runner: FlaskCliRunner
) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    token = token_for(app, "alice@example.org")
    assert (
        api_upload(
            client,
            token,
            {s: gold_as_output(s) for s in EN_SETS},
            path=API_EN,
            slot="run1",
            name="sys-run1",
        ).status_code
        == 201
    )
    assert (
        api_upload(
            client,
            token,
            {s: noisy_output(s) for s in EN_SETS},
            path=API_EN,
            slot="run2",
            name="sys-run2",
        ).status_code
        == 201
    )
    result = runner.invoke(args=["leaderboard", "add-baselines", "semeval2016-task1", "en"])
    assert result.exit_code == 0, result.output
    table = json.loads(
        runner.invoke(
            args=["leaderboard", "table", "semeval2016-task1", "en", "--format", "json"]
        ).output
    )
    rows = [
        (r["team"], r["run"], r["rank"], r["rank_marker"], r["team_rank"]) for r in table["rows"]
    ]
    # Two runs above it (the gold itself and the noisy run, 0.94330 overall): the baseline's
    # as-if rank is 3, and it displaces nobody.
    assert [row[:4] for row in rows] == [
        ("Aurora", "sys-run1", 1, ""),
        ("Aurora", "sys-run2", 2, ""),
        (rows[2][0], "cosine-bow", 3, "†"),
    ]
    runs = {r["run"]: r["cells"] for r in table["rows"]}
    for measure, value in NOISY.items():
        assert runs["sys-run2"][measure]["value"] == pytest.approx(value, abs=1e-9), measure
    for measure, value in COSINE_BOW.items():
        assert runs["cosine-bow"][measure]["value"] == pytest.approx(value, abs=1e-9), measure
    baseline = next(r for r in table["rows"] if r["kind"] == "baseline")
    assert baseline["label"] == "baseline"
    page = client.get("/tasks/semeval2016-task1/en").get_data(as_text=True)
    assert "baseline" in page and "†" in page
