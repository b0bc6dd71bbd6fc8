"""The OpenAPI 3.1 document of the JSON API."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from leaderboard.states import RunKind, RunStatus, Shown


def _array(items: Mapping[str, Any]) -> dict[str, Any]:
    """Return the schema of an array of ``items``."""
    return {"type": "array", "items": items}


def _objects(properties: Mapping[str, Any]) -> dict[str, Any]:
    """Return the schema of an array of objects with ``properties``."""
    return _array({"type": "object", "properties": properties})


def _json(description: str, ref: str) -> dict[str, Any]:
    """Return a JSON response whose body is the component schema ``ref``."""
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}},
    }


def _err(description: str) -> dict[str, Any]:
    """Return an error response (its body is an Error)."""
    return _json(description, "Error")


def _parameter(
    name: str, where: str, schema: Mapping[str, Any], *, required: bool = True
) -> dict[str, Any]:
    """Return a path or query parameter."""
    return {"name": name, "in": where, "required": required, "schema": schema}


_ERROR = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {"type": "string"},
        "issues": _objects({"line": {"type": ["integer", "null"]}, "message": {"type": "string"}}),
        "warnings": {"type": "array", "items": {"type": "object"}},
    },
}

_RUN = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "task": {"type": "string"},
        "subtask": {"type": "string"},
        "set": {"type": "string"},
        "team": {"type": ["string", "null"]},
        "kind": {"type": "string", "enum": [kind.value for kind in RunKind]},
        "slot": {"type": "string"},
        "name": {"type": "string"},
        "description": {"type": "string"},
        "status": {"type": "string", "enum": [status.value for status in RunStatus]},
        "late": {"type": "boolean"},
        "corrected": {"type": "boolean"},
        "created_at": {"type": "string", "format": "date-time"},
        "sha256": {"type": "string"},
        "warnings": {"type": "array", "items": {"type": "string"}},
        "part": {
            "type": "string",
            "enum": ["public", "private", "all"],
            "description": "The units the scores are on: a split set's public part until its "
            "private part is released.",
        },
        "scores": {"type": "object", "additionalProperties": {"type": ["number", "null"]}},
        "official": {"type": "object", "additionalProperties": {"type": "string"}},
        "notes": {"type": "array", "items": {"type": "string"}},
    },
}


_PHASE = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "starts_at": {"type": ["string", "null"], "format": "date-time"},
        "ends_at": {"type": ["string", "null"], "format": "date-time"},
        "open": {"type": "boolean"},
        "late_allowed": {"type": "boolean"},
        "corrections_allowed": {"type": "boolean"},
        "results": {"type": "string", "enum": [s.value for s in Shown]},
        "daily_quota": {"type": ["integer", "null"]},
        "total_quota": {"type": ["integer", "null"]},
        "quota_remaining": {
            "type": ["object", "null"],
            "description": "Runs the caller's team may still submit (null: no team or no quota).",
            "properties": {
                "daily": {"type": ["integer", "null"]},
                "total": {"type": ["integer", "null"]},
            },
        },
    },
}

_SET = {
    "slug": {"type": "string"},
    "title": {"type": "string"},
    "gold_version": {"type": "integer"},
    "upload_fields": _array({"type": "string"}),
    "measures": _array({"type": "object"}),
    "phases": _array({"$ref": "#/components/schemas/Phase"}),
    "uploads_open": {
        "type": "boolean",
        "description": "Whether a phase of the set is open now; a set without one takes no uploads.",
    },
}

_SUBTASK = {
    "slug": {"type": "string"},
    "title": {"type": "string"},
    "default_set": {"type": "string"},
    "slots": _array({"type": "string"}),
    "sets": _objects(_SET),
}

_TASKS = {
    "type": "object",
    "required": ["tasks"],
    "properties": {
        "tasks": _objects(
            {
                "slug": {"type": "string"},
                "title": {"type": "string"},
                "family": {"type": "string"},
                "definition_sha256": {"type": "string"},
                "subtasks": _objects(_SUBTASK),
            }
        )
    },
}


_RUN_ID = [_parameter("id", "path", {"type": "integer"})]

#: The participants' routes: task listing, the team's runs, a run's file, withdrawal.
_PARTICIPANT_PATHS: dict[str, Any] = {
    "/api/v1/tasks": {
        "get": {
            "summary": "Tasks, subtasks, sets and phases with deadlines and the team's quotas",
            "responses": {
                "200": _json("The hosted tasks", "Tasks"),
                "401": _err("No valid token"),
            },
        }
    },
    "/api/v1/team/runs": {
        "get": {
            "summary": "The caller's team's runs, newest first (none without a team)",
            "responses": {
                "200": {
                    "description": "The runs; scores of a hidden phase are left out",
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["runs"],
                                "properties": {
                                    "runs": _array({"$ref": "#/components/schemas/Run"})
                                },
                            }
                        }
                    },
                },
                "401": _err("No valid token"),
            },
        }
    },
    "/api/v1/runs/{id}/file": {
        "get": {
            "summary": "A run's file as uploaded (a multi-file run: a zip of its files)",
            "parameters": _RUN_ID,
            "responses": {
                "200": {
                    "description": "The file",
                    "content": {
                        "application/octet-stream": {
                            "schema": {"type": "string", "format": "binary"}
                        },
                        "application/zip": {"schema": {"type": "string", "format": "binary"}},
                    },
                },
                "401": _err("No valid token"),
                "404": _err("No such run, or not one of the caller's team"),
            },
        }
    },
    "/api/v1/runs/{id}/withdraw": {
        "post": {
            "summary": "Withdraw an active run before the deadline: its slot becomes empty",
            "parameters": _RUN_ID,
            "responses": {
                "200": _json("The withdrawn run, kept in the history", "Run"),
                "401": _err("No valid token"),
                "403": _err("Organizers do not withdraw runs"),
                "404": _err("No such run, or not one of the caller's team"),
                "409": _err("Not active, or the deadline has passed"),
            },
        }
    },
}


def _upload_schema(fields: Mapping[str, Sequence[tuple[str, str]]]) -> dict[str, Any]:
    """Return the multipart schema of an upload: the common fields and every task's files."""
    files: dict[str, str] = {"file": "The run file, plain text or gzip (single-file tasks)."}
    for name, description in (f for per_subtask in fields.values() for f in per_subtask):
        files.setdefault(name, description)
    properties: dict[str, Any] = {
        name: {"type": "string", "format": "binary", "description": text}
        for name, text in files.items()
    }
    properties.update(
        {
            "slot": {"type": "string"},
            "name": {"type": "string"},
            "description": {"type": "string"},
            "set": {"type": "string"},
        }
    )
    listed = "; ".join(
        f"{where}: {', '.join(name for name, _ in per_subtask)}"
        for where, per_subtask in sorted(fields.items())
    )
    return {
        "type": "object",
        "required": ["slot"],
        "properties": properties,
        "description": "The run's files go in the fields its task's family names"
        + (f" ({listed})." if listed else "."),
        "x-upload-fields": {k: [name for name, _ in v] for k, v in fields.items()},
    }


