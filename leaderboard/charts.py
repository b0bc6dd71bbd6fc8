"""Draw the analysis charts as SVG (pages) and PDF (papers) with matplotlib, reproducibly.

No pyplot: each chart is a ``Figure`` of its own, safe in any thread, and the files carry no
date or random ids, so the same numbers give the same bytes.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import matplotlib
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

FORMATS = ("svg", "pdf")
# Stable element ids in SVG output (matplotlib salts them randomly otherwise).
matplotlib.rcParams["svg.hashsalt"] = "leaderboard"
matplotlib.rcParams["svg.fonttype"] = "none"
matplotlib.rcParams["font.family"] = "DejaVu Sans"
# Labels are plain text: never handed to TeX, never parsed as mathtext ("$...$").
matplotlib.rcParams["text.usetex"] = False
PLAIN: dict[str, Any] = {"parse_math": False}


def _save(figure: Figure, fmt: str) -> bytes:
    """Return the figure's file in ``svg`` or ``pdf`` without dates in its metadata."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown chart format {fmt!r}")
    out = io.BytesIO()
    metadata = {"Date": None} if fmt == "svg" else {"CreationDate": None, "ModDate": None}
    figure.savefig(out, format=fmt, bbox_inches="tight", metadata=metadata)
    return out.getvalue()


def measure_chart(
    labels: Sequence[str],
    values: Sequence[float],
    intervals: Sequence[tuple[float, float] | None],
    clusters: Sequence[int] | None,
    *,
    measure: str,
    fmt: str = "svg",
) -> bytes:
    """Return the measure per run (table order, top down) with 95 % whiskers, clusters shaded."""
    n = len(labels)
    figure = Figure(figsize=(7.0, max(1.6, 0.32 * n + 0.8)))
    axes = figure.add_subplot()
    ys = list(range(n))[::-1]
    if clusters:
        # Alternate shading marks where one cluster ends and the next begins.
        for y, cluster in zip(ys, clusters, strict=True):
            if cluster % 2 == 0:
                axes.axhspan(y - 0.5, y + 0.5, color="#eeeeee", zorder=0)
    for y, value, interval in zip(ys, values, intervals, strict=True):
        if interval is not None:
            low, high = interval
            axes.plot([low, high], [y, y], color="#555555", linewidth=1.2, zorder=2)
            axes.plot([low, low], [y - 0.15, y + 0.15], color="#555555", linewidth=1.2, zorder=2)
            axes.plot([high, high], [y - 0.15, y + 0.15], color="#555555", linewidth=1.2, zorder=2)
        axes.plot([value], [y], marker="o", color="#1f4e8c", markersize=5, zorder=3)
    axes.set_yticks(ys, list(labels), **PLAIN)
    axes.set_ylim(-0.5, n - 0.5)
    axes.set_xlabel(f"{measure} (95 % bootstrap interval)", **PLAIN)
    axes.grid(axis="x", color="#dddddd", linewidth=0.6)
    axes.set_axisbelow(True)
    return _save(figure, fmt)


def difference_chart(
    queries: Sequence[str],
    differences: Sequence[float],
    *,
    measure: str,
    fmt: str = "svg",
    unit: str = "queries",
) -> bytes:
    """Return a run's per-query difference from the median of all runs, sorted."""
    figure = Figure(figsize=(7.0, 3.2))
    axes = figure.add_subplot()
    xs = range(len(queries))
    # One collection of bars, not a patch per bar: a few hundred bars draw 5x faster.
    bars = [((x - 0.45, 0.0), (x - 0.45, d), (x + 0.45, d), (x + 0.45, 0.0))
            for x, d in zip(xs, differences, strict=True)]  # fmt: skip
    colors = ["#b03a2e" if d < 0 else "#1f4e8c" for d in differences]
    axes.add_collection(PolyCollection(bars, facecolors=colors, edgecolors="none"))
    axes.set_xlim(-0.6, max(len(queries), 1) - 0.4)
    axes.autoscale_view(scalex=False)
    axes.axhline(0, color="#333333", linewidth=0.8)
    axes.set_xlabel(f"{unit}, sorted by difference ({len(queries)})", **PLAIN)
    axes.set_ylabel(f"{measure} − median of runs", **PLAIN)
    if len(queries) <= 40:
        axes.set_xticks(list(xs), list(queries), rotation=90, fontsize=7, **PLAIN)
    else:
        axes.set_xticks([])
    return _save(figure, fmt)


