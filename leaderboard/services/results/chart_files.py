"""Charts drawn once and stored: each request serves the stored file of what it shows.

A chart's key is the hash of everything drawn (kind, format, labels, numbers and the drawing
code's version), so an analysis' chart is drawn the first time an audience asks for it and
read from the content-addressed store afterwards; an anonymous and a named variant are two
files, and no reader is served a variant drawn for another.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from contextlib import suppress
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from leaderboard.db import transaction
from leaderboard.models import ChartFile
from leaderboard.storage import Store

# leaderboard.charts imports matplotlib (a third of a second): it is imported where a chart is
# keyed or drawn, so the command line and the pages that show no chart start without it.


def chart_key(kind: str, fmt: str, data: dict[str, Any]) -> str:
    """Return the key of a chart: the SHA-256 of its kind, format, drawn data and renderer."""
    from leaderboard import charts

    payload = {"renderer": charts.RENDERER, "kind": kind, "fmt": fmt, "data": data}
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def stored_chart(
    session: Session,
    store: Store,
    kind: str,
    fmt: str,
    data: dict[str, Any],
    draw: Callable[[], bytes],
) -> bytes:
    """Return the chart of ``data``: the stored file, or drawn now once and stored."""
    key = chart_key(kind, fmt, data)
    row = session.get(ChartFile, key)
    if row is not None and store.exists(row.storage_key):
        return store.read(row.storage_key)
    body = draw()
    storage_key, sha = store.put(body)
    if row is not None:
        return body  # the row was there, its file lost (a restore): stored again, same bytes
    # Another request may store the same chart meanwhile: its row points at the same bytes.
    with suppress(IntegrityError), transaction(session):
        session.add(ChartFile(key=key, sha256=sha, storage_key=storage_key))
    return body


def measure_chart(
    session: Session, store: Store, rows: list[dict[str, Any]], measure: str, fmt: str
) -> bytes:
    """Return the measure chart of rows (label, value, interval, cluster), stored once."""
    from leaderboard import charts

    data = {"rows": rows, "measure": measure}
    return stored_chart(
        session,
        store,
        "measure",
        fmt,
        data,
        lambda: charts.measure_chart(
            [r["label"] for r in rows],
            [r["value"] for r in rows],
            [tuple(r["interval"]) if r["interval"] else None for r in rows],
            [r["cluster"] for r in rows],
            measure=measure,
            fmt=fmt,
        ),
    )


def pvalue_matrix(
    session: Session,
    store: Store,
    labels: list[str],
    matrix: list[list[float | None]],
    alpha: float,
    fmt: str,
) -> bytes:
    """Return the adjusted p-value matrix chart, stored once."""
    from leaderboard import charts

    data = {"labels": labels, "matrix": matrix, "alpha": alpha}
    return stored_chart(
        session,
        store,
        "matrix",
        fmt,
        data,
        lambda: charts.pvalue_matrix(labels, matrix, alpha=alpha, fmt=fmt),
    )


def difference_chart(
    session: Session,
    store: Store,
    units: list[str],
    differences: list[float],
    *,
    measure: str,
    unit: str,
    fmt: str,
) -> bytes:
    """Return a run's per-unit difference chart, stored once."""
    from leaderboard import charts

    data = {"units": units, "differences": differences, "measure": measure, "unit": unit}
    return stored_chart(
        session,
        store,
        "difference",
        fmt,
        data,
        lambda: charts.difference_chart(units, differences, measure=measure, unit=unit, fmt=fmt),
    )
