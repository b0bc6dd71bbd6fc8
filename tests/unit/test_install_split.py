"""The server installs without the test tools; `make test` brings them in."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEST_TOOLS = ("playwright", "schemathesis", "mypy", "pytest", "ruff", "hypothesis")


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower()


def _project() -> dict:
    with (ROOT / "pyproject.toml").open("rb") as fh:
        return tomllib.load(fh)["project"]


def test_test_tools_are_not_runtime_dependencies() -> None:
    runtime = {_name(r) for r in _project()["dependencies"]}
    assert not runtime & set(TEST_TOOLS)
    assert {"flask", "gunicorn", "sqlalchemy"} <= runtime


def test_test_tools_are_in_the_test_extra() -> None:
    extra = {_name(r) for r in _project()["optional-dependencies"]["test"]}
    assert set(TEST_TOOLS) <= extra


def test_make_run_installs_the_runtime_only_and_make_test_the_test_extra() -> None:
    makefile = (ROOT / "Makefile").read_text()
    runtime_rule = makefile.split("$(BIN)/.installed: pyproject.toml", 1)[1].split("\n\n", 1)[0]
    assert "pip install --quiet -e .\n" in runtime_rule + "\n"
    assert "[test]" not in runtime_rule
    assert re.search(r"^run: install$", makefile, re.M)
    assert re.search(r"^test: install-test lint$", makefile, re.M)
    assert re.search(r"^lint: install-test$", makefile, re.M)
    test_rule = makefile.split("$(BIN)/.installed-test:", 1)[1].split("\n\n", 1)[0]
    assert "-e '.[test]'" in test_rule
