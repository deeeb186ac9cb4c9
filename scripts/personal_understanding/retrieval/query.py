"""One probe's settings, resolved once: filters, the as_of day, the time expressions it names."""

import datetime

from .. import timeutil

STATUS_FACTOR = {"superseded": 0.6, "archived": 0.8, "uncertain": 0.9, "rejected": 0.5, "expired": 0.5}
TIME_BOOST = 1.5
WHEN_BOOST = 1.6  # "when did I ...": a turn or record that names a time holds the answer
NOW_BOOST = 0.5  # "what car do I drive now?": a row said today weighs this much more ...
NOW_HALF_LIFE = 180  # ... and one said this many days before the day asked half as much more
SHORT_QUESTION = 4.0  # a turn this short that asks ("do I have any pets?") holds no more than its question ...
QUESTION_FACTOR = 0.5  # ... so a question asked before ranks below what was told
ASKED_HERE = "c:cap-"  # a turn said to this assistant (imports are imp-, attachments att-) ...
ASKED_HERE_FACTOR = 0.2  # ... that asks: a request to the memory, not a memory; it comes after what was told
REPEAT_FACTOR = 0.01  # a saved question every word of which the query repeats tells nothing: it comes after the rest


def saved_question(row):
    """A turn that asks something (index.asks), as opposed to one that tells."""
    return bool(row["asks"]) and row["channel"] == "verbatim"


def overlaps(row, lo, hi):
    """Is the row dated in [lo, hi], or does the turn say it is about days in it ("last saturday")?"""
    return ((row["date_from"] is not None and row["date_from"] <= hi and (row["date_to"] or row["date_from"]) >= lo)
            or (row["told_from"] is not None and row["told_from"] <= hi and row["told_to"] >= lo))


def _day(text):
    """The day a row's date_from names (the index keeps YYYY-MM-DD); None for anything else."""
    try:
        return datetime.date.fromisoformat(text[:10])
    except ValueError:
        return None


def _valid_at(ai, rec, day):
    """Was this state or decision true on `day`?"""
    start = rec.get("date_start")
    start = start if start else (rec.get("created_at") or "")[:10]
    if start and start[:len(day)] > day[:len(start)]:
        return False
    end = rec.get("date_end")
    if not end and rec.get("superseded_by"):
        successor = ai.record(rec["superseded_by"]) or {}
        end_start = successor.get("date_start") or (successor.get("created_at") or "")[:10]
        if end_start and end_start[:len(day)] <= day[:len(end_start)]:
            return False
        return True
    return not end or end[:len(day)] >= day[:len(end)]



