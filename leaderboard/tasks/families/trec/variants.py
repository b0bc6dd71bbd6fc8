"""Qrels variants of a TREC set and the measures a subtask asks of each, by canonical key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from leaderboard.formats.issues import quoted
from leaderboard.scoring.registry import UnknownMeasure
from leaderboard.scoring.trec_measures import DCG_FORMS, TrecMeasureKey, parse_trec_measure
from leaderboard.tasks.definition import DefinitionError, SetDef, SubtaskDef, TaskDefinition

#: Measure options a definition sets at the top level, per subtask or per set (brackets
#: override them for one measure): nDCG/DCG's gain map and form, trec_eval's -J.
MEASURE_OPTIONS = ("gains", "dcg", "judged_only")
#: The set keys of the trec family besides its files and groups.
SET_OPTIONS = ("threshold", "missing_topics", "variants", *MEASURE_OPTIONS)
MISSING_TOPICS = ("zero", "skip")
#: The longest measure key the score tables store (bracketed keys can grow long).
MAX_KEY_LENGTH = 64


@dataclass(frozen=True)
class MeasureOptions:
    """The measure options in force for a set: the set's, else the subtask's, else the top level's."""

    gains: dict[int, float] | None = None
    dcg: str | None = None
    judged_only: bool | None = None

    def apply(self, measure: TrecMeasureKey) -> TrecMeasureKey:
        """Return the measure with these options where it takes them and its brackets did not."""
        return measure.with_defaults(self.gains, self.dcg, self.judged_only)


def check_measure_options(options: dict[str, Any], where: str) -> MeasureOptions:
    """Return the measure options of one level; raise DefinitionError naming a wrong key."""
    gains: dict[int, float] | None = None
    if "gains" in options:
        table = options["gains"]
        if not isinstance(table, dict) or not table:
            raise DefinitionError(
                f"{where}gains", 'must be a table of grades and gains, e.g. { "1" = 1, "2" = 3 }'
            )
        gains = {}
        for grade, gain in table.items():
            try:
                level = int(grade)
            except ValueError:
                level = -1
            if level < 0 or str(level) != str(grade).strip():
                raise DefinitionError(
                    f"{where}gains", f"{quoted(grade)} is not a grade (an integer 0 or more)"
                )
            if isinstance(gain, bool) or not isinstance(gain, int | float) or not gain >= 0:
                raise DefinitionError(
                    f"{where}gains.{grade}", f"must be a gain of 0 or more, not {quoted(gain)}"
                )
            gains[level] = float(gain)
    dcg = options.get("dcg")
    if dcg is not None and dcg not in DCG_FORMS:
        raise DefinitionError(
            f"{where}dcg", f"must be one of {', '.join(DCG_FORMS)}, not {quoted(dcg)}"
        )
    judged_only = options.get("judged_only")
    if judged_only is not None and not isinstance(judged_only, bool):
        raise DefinitionError(
            f"{where}judged_only", f"must be true or false, not {quoted(judged_only)}"
        )
    return MeasureOptions(gains, dcg, judged_only)


def measure_options(
    definition: TaskDefinition, subtask: SubtaskDef, setdef: SetDef
) -> MeasureOptions:
    """Return the measure options in force for a set (each key: set, else subtask, else top)."""
    merged = {
        key: setdef.options[key] if key in setdef.options else subtask.option(definition, key)
        for key in MEASURE_OPTIONS
    }
    return check_measure_options({k: v for k, v in merged.items() if v is not None}, "")


@dataclass(frozen=True)
class Variant:
    """One qrels file of a set: its slug ("" for a set's single qrels), label and threshold."""

    slug: str
    label: str
    threshold: int

    @property
    def role(self) -> str:
        """Return the gold role of the variant's qrels file."""
        return f"qrels:{self.slug}" if self.slug else "qrels"

    def key(self, measure: str) -> str:
        """Return the table key of a measure under this variant (prefixed unless single)."""
        return f"{self.slug}/{measure}" if self.slug else measure


def set_variants(setdef: SetDef) -> list[Variant]:
    """Return the set's variants: its ``variants`` list, or its one ``qrels`` file."""
    listed = setdef.options.get("variants")
    if listed:
        return [
            Variant(str(v["slug"]), str(v.get("label", str(v["slug"]).title())), v["threshold"])
            for v in listed
        ]
    return [Variant("", "", setdef.options.get("threshold", 1))]


