"""Turn-preflight content classifier: is this message personal material?

Pure and deterministic. Vocabulary lives in resources/classifier/*.json (read
once, cached); this module holds the shapes that combine it. Patterns use only
literals and bounded repeats and window lookups bisect, so cost is linear.

Order: empty -> non-personal; low-information -> personal (sighs) or
non-personal (acks); task wrapper -> judge the wrapped text; personal hits ->
personal unless technical context vetoes them (hits of kind `life` survive
technical words, `soft` moods and `vent` idioms do not); technical evidence ->
technical; otherwise non-personal.
"""

import json
import re
from bisect import bisect_left, bisect_right
from .paths import resources_dir

CLASSIFIER_VERSION = "1.0.0"

RESOURCE_DIR = resources_dir() / "classifier"

EVIDENCE_MAX = 40
MAX_PER_CODE = 3
TECH_CONTEXT = 2  # strong technical term = 2 points, weak = 1
ZH_AFTER, ZH_BEFORE = 14, 3  # chars around 我 that still describe the speaker
ZH_EVENT_TAIL = 8  # chars after a life noun in which 了 marks a finished event
EN_SUBJECT_WINDOW = 6  # tokens after I/me
EN_POSSESSIVE_WINDOW = 3  # tokens after my/our, within the clause

_SENT_BREAK = re.compile(r"[。！？!?；;\n]|\.(?=\s|$)")
_CLAUSE_BREAK = re.compile(r"[，,。！？!?；;：:\n、]|\.(?=\s|$)")
_EN_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[a-zA-Z]")
_OTHER_LETTER = re.compile(r"[^\W\d_a-zA-Z\u3400-\u9fff\uf900-\ufaff]")
_CHUNK_SPLIT = re.compile(r"\s*[,，。.!！?？~～…、;；:：\-—]+\s*")
_REPEAT = re.compile(r"(.)\1+")
_WRAP_SPLIT = re.compile(r"[:：\n]")
_ZH_QUESTION = re.compile(r"[?？]|[吗么]\s*$|什么|怎么|如何|为什么|哪|几|多少|是不是|能不能|可不可以")
_EN_QUESTION = re.compile(
    r"\?|(?:^|[,;:.]\s*)(?:how|why|what|what's|whats|which|where|when|who|can|could|should|is|are|does|"
    r"do|write|fix|convert|explain|implement|make|create|give)\b")
_ZH_TASK = re.compile(r"[?？]|怎么|如何|为什么|什么|吗|哪|能不能|是不是|写一个|写个|帮我写|实现")
_DEFINITION = re.compile(r"是什么[?？]?$|的定义")
_ZH_EVENT_MARK = re.compile(r"了|啦|没过")
_ZH_FINALLY = re.compile(r"终于[^，,。！？!?；;\n]{1,10}?了")
_ZH_DE_HUANG = re.compile(r"([\u4e00-\u9fff])得慌")

# Shapes only code has: call syntax, identifiers, paths, error classes.
_CODE_SHAPES = [re.compile(p) for p in (
    r"`",
    r"\b[A-Za-z_]\w{0,40}\([^()\n]{0,60}\)",
    r"\.(?:py|js|ts|tsx|jsx|java|go|rs|cpp|h|rb|php|json|ya?ml|toml|csv|txt|md|html|css|sh|sql|log|xml|ini)\b",
    r"\b[A-Z]\w{0,40}(?:Error|Exception)\b",
    r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+){2,}\b",
    r"\b[a-z]+(?:[A-Z][a-z0-9]+){2,}\b",
    r"\b[a-z][a-z0-9]{0,30}_[a-z0-9_]{1,30}\b",
    r"==|!=|=>|->|::|&&|\|\||\+\+|</?[a-z]{1,10}>|\{\s{0,3}\}",
    r"(?:^|\s)[~.]{0,2}/[\w.-]{1,40}/[\w./-]{1,80}",
    r"\bO\([nN1]",
    r"(?:^|\s)--[a-z][a-z-]{1,30}",
    r"(?i)\b(?:40[0-9]|50[0-4])\b(?=.{0,20}(?:error|返回|报|status|bad|gateway|forbidden|unauthori))",
)]

