"""The family seam: upload fields, gold slots, hints and styles come from the family alone."""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
from pathlib import Path

from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner

from tests.conftest import csrf_from, login
from tests.runs import make_organizer, make_participant

REPO = Path(__file__).resolve().parents[2]


def _organizer(app: Flask) -> FlaskClient:
    make_organizer(app, "org@example.org")
    client = app.test_client()
    login(client, "org@example.org", "organizer password")
    return client


def _options(html: str) -> dict[str, str]:
    return dict(re.findall(r'<option value="([^"]*)">([^<]*)</option>', html))


def test_gold_choices_come_from_each_familys_gold_slots(app: Flask) -> None:
    org = _organizer(app)
    cqa = _options(org.get("/organizer/tasks/semeval2016-task3/A").get_data(as_text=True))
    assert cqa["test|gold"] == "test: gold" and cqa["dev|gold"] == "dev: gold"
    sts = _options(org.get("/organizer/tasks/semeval2016-task1/en").get_data(as_text=True))
    assert sts["test|gold:headlines"] == "test: gold of headlines"
    trec = _options(org.get("/organizer/tasks/trec-car-2017/passage").get_data(as_text=True))
    assert trec["test|qrels:manual"] == "test: qrels manual (relevant ≥ 1)"


def test_a_gold_role_the_set_does_not_have_is_refused(app: Flask) -> None:
    org = _organizer(app)
    page = "/organizer/tasks/trec-car-2017/passage"
    token = csrf_from(org.get(page).get_data(as_text=True))
    resp = org.post(
        page + "/gold",
        data={
            "csrf_token": token,
            "target": "test|gold:headlines",
            "file": (io.BytesIO(b"q 0 d 1\n"), "x.qrels"),
        },
        content_type="multipart/form-data",
    )
    assert resp.status_code == 400  # not one of the form's choices


def test_set_gold_names_the_variants_of_the_set(runner: FlaskCliRunner, tmp_path: Path) -> None:
    qrels = tmp_path / "q.txt"
    qrels.write_text("x 0 y 1\n")
    result = runner.invoke(
        args=["leaderboard", "set-gold", "trec-car-2017", "passage", str(qrels), "--variant", "x"]
    )
    assert result.exit_code != 0
    assert "Unknown variant 'x'; this set has automatic, lenient, manual." in result.output
    result = runner.invoke(args=["leaderboard", "set-gold", "semeval2016-task1", "en", str(qrels)])
    assert result.exit_code != 0
    assert "Name the part whose gold to replace with --set (answer-answer, headlines" in (
        result.output
    )


def test_upload_form_shows_the_familys_fields_and_hint(app: Flask) -> None:
    make_participant(app, "Alpha", "a@example.org")
    client = app.test_client()
    login(client, "a@example.org", "correct horse battery")
    cqa = client.get("/tasks/semeval2016-task3/B/submit").get_data(as_text=True)
    assert "Recommended file name: subtask_B_&lt;slot&gt;.txt." in cqa
    sts = client.get("/tasks/semeval2016-task1/en/submit").get_data(as_text=True)
    assert "Recommended file name" not in sts
    assert 'name="headlines"' in sts and 'name="archive"' in sts
    assert "Output for question-question (plain text or .gz)" in sts


def test_openapi_document_lists_every_hosted_subtasks_upload_fields(client: FlaskClient) -> None:
    doc = client.get("/api/openapi.json").get_json()
    schema = doc["paths"]["/api/v1/tasks/{task}/{subtask}/runs"]["post"]["requestBody"]["content"][
        "multipart/form-data"
    ]["schema"]
    fields = schema["x-upload-fields"]
    assert fields["semeval2016-task3/A"] == ["file"]
    assert fields["semeval2016-task1/en"] == [
        "answer-answer", "headlines", "plagiarism", "postediting", "question-question", "archive",
    ]  # fmt: skip
    assert fields["semeval2016-task1/es-en"][-1] == "archive"
    assert schema["properties"]["headlines"]["format"] == "binary"
    assert schema["properties"]["archive"]["format"] == "binary"


def test_no_module_outside_the_families_names_a_familys_options() -> None:
    # The options of STS parts, TREC variants and the STS archive field belong to their families.
    names = re.compile(r"""["'](parts|variants|archive)["']|ARCHIVE_FIELD|== ?["']cqa["']""")
    offenders = []
    for path in sorted((REPO / "leaderboard").rglob("*.py")):
        relative = path.relative_to(REPO).as_posix()
        if relative.startswith(("leaderboard/tasks/families/", "leaderboard/formats/")):
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if names.search(line):
                offenders.append(f"{relative}:{number}: {line.strip()}")
    for path in sorted((REPO / "templates").rglob("*.html")):
        if "family ==" in path.read_text():
            offenders.append(str(path.relative_to(REPO)))
    assert offenders == []


