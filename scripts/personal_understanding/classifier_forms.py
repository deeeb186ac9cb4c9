"""The form of each sentence of a user message: question, task, acknowledgement,
small talk, a question to the memory, a request to remember.

Forms are the positive evidence the turn classifier needs before it skips a
turn: a message whose every sentence is a factual question, a task on text, an
acknowledgement or small talk carries nothing of the person unless a personal
cue says otherwise. Recall questions ("我最近怎么样", "who owes me money?") are
found here too, clause by clause, so the rest of the message can be judged on
its own. Vocabulary lives in resources/classifier/*.json like the cues'.
"""

import re

from .classifier_cues import CJK, CLAUSE_BREAK, SENT_BREAK, alt, norm_chunk, short

LOW_INFO_MAX = 40  # chars: longer messages are never only a sigh or an ack
THANKS_MAX = 30  # chars of a thank-you that is only a thank-you

_CHUNK_SPLIT = re.compile(r"\s*[,，。.!！?？~～…、;；:：\-—]+\s*")
_EDGE = "[\\s,，。.!！?？~～…、;；:：\\-—\"'“”‘’()（）]+"
_LEAD, _TAIL = re.compile("^" + _EDGE), re.compile(_EDGE + "$")
_ZH_FINAL = re.compile(r"[吗么呢][啊呀哈嘛啦]?$")
_ZH_DONE = re.compile(r"(?:了|过)(?:吗|么|没有?)$")
_ZH_PAST_WH = re.compile(r"了(?:什么|多少|几|哪|谁|啥)|(?:哪|哪儿|哪里|什么|多少|啥)了$")  # 说了什么, 放哪了
# 我的车险什么时候到期: when something of the speaker's happens
_ZH_OWN_WHEN = re.compile(r"(?:我|我家|我们家|家里)[^，,。？?]{0,10}?(?:什么时候|哪天|几号|哪年|几月)")
# 是哪天打的疫苗: the 是…的 frame puts a question on a past event
_ZH_CLEFT = re.compile(r"是.{0,6}?(?:什么时候|哪天|哪年|哪个月|几月|几号|哪里|在哪|哪儿|谁|怎么).{0,8}?的")
_LETTER = re.compile(r"[a-z\u3400-\u9fff]")
_EN_SELF = re.compile(r"(?<![a-z'])(?:i|i'm|im|i've|ive|i'd|i'll|me|myself|we|we're|we've|us)(?![a-z'])")
_EN_FACT_SLOT = re.compile(
    r"^(?:what's|whats|what\s+is|what\s+are|what\s+was|when\s+is|when's|who\s+is|who's|who\s+are|where\s+is|"
    r"where's|where\s+are|how's|how\s+is|how\s+has|how\s+have|how\s+was|which\s+is|how\s+old\s+(?:is|are)|"
    r"how\s+tall\s+is|what\s+day\s+is|what\s+time\s+is)\s+(?:my|our)(?![a-z])")
_EN_OWN_WHEN = re.compile(r"^(?:when|what\s+time|what\s+day|what\s+date|how\s+long)\s+(?:(?:does|do|is|was|will|did)\s+"
                          r"(?:my|our)|(?:am|do|did|was)\s+(?:i|we))(?![a-z'])")  # "when does my lease end?", "when am I…"
# "how's work been lately?": the speaker's own days, no pronoun needed
_EN_TOPIC_Q = re.compile(r"^(?:how's|hows|how\s+is|how\s+has|how\s+have|how\s+was|how\s+are|what's|any)\s+")
_EN_AUX_SELF = re.compile(r"^(?:did|have|had|was|were|am|is|are|do|does)\s+(?:i|we|my|our)(?![a-z'])")
_EN_SELF_ANY = re.compile(r"(?<![a-z'])(?:i|i've|i'm|me|my|we|our|us)(?![a-z'])")
_SYMBOL = re.compile("[\U0001F000-\U0001FAFF\u2600-\u27BF\uFE0F\u200D]+")
# Auxiliaries that also open statements; they ask only with a pronoun after them ("did I", "was it").
_EN_STATEMENT_AUX = re.compile(r"^(?:was|were|did|had|have|has|[a-z]+n't)(?![a-z'])")
_EN_PRONOUN_NEXT = re.compile(r"^\S+\s+(?:i|you|we|they|he|she|it|there|this|that|anyone|anybody|someone)(?![a-z'])")
_ZH_ASPECT_AFTER = re.compile(r"[了过完着]")
_EN_EXCLAIM = re.compile(r"^(?:what\s+an?|how\s+(?:nice|cool|great|sweet|lovely|sad|funny|weird))(?![a-z])")


