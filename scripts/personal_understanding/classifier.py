"""Turn classifier: does this message carry the person, ask the memory, or neither?

Pure and deterministic. The default is to save: a turn is `full` (signal
`personal`) unless there is positive evidence that it carries nothing of the
person, because a missed message is lost for good while an extra capture can
be forgotten. The evidence that allows a skip:

- `technical`: code shapes or technical vocabulary, unless life material
  (people, body, life events) is there too; feeling words alone ("this
  segfault is killing me") are about the code and are vetoed;
- every sentence has a non-personal form (classifier_forms): a factual or
  how-to question, a task on text that is not the user's, an acknowledgement
  or greeting, small talk, and no personal cue (classifier_cues) outweighs it.

Explicit requests to remember are always `full`. A question that asks the
memory ("我最近怎么样", "who owes me money?") sets `recall`; with nothing new
besides it the signal is `recall` (a read turn, nothing to capture), with
something new it stays `personal`. An order to forget what was said ("把那件事删掉",
"forget what I said about…") is read the same way, with a `forget-request` reason.
Every decision lists the cues that made it in `reasons` as {code, evidence}.

One exception to saving: a message that gives a credential's value (a password,
a PIN, an API key; see credentials.py) is `credential` and is never captured.
"""

import re

from . import classifier_cues as cues
from . import credentials
from .retrieval.lexicon import TRADITIONAL
from . import classifier_forms as forms
from .classifier_cues import CJK, EVIDENCE_MAX, RESOURCE_DIR, short  # noqa: F401  (re-exported)

CLASSIFIER_VERSION = "2.11.0"

TECH_CONTEXT = 2  # strong technical term = 2 points, weak = 1
MAX_TECH_REASONS = 3
NEW_MATERIAL = (3, 2)  # CJK chars / English words a statement beside a recall question needs to count as news
DEFAULT_EVIDENCE = "no sign of a technical, factual, task or small-talk turn"

_LATIN = re.compile(r"[a-zA-Z]")
_OTHER_LETTER = re.compile(r"[^\W\d_a-zA-Z\u3400-\u9fff\uf900-\ufaff]")
_WRAP_SPLIT = re.compile(r"[:：\n]")
_WORD = re.compile(r"[a-zA-Z]+")
_PUNCT = " ,，。.!！?？、;；:：~～…\n"
_ACRONYM = re.compile(r"(?<![A-Za-z])[A-Z]{3,6}(?![A-Za-z])")
# A recall question whose complement says something new: "did I tell you I got the job?"
_NEWS = {"life-event", "omitted-subject-event", "decision", "first-person-state", "body-state", "family-event",
         "plan", "self-description", "preference", "scheduled-event"}
_TOLD_SUBJECT = re.compile(r"^(?:that\s+)?(?:i|i'm|i've|we|we're|we've)\b|^(?:我|我们)")
# "my sister lives in Denver": someone of the speaker's and what they do or are; not a topic alone
# ("my uncle to you", "my allergies")
_TOLD_FACT = re.compile(r"^(?:that\s+)?(?:my|our)\s+(?:[a-z'-]+\s+){1,2}?(?:is|are|was|were|has|had|lives|lived|got|"
                        r"moved|works|worked|passed|died|left|started|quit|broke|bought|sold|won|lost|married|"
                        r"divorced|gets|just)\b")
_TOLD_TOPIC = re.compile(r"的(?:事|事情|情况|问题|那件事)")
_TOLD_AFTER = re.compile(r"[,，;；]|\s[-–—]\s")  # where a clause after the topic told begins

# Shapes only code has: call syntax, identifiers, paths, error classes.
_CODE_SHAPES = [re.compile(p) for p in (
    r"`",
    r"\b[A-Za-z_]\w{0,40}\([^()\n]{0,60}\)",
    r"\.(?:py|js|ts|tsx|jsx|java|go|rs|cpp|h|rb|php|json|ya?ml|toml|csv|txt|md|html|css|sh|sql|log|xml|ini)\b",
    r"\b[A-Z]\w{0,40}(?:Error|Exception)\b",
    r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+){2,}\b",
    r"\b[a-z]+(?:[A-Z][a-z0-9]+){2,}\b",
    r"\b[A-Z]{2,}[A-Z][a-z]{2,}\b",  # OOMKilled, HTTPServer
    r"\b[a-z][a-z0-9]{0,30}_[a-z0-9_]{1,30}\b",
    r"==|!=|=>|->|::|&&|\|\||\+\+|</?[a-z]{1,10}>|\{\s{0,3}\}",
    r"(?:^|\s)[~.]{0,2}/[\w.-]{1,40}/[\w./-]{1,80}",
    r"\bO\([nN1]",
    r"(?:^|\s)--[a-z][a-z-]{1,30}",
    r"(?i)\b(?:40[0-9]|50[0-4])\b(?=.{0,20}(?:error|返回|报|status|bad|gateway|forbidden|unauthori|on every|request))",
    r"\b(?:40[0-9]|50[0-4])s\b",  # "the 503s started"
)]


