"""What every task family provides: gold loading, validation, scoring and baselines."""

from __future__ import annotations

import io
from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Generic, TypeVar, cast

from leaderboard.formats.bounded import BoundedReader, InputBound, InputRefused
from leaderboard.formats.compression import is_zip_or_tar
from leaderboard.formats.issues import Issue, quoted
from leaderboard.scoring.registry import MeasureRegistry
from leaderboard.tables.model import MeasureSpec
from leaderboard.tasks.definition import DefinitionError, SetDef, SubtaskDef, TaskDefinition

# Resampling needs numpy, which only significance and intervals use: imported there.
if TYPE_CHECKING:
    from leaderboard.scoring.resampling import UnitRows

#: The parsed reference files of a family's set (what ``load_gold`` returns).
GoldT = TypeVar("GoldT")
#: A validated run as the family parsed it (``Verdict.parsed``, what ``score`` reads).
RunT = TypeVar("RunT")


#: An upload's files by field, as seekable binary streams (large runs stay on disk).
RunInputs = Mapping[str, IO[bytes]]


def read_all(stream: IO[bytes]) -> bytes:
    """Return a whole stream's content from its start."""
    stream.seek(0)
    return stream.read()


ARCHIVE_REFUSED = (
    "Archives (zip, tar) are not accepted; upload the plain-text run file or a .gz of it."
)


def single_file(inputs: RunInputs) -> tuple[IO[bytes] | None, list[Issue]]:
    """Return the one file of a single-file run, rewound, or why the upload is refused."""
    stream = inputs.get("file")
    if stream is None:
        return None, [Issue(None, "No run file was given.")]
    stream.seek(0)
    head = stream.read(512)
    stream.seek(0)
    if is_zip_or_tar(head):
        return None, [Issue(None, ARCHIVE_REFUSED)]
    return stream, []


#: How many problems of a reference file one refusal lists.
LISTED_PROBLEMS = 5


class ReferenceFileError(ValueError):
    """A reference file (gold, qrels, topics, references) cannot be read: its role and the problem.

    The message names the line (``Line 3: ...``) where there is one; callers add the file name.
    """

    def __init__(self, role: str, message: str) -> None:
        super().__init__(message)
        self.role = role
        self.message = message
        self.problems: tuple[Issue, ...] = ()

    @classmethod
    def listing(cls, role: str, issues: Sequence[Issue]) -> ReferenceFileError:
        """Return the refusal of a reference file naming its first problems and counting the rest."""
        errors = [i.message for i in issues if i.severity == "error"]
        listed = " ".join(errors[:LISTED_PROBLEMS])
        more = len(errors) - LISTED_PROBLEMS
        if more > 0:
            listed += f" … and {more:,} more problem{'s' if more > 1 else ''}."
        refused = cls(role, listed)
        # Every problem, one by one, for callers that list them all (the web's task upload).
        refused.problems = tuple(i for i in issues if i.severity == "error")
        return refused


def file_bound(
    ctx: Context, max_lines: int, average_line_bytes: int, reason: str
) -> dict[str, InputBound]:
    """Return the bound of a single-file run: ``max_lines`` lines of the average length at most.

    The byte bound never exceeds the server's limit on a decompressed upload.
    """
    return {
        "file": InputBound(
            max_bytes=min(max_lines * average_line_bytes, ctx.max_decompressed),
            max_lines=max_lines,
            reason=reason,
        )
    }


def reference_problem(exc: Exception) -> str:
    """Return what ``load_gold`` found wrong in a reference file, with the line where known.

    Families raise ReferenceFileError, or plain ValueError, KeyError or UnicodeDecodeError.
    """
    if isinstance(exc, UnicodeDecodeError):
        if isinstance(exc.object, bytes):
            line = exc.object[: exc.start].count(b"\n") + 1
            return f"Line {line}: not UTF-8 text (byte {exc.start:,})"
        return f"not UTF-8 text (byte {exc.start:,})"
    if isinstance(exc, KeyError):
        return f"{exc.args[0] if exc.args else exc} is missing"
    return str(exc)


