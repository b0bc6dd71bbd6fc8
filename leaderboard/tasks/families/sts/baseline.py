"""The official STS baseline run: cosine of binary bag-of-words vectors of the two sentences."""

from __future__ import annotations

import math
import re

# ASCII whitespace only: the recipe splits on the spaces of the UTF-8 input, and a non-ASCII
# space (none occurs in the shipped data) stays part of its token.
_WHITESPACE = re.compile(r"[ \t\n\r\f\v]+")


def cosine_bow(s1: str, s2: str) -> float:
    """Return the cosine of the binary bag-of-words vectors of two sentences.

    score = |T1 ∩ T2| / sqrt(|T1| |T2|), T1 and T2 the sets of tokens got by splitting on runs
    of whitespace, case and punctuation kept; 0 if either set is empty.
    """
    t1 = _token_set(s1)
    t2 = _token_set(s2)
    if not t1 or not t2:
        return 0.0
    return len(t1 & t2) / math.sqrt(len(t1) * len(t2))


def baseline_scores(input_text: str) -> list[float]:
    """Return the baseline score of every line of an STS input file (TAB fields 1 and 2).

    An empty line (the .ascii inputs end with one) scores 0; any other line needs two fields.
    """
    lines = input_text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the final LF ends the last line
    scores: list[float] = []
    for number, line in enumerate(lines, start=1):
        line = line.removesuffix("\r")
        if not line.strip():
            scores.append(0.0)
            continue
        fields = line.split("\t")
        if len(fields) < 2:
            raise ValueError(f"input line {number}: expected TAB-separated sentences, found one.")
        scores.append(cosine_bow(fields[0], fields[1]))
    return scores


def _token_set(sentence: str) -> set[str]:
    """Return the distinct whitespace-separated tokens of ``sentence``."""
    return {token for token in _WHITESPACE.split(sentence) if token}