# (category, reason code, kind, chars before 我, chars after 我)
_ZH_AROUND_PRONOUN = [("health", "first-person-state", "life", ZH_BEFORE, ZH_AFTER),
                      ("preferences", "preference", "soft", 0, 6),
                      ("self_description", "self-description", "soft", 0, 8)] + [
    (c, "first-person-state", "soft", ZH_BEFORE, ZH_AFTER)
    for c in ("feelings_strong", "feelings", "vague_states", "intense", "degree", "pairs", "negated", "dehuang")]
# (category, reason code, kind, last token offset after I/me)
_EN_AFTER_SUBJECT = (("feelings_strong", "first-person-state", "soft", EN_SUBJECT_WINDOW),
                     ("health", "first-person-state", "life", EN_SUBJECT_WINDOW),
                     ("distress", "first-person-state", "soft", EN_SUBJECT_WINDOW),
                     ("feelings", "first-person-state", "soft", 3),
                     ("self_description", "self-description", "soft", 3))
_ZH_RELATIONS = (("relations_intimate", "life"), ("relations", "life"),
                 ("relations_pronoun_only", "life"), ("relations_work", "soft"))
_EN_POSSESSED = (("relations", "relationship-mention", "life"),
                 ("relations_work", "relationship-mention", "soft"),
                 ("life_events", "life-event", "life"), ("health", "first-person-state", "life"),
                 ("body_parts", "first-person-state", "soft"),
                 ("feelings_strong", "first-person-state", "soft"))
_SPEAKER = {"first-person-state", "life-event", "preference", "decision", "relationship-mention",
            "self-description"}
_MOOD_ONLY = {"feeling-no-subject", "weak-combination", "de-huang-shape"}

_CACHE = {}


def _load():
    if "lex" not in _CACHE:
        data = {}
        for name in ("zh", "en", "technical"):
            with open(RESOURCE_DIR / f"{name}.json", encoding="utf-8") as fh:
                data[name] = json.load(fh)
        _CACHE["lex"] = _compile(data)
    return _CACHE["lex"]


def _alt(words):
    """Literal alternation, longest first; ASCII words get letter boundaries."""
    parts = []
    for w in sorted({w.lower() for w in words if w}, key=len, reverse=True):
        p = re.escape(w)
        p = (r"(?<![a-z])" if re.match(r"[a-z0-9]", w) else "") + p
        parts.append(p + (r"(?![a-z])" if re.search(r"[a-z0-9]$", w) else ""))
    return "(?:" + "|".join(parts) + ")" if parts else r"(?!x)x"


def _en_tokens(phrase):
    out = []
    for piece in phrase.lower().replace("-", " ").split():
        out.extend(["*"] if piece == "*" else _EN_TOKEN.findall(piece))
    return out


def _words(lists):
    """Every list of plain strings in a vocabulary file, by key."""
    return {k: v for k, v in lists.items() if isinstance(v, list) and all(isinstance(w, str) for w in v)}


def _compile(data):
    zh, en, tech = data["zh"], data["en"], data["technical"]
    zre = {k: re.compile(_alt(v)) for k, v in _words(zh).items()}
    gap = r"[^，,。！？!?；;\s]{0,3}?"
    zre["intense"] = re.compile(_alt(zh["intensifiers"]) + _alt(zh["feelings_strong"] + zh["feelings"]
                                                                + zh["feeling_chars"]))
    zre["degree"] = re.compile(_alt(zh["feelings"] + zh["feeling_chars"]) + _alt(zh["degree_suffixes"]))
    zre["pairs"] = re.compile("|".join(re.escape(a) + gap + re.escape(b) for a, b in zh["feeling_pairs"]))
    zre["negated"] = re.compile(_alt(zh["negators_soft"]) + _alt(zh["negated_positive"]))
    # 搬家 -> 搬完家, 吵架 -> 吵了一架: the aspect marker splits the compound.
    zre["split"] = re.compile("|".join(re.escape(w[0]) + r"(?:了|完|过|好)" + gap + re.escape(w[1:])
                                       for w in zh["split_compounds"]))
    events = zh["life_events"] + zh["life_events_pronoun_only"]
    zre["plan"] = re.compile(_alt(zh["decisions_strong"] + zh["decisions_weak"]) + gap + _alt(events))
    zre["result"] = re.compile(_alt(zh["event_result_verbs"]))
    index = {}  # English phrases: first token -> [(tokens, category)]
    for cat, words in list(_words(en).items()) + [("tech_strong", tech["en_strong"]), ("tech_weak", tech["en_weak"])]:
        for w in words:
            toks = _en_tokens(w)
            if toks:
                index.setdefault(toks[0], []).append((tuple(toks), cat))
    acks = zh["acknowledgements"] + en["acknowledgements"]
    return {
        "zre": zre, "en_index": index,
        "tech_zh": (re.compile(_alt(tech["zh_strong"])), re.compile(_alt(tech["zh_weak"]))),
        "zh_dismissive": tuple(zh["dismissive_negators"]),
        "zh_dehuang_exclude": set(zh["de_huang_exclude"]),
        "zh_interjections": set(zh["interjection_chars"]),
        "en_pronouns": set(en["pronouns"]), "en_other_owners": set(en["other_owners"]),
        "en_pref_excluded": [tuple(_en_tokens(p)) for p in en["preference_excluded_next"]],
        "openers": (tuple(zh["impersonal_openers"]), [tuple(_en_tokens(w)) for w in en["impersonal_openers"]]),
        "low": {_norm_chunk(w) for w in zh["low_info"] + en["low_info"]},
        # 唉算了吧 = 唉 + 算了 + 吧: a short run of sighs is still a sigh
        "low_zh": re.compile("(?:" + _alt(w for w in zh["low_info"] + zh["acknowledgements"] if _CJK.search(w)) + ")+"),
        "ack": {_norm_chunk(w) for w in acks},
        "ack_raw": {" ".join(w.lower().split()) for w in acks},
    }


