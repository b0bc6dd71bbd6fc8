"""Every measure left without options has its reference tool's own defaults.

Each reference is the tool called with NO options (the sacrebleu command line and its
default-constructed metrics, scikit-learn's averages with their default ``zero_division``,
scipy's correlations, pytrec_eval's default evaluator), on generated data where the default
matters: mixed case and punctuation for sacrebleu, a label never predicted for scikit-learn,
ties for scipy, grades 0, 1 and 2 for trec_eval.
"""

from __future__ import annotations

import random
import subprocess
import sys
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from sacrebleu.metrics import BLEU, CHRF, TER
from scipy import stats
from sklearn.metrics import (
    accuracy_score,
    cohen_kappa_score,
    f1_score,
    matthews_corrcoef,
    precision_score,
    recall_score,
)

from leaderboard.scoring import generation
from leaderboard.scoring.generation import parse_options, score_run
from leaderboard.scoring.labels import classification_measures
from leaderboard.scoring.regression import regression_measures
from leaderboard.scoring.trec_measures import evaluate_trec, parse_trec_measure
from leaderboard.tasks.definition import DefinitionError, SetDef
from leaderboard.tasks.families.generation.family import options_of
from leaderboard.tasks.families.trec.variants import set_variants
from leaderboard.tasks.loading import load_definition_file
from tests.helpers.trec_collections import Collection, as_arrays

pytestmark = pytest.mark.fidelity
SACREBLEU = Path(sys.executable).parent / "sacrebleu"
EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "generation" / "task.toml"
WORDS = ["The", "cat", "sat", "on", "the", "Mat", "NASA", "Paris", "is", "big", "a", "dog"]
PUNCT = ["", ",", ".", "!", " -", "'s"]


def corpus(seed: int) -> tuple[list[str], list[list[str]]]:
    """Return hypotheses and two references that differ from them in case and punctuation."""
    rng = random.Random(seed)
    refs: list[list[str]] = [[], []]
    hyps: list[str] = []
    for _ in range(30):
        words = [rng.choice(WORDS) + rng.choice(PUNCT) for _ in range(rng.randint(1, 12))]
        refs[0].append(" ".join(words))
        refs[1].append(" ".join(w.upper() if rng.random() < 0.2 else w for w in words))
        changed = [w.lower() if rng.random() < 0.5 else w for w in words]
        if rng.random() < 0.5:
            changed = changed[1:] + [rng.choice(WORDS)]
        hyps.append(" ".join(changed))
    return hyps, refs


def sacrebleu_cli(tmp: Path, hyps: list[str], refs: list[list[str]], *args: str) -> float:
    """Return the score the sacrebleu command prints with only the metric chosen."""
    paths = []
    for k, ref in enumerate(refs):
        paths.append(tmp / f"ref{k}.txt")
        paths[-1].write_text("\n".join(ref) + "\n", encoding="utf-8")
    hyp = tmp / "hyp.txt"
    hyp.write_text("\n".join(hyps) + "\n", encoding="utf-8")
    argv = [str(SACREBLEU), *map(str, paths), "-i", str(hyp), *args, "-b", "-w", "4"]
    return float(subprocess.run(argv, check=True, capture_output=True, text=True).stdout)


#: Each generation measure, its sacrebleu command arguments and its default-constructed metric
#: (chrF++ is chrF with word order 2: the one argument its name sets).
GENERATION = {
    "BLEU": (["-m", "bleu"], BLEU),
    "chrF": (["-m", "chrf"], CHRF),
    "chrF++": (["-m", "chrf", "--chrf-word-order", "2"], lambda: CHRF(word_order=2)),
    "TER": (["-m", "ter"], TER),
}


