"""Personal cues in a user message: the shapes that show the person.

Pure and deterministic. Vocabulary lives in resources/classifier/*.json (read
once, cached); this module holds the shapes that combine it: first person near
a state, feeling, relationship, preference or decision word; strong feelings
without a subject; X得慌; a body part with a symptom; life events with an
omitted subject; a time span with a vague mood. Patterns use only literals and
bounded repeats and window lookups bisect, so cost is linear.

Each cue is (code, evidence, kind). The kind says how much it weighs:
`life` (the person's life, body and people: survives technical context),
`soft` (moods, preferences, self-questions: personal unless the turn is
technical), `vent` (frustration idioms: any technical word vetoes them) and
`weak` (first person, a time anchor of the day, narrative aspect: they explain
a turn saved by default but never outweigh evidence that it is not personal).
"""

import json
import re
from bisect import bisect_left, bisect_right
from .paths import resources_dir

RESOURCE_DIR = resources_dir() / "classifier"

EVIDENCE_MAX = 40
MAX_PER_CODE = 3
ZH_AFTER, ZH_BEFORE = 14, 3  # chars around 我 that still describe the speaker
ZH_EVENT_TAIL = 8  # chars after a life noun in which 了 marks a finished event
ZH_FAMILY_TAIL = 8  # chars after a relative in which a life or health word is their event
ZH_BODY_GAP = 4  # chars between a body part and its symptom: 膝盖有点疼, 胃又开始疼
EN_SUBJECT_WINDOW = 6  # tokens after I/me
EN_POSSESSIVE_WINDOW = 3  # tokens after my/our, within the clause
EN_BODY_GAP = 3  # tokens between a body part and its symptom: knee's acting up
EN_FAMILY_WINDOW = 6  # tokens after "my <relative>" in which a health or life word is their event

SENT_BREAK = re.compile(r"[。！？!?；;\n]|\.(?=\s|$)")
# A space between two Chinese characters parts clauses as a comma does (你记得我女朋友叫什么吗 我们分手了), and so
# do a wave dash, an ellipsis and an emoji (我妈生日哪天😂想给她惊喜).
CLAUSE_BREAK = re.compile(r"[，,。！？!?；;：:\n、～~…]|\.(?=\s|$)|\.{2,}|[\u2600-\u27bf\U0001f300-\U0001faff]+"
                          r"|(?<=[\u3400-\u9fff])[ \t\u3000]+(?=[\u3400-\u9fff])")
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
ZH_QUESTION = re.compile(r"[?？]|[吗么]\s*$|什么|怎么|如何|为什么|哪|几|多少|是不是|能不能|可不可以")
_EN_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_ZH_EVENT_MARK = re.compile(r"了|啦|没过|过|完")
_ZH_FINALLY = re.compile(r"终于[^，,。！？!?；;\n]{1,10}?了")
_ZH_VERB_DONE = re.compile(r"[\u4e00-\u9fff][了过完]$")
_ZH_DE_HUANG = re.compile(r"([\u4e00-\u9fff])得慌")
_ZH_ASPECT = re.compile(r"[\u4e00-\u9fff》」”）)]{1,2}了(?![解不])")
_REPEAT = re.compile(r"(.)\1+")
EN_QUESTION = re.compile(
    r"\?|(?:^|[,;:.]\s*)(?:how|why|what|what's|whats|which|where|when|who|can|could|should|is|are|does|"
    r"do|write|fix|convert|explain|implement|make|create|give)\b")

# (category, reason code, kind, chars before 我, chars after 我)
_ZH_AROUND_PRONOUN = [("health", "first-person-state", "life", ZH_BEFORE, ZH_AFTER),
                      ("preferences", "preference", "soft", 0, 6),
                      ("self_description", "self-description", "soft", 0, 8),
                      ("occupation", "occupation", "life", 0, 12)] + [
    (c, "first-person-state", "soft", ZH_BEFORE, ZH_AFTER)
    for c in ("feelings_strong", "feelings", "vague_states", "intense", "degree", "pairs", "negated", "dehuang")]
# (category, reason code, kind, last token offset after I/me)
_EN_AFTER_SUBJECT = (("feelings_strong", "first-person-state", "soft", EN_SUBJECT_WINDOW),
                     ("health", "first-person-state", "life", EN_SUBJECT_WINDOW),
                     ("distress", "first-person-state", "soft", EN_SUBJECT_WINDOW),
                     ("feelings", "first-person-state", "soft", 3),
                     ("self_description", "self-description", "soft", 3),
                     ("occupation", "occupation", "life", 3))  # I (still, currently, have been) work at
