"""Gunicorn settings for production: ``gunicorn -c gunicorn.conf.py wsgi:app``.

Every value can be overridden by an environment variable of the same name, upper-cased with a
``GUNICORN_`` prefix (e.g. GUNICORN_WORKERS=8).
"""

import multiprocessing
import os


def _env(name: str, default: str) -> str:
    return os.environ.get(f"GUNICORN_{name.upper()}", default)


bind = _env("bind", "0.0.0.0:8000")
# One process per core with a few threads each: measured best on the results page (bench/).
workers = int(_env("workers", str(multiprocessing.cpu_count())))
# Threaded workers keep connections alive (readers load a page and its stylesheet) and let a
# worker serve pages while another thread waits on a slow upload.
threads = int(_env("threads", "4"))
# Scoring a large TREC run takes seconds; uploads over slow links take longer.
timeout = int(_env("timeout", "300"))
graceful_timeout = int(_env("graceful_timeout", "60"))
keepalive = int(_env("keepalive", "5"))
# Workers keep rendered tables in memory per revision of a set; recycling them would empty
# those caches under load, so it is off unless asked for (GUNICORN_MAX_REQUESTS).
max_requests = int(_env("max_requests", "0"))
max_requests_jitter = int(_env("max_requests_jitter", "0"))
# Heartbeat files in memory, not on a possibly slow disk.
worker_tmp_dir = _env("worker_tmp_dir", "/dev/shm" if os.path.isdir("/dev/shm") else "/tmp")
# The application writes one JSON line per request itself (logger "leaderboard.access").
accesslog = None
errorlog = "-"
loglevel = _env("loglevel", "info")
forwarded_allow_ips = _env("forwarded_allow_ips", "127.0.0.1")
