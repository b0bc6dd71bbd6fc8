"""The task page's Markdown sections in a definition: strings, files beside it, refusals."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from leaderboard.services.tasks.pages import task_sections
from leaderboard.tasks.definition import MAX_SECTION_BYTES, DefinitionError
from leaderboard.tasks.loading import load_definition_file, stored_definition

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tiny-cqa"


def task_dir(tmp_path: Path, extra: str, files: dict[str, bytes] | None = None) -> Path:
    """Return a copy of the tiny-cqa definition with ``extra`` top-level TOML and files beside it."""
    folder = tmp_path / "task"
    shutil.copytree(FIXTURE, folder)
    toml = (folder / "task.toml").read_text()
    head, sep, rest = toml.partition("\n[runs]")
    (folder / "task.toml").write_text(head + "\n" + extra + "\n" + sep + rest)
    for name, data in (files or {}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return folder / "task.toml"


def refusal(path: Path) -> DefinitionError:
    with pytest.raises(
        DefinitionError, match=r"^(overview|evaluation|data_description|terms)(\.file)?: "
    ) as caught:
        load_definition_file(path)
    return caught.value


def test_sections_as_strings(tmp_path: Path) -> None:
    path = task_dir(
        tmp_path,
        'overview = "# Hello\\n\\nThe *task*."\n'
        'evaluation = "MAP is official."\n'
        'data_description = "Two files."\n'
        'terms = "  Research only.  "',
    )
    d = load_definition_file(path)
    assert d.overview == "# Hello\n\nThe *task*."
    assert d.evaluation == "MAP is official."
    assert d.data_description == "Two files."
    assert d.terms == "Research only."


def test_sections_from_files_are_read_into_the_stored_definition(tmp_path: Path) -> None:
    path = task_dir(
        tmp_path,
        'overview = { file = "overview.md" }\nterms = { file = "docs/terms.md" }',
        {"overview.md": "Über *alles*.\n".encode(), "docs/terms.md": b"\xef\xbb\xbfBe kind.\n"},
    )
    d = load_definition_file(path)
    assert d.overview == "Über *alles*."
    assert d.terms == "Be kind."  # the byte order mark is not text
    # The stored form holds the text, not the file name: the server never reads the file.
    assert d.raw["overview"] == "Über *alles*.\n"
    assert d.raw["terms"] == "Be kind.\n"
    (path.parent / "overview.md").unlink()
    again = stored_definition(d.raw, d.sha256)
    assert again.overview == "Über *alles*." and again.terms == "Be kind."


def test_a_missing_file_is_refused_naming_key_and_file(tmp_path: Path) -> None:
    error = refusal(task_dir(tmp_path, 'evaluation = { file = "eval.md" }'))
    assert str(error) == "evaluation.file: file not found: 'eval.md'"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("../secret.md", "'../secret.md' may not leave the definition's folder (no '..')"),
        ("docs/../../secret.md", "may not leave the definition's folder"),
        ("/etc/passwd", "'/etc/passwd' must be a path relative to the definition's folder"),
        ("..\\\\secret.md", "must be a path relative to the definition's folder"),
    ],
)
def test_escapes_from_the_folder_are_refused(tmp_path: Path, name: str, message: str) -> None:
    (tmp_path / "secret.md").write_text("secret")
    error = refusal(task_dir(tmp_path, f'overview = {{ file = "{name}" }}'))
    assert error.key == "overview.file"
    assert message in str(error)


def test_a_symbolic_link_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "secret.md").write_text("secret")
    path = task_dir(tmp_path, 'terms = { file = "terms.md" }')
    (path.parent / "terms.md").symlink_to(tmp_path / "secret.md")
    error = refusal(path)
    assert str(error) == "terms.file: 'terms.md' lies outside the definition's folder"


def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = task_dir(
        tmp_path, 'data_description = { file = "data.md" }', {"data.md": b"caf\xe9 au lait"}
    )
    error = refusal(path)
    assert str(error) == "data_description.file: 'data.md' is not UTF-8 text (byte 3 is b'\\xe9')"


def test_an_oversized_file_is_refused(tmp_path: Path) -> None:
    big = b"x" * (MAX_SECTION_BYTES + 1)
    error = refusal(task_dir(tmp_path, 'overview = { file = "big.md" }', {"big.md": big}))
    assert str(error) == (
        f"overview.file: 'big.md' has {MAX_SECTION_BYTES + 1} bytes; "
        f"a section may have {MAX_SECTION_BYTES} at most"
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("overview = 3", 'overview: must be a string or a table { file = "name.md" }, got 3'),
        ("terms = ['a']", "terms: must be a string or a table"),
        ('evaluation = { path = "e.md" }', 'evaluation: must be a string or a table { file = "name.md" }'),
        ('evaluation = { file = "e.md", x = 1 }', "evaluation: must be a string or a table"),
        ("evaluation = { file = 1 }", "evaluation: must be a string or a table"),
        ('terms = "a\\u0000b"', "terms: holds a NUL character"),
    ],
)  # fmt: skip
def test_wrong_types_are_refused(tmp_path: Path, extra: str, message: str) -> None:
    assert message in str(refusal(task_dir(tmp_path, extra)))


def test_the_description_is_the_overview_when_there_is_none(tmp_path: Path) -> None:
    plain = load_definition_file(task_dir(tmp_path / "a", 'description = "Rerank *answers*."'))
    assert [(s.id, s.html) for s in task_sections(plain)] == [
        ("tab-overview", "<p>Rerank <em>answers</em>.</p>\n")
    ]
    both = load_definition_file(
        task_dir(tmp_path / "b", 'description = "Short."\noverview = "Long."\nterms = "T."')
    )
    assert [(s.id, s.label, s.html) for s in task_sections(both)] == [
        ("tab-overview", "Overview", "<p>Long.</p>\n"),
        ("tab-terms", "Terms", "<p>T.</p>\n"),
    ]
    none = load_definition_file(task_dir(tmp_path / "c", ""))
    assert task_sections(none) == []


def test_the_documented_example_has_every_section() -> None:
    example = Path(__file__).resolve().parents[2] / "docs" / "examples" / "task-page"
    d = load_definition_file(example / "task.toml")
    sections = task_sections(d)
    assert [s.id for s in sections] == ["tab-overview", "tab-evaluation", "tab-data", "tab-terms"]
    assert "<th>measure</th>" in sections[1].html
    assert d.terms.startswith("By downloading the data you agree:")
