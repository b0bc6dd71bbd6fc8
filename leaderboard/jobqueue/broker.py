"""Configure Celery for the server's broker, and publish tasks to it by name."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from leaderboard.config import Settings
from leaderboard.jobqueue import JOBS_QUEUE, MAIL_QUEUE, QUEUE_OF
from leaderboard.private_files import create_private_file, sqlite_file

if TYPE_CHECKING:
    from celery import Celery

#: Seconds Redis and SQS wait for a taken message's acknowledgement before giving it to another
#: worker. A job's heartbeat hands it over much sooner (see the sweep); this only bounds how
#: long a duplicate message can linger.
VISIBILITY_TIMEOUT = 3600


def celery_config(settings: Settings) -> dict[str, Any]:
    """Return the Celery settings: at-least-once delivery, no result store, two queues."""
    from leaderboard.jobqueue import embedded

    return {
        "broker_url": embedded.broker_url(settings.broker_url),
        "broker_connection_retry_on_startup": True,
        # The job row is the result; Celery keeps none.
        "task_ignore_result": True,
        "task_store_errors_even_if_ignored": False,
        # Acknowledged once done, and given back when the process running it dies: a job is
        # never lost, and may run twice, which every task allows (they are idempotent).
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "task_default_queue": JOBS_QUEUE,
        "task_routes": {task: {"queue": queue} for task, queue in QUEUE_OF.items()},
        "task_serializer": "json",
        "accept_content": ["json"],
        "broker_transport_options": (
            {"visibility_timeout": VISIBILITY_TIMEOUT}
            if settings.broker_url.startswith(("redis", "rediss", "sqs"))
            else {}
        ),
        "worker_hijack_root_logger": False,
        "worker_redirect_stdouts": False,
        "beat_schedule_filename": str(settings.instance_dir / "celerybeat-schedule"),
        "enable_utc": True,
    }


def make_celery(settings: Settings) -> Celery:
    """Return a Celery application speaking to the configured broker."""
    from celery import Celery

    app = Celery("leaderboard", set_as_current=False)
    app.conf.update(celery_config(settings))
    if settings.broker_url.startswith("sqla+"):
        from leaderboard.jobqueue import embedded

        embedded.register()
        queue_file = sqlite_file(settings.broker_url)
        if queue_file is not None:
            create_private_file(queue_file)
    return app


def prepare_embedded(settings: Settings) -> bool:
    """Create the embedded broker's tables and queues now; return False for another broker.

    Done once by ``leaderboard init``, so that web processes starting together never race to
    create them on their first message.
    """
    if settings.queue_url:
        return False
    from kombu import Queue

    from leaderboard.jobqueue import embedded

    with make_celery(settings).connection_for_write() as conn:
        for name in (JOBS_QUEUE, MAIL_QUEUE):
            Queue(name, channel=conn.default_channel).declare()
    # Messages kombu's own transport kept after taking them (an install from before).
    embedded.purge_taken(settings.broker_url.removeprefix("sqla+"))
    return True


class CeleryDispatcher:
    """Publish tasks through Celery, building its client on first use (the CLI starts fast)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._app: Celery | None = None
        self._lock = threading.Lock()

    @property
    def app(self) -> Celery:
        """Return the Celery client, built once."""
        with self._lock:
            if self._app is None:
                self._app = make_celery(self.settings)
            return self._app

    def send(self, task: str, args: tuple[Any, ...]) -> None:
        """Publish a task message to its queue."""
        self.app.send_task(task, args=list(args), queue=QUEUE_OF.get(task, JOBS_QUEUE))
