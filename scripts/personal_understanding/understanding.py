"""Projections of the understanding: current state, entity pages, conversation starters.

Everything here is computed from records on demand; nothing is copied or stored.
"""

import datetime as dt
import json

from . import archive, paths, schema, timeutil
from .archive_index import open_index
from .followups import brief, due_followups
from .records import get_record

STALE_DAYS = 90


def _item(rec, why=None):
    summary = rec.get("summary") or ""
    out = {"id": rec["id"], "kind": rec["kind"], "title": rec.get("title"),
           "summary": summary if len(summary) <= 160 else summary[:159] + "…", "status": rec.get("status")}
    if why:
        out["why"] = why
    return out


# Blocks are asked of the index with their order and a limit, and counted apart: the cost stays
# that of the few items shown, whatever the archive's size.
_SALIENT = "COALESCE(json_extract(data,'$.salience'), 0) DESC, COALESCE(updated_at, '') DESC, kind, rowid"
_RECENT = "COALESCE(updated_at, '') DESC, rowid"


def _block(index, where, order, args=(), n=3):
    """(the first n records of a block, how many it holds)."""
    shown = index.records_where(f"{where} ORDER BY {order} LIMIT {int(n)}", args)
    return shown, index.count(f"SELECT COUNT(*) FROM records WHERE {where}", args)


def current_state(root, as_of=None):
    """Five blocks, each one to three dense items linked to their records."""
    archive.require(root)
    index = open_index(root)
    visible = " AND json_extract(data,'$.sensitivity') IS NOT 'highly-private'"
    core, n_core = _block(index, f"kind IN ('value','rule','heuristic','preference') AND status='current'{visible}", _SALIENT)
    reality, n_reality = _block(index, f"kind IN ('state','fact') AND status='current'{visible} "
                                       "AND json_extract(data,'$.aspect') IS NOT 'load'", _SALIENT)
    load, n_load = _block(index, f"kind='state' AND status='current' AND json_extract(data,'$.aspect')='load'{visible}", _RECENT)
    tensions, n_tensions = _block(index, "status='uncertain' AND (kind='decision' OR "
                                         "json_array_length(json_extract(data,'$.contradicts')) > 0)", "rowid")
    due, upcoming, _undated = due_followups(root, as_of, horizon=7)
    moment = timeutil.parse_instant(as_of) if as_of else timeutil.now()
    soon = (moment + dt.timedelta(days=30)).strftime("%Y-%m-%d")
    today = moment.strftime("%Y-%m-%d")
    # "+kind": walk the date index over the coming month, not every current event
    deadlines, n_deadlines = _block(index, "+kind='event' AND +status='current' AND date_start >= ? AND date_start <= ?",
                                    "date_start, rowid", (today, soon))
    nxt = [dict(brief(root, f), kind="followup", why="due") for f in due[:3]] + \
          [dict(brief(root, f), kind="followup", why="upcoming") for f in upcoming[:3]] + \
          [_item(r, "coming up " + r["date_start"]) for r in deadlines]
    return {
        "as_of": timeutil.iso(moment),
        "core": [_item(r) for r in core],
        "reality": [_item(r) for r in reality],
        "load": [_item(r) for r in load],
        "tensions": [_item(r, "contradicts " + ", ".join(r.get("contradicts") or []) if r.get("contradicts") else "undecided")
                     for r in tensions],
        "next": nxt[:3],
        "counts": {"core": n_core, "reality": n_reality, "load": n_load, "tensions": n_tensions,
                   "next": len(due) + len(upcoming) + n_deadlines},
    }


def entity_page(root, entity_id, limit=50):
    """An entity with its stories, quotes and current states, all computed from links."""
    index = open_index(root)
    entity = get_record(index, entity_id)
    if entity is None or entity.get("kind") != "entity":
        return None
    ids = {entity["id"]} | set(entity.get("merged_from") or ())
    stories, states, cards = [], [], []
    for eid in ids:
        for rid in index.referrers(eid, "entity"):
            rec = index.record(rid)
            if rec is None or rec.get("status") in ("redirected", "forgotten"):
                continue
            if rec["kind"] == "state":
                (states if rec.get("status") == "current" else stories).append(rec)
            elif rec["kind"] == "context":
                cards.append(rec)
            else:
                stories.append(rec)
    stories.sort(key=lambda r: (r.get("date_start") or "9999", r["id"]))
    quotes = []
    for rec in stories + states:
        for ref in rec.get("verbatim_refs") or ():
            if ref.get("quote"):
                quotes.append({"record_id": rec["id"], "capture_id": ref["capture_id"], "quote": ref["quote"]})
    return {"entity": entity, "stories": [_item(r) for r in stories[:limit]], "total_stories": len(stories),
            "current_states": [_item(r) for r in states], "context_cards": [_item(c) for c in cards],
            "quotes": quotes[:limit]}


