"""Lexical scoring for one channel: BM25 with IDF, length normalization,
anchor-ratio damping, OOV and single-character caps, a content threshold.

Pure: takes query terms, postings and document statistics; returns scored
candidates with the reasons they scored.
"""

import math

K1 = 1.2
B = 0.75
SINGLE_CHAR_WEIGHT = 0.5  # one Chinese character alone is weak evidence (家, 酒, 猫)
NO_ANCHOR_FLOOR = 0.5  # a document missing the query's rarest term keeps at least half its score
CONTENT_THRESHOLD = 0.25  # matched evidence must reach this share of the anchor term's weight
STRONG = 0.9  # query terms weighed at least this are whole words; below: slices, parts, single characters


def idf(total_docs, df):
    return math.log(1.0 + (total_docs - df + 0.5) / (df + 0.5))


def query_weights(terms, alias_chars=()):
    """Damp single CJK characters unless they are an entity's alias (妈, 哥)."""
    out = {}
    for term, weight in terms.items():
        if len(term) == 1 and ord(term) > 0x2e7f and term not in alias_chars:
            weight *= SINGLE_CHAR_WEIGHT
        out[term] = weight
    return out


def term_strength(qweights, dfs, total_docs):
    """Evidence weight of each query term present in the index: query weight x IDF."""
    return {t: w * idf(total_docs, dfs[t]) for t, w in qweights.items() if dfs.get(t)}


def score_channel(strength, postings, docs, avg_len, qweights=None):
    """Score documents of one channel.

    strength: {term: qweight * idf}; postings: {term: [(doc, tf)]} (any channel);
    docs: {doc: row} restricted to this channel; qweights: the query's term
    weights (to tell whole words from slices). Returns {doc: (score, detail)}.

    A document is below the content threshold when its evidence is small next
    to the query's strongest term, or when the query has whole words and the
    document matched only slices of them (山东大学 must not be found by 大学).
    """
    qweights = qweights or {}
    strong_query = any(w >= STRONG for w in qweights.values())
    if not strength:
        return {}
    anchor = max(strength, key=strength.get)
    anchor_weight = strength[anchor]
    total_weight = sum(strength.values())
    scores = {}
    matched = {}
    for term, weight in strength.items():
        for doc, tf in postings.get(term, ()):
            row = docs.get(doc)
            if row is None:
                continue
            length = row["length"] or 1.0
            norm = tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / (avg_len or length)))
            scores[doc] = scores.get(doc, 0.0) + weight * norm
            matched.setdefault(doc, {})[term] = round(weight * norm, 3)
    out = {}
    for doc, score in scores.items():
        terms = matched[doc]
        evidence = sum(strength[t] for t in terms)
        hits_anchor = anchor in terms
        if not hits_anchor:
            coverage = evidence / total_weight
            score *= NO_ANCHOR_FLOOR + (1 - NO_ANCHOR_FLOOR) * coverage
        only_slices = strong_query and all(qweights.get(t, 1.0) < STRONG for t in terms)
        out[doc] = (score, {"matched": terms, "anchor": hits_anchor,
                            "below_threshold": evidence < CONTENT_THRESHOLD * anchor_weight or only_slices})
    return out


def rrf(rankings, k=60):
    """Reciprocal-rank fusion: rankings is [(weight, [key, ...])]; returns {key: fused score}."""
    fused = {}
    for weight, keys in rankings:
        for rank, key in enumerate(keys, start=1):
            fused[key] = fused.get(key, 0.0) + weight / (k + rank)
    return fused


def estimate_tokens(text):
    """Rough model tokens: a CJK character is about one, English about four characters per token."""
    cjk = sum(1 for ch in text if ord(ch) > 0x2e7f)
    return cjk + (len(text) - cjk + 3) // 4
