"""Probe: find what the user needs, show why each item came up, say what was not found.

Four lexical channels are scored separately (timeline, knowledge, entities,
verbatim), entity aliases route to the records about that entity, an
associative channel spreads from what was hit, and a fused `top` list takes
the best of each by reciprocal rank. Output is bounded; every call leaves a trace.
"""

import math

from .. import archive, timeutil
from ..errors import PuError
from ..records import get_record
from . import rank, trace
from .index import CHANNELS, open_recall, weighted_terms
from .ppr import Graph, path_to, personalized_pagerank
from .rows import build_row, capture_row, hypothesis_stub
from .tokenizer import tokenize

DEFAULT_LIMIT = 10
DEFAULT_BUDGET = 2000  # tokens of material
ROUTE_SHARE = 0.6  # an alias hit is worth this share of the query's strongest term
ASSOCIATION_WEIGHT = 0.5
ASSOCIATION_LIMIT = 6
CHANNEL_DEPTH = 30
STATUS_FACTOR = {"superseded": 0.6, "archived": 0.8, "uncertain": 0.9, "rejected": 0.5, "expired": 0.5}
TIME_BOOST = 1.5
TIME_WORD_WEIGHT = 0.5
QUERY_TF = 0.3  # weight of a repeated query word: x (1 + 0.3 ln n)
FEEDBACK_DOCS = 3  # pseudo-relevance feedback: the best first-pass matches ...
FEEDBACK_TERMS = 8  # ... lend this many of their words to a second pass ...
FEEDBACK_WEIGHT = 0.3  # ... at most at this weight (they help find, never count as the user's words)
FEEDBACK_MIN_DOCS = 50  # in a tiny archive the best few matches say too little about the rest
FEEDBACK_MAX_DF = 100  # a lent word must be specific: found in at most this many documents
COMMON_MIN_DOCS = 2000  # from this size on ...
COMMON_SHARE = 0.1  # ... a word in this share of the documents only scores, never finds
COMMON_CANDIDATES = 1000  # a query of only such words looks at this many documents
CANDIDATES = 3000  # rarer words find up to about this many documents; commoner ones then only score them
CONTEXT_SOURCES = 50  # the best-matching turns lift their neighbours in the session ...
REPLY_SHARE = 0.1  # ... the reply by this share of their score
ASKED_SHARE = 0.6  # ... or by this share when the turn asks something: the answer is in its reply
ANSWERED_SHARE = 0.2  # ... and the turn they answered by this share
CONTEXT_FULL_TERMS = 20  # a short turn leans on its neighbours; a long one stands on its own


def _overlaps(row, lo, hi):
    return row["date_from"] is not None and row["date_from"] <= hi and (row["date_to"] or row["date_from"]) >= lo


def _valid_at(ai, rec, day):
    """Was this state or decision true on `day`?"""
    start = rec.get("date_start")
    start = start if start else (rec.get("created_at") or "")[:10]
    if start and start[:len(day)] > day[:len(start)]:
        return False
    end = rec.get("date_end")
    if not end and rec.get("superseded_by"):
        successor = ai.record(rec["superseded_by"]) or {}
        end_start = successor.get("date_start") or (successor.get("created_at") or "")[:10]
        if end_start and end_start[:len(day)] <= day[:len(end_start)]:
            return False
        return True
    return not end or end[:len(day)] >= day[:len(end)]


