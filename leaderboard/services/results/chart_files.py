"""Charts drawn once by the worker and stored: a request serves the stored file or says it waits.

A chart's key is the hash of everything drawn (kind, format, labels, numbers and the drawing
code's version), so a page finds the file of what it shows by computing that key; an anonymous
and a named variant are two files, and no reader is served a variant drawn for another. Pages
never draw: a chart not stored yet is queued for the worker and answered "being drawn".
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from importlib.metadata import version
from typing import Any

from sqlalchemy.orm import Session

from leaderboard.db import insert_missing
from leaderboard.jobqueue import DRAW_CHART, enqueue_once
from leaderboard.models import ChartFile
from leaderboard.storage import Store

# leaderboard.charts imports matplotlib (a third of a second): only the drawing imports it, so
# the command line and the pages, which only look charts up, start without it.

#: The kinds of chart, each drawn from its data by ``draw``.
KINDS = ("measure", "matrix", "difference", "progress")
#: Seconds before a chart still not drawn is asked of the workers again (a lost message).
ASK_AGAIN_AFTER = 30.0

#: A chart to draw: its kind, format and data, as ``draw_chart`` takes them.
Chart = tuple[str, str, dict[str, Any]]


@cache
def renderer() -> str:
    """Return what draws the charts: stored charts are keyed by it, so new code draws anew."""
    return f"leaderboard-charts-3/matplotlib-{version('matplotlib')}"


def chart_key(kind: str, fmt: str, data: dict[str, Any]) -> str:
    """Return the key of a chart: the SHA-256 of its kind, format, drawn data and renderer."""
    payload = {"renderer": renderer(), "kind": kind, "fmt": fmt, "data": data}
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class StoredChart:
    """A chart's stored file and its key (which serves as its ETag)."""

    key: str
    body: bytes


def find_chart(
    session: Session, store: Store, kind: str, fmt: str, data: dict[str, Any]
) -> StoredChart | None:
    """Return the stored chart of ``data``, or None when it is not drawn yet."""
    key = chart_key(kind, fmt, data)
    row = session.get(ChartFile, key)
    if row is None or not store.exists(row.storage_key):
        return None
    return StoredChart(key, store.read(row.storage_key))


def is_drawn(session: Session, store: Store, kind: str, fmt: str, data: dict[str, Any]) -> bool:
    """Return whether the chart of ``data`` is stored (without reading its file)."""
    row = session.get(ChartFile, chart_key(kind, fmt, data))
    return row is not None and store.exists(row.storage_key)


def request_chart(session: Session, kind: str, fmt: str, data: dict[str, Any]) -> None:
    """Queue the drawing of a chart for the worker, once however often readers ask meanwhile."""
    enqueue_once(session, chart_key(kind, fmt, data), ASK_AGAIN_AFTER, DRAW_CHART, kind, fmt, data)


def _draw(kind: str, fmt: str, data: dict[str, Any]) -> bytes:
    """Draw one chart of a kind from its data."""
    from leaderboard import charts

    if kind == "measure":
        rows = data["rows"]
        return charts.measure_chart(
            [r["label"] for r in rows],
            [r["value"] for r in rows],
            [tuple(r["interval"]) if r["interval"] else None for r in rows],
            [r["cluster"] for r in rows],
            measure=data["measure"],
            fmt=fmt,
        )
    if kind == "matrix":
        return charts.pvalue_matrix(data["labels"], data["matrix"], alpha=data["alpha"], fmt=fmt)
    if kind == "difference":
        return charts.difference_chart(
            data["units"], data["differences"], measure=data["measure"], unit=data["unit"],
            fmt=fmt,
        )  # fmt: skip
    if kind == "progress":
        return charts.progress_chart(
            [(t["team"], [(p[0], p[2]) for p in t["points"]]) for t in data["teams"]],
            measure=data["measure"],
            lower_is_better=data["lower_is_better"],
            fmt=fmt,
        )
    raise ValueError(f"unknown chart kind {kind!r}")


def draw_chart(session: Session, store: Store, kind: str, fmt: str, data: dict[str, Any]) -> bytes:
    """Return the chart of ``data``: the stored file, or drawn now once and stored (the worker).

    Its row joins the caller's transaction, to be committed before the next chart is drawn
    (SQLite's one write lock is taken by the row's INSERT and held until then).
    """
    if kind not in KINDS:
        raise ValueError(f"unknown chart kind {kind!r}")
    key = chart_key(kind, fmt, data)
    row = session.get(ChartFile, key)
    if row is not None and store.exists(row.storage_key):
        return store.read(row.storage_key)
    body = _draw(kind, fmt, data)
    storage_key, sha = store.put(body)
    if row is not None:
        return body  # the row was there, its file lost (a restore): stored again, same bytes
    # Another worker may store the same chart meanwhile: its row points at the same bytes.
    insert_missing(
        session, ChartFile, "key", {"key": key, "sha256": sha, "storage_key": storage_key}
    )
    return body


def measure_data(rows: list[dict[str, Any]], measure: str) -> dict[str, Any]:
    """Return what the measure chart draws: rows (label, value, interval, cluster)."""
    return {"rows": rows, "measure": measure}


def matrix_data(
    labels: list[str], matrix: list[list[float | None]], alpha: float
) -> dict[str, Any]:
    """Return what the adjusted p-value matrix chart draws."""
    return {"labels": labels, "matrix": matrix, "alpha": alpha}


def difference_data(
    units: list[str], differences: list[float], *, measure: str, unit: str
) -> dict[str, Any]:
    """Return what a run's per-unit difference chart draws."""
    return {"units": units, "differences": differences, "measure": measure, "unit": unit}
