"""Generation scorer: options, registry entries, statistics' layout and refusals."""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard.scoring.generation import (
    GENERATION_REGISTRY,
    MEASURE_KEYS,
    GenerationOptions,
    corpus_score_from_stats,
    parse_options,
    score_run,
)
from leaderboard.scoring.registry import UnknownMeasure

HYPS = ["the cat sat on the mat", "hello world !", ""]
REFS = [
    ["the cat sat on a mat", "Hello world!", "nothing"],
    ["a cat sat on the mat", "hi world", "x"],
]


def test_options_default_validate_and_name_the_bad_key() -> None:
    assert parse_options(None) == GenerationOptions("13a", False)
    assert parse_options({"tokenize": "intl", "lowercase": True}) == GenerationOptions("intl", True)
    with pytest.raises(
        ValueError, match="unknown sacrebleu option .smooth.; known: tokenize, lowercase, force"
    ):
        parse_options({"smooth": "exp"})
    with pytest.raises(
        ValueError, match="tokenize = 'moses' is not one of sacrebleu's tokenizers: .*13a"
    ):
        parse_options({"tokenize": "moses"})
    with pytest.raises(
        ValueError, match="'ja-mecab' needs the MeCab and ipadic packages.*: 13a, intl, zh"
    ):
        parse_options({"tokenize": "ja-mecab"})
    for name in ("13a", "intl", "zh", "char", "none"):
        assert parse_options({"tokenize": name}).tokenize == name
        assert score_run(["東京 a"], [["東京 b"]], ["BLEU"], parse_options({"tokenize": name}))
    with pytest.raises(ValueError, match="lowercase = 'yes' is not true/false"):
        parse_options({"lowercase": "yes"})


def test_registry_entries() -> None:
    assert GENERATION_REGISTRY.keys == MEASURE_KEYS == ("BLEU", "chrF", "chrF++", "TER")
    for key in MEASURE_KEYS:
        measure = GENERATION_REGISTRY.get(key)
        assert (measure.scale, measure.decimals, measure.official_decimals) == ("score", 2, 4)
        assert measure.lower_is_better is (key == "TER")
        assert measure.official(12.345678) == "12.3457"
    with pytest.raises(UnknownMeasure, match="known: BLEU, chrF, chrF\\+\\+, TER"):
        GENERATION_REGISTRY.get("METEOR")


def test_statistics_layout_one_row_per_segment() -> None:
    scores = score_run(HYPS, REFS)
    assert list(scores) == list(MEASURE_KEYS)
    assert scores["BLEU"].stats.shape == (3, 10) and scores["BLEU"].stats.dtype == np.int64
    # hyp_len 6, closest ref_len 6, 1-gram matches 5: "the" occurs twice in the hypothesis but
    # at most once in any reference, so it is clipped to 1 (cat, sat, on, mat match).
    assert scores["BLEU"].stats[0, :3].tolist() == [6, 6, 5]
    assert scores["BLEU"].stats[2].tolist() == [0, 1, 0, 0, 0, 0, 0, 0, 0, 0]
    assert scores["chrF"].stats.shape == (3, 18)
    assert scores["chrF++"].stats.shape == (3, 24)
    assert scores["TER"].stats.shape == (3, 2) and scores["TER"].stats.dtype == np.float64
    # The empty hypothesis against one-word references: 1 edit, mean reference length 1.
    assert scores["TER"].stats[2].tolist() == [1.0, 1.0]
    assert scores["TER"].signature.startswith("nrefs:2|case:mixed|tok:tercom")


def test_refusals() -> None:
    with pytest.raises(ValueError, match="no segments"):
        score_run([], [[]])
    with pytest.raises(ValueError, match="one segment per hypothesis"):
        score_run(["a"], [["a", "b"]])
    with pytest.raises(UnknownMeasure):
        score_run(["a"], [["a"]], ["BLEURT"])
    with pytest.raises(ValueError, match="no segments"):
        corpus_score_from_stats("BLEU", np.zeros((0, 10), dtype=np.int64))


def test_chunked_statistics_equal_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    import leaderboard.scoring.generation as generation

    hyps = [f"segment {i} of the run" for i in range(7)]
    refs = [[f"segment {i} in the reference" for i in range(7)]]
    whole = score_run(hyps, refs)
    monkeypatch.setattr(generation, "CHUNK_SEGMENTS", 2)
    chunked = score_run(hyps, refs)
    for key in MEASURE_KEYS:
        assert chunked[key].score == whole[key].score
        assert chunked[key].signature == whole[key].signature
        assert np.array_equal(chunked[key].stats, whole[key].stats)
