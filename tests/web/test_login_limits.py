"""Log-in limits: per account and address, per account, per address; behind proxies; in parallel."""

from __future__ import annotations

import http.cookiejar
import re
import subprocess
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session
from werkzeug.test import TestResponse

from leaderboard.clock import FixedClock
from leaderboard.models import LoginCounter, User
from leaderboard.services.accounts.core import authenticate
from leaderboard.services.common.throttle import (
    PER_ACCOUNT,
    PER_ADDRESS,
    PER_PAIR,
    WINDOW,
    TooManyAttempts,
    attempt_succeeded,
    claim_attempt,
)
from leaderboard.unit_of_work import unit_of
from leaderboard.web.auth import routes as auth_routes
from leaderboard.web.common.limits import TRIES, counted
from tests.conftest import AppFactory, csrf_from
from tests.live import LiveServer
from tests.runs import make_participant

ALICE = "alice@example.org"
PASSWORD = "correct horse battery"
T0 = datetime(2016, 1, 20, 9, 0, tzinfo=UTC)


class Browser:
    """A test client that posts the log-in form as coming from a chosen address."""

    def __init__(self, client: FlaskClient) -> None:
        self.client = client
        self.token = csrf_from(client.get("/login").get_data(as_text=True))

    def attempt(
        self, email: str, password: str, addr: str = "127.0.0.1", xff: str | None = None
    ) -> TestResponse:
        headers = {"X-Forwarded-For": xff} if xff else {}
        resp = self.client.post(
            "/login",
            data={"email": email, "password": password, "csrf_token": self.token},
            headers=headers,
            environ_base={"REMOTE_ADDR": addr},
        )
        if resp.status_code == 302:  # logged in (a new session): log out for the next attempts
            page = self.client.get("/").get_data(as_text=True)
            assert (
                self.client.post("/logout", data={"csrf_token": csrf_from(page)}).status_code == 302
            )
            self.token = csrf_from(self.client.get("/login").get_data(as_text=True))
        return resp


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T0)


@pytest.fixture
def limited(make_app: AppFactory, clock: FixedClock) -> Flask:
    """Return an app with a controlled clock and alice's account."""
    app = make_app(clock=clock)
    make_participant(app, "Aurora", ALICE, PASSWORD)
    return app


def test_the_limits_are_the_documented_ones() -> None:
    assert (PER_PAIR, PER_ACCOUNT, PER_ADDRESS) == (5, 100, 30)
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert "5 failed log-ins per 15 minutes for one account from one address" in readme


def test_a_locked_account_and_address_does_not_lock_the_owner_out_elsewhere(
    limited: Flask, clock: FixedClock
) -> None:
    b = Browser(limited.test_client())
    for _ in range(PER_PAIR):
        assert b.attempt(ALICE, "wrong", addr="203.0.113.66").status_code == 401
    locked = b.attempt(ALICE, PASSWORD, addr="203.0.113.66")
    assert locked.status_code == 429
    assert 0 < int(locked.headers["Retry-After"]) <= 15 * 60
    assert "Too many failed log-ins" in locked.get_data(as_text=True)
    # The owner, from their own address, is not locked out by someone else's guesses.
    assert b.attempt(ALICE, PASSWORD, addr="198.51.100.7").status_code == 302
    assert b.attempt(ALICE, "wrong", addr="198.51.100.7").status_code == 401
    # The lockout ends with its window, and a success does not lift someone else's lockout.
    clock.set(T0 + timedelta(minutes=14, seconds=59))
    assert b.attempt(ALICE, PASSWORD, addr="203.0.113.66").status_code == 429
    clock.set(T0 + timedelta(minutes=15))
    assert b.attempt(ALICE, PASSWORD, addr="203.0.113.66").status_code == 302


def _page_text(resp: TestResponse, email: str) -> str:
    """Return a response's page without what differs by account or second: e-mail, CSRF token."""
    return re.sub(r'value="[^"]*"', "", resp.get_data(as_text=True)).replace(email, "EMAIL")


def test_unknown_accounts_are_limited_and_answered_like_known_ones(limited: Flask) -> None:
    b = Browser(limited.test_client())
    answers = {}
    for email in (ALICE, "nobody@example.org"):
        here = [b.attempt(email, "wrong", addr="203.0.113.9") for _ in range(PER_PAIR + 1)]
        elsewhere = b.attempt(email, "wrong", addr="198.51.100.7")
        answers[email] = [(r.status_code, _page_text(r, email)) for r in (*here, elsewhere)]
    assert [status for status, _ in answers[ALICE]] == [401] * PER_PAIR + [429, 401]
    assert answers[ALICE] == answers["nobody@example.org"]


def test_an_e_mail_with_a_nul_is_a_wrong_log_in_and_counted(limited: Flask) -> None:
    b = Browser(limited.test_client())
    for _ in range(PER_PAIR):
        assert b.attempt("alice\x00@example.org", PASSWORD).status_code == 401
    assert b.attempt("alice\x00@example.org", PASSWORD).status_code == 429