class Query:
    """One probe's settings, resolved once."""

    def __init__(self, root, recall, text, window, phase, domain, as_of, now, own_capture=None):
        self.root = root
        self.own_capture = own_capture
        self.recall = recall
        self.ai = recall.ai
        self.raw = text or ""
        self.now = now
        self.as_of = timeutil.parse_instant(as_of, "as_of") if as_of else None
        self.today = (self.as_of or now).date()
        self.window = None
        if window:
            from .timeexpr import parse_window
            self.window = parse_window(window)
        self.phase = phase
        self.domain = domain
        self.times = []
        self.lexical = self.raw
        self.time_words = ""
        if self.raw:
            from .timeexpr import resolve
            self.times = resolve(self.raw, self.today)
            self.time_words = " ".join(t["expression"] for t in self.times)

    def admits(self, row, direct):
        """Filters every channel applies. `direct`: the row matched the query's own words."""
        if self.own_capture and row["key"] == "c:" + self.own_capture:
            return False, "the current turn's own words"
        if self.domain and row["domain"] != self.domain:
            return False, "outside domain"
        if self.phase and row["phase"] != self.phase:
            return False, "outside phase"
        if self.window and not _overlaps(row, *self.window):
            return False, "outside window"
        if row["sensitivity"] == "highly-private" and not direct:
            return False, "highly-private, not hit directly"
        if self.as_of is not None:
            day = self.today.isoformat()
            if row["channel"] == "verbatim" and row["date_from"] and row["date_from"] > day:
                return False, "said after as_of"
            if row["kind"] in ("state", "decision"):
                rec = self.ai.record(row["key"][2:]) or {}
                if not _valid_at(self.ai, rec, day):
                    return False, "not true at as_of"
        return True, None

    def factor(self, row):
        f = 1.0
        if not (self.as_of is not None and row["kind"] in ("state", "decision")):
            f *= STATUS_FACTOR.get(row["status"], 1.0)
        if row["salience"] is not None:
            f *= 1.0 + 0.05 * row["salience"]
        if any(_overlaps(row, t["from"], t["to"]) for t in self.times):
            f *= TIME_BOOST
        return f


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


def query_terms(q, text):
    """The query's weighted terms and the entities it names."""
    recall = q.recall
    lex = recall.lexicon()
    routes = _alias_routes(recall, text)
    alias_chars = {a for aliases in routes.values() for a in aliases if len(a) == 1}
    summed = weighted_terms(text, lex)
    strongest = weighted_terms(text, lex, collapse=True)
    # A word the user repeats is what the message is about: it counts a little more, not n times.
    terms = {t: w * (1 + QUERY_TF * math.log(max(1.0, summed[t] / w))) for t, w in strongest.items() if w > 0}
    terms = rank.query_weights(terms, alias_chars)
    if q.times and text == q.lexical:
        # Time words are resolved into ranges (boost); as words they still count, at half weight.
        rest_text = text
        for found in q.times:
            rest_text = rest_text.replace(found["expression"], " ")
        rest = weighted_terms(rest_text, lex)
        for term in weighted_terms(q.time_words, lex):
            if term in terms and term not in rest:
                terms[term] *= TIME_WORD_WEIGHT
    return terms, routes


def feedback_terms(recall, scored, terms, total):
    """Words the best first-pass matches share (pseudo-relevance feedback): {term: weight}."""
    top = [doc for doc, _score in sorted(scored.items(), key=lambda kv: -kv[1])[:FEEDBACK_DOCS]]
    if not top or not FEEDBACK_TERMS:
        return {}
    marks = ",".join("?" * len(top))
    lengths = {doc: length or 1.0 for doc, length in recall.db.execute(
        f"SELECT doc, length FROM rdocs WHERE doc IN ({marks})", top)}
    weight = {}
    for term, doc, tf in recall.db.execute(f"SELECT term, doc, tf FROM rpost WHERE doc IN ({marks})", top):
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
    terms, routes = query_terms(q, text)
    channels, rows, held, tokens = score_terms(q, terms, routes)
    if FEEDBACK_TERMS and q.recall.total_docs() >= FEEDBACK_MIN_DOCS:
        first = {doc: score for ranked in channels.values() for doc, score, _d in ranked}
        extra = feedback_terms(q.recall, first, terms, max(1, q.recall.total_docs()))
        if extra:
            channels, rows, held, tokens = score_terms(q, dict(terms, **extra), routes, feedback=set(extra))
    return channels, rows, held, tokens, routes


def _postings(recall, strength, dfs, total):
    """Postings of the query's terms, with the candidate set bounded whatever the archive size.

    Terms are taken rarest first; once CANDIDATES documents are found, the
    remaining (more common) terms only score those documents. In a large archive
    a word found in a tenth of it never finds on its own; a query of only such
    words starts from the densest documents of the rarest one.
    """
    common = {t for t in strength if total >= COMMON_MIN_DOCS and dfs[t] > COMMON_SHARE * total}
    postings, found, deferred = {}, set(), []
    if common and common == set(strength):
        rarest = min(common, key=lambda t: (dfs[t], t))
        postings[rarest] = recall.densest(rarest, COMMON_CANDIDATES)
        found = {doc for doc, _tf in postings[rarest]}
        common.discard(rarest)
    for term in sorted(set(strength) - set(postings), key=lambda t: (dfs[t], t)):
        if term in common or len(found) >= CANDIDATES:
            deferred.append(term)
            continue
        postings[term] = recall.postings([term])[term]
        found.update(doc for doc, _tf in postings[term])
    if deferred:
        postings.update(recall.postings(deferred, within=found))
    return postings


