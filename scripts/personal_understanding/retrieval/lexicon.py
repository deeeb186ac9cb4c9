"""Word lexicon for recall: a pruned base dictionary plus words learned from the archive.

The base dictionary (resources/lexicon/base_words.txt, derived from jieba's
dict.txt, see the README there) maps words to corpus frequencies. It is read
on first use and shared by every `Lexicon` in the process. The file holds one
line per first character; a line is found by binary search and parsed into a
dict only when the segmenter first meets that character, so start-up costs one
file read however large the dictionary is.

Archive words are names no dictionary knows (a friend's nickname, a pet, a game
boss). `Lexicon.add_words` gives each one a frequency just high enough that the
word beats every way the base dictionary could split it, without letting it
override unrelated dictionary words it happens to overlap.
"""

import math
import os
import threading
import unicodedata

from ..patterns import Lazy

# Han (with extensions and compatibility block), iteration/zero marks, kana and
# Hangul syllables. Kana and Hangul never match the dictionary; they are kept in
# CJK runs so unknown stretches of them are sliced the same way as unknown Han.
CJK_CLASS = (
    "\u3005\u3007\u3040-\u309f\u30a0-\u30fa\u30fc-\u30ff\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f"
)
CJK_RUN_RE = Lazy("[" + CJK_CLASS + "]+")  # its big ranges take 1.5 ms to compile: only a text with CJK does

# Full-width ASCII to ASCII, ideographic space to space, curly apostrophes to
# "'", ASCII upper to lower, a Latin letter with a diacritic to its plain letter (Zoë
# is Zoe, café cafe: names are typed both ways), and traditional Chinese characters to simplified ones
# (resources/lexicon/traditional_zh.txt: 媽 is 妈 to recall, so 我媽 meets 我妈 and the
# dictionary's words). Every mapping is one character to one character so
# offsets in the normalised text are offsets in the original.
_FOLD = {cp: cp - 0xFEE0 for cp in range(0xFF01, 0xFF5F)}
_FOLD.update({0x3000: 0x20, 0x2019: 0x27, 0x2018: 0x27, 0xFF07: 0x27})
for _cp in range(0xFF21, 0xFF3B):
    _FOLD[_cp] = _cp - 0xFEE0 + 32
_FOLD.update({cp: cp + 32 for cp in range(0x41, 0x5B)})
FOLD_TABLE = _FOLD
del _FOLD, _cp

BASE_FILE = "base_words.txt"
# Margin (natural log) by which an archive word must out-score its best split.
ARCHIVE_MARGIN = math.log(8.0)
# Archive words never score below this frequency, however rare their characters.
ARCHIVE_MIN_FREQ = 100
# A small archive's counts say little about how telling a word is: one the language uses everywhere
# (其他, 需要, 环境) points to a memory less surely than a rare one (闹钟, 咳嗽), though one text holds each.
# A query word the dictionary's corpus uses this often per million words or more keeps COMMON_SHARE of
# its weight, one used at most SPECIFIC_PER_MILLION all of it; between, by the log of its frequency.
COMMON_PER_MILLION = 60
SPECIFIC_PER_MILLION = 6
COMMON_SHARE = 0.5
_LOG_MILLION = math.log(1e6)


def normalize(text):
    """Width-fold and lower-case without changing length (offsets stay valid)."""
    return text.translate(FOLD_TABLE)


def normalize_word(word):
    """Key form of a word: width-folded, case-folded, trimmed."""
    return normalize(word).strip().casefold()


_LOCAL_RESOURCES = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))), "resources")


def _traditional():
    """{traditional code point: simplified} from resources/lexicon/traditional_zh.txt (comment lines, then
    two characters a line), read whole rather than line by line: every process pays for it (1 ms against 0.3)."""
    with open(resources_path("traditional_zh.txt"), encoding="utf-8") as fh:
        text = fh.read()
    start = 0
    while text.startswith("#", start):
        start = text.index("\n", start) + 1
    pairs = text[start:].replace("\n", "")
    if len(pairs) != 2 * (text.count("\n", start) + (not text.endswith("\n"))) or "#" in pairs:
        raise ValueError(f"{fh.name}: every line after the opening comments must be two characters")
    return str.maketrans(pairs[0::2], pairs[1::2])


def resources_path(*parts):
    """Path under resources/lexicon. The checkout's own folder is tried first so
    the common case does not import `paths` (and pathlib) at start-up."""
    base = _LOCAL_RESOURCES
    if not os.path.isdir(base):
        from .. import paths
        base = str(paths.resources_dir())
    return os.path.join(base, "lexicon", *parts)


