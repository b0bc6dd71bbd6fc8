"""The ranking-table model: style inputs (measures, entries) and the table every export renders."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from types import MappingProxyType
from typing import Literal

from leaderboard.scoring.registry import Measure

Kind = Literal["run", "baseline"]
RankMarker = Literal["", "*", "†"]

#: Header text of each meta column a style may place before or after the measure columns.
META_LABELS: Mapping[str, str] = MappingProxyType(
    {
        "rank": "#",
        "submission": "Submission",
        "team": "Team",
        "run": "Run",
        "run_rank": "Run Rank",
        "team_rank": "Team Rank",
        "submitted": "Runs",
        "shakeup": "Shake-up",
    }
)
#: The tooltip of a meta column header whose label alone could be misread.
META_TITLES: Mapping[str, str] = MappingProxyType(
    {
        "submitted": "runs the team submitted to this set, replaced and withdrawn included",
        "shakeup": "places moved against the ranking on the public part (public rank minus "
        "rank): +2 moved up two places on the private part",
    }
)
#: The meta column of a split set's table once its private part is released.
SHAKEUP = "shakeup"
#: The meta column disclosing how many runs a row's team uploaded ("best of N").
SUBMITTED = "submitted"
#: The meta columns a style shows a row's rank in: its rank interval goes beside the rank.
RANK_COLUMNS = ("rank", "run_rank")
#: The tooltip of a shown rank interval.
RANK_INTERVAL_TITLE = (
    "rank interval: 2.5th–97.5th percentile of the run's rank over bootstrap resamples of the units"
)
#: Meta columns that hold user text (team and run names): rendered with ``dir="auto"``.
USER_TEXT_COLUMNS = frozenset({"submission", "team", "run"})
#: Shown in a cell whose measure does not apply or is hidden.
MISSING = "—"
LATE_MARKER = "*"
BASELINE_MARKER = "†"
#: The note of the late marker where late and corrected runs are both ranked "as if".
LATE_OR_CORRECTED_NOTE = (
    "* late or corrected run, ranked as if submitted on time without displacing on-time runs"
)
#: The note of a cell's marker when the family gives none.
FLAGGED_CELL_NOTE = "value flagged by the scorer (see the run's details)"

NO_OPTIONS: Mapping[str, object] = MappingProxyType({})


# ---------------------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class MeasureSpec:
    """One measure column of a table: its registry entry as a column (factor, decimals, direction).

    ``scale`` multiplies a stored value into the shown one; ties and ranks compare the stored
    official strings, which the registry rounds.
    """

    key: str
    label: str
    group: str | None = None
    official: bool = False
    scale: float = 1
    display_decimals: int = 2
    lower_is_better: bool = False

    @classmethod
    def of(
        cls, measure: Measure, *, official: bool = False, group: str | None = None
    ) -> MeasureSpec:
        """Return the column of a registry entry."""
        return cls(
            key=measure.key,
            label=measure.label,
            group=group,
            official=official,
            scale=measure.factor,
            display_decimals=measure.decimals,
            lower_is_better=measure.lower_is_better,
        )


@dataclass(frozen=True)
class Value:
    """One stored score: the unrounded value and the official rounded string used for ties."""

    raw: float
    official: str
    note: str | None = None


@dataclass(frozen=True)
class Entry:
    """One run or baseline with its stored scores, as a style function receives it."""

    kind: Kind
    team: str | None
    run: str
    slot: str | None
    values: Mapping[str, Value]
    late: bool = False
    corrected: bool = False
    label: str | None = None
    baseline_order: int = 0
    markers: tuple[str, ...] = ()
    run_id: int | None = None
    #: How many runs the team uploaded to the set (replaced and withdrawn included), if known.
    submitted: int | None = None

    @property
    def off_time(self) -> bool:
        """Return whether the run is late or corrected, so ranked only "as if"."""
        return self.late or self.corrected


# --------------------------------------------------------------------------------------- outputs


def official_key(measures: Sequence[Column | MeasureSpec]) -> str:
    """Return the key of the measure marked official, or the first measure's if none is."""
    return next((m.key for m in measures if m.official), measures[0].key)


@dataclass(frozen=True)
class Column:
    """A measure column of the built table."""

    key: str
    label: str
    group: str | None
    official: bool


