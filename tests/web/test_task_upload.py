"""Tasks created and edited in the browser: upload, every problem listed, preview, confirm."""

from __future__ import annotations

import io
import re
import stat
import zipfile
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select
from werkzeug.test import TestResponse

from leaderboard.jobqueue import RUN_JOB
from leaderboard.models import AuditEvent, EvalSet, GoldFile, Job, Subtask, Task
from tests.conftest import AppFactory, csrf_from, login
from tests.dispatch import LocalDispatcher
from tests.runs import make_organizer, make_participant

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "classification"
DEFINITION = (EXAMPLE / "task.toml").read_text()
GOLD = (EXAMPLE / "gold.tsv").read_bytes()
NEW = "/organizer/tasks/new"
ORG = "org@example.org"


@pytest.fixture
def org_app(make_app: AppFactory) -> Flask:
    app = make_app()
    make_organizer(app, ORG)
    return app


@pytest.fixture
def org(org_app: Flask) -> FlaskClient:
    client = org_app.test_client()
    login(client, ORG, "organizer password")
    return client


def zipped(files: dict[str, bytes | str]) -> bytes:
    """Return a zip archive holding ``files`` (name -> content)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def bundle() -> bytes:
    return zipped({"task.toml": DEFINITION, "gold.tsv": GOLD})


def upload(client: FlaskClient, path: str = NEW, **fields: Any) -> TestResponse:
    """Post the upload form with the page's CSRF token; ``fields`` are the file fields."""
    token = csrf_from(client.get(path).get_data(as_text=True))
    data: dict[str, Any] = {"csrf_token": token}
    for name, value in fields.items():
        if isinstance(value, list):
            data[name] = [(io.BytesIO(c), n) for n, c in value]
        else:
            filename, content = value
            data[name] = (io.BytesIO(content), filename)
    return client.post(path, data=data, content_type="multipart/form-data")


def staged_name(page: TestResponse) -> str:
    """Return the staged upload the preview's confirm form names."""
    found = re.search(r'name="upload" value="([^"]*)"', page.get_data(as_text=True))
    assert found, page.get_data(as_text=True)
    return found.group(1)


def confirm(client: FlaskClient, page: TestResponse, path: str = NEW) -> TestResponse:
    """Press the preview's confirm button."""
    html = page.get_data(as_text=True)
    return client.post(
        f"{path}/confirm", data={"csrf_token": csrf_from(html), "upload": staged_name(page)}
    )


def stored(app: Flask) -> tuple[int, int, int]:
    """Return the number of tasks, of files in storage and of staged uploads."""
    ext = app.extensions["leaderboard"]
    settings = ext["settings"]
    with ext["sessionmaker"]() as session:
        tasks = session.scalar(select(func.count(Task.id))) or 0
    files = sum(1 for p in Path(settings.storage_dir).rglob("*") if p.is_file())
    staged_root = Path(settings.instance_dir) / "staged-tasks"
    staged = sum(1 for _ in staged_root.iterdir()) if staged_root.is_dir() else 0
    return tasks, files, staged


def problems(resp: TestResponse) -> list[str]:
    """Return the problems the page lists in its ``problems`` element, as text."""
    html = resp.get_data(as_text=True)
    block = re.search(r'id="problems".*?</ul>', html, re.S)
    assert block, html
    items = re.findall(r"<li>(.*?)</li>", block.group(0), re.S)
    return [re.sub(r"<[^>]+>", "", i) for i in items]


def shape(app: Flask, slug: str) -> dict[str, Any]:
    """Return what a hosted task is made of: definition, subtasks, sets and gold files."""
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        task = session.scalar(select(Task).where(Task.slug == slug))
        assert task is not None
        golds = session.execute(
            select(Subtask.slug, EvalSet.slug, GoldFile.role, GoldFile.sha256, GoldFile.version)
            .join(EvalSet, GoldFile.eval_set_id == EvalSet.id)
            .join(Subtask, EvalSet.subtask_id == Subtask.id)
            .where(Subtask.task_id == task.id, GoldFile.active_key.is_not(None))
        ).all()
        return {
            "title": task.title,
            "family": task.family,
            "definition": task.definition,
            "sha": task.definition_sha256,
            "sets": sorted((st.slug, es.slug) for st in task.subtasks for es in st.eval_sets),
            "gold": sorted(tuple(g) for g in golds),
        }