def score_terms(q, terms, routes, feedback=()):
    recall = q.recall
    dfs = recall.df(list(terms))
    total = max(1, recall.total_docs())
    strength = rank.term_strength(terms, dfs, total)
    postings = _postings(recall, strength, dfs, total)
    doc_ids = {doc for plist in postings.values() for doc, _tf in plist}
    routed = _routed_docs(recall, routes)
    rows = recall.docs(doc_ids | set(routed))
    stats = recall.channel_stats()
    tokens = [dict({"term": t, "weight": round(w, 2), "df": dfs.get(t, 0),
                    "idf": round(rank.idf(total, dfs[t]), 3) if dfs.get(t) else None},
                   **({"feedback": True} if t in feedback else {})) for t, w in terms.items()]
    route_bonus = ROUTE_SHARE * (max(strength.values()) if strength else 2.0)
    query_weights = {t: (w if t not in feedback else 1.0) for t, w in terms.items()}
    channels, held = {}, []
    for channel in CHANNELS:
        in_channel = {d: r for d, r in rows.items() if r["channel"] == channel}
        scored = rank.score_channel(strength, postings, in_channel, stats.get(channel, (0, 1.0))[1], query_weights,
                                    feedback=feedback)
        if channel == "verbatim":
            _lift_neighbours(recall, scored, in_channel, rows)
        for doc, (row, entity, aliases) in routed.items():
            if row["channel"] != channel:
                continue
            score, detail = scored.get(doc, (0.0, {"matched": {}, "anchor": False, "below_threshold": False}))
            detail = dict(detail, below_threshold=False, routed={"entity": entity, "aliases": aliases})
            scored[doc] = (score + route_bonus, detail)
        ranked = []
        for doc, (score, detail) in scored.items():
            row = in_channel[doc]
            direct = bool(set(detail["matched"]) - set(feedback)) and not detail["below_threshold"]
            ok, why = q.admits(row, direct)
            if not ok:
                held.append({"id": row["key"][2:], "channel": channel, "why": why})
                continue
            if detail["below_threshold"]:
                held.append({"id": row["key"][2:], "channel": channel, "why": "below content threshold",
                             "matched": list(detail["matched"])})
                continue
            ranked.append((doc, score * q.factor(row), detail))
        ranked.sort(key=lambda x: (-x[1], rows[x[0]]["key"]))
        channels[channel] = ranked
    return channels, rows, held, tokens


def _lift_neighbours(recall, scored, in_channel, rows):
    """A turn next to a strong match shares a part of its score (a separate, capped channel).

    The lift is a share (below 1) of the neighbour's own score, smaller for a
    long turn, which stands on its own: a reply never outranks the turn that
    holds the words unless it has words of its own.
    """
    sources = sorted(((doc, s) for doc, (s, d) in scored.items() if not d["below_threshold"] and d["matched"]),
                     key=lambda x: -x[1])[:CONTEXT_SOURCES]
    if not sources:
        return
    lifts = {}
    by_key = {in_channel[doc]["key"]: (doc, s) for doc, s in sources}
    if REPLY_SHARE or ASKED_SHARE:
        for row in recall.replies(by_key):
            src_doc, s = by_key[row["prev"]]
            share = ASKED_SHARE if in_channel[src_doc]["asks"] else REPLY_SHARE
            lifts.setdefault(row["doc"], []).append((share * s, row, in_channel[src_doc]["key"], "reply to"))
    if ANSWERED_SHARE:
        prev_keys = {in_channel[doc]["prev"]: (doc, s) for doc, s in sources if in_channel[doc]["prev"]}
        for key, row in recall.docs_by_key(prev_keys).items():
            src_doc, s = prev_keys[key]
            lifts.setdefault(row["doc"], []).append((ANSWERED_SHARE * s, row, in_channel[src_doc]["key"], "answered by"))
    for doc, options in lifts.items():
        score, detail = scored.get(doc, (0.0, {"matched": {}, "anchor": False, "below_threshold": False}))
        own = 0.0 if detail["below_threshold"] else score
        short = min(1.0, CONTEXT_FULL_TERMS / max(1.0, options[0][1]["length"] or 1.0))
        lift, row, source, relation = max(options, key=lambda o: o[0])
        lifted = own + short * lift
        rows.setdefault(doc, row)
        in_channel.setdefault(doc, row)
        context = {"relation": relation, "id": source[2:], "lift": round(lifted - own, 3)}
        scored[doc] = (lifted, dict(detail, below_threshold=False, context=context))


