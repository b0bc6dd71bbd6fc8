"""The instance folder is its owner's only: 0700, its files 0600, new or corrected by init."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from flask import Flask
from flask.testing import FlaskCliRunner

from bench._common import server_env
from tests.workers import BIN, REPO


def modes(folder: Path) -> dict[str, int]:
    """Return the permission bits of a folder and of everything in it, by relative path."""
    found = {".": stat.S_IMODE(folder.stat().st_mode)}
    for path in folder.rglob("*"):
        found[str(path.relative_to(folder))] = stat.S_IMODE(path.lstat().st_mode)
    return found


def private(found: dict[str, int], folder: Path) -> dict[str, int]:
    """Return the entries of ``found`` that group or others may use (none, when private)."""
    return {
        name: mode
        for name, mode in found.items()
        if mode != (0o700 if (folder / name).is_dir() else 0o600)
    }


def test_init_creates_a_private_instance_folder(tmp_path: Path) -> None:
    instance = tmp_path / "instance"
    env = server_env(instance, f"sqlite:///{instance / 'leaderboard.sqlite3'}")
    done = subprocess.run(
        [str(BIN / "leaderboard"), "init"],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        # The usual umask, under which files are 0644 and folders 0755 unless made otherwise.
        preexec_fn=lambda: os.umask(0o022) and None,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    found = modes(instance)
    for name in ("leaderboard.sqlite3", "queue.sqlite3", "secret_key"):
        assert found[name] == 0o600, name
    assert found["."] == 0o700
    assert private(found, instance) == {}
    # Made private from the start: nothing was left to correct.
    assert "made private" not in done.stdout


def test_init_corrects_an_existing_world_readable_install(
    app: Flask, runner: FlaskCliRunner
) -> None:
    instance: Path = app.extensions["leaderboard"]["settings"].instance_dir
    (instance / "staged-tasks" / "abc").mkdir(parents=True)
    (instance / "staged-tasks" / "abc" / "task.yaml").write_text("slug: x\n")
    (instance / "queue.sqlite3").write_bytes(b"")
    (instance / "secret_key").write_text("k")
    (instance / "celerybeat-schedule").write_bytes(b"")
    # As an install from before left it.
    for path in [instance, *instance.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    assert private(modes(instance), instance) != {}
    result = runner.invoke(args=["leaderboard", "init"])
    assert result.exit_code == 0, result.output
    assert f"Instance folder {instance} made private" in result.output
    found = modes(instance)
    assert found["."] == 0o700 and found["secret_key"] == 0o600
    assert found["staged-tasks/abc/task.yaml"] == 0o600
    assert private(found, instance) == {}