def _norm_chunk(s):
    return _REPEAT.sub(r"\1", " ".join(s.lower().replace("’", "'").split()))


def _short(s):
    s = " ".join(s.split())
    return s if len(s) <= EVIDENCE_MAX else s[:EVIDENCE_MAX - 1] + "…"


def _language(text):
    cjk, latin = len(_CJK.findall(text)), len(_LATIN.findall(text))
    if cjk == 0 and latin == 0 or len(_OTHER_LETTER.findall(text)) > cjk + latin:
        return "other"
    zh_w, en_w = cjk, latin / 4.0  # one hanzi carries about one short English word
    if zh_w and en_w and min(zh_w, en_w) / max(zh_w, en_w) >= 0.3:
        return "mixed"
    return "zh" if zh_w >= en_w else "en"


def _low_information(text, lex):
    """'personal' for sighs and shrugs, 'ack' for thanks/ok/greetings, None otherwise."""
    if len(text) > 40:
        return None
    chunks = [c for c in _CHUNK_SPLIT.split(text) if c]
    if not chunks:
        return "personal"  # only punctuation: "…", "??"
    kinds = set()
    for c in chunks:
        raw, norm = " ".join(c.lower().replace("’", "'").split()), _norm_chunk(c)
        if raw in lex["ack_raw"]:  # before folding: "嗯嗯" is an ack, "嗯" a sigh
            kinds.add("ack")
        elif norm in lex["low"] or set(norm) <= lex["zh_interjections"] or lex["low_zh"].fullmatch(norm):
            kinds.add("low")
        elif norm in lex["ack"]:
            kinds.add("ack")
        else:
            return None
    return "ack" if "ack" in kinds else "personal"


class _Hits:
    """Reasons found so far: (code, evidence, kind) with kind life|soft|vent."""

    def __init__(self):
        self.items, self.count = [], {}

    def add(self, code, evidence, kind):
        ev = _short(evidence)
        n = self.count.get(code, 0)
        if ev and n < MAX_PER_CODE and (code, ev) not in {h[:2] for h in self.items}:
            self.count[code] = n + 1
            self.items.append((code, ev, kind))

    def final(self):
        """Drop reasons a longer one already shows (好委屈 covers 委屈)."""
        out = []
        for h in self.items:
            covered = {g[0] for g in self.items if g is not h and h[1] in g[1] and len(g[1]) > len(h[1])}
            if h[0] in covered or (h[0] == "feeling-no-subject" and "first-person-state" in covered):
                continue
            out.append(h)
        return out


class _Spans:
    """Sorted (start, end) spans of one category; window lookup by start."""

    def __init__(self, items):
        self.items = sorted(items)
        self.starts = [a for a, _ in self.items]

    def between(self, lo, hi):
        return self.items[bisect_left(self.starts, lo):bisect_right(self.starts, hi)]


def _segments(text, breaker):
    """Segment id of every char (plus one past the end) and each segment's bounds."""
    ids, bounds, last = [], [], 0
    for m in breaker.finditer(text):
        ids.extend([len(bounds)] * (m.end() - last))
        bounds.append((last, m.end()))
        last = m.end()
    ids.extend([len(bounds)] * (len(text) - last + 1))
    bounds.append((last, len(text)))
    return ids, bounds