class Query:
    """One probe's settings, resolved once."""

    def __init__(self, root, recall, text, window, phase, domain, as_of, now, own_capture=None):
        self.root = root
        self.own_capture = own_capture
        self.own_key = "c:" + own_capture if own_capture else None  # its document: holds the query's words, tells none
        self.recall = recall
        self.ai = recall.ai
        self.raw = text or ""
        self.now = now
        self.as_of = timeutil.parse_instant(as_of, "as_of") if as_of else None
        self.today = (self.as_of or now).date()
        self.window = None
        if window:
            from .timeexpr import parse_window
            self.window = parse_window(window, self.today)
        self.phase = phase
        self.domain = domain
        self.row_cache = {}  # doc -> index row, shared by every pass of this probe
        self._private = None  # capture ids a highly-private record cites (asked once, when first needed)
        self.text_cache = {}  # doc -> folded text, for verbatim phrases
        self.asks_when = False  # set by the probe for "when did I ..." questions
        self.asks_now = False  # set by the probe for "... now?", "still ...?", 现在 questions
        self.content_terms = None  # when.content_terms, once asked
        self.named = set()  # speakers the question names (whose.resolve)
        self.side = None  # 1: the owner's own words answer it, 0: the other side's, None: either
        self.advice = False  # asks for advice now (probe; whose.resolve): the user's own words near its matches help
        self.specific = {}  # query word -> share of its weight kept for how common the language finds it
        self.reached = None  # {key: score} of everything the query touched, when a why-question needs it
        self.times = []
        self.lexical = self.raw
        self.time_words = ""  # the words of its time expressions ...
        self.rest = self.raw  # ... and the text without them
        if self.raw:
            from .timeexpr import resolve
            self.times = resolve(self.raw, self.today, lean="back", holidays=True)  # a question to the memory looks back
            if any(t.get("kind") != "ahead" for t in self.times):  # 周末有什么安排: the weekend's plans, not 90 days'
                self.times = [t for t in self.times if t.get("kind") != "ahead"]
            # A holiday's name is what the question is about, not only when (any plans for xmas?): it stays in
            # the rest and is not a time word.
            words = []
            for found in sorted(self.times, key=lambda t: -t["start"]):
                name = found.get("holiday", "")  # its naming words: New Year of Chinese New Year only says when
                words.insert(0, found["expression"].replace(name, " ") if name else found["expression"])
                self.rest = self.rest[:found["start"]] + " " + name + " " + self.rest[found["end"]:]
            self.time_words = " ".join(words)

    def _private_sources(self):
        if self._private is None:
            self._private = self.recall.private_sources()
        return self._private

    def admits(self, row, direct):
        """Filters every channel applies. `direct`: the row matched the query's own words."""
        if self.own_key and row["key"] == self.own_key:
            return False, "the current turn's own words"
        if self.domain and row["domain"] != self.domain:
            return False, "outside domain"
        if self.phase and row["phase"] != self.phase:
            return False, "outside phase"
        if self.window and not overlaps(row, *self.window):
            return False, "outside window"
        if row["sensitivity"] == "highly-private" and not direct:
            return False, "highly-private, not hit directly"
        if not direct and row["channel"] == "verbatim" and row["key"][2:] in self._private_sources():
            return False, "the words of a highly-private record, not hit directly"
        if self.as_of is not None:
            day = self.today.isoformat()
            if row["channel"] == "verbatim" and row["date_from"] and row["date_from"] > day:
                return False, "said after as_of"
            if row["kind"] in ("state", "decision"):
                rec = self.ai.record(row["key"][2:]) or {}
                if not _valid_at(self.ai, rec, day):
                    return False, "not true at as_of"
        return True, None

    @staticmethod
    def repeats(row, matched, feedback=()):
        """Is the row a saved question whose every word the query repeats, or reaches through a word standing for
        it (`matched`: the query's words it matched, stand-ins included: "where do I live?" repeats 我住在哪里;
        `feedback`: words the best matches lent, which do not count)? It tells nothing the query does not."""
        if not saved_question(row):
            return False  # (most candidates: their matched words are not even counted)
        said = [t for t in matched if t not in feedback]
        return bool(said) and len(row["terms"].split()) <= len(said)

    def factor(self, row, repeat=False, own=True):
        """What the row's score is multiplied by; `repeat`: the row repeats the query (see repeats); `own`: it holds
        some of the query's own words (not only words standing for them)."""
        f = 1.0
        if not (self.as_of is not None and row["kind"] in ("state", "decision")):
            f *= STATUS_FACTOR.get(row["status"], 1.0)
        if row["salience"] is not None:
            f *= 1.0 + 0.05 * row["salience"]
        if self.times and any(overlaps(row, t["from"], t["to"]) for t in self.times):
            f *= TIME_BOOST
        if self.asks_when and row["dated"]:
            f *= WHEN_BOOST
        day = self.asks_now and row["date_from"] and _day(row["date_from"])
        if day and day <= self.today:  # (a plan dated ahead is not how things stand)
            f *= 1.0 + NOW_BOOST * 0.5 ** ((self.today - day).days / NOW_HALF_LIFE)
        if saved_question(row) and (row["length"] or 0) <= SHORT_QUESTION:
            f *= QUESTION_FACTOR if own else QUESTION_FACTOR * QUESTION_FACTOR  # asked in other words: it told less
            if row["key"].startswith(ASKED_HERE):
                f *= ASKED_HERE_FACTOR
        if repeat:
            f *= REPEAT_FACTOR
        return f


