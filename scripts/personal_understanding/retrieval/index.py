"""The recall index: postings over records and captures, kept in the derived SQLite file.

It follows the archive index's change log (records, captures and tombstones
changed since the last sequence number it saw, which it then drops), so a new
capture or record is searchable after an incremental update of its own document,
never a rebuild. When the archive index is rebuilt (its generation changes) or
the tokenizer changes (RECALL_VERSION), the recall tables are rebuilt from the
captures and records the archive index holds.

It also learns the archive lexicon: any 2-4 character CJK string that the
dictionary cannot segment (a nickname, a pet, a game boss) and that occurs in at
least two different documents becomes a word, and the document that first held
it is re-indexed with it.
"""

import contextlib
import datetime as dt
import json
import re
import sqlite3
import threading
import time

from .. import archive_index, paths, schema, storage
from ..archive_index import open_index, rows_in
from ..capture import read_capture
from ..errors import PuError
from ..patterns import Lazy
from . import knowledge
from .knowledge import WORK_TITLE
from .lexicon import Lexicon, normalize, normalize_word, stopwords
from .tokenizer import content_tokens, tokenize

RECALL_VERSION = "71"
TITLE_WEIGHT = 2.0  # a title counts twice: it names what the record is about
TITLE_CHARS = 80  # a capture's title is its first characters
BUILD_CHUNK = 2000  # documents per transaction when the recall index is built from nothing (see refresh)
BUILD_WAIT = 1.0  # seconds a read waits for another's build before it answers INDEX_BUILDING
BUILD_PAUSE = 0.11  # seconds between two chunks: longer than SQLite's longest busy wait (0.1 s), so a writer gets in
MIXED_PART_WEIGHT = 0.5  # 鬼泣5 is also findable as 鬼泣
SUBWORD_WEIGHT = 0.5  # 游泳馆 is also findable as 游泳, at half weight
SPEAKER_WEIGHT = 0.5  # a turn is findable by who said it ("what did Anna say about...")
WORK_TITLE_WEIGHT = 0.5  # ... and by naming a book, film or show in 《》 (see knowledge.WORK_TITLE)
_WORK_TITLE = Lazy(r"《[^《》\n]{1,40}》")
DENSITY_SCALE = 1 << 22  # 1/2048 and 1/2047 still differ; the largest value fits in three bytes
ROW_CACHE = 40000  # document rows a reading process keeps (about 20 MB)

# Words that put a turn at a time (a cheap test; the query side resolves real expressions).
TIME_WORDS = Lazy(
    r"(?<![a-z])(?:yesterday|today|tonight|tomorrow|ago|last|next|week|weekend|month|year|morning|afternoon|evening"
    r"|night|monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|june|july"
    r"|august|september|october|november|december|recently|lately|soon|(?:19|20)\d\d|may(?=\s+\d)"
    r"|in\s+(?:[a-z0-9]+\s+){1,3}(?:days?|weeks?|months?|years?)|(?:days?|weeks?|months?|years?)\s+from\s+(?:now|today))"
    r"(?![a-z])"
    r"|昨天|今天|明天|前天|后天|上周|下周|这周|本周|周末|周[一二三四五六日天]|星期|礼拜|去年|今年|明年|前年|上个月|下个月|这个月"
    r"|刚才|刚刚|最近"
    r"|早上|上午|中午|下午|晚上|那天|\d+[年月日号点]|[一二三四五六七八九十两几半\d]+(?:年|个月|天|周)(?:以|之)?[前后]|(?:过|还有)[一二三四五六七八九十两几半\d]+个?(?:天|周|星期|礼拜|月|年)|十?[一二三四五六七八九十]月", re.I)

ASKS_MARKED, ASKS_UNMARKED = 1, 2  # rdocs.asks: a question mark; a question typed without one
# 我会开车吗, 我妈身体怎么样, 我晚上吃的什么, 面试怎么样了, 她去哪了呢; "do I have any pets", "what happened to my ankle"
_ZH_ASKS = Lazy(r"(?:吗|么|怎么样|如何|啥|哪[儿里]?|几点|多少|(?<!没)什么|谁|(?<![好这那前])几(?:[个次天年岁]|年级))[了呢]{0,2}[啊呀哈啦]?"
                r"[\s。.!！~～…]*$")
_EN_ASKS = Lazy(r"^\W*(?:what|how|who|where|when|why|which|do|does|did|is|are|am|was|were|can|could|have|has)(?![a-z'])",
                re.I)


# 家里谁住院了, 我在看什么剧, 周末去哪玩, 房贷情况, 考驾照进展 ask; 谁都不理我, 没什么事, 什么都没干, 买了水果什么的,
# 哪怕, 没什么情况 tell
_ZH_SHORT_ASKS = Lazy(r"谁(?![都也])|(?<!没)什么(?![都也的情])|哪(?!怕)|(?<!什么)(?:情况|进展|近况|进度)[呢啊]?$")
SHORT_ASK_CHARS = 12  # ... in a text this short: a longer one may tell who did what


def asks(text):
    """ASKS_MARKED, ASKS_UNMARKED or 0: does the turn ask something?"""
    if "?" in text or "？" in text:
        return ASKS_MARKED
    if _ZH_ASKS.search(text) or _EN_ASKS.match(text):
        return ASKS_UNMARKED
    return ASKS_UNMARKED if len(text) <= SHORT_ASK_CHARS and _ZH_SHORT_ASKS.search(text) else 0


def text_terms(text, lex):
    """What indexing a text with `lex` reads from it: (text, max_word_len, archive words in it, candidate
    words, {term: weight}); _add takes it from another process (ahead.py) when the first three match."""
    tokens = tokenize(text, lex)
    return (text, lex.max_word_len, lex.words_in(normalize(text)), candidate_words(text, tokens),
            weighted_terms(text, lex, 1.0, tokens=tokens))


