"""Pure ranking tables: one model, one build function per style, every export from the model."""

from __future__ import annotations

from leaderboard.tables.model import (
    Cell,
    Column,
    Entry,
    MeasureSpec,
    MetaCell,
    Row,
    SimpleTable,
    Table,
    Value,
)
from leaderboard.tables.styles import STYLES, build_table

__all__ = [
    "STYLES",
    "Cell",
    "Column",
    "Entry",
    "MeasureSpec",
    "MetaCell",
    "Row",
    "SimpleTable",
    "Table",
    "Value",
    "build_table",
]
