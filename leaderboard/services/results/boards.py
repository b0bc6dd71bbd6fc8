"""What a live board shows per team: its ranked slots, its best run, or the Ladder's value.

``slots`` is the classic table. ``best`` shows each team's best run on the official measure
among every run it uploaded to the set (Kaggle's public board). ``ladder`` shows the value the
parameter-free Ladder (Blum & Hardt 2015) released for the team: a run replaces the team's
best only when it is better by more than noise, so a team cannot climb by fitting the test
set with many variants. Decisions are made on the board's units (the part every reader sees)
and stored as runs come in; a run without a stored decision is decided when read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session, selectinload, undefer

from leaderboard.models import LadderDecision, Phase, Run, Score, Subtask, Team
from leaderboard.services.campaign.phases import phases_of
from leaderboard.services.results.parts import default_part
from leaderboard.services.results.unit_values import kept_values
from leaderboard.services.tasks.catalog import load_set
from leaderboard.states import RunKind, RunStatus
from leaderboard.storage import Store
from leaderboard.tables.model import MeasureSpec, official_key
from leaderboard.targets import Target
from leaderboard.tasks.families.base import StoredScore
from leaderboard.tasks.splitting import SetSplit

if TYPE_CHECKING:
    # numpy comes with these: imported where a decision is made, so tables load without it.
    from leaderboard.scoring.ladder import Decision
    from leaderboard.scoring.resampling import UnitRows


@dataclass(frozen=True)
class Board:
    """A set's board: its kind, the Ladder's alpha and the part its values are on."""

    kind: str
    alpha: float
    part: str


def _board_phase(session: Session, subtask: Subtask, eval_set_id: int) -> Phase | None:
    """Return the phase whose board the set shows: its latest one."""
    phases = [p for p in phases_of(session, subtask) if p.eval_set_id == eval_set_id]
    return phases[-1] if phases else None


def laddered(session: Session, run: Run) -> bool:
    """Return whether a team run's set shows a Ladder board (no query: phases are remembered)."""
    phase = _board_phase(session, run.subtask, run.eval_set_id)
    return run.kind == RunKind.RUN and phase is not None and phase.board == "ladder"


def board_of(session: Session, target: Target) -> Board:
    """Return the board of the target's set: its latest phase's, else the classic slots."""
    phase = _board_phase(session, target.subtask, target.eval_set.id)
    part = default_part(session, target)
    if phase is None:
        return Board("slots", 0.05, part)
    return Board(phase.board, phase.ladder_alpha, part)


def official_of(target: Target) -> MeasureSpec:
    """Return the measure a board ranks by."""
    specs = target.family.measure_specs(target.context())
    key = official_key(specs)
    return next(s for s in specs if s.key == key)


def team_runs(session: Session, target: Target, team_id: int | None = None) -> dict[int, list[Run]]:
    """Return every run each team uploaded to the set (replaced and withdrawn too), in order.

    Teams that withdrew from the campaign are left out, as from every live table; with
    ``team_id``, one team's runs only.
    """
    one = () if team_id is None else (Run.team_id == team_id,)
    rows = session.scalars(
        select(Run)
        .join(Team, Team.id == Run.team_id)
        .where(
            Run.eval_set_id == target.eval_set.id,
            Run.kind == RunKind.RUN,
            Team.withdrawn_at.is_(None),
            *one,
        )
        .options(selectinload(Run.scores), selectinload(Run.team))
        .order_by(Run.id)
    )
    out: dict[int, list[Run]] = {}
    for run in rows:
        assert run.team_id is not None
        out.setdefault(run.team_id, []).append(run)
    return out


def _value(run: Run, measure: str, part: str) -> float | None:
    score = run.current_score(measure, part)
    return None if score is None else score.value


def best_runs(session: Session, target: Target, part: str) -> list[Run]:
    """Return each team's best run on the official measure (withdrawn runs left out).

    Ties keep the earlier run: a later copy of a score does not displace it.
    """
    spec = official_of(target)
    sign = -1.0 if spec.lower_is_better else 1.0
    chosen: list[Run] = []
    for runs in team_runs(session, target).values():
        best: tuple[float, Run] | None = None
        for run in runs:
            value = _value(run, spec.key, part)
            if run.status == RunStatus.WITHDRAWN or value is None:
                continue
            if best is None or sign * value > best[0]:
                best = (sign * value, run)
        if best is not None:
            chosen.append(best[1])
    return sorted(chosen, key=lambda r: r.id)