def capture_day(capture):
    """The day a capture's time expressions are read against: when it was said, else when it was saved."""
    return (capture.get("occurred_at") or capture.get("captured_at") or "")[:10] or None


def capture_reading(text, when):
    """(asks, dated, told_from, told_to) of a turn's text said on the day `when`: whether it asks
    something, whether it names a time (a turn that does answers "when ..."), and the days it tells of."""
    dated = int(bool(TIME_WORDS.search(text)))
    told_from, told_to = told_span(text, when) if dated else (None, None)
    return asks(text), dated, told_from, told_to


TOLD_CHARS = 400  # a turn's time is read off its start: a long text mentions many
TOLD_MAX_DAYS = 31  # 去年 or "this year" is no day a turn is about


def told_span(text, said):
    """The days a turn says it is about, read against the day it was said: "went hiking last saturday"
    said on a Wednesday is about that Saturday. (from, to) of its first such expression that lies wholly
    before or after the day it was said and spans at most TOLD_MAX_DAYS; (None, None) otherwise."""
    if not said:
        return None, None
    from .timeexpr import resolve  # its rules are compiled only for turns that name a time

    try:
        day = dt.date.fromisoformat(said)
    except ValueError:
        return None, None
    for t in resolve(text[:TOLD_CHARS], day):
        if t["to"] < said or t["from"] > said:
            span = (dt.date.fromisoformat(t["to"]) - dt.date.fromisoformat(t["from"])).days + 1
            if span <= TOLD_MAX_DAYS:
                return t["from"], t["to"]
    return None, None


CHANNEL_OF_KIND = {
    "event": "timeline", "state": "timeline", "decision": "timeline",
    "fact": "knowledge", "preference": "knowledge", "rule": "knowledge", "model": "knowledge",
    "value": "knowledge", "heuristic": "knowledge", "context": "knowledge", "fragment": "knowledge",
    "hypothesis": "knowledge", "intent": "knowledge", "entity": "entities",
}
CHANNELS = ("timeline", "knowledge", "entities", "verbatim")
TEXT_FIELDS = ("summary", "what_happened", "felt_then", "user_interpretation", "impact", "meaning_now", "claim",
               "mechanism", "scope", "phase")
LIST_FIELDS = ("aliases", "alternatives", "tags", "unresolved_referents")
HIDDEN_STATUSES = ("redirected", "forgotten")
USUAL_STATUS = "current"  # a record's status as rdocs leaves it out (NULL)


def _channel_of(kind):
    return CHANNEL_OF_KIND.get(kind, "knowledge")


def _channel_read(doc, channel, kind):
    """A document's channel as rdocs keeps it: NULL for a capture's (verbatim) or a record kind's usual one."""
    return channel or (_channel_of(kind) if doc & 1 else "verbatim")


_DDL = """
CREATE TABLE IF NOT EXISTS rdocs (
    doc INTEGER PRIMARY KEY, channel TEXT, kind TEXT, status TEXT, length REAL,
    date_from TEXT, date_to TEXT, told_from TEXT, told_to TEXT, salience INTEGER, sensitivity TEXT, domain TEXT,
    phase TEXT, episode INTEGER, asks INTEGER, dated INTEGER, own INTEGER, speaker TEXT, title TEXT, ngrams TEXT,
    terms TEXT);
CREATE INDEX IF NOT EXISTS rdocs_date ON rdocs(date_from);
CREATE INDEX IF NOT EXISTS rdocs_told ON rdocs(told_from) WHERE told_from IS NOT NULL;
CREATE INDEX IF NOT EXISTS rdocs_sensitive ON rdocs(sensitivity) WHERE sensitivity IS NOT NULL;
CREATE TABLE IF NOT EXISTS rpost (term INTEGER, density INTEGER, doc INTEGER, tf REAL,
    PRIMARY KEY (term, density DESC, doc)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rterms (id INTEGER PRIMARY KEY, term TEXT UNIQUE, df INTEGER);
CREATE TABLE IF NOT EXISTS rstats (channel TEXT PRIMARY KEY, n INTEGER, total REAL);
CREATE TABLE IF NOT EXISTS rngrams (ngram TEXT PRIMARY KEY, df INTEGER, first TEXT) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rwords (word TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rspeakers (speaker TEXT PRIMARY KEY, n INTEGER) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS raliases (alias TEXT, entity TEXT, PRIMARY KEY (alias, entity)) WITHOUT ROWID;
"""
_TABLES = ("rdocs", "rpost", "rterms", "rstats", "rngrams", "rwords", "raliases", "rspeakers")
# What a document can be: (archive index table, its id column, key prefix, the document number's last bit).
# A document's number is its row's rowid in that table, doubled, plus the bit (see RecallIndex._docs_of).
_SOURCES = (("captures", "capture_id", "c:", 0), ("records", "id", "r:", 1))


def date_range(start, end=None):
    """Inclusive (from, to) days of a partial date span; (None, None) when unknown."""
    if not isinstance(start, str) or not start:
        return None, None
    last = end if isinstance(end, str) and end else start
    return _first_day(start), _last_day(last)


def _first_day(value):
    parts = value.split("-")
    return "-".join(parts + ["01"] * (3 - len(parts)))


