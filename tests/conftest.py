"""Fixtures: ``app`` with a fresh database (presets installed), ``client``, ``runner``."""

from __future__ import annotations

import itertools
import os
import re
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool
from werkzeug.test import TestResponse

from leaderboard.cli import register
from leaderboard.db import make_engine, make_sessionmaker
from leaderboard.migrate import upgrade
from leaderboard.services.tasks.catalog import install_presets
from leaderboard.storage import LocalStore
from leaderboard.unit_of_work import opened
from leaderboard.web import create_app
from tests.dispatch import LocalDispatcher

#: A PostgreSQL database URL with rights to create databases; when set, every test runs on its
#: own PostgreSQL database (copied from a template built once) instead of SQLite.
PG_URL = os.environ.get("LEADERBOARD_TEST_DATABASE_URL", "")
_RUN_ID = f"lbtest_{os.getpid()}_{uuid.uuid4().hex[:6]}"
_counter = itertools.count()


class LeaderboardCliRunner(FlaskCliRunner):
    """A CLI runner that reaches ``leaderboard …`` as ``flask --app app leaderboard …`` does."""

    def __init__(self, app: Flask, **kwargs: object) -> None:
        super().__init__(app, **kwargs)  # type: ignore[arg-type]
        if "leaderboard" not in app.cli.commands:
            register(app)


# Every test app's ``test_cli_runner()``, however the test built the app.
Flask.test_cli_runner_class = LeaderboardCliRunner


def _pg_admin() -> Engine:
    return create_engine(PG_URL, isolation_level="AUTOCOMMIT", poolclass=NullPool)


def _pg_url(name: str) -> str:
    return make_url(PG_URL).set(database=name).render_as_string(hide_password=False)


