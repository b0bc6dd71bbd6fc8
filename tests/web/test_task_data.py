"""Task data files: organizers attach them to phases, approved teams download them, gold never."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import tarfile
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select, update

from leaderboard.clock import FixedClock
from leaderboard.models import AuditEvent, Task, TaskDataFile, Team, TermsAcceptance
from leaderboard.services.tasks import data as taskdata
from leaderboard.services.tasks.data import safe_filename
from tests.conftest import AppFactory, csrf_from, login
from tests.runs import GOLD_TEST_A, make_organizer, make_participant, own_campaign

T3 = "semeval2016-task3"
NOW = datetime(2016, 1, 15, 12, 0, tzinfo=UTC)
TRIAL_BYTES = b"trial input line 1\ntrial input line 2\n"
SECRET_FUTURE = b"test inputs, not yet released\n"


def _cli(app: Flask, *args: str) -> tuple[int, str]:
    result = app.test_cli_runner().invoke(args=["leaderboard", *args])
    return result.exit_code, result.output


def _phase(app: Flask, subtask: str, name: str, start: str, end: str) -> None:
    code, out = _cli(app, "phase", T3, subtask, name, "--start", start, "--end", end)
    assert code == 0, out


def _add(app: Flask, tmp: Path, data: bytes, name: str, phase: str, sub: str = "A", *extra: str):
    path = tmp / name
    path.write_bytes(data)
    return _cli(app, "data", "add", T3, sub, str(path), "--phase", phase, *extra)


def _rows(app: Flask) -> list[TaskDataFile]:
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        return list(s.scalars(select(TaskDataFile).order_by(TaskDataFile.id)))


def _actions(app: Flask) -> list[str]:
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        return list(s.scalars(select(AuditEvent.action).order_by(AuditEvent.id)))


@pytest.fixture
def world(make_app: AppFactory, tmp_path: Path) -> Flask:
    """An app with an organizer, Aurora (alice), a started trial phase and a future test phase."""
    app = make_app(clock=FixedClock(NOW))
    make_organizer(app, "org@example.org")
    make_participant(app, "Aurora", "alice@example.org")
    own_campaign(app, T3)
    _phase(app, "A", "trial", "2016-01-01T00:00:00Z", "2016-01-20T00:00:00Z")
    _phase(app, "A", "test", "2016-02-01T00:00:00Z", "2016-02-20T00:00:00Z")
    code, out = _add(
        app, tmp_path, TRIAL_BYTES, "trial input.txt", "trial", "A", "--title", "Trial inputs"
    )
    assert code == 0, out
    code, out = _add(app, tmp_path, SECRET_FUTURE, "test-input.txt", "test")
    assert code == 0, out
    return app


def _client(app: Flask, email: str | None) -> FlaskClient:
    client = app.test_client()
    if email:
        login(
            client,
            email,
            "organizer password" if email.startswith("org") else "correct horse battery",
        )
    return client


def _ids(app: Flask) -> dict[str, int]:
    return {r.title: r.id for r in _rows(app)}


def test_cli_adds_lists_and_deletes_with_an_audit(world: Flask, tmp_path: Path) -> None:
    rows = _rows(world)
    assert [(r.title, r.filename, r.phase.name if False else r.size) for r in rows] == [
        ("Trial inputs", "trial_input.txt", len(TRIAL_BYTES)),
        ("test-input.txt", "test-input.txt", len(SECRET_FUTURE)),
    ]
    assert rows[0].sha256 == hashlib.sha256(TRIAL_BYTES).hexdigest()
    code, out = _cli(world, "data", "list", T3, "A")
    assert code == 0 and "trial\ttrial_input.txt" in out and "test\ttest-input.txt" in out
    code, out = _cli(world, "data", "delete", T3, "A", str(rows[1].id))
    assert code == 0, out
    assert [r.title for r in _rows(world)] == ["Trial inputs"]
    assert _actions(world)[-3:] == ["add-data-file", "add-data-file", "delete-data-file"]
    code, out = _cli(world, "data", "delete", T3, "B", str(rows[0].id))
    assert code == 1 and f"No data file {rows[0].id} in subtask B" in out


def test_cli_refuses_gold_bytes_under_any_name_and_unknown_phases(
    world: Flask, tmp_path: Path
) -> None:
    before = len(_rows(world))
    code, out = _add(world, tmp_path, GOLD_TEST_A.read_bytes(), "innocent.txt", "trial")
    assert code == 1 and "same bytes as the reference (gold) file" in out
    # A gold file of another subtask of the task is refused as well.
    other = next((GOLD_TEST_A.parent).glob("*subtaskB*"))
    code, out = _add(world, tmp_path, other.read_bytes(), "b.txt", "trial")
    assert code == 1 and "gold" in out
    code, out = _add(world, tmp_path, b"x\n", "x.txt", "no-such-phase")
    assert code == 1 and "No phase 'no-such-phase'" in out and "trial" in out
    assert len(_rows(world)) == before


def test_subtask_page_lists_started_phases_files_to_members_only(world: Flask) -> None:
    alice = _client(world, "alice@example.org").get(f"/tasks/{T3}/A").get_data(as_text=True)
    assert "Trial inputs" in alice and "test-input.txt" not in alice
    anon = world.test_client().get(f"/tasks/{T3}/A").get_data(as_text=True)
    assert "Trial inputs" not in anon and "task-data" not in anon
    org = _client(world, "org@example.org").get(f"/tasks/{T3}/A").get_data(as_text=True)
    assert "Trial inputs" in org and "test-input.txt" in org


def test_members_download_the_bytes_with_a_safe_name(world: Flask) -> None:
    ids = _ids(world)
    resp = _client(world, "alice@example.org").get(f"/tasks/{T3}/A/data/{ids['Trial inputs']}")
    assert resp.status_code == 200
    assert resp.data == TRIAL_BYTES
    assert resp.headers["Content-Disposition"] == "attachment; filename=trial_input.txt"
    assert resp.mimetype == "application/octet-stream"


def test_download_refusals(world: Flask) -> None:
    ids = _ids(world)
    trial, future = ids["Trial inputs"], ids["test-input.txt"]
    anon = world.test_client().get(f"/tasks/{T3}/A/data/{trial}")
    assert anon.status_code == 302 and anon.headers["Location"].startswith("/login")
    alice = _client(world, "alice@example.org")
    assert alice.get(f"/tasks/{T3}/A/data/{future}").status_code == 404
    assert alice.get(f"/tasks/{T3}/B/data/{trial}").status_code == 404
    assert alice.get(f"/tasks/{T3}/A/data/999999").status_code == 404
    org = _client(world, "org@example.org")
    assert org.get(f"/tasks/{T3}/A/data/{future}").data == SECRET_FUTURE
    with world.extensions["leaderboard"]["sessionmaker"]() as s:
        s.execute(update(Team).values(approved=False))
        s.commit()
    refused = alice.get(f"/tasks/{T3}/A/data/{trial}")
    assert refused.status_code == 403 and TRIAL_BYTES not in refused.data
    assert "Trial inputs" not in alice.get(f"/tasks/{T3}/A").get_data(as_text=True)
    with world.extensions["leaderboard"]["sessionmaker"]() as s:
        s.execute(update(Team).values(approved=True, withdrawn_at=NOW))
        s.commit()
    assert alice.get(f"/tasks/{T3}/A/data/{trial}").status_code == 403


def _set_terms(app: Flask, terms: str) -> None:
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        task = s.scalar(select(Task).where(Task.slug == T3))
        assert task is not None
        task.definition = {**task.definition, "terms": terms}
        task.definition_sha256 = "0" * 64
        s.commit()


def _acceptances(app: Flask) -> int:
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        return len(s.scalars(select(TermsAcceptance)).all())


def test_terms_are_accepted_once_before_the_first_download(world: Flask) -> None:
    _set_terms(world, "Use the data for research only. <b>no html</b>")
    trial = _ids(world)["Trial inputs"]
    url = f"/tasks/{T3}/A/data/{trial}"
    alice = _client(world, "alice@example.org")
    page = alice.get(url)
    body = page.get_data(as_text=True)
    assert page.status_code == 200 and TRIAL_BYTES not in page.data
    assert "Use the data for research only. &lt;b&gt;no html&lt;/b&gt;" in body
    assert alice.post(url, data={}).status_code == 400
    assert _acceptances(world) == 0
    accepted = alice.post(url, data={"csrf_token": csrf_from(body)})
    assert accepted.status_code == 302 and accepted.headers["Location"] == url
    assert _acceptances(world) == 1
    assert alice.get(url).data == TRIAL_BYTES
    # Accepting a file the user may not have yet records nothing.
    future = _ids(world)["test-input.txt"]
    refused = alice.post(f"/tasks/{T3}/A/data/{future}", data={"csrf_token": csrf_from(body)})
    assert refused.status_code == 404
    # Organizers are never asked.
    assert _client(world, "org@example.org").get(url).data == TRIAL_BYTES


def test_a_task_without_terms_asks_nothing(world: Flask) -> None:
    trial = _ids(world)["Trial inputs"]
    assert (
        _client(world, "alice@example.org").get(f"/tasks/{T3}/A/data/{trial}").data == TRIAL_BYTES
    )
    assert _acceptances(world) == 0


def _organizer_page(client: FlaskClient) -> str:
    return client.get(f"/organizer/tasks/{T3}/A").get_data(as_text=True)


def test_organizer_page_adds_and_deletes_files(world: Flask) -> None:
    org = _client(world, "org@example.org")
    page = _organizer_page(org)
    assert 'id="data-form"' in page and "Trial inputs" in page
    token = csrf_from(page)
    url = f"/organizer/tasks/{T3}/A/data"
    form = {"phase": "trial", "title": "Baseline code", "csrf_token": token}
    no_csrf = org.post(
        url, data={**form, "csrf_token": "", "file": (io.BytesIO(b"code\n"), "b.py")}
    )
    assert no_csrf.status_code == 400
    gold = org.post(url, data={**form, "file": (io.BytesIO(GOLD_TEST_A.read_bytes()), "g.txt")})
    assert gold.status_code == 400 and "gold" in gold.get_data(as_text=True)
    bad_phase = org.post(
        url, data={**form, "phase": "nope", "file": (io.BytesIO(b"code\n"), "b.py")}
    )
    assert bad_phase.status_code == 400
    missing = org.post(url, data=form)
    assert missing.status_code == 400
    assert len(_rows(world)) == 2
    added = org.post(url, data={**form, "file": (io.BytesIO(b"code\n"), "my code (v2).py")})
    assert added.status_code == 302
    row = _rows(world)[-1]
    assert (row.title, row.filename, row.created_by) == (
        "Baseline code",
        "my_code__v2_.py",
        "org@example.org",
    )
    delete = f"/organizer/tasks/{T3}/A/data/{row.id}/delete"
    assert org.post(delete, data={}).status_code == 400
    assert org.post(delete, data={"csrf_token": token}).status_code == 302
    assert len(_rows(world)) == 2
    assert _actions(world)[-2:] == ["add-data-file", "delete-data-file"]
    alice = _client(world, "alice@example.org")
    assert alice.post(delete, data={"csrf_token": token}).status_code in (400, 403)


def test_a_50_mb_download_is_streamed_not_loaded(world: Flask, tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    chunk = bytes(range(256)) * 4096  # 1 MiB
    digest = hashlib.sha256()
    with big.open("wb") as out:
        for i in range(50):
            block = chunk[i:] + chunk[:i]
            digest.update(block)
            out.write(block)
    code, out = _cli(world, "data", "add", T3, "A", str(big), "--phase", "trial")
    assert code == 0, out
    file_id = _rows(world)[-1].id
    alice = _client(world, "alice@example.org")
    resp = alice.get(f"/tasks/{T3}/A/data/{file_id}", buffered=False)
    try:
        assert resp.status_code == 200
        assert resp.is_streamed
        assert int(resp.headers["Content-Length"]) == 50 * (1 << 20)
        got = hashlib.sha256()
        largest = 0
        for part in resp.response:
            largest = max(largest, len(part))
            got.update(part)
        # The body arrives in blocks, never as one 50 MB string.
        assert largest <= 1 << 20
        assert got.hexdigest() == digest.hexdigest()
    finally:
        resp.close()


def test_safe_filename_keeps_only_a_plain_base_name() -> None:
    assert safe_filename("../../etc/passwd") == "passwd"
    assert safe_filename('C:\\dir\\evil name".txt') == "evil_name_.txt"
    assert safe_filename("\r\nX-Header: 1") == "X-Header__1"
    assert safe_filename("...") == "data"
    assert safe_filename("données.tsv") == "donn_es.tsv"


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def _tar_gz(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _disguises(gold: bytes) -> dict[str, bytes]:
    """Copies of a gold file that are not its bytes but hold its text."""
    lines = gold.decode().splitlines()
    return {
        "gzip": gzip.compress(gold),
        "crlf": gold.replace(b"\n", b"\r\n"),
        "extra newline": gold + b"\n",
        "bom, blank lines and trailing spaces": b"\xef\xbb\xbf"
        + b"\n\n".join(line.encode() + b" \t" for line in lines)
        + b"\n\n",
        "tabs as spaces": gold.replace(b"\t", b"   "),
        "sorted lines": "\n".join(sorted(lines)).encode(),
        "bzip2 of crlf": bz2.compress(gold.replace(b"\n", b"\r\n")),
        "xz": lzma.compress(gold),
        "zip member": _zip({"README": b"inputs\n", "data/test.txt": gold}),
        "tar.gz member": _tar_gz({"README": b"inputs\n", "test.txt": gzip.compress(gold)}),
        "zip in a zip": _zip({"inner.zip": _zip({"g.txt": gold + b"\n"})}),
    }


def _objects(app: Flask) -> int:
    objects = app.extensions["leaderboard"]["store"].root / "objects"
    return sum(1 for p in objects.rglob("*") if p.is_file())


@pytest.mark.parametrize("kind", list(_disguises(b"x\ty\n")))
def test_cli_refuses_a_gold_copy_in_disguise(world: Flask, tmp_path: Path, kind: str) -> None:
    before, objects = len(_rows(world)), _objects(world)
    data = _disguises(GOLD_TEST_A.read_bytes())[kind]
    code, out = _add(world, tmp_path, data, "inputs.bin", "trial")
    assert code == 1, (kind, out)
    assert "copy of the reference (gold) file" in out
    assert f"'{GOLD_TEST_A.name}' (gold of set test, subtask A, version 1)" in out
    assert len(_rows(world)) == before
    # Nothing is left in the store either.
    assert _objects(world) == objects


def test_an_archive_without_gold_and_a_partial_gold_are_accepted(
    world: Flask, tmp_path: Path
) -> None:
    gold_lines = GOLD_TEST_A.read_bytes().splitlines(keepends=True)
    archive = _zip({"inputs.txt": b"q1\tsome question\n", "half.txt": b"".join(gold_lines[:10])})
    code, out = _add(world, tmp_path, archive, "inputs.zip", "trial")
    assert code == 0, out
    assert _rows(world)[-1].sha256 == hashlib.sha256(archive).hexdigest()


def _flip_first_label(gold: bytes) -> bytes:
    lines = gold.decode().splitlines()
    first = lines[0].split("\t")
    first[-1] = "false" if first[-1] == "true" else "true"
    return ("\n".join(["\t".join(first), *lines[1:]]) + "\n").encode()


def test_an_old_gold_version_is_refused(world: Flask, tmp_path: Path) -> None:
    corrected = tmp_path / "corrected.relevancy"
    corrected.write_bytes(_flip_first_label(GOLD_TEST_A.read_bytes()))
    code, out = _cli(world, "set-gold", T3, "A", str(corrected), "--set", "test")
    assert code == 0, out
    # Version 1 is no longer current, but it is still gold; so is version 2.
    code, out = _add(world, tmp_path, gzip.compress(GOLD_TEST_A.read_bytes()), "v1.gz", "trial")
    assert code == 1 and "(gold of set test, subtask A, version 1)" in out, out
    crlf = corrected.read_bytes().replace(b"\n", b"\r\n")
    code, out = _add(world, tmp_path, crlf, "v2.txt", "trial")
    assert code == 1 and "(gold of set test, subtask A, version 2)" in out, out


def test_set_gold_refuses_a_gold_that_participants_may_already_download(
    world: Flask, tmp_path: Path
) -> None:
    dev = (
        GOLD_TEST_A.parent.parent
        / "dev"
        / "SemEval2016-Task3-CQA-QL-dev-subtaskA.xml.subtaskA.relevancy"
    )
    corrected = _flip_first_label(dev.read_bytes())
    # Not gold yet: it differs from the dev gold by one label, so it may be handed out.
    code, out = _add(world, tmp_path, _zip({"dev-labels.txt": corrected}), "dev.zip", "trial")
    assert code == 0, out
    data_id = _rows(world)[-1].id
    path = tmp_path / "dev-corrected.relevancy"
    path.write_bytes(corrected)
    code, out = _cli(world, "set-gold", T3, "A", str(path), "--set", "dev")
    assert code == 1, out
    assert f"data file 'dev.zip' (id {data_id}, phase trial, subtask A)" in out
    assert "delete that data file first" in out
    code, out = _cli(world, "data", "delete", T3, "A", str(data_id))
    assert code == 0, out
    code, out = _cli(world, "set-gold", T3, "A", str(path), "--set", "dev")
    assert code == 0, out


def test_organizer_page_refuses_a_gzipped_gold_with_its_name(world: Flask) -> None:
    org = _client(world, "org@example.org")
    token = csrf_from(_organizer_page(org))
    resp = org.post(
        f"/organizer/tasks/{T3}/A/data",
        data={
            "phase": "trial",
            "title": "Inputs",
            "csrf_token": token,
            "file": (io.BytesIO(gzip.compress(GOLD_TEST_A.read_bytes())), "inputs.gz"),
        },
    )
    body = resp.get_data(as_text=True)
    assert resp.status_code == 400
    assert GOLD_TEST_A.name in body and "copy of the reference (gold) file" in body
    assert len(_rows(world)) == 2


STS = Path(__file__).resolve().parents[2] / "leaderboard/tasks/presets/semeval2016-task1/english"


def test_sts_inputs_may_be_handed_out_but_not_a_gold_part(world: Flask, tmp_path: Path) -> None:
    code, out = _cli(
        world, "phase", "semeval2016-task1", "en", "trial", "--start", "2016-01-01T00:00:00Z"
    )
    assert code == 0, out
    inputs = (STS / "STS2016.input.headlines.txt").read_bytes()
    path = tmp_path / "headlines.input.txt.gz"
    path.write_bytes(gzip.compress(inputs))
    code, out = _cli(world, "data", "add", "semeval2016-task1", "en", str(path), "--phase", "trial")
    assert code == 0, out
    gold = (STS / "STS2016.gs.headlines.txt").read_bytes().replace(b"\n", b"\r\n")
    path = tmp_path / "scores.zip"
    path.write_bytes(_zip({"scores.txt": gold}))
    code, out = _cli(world, "data", "add", "semeval2016-task1", "en", str(path), "--phase", "trial")
    assert code == 1
    assert "'STS2016.gs.headlines.txt' (gold:headlines of set test, subtask en, version 1)" in out
    assert "its member 'scores.txt'" in out


def test_a_file_that_cannot_be_checked_is_refused(
    world: Flask, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = len(_rows(world))
    damaged = gzip.compress(b"some text\n" * 100)[:-30]
    code, out = _add(world, tmp_path, damaged, "broken.gz", "trial")
    assert code == 1 and "cannot be read" in out and "checked against the gold files" in out
    monkeypatch.setattr(taskdata, "INSPECT_LIMIT", 1000)
    code, out = _add(world, tmp_path, gzip.compress(b"x" * 5000), "big.gz", "trial")
    assert code == 1 and "too much to check that it holds no gold file" in out
    assert len(_rows(world)) == before