@dataclass(frozen=True)
class TeamLadder:
    """A team's Ladder: the decision on each of its runs and the run whose value is released."""

    decisions: dict[int, Decision]
    best: Run | None
    released: float | None


def _stored(
    session: Session, target: Target, spec: MeasureSpec, board: Board
) -> dict[int, Decision]:
    from leaderboard.scoring.ladder import Decision

    rows = session.scalars(
        select(LadderDecision).where(
            LadderDecision.eval_set_id == target.eval_set.id,
            LadderDecision.measure == spec.key,
            LadderDecision.part == board.part,
            LadderDecision.alpha == board.alpha,
        )
    )
    return {
        d.run_id: Decision(d.replaced, d.released, d.value, d.threshold, d.p_value, d.reason)
        for d in rows
    }


class _Rows:
    """Each run's resampling rows of the official measure on the board's part, read once."""

    def __init__(
        self, session: Session, store: Store, target: Target, spec: MeasureSpec, part: str
    ):
        self.session, self.store, self.target = session, store, target
        self.spec, self.part = spec, part
        self._gold: Any = None
        self._split: SetSplit | None = None
        self._rows: dict[int, tuple[list[str], UnitRows]] = {}

    def of(self, run: Run) -> tuple[list[str], UnitRows]:
        """Return a run's unit ids and rows, higher-is-better; NotResampled without them."""
        from leaderboard.scoring.resampling import NotResampled

        if run.id not in self._rows:
            if self._gold is None:
                # Read only when a decision is made: a board of stored decisions needs no gold.
                loaded = load_set(self.session, self.store, self.target)
                self._gold, self._split = loaded.gold_of(self.part), loaded.split
            scores = {
                score.part: score
                for score in self.session.scalars(
                    select(Score)
                    .where(
                        Score.run_id == run.id,
                        Score.measure == self.spec.key,
                        Score.part.in_({self.part, "all"}),
                        Score.current.is_(True),
                    )
                    .options(undefer(Score.per_query), undefer(Score.item_stats))
                )
            }
            score = scores.get(self.part)
            if score is None:
                raise NotResampled(f"run {run.id} has no {self.spec.key} score")
            values = self.session.scalar(select(Run.item_values).where(Run.id == run.id))
            per_query, item_stats = kept_values(score, scores.get("all"), self._split)
            stored = StoredScore(per_query, item_stats, values)
            ids, rows = self.target.family.unit_rows(self.spec.key, self._gold, stored)
            if self.spec.lower_is_better:
                rows = _negated(rows)
            self._rows[run.id] = (ids, rows)
        return self._rows[run.id]


def _negated(rows: UnitRows) -> UnitRows:
    """Return rows whose measure is the negated one: the Ladder is written for higher-is-better."""
    from leaderboard.scoring.resampling import RecomputedRows, SummedRows

    if isinstance(rows, SummedRows):
        finish = rows.finish
        recompute = rows.recompute
        return SummedRows(
            rows.rows,
            lambda sums: -finish(sums),
            mean_of=None if rows.mean_of is None else -rows.mean_of,
            recompute=None if recompute is None else (lambda r: -recompute(r)),
        )
    measure = rows.measure
    return RecomputedRows(rows.rows, lambda r: -measure(r))


def _decide(
    rows: _Rows, run: Run, best: Run | None, released: float | None, alpha: float
) -> Decision:
    """Return the Ladder's decision on ``run`` given the team's best run and released value."""
    from leaderboard.scoring.ladder import Decision, mean_step, rows_step
    from leaderboard.scoring.resampling import NotResampled, SummedRows

    spec = rows.spec
    sign = -1.0 if spec.lower_is_better else 1.0
    ids, new = rows.of(run)
    best_rows = None
    if best is not None:
        best_ids, best_rows = rows.of(best)
        if best_ids != ids:
            raise NotResampled(f"run {run.id} was scored on other units than run {best.id}")
    shown = None if released is None else sign * released
    if isinstance(new, SummedRows) and new.mean_of is not None:
        mean_best = None
        if isinstance(best_rows, SummedRows) and best_rows.mean_of is not None:
            mean_best = best_rows.mean_of
        decision = mean_step(shown, mean_best, new.mean_of)
    else:
        decision = rows_step(
            shown,
            best_rows,
            new,
            seed=run.id,
            decimals=spec.display_decimals,
            scale=spec.scale,
            alpha=alpha,
        )
    # Back to the measure's own direction: what the board shows and ranks.
    return Decision(
        decision.replaced,
        sign * decision.released,
        sign * decision.value,
        None if decision.threshold is None else sign * decision.threshold,
        decision.p_value,
        decision.reason,
    )


