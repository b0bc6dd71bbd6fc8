"""Load and check task definition files (TOML): the data that makes a task hostable."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from types import MappingProxyType
from typing import Any

from leaderboard.formats.issues import quote, quoted

SLUG_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


def slug_like(name: str) -> bool:
    """Return whether ``name`` could be a slug; no other name is looked up in the database.

    A name from a URL or a form may hold any character, and PostgreSQL refuses a NUL byte in
    a query parameter: such a name matches nothing, so it is refused before any query.
    """
    return 0 < len(name) <= 64 and set(name) <= SLUG_CHARS


KNOWN_TOP_KEYS = {
    "slug",
    "title",
    "family",
    "table_style",
    "official_measure",
    "measures",
    "description",
    "runs",
    "baselines",
    "format",
    "subtasks",
    "table",
    "terms",
    "overview",
    "evaluation",
    "data_description",
}
#: The Markdown sections of a task page: a string, or ``{ file = "name.md" }`` beside the file.
SECTION_KEYS = ("overview", "evaluation", "data_description", "terms")
#: The largest Markdown section (inline or in a file), in bytes of UTF-8.
MAX_SECTION_BYTES = 256 * 1024


class DefinitionError(ValueError):
    """A task definition file is wrong; ``key`` names the offending key."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key
        self.message = message


class FileRefused(DefinitionError):
    """A file the definition names is missing or lies outside its folder; ``name`` as written."""

    def __init__(self, key: str, message: str, name: str) -> None:
        super().__init__(key, message)
        self.name = name


#: The role of a set's file listing its public units (organizer-only, like the gold).
PUBLIC_UNITS_ROLE = "public-units"
#: The parts a frozen ranking of a split set may rank by.
OFFICIAL_PARTS = ("private", "all")


@dataclass(frozen=True)
class SplitDef:
    """A set's public/private split: a fraction and seed (the SHA-256 rule) or a listed file.

    With a listed file its path is the set's ``public-units`` file; ``fraction`` and ``seed``
    are then None.
    """

    fraction: float | None = None
    seed: int | None = None
    #: What a frozen ranking of the set ranks by: "private" (default) or "all".
    official_part: str = "private"

    @property
    def listed(self) -> bool:
        """Return whether the public units are listed in a file rather than drawn by a seed."""
        return self.fraction is None


@dataclass(frozen=True)
class SetDef:
    """An evaluation set and the reference files that belong to it (paths relative to the file)."""

    slug: str
    title: str
    files: dict[str, str]
    options: dict[str, Any] = field(default_factory=dict)
    #: The public/private split of the set's units; None: no split (every score is "all").
    split: SplitDef | None = None


def _split(
    raw: Any, official_part: Any, base_dir: Path | None, where: str, files: dict[str, str]
) -> SplitDef | None:
    """Return a set's split from its ``public`` table and ``official_part``, checked."""
    from leaderboard.scoring.splits import check_fraction, check_seed

    if raw is None:
        if official_part is not None:
            raise DefinitionError(
                f"{where}official_part", "applies to a set with a split only (add public = {...})"
            )
        return None
    key = f"{where}public"
    if not isinstance(raw, dict):
        raise DefinitionError(
            key, 'must be a table: { fraction = 0.3, seed = 1234 } or { units = "FILE" }'
        )
    part = "private" if official_part is None else official_part
    if part not in OFFICIAL_PARTS:
        raise DefinitionError(
            f"{where}official_part", f'must be "private" or "all", not {quote(repr(part))}'
        )
    unknown = set(raw) - {"fraction", "seed", "units"}
    if unknown:
        raise DefinitionError(f"{key}.{quote(sorted(unknown)[0])}", "unknown key")
    if "units" in raw:
        if set(raw) != {"units"}:
            raise DefinitionError(key, "give either units = FILE or fraction and seed, not both")
        files[PUBLIC_UNITS_ROLE] = _file(raw["units"], base_dir, f"{key}.units")
        return SplitDef(official_part=part)
    for name in ("fraction", "seed"):
        if name not in raw:
            raise DefinitionError(f"{key}.{name}", "is required (or give units = FILE)")
    try:
        fraction = check_fraction(raw["fraction"])
    except ValueError as exc:
        raise DefinitionError(f"{key}.fraction", str(exc)) from None
    try:
        seed = check_seed(raw["seed"])
    except ValueError as exc:
        raise DefinitionError(f"{key}.seed", str(exc)) from None
    return SplitDef(fraction, seed, part)