@dataclass(frozen=True)
class Cell:
    """One measure value as shown: ``value`` is unrounded in the display scale."""

    value: float
    display: str
    rank: int | None = None
    bold: bool = False
    note: str | None = None
    #: The 95 % bootstrap interval of the value, in the display scale, once analysed.
    ci: tuple[float, float] | None = None
    #: The interval as shown, "[low, high]" with the column's decimals.
    ci_display: str = ""


@dataclass(frozen=True)
class MetaCell:
    """A meta column's text (user text, escaped by every export) and a trusted marker after it."""

    text: str
    marker: str = ""

    @property
    def plain(self) -> str:
        """Return the text with its marker, as shown."""
        return self.text + self.marker


@dataclass(frozen=True)
class Row:
    """One table row in display order; ``meta`` holds the text of every meta column."""

    kind: Kind
    team: str | None
    run: str
    slot: str | None
    label: str
    rank: int | None
    rank_marker: RankMarker
    rank_display: str
    team_rank: int | None
    late: bool
    bold: bool
    markers: tuple[str, ...]
    cells: Mapping[str, Cell | None]
    meta: Mapping[str, MetaCell]
    corrected: bool = False
    run_id: int | None = None
    #: The significance cluster (1, 2, ...) of a ranked row, once analysed.
    cluster: int | None = None
    #: How many runs the row's team uploaded to the set; None for baselines or when unknown.
    submitted: int | None = None
    #: The row's rank on the public part, once a split set's private part is shown.
    public_rank: int | None = None
    #: The 2.5th and 97.5th percentile of the row's rank over the analysis' bootstrap samples.
    rank_interval: tuple[int, int] | None = None

    @property
    def rank_interval_display(self) -> str:
        """Return the rank interval as shown, "(1–3)" ("(2–2)" too), or "" without one."""
        if self.rank_interval is None:
            return ""
        low, high = self.rank_interval
        return f"({low}–{high})"

    def starts_cluster(self, previous: Row | None) -> bool:
        """Return whether a rule goes above this row: it opens a cluster after another one."""
        return (
            self.cluster is not None
            and previous is not None
            and previous.cluster is not None
            and previous.cluster != self.cluster
        )


@dataclass(frozen=True)
class SimpleTable:
    """A small secondary table of plain strings (e.g. the STS summary)."""

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Table:
    """A complete ranking table: the one model every export and the HTML page render."""

    task: str
    subtask: str
    set: str
    official: bool
    frozen_at: str | None
    style: str
    title: str
    lead_columns: tuple[str, ...]
    trail_columns: tuple[str, ...]
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    footnotes: tuple[str, ...] = ()
    extra: SimpleTable | None = None
    #: The units the values are computed on: "all", or a split set's "public" or "private".
    part: str = "all"
    #: What the rows are: "slots" (each ranked slot's run), "best" or "ladder" (one per team).
    board: str = "slots"

    @property
    def grouped(self) -> bool:
        """Return whether any measure column belongs to a group (two header rows)."""
        return any(column.group is not None for column in self.columns)

    @property
    def column_groups(self) -> tuple[tuple[str | None, int], ...]:
        """Return the runs of adjacent measure columns sharing a group, as (group, span)."""
        groups: list[tuple[str | None, int]] = []
        for column in self.columns:
            if groups and groups[-1][0] == column.group:
                groups[-1] = (column.group, groups[-1][1] + 1)
            else:
                groups.append((column.group, 1))
        return tuple(groups)

    @property
    def ranked_keys(self) -> frozenset[str]:
        """Return the keys of the measure columns where some cell shows a rank subindex."""
        return frozenset(
            key for row in self.rows for key, cell in row.cells.items() if cell and cell.rank
        )

    @property
    def official_key(self) -> str:
        """Return the key of the official measure's column (the first column without one)."""
        return official_key(self.columns)

    def run_rows(self, measure: str, runs: str) -> list[Row]:
        """Return the run rows with a value of the measure: the ranked ones, or ``all``."""
        return [
            r
            for r in self.rows
            if r.run_id is not None
            # Ranked rows: primaries, and baselines placed "as if" they took part.
            and (runs == "all" or r.rank is not None or r.kind == "baseline")
            and r.cells.get(measure) is not None
        ]

    @property
    def rank_interval_column(self) -> str | None:
        """Return the meta column showing ranks, where rank intervals go; None: none shows them.

        A table without one (ranks only as subscripts) shows a row's rank interval after its
        official measure's value instead.
        """
        shown = (*self.lead_columns, *self.trail_columns)
        return next((name for name in RANK_COLUMNS if name in shown), None)

    def rank_interval_in_meta(self, row: Row, name: str) -> bool:
        """Return whether the row's rank interval goes in meta column ``name``."""
        return row.rank_interval is not None and name == self.rank_interval_column

    def rank_interval_in_cell(self, row: Row, key: str) -> bool:
        """Return whether the row's rank interval goes in the cell of measure ``key``."""
        return (
            row.rank_interval is not None
            and self.rank_interval_column is None
            and key == self.official_key
        )

    @property
    def rank_interval_title(self) -> str:
        """Return the tooltip of a shown rank interval."""
        return RANK_INTERVAL_TITLE

    @property
    def row_header(self) -> str | None:
        """Return the meta column that names the row (the first one holding user text)."""
        return next((name for name in self.lead_columns if name in USER_TEXT_COLUMNS), None)

    @staticmethod
    def meta_label(name: str) -> str:
        """Return the header text of meta column ``name``."""
        return META_LABELS[name]

    @staticmethod
    def meta_title(name: str) -> str:
        """Return the tooltip of meta column ``name``'s header, or "" when it has none."""
        return META_TITLES.get(name, "")

    @property
    def discloses_submitted(self) -> bool:
        """Return whether the table shows each team's number of uploads (its rows carry it)."""
        return SUBMITTED in self.lead_columns or SUBMITTED in self.trail_columns

    @staticmethod
    def is_user_text(name: str) -> bool:
        """Return whether meta column ``name`` holds user text (team or run names)."""
        return name in USER_TEXT_COLUMNS


