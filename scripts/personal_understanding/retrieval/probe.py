"""Probe: find what the user needs, show why each item came up, say what was not found.

Four lexical channels are scored separately (timeline, knowledge, entities,
verbatim), entity aliases route to the records about that entity, an
associative channel spreads from what was hit, and a fused `top` list takes
the best of each by reciprocal rank. Output is bounded; every call leaves a trace.
"""

from .. import archive, timeutil
from ..errors import PuError
from ..records import get_record
from . import causal, overview, rank, trace, when, whose
from .index import CHANNELS, episode_of, open_recall
from .lexical import asks_advice, rank_query
from .ppr import Graph, path_to, personalized_pagerank
from .query import Query
from .rows import build_row, capture_row, hypothesis_stub

DEFAULT_LIMIT = 10
DEFAULT_BUDGET = 2000  # tokens of material
ASSOCIATION_WEIGHT = 0.5
ASSOCIATION_LIMIT = 6
# Statuses a spread never reaches: what the causal channel skips, except a superseded record (history).
SET_ASIDE = tuple(s for s in causal.SKIP if s != "superseded")
CHANNEL_DEPTH = 30


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
        if row is None or row["status"] in SET_ASIDE:  # found by its own words only: a rejected cause is no lead
            continue
        ok, _why = q.admits(row, direct=False)
        if not ok:
            continue
        out.append((row, round(score, 5), path_to(node, parent)))
        if len(out) >= ASSOCIATION_LIMIT:
            break
    return out, seeds


def _distinct_times(times):
    """The time expressions a result shows: each reading once, however often the text repeats it."""
    out = []
    for t in times:
        shown = {k: t[k] for k in ("expression", "from", "to", "precision")}
        if shown not in out:
            out.append(shown)
    return out


