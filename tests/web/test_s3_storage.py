"""Files on S3-compatible storage, against a real S3 server (SeaweedFS) started on loopback."""

from __future__ import annotations

import hashlib
import io
import shutil
import urllib.request
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from leaderboard.clock import FixedClock
from leaderboard.config import load_settings
from leaderboard.models import Run, TaskDataFile
from leaderboard.storage import LocalStore, S3Store, copy_store, key_for, open_store
from tests.conftest import AppFactory, csrf_from, login
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
from tests.seaweed import S3Server

T3 = "semeval2016-task3"
SUBMIT_A = f"/tasks/{T3}/A/submit"
MB = 1024 * 1024


def _prefix() -> str:
    return f"t-{uuid.uuid4().hex[:10]}"


def _s3_store(server: S3Server, prefix: str, **kwargs: Any) -> S3Store:
    return S3Store(server.bucket, prefix, endpoint_url=server.endpoint, **kwargs)


@pytest.fixture
def s3_app(make_app: AppFactory, s3_server: S3Server) -> Iterator[Any]:
    """Return a factory of apps storing files in a fresh S3 prefix; nothing stored on disk."""

    def factory(**settings: object) -> Flask:
        url = f"s3://{s3_server.bucket}/{_prefix()}"
        app = make_app(storage_url=url, s3_endpoint_url=s3_server.endpoint, **settings)
        local = LocalStore(app.extensions["leaderboard"]["settings"].storage_dir)
        store = app.extensions["leaderboard"]["store"]
        assert isinstance(store, S3Store)
        # The template's preset gold files move to the bucket; the local copies go away.
        report = copy_store(local, store)
        assert report.copied and not report.corrupt
        shutil.rmtree(local.root / "objects")
        return app

    yield factory


def _digest(stream: io.BufferedIOBase | Any) -> str:
    h = hashlib.sha256()
    while chunk := stream.read(MB):
        h.update(chunk)
    return h.hexdigest()


# --------------------------------------------------------------------------------- the store


def test_the_default_store_is_the_local_folder_and_a_bad_url_is_refused(tmp_path: Path) -> None:
    settings = load_settings({"instance_dir": tmp_path, "secret_key": "x"})
    store = open_store(settings.storage_url, default_dir=settings.storage_dir)
    assert isinstance(store, LocalStore) and store.root == tmp_path / "storage"
    there = open_store((tmp_path / "elsewhere").as_uri(), default_dir=settings.storage_dir)
    assert isinstance(there, LocalStore) and there.root == tmp_path / "elsewhere"
    with pytest.raises(ValueError, match="LEADERBOARD_STORAGE_URL"):
        load_settings({"instance_dir": tmp_path, "secret_key": "x", "storage_url": "ftp://x/y"})