def _language(text):
    cjk, latin = len(CJK.findall(text)), len(_LATIN.findall(text))
    if cjk == 0 and latin == 0 or len(_OTHER_LETTER.findall(text)) > cjk + latin:
        return "other"
    zh_w, en_w = cjk, latin / 4.0  # one hanzi carries about one short English word
    if zh_w and en_w and min(zh_w, en_w) / max(zh_w, en_w) >= 0.3:
        return "mixed"
    return "zh" if zh_w >= en_w else "en"


def _technical(text, view, lex):
    score, ev = 0, []
    for rx in _CODE_SHAPES:
        x = rx.search(text)
        if x:
            score += 2
            ev.append(x.group(0).strip())
    for rx, pts in zip(lex["tech_zh"] + (lex["tech_symbols"],), (2, 1, 2)):
        for x in rx.finditer(view.low):
            score += pts
            ev.append(x.group(0))
    acronyms = [x.group(0) for x in _ACRONYM.finditer(text) if x.group(0) not in lex["common_acronyms"]]
    if acronyms:  # CORS, QPS, NotReady-style names nobody lists: a hint, never enough alone
        score += 1
        ev.append(acronyms[0])
    spans = [(a, b, 2) for a, b in view.spans("tech_strong")] + [(a, b, 1) for a, b in view.spans("tech_weak")]
    taken = {k for a, b in view.spans("tech_not") for k in range(a, b)}  # "enough to function": the verb
    for a, b, pts in sorted(spans, key=lambda s: (s[0], s[0] - s[1])):
        if not taken.intersection(range(a, b)):  # "the build is" counts once, not thrice
            taken.update(range(a, b))
            score += pts
            ev.append(" ".join(view.toks[a:b]))
    return score, list(dict.fromkeys(short(e) for e in ev if e))[:8]


def _split_wrapper(text, lex):
    """(prefix, inner) when the message asks to transform the text after a colon."""
    x = _WRAP_SPLIT.search(text[:120])
    inner = text[x.end():].strip() if x else ""
    if not inner:
        return None
    prefix = text[:x.start()]
    view = cues.EnView(prefix, lex)
    if any(_first(prefix.lower(), view, lex, k) for k in ("wrapper_verbs", "text_pointers")):
        return prefix, inner
    return None


def _first(low, view, lex, key):
    """The first word of list `key` in the text, Chinese or English, or None."""
    x = lex["zre"][key].search(low)
    spans = view.spans(key)
    return x.group(0) if x else " ".join(view.toks[spans[0][0]:spans[0][1]]) if spans else None


def _wrapped(prefix, inner, lex):
    """Cues of a task wrapped around a text: the text's own, its kind of document, or a first-person
    narrative ("I went…", "我…了") which is the user's own words more often than an example."""
    found = cues.collect(inner, cues.EnView(inner, lex), lex)
    outer = cues.EnView(prefix, lex)
    found += [h for h in cues.collect(prefix, outer, lex) if h[2] == "life"]  # "a message to my landlord: …"
    found += _state_apart(prefix, lex)  # "我今天好累。这段代码报错：…"
    doc = _first(outer.low, outer, lex, "personal_documents")
    if doc:
        found.append(("personal-document", short(doc), "life"))
    weak = {h[0] for h in found if h[2] == "weak"}
    if not cues.strong(found) and "first-person" in weak and weak & {"narrative", "time-anchor"}:
        found.append(("first-person-text", next(h[1] for h in found if h[0] == "first-person"), "soft"))
    return found


_STATE_CODES = ("first-person-state", "feeling-no-subject", "body-state")


def _state_apart(text, lex):
    """The speaker's own state said in a clause with no technical word and set apart from the request
    by a time of day or a change of subject ("我今天好累。这段代码报错：…", "心情不好，顺便帮我看看这个报错"):
    how the person is, not how the code is. [] when there is none."""
    clauses = [c.strip() for c in cues.CLAUSE_BREAK.split(text)]
    clauses = [c for c in clauses if c]
    for i, clause in enumerate(clauses):
        view = cues.EnView(clause, lex)
        found = cues.collect(clause, view, lex)
        states = [h for h in found if h[0] in _STATE_CODES and h[2] != "weak"]
        if not states or _technical(clause, view, lex)[0]:
            continue
        if any(h[0] == "time-anchor" for h in found) or (i + 1 < len(clauses) and _shifts(clauses[i + 1], lex)):
            return [("state-apart", states[0][1], "life")]
    return []


