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

from .classifier_cues import CJK, CLAUSE_BREAK, SENT_BREAK, alt, clause_spans, norm_chunk, short

LOW_INFO_MAX = 40  # chars: longer messages are never only a sigh or an ack
THANKS_MAX = 30  # chars of a thank-you that is only a thank-you

_CHUNK_SPLIT = re.compile(r"\s*[,，。.!！?？~～…、;；:：\-—]+\s*")
_EDGE = "[\\s,，。.!！?？~～…、;；:：\\-—\"'“”‘’()（）]+"
_LEAD, _TAIL = re.compile("^" + _EDGE), re.compile(_EDGE + "$")
_ZH_FINAL = re.compile(r"(?:[吗么呢]|(?<![还都也])没有?)[啊呀哈嘛啦]?$")  # 结果出来没: V + 没 asks
_ZH_PARTICLE = re.compile(r"(?<=[\u4e00-\u9fff])[呀啊哈啦哦噢嘛呢喔哟~～]+$")
# 你刚才说的, 你之前提的: the assistant's words, not the speaker's
_ZH_ASSISTANT_SAID = re.compile(r"(?<![跟和给对向])你[^，,。？?我]{0,3}?(?:说|提|讲|推荐|建议)")
_ZH_DONE = re.compile(r"(?:了|过)(?:吗|么|没有?)$")
# 我去过日本吗, 我吃过榴莲吗: V过 + what was done asks whether it ever happened (not 难过, 不过, 过来, 过年, 过得, 过日子)
_ZH_EVER = re.compile(r"(?<![难不经超通度路错])过(?!来|去|年|节|得|日子)[^，,。？?！!]{0,8}(?:吗|么|没有?)$")
_ZH_PAST_WH = re.compile(r"了(?:什么|多少|几|哪|谁|啥)|(?:哪|哪儿|哪里|什么|多少|啥)了$")  # 说了什么, 放哪了
# 是哪天打的疫苗: the 是…的 frame puts a question on a past event
_ZH_CLEFT = re.compile(r"是.{0,6}?(?:什么时候|哪天|哪年|哪个月|几月|几号|哪里|在哪|哪儿|谁|怎么).{0,8}?的")
_LETTER = re.compile(r"[a-z\u3400-\u9fff]")
_LATIN_WORD = re.compile(r"[a-z]{2,}")
_EN_SELF = re.compile(r"(?<![a-z'])(?:i|i'm|im|i've|ive|i'd|i'll|me|myself|we|we're|we've|us)(?![a-z'])")
_EN_FACT_SLOT = re.compile(
    r"^(?:what's|whats|what\s+is|what\s+are|what\s+was|when\s+is|when's|who\s+is|who's|who\s+are|where\s+is|"
    r"where's|where\s+are|how's|how\s+is|how\s+has|how\s+have|how\s+was|which\s+is|how\s+old\s+(?:is|are)|"
    r"how\s+tall\s+is|what\s+day\s+is|what\s+time\s+is)\s+(?:my|our)(?![a-z])")
# A fact of the speaker's world: "where does my sister live?", "what medications am I taking?",
# and embedded, "(any idea) when my lease is up"
_EN_OWN_FACT = re.compile(r"^(?:when|where|who|what|which|how\s+long|how\s+old|what\s+time)\s+"
                          r"(?:does|do|did|is|was|are|were|has)\s+(?:my|our)(?![a-z])|"
                          r"^(?:what|which)\s+[a-z]+\s+(?:am|are|do|have|was|were)\s+(?:i|we)(?![a-z'])")
_EN_EMBEDDED = re.compile(r"^(?:any\s+idea|any\s+clue|do\s+you\s+know|you\s+know|remind\s+me|tell\s+me)\s+"
                          r"(?:when|where|what\s+time|what\s+day|how\s+long|who|what)\s+(?:my|our|i|we)(?![a-z'])")
_EN_OWN_WHEN = re.compile(r"^(?:when|what\s+time|what\s+day|what\s+date|how\s+long)\s+(?:(?:does|do|is|was|will|did)\s+"
                          r"(?:my|our)|(?:am|do|did|was)\s+(?:i|we))(?![a-z'])")  # "when does my lease end?", "when am I…"
