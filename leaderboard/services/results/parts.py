"""Which part of a split set's units a reader sees: public until the private part is released."""

from __future__ import annotations

from sqlalchemy.orm import Session

from leaderboard.formats.issues import quoted
from leaderboard.models import EvalSet
from leaderboard.services.campaign.phases import phases_of
from leaderboard.services.common.errors import Forbidden, InvalidInput
from leaderboard.services.tasks.catalog import definition_of
from leaderboard.targets import Target
from leaderboard.tasks.definition import SplitDef

#: Every part a score may be stored on, in the order pages list them.
PARTS = ("public", "private", "all")


def split_of(target: Target) -> SplitDef | None:
    """Return the public/private split of the target's set, or None."""
    setdef = target.subtask_def.set(target.eval_set.slug)
    return None if setdef is None else setdef.split


def _set_split(eval_set: EvalSet) -> SplitDef | None:
    subtask = definition_of(eval_set.subtask.task).subtask(eval_set.subtask.slug)
    setdef = None if subtask is None else subtask.set(eval_set.slug)
    return None if setdef is None else setdef.split


def _released(session: Session, eval_set: EvalSet) -> bool:
    return any(
        p.private_visible and p.eval_set_id == eval_set.id
        for p in phases_of(session, eval_set.subtask)
    )


def private_released(session: Session, target: Target) -> bool:
    """Return whether a phase of the target's set shows its private part (released)."""
    return _released(session, target.eval_set)


def _shown(split: SplitDef | None, released: bool) -> str:
    if split is None:
        return "all"
    return split.official_part if released else "public"


def default_part(session: Session, target: Target) -> str:
    """Return the part every reader sees unless it asks for another.

    No split: "all". Until the private part is released: "public", for organizers too, so that
    they read what participants read. Once released: the part the official ranking ranks by.
    """
    split = split_of(target)
    return _shown(split, split is not None and private_released(session, target))


def set_part(session: Session, eval_set: EvalSet) -> str:
    """Return the part every reader sees of a set (``default_part`` from the set's row)."""
    split = _set_split(eval_set)
    return _shown(split, split is not None and _released(session, eval_set))


def readable_parts(session: Session, target: Target, *, organizer: bool) -> tuple[str, ...]:
    """Return the parts a reader may ask for: organizers every one, others public until release."""
    if split_of(target) is None:
        return ("all",)
    if organizer or private_released(session, target):
        return PARTS
    return ("public",)


def chosen_part(session: Session, target: Target, requested: str | None, *, organizer: bool) -> str:
    """Return the part a request asks for, or the default; refuse one the reader may not see.

    A name that is not a part, or a part of a set without a split, is a bad request (400); a
    part of a split set the reader may not see yet is forbidden (403).
    """
    if not requested:
        return default_part(session, target)
    if requested not in PARTS:
        raise InvalidInput(
            f"Unknown part {quoted(requested[:40])}: give one of {', '.join(PARTS)}."
        )
    if requested not in readable_parts(session, target, organizer=organizer):
        if split_of(target) is None:
            raise InvalidInput(
                f"Set {target.eval_set.slug} has no public/private split: its only part is all."
            )
        raise Forbidden(f"The {requested} part of this set is not released.")
    return requested