def pvalue_matrix(
    labels: Sequence[str],
    p_adjusted: Sequence[Sequence[float | None]],
    *,
    alpha: float,
    fmt: str = "svg",
) -> bytes:
    """Return the adjusted p-value matrix: darker is smaller, significant cells outlined."""
    n = len(labels)
    figure = Figure(figsize=(max(3.0, 0.45 * n + 1.6), max(2.6, 0.45 * n + 1.2)))
    axes = figure.add_subplot()
    grid = [[float("nan") if v is None else v for v in row] for row in p_adjusted]
    image = axes.imshow(grid, cmap="Blues_r", vmin=0.0, vmax=1.0)
    for i in range(n):
        for j in range(n):
            value = p_adjusted[i][j]
            if value is None:
                continue
            axes.text(j, i, f"{value:.2g}", ha="center", va="center", fontsize=6,
                      color="white" if value < 0.3 else "black")  # fmt: skip
            if value < alpha:
                axes.add_patch(
                    Rectangle(
                        (j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="#b03a2e", linewidth=1.2
                    )
                )
    axes.set_xticks(range(n), list(labels), rotation=90, fontsize=7, **PLAIN)
    axes.set_yticks(range(n), list(labels), fontsize=7, **PLAIN)
    bar = figure.colorbar(image, ax=axes)
    bar.set_label(f"adjusted p (outlined: < {alpha})", **PLAIN)
    return _save(figure, fmt)


#: Teams drawn in colour and named in the legend; the others are thin grey lines.
PROGRESS_NAMED = 12
#: Matplotlib's "tab10" and two more, one per named team.
PROGRESS_COLOURS = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
    "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#1b9e77", "#d95f02",
)  # fmt: skip


def progress_chart(
    teams: Sequence[tuple[str, Sequence[tuple[str, float]]]],
    *,
    measure: str,
    lower_is_better: bool = False,
    fmt: str = "svg",
) -> bytes:
    """Return each team's best score so far over time as step lines (teams best first).

    ``teams`` holds (name, [(ISO 8601 UTC time, best so far), ...]) in time order; every line
    runs on to the last time of all, so that a team's best stays visible after its last run.
    """
    from datetime import datetime

    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter, date2num

    def when(text: str) -> datetime:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))

    figure = Figure(figsize=(7.0, 3.6))
    axes = figure.add_subplot()
    last = max((when(points[-1][0]) for _name, points in teams if points), default=None)
    for i, (name, points) in enumerate(teams):
        xs = [when(t) for t, _ in points]
        ys = [v for _, v in points]
        if last is not None and xs and xs[-1] < last:
            xs, ys = [*xs, last], [*ys, ys[-1]]
        named = i < PROGRESS_NAMED
        style: dict[str, Any] = (
            {
                "color": PROGRESS_COLOURS[i % len(PROGRESS_COLOURS)],
                "linewidth": 1.6,
                "label": name,
                "zorder": 3,
            }
            if named
            else {"color": "#bbbbbb", "linewidth": 0.8, "zorder": 2}
        )
        if i == PROGRESS_NAMED:
            style["label"] = f"{len(teams) - PROGRESS_NAMED} more teams"

        days = date2num(xs)
        axes.step(days, ys, where="post", **style)
        axes.plot(days[: len(points)], ys[: len(points)], "o", markersize=3, color=style["color"],
                  zorder=style["zorder"])  # fmt: skip
    axes.xaxis_date()
    locator = AutoDateLocator()
    axes.xaxis.set_major_locator(locator)
    axes.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    direction = "lower is better" if lower_is_better else "higher is better"
    axes.set_ylabel(f"best {measure} so far ({direction})", **PLAIN)
    axes.set_xlabel("upload time (UTC)", **PLAIN)
    axes.grid(color="#dddddd", linewidth=0.6)
    axes.set_axisbelow(True)
    if teams:
        legend = axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0),
                             fontsize=7, frameon=False, title="best first")  # fmt: skip
        for text in legend.get_texts():
            text.set_parse_math(False)
    return _save(figure, fmt)