# "how's work been lately?": the speaker's own days, no pronoun needed
_EN_TOPIC_Q = re.compile(r"^(?:how's|hows|how\s+is|how\s+has|how\s+have|how\s+was|how\s+are|what's|any)\s+")
_EN_AUX_SELF = re.compile(r"^(?:did|have|had|was|were|am|is|are|do|does)\s+(?:i|we|my|our)(?![a-z'])")
_EN_SELF_ANY = re.compile(r"(?<![a-z'])(?:i|i've|i'm|me|my|we|our|us|我)(?![a-z'])")
# Where a question starts inside a sentence: "My sister's visiting again — what did I say…"
_EN_CLAUSE_START = re.compile(r"\s*(?:[,;:—–]|\s-\s)\s*")
# Where a clause after an English recall question may begin: a comma, or chat's lol / haha between words
_EN_CLAUSE_AFTER = re.compile(r",\s+(?!and\b|or\b|but\b)|\s+(?:lol|lmao|haha+)\s+(?=\w)", re.I)
# "remind me that my passport expires in March", "remind me to call mom": something to keep, not a question
_EN_REMIND_KEEP = re.compile(r"(?:please\s+)?remind\s+me\s+(?:that|to)(?![a-z])")
_EN_POLITE_ASK = re.compile(r"^(?:can|could|would|will)\s+(?:you|u)\s+(?!(?:please\s+)?(?:tell|remind|show)\b)")
# "…everything I've told you", "…what I said": a quantifier over the record right before the speaker's words,
# not as the subject ("Everything I said is true")
_EN_SUBJECT_FIRST = re.compile(r"(?:i|i'm|i've|i'll|i'd|we|we're|my|our|you|he|she|they|it|this|that|the|a|an)(?![a-z'])")
_EN_RECORD_OBJECT = re.compile(r"(?<=\s)(?:everything|all|anything|what)\s+(?:that\s+)?$")
# "Remember the job I applied for?"
_EN_RECALL_Q = re.compile(r"(?:you\s+)?(?:remember|recall)\s+(?!to\b|that\b|this\b)")
_EN_AGAIN = re.compile(r"^(?:what|who|where|when|which)(?:'s|\s+(?:is|was|are|were|did|do))\b.*(?<![a-z])again$")
_EN_NAME_OWNER = re.compile(r"(?<=\s)[A-Z][a-z]+'s(?![a-z])")  # "who's Leo's coach again?"
_SYMBOL = re.compile("[\U0001F000-\U0001FAFF\u2600-\u27BF\uFE0F\u200D]+")
# Auxiliaries that also open statements; they ask only with a pronoun after them ("did I", "was it").
_EN_STATEMENT_AUX = re.compile(r"^(?:was|were|did|had|have|has|[a-z]+n't)(?![a-z'])")
_EN_PRONOUN_NEXT = re.compile(r"^\S+\s+(?:i|you|we|they|he|she|it|there|this|that|anyone|anybody|someone)(?![a-z'])")
_EN_SUBORDINATE = re.compile(r"^(?:when|where|what|how|why|while|whenever)\s+"
                             r"(?:i|we|my|our|he|she|they|you|it)\s+[a-z']")
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
            "zh_object_task": re.compile(r"^[一二两三四五六七八九十几\d]+" + alt(zh["measure_words"] + zh["task_measure_words"])),
            "en_wonder": anywhere(en["wondering"]),
            "zh_told_aspect": re.compile(r"[\u4e00-\u9fff][了过](?![解不])"),
            "zh_lead_aspect": re.compile(alt(zh["aspect_before"]) + r"[\u4e00-\u9fff]"),
            "en_told_past": re.compile(r"(?:(?:just|finally|recently|already)\s+)?(?:[a-z]{3,}ed|"
                                       + alt(en["past_verbs"]) + r")(?![a-z'])"),
            "zh_generic": anywhere(zh["generic_frames"]), "en_generic": anywhere(en["generic_frames"]),
            "zh_request": anywhere(zh["request_prefixes"]),
            "zh_small": anywhere(zh["small_talk"]), "en_small": anywhere(en["small_talk"]),
            "zh_remember": anywhere(zh["remember_requests"]), "en_remember": anywhere(en["remember_requests"]),
            # "how do I deal with a coworker who…", "how to handle my mother-in-law": a person in the speaker's life
            "en_plight": re.compile(r"(?<![a-z'])" + alt(en["plight_verbs"]) + r"\s+(?:a|an|my|our)\s+(?:[a-z-]+\s+)?"
                                    + alt(en["relations"] + en["relations_work"]) + r"(?![a-z'])"),
            # 把我跟表哥借钱那件事删掉, 忘了我刚才说的, 别记这个; "forget what I said about…", "don't save this":
            # an order at the start of a clause (我把照片删了 and "I forgot what I said" tell, they do not ask)
            "zh_forget": re.compile(r"^(?:请|麻烦你?|你|帮我|给我)*(?:把[^，,。！？!?]{0,30}?" + alt(zh["forget_objects"])
                                    + r"[^，,。！？!?]{0,4}?" + alt(zh["forget_verbs"]) + "|" + alt(zh["forget_verbs"])
                                    + alt(zh["forget_leads"]) + r"[^，,。！？!?]{0,20}?" + alt(zh["forget_objects"])
                                    + "|" + alt(zh["no_keep"]) + r"(?:住|下来|下|着)?(?:这|那|了|吧|$|[^，,。！？!?]{0,20}?"
                                    + alt(zh["forget_objects"]) + "))"),
            "zh_forget_word": anywhere(zh["forget_verbs"] + zh["no_keep"]),
            "en_forget": re.compile(r"^(?:" + alt(en["forget_prefixes"]) + r"\s+)*(?:" + alt(en["forget_verbs"])
                                    + r"\s+" + alt(en["forget_objects"]) + "|" + alt(en["keep_negations"])
                                    + r"\s+(?:that|this|it|what|anything|any of))(?![a-z])"),
            "zh_memory": anywhere(zh["memory_verbs"]), "en_memory": anywhere(en["memory_phrases"]),
            "zh_told": anywhere(zh["told_verbs"]), "en_told": anywhere(en["told_phrases"]),
            "zh_retrieve": anywhere(zh["retrieval_verbs"]), "en_retrieve": anywhere(en["retrieval_phrases"]),
            # 上周, 这个季度, 近三个月; last spring, the past two weeks, back in march: time of the speaker's record
            "zh_anchor": re.compile(alt(zh["record_anchors"]) + "|" + alt(zh["time_heads"])
                                    + r"[一二两三四五六七八九十几半\d]{0,3}个?" + alt(zh["time_units"])
                                    + "(?!" + alt(zh["time_unit_compounds"]) + ")"),  # not 这个年纪, 上周报
            "en_anchor": re.compile(alt(en["record_anchors"]) + r"|(?<![a-z])" + alt(en["time_determiners"])
                                    + r"\s+(?:(?:few|couple(?:\s+of)?|several|two|three|four|five|six|\d+)\s+)?"
                                    + alt(en["time_units"]) + r"|(?<![a-z])(?:in|back\s+in|since|last|this)\s+"
                                    + alt(en["months"])),
            # 我上次跟你说的, 之前提的, 跟你吐槽了: what the speaker told the memory
            "zh_told_you": re.compile(r"(?:跟你|和你|给你|对你|向你)" + alt(zh["speech_verbs"]) + r"(?:了|过|到)?"),
            "zh_said_rel": re.compile(r"(?<![他她它你])" + alt(zh["speech_verbs"]) + r"(?:过|到|起)?的"),
            "zh_you_know": re.compile(r"你[都还也可]{0,2}(?:知道|记得)[^，,。？?]{0,4}?我"),
            "zh_own_when": re.compile(r"(?:我|我家|我们家|家里)[^，,。？?]{0,10}?" + alt(zh["when_words"])),
            # 我答应过别人什么事, 我今年去过哪些地方: a question on what the speaker did
            "zh_past_self": re.compile(r"我[^，,。？?]{0,8}?[过了][^，,。？?]{0,8}?" + alt(zh["question_words"]) + "|"
                                       + alt(zh["question_words"]) + r"[^，,。？?]{0,8}?我[^，,。？?]{0,8}?[过了]"),
            "zh_assistant_said": _ZH_ASSISTANT_SAID,
            "conversation": anywhere(zh["conversation_refs"] + en["conversation_refs"]),
            "zh_why": anywhere(zh["why_words"]), "zh_past_anchor": anywhere(zh["past_anchors"]),
            "zh_so_far": re.compile(alt(zh["duration_asks"]) + r"了[吗呢啊]?$"),  # 戒烟戒了多少天了
            "zh_strong_retrieve": anywhere(zh["strong_retrieval"]),
            # a plan with the subject dropped at the head of a clause: (周末)想去…, 打算…
            "zh_plan_lead": re.compile(r"[^，,。？?]{0,8}?" + alt(zh["decisions_strong"] + zh["decisions_weak"])
                                       + r"[\u4e00-\u9fff]"),
            "zh_past_deed": re.compile(alt(zh["past_anchors"]) + r"[^，,。？?]?" + alt(zh["own_actions"])),
            # 下周去成都出差，…; 周末和老婆去杭州玩，…: a day, then what (the speaker) will do or did then
            "zh_dated_deed": re.compile(r"\s*(?:我们?|我[跟和][^，,。？?]{1,4})?" + alt(zh["life_times"])
                                        + r"[^，,。？?]{0,6}?" + alt(zh["own_actions"] + zh["plan_actions"])),
            "zh_pointer": anywhere(zh["text_pointers"]),
            # 今年花的, 上次跟房东约的: an anchor, then what (the speaker) did then
            "zh_anchored_deed": re.compile(r"(?:" + alt(zh["record_anchors"]) + r")[^，,。？?的]{1,4}?的"),
            # "I said", "have I mentioned", "we've talked about": the speaker's words to the memory
            "en_self_said": re.compile(r"(?<![a-z'])(?:(?:i|we)(?:'ve|'d|\s+have|\s+had)?|(?:did|have|had|do)\s+(?:i|we))"
                                       r"\s+(?:(?:ever|already|just|once|previously|never|last)\s+)?"
                                       + alt(en["speech_verbs"])),
            "en_you_know": re.compile(r"(?<![a-z'])(?:you|u)\s+(?:still\s+|even\s+|already\s+)?"
                                      r"(?:know|remember|recall|have)\s+(?:about\s+|on\s+)?(?:me|my|our|us)(?![a-z'])"),
            "en_imperative": start(en["retrieval_imperatives"]),
            "en_quantifier": anywhere(en["record_quantifiers"]),
            "en_kin": anywhere(en["relations"] + en["relations_standalone"]),
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


