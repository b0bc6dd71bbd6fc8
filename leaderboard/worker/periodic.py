"""The periodic jobs every worker runs when it wins their claim, and each worker's heartbeat."""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy.orm import Session

from leaderboard.config import Settings
from leaderboard.models import utcnow
from leaderboard.services.jobs.analyses import worker_name
from leaderboard.services.jobs.core import stale_after
from leaderboard.services.operations import periodic, workers
from leaderboard.services.upload import core as upload
from leaderboard.unit_of_work import opened
from leaderboard.worker import jobs
from leaderboard.worker.runtime import resources

log = logging.getLogger("leaderboard.worker")

#: Seconds between the campaign checks (scheduled releases, deadline notices).
CAMPAIGN_INTERVAL = 60.0
#: Seconds between the looks for visible sets whose scores changed (their automatic analysis).
ANALYSIS_INTERVAL = 5.0
#: Seconds between a worker's looks for periodic jobs that are due.
TICK = 5.0
#: Seconds between a worker's signs of life in the workers table.
SEEN_INTERVAL = 15.0
#: Seconds between a worker's looks for expired staged task uploads in its instance folder.
STAGED_INTERVAL = 300.0


@dataclass(frozen=True)
class Periodic:
    """A job that one worker of a deployment runs once per period."""

    name: str
    every: timedelta
    run: Callable[[], object]


def _sweep() -> list[int]:
    sent = jobs.sweep()
    if sent:
        log.info("sent again: job(s) %s", ", ".join(map(str, sent)))
    mails = jobs.sweep_mail()
    if mails:
        log.info("sent again: mail(s) %s", ", ".join(map(str, mails)))
    return sent


def schedule(settings: Settings) -> tuple[Periodic, ...]:
    """Return the periodic jobs: the campaign check, the sweep, and the automatic analyses.

    The campaign check runs every minute, the sweep of lost jobs and mail every stale period,
    and the look for sets due an automatic analysis every few seconds: claimed like the others,
    so that two workers never queue the same set's analysis twice.
    """
    return (
        Periodic("check-campaign", timedelta(seconds=CAMPAIGN_INTERVAL), jobs.check_campaign),
        Periodic("sweep", stale_after(settings), _sweep),
        Periodic("analyse", timedelta(seconds=ANALYSIS_INTERVAL), jobs.analyse_changed),
    )


def run_due(periodics: tuple[Periodic, ...], worker: str) -> list[str]:
    """Claim each periodic job that is due and run those this worker won; return their names."""
    sessions = resources().sessionmaker
    ran = []
    for job in periodics:
        with opened(sessions) as unit:
            won = periodic.claim(
                unit.session, job.name, every=job.every, worker=worker, now=utcnow()
            )
        if not won:
            continue
        ran.append(job.name)
        try:
            job.run()
        except Exception:  # the next period's claimant tries again; the others still run
            log.exception("periodic job %s failed", job.name)
            continue
        with opened(sessions) as unit:
            periodic.finished(unit.session, job.name, worker=worker, now=utcnow())
    return ran


def record_seen(session: Session, queues: str) -> None:
    """Record that this worker process is alive, serving ``queues`` (the caller commits)."""
    workers.seen(
        session,
        name=worker_name(),
        host=socket.gethostname(),
        pid=os.getpid(),
        queues=queues,
        now=utcnow(),
    )


def remove_expired_uploads(settings: Settings) -> None:
    """Remove the staged task uploads of this host's instance folder that have expired.

    Not claimed: each host stages uploads in its own instance folder, so each host's worker
    looks at its own (the next upload on a web host removes them too).
    """
    upload.sweep(upload.staging_root(settings))
