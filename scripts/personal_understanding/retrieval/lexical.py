"""Lexical channels of a probe: the query's weighted terms, candidate postings,
BM25-style scoring per channel, alias routes, pseudo-relevance feedback, and
the lift a strong turn gives its neighbours in the conversation."""

import heapq
import math
import re

from . import knowledge, phrase, rank, whose
from ..patterns import Lazy
from .index import ASKS_MARKED, CHANNELS, weighted_terms
from .lexicon import question_words
from .query import SHORT_QUESTION
from .tokenizer import IN_LAW, content_tokens, stem, tokenize

ROUTE_SHARE = 0.6  # an alias hit is worth this share of the query's strongest term
TIME_WORD_WEIGHT = 0.5
FRAME_WEIGHT = 0.3  # "describe", "mention", "记得": words that frame the question, not its content
PHRASAL_VERB_WEIGHT = 0.5  # the verb of a phrasal verb the query says ("break" of "break up")
QUERY_TF = 0.3  # weight of a repeated query word: x (1 + 0.3 ln n)
FEEDBACK_DOCS = 3  # pseudo-relevance feedback: the best first-pass matches (which keep their places) ...
FEEDBACK_TERMS = 8  # ... lend this many of their words to a second pass ...
FEEDBACK_WEIGHT = 0.3  # ... at most at this weight (they help find, never count as the user's words)
FEEDBACK_MIN_DOCS = 50  # in a tiny archive the best few matches say too little about the rest
FEEDBACK_MAX_DF = 100  # a lent word must be specific: found in at most this many documents
COMMON_MIN_DOCS = 2000  # from this size on ...
COMMON_SHARE = 0.07  # ... a word in this share of the documents only scores, never finds
COMMON_CANDIDATES = 1000  # a query of only such words looks at this many documents
CANDIDATES = 3000  # rarer words find up to about this many documents; commoner ones then only score them
CONTEXT_SOURCES = 50  # the best-matching turns lift their neighbours in the session ...
REPLY_SHARE = 0.1  # ... the reply by this share of their score
ASKED_SHARE = 0.6  # ... or by this share when the turn asks something: the answer is in its reply
ANSWERED_SHARE = 0.2  # ... and the turn they answered by this share
CONTEXT_FULL_TERMS = 20  # a short turn leans on its neighbours; a long one stands on its own
BRIDGE_WEIGHT = 0.6  # a word the built-in knowledge says stands for the user's word (借 for 欠) ...
BRIDGE_WHEN_FOUND = 0.2  # ... weighs less when the user's own word is in the archive too
HELD_CHECKED = 2  # a query word in at most this many texts is checked for being only in its own turn or a question
TRANSLATION_MAX_DF = 100  # a stand-in in the other language finds (not only re-scores) in at most this many texts
TOPIC_WEIGHT = 0.4  # a thing a wider word covers (火锅 for 吃): it finds even when the wider word is in the archive ...
TOPIC_WHEN_FOUND = 0.2  # ... at this weight then
SPLIT_SHARE = 0.5  # an unseen two-character word found as its two characters apart in a text
TOPIC_MAX_TERMS = 8  # topics widen a question of at most this many words (widens)


def _alias_routes(recall, text):
    """Entities whose name or alias the query says; one-character aliases (妈) only as a word of their own."""
    hits = recall.alias_hits(text)
    if not hits:
        return {}
    words = {t.text for t in tokenize(text, recall.lexicon())}
    routes = {}
    for entity, aliases in hits.items():
        kept = [a for a in aliases if len(a) > 1 or a in words or a * 2 in words]
        if kept:
            routes[recall.ai.resolve(entity)] = kept
    return routes


def _routed_docs(recall, routes, limit=200):
    """Documents of routed entities and of the records that point at them."""
    ai = recall.ai
    out = {}
    for entity, aliases in routes.items():
        names = {entity} | set((ai.record(entity) or {}).get("merged_from") or ())
        keys = [f"r:{entity}"]
        for name in names:
            keys += [f"r:{rid}" for rid in ai.referrers(name, "entity")[:limit]]
        for key in keys:
            row = recall.doc_for_key(key)
            if row is not None:
                out.setdefault(row["doc"], (row, entity, aliases))
    return out


