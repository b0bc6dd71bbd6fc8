"""Password rules and signed links, without a database."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from leaderboard.services.accounts.links import (
    BadLink,
    ExpiredLink,
    fingerprint,
    make_token,
    read_token,
)
from leaderboard.services.accounts.passwords import password_problems
from leaderboard.services.common.mail import MailError, compose, is_plain_address

SITE = "SemEval Leaderboard"
T0 = datetime(2016, 1, 20, 9, 0, tzinfo=UTC)


def test_a_good_password_has_no_problems() -> None:
    assert password_problems("correct horse battery", "dana@example.org", SITE) == []


@pytest.mark.parametrize(
    ("password", "problem"),
    [
        ("123456789", "at least 10 characters"),
        ("x" * 1001, "at most 1000 characters"),
        ("my semeval leaderboard pw", "site's name"),
        ("MY SEMEVAL LEADERBOARD PW", "site's name"),
        ("prefix Dana@Example.org", "e-mail address"),
        ("i am dana, hello", "local part"),
    ],
)
def test_password_rules(password: str, problem: str) -> None:
    problems = password_problems(password, "dana@example.org", SITE)
    assert len(problems) == 1 and problem in problems[0], problems


def test_a_very_short_local_part_is_not_looked_for() -> None:
    # "al" is in too many words to forbid it.
    assert password_problems("totally legit secret", "al@example.org", SITE) == []
    assert password_problems("x al@example.org x", "al@example.org", SITE) != []


def test_links_carry_their_payload_for_their_purpose_only() -> None:
    token = make_token("secret", "verify", {"u": 7}, T0)
    assert read_token("secret", "verify", token, T0 + timedelta(days=6))["u"] == 7
    with pytest.raises(BadLink, match="This link is not valid: it was changed or cut short"):
        read_token("secret", "reset", token, T0)
    with pytest.raises(BadLink, match="This link is not valid: it was changed or cut short"):
        read_token("another secret", "verify", token, T0)
    with pytest.raises(BadLink, match="This link is not valid: it was changed or cut short"):
        read_token("secret", "verify", token[:-2], T0)
    with pytest.raises(
        ExpiredLink, match=r"This link has expired \(links of this kind last 7 days\)"
    ):
        read_token("secret", "verify", token, T0 + timedelta(days=7, seconds=1))
    reset = make_token("secret", "reset", {"u": 7}, T0)
    read_token("secret", "reset", reset, T0 + timedelta(minutes=59))
    with pytest.raises(
        ExpiredLink, match=r"This link has expired \(links of this kind last 1 hour\(s\)\)"
    ):
        read_token("secret", "reset", reset, T0 + timedelta(hours=1, seconds=1))
    # A link from far in the future (a clock moved back) is not accepted either.
    with pytest.raises(
        ExpiredLink, match=r"This link has expired \(links of this kind last 1 hour\(s\)\)"
    ):
        read_token("secret", "reset", reset, T0 - timedelta(hours=1))


def test_fingerprints_differ_per_hash() -> None:
    assert fingerprint("a") != fingerprint("b") and fingerprint(None) == fingerprint("")


@pytest.mark.parametrize(
    "address",
    [
        "a,b@example.org",
        "a b@example.org",
        "<a@example.org>",
        "a@example",
        "a..b@example.org",
        "x@y@z.org",
    ],
)
def test_only_plain_addresses_get_mail(address: str) -> None:
    assert not is_plain_address(address)
    with pytest.raises(
        MailError, match=re.escape(f"'{address}' is not a plain e-mail address; nothing was sent.")
    ):
        compose("lb@example.org", address, "s", "b")


def test_plain_addresses_pass() -> None:
    for address in (
        "dana@example.org",
        "d.o'neil+lb@mail.example.co.uk",
        "\u0639\u0644\u064a@example.org",
    ):
        assert is_plain_address(address)