def browse(q, limit=2000):
    """Window or phase browsing: every row in range qualifies; returns rows ordered by date."""
    clauses, args = [], []
    if q.window:
        clauses.append("date_from IS NOT NULL AND date_from <= ? AND COALESCE(date_to, date_from) >= ?")
        args += [q.window[1], q.window[0]]
    if q.phase:
        clauses.append("phase = ?")
        args.append(q.phase)
    if q.domain:
        clauses.append("domain = ?")
        args.append(q.domain)
    rows = q.recall.docs_where(" AND ".join(clauses) + " ORDER BY date_from, salience DESC, key", args, limit)
    return [r for r in rows if q.admits(r, direct=False)[0]]


def associations(q, channels, rows, routes, lexical_keys):
    """Spread from the top lexical hits and routed entities; return candidates with their paths."""
    seeds = {}
    for channel in ("timeline", "knowledge", "entities"):
        top = channels.get(channel, [])[:5]
        best = top[0][1] if top else 1.0
        for doc, score, _detail in top:
            seeds[rows[doc]["key"][2:]] = max(seeds.get(rows[doc]["key"][2:], 0.0), score / best)
    for entity in routes:
        seeds[entity] = max(seeds.get(entity, 0.0), 1.0)
    if not seeds:
        return [], {}
    graph = Graph(q.ai)
    scores, parent = personalized_pagerank(graph, seeds)
    out = []
    for node, score in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0])):
        if node in seeds or f"r:{node}" in lexical_keys:
            continue
        row = q.recall.doc_for_key(f"r:{node}")
        if row is None:
            continue
        ok, _why = q.admits(row, direct=False)
        if not ok:
            continue
        out.append((row, round(score, 5), path_to(node, parent)))
        if len(out) >= ASSOCIATION_LIMIT:
            break
    return out, seeds