_ZH_RELATIONS = (("relations_intimate", "life"), ("relations", "life"),
                 ("relations_pronoun_only", "life"), ("relations_work", "soft"))
_EN_POSSESSED = (("relations", "relationship-mention", "life"),
                 ("relations_work", "relationship-mention", "soft"),
                 ("life_events", "life-event", "life"), ("health", "first-person-state", "life"),
                 ("body_parts", "first-person-state", "soft"),
                 ("feelings_strong", "first-person-state", "soft"))
MOOD_ONLY = {"feeling-no-subject", "weak-combination", "de-huang-shape"}
_EN_NAME_OWNER = re.compile(r"(?<![\w'])([A-Z][a-z]{1,20})['’]s(?![a-z])")
_EN_ASKING = {"how", "can", "could", "where", "what", "which", "should", "do", "is"}  # frames of a how-to question
_EN_FEEL = {"feel", "feeling", "felt", "feels"}
_EN_FEEL_LEAD = {"been", "still", "just", "and", "but", "so", "always", "really", "kinda", "honestly", "also"}

_CACHE = {}


def load():
    if "lex" not in _CACHE:
        data = {}
        for name in ("zh", "en", "technical"):
            with open(RESOURCE_DIR / f"{name}.json", encoding="utf-8") as fh:
                data[name] = json.load(fh)
        _CACHE["lex"] = _compile(data)
    return _CACHE["lex"]


def alt(words):
    """Literal alternation, longest first; ASCII words get letter boundaries."""
    parts = []
    for w in sorted({w.lower() for w in words if w}, key=len, reverse=True):
        p = re.escape(w)
        p = (r"(?<![a-z])" if re.match(r"[a-z0-9]", w) else "") + p
        parts.append(p + (r"(?![a-z])" if re.search(r"[a-z0-9]$", w) else ""))
    return "(?:" + "|".join(parts) + ")" if parts else r"(?!x)x"


def en_tokens(phrase):
    out = []
    for piece in phrase.lower().replace("-", " ").split():
        out.extend(["*"] if piece == "*" else _EN_TOKEN.findall(piece))
    return out


def _words(lists):
    """Every list of plain strings in a vocabulary file, by key."""
    return {k: v for k, v in lists.items() if isinstance(v, list) and all(isinstance(w, str) for w in v)}


