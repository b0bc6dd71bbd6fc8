"""The per-team run listing with system descriptions, for the overview paper's participant table."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from leaderboard.models import Run
from leaderboard.services.results.tables import NOT_WITHDRAWN
from leaderboard.states import RunKind
from leaderboard.tables.flat import FlatColumn, FlatExport, FlatRow
from leaderboard.targets import Target

COLUMNS = ("team", "slot", "name", "status", "late", "corrected", "submitted_at", "description")


def run_listing(session: Session, target: Target) -> list[dict[str, Any]]:
    """Return every team run of a set (active ones first), by team then slot; withdrawn teams left out."""
    runs = session.scalars(
        select(Run)
        .where(Run.eval_set_id == target.eval_set.id, Run.kind == RunKind.RUN, NOT_WITHDRAWN)
        .options(selectinload(Run.team))
    ).all()
    rows = [
        {
            "team": r.team.name if r.team else "",
            "slot": r.slot,
            "name": r.name,
            "status": r.status,
            "late": r.late,
            "corrected": r.corrected,
            "submitted_at": r.created_at.isoformat(),
            "description": r.description,
        }
        for r in runs
    ]
    return sorted(
        rows,
        key=lambda x: (x["status"] != "active", x["team"].casefold(), x["slot"], x["submitted_at"]),
    )


def _run_label(row: FlatRow) -> str:
    return row["slot"] if row["name"] == row["slot"] else f"{row['name']} ({row['slot']})"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _late_or_corrected(row: FlatRow) -> bool:
    return bool(row["late"] or row["corrected"])


#: The listing's exports: every run in JSON and CSV; the active ones in Markdown (team, run,
#: description) and LaTeX (team, run, slot, description), late or corrected runs marked.
LISTING = FlatExport(
    fields=COLUMNS,
    markdown=(
        FlatColumn("Team", lambda r: r["team"]),
        FlatColumn("Run", _run_label, marked=_late_or_corrected),
        FlatColumn("Description", lambda r: _one_line(r["description"])),
    ),
    latex=(
        FlatColumn("Team", lambda r: r["team"]),
        FlatColumn("Run", lambda r: r["name"], marked=_late_or_corrected),
        FlatColumn("Slot", lambda r: r["slot"]),
        FlatColumn("Description", lambda r: _one_line(r["description"]), "p{0.5\\linewidth}"),
    ),
    included=lambda r: r["status"] == "active",
)
LISTING_FORMATS = LISTING.writers()