@dataclass(frozen=True)
class TableContext:
    """What identifies a table, passed through to every style function."""

    task: str
    subtask: str
    set: str
    official: bool = False
    frozen_at: str | None = None
    options: Mapping[str, object] = field(default_factory=dict)

    def table(
        self,
        style: str,
        *,
        lead: tuple[str, ...],
        trail: tuple[str, ...],
        columns: tuple[Column, ...],
        rows: tuple[Row, ...],
        footnotes: Iterable[str],
        title_suffix: str = "",
        extra: SimpleTable | None = None,
    ) -> Table:
        """Return the table of this context (the "title" option overrides the default title).

        The default title is the "caption" option (the task's, subtask's and set's titles, as
        the server passes them), else made of the slugs.
        """
        caption = opt_str(self.options, "caption", f"{self.task} {self.subtask} ({self.set})")
        default_title = f"{caption}{title_suffix}"
        return Table(
            task=self.task,
            subtask=self.subtask,
            set=self.set,
            official=self.official,
            frozen_at=self.frozen_at,
            style=style,
            title=opt_str(self.options, "title", default_title),
            lead_columns=lead,
            trail_columns=trail,
            columns=columns,
            rows=rows,
            footnotes=tuple(footnotes),
            extra=extra,
        )


# ------------------------------------------------------------------------------------ helpers


def official_decimal(value: Value) -> Decimal:
    """Return the stored official string as a Decimal, the basis of every tie."""
    try:
        parsed = Decimal(value.official)
    except InvalidOperation as exc:
        raise ValueError(f"official value {value.official!r} is not a number") from exc
    if not parsed.is_finite():
        raise ValueError(f"official value {value.official!r} is not finite")
    return parsed


def rank_value(value: Value, measure: MeasureSpec) -> Decimal:
    """Return the stored official value as ranks compare it: negated when lower is better.

    Every ranking, subindex, bold best and sort order reads this, so a lower-is-better measure
    ranks ascending everywhere while the ranking code counts "strictly higher" values alone.
    """
    stored = official_decimal(value)
    return -stored if measure.lower_is_better else stored


def display_string(value: Value, measure: MeasureSpec) -> str:
    """Return the shown string: the official string times the scale, to the display decimals."""
    return format(float(official_decimal(value)) * measure.scale, f".{measure.display_decimals}f")


def display_value(value: Value, measure: MeasureSpec) -> float:
    """Return the unrounded value in the display scale (``raw * scale``)."""
    return value.raw * measure.scale


def make_cell(
    value: Value, measure: MeasureSpec, *, rank: int | None = None, bold: bool = False
) -> Cell:
    """Return the cell showing ``value`` for ``measure``."""
    return Cell(
        value=display_value(value, measure),
        display=display_string(value, measure),
        rank=rank,
        bold=bold,
        note=value.note,
    )


def json_number(value: float) -> float | None:
    """Return ``value``, or None when it is not finite (JSON has no NaN or infinity)."""
    return value if math.isfinite(value) else None


