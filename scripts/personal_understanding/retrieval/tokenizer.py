"""Tokenizer for recall: Chinese without spaces, English, numbers and mixed names.

`tokenize` returns every token with offsets into the original text;
`content_terms` keeps the ones worth indexing or querying, with a weight cap.

Chinese runs take the most probable path through the DAG of lexicon words
(sum of ln(freq/total); an unknown character counts as frequency 1). Where the
path falls back to single characters, two or more of them in a row (stopwords
excluded) form an unknown stretch, which also yields its overlapping bigrams,
`oov` unless the lexicon knows them: 阿呆呆 gives 阿 呆 呆 plus 阿呆 呆呆, so a
later query for the name matches on its bigrams while a slice straddling two
words ("呆去") carries only the OOV weight. Tokens overlap inside a stretch;
elsewhere they tile the run.

Latin/digit runs glued to CJK (no space), in order of precedence:
1. a lexicon word covering the run plus adjacent CJK (IP地址, T恤, an archive
   word such as 鬼泣5) is one token;
2. leading shape: at most 2 characters with a letter, then a single-character
   CJK word that is not a stopword: B站, 4K屏, A股, UP主;
3. trailing shape: up to 4 digits, or a letter and up to 3 digits, after a CJK
   word of 2+ characters or the last bigram of an unknown stretch: 鬼泣5,
   小米14, 华为P60; not before a unit or measure word (今天5点, 开会3小时) and
   not after time or quantity words (下午3, 大概5).
Otherwise the run splits at the script boundary.

Text is width-folded and lower-cased first (lexicon.normalize, length
preserving); English tokens are case-folded, and `content_terms` drops
stopwords and applies `stem`.
"""

import re
from collections import namedtuple

from .lexicon import CJK_RUN_RE, base_lexicon, data_rows, normalize, stopwords, word_list

Token = namedtuple("Token", "text kind oov start end")
Token.__doc__ = """One token. `text` is the normalised surface (case- and width-folded, not
stemmed); `kind` is "cjk", "latin", "mixed" or "num"; `oov` is True for a CJK
slice (or the CJK part of a mixed token) the lexicon does not know; `start` and
`end` are character offsets into the original text."""

WORD_WEIGHT = 1.0
OOV_WEIGHT = 0.4

# Word runs: letters, digits and CJK with nothing between them, joined across
# "'" inside English words and "." "," ":" inside numbers. One run is one block.
# C++/C#/F# are matched first so their symbols survive. The CJK character class
# is applied only inside non-ASCII runs (CJK_RUN_RE) because compiling big
# Unicode ranges costs milliseconds at start-up.
_WORD_RE = re.compile(
    "(?P<lang>[a-z](?:\\+\\+|#)(?![a-z0-9+#]))"
    "|[^\\W_]+(?:(?:(?<=\\d)[.,:](?=\\d)|(?<=[a-z])'(?=[a-z]))[^\\W_]+)*"
)
_LANG_TAIL = re.compile("(?:\\+\\+|#)(?![a-z0-9+#])")
_HAS_ALPHA = re.compile("[^\\W\\d_]").search
_LETTER_DIGITS = re.compile("[a-z][0-9]{1,3}").fullmatch

# A number followed by one of these counts something; it is not part of a name.
_UNIT_CHARS = frozenset(
    "个只条件张本块元角分秒点时岁年月日号次回遍天周楼层米斤克吨升里公千万亿百十"
    "倍位名人台部集章节页道题杯瓶碗份家度届期级场首篇颗粒双对套间辆架艘码寸尺毫厘成折多余左"
)
_UNIT_WORDS = frozenset("以上 以下 以内 以后 以前 小时 星期 礼拜 刻钟".split())
# Words that are followed by a time or a quantity, not by a sequel number.
_NUMBER_CONTEXT = frozenset((
    "今年 去年 明年 前年 后年 今天 明天 昨天 前天 后天 早上 上午 中午 下午 晚上 凌晨 傍晚 "
    "每天 每年 每月 每周 大约 大概 一共 总共 将近 至少 最多 超过 只有 还有 差不多 "
    "排名 价格 预算 花费 大于 小于 等于 加上 减去 乘以 除以 还剩 剩下 约合 合计 共计 第"
).split())