def _forms(lex):
    """Anchored and free patterns built once from the word lists."""
    if "forms" not in lex:
        zh, en = lex["data"]["zh"], lex["data"]["en"]

        def start(words):
            return re.compile(r"^\s*" + alt(words))

        def anywhere(words):
            return re.compile(alt(words))
        lex["forms"] = {
            # I/we with a past or perfect verb: "did I", "have I been", "I liked", "we went"
            "en_past_self": re.compile(r"(?<![a-z'])(?:(?:did|have|had|was|were|has)\s+(?:i|we|(?:my|our)\s+[a-z']+)|"
                                       r"i've|we've|(?:i|we)\s+(?:did|was|were|had|have\s+been|[a-z]{2,}ed|"
                                       + alt(en["past_verbs"]) + r"))(?![a-z'])"),
            # what the speaker habitually does or is: "what do I usually…", "what am I allergic to"
            "en_habit": re.compile(r"(?<![a-z])(?:do\s+(?:i|we)\s+" + alt(en["habit_verbs"])
                                   + r"|am\s+i\s+allergic|how\s+old\s+am\s+i)(?![a-z])"),
            "zh_polite": start(zh["polite_prefixes"]), "en_polite": start(en["polite_prefixes"]),
            "zh_task": start(zh["task_openers"]), "en_task": start(en["task_openers"]),
            "zh_ba_task": re.compile(r"^\s*把.{1,30}?" + alt(zh["ba_task_verbs"])),
            "en_question": start(en["question_starts"]), "en_fillers": start(en["fillers"]),
            # 几 asks only when it counts something: 几点, 吃几片; not 这几天, 好几次
            "zh_question": re.compile(alt(zh["question_words"]) + "|(?<![这那好前近十没几])几" + alt(zh["measure_words"])),
            # 什么都不想做, 不知道怎么办, 犹豫要不要换城市: a question inside a statement
            "zh_not_question": re.compile(alt(zh["not_question"]) + "|" + alt(zh["indirect_question_verbs"]) + ".{0,3}?"
                                          + alt(zh["question_words"])),
            "zh_count_task": re.compile(r"^\s*" + alt(zh["quantity_task_verbs"]) + r"[一二两三四五六七八九十几\d]+"
                                        + alt(zh["measure_words"] + zh["task_measure_words"])),
            "en_wonder": anywhere(en["wondering"]),
            "zh_generic": anywhere(zh["generic_frames"]), "en_generic": anywhere(en["generic_frames"]),
            "zh_request": anywhere(zh["request_prefixes"]),
            "zh_small": anywhere(zh["small_talk"]), "en_small": anywhere(en["small_talk"]),
            "zh_remember": anywhere(zh["remember_requests"]), "en_remember": anywhere(en["remember_requests"]),
            "zh_memory": anywhere(zh["memory_verbs"]), "en_memory": anywhere(en["memory_phrases"]),
            "zh_told": anywhere(zh["told_verbs"]), "en_told": anywhere(en["told_phrases"]),
            "zh_retrieve": anywhere(zh["retrieval_verbs"]), "en_retrieve": anywhere(en["retrieval_phrases"]),
            "zh_anchor": anywhere(zh["record_anchors"]), "en_anchor": anywhere(en["record_anchors"]),
            "zh_topic": anywhere(zh["self_topics"]), "en_topic": anywhere(en["self_topics"]),
            "zh_others": anywhere(zh["other_people"]), "en_others": anywhere(en["other_people"]),
            "zh_rhetorical": anywhere(zh["rhetorical"]),
            "zh_slot": anywhere(zh["fact_slots"]), "zh_advice": anywhere(zh["advice_words"]),
            "zh_advice_exempt": anywhere(zh["advice_exempt"]),
            "en_advice": anywhere(en["advice_words"]),
            "zh_people": anywhere(zh["relations_intimate"] + zh["home_words"]),
            "thanks": start(zh["thanks_words"] + en["thanks_words"]),
            "implied_self": anywhere(zh["implied_self"] + en["implied_self"]),
            "template": anywhere(zh["template_words"] + en["template_words"]),
            "experience": anywhere(zh["experience_markers"] + en["experience_markers"]),
        }
    return lex["forms"]


