"""A million-line TREC run through the API of a real gunicorn worker stays within a bounded memory."""

from __future__ import annotations

from pathlib import Path

from bench.trec_api_memory import measure


def test_a_million_line_run_is_scored_by_a_worker_in_bounded_memory(tmp_path: Path) -> None:
    result = measure(queries=2000, per_query=500, workdir=tmp_path)
    assert result.lines == 1_000_000
    assert result.status == 201, result.body
    # Random paragraph ids match nothing in the qrels: every measure is 0, for all 2,125 topics.
    assert result.body["official"] == {
        "automatic/MAP": "0.0000",
        "automatic/R-Prec": "0.0000",
        "automatic/MRR": "0.0000",
    }
    assert any(
        str(w).startswith("125 of 2,125 topics have no results") for w in result.body["warnings"]
    )  # type: ignore[union-attr]
    # "A few hundred MB" at most: the run is read as a stream into compact arrays.
    assert result.worker_peak_mb < 300, f"worker peak {result.worker_peak_mb:.0f} MB"