def derived_facets(root, min_events=2):
    """Entity pairs that share at least `min_events` events (co-occurrence, never cause)."""
    index = open_index(root)
    pairs = {}
    rows = index.db.execute(
        "SELECT f.record_id, f.target FROM record_refs f JOIN records r ON r.id=f.record_id "
        "WHERE f.rel='entity' AND r.kind='event' AND r.status NOT IN ('redirected','forgotten')").fetchall()
    by_event = {}
    for rid, target in rows:
        by_event.setdefault(rid, set()).add(index.resolve(target))
    for rid, ents in by_event.items():
        ents = sorted(ents)
        for i, a in enumerate(ents):
            for b in ents[i + 1:]:
                pairs.setdefault((a, b), []).append(rid)
    return [{"entities": list(pair), "event_ids": sorted(evs), "relation": "co-occurs"}
            for pair, evs in sorted(pairs.items()) if len(evs) >= min_events]


def _templates():
    with open(paths.resources_dir() / "templates" / "domains.json", "rb") as handle:
        return json.loads(handle.read().decode("utf-8"))


def conversation_starters(root, skip=0, as_of=None, language="en"):
    """One suggestion at a time: due follow-ups, then the emptiest domains, then stale states."""
    archive.require(root)
    if skip < 0:
        raise ValueError("skip must be zero or more")
    index = open_index(root)
    moment = timeutil.parse_instant(as_of) if as_of else timeutil.now()
    lang = "zh" if language.startswith("zh") else "en"
    suggestions = []
    due, _up, _und = due_followups(root, as_of, horizon=0)
    for item in due:
        b = brief(root, item, with_prompt=True)
        suggestions.append({"suggestion": b["prompt"], "gap": {"type": "due_followup", "ids": [item["id"]],
                                                               "detail": f"due {item['due_at']}"}})
    templates = _templates()
    counts = {d: 0 for d in schema.rules()["domains"]}
    for domain, count in index.db.execute(
            "SELECT json_extract(data,'$.domain'), COUNT(*) FROM records WHERE status='current' "
            "AND json_extract(data,'$.domain') IS NOT NULL GROUP BY 1"):
        counts[domain] = count
    for domain, count in sorted(counts.items(), key=lambda kv: (kv[1], kv[0])):
        spec = templates["domains"].get(domain)
        label = spec["label"][lang] if spec else domain
        question = spec["question"][lang] if spec else templates["generic"][lang].format(label=label)
        suggestions.append({"suggestion": question, "gap": {"type": "empty_domain" if count == 0 else "thin_domain",
                                                            "domain": domain, "records": count,
                                                            "detail": f"{count} current record(s) in {label}"}})
    cutoff = timeutil.iso(moment - dt.timedelta(days=STALE_DAYS))
    for rec in index.records_where("kind='state' AND status='current' AND updated_at < ? ORDER BY updated_at", (cutoff,)):
        text = f"上次说到“{rec['title']}”，现在还是这样吗？" if lang == "zh" else f"Last time you mentioned \u201c{rec['title']}\u201d \u2014 is that still the case?"
        suggestions.append({"suggestion": text, "gap": {"type": "stale_state", "ids": [rec["id"]],
                                                         "detail": f"not updated since {rec.get('updated_at')}"}})
    # Empty domains come before thin ones; stale states before thin domains that already have material.
    order = {"due_followup": 0, "empty_domain": 1, "stale_state": 2, "thin_domain": 3}
    suggestions.sort(key=lambda s: order[s["gap"]["type"]])
    chosen = suggestions[skip] if skip < len(suggestions) else None
    return {"suggestion": chosen, "position": skip, "remaining": max(0, len(suggestions) - skip - 1),
            "next_skip": skip + 1 if skip + 1 < len(suggestions) else None}