# Asking for advice ("any tips for my trip?", "can you recommend a lens?", "推荐个镜头", "有什么建议"): the asking
# words frame the request, like "describe" a question; "what advice did Sam give me?" asks about advice.
_ADVICE = "tips?|ideas?|suggestions?|advice|recommendations?|pointers"
ADVICE_REQUEST = Lazy(
    rf"^\W*(?:(?:any|some|got any|need some|give me some|share some)\s+(?:good\s+|quick\s+|more\s+|other\s+)?(?:{_ADVICE})"
    rf"|(?:please\s+)?(?:recommend|suggest)\b|(?:{_ADVICE})\b)"
    rf"|\b(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:recommend|suggest|advise|give\s+me\s+(?:some\s+)?(?:{_ADVICE}))"
    rf"|\bwhat\s+(?:do|would)\s+you\s+(?:recommend|suggest|advise)"
    rf"|^\W*(?:[\w']+\s+){{0,2}}(?:{_ADVICE})\s+(?:for|on|about)\s|\b(?:{_ADVICE})\W*$"
    rf"|\b(?:i\s+need|i'd\s+like|i\s+want|looking\s+for)\s+(?:some\s+)?(?:{_ADVICE})\b"
    r"|^\W*(?:请)?(?:推荐|建议)|有(?:什么|没有|啥)(?:好的?)?(?:推荐|建议)|给(?:我)?(?:点|些|一些|个)?(?:建议|推荐)|求推荐"
    r"|(?:推荐|建议)(?:一下|下)?(?:吗|呢|么|嘛|啊|吧)?\W*$",
    re.IGNORECASE, needs=("tip", "idea", "suggest", "advice", "advis", "recommend", "pointer", "推荐", "建议"))  # (1.5 ms)
# ... unless it asks about advice given before: "any career advice I got?", "what tips did my coach give?"
ADVICE_GIVEN = Lazy(r"(?<![a-z'])(?:i|we) (?:got|received|was given|were given|heard)(?![a-z])"
                    r"|(?<![a-z])(?:did|has|had|have) (?:\w+ ){0,3}(?:give|gave|given|suggest|recommend|tell|told)"
                    r"|(?:给过|说过|提过|推荐过|建议过)", re.IGNORECASE,
                    needs=("got", "received", "given", "heard", "did", "has", "had", "have", "过"))
ADVICE_WORDS = frozenset(stem(w) for w in ("tip", "idea", "suggest", "suggestion", "advice", "advise", "recommend",
                                            "recommendation", "pointer", "推荐", "建议"))


# Asking what to do without the words of advice: "what should I get my sister?", "what do you think?", 我该怎么办.
OPINION_REQUEST = Lazy(
    r"(?<![a-z'])(?:what|which|where|how|when)\s+(?:\w+\s+){0,2}should\s+(?:i|we)(?![a-z'])|^\W*should\s+(?:i|we)(?![a-z'])"
    r"|[,.;:!?]\s*should\s+(?:i|we)(?![a-z'])"
    r"|(?<![a-z'])(?:what|how|do|would)\s+you\s+think|(?<![a-z'])any\s+(?:thoughts|ideas)(?![a-z'])"
    r"|(?<![a-z'])how\s+(?:can|could|should|do)\s+(?:i|we)(?![a-z'])"
    r"|(?<![a-z'])what\s+would\s+you\s+(?:do|pick|choose|go\s+for|get)(?![a-z'])"
    r"|(?<![a-z'])help\s+me\s+(?:to\s+)?(?:choose|decide|pick|plan|figure\s+out|find)(?![a-z'])"
    r"|我(?:该|应该)|(?:该|应该)怎么|怎么办|你觉得|你看我|帮我(?:选|挑|想|出主意|参谋|看看)|有(?:什么|没有|啥)好?(?:办法|主意)",
    re.IGNORECASE, needs=("should", "think", "thoughts", "ideas", "would you", "help me", "how", "该", "怎么办", "觉得", "你看",
                          "帮我", "办法", "主意"))