def probe(root, query=None, ids=None, window=None, phase=None, as_of=None, limit=DEFAULT_LIMIT, offset=0,
          expand=None, domain=None, capture_id=None, maintenance=False, budget=DEFAULT_BUDGET, per_episode=3,
          now=None, turn_id=None, words_if_found=False, wordless=False):
    """words_if_found: a read the message did not ask for (a general question on a skip turn) keeps its
    words in the trace only when it found something to show; otherwise the trace says only that it ran.
    wordless: the trace never keeps the words (a request to forget names what is to go)."""
    archive.require(root)
    mode = trace.check_read_gate(root, capture_id, maintenance, turn_id)
    if turn_id and not capture_id:
        capture_id = trace.turn_capture(root, turn_id)
    if not (query or "").strip() and not ids and not window and not phase:
        raise PuError("BAD_ARGUMENT", "a probe needs a query, ids, a window or a phase",
                      "Start from any clue the user gave; browse with {arg:window} or {arg:phase} when there is none.")
    if limit < 1 or offset < 0 or budget < 100:
        raise PuError("BAD_ARGUMENT", "limit must be >= 1, offset >= 0 and budget >= 100", "Page with {arg:offset} (the result's next_offset), keep {arg:limit} at 1 or more, and leave {arg:budget} out for the default.")
    moment = now or timeutil.now()
    recall = open_recall(root)
    q = Query(root, recall, query, window, phase, domain, as_of, moment, own_capture=capture_id)
    q.turn_id = turn_id
    if ids:
        return _by_ids(q, ids, mode, budget)

    time_only = when.is_time_only(q)
    overall = not time_only and not ids and overview.asks_overview(q)
    q.asks_when = when.asks_when(q.raw)
    q.asks_now = when.asks_now(q)
    q.advice = asks_advice(q.raw, opinion=True)
    whose.resolve(q)
    why_question = causal.is_causal(q.raw)
    if why_question:
        q.reached = {}
    texts = [(q.lexical, None)] if q.lexical.strip() else []
    texts += [(t, {"expand": t}) for t in expand or () if t and t.strip()]
    rankings, all_rows, held, tokens, routes, channel_lists, detail_of = [], {}, [], [], {}, {}, {}
    for text, origin in texts:
        channels, rows, held_q, toks, routes_q = rank_query(q, text)
        if origin is None:
            tokens = toks
            if time_only or overall:
                continue  # its words only frame the time, or ask about the user: what is held is the answer
            channel_lists = channels
        all_rows.update(rows)
        held += held_q
        routes.update(routes_q)
        for channel, ranked in channels.items():
            rankings.append((1.0, [rows[d]["key"] for d, _s, _x in ranked[:CHANNEL_DEPTH]]))
            for doc, score, detail in ranked:
                detail_of.setdefault(rows[doc]["key"], (channel, score, detail, origin))
    time_of = {}  # key -> why, for rows a listing brings (a time window, or what is known of the user)
    listed = []
    if time_only:
        found = when.window_rows(q)
        found += when.planned_rows(q, {row["key"] for row, _t in found})
        listed = [(row, when.why(time)) for row, time in found]
    elif overall:
        listed = [(row, overview.why()) for row in overview.overview_rows(q)]
    if listed:
        rankings.append((1.0, [row["key"] for row, _why in listed]))
        for row, why in listed:
            all_rows.setdefault(row["doc"], row)
            time_of[row["key"]] = why
    searched = [t for t, origin in texts if origin is None and not (time_only or overall)] + \
        [t for t, origin in texts if origin]
    causes = {}
    if why_question and q.reached:
        best = dict(sorted(q.reached.items(), key=lambda kv: -kv[1])[:causal.REACHED])
        for row, why in causal.hypotheses(q, best):
            all_rows.setdefault(row["doc"], row)
            causes[row["key"]] = why
        if causes:
            rankings.append((1.0, list(causes)))

    browsing = bool(q.window or q.phase)
    if browsing:
        in_range = browse(q)
        ranked_keys = set().union(*[set(k) for _w, k in rankings]) if rankings else set()
        ordered = [r["key"] for r in in_range if r["key"] in ranked_keys]
        ordered += [r["key"] for r in in_range if r["key"] not in ranked_keys]
        rankings = [(1.0, ordered)] if not searched else [(1.0, [k for k in ordered if k in ranked_keys]), (0.2, ordered)]
        for r in in_range:
            all_rows.setdefault(r["doc"], r)

    lexical_keys = {k for _w, keys in rankings for k in keys}
    assoc, seeds = associations(q, channel_lists, all_rows, routes, lexical_keys) if searched else ([], {})
    if assoc:
        rankings.append((ASSOCIATION_WEIGHT, [row["key"] for row, _s, _p in assoc]))
    fused = rank.rrf(rankings)
    order = sorted(fused, key=lambda k: (-fused[k], k))
    row_by_key = {r["key"]: r for r in all_rows.values()}
    row_by_key.update({row["key"]: row for row, _s, _p in assoc})
    # Only the keys being ordered are asked about below (every candidate scored has a detail).
    details = [(k, detail_of[k]) for k in order if k in detail_of]
    if q.times and not time_only:
        # The user's words; not a saved question the query repeats, which tells nothing, in the window or not.
        own = {k for k, (_c, _s, d, origin) in details if origin is None and d["direct"] and not d.get("repeat")}
        stood_in = {k for k, (_c, _s, d, origin) in details if origin is None and d.get("stands_for")}
        order = when.window_first(q, order, row_by_key, own, stood_in)
    said = {k for k, (_c, _s, d, _o) in details if d.get("phrase") and not d.get("repeat")}
    if said:  # the user's words, found as they were said, come first (not the same question asked before)
        order = [k for k in order if k in said] + [k for k in order if k not in said]
    if causes:  # a why-question: the hypotheses it reaches, then their evidence
        order = [k for k in causes if k in fused] + [k for k in order if k not in causes]
    assoc_of = {row["key"]: (score, path) for row, score, path in assoc}

    kept, per = [], {}
    for key in order:
        row = row_by_key[key]
        episode = episode_of(row)
        if per_episode and per.get(episode, 0) >= per_episode:
            held.append({"id": key[2:], "channel": row["channel"], "why": f"episode cap ({per_episode} per conversation)"})
            continue
        per[episode] = per.get(episode, 0) + 1
        kept.append(key)

    said_nearby = {}
    if q.advice and searched:
        # What the request's words (or words standing for them) matched: not a neighbour those lifted.
        matched = [k for k in kept if k in detail_of and detail_of[k][2]["matched"] and not detail_of[k][3]]
        best = max((detail_of[k][1] for k in matched), default=0.0)
        # Before the rows that only brush the request (a common word), else after the rest; the same place
        # whatever page is asked for.
        at = next((n for n, k in enumerate(kept) if n >= whose.NEARBY_AFTER and
                   (k not in detail_of or detail_of[k][1] < whose.NEARBY_WEAK * best)), len(kept))
        found = whose.own_words_nearby(q, matched, kept)
        for row, why in found:
            row_by_key[row["key"]] = row
            fused[row["key"]] = 0.0
            said_nearby[row["key"]] = why
        kept[at:at] = [row["key"] for row, _why in found]

    out_rows, used, truncated = [], 0, False
    for position, key in enumerate(kept[offset:], start=offset):
        if len(out_rows) >= limit:
            truncated = True
            break
        row = row_by_key[key]
        item = _row(q, row, detail_of.get(key), assoc_of.get(key), fused[key], position + 1,
                    time_of.get(key) or causes.get(key) or said_nearby.get(key))
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
    scope = _scope(q, recall, total_docs, time_only)
    fidelity = {"verbatim": sum(1 for r in out_rows if r["evidence_fidelity"] != "summary_only"),
                "summary_only": sum(1 for r in out_rows if r["evidence_fidelity"] == "summary_only")}
    result = {
        "query": query, "status": status, "scope": scope, "mode": mode,
        "tokens": tokens, "time": _distinct_times(q.times),
        "top": out_rows,
        "channels": {ch: [{"id": all_rows[d]["key"][2:], "score": round(s, 3)} for d, s, _x in channel_lists.get(ch, [])[:5]]
                     for ch in CHANNELS},
        "associations": [{"id": row["key"][2:], "kind": row["kind"], "title": _title(q, row), "via": path,
                          "spread_score": score} for row, score, path in assoc],
        "total": len(kept), "shown": shown, "truncated": truncated, "next_offset": next_offset,
        "budget": {"tokens": budget, "used": used}, "evidence_fidelity": fidelity,
    }
    if q.asks_now:
        result["recent_first"] = True  # asked how things stand now: what was said later weighed more
    if status != "ok":
        result["note"] = _no_match_note(status, scope)
    quiet = wordless or (words_if_found and not (status == "ok" and out_rows))
    times = result["time"]
    if quiet:  # counts, no words
        tokens = [{k: t[k] for k in ("weight", "df") if k in t} for t in tokens]
        times = [{k: t[k] for k in ("from", "to", "precision")} for t in times]
    result["trace_id"] = trace.write(root, {
        "kind": "probe", "mode": mode, "turn_id": turn_id, "capture_id": capture_id, "query": None if quiet else query,
        "expand": list(expand or ()),
        "filters": {"window": q.window, "phase": phase, "domain": domain, "as_of": as_of},
        "tokens": tokens, "time": times, "time_only": time_only, "why_question": why_question,
        "causes": {k[2:]: v["via"] for k, v in causes.items()}, "routes": {} if quiet else routes,
        "channels": {ch: [all_rows[d]["key"][2:] for d, _s, _x in channel_lists.get(ch, [])[:CHANNEL_DEPTH]] for ch in CHANNELS},
        "selected": [r["id"] for r in out_rows], "why": [dict(r["why"], id=r["id"]) for r in out_rows], "held_back": held,
        "associations": result["associations"], "seeds": sorted(seeds), "status": status,
        "total": len(kept), "shown": shown}, now=moment)
    return result