def _join(text, cid, x, y):
    """Evidence for two spans: one stretch if close in one clause, else 'A…B'."""
    (a, b), (c, d) = sorted((x, y))
    if c - b <= 4 and cid[a] == cid[max(c, b) - 1]:
        return text[a:max(b, d)]
    return text[a:b] + "…" + text[c:d]


def _zh_hits(t, lex, hits):
    if not _CJK.search(t):
        return
    zre = lex["zre"]
    (sid, sbounds), (cid, cbounds) = _segments(t, _SENT_BREAK), _segments(t, _CLAUSE_BREAK)
    m = {k: [(x.start(), x.end()) for x in rx.finditer(t)] for k, rx in zre.items()}
    m["dehuang"] = [(x.start(1), x.end()) for x in _ZH_DE_HUANG.finditer(t)
                    if x.group(1) not in lex["zh_dehuang_exclude"]]
    idx = {k: _Spans(v) for k, v in m.items()}
    requests = idx["request_prefixes"]
    # "帮我…" / "给我…" address the assistant, not the speaker's life.
    pronouns = [p for p in m["pronouns"] if not any(a <= p[0] < b for a, b in requests.between(p[0] - 4, p[0]))]
    asked = {}

    def question(a):
        s = sid[a]
        if s not in asked:
            asked[s] = bool(_ZH_QUESTION.search(t[sbounds[s][0]:sbounds[s][1]]))
        return asked[s]

    def near(cat, p, before=ZH_BEFORE, after=ZH_AFTER):
        return [x for x in idx[cat].between(p[0] - before, p[1] + after) if sid[x[0]] == sid[p[0]]]

    for p in pronouns:
        s, e = p
        for cat, kind in _ZH_RELATIONS:
            for a, b in near(cat, p, 0, 2):
                # 我妈, 我的哥, 我和老公; but 我老家 is not a relative
                if a >= e and cid[a] == cid[s] and (b - a > 1 or t[e:a] in ("", "的")):
                    hits.add("relationship-mention", t[s:b], kind)
        events = near("life_events", p)
        for x in events + near("life_events_pronoun_only", p, 0, 3):  # 我工作三年了, not 我要写工作总结
            hits.add("life-event", _join(t, cid, p, x), "life")
        for cat, code, kind, before, after in _ZH_AROUND_PRONOUN:
            for x in near(cat, p, before, after):
                hits.add(code, _join(t, cid, p, x), kind)
        for x in near("decisions_strong", p, 0, 6):
            hits.add("decision", _join(t, cid, p, events[0] if events else x), "life" if events else "soft")
        for x in near("decisions_weak", p, 0, 4) if events else ():
            hits.add("decision", _join(t, cid, p, events[0]), "life")

    for cat in ("feelings_strong", "intense", "degree", "pairs"):
        for a, b in m[cat]:
            if not t[max(0, a - 3):a].endswith(lex["zh_dismissive"]):  # 别难过 comforts someone else
                hits.add("feeling-no-subject", t[a:b], "soft")
    for a, b in m["dehuang"]:
        hits.add("de-huang-shape", t[a - 1 if a and _CJK.match(t[a - 1]) else a:b], "soft")
    for a, b in m["vents"]:
        hits.add("venting", t[a:b], "vent")

    states = _Spans(x for c in ("vague_states", "negated", "feelings", "feelings_strong", "health", "pairs")
                    for x in m[c])
    for x in m["time_spans"]:
        for y in states.between(x[1] - 6, x[1] + 12):
            if sid[y[0]] == sid[x[0]] and not (y[0] < x[1] and x[0] < y[1]):
                hits.add("weak-combination", _join(t, cid, x, y), "soft")
                break

    subject_at = {}  # clause -> first 我/他 in it
    for a, _ in pronouns + m["third_person"]:
        subject_at[cid[a]] = min(a, subject_at.get(cid[a], a))
    strict = set(m["life_events_pronoun_only"])
    for a, b in m["life_events"] + m["health"] + m["life_events_pronoun_only"]:
        if subject_at.get(cid[a], len(t)) < a:
            continue  # 我…: already a life-event; 他们离婚了: someone else's
        end = min(cbounds[cid[a]][1], b + ZH_EVENT_TAIL)
        # 工作/房子 are too common: they need a real result verb (丢了, 定了), not any 了.
        mark = (zre["result"] if (a, b) in strict else _ZH_EVENT_MARK).search(t, b, end)
        if (mark or ((a, b) not in strict and t[b - 1] == "了")) and not _ZH_QUESTION.search(t[a:end]):
            hits.add("omitted-subject-event", t[a:mark.end() if mark else b], "life")
    for a, b in m["split"]:
        hits.add("omitted-subject-event", t[a:b], "life")
    for x in _ZH_FINALLY.finditer(t):
        hits.add("omitted-subject-event", x.group(0), "soft")
    for a, b in m["plan"]:
        if not question(a):
            hits.add("decision", t[a:b], "life")

    supported = {cid[x[0]] for c in ("life_events", "health", "feelings", "feelings_strong", "intense")
                 for x in m[c]}
    for cat, kind in _ZH_RELATIONS:
        if cat == "relations_pronoun_only":
            continue  # 妈/哥/家 alone are parts of too many words
        for a, b in m[cat]:
            happened = "了" in t[b:cbounds[cid[a]][1]]
            if happened or (not question(a) and (cid[a] in supported or cat == "relations_intimate")):
                hits.add("relationship-mention", t[a:b], kind)