def chat_normal(text, lex):
    """'wen did i tell u' -> 'when did i tell you': chat spellings of the words the rules read, whole words only."""
    if "chat" not in lex:
        pairs = dict(lex["data"]["en"]["chat_spellings"])
        lex["chat"] = (re.compile(r"(?<![\w'])(?:" + "|".join(map(re.escape, sorted(pairs, key=len, reverse=True)))
                                  + r")(?![\w'])", re.I), pairs)
    rx, pairs = lex["chat"]
    return rx.sub(lambda m: pairs[m.group(0).lower()], text)


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
        elif norm in lex["ack"] or _is_ack(_ZH_PARTICLE.sub("", raw), lex):
            kinds.add("ack")  # 早上好呀 = 早上好 + a modal particle
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
    return phrase in lex["ack_raw"] or bool(lex["ack_zh"].fullmatch(phrase)) or norm_chunk(phrase) in lex["ack"]


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
        self.told = self.question and _tells_first(self.low, self.zh, lex)
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
        if self.question and not self.self_subject and not self.told:
            return "question", short(self.raw)
        f = _forms(lex)
        said = f["zh_assistant_said"].search(self.low) or f["conversation"].search(self.low)
        if said and cue_free and not self.self_subject:
            return "task", said.group(0)  # 刚才那个问题再解释一下, "where you left off": about the answer, not the person
        small = f["zh_small"].search(self.low) or f["en_small"].search(self.low)
        if small and cue_free and not self.self_subject and not _told_beside(self.low, small, f):
            return "small-talk", small.group(0)
        return None


