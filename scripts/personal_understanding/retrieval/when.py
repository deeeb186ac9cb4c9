"""Time as a channel of its own.

A question whose content is a time expression ("前年八月发生了什么", "What
happened last week?", "How was last weekend?") lists what the window holds,
ranked by salience and date. A time expression with content words ("what did
I buy 10 days ago") puts the window's matches first. Words the archive has
never seen and words that only frame the question never erase the time words.
"""

import datetime
import re

from ..patterns import Lazy
from . import phrase
from .index import weighted_terms
from .lexical import frame_terms, widens
from .query import overlaps, saved_question
from .timeexpr import RECENT_DAYS, is_vague, lean_of

LIST_LIMIT = 2000  # rows read from a window before ordering
ASKS_WHEN = Lazy(
    r"^\W*when\b|(?<![a-z])(?:what|which) (?:day|date|time|year|month|week)\b|(?<![a-z])how long ago\b"
    r"|什么时候|啥时候|哪天|哪一天|哪年|哪一年|几号|几月|多久以前|何时", re.I,
    needs=("when", "what", "which", "how long", "什么时候", "啥时候", "哪天", "哪一", "哪年", "几号", "几月", "多久以前",
           "何时"))
FOCUSED_TERMS = 8  # a question of at most this many content words is about its time; a long text only mentions one
# About how things stand now ("what car do I drive now?", "do I still go to the gym?", 我现在用什么手机, 我还养猫吗):
# what was said last is likelier to hold (query.NOW_BOOST). Not "recently": that is said of a past moment as often.
ASKS_NOW = Lazy(
    r"(?<![a-z])(?:now|currently|current|these days|nowadays|still|anymore|any more|at the moment"
    r"|(?:do|am) i|is my|are my|does my)(?![a-z])"
    r"|现在|目前|如今|当前|还[^，。,.!?！？]{0,10}吗", re.I,
    needs=("now", "current", "still", "anymore", "any more", "at the moment", "these days", "do i", "am i", "is my",
           "are my", "does my", "现在", "目前", "如今", "当前", "还"))  # (0.7 ms to compile)


def content_terms(q):
    """The query's terms once its time expressions and question-frame words are taken out (worked out once
    a probe: the listing, overview and now readings all ask)."""
    if q.content_terms is None:
        frame = frame_terms()
        q.content_terms = tuple(t for t in weighted_terms(q.rest, q.recall.lexicon()) if t not in frame)
    return q.content_terms


def is_time_only(q):
    """True when the query names a time and nothing the archive holds besides it.

    A word the archive lacks that stands for words it holds ("eat" for pizza) is content.
    """
    if not q.times:
        return False
    terms = content_terms(q)
    if not terms:
        return True
    held = [t for t, n in q.recall.df(terms).items() if n]
    # the turn's own saved message holds its words but tells nothing (a question saved before may lead to
    # its answer, the turn after it)
    if held and q.recall.told_somewhere(held, q.own_key):
        return False
    found = q.recall.thesaurus().expansions(q.rest, q.recall.lexicon(), topics=widens(terms))
    stand_ins = {t for _surface, targets in found for t in targets}
    return not any(q.recall.df(sorted(stand_ins)).values())


