"""Each audit event reads as one sentence: details spelled out, never as JSON."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from leaderboard.models import AuditEvent
from leaderboard.services.common.audit_log import describe, parse_page
from leaderboard.services.common.errors import InvalidInput


def event(
    action: str, task: str | None = None, subtask: str | None = None, **details: Any
) -> AuditEvent:
    return AuditEvent(
        actor="org@example.org",
        action=action,
        task_slug=task,
        subtask_slug=subtask,
        details=details,
        at=datetime(2016, 1, 5, tzinfo=UTC),
    )


@pytest.mark.parametrize(
    ("made", "sentence"),
    [
        (
            event(
                "update-phase", "t3", "A", phase="test", set="test",
                starts_at="2016-01-10T00:00:00+00:00", ends_at=None, results="hidden",
            ),
            "updated phase test of t3 A (test set): 2016-01-10 00:00 UTC to no deadline, results hidden",
        ),
        (
            event(
                "update-phase", "t3", "A", phase="test", set="test", results="hidden",
                changed={
                    "ends_at": ["2016-07-01T18:30:00+00:00", "2016-07-02T18:30:00+00:00"],
                    "daily_quota": [None, 3], "late": [False, True], "names": ["public", "anonymous"],
                },
            ),
            "updated phase test of t3 A (test set): deadline 2016-07-01 18:30 UTC → "
            "2016-07-02 18:30 UTC; daily quota none → 3; late runs no → yes; "
            "team names public → anonymous",
        ),
        (
            event(
                "freeze", "t3", "A", set="test", runs=3, manifest_sha256="0123456789abcdef0123",
                before_deadline=True, deadline="2016-01-31T23:59:00+00:00", phase="test",
            ),
            "froze the official ranking of t3 A (test set): 3 run(s), snapshot 0123456789ab…; "
            "before the deadline of phase test (2016-01-31 23:59 UTC)",
        ),
        (
            event("import-run", "t3", "A", team="Kelp", slot="primary", set="dev", lenient=True, sha256="ff"),
            "imported a run of team Kelp into slot primary of t3 A (dev set); read leniently",
        ),
        (event("set-setting", name="registration", old="open", new="closed"),
         "set registration from open to closed"),
        (event("install-task", "t3", definition_sha256="aa"), "installed task t3"),
        (event("leave-team", team="Kelp", deleted_team=False, captain="b@example.org"),
         "left team Kelp; b@example.org is its captain now"),
        (event("add-baselines", "t3", "A", set="test", roles=["ir", "random"]),
         "added the baselines ir, random of t3 A (test set)"),
        # An action without a sentence of its own: its name, place and details spelled out.
        (event("send-message", "t3", audience="captains", recipients=4, sent=True, sha256="x"),
         "send message of t3 (audience: captains; recipients: 4; sent: yes)"),
        # A detail a sentence needs but the event lacks reads "?", not an error.
        (event("rename-team", team="New"), "renamed team ? to New"),
    ],
)  # fmt: skip
def test_sentences(made: AuditEvent, sentence: str) -> None:
    assert describe(made) == sentence


@pytest.mark.parametrize("text", ["0", "-1", "x", "1.5", "١", "9" * 12])
def test_page_numbers_refused(text: str) -> None:
    with pytest.raises(InvalidInput, match="The page must be a whole number from 1"):
        parse_page(text)


def test_page_numbers() -> None:
    assert parse_page(None) == 1 and parse_page("") == 1 and parse_page("12") == 12