def _plain_latin():
    """{code point: plain lower-case letter} of the Latin letters with diacritics (é, Ü, ñ, ł has none)."""
    out = {}
    for cp in range(0xC0, 0x250):
        base = unicodedata.normalize("NFD", chr(cp))[0]
        if base != chr(cp) and "a" <= base.lower() <= "z":
            out[cp] = ord(base.lower())
    return out


TRADITIONAL = _traditional()  # also read by the turn classifier, whose word lists are simplified
FOLD_TABLE.update(_plain_latin())
FOLD_TABLE.update(TRADITIONAL)


class _Base:
    """The shared base dictionary, kept as the raw UTF-8 file and parsed per bucket.

    Bucket lines are sorted by first character and UTF-8 preserves code point
    order, so a bucket is found by binary search over the bytes; start-up
    costs one file read whatever the dictionary size.
    """

    __slots__ = ("data", "body", "cache", "total", "log_total", "max_len", "size", "whole")

    def __init__(self, data, whole=None):
        self.data = data
        self.whole = whole or {}  # first character -> words recall keeps whole (whole_words_zh.txt)
        self.cache = {}
        self.total = 0
        self.max_len = 1
        self.size = 0
        pos = 0
        while data.startswith(b"# ", pos):
            end = data.index(b"\n", pos)
            key, _, value = data[pos + 2:end].decode("utf-8").partition(" ")
            if key == "total":
                self.total = int(value)
            elif key == "maxlen":
                self.max_len = int(value)
            elif key == "words":
                self.size = int(value)
            pos = end + 1
        self.body = pos
        if self.total <= 0:
            raise ValueError("base lexicon has no '# total' header")
        self.log_total = math.log(self.total)
        self.size += sum(map(len, self.whole.values()))

    def bucket(self, ch):
        """(word -> log probability, longest word length) for words starting with `ch`: a mapping
        that answers `get` and `in` (a _Line until the bucket is asked often, then a dict)."""
        got = self.cache.get(ch)
        if got is None:
            line = self._line(ch)
            got = self.cache[ch] = ({}, 1) if line is None else (_Line(self, ch, line), self.max_len)
            whole = self.whole.get(ch)
            if whole:
                longest = got[1]
                for word in whole:  # scored against splits that read this very bucket: it is cached first
                    if word not in self.cache[ch][0]:
                        value = above_splits(self, word)
                        words = self.cache[ch][0]  # (read whole meanwhile, if those splits asked it often)
                        (words.more if isinstance(words, _Line) else words)[word] = value
                        longest = max(longest, len(word))
                words, read_longest = self.cache[ch]
                got = self.cache[ch] = (words, max(longest, read_longest))
        return got

    def parsed(self, ch, line, more):
        """A bucket's line read into a dict (with `more`, the whole words scored for it), kept for later calls."""
        words, longest = self._parse(ch, line)
        words.update(more)
        longest = max([longest] + [len(word) for word in more])
        self.cache[ch] = (words, longest)
        return words

    def _line(self, ch):
        data = self.data
        key = ch.encode("utf-8", "surrogatepass")
        lo, hi = self.body, len(data)
        while lo < hi:  # lo is always the start of a line
            mid = (lo + hi) // 2
            start = data.rfind(b"\n", lo, mid) + 1 or lo
            end = data.find(b"\n", start)
            if end < 0:
                end = len(data)
            tab = data.find(b"\t", start, end)
            first = data[start:tab]
            if first == key:
                return data[tab + 1:end].decode("utf-8")
            if first < key:
                lo = end + 1
            else:
                hi = start
        return None

    def _parse(self, ch, line):
        if line is None:
            return ({}, 1)
        own, _, items = line.partition("\t")
        log = math.log
        lt = self.log_total
        words = {}
        if own != "0":
            words[ch] = log(int(own)) - lt
        longest = 1
        if items:
            for item in items.split(" "):
                suffix, _, freq = item.rpartition(":")
                words[ch + suffix] = log(int(freq)) - lt
                if len(suffix) >= longest:
                    longest = len(suffix) + 1
        return (words, longest)

    def log_prob(self, word):
        """ln(freq / total) of a base word, None if absent."""
        return self.bucket(word[0])[0].get(word) if word else None