def team_key(team: str | None) -> tuple[str, str]:
    """Return a sort key ordering team names case-insensitively, then exactly."""
    name = team or ""
    return (name.casefold(), name)


def the_official_measure(measures: tuple[MeasureSpec, ...]) -> MeasureSpec:
    """Return the single measure flagged official, or raise ValueError."""
    official = [measure for measure in measures if measure.official]
    if len(official) != 1:
        raise ValueError(f"expected exactly one official measure, got {len(official)}")
    return official[0]


def columns_of(measures: tuple[MeasureSpec, ...]) -> tuple[Column, ...]:
    """Return the table columns of ``measures``, refusing duplicate keys."""
    keys = [measure.key for measure in measures]
    if len(set(keys)) != len(keys):
        raise ValueError("measure keys must be unique")
    return tuple(Column(m.key, m.label, m.group, m.official) for m in measures)


# ------------------------------------------------------------------------------------ options


def opt_bool(options: Mapping[str, object], key: str, default: bool = False) -> bool:
    """Return boolean option ``key``."""
    value = options.get(key, default)
    if not isinstance(value, bool):
        raise TypeError(f"option {key!r} must be a bool")
    return value


def opt_str(options: Mapping[str, object], key: str, default: str) -> str:
    """Return string option ``key``."""
    value = options.get(key, default)
    if not isinstance(value, str):
        raise TypeError(f"option {key!r} must be a string")
    return value


def opt_strings(options: Mapping[str, object], key: str) -> tuple[str, ...]:
    """Return option ``key`` as a tuple of strings (a list or tuple of str)."""
    value = options.get(key, ())
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise TypeError(f"option {key!r} must be a list of strings")
    if not all(isinstance(item, str) for item in value):
        raise TypeError(f"option {key!r} must be a list of strings")
    return tuple(value)


def opt_mapping(options: Mapping[str, object], key: str) -> Mapping[str, object]:
    """Return mapping option ``key`` (string keys)."""
    value = options.get(key, {})
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise TypeError(f"option {key!r} must be a mapping with string keys")
    return value


# ---------------------------------------------------------------------------------- footnotes

#: The sentence announcing the cells' intervals; an export that does not show them drops it.
INTERVAL_NOTE = "Intervals are 95 % bootstrap intervals."
#: How the note on significance clusters starts; an export without cluster rules drops it.
CLUSTER_RULES = "Rules separate significance clusters"


def shown_notes(table: Table, *, intervals: bool, rules: bool) -> list[str]:
    """Return the footnotes an export prints, saying only what it shows.

    Without intervals the interval sentence goes; without rules between clusters, the note
    explaining them.
    """
    notes = []
    for note in table.footnotes:
        announces = INTERVAL_NOTE in note
        rest = " ".join(note.replace(INTERVAL_NOTE, "").split())
        if rest and (rules or not rest.startswith(CLUSTER_RULES)):
            notes.append(f"{rest} {INTERVAL_NOTE}" if announces and intervals else rest)
        elif announces and intervals:
            notes.append(INTERVAL_NOTE)
    return notes


def marker_footnotes(
    rows: tuple[Row, ...], options: Mapping[str, object], *, note_default: str
) -> list[str]:
    """Return the footnotes explaining the row markers and cell note markers present in ``rows``.

    ``options["row_notes"]`` maps a row label to its ``[marker, note]`` pairs (a run's own
    notes); ``options["note_texts"]`` maps a marker to its text, said once for the rows of the
    marker without a note of their own and for cell notes (``note_default`` for a cell note
    without a text).
    """
    notes: list[str] = []
    row_notes = opt_mapping(options, "row_notes")
    texts = opt_mapping(options, "note_texts")
    markers = list(dict.fromkeys(marker for row in rows for marker in row.markers))
    for marker in markers:
        marked = [row for row in rows if marker in row.markers]
        own = [
            (row.label, str(note))
            for row in marked
            for m, note in _pairs(row_notes.get(row.label))
            if m == marker
        ]
        notes.extend(f"{marker} {label}: {text}" for label, text in own)
        explained = {label for label, _ in own}
        if any(row.label not in explained for row in marked) and marker in texts:
            notes.append(f"{marker} {texts[marker]}")
    seen: list[str] = []
    for row in rows:
        for cell in row.cells.values():
            if cell is not None and cell.note and cell.note not in seen:
                seen.append(cell.note)
    notes.extend(f"{marker} {texts.get(marker, note_default)}" for marker in seen)
    return notes


