"""Gunicorn settings for production: ``gunicorn -c gunicorn.conf.py wsgi:app``.

Every value can be overridden by an environment variable of the same name, upper-cased with a
``GUNICORN_`` prefix (e.g. GUNICORN_WORKERS=8).
"""

import multiprocessing
import os
import sys
from typing import Any

from gunicorn.glogging import Logger

# The repository, so that the redaction below imports however gunicorn was started.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from leaderboard.redaction import RedactingFilter, redact  # noqa: E402


def _env(name: str, default: str) -> str:
    return os.environ.get(f"GUNICORN_{name.upper()}", default)


bind = _env("bind", "0.0.0.0:8000")
# One single-threaded (sync) process per core. Uploads are CPU-bound (parse, check, score):
# threads of one process share one interpreter lock, so a deadline burst on threaded workers
# finishes every upload late (p95 about 0.8 s against about 0.45 s here, bench/README.md),
# while cached result pages are served as well either way. A sync worker is held for the
# whole request, body included: in production put a buffering proxy in front (nginx buffers
# request bodies by default), or set GUNICORN_THREADS=4 for threaded workers.
workers = int(_env("workers", str(multiprocessing.cpu_count())))
threads = int(_env("threads", "1"))
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
# The application writes one JSON line per request itself (logger "leaderboard.access");
# gunicorn's own access log is off unless asked for (GUNICORN_ACCESSLOG=- or a file).
accesslog = _env("accesslog", "") or None
errorlog = "-"
loglevel = _env("loglevel", "info")
forwarded_allow_ips = _env("forwarded_allow_ips", "127.0.0.1")


class RedactingLogger(Logger):
    """Gunicorn's logger, with link tokens and invite codes replaced in every line it writes."""

    def setup(self, cfg: Any) -> None:
        """Set up as gunicorn does, then redact the error log's messages."""
        super().setup(cfg)
        self.error_log.addFilter(RedactingFilter())

    def atoms(self, resp: Any, req: Any, environ: Any, request_time: Any) -> dict[str, Any]:
        """Return the access log's fields with secrets replaced (request line, path, referer)."""
        atoms: dict[str, Any] = super().atoms(resp, req, environ, request_time)
        return {k: redact(v) if isinstance(v, str) else v for k, v in atoms.items()}


logger_class = RedactingLogger