def asks_advice(text, opinion=False):
    """A request for advice now, not a question about advice given before; `opinion`: asking what to do
    counts too ("what should I get my sister?"), though without the words of advice to frame."""
    asked = ADVICE_REQUEST.finds(text) or (opinion and OPINION_REQUEST.finds(text))
    return bool(asked and not ADVICE_GIVEN.finds(text))


_FRAME = []


def frame_terms():
    if not _FRAME:
        _FRAME.append(frozenset(stem(w) for w in question_words("en")) | question_words("zh"))
    return _FRAME[0]


def query_terms(q, text):
    """The query's weighted terms and the entities it names."""
    recall = q.recall
    lex = recall.lexicon()
    routes = _alias_routes(recall, text)
    alias_chars = {a for aliases in routes.values() for a in aliases if len(a) == 1} | recall.thesaurus().kin_chars
    summed = weighted_terms(text, lex)
    strongest = weighted_terms(text, lex, collapse=True)
    # A word the user repeats is what the message is about: it counts a little more, not n times.
    terms = {t: w * (1 + QUERY_TF * math.log(max(1.0, summed[t] / w))) for t, w in strongest.items() if w > 0}
    terms = rank.query_weights(terms, alias_chars)
    q.specific = {t: lex.specificity(t) for t, w in terms.items()
                  if w >= rank.STRONG and len(t) > 1 and knowledge._is_cjk(t)}
    frame = frame_terms()
    if asks_advice(text):
        frame = frame | ADVICE_WORDS
    terms = {t: w * FRAME_WEIGHT if t in frame else w for t, w in terms.items()}
    _phrasal_verbs_as_parts(text, lex, terms)
    # A word no document holds may be read another way (held: df of the query's own words, asked once).
    held = recall.df(list(terms))
    # Nor does the turn's own message, or a short question saved before, hold a word: 我国庆去哪, once
    # saved, would hold 我国 (a misreading of 我|国庆) and so stop 国庆 from being looked for.
    rare = [t for t, n in held.items() if 0 < n <= HELD_CHECKED]
    if rare:
        told = recall.told_somewhere(rare, q.own_key, SHORT_QUESTION)
        held.update({t: 0 for t in rare if t not in told})
    _unseen_words_as_their_tails(terms, held)
    _unseen_english_shorter(recall, terms, held)
    _bigrams_across_words(recall, text, lex, terms, held)
    if q.times and text == q.lexical:
        # Time words are resolved into ranges (boost); as words they still count, at half weight.
        rest = weighted_terms(q.rest, lex)
        for term in weighted_terms(q.time_words, lex):
            if term in terms and term not in rest:
                terms[term] *= TIME_WORD_WEIGHT
    bridges = _bridges(recall, text, terms, routes, q.own_key)
    return terms, routes, bridges


def _phrasal_verbs_as_parts(text, lex, terms):
    """"break up" asks about a breakup: the verb alone is a part of that word (broke, for money, is another
    matter), so it weighs as a part unless the query also says it on its own."""
    seen = {}  # token -> its terms, in order (a token's span: 妈 and the unknown pair 妈买 after it are two tokens)
    for tok, term, _w in content_tokens(text, lex):
        seen.setdefault((tok.start, tok.end), []).append(term)
    # (brotherinlaw beside inlaw is one relation read two ways, not a verb and its particle)
    paired = {ts[0] for ts in seen.values() if len(ts) > 1 and ts[1] in terms and ts[1] != IN_LAW}
    alone = {ts[0] for ts in seen.values() if len(ts) == 1}
    for verb in paired - alone:
        if verb in terms:
            terms[verb] = min(terms[verb], PHRASAL_VERB_WEIGHT)


def _unseen_words_as_their_tails(terms, held):
    """动手术, never said in the archive, is asked as 手术 (the word after a light verb or modifier: 新手机,
    老同学): a Chinese word of three or more characters that no document holds gives its weight to the
    word that follows its first character. Never to a shorter part: 山东大学 is not asked as 大学."""
    tails = [t for t, w in terms.items() if len(t) >= 3 and knowledge._is_cjk(t) and w >= rank.STRONG and t[1:] in terms
             and not held.get(t)]
    for word in tails:
        terms[word[1:]] = max(terms[word[1:]], terms[word])


