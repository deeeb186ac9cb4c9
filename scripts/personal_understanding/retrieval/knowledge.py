"""Built-in knowledge: words that stand for other words, so a question that shares
no word with the answer can still reach it.

Three data files in resources/thesaurus (written for this project, see the
README there): kinship.txt (relations and the wider words that cover them:
家人 and family reach 哥哥, 妈妈, sister), everyday.txt (sets of
interchangeable everyday words in both languages: 欠钱 借钱 owe, 头疼 头痛
headache) and topics.txt (a wider word and the things it covers: 吃 and food
reach 火锅 and pizza; pizza reaches nothing). Reads only those files; given an
archive, it keeps in its views a derived copy of what it made of them
(thesaurus.cache), which a new process reads instead of making it again.

`expansions(text, lexicon)` finds the query's words that the data knows
(Chinese by substring, a single character only as a token of its own;
English by stem) and returns, for each, the index terms it stands for, the
words behind them and the file that says so, so a row can say which bridge it
was found by.
"""

import marshal
import os
from collections.abc import Mapping

from .lexicon import normalize_word, resources_path
from .tokenizer import content_tokens, stem, tokenize

NARROW = 2  # a relation word also stands for the wider words covering at most this many relations
# The term a text is also indexed under when it names a work in 《》 (《三体》, 《流浪地球》): the data
# lists it among the things books, films and shows cover, so "我在读什么书" finds 《三体》.
WORK_TITLE = "《》"

_cache = {}


def _data_dir():
    return os.path.join(os.path.dirname(resources_path()), "thesaurus")


def _data_path(name):
    return os.path.join(_data_dir(), name)


def _lines(name):
    with open(_data_path(name), encoding="utf-8") as fh:
        for line in fh:
            line = line.split("#", 1)[0].strip()
            if line:
                yield line


def _words(text):
    """A data line's words in key form (folding works a character at a time: once per line will do)."""
    return normalize_word(text).split()


def _is_cjk(word):
    return bool(word) and max(word) > "\u2e7f"


def _key(word):
    """Lookup key of a data word: stemmed English, normalised Chinese."""
    return _normal_key(normalize_word(word))


def _normal_key(word):
    return word if _is_cjk(word) else stem(word)


_SOURCE_CODES = {"kinship": "k", "everyday": "e", "topic": "t"}  # a group's source, as a kept copy writes it
_SOURCES = {code: source for source, code in _SOURCE_CODES.items()}


class _Sets(Mapping):
    """key -> {word: source}, each entry made when first asked for: a process asks for the few
    its query holds, and making all of them (15 000 pairs) was most of a CLI call's loading."""

    def __init__(self):
        # key -> [(word, words, source)] (`words` less `word`), or that list packed as a kept copy holds it
        self._groups, self._made = {}, {}
        self._lists = ()  # the word lists packed groups name, each as its words joined by spaces
        self._keys = {}  # word -> key: a word is in several lines, and stemming them all was most of a load

    def add(self, word, words, source, itself=False):
        """`word` (normalised) stands for `words` (and for itself too where it is one of them and itself=True)."""
        key = self._keys.get(word)
        if key is None:
            key = self._keys[word] = _normal_key(word)
        self._groups.setdefault(key, []).append((None if itself else word, words, source))

    def groups(self, key):
        """[(word, words, source)] of a key."""
        groups = self._groups[key]
        if isinstance(groups, str):  # "<list number><source code><word>" each, the word empty for None
            out = []
            for part in groups.split(" "):
                at = 0
                while part[at].isdigit():
                    at += 1
                out.append((part[at + 1:] or None, self._lists[int(part[:at])].split(" "), _SOURCES[part[at]]))
            groups = out
        return groups

    def packed(self):
        """({key: groups packed as text}, the word lists they name): what a kept copy holds. Loading a
        list and a tuple for every group cost a CLI call 1.5 ms; a string a key loads in a third of that."""
        lists, packed = {}, {}
        for key in self._groups:
            packed[key] = " ".join(f"{lists.setdefault(' '.join(words), len(lists))}{_SOURCE_CODES[source]}{word or ''}"
                                   for word, words, source in self.groups(key))
        return packed, tuple(lists)

    def __contains__(self, key):
        return key in self._groups

    def __getitem__(self, key):
        made = self._made.get(key)
        if made is None:
            made = {}
            for word, words, source in self.groups(key):
                for target in words:
                    if target != word:
                        made.setdefault(target, source)
            self._made[key] = made
        return made

    def __iter__(self):
        return iter(self._groups)

    def __len__(self):
        return len(self._groups)