def failures(app: Flask, email: str, addr: str, n: int) -> None:
    """Count ``n`` failed log-ins straight in the service (no password hashing: quicker)."""
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        for _ in range(n):
            with unit_of(session):
                claim_attempt(session, email, addr, T0)


def test_a_request_that_read_the_clock_a_little_earlier_still_counts(limited: Flask) -> None:
    """Parallel requests read the clock in one order and reach the database in another."""
    failures(limited, ALICE, "203.0.113.8", PER_PAIR)
    with limited.extensions["leaderboard"]["sessionmaker"]() as session:
        with pytest.raises(TooManyAttempts, match=r"^\d+$"), unit_of(session):
            claim_attempt(session, ALICE, "203.0.113.8", T0 - timedelta(milliseconds=3))
        # A clock moved back by far more (a rehearsal) finds the window over.
        with unit_of(session):
            claim_attempt(session, ALICE, "203.0.113.8", T0 - timedelta(days=2))


def test_the_per_account_cap_stops_guessing_from_many_addresses(limited: Flask) -> None:
    b = Browser(limited.test_client())
    addresses = [f"203.0.113.{i}" for i in range(PER_ACCOUNT // PER_PAIR)]
    for addr in addresses[:-1]:
        failures(limited, ALICE, addr, PER_PAIR)
    for _ in range(PER_PAIR):
        assert b.attempt(ALICE, "wrong", addr=addresses[-1]).status_code == 401
    # Every address has used its own share; a new one meets the account's cap.
    capped = b.attempt(ALICE, PASSWORD, addr="198.51.100.200")
    assert capped.status_code == 429
    assert 0 < int(capped.headers["Retry-After"]) <= 15 * 60
    # Other accounts are not affected.
    make_participant(limited, "Aurora", "bob@example.org", PASSWORD)
    assert b.attempt("bob@example.org", PASSWORD, addr="198.51.100.200").status_code == 302


def test_the_per_address_cap_stops_one_address_trying_many_accounts(limited: Flask) -> None:
    b = Browser(limited.test_client())
    # Successful log-ins are not counted: many people behind one address log in all day.
    with limited.extensions["leaderboard"]["sessionmaker"]() as session:
        for _ in range(PER_ADDRESS + 1):
            with unit_of(session):
                attempt_succeeded(session, claim_attempt(session, ALICE, "203.0.113.5", T0))
    assert b.attempt(ALICE, PASSWORD, addr="203.0.113.5").status_code == 302
    others = [f"user{i}@example.org" for i in range(PER_ADDRESS // PER_PAIR - 1)]
    for email in others:
        failures(limited, email, "203.0.113.5", PER_PAIR)
    for _ in range(PER_PAIR):
        assert b.attempt(ALICE, "wrong", addr="203.0.113.5").status_code == 401
    assert b.attempt("fresh@example.org", "wrong", addr="203.0.113.5").status_code == 429
    # The address is stopped, not the accounts it tried: alice logs in from elsewhere.
    assert b.attempt(ALICE, PASSWORD, addr="198.51.100.7").status_code == 302


def _proxied_app(make_app: AppFactory, proxies: int) -> Flask:
    app = make_app(trusted_proxies=proxies)
    make_participant(app, "Aurora", ALICE, PASSWORD)
    return app


def test_behind_one_trusted_proxy_the_forwarded_client_address_counts(
    make_app: AppFactory,
) -> None:
    app = _proxied_app(make_app, proxies=1)
    b = Browser(app.test_client())
    # The client may prepend anything; only the entry our proxy added is believed.
    for i in range(PER_PAIR):
        assert b.attempt(ALICE, "wrong", xff=f"10.9.9.{i}, 203.0.113.66").status_code == 401
    assert b.attempt(ALICE, PASSWORD, xff="203.0.113.66").status_code == 429
    # Everyone comes from the proxy's address, yet another client is not locked out.
    assert b.attempt(ALICE, PASSWORD, xff="198.51.100.7").status_code == 302


def test_without_trusted_proxies_x_forwarded_for_is_ignored(
    make_app: AppFactory,
) -> None:
    app = _proxied_app(make_app, proxies=0)
    b = Browser(app.test_client())
    # A client cannot dodge the limit by making up addresses.
    for i in range(PER_PAIR):
        assert b.attempt(ALICE, "wrong", xff=f"10.0.0.{i}").status_code == 401
    assert b.attempt(ALICE, PASSWORD, xff="198.51.100.7").status_code == 429
    # The address that counts is the peer's: from another one, the owner gets in.
    assert b.attempt(ALICE, PASSWORD, addr="198.51.100.7").status_code == 302


# --------------------------------------------------------------------- through a real gunicorn


def _login_form(server: LiveServer) -> tuple[str, str]:
    """Return a session cookie header and the CSRF token of the log-in form."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    with opener.open(server.url + "/login", timeout=30) as resp:
        token = csrf_from(resp.read().decode())
    cookie = "; ".join(f"{c.name}={c.value}" for c in jar)
    return cookie, token


def test_sixteen_parallel_wrong_passwords_get_exactly_five_401(
    template_instance: Path, tmp_path: Path
) -> None:
    live = LiveServer.from_template(template_instance, tmp_path, workers=4)
    live.cli("create-team", "Aurora")
    live.cli(
        "create-user", ALICE, "--role", "participant", "--team", "Aurora", "--password", PASSWORD
    )
    live.start()
    try:
        cookie, token = _login_form(live)
        procs = [
            subprocess.Popen(
                [
                    "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                    "-H", f"Cookie: {cookie}",
                    "--data-urlencode", f"email={ALICE}",
                    "--data-urlencode", f"password=wrong guess {i}",
                    "--data-urlencode", f"csrf_token={token}",
                    live.url + "/login",
                ],
                stdout=subprocess.PIPE,
                text=True,
            )
            for i in range(16)
        ]  # fmt: skip
        statuses = sorted(int(p.communicate(timeout=120)[0]) for p in procs)
        assert statuses == [401] * PER_PAIR + [429] * (16 - PER_PAIR), statuses
        # The account is locked from this address: the correct password is refused too.
        cookie, token = _login_form(live)
        again = subprocess.run(
            [
                "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                "-H", f"Cookie: {cookie}",
                "--data-urlencode", f"email={ALICE}",
                "--data-urlencode", f"password={PASSWORD}",
                "--data-urlencode", f"csrf_token={token}",
                live.url + "/login",
            ],
            capture_output=True,
            text=True,
            check=True,
        )  # fmt: skip
        assert again.stdout == "429"
    finally:
        live.stop()


# ------------------------------------------------------------------- claims and their units


def _counts(app: Flask) -> dict[tuple[str, str], int]:
    """Return every committed counter's count, by scope and key (read in a session of its own)."""
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        rows = session.execute(select(LoginCounter.scope, LoginCounter.key, LoginCounter.count))
        return {(scope, key): count for scope, key, count in rows}


def test_a_refused_claim_takes_no_slot_even_where_there_was_room(limited: Flask) -> None:
    addr = "203.0.113.5"
    for i in range(PER_ADDRESS // PER_PAIR):
        failures(limited, f"user{i}@example.org", addr, PER_PAIR)
    before = _counts(limited)
    with limited.extensions["leaderboard"]["sessionmaker"]() as session:
        with pytest.raises(TooManyAttempts, match=r"^\d+$"):  # the seconds to wait
            claim_attempt(session, "fresh@example.org", addr, T0)
        session.commit()  # even committed, the refusal keeps no slot in pair and account
    after = _counts(limited)
    assert after[("address", addr)] == PER_ADDRESS
    assert after.get(("pair", f"{addr} fresh@example.org"), 0) == 0
    assert after.get(("account", "fresh@example.org"), 0) == 0
    assert {k: v for k, v in after.items() if v} == before


def test_the_count_is_committed_before_the_password_is_checked(
    limited: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[dict[tuple[str, str], int]] = []

    def checking(session: Session, email: str, password: str) -> User | None:
        # Another session sees it: a wrong password keeps it, and SQLite's lock is free.
        seen.append(_counts(limited))
        return authenticate(session, email, password)

    monkeypatch.setattr(auth_routes, "authenticate", checking)
    assert Browser(limited.test_client()).attempt(ALICE, "wrong").status_code == 401
    pair = ("pair", f"127.0.0.1 {ALICE}")
    assert [counts[pair] for counts in seen] == [1]
    assert _counts(limited)[pair] == 1


def test_a_claim_the_database_gave_up_on_is_tried_again(limited: Flask) -> None:
    tries: list[datetime] = []

    def busy_twice(session: Session, at: datetime) -> str:
        tries.append(at)
        if len(tries) <= 2:
            raise OperationalError("UPDATE login_counters", {}, Exception("database is locked"))
        return "claimed"

    def always_busy(session: Session, at: datetime) -> str:
        tries.append(at)
        raise OperationalError("UPDATE login_counters", {}, Exception("database is locked"))

    with limited.test_request_context():
        assert counted(busy_twice) == "claimed"
        assert tries == [T0] * 3
        tries.clear()
        with pytest.raises(TooManyAttempts, match="^1$") as refused:
            counted(always_busy)
    assert refused.value.retry_after == 1 and len(tries) == TRIES


def test_expired_counters_are_forgotten_in_their_own_unit_before_a_claim(
    limited: Flask, clock: FixedClock
) -> None:
    failures(limited, "old@example.org", "203.0.113.7", 1)
    clock.set(T0 + WINDOW)

    def refused(session: Session, at: datetime) -> None:
        raise TooManyAttempts(60)

    with limited.test_request_context(), pytest.raises(TooManyAttempts, match="^60$"):
        counted(refused)
    # Forgotten though the claim after it was refused (and rolled back).
    assert _counts(limited) == {}
