"""Count n-gram matches between a hypothesis and its references, segment by segment, in numpy.

Each text (the hypothesis, each reference) is a sequence of positive symbol ids per segment.
For every order n up to a maximum, and every segment, the result holds each text's number of
n-grams and, for every n-gram g of the hypothesis, the clipped counts
``min(count_hyp(g), count_ref(g))`` summed per reference and ``min(count_hyp(g), max_r
count_ref_r(g))`` summed over the references together (BLEU's clipping).

One sort does all orders: every position is keyed by (segment, its next ``max_order`` symbols
padded with 0, text), so for each n the positions starting an equal n-gram of one segment are
adjacent, and counting is a pass over the sorted keys. Segments are taken a chunk at a time so
the keys of a chunk fit one or two 64-bit words and memory stays bounded.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

#: Segments per chunk: small enough that a chunk's keys stay a few MB, large enough that numpy
#: calls are few.
CHUNK_SEGMENTS = 512

IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class Texts:
    """One text per row (hypothesis first): concatenated symbol ids and each segment's length."""

    symbols: list[IntArray]
    lengths: list[IntArray]


@dataclass(frozen=True)
class MatchCounts:
    """Per segment and order: n-gram counts of each text and the clipped matches.

    ``totals[t][:, n-1]``: text t's n-grams; ``matches[r][:, n-1]``: hypothesis n-grams matched
    in reference r alone; ``clipped[:, n-1]``: matched against the maximum over references.
    """

    totals: list[IntArray]
    matches: list[IntArray]
    clipped: IntArray


def _bits(value: int) -> int:
    return max(1, int(value).bit_length())


def _pack(fields: list[tuple[IntArray, int]]) -> tuple[list[IntArray], list[tuple[int, int]]]:
    """Pack fields (most significant first) into 63-bit words; return them and each field's
    (word, shift) so it reads back as ``(word >> shift) & mask``."""
    words: list[IntArray] = []
    placed: list[tuple[int, int]] = []
    size = len(fields[0][0])
    word = np.zeros(size, dtype=np.int64)
    used = 0
    spans: list[list[int]] = [[]]
    for values, width in fields:
        if used + width > 63:
            words.append(word)
            spans.append([])
            word = np.zeros(size, dtype=np.int64)
            used = 0
        word = (word << width) | values
        used += width
        spans[-1].append(width)
    words.append(word)
    for index, widths in enumerate(spans):
        rest = sum(widths)
        for width in widths:
            rest -= width
            placed.append((index, rest))
    return words, placed


def _chunk_counts(
    symbols: list[IntArray], lengths: list[IntArray], max_order: int, segments: int
) -> tuple[IntArray, IntArray]:
    """Return (matches[R, S, N], clipped[S, N]) for one chunk of segments."""
    n_texts = len(symbols)
    sym = np.concatenate(symbols)
    size = len(sym)
    matches = np.zeros((n_texts - 1, segments, max_order), dtype=np.int64)
    clipped = np.zeros((segments, max_order), dtype=np.int64)
    if size == 0 or n_texts < 2:
        return matches, clipped
    seq_lengths = np.concatenate(lengths)  # text-major: all segments of text 0, then text 1, ...
    seg = np.repeat(np.tile(np.arange(segments, dtype=np.int64), n_texts), seq_lengths)
    tag = np.repeat(np.repeat(np.arange(n_texts, dtype=np.int64), segments), seq_lengths)
    # How many symbols remain in a position's sequence, itself included.
    remaining = np.repeat(np.cumsum(seq_lengths), seq_lengths) - np.arange(size)

    sym_bits = _bits(int(sym.max()))
    fields: list[tuple[IntArray, int]] = [(seg, _bits(segments))]
    for k in range(max_order):
        shifted = np.zeros(size, dtype=np.int64)
        shifted[: max(size - k, 0)] = sym[k:]
        fields.append((np.where(remaining > k, shifted, 0), sym_bits))
    fields.append((tag, _bits(n_texts)))
    words, placed = _pack(fields)
    del fields, shifted, remaining, seg, tag
    if len(words) == 1:
        words = [np.sort(words[0])]
    else:
        order = np.lexsort(words[::-1])
        words = [w[order] for w in words]

    def read(field: int, width: int) -> IntArray:
        index, shift = placed[field]
        return (words[index] >> shift) & ((1 << width) - 1)

    s_seg = read(0, _bits(segments))
    s_tag = read(max_order + 1, _bits(n_texts))
    for n in range(1, max_order + 1):
        # An n-gram starts where its n-th symbol is inside the sequence (not padding).
        valid = read(n, sym_bits) != 0
        if not valid.any():
            break  # no sequence of the chunk is n symbols long, so none is longer either
        # Adjacent entries start the same n-gram of a segment when fields 0..n agree.
        index, shift = placed[n]
        new = np.zeros(int(valid.sum()), dtype=bool)
        new[0] = True
        for w in range(index + 1):
            prefix = words[w][valid]
            if w == index:
                prefix = prefix >> shift
            new[1:] |= prefix[1:] != prefix[:-1]
        group = np.cumsum(new) - 1
        groups = int(group[-1]) + 1
        counts = np.bincount(group * n_texts + s_tag[valid], minlength=groups * n_texts)
        counts = counts.reshape(groups, n_texts)
        group_seg = s_seg[valid][new]
        hyp = counts[:, 0]
        for ref in range(1, n_texts):
            matches[ref - 1, :, n - 1] = np.bincount(
                group_seg, weights=np.minimum(hyp, counts[:, ref]), minlength=segments
            )
        best = counts[:, 1:].max(axis=1)
        clipped[:, n - 1] = np.bincount(
            group_seg, weights=np.minimum(hyp, best), minlength=segments
        )
    return matches, clipped


def count_matches(texts: Texts, max_order: int, chunk: int = CHUNK_SEGMENTS) -> MatchCounts:
    """Return every segment's n-gram totals and matches for orders 1..``max_order``."""
    n_texts = len(texts.symbols)
    segments = len(texts.lengths[0])
    orders = np.arange(1, max_order + 1)
    # A sequence of length L has max(L - n + 1, 0) n-grams of order n.
    totals = [np.maximum(ln[:, None] - orders[None, :] + 1, 0) for ln in texts.lengths]
    starts = [np.concatenate([[0], np.cumsum(ln)]) for ln in texts.lengths]
    matches: list[list[IntArray]] = [[] for _ in range(n_texts - 1)]
    clipped: list[IntArray] = []
    for lo in range(0, segments, chunk):
        hi = min(lo + chunk, segments)
        symbols = [texts.symbols[t][starts[t][lo] : starts[t][hi]] for t in range(n_texts)]
        lengths = [texts.lengths[t][lo:hi] for t in range(n_texts)]
        mat, clip = _chunk_counts(symbols, lengths, max_order, hi - lo)
        for r in range(n_texts - 1):
            matches[r].append(mat[r])
        clipped.append(clip)
    empty = np.zeros((0, max_order), dtype=np.int64)
    return MatchCounts(
        totals=totals,
        matches=[np.concatenate(p) if p else empty for p in matches],
        clipped=np.concatenate(clipped) if clipped else empty,
    )