def ladders(
    session: Session,
    store: Store,
    target: Target,
    board: Board,
    *,
    keep: bool = False,
    team_id: int | None = None,
) -> dict[int, TeamLadder]:
    """Replay every team's runs (or one team's) through the Ladder, reusing stored decisions.

    With ``keep`` the decisions made here are added to the session (the caller's unit of work
    stores them); a reader without a transaction of its own leaves ``keep`` off.
    """
    from leaderboard.scoring.resampling import NotResampled

    spec = official_of(target)
    stored = _stored(session, target, spec, board)
    rows = _Rows(session, store, target, spec, board.part)
    out: dict[int, TeamLadder] = {}
    for team, runs in team_runs(session, target, team_id).items():
        decisions: dict[int, Decision] = {}
        best: Run | None = None
        released: float | None = None
        for run in runs:
            if _value(run, spec.key, board.part) is None:
                continue  # an undefined value is never released
            decision = stored.get(run.id)
            if decision is None:
                try:
                    decision = _decide(rows, run, best, released, board.alpha)
                except (NotResampled, ValueError):
                    continue
                if keep:
                    session.add(_row(target, spec, board, run, decision))
            decisions[run.id] = decision
            if decision.replaced:
                best, released = run, decision.released
        out[team] = TeamLadder(decisions, best, released)
    return out


def _row(
    target: Target, spec: MeasureSpec, board: Board, run: Run, decision: Decision
) -> LadderDecision:
    return LadderDecision(
        run_id=run.id,
        eval_set_id=target.eval_set.id,
        measure=spec.key,
        part=board.part,
        alpha=board.alpha,
        replaced=decision.replaced,
        released=decision.released,
        value=decision.value,
        threshold=decision.threshold,
        p_value=decision.p_value,
        reason=decision.reason,
    )


def decide_upload(session: Session, store: Store, target: Target, board: Board, run: Run) -> None:
    """Store the Ladder's decision on a team's new run, in the upload's transaction."""
    if board.kind == "ladder" and run.team_id is not None:
        ladders(session, store, target, board, keep=True, team_id=run.team_id)


def forget_decisions(session: Session, eval_set_id: int) -> None:
    """Delete a set's Ladder decisions (its scores changed: they are made again when read)."""
    session.execute(delete(LadderDecision).where(LadderDecision.eval_set_id == eval_set_id))


@dataclass(frozen=True)
class LadderStatus:
    """Where one team run stands on its set's Ladder board, as its team is told."""

    measure: str
    #: None when the run has no decision (its value is undefined on the board's units).
    replaced: bool | None
    #: The team's released value after all its runs so far (stored scale), or None.
    released: float | None
    part: str
    #: The released value as the table shows it ("" without one).
    shown: str = ""

    @property
    def text(self) -> str:
        """Return the verdict as the team's pages say it."""
        if self.replaced is None:
            return "no value on the board's units: not on the Ladder"
        if self.replaced:
            return f"released: {self.measure} {self.shown} on the board"
        return f"not better than the released value ({self.measure} {self.shown})"

    def as_dict(self) -> dict[str, Any]:
        """Return the status as the API states it."""
        return {
            "measure": self.measure,
            "replaced": self.replaced,
            "released": self.released,
            "part": self.part,
            "text": self.text,
        }


@dataclass(frozen=True)
class TeamStatuses:
    """A team's runs on its set's Ladder board: each decided run's status, and the team's value."""

    decided: dict[int, LadderStatus]
    #: What a run without a decision is told (its value is undefined on the board's units).
    undecided: LadderStatus

    def of(self, run: Run) -> LadderStatus:
        """Return where one of the team's runs stands."""
        return self.decided.get(run.id, self.undecided)


def team_statuses(
    session: Session, store: Store, target: Target, team_id: int
) -> TeamStatuses | None:
    """Return where a team's runs stand on its set's Ladder board; None without a Ladder board.

    The team's Ladder is replayed once for all its runs.
    """
    board = board_of(session, target)
    if board.kind != "ladder":
        return None
    state = ladders(session, store, target, board, team_id=team_id).get(team_id)
    spec = official_of(target)
    released = None if state is None else state.released
    shown = "" if released is None else format(released * spec.scale, f".{spec.display_decimals}f")
    decisions = {} if state is None else state.decisions
    return TeamStatuses(
        {
            run_id: LadderStatus(spec.key, decision.replaced, released, board.part, shown)
            for run_id, decision in decisions.items()
        },
        LadderStatus(spec.key, None, released, board.part, shown),
    )