def _last_day(value):
    parts = value.split("-")
    if len(parts) == 1:
        return f"{parts[0]}-12-31"
    if len(parts) == 2:
        year, month = int(parts[0]), int(parts[1])
        days = [31, 29 if (year % 4 == 0 and year % 100 != 0) or year % 400 == 0 else 28,
                31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return f"{parts[0]}-{parts[1]}-{days:02d}"
    return value


def record_text(rec):
    """(title, body) that a record is found by."""
    body = [rec.get(f) for f in TEXT_FIELDS if isinstance(rec.get(f), str)]
    for field in LIST_FIELDS:
        body += [v for v in rec.get(field) or () if isinstance(v, str)]
    return rec.get("title") or "", "\n".join(body)


def candidate_words(text, tokens=None):
    """Strings the dictionary could not segment: runs of single CJK characters and mixed names."""
    stop = stopwords("zh")
    tokens = tokens if tokens is not None else tokenize(text)
    out, run = set(), []
    singles = sorted((t for t in tokens if t.kind == "cjk" and len(t.text) == 1 and t.text not in stop),
                     key=lambda t: t.start)
    for tok in singles:
        if run and run[-1].end != tok.start:
            _run_ngrams(run, out)
            run = []
        run.append(tok)
    _run_ngrams(run, out)
    out |= {t.text for t in tokens if t.kind == "mixed" and 2 <= len(t.text) <= 6}
    return out


def _run_ngrams(run, out):
    if len(run) < 2:
        return
    chars = "".join(t.text for t in run)
    for n in range(2, min(4, len(chars)) + 1):
        for i in range(len(chars) - n + 1):
            out.add(chars[i:i + n])


def weighted_terms(text, lexicon, weight=1.0, collapse=False, tokens=None):
    """{term: weight summed over occurrences}.

    A long Chinese word also yields the dictionary words inside it (游泳馆 ->
    游泳) and a mixed name its CJK part (鬼泣5 -> 鬼泣), each at half weight,
    so a general word finds the specific one. collapse=True (queries) keeps the
    strongest occurrence of a term instead of adding repeats.
    """
    terms = {}
    zh_stop = stopwords("zh")
    add = (lambda t, w: terms.__setitem__(t, max(terms.get(t, 0.0), w))) if collapse else \
        (lambda t, w: terms.__setitem__(t, terms.get(t, 0.0) + w))
    for tok, term, w in content_tokens(text, lexicon, tokens):
        add(term, w * weight)
        if tok.kind == "mixed":
            cjk = "".join(ch for ch in tok.text if ord(ch) > 0x2e7f)
            if len(cjk) >= 2:
                add(cjk, MIXED_PART_WEIGHT * weight)
        elif tok.kind == "cjk" and not tok.oov and len(term) >= 3:
            for size in range(2, len(term)):
                for i in range(len(term) - size + 1):
                    part = term[i:i + size]
                    if part not in zh_stop and lexicon.known(part):
                        add(part, SUBWORD_WEIGHT * w * weight)
    return terms


_BUILDER = {"thread": None}  # the thread of this process that builds from nothing, if one is set


@contextlib.contextmanager
def builder_thread():
    """While it lasts, only the calling thread builds the recall index from nothing in this process.

    A server's start-up runs in one: a tool call in another thread that needs the index
    meanwhile waits BUILD_WAIT and answers INDEX_BUILDING, rather than claiming the build
    first (it can win the race when both waited for the archive index) and keeping the turn
    for the whole build (a minute and a half at 100 000 messages).
    """
    _BUILDER["thread"] = threading.get_ident()
    try:
        yield
    finally:
        _BUILDER["thread"] = None


class RecallIndex:
    def __init__(self, archive_index):
        self.ai = archive_index
        self.db = archive_index.db
        columns = [r[1] for r in self.db.execute("PRAGMA table_info(rdocs)")]
        vocabulary = [r[1] for r in self.db.execute("PRAGMA table_info(rterms)")]
        postings = self.db.execute("SELECT sql FROM sqlite_master WHERE name='rpost'").fetchone()
        if (columns and columns != list(DOC_FIELDS) + ["ngrams", "terms"]) or (vocabulary and "id" not in vocabulary) \
                or (postings and "density INTEGER" not in postings[0]):
            # an older layout: derived, so start over
            for table in _TABLES + ("rbuild",):
                self.db.execute(f"DROP TABLE IF EXISTS {table}")
            self.db.execute("DELETE FROM meta WHERE key IN ('recall_version', 'recall_seq', 'recall_generation', 'recall_build')")
        self.db.executescript(_DDL)
        self._lexicon = None
        self._lexicon_words = -1
        self._writing = False  # inside refresh's write transaction: only this connection changes the words
        self._lexicon_fresh = False
        self._parts, self._parts_lexicon = {}, None
        self.known_docs = {}
        self.known_readings = {}  # capture_id -> (text, when, capture_reading, text_terms) worked out ahead (ahead.py)
        self._rows = {}  # doc -> row, for documents read before (a warm process reads the same ones again)
        self._epoch = None
        self._builder = None  # descriptor holding views/recall-build.lock while this connection builds

    # --- lexicon ------------------------------------------------------------
    def lexicon(self):
        if self._writing and self._lexicon is not None and self._lexicon_fresh:
            return self._lexicon  # checked since the write began (learning or dropping a word resets it)
        count = self.db.execute("SELECT COUNT(*) FROM rwords").fetchone()[0]
        if self._lexicon is None or count != self._lexicon_words:
            self._lexicon = Lexicon([r[0] for r in self.db.execute("SELECT word FROM rwords")])
            self._lexicon_words = count
        self._lexicon_fresh = self._writing
        return self._lexicon

    def thesaurus(self):
        """The shipped thesaurus, read from the copy kept in this archive's views once one is made."""
        return knowledge.load(None if self.ai.in_memory else self.ai.root)

    def archive_words(self):
        return [r[0] for r in self.db.execute("SELECT word FROM rwords ORDER BY word")]

    # --- catching up ----------------------------------------------------------
    def _meta(self, key, default=None):
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    def _set_meta(self, key, value):
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, str(value)))

    def _current(self):
        return (self._meta("recall_version") == RECALL_VERSION
                and self._meta("recall_generation") == str(self.ai.generation()))

    def _check_rows(self):
        """Drop the cached rows when another connection changed documents since this one last looked."""
        epoch = self._meta("recall_epoch", "0")
        if epoch != self._epoch:
            self._rows.clear()
            self._epoch = epoch
        return epoch

    def refresh(self):
        """Index what changed since the last refresh. Returns the number of documents touched.

        A build from nothing goes BUILD_CHUNK documents per transaction, its place kept in the
        index: another writer (a capture) waits for one chunk, not the whole build, and whoever
        opens the index next (another process, or this one after a crash) carries on from there.
        """
        touched = 0
        while True:
            self._check_rows()
            current = self._current()
            seq = int(self._meta("recall_seq", "0")) if current else -1
            if current and not self.db.execute("SELECT 1 FROM changes WHERE seq > ? LIMIT 1", (seq,)).fetchone():
                self._end_build()
                return touched
            if not current and not self._claim_build():
                if not self._await_build():
                    raise self._building()
                continue
            self.db.execute("BEGIN IMMEDIATE")
            self._writing, self._lexicon_fresh = True, False
            try:
                epoch = self._check_rows()
                if not self._current():
                    count, seq, done = self._build_step()
                else:
                    seq = int(self._meta("recall_seq", "0"))
                    changes = self.ai.changes_since(seq)  # (another process may have caught up meanwhile: then none)
                    seq = changes[-1][0] if changes else seq
                    count = sum(self._reindex(key) for key in dict.fromkeys(key for _seq, key in changes))
                    done = True
                if count:
                    self._epoch = str(int(epoch) + 1)  # this connection's rows were dropped document by document
                    self._set_meta("recall_epoch", self._epoch)
                if done:
                    self._set_meta("recall_seq", seq)
                    self._set_meta("recall_version", RECALL_VERSION)
                    self._set_meta("recall_generation", self.ai.generation())
                    self.db.execute("DELETE FROM changes WHERE seq < ?", (seq,))  # consumed (the last one keeps the count)
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                self._lexicon = None
                self._rows.clear()
                self._epoch = None
                self._end_build()  # the next one to open the index carries the build on
                raise
            finally:
                self._writing = False
            touched += count
            if not done:
                time.sleep(BUILD_PAUSE)  # a builder that begins again at once starves every other writer

    def _claim_build(self):
        """True when this connection may build: it holds views/recall-build.lock (or the index is in memory)."""
        host = _BUILDER["thread"]
        if host is not None and host != threading.get_ident() and not self.ai.in_memory:
            return False  # this process's builder (a server's start-up) is on it, or about to be
        if self._builder is None and not self.ai.in_memory:
            try:
                self._builder = storage.try_file_lock(self.ai.root, paths.recall_build_lock_path(self.ai.root))
            except OSError:  # a full or read-only disk: the build's own writes fail and it moves to memory
                return True
            return self._builder is not None
        return True

    def _await_build(self):
        """Wait up to BUILD_WAIT for another's build to end (a small archive's takes less): True once it has."""
        deadline = time.monotonic() + BUILD_WAIT
        while time.monotonic() < deadline:
            time.sleep(0.02)
            if self._current() or self._claim_build():
                return True
        return False

    def _end_build(self):
        if self._builder is not None:
            builder, self._builder = self._builder, None
            storage.release_file_lock(builder)

    def _building(self):
        """INDEX_BUILDING: another process or thread (a server starting up) is building the recall index."""
        build = json.loads(self._meta("recall_build") or "null") or {}
        total = sum(self.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for table, *_rest in _SOURCES)
        done = min(build.get("done", 0), total)
        return PuError("INDEX_BUILDING",
                       f"the recall index is being built from the archive ({done} of {total} documents so far) "
                       "by another process or the server's start-up",
                       "It is rebuilt after an update or a copy of the archive (about a minute at 100 000 messages); "
                       "what the user says is still saved meanwhile. Retry the read in a minute.",
                       {"documents_built": done, "documents": total})

    def _build_step(self):
        """One chunk of a build from nothing: (documents indexed, changes seq it covers, finished).

        The build goes through the archive index's captures and records in the order of their
        document numbers, so each new row of rdocs lands at its table's end (rows put between
        others split pages and left them half full); meta 'recall_build' says where it got to
        (the last document number done). No list of what is to come is written: at 100 000
        messages such a list left megabytes of free pages in the file. A row the archive index
        adds meanwhile comes later in that order or among the changes after the build's seq,
        which are caught up afterwards.
        """
        build = json.loads(self._meta("recall_build") or "null")
        mine = self._meta("recall_version") == "building:" + RECALL_VERSION  # not rebuilt since by another version
        if not mine or not build or build.get("version") != RECALL_VERSION or "after" not in build \
                or build.get("generation") != str(self.ai.generation()):
            for table in _TABLES:
                self.db.execute(f"DELETE FROM {table}")
            self.db.execute("DROP TABLE IF EXISTS rbuild")  # the list of keys to do that builds kept up to version 17
            self._set_meta("recall_version", "building:" + RECALL_VERSION)
            self._lexicon = None
            build = {"version": RECALL_VERSION, "generation": str(self.ai.generation()),
                     "seq": self.db.execute("SELECT COALESCE(MAX(seq), 0) FROM changes").fetchone()[0],
                     "after": 0, "done": 0}
        after, todo = build["after"], []
        for table, column, prefix, bit in _SOURCES:  # the rows after the last document done, bit by bit
            todo += [(rowid << 1 | bit, prefix + item) for rowid, item in self.db.execute(
                f"SELECT rowid, {column} FROM {table} WHERE rowid > ? ORDER BY rowid LIMIT ?",
                ((after - bit) >> 1, BUILD_CHUNK)).fetchall()]
        done = len(todo) < BUILD_CHUNK  # then neither table had a chunk's worth left
        todo = sorted(todo)[:BUILD_CHUNK]
        count = sum(self._reindex(key, doc=doc) for doc, key in todo)
        build["done"] += count
        if done:
            self.db.execute("DELETE FROM meta WHERE key='recall_build'")
        else:
            build["after"] = todo[-1][0]
            self._set_meta("recall_build", json.dumps(build))
        return count, build["seq"], done

    def _reindex(self, key, learn=True, doc=None):
        """Rebuild one document (`doc`: its number, when the caller has it). learn=False re-tokenizes with
        new words but leaves word counts alone."""
        kind, item = key[0], key[2:]
        if kind == "t":
            return self._remove("r:" + item) + self._remove("c:" + item)
        doc = self._doc_of(key) if doc is None else doc
        self._remove(key, doc, keep_counts=not learn)
        if doc is None:
            return 1  # not in the archive index (any more): nothing to find it by
        if kind == "r":
            rec = self.ai.record(item)
            if rec is None or rec.get("status") in HIDDEN_STATUSES or self.ai.tombstoned(item):
                return 1
            self._add_record(rec, doc, learn)
        elif kind == "c":
            row = self.ai.capture(item)
            if row is None or row.get("status") == "forgotten" or row.get("kind") != "text":
                return 1
            words = self.known_docs.get(item)
            try:
                words = words if words is not None and words.get("utf8_sha256") == row.get("utf8_sha256") else \
                    read_capture(self.ai.root, row["path"])
            except PuError:
                return 1
            self._add_capture(row, words, doc, learn)
        return 1

    def _add_record(self, rec, doc, learn):
        kind = rec.get("kind")
        channel = usual = _channel_of(kind)
        if kind == "entity":
            if rec.get("entity_type") == "concept":
                channel = "knowledge"
            names = [rec.get("title")] + list(rec.get("aliases") or ())
            self.db.executemany("INSERT OR IGNORE INTO raliases VALUES (?, ?)",
                                [(normalize_word(n), rec["id"]) for n in names if isinstance(n, str) and n.strip()])
        title, body = record_text(rec)
        lo, hi = date_range(rec.get("date_start"), rec.get("date_end"))
        cited = sorted(schema.cited_captures(rec))
        # Records from one capture share its episode (see episode_of): kept as that capture's document number.
        episode = self._doc_of("c:" + cited[0]) if cited else None
        sensitivity = rec.get("sensitivity") if rec.get("sensitivity") != schema.USUAL["sensitivity"] else None
        status = rec.get("status") if rec.get("status") != USUAL_STATUS else None
        meta = (channel if channel != usual else None, kind, status, lo, hi if hi != lo else None,
                None, None, rec.get("salience"), sensitivity, rec.get("domain"), rec.get("phase"), episode, None, 0,
                int(lo is not None), None, None)
        self._add("r:" + rec["id"], doc, [(title, TITLE_WEIGHT), (body, 1.0)], meta, learn, channel)

    def _add_capture(self, row, words, doc, learn):
        when = capture_day(row)
        text = words.get("text") or ""
        known = self.known_readings.get(row["capture_id"])
        if known and known[0] == text and known[1] == when:
            (asked, dated, told_from, told_to), ahead = known[2], known[3]
        else:
            (asked, dated, told_from, told_to), ahead = capture_reading(text, when), None
        own = int(words.get("role", "user") == "user")  # the archive owner's words, or the other party's
        speaker = normalize_word(row.get("speaker") or "") or None
        meta = (None, None, None, when, None, told_from, told_to, None, None, None, None,
                None, text[:TITLE_CHARS], asked, dated, own, speaker)
        parts = [(words.get("text") or "", 1.0)]
        if row.get("speaker") not in (None, "", "user"):
            parts.append((row["speaker"], SPEAKER_WEIGHT))
        self._add("c:" + row["capture_id"], doc, parts, meta, learn, "verbatim", ahead)

    def _add(self, key, doc, parts, meta, learn, channel, ahead=None):
        """Index one document. Parts weighed below 1 (the speaker) add findability, not length or words.

        `ahead`: text_terms of the first part, worked out in another process with another lexicon
        (retrieval/ahead.py), taken when it finds the same archive words in that text as this one."""
        lex = self.lexicon()
        grams, tokens, done = set(), {}, {}
        if ahead is not None and parts and ahead[0] == parts[0][0] and ahead[1] == lex.max_word_len \
                and ahead[2] == lex.words_in(normalize(parts[0][0])):
            done[0] = ahead[4]
            grams |= ahead[3]
        for n, (text, weight) in enumerate(parts):
            if text and weight >= 1.0 and n not in done:
                tokens[n] = tokenize(text, lex)
                grams |= candidate_words(text, tokens[n])
        if learn and self._count_grams(key, grams):
            lex = self.lexicon()  # new archive words: tokenize with them
            promoted = self._promoted
            tokens, done = {}, {}
        else:
            promoted = []
        terms, length = {}, 0.0
        for n, (text, weight) in enumerate(parts):
            if not text:
                continue
            part = done[n] if n in done else weighted_terms(text, lex, weight, tokens=tokens.get(n)) if weight >= 1.0 \
                else self._part_terms(text, lex, weight)
            for term, w in part.items():
                terms[term] = terms.get(term, 0.0) + w
            if weight >= 1.0:
                length += sum(part.values())
                if "《" in text and WORK_TITLE not in terms and _WORK_TITLE.search(text):
                    terms[WORK_TITLE] = WORK_TITLE_WEIGHT  # findability, not length
        self.db.executemany("INSERT INTO rterms (term, df) VALUES (?, 1) ON CONFLICT(term) DO UPDATE SET df = df + 1",
                            [(t,) for t in terms])
        ids = self._term_ids(terms)
        self.db.execute(
            "INSERT INTO rdocs (doc, channel, kind, status, date_from, date_to, told_from, told_to, salience, sensitivity,"
            " domain, phase, episode, title, asks, dated, own, speaker, length, ngrams, terms)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (doc,) + meta + (length, json.dumps(sorted(grams), ensure_ascii=False) if grams else None,
                             _pack_terms((ids[t], tf) for t, tf in terms.items())))
        self.db.executemany("INSERT INTO rpost VALUES (?, ?, ?, ?)",
                            [(ids[t], _density(tf, length), doc, tf) for t, tf in terms.items()])
        self.db.execute("INSERT INTO rstats VALUES (?, 1, ?) ON CONFLICT(channel) DO UPDATE SET n = n + 1, total = total + ?",
                        (channel, length, length))
        if meta[-1]:  # the speaker
            self.db.execute("INSERT INTO rspeakers VALUES (?, 1) ON CONFLICT(speaker) DO UPDATE SET n = n + 1", (meta[-1],))
        for first in promoted:
            if first != key:
                self._reindex(first, learn=False)

    def _part_terms(self, text, lex, weight):
        """Terms of a short part that repeats across documents (a speaker's name), tokenized once per lexicon."""
        if self._parts_lexicon is not lex or len(self._parts) > 4096:
            self._parts, self._parts_lexicon = {}, lex
        found = self._parts.get((text, weight))
        if found is None:
            found = self._parts[(text, weight)] = weighted_terms(text, lex, weight)
        return found

    def _count_grams(self, key, grams):
        """Count candidate words; those reaching two documents become archive words.

        Returns True when some did; self._promoted then names the documents to re-index.
        """
        promoted = []
        for gram in grams:
            row = self.db.execute("SELECT df, first FROM rngrams WHERE ngram=?", (gram,)).fetchone()
            if row is None:
                self.db.execute("INSERT INTO rngrams VALUES (?, 1, ?)", (gram, key))
                continue
            self.db.execute("UPDATE rngrams SET df = df + 1 WHERE ngram=?", (gram,))
            if row[0] + 1 == 2:
                self.db.execute("INSERT OR IGNORE INTO rwords VALUES (?)", (gram,))
                self._lexicon = None
                promoted.append(row[1])
        self._promoted = list(dict.fromkeys(promoted))
        return bool(self._promoted)

    def _remove(self, key, doc=None, keep_counts=False):
        doc = self._doc_of(key) if doc is None else doc
        row = None if doc is None else \
            self.db.execute("SELECT channel, kind, length, ngrams, speaker, terms FROM rdocs WHERE doc=?", (doc,)).fetchone()
        if row is None:
            if key.startswith("r:"):
                self.db.execute("DELETE FROM raliases WHERE entity=?", (key[2:],))
            return 0
        channel, kind, length, grams, speaker, ids = row
        channel = _channel_read(doc, channel, kind)
        self._rows.pop(doc, None)
        if speaker:
            self.db.execute("UPDATE rspeakers SET n = n - 1 WHERE speaker=?", (speaker,))
            self.db.execute("DELETE FROM rspeakers WHERE n <= 0")
        pairs = _unpack_terms(ids)
        gone = self.db.executemany("DELETE FROM rpost WHERE term=? AND density=? AND doc=?",
                                   [(t, _density(tf, length), doc) for t, tf in pairs]).rowcount
        if pairs and gone != len(pairs):  # a posting not where its weights put it: find it by term and document
            self.db.executemany("DELETE FROM rpost WHERE term=? AND doc=?", [(t, doc) for t, _tf in pairs])
        ids = [(t,) for t, _tf in pairs]
        self.db.executemany("UPDATE rterms SET df = df - 1 WHERE id=?", ids)
        self.db.executemany("DELETE FROM rterms WHERE id=? AND df <= 0", ids)
        self.db.execute("DELETE FROM rdocs WHERE doc=?", (doc,))
        self.db.execute("UPDATE rstats SET n = n - 1, total = total - ? WHERE channel=?", (length, channel))
        for gram in () if keep_counts else json.loads(grams or "[]"):
            self.db.execute("UPDATE rngrams SET df = df - 1 WHERE ngram=?", (gram,))
            left = self.db.execute("SELECT df FROM rngrams WHERE ngram=?", (gram,)).fetchone()
            if left is not None and left[0] < 2:
                self.db.execute("DELETE FROM rwords WHERE word=?", (gram,))
                self._lexicon = None
                if left[0] <= 0:
                    self.db.execute("DELETE FROM rngrams WHERE ngram=?", (gram,))
        if key.startswith("r:"):
            self.db.execute("DELETE FROM raliases WHERE entity=?", (key[2:],))
        return 1

    # --- queries --------------------------------------------------------------
    def total_docs(self):
        return self.db.execute("SELECT COALESCE(SUM(n), 0) FROM rstats").fetchone()[0]

    def channel_stats(self):
        return {ch: (n, (total / n) if n else 0.0) for ch, n, total in self.db.execute("SELECT channel, n, total FROM rstats")}

    def speakers(self):
        """{speaker: turns} of everyone whose words the archive holds (names normalised)."""
        return dict(self.db.execute("SELECT speaker, n FROM rspeakers"))

    def df(self, terms):
        return dict(rows_in(self.db, "SELECT term, df FROM rterms WHERE term IN ({marks})", terms))

    def told_somewhere(self, terms, except_key=None, question_length=0.0):
        """The terms some document other than `except_key` holds that is not a saved question of at
        most `question_length` (a short question holds nothing but what it asks)."""
        out = set()
        except_doc = self._doc_of(except_key) if except_key else None
        for term in sorted(terms):
            if self.db.execute("SELECT 1 FROM rpost p JOIN rdocs d ON d.doc = p.doc"
                               " WHERE p.term = (SELECT id FROM rterms WHERE term = ?) AND d.doc IS NOT ?"
                               " AND NOT (d.asks > 0 AND d.doc & 1 = 0 AND d.length <= ?) LIMIT 1",
                               (term, except_doc, question_length)).fetchone():
                out.add(term)
        return out

    def terms_starting(self, prefix, limit=500):
        """[(term, df)] of indexed terms that start with `prefix` (a range scan of the term table)."""
        return self.db.execute("SELECT term, df FROM rterms WHERE term >= ? AND term < ? ORDER BY term LIMIT ?",
                               (prefix, prefix + "\U0010ffff", limit)).fetchall()

    def _term_ids(self, terms):
        """{term: id} of the indexed terms among `terms` (postings name a term by its id)."""
        return {t: n for n, t in rows_in(self.db, "SELECT id, term FROM rterms WHERE term IN ({marks})", terms)}

    def postings(self, terms, within=None):
        """{term: [(doc, tf)]} for the given terms (only for documents in `within`, when given)."""
        out = {t: [] for t in terms}
        ids = self._term_ids(terms)
        if not ids:
            return out
        if within is None:  # a term at a time, (doc, tf) in doc order (the table keeps them densest first)
            for term, n in ids.items():
                out[term] = sorted(self.db.execute("SELECT doc, tf FROM rpost WHERE term=?", (n,)).fetchall())
            return out
        # Read off the documents' rows (scoring fetches those rows next: they come from the row cache then).
        keys = [(f" {n}", term) for term, n in ids.items()]
        for doc, row in sorted(self.docs(within).items()):
            packed = f" {row['terms'] or ''} "
            for key, term in keys:
                if key in packed:  # (most documents found by other words lack a given one: no call for them)
                    tf = _weight_in(packed, key)
                    if tf is not None:
                        out[term].append((doc, tf))
        return out

    def densest(self, term, limit):
        """The documents where a term weighs most for their length: [(doc, tf)] (read in that order off an index)."""
        return self.db.execute("SELECT doc, tf FROM rpost WHERE term=(SELECT id FROM rterms WHERE term=?) "
                               "ORDER BY density DESC, doc LIMIT ?", (term, limit)).fetchall()

    def doc_terms(self, docs):
        """[(term, doc, tf)] of every term the given documents are indexed under, by document and term."""
        rows = self.docs(docs)  # (the rows a query scored: from the row cache)
        pairs = [(doc, n, tf) for doc in sorted(rows) for n, tf in _unpack_terms(rows[doc]["terms"])]
        names = dict(rows_in(self.db, "SELECT id, term FROM rterms WHERE id IN ({marks})", sorted({n for _d, n, _tf in pairs})))
        out = [(names[n], doc, tf) for doc, n, tf in pairs if n in names]
        out.sort(key=lambda r: (r[1], r[0]))
        return out

    def _doc_of(self, key):
        """The document number of a key: its row's in the archive index, doubled, plus one for a record
        (the index keeps no key of its own: 14 MB with its lookup at 100 000 captures and records)."""
        found = self._docs_of([key])
        return found.get(key)

    def private_sources(self):
        """Capture ids a highly-private record cites: their words are as private as the record."""
        return {row[0] for row in self.db.execute(
            "SELECT f.target FROM rdocs d JOIN refs f ON f.record = (d.doc >> 1) AND f.rel = 'capture'"
            " WHERE d.sensitivity = 'highly-private'")}

    def _docs_of(self, keys):
        """{key: document number} of the keys the archive index holds."""
        out = {}
        for table, column, prefix, bit in _SOURCES:
            ids = [k[2:] for k in keys if k.startswith(prefix)]
            if ids:
                out.update((prefix + item, rowid << 1 | bit) for item, rowid in
                           rows_in(self.db, f"SELECT {column}, rowid FROM {table} WHERE {column} IN ({{marks}})", ids))
        return out

    def _rows_in(self, column, values):
        """Index rows whose `column` is one of `values` (asked in chunks under SQLite's parameter limit)."""
        for row in rows_in(self.db, f"SELECT {_DOC_COLUMNS} FROM rdocs WHERE {column} IN ({{marks}})", values):
            if row[-1] is not None:
                yield _row(row)

    def docs(self, doc_ids):
        """{doc: row} (rows are shared with later calls: read them, never change them)."""
        cache, out, missing = self._rows, {}, []
        for doc in doc_ids:
            row = cache.get(doc)
            if row is None:
                missing.append(doc)
            else:
                out[doc] = row
        for row in self._rows_in("doc", sorted(missing)):  # in doc order: the pages come in order too
            out[row["doc"]] = cache[row["doc"]] = row
        if len(cache) > ROW_CACHE:  # keep the most recently fetched
            for doc in list(cache)[:len(cache) - ROW_CACHE // 2]:
                del cache[doc]
        return out

    def doc_for_key(self, key):
        doc = self._doc_of(key)
        return None if doc is None else self.docs([doc]).get(doc)

    def docs_where(self, sql, args=(), limit=None):
        """Rows matching a WHERE clause over rdocs (its ORDER BY may name `key`)."""
        tail = f" LIMIT {int(limit)}" if limit else ""
        return [_row(row) for row in self.db.execute(f"SELECT {_DOC_COLUMNS} FROM rdocs WHERE {sql}{tail}", args)
                if row[-1] is not None]

    def docs_by_key(self, keys):
        """{key: row} for the given document keys."""
        return {row["key"]: row for row in self.docs(self._docs_of(keys).values()).values()}

    def entities_named(self, names):
        """[(entity, alias)] for entities whose name or alias is exactly one of `names`."""
        return rows_in(self.db, "SELECT entity, alias FROM raliases WHERE alias IN ({marks}) ORDER BY entity, alias",
                       [normalize_word(n) for n in names])

    def alias_hits(self, query):
        """{entity_id: [aliases]} for entity names and aliases that occur in the query."""
        norm = normalize_word(query)
        spans = {norm[i:j] for i in range(len(norm)) for j in range(i + 1, min(len(norm), i + 12) + 1)}
        spans = [s for s in spans if s.strip() == s and s]
        hits = {}
        for alias, entity in rows_in(self.db, "SELECT alias, entity FROM raliases WHERE alias IN ({marks})", spans):
            if latin_boundary_ok(norm, alias):
                hits.setdefault(entity, []).append(alias)
        return hits


# Columns left NULL when they say the usual: date_to (the same day as date_from), told_from and
# told_to (a turn about the day it was said; see told_span), sensitivity (ordinary), episode (the
# document itself; see episode_of), channel, kind and status (see _row), ngrams (none). A record's
# title is read from the record itself; a capture's first characters are kept (phrase.py reads them).
# In table order: the long columns (title, ngrams) last, so reading a row's scoring fields stays cheap.
DOC_FIELDS = ("doc", "channel", "kind", "status", "length", "date_from", "date_to", "told_from", "told_to",
              "salience", "sensitivity", "domain", "phase", "episode", "asks", "dated", "own", "speaker", "title")
# A row also says what it is indexed under ("id" or "id:weight" each), and its key, read off the archive
# index's row (an even document is a capture, an odd one a record).
_ROW_FIELDS = DOC_FIELDS + ("terms", "key")
_KEY_SQL = ("CASE WHEN doc & 1 THEN 'r:' || (SELECT id FROM records WHERE rowid = doc >> 1)"
            " ELSE 'c:' || (SELECT capture_id FROM captures WHERE rowid = doc >> 1) END AS key")
_DOC_COLUMNS = ", ".join(DOC_FIELDS + ("terms", _KEY_SQL))


def _row(values):
    """A document's row, with what rdocs leaves out (NULL) when it is the usual spelled out:
    a capture's channel and kind, a record's channel (its kind's) and status (current).
    (A document whose row the archive index no longer has reads a NULL key: readers pass it over.
    The archive index numbers rows anew above the old ones when it is rebuilt, so a reader that
    has not caught up yet finds nothing under an old number, never another capture or record.)"""
    row = dict(zip(_ROW_FIELDS, values))
    row["channel"] = _channel_read(row["doc"], row["channel"], row["kind"])
    if row["doc"] & 1:
        row["status"] = row["status"] or USUAL_STATUS
    else:
        row["kind"] = "capture"
    return row


def episode_of(row):
    """The conversation a document belongs to: the document of its first cited capture, else itself."""
    return row["episode"] or row["doc"]


def _density(tf, length):
    """How much a term weighs for its document's length: the order of a term's postings (densest first).
    Kept as a whole number (three bytes on disk, not a float's eight): postings are a third of the index."""
    return round(tf / max(length, 1) * DENSITY_SCALE)


def _pack_terms(pairs):
    """A document's terms as the index keeps them in its row: "id" for a weight of 1, else "id:weight"."""
    return " ".join(str(n) if tf == 1.0 else f"{n}:{tf!r}" for n, tf in pairs)


def _weight_in(packed, key):
    """The weight of one term (key " <id>") in a document's packed terms (" " on both ends); None if absent."""
    at = packed.find(key)
    while at >= 0:
        end = at + len(key)
        if packed[end] == " ":
            return 1.0
        if packed[end] == ":":
            return float(packed[end + 1:packed.index(" ", end)])
        at = packed.find(key, end)  # a longer id that starts with the same digits
    return None


def _unpack_terms(text):
    """[(term id, weight)] of a document's row (the weights exactly as indexed)."""
    out = []
    for part in (text or "").split():
        n, _sep, tf = part.partition(":")
        out.append((int(n), float(tf) if tf else 1.0))
    return out


def latin_boundary_ok(text, alias):
    """A Latin alias must stand as whole words ("mom" is not in "moment")."""
    if not alias[:1].isascii() and not alias[-1:].isascii():
        return True
    start = text.find(alias)
    while start >= 0:
        before = text[start - 1] if start else " "
        after = text[start + len(alias)] if start + len(alias) < len(text) else " "
        if not (before.isascii() and before.isalnum()) and not (after.isascii() and after.isalnum()):
            return True
        start = text.find(alias, start + 1)
    return False


_cache = {}


def open_recall(root, docs=None, readings=None):
    """The archive index, caught up, with its recall index caught up too.

    `docs` ({capture_id: document}) are captures the caller has just written: they are indexed
    from there instead of being read back. `readings` ({capture_id: (text, when, reading, terms)})
    are their capture_reading and text_terms worked out ahead (ahead.py); what does not match the
    text, its day or this lexicon is worked out again.
    """
    ai = open_index(root)
    try:
        return _caught_up(ai, docs, readings)
    except sqlite3.DatabaseError as exc:
        busy = archive_index.busy_refusal(exc)
        if busy is not None:
            raise busy from None
        if archive_index.disk_refusal(exc, ai.path) is None:
            raise
        return _caught_up(archive_index.in_memory(root), docs, readings)  # full or read-only disk: recall still works


def _caught_up(ai, docs=None, readings=None):
    key = (str(ai.path), id(ai))
    recall = _cache.get(key)
    if recall is None:
        _cache.clear()
        recall = _cache[key] = RecallIndex(ai)
    recall.known_docs, recall.known_readings = docs or {}, readings or {}
    try:
        recall.refresh()
    finally:
        recall.known_docs, recall.known_readings = {}, {}
    return recall


def build_under_way(root):
    """True while another process or thread builds the recall index from nothing (it holds the build's lock)."""
    lock = paths.recall_build_lock_path(root)
    if not lock.exists():
        return False
    try:
        held = storage.try_file_lock(root, lock)
    except OSError:  # a read-only or full disk: nothing can be building here
        return False
    if held is None:
        return True
    storage.release_file_lock(held)
    return False


def forget_cached():
    _cache.clear()