def _en_variants(tok):
    out = {tok}
    if tok.endswith("'s"):
        out.add(tok[:-2])
    for suf, rep in (("ies", "y"), ("ied", "y"), ("ing", ""), ("ing", "e"), ("ed", ""), ("ed", "e"),
                     ("es", ""), ("s", ""), ("d", "")):
        if tok.endswith(suf) and len(tok) - len(suf) >= 3:
            base = tok[: -len(suf)] + rep
            out.add(base)
            if suf in ("ing", "ed") and base[-1:] == base[-2:-1]:
                out.add(base[:-1])  # stopped -> stop
    return out


class _EnView:
    """Lower-cased tokens of a text and every lexicon phrase found in them."""

    def __init__(self, text, lex):
        self.low = text.lower().replace("’", "'")
        self.tm = list(_EN_TOKEN.finditer(self.low))
        self.toks = [x.group(0) for x in self.tm]
        variants = [_en_variants(x) for x in self.toks]
        found, n_toks = {}, len(self.toks)
        for i in range(n_toks):
            for v in variants[i]:
                for ptoks, cat in lex["en_index"].get(v, ()):
                    n = len(ptoks)
                    if i + n <= n_toks and all(p == "*" or p in variants[i + j] for j, p in enumerate(ptoks[1:], 1)):
                        found.setdefault(cat, set()).add((i, i + n))
        self.m = {k: _Spans(v) for k, v in found.items()}
        self.first = {k: set(v.starts) for k, v in self.m.items()}

    def spans(self, cat):
        return self.m[cat].items if cat in self.m else []

    def starts(self, cat, i):
        return i in self.first.get(cat, ())


