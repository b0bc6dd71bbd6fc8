"""Fill the organizer's forms in a browser page: a run import, a task bundle upload."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from playwright.sync_api import Page

from tests.browser.conftest import (
    click_and_load,
)


def import_run(page: Page, team: str, data: bytes) -> None:
    """Import a primary run for a team with the organizer page's import form."""
    form = page.locator("section#import form")
    form.get_by_label("Evaluation set").select_option("test")
    form.get_by_label("Team (created if missing)").fill(team)
    form.get_by_label("Slot").select_option("primary")
    form.locator('input[type="file"][name="file"]').set_input_files(
        {"name": "subtask_A_primary.txt", "mimeType": "text/plain", "buffer": data}
    )
    click_and_load(page, form.get_by_role("button", name="Import"))


EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "classification"


def bundle(gold: bytes) -> bytes:
    """Return a zip of the classification example's definition with this gold file."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("sentiment/task.toml", (EXAMPLE / "task.toml").read_bytes())
        archive.writestr("sentiment/gold.tsv", gold)
    return buffer.getvalue()


def choose(page: Page, data: bytes) -> None:
    """Put a zip in the form's bundle field and ask for the preview."""
    form = page.locator("form#task-upload")
    form.get_by_label("Bundle (.zip)").set_input_files(
        {"name": "sentiment.zip", "mimeType": "application/zip", "buffer": data}
    )
    click_and_load(page, form.get_by_role("button", name="Check and preview"))