def _compile(data):
    zh, en, tech = data["zh"], data["en"], data["technical"]
    zre = {k: re.compile(alt(v)) for k, v in _words(zh).items()}
    gap = r"[^，,。！？!?；;\s]{0,3}?"
    zre["intense"] = re.compile(alt(zh["intensifiers"]) + alt(zh["feelings_strong"] + zh["feelings"]
                                                                + zh["feeling_chars"]))
    zre["degree"] = re.compile(alt(zh["feelings"] + zh["feeling_chars"]) + alt(zh["degree_suffixes"]))
    zre["pairs"] = re.compile("|".join(re.escape(a) + gap + re.escape(b) for a, b in zh["feeling_pairs"]))
    zre["negated"] = re.compile(alt(zh["negators_soft"]) + alt(zh["negated_positive"]))
    # 搬家 -> 搬完家, 吵架 -> 吵了一架: the aspect marker splits the compound.
    zre["split"] = re.compile("|".join(re.escape(w[0]) + r"(?:了|完|过|好)" + gap + re.escape(w[1:])
                                       for w in zh["split_compounds"]))
    events = zh["life_events"] + zh["life_events_pronoun_only"]
    zre["plan"] = re.compile(alt(zh["decisions_strong"] + zh["decisions_weak"]) + gap + alt(events))
    zre["result"] = re.compile(alt(zh["event_result_verbs"]))
    # 还没结婚, 刚交了房租, 已经离职: aspect before the verb marks the speaker's event as well as 了 after it
    zre["aspect_before"] = re.compile("(?:" + alt(zh["aspect_before"]) + ")$")
    people = zh["relations_intimate"] + zh["relations"] + zh["relations_work"]
    zre["relational"] = re.compile(r"(?<![他她它])" + alt(zh["relational_preps"]) + alt(people))
    zre["kin"] = re.compile(alt(zh["relations_intimate"] + zh["relations"]))
    zre["predicament"] = re.compile(alt(zh["predicament_marks"]) + r"[^，,。！？!?；;\n]{0,12}?"
                                    + alt(zh["predicament_questions"]))
    zre["body"] = re.compile(alt(zh["body_parts"]) + r"[^，,。！？!?；;\s]{0,%d}?" % ZH_BODY_GAP
                             + alt(zh["body_symptoms"]))
    symbols = [w for w in tech["en_strong"] if re.search(r"[+#]", w)]  # c++, c#: tokens would drop the symbol
    index = {}  # English phrases: first token -> [(tokens, category)]
    for cat, words in list(_words(en).items()) + [("tech_strong", tech["en_strong"]), ("tech_weak", tech["en_weak"]),
                                                  ("tech_not", tech["en_not_technical"])]:
        for w in words:
            if cat == "tech_strong" and w in symbols:
                continue
            toks = en_tokens(w)
            if toks:
                index.setdefault(toks[0], []).append((tuple(toks), cat))
    acks = zh["acknowledgements"] + en["acknowledgements"]
    return {
        "data": data, "zre": zre, "en_index": index,
        "tech_zh": (re.compile(alt(tech["zh_strong"])), re.compile(alt(tech["zh_weak"]))),
        "tech_symbols": re.compile(alt(symbols) + r"(?![\w+#])"),
        "zh_calendar": set(zh["calendar_times"]),
        "en_not_names": set(en["question_starts"] + en["third_person"] + ["it", "that", "there", "here", "let"]),
        "en_kin_modifiers": set(en["kin_modifiers"]), "en_feel_not": set(en["feel_not_state"]),
        "en_earned": set(en["earned_after_tech"]),
        "common_acronyms": set(tech["common_acronyms"]),
        "zh_dismissive": tuple(zh["dismissive_negators"]),
        "zh_dehuang_exclude": set(zh["de_huang_exclude"]),
        "zh_interjections": set(zh["interjection_chars"]),
        "en_pronouns": set(en["pronouns"]), "en_other_owners": set(en["other_owners"]),
        "en_pref_excluded": [tuple(en_tokens(p)) for p in en["preference_excluded_next"]],
        "low": {norm_chunk(w) for w in zh["low_info"] + en["low_info"]},
        # 哈哈好的 = 哈哈 + 好的: a run of acknowledgements is one
        "ack_zh": re.compile("(?:" + alt(w for w in zh["acknowledgements"] if CJK.search(w)) + ")+"),
        # 唉算了吧 = 唉 + 算了 + 吧: a short run of sighs is still a sigh
        "low_zh": re.compile("(?:" + alt(w for w in zh["low_info"] + zh["acknowledgements"] if CJK.search(w)) + ")+"),
        "ack": {norm_chunk(w) for w in acks},
        "ack_raw": {" ".join(w.lower().split()) for w in acks},
    }


def norm_chunk(s):
    return _REPEAT.sub(r"\1", " ".join(s.lower().replace("’", "'").split()))


def short(s):
    s = " ".join(s.split())
    return s if len(s) <= EVIDENCE_MAX else s[:EVIDENCE_MAX - 1] + "…"


class Hits:
    """Cues found so far: (code, evidence, kind) with kind life|soft|vent|weak."""

    def __init__(self):
        self.items, self.count = [], {}

    def add(self, code, evidence, kind):
        ev = short(evidence)
        n = self.count.get(code, 0)
        seen = next((i for i, h in enumerate(self.items) if h[:2] == (code, ev)), None)
        if seen is not None:
            if kind == "life" and self.items[seen][2] != "life":  # burnt out: a feeling, and also health
                self.items[seen] = (code, ev, kind)
        elif ev and n < MAX_PER_CODE:
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


class Spans:
    """Sorted (start, end) spans of one category; window lookup by start."""

    def __init__(self, items):
        self.items = sorted(items)
        self.starts = [a for a, _ in self.items]

    def between(self, lo, hi):
        return self.items[bisect_left(self.starts, lo):bisect_right(self.starts, hi)]


def segments(text, breaker):
    """Segment id of every char (plus one past the end) and each segment's bounds."""
    ids, bounds, last = [], [], 0
    for m in breaker.finditer(text):
        ids.extend([len(bounds)] * (m.end() - last))
        bounds.append((last, m.end()))
        last = m.end()
    ids.extend([len(bounds)] * (len(text) - last + 1))
    bounds.append((last, len(text)))
    return ids, bounds


