"""Analyses stored before their numbers were in the table's scale, read in that scale.

Reports made since carry ``"scale": "table"``; an older one (stored values: CQA's MAP as a
fraction) has its run values, differences and intervals multiplied by each column's factor
when read, so that pages, charts, exports and a freeze's verification all see one scale.
"""

from __future__ import annotations

from typing import Any

from leaderboard.targets import Target

#: The marker of a report whose numbers are in the table's scale.
TABLE_SCALE = "table"


def scales_of(target: Target) -> dict[str, float]:
    """Return each measure's factor from stored values to the table's (×100 for percents)."""
    return {s.key: s.scale for s in target.family.measure_specs(target.context())}


def in_table_scale(report: dict[str, Any], scales: dict[str, float]) -> dict[str, Any]:
    """Return a report with every number in the table's scale (unchanged if it already is)."""
    if report.get("scale") == TABLE_SCALE or "pairs" not in report:
        return report
    factor = scales.get(report["measure"], 1.0)
    old_values: dict[str, float] = report.get("values", {})
    values = {run_id: v * factor for run_id, v in old_values.items()}
    ids = dict(zip(report["runs"], map(str, report["run_ids"]), strict=True))

    def diff(pair: dict[str, Any]) -> float:
        # The difference of the two shown values, as a new report computes it.
        a, b = ids.get(pair["a"]), ids.get(pair["b"])
        if a in values and b in values:
            return values[a] - values[b]
        return float(pair["diff"]) * factor

    intervals = {
        run_id: {key: [x * scales.get(key, 1.0) for x in pair] for key, pair in by_key.items()}
        for run_id, by_key in report.get("intervals", {}).items()
    }
    return {
        **report,
        "scale": TABLE_SCALE,
        "values": values,
        "pairs": [{**p, "diff": diff(p)} for p in report["pairs"]],
        "intervals": intervals,
    }