def test_bundle_preview_then_confirm_hosts_the_task_as_add_task_does(
    org_app: Flask, org: FlaskClient, make_app: AppFactory, tmp_path: Path
) -> None:
    before = stored(org_app)
    page = upload(org, bundle=("example.zip", bundle()))
    html = page.get_data(as_text=True)
    assert page.status_code == 200, html
    assert 'id="task-preview"' in html and 'id="problems"' not in html
    assert "example-sentiment" in html and "Subtask A: message polarity" in html
    assert re.search(r'data-set="test"><code>test</code>', html)
    assert re.search(
        r'data-measure="macro-F1"><td><code>macro-F1</code></td><td>[^<]+</td><td>yes', html
    )
    for key in ("Acc", "macro-F1[positive,negative]", "macro-R", "kappa"):
        assert f'data-measure="{key}"' in html
    assert '<code id="preview-table-style">ranked</code>' in html
    # Previewing stores nothing but the staged upload.
    assert stored(org_app)[:2] == before[:2] and stored(org_app)[2] == 1
    done = confirm(org, page)
    assert done.status_code == 302
    assert done.headers["Location"].endswith("/organizer/tasks/example-sentiment/A")
    assert "Task example-sentiment added" in org.get(done.headers["Location"]).get_data(
        as_text=True
    )
    assert stored(org_app)[0] == before[0] + 1 and stored(org_app)[2] == 0
    with org_app.extensions["leaderboard"]["sessionmaker"]() as session:
        event = session.scalar(
            select(AuditEvent)
            .where(AuditEvent.action == "install-task")
            .order_by(AuditEvent.id.desc())
        )
        assert event is not None and event.actor == ORG and event.task_slug == "example-sentiment"
    # The same files given to the command line make the same task.
    cli_app = make_app()
    folder = tmp_path / "cli"
    folder.mkdir()
    (folder / "task.toml").write_text(DEFINITION)
    (folder / "gold.tsv").write_bytes(GOLD)
    result = cli_app.test_cli_runner().invoke(
        args=["leaderboard", "add-task", str(folder / "task.toml")]
    )
    assert result.exit_code == 0, result.output
    assert shape(org_app, "example-sentiment") == shape(cli_app, "example-sentiment")
    # A second confirmation finds nothing staged; the slug now exists.
    assert confirm(org, page).status_code == 409
    again = upload(org, bundle=("example.zip", bundle()))
    assert again.status_code == 422
    assert any("exists already" in p and "key slug" in p for p in problems(again))


def test_bundle_in_a_folder_with_subfolders(org_app: Flask, org: FlaskClient) -> None:
    definition = DEFINITION.replace('gold = "gold.tsv"', 'gold = "gold/test.tsv"')
    data = zipped({"mytask/task.toml": definition, "mytask/gold/test.tsv": GOLD})
    page = upload(org, bundle=("mytask.zip", data))
    assert page.status_code == 200, page.get_data(as_text=True)
    assert 'gold <code dir="auto">gold/test.tsv</code>' in page.get_data(as_text=True)
    assert confirm(org, page).status_code == 302
    assert shape(org_app, "example-sentiment")["sets"] == [("A", "test")]


def test_definition_and_files_form(org_app: Flask, org: FlaskClient) -> None:
    page = upload(
        org,
        definition=("sentiment.toml", DEFINITION.encode()),
        files=[("gold.tsv", GOLD)],
    )
    assert page.status_code == 200, page.get_data(as_text=True)
    assert 'id="task-preview"' in page.get_data(as_text=True)
    assert confirm(org, page).status_code == 302
    got = shape(org_app, "example-sentiment")
    assert got["gold"][0][:3] == ("A", "test", "gold")
    import hashlib

    assert got["gold"][0][3] == hashlib.sha256(GOLD).hexdigest()


@pytest.mark.parametrize(
    ("definition", "gold", "expected"),
    [
        (
            DEFINITION.replace('title = "Example', 'title = = "Example', 1),
            GOLD,
            ["task.toml, line 4: not a valid TOML file"],
        ),
        (
            DEFINITION.replace('"kappa"]', '"kappa", "F9"]'),
            GOLD,
            ["task.toml, key subtasks[0].measures:", "F9"],
        ),
        (
            DEFINITION,
            GOLD.replace(b"tw-002\tneutral", b"tw-002\tbogus").replace(
                b"tw-004\tnegative", b"tw-004\tworse"
            ),
            ["gold.tsv, line 3:", "'bogus'", "gold.tsv, line 5:", "'worse'"],
        ),
        (
            DEFINITION.replace('gold = "gold.tsv"', 'gold = "missing.tsv"'),
            GOLD,
            ["task.toml, key subtasks[0].sets[0].gold: file 'missing.tsv' is not in the upload"],
        ),
    ],
    ids=["bad-toml", "unknown-measure", "two-bad-gold-lines", "missing-file"],
)
def test_refusals_list_every_problem_and_store_nothing(
    org_app: Flask, org: FlaskClient, definition: str, gold: bytes, expected: list[str]
) -> None:
    before = stored(org_app)
    for resp in (
        upload(org, bundle=("b.zip", zipped({"task.toml": definition, "gold.tsv": gold}))),
        upload(org, definition=("task.toml", definition.encode()), files=[("gold.tsv", gold)]),
    ):
        assert resp.status_code == 422, resp.get_data(as_text=True)
        listed = " | ".join(problems(resp))
        for part in expected:
            assert part in listed.replace("&#39;", "'"), listed
        assert 'id="task-preview"' not in resp.get_data(as_text=True)
        assert stored(org_app) == before