def clause_spans(text):
    """[(start, end, after)] of each clause: text[start:end] is the clause, the next one begins at after."""
    out, last = [], 0
    for m in CLAUSE_BREAK.finditer(text):
        out.append((last, m.start(), m.end()))
        last = m.end()
    out.append((last, len(text), len(text)))
    return out


def join(text, cid, x, y):
    """Evidence for two spans: one stretch if close in one clause, else 'A…B'."""
    (a, b), (c, d) = sorted((x, y))
    if c - b <= 4 and cid[a] == cid[max(c, b) - 1]:
        return text[a:max(b, d)]
    return text[a:b] + "…" + text[c:d]


def zh_cues(t, lex, hits):
    if not CJK.search(t):
        return
    zre = lex["zre"]
    (sid, sbounds), (cid, cbounds) = segments(t, SENT_BREAK), segments(t, CLAUSE_BREAK)
    m = {k: [(x.start(), x.end()) for x in rx.finditer(t)] for k, rx in zre.items()}
    m["dehuang"], needs = [], []
    for x in _ZH_DE_HUANG.finditer(t):  # 闷得慌 is a feeling, 饿得慌 a body need
        (needs if x.group(1) in lex["zh_dehuang_exclude"] else m["dehuang"]).append((x.start(1), x.end()))
    idx = {k: Spans(v) for k, v in m.items()}
    requests = idx["request_prefixes"]
    # "帮我…" / "给我…" address the assistant, not the speaker's life.
    pronouns = [p for p in m["pronouns"] if not any(a <= p[0] < b for a, b in requests.between(p[0] - 4, p[0]))]
    asked, clause_asked = {}, {}

    def question(a):
        s = sid[a]
        if s not in asked:
            asked[s] = bool(ZH_QUESTION.search(t[sbounds[s][0]:sbounds[s][1]]))
        return asked[s]

    def clause_question(a):  # 老公打呼噜很严重，有什么办法: the first clause tells, only the last asks
        c = cid[a]
        if c not in clause_asked:
            clause_asked[c] = bool(ZH_QUESTION.search(t, *cbounds[c]))
        return clause_asked[c]

    def near(cat, p, before=ZH_BEFORE, after=ZH_AFTER):
        return [x for x in idx[cat].between(p[0] - before, p[1] + after) if sid[x[0]] == sid[p[0]]]

    for p in pronouns:
        s, e = p
        clause_end = cbounds[cid[s]][1]
        hits.add("first-person", t[s:min(clause_end, s + 8)].rstrip("，,。！？!?；;：:、 \n"), "weak")
        for cat, kind in _ZH_RELATIONS:
            for a, b in near(cat, p, 0, 2):
                # 我妈, 我的哥, 我和老公; but 我老家 is not a relative
                if a >= e and cid[a] == cid[s] and (b - a > 1 or t[e:a] in ("", "的")):
                    hits.add("relationship-mention", t[s:b], kind)
        events = near("life_events", p)
        for x in events + near("life_events_pronoun_only", p, 0, 3):  # 我工作三年了, not 我要写工作总结
            hits.add("life-event", join(t, cid, p, x), "life")
        for cat, code, kind, before, after in _ZH_AROUND_PRONOUN:
            for x in near(cat, p, before, after):
                hits.add(code, join(t, cid, p, x), kind)
        for x in near("decisions_strong", p, 0, 6):
            hits.add("decision", join(t, cid, p, events[0] if events else x), "life" if events else "soft")
        for x in near("decisions_weak", p, 0, 4) if events else ():
            hits.add("decision", join(t, cid, p, events[0]), "life")

    for cat in ("feelings_strong", "intense", "degree", "pairs"):
        for a, b in m[cat]:
            if not t[max(0, a - 3):a].endswith(lex["zh_dismissive"]):  # 别难过 comforts someone else
                hits.add("feeling-no-subject", t[a:b], "soft")
    for a, b in m["dehuang"]:
        hits.add("de-huang-shape", t[a - 1 if a and CJK.match(t[a - 1]) else a:b], "soft")
    for a, b in m["vents"]:
        hits.add("venting", t[a:b], "vent")
    for x in zre["body"].finditer(t):  # 膝盖有点疼, 半边脸都肿了; but 看得我头疼 is a figure of speech
        figurative = t[max(0, x.start() - 2):x.start()].endswith(("得", "得我", "让我", "把我"))
        hits.add("body-state", x.group(0), "soft" if figurative else "life")
    for a, b in m["self_reflection"]:
        hits.add("self-reflection", t[a:b], "life")
    for a, b in m["body_needs"] + needs:
        hits.add("body-state", t[a:b], "life")
    for a, b in m["life_times"] + m["time_spans"]:
        hits.add("time-anchor", t[a:b], "weak")
    for x in _ZH_ASPECT.finditer(t):
        hits.add("narrative", x.group(0), "weak")

    states = Spans(x for c in ("vague_states", "negated", "feelings", "feelings_strong", "health", "pairs")
                    for x in m[c])
    for x in m["time_spans"]:
        for y in states.between(x[1] - 6, x[1] + 12):
            if sid[y[0]] == sid[x[0]] and not (y[0] < x[1] and x[0] < y[1]):
                hits.add("weak-combination", join(t, cid, x, y), "soft")
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
        done = mark.end() if mark else b
        lead = (a, b) not in strict and (zre["aspect_before"].search(t, max(cbounds[cid[a]][0], a - 4), a)
                                         or _ZH_VERB_DONE.search(t, max(cbounds[cid[a]][0], a - 2), a))  # 交了房租
        # 失恋了怎么走出来 happened; 签证需要哪些材料 asks about one that has not
        if (mark or lead or ((a, b) not in strict and t[b - 1] == "了")) and not ZH_QUESTION.search(t[a:done]):
            hits.add("omitted-subject-event", t[lead.start() if lead else a:mark.end() if mark else b], "life")
    for a, b in m["split"]:
        hits.add("omitted-subject-event", t[a:b], "life")
    for x in m["life_times"]:  # 明天就是转正答辩, 下周二面试: an event on the speaker's own calendar
        if t[x[0]:x[1]] in lex["zh_calendar"]:
            continue  # 春节放假: everyone's calendar
        near_events = idx["life_events"].between(x[0] - ZH_EVENT_TAIL, x[1] + ZH_EVENT_TAIL)
        y = next((y for y in near_events if cid[y[0]] == cid[x[0]]), None)
        if y:
            hits.add("scheduled-event", join(t, cid, x, y), "life")
    for x in _ZH_FINALLY.finditer(t):
        hits.add("omitted-subject-event", x.group(0), "soft")
    for a, b in m["plan"]:
        if not question(a):
            hits.add("decision", t[a:b], "life")

    for a, b in m["decision_questions"]:  # 二胎要不要生, 要不要辞职: a life decision put as a question
        for x in idx["life_events"].between(cbounds[cid[a]][0], cbounds[cid[a]][1]):
            hits.add("decision", join(t, cid, (a, b), x), "life")
    for a, b in m["relational"]:  # 跟老板提加薪, 和老婆吵架: the speaker with their people
        # 给女儿做…, 陪爸妈…: doing something with or for one's family is the speaker's life, even in technical context
        if zre["kin"].search(t, a + 1, b):
            hits.add("with-family", t[a:b], "life")
        else:
            hits.add("relationship-mention", t[a:b], "soft")
    for x in zre["predicament"].finditer(t):  # 孩子不肯上学怎么办, 手机掉水里了怎么办: the asker's own plight
        hits.add("predicament", x.group(0), "soft")

    supported = {cid[x[0]] for c in ("life_events", "health", "feelings", "feelings_strong", "intense")
                 for x in m[c]}
    for cat, kind in _ZH_RELATIONS:
        if cat == "relations_pronoun_only":
            continue  # 妈/哥/家 alone are parts of too many words
        for a, b in m[cat]:
            happened = "了" in t[b:cbounds[cid[a]][1]]
            if happened or (not clause_question(a) and (cid[a] in supported or cat == "relations_intimate")):
                hits.add("relationship-mention", t[a:b], kind)
            if kind == "life" and (cat == "relations_intimate" or not clause_question(a)):
                # 儿子的家长会, 外婆住院了: their event is the speaker's family life; 孩子几岁上幼儿园 is not
                for x in idx["life_events"].between(b, b + ZH_FAMILY_TAIL) + idx["health"].between(b, b + ZH_FAMILY_TAIL):
                    if cid[x[0]] == cid[a]:
                        hits.add("family-event", t[a:x[1]], "life")


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


