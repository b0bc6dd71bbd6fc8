"""Render a table as an HTML fragment with the same macro the pages use (autoescaped)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import jinja2

from leaderboard.tables.model import Table

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


@lru_cache(maxsize=1)
def _template() -> jinja2.Template:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, undefined=jinja2.StrictUndefined
    )
    return env.from_string(
        '{% from "tables/table.html" import render_table %}{{ render_table(table) }}'
    )


def to_html(table: Table) -> str:
    """Return the table as an HTML fragment (a ``<table>`` with its footnotes)."""
    return _template().render(table=table)