def test_every_set_problem_listed(org_app: Flask, org: FlaskClient) -> None:
    definition = DEFINITION + '\n[[subtasks.sets]]\nslug = "dev"\ngold = "dev.tsv"\n'
    resp = upload(
        org,
        bundle=(
            "b.zip",
            zipped(
                {
                    "task.toml": definition,
                    "gold.tsv": GOLD.replace(b"tw-002\tneutral", b"tw-002\tbogus"),
                    "dev.tsv": b"d-1\tpositive\nd-2\n",
                }
            ),
        ),
    )
    assert resp.status_code == 422
    listed = problems(resp)
    assert [p.split(":")[0] for p in listed] == ["gold.tsv, line 3", "dev.tsv, line 2"], listed


def test_every_definition_problem_listed(org_app: Flask, org: FlaskClient) -> None:
    """Each unknown key, missing file, unknown measure and bad gold line, at once."""
    bad = GOLD.replace(b"tw-002\tneutral", b"tw-002\tbogus")
    definition = DEFINITION.replace("description =", 'colour = "red"\ndescription =') + (
        '\n[[subtasks.sets]]\nslug = "dev"\ngold = "nowhere.tsv"\n'
        '\n[[subtasks]]\nslug = "B"\nmeasures = ["Acc", "F9"]\nofficial_measure = "Acc"\n'
        '[[subtasks.sets]]\nslug = "test"\ngold = "gold.tsv"\n'
        '\n[[subtasks]]\nslug = "C"\n[[subtasks.sets]]\nslug = "test"\ngold = "bad.tsv"\n'
    )
    before = stored(org_app)
    resp = upload(
        org, bundle=("b.zip", zipped({"task.toml": definition, "gold.tsv": GOLD, "bad.tsv": bad}))
    )
    assert resp.status_code == 422
    listed = [p.replace("&#39;", "'") for p in problems(resp)]
    assert [p.split(": ")[0] for p in listed] == [
        "task.toml, key colour",
        "task.toml, key subtasks[0].sets[1].gold",
        "task.toml, key subtasks[1].measures",
        "bad.tsv, line 3",
    ], listed
    assert "file 'nowhere.tsv' is not in the upload" in listed[1] and "'F9'" in listed[2]
    assert "subtask C (test): label 'bogus'" in listed[3]
    assert stored(org_app) == before
    # The command line refuses the same definition (its first problem decides, as here).
    folder = Path(org_app.extensions["leaderboard"]["settings"].instance_dir) / "cli-task"
    folder.mkdir()
    (folder / "task.toml").write_text(definition)
    result = org_app.test_cli_runner().invoke(
        args=["leaderboard", "add-task", str(folder / "task.toml")]
    )
    assert result.exit_code == 1 and "colour" in result.output


def _zip_with_link() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("task.toml", DEFINITION)
        info = zipfile.ZipInfo("gold.tsv")
        info.create_system = 3
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(info, "/etc/passwd")
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (zipped({"task.toml": DEFINITION, "../gold.tsv": GOLD}), "path traversal"),
        (zipped({"task.toml": DEFINITION, "/tmp/gold.tsv": GOLD}), "absolute path"),
        (_zip_with_link(), "is a link"),
        (zipped({"task.toml": DEFINITION, **{f"f{n}.tsv": b"x" for n in range(70)}}), "more than"),
        (zipped({"gold.tsv": GOLD}), "holds no definition file task.toml"),
        (b"not a zip at all", "not a .zip"),
        (
            zipped({"task.toml": DEFINITION.replace('"gold.tsv"', '"/etc/passwd"')}),
            "file '/etc/passwd' is not in the upload",
        ),
        (
            zipped({"task.toml": DEFINITION.replace('"gold.tsv"', f'"{"../" * 40}etc/passwd"')}),
            "key subtasks[0].sets[0].gold: file '../../../",
        ),
    ],
    ids=[
        "traversal",
        "absolute",
        "symlink",
        "too-many",
        "no-definition",
        "not-zip",
        "absolute-gold",
        "escaping-gold",
    ],
)
def test_unsafe_bundles_are_refused(
    org_app: Flask, org: FlaskClient, data: bytes, expected: str
) -> None:
    before = stored(org_app)
    resp = upload(org, bundle=("b.zip", data))
    assert resp.status_code == 422, resp.get_data(as_text=True)
    assert expected in " ".join(problems(resp)).replace("&#39;", "'"), problems(resp)
    assert stored(org_app) == before