def _en_hits(view, lex, hits):
    toks, tm, low = view.toks, view.tm, view.low
    if not toks:
        return
    (sid_c, sbounds), (cid_c, _) = _segments(low, _SENT_BREAK), _segments(low, _CLAUSE_BREAK)
    sid, cid = [sid_c[x.start()] for x in tm], [cid_c[x.start()] for x in tm]
    pron, starts = lex["en_pronouns"], view.starts

    def ev(x, y):
        return _join(low, cid_c, (tm[x[0]].start(), tm[x[1] - 1].end()), (tm[y[0]].start(), tm[y[1] - 1].end()))

    def at(cat, lo, hi, i, seg=sid):
        if cat not in view.m:
            return []
        return [x for x in view.m[cat].between(lo, hi) if seg[x[0]] == seg[i]]

    for i, tok in enumerate(toks):
        if tok not in pron or (tok in ("me", "us") and i and starts("request_verbs", i - 1)):
            continue  # "tell me", "help us" address the assistant
        if starts("corporate_we", i):
            continue  # "we regret to inform you": an organisation, not the speaker
        p = (i, i + 1)
        if tok in ("my", "our", "mine", "ours"):
            for cat, code, kind in _EN_POSSESSED:
                for x in at(cat, i + 1, i + EN_POSSESSIVE_WINDOW, i, cid):
                    if not any(starts("tech_strong", k) for k in range(i + 1, x[1])):  # "my code"
                        hits.add(code, ev(p, x), kind)
            continue
        events = at("life_events", i + 1, i + EN_SUBJECT_WINDOW, i) + at("events_standalone", i + 1, i + 3, i)
        for x in events:
            hits.add("life-event", ev(p, x), "life")
        for cat, code, kind, width in _EN_AFTER_SUBJECT:
            for x in at(cat, i + 1, i + width, i):
                hits.add(code, ev(p, x), kind)
        for x in (y for a, b in at("negators_soft", i + 1, i + 3, i) for y in at("negated_positive", b, b + 2, i)):
            hits.add("first-person-state", ev(p, x), "soft")
        for k in (i + 1, i + 2) if tok in ("i'm", "im") else ():
            if k < len(toks) and toks[k].isdigit():  # "I'm 34"
                hits.add("self-description", ev(p, (k, k + 1)), "soft")
        for x in at("preferences", i + 1, i + 3, i):
            nxt = tuple(toks[x[1]:x[1] + 2])
            if not any(nxt[:len(q)] == q for q in lex["en_pref_excluded"]):
                hits.add("preference", ev(p, x), "soft")
        for x in at("decisions_strong", i + 1, i + 4, i):
            hits.add("decision", ev(p, events[0] if events else x), "life" if events else "soft")
        for x in at("decisions_weak", i + 1, i + 4, i) if events else ():
            hits.add("decision", ev(p, events[0]), "life")

    dismissed = lambda a: a and starts("dismissive_negators", a - 1)  # noqa: E731  "don't worry"
    for x in view.spans("feelings_strong"):
        if not dismissed(x[0]):
            hits.add("feeling-no-subject", ev(x, x), "soft")
    for a, b in view.spans("intensifiers"):
        cats = ("feelings", "feelings_strong") + (("vague_states",) if toks[a].startswith("feel") else ())
        for x in (x for cat in cats for x in at(cat, b, b + 1, a)):
            if not dismissed(a):
                hits.add("feeling-no-subject", ev((a, b), x), "soft")
    for x in view.spans("distress"):
        hits.add("feeling-no-subject", ev(x, x), "soft")
    for x in view.spans("vents"):
        hits.add("venting", ev(x, x), "vent")

    negated = [(a, y[1]) for a, b in view.spans("negators_soft") for y in at("negated_positive", b, b + 2, a)]
    states = _Spans(negated + [x for c in ("vague_states", "feelings", "feelings_strong", "health", "distress")
                               for x in view.spans(c)])
    for x in view.spans("time_spans"):
        for y in states.between(x[0] - 8, x[0] + 8):
            if sid[y[0]] == sid[x[0]] and not (y[0] < x[1] and x[0] < y[1]):
                hits.add("weak-combination", ev(x, y), "soft")
                break
    for x in view.spans("day_adjectives"):  # "rough day", "a weird week"
        for y in at("time_nouns", x[1], x[1], x[0]):
            hits.add("weak-combination", ev(x, y), "soft")

    # Omitted subject at the start of a clause: "got the job!!", "finally moved in".
    lead = {i for i in range(len(toks)) if i == 0 or cid[i] != cid[i - 1]}
    lead |= {b for a, b in view.spans("sentence_openers") if a in lead}
    for i in sorted(k for k in lead if k < len(toks)):
        if toks[i] in pron or starts("third_person", i):
            continue
        for x in at("events_standalone", i, i, i):
            hits.add("omitted-subject-event", ev(x, x), "life")
        for x in at("life_events", i + 1, i + 4, i) if starts("event_verbs", i) else ():
            hits.add("omitted-subject-event", ev((i, i + 1), x), "life")
    for x in view.spans("result_phrases"):  # "visa came through"
        for y in at("life_events", x[0] - 3, x[0] - 1, x[0]):
            hits.add("omitted-subject-event", ev(y, x), "life")

    asks = "?" in low
    for a, b in view.spans("relations_standalone"):
        if a and toks[a - 1] in lex["en_other_owners"]:
            continue  # "your mom", "a dad": someone else's
        lo, hi = sbounds[sid[a]]
        if not asks and not _EN_QUESTION.search(low[lo:hi].strip()):
            hits.add("relationship-mention", ev((a, b), (a, b)), "life")