def low_information(text, lex):
    """'personal' for sighs and shrugs, 'ack' for thanks/ok/greetings, None otherwise."""
    if len(text) > LOW_INFO_MAX:
        return None
    chunks = [c for c in _CHUNK_SPLIT.split(text) if c]
    if not chunks:
        return "personal"  # only punctuation: "…", "??"
    kinds = set()
    for c in chunks:
        c = _SYMBOL.sub(" ", c).strip() or c  # "ok cool 👍"; a lone emoji stays itself
        raw, norm = " ".join(c.lower().replace("’", "'").split()), norm_chunk(c)
        if raw in lex["ack_raw"] or lex["ack_zh"].fullmatch(raw) or _acks(raw, lex) or _thanks(raw, lex):
            kinds.add("ack")  # before folding: "嗯嗯" is an ack, "嗯" a sigh
        elif norm in lex["low"] or set(norm) <= lex["zh_interjections"] or lex["low_zh"].fullmatch(norm):
            kinds.add("low")
        elif norm in lex["ack"]:
            kinds.add("ack")
        else:
            return None
    return "ack" if "ack" in kinds else "personal"


def _acks(raw, lex):
    """'ok 明白', 'ok that makes sense': a run of acknowledgements, each one or more words."""
    words = raw.split()
    ends = {0}  # word counts that a run of acknowledgements can cover
    for i in range(1, len(words) + 1):
        if any(j in ends and _is_ack(" ".join(words[j:i]), lex) for j in range(max(0, i - 4), i)):
            ends.add(i)
    return len(words) > 1 and len(words) in ends


def _thanks(raw, lex):
    """'thanks for explaining', '谢谢你的建议': gratitude that says nothing of the speaker."""
    m = _forms(lex)["thanks"].match(raw)
    return bool(m) and len(raw) <= THANKS_MAX and not _EN_SELF.search(raw) and "我" not in raw


def _is_ack(phrase, lex):
    return phrase in lex["ack_raw"] or bool(lex["ack_zh"].fullmatch(phrase))


class Sentence:
    """One sentence: its span in the message, lower-cased text and form."""

    def __init__(self, text, start, end, lex):
        self.start, self.end, self.text = start, end, text
        self.raw = text[start:end]
        low = self.raw.lower().replace("’", "'")
        lead = _LEAD.match(low)
        self.offset = start + (lead.end() if lead else 0)  # where self.low begins in the message
        self.low = _TAIL.sub("", low[lead.end():] if lead else low)
        self.zh = bool(CJK.search(self.low))
        self.question = _is_question(self.raw, self.low, self.zh, lex)
        info = low_information(self.raw.strip(), lex) if self.low else "personal"
        self.ack = info == "ack"
        self.neutral = info == "personal"  # a sigh among other sentences decides nothing
        self.self_subject = _self_subject(self.low, lex)

    def form(self, lex, cue_free):
        """(code, evidence) when the sentence itself says the turn is not personal."""
        if self.ack:
            return "acknowledgement", short(self.raw)
        task = _task(self.low, lex)
        if task:
            return "task", short(task)
        if self.question and not self.self_subject:
            return "question", short(self.raw)
        f = _forms(lex)
        small = f["zh_small"].search(self.low) or f["en_small"].search(self.low)
        if small and cue_free and not self.self_subject:
            return "small-talk", small.group(0)
        return None