def subtask_heading(slug: str, title: str) -> str:
    """Return "Subtask A: title", without a second "Subtask A" when the title starts with it."""
    title = title.strip()
    if not title or title == slug:
        return f"Subtask {slug}"
    label = re.escape(slug)
    if re.match(rf"subtask\s+{label}(?![\w-])", title, re.IGNORECASE):
        return title
    if re.match(rf"{label}\s*[:.–—]", title, re.IGNORECASE):
        return f"Subtask {title}"
    return f"Subtask {slug}: {title}"


@dataclass(frozen=True)
class SubtaskDef:
    """A subtask: its sets, default set and extra table footnotes."""

    slug: str
    title: str
    default_set: str
    sets: tuple[SetDef, ...]
    footnotes: tuple[str, ...] = ()
    measures: tuple[str, ...] = ()
    official_measure: str = ""
    options: dict[str, Any] = field(default_factory=dict)

    def option(self, definition: TaskDefinition, key: str, default: Any = None) -> Any:
        """Return a family option: the subtask's own value, else the definition's top level."""
        if key in self.options:
            return self.options[key]
        return definition.options.get(key, default)

    def set(self, slug: str) -> SetDef | None:
        """Return the set with this slug, or None."""
        return next((s for s in self.sets if s.slug == slug), None)


@dataclass(frozen=True)
class RunRules:
    """Run slots: their names (one run each per team, subtask and set) and which are ranked."""

    slots: tuple[str, ...]
    ranked_slots: tuple[str, ...]


@dataclass(frozen=True)
class TaskDefinition:
    """A parsed, checked task definition."""

    slug: str
    title: str
    family: str
    table_style: str
    official_measure: str
    measures: tuple[str, ...]
    description: str
    runs: RunRules
    baseline_recipes: tuple[str, ...]
    format: dict[str, Any]
    table: dict[str, Any]
    subtasks: tuple[SubtaskDef, ...]
    base_dir: Path | None
    raw: dict[str, Any]
    sha256: str
    #: The family's own options set at the top level (a subtask may override each).
    options: dict[str, Any] = field(default_factory=dict)
    #: Terms participants accept before downloading the task's data files ("" when none).
    terms: str = ""
    #: Markdown sections of the task page ("" when absent); ``overview`` falls back to
    #: ``description`` on the page.
    overview: str = ""
    evaluation: str = ""
    data_description: str = ""

    def subtask(self, slug: str) -> SubtaskDef | None:
        """Return the subtask with this slug, or None."""
        return next((s for s in self.subtasks if s.slug == slug), None)

    def file_path(self, relative: str) -> Path:
        """Return the absolute path of a file named in the definition."""
        if self.base_dir is None:
            raise ValueError("a stored definition has no files on disk; read them from storage")
        return (self.base_dir / relative).resolve()


def _require(d: dict[str, Any], key: str, typ: type, where: str) -> Any:
    if key not in d:
        raise DefinitionError(f"{where}{key}", "is required")
    value = d[key]
    if not isinstance(value, typ):
        raise DefinitionError(f"{where}{key}", f"must be a {typ.__name__}, got {quoted(value)}")
    return value


def _slug(value: str, key: str) -> str:
    if not value or not set(value) <= SLUG_CHARS or len(value) > 64:
        raise DefinitionError(key, f"{quoted(value)} is not a valid slug (letters, digits, - _ .)")
    return value


def _member_slug(value: Any, path: str) -> str:
    """Return the slug of a list member at ``path``, which must be a table with one."""
    if not isinstance(value, dict):
        raise DefinitionError(path, "must be a table")
    return _slug(_require(value, "slug", str, f"{path}."), f"{path}.slug")