def probe(root, query=None, ids=None, window=None, phase=None, as_of=None, limit=DEFAULT_LIMIT, offset=0,
          expand=None, domain=None, capture_id=None, maintenance=False, budget=DEFAULT_BUDGET, per_episode=3,
          now=None):
    archive.require(root)
    mode = trace.check_read_gate(root, capture_id, maintenance)
    if not (query or "").strip() and not ids and not window and not phase:
        raise PuError("BAD_ARGUMENT", "a probe needs a query, ids, a window or a phase",
                      "Start from any clue the user gave; browse with --window or --phase when there is none.")
    if limit < 1 or offset < 0 or budget < 100:
        raise PuError("BAD_ARGUMENT", "limit must be >= 1, offset >= 0 and budget >= 100", "Page with {arg:offset} (the result's next_offset), keep {arg:limit} at 1 or more, and leave {arg:budget} out for the default.")
    moment = now or timeutil.now()
    recall = open_recall(root)
    q = Query(root, recall, query, window, phase, domain, as_of, moment, own_capture=capture_id)
    if ids:
        return _by_ids(q, ids, mode, budget)

    texts = [q.lexical] if q.lexical.strip() else []
    texts += [t for t in expand or () if t and t.strip()]
    rankings, all_rows, held, tokens, routes, channel_lists = [], {}, [], [], {}, {}
    for n, text in enumerate(texts):
        channels, rows, held_q, toks, routes_q = rank_query(q, text)
        all_rows.update(rows)
        held += held_q
        routes.update(routes_q)
        if n == 0:
            tokens = toks
            channel_lists = channels
        for channel, ranked in channels.items():
            rankings.append((1.0, [rows[d]["key"] for d, _s, _x in ranked[:CHANNEL_DEPTH]]))
    detail_of = {}
    for channel, ranked in channel_lists.items():
        for doc, score, detail in ranked:
            detail_of[all_rows[doc]["key"]] = (channel, score, detail)

    browsing = bool(q.window or q.phase)
    if browsing:
        in_range = browse(q)
        ranked_keys = set().union(*[set(k) for _w, k in rankings]) if rankings else set()
        ordered = [r["key"] for r in in_range if r["key"] in ranked_keys]
        ordered += [r["key"] for r in in_range if r["key"] not in ranked_keys]
        rankings = [(1.0, ordered)] if not texts else [(1.0, [k for k in ordered if k in ranked_keys]), (0.2, ordered)]
        for r in in_range:
            all_rows.setdefault(r["doc"], r)

    lexical_keys = {k for _w, keys in rankings for k in keys}
    assoc, seeds = associations(q, channel_lists, all_rows, routes, lexical_keys) if texts else ([], {})
    if assoc:
        rankings.append((ASSOCIATION_WEIGHT, [row["key"] for row, _s, _p in assoc]))
    fused = rank.rrf(rankings)
    order = sorted(fused, key=lambda k: (-fused[k], k))
    row_by_key = {r["key"]: r for r in all_rows.values()}
    row_by_key.update({row["key"]: row for row, _s, _p in assoc})
    assoc_of = {row["key"]: (score, path) for row, score, path in assoc}

    kept, per = [], {}
    for key in order:
        row = row_by_key[key]
        episode = row["episode"] or key
        if per_episode and per.get(episode, 0) >= per_episode:
            held.append({"id": key[2:], "channel": row["channel"], "why": f"episode cap ({per_episode} per conversation)"})
            continue
        per[episode] = per.get(episode, 0) + 1
        kept.append(key)

    out_rows, used, truncated = [], 0, False
    for position, key in enumerate(kept[offset:], start=offset):
        if len(out_rows) >= limit:
            truncated = True
            break
        row = row_by_key[key]
        item = _row(q, row, detail_of.get(key), assoc_of.get(key), fused[key], position + 1)
        cost = rank.estimate_tokens(" ".join(str(v) for v in (item.get("title"), item.get("summary"), item.get("snippet")) if v))
        if out_rows and used + cost > budget:
            truncated = True
            break
        used += cost
        out_rows.append(item)
    shown = len(out_rows)
    next_offset = offset + shown if offset + shown < len(kept) else None

    total_docs = recall.total_docs()
    if total_docs == 0:
        status = "empty_archive"
    elif kept:
        status = "ok"
    elif any(h["why"] == "below content threshold" for h in held):
        status = "below_threshold"
    else:
        status = "no_match"
    scope = _scope(q, recall, total_docs)
    fidelity = {"verbatim": sum(1 for r in out_rows if r["evidence_fidelity"] != "summary_only"),
                "summary_only": sum(1 for r in out_rows if r["evidence_fidelity"] == "summary_only")}
    result = {
        "query": query, "status": status, "scope": scope, "mode": mode,
        "tokens": tokens, "time": [{k: t[k] for k in ("expression", "from", "to", "precision")} for t in q.times],
        "top": out_rows,
        "channels": {ch: [{"id": all_rows[d]["key"][2:], "score": round(s, 3)} for d, s, _x in channel_lists.get(ch, [])[:5]]
                     for ch in CHANNELS},
        "associations": [{"id": row["key"][2:], "kind": row["kind"], "title": row["title"], "via": path,
                          "spread_score": score} for row, score, path in assoc],
        "total": len(kept), "shown": shown, "truncated": truncated, "next_offset": next_offset,
        "budget": {"tokens": budget, "used": used}, "evidence_fidelity": fidelity,
    }
    if status != "ok":
        result["note"] = _no_match_note(status, scope)
    result["trace_id"] = trace.write(root, {
        "kind": "probe", "mode": mode, "capture_id": capture_id, "query": query, "expand": list(expand or ()),
        "filters": {"window": q.window, "phase": phase, "domain": domain, "as_of": as_of},
        "tokens": tokens, "time": result["time"], "routes": routes,
        "channels": {ch: [all_rows[d]["key"][2:] for d, _s, _x in channel_lists.get(ch, [])[:CHANNEL_DEPTH]] for ch in CHANNELS},
        "selected": [r["id"] for r in out_rows], "held_back": held[:200],
        "associations": result["associations"], "seeds": sorted(seeds), "status": status,
        "total": len(kept), "shown": shown}, now=moment)
    return result