class Thesaurus:
    def __init__(self, kinship_lines=(), everyday_lines=(), topic_lines=()):
        self.sets = _Sets()  # key -> {word: source}: what a word stands for
        relations, covers = {}, {}
        for line in kinship_lines:
            if ":" in line and ">" not in line:
                name, _, words = line.partition(":")
                relations[name.strip()] = _words(words)
            elif ">" in line:
                words, _, names = line.partition(">")
                for word in _words(words):
                    covers[word] = names.split()
        narrow = {}  # relation -> the wider words covering it and at most NARROW-1 others
        for cover, names in covers.items():
            if len(names) <= NARROW:
                for name in names:
                    narrow.setdefault(name, []).append(cover)
        for name, words in relations.items():
            for word in words:
                self.sets.add(word, words + narrow.get(name, []), "kinship")
        # 妈, 哥, 姐: one character that names a relation says as much as a whole word (我妈下周做手术)
        self.kin_chars = frozenset(w for words in relations.values() for w in words if len(w) == 1 and _is_cjk(w))
        cover_sets = {cover: frozenset(names) for cover, names in covers.items()}
        for cover, names in covers.items():
            missing = [n for n in names if n not in relations]
            if missing:
                raise ValueError(f"kinship.txt: {cover} covers unknown relation(s) {', '.join(missing)}")
            # Other wider words for the same relations, or for narrow parts of them (sibling -> brother).
            mine = cover_sets[cover]
            alike = [c for c, other in cover_sets.items() if c != cover and other <= mine
                     and (other == mine or len(covers[c]) <= NARROW)]
            self.sets.add(cover, [w for n in names for w in relations[n]] + alike, "kinship", itself=True)
        for line in everyday_lines:
            words = _words(line)
            for word in words:
                self.sets.add(word, words, "everyday")
        for line in topic_lines:
            wider, sep, covered = line.partition(">")
            if not sep or not wider.split() or not covered.split():
                raise ValueError(f"topics.txt: {line[:40]!r} needs 'wider words > covered words'")
            wider = _words(wider)
            targets = wider + _words(covered)
            for word in wider:  # a covered word stands for nothing: pizza does not mean hotpot
                self.sets.add(word, targets, "topic")
        self.cjk_max = max((len(k) for k in self.sets if _is_cjk(k)), default=1)

    @classmethod
    def restored(cls, made):
        """The thesaurus a kept copy holds: (packed groups, word lists, kin_chars, cjk_max), as `made` returns them."""
        out = cls()
        out.sets._groups, out.sets._lists, kin_chars, out.cjk_max = made
        out.kin_chars = frozenset(kin_chars)
        return out

    def made(self):
        """What a copy keeps: (packed groups, word lists, kin_chars, cjk_max)."""
        return (*self.sets.packed(), sorted(self.kin_chars), self.cjk_max)

    def sources(self, text, lexicon=None):
        """The query's words the data knows: [(surface, key)], longest Chinese matches first, no overlaps."""
        norm = normalize_word(text or "")
        tokens = tokenize(norm, lexicon)
        singles = {t.text for t in tokens if t.kind == "cjk"}
        found, taken = [], set()
        for size in range(min(self.cjk_max, len(norm)), 0, -1):
            for i in range(len(norm) - size + 1):
                piece = norm[i:i + size]
                if piece not in self.sets or not _is_cjk(piece) or taken & set(range(i, i + size)):
                    continue
                if size == 1 and piece not in singles:
                    continue  # 哥 in 哥伦比亚 is not a brother
                found.append((i, piece, piece))
                taken |= set(range(i, i + size))
        for tok, term, _w in content_tokens(norm, lexicon):
            if tok.kind == "latin" and term in self.sets:
                # "break up" read as breakup: the word asked is the phrase, not the verb alone (broke, in the
                # archive as break, must not count as the user's word being there)
                found.append((tok.start, tok.text if stem(tok.text.lower()) == term else term, term))
            elif tok.kind == "cjk" and term in self.sets and term not in norm:
                found.append((tok.start, term, term))  # a verb the sentence splits: 捐过款 is 捐款
        return [(surface, key) for _i, surface, key in sorted(found)]

    def expansions(self, text, lexicon=None, topics=True):
        """[(surface, {term: (word, source)})]: each known word of the query, the index terms it stands for,
        and which data file says so (kinship, everyday or topic; topics=False leaves topics out)."""
        out = []
        for surface, key in self.sources(text, lexicon):
            terms = {}
            for word, source in self.sets[key].items():
                if source == "topic" and not topics:
                    continue
                for term in _terms(word, lexicon):
                    if term != key:
                        terms.setdefault(term, (word, source))
            if terms:
                out.append((surface, terms))
        return out

    def words_for(self, key):
        """The words a data word stands for (for routing to entities by name)."""
        return list(self.sets.get(_key(key), ()))