def tokenize(text, lexicon=None):
    """All tokens of `text` in order of start offset (see module doc)."""
    if not text:
        return []
    lex = lexicon if lexicon is not None else base_lexicon()
    norm = normalize(text)
    out = []
    for m in _WORD_RE.finditer(norm):
        start, end = m.span()
        if m.lastgroup == "lang":
            out.append(Token(m.group(), "latin", False, start, end))
        elif norm.isascii() or m.group().isascii():
            out.append(_alnum_token(norm, start, end))
        else:
            _flush(norm, _pieces(norm, start, end), lex, out)
    return out


def _pieces(norm, start, end):
    """Split a word run into CJK and other pieces: [(is_cjk, start, end)]."""
    run = norm[start:end]
    if "\u4e00" <= min(run) and max(run) <= "\u9fff":
        return [(True, start, end)]  # the usual Chinese run, all basic Han: no need to compile CJK_RUN_RE (1.5 ms)
    pieces = []
    pos = start
    for m in CJK_RUN_RE.finditer(norm, start, end):
        if m.start() > pos:
            pieces.append((False, pos, m.start()))
        pieces.append((True, m.start(), m.end()))
        pos = m.end()
    if pos < end:
        pieces.append((False, pos, end))
    last = pieces[-1]
    if not last[0] and last[2] - last[1] == 1 and "a" <= norm[last[1]] <= "z":
        # 学C++: the run regex stopped at the symbols; give them back to the letter.
        tail = _LANG_TAIL.match(norm, end)
        if tail:
            pieces[-1] = (False, last[1], tail.end())
    return pieces


def content_tokens(text, lexicon=None, tokens=None):
    """[(token, term, weight)] for tokens worth matching, in text order.

    Dropped: stopwords, lone Latin letters and digits. `term` is what an index
    should store (English stemmed). Weight is WORD_WEIGHT, or OOV_WEIGHT for
    slices the lexicon does not know. `tokens`: tokenize(text, lexicon) when
    the caller has it already.
    """
    zh = stopwords("zh")
    en = stopwords("en")
    out = []
    tokens = tokenize(text, lexicon) if tokens is None else tokens
    for i, tok in enumerate(tokens):
        term = tok.text
        kind = tok.kind
        if kind == "cjk":
            if term in zh or _measure_word(tokens, i):
                continue
        elif kind == "latin":
            kin = _in_law(text, tokens, i)
            if kin:
                out.extend((tok, k, WORD_WEIGHT if n == 0 else IN_LAW_WEIGHT) for n, k in enumerate(kin))
                continue
            if term in _LAW and i and tokens[i - 1].text == "in" \
                    and ((i > 1 and _kin_in_law(text, tokens, i - 2)) or _in_law(text, tokens, i - 1)):
                continue  # the law of "mother-in-law" or "in-laws": read as the relation above
            if len(term) < 2 or term in en or _contracted(term) in en:
                continue
            term = stem(term)
        elif kind == "num":
            if len(term) < 2:
                continue
        out.append((tok, term, OOV_WEIGHT if tok.oov else WORD_WEIGHT))
        if kind == "latin" and i + 1 < len(tokens):
            after = tokens[i + 1]
            word = _PHRASAL.get((term, after.text))
            if word and not text[tok.end:after.start].strip():  # side by side: "broke up", not "broke it up"
                out.append((tok, word, WORD_WEIGHT))
            elif after.text in _POSSESSIVES and i + 2 < len(tokens):  # "lost my job": a verb and its object
                thing = tokens[i + 2]
                word = _PHRASAL.get((term, stem(thing.text)))
                whole = not thing.text.endswith("'s")  # "lost my sister's keys" is not about the sister
                if word and whole and thing.kind == "latin" and not text[tok.end:after.start].strip() \
                        and not text[after.end:thing.start].strip():
                    out.append((tok, word, WORD_WEIGHT))
        elif kind == "cjk" and term in _SEPARABLE:
            word = _separated(text, tokens, i, _SEPARABLE[term])
            if word:
                out.append((tok, word, WORD_WEIGHT))
    return out