def _unseen_english_shorter(recall, terms, held):
    """The stemmer keeps a final -is (analysis, tennis) and leaves realization as realizat, while
    the archive says Ferrari and realize: an English query word no text holds is also looked for
    without a final s, or without the at its -ation left, where the archive holds that form."""
    unseen = [t for t, w in terms.items()
              if w >= rank.STRONG and len(t) >= 5 and t.isascii() and t.isalpha() and not held.get(t)]
    shorter = {}
    for term in unseen:
        for form in (term[:-1] if term.endswith("s") else None, term[:-2] if term.endswith("at") else None):
            if form and form not in terms:
                shorter[form] = term
    if shorter:
        found = recall.df(sorted(shorter))
        for form, term in shorter.items():
            if found.get(form):
                terms[form] = terms[term]


def _bigrams_across_words(recall, text, lex, terms, held):
    """年会上 is read 年|会上, and no document holds 会上, while the text that told of it (公司年会抽中了…)
    holds 年会, a word the dictionary lacks, as its unknown stretch's bigram. A query word no document
    holds gives its weight to the pair its edge character makes with its neighbour across the word
    boundary, where the archive holds that pair: the archive's words say how to read the question."""
    tokens = sorted((t for t in tokenize(text, lex) if t.kind == "cjk"), key=lambda t: t.start)
    words = {t.text for t in tokens if len(t.text) >= 2}
    pairs, last = {}, None
    for t in tokens:
        if last is not None and t.start == last.end:
            pair = last.text[-1] + t.text[0]
            if pair not in terms and not any(pair in w for w in words):
                pairs.setdefault(pair, set()).update(w for w in (last.text, t.text) if len(w) >= 2)
        if last is None or t.end >= last.end:
            last = t
    unseen = {w for ws in pairs.values() for w in ws if terms.get(w, 0.0) >= rank.STRONG and not held.get(w)}
    pairs = {pair: ws & unseen for pair, ws in pairs.items() if ws & unseen}
    if pairs:
        found = recall.df(sorted(pairs))
        for pair, ws in pairs.items():
            if found.get(pair):
                terms[pair] = max(terms[w] for w in ws)


def widens(terms):
    """Do topics widen a query of these terms? Only a short question: in a longer text a wider word is one among many."""
    return len(terms) <= TOPIC_MAX_TERMS


def _bridges(recall, text, terms, routes, own_key=None):
    """Words the built-in knowledge says stand for the query's words: {term: (query word, data word, weight, score_only, source)}.

    Their weight joins `terms` (scored per query word: the best of its
    stand-ins counts, not their sum); entities named by a stand-in (哥哥 for
    家里) join `routes`. Neither the turn's own saved message (`own_key`) nor
    a short question saved before counts as the archive holding the user's word:
    "房租涨了吗", once saved, must still find "the landlord is raising the rent".
    """
    lex = recall.lexicon()
    frame = frame_terms()
    short = widens(terms)
    found = recall.thesaurus().expansions(text, lex, topics=short)
    if not found:
        return {}
    parts = {surface: weighted_terms(surface, lex) for surface, _targets in found}  # each surface's own terms
    own = {}  # the query's whole words behind each surface (清明 inside 清明节 is a slice, not the word)
    for surface, _targets in found:
        own[surface] = [t for t, w in parts[surface].items() if t in terms and w >= rank.STRONG] or [surface]
    dfs = recall.df(sorted({t for _s, ts in found for t in ts}))
    told = recall.told_somewhere({t for ts in own.values() for t in ts}, own_key, SHORT_QUESTION)
    bridges, reached = {}, {}  # reached: term -> every query word it stands for (Lisbon for Portugal and for trip)
    for surface, targets in found:
        if all(t in frame for t in own[surface]):
            continue
        present = all(t in told for t in own[surface])  # 心理医生 is not told by a 医生 alone
        # An English word the query weighs at part (work in "working out", read as workout) lends its
        # stand-ins at that part: job must not come before the gym.
        share = 1.0
        if not knowledge._is_cjk(surface):
            share = min(1.0, max((terms.get(t, 1.0) for t in parts[surface]), default=1.0))
        for term, (word, source) in targets.items():
            if not dfs.get(term) or terms.get(term, 0.0) >= rank.STRONG:
                continue
            if source == "topic":
                # 吃 in the archive does not mean every meal was called that: the covered word still finds.
                weight, score_only = (TOPIC_WHEN_FOUND if present else TOPIC_WEIGHT), False
            else:
                # A word in the other language is the same word, not another one for it: mom for 妈妈 finds
                # what was said in English though 妈妈 is in the archive too (a bilingual user says both),
                # in a question, when the word is specific; in a longer text (a whole message the turn gate
                # probes), or when it is in many texts (they would rank below anyway), it only re-scores.
                translated = (knowledge._is_cjk(term) != knowledge._is_cjk(surface) and short
                              and dfs[term] <= TRANSLATION_MAX_DF)
                weight, score_only = (BRIDGE_WHEN_FOUND, not translated) if present else (BRIDGE_WEIGHT, False)
            weight *= share
            if weight <= terms.get(term, 0.0):
                continue  # a slice of the query's own word that already weighs more
            reached.setdefault(term, []).append(surface)
            if term not in bridges or bridges[term][2] < weight:
                bridges[term] = (surface, word, weight, score_only, source)
        # People are named through relations and everyday words; a topic's things (狗 for 宠物) name no one.
        names = {word: source for word, source in targets.values() if source != "topic"}
        names.update({(f"我{n}" if knowledge._is_cjk(n) else f"my {n}"): src for n, src in list(names.items())})
        weight = BRIDGE_WHEN_FOUND if present else BRIDGE_WEIGHT
        for entity, alias in recall.entities_named(sorted(names)):
            entity = recall.ai.resolve(entity)
            if entity not in routes:
                routes[entity] = [alias]
                bridges[("entity", entity)] = (surface, alias, weight, present, names.get(alias, "kinship"))
    for term, bridge in bridges.items():
        if isinstance(term, str):
            terms[term] = bridge[2]
            bridges[term] = bridge + (tuple(dict.fromkeys(reached[term])),)
    return bridges