def test_definitions_do_not_import_the_families() -> None:
    code = (
        "import sys, leaderboard.tasks.definition as d; "
        "print(sorted(m for m in sys.modules if m.startswith('leaderboard.tasks.families')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout
    assert out.strip() == "[]"


def test_openapi_document_lists_every_hosted_subtasks_measures(client: FlaskClient) -> None:
    doc = client.get("/api/openapi.json").get_json()
    measures = doc["components"]["schemas"]["Table"]["x-measures"]
    car = measures["trec-car-2017/passage"]
    assert [m["key"] for m in car][:3] == ["automatic/MAP", "automatic/R-Prec", "automatic/MRR"]
    assert car[0] == {
        "key": "automatic/MAP",
        "label": "MAP",
        "group": "Automatic",
        "official": True,
        "direction": "higher",
        "decimals": 4,
    }
    cqa = {m["key"]: m for m in measures["semeval2016-task3/A"]}
    assert cqa["MAP"]["official"] and cqa["MAP"]["decimals"] == 2
    assert not cqa["MRR"]["official"]


#: Where generic code lives: nothing here may name a family or one of its options.
GENERIC = (
    "leaderboard/services",
    "leaderboard/web",
    "leaderboard/cli",
    "leaderboard/tables",
    "leaderboard/targets.py",
)
#: Family words as identifiers or in string constants (docstrings and comments may give
#: examples): family names, their options, flags, notes and reference files.
FAMILY_WORDS = re.compile(
    r"(?<![a-z])(cqa|sts|trec|semeval|resort|truncat\w*|variants?|avgrec|qrels|headlines"
    r"|constant-on-scored|pearson)(?![a-z])",
    re.IGNORECASE,
)
#: STS parts, by attribute (``slot.parts``), keyword (``parts=``) or string ("parts"). The
#: singular is a split set's part (public, private, all): every family's, so free to name.
PART = {"parts"}
#: Lines allowed to say a family word, and why.
ALLOWED = {
    # The bundled tasks' post-evaluation dates are facts about those presets, not families.
    ("leaderboard/services/tasks/catalog.py", '"semeval2016-task1"'),
    ("leaderboard/services/tasks/catalog.py", '"semeval2016-task3"'),
    ("leaderboard/services/tasks/catalog.py", '"trec-car-2017"'),
    # The ranked style's old name, still accepted and shown by its tables (exports unchanged).
    ("leaderboard/tables/styles/ranked.py", '"semeval-cqa"'),
    # set-gold's help and docstring stay word for word what the command printed before.
    ("leaderboard/cli/gold.py", "(e.g. headlines)"),
    ("leaderboard/cli/gold.py", "(or qrels variant)"),
    # import-runs' docstring (its help) still describes the SemEval-2016 folder layout.
    ("leaderboard/cli/runs.py", "in SemEval-2016 style"),
}


def _docstrings(tree: ast.AST) -> set[int]:
    """Return the ids of the docstring nodes of a module, its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _family_words(path: Path, relative: str) -> list[str]:
    """Return ``file:line: word`` for each family word in a module's code (not its docs)."""
    source = path.read_text()
    tree = ast.parse(source)
    lines = source.splitlines()
    docs = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        words: list[str] = []
        if isinstance(node, ast.Name):
            words = [node.id]
        elif isinstance(node, ast.Attribute):
            words = [node.attr]
            if node.attr in PART:
                found.append(f"{relative}:{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.keyword) and node.arg:
            words = [node.arg]
            if node.arg in PART:
                found.append(f"{relative}:{node.lineno}: {node.arg}=")
        elif isinstance(node, ast.FunctionDef | ast.ClassDef | ast.alias):
            words = [getattr(node, "name", "") or ""]
        elif isinstance(node, ast.arg):
            words = [node.arg]
        elif (
            isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
        ):
            words = [node.value]
            if node.value in PART:
                found.append(f"{relative}:{node.lineno}: {node.value!r}")
        for word in words:
            match = FAMILY_WORDS.search(word.replace("_", " "))
            line = lines[getattr(node, "lineno", 1) - 1]
            if match and not any(relative == f and text in line for f, text in ALLOWED):
                found.append(f"{relative}:{getattr(node, 'lineno', 0)}: {match.group(0)}")
    return found


def test_no_generic_module_or_template_names_a_family_or_its_options() -> None:
    offenders = []
    for place in GENERIC:
        root = REPO / place
        for path in [root] if root.is_file() else sorted(root.rglob("*.py")):
            offenders += _family_words(path, path.relative_to(REPO).as_posix())
    for path in sorted((REPO / "templates").rglob("*.html")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if FAMILY_WORDS.search(line) or re.search(r"\bparts\b", line):
                offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert offenders == []


def test_the_family_word_check_catches_what_it_is_for(tmp_path: Path) -> None:
    # The check must see family words in code and skip them in docstrings.
    module = tmp_path / "m.py"
    module.write_text(
        '"""Docs may say cqa, qrels and resort."""\n'
        "x = run.report['truncation']\n"
        "y = slot.parts\n"
        "z = options.get('resort')\n"
        "def f(variant): return STS_PARTS\n"
    )
    found = _family_words(module, "m.py")
    assert sorted(f.split(": ", 1)[1].lower() for f in found) == [
        ".parts", "resort", "sts", "truncation", "variant",
    ]  # fmt: skip
