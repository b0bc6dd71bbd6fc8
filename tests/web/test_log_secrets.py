"""Logs never hold a link's token or a team's invite code: the path is logged with them redacted."""

from __future__ import annotations

import http.cookiejar
import logging
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from sqlalchemy import create_engine, select
from sqlalchemy.pool import NullPool

from bench._common import free_port
from leaderboard.models import OutboxMail, Team
from tests.conftest import csrf_from
from tests.live import LiveServer
from tests.smtp import MailServer, link_in, smtp_server

ALICE = "alice@example.org"
DANA = "dana@example.org"
EVE = "eve@example.org"
PASSWORD = "a long enough secret 42"
REDACTED = "[redacted]"


@pytest.mark.parametrize(
    ("logged", "expected"),
    [
        ("/password/reset/eyJ1Ijo.abc", "/password/reset/[redacted]"),
        ("GET /verify/eyJ1Ijo.abc HTTP/1.1", "GET /verify/[redacted] HTTP/1.1"),
        ("/verify/resend", "/verify/resend"),
        ("/verify/resend?email=a%40b.org", "/verify/resend?email=a%40b.org"),
        ("/teams/join/Xy_z-1", "/teams/join/[redacted]"),
        ("/teams/join/Xy_z-1?confirm=1", "/teams/join/[redacted]?confirm=1"),
        ("/signup?invitation=eyJl.x&a=1", "/signup?invitation=[redacted]&a=1"),
        ("/signup?invite=Xy_z-1", "/signup?invite=[redacted]"),
        ("/login?next=/teams/join/Xy_z-1", "/login?next=/teams/join/[redacted]"),
        ("/login?next=%2Fteams%2Fjoin%2FXy_z-1", "/login?next=%2Fteams%2Fjoin%2F[redacted]"),
        (
            "https://lb.example.org/password/reset/T.k",
            "https://lb.example.org/password/reset/[redacted]",
        ),
        ("/tasks/semeval2016-task3/A?set=test", "/tasks/semeval2016-task3/A?set=test"),
        ("POST /unsubscribe/eyJ1Ijo.abc HTTP/1.1", "POST /unsubscribe/[redacted] HTTP/1.1"),
        ("/login?next=%2Funsubscribe%2FeyJ1.x", "/login?next=%2Funsubscribe%2F[redacted]"),
    ],
)
def test_redact_replaces_every_secret_and_keeps_the_route(logged: str, expected: str) -> None:
    from leaderboard.redaction import redact

    assert redact(logged) == expected


class Browser:
    """A cookie-keeping HTTP client of the live server (no redirects followed)."""

    def __init__(self, base: str) -> None:
        self.base = base
        jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(jar), _NoRedirect()
        )

    def get(self, path: str, **headers: str) -> tuple[int, str]:
        request = urllib.request.Request(self.base + path, headers=headers)
        return self._open(request)

    def post_form(self, path: str, data: dict[str, str]) -> int:
        _, page = self.get(path)
        body = urllib.parse.urlencode({**data, "csrf_token": csrf_from(page)}).encode()
        return self._open(urllib.request.Request(self.base + path, data=body))[0]

    def _open(self, request: urllib.request.Request) -> tuple[int, str]:
        try:
            with self.opener.open(request, timeout=60) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


@pytest.fixture
def mail() -> Iterator[MailServer]:
    with smtp_server() as server:
        yield server


def _path(link: str) -> str:
    parts = urllib.parse.urlsplit(link)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def test_gunicorn_and_the_app_log_no_token_and_no_invite_code(
    template_instance: Path, tmp_path: Path, mail: MailServer
) -> None:
    port = free_port()
    live = LiveServer.from_template(
        template_instance,
        tmp_path,
        workers=1,
        LEADERBOARD_MAIL_URL=f"smtp://{mail.host}:{mail.port}",
        LEADERBOARD_BASE_URL=f"http://127.0.0.1:{port}",
        # gunicorn's own access log too, beside the application's JSON lines.
        GUNICORN_ACCESSLOG="-",
    )
    live.port = port
    live.log_file = tmp_path / "gunicorn.log"
    # The mail goes out through a worker, whose log must not hold the links either.
    live.mail_worker = True
    live.add_participant("Aurora", ALICE, PASSWORD)
    live.cli("invite", EVE)
    engine = create_engine(live.database_url, poolclass=NullPool)
    with engine.connect() as conn:
        code = conn.scalar(select(Team.invite_code).where(Team.name == "Aurora"))
    engine.dispose()
    assert code
    live.start()
    try:
        web = Browser(live.url)
        assert web.post_form("/password/forgot", {"email": ALICE}) == 200
        signup = {
            "email": DANA,
            "display_name": "Dana",
            "password": PASSWORD,
            "password_confirm": PASSWORD,
        }
        assert web.post_form("/signup", signup) == 200
        reset = _path(link_in(mail.inbox.wait_for(ALICE)[0]))
        verify = _path(link_in(mail.inbox.wait_for(DANA)[0]))
        invitation = _path(link_in(mail.inbox.wait_for(EVE)[0]))
        secrets = {
            "reset": reset.rsplit("/", 1)[1],
            "verify": verify.rsplit("/", 1)[1],
            "invitation": urllib.parse.parse_qs(urllib.parse.urlsplit(invitation).query)[
                "invitation"
            ][0],
            "invite code": code,
        }
        assert web.get(reset)[0] == 200
        assert web.get(verify, Referer=live.url + reset)[0] == 200
        assert web.get(invitation)[0] == 200
        assert web.get(f"/signup?invite={code}")[0] == 200
        assert web.get(f"/teams/join/{code}")[0] == 302  # to the log-in, with the code in next
        assert (
            web.get("/login?next=" + urllib.parse.quote(f"/teams/join/{code}", safe=""))[0] == 200
        )
    finally:
        live.stop()
    log = live.log_file.read_text()
    worker_log = live.log_file.with_name("worker.log").read_text()
    assert "leaderboard.send_mail" in worker_log  # it did log the mail it sent
    for what, secret in secrets.items():
        assert secret not in log, what
        assert secret not in worker_log, what
    # Nor does the queue file (it carried ids only and keeps no delivered message), nor the
    # outbox, whose delivered rows keep no text.
    queue = b"".join(p.read_bytes() for p in live.instance.glob("queue.sqlite3*"))
    engine = create_engine(live.database_url, poolclass=NullPool)
    with engine.connect() as conn:
        kept = conn.execute(select(OutboxMail.status, OutboxMail.message)).all()
    engine.dispose()
    assert sorted(status for status, _ in kept) == ["sent"] * 3
    assert all(message is None for _, message in kept)
    for what, secret in secrets.items():
        assert secret.encode() not in queue, what
    # Both logs still name the routes.
    assert '"path":"/password/reset/[redacted]"' in log
    assert f"GET /verify/{REDACTED} HTTP/1.1" in log
    assert f"/signup?invitation={REDACTED}" in log
    assert f'"path":"/teams/join/{REDACTED}"' in log


def test_the_development_servers_request_lines_are_redacted(
    app: Flask, caplog: pytest.LogCaptureFixture
) -> None:
    # ``flask run`` logs each request line through the "werkzeug" logger.
    with caplog.at_level(logging.INFO, logger="werkzeug"):
        logging.getLogger("werkzeug").info(
            '%s - - "%s" %s', "127.0.0.1", "GET /password/reset/eyJ1.sEcReT HTTP/1.1", "200"
        )
    (record,) = [r for r in caplog.records if r.name == "werkzeug"]
    assert "sEcReT" not in record.getMessage()
    assert f"/password/reset/{REDACTED}" in record.getMessage()