def feedback_terms(recall, scored, terms, total):
    """Words the best first-pass matches share (pseudo-relevance feedback): {term: weight}."""
    top = [doc for doc, _score in sorted(scored.items(), key=lambda kv: -kv[1])[:FEEDBACK_DOCS]]
    if not top or not FEEDBACK_TERMS:
        return {}
    lengths = {doc: row["length"] or 1.0 for doc, row in recall.docs(top).items()}
    weight = {}
    for term, doc, tf in recall.doc_terms(top):
        if term in terms or tf < 1.0 or (len(term) == 1 and ord(term) > 0x2e7f):
            continue
        weight[term] = weight.get(term, 0.0) + tf / lengths[doc]
    dfs = recall.df(list(weight))
    ceiling = min(total / 4, FEEDBACK_MAX_DF)
    ranked = {t: w * rank.idf(total, dfs[t]) for t, w in weight.items() if 2 <= dfs.get(t, 0) <= ceiling}
    best = sorted(ranked.items(), key=lambda kv: (-kv[1], kv[0]))[:FEEDBACK_TERMS]
    if not best:
        return {}
    top_weight = best[0][1]
    return {t: FEEDBACK_WEIGHT * w / top_weight for t, w in best}


def rank_query(q, text):
    """Channel rankings for one query text: {channel: [(doc, score, detail)]}, rows, held back, tokens."""
    terms, routes, bridges = query_terms(q, text)
    wanted = phrase.phrases(text, q.recall.lexicon())
    unseen = _unseen_words(q, text, terms)
    channels, rows, held, tokens = score_terms(q, terms, routes, phrases=wanted, bridges=bridges, unseen=unseen)
    if FEEDBACK_TERMS and q.recall.total_docs() >= FEEDBACK_MIN_DOCS:
        first = {doc: score for ranked in channels.values() for doc, score, _d in ranked}
        extra = feedback_terms(q.recall, first, terms, max(1, q.recall.total_docs()))
        if extra:
            own, own_rows = channels, rows
            channels, rows, held, tokens = score_terms(q, dict(terms, **extra), routes, feedback=set(extra),
                                                       phrases=wanted, bridges=bridges, unseen=unseen)
            kept_ids = set()
            for channel in list(channels) + [c for c in own if c not in channels]:  # in a fixed order
                # The best matches of the user's own words keep their places: words they lend order the rest.
                # (Rarer lent words may fill the candidate set before a common word of the user's finds them.)
                best = own.get(channel, [])[:FEEDBACK_DOCS]
                kept = {doc for doc, _s, _d in best}
                channels[channel] = best + [x for x in channels.get(channel, ()) if x[0] not in kept]
                for doc in kept:
                    rows.setdefault(doc, own_rows[doc])
                    kept_ids.add(own_rows[doc]["key"][2:])
            held = [h for h in held if h["id"] not in kept_ids]
    return channels, rows, held, tokens, routes


