"""The app for the crash test: a worker kills itself after storing a run's files, before the commit.

Gunicorn loads ``tests.kill_before_commit:app`` only in that test, so production code carries
no hook. While the file named by ``LEADERBOARD_TEST_KILL_FLAG`` exists, the next upload writes
its run, score and quota rows into the open transaction (its files are already in the store),
records the run's files manifest beside the flag (``<flag>.fired``), removes the flag and
SIGKILLs its own worker, as a crash at the worst moment would.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from leaderboard.models import Run
from leaderboard.services.runs import core as runs
from leaderboard.web import create_app

FLAG = "LEADERBOARD_TEST_KILL_FLAG"

_place_run = runs.place_run


def _place_run_then_die(
    session: Session,
    key: str | Callable[[], str],
    make: Callable[[], Run],
    before_commit: Callable[[Run], None],
    scores: Sequence[Mapping[str, Any]],
    attempt: int = 0,
) -> Run:
    """Place a run as usual, but die just before its commit while the flag file exists."""

    def then_die(run: Run) -> None:
        before_commit(run)
        flag = Path(os.environ[FLAG])
        if flag.exists():
            # Send every pending write (quota claim, audit) to the database first, so that
            # only the missing commit separates this upload from a complete one.
            session.flush()
            Path(f"{flag}.fired").write_text(json.dumps(run.files))
            flag.unlink()
            os.kill(os.getpid(), signal.SIGKILL)

    return _place_run(session, key, make, then_die, scores, attempt)


runs.place_run = _place_run_then_die
app = create_app()
