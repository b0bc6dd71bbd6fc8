"""Ranked-retrieval measures (AP, R-Prec, RR) with trec_eval 9.0.8 semantics, vectorised."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

_HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
_HASH_ROWS = 1 << 18
_FILTER_BITS = 22


def float32_order_key(scores: NDArray[Any]) -> NDArray[np.uint32]:
    """Return uint32 keys that sort like the scores rounded to float32 (C ``float`` comparison)."""
    # Adding +0.0 turns -0.0 into +0.0: C compares them equal, so they must share a key.
    single = np.asarray(scores, dtype=np.float32) + np.float32(0.0)
    bits = single.view(np.uint32)
    negative = (bits >> np.uint32(31)).astype(bool)
    return np.where(negative, ~bits, bits | np.uint32(0x80000000)).astype(np.uint32)


def query_score_key(query_index: NDArray[Any], scores: NDArray[Any]) -> NDArray[np.int64]:
    """Return int64 keys ordering lines by query ascending, then float32 score descending."""
    key = np.asarray(query_index).astype(np.int64)
    key <<= 32
    key |= ~float32_order_key(scores)
    return key


def rank_order(
    query_index: NDArray[Any], docids: NDArray[Any], scores: NDArray[Any]
) -> NDArray[np.intp]:
    """Return the permutation that ranks lines as trec_eval does.

    Order: query index ascending, float32 score descending, document id descending bytewise
    (trec_eval's reverse ``strcmp``). Query indices must be non-negative.
    """
    key = query_score_key(query_index, scores)
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    same = sorted_key[1:] == sorted_key[:-1]
    del sorted_key
    if not same.any():
        return order
    tied = np.zeros(len(order), dtype=bool)
    tied[1:] |= same
    tied[:-1] |= same
    members = order[tied]
    # Sorting by (-key, id) ascending and reversing gives key ascending, id descending; the
    # tied slots of `order` hold exactly these groups in ascending key order.
    inner = np.lexsort((docids[members], -key[members]))
    order[tied] = members[inner[::-1]]
    return order


def pair_hash(
    query_index: NDArray[Any], docids: NDArray[Any], width: int | None = None
) -> NDArray[np.uint64]:
    """Return a 64-bit hash of each (query index, document id) pair.

    ``width`` pads ids to a common byte width so that arrays of different ``S`` widths hash
    equal ids equally; it defaults to the array's own width. Equal hashes must still be
    confirmed by comparing the pairs.
    """
    docids = np.ascontiguousarray(docids)
    itemsize = max(docids.dtype.itemsize, width or 0, 1)
    padded = -(-itemsize // 8) * 8
    out = np.asarray(query_index).astype(np.uint64)
    out *= _HASH_MULTIPLIER
    if len(docids) == 0:
        return out
    for start in range(0, len(docids), _HASH_ROWS):
        chunk = docids[start : start + _HASH_ROWS]
        raw = chunk.view(np.uint8).reshape(len(chunk), chunk.dtype.itemsize)
        if raw.shape[1] != padded:
            grown = np.zeros((len(chunk), padded), dtype=np.uint8)
            grown[:, : raw.shape[1]] = raw
            raw = grown
        words = raw.view("<u8")
        h = out[start : start + len(chunk)]
        for column in range(words.shape[1]):
            h ^= words[:, column]
            h *= _HASH_MULTIPLIER
            h ^= h >> np.uint64(29)
    return out


def _candidates(
    query_index: NDArray[Any],
    docids: NDArray[Any],
    table_query: NDArray[Any],
    table_docids: NDArray[Any],
) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.bool_], bool]:
    """Find the lines whose pair hash occurs in the table.

    Returns those lines, a table row with the same hash for each, whether that row holds the
    same pair, and whether some hash is shared by several table rows (then an unconfirmed line
    may still match another row).
    """
    width = max(docids.dtype.itemsize, table_docids.dtype.itemsize)
    table_hash = pair_hash(table_query, table_docids, width)
    table_order = np.argsort(table_hash, kind="stable")
    table_sorted = table_hash[table_order]
    line_hash = pair_hash(query_index, docids, width)
    # A bitmap of the table's top hash bits rules out most lines with one lookup each, so
    # only the few remaining ones pay for a binary search.
    bitmap = np.zeros(1 << _FILTER_BITS, dtype=bool)
    bitmap[table_hash >> np.uint64(64 - _FILTER_BITS)] = True
    maybe = np.flatnonzero(bitmap[line_hash >> np.uint64(64 - _FILTER_BITS)])
    pos = np.searchsorted(table_sorted, line_hash[maybe]).clip(max=len(table_sorted) - 1)
    same = table_sorted[pos] == line_hash[maybe]
    hit = maybe[same]
    candidate = table_order[pos[same]]
    confirmed = (np.asarray(table_query)[candidate] == np.asarray(query_index)[hit]) & (
        table_docids[candidate] == docids[hit]
    )
    shared = bool((table_sorted[1:] == table_sorted[:-1]).any())
    return hit, candidate, confirmed, shared


def match_index(
    query_index: NDArray[Any],
    docids: NDArray[Any],
    table_query: NDArray[Any],
    table_docids: NDArray[Any],
) -> NDArray[np.intp]:
    """Return, per (query, id) line, the row of the same pair in the table, or -1.

    A pair listed twice in the table matches one of its rows.
    """
    found = np.full(len(query_index), -1, dtype=np.intp)
    if len(query_index) == 0 or len(table_query) == 0:
        return found
    hit, candidate, confirmed, shared = _candidates(query_index, docids, table_query, table_docids)
    found[hit[confirmed]] = candidate[confirmed]
    if shared and not confirmed.all():
        # A hash shared by different pairs: the first candidate may not be the matching one.
        rows: dict[tuple[int, bytes], int] = {}
        for row, pair in enumerate(
            zip(np.asarray(table_query).tolist(), table_docids.tolist(), strict=True)
        ):
            rows.setdefault(pair, row)
        for i in hit[~confirmed].tolist():
            found[i] = rows.get((int(query_index[i]), bytes(docids[i])), -1)
    return found
