"""``leaderboard remote``: a participant's command line against a server's API (no database).

``remote submit`` checks a run locally first with the server's own validator, wherever the
reference data to run it with is at hand: the task's bundled preset (as ``leaderboard score``
reads it) or ``--definition FILE``, and only while that definition is byte for byte the one
the server hosts (same SHA-256) and the server's reference files are still the installed ones.
A run that fails the check is not sent. Without a local copy (a task whose gold stays on the
server), the server validates: a rejected run is refused whole there too (422, nothing stored,
no quota used). No reference file ever leaves the server.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, NoReturn, TypeVar

import click

from leaderboard.cli.api_client import Answer, Client, FilePart, Unreachable, path_of
from leaderboard.formats.issues import located

#: Exit statuses: accepted, rejected run, refused request.
OK, REJECTED, REFUSED = 0, 1, 2

_F = TypeVar("_F", bound=Callable[..., Any])


def _connection(f: _F) -> _F:
    """Add ``--server`` and ``--token`` (also from the environment) to a command."""
    f = click.option(
        "--token",
        envvar="LEADERBOARD_TOKEN",
        required=True,
        help="API token (default: $LEADERBOARD_TOKEN); make one on /account/tokens.",
    )(f)
    f = click.option(
        "--server",
        envvar="LEADERBOARD_SERVER",
        required=True,
        help="The server's base URL, e.g. https://leaderboard.example.org "
        "(default: $LEADERBOARD_SERVER).",
    )(f)
    return f


def _stop(message: str, code: int) -> NoReturn:
    click.echo(message, err=True)
    sys.exit(code)


def _call(call: Callable[[], Answer]) -> Answer:
    """Return the server's answer; a network failure is a refused request (exit 2)."""
    try:
        return call()
    except Unreachable as exc:
        _stop(f"Error: {exc}", REFUSED)


def _refused(answer: Answer) -> NoReturn:
    """Stop on a refusal: 422 is a rejected run (exit 1), any other a refused request (exit 2)."""
    body = answer.body if isinstance(answer.body, dict) else {}
    message = str(body.get("error") or f"the server answered {answer.status}")
    if answer.status == 422:
        click.echo(f"Rejected by the server: {message}")
        _print_issues(body.get("warnings") or [], "warning: ")
        _print_issues(body.get("issues") or [], "")
        sys.exit(REJECTED)
    _stop(f"Refused ({answer.status}): {message}", REFUSED)


def _issue_line(issue: dict[str, Any], prefix: str) -> str:
    """Return ``line N: message``, the line named once (the server's message may name it too)."""
    line = issue.get("line")
    label, rest = located(line if isinstance(line, int) else None, str(issue.get("message", "")))
    return f"{prefix}{label}: {rest}" if label else f"{prefix}{rest}"


def _print_issues(issues: list[Any], prefix: str) -> None:
    for issue in issues:
        if isinstance(issue, dict):
            click.echo(_issue_line(issue, prefix))
        else:
            click.echo(f"{prefix}{issue}")


def _tasks(client: Client) -> list[dict[str, Any]]:
    answer = _call(lambda: client.get("/api/v1/tasks"))
    if answer.status != 200:
        _refused(answer)
    return list(answer.body["tasks"])


Entry = dict[str, Any]


def _find(
    tasks: list[Entry], task: str, subtask: str, set_slug: str | None
) -> tuple[Entry, Entry, Entry]:
    """Return the server's (task, subtask, set) entries, or stop naming what is unknown."""
    t = next((x for x in tasks if x["slug"] == task), None)
    if t is None:
        known = ", ".join(x["slug"] for x in tasks)
        _stop(f"Error: the server hosts no task {task!r} (it hosts: {known}).", REFUSED)
    st = next((x for x in t["subtasks"] if x["slug"] == subtask), None)
    if st is None:
        known = ", ".join(x["slug"] for x in t["subtasks"])
        _stop(f"Error: task {task} has no subtask {subtask!r} (it has: {known}).", REFUSED)
    wanted = set_slug or st["default_set"]
    es = next((x for x in st["sets"] if x["slug"] == wanted), None)
    if es is None:
        known = ", ".join(x["slug"] for x in st["sets"])
        _stop(f"Error: subtask {subtask} has no set {wanted!r} (it has: {known}).", REFUSED)
    return t, st, es


# ------------------------------------------------------------------------------- local check


class _NoLocalCheck(Exception):
    """The run cannot be checked here (no matching local copy of the task); the server will."""


def _local_definition(task: dict[str, Any], definition: str | None) -> Any:
    """Return the local definition that is byte for byte the server's, or raise _NoLocalCheck."""
    from leaderboard.cli.references import Refused, read_definition
    from leaderboard.tasks.definition import preset_paths

    try:
        if definition:
            candidates = [read_definition(Path(definition))]
        else:
            candidates = [read_definition(p) for p in preset_paths()]
    except Refused as exc:
        raise _NoLocalCheck(str(exc)) from None
    for d in candidates:
        if d.slug == task["slug"] and d.sha256 == task["definition_sha256"]:
            return d
    if definition:
        raise _NoLocalCheck(f"{definition} is not the definition the server hosts")
    raise _NoLocalCheck(f"no local copy of task {task['slug']}'s definition as the server hosts it")