def _shifts(clause, lex):
    """Whether a clause opens with a change of subject (顺便, by the way, anyway)."""
    view = cues.EnView(clause, lex)
    return bool(lex["zre"]["topic_shifts"].match(view.low) or view.starts("topic_shifts", 0))


class _Message:
    """What every rule reads, computed once: tokens, technical score, sentences, task wrapper."""

    def __init__(self, body, lex):
        self.body, self.view = body, cues.EnView(body, lex)
        self.score, self.tech = _technical(body, self.view, lex)
        self.sents = forms.sentences(body, lex)
        self.wrapper = _split_wrapper(body, lex)

    @property
    def technical(self):
        return self.score >= TECH_CONTEXT


class _Verdict:
    def __init__(self, signal, reasons=(), vetoed=(), tech=(), default=False):
        self.signal, self.reasons, self.vetoed, self.tech = signal, list(reasons), list(vetoed), list(tech)
        self.default = default  # personal only because nothing said otherwise


def _technical_reasons(msg):
    return [("technical", e) for e in msg.tech[:MAX_TECH_REASONS]]


def _cues(msg, lex):
    if msg.wrapper:
        return _wrapped(msg.wrapper[0], msg.wrapper[1], lex)
    found = cues.collect(msg.body, msg.view, lex)
    doc = _first(msg.view.low, msg.view, lex, "personal_documents")
    if doc and not forms.template(msg.body, lex):  # "help me write a cover letter", not "a resignation letter template"
        found.append(("personal-document", short(doc), "life"))
    # Someone the speaker knows, and what they did to them: the speaker's life however technical the rest
    # ("the deploy failed and my manager is furious with me"; 被领导当众批评: the one 被 names acted on the speaker)
    known = [h[1] for h in found if h[0] == "relationship-mention"]
    reaction = known and (_first(msg.view.low, msg.view, lex, "reactions_to_me")
                          or next((k for k in known if "被" in k[:2] or "被" + k in msg.view.low), None))
    if reaction:
        found.append(("reaction-to-me", reaction, "life"))
    plight = forms.plight_with(msg.view.low, lex)
    if plight:
        found.append(("plight", plight, "life"))
    for s in msg.sents:
        remember = forms.remember_request(s, lex)
        if remember:
            found.insert(0, ("remember-request", remember, "life"))
        asked = forms.self_question(s, lex)
        if asked:
            found.append(("self-question", asked, "soft"))
    return found


def _told_in_task(msg, skips, lex):
    """A task whose text is the speaker's own news: "帮我写个 email 给 HR，说我下周要请 sick leave" — first person
    with a time anchor or a narrated verb in one clause is the user's words, as in a wrapped text."""
    if not all(f[0] == "task" for f in skips):
        return []
    for clause in cues.CLAUSE_BREAK.split(msg.body):
        weak = {h[0]: h[1] for h in cues.collect(clause, cues.EnView(clause, lex), lex) if h[2] == "weak"}
        if "first-person" in weak and weak.keys() & {"narrative", "time-anchor"}:
            return [("first-person-text", weak["first-person"], "soft")]
    return []


def _judge(msg, lex):
    """full or skip for a message (or for what is left of it beside a recall question)."""
    found = _cues(msg, lex)
    content = cues.strong(found)
    if msg.wrapper and content:
        content.insert(0, ("wrapped-task", short(msg.wrapper[0].strip()), "soft"))

    vent_only = content and all(h[2] == "vent" for h in content)
    if content and (msg.technical or (msg.score and vent_only)) and not cues.survives(found):
        apart = _state_apart(msg.body, lex)
        if not apart:
            return _Verdict("technical", _technical_reasons(msg), vetoed=content, tech=msg.tech)
        content += apart
    lived = forms.experiential(msg.body, lex)
    topical = content and all(h[0] in cues.MOOD_ONLY for h in content) and not lived
    shaped = [s.form(lex, not content or topical) for s in msg.sents if not s.neutral]
    skips = [f for f in shaped if f]
    if not content and (msg.technical or (msg.score and any(f[0] in ("question", "task") for f in skips))):
        return _Verdict("technical", _technical_reasons(msg), tech=msg.tech)
    if msg.wrapper and not content:
        return _Verdict("non-personal", [("task", short(msg.wrapper[0].strip()))], tech=msg.tech)
    if shaped and len(skips) == len(shaped):
        if topical:
            content = []  # "what are the symptoms of burnout": the mood word is a topic, not the speaker's
        symptom = lived and _first(msg.view.low, msg.view, lex, "health")
        if symptom:  # 老是半夜醒来是不是身体有问题: a symptom the asker keeps having
            content.append(("body-state", symptom, "soft"))
        content += _told_in_task(msg, skips, lex)
        if not content:
            return _Verdict("non-personal", skips[:3], tech=msg.tech)
    weak = [h for h in found if h[2] == "weak"]
    if content:
        return _Verdict("personal", content + weak[:2], tech=msg.tech)
    return _Verdict("personal", weak or [("default-full", DEFAULT_EVIDENCE)], tech=msg.tech, default=True)