def _listed(d: dict[str, Any], key: str, where: str, what: str) -> list[Any]:
    """Return the list at ``key``, refusing an empty one as defining no ``what``."""
    value = _require(d, key, list, where)
    if not value:
        raise DefinitionError(f"{where}{key}", f"must define at least one {what}")
    return value


def _str_list(value: Any, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DefinitionError(key, "must be a list of strings")
    return tuple(value)


def _file(value: Any, base_dir: Path | None, key: str) -> str:
    if not isinstance(value, str) or not value:
        raise DefinitionError(key, "must be a file path")
    if base_dir is not None and not (base_dir / value).resolve().is_file():
        raise FileRefused(key, f"file not found: {quote(value)}", value)
    return value


def _section_file(name: str, base_dir: Path, key: str) -> str:
    """Return the text of a section's Markdown file, checked: inside the folder, UTF-8, bounded."""
    where = f"{key}.file"
    shown = quote(name)
    if "\\" in name or Path(name).is_absolute() or PurePosixPath(name).is_absolute():
        raise FileRefused(
            where, f"'{shown}' must be a path relative to the definition's folder", name
        )
    if ".." in PurePosixPath(name).parts:
        raise FileRefused(where, f"'{shown}' may not leave the definition's folder (no '..')", name)
    folder = base_dir.resolve()
    path = (folder / name).resolve()
    # A symbolic link may point anywhere: the file itself must lie inside the folder.
    if not path.is_relative_to(folder):
        raise FileRefused(where, f"'{shown}' lies outside the definition's folder", name)
    if not path.is_file():
        raise FileRefused(where, f"file not found: '{shown}'", name)
    size = path.stat().st_size
    if size > MAX_SECTION_BYTES:
        raise DefinitionError(
            where, f"'{shown}' has {size} bytes; a section may have {MAX_SECTION_BYTES} at most"
        )
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad = exc.object[exc.start : exc.start + 1]
        raise DefinitionError(
            where, f"'{shown}' is not UTF-8 text (byte {exc.start} is {quoted(bad)})"
        ) from None


def _section(raw: dict[str, Any], key: str, base_dir: Path | None) -> str | None:
    """Return a Markdown section's text (None when absent), read from its file if it names one."""
    if key not in raw:
        return None
    value = raw[key]
    if isinstance(value, dict):
        name = value.get("file")
        if set(value) != {"file"} or not isinstance(name, str) or not name:
            raise DefinitionError(key, 'must be a string or a table { file = "name.md" }')
        if base_dir is None:
            raise DefinitionError(key, "a stored definition holds the text, not a file name")
        text = _section_file(name, base_dir, key)
    elif isinstance(value, str):
        text = value
        if len(text.encode("utf-8", "surrogatepass")) > MAX_SECTION_BYTES:
            raise DefinitionError(key, f"has more than {MAX_SECTION_BYTES} bytes")
    else:
        raise DefinitionError(
            key, f'must be a string or a table {{ file = "name.md" }}, got {quoted(value)}'
        )
    # PostgreSQL's JSON cannot store a NUL character; no Markdown needs one.
    if "\x00" in text:
        raise DefinitionError(key, "holds a NUL character")
    return text


def _groups(
    value: Any, base_dir: Path | None, key: str, files: dict[str, str], file_keys: tuple[str, ...]
) -> list[dict[str, Any]]:
    """Check a list of named groups; record their files in ``files``; return their options.

    A group's file key ``k`` becomes the role ``k:<group slug>``, e.g. ``gold:headlines``.
    """
    if not isinstance(value, list) or not value:
        raise DefinitionError(key, "must be a non-empty list of tables")
    out: list[dict[str, Any]] = []
    for k, group in enumerate(value):
        gwhere = f"{key}[{k}]"
        slug = _member_slug(group, gwhere)
        opts = {}
        for gk, gv in group.items():
            if gk in file_keys:
                files[f"{gk}:{slug}"] = _file(gv, base_dir, f"{gwhere}.{gk}")
            else:
                opts[gk] = gv
        out.append(opts)
    slugs = [g["slug"] for g in out]
    if len(set(slugs)) != len(slugs):
        raise DefinitionError(key, "two entries share a slug")
    return out


def parse_definition(
    raw: dict[str, Any],
    base_dir: Path | None,
    file_roles: Mapping[str, bool],
    sha256: str = "",
    group_keys: Mapping[str, tuple[str, ...]] = MappingProxyType({}),
    option_keys: tuple[str, ...] = (),
    list_roles: tuple[str, ...] = (),
) -> TaskDefinition:
    """Check a definition's structure with its family's keys.

    ``file_roles`` maps a set's file keys to "required"; ``group_keys`` maps set keys holding
    named groups (e.g. STS parts) to the file keys a group may name; ``option_keys`` are the
    family's options a definition may set at the top level (and a subtask override);
    ``list_roles`` are set keys holding a list of files, each given the role ``<key>:<n>``
    (``references:1``, ``references:2``), n from 1 in the listed order. With
    ``base_dir`` None (a definition already stored in the database) files are not checked.
    """
    unknown = set(raw) - KNOWN_TOP_KEYS - set(option_keys)
    if unknown:
        raise DefinitionError(quote(sorted(unknown)[0]), "unknown key")
    slug = _slug(_require(raw, "slug", str, ""), "slug")
    title = _require(raw, "title", str, "")
    family = _require(raw, "family", str, "")
    measures = _str_list(_require(raw, "measures", list, ""), "measures")
    if not measures:
        raise DefinitionError("measures", "must name at least one measure")
    if len(set(measures)) != len(measures):
        raise DefinitionError("measures", "lists a measure twice")
    official = _require(raw, "official_measure", str, "")
    if official not in measures:
        raise DefinitionError(
            "official_measure",
            f"{quoted(official)} is not among the measures {quote(str(list(measures)))}",
        )
    runs_raw = raw.get("runs", {})
    if not isinstance(runs_raw, dict):
        raise DefinitionError("runs", "must be a table")
    slots = _str_list(runs_raw.get("slots", ["primary"]), "runs.slots")
    if not slots:
        raise DefinitionError("runs.slots", "must name at least one slot")
    if len(set(slots)) != len(slots):
        raise DefinitionError("runs.slots", "lists a slot twice")
    for s in slots:
        _slug(s, "runs.slots")
    ranked = _str_list(runs_raw.get("ranked_slots", list(slots)), "runs.ranked_slots")
    if not ranked:
        raise DefinitionError("runs.ranked_slots", "must name at least one slot")
    for s in ranked:
        if s not in slots:
            raise DefinitionError(
                "runs.ranked_slots",
                f"{quoted(s)} is not one of runs.slots {quote(str(list(slots)))}",
            )
    extra_run_keys = set(runs_raw) - {"slots", "ranked_slots"}
    if extra_run_keys:
        raise DefinitionError(f"runs.{quote(sorted(extra_run_keys)[0])}", "unknown key")
    baselines_raw = raw.get("baselines", {})
    if not isinstance(baselines_raw, dict):
        raise DefinitionError("baselines", "must be a table")
    recipes = _str_list(baselines_raw.get("recipes", []), "baselines.recipes")
    subtasks_raw = _listed(raw, "subtasks", "", "subtask")
    subtasks: list[SubtaskDef] = []
    for i, st in enumerate(subtasks_raw):
        where = f"subtasks[{i}]."
        st_slug = _member_slug(st, f"subtasks[{i}]")
        sets_raw = _listed(st, "sets", where, "evaluation set")
        sets: list[SetDef] = []
        for j, s in enumerate(sets_raw):
            swhere = f"{where}sets[{j}]."
            s_slug = _member_slug(s, f"{where}sets[{j}]")
            files: dict[str, str] = {}
            options: dict[str, Any] = {}
            split = _split(s.get("public"), s.get("official_part"), base_dir, swhere, files)
            for key, value in s.items():
                if key in ("slug", "title", "public", "official_part"):
                    continue
                if key in file_roles:
                    files[key] = _file(value, base_dir, f"{swhere}{key}")
                elif key in list_roles:
                    if not isinstance(value, list) or not value:
                        raise DefinitionError(f"{swhere}{key}", "must be a non-empty list of files")
                    for n, path in enumerate(value, 1):
                        files[f"{key}:{n}"] = _file(path, base_dir, f"{swhere}{key}[{n - 1}]")
                elif key in group_keys:
                    options[key] = _groups(
                        value, base_dir, f"{swhere}{key}", files, group_keys[key]
                    )
                else:
                    options[key] = value
            for role, required in file_roles.items():
                if required and role not in files:
                    raise DefinitionError(f"{swhere}{role}", "is required (a file path)")
            sets.append(
                SetDef(
                    slug=s_slug,
                    title=str(s.get("title", s_slug)),
                    files=files,
                    options=options,
                    split=split,
                )
            )
        if len({s.slug for s in sets}) != len(sets):
            raise DefinitionError(f"{where}sets", "two sets share a slug")
        default_set = str(st.get("default_set", sets[0].slug))
        if default_set not in {s.slug for s in sets}:
            raise DefinitionError(
                f"{where}default_set", f"{quoted(default_set)} is not one of its sets"
            )
        footnotes = _str_list(st.get("footnotes", []), f"{where}footnotes")
        st_measures = _str_list(st.get("measures", list(measures)), f"{where}measures")
        st_official = str(st.get("official_measure", official if official in st_measures else ""))
        if st_official not in st_measures:
            raise DefinitionError(
                f"{where}official_measure",
                f"{quoted(st_official)} is not among the measures {quote(str(list(st_measures)))}",
            )
        st_options = {
            k: v
            for k, v in st.items()
            if k
            not in {
                "slug",
                "title",
                "sets",
                "default_set",
                "footnotes",
                "measures",
                "official_measure",
            }
        }
        subtasks.append(
            SubtaskDef(
                slug=st_slug,
                title=str(st.get("title", st_slug)),
                default_set=default_set,
                sets=tuple(sets),
                footnotes=footnotes,
                measures=st_measures,
                official_measure=st_official,
                options=st_options,
            )
        )
    if len({s.slug for s in subtasks}) != len(subtasks):
        raise DefinitionError("subtasks", "two subtasks share a slug")
    fmt = raw.get("format", {})
    table = raw.get("table", {})
    if not isinstance(fmt, dict):
        raise DefinitionError("format", "must be a table")
    if not isinstance(table, dict):
        raise DefinitionError("table", "must be a table")
    sections = {key: _section(raw, key, base_dir) for key in SECTION_KEYS}
    read = {k: v for k, v in sections.items() if v is not None and not isinstance(raw[k], str)}
    if read:
        # The stored definition holds the files' text: the server never reads them again.
        raw = {**raw, **read}
    return TaskDefinition(
        slug=slug,
        title=title,
        family=family,
        table_style=str(raw.get("table_style", "")),
        official_measure=official,
        measures=measures,
        description=str(raw.get("description", "")),
        runs=RunRules(slots=slots, ranked_slots=ranked),
        baseline_recipes=recipes,
        format=fmt,
        table=table,
        subtasks=tuple(subtasks),
        base_dir=base_dir,
        raw=raw,
        sha256=sha256,
        options={k: raw[k] for k in option_keys if k in raw},
        terms=(sections["terms"] or "").strip(),
        overview=(sections["overview"] or "").strip(),
        evaluation=(sections["evaluation"] or "").strip(),
        data_description=(sections["data_description"] or "").strip(),
    )


PRESETS_DIR = Path(__file__).resolve().parent / "presets"


def preset_paths() -> list[Path]:
    """Return the definition files of the bundled presets."""
    return sorted(PRESETS_DIR.glob("*/task.toml"))