@pytest.mark.parametrize("key", list(GENERATION))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_generation_defaults_are_sacrebleus(tmp_path: Path, key: str, seed: int) -> None:
    hyps, refs = corpus(seed)
    argv, make = GENERATION[key]
    scorer = make()
    reference = scorer.corpus_score(hyps, refs)
    for table in (None, {}):
        ours = score_run(hyps, refs, [key], parse_options(table))[key]
        assert ours.score == pytest.approx(reference.score, abs=1e-9)
        assert ours.signature == scorer.get_signature().format()
    assert format(ours.score, ".4f") == format(sacrebleu_cli(tmp_path, hyps, refs, *argv), ".4f")


def test_ter_ignores_case_unless_told(tmp_path: Path) -> None:
    refs = [["The Cat sat on the Mat in Paris ."], ["A cat was on the mat in Paris ."]]
    hyps = ["the cat sat on the mat in paris ."]
    # The example: a lowercased output scores 0.00 with sacrebleu -m ter.
    assert sacrebleu_cli(tmp_path, hyps, refs, "-m", "ter") == 0.0
    for table in (None, {"lowercase": False}, {"TER": {"normalized": False}}):
        ours = score_run(hyps, refs, ["TER"], parse_options(table))["TER"]
        assert ours.score == 0.0 and "|case:lc|" in ours.signature
    told = score_run(hyps, refs, ["TER[case_sensitive=true]"], parse_options(None))
    expected = sacrebleu_cli(tmp_path, hyps, refs, "-m", "ter", "--ter-case-sensitive")
    assert expected > 0 and format(told["TER[case_sensitive=true]"].score, ".4f") == format(
        expected, ".4f"
    )
    assert "|case:mixed|" in told["TER[case_sensitive=true]"].signature


#: Segments in the target languages whose BLEU tokenizer sacrebleu picks by language.
TEXTS = {
    "zh": (
        ["东京是日本的首都。", "我们明天去北京，好吗？"],
        ["东京是日本首都。", "明天我们去北京好吗？"],
    ),
    "ja": (
        ["東京は日本の首都です。", "明日は雨が降るでしょう。"],
        ["東京は日本の首都だ。", "明日は雨でしょう。"],
    ),
    "ko": (
        ["서울은 한국의 수도입니다.", "내일 비가 올 것입니다."],
        ["서울은 한국 수도입니다.", "내일은 비가 옵니다."],
    ),
    "de": (
        ["Das ist ein Haus, oder?", "Wir gehen morgen."],
        ["Das ist ein Haus.", "Morgen gehen wir."],
    ),
}


def translation_set(language: str, table: dict[str, object] | None = None) -> tuple:
    """Return the generation example's definition, subtask and set, into ``language``."""
    loaded = load_definition_file(EXAMPLE)
    # The example states tokenize = "13a": left out here, the set's language picks it.
    definition = replace(
        loaded, options={k: v for k, v in loaded.options.items() if k != "sacrebleu"}
    )
    options: dict[str, object] = {"target_language": language}
    if table is not None:
        options["sacrebleu"] = table
    subtask = definition.subtasks[0]
    evaluation_set = replace(subtask.sets[0], options=options)
    return definition, replace(subtask, sets=(evaluation_set,)), evaluation_set


@pytest.mark.parametrize("language", list(TEXTS))
def test_bleus_tokenizer_is_sacrebleus_for_the_target_language(
    tmp_path: Path, language: str
) -> None:
    hyps, refs = TEXTS[language]
    options = options_of(*translation_set(language))
    ours = score_run(hyps, [refs], ["BLEU"], options)["BLEU"]
    scorer = BLEU(trg_lang=language)
    assert ours.score == pytest.approx(scorer.corpus_score(hyps, [refs]).score, abs=1e-9)
    assert ours.signature == scorer.get_signature().format()
    cli = sacrebleu_cli(tmp_path, hyps, [refs], "-m", "bleu", "-l", f"en-{language}")
    assert format(ours.score, ".4f") == format(cli, ".4f")
    # A tokenizer the definition states wins, as sacrebleu's -tok does.
    stated = options_of(*translation_set(language, {"tokenize": "13a"}))
    assert "|tok:13a|" in score_run(hyps, [refs], ["BLEU"], stated)["BLEU"].signature