class _Line:
    """A bucket as its line of the file, looked up word by word (" suffix:" found in the line).

    A CLI process asks a few words of each of a hundred buckets: reading each line into a dict
    cost it 1-5 ms. A bucket asked PARSE_AFTER times is read into a dict once, for the callers after."""

    __slots__ = ("base", "ch", "line", "own", "items", "more", "asked", "words")

    PARSE_AFTER = 24

    def __init__(self, base, ch, line):
        self.base, self.ch, self.line = base, ch, line
        self.own, _, items = line.partition("\t")
        self.items = " " + items + " "
        self.more = {}
        self.asked = 0
        self.words = None

    def get(self, word, default=None):
        if self.words is not None:
            return self.words.get(word, default)
        self.asked += 1
        if self.asked > self.PARSE_AFTER:
            self.words = self.base.parsed(self.ch, self.line, self.more)
            return self.words.get(word, default)
        got = self.more.get(word)
        if got is not None:
            return got
        if word == self.ch:
            return default if self.own == "0" else math.log(int(self.own)) - self.base.log_total
        if word[:1] != self.ch:
            return default
        key = " " + word[1:] + ":"
        items = self.items
        at = items.find(key)
        while at >= 0:
            start = at + len(key)
            freq = items[start:items.index(" ", start)]
            if freq.isdigit():  # not a longer suffix that holds a colon
                return math.log(int(freq)) - self.base.log_total
            at = items.find(key, at + 1)
        return default

    def __contains__(self, word):
        return self.get(word) is not None


class _EmptyBase(_Base):
    """A base with no words, for callers that want archive words only."""

    def __init__(self):
        super().__init__(b"# total 10000000\n")


_lock = threading.Lock()
_base = None
_base_lexicon = None
_word_lists = {}


def load_base():
    """The process-wide base dictionary, read on first call."""
    global _base
    if _base is None:
        with _lock:
            if _base is None:
                path = resources_path(BASE_FILE)
                try:
                    with open(path, "rb") as fh:
                        data = fh.read()
                except OSError as exc:
                    from ..errors import PuError
                    raise PuError(
                        "LEXICON_MISSING",
                        f"cannot read the base lexicon at {path}: {exc}",
                        "Reinstall: the resources folder ships with the skill and the package (maintainers rebuild the lexicon "
                        "from jieba's dict.txt with the build script under tests/perf).",
                    ) from exc
                whole = {}
                for row in data_rows("whole_words_zh"):
                    word = normalize_word(row[0])
                    whole.setdefault(word[0], []).append(word)
                _base = _Base(data, whole)
    return _base


def above_splits(base, word):
    """Log probability that lets `word` beat every way `base` could split it, by ARCHIVE_MARGIN, and
    never under ARCHIVE_MIN_FREQ's (a name of rare characters still reads as one word).

    A common dictionary word that merely overlaps it can still win on probability, so a wrongly
    learned cross-word string ("天去" from 今天去) cannot break 今天.
    """
    unknown = -base.log_total  # a character the dictionary lacks counts as frequency 1
    n = len(word)
    best = [0.0] * (n + 1)
    for i in range(n - 1, -1, -1):
        words, longest = base.bucket(word[i])
        score = words.get(word[i], unknown) + best[i + 1]
        for j in range(i + 2, min(n, i + longest) + 1):
            lp = words.get(word[i:j])
            if lp is not None and (i, j) != (0, n):
                score = max(score, lp + best[j])
        best[i] = score
    return max(best[0] + ARCHIVE_MARGIN, math.log(ARCHIVE_MIN_FREQ) - base.log_total)


def data_rows(name):
    """The rows of resources/lexicon/<name>.txt, each as its words (`#` starts a comment; empty rows are skipped)."""
    with open(resources_path(f"{name}.txt"), encoding="utf-8") as fh:
        for line in fh:
            words = line.split("#", 1)[0].split()
            if words:
                yield words


def word_list(name):
    """The normalised entries of resources/lexicon/<name>.txt, one a row, cached."""
    got = _word_lists.get(name)
    if got is None:
        got = _word_lists[name] = frozenset(normalize_word(" ".join(row)) for row in data_rows(name))
    return got


def stopwords(lang):
    """Stopword set for "zh" or "en" (resources/lexicon/stopwords_<lang>.txt), cached."""
    return word_list(f"stopwords_{lang}")


def question_words(lang):
    """Words that frame a question rather than say its content (question_words_<lang>.txt)."""
    return word_list(f"question_words_{lang}")


