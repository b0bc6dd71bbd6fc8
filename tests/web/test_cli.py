"""The command line: init, accounts, offline scoring, imports, baselines, tables."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import func, select

from leaderboard.cli import leaderboard_group
from leaderboard.models import AuditEvent, GoldFile, Run, Task
from tests.conftest import database_url
from tests.helpers.cli import invoke
from tests.runs import GOLD_TEST_A, oracle_run
from tests.shared_data import shared_path


def test_init_is_safe_to_run_twice(app: Flask, runner: FlaskCliRunner) -> None:
    counts = []
    for _ in range(2):
        result = invoke(runner, "init")
        assert result.exit_code == 0, result.output
        assert "semeval2016-task3" in result.output
        with app.extensions["leaderboard"]["sessionmaker"]() as s:
            counts.append(
                (
                    s.scalar(select(func.count()).select_from(Task)),
                    s.scalar(select(func.count()).select_from(GoldFile)),
                )
            )
            task3 = s.scalar(select(Task).where(Task.slug == "semeval2016-task3"))
            assert task3 is not None
            # 4 subtasks x 2 sets x (gold + random baseline), stored once each.
            assert sum(len(es.gold_files) for st in task3.subtasks for es in st.eval_sets) == 16
    assert counts[0] == counts[1]


def test_starting_an_installed_server_writes_no_audit_line(
    app: Flask, runner: FlaskCliRunner
) -> None:
    def audit_lines() -> int:
        with app.extensions["leaderboard"]["sessionmaker"]() as s:
            return s.scalar(select(func.count()).select_from(AuditEvent)) or 0

    assert invoke(runner, "init").exit_code == 0
    installed = audit_lines()
    # What `make run` does at every start: init, then a worker's periodic work.
    for args in (("init",), ("init",), ("worker", "--once")):
        result = invoke(runner, *args)
        assert result.exit_code == 0, result.output
    assert audit_lines() == installed


def test_accounts_and_token(runner: FlaskCliRunner) -> None:
    assert invoke(runner, "create-team", "Aurora").exit_code == 0
    dup = invoke(runner, "create-team", "Aurora")
    assert dup.exit_code == 1 and "already exists" in dup.output
    result = invoke(
        runner, "create-user", "a@example.org", "--role", "participant", "--team", "Aurora"
    )
    assert result.exit_code == 0 and "Password: " in result.output
    no_team = invoke(runner, "create-user", "b@example.org", "--role", "participant")
    assert no_team.exit_code == 1 and "must belong to a team" in no_team.output
    token = invoke(runner, "token", "a@example.org")
    assert token.exit_code == 0 and token.output.strip().startswith("lb_")


def test_score_offline_json(tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_bytes(oracle_run())
    result = CliRunner().invoke(
        leaderboard_group, ["score", "semeval2016-task3", "A", str(run), "--json"]
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    # Percent scale, unrounded: MAP = 100 * (1 - 12/327).
    assert abs(out["measures"]["MAP"] - 100 * (1 - 12 / 327)) < 1e-9
    assert out["measures"]["AvgRec"] == 100.0
    assert out["issues"] == []
    # 12 questions without a `true` and 10 with only `true` candidates get equal scores throughout.
    assert out["warnings"] == [
        {
            "line": None,
            "message": "In 22 questions all candidates have the same score; they are ranked in the official order.",
        }
    ]


def test_score_offline_rejects_with_exit_1(tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    lines = oracle_run().decode().splitlines()
    run.write_text("\n".join(lines[:-1]) + "\n")
    result = CliRunner().invoke(
        leaderboard_group, ["score", "semeval2016-task3", "A", str(run), "--json"]
    )
    assert result.exit_code == 1
    out = json.loads(result.output)
    assert out["measures"] == {}
    assert any(
        i["message"] == "Expected 3,270 lines for subtask A (test), found 3,269."
        for i in out["issues"]
    )


def test_score_dev_set(tmp_path: Path) -> None:
    gold_dev = (
        GOLD_TEST_A.parents[1]
        / "dev"
        / "SemEval2016-Task3-CQA-QL-dev-subtaskA.xml.subtaskA.relevancy"
    )
    run = tmp_path / "run.txt"
    run.write_bytes(oracle_run(gold_dev))
    result = CliRunner().invoke(
        leaderboard_group, ["score", "semeval2016-task3", "A", str(run), "--set", "dev"]
    )
    assert result.exit_code == 0, result.output
    # 33 of 244 dev questions have no relevant comment: MAP = 1 - 33/244 = 0.8648.
    assert "\nMAP        86.48   (0.8648)\n" in result.output


def test_import_baselines_and_tables(app: Flask, runner: FlaskCliRunner) -> None:
    submissions = shared_path("semeval2016-task3", "submissions")
    result = invoke(runner, "import-runs", "semeval2016-task3", "D", "--lenient", str(submissions))
    assert result.exit_code == 0, result.output
    assert result.output.count("matches") == 13
    assert "DIFFERS" not in result.output
    result = invoke(runner, "add-baselines", "semeval2016-task3", "D")
    assert result.exit_code == 0, result.output
    # The official random baseline of D: ALL SCORES 0.2979 0.3100 33.7138 0.1953 0.2066 0.2008 0.6835
    assert (
        "Baseline 2 (random): MAP 0.2979  AvgRec 0.3100  MRR 33.7138  P 0.1953  R 0.2066  F1 0.2008  Acc 0.6835"
        in result.output
    )
    table = json.loads(invoke(runner, "table", "semeval2016-task3", "D", "--format", "json").output)
    labels = [r["label"] for r in table["rows"]]
    assert len(labels) == 13 + 4
    assert labels[0] == "SLS-primary" and table["rows"][0]["rank"] == 1
    assert labels[-4:] == [
        "Baseline 1 (IR)",
        "Baseline 2 (random)",
        "Baseline 3 (all 'true')",
        "Baseline 4 (all 'false')",
    ]
    latex = invoke(runner, "table", "semeval2016-task3", "D", "--format", "latex").output
    assert "\\toprule" in latex and "$_{1}$" in latex
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        actions = s.scalars(select(AuditEvent.action)).all()
        assert actions.count("import-run") == 13 and "add-baselines" in actions


def test_import_single_file_strict_rejects_truncated_run(
    app: Flask, runner: FlaskCliRunner
) -> None:
    run = shared_path("semeval2016-task3", "submissions", "ConvKN", "subtask_D_contrastive1.txt")
    result = invoke(
        runner,
        "import-runs",
        "semeval2016-task3",
        "D",
        "--team",
        "ConvKN",
        "--slot",
        "contrastive1",
        str(run),
    )
    assert result.exit_code == 1
    assert "30 of 7,369 candidates are missing" in result.output
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        assert s.scalars(select(Run)).all() == []


def test_table_official_without_freeze_fails_clearly(runner: FlaskCliRunner) -> None:
    result = invoke(runner, "table", "semeval2016-task3", "A", "--official")
    assert result.exit_code == 1 and "no frozen official table" in result.output


def test_unknown_task_is_a_clear_error(runner: FlaskCliRunner) -> None:
    result = invoke(runner, "table", "nope", "A")
    assert result.exit_code == 1 and "No task 'nope'" in result.output


def test_cli_option_choices_match_the_services() -> None:
    """The CLI spells some choices out to start fast; they must stay those of the services."""
    from leaderboard.cli import accounts, tables
    from leaderboard.services.accounts.core import ROLES
    from leaderboard.services.results.listing import LISTING_FORMATS

    assert tuple(accounts.ROLES) == tuple(ROLES)
    assert sorted(tables.LISTING_FORMAT_NAMES) == sorted(LISTING_FORMATS)


def test_a_resorted_lenient_import_rescores_and_verifies(
    runner: FlaskCliRunner, tmp_path: Path
) -> None:
    """An organizer's --resort import is read the same way again by rescore and verify."""
    lines = oracle_run().decode().splitlines()
    shuffled = tmp_path / "shuffled.txt"
    shuffled.write_text("\n".join(reversed(lines)) + "\n")
    plain = invoke(
        runner,
        "import-runs",
        "semeval2016-task3",
        "A",
        "--team",
        "Kelp",
        "--slot",
        "primary",
        "--lenient",
        str(shuffled),
    )
    assert plain.exit_code == 1 and "ID mismatch on line 1" in plain.output
    result = invoke(
        runner,
        "import-runs",
        "semeval2016-task3",
        "A",
        "--team",
        "Kelp",
        "--slot",
        "primary",
        "--lenient",
        "--resort",
        str(shuffled),
    )
    assert result.exit_code == 0, result.output
    assert "MAP 0.9633" in result.output
    rescored = invoke(runner, "rescore", "semeval2016-task3", "A", "--set", "test")
    assert (
        "Re-scored 1 run(s)." in rescored.output and "could not be re-scored" not in rescored.output
    )
    # Or handed to the workers: queued, then done by one.
    queued = invoke(runner, "rescore", "semeval2016-task3", "A", "--set", "test", "--queue")
    assert queued.exit_code == 0 and "Re-scoring queued (job " in queued.output
    worked = invoke(runner, "worker", "--once")
    assert re.fullmatch(r"re-score \d+: done\n", worked.output), worked.output
    assert invoke(runner, "freeze", "semeval2016-task3", "A").exit_code == 0
    verified = invoke(runner, "verify", "semeval2016-task3", "A")
    assert verified.exit_code == 0, verified.output