def _unseen_words(q, text, terms):
    """{word: weight} of a short question's Chinese words that no document is indexed under, but the
    question itself (its own capture, or a short question saved before). A text may hold one all the
    same, cut otherwise (体检 in 体检查出来 is read 体 | 检查 | 出来): each is looked for as said."""
    if len(text) > phrase.MAX_CHARS:
        return {}
    words = {t for t, w in terms.items() if len(t) > 1 and w >= rank.STRONG and knowledge._is_cjk(t)}
    if not words:
        return {}
    told = q.recall.told_somewhere(words, q.own_key, SHORT_QUESTION)
    return {t: terms[t] for t in sorted(words - told)}


def _postings(recall, strength, dfs, total, score_only=()):
    """Postings of the query's terms, with the candidate set bounded whatever the archive size.

    Terms are taken rarest first; once CANDIDATES documents are found, the
    remaining (more common) terms only score those documents. A term found in
    more documents than there is room left finds its densest ones up to the room
    (and then scores every document found). In a large archive a word found in a
    tenth of it never finds on its own; a query of only such words starts from
    the densest documents of the rarest one.
    """
    common = {t for t in strength if total >= COMMON_MIN_DOCS and dfs[t] > COMMON_SHARE * total}
    postings, found, deferred = {}, set(), []
    if common and common | set(score_only) >= set(strength):
        rarest = min(common, key=lambda t: (dfs[t], t))
        postings[rarest] = recall.densest(rarest, COMMON_CANDIDATES)
        found = {doc for doc, _tf in postings[rarest]}
        common.discard(rarest)
    for term in sorted(set(strength) - set(postings), key=lambda t: (dfs[t], t)):
        if term in common or term in score_only or len(found) >= CANDIDATES:
            deferred.append(term)
            continue
        if dfs[term] > CANDIDATES - len(found):
            found.update(doc for doc, _tf in recall.densest(term, CANDIDATES - len(found)))
            deferred.append(term)
            continue
        postings[term] = recall.postings([term])[term]
        found.update(doc for doc, _tf in postings[term])
    if deferred:
        postings.update(recall.postings(deferred, within=found))
    return postings