class EnView:
    """Lower-cased tokens of a text and every lexicon phrase found in them."""

    def __init__(self, text, lex):
        self.text, self.low = text, text.lower().replace("’", "'")
        self.tm = list(_EN_TOKEN.finditer(self.low))
        self.starts_at = [x.start() for x in self.tm]
        self.toks = [x.group(0) for x in self.tm]
        variants = [_en_variants(x) for x in self.toks]
        found, n_toks = {}, len(self.toks)
        for i in range(n_toks):
            for v in variants[i]:
                for ptoks, cat in lex["en_index"].get(v, ()):
                    n = len(ptoks)
                    if i + n <= n_toks and all(p == "*" or p in variants[i + j] for j, p in enumerate(ptoks[1:], 1)):
                        found.setdefault(cat, set()).add((i, i + n))
        self.m = {k: Spans(v) for k, v in found.items()}
        self.first = {k: set(v.starts) for k, v in self.m.items()}

    def spans(self, cat):
        return self.m[cat].items if cat in self.m else []

    def starts(self, cat, i):
        return i in self.first.get(cat, ())


def en_cues(view, lex, hits):
    toks, tm, low = view.toks, view.tm, view.low
    if not toks:
        return
    (sid_c, sbounds), (cid_c, cbounds) = segments(low, SENT_BREAK), segments(low, CLAUSE_BREAK)
    sid, cid = [sid_c[x.start()] for x in tm], [cid_c[x.start()] for x in tm]
    pron, starts = lex["en_pronouns"], view.starts

    def ev(x, y):
        return join(low, cid_c, (tm[x[0]].start(), tm[x[1] - 1].end()), (tm[y[0]].start(), tm[y[1] - 1].end()))

    def at(cat, lo, hi, i, seg=sid):
        if cat not in view.m:
            return []
        return [x for x in view.m[cat].between(lo, hi) if seg[x[0]] == seg[i]]

    def after_tech(x):  # "cron job", "code review": the life word is half of a technical term
        return any(b >= x[0] for cat in ("tech_strong", "tech_weak") if cat in view.m
                   for a, b in view.m[cat].between(x[0] - 6, x[1] - 1))

    generic = [b for a, b in view.spans("generic_frames") if toks[a] in _EN_ASKING]
    for i, tok in enumerate(toks):
        if tok not in pron or (tok in ("me", "us") and i and starts("request_verbs", i - 1)):
            continue  # "tell me", "help us" address the assistant
        if i + 1 in generic and starts("task_openers", i + 1):
            continue  # "how do I write a good wedding toast": anyone's how-to, not the speaker's wedding
        if starts("corporate_we", i):
            continue  # "we regret to inform you": an organisation, not the speaker
        p = (i, i + 1)
        hits.add("first-person", ev(p, (i, min(len(toks), i + 4))), "weak")
        if tok in ("my", "our", "mine", "ours"):
            for cat, code, kind in _EN_POSSESSED:
                for x in at(cat, i + 1, i + EN_POSSESSIVE_WINDOW, i, cid):
                    if not any(starts("tech_strong", k) for k in range(i + 1, x[1])):  # "my code"
                        hits.add(code, ev(p, x), kind)
            if i + 2 < len(toks) and toks[i + 1] in lex["en_kin_modifiers"] and starts("relations", i + 2):
                hits.add("family-event", ev(p, (i + 1, i + 3)), "life")  # "my late mom", "my elderly dad"
            for x in at("relations", i + 1, i + 2, i, cid):  # "my grandma is in the hospital"
                for y in at("health", x[1], x[1] + EN_FAMILY_WINDOW, i, cid) + at("life_events", x[1], x[1] + EN_FAMILY_WINDOW, i, cid):
                    hits.add("family-event", ev(p, y), "life")
                for y in at("relation_facts", x[1], x[1], i, cid):  # "my husband is a backend engineer": who they are
                    said = (i, min(len(toks), y[1] + 1))  # with the word after: "my husband is a backend"
                    hits.add("family-event", ev(said, said), "life")
            continue
        events = at("life_events", i + 1, i + EN_SUBJECT_WINDOW, i) + at("events_standalone", i + 1, i + 3, i)
        # "cron job": the life word is half of a technical term; "I got the AWS certification" is still earned
        events = [x for x in events if not after_tech(x) or toks[x[0]] in lex["en_earned"]]
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
    for a, b in view.spans("body_parts"):  # "knee's acting up"; but "makes my head hurt" is a figure of speech
        for x in at("body_symptoms", b, b + EN_BODY_GAP, a):
            figurative = any(starts("causatives", k) for k in range(max(0, a - 3), a))
            hits.add("body-state", ev((a, b), x), "soft" if figurative else "life")
    for x in view.spans("self_reflection"):
        hits.add("self-reflection", ev(x, x), "life")
    for x in view.spans("body_needs"):
        hits.add("body-state", ev(x, x), "life")
    for x in view.spans("life_times"):
        hits.add("time-anchor", ev(x, x), "weak")
        for y in at("dated_events", x[0] - 6, x[1] + 6, x[0], cid):  # "interview on friday", "surgery tomorrow"
            if not after_tech(y):
                hits.add("scheduled-event", ev(x, y), "life")
    for i, tok in enumerate(toks):  # "feel so behind", "been feeling invisible": a state the speaker reports
        if tok in _EN_FEEL and (i == 0 or cid[i] != cid[i - 1] or toks[i - 1] in pron or toks[i - 1] in _EN_FEEL_LEAD):
            j = max([i + 1] + [b for _, b in at("intensifiers", i + 1, i + 1, i)])
            if j < len(toks) and toks[j] not in lex["en_feel_not"] and toks[j] not in pron:
                hits.add("first-person-state", ev((i, i + 1), (j, j + 1)), "soft")
    for x in view.spans("past_verbs"):
        hits.add("narrative", ev(x, x), "weak")
    for x in view.spans("plan_verbs"):  # "help me plan a trip", "prepare for my interview"
        for y in at("life_events", x[1], x[1] + 4, x[0]):
            hits.add("plan", ev(x, y), "life")

    negated = [(a, y[1]) for a, b in view.spans("negators_soft") for y in at("negated_positive", b, b + 2, a)]
    states = Spans(negated + [x for c in ("vague_states", "feelings", "feelings_strong", "health", "distress")
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

    asked = {}

    def question(s):  # once per sentence
        if s not in asked:
            lo, hi = sbounds[s]
            text = low[lo:hi].strip()
            asked[s] = "?" in text or bool(EN_QUESTION.search(text))
        return asked[s]

    for x in _EN_NAME_OWNER.finditer(view.text):  # "Tom's wedding is in June": someone of the speaker's and their event
        k = bisect_left(view.starts_at, x.start())
        if k >= len(toks) or x.group(1).lower() in lex["en_not_names"] or question(sid[k]):
            continue  # "What's…", "when is Obama's birthday?": not a person of the speaker's telling
        for y in at("life_events", k + 1, k + 2, k, cid):
            hits.add("family-event", ev((k, k + 1), y), "life")

    asks = "?" in low

    def told_before_asking(c):  # "Mom's 70th is next month, ideas for a party?": a clause that tells, then the question
        lo, hi = cbounds[c]
        text = low[lo:hi].strip()
        return c < cid[-1] and "?" not in text and not EN_QUESTION.search(text)

    for a, b in view.spans("relations_standalone"):
        if a and toks[a - 1] in lex["en_other_owners"]:
            continue  # "your mom", "a dad": someone else's
        if (not asks and not question(sid[a])) or told_before_asking(cid[a]):
            hits.add("relationship-mention", ev((a, b), (a, b)), "life")


def collect(text, view, lex):
    """Every personal cue in text, a longer one covering the shorter it contains."""
    hits = Hits()
    zh_cues(view.low, lex, hits)
    en_cues(view, lex, hits)
    return hits.final()


def strong(cues):
    """Cues that can outweigh evidence of a non-personal turn (all but `weak`)."""
    return [h for h in cues if h[2] != "weak"]


def survives(cues):
    """Life material outweighs technical context; moods and vents do not. A lone relative
    ("my dad's wifi is broken") does not, unless the day's time says it is about the person's
    evening ("debugging till 3am again, my wife is furious")."""
    timed = any(h[0] == "time-anchor" for h in cues)
    cues = strong(cues)
    life = [h for h in cues if h[2] == "life"]
    return any(h[0] != "relationship-mention" for h in life) or (bool(life) and (len(cues) >= 2 or timed))