def _title(q, row):
    """A record's title (the index keeps none: the record has it)."""
    return (q.ai.record(row["key"][2:]) or {}).get("title")


def _row(q, row, detail, assoc, fused, rank_no, found_as=None):
    key = row["key"]
    why = {}
    if detail:
        channel, score, d, origin = detail
        why = {"channel": channel, "score": round(score, 3), "matched": {t: round(s, 3) for t, s in d["matched"].items()},
               "hits_rarest_term": d["anchor"]}
        if d.get("routed"):
            why["alias_route"] = d["routed"]
        if d.get("context"):
            why["context"] = d["context"]
        if d.get("phrase"):
            why["verbatim_phrase"] = d["phrase"]
        if d.get("apart"):
            why["apart"] = d["apart"]  # said as its characters apart (车…修 for 修车), not as the word
        if d.get("stands_for"):
            why["stands_for"] = d["stands_for"]
        if d.get("whose"):
            why["whose"] = d["whose"]
        if origin:
            why.update(origin)  # found through other words than the user's: say which
    if assoc:
        why = {"channel": "associations", "spread_score": assoc[0], "via": assoc[1]}
    if found_as and (not why or found_as["channel"] == "causal"):
        why = dict(found_as, **({"score": why["score"], "matched": why["matched"]} if why.get("matched") else {}))
    if not why:
        why = {"channel": "browse", "in_range": True}
    if key.startswith("c:"):
        item = capture_row(q.ai, key[2:], list(detail[2]["matched"]) if detail else [])
    else:
        rec = get_record(q.ai, key[2:])
        direct = detail is not None and bool(detail[2]["matched"])
        if rec.get("kind") in ("hypothesis", "intent") and not direct and why.get("channel") != "causal":
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
    trace_id = trace.write(q.root, {"kind": "ids", "mode": mode, "turn_id": q.turn_id, "capture_id": q.own_capture, "ids": list(ids),
                                    "selected": [r["id"] for r in rows],
                                    "missing": missing})
    return {"query": None, "status": "ok" if rows else "no_match", "mode": mode, "top": rows, "missing": missing,
            "total": len(rows), "shown": len(rows), "truncated": False, "next_offset": None, "trace_id": trace_id,
            "scope": "the given ids", "evidence_fidelity": {}, "budget": {"tokens": budget, "used": 0}}


