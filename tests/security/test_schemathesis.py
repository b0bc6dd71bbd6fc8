"""Schemathesis against the app's own OpenAPI document, in-process (WSGI): never a 500.

Requests are generated from /api/openapi.json for every operation and sent with a valid bearer
token of a participant. Path parameters are random strings, or (as often) a real task and
subtask, so that uploads reach the validators and tables are really built; run ids are random
or those of the participant's run, another team's run and a baseline.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from flask import Flask
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from leaderboard.web.api.openapi import openapi_document
from tests.conftest import app_on_copy
from tests.runs import accepted, api_upload, constant_run, make_participant, oracle_run, token_for

EXAMPLES = 200 if os.environ.get("CI") == "true" else 60
TARGETS = [("semeval2016-task3", "A"), ("semeval2016-task1", "en"), ("trec-car-2017", "passage")]
#: A slot of each target.
SLOTS = {
    "semeval2016-task3": "contrastive1",
    "semeval2016-task1": "run1",
    "trec-car-2017": "primary",
}
#: The field an STS run may send all its parts in at once, instead of one field per part.
ARCHIVE = "archive"
UPLOAD = ("POST", "/api/v1/tasks/{task}/{subtask}/runs")
RUN_FILE = ("GET", "/api/v1/runs/{id}/file")


@dataclass(frozen=True)
class Api:
    """The app under test, a participant's token and the ids of runs that exist."""

    app: Flask
    token: str
    run_ids: tuple[int, ...]


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, template_instance: Path) -> Iterator[Api]:
    app = app_on_copy(template_instance, tmp_path_factory.mktemp("schemathesis"))
    make_participant(app, "Aurora", "alice@example.org")
    make_participant(app, "Borealis", "bob@example.org")
    alice = token_for(app, "alice@example.org")
    own = int(accepted(api_upload(app.test_client(), alice, oracle_run()))["id"])
    bob = token_for(app, "bob@example.org")
    other = int(accepted(api_upload(app.test_client(), bob, constant_run()))["id"])
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


Shapes = dict[str, list[tuple[str, ...]]]


def upload_shapes(schema: schemathesis.BaseSchema) -> Shapes:
    """Return, per task of TARGETS, the ways of sending a whole run the served document lists.

    The document's ``x-upload-fields`` names each subtask's file fields; a multi-part (STS) run
    is sent either as one field per part or as the one archive field holding them all.
    """
    body = schema.raw_schema["paths"][UPLOAD[1]]["post"]["requestBody"]
    listed = body["content"]["multipart/form-data"]["schema"]["x-upload-fields"]
    shapes: Shapes = {}
    for task, subtask in TARGETS:
        names = listed[f"{task}/{subtask}"]
        parts = tuple(n for n in names if n != ARCHIVE)
        shapes[task] = [parts] + ([(ARCHIVE,)] if ARCHIVE in names and parts else [])
    return shapes


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
    shapes_of = upload_shapes(api_schema)
    file_fields = {name for shapes in shapes_of.values() for shape in shapes for name in shape}

    validated: Counter[tuple[tuple[str, str] | None, tuple[str, ...]]] = Counter()

    def fuzz(
        targets: st.SearchStrategy[tuple[str, str] | None],
        shapes: st.SearchStrategy[int],
        examples: int,
    ) -> None:
        """Send ``examples`` generated requests with the given targets and upload shapes."""

        @settings(
            max_examples=examples,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(
            case=operation.as_strategy(),
            target=targets,
            run=st.sampled_from([0, 1, 2, None]),
            plausible=st.sampled_from([True, False]),
            shape=shapes,
            content=st.binary(min_size=1, max_size=200),
        )
        def run_check(
            case: schemathesis.Case,
            target: tuple[str, str] | None,
            run: int | None,
            plausible: bool,
            shape: int,
            content: bytes,
        ) -> None:
            check(case, target, run, plausible, shape, content)

        run_check()

    def check(
        case: schemathesis.Case,
        target: tuple[str, str] | None,
        run: int | None,
        plausible: bool,
        shape: int,
        content: bytes,
    ) -> None:
        params = dict(case.path_parameters or {})
        fields: tuple[str, ...] = ()
        if target is not None and "task" in params:
            params.update(task=target[0], subtask=target[1])
            if plausible and isinstance(case.body, dict):
                # A real slot, no set and the task's own file fields: the generated files reach
                # the task's validator.
                shapes = shapes_of[target[0]]
                fields = shapes[shape % len(shapes)]
                body: dict[str, Any] = {
                    k: v for k, v in case.body.items() if k != "set" and k not in file_fields
                }
                body["slot"] = SLOTS[target[0]]
                for name in fields:
                    body[name] = case.body.get(name) or content
                case.body = body
        if run is not None and "id" in params:
            params["id"] = api.run_ids[run]
        case.path_parameters = params
        if (case.method, case.path) == RUN_FILE:
            # A run's file comes back as it was uploaded, streamed from the store: called
            # through the test client, which closes the streamed file (schemathesis' does not).
            got = api.app.test_client().get(
                case.formatted_path, headers={"Authorization": f"Bearer {api.token}"}
            )
            event(f"{got.status_code}")
            assert got.status_code < 500, (case.formatted_path, got.get_data(as_text=True)[:500])
            assert got.mimetype == (
                "application/octet-stream" if got.status_code == 200 else "application/json"
            ), got.headers
            return
        response = case.call(headers={"Authorization": f"Bearer {api.token}"})
        event(f"{response.status_code}")
        assert response.status_code < 500, (case.method, case.formatted_path, response.text[:500])
        assert response.headers["content-type"] == ["application/json"], response.headers
        body = response.json()
        assert isinstance(body, dict)
        # Validated: accepted, or rejected with the validator's issues (a missing field is a 400).
        if fields and (response.status_code == 201 or "issues" in body):
            validated[(target, fields)] += 1

    # Real values first: Hypothesis leans towards the first choices.
    fuzz(st.sampled_from([*TARGETS, None]), st.sampled_from([0, 1]), EXAMPLES)
    if (method, path) == UPLOAD:
        # Chance alone may leave a way of sending a run unfuzzed (the examples drawn change with
        # this test's source), so each one also gets its own share of examples.
        for target in TARGETS:
            for shape in range(len(shapes_of[target[0]])):
                fuzz(st.just(target), st.just(shape), max(10, EXAMPLES // 5))
        # Every way of sending every target's run was fuzzed through to its validator.
        expected = {(t, fields) for t in TARGETS for fields in shapes_of[t[0]]}
        assert {k for k, n in validated.items() if n} == expected, validated


def test_the_upload_is_among_the_fuzzed_operations() -> None:
    assert UPLOAD in OPERATIONS


def test_the_sts_parts_come_from_the_served_document(api_schema: schemathesis.BaseSchema) -> None:
    parts = ("answer-answer", "headlines", "plagiarism", "postediting", "question-question")
    assert upload_shapes(api_schema)["semeval2016-task1"] == [parts, (ARCHIVE,)]
