"""Bracketed measure keys: names, positional parameters and options."""

from __future__ import annotations

import re

import pytest

from leaderboard.scoring.measure_keys import refuse_unknown_options, split_bracketed
from leaderboard.scoring.registry import UnknownMeasure


def test_plain_key_is_its_name() -> None:
    parsed = split_bracketed("nDCG@10")
    assert parsed.name == "nDCG@10" and parsed.positional == () and parsed.named == {}
    assert not parsed.has_parameters


def test_positional_numbers() -> None:
    parsed = split_bracketed("utility[1,-1,0,0]")
    assert parsed.name == "utility" and parsed.positional == (1, -1, 0, 0)


def test_options_are_toml_scalars_or_words() -> None:
    parsed = split_bracketed(
        "BLEU[smooth_method=floor, smooth_value=0.1, force=true, max_ngram_order=3]"
    )
    assert parsed.named == {
        "smooth_method": "floor",
        "smooth_value": 0.1,
        "force": True,
        "max_ngram_order": 3,
    }
    assert isinstance(parsed.named["max_ngram_order"], int)


def test_quoted_string_and_mixed() -> None:
    parsed = split_bracketed("11pt_avg[0.0,0.5,1.0]")
    assert parsed.positional == (0.0, 0.5, 1.0)
    parsed = split_bracketed("set_F[0.5,judged_only=true]")
    assert parsed.positional == (0.5,) and parsed.named == {"judged_only": True}
    assert split_bracketed('BLEU[tokenize="13a"]').named == {"tokenize": "13a"}


@pytest.mark.parametrize(
    ("key", "says"),
    [
        ("BLEU[", "must end with one bracketed list"),
        ("BLEU[]", "needs a name and parameters"),
        ("[x=1]", "needs a name and parameters"),
        ("BLEU]x", "without '['"),
        ("BLEU[a=1][b=2]", "one bracketed list"),
        ("BLEU[a=1,a=2]", "given twice"),
        ("BLEU[a=1,2]", "positional parameters come before"),
        ("BLEU[1x=2]", "is not an option name"),
        ("BLEU[a=x y]", "is not a value"),
        ("BLEU[a=[1]]", "one bracketed list"),
    ],
)
def test_refusals_say_what_is_wrong(key: str, says: str) -> None:
    with pytest.raises(UnknownMeasure, match=re.escape(says)) as caught:
        split_bracketed(key)
    assert says in str(caught.value) and key in str(caught.value)


def test_unknown_options_name_the_known_ones() -> None:
    refuse_unknown_options("chrF[beta=3]", {"beta": 3}, ("beta", "char_order"))
    with pytest.raises(
        UnknownMeasure,
        match=r"Measure 'chrF\[bta=3\]' does not take bta; it takes: beta, char_order\.",
    ) as caught:
        refuse_unknown_options("chrF[bta=3]", {"bta": 3}, ("beta", "char_order"))
    assert "does not take bta; it takes: beta, char_order." in str(caught.value)
    with pytest.raises(
        UnknownMeasure, match=r"Measure 'Acc\[x=1\]' does not take x; it takes: no options\."
    ) as caught:
        refuse_unknown_options("Acc[x=1]", {"x": 1}, ())
    assert "it takes: no options." in str(caught.value)
