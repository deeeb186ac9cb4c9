"""Whose words answer a question.

An archive of conversations holds the owner's words and other people's: a
friend in a chat, an assistant in an imported history. A question usually
says whose words it is after:

- it names a speaker ("What did Nate say about the turtles?"): that
  speaker's turns;
- it asks what the other side said ("the hostel you recommended", 你之前推荐的):
  the other side's turns;
- it is in the first person ("How long have I had my cat?", 我上次说的) and
  not about the conversation as a whole ("our previous chat", "remind me"):
  the owner's own turns. An assistant's long replies match many words of
  any question; the owner's short lines hold what happened to them.

Those turns weigh WHOSE_BOOST times more. A named speaker is a preference,
not a filter: when someone else's turn covers clearly more of the question's
words than anything the named speaker said (DOMINANCE, on the strength of the
words matched, leaving out the names asked about), nothing is boosted ("What
did Nate take a picture of near Fort Wayne?" when only Joanna ever mentioned
Fort Wayne). Coverage, not score: a short line that says the same words
scores higher for its length, yet it is no sign that the wrong person was
named. Records have no side and are never boosted.
"""

from ..patterns import Lazy
from .index import latin_boundary_ok
from .lexicon import normalize_word, stopwords

WHOSE_BOOST = 3.0  # chosen on the dev parts (1.3, 1.8, 2.2, 2.7, 3.5 and 4 tried)
DOMINANCE = 1.1  # another speaker's best coverage this much more: the named speaker is not preferred

# What the other side said or did: "you recommended", "your suggestion", 你之前推荐的.
_OTHER_SIDE = Lazy(
    r"(?<![a-z])you(?:'d| had| have|'ve)? (?:just |also |once |previously |earlier |already )?"
    r"(?:said|told|mentioned|recommended|suggested|gave|provided|wrote|made|listed|shared|described|explained"
    r"|proposed|offered|advised|created|came up|showed|sent|named|used)(?![a-z])"
    r"|(?<![a-z])your (?:suggestion|recommendation|advice|answer|list|reply|response|example|script|story|idea)"
    r"|(?<![a-z])did you (?:say|tell|mention|recommend|suggest|give|provide|write|make|list|share)(?![a-z])"
    r"|(?<![跟和对给诉])你(?:刚才|刚刚|之前|上次|以前|那次|当时)?(?:说|讲|提到|推荐|建议|给我|写|列)",
    needs=("you", "你"))
# The owner's own words: "I mentioned", "I told you", 我说过, 我跟你提过.
_OWN_SPEECH = Lazy(
    r"(?<![a-z])(?:i|we)(?: had| have|'ve| once| also| just)? (?:said|told|mentioned|shared|wrote|asked|described)"
    r"(?![a-z])|我(?:之前|上次|以前|刚才)?(?:跟你|和你|对你)?(?:说|讲|提)",
    needs=("said", "told", "mentioned", "shared", "wrote", "asked", "described", "说", "讲", "提"))
# The conversation as a whole ("our previous chat", "remind me", 我们聊过): either side may hold it.
_SHARED = Lazy(
    r"(?<![a-z])our (?:\w+ )?(?:conversation|chat|discussion|talk|exchange)s?(?![a-z])|(?<![a-z])remind me(?![a-z])"
    r"|(?<![a-z])we (?:discussed|talked|chatted|went over|covered)(?![a-z])|我们(?:之前|上次)?(?:聊|谈|讨论)",
    needs=("our", "remind", "we ", "我们"))
_FIRST_PERSON = Lazy(r"(?<![a-z])(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|our)(?![a-z])|我")


def _folded(text):
    return (text or "").lower().replace("\u2019", "'")  # the patterns are lower case: no re.I to compile


def side_asked(text):
    """1: the owner's own words answer it; 0: the other side's; None: either."""
    text = _folded(text)
    if _OTHER_SIDE.finds(text):
        return 0
    if _OWN_SPEECH.finds(text):
        return 1
    if _SHARED.finds(text) or not _FIRST_PERSON.search(text):
        return None
    return 1


