"""Gunicorn settings for production: ``gunicorn -c gunicorn.conf.py wsgi:app``.

Every value can be overridden by an environment variable of the same name, upper-cased with a
``GUNICORN_`` prefix (e.g. GUNICORN_WORKERS=8).
"""

import multiprocessing
import os


def _env(name: str, default: str) -> str:
    return os.environ.get(f"GUNICORN_{name.upper()}", default)


bind = _env("bind", "0.0.0.0:8000")
workers = int(_env("workers", str(max(2, multiprocessing.cpu_count() * 2 + 1))))
threads = int(_env("threads", "1"))
# Scoring a large TREC run takes seconds; uploads over slow links take longer.
timeout = int(_env("timeout", "300"))
graceful_timeout = int(_env("graceful_timeout", "60"))
keepalive = int(_env("keepalive", "5"))
# Recycle workers now and then so a slow leak can never accumulate.
max_requests = int(_env("max_requests", "2000"))
max_requests_jitter = int(_env("max_requests_jitter", "200"))
# Heartbeat files in memory, not on a possibly slow disk.
worker_tmp_dir = _env("worker_tmp_dir", "/dev/shm" if os.path.isdir("/dev/shm") else "/tmp")
# The application writes one JSON line per request itself (logger "leaderboard.access").
accesslog = None
errorlog = "-"
loglevel = _env("loglevel", "info")
forwarded_allow_ips = _env("forwarded_allow_ips", "127.0.0.1")