def window_rows(q):
    """Rows dated inside any of the query's time ranges: [(row, time)].

    Order: rows lying wholly inside a range before rows that only overlap it
    (a state of several years is not what "last week" holds), a row whose own
    words date it outside the range after one they do not (told this week of
    last weekend), what was told before what was asked (a question saved earlier is not what happened), then
    salience (unknown last), then date, then key. Dates run in order through a
    window in the past ("last month": its story as it happened), newest first
    through one that reaches today ("最近", "lately", "this week": what was said
    last is what "lately" means, and a page cut short must not hide it), and
    soonest first through one wholly ahead (by the day a turn speaks of).
    """
    clauses, args = [], []
    for t in q.times:
        clauses.append("(date_from IS NOT NULL AND date_from <= ? AND COALESCE(date_to, date_from) >= ?)"
                       " OR (told_from IS NOT NULL AND told_from <= ? AND told_to >= ?)")
        args += [t["to"], t["from"], t["to"], t["from"]]
    rows = q.recall.docs_where("(" + " OR ".join(clauses) + ") ORDER BY date_from, key", args, LIST_LIMIT)
    out = []
    for row in rows:
        ok, _why = q.admits(row, direct=False)
        if not ok:
            continue
        time = next(t for t in q.times if overlaps(row, t["from"], t["to"]))
        inside = ((row["date_from"] or "") >= time["from"] and (row["date_to"] or row["date_from"] or "") <= time["to"]
                  or row["told_from"] is not None and row["told_from"] >= time["from"] and row["told_to"] <= time["to"])
        elsewhere = row["told_from"] is not None and (row["told_to"] < time["from"] or row["told_from"] > time["to"])
        out.append((row, time, (not inside, elsewhere)))
    today = q.today.isoformat()
    if all(t["from"] > today for t in q.times):  # what lies ahead: the soonest first, by the day a turn speaks of
        out.sort(key=lambda x: (x[0]["told_from"] or x[0]["date_from"] or "", x[0]["key"]))
    else:
        out.sort(key=lambda x: (x[0]["date_from"] or "", x[0]["key"]), reverse=any(t["to"] >= today for t in q.times))
    out.sort(key=lambda x: (x[2], saved_question(x[0]), -(x[0]["salience"] if x[0]["salience"] is not None else -1)))
    return [(row, time) for row, time, _place in out]


PLANNED_READS = 100  # the user's newest words of the last month read for what they plan
_TO_DO = Lazy(r"(?<![a-z])(?:needs?\s+to|have\s+to|has\s+to|got\s+to|must|remember\s+to)(?![a-z])"
              r"|得去|需要|记得|该去", re.I)


def planned_rows(q, taken):
    """[(row, time)]: what the user said in the last month of what they will or must do ("I need to renew my
    passport", 打算下个月去云南), for a question about what lies ahead (a window of kind ahead): a plan said
    without a date is in no window. Newest first; rows in `taken` (keys) are left out."""
    ahead = next((t for t in q.times if t.get("kind") == "ahead"), None)
    if ahead is None:
        return []
    since = (q.today - datetime.timedelta(days=RECENT_DAYS)).isoformat()
    rows = q.recall.docs_where("(doc & 1) = 0 AND own = 1 AND date_from >= ? AND date_from <= ?"
                               " ORDER BY date_from DESC, doc DESC", (since, q.today.isoformat()), PLANNED_READS)
    out = []
    for row in rows:
        if row["key"] in taken or saved_question(row) or not q.admits(row, direct=False)[0]:
            continue
        text = phrase.folded_text(q.ai, row["doc"], {row["doc"]: row}, q.text_cache)
        if lean_of(text) == "ahead" or _TO_DO.search(text):
            out.append((row, dict(ahead, planned=True)))
    return out


def why(time):
    out = {"channel": "time", "expression": time["expression"], "from": time["from"], "to": time["to"]}
    if time.get("planned"):
        out["said"] = "in the last month, of what is to come"  # not dated in the window: a plan said lately
    return out


def window_first(q, order, row_by_key, matched, stood_in=()):
    """Keys in `order` with the window's direct matches moved to the front, then its matches through a
    stand-in ("eat" for pizza), then the rest (order kept within each part).

    Only for a short question: in a long message (a whole conversation as
    context) a time expression is one detail among many, and only boosts.
    A vague window (recently, 最近: timeexpr.is_vague) only boosts too: the answer is likely recent, not
    surely, and a weak match said this month must not go ahead of a better one said before it.
    """
    times = [t for t in q.times if not is_vague(t["expression"])]
    if not times or len(content_terms(q)) > FOCUSED_TERMS:
        return order
    inside = [k for k in order if any(overlaps(row_by_key[k], t["from"], t["to"]) for t in times)]
    first = [k for k in inside if k in matched] + [k for k in inside if k not in matched and k in stood_in]
    if not first:
        return order
    chosen = set(first)
    return first + [k for k in order if k not in chosen]


def asks_now(q):
    """Does the question ask how things stand now? Then what was said more recently weighs more.
    Only a question: a long text (a whole message the turn gate probes) says "now" of itself."""
    return ASKS_NOW.finds(q.raw) and len(content_terms(q)) <= FOCUSED_TERMS


def asks_when(text):
    """Does the question ask for a moment ("When did I ...", "什么时候")? Then rows naming a time rise."""
    return ASKS_WHEN.finds(text or "")
