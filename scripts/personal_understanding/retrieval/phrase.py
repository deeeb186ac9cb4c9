"""Verbatim phrases: the user's own words found as they were said.

A short Chinese query, or a quoted part of any query ("…", “…”, 「…」), that
occurs as a substring of a capture or a record is the strongest evidence
there is, whatever the tokenizer made of it: 到了解 is 到 + 了解 as a query
but lies across 回到 | 了 | 解放路 in "等我回到了解放路". Candidates are the
best lexical matches plus the documents of indexed words that overlap the
phrase's end (解放路 begins with its last character); at most READS texts are
read, so the cost is bounded whatever the archive size.
"""

import re

from ..capture import read_capture
from ..errors import PuError
from ..patterns import Lazy
from .index import TITLE_CHARS, record_text, weighted_terms
from .lexicon import normalize

MAX_CHARS = 30  # a whole query longer than this is a message, not a phrase
MIN_CHARS = 2
SCORED = 10  # the best-scored candidates of a channel are read; when none holds the phrase ...
READS = 40  # ... up to this many documents of words overlapping it
OVERLAP_MAX_DF = 200  # a word found in more documents says too little about where the phrase is
_QUOTED = Lazy(r'"([^"\n]+)"|“([^”\n]+)”|「([^」\n]+)」|『([^』\n]+)』|《([^》\n]+)》', needs=tuple('"“「『《'))
_EDGES = re.compile(r"^[\W_]+|[\W_]+$")
_SPACES = re.compile(r"\s+")


def fold(text):
    """Comparison form: width- and case-folded, runs of white space as one space."""
    return _SPACES.sub(" ", normalize(text or "").casefold())


def phrases(text, lexicon=None):
    """The phrases of a query to look for verbatim, folded: its quoted parts, else the whole (short) query.

    A query that is one word of the index needs no phrase: its postings are exact.
    """
    text = text or ""
    quoted = [next(g for g in m.groups() if g is not None) for m in _QUOTED.finditer(text)]
    parts = quoted or [text]
    out = []
    for part in parts:
        part = fold(_EDGES.sub("", part.strip()))
        if MIN_CHARS <= len(part) <= (MAX_CHARS if not quoted else 200) and part not in out:
            # Unquoted, only Chinese text needs it: English words tokenize the same in any context.
            if quoted or any(ord(ch) > 0x2e7f for ch in part):
                out.append(part)
    if not quoted and out and [t for t in weighted_terms(out[0], lexicon)] == [out[0]]:
        return []
    return out


def overlap_docs(recall, phrase, limit=READS):
    """Documents holding an indexed word that starts inside the phrase and runs past its end (or ends with it)."""
    found, terms = [], []
    for i in range(len(phrase) - 1, -1, -1):
        tail = phrase[i:]
        if ord(tail[0]) <= 0x2e7f:
            continue
        for term, df in recall.terms_starting(tail[0]):
            if df <= OVERLAP_MAX_DF and len(term) > 1 and (term.startswith(tail) or tail.startswith(term)):
                terms.append((-min(len(term), len(tail)), df, term))
    for _overlap, _df, term in sorted(terms):
        for doc, _tf in recall.postings([term])[term]:
            if doc not in found:
                found.append(doc)
        if len(found) >= limit:
            break
    return found[:limit]


def _text_of(ai, row):
    key = row["key"]
    if key.startswith("c:") and row.get("title") is not None and len(row["title"]) < TITLE_CHARS:
        return row["title"]  # the index keeps a capture's first characters: a short one is all there
    if key.startswith("c:"):
        cap = ai.capture(key[2:])
        if not cap:
            return ""
        try:
            return read_capture(ai.root, cap["path"]).get("text") or ""
        except PuError:
            return ""
    rec = ai.record(key[2:]) or {}
    title, body = record_text(rec)
    return f"{title}\n{body}"


def folded_text(ai, doc, rows, cache):
    """A document's text in comparison form, read once per query (`cache`: {doc: text})."""
    text = cache.get(doc)
    if text is None:
        text = cache[doc] = fold(_text_of(ai, rows[doc]))
    return text


def hits(ai, wanted, docs, rows, cache):
    """{doc: phrase} for the documents (in order, at most READS) whose text holds a phrase verbatim."""
    out = {}
    for doc in docs[:READS]:
        text = folded_text(ai, doc, rows, cache)
        for phrase in wanted:
            if phrase in text:
                out[doc] = phrase
                break
    return out