def test_zip_bomb_is_refused(make_app: AppFactory) -> None:
    app = make_app(max_decompressed_mb=1)
    make_organizer(app, ORG)
    client = app.test_client()
    login(client, ORG, "organizer password")
    before = stored(app)
    bomb = zipped({"task.toml": DEFINITION, "gold.tsv": b"\0" * 5_000_000})
    assert len(bomb) < 50_000
    resp = upload(client, bundle=("bomb.zip", bomb))
    assert resp.status_code == 422
    assert "once decompressed" in " ".join(problems(resp))
    assert stored(app) == before
    # Members each under the limit are refused by their unpacked total, before it is reached.
    spread = zipped(
        {"task.toml": DEFINITION, **{f"part{n}.tsv": b"\0" * 600_000 for n in range(3)}}
    )
    resp = upload(client, bundle=("spread.zip", spread))
    assert resp.status_code == 422
    assert f"add up to more than {1024 * 1024:,} bytes" in " ".join(problems(resp)), problems(resp)
    assert stored(app) == before


def test_definition_form_refuses_bad_names(org_app: Flask, org: FlaskClient) -> None:
    before = stored(org_app)
    resp = upload(
        org,
        definition=("task.toml", DEFINITION.encode()),
        files=[("gold.tsv", GOLD), ("sub/gold.tsv", GOLD), ("task.toml", b"")],
    )
    assert resp.status_code == 422
    listed = problems(resp)
    assert len(listed) == 2 and all("share this name" in p for p in listed), listed
    assert upload(org).status_code == 422
    both = upload(org, bundle=("b.zip", bundle()), definition=("task.toml", b"x"))
    assert both.status_code == 422 and "not both" in " ".join(problems(both))
    assert stored(org_app) == before


def test_non_organizers_and_forged_forms_are_refused(org_app: Flask, org: FlaskClient) -> None:
    make_participant(org_app, "Aurora", "alice@example.org")
    anon = org_app.test_client()
    assert anon.get(NEW).status_code == 302
    alice = org_app.test_client()
    login(alice, "alice@example.org", "correct horse battery")
    assert alice.get(NEW).status_code == 403
    token = csrf_from(alice.get("/account").get_data(as_text=True))
    before = stored(org_app)
    resp = alice.post(
        NEW,
        data={"csrf_token": token, "bundle": (io.BytesIO(bundle()), "b.zip")},
        content_type="multipart/form-data",
    )
    assert resp.status_code == 403
    assert alice.post(f"{NEW}/confirm", data={"csrf_token": token}).status_code == 403
    assert alice.get("/organizer/tasks/semeval2016-task3/A/definition").status_code == 403
    # Without its CSRF token the organizer's own upload is refused too.
    forged = org.post(
        NEW, data={"bundle": (io.BytesIO(bundle()), "b.zip")}, content_type="multipart/form-data"
    )
    assert forged.status_code == 400
    page = upload(org, bundle=("b.zip", bundle()))
    assert org.post(f"{NEW}/confirm").status_code == 400
    assert stored(org_app)[:2] == before[:2]
    # Another organizer's session has nothing staged: naming this upload in a form is not enough.
    make_organizer(org_app, "other@example.org")
    other = org_app.test_client()
    login(other, "other@example.org", "organizer password")
    taken = other.post(
        f"{NEW}/confirm",
        data={
            "csrf_token": csrf_from(other.get(NEW).get_data(as_text=True)),
            "upload": staged_name(page),
        },
    )
    assert taken.status_code == 409
    assert confirm(org, page).status_code == 302


def _host(app: Flask, tmp_path: Path) -> Path:
    folder = tmp_path / "hosted"
    folder.mkdir()
    (folder / "task.toml").write_text(DEFINITION)
    (folder / "gold.tsv").write_bytes(GOLD)
    result = app.test_cli_runner().invoke(
        args=["leaderboard", "add-task", str(folder / "task.toml")]
    )
    assert result.exit_code == 0, result.output
    return folder


EDIT = "/organizer/tasks/example-sentiment/A/definition"


def test_edit_makes_a_new_gold_version_and_queues_a_rescore(
    org_app: Flask, org: FlaskClient, tmp_path: Path
) -> None:
    _host(org_app, tmp_path)
    subtask_page = org.get("/organizer/tasks/example-sentiment/A").get_data(as_text=True)
    assert f'href="{EDIT}" id="edit-definition"' in subtask_page
    fixed = GOLD.replace(b"tw-002\tneutral", b"tw-002\tpositive")
    definition = DEFINITION.replace("Label each message", "Label every message")
    page = upload(org, EDIT, bundle=("b.zip", zipped({"task.toml": definition, "gold.tsv": fixed})))
    html = page.get_data(as_text=True)
    assert page.status_code == 200, html
    assert 'id="task-preview"' in html
    assert "subtask A (test): new gold file gold.tsv (version 2 or later)" in html
    with org_app.extensions["leaderboard"]["sessionmaker"]() as session:
        assert session.scalar(select(func.count(Job.id))) == 0
    done = confirm(org, page, EDIT)
    assert done.status_code == 302
    assert done.headers["Location"].endswith("/organizer/tasks/example-sentiment/A")
    shown = org.get(done.headers["Location"]).get_data(as_text=True)
    assert "Definition of example-sentiment updated; re-scoring queued for A (test): job" in shown
    got = shape(org_app, "example-sentiment")
    import hashlib

    assert got["gold"] == [("A", "test", "gold", hashlib.sha256(fixed).hexdigest(), 2)]
    assert got["definition"]["description"].startswith("Label every message")
    ext = org_app.extensions["leaderboard"]
    with ext["sessionmaker"]() as session:
        job = session.scalar(select(Job))
        assert job is not None and job.purpose == "rescore"
        actions = list(
            session.scalars(
                select(AuditEvent.action).where(AuditEvent.actor == ORG).order_by(AuditEvent.id)
            )
        )
        assert actions == ["update-task", "set-gold", "request-rescore"]
    dispatcher: LocalDispatcher = ext["dispatcher"]
    assert (RUN_JOB, (job.id,)) in dispatcher.sent
    # The worker re-scores the set as after a gold correction.
    worker = org_app.test_cli_runner().invoke(args=["leaderboard", "worker", "--once"])
    assert worker.output == f"re-score {job.id}: done\n"