class RunPathError(ValueError):
    """A run given as a path (file, folder or archive) cannot be read as this task's run."""


@dataclass(frozen=True)
class MeasureResult:
    """One measure's value (stored scale), its official string, flags and the gold role used.

    A measure that is undefined for a run (a correlation or kappa of a constant prediction) has
    ``raw`` None, an empty official string and ``reason`` saying why; the run is not rejected.
    """

    raw: float | None
    official: str
    flags: tuple[str, ...] = ()
    gold_role: str | None = None
    #: The per-query (per-item) values the measure is the mean of, by query id; None when the
    #: measure is not a mean of per-query values.
    per_query: Mapping[str, float] | None = None
    #: Why the value is undefined (``raw`` None), e.g. "the prediction is constant".
    reason: str = ""
    #: What the value depends on beyond the gold, for the table's notes (sacrebleu's signature).
    note: str = ""
    #: Per item, the statistics a corpus-level measure is computed from (sacrebleu's counts per
    #: segment), so that analysis can recompute it on any sample of the items; plain lists, as
    #: the score row stores them.
    item_stats: list[list[float]] | None = None

    @classmethod
    def undefined(cls, reason: str, **kw: Any) -> MeasureResult:
        """Return the result of a measure that has no value for this run, and why."""
        return cls(None, "", reason=reason, **kw)


@dataclass
class Verdict(Generic[RunT]):
    """The outcome of validating one upload: errors reject it, warnings are shown."""

    errors: list[Issue]
    warnings: list[Issue]
    #: The run as the family parsed it; None when it was rejected.
    parsed: RunT | None = None
    tolerances: tuple[str, ...] = ()
    report: dict[str, Any] = field(default_factory=dict)
    #: Errors found beyond those listed in ``errors`` (validators keep a bounded number).
    more_errors: int = 0

    @property
    def ok(self) -> bool:
        """Return whether the upload may be stored and scored."""
        return not self.errors and self.parsed is not None