def _scope(q, recall, total_docs, time_only=False):
    counts = {ch: n for ch, (n, _avg) in recall.channel_stats().items()}
    parts = [f"{counts.get('timeline', 0) + counts.get('knowledge', 0) + counts.get('entities', 0)} records and "
             f"{counts.get('verbatim', 0)} captures (every tier)"]
    if q.window:
        parts.append(f"window {q.window[0]}..{q.window[1]}")
    if time_only:
        parts.append("dated " + " or ".join(f"{t['from']}..{t['to']} ({t['expression']})" for t in q.times))
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
             offset=0, expand=None, domain=None, capture_id=None, maintenance=False, budget=None, per_episode=3,
             turn_id=None):
    """The retrieve tool: probe by default; level=deep returns the words behind the given ids."""
    if level == "deep":
        archive.require(root)
        mode = trace.check_read_gate(root, capture_id, maintenance, turn_id)
        if not ids:
            raise PuError("BAD_ARGUMENT", "level deep needs ids", "Probe first, then pass the {arg:ids} you want to read in full.")
        from .deep import deep
        return deep(root, ids, mode, budget or 4000, capture_id=capture_id, turn_id=turn_id)
    if level != "probe":
        raise PuError("BAD_ARGUMENT", "level must be probe or deep", "probe searches; deep returns the words behind {arg:ids}.")
    return probe(root, query=query, ids=ids, window=window, phase=phase, as_of=as_of, limit=limit, offset=offset,
                 expand=expand, domain=domain, capture_id=capture_id, maintenance=maintenance,
                 budget=budget or DEFAULT_BUDGET, per_episode=per_episode, turn_id=turn_id)