def test_edit_refusals(org_app: Flask, org: FlaskClient, tmp_path: Path) -> None:
    _host(org_app, tmp_path)
    before = shape(org_app, "example-sentiment")
    counted = stored(org_app)
    cases = [
        (DEFINITION, GOLD, "unchanged; nothing to do"),
        (
            DEFINITION.replace('slug = "A"', 'slug = "B"'),
            GOLD,
            "subtask 'A' is missing; an edit may add subtasks, not remove them",
        ),
        (
            DEFINITION.replace('slug = "test"', 'slug = "final"'),
            GOLD,
            "set 'test' of subtask 'A' is missing; an edit may add sets, not remove them",
        ),
        (
            DEFINITION.replace('slug = "example-sentiment"', 'slug = "other"'),
            GOLD,
            "key slug",
        ),
        (
            DEFINITION.replace('slug = "example-sentiment"', 'slug = "other"'),
            GOLD,
            "is 'other'; an edit keeps the task's slug 'example-sentiment'",
        ),
        (DEFINITION, GOLD + b"tw-999\tnope\n", "'nope'"),
    ]
    for definition, gold, expected in cases:
        resp = upload(
            org, EDIT, bundle=("b.zip", zipped({"task.toml": definition, "gold.tsv": gold}))
        )
        assert resp.status_code == 422, (expected, resp.get_data(as_text=True))
        assert expected in " ".join(problems(resp)).replace("&#39;", "'"), problems(resp)
    assert shape(org_app, "example-sentiment") == before
    assert stored(org_app) == counted
    # A new subtask may be added; the existing ones keep their files.
    added = (
        DEFINITION
        + '\n[[subtasks]]\nslug = "B"\n[[subtasks.sets]]\nslug = "test"\ngold = "gold.tsv"\n'
    )
    page = upload(org, EDIT, bundle=("b.zip", zipped({"task.toml": added, "gold.tsv": GOLD})))
    assert page.status_code == 200, page.get_data(as_text=True)
    assert "new subtask B (test)" in page.get_data(as_text=True)
    assert confirm(org, page, EDIT).status_code == 302
    assert shape(org_app, "example-sentiment")["sets"] == [("A", "test"), ("B", "test")]
    assert org.get("/organizer/tasks/nope/A/definition").status_code == 404


def test_dashboard_links_the_new_task_form(org: FlaskClient) -> None:
    html = org.get("/organizer/").get_data(as_text=True)
    assert f'href="{NEW}" id="new-task"' in html
    page = org.get(NEW).get_data(as_text=True)
    for field in ('name="bundle"', 'name="definition"', 'name="files" multiple'):
        assert field in page


def test_archive_keeps_folders_for_bundles_only() -> None:
    from leaderboard.formats.archive import ArchiveError, ArchiveLimits, read_archive

    data = zipped({"t/a/gold.tsv": b"1", "t/b/gold.tsv": b"2", "./t/task.toml": b"x"})
    got = read_archive(data, limits=ArchiveLimits(), keep_dirs=True)
    assert got == {"t/a/gold.tsv": b"1", "t/b/gold.tsv": b"2", "t/task.toml": b"x"}
    # Run archives still match members by their basenames, which must be unique.
    with pytest.raises(ArchiveError, match="two files in the archive are named 'gold.tsv'"):
        read_archive(data, limits=ArchiveLimits())


def test_a_staged_upload_expires_after_an_hour(org_app: Flask, org: FlaskClient) -> None:
    import os
    import time

    page = upload(org, bundle=("b.zip", bundle()))
    assert page.status_code == 200
    root = Path(org_app.extensions["leaderboard"]["settings"].instance_dir) / "staged-tasks"
    (folder,) = list(root.iterdir())
    old = time.time() - 3601
    os.utime(folder, (old, old))
    late = confirm(org, page)
    assert late.status_code == 404 and "expired" in late.get_data(as_text=True)
    assert not folder.exists() and "example-sentiment" not in slugs(org_app)
    # Any new upload also sweeps the stale ones away.
    stale = root / ("x" * 32)
    stale.mkdir()
    os.utime(stale, (old, old))
    assert upload(org, bundle=("b.zip", bundle())).status_code == 200
    assert not stale.exists() and len(list(root.iterdir())) == 1