class Lexicon:
    """Base dictionary plus archive words.

    `contains` and `freq` take any surface form (full-width, upper case) and
    normalise it. Words already in the base dictionary keep their dictionary
    frequency when added as archive words; only unknown words are boosted.
    """

    def __init__(self, extra_words=(), *, use_base=True):
        self._use_base = use_base
        self._base = None
        self.extra = {}          # archive word -> log probability used by the segmenter
        self.extra_first = {}    # first char -> longest archive word starting with it
        self._extra_max = 0
        if extra_words:
            self.add_words(extra_words)

    @property
    def base(self):
        if self._base is None:
            self._base = load_base() if self._use_base else _EmptyBase()
        return self._base

    def add_words(self, words):
        """Learn archive words; returns how many were new.

        Ignored: words under two characters, words with whitespace (tokens
        never span it) and words the base dictionary already has.
        """
        base = self.base
        added = 0
        for raw in words:
            word = normalize_word(raw) if isinstance(raw, str) else ""
            if len(word) < 2 or word in self.extra or len(word.split()) > 1 or base.log_prob(word) is not None:
                continue
            self.extra[word] = above_splits(base, word)
            if len(word) > self.extra_first.get(word[0], 0):
                self.extra_first[word[0]] = len(word)
            self._extra_max = max(self._extra_max, len(word))
            added += 1
        return added

    def contains(self, word):
        return self.known(normalize_word(word))

    __contains__ = contains

    def known(self, key):
        """`contains` for a key that is already normalised (the segmenter's hot path)."""
        return key in self.extra or (bool(key) and self.base.log_prob(key) is not None)

    def freq(self, word):
        """Frequency used for segmentation (archive words: their calibrated value); 0 if unknown."""
        key = normalize_word(word)
        lp = self.extra.get(key)
        if lp is None and key:
            lp = self.base.log_prob(key)
        return 0 if lp is None else max(1, round(math.exp(lp + self.base.log_total)))

    def specificity(self, key):
        """Share of its query weight a normalised word keeps for how common the language finds it.

        Words the base dictionary lacks (names, the archive's own words) keep it all.
        """
        lp = self.base.log_prob(key) if key else None
        if lp is None:
            return 1.0
        per_million = lp + _LOG_MILLION
        lo, hi = math.log(SPECIFIC_PER_MILLION), math.log(COMMON_PER_MILLION)
        return max(COMMON_SHARE, 1.0 - (1.0 - COMMON_SHARE) * max(0.0, per_million - lo) / (hi - lo))

    def words_in(self, norm):
        """The archive words that occur in `norm` (a normalize()d text). Two lexicons that find the same
        ones in a text, and allow words of the same length, tokenize it alike: the segmenter asks the
        archive words only about stretches of the text."""
        first, extra, found = self.extra_first, self.extra, set()
        if first:
            end = len(norm)
            for i, ch in enumerate(norm):
                longest = first.get(ch)
                if longest:
                    found.update(w for w in (norm[i:j] for j in range(i + 2, min(end, i + longest) + 1)) if w in extra)
        return found

    def is_archive_word(self, word):
        return normalize_word(word) in self.extra

    @property
    def max_word_len(self):
        return max(self.base.max_len, self._extra_max)

    def __len__(self):
        return self.base.size + len(self.extra)


def base_lexicon():
    """The shared lexicon without archive words (cached; the dictionary itself loads lazily)."""
    global _base_lexicon
    if _base_lexicon is None:
        _base_lexicon = Lexicon()
    return _base_lexicon


def cjk_ngrams(text, n_min=2, n_max=4, lexicon=None):
    """Candidate new words in `text`: every n_min..n_max character CJK substring.

    Substrings holding a single-character Chinese stopword (的, 了, 我, ...) are
    skipped: names rarely contain one and a learned "猫的" would only add noise.
    With `lexicon`, substrings it already knows are skipped too. The caller
    counts candidates across documents and passes the recurring ones to
    `Lexicon.add_words`.
    """
    if not text or n_max < n_min or n_min < 1:
        return set()
    stop = stopwords("zh")
    out = set()
    for match in CJK_RUN_RE.finditer(normalize(text)):
        run = match.group()
        for piece in _split_on(run, stop):
            size = len(piece)
            for n in range(n_min, min(n_max, size) + 1):
                for i in range(size - n + 1):
                    out.add(piece[i:i + n])
    if lexicon is not None:
        out = {gram for gram in out if not lexicon.contains(gram)}
    return out


def _split_on(run, stop):
    start = 0
    for i, ch in enumerate(run):
        if ch in stop:
            if i > start:
                yield run[start:i]
            start = i + 1
    if start < len(run):
        yield run[start:]