@dataclass(frozen=True)
class Evaluation:
    """A run validated and, when accepted, scored: what every caller of the pipeline reads."""

    verdict: Verdict[Any]
    #: The scores by measure key; None when the run was rejected.
    results: dict[str, MeasureResult] | None
    #: The run's prediction per item id, stored with the run (``Family.item_values``).
    item_values: dict[str, Any] | None = None
    #: A split set's scores on each part ("public", "private"), beside ``results`` on all units.
    by_part: dict[str, dict[str, MeasureResult]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Return whether the run was accepted and scored."""
        return self.results is not None


@dataclass(frozen=True)
class PartGold:
    """A part of a split set: its units and the gold restricted to them (``restrict_gold``)."""

    units: frozenset[str]
    gold: Any


@dataclass(frozen=True)
class StoredScore:
    """What a scored run keeps of one measure, from which analysis resamples it."""

    #: The per-query values the measure is the mean of (MeasureResult.per_query).
    per_query: Mapping[str, float] | None = None
    #: Per-item statistics of a corpus-level measure (MeasureResult.item_stats).
    item_stats: list[list[float]] | None = None
    #: The run's prediction per item (Family.item_values).
    item_values: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class BaselineRun:
    """A generated or shipped baseline: its role, label, shown measures and file contents."""

    role: str
    label: str
    order: int
    visible_measures: tuple[str, ...]
    files: dict[str, bytes]
    description: str = ""


@dataclass(frozen=True)
class Context:
    """Where an upload goes: used in messages (e.g. "subtask D (test)") and family options."""

    definition: TaskDefinition
    subtask: SubtaskDef
    set_slug: str
    max_decompressed: int = 1 << 30
    #: Roles of the set's reference files currently loaded (None: not known, assume all).
    loaded: frozenset[str] | None = None

    @property
    def set(self) -> SetDef:
        """Return the definition of the target set."""
        found = self.subtask.set(self.set_slug)
        if found is None:
            raise KeyError(f"subtask {self.subtask.slug!r} has no set {self.set_slug!r}")
        return found

    @property
    def where(self) -> str:
        """Return the human name of the target, e.g. ``subtask D (test)``."""
        return f"subtask {self.subtask.slug} ({self.set_slug})"


@dataclass(frozen=True)
class FolderRun:
    """A run found in a folder of runs: its team, slot and file, and the team's description."""

    team: str
    slot: str
    path: Path
    #: None when the folder describes no system (the importer's default applies).
    description: str | None = None


@dataclass(frozen=True)
class UploadField:
    """One multipart field of a run upload, as forms, the API and its document show it."""

    name: str
    label: str
    #: Says what the field holds in the API document.
    description: str = ""


#: The command-line option of ``set-gold`` a slot's address may use in place of a set's name.
SET_OPTION = "set"


@dataclass(frozen=True)
class GoldAddress:
    """How ``set-gold`` names one of several reference files of a set: ``--<option> <value>``.

    ``option`` is ``set`` when the value stands where a set's name would (an STS part:
    ``--set headlines``), else one of the family's ``gold_address_options`` (``--variant
    manual``); ``noun`` is what messages call the value ("part", "variant").
    """

    option: str
    value: str
    noun: str


@dataclass(frozen=True)
class GoldAddressOption:
    """A ``set-gold`` option a family's gold slots are named by, with its help."""

    name: str
    help: str


@dataclass(frozen=True)
class GoldSlot:
    """A reference file of a set that an organizer may add or replace.

    ``address`` names it for ``set-gold``; a slot without one is the set's one gold file.
    """

    role: str
    label: str
    address: GoldAddress | None = None


@dataclass(frozen=True)
class MarkerNote:
    """A marker and the note it stands for, e.g. ``§`` and why a value counts as 0."""

    marker: str
    text: str


@dataclass(frozen=True)
class ImportOption:
    """An import mode of a family beyond strict and lenient (read leniently, then more).

    ``name`` is the key of ``options`` and the command-line flag (``--name``); ``label`` the
    organizer form's choice; ``help`` the flag's help on ``import-runs``, ``score_help`` on
    ``score`` (the same when empty).
    """

    name: str
    label: str
    help: str
    score_help: str = ""


@dataclass(frozen=True)
class ScoreFile:
    """The official scorer's output found beside a run file: its values, or why none were read."""

    name: str
    scores: Mapping[str, str] | None
    problem: str = ""


class DefinitionKeys:
    """Optional: the keys a definition of the family may use beyond slugs, sets and measures."""

    name: str
    #: Set keys holding lists of named groups, with the file keys a group may name; a group's
    #: file becomes the role "<file key>:<group slug>" (e.g. ``gold:headlines``).
    group_keys: Mapping[str, tuple[str, ...]] = {}
    #: The family's options a definition may set at the top level or override per subtask.
    option_keys: tuple[str, ...] = ()
    #: Set keys holding a list of files (e.g. ``references``); each file's role is "<key>:<n>".
    list_roles: tuple[str, ...] = ()
    #: The baseline recipes a definition may ask for (``name``, or ``name:<argument>`` shown
    #: as such); none when the family generates no baselines.
    recipes: tuple[str, ...] = ()

    def check_recipe(self, recipe: str, definition: TaskDefinition) -> bool:
        """Return whether ``recipe`` is a baseline this family builds for the definition."""
        return recipe in self.recipes

    def check_recipes(self, definition: TaskDefinition) -> None:
        """Raise DefinitionError at ``baselines.recipes`` for a recipe the family does not build."""
        for recipe in definition.baseline_recipes:
            if not self.check_recipe(recipe, definition):
                known = (
                    f"known: {', '.join(self.recipes)}"
                    if self.recipes
                    else f"the {self.name} family has no generated baselines"
                )
                raise DefinitionError(
                    "baselines.recipes", f"unknown recipe {quoted(recipe)}; {known}"
                )

    def check_subtask_keys(self, subtask: SubtaskDef, where: str) -> None:
        """Raise DefinitionError naming a subtask key that is none of the family's options."""
        unknown = sorted(set(subtask.options) - set(self.option_keys))
        if unknown:
            known = ("slug", "title", "sets", "measures", *self.option_keys)
            raise DefinitionError(
                f"{where}.{unknown[0]}",
                f"unknown key for a {self.name} subtask; known: {', '.join(known)}",
            )


class TableNotes:
    """Optional: the markers a family's tables put on cells and rows, with their notes."""

    #: Score flags shown as a marker on the cell, with the table's note for the marker.
    flag_notes: Mapping[str, MarkerNote] = {}
    #: Row markers of ``run_notes``, with the table's note for a row whose own note is unknown.
    run_marker_notes: Mapping[str, str] = {}

    def run_notes(self, report: Mapping[str, Any]) -> list[MarkerNote]:
        """Return the notes a stored run carries (from its report), each with its row marker."""
        return []

    def marker_texts(self) -> dict[str, str]:
        """Return the table's note for every marker of the family's flags and run notes."""
        texts = {note.marker: note.text for note in self.flag_notes.values()}
        texts.update(self.run_marker_notes)
        return texts


class TableOptions(Generic[GoldT]):
    """Optional: the table styles a family offers and the options they read."""

    #: The table styles a definition of this family may choose; the first is the default.
    table_styles: tuple[str, ...] = ()

    def table_style(self, definition: TaskDefinition) -> str:
        """Return the style the definition chose, or the family's default."""
        return definition.table_style or self.table_styles[0]

    def style_options(self, ctx: Context) -> dict[str, Any]:
        """Return table-style options that follow from the definition (e.g. a scale note)."""
        return {}

    def table_options(self, gold: GoldT) -> dict[str, Any]:
        """Return table-style options that depend on the gold (e.g. query counts)."""
        return {}

    def table_reads_gold(self) -> bool:
        """Return whether ``table_options`` reads the gold: only if the family overrides it.

        A table of a family whose options owe nothing to the gold is built without parsing it.
        """
        return type(self).table_options is not TableOptions.table_options

    def stored_table_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """Return a frozen table's stored style options as the styles read them today."""
        return dict(options)


class RunUpload:
    """Optional: the fields a run is uploaded in, and how a run given as a path is opened."""

    #: Whether a run is several files (one per evaluation part) rather than one.
    multi_file: bool = False

    def run_fields(self, ctx: Context) -> list[str]:
        """Return the upload fields of a run: one file unless the family says otherwise."""
        return ["file"]

    def upload_fields(self, ctx: Context) -> list[UploadField]:
        """Return the multipart fields of a run upload (a single file by default)."""
        return [
            UploadField("file", "Run file (plain text or .gz)", "The run file, plain text or gzip.")
        ]

    def upload_hint(self, ctx: Context) -> str:
        """Return a sentence the upload form shows under its title (e.g. a file-name habit)."""
        return ""

    def inputs_from_path(self, path: Path, ctx: Context) -> dict[str, IO[bytes]]:
        """Open a run given on the command line: one file for single-file runs."""
        if path.is_dir():
            raise RunPathError(f"{path} is a folder; a run of this task is one file.")
        return {self.run_fields(ctx)[0]: path.open("rb")}

    @staticmethod
    def memory_inputs(files: Mapping[str, bytes]) -> dict[str, IO[bytes]]:
        """Wrap in-memory file contents as run inputs."""
        return {k: io.BytesIO(v) for k, v in files.items()}


class ImportOptions:
    """Optional: the import modes beyond strict and lenient, and runs shipped in folders."""

    #: Import modes beyond strict and lenient an organizer may choose (form and command line).
    import_options: tuple[ImportOption, ...] = ()

    def kept_options(self, options: Mapping[str, Any], *, lenient: bool) -> dict[str, Any]:
        """Return what a run's report keeps of its import options, to be read the same again.

        An import mode is a lenient one: only a lenient run keeps it.
        """
        if not lenient:
            return {}
        return {o.name: True for o in self.import_options if options.get(o.name)}

    def stored_options(self, report: Mapping[str, Any]) -> dict[str, Any]:
        """Return the import options a stored run is read with again (re-scoring, verify)."""
        return {o.name: bool(report.get(o.name, False)) for o in self.import_options}

    def runs_in_folder(self, folder: Path, ctx: Context) -> list[FolderRun]:
        """Return the subtask's runs in a folder laid out as the family's campaigns shipped them."""
        raise RunPathError(
            f"{folder.name} is a folder, and runs of task {ctx.definition.slug} are not imported "
            "from folders; give one run with --team and --slot."
        )


class GoldAddressing:
    """Optional: the reference files of a set an organizer may replace, and how they are named."""

    file_roles: dict[str, bool]
    #: Options of ``set-gold`` (besides ``--set``) that name the family's gold slots.
    gold_address_options: tuple[GoldAddressOption, ...] = ()

    def gold_slots(self, ctx: Context) -> list[GoldSlot]:
        """Return the reference files of the set an organizer may add or replace."""
        return [GoldSlot("gold", "gold")] if "gold" in self.file_roles else []


class Diagnostics(Generic[GoldT]):
    """Optional: what the organizer is told about a loaded gold and a run's official scores."""

    def describe_gold(self, gold: GoldT, role: str) -> list[str]:
        """Return report lines for the organizer about one loaded reference file."""
        return []

    def score_file(self, run_path: Path) -> ScoreFile | None:
        """Return the official scorer's output kept beside a run file, if the family knows one."""
        return None


class UnitValues(Generic[GoldT, RunT]):
    """Optional: the units a run's values are kept per, for significance and intervals."""

    #: What the family's per-unit values are kept for, singular and plural (pages, CSV, charts).
    unit: str = "query"
    unit_plural: str = "queries"

    def unit_rows(self, key: str, gold: GoldT, stored: StoredScore) -> tuple[list[str], UnitRows]:
        """Return a run's unit ids and rows of one measure, for significance and intervals.

        Default: the measure is the mean of its stored per-query values. Raise NotResampled
        when nothing per unit was kept.
        """
        import numpy as np

        from leaderboard.scoring.resampling import NotResampled, mean_rows

        if stored.per_query is None:
            raise NotResampled(f"{key} is not a mean over queries and keeps no per-item values")
        units = list(stored.per_query)
        return units, mean_rows(np.array([stored.per_query[u] for u in units], dtype=np.float64))

    def item_values(self, parsed: RunT, gold: GoldT) -> dict[str, Any] | None:
        """Return a run's prediction per item id where measures are corpus-level; else None."""
        return None


#: How many unknown unit ids a refused restriction names.
NAMED_UNITS = 5


def check_units(units: frozenset[str], known: Collection[str]) -> None:
    """Raise ValueError naming the ids of ``units`` that are not among the set's ``known`` units."""
    unknown = sorted(units.difference(known))
    if unknown:
        named = ", ".join(quoted(u) for u in unknown[:NAMED_UNITS])
        more = len(unknown) - NAMED_UNITS
        raise ValueError(
            f"not units of the set: {named}" + (f" and {more:,} more" if more > 0 else "")
        )


class UnitParts(Generic[GoldT, RunT]):
    """The units of a set and their restriction, to score a run on part of them (a split).

    A restricted gold and run score as files holding only those units would, parsed from
    scratch: corpus-level measures are recomputed on the part, never averaged; options that
    are set-wide (declared labels, sacrebleu options) stay the whole set's.
    """

    def unit_ids(self, gold: GoldT) -> list[str]:
        """Return the ids of the set's units, in gold order."""
        raise NotImplementedError(f"{type(self).__name__} does not split its units")

    def restrict_gold(self, gold: GoldT, units: frozenset[str]) -> GoldT:
        """Return the gold on these units only."""
        raise NotImplementedError(f"{type(self).__name__} does not split its units")

    def restrict_run(self, parsed: RunT, gold: GoldT, units: frozenset[str]) -> RunT:
        """Return the validated run on these units only (gold: the whole set's)."""
        raise NotImplementedError(f"{type(self).__name__} does not split its units")


class Family(
    DefinitionKeys,
    TableNotes,
    TableOptions[GoldT],
    RunUpload,
    ImportOptions,
    GoldAddressing,
    Diagnostics[GoldT],
    UnitValues[GoldT, RunT],
    UnitParts[GoldT, RunT],
    ABC,
    Generic[GoldT, RunT],
):
    """A family of tasks sharing a run format, measures and table styles.

    ``GoldT`` is what ``load_gold`` parses a set's reference files into, ``RunT`` what
    validation parses a run into. A family writes ``name``, ``file_roles`` and the abstract
    methods below; the optional parts it inherits (``DefinitionKeys``, ``TableNotes``,
    ``TableOptions``, ``RunUpload``, ``ImportOptions``, ``GoldAddressing``, ``Diagnostics``,
    ``UnitValues``) have defaults it may override; ``UnitParts`` it must write to be split.
    """

    name: str
    #: File keys a set may name in the definition, mapped to whether they are required.
    file_roles: dict[str, bool]

    @abstractmethod
    def check_definition(self, definition: TaskDefinition) -> None:
        """Raise DefinitionError naming the key if the definition breaks this family's rules."""

    @abstractmethod
    def measure_specs(self, ctx: Context) -> list[MeasureSpec]:
        """Return the table columns of a subtask's set, in order."""

    @abstractmethod
    def load_gold(self, files: Mapping[str, bytes], ctx: Context) -> GoldT:
        """Parse a set's reference files (keyed by role) into the family's gold object."""

    @abstractmethod
    def input_bounds(self, gold: GoldT, ctx: Context) -> dict[str, InputBound]:
        """Return, per upload field, the most a run of this set can hold (from the gold)."""

    @abstractmethod
    def validate_inputs(
        self,
        inputs: RunInputs,
        gold: GoldT,
        ctx: Context,
        *,
        lenient: bool,
        options: Mapping[str, Any],
    ) -> Verdict[RunT]:
        """Validate bounded, decompressed inputs (strict for participants, lenient for imports)."""

    @abstractmethod
    def score(self, parsed: RunT, gold: GoldT) -> dict[str, MeasureResult]:
        """Score a validated run; keys are the table's measure keys."""

    @abstractmethod
    def baselines(self, gold: GoldT, files: Mapping[str, bytes], ctx: Context) -> list[BaselineRun]:
        """Return the set's baseline runs per the definition's recipes."""

    @staticmethod
    def registry_specs(registry: MeasureRegistry, ctx: Context) -> list[MeasureSpec]:
        """Return the subtask's measures as columns described by ``registry``, in order."""
        return [
            MeasureSpec.of(registry.get(m), official=m == ctx.subtask.official_measure)
            for m in ctx.subtask.measures
        ]

    def validate(
        self,
        inputs: RunInputs,
        gold: GoldT,
        ctx: Context,
        *,
        lenient: bool,
        options: Mapping[str, Any],
    ) -> Verdict[RunT]:
        """Validate an upload read within the set's bounds, decompressed as a stream.

        Every field is read through a BoundedReader: a file larger than its task can need is
        refused while it is read, before it is unpacked or split in full, whichever family
        reads it and however (upload, import, re-score, verify, offline scoring).
        """
        bounds = self.input_bounds(gold, ctx)
        fallback = InputBound(max_bytes=ctx.max_decompressed)
        bounded = {
            name: cast(IO[bytes], BoundedReader(stream, bounds.get(name, fallback)))
            for name, stream in inputs.items()
        }
        try:
            return self.validate_inputs(bounded, gold, ctx, lenient=lenient, options=options)
        except InputRefused as exc:
            return Verdict([Issue(None, exc.message)], [])

    def evaluate(
        self,
        inputs: RunInputs,
        gold: GoldT,
        ctx: Context,
        *,
        lenient: bool,
        options: Mapping[str, Any],
        part_golds: Mapping[str, PartGold] | None = None,
    ) -> Evaluation:
        """Validate a run within its bounds, then score it if accepted, on every part given.

        The one pipeline of uploads, imports, re-scoring, verify, baselines and offline scoring.
        A split set's parts are scored from their own units (corpus-level measures recomputed,
        never averaged).
        """
        verdict = self.validate(inputs, gold, ctx, lenient=lenient, options=options)
        parsed = verdict.parsed
        # An accepted run has its parsed form: the second test only narrows its type.
        if not verdict.ok or parsed is None:
            return Evaluation(verdict, None)
        results = self.score(parsed, gold)
        scored = self.score_parts(parsed, gold, results, part_golds) if part_golds else {}
        return Evaluation(verdict, results, self.item_values(parsed, gold), scored)

    def score_parts(
        self,
        parsed: RunT,
        gold: GoldT,
        results: Mapping[str, MeasureResult],
        parts: Mapping[str, PartGold],
    ) -> dict[str, dict[str, MeasureResult]]:
        """Score a validated run on each part; ``results`` are its scores on all units."""
        return {
            name: self.score_part(parsed, gold, part.gold, part.units)
            for name, part in parts.items()
        }

    def score_part(
        self, parsed: RunT, gold: GoldT, part_gold: GoldT, units: frozenset[str]
    ) -> dict[str, MeasureResult]:
        """Score a validated run on a part of its set's units (part_gold = restrict_gold(gold, units))."""
        return self.score(self.restrict_run(parsed, gold, units), part_gold)


class SingleFileFamily(Family[GoldT, RunT]):
    """A family whose run is one plain-text file (or a .gz of it): its bound and its checks.

    A family says how many lines a run may have (``run_lines``) and validates the file
    (``validate_file``); a missing file and an archive are refused here, before it is read.
    """

    #: The average line length a run may have, for the byte bound (lines × this).
    average_line_bytes: int = 1024

    @abstractmethod
    def run_lines(self, gold: GoldT, ctx: Context) -> tuple[int, str]:
        """Return the most lines a run of this set may have, and the reason a refusal gives."""

    def input_bounds(self, gold: GoldT, ctx: Context) -> dict[str, InputBound]:
        """Bound the run file by its lines, at ``average_line_bytes`` a line on average."""
        lines, reason = self.run_lines(gold, ctx)
        return file_bound(ctx, lines, self.average_line_bytes, reason)

    def validate_inputs(
        self,
        inputs: RunInputs,
        gold: GoldT,
        ctx: Context,
        *,
        lenient: bool,
        options: Mapping[str, Any],
    ) -> Verdict[RunT]:
        """Refuse an upload without its file or with an archive; validate the file otherwise."""
        stream, problems = single_file(inputs)
        if stream is None:
            return Verdict(problems, [])
        return self.validate_file(stream, gold, ctx, lenient=lenient, options=options)

    @abstractmethod
    def validate_file(
        self,
        stream: IO[bytes],
        gold: GoldT,
        ctx: Context,
        *,
        lenient: bool,
        options: Mapping[str, Any],
    ) -> Verdict[RunT]:
        """Validate the run file, rewound (strict for participants, lenient for imports)."""