def _pairs(value: object) -> list[tuple[object, object]]:
    """Return the ``[marker, note]`` pairs of one row's notes (none when absent)."""
    if not isinstance(value, list | tuple):
        return []
    return [
        (pair[0], pair[1]) for pair in value if isinstance(pair, list | tuple) and len(pair) == 2
    ]


def shown_runs(entries: Sequence[Entry], *, include_late: bool) -> list[Entry]:
    """Return the participant runs a table lists: on-time ones, and late ones if asked."""
    return [e for e in entries if e.kind == "run" and (include_late or not e.off_time)]


def baselines_in_order(entries: Sequence[Entry]) -> list[Entry]:
    """Return the baselines among ``entries`` in their listing order."""
    return sorted((e for e in entries if e.kind == "baseline"), key=lambda e: e.baseline_order)


def team_run_label(entry: Entry) -> str:
    """Return the label of an entry's row: a run by team and run, a baseline by its name."""
    if entry.kind == "baseline":
        return entry.label or "baseline"
    return entry.label or f"{entry.team or ''}-{entry.run}"


def entry_cells(entry: Entry, specs: tuple[MeasureSpec, ...]) -> dict[str, Cell | None]:
    """Return an entry's cells, unranked and not bold; None where a value is not shown."""
    return {
        m.key: make_cell(entry.values[m.key], m) if m.key in entry.values else None for m in specs
    }


def entry_row(
    entry: Entry,
    *,
    label: str,
    cells: dict[str, Cell | None],
    meta: dict[str, MetaCell],
    rank: int | None = None,
    marker: str = "",
    rank_marker: RankMarker = "",
    team_rank: int | None = None,
    bold: bool = False,
) -> Row:
    """Return the row of an entry: its run, team, flags and markers, with what the style adds.

    ``marker`` follows the rank where it is shown (``3*``).
    """
    return Row(
        kind=entry.kind,
        team=entry.team,
        run=entry.run,
        slot=entry.slot,
        label=label,
        rank=rank,
        rank_marker=rank_marker,
        rank_display=f"{rank}{marker}" if rank is not None else "",
        team_rank=team_rank,
        late=entry.late,
        bold=bold,
        markers=entry.markers,
        cells=cells,
        meta=meta,
        corrected=entry.corrected,
        run_id=entry.run_id,
        submitted=entry.submitted,
    )


def baseline_row(
    entry: Entry, specs: tuple[MeasureSpec, ...], label: str, meta: dict[str, MetaCell]
) -> Row:
    """Return a baseline row: never ranked, never bold, "—" where a value is not shown."""
    return entry_row(entry, label=label, cells=entry_cells(entry, specs), meta=meta)


def with_submitted(table: Table) -> Table:
    """Return the table with a last column "Runs": each team row's number of uploads.

    Every style gets it (a disclosure, not a style's choice) when the entries carried the
    counts, as the server's always do; a table built without them (none known) is unchanged.
    """
    if table.discloses_submitted or all(row.submitted is None for row in table.rows):
        return table
    rows = tuple(
        replace(
            row,
            meta={
                **row.meta,
                SUBMITTED: MetaCell("" if row.submitted is None else str(row.submitted)),
            },
        )
        for row in table.rows
    )
    return replace(table, trail_columns=(*table.trail_columns, SUBMITTED), rows=rows)


def shake(public_rank: int | None, rank: int | None) -> int | None:
    """Return public rank − rank (positive: the row moved up), or None without both ranks."""
    return None if public_rank is None or rank is None else public_rank - rank


def with_shakeup(table: Table, public_ranks: Mapping[int, int]) -> Table:
    """Return the table with each ranked row's public rank and a "Shake-up" column.

    ``public_ranks`` maps run ids to their rank on the public part; a row ranked on both
    shows "+2" (moved up two places on the private part), "-1" or "0" (ASCII, for every export).
    """
    rows = []
    for row in table.rows:
        public = public_ranks.get(row.run_id) if row.run_id is not None else None
        moved = shake(public, row.rank)
        text = "" if moved is None else f"{moved:+d}" if moved else "0"
        rows.append(replace(row, public_rank=public, meta={**row.meta, SHAKEUP: MetaCell(text)}))
    return replace(table, trail_columns=(*table.trail_columns, SHAKEUP), rows=tuple(rows))


def ranks_of(table: Table) -> dict[int, int]:
    """Return the rank of each ranked run row of a table, by run id."""
    return {r.run_id: r.rank for r in table.rows if r.run_id is not None and r.rank is not None}
