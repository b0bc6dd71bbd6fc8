"""``leaderboard score`` on a split set: the run scored on each part too, as an upload is."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from leaderboard.cli import leaderboard_group

TASK_TOML = """\
slug = "split-trec"
title = "A TREC task with a public/private split"
family = "trec"
table_style = "trec"
official_measure = "automatic/MAP"
measures = ["automatic/MAP", "automatic/MRR"]

[runs]
slots = ["primary"]
ranked_slots = ["primary"]

[format]
max_per_query = 10

[[subtasks]]
slug = "passage"
title = "Passages"
default_set = "test"

[[subtasks.sets]]
slug = "test"
title = "Test"
topics = "topics.txt"
variants = [
  {{ slug = "automatic", label = "Automatic", threshold = 1, qrels = "qrels.txt" }},
]
{public}
"""
TOPICS = ["t1", "t2", "t3", "t4"]
#: The rank of each topic's one relevant document in the run: reciprocal ranks 1, 1, 1/2, 1/4.
RELEVANT_AT = {"t1": 1, "t2": 1, "t3": 2, "t4": 4}
PUBLIC = ["t1", "t3"]
FRACTION, SEED = 0.5, 2016


def public_by_rule(unit: str) -> bool:
    """Return whether a unit is public, written out from the rule as published."""
    digest = hashlib.sha256(f"{SEED}:{unit}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < FRACTION


def write_task(folder: Path, public: str) -> Path:
    """Write the task (one relevant document per topic) and a run; return the run's path."""
    (folder / "task.toml").write_text(TASK_TOML.format(public=public))
    (folder / "topics.txt").write_text("".join(f"{t}\n" for t in TOPICS))
    (folder / "qrels.txt").write_text("".join(f"{t} 0 {t}-rel 1\n" for t in TOPICS))
    (folder / "public.txt").write_text("".join(f"{t}\n" for t in PUBLIC))
    lines = []
    for t in TOPICS:
        for rank in range(1, 5):
            doc = f"{t}-rel" if rank == RELEVANT_AT[t] else f"{t}-other{rank}"
            lines.append(f"{t} Q0 {doc} {rank} {10 - rank}.0 tag\n")
    run = folder / "run.txt"
    run.write_text("".join(lines))
    return run


def score(folder: Path, run: Path, *options: str) -> Result:
    """Run ``leaderboard score`` with the folder's definition."""
    return CliRunner().invoke(
        leaderboard_group,
        ["score", "--definition", str(folder / "task.toml"), "split-trec", "passage", str(run)]
        + list(options),
    )


def test_json_prints_each_part_beside_all_units(tmp_path: Path) -> None:
    run = write_task(tmp_path, 'public = { units = "public.txt" }')
    result = score(tmp_path, run, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    # One relevant document per topic: average precision is the reciprocal rank. TREC shows them unscaled.
    every = {"automatic/MAP": 0.6875, "automatic/MRR": 0.6875}
    public = {"automatic/MAP": 0.75, "automatic/MRR": 0.75}  # t1 and t3: (1 + 1/2) / 2
    private = {"automatic/MAP": 0.625, "automatic/MRR": 0.625}  # t2 and t4: (1 + 1/4) / 2
    assert report["measures"] == pytest.approx(every)
    assert set(report["by_part"]) == {"public", "private"}
    assert report["by_part"]["public"] == pytest.approx(public)
    assert report["by_part"]["private"] == pytest.approx(private)
    assert report["issues"] == []


def test_text_output_lists_each_part(tmp_path: Path) -> None:
    run = write_task(tmp_path, 'public = { units = "public.txt" }')
    result = score(tmp_path, run)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    public, private = lines.index("public part:"), lines.index("private part:")
    assert lines[public + 1].split() == ["MAP", "0.7500"]
    assert lines[private + 1].split() == ["MAP", "0.6250"]


def test_a_drawn_split_scores_the_topics_the_published_rule_picks(tmp_path: Path) -> None:
    run = write_task(tmp_path, f"public = {{ fraction = {FRACTION}, seed = {SEED} }}")
    result = score(tmp_path, run, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    public = [t for t in TOPICS if public_by_rule(t)]
    private = [t for t in TOPICS if not public_by_rule(t)]
    assert public and private  # the seed is chosen so that both parts have topics
    for name, topics in (("public", public), ("private", private)):
        mean = sum(1 / RELEVANT_AT[t] for t in topics) / len(topics)
        assert report["by_part"][name]["automatic/MRR"] == pytest.approx(mean)


def test_no_parts_key_without_a_split(tmp_path: Path) -> None:
    run = write_task(tmp_path, "")
    report = json.loads(score(tmp_path, run, "--json").output)
    assert "by_part" not in report
    assert report["measures"]["automatic/MRR"] == pytest.approx(0.6875)
