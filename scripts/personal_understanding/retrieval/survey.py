"""The catalog: a compact routing map of the archive, bounded whatever its size.

`survey` orients (life spine, current state, who is who, cards, due
follow-ups, hypothesis stubs, audit counts); `routing` groups records by life
branch, ranked against a query; `full` pages through everything.
"""

import json

from .. import archive, schema, tiers
from ..followups import brief, due_followups
from ..understanding import current_state, derived_facets
from . import trace
from .index import open_recall, weighted_terms

SPINE_LIMIT = 40
DIRECTORY_LIMIT = 30
CARD_LIMIT = 20
HYPOTHESIS_LIMIT = 30
FULL_LIMIT = 100


def page_fields(total, shown, offset=0):
    """total / shown / truncated / next_offset (and offset): the same on every paged list."""
    more = offset + shown < total
    return {"total": total, "shown": shown, "offset": offset, "truncated": more,
            "next_offset": offset + shown if more else None}


def _compact(rec):
    out = {"id": rec["id"], "kind": rec.get("kind"), "title": rec.get("title")}
    for key in ("date_start", "salience", "status", "phase", "domain"):
        if rec.get(key) is not None:
            out[key] = rec[key]
    return out


def _query_terms(recall, query):
    return set(weighted_terms(query, recall.lexicon())) if query else set()


def survey(root, recall, query=None, offset=0):
    ai = recall.ai
    spine_rows = ai.records_where("kind='event' AND status NOT IN ('redirected','forgotten') AND "
                                  "json_extract(data,'$.salience') >= 2 AND "
                                  "json_extract(data,'$.sensitivity') IS NOT 'highly-private'")
    spine_rows.sort(key=lambda r: (r.get("phase") or "~", r.get("date_start") or "9999", r["id"]))
    spine = {}
    for rec in spine_rows[:SPINE_LIMIT]:
        spine.setdefault(rec.get("phase") or "unphased", []).append(_compact(rec))
    mentions = ai.db.execute(
        "SELECT f.target, COUNT(*) FROM record_refs f JOIN records r ON r.id=f.target "
        "WHERE f.rel='entity' AND r.kind='entity' AND r.status NOT IN ('redirected','forgotten') "
        "GROUP BY f.target ORDER BY 2 DESC, 1 LIMIT ? OFFSET ?", (DIRECTORY_LIMIT, offset)).fetchall()
    total_entities = ai.count("SELECT COUNT(*) FROM records WHERE kind='entity' AND status NOT IN ('redirected','forgotten')")
    directory = []
    for eid, count in mentions:
        rec = ai.record(eid) or {}
        directory.append({"id": eid, "title": rec.get("title"), "entity_type": rec.get("entity_type"),
                          "aliases": (rec.get("aliases") or [])[:5], "mentions": count})
    cards = [_compact(r) for r in ai.records_where("kind='context' AND status='current' ORDER BY updated_at DESC LIMIT ?",
                                                   (CARD_LIMIT,))]
    terms = _query_terms(recall, query)
    hypotheses = []
    for rec in ai.records_where("kind IN ('hypothesis','intent') ORDER BY updated_at DESC LIMIT ?", (HYPOTHESIS_LIMIT,)):
        stub = {"id": rec["id"], "status": rec.get("status"), "confidence": rec.get("confidence")}
        if terms and terms & set(weighted_terms(rec.get("claim") or rec.get("title") or "", recall.lexicon())):
            stub["claim"] = rec.get("claim") or rec.get("title")
        hypotheses.append(stub)
    due, _up, _und = due_followups(root)
    statuses = dict(ai.db.execute("SELECT status, COUNT(*) FROM captures GROUP BY status").fetchall())
    kinds = dict(ai.db.execute("SELECT kind, COUNT(*) FROM records WHERE status NOT IN ('redirected','forgotten') GROUP BY kind").fetchall())
    debt = ai.count("SELECT COUNT(*) FROM records WHERE json_extract(data,'$.fidelity')='summary_only'")
    state = current_state(root)
    return {
        "life_spine": spine, "life_spine_total": len(spine_rows),
        "current_state": {k: state[k] for k in ("core", "reality", "load", "tensions", "next")},
        "entity_directory": dict(page_fields(total_entities, len(directory), offset), items=directory),
        "context_cards": cards, "derived_facets": len(derived_facets(root)),
        "due_followups": [brief(root, f) for f in due[:10]],
        "hypotheses": hypotheses,
        "audit": {"records_by_kind": kinds, "captures_by_status": statuses, "summary_debt": debt,
                  "pending_captures": statuses.get("pending", 0), "archive_words": len(recall.archive_words()),
                  "tiers": tiers.summary(root)},
    }


def routing(root, recall, query=None):
    ai = recall.ai
    domains = {d: [] for d in schema.rules()["domains"]}
    rows = ai.records_where("status NOT IN ('redirected','forgotten','superseded') AND kind != 'entity' AND "
                            "json_extract(data,'$.sensitivity') IS NOT 'highly-private'")
    terms = _query_terms(recall, query)
    for rec in rows:
        domains.setdefault(rec.get("domain") or "unsorted", []).append(rec)
    out = []
    for domain, recs in domains.items():
        def relevance(rec):
            if not terms:
                return 0
            return len(terms & set(weighted_terms(f"{rec.get('title') or ''} {rec.get('summary') or ''}", recall.lexicon())))
        recs.sort(key=lambda r: (-relevance(r), -(r.get("salience") or 0), r["id"]))
        hits = sum(1 for r in recs if relevance(r)) if terms else None
        out.append({"domain": domain, "records": len(recs), "query_hits": hits, "top": [_compact(r) for r in recs[:5]]})
    if terms:
        out.sort(key=lambda d: (-(d["query_hits"] or 0), -d["records"], d["domain"]))
    return {"domains": out}


def full(root, recall, offset=0, limit=FULL_LIMIT):
    ai = recall.ai
    total = ai.count("SELECT COUNT(*) FROM records WHERE status != 'forgotten'")
    items = [_compact(r) for r in ai.records_where("status != 'forgotten' ORDER BY kind, id LIMIT ? OFFSET ?",
                                                    (limit, offset))]
    return dict(page_fields(total, len(items), offset), items=items)


def catalog(root, view="survey", query=None, offset=0, limit=FULL_LIMIT, capture_id=None, maintenance=False,
            turn_id=None):
    archive.require(root)
    mode = trace.check_read_gate(root, capture_id, maintenance, turn_id)
    if view not in ("survey", "routing", "full"):
        from ..errors import PuError
        raise PuError("BAD_ARGUMENT", "view must be survey, routing or full", "survey is the compact map; routing groups by life branch; full pages through every record.")
    recall = open_recall(root)
    if view == "survey":
        body = survey(root, recall, query, offset)
    elif view == "routing":
        body = routing(root, recall, query)
    else:
        body = full(root, recall, offset, max(1, min(limit, 500)))
    result = {"view": view, "query": query}
    result.update(body)
    result["bytes"] = len(json.dumps(result, ensure_ascii=False).encode("utf-8"))
    result["trace_id"] = trace.write(root, {"kind": "catalog", "mode": mode, "turn_id": turn_id, "capture_id": capture_id, "view": view,
                                            "query": query, "bytes": result["bytes"]})
    return result