def test_s3_store_round_trip_small_and_multipart(s3_server: S3Server, tmp_path: Path) -> None:
    store = _s3_store(s3_server, _prefix(), tmp_dir=tmp_path / "spool", part_bytes=5 * MB)
    key, sha = store.put(b"one line\n")
    assert sha == hashlib.sha256(b"one line\n").hexdigest() and key == key_for(sha)
    assert store.exists(key) and store.read(key) == b"one line\n" and store.size(key) == 9
    assert not store.exists(key_for("f" * 64))
    # A 12 MB file goes up in parts from a stream and comes back streamed, byte for byte.
    big = tmp_path / "big.bin"
    with big.open("wb") as f:
        for i in range(12):
            f.write(hashlib.sha256(str(i).encode()).digest() * (MB // 32))
    expected = hashlib.sha256(big.read_bytes()).hexdigest()
    with big.open("rb") as f:
        big_key, big_sha = store.put_stream(f)
    assert big_sha == expected and store.size(big_key) == 12 * MB
    head = s3_server.client().head_object(Bucket=s3_server.bucket, Key=store.prefix + big_key)
    assert head["ETag"].strip('"').endswith("-3"), head["ETag"]  # three parts of 5, 5, 2 MB
    with store.open(big_key) as reader:
        assert _digest(reader) == expected
    with store.open(big_key) as reader:  # a family may look at the start, then start over
        start = reader.read(100)
        reader.seek(0)
        assert reader.read(100) == start
        reader.seek(11 * MB)
        assert reader.read() == big.read_bytes()[11 * MB :]
    assert sorted(store.iter_keys()) == sorted([key, big_key])
    assert list(tmp_path.joinpath("spool").iterdir()) == []  # the spooled copies are gone


# ------------------------------------------------------------------------------- the server


def _form_upload(client: Any, data: bytes) -> Any:
    page = client.get(SUBMIT_A)
    assert page.status_code == 200
    fields = {
        "csrf_token": csrf_from(page.get_data(as_text=True)),
        "eval_set": "test",
        "slot": "primary",
        "name": "my-run",
        "description": "a system",
        "file": (io.BytesIO(data), "subtask_A_primary.txt"),
    }
    return client.post(SUBMIT_A, data=fields, content_type="multipart/form-data")


def _scores(app: Flask) -> dict[str, dict[str, float]]:
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        runs = s.scalars(select(Run).where(Run.kind == "run").order_by(Run.id)).all()
        return {
            run.files["file"]["sha256"]: {sc.measure: sc.value for sc in run.scores if sc.current}
            for run in runs
        }


def test_an_s3_app_takes_uploads_scores_them_and_gives_the_files_back(
    s3_app: Any, make_app: AppFactory
) -> None:
    app = s3_app()
    local_app = make_app()
    for server in (app, local_app):
        make_participant(server, "Aurora", "alice@example.org")
        make_participant(server, "Borealis", "bob@example.org")
    client = app.test_client()
    login(client, "alice@example.org", "correct horse battery")
    assert _form_upload(client, oracle_run()).status_code == 302
    token = token_for(app, "alice@example.org")
    run = accepted(api_upload(client, token, constant_run(), slot="contrastive1"))
    local_client = local_app.test_client()
    login(local_client, "alice@example.org", "correct horse battery")
    assert _form_upload(local_client, oracle_run()).status_code == 302
    accepted(
        api_upload(
            local_client,
            token_for(local_app, "alice@example.org"),
            constant_run(),
            slot="contrastive1",
        )
    )
    scores = _scores(app)
    assert len(scores) == 2 and all(scores.values())
    assert scores == _scores(local_app)  # scored the same as from the local folder
    # Nothing was written to the local folder: every file is an object.
    objects = app.extensions["leaderboard"]["settings"].storage_dir / "objects"
    assert not objects.exists()
    store = app.extensions["leaderboard"]["store"]
    for sha in scores:
        assert store.exists(key_for(sha))
    got = client.get(f"/api/v1/runs/{run['id']}/file", headers={"Authorization": f"Bearer {token}"})
    assert got.status_code == 200 and got.data == constant_run()
    assert "file.txt" in got.headers["Content-Disposition"]
    bob = token_for(app, "bob@example.org")
    refused = client.get(
        f"/api/v1/runs/{run['id']}/file", headers={"Authorization": f"Bearer {bob}"}
    )
    assert refused.status_code == 404


def test_presigned_mode_redirects_to_a_link_that_gives_the_bytes(s3_app: Any) -> None:
    app = s3_app(s3_presigned=True)
    make_participant(app, "Aurora", "alice@example.org")
    make_participant(app, "Borealis", "bob@example.org")
    client = app.test_client()
    token = token_for(app, "alice@example.org")
    run = accepted(api_upload(client, token, oracle_run(), filenames={"file": "ours.txt"}))
    path = f"/api/v1/runs/{run['id']}/file"
    bob = token_for(app, "bob@example.org")
    # Who may have the file is checked before any link is made.
    assert client.get(path, headers={"Authorization": f"Bearer {bob}"}).status_code == 404
    resp = client.get(path, headers={"Authorization": f"Bearer {token}"})
    assert resp.status_code == 302
    location = resp.headers["Location"]
    assert location.startswith(app.extensions["leaderboard"]["settings"].s3_endpoint_url)
    with urllib.request.urlopen(location, timeout=10) as answer:  # noqa: S310 (loopback)
        assert answer.read() == oracle_run()
        assert 'filename="ours.txt"' in answer.headers["Content-Disposition"]


@pytest.mark.parametrize("presigned", [False, True])
def test_task_data_on_s3_is_checked_against_gold_and_downloaded(
    s3_app: Any, tmp_path: Path, presigned: bool
) -> None:
    app = s3_app(clock=FixedClock(datetime(2016, 1, 15, 12, 0, tzinfo=UTC)), s3_presigned=presigned)
    make_organizer(app, "org@example.org")
    make_participant(app, "Aurora", "alice@example.org")
    own_campaign(app, T3)
    for name, start, end in (("trial", "01-01", "01-20"), ("test", "02-01", "02-20")):
        args = ["phase", T3, "A", name, "--start", f"2016-{start}T00:00:00Z"]
        result = app.test_cli_runner().invoke(
            args=["leaderboard", *args, "--end", f"2016-{end}T00:00:00Z"]
        )
        assert result.exit_code == 0, result.output
    trial, future = tmp_path / "trial.txt", tmp_path / "future.txt"
    trial.write_bytes(b"trial input line\n" * 1000)
    future.write_bytes(b"not yet\n")
    gold = tmp_path / "innocent.txt"
    gold.write_bytes(GOLD_TEST_A.read_bytes())
    for path, phase, code in ((trial, "trial", 0), (future, "test", 0), (gold, "trial", 1)):
        args = ["data", "add", T3, "A", str(path), "--phase", phase]
        result = app.test_cli_runner().invoke(args=["leaderboard", *args])
        assert result.exit_code == code, result.output
    # The gold check read the stored gold from the bucket.
    assert "same bytes as the reference (gold) file" in result.output
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        ids = {r.filename: r.id for r in s.scalars(select(TaskDataFile))}
    assert sorted(ids) == ["future.txt", "trial.txt"]
    anon = app.test_client().get(f"/tasks/{T3}/A/data/{ids['trial.txt']}")
    assert anon.status_code == 302 and anon.headers["Location"].startswith("/login")
    client = app.test_client()
    login(client, "alice@example.org", "correct horse battery")
    assert client.get(f"/tasks/{T3}/A/data/{ids['future.txt']}").status_code == 404
    resp = client.get(f"/tasks/{T3}/A/data/{ids['trial.txt']}")
    if presigned:
        assert resp.status_code == 302
        with urllib.request.urlopen(resp.headers["Location"], timeout=10) as answer:  # noqa: S310
            assert answer.read() == trial.read_bytes()
            assert 'filename="trial.txt"' in answer.headers["Content-Disposition"]
    else:
        assert resp.status_code == 200 and resp.data == trial.read_bytes()
        assert resp.headers["Content-Disposition"] == "attachment; filename=trial.txt"
        assert resp.headers["Content-Length"] == str(len(trial.read_bytes()))


# ------------------------------------------------------------------------------------ migrate


def _migrate(app: Flask, url: str) -> Any:
    return app.test_cli_runner().invoke(args=["leaderboard", "storage", "migrate", "--to", url])


def test_storage_migrate_copies_both_ways_idempotently_and_checks_hashes(
    make_app: AppFactory, s3_server: S3Server, tmp_path: Path
) -> None:
    app = make_app(s3_endpoint_url=s3_server.endpoint)
    make_participant(app, "Aurora", "alice@example.org")
    accepted(api_upload(app.test_client(), token_for(app, "alice@example.org"), oracle_run()))
    local = LocalStore(app.extensions["leaderboard"]["settings"].storage_dir)
    files = {key: local.read(key) for key in local.iter_keys()}
    assert key_for(hashlib.sha256(oracle_run()).hexdigest()) in files
    prefix = _prefix()
    url = f"s3://{s3_server.bucket}/{prefix}"

    first = _migrate(app, url)
    assert first.exit_code == 0, first.output
    assert f"Copied {len(files)} file(s)" in first.output and "0 already there" in first.output
    remote = _s3_store(s3_server, prefix)
    assert sorted(remote.iter_keys()) == sorted(files)
    assert all(remote.read(k) == v for k, v in files.items())
    again = _migrate(app, url)
    assert again.exit_code == 0, again.output
    assert "Copied 0 file(s)" in again.output and f"{len(files)} already there" in again.output
    assert len(list(local.iter_keys())) == len(files)  # nothing deleted

    # Back from the bucket to a new local folder, from an app whose store is the bucket.
    s3_side = make_app(storage_url=url, s3_endpoint_url=s3_server.endpoint)
    back = tmp_path / "back"
    result = _migrate(s3_side, back.as_uri())
    assert result.exit_code == 0, result.output
    assert f"Copied {len(files)} file(s)" in result.output
    assert {k: LocalStore(back).read(k) for k in LocalStore(back).iter_keys()} == files

    # A tampered object is refused: exit 1, named, and not copied.
    tampered = key_for(hashlib.sha256(oracle_run()).hexdigest())
    s3_server.client().put_object(
        Bucket=s3_server.bucket, Key=f"{prefix}/{tampered}", Body=b"not the run\n"
    )
    elsewhere = tmp_path / "elsewhere"
    refused = _migrate(s3_side, elsewhere.as_uri())
    assert refused.exit_code == 1
    assert f"hash mismatch: {url}/{tampered}" in refused.output
    assert not LocalStore(elsewhere).exists(tampered)
    assert len(list(LocalStore(elsewhere).iter_keys())) == len(files) - 1


def test_storage_migrate_to_an_unreachable_server_fails_clearly(
    make_app: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "someone")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "something")
    app = make_app(s3_endpoint_url=f"http://127.0.0.1:{port}")
    result = _migrate(app, "s3://nowhere-bucket/p")
    assert result.exit_code == 1
    assert "cannot reach s3://nowhere-bucket/p/" in result.output


def test_init_creates_a_missing_bucket_and_fills_it(
    make_app: AppFactory, s3_server: S3Server, tmp_path: Path
) -> None:
    bucket = f"lb-init-{uuid.uuid4().hex[:8]}"
    client = s3_server.client()
    with pytest.raises(Exception, match="404|NoSuchBucket|Not Found"):
        client.head_bucket(Bucket=bucket)
    instance = tmp_path / "fresh"
    app = make_app(
        instance_dir=instance,
        database_url=f"sqlite:///{instance / 'lb.sqlite3'}",
        storage_dir=instance / "storage",
        storage_url=f"s3://{bucket}/site",
        s3_endpoint_url=s3_server.endpoint,
    )
    first = app.test_cli_runner().invoke(args=["leaderboard", "init"])
    assert first.exit_code == 0, first.output
    assert f"Created bucket {bucket}." in first.output
    # The presets' files went to the bucket, nothing durable to the storage folder.
    listed = client.list_objects_v2(Bucket=bucket, Prefix="site/objects/")
    assert listed["KeyCount"] > 0
    assert not (instance / "storage").exists()
    again = app.test_cli_runner().invoke(args=["leaderboard", "init"])
    assert again.exit_code == 0 and "Created bucket" not in again.output