def score_terms(q, terms, routes, feedback=(), phrases=(), bridges=None, unseen=None):
    recall = q.recall
    dfs = recall.df(list(terms))
    total = max(1, recall.total_docs())
    strength = rank.term_strength(terms, dfs, total, q.specific)
    # A stand-in for a word the archive holds only re-scores what the user's words found.
    score_only = {t for t, b in (bridges or {}).items() if isinstance(t, str) and b[3]}
    postings = _postings(recall, strength, dfs, total, score_only)
    doc_ids = {doc for plist in postings.values() for doc, _tf in plist}
    routed = _routed_docs(recall, routes)
    wanted = doc_ids | set(routed)
    cache = q.row_cache  # the feedback pass and expansions meet mostly the same documents
    cache.update(recall.docs(wanted - cache.keys()))
    rows = {d: cache[d] for d in wanted if d in cache}
    stats = recall.channel_stats()
    bridges = bridges or {}
    groups = {t: b[0] for t, b in bridges.items() if isinstance(t, str)}
    tokens = [dict({"term": t, "weight": round(w, 2), "df": dfs.get(t, 0),
                    "idf": round(rank.idf(total, dfs[t]), 3) if dfs.get(t) else None},
                   **({"feedback": True} if t in feedback else {}),
                   **({"common_share": round(q.specific[t], 2)} if q.specific.get(t, 1.0) < 1.0 else {}),
                   **({"stands_for": groups[t]} if t in groups else {})) for t, w in terms.items()]
    top_strength = max((s for t, s in strength.items() if t not in groups), default=2.0)
    query_weights = {t: (w if t not in feedback and t not in groups else 1.0) for t, w in terms.items()}
    channels, held = {}, []
    not_own = frozenset(feedback) | frozenset(groups)
    by_channel = {}
    for doc, row in rows.items():
        by_channel.setdefault(row["channel"], {})[doc] = row
    scored_by = rank.score_channels(strength, postings, rows, {ch: avg for ch, (_n, avg) in stats.items()},
                                    query_weights, feedback=feedback,
                                    groups={t: bridges[t][5] for t in groups})
    for channel in CHANNELS:
        in_channel = by_channel.get(channel, {})
        scored = scored_by.get(channel, {})
        if phrases:
            _verbatim_phrases(q, phrases, channel, scored, in_channel, rows)
        if unseen:
            _words_as_said(q, unseen, total, channel, scored, in_channel, rows)
        if channel == "verbatim":
            _lift_neighbours(recall, scored, in_channel, rows, q.own_key)
        for doc, (row, entity, aliases) in routed.items():
            if row["channel"] != channel:
                continue
            score, detail = scored.get(doc, _unscored())
            route = {"entity": entity, "aliases": aliases}
            bonus = ROUTE_SHARE * top_strength
            via = bridges.get(("entity", entity))
            if via:  # named only by a stand-in: 哥哥 for 家里
                route["stands_for"] = via[0]
                bonus *= via[2]
            detail = dict(detail, below_threshold=False, routed=route)
            scored[doc] = (score + bonus, detail)
        ranked = []
        for doc, (score, detail) in scored.items():
            row = in_channel[doc]
            matched = detail["matched"]
            own_words = not not_own.issuperset(matched) if not_own else bool(matched)
            direct = (own_words or "phrase" in detail) and not detail["below_threshold"]
            if groups and not groups.keys().isdisjoint(matched):  # through built-in knowledge: say which word stood for which
                detail["stands_for"] = {t: {"query_word": groups[t], "word": bridges[t][1], "via": bridges[t][4]}
                                        for t in matched if t in groups}
            detail["direct"] = direct
            ok, why = q.admits(row, direct)
            if not ok:
                held.append({"id": row["key"][2:], "channel": channel, "why": why})
                continue
            if q.reached is not None and not feedback and channel != "entities":
                q.reached[row["key"]] = max(q.reached.get(row["key"], 0.0), score)  # even a weak touch counts
            if detail["below_threshold"]:
                held.append({"id": row["key"][2:], "channel": channel, "why": "below content threshold",
                             "matched": list(detail["matched"])})
                continue
            if q.repeats(row, matched, feedback):  # in its words or words standing for them
                detail["repeat"] = True  # not "the user's words found as said" either (probe)
            ranked.append((doc, score * q.factor(row, detail.get("repeat", False), own_words), detail))
        ranked = whose.prefer(q, ranked, in_channel, strength)
        ranked.sort(key=lambda x: (-x[1], rows[x[0]]["key"]))
        channels[channel] = ranked
    return channels, rows, held, tokens


def _verbatim_phrases(q, phrases, channel, scored, in_channel, rows):
    """Candidates whose text holds a phrase as said rank above every other candidate of the channel."""
    found = phrase.hits(q.ai, phrases, _best_scored(scored), in_channel, q.text_cache)
    if not found:
        more = _overlapping(q, phrases, channel, scored, in_channel, rows)
        found = phrase.hits(q.ai, phrases, more, in_channel, q.text_cache)
    top = max((s for s, _d in scored.values()), default=1.0)
    for doc, words in found.items():
        score, detail = scored.get(doc, _unscored())
        scored[doc] = (score + top, dict(detail, below_threshold=False, phrase=words))


