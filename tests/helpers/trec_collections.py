"""Generated qrels and runs for the fidelity checks against pytrec_eval."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Collection:
    """A generated qrels and run, as dicts for pytrec_eval."""

    qrels: dict[str, dict[str, int]]
    run: dict[str, dict[str, float]]
    threshold: int


Arrays = tuple[np.ndarray, np.ndarray, np.ndarray]


def as_arrays(c: Collection) -> tuple[list[str], Arrays, Arrays]:
    """Return the qrels topics and the kernel's run and qrels arrays."""
    topics = sorted(c.qrels)
    index = {t: i for i, t in enumerate(topics)}
    rq = [index.get(t, -1) for t, docs in c.run.items() for _ in docs]
    rd = [d.encode() for docs in c.run.values() for d in docs]
    rs = [s for docs in c.run.values() for s in docs.values()]
    qq = [index[t] for t, docs in c.qrels.items() for _ in docs]
    qd = [d.encode() for docs in c.qrels.values() for d in docs]
    qg = [g for docs in c.qrels.values() for g in docs.values()]
    run = (np.array(rq, dtype=np.int32), np.array(rd, dtype="S"), np.array(rs, dtype=np.float64))
    qrels = (np.array(qq, dtype=np.int32), np.array(qd, dtype="S"), np.array(qg, dtype=np.int32))
    return topics, run, qrels