@pytest.fixture(scope="session")
def template_instance(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Build one migrated database with the presets installed; tests get copies of it."""
    root = tmp_path_factory.mktemp("template")
    url = f"sqlite:///{root / 'leaderboard.sqlite3'}"
    if PG_URL:
        with _pg_admin().connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{_RUN_ID}_template"'))
        url = _pg_url(f"{_RUN_ID}_template")
    upgrade(url)
    engine = make_engine(url)
    with opened(make_sessionmaker(engine)) as unit:
        install_presets(unit.session, LocalStore(root / "storage"), actor="test")
    engine.dispose()
    yield root
    if PG_URL:
        with _pg_admin().connect() as conn:
            rows = conn.execute(
                text("SELECT datname FROM pg_database WHERE datname LIKE :p"), {"p": f"{_RUN_ID}%"}
            )
            for (name,) in list(rows):
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def app_overrides(instance: Path) -> dict[str, object]:
    """Return the settings of a test app living in ``instance`` (SQLite, or a fresh PostgreSQL copy)."""
    url = f"sqlite:///{instance / 'leaderboard.sqlite3'}"
    if PG_URL:
        name = f"{_RUN_ID}_{next(_counter)}"
        with _pg_admin().connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}" TEMPLATE "{_RUN_ID}_template"'))
        url = _pg_url(name)
    return {
        "instance_dir": instance,
        "database_url": url,
        "storage_dir": instance / "storage",
        "secret_key": "test-secret",
        "testing": True,
        "dispatcher": LocalDispatcher,
    }


def database_url(app: Flask) -> str:
    """Return the database URL of a test app."""
    return str(app.extensions["leaderboard"]["settings"].database_url)


class BodyClosingClient(FlaskClient):
    """The Flask test client, closing what it opens for a request once the response is in.

    Werkzeug's test client spools a multipart body over 500 KB to a temporary file that it
    never closes (werkzeug.test.stream_encode_multipart), and leaves a response's body open
    (a static file's, say) until someone reads or closes it; with warnings as errors, the
    ResourceWarning of their collection would fail whichever test runs at that moment. So
    responses are buffered (read whole, their bodies closed) and request bodies closed.
    """

    def open(self, *args: Any, **kwargs: Any) -> TestResponse:
        """Send a request as the Flask client does, then close the bodies it sent."""
        kwargs.setdefault("buffered", True)
        response = super().open(*args, **kwargs)
        for sent in (*response.history, response):
            body = sent.request.environ.get("wsgi.input")
            if body is not None:
                body.close()
        return response


def app_on_copy(template: Path, root: Path, **settings: object) -> Flask:
    """Return an app on a fresh copy of the template instance in ``root``, with extra settings.

    ``settings`` are create_app overrides, e.g. ``clock=FixedClock(...)`` for a controlled time.
    """
    instance = root / "instance"
    shutil.copytree(template, instance)
    application = create_app({**app_overrides(instance), **settings})
    application.test_client_class = BodyClosingClient
    return application


def dispose(app: Flask) -> None:
    """Close a test app's database connections (its queue's deliveries' too)."""
    app.extensions["leaderboard"]["engine"].dispose()
    close = getattr(app.extensions["leaderboard"]["dispatcher"], "close", None)
    if close is not None:
        close()


#: ``make_app(**settings)`` returns a new app on a fresh copy of the template.
AppFactory = Callable[..., Flask]


@pytest.fixture
def make_app(tmp_path: Path, template_instance: Path) -> Iterator[AppFactory]:
    """Return a factory of apps on fresh copies of the template, with extra settings each.

    The one way tests build an app with a controlled clock: ``make_app(clock=FixedClock(t))``.
    """
    made: list[Flask] = []

    def factory(**settings: object) -> Flask:
        application = app_on_copy(template_instance, tmp_path / f"app{len(made)}", **settings)
        made.append(application)
        return application

    yield factory
    for application in made:
        dispose(application)


@pytest.fixture
def app(tmp_path: Path, template_instance: Path) -> Iterator[Flask]:
    """Return an app on a fresh copy of the template database and storage."""
    application = app_on_copy(template_instance, tmp_path)
    yield application
    dispose(application)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    """Return a test client."""
    return app.test_client()


@pytest.fixture
def runner(app: Flask) -> FlaskCliRunner:
    """Return a CLI runner bound to the app."""
    return app.test_cli_runner()


@pytest.fixture
def session(app: Flask) -> Iterator[Session]:
    """Return a database session on the app's database."""
    s: Session = app.extensions["leaderboard"]["sessionmaker"]()
    yield s
    s.close()


_CSRF = re.compile(
    r'name="csrf_token" type="hidden" value="([^"]+)"|name="csrf_token" value="([^"]+)"'
)


def csrf_from(html: str) -> str:
    """Return the CSRF token embedded in a page."""
    m = _CSRF.search(html)
    assert m, "no CSRF token in page"
    return m.group(1) or m.group(2)


def login(client: FlaskClient, email: str, password: str) -> None:
    """Log a user in through the form."""
    page = client.get("/login")
    resp = client.post(
        "/login",
        data={
            "email": email,
            "password": password,
            "csrf_token": csrf_from(page.get_data(as_text=True)),
        },
    )
    assert resp.status_code == 302, resp.get_data(as_text=True)


@pytest.fixture
def empty_database_url(tmp_path: Path) -> str:
    """Return the URL of a new, empty database (SQLite file, or PostgreSQL when configured)."""
    if not PG_URL:
        return f"sqlite:///{tmp_path / 'empty.sqlite3'}"
    name = f"{_RUN_ID}_empty_{next(_counter)}"
    with _pg_admin().connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    return _pg_url(name)


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Start a real S3 server (SeaweedFS) on loopback for the session, with the AWS variables.

    The one .ci/run started is used when it names one. Skipped when none can start, except
    under CI=true where that is a failure.
    """
    from tests import seaweed

    try:
        server = seaweed.shared() or seaweed.start(tmp_path_factory.mktemp("seaweedfs"))
    except Exception as exc:
        reason = f"no S3 server: SeaweedFS (weed mini) could not start: {exc}"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    try:
        with seaweed.use_credentials():
            yield server
    finally:
        seaweed.stop(server)