def slugs(app: Flask) -> list[str]:
    """Return the hosted tasks' slugs."""
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        return list(session.scalars(select(Task.slug)))


def test_one_staged_upload_per_session_and_confirm_installs_the_previewed_one(
    org_app: Flask, org: FlaskClient
) -> None:
    root = Path(org_app.extensions["leaderboard"]["settings"].instance_dir) / "staged-tasks"
    first = upload(org, bundle=("b.zip", bundle()))
    # The form re-sent: the earlier upload is replaced, one folder is left.
    renamed = DEFINITION.replace('slug = "example-sentiment"', 'slug = "renamed"')
    second = upload(org, bundle=("b.zip", zipped({"task.toml": renamed, "gold.tsv": GOLD})))
    assert first.status_code == second.status_code == 200
    assert [p.name for p in root.iterdir()] == [staged_name(second)]
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert stat.S_IMODE((root / staged_name(second) / "gold.tsv").stat().st_mode) == 0o600
    # The first preview no longer confirms anything, not even the newer upload.
    stale = confirm(org, first)
    assert stale.status_code == 409
    assert "This preview is no longer current; upload again." in stale.get_data(as_text=True)
    hosted = slugs(org_app)
    assert "renamed" not in hosted and "example-sentiment" not in hosted
    assert confirm(org, second).status_code == 302
    assert sorted(slugs(org_app)) == sorted([*hosted, "renamed"])
    assert list(root.iterdir()) == []
    # A repeated confirmation answers 409, never 500, and installs nothing more.
    again = confirm(org, second)
    assert again.status_code == 409, again.get_data(as_text=True)
    assert sorted(slugs(org_app)) == sorted([*hosted, "renamed"])


def test_cancel_removes_the_staged_upload(org_app: Flask, org: FlaskClient, tmp_path: Path) -> None:
    root = Path(org_app.extensions["leaderboard"]["settings"].instance_dir) / "staged-tasks"
    for path in (NEW, EDIT):
        if path == EDIT:
            _host(org_app, tmp_path)
        definition = DEFINITION.replace("Label each message", "Label every message")
        page = upload(
            org, path, bundle=("b.zip", zipped({"task.toml": definition, "gold.tsv": GOLD}))
        )
        assert 'id="cancel-task"' in page.get_data(as_text=True)
        html = page.get_data(as_text=True)
        done = org.post(f"{path}/cancel", data={"csrf_token": csrf_from(html)})
        assert done.status_code == 302 and done.headers["Location"].endswith(path)
        assert "The upload was cancelled" in org.get(path).get_data(as_text=True)
        assert list(root.iterdir()) == []
        assert confirm(org, page, path).status_code == 409
    assert shape(org_app, "example-sentiment")["definition"]["description"].startswith(
        "Label each message"
    )