def sentences(text, lex):
    out, last = [], 0
    for m in list(SENT_BREAK.finditer(text)) + [None]:
        end = m.end() if m else len(text)
        if _LETTER.search(text[last:end].lower()):
            out.append(Sentence(text, last, end, lex))
        last = end
    return out


def _is_question(raw, low, zh, lex):
    if "?" in raw or "？" in raw:
        return True
    f = _forms(lex)
    if zh:
        rest = f["zh_not_question"].sub("", low)  # 什么都不想做, 不知道怎么办: statements
        if _ZH_FINAL.search(rest) or f["zh_question"].search(rest):
            return True
    s = _strip(low, f["en_fillers"])
    if _EN_EXCLAIM.match(s):
        return False
    start = f["en_question"].match(s)
    if start and _EN_STATEMENT_AUX.match(s) and not _EN_PRONOUN_NEXT.match(s):
        start = None  # "can't sleep", "had a rough day", "did my first 5k": no subject after, no question
    return bool(start or f["en_wonder"].search(low))


def _strip(s, rx):
    """Drop leading words matched by rx, repeatedly ("so, hey, can you ...")."""
    for _ in range(4):
        m = rx.match(s)
        if not m or not m.group(0).strip():
            break
        s = s[m.end():].lstrip(" ,，、")
    return s


def _task(low, lex):
    """The opener of an instruction to do something with text or knowledge ("写一首", "translate")."""
    f = _forms(lex)
    for clause in CLAUSE_BREAK.split(low):  # "我要写一份工作总结，帮我列个提纲"
        zh, en = _strip(clause, f["zh_polite"]), _strip(clause, f["en_polite"])
        m = f["zh_task"].match(zh) or f["zh_ba_task"].match(zh) or f["zh_count_task"].match(zh)
        if m and _ZH_ASPECT_AFTER.match(zh, m.end()):
            m = None  # 整理了一下午房间: a narrative, not an instruction
        m = m or f["en_task"].match(en)
        if m:
            return m.group(0).strip()
    return None


def _self_subject(low, lex):
    """The speaker is the subject, outside set phrases that only frame a request (请问, 'how do I')."""
    f = _forms(lex)
    rest = f["en_generic"].sub(" ", f["zh_generic"].sub(" ", f["zh_request"].sub(" ", low)))
    # "is 32 too old to start…", "这个年纪转行还来得及吗": the speaker is the one asked about
    return "我" in rest or "咱" in rest or bool(_EN_SELF.search(rest) or f["implied_self"].search(low))


def remember_request(sent, lex):
    """Evidence of an explicit request to keep something ("记住", "just so you know")."""
    f = _forms(lex)
    m = f["zh_remember"].search(sent.low) or f["en_remember"].search(sent.low)
    return m.group(0) if m else None


def self_question(sent, lex):
    """A question about oneself that no generic frame explains ("我是不是太敏感了", "am I overreacting?")."""
    return short(sent.raw) if sent.question and sent.self_subject else None


def experiential(text, lex):
    """Words that make a mood word the speaker's in a question ("feel", "总是")."""
    return bool(_forms(lex)["experience"].search(text.lower()))


def recall(sents, lex, technical):
    """Clauses that ask the memory: [(evidence, start, end, told)], `told` being what follows
    "did I tell you" / "我跟你说过", which may itself be something new."""
    found = []
    for s in sents:
        found += _zh_recall(s, lex, technical) if s.zh else _en_recall(s, lex, technical)
    return found


