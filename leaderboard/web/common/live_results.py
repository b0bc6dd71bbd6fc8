"""What the live table says of each run, and the progress chart's data, cached by revision.

The public results, the analysis charts and the participant's run pages all read them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from leaderboard.services.results.anonymity import Audience, audience_key
from leaderboard.services.results.standing import live_ranks, progress
from leaderboard.services.results.tables import live_table
from leaderboard.targets import Target
from leaderboard.web.common import pagecache
from leaderboard.web.common.context import db, store


def _by_run(key: tuple[object, ...], make: Callable[[], Mapping[int, str]]) -> dict[int, str]:
    """Return a text per run id, kept in the tables cache (as JSON) under ``key``."""
    text = pagecache.tables().get_or_make(
        key, lambda: json.dumps({str(k): v for k, v in make().items()})
    )
    return {int(k): v for k, v in json.loads(text).items()}


def live_labels(target: Target, audience: Audience) -> dict[int, str]:
    """Return each run's label in this audience's live table, cached by revision like tables."""
    names = audience_key(db(), target, audience)

    def make() -> dict[int, str]:
        table = live_table(db(), store(), target, audience, analysed=False)
        return {r.run_id: r.label for r in table.rows if r.run_id is not None}

    return _by_run((target.eval_set.id, target.eval_set.revision, "labels", names), make)


def live_rank_texts(target: Target) -> dict[int, str]:
    """Return each active run's live rank ("2", "as if 3"), cached by the set's revision."""
    return _by_run(
        (target.eval_set.id, target.eval_set.revision, "ranks"),
        lambda: live_ranks(db(), store(), target),
    )


def progress_of(target: Target, audience: Audience) -> dict[str, Any]:
    """Return what the progress chart of a set draws for this audience, cached by revision."""
    names = audience_key(db(), target, audience)
    key = (target.eval_set.id, target.eval_set.revision, "progress", names)

    def make() -> str:
        return json.dumps(progress(db(), store(), target, audience))

    data: dict[str, Any] = json.loads(pagecache.tables().get_or_make(key, make))
    return data