def _technical(text, view, lex):
    score, ev = 0, []
    for rx in _CODE_SHAPES:
        x = rx.search(text)
        if x:
            score += 2
            ev.append(x.group(0).strip())
    for rx, pts in zip(lex["tech_zh"], (2, 1)):
        for x in rx.finditer(view.low):
            score += pts
            ev.append(x.group(0))
    spans = [(a, b, 2) for a, b in view.spans("tech_strong")] + [(a, b, 1) for a, b in view.spans("tech_weak")]
    taken = set()
    for a, b, pts in sorted(spans, key=lambda s: (s[0], s[0] - s[1])):
        if not taken.intersection(range(a, b)):  # "the build is" counts once, not thrice
            taken.update(range(a, b))
            score += pts
            ev.append(" ".join(view.toks[a:b]))
    return score, list(dict.fromkeys(_short(e) for e in ev if e))[:8]


def _split_wrapper(text, lex):
    """(prefix, inner) when the message asks to transform the text after a colon."""
    x = _WRAP_SPLIT.search(text[:120])
    inner = text[x.end():].strip() if x else ""
    if not inner:
        return None
    prefix = text[:x.start()]
    if lex["zre"]["wrapper_verbs"].search(prefix.lower()) or _EnView(prefix, lex).spans("wrapper_verbs"):
        return prefix, inner
    return None


def _personal_document(view, lex):
    x = lex["zre"]["personal_documents"].search(view.low)
    docs = view.spans("personal_documents")
    return x.group(0) if x else " ".join(view.toks[docs[0][0]:docs[0][1]]) if docs else None


def _impersonal_request(view, lex):
    """'write a story about a lonely robot', '什么是焦虑症': the mood word is not the speaker's."""
    zh_openers, en_openers = lex["openers"]
    low = view.low.strip()
    if low.startswith(zh_openers) or low.startswith(("什么是", "什么叫")) or _DEFINITION.search(low):
        return True
    return any(tuple(view.toks[:len(o)]) == o for o in en_openers)


def _collect(text, view, lex):
    hits = _Hits()
    _zh_hits(view.low, lex, hits)
    _en_hits(view, lex, hits)
    items = hits.final()
    if any(h[0] in _SPEAKER for h in items) or _personal_document(view, lex):
        return items
    if _impersonal_request(view, lex):
        return [h for h in items if h[0] not in _MOOD_ONLY]
    return items


def _survives(hits):
    """Life material outweighs technical context; moods and vents do not.
    A lone relative ("my dad's wifi is broken") does not."""
    life = [h for h in hits if h[2] == "life"]
    return any(h[0] != "relationship-mention" for h in life) or (bool(life) and len(hits) >= 2)


def _result(signal, reasons=(), vetoed=(), tech=(), low=False, lang="other"):
    def dicts(items):
        return [{"code": h[0], "evidence": h[1]} for h in items]
    return {"signal": signal, "requires_personal_understanding": signal == "personal",
            "reasons": dicts(reasons), "vetoed": dicts(vetoed), "technical_evidence": list(tech),
            "low_information": bool(low), "language": lang}


def classify(text):
    """Classify one user message; see the module docstring for the rules."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    lex = _load()
    body = text.strip()
    lang = _language(body)
    if not body:
        return _result("non-personal", lang=lang)
    low = _low_information(body, lex)
    if low == "ack":
        return _result("non-personal", low=True, lang=lang)
    if low:
        return _result("personal", [("low-information", _short(body))], low=True, lang=lang)

    view = _EnView(body, lex)
    wrapper = _split_wrapper(body, lex)
    inner_view = _EnView(wrapper[1], lex) if wrapper else view
    hits = _collect(wrapper[1] if wrapper else body, inner_view, lex)
    score, tech = _technical(body, view, lex)
    if wrapper:
        doc = _personal_document(_EnView(wrapper[0], lex), lex)
        hits += [("personal-document", _short(doc), "life")] if doc else []
        if hits:
            hits.insert(0, ("wrapped-task", _short(wrapper[0].strip()), "soft"))

    if hits:
        content = [h for h in hits if h[0] != "wrapped-task"]
        vent_only = all(h[2] == "vent" for h in content)
        if (score >= TECH_CONTEXT or (score and vent_only)) and not _survives(content):
            return _result("technical", vetoed=content, tech=tech, lang=lang)
        return _result("personal", hits, tech=tech, lang=lang)
    asks = _EN_QUESTION.search(view.low) or _ZH_TASK.search(body)
    if score >= TECH_CONTEXT or (score and asks):
        return _result("technical", tech=tech, lang=lang)
    return _result("non-personal", tech=tech, lang=lang)