_CONTRACTIONS = ("'s", "'d", "'ll", "'re", "'ve", "'m")


def _contracted(term):
    """The word a contraction is made on (how's -> how, where'd -> where); "" for any other word.
    A function word's contraction is a function word: "how's my training going?" asks about training."""
    for tail in _CONTRACTIONS:
        if term.endswith(tail):
            return term[:-len(tail)]
    return ""


IN_LAW = "inlaw"  # any relation by marriage
IN_LAW_WEIGHT = 0.5  # "inlaw" beside "brotherinlaw": any relation by marriage, weaker than the one named


def _hyphen(text, left, right):
    return text[left.end:right.start] == "-"


_KIN_IN_LAW = frozenset("mother father brother sister son daughter parent parents".split())
_NOT_IN_LAW = frozenset("school firm firms enforcement degree student students".split())  # my sister in law school
_IN_LAW_OWNERS = frozenset("my our the his her their your".split())
_LAW = frozenset(("law", "laws", "law's", "laws'"))


def _kin_in_law(text, tokens, i):
    """tokens[i] is the relation of "mother-in-law", or of "mother in law" written with spaces."""
    if i + 2 >= len(tokens):
        return False
    tok, mid, last = tokens[i], tokens[i + 1], tokens[i + 2]
    if mid.text != "in" or last.text not in _LAW:
        return False
    if _hyphen(text, tok, mid) and _hyphen(text, mid, last):
        return True
    spaced = tok.text in _KIN_IN_LAW and text[tok.end:mid.start] == " " and text[mid.end:last.start] == " "
    return spaced and not (i + 3 < len(tokens) and tokens[i + 3].text in _NOT_IN_LAW)


def _in_law(text, tokens, i):
    """The terms of a relation by marriage: mother-in-law (or mother in law) is "motherinlaw" (never mother,
    nor law), and any of them, or "in-laws" alone (my in laws), is "inlaw" too. None when tokens[i] starts no
    such word."""
    tok = tokens[i]
    if tok.text == "in":  # "the in-laws" (in mother-in-law the relation was read at "mother")
        after = tokens[i + 1] if i + 1 < len(tokens) else None
        if not after or after.text not in _LAW or (i and _kin_in_law(text, tokens, i - 1)):
            return None
        spaced = text[tok.end:after.start] == " " and i and tokens[i - 1].text in _IN_LAW_OWNERS
        if (_hyphen(text, tok, after) or spaced) and not (i and _hyphen(text, tokens[i - 1], tok)):
            return [IN_LAW]
        return None
    if _kin_in_law(text, tokens, i):
        return [stem(tok.text) + IN_LAW, IN_LAW]
    return None


SEPARABLE_GAP = 4  # at most this many characters between a separable verb's parts (加了五天班)


def _separated(text, tokens, i, rests):
    """The separable verb whose first part is tokens[i] and whose rest follows it a few characters on
    (加 ... 班 in 加了五天班), or None. Parts side by side are the word itself, already a token."""
    first = tokens[i]
    for j in range(i + 1, len(tokens)):  # not a slice: a long text would copy its tokens once per 加 or 吃
        after = tokens[j]
        gap = after.start - first.end
        if gap > SEPARABLE_GAP:
            return None
        if gap > 0 and after.text in rests and text[first.end:after.start].isalnum():
            return rests[after.text]
    return None


def content_terms(text, lexicon=None):
    """[(term, weight)] in text order, one entry per occurrence.

    Duplicates are kept so a document's term frequency is the count of a term
    in the list; a query can collapse them with dict/set.
    """
    return [(term, weight) for _, term, weight in content_tokens(text, lexicon)]


# --- blocks: CJK and Latin/digit runs with nothing between them --------------

