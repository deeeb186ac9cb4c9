"""Okapi BM25 baselines: one scorer, run with a plain and a strong tokenization.

Scoring, for a query Q over documents D in one haystack of N documents:

    score(D, Q) = sum over distinct terms t of Q present in the haystack:
                  idf(t) * tf(t, D) * (k1 + 1) / (tf(t, D) + k1 * (1 - b + b * |D| / avgdl))
    idf(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

with k1 = 1.2, b = 0.75, tf the number of occurrences of t in D, |D| the
number of terms in D and avgdl the mean |D| in the haystack. Each query term
counts once however often the query repeats it. Documents sharing no term
with the query are not ranked; ties keep the haystack's order.

Tokenizations:
- `plain_terms`: lower-cased letter/digit words as they are (no stopwords, no
  stemming), each CJK character on its own. The textbook baseline.
- `strong_terms`: the usual strong lexical configuration (as in Lucene's
  English analyzer): lower-cased words without the 33 classic English
  stopwords, Porter-stemmed; CJK runs as their characters plus overlapping
  bigrams. This is the bar the product has to beat.
- `cjk_bigrams`: overlapping character bigrams of CJK runs (a lone character
  stands alone), Latin/digit words as they are.
"""

import math
import re

import _porter

K1 = 1.2
B = 0.75


class BM25:
    def __init__(self, docs, k1=K1, b=B):
        """docs: [(doc_id, [term, ...])] in haystack order."""
        self.k1 = k1
        self.b = b
        self.ids = []
        self.lengths = []
        self.postings = {}
        for n, (doc_id, terms) in enumerate(docs):
            self.ids.append(doc_id)
            self.lengths.append(len(terms))
            counts = {}
            for term in terms:
                counts[term] = counts.get(term, 0) + 1
            for term, tf in counts.items():
                self.postings.setdefault(term, []).append((n, tf))
        self.n = len(self.ids)
        self.avgdl = (sum(self.lengths) / self.n) if self.n else 0.0

    def idf(self, term):
        df = len(self.postings.get(term, ()))
        return math.log(1.0 + (self.n - df + 0.5) / (df + 0.5))

    def scores(self, query_terms):
        """{doc_id: score} for documents sharing at least one term with the query."""
        acc = {}
        k1, b, avgdl = self.k1, self.b, self.avgdl or 1.0
        for term in dict.fromkeys(query_terms):
            plist = self.postings.get(term)
            if not plist:
                continue
            weight = self.idf(term)
            for n, tf in plist:
                norm = tf * (k1 + 1) / (tf + k1 * (1 - b + b * self.lengths[n] / avgdl))
                acc[n] = acc.get(n, 0.0) + weight * norm
        return {self.ids[n]: s for n, s in acc.items()}

    def rank(self, query_terms, k=None):
        """Doc ids by descending score (ties: haystack order), at most k."""
        acc = {}
        for doc_id, s in self.scores(query_terms).items():
            acc[doc_id] = s
        position = {doc_id: n for n, doc_id in enumerate(self.ids)}
        ranked = sorted(acc, key=lambda d: (-acc[d], position[d]))
        return ranked if k is None else ranked[:k]


_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
_PIECES = re.compile(f"([{_CJK}]+)|([^\\W_{_CJK}]+)")


def cjk_bigrams(text):
    """Overlapping character bigrams of CJK runs, plus Latin/digit words."""
    out = []
    for m in _PIECES.finditer((text or "").lower()):
        run = m.group(1)
        if run:
            if len(run) == 1:
                out.append(run)
            else:
                out.extend(run[i:i + 2] for i in range(len(run) - 1))
            continue
        out.append(m.group(2))
    return out


_WORDS = re.compile(f"([{_CJK}]+)|([^\\W_{_CJK}]+(?:'[^\\W_{_CJK}]+)*)")
# Lucene's classic English stopword set (StopAnalyzer.ENGLISH_STOP_WORDS_SET).
EN_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these "
    "they this to was will with".split())


def plain_terms(text):
    """Lower-cased words; CJK as single characters. No stopwords, no stemming."""
    out = []
    for m in _WORDS.finditer((text or "").lower().replace("’", "'")):
        out.extend(m.group(1) if m.group(1) else [m.group(2)])
    return out


def strong_terms(text):
    """Stopwords out, Porter stems (English); characters plus bigrams (CJK)."""
    out = []
    for m in _WORDS.finditer((text or "").lower().replace("’", "'")):
        run = m.group(1)
        if run:
            out.extend(run)
            out.extend(run[i:i + 2] for i in range(len(run) - 1))
            continue
        word = m.group(2).replace("'", "")
        if m.group(2).endswith("'s"):
            word = m.group(2)[:-2]
        if word not in EN_STOPWORDS and m.group(2) not in EN_STOPWORDS:
            out.append(_porter.stem(word))
    return out
