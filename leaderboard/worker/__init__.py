"""The background worker: Celery tasks that run job rows, deliver mail and sweep lost jobs."""