def _flush(norm, block, lex, out):
    if len(block) == 1:
        is_cjk, start, end = block[0]
        if is_cjk:
            _expand(norm, _segment(norm, start, end, lex), lex, out, None)
        else:
            out.append(_alnum_token(norm, start, end))
        return
    others = []  # mixed and Latin/digit tokens
    avail = {}  # index of CJK piece -> [start, end] not yet taken by a lexicon match
    for k, (is_cjk, start, end) in enumerate(block):
        if is_cjk:
            avail[k] = [start, end]
    resolved = set()
    for k, (is_cjk, start, end) in enumerate(block):
        if not is_cjk and norm[start:end].isalnum():
            hit = _lexicon_mixed(norm, start, end, avail.get(k - 1), avail.get(k + 1), lex)
            if hit:
                others.append(Token(_fold(norm[hit[0]:hit[1]]), "mixed", False, hit[0], hit[1]))
                resolved.add(k)
    words = {k: _segment(norm, span[0], span[1], lex) for k, span in avail.items()}
    tails = {}
    for k, (is_cjk, start, end) in enumerate(block):
        if is_cjk or k in resolved:
            continue
        if not norm[start:end].isalnum():  # 3.14, don't, C++: never glued
            others.append(_alnum_token(norm, start, end))
            continue
        tok = _glue(norm, start, end, words.get(k - 1), words.get(k + 1), lex, tails, k - 1)
        others.append(tok if tok else _alnum_token(norm, start, end))
    toks = []
    for k, ws in words.items():
        _expand(norm, ws, lex, toks, tails.get(k))
    toks.extend(others)
    toks.sort(key=lambda t: (t.start, t.end))
    out.extend(toks)


def _fold(text):
    return text if text.isascii() else text.casefold()


def _alnum_token(norm, start, end):
    text = _fold(norm[start:end])
    if text.isdigit() or not _HAS_ALPHA(text):
        return Token(text, "num", False, start, end)
    return Token(text, "latin", False, start, end)


def _lexicon_mixed(norm, start, end, left, right, lex):
    """Longest lexicon word made of this run plus CJK it touches; consumes that CJK."""
    size = end - start
    max_l = min(left[1] - left[0], lex.max_word_len) if left and left[1] == start else 0
    max_r = right[1] - right[0] if right and right[0] == end else 0
    bucket = lex.base.bucket
    extra = lex.extra
    extra_first = lex.extra_first
    best = None
    for l in range(max_l, -1, -1):
        first = start - l
        words, longest = bucket(norm[first])
        # No word starting at `first` is longer than this; skip hopeless spans.
        longest = max(longest, extra_first.get(norm[first], 0)) - l - size
        for r in range(min(max_r, longest), -1, -1):
            if best is not None and l + r <= best[0]:
                break
            if l or r:
                cand = norm[first:end + r]
                if cand in words or cand in extra:
                    best = (l + r, l, r)
    if best is None:
        return None
    _, l, r = best
    if l:
        left[1] -= l
    if r:
        right[0] += r
    return (start - l, end + r)


def _glue(norm, start, end, left_words, right_words, lex, tails, left_k):
    """Apply the leading/trailing shape rules; consumes the CJK word it glues."""
    run = norm[start:end]
    zh = stopwords("zh")
    if right_words and right_words[0] and right_words[0][0] == end and len(run) <= 2 and _HAS_ALPHA(run):
        ws, we = right_words[0]
        if we - ws == 1 and norm[ws] not in zh:
            right_words[0] = None
            return Token(_fold(run) + norm[ws], "mixed", not lex.known(norm[ws]), start, we)
    if not (len(run) <= 4 and run.isdigit()) and not _LETTER_DIGITS(run):
        return None
    if right_words and right_words[0] and right_words[0][0] == end:
        nxt = norm[right_words[0][0]:right_words[0][1]]
        if nxt[0] in _UNIT_CHARS or nxt in _UNIT_WORDS:
            return None
    if not left_words or not left_words[-1] or left_words[-1][1] != start:
        return None
    ws, we = left_words[-1]
    word = norm[ws:we]
    if we - ws >= 2:
        if word in zh or word in _NUMBER_CONTEXT:
            return None
        left_words[-1] = None
        return Token(word + _fold(run), "mixed", False, ws, end)
    prev = left_words[-2] if len(left_words) > 1 else None
    if word in zh or not prev or prev[1] - prev[0] != 1 or norm[prev[0]] in zh:
        return None
    # Last two characters of an unknown stretch: the mixed token replaces its
    # final bigram; the characters themselves stay as single-character slices.
    tails[left_k] = we
    pair = norm[prev[0]:we]
    return Token(pair + _fold(run), "mixed", not lex.known(pair), prev[0], end)