def _words_as_said(q, unseen, total, channel, scored, in_channel, rows):
    """A candidate whose text holds an unseen word scores it as if it were indexed there once (the
    rarest a word can be), and the word counts as the user's own. A two-character word a candidate
    holds only as its two characters apart (修车 in 车被刮了…只能自己修: a verb and its object, said the
    other way round) counts at SPLIT_SHARE of that: the candidate already matched another word of the question."""
    for doc in _best_scored(scored) + _overlapping(q, unseen, channel, scored, in_channel, rows):
        text = phrase.folded_text(q.ai, doc, in_channel, q.text_cache)
        said = {word: weight * rank.idf(total, 1) * (1.0 if word in text else SPLIT_SHARE)
                for word, weight in unseen.items()
                if word in text or (len(word) == 2 and word[0] in text and word[1] in text and doc in scored)}
        if said:
            score, detail = scored.get(doc, _unscored())
            matched = dict(detail["matched"], **said)
            apart = [word for word in said if word not in text]
            detail = dict(detail, matched=matched, below_threshold=False, **({"apart": apart} if apart else {}))
            scored[doc] = (score + sum(said.values()), detail)


def _best_scored(scored):
    return heapq.nsmallest(phrase.SCORED, scored, key=lambda d: (-scored[d][0], d))


def _overlapping(q, words, channel, scored, in_channel, rows):
    """The channel's unscored documents of indexed words that overlap the end of one of `words`
    (phrase.overlap_docs), read into `rows` and `in_channel`."""
    more = [d for word in words for d in phrase.overlap_docs(q.recall, word) if d not in scored]
    rows.update(q.recall.docs(set(more) - set(rows)))
    in_channel.update({d: rows[d] for d in more if d in rows and rows[d]["channel"] == channel})
    return [d for d in more if d in in_channel]


def _unscored():
    return (0.0, {"matched": {}, "anchor": False, "below_threshold": False})


def _lift_neighbours(recall, scored, in_channel, rows, own_key=None):
    """A turn next to a strong match shares a part of its score (a separate, capped channel).

    The lift is a share (below 1) of the neighbour's own score, smaller for a
    long turn, which stands on its own: a reply never outranks the turn that
    holds the words unless it has words of its own. The current turn's own saved
    message (`own_key`) holds every word of the query and lifts nothing: the
    message said before it in the chat is no answer for being next to the question.
    """
    sources = heapq.nlargest(CONTEXT_SOURCES, ((doc, s) for doc, (s, d) in scored.items()
                                               if not d["below_threshold"] and d["matched"]
                                               and in_channel[doc]["key"] != own_key), key=lambda x: (x[1], -x[0]))
    if not sources:
        return
    lifts = {}
    # A turn's neighbours in its session come from the archive index at query time: a reply is
    # lifted by what it answered, so borrowed words never count as the reply's own.
    captures = {in_channel[doc]["key"][2:]: (doc, s) for doc, s in sources if in_channel[doc]["key"].startswith("c:")}
    around = recall.ai.neighbours_in_session(captures) if captures else {}
    replies = {"c:" + after: cid for cid, (_before, after) in around.items() if after}
    answered = {"c:" + before: cid for cid, (before, _after) in around.items() if before}
    if REPLY_SHARE or ASKED_SHARE:
        for key, row in recall.docs_by_key(replies).items():
            src_doc, s = captures[replies[key]]
            share = ASKED_SHARE if in_channel[src_doc]["asks"] == ASKS_MARKED else REPLY_SHARE  # as tuned: a "?"
            lifts.setdefault(row["doc"], []).append((share * s, row, in_channel[src_doc]["key"], "reply to"))
    if ANSWERED_SHARE:
        for key, row in recall.docs_by_key(answered).items():
            src_doc, s = captures[answered[key]]
            lifts.setdefault(row["doc"], []).append((ANSWERED_SHARE * s, row, in_channel[src_doc]["key"], "answered by"))
    for doc, options in lifts.items():
        score, detail = scored.get(doc, _unscored())
        own = 0.0 if detail["below_threshold"] else score
        short = min(1.0, CONTEXT_FULL_TERMS / max(1.0, options[0][1]["length"] or 1.0))
        lift, row, source, relation = max(options, key=lambda o: o[0])
        lifted = own + short * lift
        rows.setdefault(doc, row)
        in_channel.setdefault(doc, row)
        context = {"relation": relation, "id": source[2:], "lift": round(lifted - own, 3)}
        scored[doc] = (lifted, dict(detail, below_threshold=False, context=context))


