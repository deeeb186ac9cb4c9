"""A question about the user as a whole: "what do you know about me?", 你都知道我什么.

Beside words that frame a question (know, remember, told) and a few that ask for the whole
(everything, summarize, 一切: resources/lexicon/overview_words.txt) it names only the user,
so no word of it can match anything. It is answered with what the archive holds: current
records by salience, then the user's own words, newest first (never a question they asked).
"""

import re

from .index import weighted_terms
from .lexicon import data_rows
from .query import saved_question
from .when import LIST_LIMIT, content_terms

SELF = re.compile(r"(?<![a-z'])(?:me|myself|my|i)(?![a-z'])|我")  # of lower-cased text: re.I costs 0.7 ms to compile
_WORDS = []


def _overview_terms(lexicon):
    if not _WORDS:
        _WORDS.append(frozenset(t for row in data_rows("overview_words") for t in weighted_terms(" ".join(row), lexicon)))
    return _WORDS[0]


def asks_overview(q):
    """Does the query ask what is known about the user, naming nothing else?"""
    if q.times or q.window or q.phase or not SELF.search(q.raw.lower()):
        return False
    wide = _overview_terms(q.recall.lexicon())
    return all(t in wide for t in content_terms(q))


def overview_rows(q):
    """The rows that answer it: [row], current records by salience (then newest), then the user's words, newest first."""
    rows = q.recall.docs_where("((doc & 1) = 1 AND status IS NULL) OR ((doc & 1) = 0 AND own = 1) "
                               "ORDER BY date_from DESC, doc DESC", (), LIST_LIMIT)
    kept = [row for row in rows if not saved_question(row) and q.admits(row, direct=False)[0]]
    records = sorted((r for r in kept if r["doc"] & 1), key=lambda r: -(r["salience"] if r["salience"] is not None else -1))
    return records + [r for r in kept if not r["doc"] & 1]


def why():
    return {"channel": "overview", "because": "the question asks what is known about the user: what the archive holds"}