# --- CJK runs ----------------------------------------------------------------

def _segment(norm, start, end, lex):
    """Most probable split of norm[start:end] into lexicon words: [[s, e], ...] (absolute)."""
    seg = norm[start:end]
    n = len(seg)
    if n == 0:
        return []
    base = lex.base
    cached = base.cache.get
    bucket = base.bucket
    unknown = -base.log_total  # a character the dictionary lacks counts as frequency 1
    extra = lex.extra
    extra_first = lex.extra_first
    best = [0.0] * (n + 1)
    nxt = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        ch = seg[i]
        words, longest = cached(ch) or bucket(ch)
        score = words.get(ch, unknown) + best[i + 1]
        stop_at = i + 1
        last = i + longest
        for j in range(i + 2, (last if last < n else n) + 1):
            lp = words.get(seg[i:j])
            if lp is not None:
                lp += best[j]
                if lp > score:
                    score, stop_at = lp, j
        if extra_first:
            longest = extra_first.get(ch)
            if longest:
                for j in range(i + 2, min(n, i + longest) + 1):
                    lp = extra.get(seg[i:j])
                    if lp is not None:
                        lp += best[j]
                        if lp > score:
                            score, stop_at = lp, j
        best[i] = score
        nxt[i] = stop_at
    spans = []
    i = 0
    while i < n:
        j = nxt[i]
        spans.append([start + i, start + j])
        i = j
    return _split_classifiers(norm, spans, lex)


# After a number or a demonstrative, a dictionary word that starts with a
# classifier is the classifier plus a noun: 这|部手机 reads 这部|手机 (a phone).
_COUNTING = frozenset("这 那 哪 每 某 各 该 此 一 二 两 三 四 五 六 七 八 九 十 几 半 整 好几 这几 那几".split())
_CLASSIFIERS = frozenset("个只条件张本块把辆位双杯瓶碗首篇封座棵支枝架艘套间颗粒幅盏顶副株匹部台份根片群")


_MEASURES = _CLASSIFIERS | frozenset("款种")


def _measure_word(tokens, i):
    """Is tokens[i] a count and its classifier (一件, 两双, 每个) or a classifier after one (这|款|手机)? It says how
    many, never what: 买了一件外套 is about the coat."""
    term = tokens[i].text
    if len(term) == 2:
        return term[0] in _COUNTING and term[1] in _MEASURES
    if len(term) == 1 and term in _MEASURES and i:
        before = tokens[i - 1]
        return before.end == tokens[i].start and before.text in _COUNTING
    return False


# Dictionary words that are only ever a classifier and its noun (推荐本书, 写了封信): the noun alone.
_COUNTED = frozenset(("本书", "首歌", "封信"))


def _split_classifiers(norm, spans, lex):
    out = []
    for span in spans:
        s, e = span
        if (out and e - s >= 3 and norm[s] in _CLASSIFIERS and norm[out[-1][0]:out[-1][1]] in _COUNTING
                and lex.known(norm[s + 1:e])):
            out += [[s, s + 1], [s + 1, e]]
        elif e - s == 2 and norm[s:e] in _COUNTED:
            out.append([s + 1, e])
        else:
            out.append(span)
    return out