def _told_beside(low, small, f):
    """Does a clause beside the small talk tell what the speaker did or went through ("下雨了，没带伞",
    "下雨了，被淋成落汤鸡")? The weather is then the setting of the speaker's day."""
    for a, b, _after in clause_spans(low):
        clause = low[a:b].strip()
        if clause and not a <= small.start() < b and not f["zh_others"].search(clause):  # 他们离婚了: theirs
            if f["zh_told_aspect"].search(clause) or f["zh_lead_aspect"].match(clause) or clause.startswith("被"):
                return True
    return False


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
    if start and _EN_SUBORDINATE.match(s):
        start = None  # "when I was a kid my dad…", "what I need is sleep": a clause, not a question
    return bool(start or f["en_wonder"].search(low))


def _tells_first(low, zh, lex):
    """A question led by a clause that tells what happened or is planned: "刚买了房，贷款怎么还划算", "下周去成都出差，有什么好吃的",
    "moved to Berlin last month, which bank should I use?" — the speaker's news, not only a question."""
    f = _forms(lex)
    parts = [p for p in CLAUSE_BREAK.split(low) if _LETTER.search(p)]
    for c in parts[:-1]:
        if _is_question(c, c, zh, lex):
            continue
        told = (f["zh_told_aspect"].search(c) or f["zh_lead_aspect"].search(c) or f["zh_past_deed"].search(c)
                or f["zh_plan_lead"].match(c.strip()) or f["zh_dated_deed"].match(c))
        if zh and told and not f["zh_others"].search(c):
            return True  # 上次去医院是三月份，…; weekend 想去 hiking，有推荐吗
        # "moved to Berlin…" (no subject) or "I…"; "she got engaged to the actor, right?" is someone else's news
        if not zh and (f["en_told_past"].match(_strip(c.strip(), f["en_fillers"]))
                       or _EN_SELF_ANY.search(f["en_generic"].sub(" ", c))):
            return True
    return False


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
        if not m and zh != clause.lstrip() and f["zh_object_task"].match(zh):
            return clause.strip()[:len(clause.strip()) - len(zh) + 2]  # 给我一个红烧肉的做法: a request for a thing
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


