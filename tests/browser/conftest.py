"""Browser fixtures: Debian's Chromium driven by Playwright, and a live gunicorn server per test.

The server runs ``gunicorn wsgi:app`` on a copy of the session's template instance (SQLite, or a
fresh PostgreSQL copy when LEADERBOARD_TEST_DATABASE_URL is set) and reads its time from a clock
file that tests rewrite. Accounts are made with the ``leaderboard`` command on the same database.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    Locator,
    Page,
    expect,
    sync_playwright,
)

from bench._common import free_port
from tests.conftest import PG_URL
from tests.live import LiveServer
from tests.shared_data import REPO_ROOT

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = [
    "--no-sandbox",  # we run as root, where Chromium's sandbox refuses to start
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = REPO_ROOT / "test-artifacts" / "screenshots"
BIN = Path(sys.executable).parent
#: The server's time when a test starts: fixed, so every time a page shows is known.
START = "2016-01-05T12:00:00+00:00"
#: How long the server may take to boot; a bound on waiting, not an assertion.
BOOT_SECONDS = 60
#: A time inside the SemEval-2016 presets' post-evaluation phases (open since 2016-02-01), when a
#: participant test uploads to a preset without running a campaign of its own.
POST_EVALUATION = "2016-02-05T12:00:00+00:00"
TASK_A = "/tasks/semeval2016-task3/A"
ORGANIZE_A = "/organizer/tasks/semeval2016-task3/A"

# Auto-waiting assertions wait up to this long: the machine is small and shared.
expect.set_options(timeout=20_000)


def _missing(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI=true requires the browser tests to run")
    pytest.skip(reason)


@pytest.fixture(scope="package")
def chromium() -> Iterator[Browser]:
    """Launch Debian's headless Chromium once for the browser tests."""
    if not CHROMIUM.exists():
        _missing(f"{CHROMIUM} not found (apt-get install chromium)")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS, headless=True)
        yield browser
        browser.close()