def _expand(norm, words, lex, out, tail_end):
    """Emit word tokens; unknown stretches also get their bigrams (see module doc)."""
    zh = stopwords("zh")
    bucket = lex.base.bucket
    run = []
    for span in words:
        if span is not None and span[1] - span[0] == 1 and norm[span[0]] not in zh:
            if run and run[-1] + 1 != span[0]:  # (a classifier left out between them: 一本书 is 一 and 书)
                _emit_run(norm, run, lex, out, tail_end)
                run = []
            run.append(span[0])
            continue
        if run:
            _emit_run(norm, run, lex, out, tail_end)
            run = []
        if span is not None:
            text = norm[span[0]:span[1]]
            oov = len(text) == 1 and text not in bucket(text)[0]
            out.append(Token(text, "cjk", oov, span[0], span[1]))
    if run:
        _emit_run(norm, run, lex, out, tail_end)


def _emit_run(norm, run, lex, out, tail_end):
    bucket = lex.base.bucket
    extra = lex.extra
    last = len(run) - 1
    for i, p in enumerate(run):
        ch = norm[p]
        out.append(Token(ch, "cjk", ch not in bucket(ch)[0], p, p + 1))
        if i < last and p + 2 != tail_end:
            pair = norm[p:p + 2]
            out.append(Token(pair, "cjk", pair not in extra and pair not in bucket(ch)[0], p, p + 2))


# --- English -------------------------------------------------------------------

_VOWELS = frozenset("aeiouy")
# Words ending in s that are no plural and would meet another word without it ("any news?" is not "new").
_NOT_PLURAL = frozenset(("news", "lens", "series", "species"))
_NO_LY = frozenset("aioubpf")
# A feeling in -ed whose stem is a thing: "why am I so tired?" is not about the car's tires.
_FEELING_ED = {"tired": "tired", "tiring": "tired", "tiredness": "tired"}


def _irregular_forms():
    """{form: base} from resources/lexicon/irregular_en.txt (bought -> buy, children -> child)."""
    return {form: row[0] for row in data_rows("irregular_en") for form in row[1:]}


_IRREGULAR = _irregular_forms()


def _phrasal_words():
    """{(verb stem, particle or object stem): word stem} from resources/lexicon/phrasal_en.txt (broke up ->
    breakup, lost my job -> jobless)."""
    return {(stem(verb), stem(second)): stem(word) for verb, second, word in data_rows("phrasal_en")}


def stem(word):
    """Light suffix stripping so inflected forms share a term.

    Steps, on lower-case ASCII words: drop a possessive 's; an irregular form
    becomes its base (bought -> buy, ran -> run, children -> child, and a
    listed verb's noun in -al: proposal -> propose; resources/lexicon/irregular_en.txt). Then, on words of 4+ letters: plurals
    (-ies -> i, -sses/-xes/-ches/-shes/-zzes lose -es, other -s unless
    -ss/-us/-is; news, lens, series and species are no plurals); then a
    noun's -ment, -ness, -sion or -tion when enough of the word stays
    (retirement -> retire; station keeps it); else -ing or -ed (not
    -eed) when a vowel stays, undoubling a final double consonant other than
    l/s/z (running -> run); else -ly after a stem of 4+ letters that does not
    look like part of the word (family, supply, butterfly keep it); a stem of
    one short syllable gets back the e the ending took (hoping -> hope, not
    hopping -> hop). Finally a trailing e is dropped unless the word is one
    short syllable (complete -> complet, time and care keep it: never tim or
    car), and a trailing consonant+y becomes i, so make/makes/making and
    study/studies/studied meet. The output is an index key, not an English word.
    """
    w = word
    if w.endswith("'s"):
        w = w[:-2]
    elif w.endswith("s'"):
        w = w[:-1]
    if not (w.isascii() and w.isalpha()):
        return w
    if w in _FEELING_ED:
        return _FEELING_ED[w]
    w = _IRREGULAR.get(w, w)
    if len(w) >= 4 and w not in _NOT_PLURAL:
        if w.endswith("ies"):
            w = w[:-2] if len(w) > 4 else w[:-1]
        elif w.endswith(("sses", "xes", "ches", "shes", "zzes")):
            w = w[:-2]
        elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
            w = w[:-1]
        stripped, w = _strip_derivation(w)
        if not stripped:
            stripped, w = _strip_ending(w)
        if not stripped and w.endswith("ly") and len(w) >= 6:
            base = w[:-2]
            if base[-1] not in _NO_LY and not (base[-1] == base[-2] and base[-1] != "l"):
                w = base
    if len(w) >= 3:
        if w[-1] == "e" and w[-2] != "e" and _drops_e(w[:-1]):
            w = w[:-1]
        elif w[-1] == "y" and w[-2] not in _VOWELS:
            w = w[:-1] + "i"
    return w