def plight_with(low, lex):
    """Someone in the speaker's life they ask how to deal with ("how do I deal with a coworker who…"), or None.
    `low`: the text in lower case."""
    m = _forms(lex)["en_plight"].search(low)
    return m.group(0) if m else None


def forget_request(text, lex):
    """(evidence, start, end) of a clause asking to forget what was said, or None. The evidence is the
    request's own words ("forget what I said about", "…删掉"), never what it names: that is to go."""
    f, low = _forms(lex), text.lower()
    for a, b, after in clause_spans(low):
        clause = low[a:b].strip()
        en = f["en_forget"].match(clause)
        if en or f["zh_forget"].match(clause):
            said = en.group(0) if en else "…" + f["zh_forget_word"].findall(clause)[-1]
            return short(said), a, after
    return None


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
        hits = _zh_recall(s, lex, technical) if s.zh else []
        if not hits and _LATIN_WORD.search(s.low):  # mixed: "What did I say about 我婆婆 last time?"
            hits = _en_recall(s, lex, technical)
        found += hits
    return found


def _zh_recall(s, lex, technical):
    f, out = _forms(lex), []
    low = s.low
    clauses = [(a, b) for a, b, _after in clause_spans(low) if _LETTER.search(low[a:b])]
    base = s.offset
    sent_anchor = bool(f["zh_anchor"].search(low))  # once per sentence: clauses share it
    for i, (a, b) in enumerate(clauses):
        c = low[a:b]
        asked = s.question and (i == len(clauses) - 1 or _is_question(c, c, True, lex))
        own = f["zh_request"].sub(" ", c)
        # 最近心情怎么样, 这周睡得怎么样: Chinese drops the 我 when the speaker's own days are asked about
        dropped = not f["zh_others"].search(c) and ((f["zh_topic"].search(c) and sent_anchor)
                                                    or f["zh_past_deed"].search(c))  # 上次去医院是哪天
        mine = "我" in own or bool(f["zh_people"].search(c)) or bool(dropped)
        memory = _zh_memory(c, f)
        if memory and f["zh_rhetorical"].search(c):
            memory = None  # 你知道我有多累吗 tells, it does not ask
        retrieve = f["zh_retrieve"].search(c)
        anchor = f["zh_anchor"].search(c)
        hit = None
        if memory and technical and not mine:
            memory = None  # 上次那个命令是什么来着: the conversation's code, not the speaker's life
        # 列出我最近提到的人; 从我说过的来看，…吗; 我跟你说过我妈的手术吗，下周就要做了 (the clause asks, the rest tells)
        if memory and (s.question or "来着" in c or _task(c, lex) or _is_question(c, c, True, lex)):
            hit = memory
        elif retrieve and "我" in own and (anchor or memory):
            hit = retrieve
        elif (retrieve and anchor and not technical and not f["zh_pointer"].search(c) and not f["zh_small"].search(c)
              and (f["zh_strong_retrieve"].search(c) or f["zh_anchored_deed"].search(c))):
            hit = retrieve  # 帮我回顾一下这周发生了什么, 给我整理一下今年花的大钱: the speaker's own time
        elif (asked and not technical and not f["zh_small"].search(c)
              and not f["zh_advice"].search(_zh_not_advice(c, f))):
            rest = f["zh_not_question"].sub("", c)
            wh = f["zh_question"].search(rest) or _ZH_FINAL.search(rest)
            who_me = "谁" in c and "我" in c[c.index("谁"):]
            past = (sent_anchor or _ZH_DONE.search(rest) or _ZH_EVER.search(rest) or _ZH_CLEFT.search(c)
                    or _ZH_PAST_WH.search(rest) or f["zh_own_when"].search(c) or f["zh_past_self"].search(c))
            so_far = not f["zh_others"].search(c) and f["zh_so_far"].search(rest)  # dropped 我: 戒烟戒了多少天了
            if wh and ((mine and (past or f["zh_slot"].search(c) or who_me)) or so_far):
                hit = wh
        if hit:
            told = f["zh_told"].search(c)
            out.append((short(s.text[base + a:base + b]), base + a, base + b,
                        c[told.end():] if told else ""))
    return out