#: Every command name is a contract: scripts of organizers and participants call them.
COMMANDS = [
    "add-baselines",
    "add-member",
    "approve-team",
    "add-task",
    "backup",
    "create-team",
    "create-user",
    "data",
    "disable-user",
    "enable-user",
    "freeze",
    "import-runs",
    "init",
    "invite",
    "merge-teams",
    "meta-eval",
    "phase",
    "remote",
    "rename-team",
    "rescore",
    "resend-verification",
    "runs",
    "score",
    "set-gold",
    "set-password",
    "settings",
    "significance",
    "storage",
    "table",
    "task",
    "teams",
    "token",
    "verify",
    "withdraw-team",
    "worker",
]


def test_flask_reaches_the_commands_and_the_web_does_not_import_them(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "LEADERBOARD_INSTANCE_DIR": str(tmp_path / "instance")}
    for app in (["--app", "app"], []):  # without --app, flask finds wsgi.py
        out = subprocess.run(
            [sys.executable, "-m", "flask", *app, "leaderboard", "--help"],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
        )
        assert out.returncode == 0, out.stderr
        listed = {line.split()[0] for line in out.stdout.split("Commands:")[1].splitlines()[1:]}
        assert listed == set(COMMANDS), out.stdout
    probe = "import sys; from leaderboard.web import create_app; create_app(); print(sorted(m for m in sys.modules if m.startswith('leaderboard.cli')))"
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr


def test_score_loads_no_web_database_or_service_module() -> None:
    probe = (
        "import sys; import leaderboard.cli; "
        "print(sorted(m for m in ('flask', 'sqlalchemy', 'leaderboard.web', "
        "'leaderboard.services.tasks.catalog') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr


def _loaded_by_main(args: list[str], env: dict[str, str], names: tuple[str, ...]) -> list[str]:
    """Run the console script's main with ``args``; return which of ``names`` it imported."""
    probe = (
        f"import sys; sys.argv = ['leaderboard', *{args!r}]; "
        "from leaderboard.cli import main\n"
        "try:\n    main()\n"
        "except SystemExit:\n    pass\n"
        f"print(sorted(m for m in {names!r} if m in sys.modules), file=sys.stderr)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return list(ast.literal_eval(out.stderr.strip().splitlines()[-1]))


def test_help_builds_no_application(tmp_path: Path) -> None:
    env = {**os.environ, "LEADERBOARD_INSTANCE_DIR": str(tmp_path / "instance")}
    for args in ([], ["--help"], ["teams", "--help"]):
        assert _loaded_by_main(args, env, ("flask", "leaderboard.web")) == [], args
    assert not (tmp_path / "instance").exists()


def test_a_database_command_loads_neither_scipy_stats_nor_matplotlib(app: Flask) -> None:
    settings = app.extensions["leaderboard"]["settings"]
    env = {
        **os.environ,
        "LEADERBOARD_INSTANCE_DIR": str(settings.instance_dir),
        "LEADERBOARD_DATABASE_URL": database_url(app),
    }
    # The console script opens the database itself: no Flask, and no other command's module.
    names = ("flask", "leaderboard.web", "scipy.stats", "matplotlib", "leaderboard.cli.offline")
    assert _loaded_by_main(["teams"], env, names) == []


def test_the_console_script_imports_a_run_with_its_family_alone(app: Flask, tmp_path: Path) -> None:
    settings = app.extensions["leaderboard"]["settings"]
    env = {
        **os.environ,
        "LEADERBOARD_INSTANCE_DIR": str(settings.instance_dir),
        "LEADERBOARD_DATABASE_URL": database_url(app),
        "LEADERBOARD_STORAGE_DIR": str(settings.storage_dir),
    }
    run = tmp_path / "subtask_A_primary.txt"
    run.write_bytes(oracle_run())
    args = ["import-runs", "semeval2016-task3", "A", "--team", "Kelp", "--slot", "primary"]
    others = ("flask", "leaderboard.tasks.families.trec", "leaderboard.tasks.families.sts")
    assert _loaded_by_main([*args, str(run)], env, others) == []
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        assert [(r.team.name, r.slot) for r in s.scalars(select(Run))] == [("Kelp", "primary")]


def test_every_command_is_listed_with_its_module() -> None:
    """The console script finds each command's module in COMMAND_MODULES, and nothing else."""
    import importlib

    from leaderboard.cli import COMMAND_MODULES

    found = {}
    for module in sorted(set(COMMAND_MODULES.values())):
        for command in importlib.import_module(f"leaderboard.cli.{module}").COMMANDS:
            found[command.name] = module
    assert found == COMMAND_MODULES