# Nouns made from a word that keep their own sense: the suffix stays.
_KEEP_SUFFIX = frozenset(("apartment", "department", "experiment", "instrument", "supplement", "implement",
                          "compliment", "complement", "sentiment", "business", "witness", "fitness", "wellness"))


def _vowels(w):
    """Which letters of w are vowels, as Porter reads them: a y after a consonant is one (try, happy)."""
    out, prev = [], False
    for i, ch in enumerate(w):
        prev = ch in "aeiou" or (ch == "y" and i > 0 and not prev)
        out.append(prev)
    return out


def _measure(w):
    """How many vowel-consonant sequences a stem has (Porter's m): the more, the more of a word it is."""
    vowel = _vowels(w)
    return sum(1 for a, b in zip(vowel, vowel[1:]) if a and not b)


def _strip_derivation(w):
    """(True, stem) for a noun made with -ment, -sion or -tion: retirement meets retired, renovation
    renovated, depression depressed; (False, adjective) for one made with -ness (happiness: happy),
    whose own endings are stripped next; (False, w) otherwise."""
    if w in _KEEP_SUFFIX:
        return False, w
    if w.endswith("ment") and _measure(w[:-4]) > 1:
        return True, w[:-4]
    if w.endswith("ness") and _measure(w[:-4]) > 0:
        base = w[:-4]  # an adjective, whose own endings go next: loneliness -> lonely, tiredness -> tired
        return False, (base[:-1] + "y") if base.endswith("i") else base
    if w.endswith(("sion", "tion")) and _measure(w[:-3]) > 1:
        return True, w[:-3]
    return False, w


def _strip_ending(w):
    """(True, stem) for a word ending in -ing, -ied or -ed that loses it; (False, w) otherwise."""
    if w.endswith("ing") and len(w) >= 5:
        return _strip_inflection(w, 3)
    if w.endswith("ied") and len(w) >= 4:
        return True, (w[:-2] if len(w) > 4 else w[:-1])
    if w.endswith("ed") and not w.endswith("eed") and len(w) >= 4:
        return _strip_inflection(w, 2)
    return False, w


def _strip_inflection(w, cut):
    base = w[:-cut]
    if len(base) < 2 or not (_VOWELS & set(base)):
        return False, w
    if len(base) >= 4 and base[-1] == base[-2] and base[-1] not in "lsz" and base[-1] not in _VOWELS:
        return True, base[:-1]  # hopping -> hop
    if _measure(base) == 1 and _short_syllable(base):
        base += "e"  # hoping -> hope, timing -> time: the e the ending took
    return True, base


def _short_syllable(w):
    """Ends consonant-vowel-consonant, the last not w, x or y (hop, tim, car): a final e after it is part of
    the word (hope, time, care), and a word of one such syllable took its e off for -ing or -ed."""
    if len(w) < 3 or w[-1] in "wxy":
        return False
    vowel = _vowels(w)
    return not vowel[-3] and vowel[-2] and not vowel[-1]


def _drops_e(base):
    """A final e goes when the word is longer than one short syllable (complete -> complet, use -> us) and
    stays on one (time, care, plane, hope), so that they never meet tim, car, plan and hop."""
    m = _measure(base)
    return m > 1 or (m == 1 and not _short_syllable(base))


_PHRASAL = _phrasal_words()  # here, after stem, which it uses
_POSSESSIVES = frozenset("my his her their our your the".split())  # between a verb and its object ("lost my job")


def _separable_words():
    """{first part: {rest: word}} from resources/lexicon/separable_zh.txt (加 -> {班: 加班})."""
    out = {}
    for word in word_list("separable_zh"):
        out.setdefault(word[0], {})[word[1:]] = word
    return out


_SEPARABLE = _separable_words()