def _terms(word, lexicon):
    """Index terms of a data word: its whole words; the characters of a split word say too little (二哥 -> 二)."""
    if word == WORK_TITLE:
        return [word]
    tokens = content_tokens(word, lexicon)
    terms = [term for _tok, term, w in tokens if w >= 1.0]
    if len(terms) == 1:
        return terms
    if any(term == word for _tok, term, _w in tokens):
        return [word]  # a word the dictionary lacks (胃疼): the archive indexes it as an unknown stretch's bigram
    return [t for t in terms if len(t) > 1]


FILES = ("kinship.txt", "everyday.txt", "topics.txt")
CACHE_NAME = "thesaurus.cache"


def load(root=None):
    """The shipped thesaurus (made once per process; given an archive root, read from the copy kept in its
    views when that is current, else made and kept there)."""
    got = _cache.get("shipped")
    if got is None:
        path = signature = None
        if root is not None:
            try:
                path, signature = _cache_path(root), _signature()
            except OSError:
                path = None  # data it cannot list: no copy, the thesaurus is made each time
        made = _read_cache(path, signature) if path is not None else None
        if made is not None:
            got = Thesaurus.restored(made)
        else:
            got = Thesaurus(*(_lines(name) for name in FILES))
            if path is not None:
                _keep(root, path, signature, got)
        _cache["shipped"] = got
    return got


def _cache_path(root):
    from .. import paths

    return paths.views_dir(root) / CACHE_NAME


def _signature():
    """What a kept copy was made from: every data file and module that shapes it (a word's key is stemmed
    and folded by tokenizer and lexicon, with their word lists), by size and modification time."""
    here = os.path.dirname(os.path.abspath(__file__))
    folders = (_data_dir(), resources_path(), here)
    out = []
    for folder in folders:
        for name in sorted(os.listdir(folder)):
            if name.endswith((".txt", ".py")):
                st = os.stat(os.path.join(folder, name))
                out.append((name, st.st_size, st.st_mtime_ns))
    return tuple(out)


def _read_cache(path, signature):
    """(packed groups, word lists, kin_chars, cjk_max) from the kept copy, or None when it is missing, stale (made from
    other data than `signature` names) or unreadable."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))  # a link planted there is not followed
        with open(fd, "rb") as fh:
            kept, made = marshal.loads(fh.read())
        if kept != signature or not isinstance(made, tuple) or len(made) != 4 \
                or not isinstance(made[0], dict) or not isinstance(made[1], tuple) \
                or not all(isinstance(text, str) for text in (*made[0].values(), *made[1])):
            return None
        return made
    except (OSError, EOFError, ValueError, TypeError):
        return None


def _keep(root, path, signature, thesaurus):
    from .. import storage
    from ..errors import PuError

    try:
        storage.write_derived(root, path, marshal.dumps((signature, thesaurus.made())))
    except (PuError, OSError):
        pass  # a folder it cannot write: the next process makes it again
