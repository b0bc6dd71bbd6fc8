"""Fixtures: ``app`` with a fresh database (presets installed), ``client``, ``runner``."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner

from leaderboard.db import make_engine, make_sessionmaker
from leaderboard.migrate import upgrade
from leaderboard.services.catalog import install_presets
from leaderboard.storage import FileStore
from leaderboard.web import create_app


@pytest.fixture(scope="session")
def template_instance(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build one migrated database with the presets installed; tests get copies of it."""
    root = tmp_path_factory.mktemp("template")
    url = f"sqlite:///{root / 'leaderboard.sqlite3'}"
    upgrade(url)
    engine = make_engine(url)
    with make_sessionmaker(engine)() as session:
        install_presets(session, FileStore(root / "storage"), actor="test")
    engine.dispose()
    return root


def app_overrides(instance: Path) -> dict[str, object]:
    """Return the settings of a test app living in ``instance``."""
    return {
        "instance_dir": instance,
        "database_url": f"sqlite:///{instance / 'leaderboard.sqlite3'}",
        "storage_dir": instance / "storage",
        "secret_key": "test-secret",
        "testing": True,
    }


@pytest.fixture
def app(tmp_path: Path, template_instance: Path) -> Iterator[Flask]:
    """Return an app on a fresh copy of the template database and storage."""
    instance = tmp_path / "instance"
    shutil.copytree(template_instance, instance)
    application = create_app(app_overrides(instance))
    yield application
    application.extensions["leaderboard"]["engine"].dispose()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    """Return a test client."""
    return app.test_client()


@pytest.fixture
def runner(app: Flask) -> FlaskCliRunner:
    """Return a CLI runner bound to the app."""
    return app.test_cli_runner()


@pytest.fixture
def session(app: Flask):  # type: ignore[no-untyped-def]
    """Return a database session on the app's database."""
    s = app.extensions["leaderboard"]["sessionmaker"]()
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