def _zh_not_advice(c, f):
    """The clause without words that only look like asking for advice: 因为什么, 不太, and 为什么 about a past
    the speaker had (我之前那份工作为什么辞的)."""
    c = f["zh_advice_exempt"].sub("", c)
    return f["zh_why"].sub("", c) if f["zh_past_anchor"].search(c) else c


def _zh_memory(c, f):
    """A memory verb in a clause: 还记得, 跟你说过, 之前提的, 你都知道我…"""
    m = f["zh_memory"].search(c) or f["zh_told_you"].search(c) or f["zh_you_know"].search(c)
    if m and _ZH_ASSISTANT_SAID.search(c, 0, m.end()):
        return None  # 你刚才说的那个方法: the assistant's words
    if m:
        return m
    for x in f["zh_said_rel"].finditer(c):  # 之前说的, 我上次说的; not 老师说的 or 他说的
        before = c[:x.start()]
        if ("我" in before or f["zh_anchor"].search(before)) and not f["zh_others"].search(before):
            return x
    return None


def _en_question_start(low, f):
    """Where the question (or request) of a sentence starts, past a statement before it."""
    for k in [0] + [m.end() for m in _EN_CLAUSE_START.finditer(low)]:
        t = _strip(low[k:], f["en_fillers"])
        if f["en_question"].match(t) or f["en_imperative"].match(t) or f["en_memory"].match(t):
            return k
    return 0