def speakers_named(text, speakers):
    """The speakers (normalised names, as the index keeps them) that the text names as whole words.

    A speaker label that is a stopword (an export that calls its owner "me", 我) names no one:
    "what did you tell me" asks about the other side.
    """
    norm = normalize_word(text or "")
    return {s for s in speakers if s and s in norm and latin_boundary_ok(norm, s)
            and s not in stopwords("en") and s not in stopwords("zh")}


def resolve(q):
    """Set q.named and q.side for one probe. A request for advice (q.advice, set before) is the owner's
    own, "I" or not ("can you suggest a laptop?"); not when it names a speaker or asks what the other
    side advised, nor when it is about the conversation as a whole."""
    q.named = speakers_named(q.raw, q.recall.speakers())
    q.side = None if q.named else side_asked(q.raw)
    if q.advice and (q.named or q.side == 0):
        q.advice = False
    elif q.advice and q.side is None and not _SHARED.finds(_folded(q.raw)):
        q.side = 1


def _is_theirs(q, row):
    if q.named:
        return row["speaker"] in q.named
    return q.side is not None and row["own"] == q.side


def _coverage(detail, strength, names):
    return sum(strength.get(t, 0.0) for t in detail.get("matched", ()) if t not in names)


def prefer(q, ranked, in_channel, strength):
    """[(doc, score, detail)] with the turns of whoever the question is about boosted; `why.whose` says so."""
    if not ranked or not (q.named or q.side is not None):
        return ranked
    theirs = {doc for doc, _s, _d in ranked if _is_theirs(q, in_channel[doc])}
    if not theirs or len(theirs) == len(ranked):  # all or none: a preference would tell nothing apart
        return ranked
    if q.named:
        names = {part for name in q.named for part in name.split()} | set(q.named)
        mine = max((_coverage(d, strength, names) for doc, _s, d in ranked if doc in theirs), default=0.0)
        other = max((_coverage(d, strength, names) for doc, _s, d in ranked if doc not in theirs), default=0.0)
        if other > DOMINANCE * mine:
            return ranked
        label = {"speaker": None}
    else:
        label = {"side": "owner" if q.side == 1 else "other"}
    out = []
    for doc, score, detail in ranked:
        if doc in theirs:
            detail["whose"] = dict(label, speaker=in_channel[doc]["speaker"]) if q.named else label
            score *= WHOSE_BOOST
        out.append((doc, score, detail))
    return out


NEARBY_SOURCES = 3  # a request for advice looks around its best few matches ...
NEARBY_PER_SOURCE = 8  # ... at this many turns of each one's conversation, nearest first (a chat changes topic) ...
NEARBY_SHOWN = 3  # ... and adds at most this many: a hint of what the advice depends on, not the conversation
NEARBY_AFTER = 1  # they come after the best match at least ...
NEARBY_WEAK = 0.25  # ... and before the first that scores below this share of the best match


def own_words_nearby(q, matched, kept):
    """[(row, why)]: up to NEARBY_SHOWN of the owner's own turns from the conversations of the best matches
    (`matched`: keys the query's words or their stand-ins found, best first; `kept`: keys already shown),
    for a request for advice ("any tips for my trip?"): what the user said about themselves there (the
    camera they own, the food they can't eat) is what the advice depends on, in whatever words. Nearest
    the match first; each says which match it sat near. The probe places them."""
    sources = [k[2:] for k in matched if k.startswith("c:")][:NEARBY_SOURCES]
    if not sources:
        return []
    mates = q.ai.session_mates(sources, NEARBY_PER_SOURCE)
    order = []  # (distance, the source's rank, capture key, source)
    for n, source in enumerate(sources):
        for distance, cid in enumerate(mates.get(source, ())):
            order.append((distance, n, "c:" + cid, source))
    order.sort()
    taken, out = set(kept), []
    rows = q.recall.docs_by_key({key for _d, _n, key, _s in order} - taken)
    for _distance, _n, key, source in order:
        row = rows.get(key)
        if key in taken or row is None or not row["own"]:
            continue
        if not q.admits(row, direct=False)[0]:
            continue
        taken.add(key)
        out.append((row, {"channel": "conversation", "asked_for": "advice", "near": source, "whose": {"side": "owner"}}))
        if len(out) >= NEARBY_SHOWN:
            break
    return out
