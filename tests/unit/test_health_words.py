"""The health report's words: time spans, what waits, and the warning's grammar."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from leaderboard.services.operations.health import DueRelease, Health, Waiting, ago

NOW = datetime(2026, 11, 29, 3, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (1, "1 second"),
        (89, "89 seconds"),
        (90, "2 minutes"),
        (60 * 60, "60 minutes"),
        (90 * 60, "2 hours"),
        (47 * 3600, "47 hours"),
        (48 * 3600, "2 days"),
    ],
)
def test_ago_says_a_span_coarsely(seconds: int, words: str) -> None:
    assert ago(timedelta(seconds=seconds)) == words


def releases(n: int) -> tuple[DueRelease, ...]:
    return tuple(
        DueRelease("t", "A", f"p{i}", datetime(2016, 2, 1, 12, i, tzinfo=UTC)) for i in range(n)
    )


def test_what_waits_names_at_most_five_releases_and_counts_the_rest() -> None:
    waiting = Waiting(jobs=2, releases=releases(7), mail=3)
    assert waiting.phrase(detailed=True) == (
        "3 mails, 7 scheduled releases (t/A p0, due 2016-02-01 12:00 UTC; "
        "t/A p1, due 2016-02-01 12:01 UTC; t/A p2, due 2016-02-01 12:02 UTC; "
        "t/A p3, due 2016-02-01 12:03 UTC; t/A p4, due 2016-02-01 12:04 UTC; 2 more) and 2 jobs"
    )
    assert waiting.phrase(detailed=False) == "3 mails, 7 scheduled releases and 2 jobs"
    assert waiting.counts() == {"jobs": 2, "releases": 7, "mail": 3}


def test_one_thing_waiting_waits_and_a_fresh_worker_warns_of_nothing() -> None:
    one = Waiting(jobs=0, releases=(), mail=1)
    stale = Health(NOW, NOW - timedelta(minutes=5, seconds=1), "h:1", "mail", one)
    assert stale.warning() == (
        "No worker has been seen for 5 minutes (last at 2026-11-29 02:54 UTC): "
        "1 mail waits for one; start `leaderboard worker`."
    )
    fresh = Health(NOW, NOW - timedelta(minutes=5), "h:1", "mail", one)
    assert not fresh.stale and fresh.warning() is None and fresh.problem() is None