def _en_recall(s, lex, technical):
    f = _forms(lex)
    k = _en_question_start(s.low, f)
    low = s.low[k:]
    body = _strip(low, f["en_fillers"])
    if _EN_REMIND_KEEP.match(body):
        return []
    advice = f["en_advice"].search(low)
    memory = f["en_memory"].search(low) or f["en_you_know"].search(low) or (s.question and _EN_RECALL_Q.match(body))
    # "I said", "have I mentioned" ask the memory in a question or a retrieval request, not in "write a text about
    # what I said"
    said = not advice and not _EN_POLITE_ASK.match(body) and f["en_self_said"].search(low)
    anchored = f["en_anchor"].search(s.low)
    imperative = f["en_imperative"].match(body)
    hit = None
    if memory and memory.group(0).startswith("remind me") and not _EN_SELF_ANY.search(low[memory.end():]):
        memory = None  # "remind me how to tie a tie" asks for knowledge, not for the speaker's past
    if memory and (s.question or imperative or _task(low, lex) or low.startswith(("remind me", "tell me", "catch me"))):
        hit = memory
    elif said and (s.question or imperative or (_EN_RECORD_OBJECT.search(low[:said.start()])
                                                and not _EN_SUBJECT_FIRST.match(body) and not _task(low, lex))):
        hit = said  # "(pull together) everything I've told you about…": the record as the object of a request
    elif f["en_retrieve"].search(low) and _EN_SELF_ANY.search(low) and anchored:
        hit = f["en_retrieve"].search(low)  # "give me a summary of my month"
    elif (imperative and not technical and not advice and _EN_SELF_ANY.search(body[imperative.end():])
          and (f["en_quantifier"].search(body[imperative.end():]) or f["zh_question"].search(body) or anchored)):
        hit = imperative  # "show me everything about my knee injury": the speaker's record, asked for
    elif (s.question and not technical and not advice and not _EN_POLITE_ASK.match(body)
          and not f["en_small"].search(body)):
        wh = f["en_question"].match(body)
        aux = _EN_AUX_SELF.match(body)
        again = _EN_AGAIN.match(body) and (_EN_SELF_ANY.search(body) or f["en_kin"].search(body)
                                             or _EN_NAME_OWNER.search(s.raw))  # "who's Leo's coach again?"
        if wh and again:
            hit = wh
        elif wh and not aux:
            who_me = body.startswith(("who ", "who's")) and re.search(r"(?<![a-z])(?:me|my)(?![a-z])", body)
            topical = (_EN_TOPIC_Q.match(body) and f["en_topic"].search(body[:40]) and not f["en_others"].search(body)
                       and (anchored or re.search(r"(?<![a-z])been(?![a-z])", body)))
            if (f["en_past_self"].search(body) or _EN_FACT_SLOT.match(body) or _EN_OWN_WHEN.match(body) or topical
                    or _EN_OWN_FACT.match(body) or _EN_EMBEDDED.match(body)
                    or f["en_habit"].search(body) or who_me
                    or (anchored and _EN_SELF_ANY.search(body))):  # "what's going on with me lately?"
                hit = wh
        elif aux and (anchored or " or " in body):  # "am I sleeping better these days?", "is it June or July?"
            hit = aux
    if not hit:
        return []
    told = f["en_told"].search(low)
    start, end = s.offset + k, s.end
    # "what did I say about my knee, it got worse": a clause after a comma past the question's words tells,
    # unless it points at the memory ("…, according to what I told you?")
    past = hit.end() + (len(low) - len(body) if hit.string is body else 0)
    cut = None if told else _EN_CLAUSE_AFTER.search(s.text, start + past, end)
    if cut and not points_at_memory(s.text[cut.end():end], lex):
        end = cut.start()
    return [(short(s.text[start:end]), start, end, low[told.end():] if told else "")]



def template(text, lex):
    """A request for a template or sample: the document is nobody's in particular."""
    return bool(_forms(lex)["template"].search(text.lower()))


def points_at_memory(text, lex):
    """'开始那天我跟你说过', 'from what I've told you': words about the memory, not news for it."""
    f, low = _forms(lex), text.lower()
    return bool(_zh_memory(low, f) or f["en_memory"].search(low) or f["en_self_said"].search(low))
