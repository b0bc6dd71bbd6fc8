"""``leaderboard remote`` against a real gunicorn: local check, upload, verdicts, exit statuses."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, func, select
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool

from leaderboard.models import Run
from tests.live import BIN, REPO, LiveServer
from tests.runs import PRESET, oracle_run, own_campaign, post_evaluation_phases

T3 = "semeval2016-task3"
GOLD_DEV_A = (
    PRESET / "gold" / "dev" / "SemEval2016-Task3-CQA-QL-dev-subtaskA.xml.subtaskA.relevancy"
)
BROKEN = b"Q1\tQ1_C1\t0\t0.5\ttrue\nthis is not a run line\n"


@pytest.fixture(scope="module")
def live(template_instance: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    root = tmp_path_factory.mktemp("remote")
    server = LiveServer.from_template(template_instance, root, workers=2)
    server.add_participant("Aurora", "alice@example.org", "x" * 12)
    # Subtask B's test phase ended long ago (no late runs); C has no phase (closed); A's dev
    # gold was corrected once.
    own_campaign(server, T3, ("B", "C"))
    server.cli(
        "phase",
        T3,
        "B",
        "test",
        "--set",
        "test",
        "--start",
        "2016-01-01T00:00:00Z",
        "--end",
        "2016-02-01T00:00:00Z",
    )
    corrected = root / "corrected-gold.txt"
    corrected.write_bytes(GOLD_DEV_A.read_bytes().replace(b"\ttrue\n", b"\tfalse\n", 1))
    server.cli("set-gold", T3, "A", str(corrected), "--set", "dev")
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def token(live: LiveServer) -> str:
    return live.cli("token", "alice@example.org", "--name", "remote tests").strip()


def remote(
    live: LiveServer, *args: str, token: str | None = None, cwd: Path
) -> subprocess.CompletedProcess[str]:
    """Run ``leaderboard remote ARGS`` with no database at hand (a bogus database URL)."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        # The code under test, wherever the console script was installed from.
        "PYTHONPATH": str(REPO),
        "LEADERBOARD_DATABASE_URL": "sqlite:////nonexistent/folder/no.sqlite3",
        "LEADERBOARD_SERVER": live.url,
    }
    if token is not None:
        env["LEADERBOARD_TOKEN"] = token
    return subprocess.run(
        [str(BIN / "leaderboard"), "remote", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def run_count(live: LiveServer) -> int:
    engine = create_engine(live.database_url, poolclass=NullPool)
    with Session(engine) as session:
        n = session.scalar(select(func.count()).select_from(Run).where(Run.kind == "run"))
    engine.dispose()
    return int(n or 0)


def test_a_good_run_is_checked_uploaded_and_its_scores_printed(
    live: LiveServer, token: str, tmp_path: Path
) -> None:
    run = tmp_path / "run.txt"
    run.write_bytes(oracle_run())
    before = run_count(live)
    out = remote(
        live,
        "submit",
        "--server",
        live.url,
        "--token",
        token,
        T3,
        "A",
        str(run),
        "--name",
        "oracle",
        "--description",
        "all true",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "The run passed the local check." in out.stdout
    assert "Accepted: run" in out.stdout and "slot primary, status active" in out.stdout
    map_line = next(line for line in out.stdout.splitlines() if line.startswith("MAP"))
    assert map_line.endswith("(official)")
    assert run_count(live) == before + 1
    listed = remote(live, "runs", "--json", token=token, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    newest = json.loads(listed.stdout)["runs"][0]
    assert newest["name"] == "oracle" and newest["description"] == "all true"
    # The printed MAP is the stored score in the table's scale, with the table's decimals.
    assert f"{newest['scores']['MAP']:.2f}" in map_line
    # Warnings found here are not repeated from the server's verdict.
    warnings = [line for line in out.stdout.splitlines() if line.startswith("warning: ")]
    assert warnings and len(warnings) == len(set(warnings))
    table = remote(live, "runs", token=token, cwd=tmp_path)
    row = next(line for line in table.stdout.splitlines() if line.startswith(f"{newest['id']} "))
    assert f"MAP {newest['scores']['MAP']:.2f}" in row and "oracle" in row


def test_a_run_failing_the_local_check_sends_nothing(
    live: LiveServer, token: str, tmp_path: Path
) -> None:
    run = tmp_path / "broken.txt"
    run.write_bytes(BROKEN)
    before = run_count(live)
    out = remote(live, "submit", T3, "A", str(run), token=token, cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "line 2: " in out.stdout and "line 2: Line 2" not in out.stdout
    assert "The run was rejected locally; nothing was sent." in out.stdout
    assert "Accepted" not in out.stdout
    assert run_count(live) == before


def test_a_run_the_server_rejects_exits_1_with_its_issues(
    live: LiveServer, token: str, tmp_path: Path
) -> None:
    # A's dev gold was corrected on the server, so the local copy no longer applies.
    run = tmp_path / "broken.txt"
    run.write_bytes(BROKEN)
    before = run_count(live)
    out = remote(live, "submit", T3, "A", str(run), "--set", "dev", token=token, cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "not checked locally" in out.stdout
    assert "Rejected by the server" in out.stdout and "line 2: " in out.stdout
    assert run_count(live) == before


def test_a_passed_deadline_is_a_refused_request(
    live: LiveServer, token: str, tmp_path: Path
) -> None:
    gold_b = PRESET / "gold" / "test" / "SemEval2016-Task3-CQA-QL-test.xml.subtaskB.relevancy"
    run = tmp_path / "b.txt"
    run.write_bytes(oracle_run(gold_b))
    out = remote(live, "submit", T3, "B", str(run), token=token, cwd=tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "Refused (409): The deadline of phase test passed" in out.stderr


def test_a_subtask_without_a_phase_is_a_refused_request(
    live: LiveServer, token: str, tmp_path: Path
) -> None:
    gold_c = PRESET / "gold" / "test" / "SemEval2016-Task3-CQA-QL-test.xml.subtaskC.relevancy"
    run = tmp_path / "c.txt"
    run.write_bytes(oracle_run(gold_c))
    before = run_count(live)
    out = remote(live, "submit", T3, "C", str(run), token=token, cwd=tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    assert (
        "Refused (409): Uploads to semeval2016-task3 C (test set) are closed: no phase is open."
        in out.stderr
    )
    assert run_count(live) == before
    listed = remote(live, "tasks", "--json", token=token, cwd=tmp_path)
    tasks = json.loads(listed.stdout)["tasks"]
    t3 = next(t for t in tasks if t["slug"] == T3)
    sets = {(st["slug"], es["slug"]): es for st in t3["subtasks"] for es in st["sets"]}
    assert sets[("C", "test")]["uploads_open"] is False and sets[("C", "test")]["phases"] == []
    assert sets[("A", "test")]["uploads_open"] is True


def test_bad_tokens_unknown_tasks_and_dead_servers_are_refused_requests(
    live: LiveServer, tmp_path: Path
) -> None:
    run = tmp_path / "run.txt"
    run.write_bytes(oracle_run())
    bad = remote(live, "submit", T3, "A", str(run), token="lb_wrong", cwd=tmp_path)
    assert bad.returncode == 2 and "Refused (401)" in bad.stderr
    missing = remote(live, "tasks", cwd=tmp_path)
    assert missing.returncode == 2 and "--token" in missing.stderr
    dead = remote(live, "runs", "--server", "http://127.0.0.1:9", token="lb_x", cwd=tmp_path)
    assert dead.returncode == 2 and "cannot reach http://127.0.0.1:9" in dead.stderr


def test_an_unknown_subtask_is_named(live: LiveServer, token: str, tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_bytes(oracle_run())
    out = remote(live, "submit", T3, "Z", str(run), token=token, cwd=tmp_path)
    assert out.returncode == 2
    assert "task semeval2016-task3 has no subtask 'Z' (it has: A, B, C, D)" in out.stderr


def test_runs_and_tasks_list_in_columns_with_the_token_from_the_environment(
    live: LiveServer, token: str, tmp_path: Path
) -> None:
    runs = remote(live, "runs", token=token, cwd=tmp_path)
    assert runs.returncode == 0, runs.stderr
    header = runs.stdout.splitlines()[0].split()
    assert header[:6] == ["ID", "TASK", "SUBTASK", "SET", "SLOT", "STATUS"]
    tasks = remote(live, "tasks", token=token, cwd=tmp_path)
    assert tasks.returncode == 0, tasks.stderr
    b_test = [line.split() for line in tasks.stdout.splitlines() if line.startswith(f"{T3}  B")]
    assert [T3, "B", "test", "test", "2016-01-01T00:00:00Z", "2016-02-01T00:00:00Z", "no"] in [
        row[:7] for row in b_test
    ]
    as_json = remote(live, "tasks", "--json", token=token, cwd=tmp_path)
    assert {t["slug"] for t in json.loads(as_json.stdout)["tasks"]} >= {T3}


def test_a_ladder_board_answers_with_its_verdict_not_the_scores(
    live: LiveServer, token: str, tmp_path: Path
) -> None:
    phase = post_evaluation_phases(T3, "A")[0]
    live.cli("phase", T3, "A", phase, "--board", "ladder")
    try:
        run = tmp_path / "run.txt"
        run.write_bytes(oracle_run())
        out = remote(
            live, "submit", T3, "A", str(run), "--slot", "contrastive1", token=token, cwd=tmp_path
        )
        assert out.returncode == 0, out.stdout + out.stderr
        assert "Ladder board: " in out.stdout
        assert not any(line.startswith("MAP") for line in out.stdout.splitlines())
        table = remote(live, "runs", token=token, cwd=tmp_path)
        assert "Ladder: " in table.stdout
    finally:
        live.cli("phase", T3, "A", phase, "--board", "slots")
