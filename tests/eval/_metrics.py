"""Turn-level retrieval metrics for the external evaluation.

Every function takes `ranked`, the ids a method returned in rank order, and
`gold`, the set of ids that hold the evidence. Ranked ids are made distinct
first (a record row and the capture it cites must not count twice), and a
method that returned fewer than k ids simply has fewer chances.

Definitions (k is the cut-off, top_k = the first k distinct ranked ids):
- recall@k = |gold ∩ top_k| / |gold|
- hit@k    = 1 if gold ∩ top_k is not empty, else 0
- ndcg@k   = DCG@k / IDCG@k with binary relevance:
             DCG@k = sum over ranks i = 1..k of rel_i / log2(i + 1),
             IDCG@k = sum over i = 1..min(|gold|, k) of 1 / log2(i + 1)
Questions without gold are not scored (the callers leave them out).
"""

import math
import statistics


def distinct(ids):
    """The ids in first-seen order, each once."""
    seen, out = set(), []
    for item in ids:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def _check(gold):
    gold = set(gold)
    if not gold:
        raise ValueError("a question without gold evidence cannot be scored")
    return gold


def recall_at_k(ranked, gold, k):
    gold = _check(gold)
    return len(gold.intersection(distinct(ranked)[:k])) / len(gold)


def hit_at_k(ranked, gold, k):
    gold = _check(gold)
    return 1.0 if gold.intersection(distinct(ranked)[:k]) else 0.0


def ndcg_at_k(ranked, gold, k):
    gold = _check(gold)
    dcg = sum(1.0 / math.log2(i + 2) for i, item in enumerate(distinct(ranked)[:k]) if item in gold)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(gold), k)))
    return dcg / ideal


def first_gold_rank(ranked, gold):
    """1-based rank of the first gold id, None when none was returned."""
    for i, item in enumerate(distinct(ranked), start=1):
        if item in gold:
            return i
    return None


def score(ranked, gold):
    """All figures for one question: {"r@1", "hit@1", "r@5", "r@10", "hit@5", "hit@10", "ndcg@10"}."""
    return {
        "r@1": recall_at_k(ranked, gold, 1),
        "hit@1": hit_at_k(ranked, gold, 1),
        "r@5": recall_at_k(ranked, gold, 5),
        "r@10": recall_at_k(ranked, gold, 10),
        "hit@5": hit_at_k(ranked, gold, 5),
        "hit@10": hit_at_k(ranked, gold, 10),
        "ndcg@10": ndcg_at_k(ranked, gold, 10),
    }


METRICS = ("r@1", "hit@1", "r@5", "r@10", "hit@5", "hit@10", "ndcg@10")


def mean_by(rows, key="category", overall_excludes=()):
    """Average per-question figures by category and overall.

    rows: [{"category": c, "r@5": x, ...}]. Categories in `overall_excludes` are
    reported on their own but left out of "overall". Returns
    {category: {"n": count, metric: mean}} with "overall" last.
    """
    groups = {}
    for row in rows:
        groups.setdefault(row[key], []).append(row)
    out = {}
    for cat in sorted(groups, key=str):
        out[cat] = _mean(groups[cat])
    kept = [row for row in rows if row[key] not in overall_excludes]
    out["overall"] = _mean(kept)
    return out


def _mean(rows):
    res = {"n": len(rows)}
    for metric in METRICS:
        res[metric] = (sum(r[metric] for r in rows) / len(rows)) if rows else None
    return res


def median(values):
    return statistics.median(values) if values else None