@contextmanager
def serve(
    template_instance: Path, tmp_path: Path, *, mail_worker: bool = False, **settings: str
) -> Iterator[LiveServer]:
    """Serve a fresh copy of the template instance with gunicorn (2 workers) on a free port.

    ``settings`` are extra environment variables of the server (e.g. its mail URL). Links in
    mail start with the server's own address, as under ``make run``; with ``mail_worker`` a
    worker beside it delivers the mail the server queues.
    """
    port = free_port()
    server = LiveServer.from_template(
        template_instance,
        tmp_path,
        workers=2,
        LEADERBOARD_SECRET_KEY="browser-test-secret",
        # Log-ins last so long by the server's clock, which the tests move by weeks.
        LEADERBOARD_SESSION_HOURS=str(24 * 366),
        **{"LEADERBOARD_BASE_URL": f"http://127.0.0.1:{port}", **settings},
    )
    server.port = port
    server.log_file = tmp_path / "gunicorn.log"
    server.mail_worker = mail_worker
    server.set_clock(START)
    try:
        server.start()
    except RuntimeError as exc:
        pytest.fail(f"{exc}:\n{server.log_file.read_text()}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def live_server(chromium: Browser, tmp_path: Path, template_instance: Path) -> Iterator[LiveServer]:
    """Serve a fresh copy of the template instance (see ``serve``)."""
    # Asking for ``chromium`` first skips before any server starts when there is no browser.
    with serve(template_instance, tmp_path) as server:
        yield server


@pytest.fixture
def open_page(
    chromium: Browser, live_server: LiveServer, request: pytest.FixtureRequest
) -> Iterator[Callable[[], Page]]:
    """Return ``open_page()``: a page in a fresh browser context (its own cookies, its own user).

    When the test fails, every page still open is screenshotted before it closes.
    """
    contexts: list[BrowserContext] = []
    for stale in _screenshot_folder().glob(f"{_safe(request.node.name)}-failure-*.png"):
        stale.unlink()  # from an earlier failed run; would mislead whoever reads the artifacts

    def open_() -> Page:
        context = chromium.new_context(
            base_url=live_server.url,
            viewport={"width": 1280, "height": 900},
            accept_downloads=True,
        )
        context.set_default_timeout(20_000)
        contexts.append(context)
        return context.new_page()

    yield open_
    report = getattr(request.node, "rep_call", None)
    for i, context in enumerate(contexts):
        if report is not None and report.failed:
            for j, page in enumerate(context.pages):
                _screenshot(page, request.node.name, f"failure-{i}-{j}")
        context.close()


@pytest.fixture
def page(open_page: Callable[[], Page]) -> Page:
    """Return a page in a fresh browser context on the live server."""
    return open_page()


def _screenshot_folder() -> Path:
    # The PostgreSQL pass keeps its own screenshots beside the SQLite ones.
    return SCREENSHOTS / "postgresql" if PG_URL else SCREENSHOTS


def _safe(test_name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", test_name)


def _screenshot(page: Page, test_name: str, step: str = "") -> Path:
    folder = _screenshot_folder()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{_safe(test_name)}{'-' + step if step else ''}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


@pytest.fixture
def screenshot(request: pytest.FixtureRequest) -> Callable[..., Path]:
    """Return ``shot(page, step="")``: a full-page screenshot named after the test (and step)."""

    def shot(page: Page, step: str = "") -> Path:
        return _screenshot(page, request.node.name, step)

    return shot


def log_in(page: Page, email: str, password: str) -> None:
    """Log in through the form, as a person would."""
    page.goto("/login")
    page.get_by_label("E-mail").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("button", name="Log out")).to_be_visible()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Keep each phase's report on the test item, so fixtures can tell a failed test."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


def click_and_load(page: Page, target: Locator) -> None:
    """Click something that submits a form or follows a link, and wait for the new page."""
    with page.expect_navigation():
        target.click()


def upload_run(
    page: Page,
    data: bytes,
    *,
    eval_set: str = "test",
    slot: str = "primary",
    name: str = "my-run",
    filename: str = "subtask_A_primary.txt",
) -> None:
    """Upload a run through the form at /tasks/semeval2016-task3/A/submit."""
    if not page.url.endswith(TASK_A + "/submit"):
        page.goto(TASK_A + "/submit")
    page.get_by_label("Evaluation set").select_option(eval_set)
    page.get_by_label("Run slot").select_option(slot)
    page.get_by_label("Run name").fill(name)
    page.locator('input[type="file"][name="file"]').set_input_files(
        {"name": filename, "mimeType": "text/plain", "buffer": data}
    )
    click_and_load(page, page.get_by_role("button", name="Upload and score"))


def ranking_rows(page: Page) -> list[list[tuple[str, str | None]]]:
    """Return the ranking table's body as rows of (cell text, subscript).

    The text leaves out subscripts, superscripts and confidence intervals (``.ci``).
    """
    rows = page.evaluate(
        """() => Array.from(document.querySelectorAll('table.ranking tbody tr')).map(
            tr => Array.from(tr.children).map(cell => {
                const sub = cell.querySelector('sub');
                const bare = cell.cloneNode(true);
                bare.querySelectorAll('sub, sup, .ci').forEach(e => e.remove());
                return [bare.textContent.trim(), sub ? sub.textContent.trim() : null];
            }))"""
    )
    return [[(text, sub) for text, sub in row] for row in rows]


def download(page: Page, link: str) -> bytes:
    """Click a download link of the page and return the downloaded file's bytes."""
    with page.expect_download() as info:
        page.get_by_role("link", name=link, exact=True).click()
    path = info.value.path()
    return Path(path).read_bytes()


#: Column labels of a Task 3 table, in order.
MEASURES = ["MAP", "AvgRec", "MRR", "P", "R", "F1", "Acc"]
#: An oracle run on the test set of A: 315 of the 327 questions have a `true` comment, which caps
#: MAP and MRR at 315/327 = 96.33 %; its labels are the gold's, so P, R, F1 and Acc are 100 %.
ORACLE_TEST_A = ["96.33", "100.00", "96.33", "100.00", "100.00", "100.00", "100.00"]
#: A constant-score run ranks in gold order (equal scores keep it), which for A is the IR
#: baseline's ranking; the IR values and the label shares are the official scorer's (.score
#: files of the 2016 test baselines): 1,329 of 3,270 comments are `true` (40.64 %).
IR_A = ["59.53", "72.60", "67.83"]
CONSTANT_FALSE_A = [*IR_A, "0.00", "0.00", "0.00", "59.36"]
CONSTANT_TRUE_A = [*IR_A, "40.64", "100.00", "57.80", "40.64"]
#: The baseline rows of A's test table: label and displayed cells ("—" where a baseline shows no value);
#: the random baseline is the official 2016 file, scored as in its .score file.
BASELINES_A = [
    ("Baseline 1 (IR)", [*IR_A, "—", "—", "—", "—"]),
    ("Baseline 2 (random)", ["52.80", "66.52", "58.71", "40.56", "74.57", "52.55", "45.26"]),
    ("Baseline 3 (all 'true')", ["—", "—", "—", "40.64", "100.00", "57.80", "40.64"]),
    ("Baseline 4 (all 'false')", ["—", "—", "—", "—", "—", "—", "59.36"]),
]