def missing_topics(setdef: SetDef) -> str:
    """Return how topics of the qrels without results count: "zero" (trec_eval -c) or "skip"."""
    return str(setdef.options.get("missing_topics", "zero"))


def split_key(key: str) -> tuple[str, str]:
    """Return (variant slug, measure name) of a definition's measure ("" for no prefix)."""
    variant, sep, measure = key.rpartition("/")
    return (variant, measure) if sep else ("", key)


def canonical(key: str) -> str:
    """Return a definition's measure key with its measure part in canonical form.

    ``automatic/ndcg_cut_10`` becomes ``automatic/nDCG@10``; unknown names raise UnknownMeasure.
    """
    variant, measure = split_key(key)
    parsed = parse_trec_measure(measure)
    return f"{variant}/{parsed.key}" if variant else parsed.key


def variant_measures(
    subtask: SubtaskDef, variant: Variant, options: MeasureOptions | None = None
) -> list[TrecMeasureKey]:
    """Return the measures the subtask lists for a variant, in definition order, with options."""
    out: list[TrecMeasureKey] = []
    for key in subtask.measures:
        slug, measure = split_key(key)
        if slug == variant.slug:
            parsed = parse_trec_measure(measure)
            if options is not None:
                parsed = options.apply(parsed)
            if parsed not in out:
                out.append(parsed)
    return out


def check_set(setdef: SetDef, where: str, has_qrels: bool) -> list[Variant]:
    """Raise DefinitionError naming the key if a set's trec options are wrong; return variants."""
    unknown = sorted(set(setdef.options) - set(SET_OPTIONS))
    if unknown:
        raise DefinitionError(
            f"{where}.{unknown[0]}",
            f"unknown key for a trec set; known: topics, qrels, {', '.join(SET_OPTIONS)}",
        )
    check_measure_options(setdef.options, f"{where}.")
    if missing_topics(setdef) not in MISSING_TOPICS:
        raise DefinitionError(
            f"{where}.missing_topics",
            f"must be one of {', '.join(MISSING_TOPICS)}, not {quoted(setdef.options['missing_topics'])}",
        )
    listed = setdef.options.get("variants")
    if listed:
        if has_qrels or "threshold" in setdef.options:
            raise DefinitionError(
                f"{where}.variants",
                "a set names either one qrels file (with its threshold) or variants, not both",
            )
        for k, v in enumerate(listed):
            _check_threshold(v.get("threshold"), f"{where}.variants[{k}].threshold")
            extra = sorted(set(v) - {"slug", "label", "threshold"})
            if extra:
                raise DefinitionError(
                    f"{where}.variants[{k}].{extra[0]}",
                    "unknown key; a variant has slug, label, threshold and qrels",
                )
        if not any(f"qrels:{v['slug']}" in setdef.files for v in listed):
            raise DefinitionError(f"{where}.variants", "at least one variant needs a qrels file")
    else:
        if not has_qrels:
            raise DefinitionError(
                f"{where}.qrels", "is required: the qrels file (or a list of variants)"
            )
        _check_threshold(setdef.options.get("threshold", 1), f"{where}.threshold")
    return set_variants(setdef)


def _check_threshold(value: Any, key: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise DefinitionError(key, f"must be an integer grade, not {quoted(value)}")


def check_measures(subtask: SubtaskDef, variants: list[Variant], where: str) -> None:
    """Raise DefinitionError unless every measure names a known measure of a known variant."""
    slugs = {v.slug for v in variants}
    for key in subtask.measures:
        slug, measure = split_key(key)
        if slug not in slugs:
            if slugs == {""}:
                problem = "this set has one qrels file: name measures without a variant prefix"
            else:
                names = ", ".join(sorted(s for s in slugs if s))
                problem = f"prefix the measure with one of the variants ({names}), e.g. {sorted(slugs)[-1]}/MAP"
            raise DefinitionError(f"{where}.measures", f"{quoted(key)}: {problem}")
        try:
            parse_trec_measure(measure)
        except UnknownMeasure as exc:
            raise DefinitionError(f"{where}.measures", str(exc)) from None
    canon = [canonical(k) for k in subtask.measures]
    for key in canon:
        if len(key) > MAX_KEY_LENGTH:
            raise DefinitionError(
                f"{where}.measures",
                f"{quoted(key[:80])} is {len(key)} characters long; a measure key (with its "
                f"variant prefix) has at most {MAX_KEY_LENGTH}",
            )
    if len(set(canon)) != len(canon):
        raise DefinitionError(f"{where}.measures", "lists a measure twice (under two names)")
