"""Lexical scoring for one channel: BM25 with IDF, length normalization,
anchor-ratio damping, OOV and single-character caps, a content threshold.

Pure: takes query terms, postings and document statistics; returns scored
candidates with the reasons they scored.
"""

import math

K1 = 1.2
B = 0.85  # long turns and records rarely repeat a word for emphasis: normalize length strongly
SINGLE_CHAR_WEIGHT = 0.5  # one Chinese character alone is weak evidence (家, 酒, 猫)
NO_ANCHOR_FLOOR = 0.5  # a short query's document missing its rarest term keeps at least half its score
STRONG = 0.9  # query terms weighed at least this are whole words; below: slices, parts, single characters
RARE_SHARE = 0.6  # a matched term with at least this share of the anchor's IDF is not "common"


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


def term_strength(qweights, dfs, total_docs, specific=None):
    """Evidence weight of each query term present in the index: query weight x IDF, times the share
    `specific` keeps of a word for how common the language finds it."""
    specific = specific or {}
    return {t: w * specific.get(t, 1.0) * idf(total_docs, dfs[t]) for t, w in qweights.items() if dfs.get(t)}


def score_channels(strength, postings, rows, avg_len, qweights=None, feedback=(), groups=None):
    """Score documents, each within its own channel.

    strength: {term: qweight * idf}; postings: {term: [(doc, tf)]}; rows:
    {doc: row} (the row's "channel" and "length" are used); avg_len:
    {channel: mean length}; qweights: the query's term weights (to tell whole
    words from slices); feedback: terms lent by the best matches (they score,
    but never make a match count as the user's words); groups: {term: (query words)}
    for stand-ins (built-in knowledge): per query word only the best of its
    stand-ins counts, and none is the anchor. Returns {channel: {doc: (score, detail)}}.

    The anchor is the query's rarest whole word. A document that matched only
    words far more common than the anchor (a long record hit by everyday words)
    keeps a share of its score that grows with how much of the query it covers;
    the longer the query, the less one missing word counts. A document is below the
    content threshold when the query has whole words and it matched only slices
    of them (山东大学 must not be found by 大学, 难 must not stand for 难打). A one-character word
    counts as a word when none of the query's whole words, nor anything standing for one, is in
    the archive: in "我的手表还值得修吗" 手表 and 值得 are nowhere, and 修 is what is left of the question.
    """
    qweights = qweights or {}
    if not strength:
        return {}
    groups = groups or {}
    # Only the query's own words make it "strong": a stand-in (dad for 我爸) must not hold back the
    # turn that says the user's own word (我爸下周做手术), however short that word is.
    strong_query = any(w >= STRONG for t, w in qweights.items() if t not in groups and t not in feedback)
    own = {t: w for t, w in strength.items() if t not in feedback and t not in groups} or strength
    single_words = ()  # one-character words (修, 车): halved by query_weights, yet more than a slice's weight
    if not any(qweights.get(t, 1.0) >= STRONG for t in own) and not any(t in groups for t in strength):
        single_words = {t for t, w in qweights.items()
                        if len(t) == 1 and ord(t) > 0x2e7f and STRONG * SINGLE_CHAR_WEIGHT <= w < STRONG}
    words = [t for t in own if qweights.get(t, 1.0) >= STRONG] or list(own)
    rarity = {t: strength[t] / max(qweights.get(t, 1.0), 1e-9) for t in strength}  # the term's IDF
    anchor = max(words, key=lambda t: (rarity[t], t))
    common = RARE_SHARE * rarity[anchor]
    total_weight = sum(own.values())
    floor = 1 - (1 - NO_ANCHOR_FLOOR) * min(1.0, 3 / len(own))
    # The length part of BM25's denominator, once per document (the same arithmetic, in the same order).
    kb = K1 * B
    norm_of = {doc: kb * (row["length"] or 1.0) / (avg_len.get(row["channel"]) or row["length"] or 1.0)
               for doc, row in rows.items()}
    scores, matched = {}, {}
    k1b, k1p = K1 * (1 - B), K1 + 1
    best = {}  # (doc, group) -> best stand-in score
    for term, weight in strength.items():
        group = groups.get(term)
        for doc, tf in postings.get(term, ()):
            length_part = norm_of.get(doc)
            if length_part is None:
                continue
            value = weight * (tf * k1p / (tf + k1b + length_part))
            seen = matched.get(doc)
            if seen is None:
                seen = matched[doc] = {}
            seen[term] = value
            if group is None:
                scores[doc] = scores.get(doc, 0.0) + value
            else:
                for one in group:  # a stand-in of two query words counts for each
                    best[(doc, one)] = max(best.get((doc, one), 0.0), value)
                scores.setdefault(doc, 0.0)
    for (doc, _group), value in best.items():
        scores[doc] += value
    out = {}
    # Matching the anchor settles the test below when the anchor is one of the query's own words.
    anchor_counts = anchor not in feedback and anchor not in groups
    # Asked of every candidate, so worked out per term once: terms about as rare as the anchor, and
    # whole words (not slices of one).
    rare = {t for t in strength if t not in groups and rarity[t] >= common}
    whole = {t for t in strength if qweights.get(t, 1.0) >= STRONG or t in single_words}
    for doc, score in scores.items():
        terms = matched[doc]
        mine = [t for t in terms if t not in feedback] if feedback else terms
        has_anchor = anchor in terms
        if not (has_anchor and anchor_counts) and rare.isdisjoint(mine):
            coverage = min(1.0, sum(strength[t] for t in mine) / total_weight)
            score *= floor + (1 - floor) * coverage
        only_slices = strong_query and whole.isdisjoint(mine)
        channel = out.get(rows[doc]["channel"])
        if channel is None:
            channel = out[rows[doc]["channel"]] = {}
        channel[doc] = (score, {"matched": terms, "anchor": has_anchor, "below_threshold": only_slices})
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
