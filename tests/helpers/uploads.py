"""Upload a run with the web form of SemEval-2016 task 3, subtask A."""

from __future__ import annotations

import io

from flask.testing import FlaskClient

from tests.conftest import csrf_from

SUBMIT_A = "/tasks/semeval2016-task3/A/submit"


def form_upload(
    client: FlaskClient, data: bytes, *, slot: str = "primary", url: str = SUBMIT_A, **extra: str
):  # type: ignore[no-untyped-def]
    """Post ``data`` as a run with the upload form of ``url``; return the response."""
    page = client.get(url)
    assert page.status_code == 200
    fields = {
        "csrf_token": csrf_from(page.get_data(as_text=True)),
        "eval_set": "test",
        "slot": slot,
        "name": extra.get("name", "my-run"),
        "description": extra.get("description", "a system"),
        "file": (io.BytesIO(data), "subtask_A_primary.txt"),
    }
    return client.post(url, data=fields, content_type="multipart/form-data")