def _told_news(told, lex):
    """What follows "did I tell you" is news when it is a clause of the speaker's own:
    "I started therapy", "我要搬家"; not a topic like "my uncle" or "我的过敏"."""
    t = told.strip().lower()
    if not _TOLD_SUBJECT.match(t) or t.startswith("我的") or _TOLD_TOPIC.search(t):
        # 我哥离婚的事: a topic named, not news told; what a clause after it says may be
        # ("did I tell you about my mom's surgery, it's next week")
        after = _TOLD_AFTER.split(t, 1)
        news = _news(after[1], lex) if len(after) > 1 else None
        if news:
            return news.reasons
        # "have I mentioned my sister lives in Denver": what someone of the speaker's does or is
        return [("told-fact", short(told.strip()), "soft")] if _TOLD_FACT.match(t) else []
    return [h for h in cues.collect(t, cues.EnView(t, lex), lex) if h[0] in _NEWS]


def _beside(body, asked):
    """The message without its recall clauses."""
    parts, last = [], 0
    for _, a, b, _ in asked:
        parts.append(body[last:a])
        last = b
    parts.append(body[last:])
    return "。".join(p for p in parts if p.strip(_PUNCT)).strip()


def _news(rest, lex):
    """The verdict on what is left beside a recall question, when it tells something new."""
    if not rest or forms.low_information(rest.strip(_PUNCT), lex) is not None:
        return None  # "嗯，我最近怎么样", "thanks! who owes me money?"
    verdict = _judge(_Message(rest, lex), lex)
    if verdict.signal != "personal":
        return None
    if verdict.default:
        if forms.points_at_memory(rest, lex):
            return None  # "开始那天我跟你说过", "从我说过的来看": about the memory, not news
        cjk, words = len(CJK.findall(rest)), len(_WORD.findall(rest))
        if cjk < NEW_MATERIAL[0] and words < NEW_MATERIAL[1]:
            return None  # "对了，…": too little to be news; "它走了", "she's visiting", "I passed!" are news
    return verdict


def _result(signal, reasons=(), vetoed=(), tech=(), low=False, lang="other", recall=False):
    def dicts(items):
        return [{"code": h[0], "evidence": h[1]} for h in items]
    return {"signal": signal, "requires_personal_understanding": signal == "personal", "recall": bool(recall),
            "reasons": dicts(reasons), "vetoed": dicts(vetoed), "technical_evidence": list(tech),
            "low_information": bool(low), "language": lang}


def classify(text):
    """Classify one user message; see the module docstring for the rules."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    lex = cues.load()
    body = text.strip().translate(TRADITIONAL)  # 我媽下週要開刀 is read as 我妈下周要开刀: the word lists are simplified
    lang = _language(body)
    if not body:
        return _result("non-personal", lang=lang)
    if credentials.find(body):  # never stored: the receipt keeps the message with the value masked
        return _result("credential", [("credential", short(credentials.masked(body)))], lang=lang)
    forgetting = forms.forget_request(body, lex)
    if forgetting and not _technical(body, cues.EnView(body, lex), lex)[0]:
        # nothing of a request to forget is kept but what else it tells; the read finds what it means
        evidence, a, b = forgetting
        news = _news(_beside(body, [(evidence, a, b, None)]), lex)
        reasons = [("forget-request", evidence)]
        if news:
            return _result("personal", reasons + news.reasons, lang=lang, recall=True)
        return _result("recall", reasons, lang=lang, recall=True)
    low = forms.low_information(body, lex)
    if low == "ack":
        return _result("non-personal", [("acknowledgement", short(body))], low=True, lang=lang)
    if low:
        return _result("personal", [("low-information", short(body))], low=True, lang=lang)

    body = forms.chat_normal(body, lex)
    msg = _Message(body, lex)
    # Any technical word keeps "what did I do wrong in this loop" a technical question.
    asked = [] if msg.wrapper else forms.recall(msg.sents, lex, msg.score > 0)
    if not asked:
        v = _judge(msg, lex)
        return _result(v.signal, v.reasons, v.vetoed, v.tech, lang=lang)

    asking = [("recall-question", ev) for ev, _, _, _ in asked]
    news = _news(_beside(body, asked), lex)
    told = [h for _, _, _, t in asked if t for h in _told_news(t, lex)]
    if news or told:
        return _result("personal", asking + (news.reasons if news else []) + told, tech=msg.tech, lang=lang,
                       recall=True)
    return _result("recall", asking, tech=msg.tech, lang=lang, recall=True)