def test_a_language_whose_tokenizer_is_not_installed_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As on a server without the optional MeCab packages.
    monkeypatch.setattr(generation, "_importable", lambda module: False)
    with pytest.raises(
        DefinitionError,
        match="BLEU tokenizer for target language 'ja' is 'ja-mecab'; .* needs the MeCab and "
        "ipadic packages.*state tokenize in the sacrebleu table",
    ):
        options_of(*translation_set("ja"))
    assert options_of(*translation_set("ja", {"tokenize": "char"})).tokenize == "char"


LABELS = ["positive", "negative", "neutral", "rare"]


@pytest.mark.parametrize("seed", range(5))
def test_classification_defaults_are_scikit_learns(seed: int) -> None:
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 4, 60)
    gold[:3] = 3
    predicted = np.where(rng.random(60) < 0.6, gold, rng.integers(0, 3, 60))
    predicted[predicted == 3] = 0  # "rare" is never predicted: its precision is 0 / 0
    ours = classification_measures(gold, predicted, LABELS)
    # Every declared label occurs in the gold: scikit-learn's default labels are the declared.
    assert set(gold.tolist()) == set(range(len(LABELS)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's default zero_division warns, then uses 0
        for average in ("macro", "micro", "weighted"):
            f1 = f1_score(gold, predicted, average=average)
            assert ours[f"{average}-F1"] == pytest.approx(f1, abs=1e-12), average
        for metric, name in ((precision_score, "P"), (recall_score, "R")):
            for average in ("macro", "micro", "weighted"):
                expected = metric(gold, predicted, average=average)
                assert ours[f"{average}-{name}"] == pytest.approx(expected, abs=1e-12)
    assert ours["Acc"] == pytest.approx(accuracy_score(gold, predicted), abs=1e-12)
    assert ours["MCC"] == pytest.approx(matthews_corrcoef(gold, predicted), abs=1e-12)
    assert ours["kappa"] == pytest.approx(cohen_kappa_score(gold, predicted), abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_regression_defaults_are_scipys(seed: int) -> None:
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 6, 50).astype(float)  # many ties: Kendall's variant matters
    predicted = np.round(gold + rng.normal(0, 1.5, 50))
    ours = regression_measures(gold, predicted)
    assert ours["Pearson"] == pytest.approx(stats.pearsonr(gold, predicted).statistic, abs=1e-12)
    assert ours["Spearman"] == pytest.approx(stats.spearmanr(gold, predicted).statistic, abs=1e-12)
    assert ours["Kendall"] == pytest.approx(stats.kendalltau(gold, predicted).statistic, abs=1e-12)


TREC_NAMES = ["map", "ndcg", "bpref", "P_5", "recip_rank", "Rprec", "recall_10", "ndcg_cut_10"]


@pytest.mark.parametrize("seed", range(5))
def test_trec_defaults_are_trec_evals(seed: int) -> None:
    rng = random.Random(seed)
    qrels = {
        f"q{t}": {f"d{d}": rng.choice([0, 0, 1, 2, 2]) for d in rng.sample(range(40), 15)}
        for t in range(6)
    }
    run = {f"q{t}": {f"d{d}": rng.random() for d in rng.sample(range(40), 20)} for t in range(6)}
    # A set that states no threshold: trec_eval's -l 1 (grade 1 is relevant), gains = grades.
    (variant,) = set_variants(SetDef("test", "Test", {"qrels": "q.txt"}))
    collection = Collection(qrels, run, variant.threshold)
    topics, run_arrays, qrels_arrays = as_arrays(collection)
    measures = [parse_trec_measure(n) for n in TREC_NAMES]
    ours = evaluate_trec(*run_arrays, *qrels_arrays, len(topics), variant.threshold, measures)
    reference = pytrec_eval.RelevanceEvaluator(qrels, set(TREC_NAMES)).evaluate(run)
    for m in measures:
        expected = [reference[t][m.trec_eval_name] for t in topics]
        assert ours.per_query[m.key].tolist() == pytest.approx(expected, abs=1e-9), m.key
