"""Schemathesis against the app's own OpenAPI document, in-process (WSGI): never a 500.

Requests are generated from /api/openapi.json for every operation and sent with a valid bearer
token of a participant. Path parameters are random strings, or (as often) a real task and
subtask, so that uploads reach the validators and tables are really built; run ids are random
or those of the participant's run, another team's run and a baseline.
"""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import schemathesis
from flask import Flask
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from leaderboard.web import create_app
from leaderboard.web.openapi import openapi_document
from tests.conftest import app_overrides
from tests.runs import constant_run, make_participant, oracle_run, token_for

EXAMPLES = 200 if os.environ.get("CI") == "true" else 60
TARGETS = [("semeval2016-task3", "A"), ("semeval2016-task1", "en"), ("trec-car-2017", "passage")]
#: A slot of each target, and the field its whole run goes in (STS: an archive of all parts).
SLOTS = {
    "semeval2016-task3": "contrastive1",
    "semeval2016-task1": "run1",
    "trec-car-2017": "primary",
}
FIELDS = {"semeval2016-task3": "file", "semeval2016-task1": "archive", "trec-car-2017": "file"}


@dataclass(frozen=True)
class Api:
    """The app under test, a participant's token and the ids of runs that exist."""

    app: Flask
    token: str
    run_ids: tuple[int, ...]


def _upload(app: Flask, token: str, data: bytes, slot: str) -> int:
    resp = app.test_client().post(
        "/api/v1/tasks/semeval2016-task3/A/runs",
        data={"slot": slot, "file": (io.BytesIO(data), "run.txt")},
        headers={"Authorization": f"Bearer {token}"},
        content_type="multipart/form-data",
    )
    assert resp.status_code == 201, resp.get_json()
    return int(resp.get_json()["id"])


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, template_instance: Path) -> Iterator[Api]:
    instance = tmp_path_factory.mktemp("schemathesis") / "instance"
    shutil.copytree(template_instance, instance)
    app = create_app(app_overrides(instance))
    make_participant(app, "Aurora", "alice@example.org")
    make_participant(app, "Borealis", "bob@example.org")
    alice = token_for(app, "alice@example.org")
    own = _upload(app, alice, oracle_run(), "primary")
    other = _upload(app, token_for(app, "bob@example.org"), constant_run(), "primary")
    added = app.test_cli_runner().invoke(
        args=["leaderboard", "add-baselines", "semeval2016-task3", "A"]
    )
    assert added.exit_code == 0, added.output
    yield Api(app, alice, (own, other, other + 1))
    app.extensions["leaderboard"]["engine"].dispose()


@pytest.fixture(scope="module")
def api_schema(api: Api) -> schemathesis.BaseSchema:
    """Load the OpenAPI document the app serves, calling the app in-process."""
    return schemathesis.openapi.from_wsgi("/api/openapi.json", api.app)


# Every operation the document lists (schemathesis' lazy pytest loader does not run on pytest 9,
# so each operation's strategy is driven by Hypothesis here).
OPERATIONS = [
    (method.upper(), path)
    for path, methods in openapi_document()["paths"].items()
    for method in methods
]


@pytest.mark.parametrize(("method", "path"), OPERATIONS)
def test_no_generated_request_gets_a_server_error(
    api: Api, api_schema: schemathesis.BaseSchema, method: str, path: str
) -> None:
    operation = api_schema[path][method]

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(
        case=operation.as_strategy(),
        # Real values first: Hypothesis leans towards the first choices.
        target=st.sampled_from([*TARGETS, None]),
        run=st.sampled_from([0, 1, 2, None]),
        plausible=st.sampled_from([True, False]),
        content=st.binary(min_size=1, max_size=200),
    )
    def check(
        case: schemathesis.Case,
        target: tuple[str, str] | None,
        run: int | None,
        plausible: bool,
        content: bytes,
    ) -> None:
        params = dict(case.path_parameters or {})
        if target is not None and "task" in params:
            params.update(task=target[0], subtask=target[1])
            if plausible and isinstance(case.body, dict):
                # A real slot and no set: the generated file reaches the task's validator.
                body = {k: v for k, v in case.body.items() if k not in ("set", "file")}
                body["slot"] = SLOTS[target[0]]
                body["file"] = case.body.get("file") or content
                case.body = body
        if run is not None and "id" in params:
            params["id"] = api.run_ids[run]
        case.path_parameters = params
        response = case.call(headers={"Authorization": f"Bearer {api.token}"})
        event(f"{response.status_code}")
        assert response.status_code < 500, (case.method, case.formatted_path, response.text[:500])
        assert response.headers["content-type"] == ["application/json"], response.headers
        assert isinstance(response.json(), dict)

    check()