def _row(q, row, detail, assoc, fused, rank_no):
    key = row["key"]
    why = {}
    if detail:
        channel, score, d = detail
        why = {"channel": channel, "score": round(score, 3), "matched": d["matched"], "hits_rarest_term": d["anchor"]}
        if d.get("routed"):
            why["alias_route"] = d["routed"]
        if d.get("context"):
            why["context"] = d["context"]
    if assoc:
        why = {"channel": "associations", "spread_score": assoc[0], "via": assoc[1]}
    if not why:
        why = {"channel": "browse", "in_range": True}
    if key.startswith("c:"):
        item = capture_row(q.ai, key[2:], list(detail[2]["matched"]) if detail else [])
    else:
        rec = get_record(q.ai, key[2:])
        direct = detail is not None and bool(detail[2]["matched"])
        if rec.get("kind") in ("hypothesis", "intent") and not direct:
            item = hypothesis_stub(rec)
        else:
            item = build_row(q.ai, rec)
    item.update(rank=rank_no, fused_score=round(fused, 5), why=why)
    return item


def _by_ids(q, ids, mode, budget):
    """Fetch given items with their time neighbours (the cold-recall walk)."""
    rows, missing = [], []
    for item_id in ids:
        if q.ai.capture(item_id):
            rows.append(capture_row(q.ai, item_id))
            continue
        rec = get_record(q.ai, item_id)
        if rec is None:
            missing.append(item_id)
            continue
        row = build_row(q.ai, rec)
        row["neighbours"] = {"before_ids": rec.get("before_ids", []), "after_ids": rec.get("after_ids", [])}
        rows.append(row)
    trace_id = trace.write(q.root, {"kind": "ids", "mode": mode, "capture_id": q.own_capture, "ids": list(ids),
                                    "selected": [r["id"] for r in rows],
                                    "missing": missing})
    return {"query": None, "status": "ok" if rows else "no_match", "top": rows, "missing": missing,
            "total": len(rows), "shown": len(rows), "truncated": False, "next_offset": None, "trace_id": trace_id,
            "scope": "the given ids", "evidence_fidelity": {}, "budget": {"tokens": budget, "used": 0}}


def _scope(q, recall, total_docs):
    counts = {ch: n for ch, (n, _avg) in recall.channel_stats().items()}
    parts = [f"{counts.get('timeline', 0) + counts.get('knowledge', 0) + counts.get('entities', 0)} records and "
             f"{counts.get('verbatim', 0)} captures (every tier)"]
    if q.window:
        parts.append(f"window {q.window[0]}..{q.window[1]}")
    if q.phase:
        parts.append(f"phase {q.phase}")
    if q.domain:
        parts.append(f"domain {q.domain}")
    if q.as_of:
        parts.append(f"as of {q.today.isoformat()}")
    return "searched " + ", ".join(parts)


def _no_match_note(status, scope):
    if status == "empty_archive":
        return "The archive is empty: nothing has been saved yet."
    if status == "below_threshold":
        return (f"Only weak, accidental matches ({scope}); they were held back. This does not mean it never "
                "happened: try other words the user might have used (expand), a time window, or an entity's name.")
    return (f"Nothing matched ({scope}). This is about what is saved; it does not mean it never happened: "
            "ask the user, or try other words (expand), a window or a phase.")



def retrieve(root, query=None, level="probe", ids=None, window=None, phase=None, as_of=None, limit=DEFAULT_LIMIT,
             offset=0, expand=None, domain=None, capture_id=None, maintenance=False, budget=None, per_episode=3):
    """The retrieve tool: probe by default; level=deep returns the words behind the given ids."""
    if level == "deep":
        archive.require(root)
        mode = trace.check_read_gate(root, capture_id, maintenance)
        if not ids:
            raise PuError("BAD_ARGUMENT", "level deep needs ids", "Probe first, then pass the ids you want to read in full.")
        from .deep import deep
        return deep(root, ids, mode, budget or 4000, capture_id=capture_id)
    if level != "probe":
        raise PuError("BAD_ARGUMENT", "level must be probe or deep", "probe searches; deep returns the words behind {arg:ids}.")
    return probe(root, query=query, ids=ids, window=window, phase=phase, as_of=as_of, limit=limit, offset=offset,
                 expand=expand, domain=domain, capture_id=capture_id, maintenance=maintenance,
                 budget=budget or DEFAULT_BUDGET, per_episode=per_episode)