def openapi_document(
    upload_fields: Mapping[str, Sequence[tuple[str, str]]] | None = None,
    measures: Mapping[str, Sequence[Mapping[str, object]]] | None = None,
) -> dict[str, Any]:
    """Return the document.

    ``upload_fields`` maps "task/subtask" to its (field, description); ``measures`` maps it to
    its table's measure columns (key, label, group, official, direction, decimals).
    """
    task_params = [
        _parameter("task", "path", {"type": "string"}),
        _parameter("subtask", "path", {"type": "string"}),
    ]
    return {
        "openapi": "3.1.0",
        "info": {"title": "Leaderboard API", "version": "1"},
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Error": _ERROR,
                "Run": _RUN,
                "Phase": _PHASE,
                "Tasks": _TASKS,
                "Table": {
                    "type": "object",
                    "description": "Columns, rows and cells; each hosted subtask's measure "
                    "columns are listed in x-measures (direction: which values rank first).",
                    "x-measures": {k: list(v) for k, v in (measures or {}).items()},
                },
            },
        },
        "security": [{"bearer": []}],
        "paths": {
            **_PARTICIPANT_PATHS,
            "/api/v1/tasks/{task}/{subtask}/runs": {
                "post": {
                    "summary": "Upload a run into a slot",
                    "parameters": task_params,
                    "requestBody": {
                        "required": True,
                        "content": {
                            "multipart/form-data": {
                                "schema": _upload_schema(upload_fields or {}),
                            }
                        },
                    },
                    "responses": {
                        "201": _json("The run was accepted and scored", "Run"),
                        "400": _err("Missing or wrong request fields"),
                        "401": _err("No valid token"),
                        "403": _err("Not allowed"),
                        "404": _err("No such task, subtask or set"),
                        "409": _err("Deadline passed, slot rules or quota"),
                        "413": _err("Upload too large"),
                        "422": _err("The run failed validation; every problem is listed"),
                    },
                }
            },
            "/api/v1/runs/{id}": {
                "get": {
                    "summary": "One of the caller's runs",
                    "parameters": _RUN_ID,
                    "responses": {
                        "200": _json("The run", "Run"),
                        "401": _err("No valid token"),
                        "404": _err("No such run, or not one of the caller's team"),
                    },
                }
            },
            "/api/v1/tasks/{task}/{subtask}/table": {
                "get": {
                    "summary": "The results table (Table JSON)",
                    "description": (
                        "While the set's phase shows names anonymously, teams other than the "
                        "caller's are named Team 1, Team 2, ... (numbered by their first run) "
                        "and their run names are replaced by their slots; organizers see every "
                        "name. A frozen table is served as it was shown when it was frozen. "
                        "A split set's live table is on its public part until the private part "
                        'is released (the table\'s "part" says which); organizers may ask any.'
                    ),
                    "parameters": [
                        *task_params,
                        _parameter("set", "query", {"type": "string"}, required=False),
                        _parameter(
                            "view",
                            "query",
                            {"type": "string", "enum": ["official", "live"]},
                            required=False,
                        ),
                        _parameter(
                            "part",
                            "query",
                            {"type": "string", "enum": ["public", "private", "all"]},
                            required=False,
                        ),
                    ],
                    "responses": {
                        "200": _json("The table", "Table"),
                        "400": _err("Unknown view or part"),
                        "401": _err("No valid token"),
                        "403": _err(
                            "Results hidden until the organizers release them, or a part not "
                            "released"
                        ),
                        "404": _err("No such task, subtask or set"),
                    },
                }
            },
        },
    }
