"""A task page's Markdown sections (overview, evaluation, data, terms), rendered safely."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from leaderboard.services.common.markdown import render_markdown
from leaderboard.tasks.definition import TaskDefinition

#: Each section: its definition key, the id of its ``section`` (a contract) and its tab's label.
SECTIONS = (
    ("overview", "tab-overview", "Overview"),
    ("evaluation", "tab-evaluation", "Evaluation"),
    ("data_description", "tab-data", "Data"),
    ("terms", "tab-terms", "Terms"),
)


@dataclass(frozen=True)
class Section:
    """One tab of a task page: its key, element id, label and sanitized HTML."""

    key: str
    id: str
    label: str
    html: str


@lru_cache(maxsize=256)
def markdown_html(text: str) -> str:
    """Return organizers' Markdown as sanitized HTML (cached: definitions rarely change)."""
    return render_markdown(text)


def task_sections(definition: TaskDefinition) -> list[Section]:
    """Return the sections a definition has, in tab order (its description as a missing overview)."""
    texts = {
        "overview": definition.overview or definition.description.strip(),
        "evaluation": definition.evaluation,
        "data_description": definition.data_description,
        "terms": definition.terms,
    }
    return [
        Section(key, id_, label, markdown_html(texts[key]))
        for key, id_, label in SECTIONS
        if texts[key]
    ]