def test_simultaneous_confirmations_install_once(org_app: Flask, org: FlaskClient) -> None:
    """Four confirmations of one upload at once: exactly one takes it, the others get 409."""
    import threading

    from leaderboard.services.common.errors import Conflict
    from leaderboard.services.upload import core as uploads

    settings = org_app.extensions["leaderboard"]["settings"]
    token = staged_name(upload(org, bundle=("b.zip", bundle())))
    barrier = threading.Barrier(4)
    outcomes: list[str] = []

    def take() -> None:
        barrier.wait()
        try:
            uploads.claim(settings, token)
            outcomes.append("claimed")
        except Conflict as exc:
            outcomes.append(str(exc))

    threads = [threading.Thread(target=take) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    refused = "This upload was already confirmed or cancelled; upload the task again."
    assert sorted(outcomes) == sorted(["claimed", refused, refused, refused])


def test_edit_refuses_a_new_gold_that_participants_may_download(
    org_app: Flask, org: FlaskClient, tmp_path: Path
) -> None:
    """A new set's gold, even zipped under another name, may not be a downloadable data file."""
    _host(org_app, tmp_path)
    dev = b"d-1\tpositive\nd-2\tnegative\nd-3\tneutral\n"
    cli = org_app.test_cli_runner()
    phase = ["phase", "example-sentiment", "A", "trial"]
    window = ["--start", "2016-01-01T00:00:00Z", "--end", "2016-01-20T00:00:00Z"]
    result = cli.invoke(args=["leaderboard", *phase, *window])
    assert result.exit_code == 0, result.output
    handed = tmp_path / "dev-inputs.zip"
    handed.write_bytes(zipped({"labels.txt": dev}))
    result = cli.invoke(
        args=[
            "leaderboard",
            "data",
            "add",
            "example-sentiment",
            "A",
            str(handed),
            "--phase",
            "trial",
        ]
    )
    assert result.exit_code == 0, result.output
    before = shape(org_app, "example-sentiment")
    new_set = DEFINITION + '\n[[subtasks.sets]]\nslug = "dev"\ngold = "dev.tsv"\n'
    new_subtask = (
        DEFINITION
        + '\n[[subtasks]]\nslug = "B"\n[[subtasks.sets]]\nslug = "test"\ngold = "dev.tsv"\n'
    )
    for definition in (new_set, new_subtask):
        files = {"task.toml": definition, "gold.tsv": GOLD, "dev.tsv": dev}
        resp = upload(org, EDIT, bundle=("b.zip", zipped(files)))
        assert resp.status_code == 422, resp.get_data(as_text=True)
        assert [p.replace("&#39;", "'") for p in problems(resp)] == [
            "dev.tsv: is the text of the data file 'dev-inputs.zip' that participants may "
            "download; delete that data file first"
        ]
    assert shape(org_app, "example-sentiment") == before
    # Another gold for the new set is accepted.
    files = {"task.toml": new_set, "gold.tsv": GOLD, "dev.tsv": b"d-1\tnegative\nd-9\tneutral\n"}
    assert upload(org, EDIT, bundle=("b.zip", zipped(files))).status_code == 200


@pytest.mark.parametrize("kind", ["gold", "section"])
def test_a_file_outside_the_upload_reads_as_a_missing_one(
    org_app: Flask, org: FlaskClient, tmp_path: Path, kind: str
) -> None:
    """No answer tells whether a file exists on the server: /etc/passwd reads as a missing file."""
    outside = tmp_path / "real.tsv"
    outside.write_bytes(GOLD)
    instance = Path(org_app.extensions["leaderboard"]["settings"].instance_dir)
    (instance / "beside.tsv").write_bytes(GOLD)
    names = [
        "/etc/passwd",
        str(outside),
        "../beside.tsv",
        "../../etc/passwd",
        "no-such-file.tsv",
        "../no-such-file.tsv",
        "/no/such/file",
    ]
    answers = []
    for name in names:
        if kind == "gold":
            definition = DEFINITION.replace('gold = "gold.tsv"', f'gold = "{name}"')
            key = "subtasks[0].sets[0].gold"
        else:
            definition = DEFINITION.replace(
                "description =", f'overview = {{ file = "{name}" }}\ndescription ='
            )
            key = "overview.file"
        resp = upload(org, bundle=("b.zip", zipped({"task.toml": definition, "gold.tsv": GOLD})))
        assert resp.status_code == 422, resp.get_data(as_text=True)
        listed = [p.replace("&#39;", "'") for p in problems(resp)]
        assert listed == [f"task.toml, key {key}: file '{name}' is not in the upload"], listed
        answers.append([p.replace(name, "NAME") for p in listed])
    assert all(a == answers[0] for a in answers), answers


#: One subtask, four independent problems: an unknown key, an unknown measure, a missing
#: gold file (of set dev) and a bad gold line (of set test).
FOUR_PROBLEMS = DEFINITION.replace("description =", 'colour = "red"\ndescription =').replace(
    '"kappa"]', '"kappa", "F9"]'
) + ('\n[[subtasks.sets]]\nslug = "dev"\ngold = "nowhere.tsv"\n')
FOUR_GOLD = GOLD.replace(b"tw-002\tneutral", b"tw-002\tbogus")


def _four_listed(resp: TestResponse) -> None:
    assert resp.status_code == 422, resp.get_data(as_text=True)
    listed = [p.replace("&#39;", "'") for p in problems(resp)]
    assert [p.split(": ")[0] for p in listed] == [
        "task.toml, key colour",
        "task.toml, key subtasks[0].sets[1].gold",
        "task.toml, key subtasks[0].measures",
        "gold.tsv, line 3",
    ], listed
    assert listed[0].endswith("unknown key")
    assert listed[1].endswith("file 'nowhere.tsv' is not in the upload")
    assert "unknown measure 'F9'" in listed[2]
    assert "subtask A (test): label 'bogus' is not declared" in listed[3]


def test_four_problems_of_one_subtask_listed_at_once_in_the_upload_and_the_edit(
    org_app: Flask, org: FlaskClient, tmp_path: Path
) -> None:
    files = {"task.toml": FOUR_PROBLEMS, "gold.tsv": FOUR_GOLD}
    _four_listed(upload(org, bundle=("b.zip", zipped(files))))
    _host(org_app, tmp_path)
    before = shape(org_app, "example-sentiment")
    _four_listed(upload(org, EDIT, bundle=("b.zip", zipped(files))))
    assert shape(org_app, "example-sentiment") == before


def test_add_task_prints_every_problem(org_app: Flask, tmp_path: Path) -> None:
    folder = tmp_path / "four"
    folder.mkdir()
    (folder / "task.toml").write_text(FOUR_PROBLEMS)
    (folder / "gold.tsv").write_bytes(FOUR_GOLD)
    path = folder / "task.toml"
    result = org_app.test_cli_runner().invoke(args=["leaderboard", "add-task", str(path)])
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    # The first line reads as before this listing; one line follows per further problem.
    assert lines[0] == f"Error: {path}: the task definition was refused: colour: unknown key"
    assert lines[1] == f"Error: {path}: subtasks[0].sets[1].gold: file not found: nowhere.tsv"
    assert lines[2].startswith(f"Error: {path}: subtasks[0].measures: unknown measure 'F9'")
    assert lines[3] == (
        f"Error: {folder / 'gold.tsv'}:3: subtask A (test): label 'bogus' is not declared "
        "(allowed: 'positive', 'negative', 'neutral'; aliases 'pos', 'neg', 'neu')."
    )
    assert len(lines) == 4
    assert "example-sentiment" not in slugs(org_app)


def test_four_parallel_confirm_requests_install_the_task_once(
    org_app: Flask, org: FlaskClient
) -> None:
    """The same preview confirmed from four requests at once: one 302, three 409, no 500."""
    import threading

    page = upload(org, bundle=("b.zip", bundle()))
    data = {"csrf_token": csrf_from(page.get_data(as_text=True)), "upload": staged_name(page)}
    cookie = org.get_cookie("session")
    assert cookie is not None
    clients = []
    for _ in range(4):
        client = org_app.test_client()
        client.set_cookie("session", cookie.value)
        clients.append(client)
    barrier = threading.Barrier(4)
    statuses: list[int] = []

    def press(client: FlaskClient) -> None:
        barrier.wait()
        statuses.append(client.post(f"{NEW}/confirm", data=data).status_code)

    threads = [threading.Thread(target=press, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [302, 409, 409, 409]
    assert slugs(org_app).count("example-sentiment") == 1
    assert stored(org_app)[2] == 0


def test_a_worker_removes_expired_uploads_with_no_new_upload(
    org_app: Flask, org: FlaskClient
) -> None:
    """An upload nobody confirms or cancels is gone after an hour, with no upload after it."""
    import os
    import time

    fresh = upload(org, bundle=("b.zip", bundle()))
    assert fresh.status_code == 200
    root = Path(org_app.extensions["leaderboard"]["settings"].instance_dir) / "staged-tasks"
    (kept,) = list(root.iterdir())
    expired = root / ("y" * 32)
    expired.mkdir()
    old = time.time() - 3601
    os.utime(expired, (old, old))
    result = org_app.test_cli_runner().invoke(args=["leaderboard", "worker", "--once"])
    assert result.exit_code == 0, result.output
    assert not expired.exists()
    assert list(root.iterdir()) == [kept]


#: One subtask, whose problems a set or subtask set aside could not list past: the task's and
#: the subtask's official measures, the subtask's default set, an unknown key, a bad gold line.
FIVE_PROBLEMS = (
    DEFINITION.replace('official_measure = "macro-F1"', 'official_measure = "macro-F2"')
    .replace("random_seed = 7", 'random_seed = 7\nofficial_measure = "nope"\ndefault_set = "zzz"')
    .replace("description =", 'colour = "red"\ndescription =')
)


def test_problems_of_a_sole_subtask_are_all_listed(org_app: Flask, org: FlaskClient) -> None:
    files = {"task.toml": FIVE_PROBLEMS, "gold.tsv": FOUR_GOLD}
    resp = upload(org, bundle=("b.zip", zipped(files)))
    assert resp.status_code == 422
    listed = [p.replace("&#39;", "'") for p in problems(resp)]
    assert listed == [
        "task.toml, key colour: unknown key",
        "task.toml, key official_measure: 'macro-F2' is not among the measures "
        "['macro-F1', 'Acc', 'macro-F1[positive,negative]', 'macro-R', 'kappa']",
        "task.toml, key subtasks[0].default_set: 'zzz' is not one of its sets",
        "task.toml, key subtasks[0].official_measure: 'nope' is not among the measures "
        "['macro-F1', 'Acc', 'macro-F1[positive,negative]', 'macro-R', 'kappa']",
        "gold.tsv, line 3: subtask A (test): label 'bogus' is not declared "
        "(allowed: 'positive', 'negative', 'neutral'; aliases 'pos', 'neg', 'neu').",
    ]
    assert "example-sentiment" not in slugs(org_app)


def test_a_key_whose_removal_is_refused_ends_the_listing_without_a_made_up_problem(
    org_app: Flask, org: FlaskClient
) -> None:
    """A wrong required key is listed once; its absence, which the listing caused, is not."""
    definition = DEFINITION.replace('title = "Example', "title = 7 #").replace(
        "description =", 'colour = "red"\ndescription ='
    )
    resp = upload(org, bundle=("b.zip", zipped({"task.toml": definition, "gold.tsv": GOLD})))
    assert resp.status_code == 422
    listed = [p.split(": ")[0] for p in problems(resp)]
    assert listed == ["task.toml, key colour", "task.toml, key title"]