def local_inputs(
    task: dict[str, Any], subtask: str, es: dict[str, Any], run: Path, definition: str | None
) -> tuple[dict[str, IO[bytes]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Validate a run here as the server would; return its upload fields, errors and warnings.

    Raise _NoLocalCheck when the run cannot be checked here.
    """
    from leaderboard.cli.references import Refused, load_set_gold
    from leaderboard.config import load_settings
    from leaderboard.formats.issues import summarise
    from leaderboard.tasks.families import get_family
    from leaderboard.tasks.families.base import Context, RunPathError

    d = _local_definition(task, definition)
    if es["gold_version"] != 1:
        raise _NoLocalCheck(f"the server's reference data of {subtask} ({es['slug']}) was updated")
    sd = d.subtask(subtask)
    setdef = sd.set(es["slug"]) if sd is not None else None
    if sd is None or setdef is None:
        raise _NoLocalCheck(f"the local definition has no {subtask} ({es['slug']})")
    limit = load_settings().max_decompressed_bytes
    try:
        gold = load_set_gold(d, sd, setdef, limit)
    except Refused as exc:
        raise _NoLocalCheck(str(exc)) from None
    if gold is None:
        raise _NoLocalCheck(f"no local reference data for {subtask} ({es['slug']})")
    family = get_family(d.family)
    ctx = Context(d, sd, setdef.slug, limit)
    try:
        inputs = family.inputs_from_path(run, ctx)
    except RunPathError as exc:
        return {}, [{"line": None, "message": str(exc)}], []
    verdict = family.validate(inputs, gold, ctx, lenient=False, options={})
    errors = [i.as_dict() for i in summarise(verdict.errors, unlisted=verdict.more_errors)]
    if verdict.ok:
        errors = []
    elif not errors:
        errors = [{"line": None, "message": "The run could not be read."}]
    return inputs, errors, [w.as_dict() for w in verdict.warnings]


def _filename(field: str, stream: IO[bytes], run: Path) -> str:
    name = getattr(stream, "name", None)
    return (
        Path(name).name
        if isinstance(name, str)
        else (run.name if run.is_file() else f"{field}.txt")
    )


# ------------------------------------------------------------------------------- commands


@click.group("remote")
def remote_group() -> None:
    """Work with a leaderboard server through its API: submit runs, list runs and tasks."""


@remote_group.command("submit")
@_connection
@click.argument("task")
@click.argument("subtask")
@click.argument("run", type=click.Path(exists=True, dir_okay=True, path_type=Path))
@click.option("--slot", default="primary", show_default=True, help="Run slot.")
@click.option("--name", default="", help="Run name.")
@click.option("--description", default="", help="Short system description.")
@click.option("--set", "set_slug", help="Evaluation set (default: the subtask's default set).")
@click.option(
    "--definition",
    type=click.Path(exists=True, dir_okay=False),
    help="A local copy of the task's definition with its reference data (for the local check).",
)
def submit_cmd(
    server: str,
    token: str,
    task: str,
    subtask: str,
    run: Path,
    slot: str,
    name: str,
    description: str,
    set_slug: str | None,
    definition: str | None,
) -> None:
    """Check a run locally, then upload it; exit 0 accepted, 1 rejected, 2 refused."""
    client = Client(server, token)
    t, _st, es = _find(_tasks(client), task, subtask, set_slug)
    streams: dict[str, IO[bytes]] = {}
    local_warnings: list[dict[str, Any]] = []
    try:
        try:
            streams, errors, local_warnings = local_inputs(t, subtask, es, run, definition)
        except _NoLocalCheck as why:
            click.echo(f"note: not checked locally ({why}); the server validates the run.")
        else:
            _print_issues(local_warnings, "warning: ")
            if errors:
                _print_issues(errors, "")
                click.echo("The run was rejected locally; nothing was sent.")
                sys.exit(REJECTED)
            click.echo("The run passed the local check.")
        if not streams:
            if run.is_dir():
                _stop(
                    "Error: a folder can only be sent after the local check; "
                    "send the run as one file or an archive (zip, tar).",
                    REFUSED,
                )
            streams = {es["upload_fields"][0]: run.open("rb")}
        files = [FilePart(f, _filename(f, s, run), s) for f, s in streams.items()]
        fields = {"slot": slot, "name": name, "description": description, "set": es["slug"]}
        path = path_of("api", "v1", "tasks", task, subtask, "runs")
        answer = _call(lambda: client.post(path, fields, files))
    finally:
        for stream in streams.values():
            stream.close()
    if answer.status != 201:
        _refused(answer)
    _print_accepted(answer.body, es, {_issue_line(w, "") for w in local_warnings})


def _print_accepted(body: dict[str, Any], es: dict[str, Any], shown_already: set[str]) -> None:
    click.echo(
        f"Accepted: run {body['id']} in {body['task']} {body['subtask']} ({body['set']}), "
        f"slot {body['slot']}, status {body['status']}"
        + (", late" if body.get("late") else "")
        + (", corrected" if body.get("corrected") else "")
        + "."
    )
    for w in body.get("warnings") or []:
        if str(w) not in shown_already:
            click.echo(f"warning: {w}")
    ladder = body.get("ladder")
    if ladder:
        click.echo(f"Ladder board: {ladder.get('text', '')}.")
    if body.get("scores_hidden"):
        if not ladder:
            click.echo("Scores are hidden until the organizers release the results of this phase.")
        return
    if body.get("part") == "public":
        click.echo("Scores on the public part of the test set (the private part comes later):")
    scores = body.get("scores") or {}
    specs = [m for m in es.get("measures", []) if m["key"] in scores]
    width = max((len(m["label"]) for m in specs), default=0)
    for m in specs:
        value = scores[m["key"]]
        cell = "—" if value is None else format(value, f".{m.get('decimals', 2)}f")
        click.echo(f"{m['label']:<{width}}  {cell:>8}" + ("  (official)" if m["official"] else ""))
    for note in body.get("notes") or []:
        click.echo(f"note: {note}")


def _columns(rows: list[list[str]], header: list[str]) -> None:
    """Print rows in aligned columns under a header."""
    table = [header, *rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    for r in table:
        click.echo("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())


@remote_group.command("runs")
@_connection
@click.option("--json", "as_json", is_flag=True, help="Print the API's JSON.")
def runs_cmd(server: str, token: str, as_json: bool) -> None:
    """List the team's runs, newest first."""
    client = Client(server, token)
    answer = _call(lambda: client.get("/api/v1/team/runs"))
    if answer.status != 200:
        _refused(answer)
    if as_json:
        click.echo(json.dumps(answer.body, ensure_ascii=False, indent=1))
        return
    measures = {
        (t["slug"], st["slug"], es["slug"]): es["measures"]
        for t in _tasks(client)
        for st in t["subtasks"]
        for es in st["sets"]
    }
    rows = []
    for r in answer.body["runs"]:
        specs = measures.get((r["task"], r["subtask"], r["set"]), [])
        if r.get("ladder"):
            cell = f"Ladder: {r['ladder'].get('text', '')}"
        elif r.get("scores_hidden"):
            cell = "hidden"
        else:
            cell = _scores_cell(r.get("scores") or {}, specs)
        status = r["status"] + (" late" if r.get("late") else "")
        rows.append(
            [
                str(r["id"]),
                r["task"],
                r["subtask"],
                r["set"],
                r["slot"],
                status,
                r["created_at"][:16].replace("T", " "),
                r["name"],
                cell,
            ]
        )
    if not rows:
        click.echo("Your team has no runs.")
        return
    _columns(
        rows,
        ["ID", "TASK", "SUBTASK", "SET", "SLOT", "STATUS", "SUBMITTED (UTC)", "NAME", "SCORES"],
    )


def _scores_cell(scores: dict[str, Any], specs: list[dict[str, Any]]) -> str:
    """Return a run's scores as the table shows them: labels and values with its decimals."""
    out = []
    for m in specs:
        if m["key"] in scores:
            value = scores[m["key"]]
            cell = "—" if value is None else format(value, f".{m.get('decimals', 2)}f")
            out.append(f"{m['label']} {cell}")
    return " · ".join(out)


@remote_group.command("tasks")
@_connection
@click.option("--json", "as_json", is_flag=True, help="Print the API's JSON.")
def tasks_cmd(server: str, token: str, as_json: bool) -> None:
    """List the tasks, subtasks, sets and phases with their deadlines and the team's quota."""
    client = Client(server, token)
    tasks = _tasks(client)
    if as_json:
        click.echo(json.dumps({"tasks": tasks}, ensure_ascii=False, indent=1))
        return
    rows = []
    for t in tasks:
        for st in t["subtasks"]:
            for es in st["sets"]:
                phases = es["phases"] or [None]
                for p in phases:
                    rows.append([t["slug"], st["slug"], es["slug"], *_phase_cells(p)])
    _columns(rows, ["TASK", "SUBTASK", "SET", "PHASE", "START", "DEADLINE", "OPEN", "RUNS LEFT"])


def _phase_cells(p: dict[str, Any] | None) -> list[str]:
    if p is None:  # a set without a phase is closed to uploads
        return ["—", "—", "—", "no", "—"]
    left = p.get("quota_remaining") or {}
    parts = [f"{left[k]} {k}" for k in ("daily", "total") if left.get(k) is not None]
    return [
        p["name"],
        p["starts_at"] or "—",
        p["ends_at"] or "—",
        "yes" if p["open"] else "no",
        ", ".join(parts) or "no limit",
    ]


COMMANDS = (remote_group,)