def _zh_recall(s, lex, technical):
    f, out, last = _forms(lex), [], 0
    low = s.low
    clauses = []
    for m in list(CLAUSE_BREAK.finditer(low)) + [None]:
        end = m.start() if m else len(low)
        if _LETTER.search(low[last:end]):
            clauses.append((last, end))
        last = m.end() if m else len(low)
    base = s.offset
    for i, (a, b) in enumerate(clauses):
        c = low[a:b]
        asked = s.question and (i == len(clauses) - 1 or _is_question(c, c, True, lex))
        own = f["zh_request"].sub(" ", c)
        # 最近心情怎么样, 这周睡得怎么样: Chinese drops the 我 when the speaker's own days are asked about
        dropped = (not f["zh_others"].search(c) and f["zh_topic"].search(c) and f["zh_anchor"].search(low))
        mine = "我" in own or bool(f["zh_people"].search(c)) or bool(dropped)
        memory = f["zh_memory"].search(c)
        if memory and f["zh_rhetorical"].search(c):
            memory = None  # 你知道我有多累吗 tells, it does not ask
        hit = None
        if memory and (asked or "来着" in c or _task(c, lex)):  # 列出我最近提到的人
            hit = memory
        elif f["zh_retrieve"].search(c) and "我" in own and (f["zh_anchor"].search(c) or memory):
            hit = f["zh_retrieve"].search(c)
        elif asked and mine and not technical and not f["zh_advice"].search(f["zh_advice_exempt"].sub("", c)):
            rest = f["zh_not_question"].sub("", c)
            wh = f["zh_question"].search(rest) or _ZH_FINAL.search(rest)
            who_me = "谁" in c and "我" in c[c.index("谁"):]
            past = (f["zh_anchor"].search(low) or _ZH_DONE.search(rest) or _ZH_CLEFT.search(c)
                    or _ZH_PAST_WH.search(rest) or _ZH_OWN_WHEN.search(c))
            if wh and (past or f["zh_slot"].search(c) or who_me):
                hit = wh
        if hit:
            told = f["zh_told"].search(c)
            out.append((short(s.text[base + a:base + b]), base + a, base + b,
                        c[told.end():] if told else ""))
    return out


def _en_recall(s, lex, technical):
    f, low = _forms(lex), s.low
    body = _strip(low, f["en_fillers"])
    memory = f["en_memory"].search(low)
    anchored = f["en_anchor"].search(low)
    hit = None
    if memory and memory.group(0).startswith("remind me") and not _EN_SELF_ANY.search(low[memory.end():]):
        memory = None  # "remind me how to tie a tie" asks for knowledge, not for the speaker's past
    if memory and (s.question or _task(low, lex) or low.startswith(("remind me", "tell me", "catch me"))):
        hit = memory
    elif f["en_retrieve"].search(low) and _EN_SELF_ANY.search(low) and anchored:
        hit = f["en_retrieve"].search(low)  # "give me a summary of my month"
    elif s.question and not technical and not f["en_advice"].search(low):
        wh = f["en_question"].match(body)
        aux = _EN_AUX_SELF.match(body)
        if wh and not aux:
            who_me = body.startswith(("who ", "who's")) and re.search(r"(?<![a-z])(?:me|my)(?![a-z])", body)
            topical = (_EN_TOPIC_Q.match(body) and f["en_topic"].search(body[:40]) and not f["en_others"].search(body)
                       and (anchored or re.search(r"(?<![a-z])been(?![a-z])", body)))
            if (f["en_past_self"].search(body) or _EN_FACT_SLOT.match(body) or _EN_OWN_WHEN.match(body) or topical
                    or f["en_habit"].search(body) or who_me
                    or (anchored and _EN_SELF_ANY.search(body))):  # "what's going on with me lately?"
                hit = wh
        elif aux and (anchored or " or " in body):  # "am I sleeping better these days?", "is it June or July?"
            hit = aux
    if not hit:
        return []
    told = f["en_told"].search(low)
    return [(short(s.raw), s.start, s.end, low[told.end():] if told else "")]


def template(text, lex):
    """A request for a template or sample: the document is nobody's in particular."""
    return bool(_forms(lex)["template"].search(text.lower()))
