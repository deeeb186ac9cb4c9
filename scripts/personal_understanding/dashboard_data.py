"""The dashboard's data: one dict built from the archive (index, capture words, validation).

`build_data` gathers what every page shows (overview, timeline, entities,
cards, hypotheses, follow-ups, sources, diagnostics, graph); `fingerprint` is a
cheap digest of the logs and the index so stale data is visible. dashboard.py
splits the dict into files and writes them.
"""

import datetime as dt
import hashlib
import json
import os
from collections import Counter
from pathlib import Path

from . import archive, paths, storage, tiers, timeutil, validate
from .archive_index import open_index
from .capture import read_capture
from .errors import PuError
from .followups import due_followups
from .understanding import derived_facets

FORMAT = 1
QUOTE_CHARS = 160  # excerpt of a cited capture when a record has no spans
ROW_QUOTE_CHARS = 140  # the quote shown in a timeline row
CAPTURE_TEXT_CHARS = 1200  # the words shown on a capture's page
CAP = 500  # bounded lists (diagnostics, referrers, stories)
GRAPH_NODES = 300
GRAPH_EDGES = 2000
GAP_DAYS = 365  # a stretch this long without events is listed as a date gap
REF_FIELDS = ("entity_refs", "related_ids", "supports", "contradicts", "supersedes", "before_ids", "after_ids")
TIMELINE = ("event", "state", "decision")
KNOWLEDGE = ("fact", "preference", "rule", "model", "value", "heuristic", "fragment")
LOGS = ("receipts.jsonl", "ledger.jsonl", "followups.jsonl", "feedback.jsonl", "forgotten.jsonl", "quarantine.jsonl",
        "config.json", "backup-state.json")

def dashboard_dir(root):
    return paths.views_dir(root) / "dashboard"


def data_path(root):
    return dashboard_dir(root) / "data" / "dashboard_data.js"


def fingerprint(root):
    """Cheap identity of the archive state: log sizes and inodes plus the index generation and change sequence."""
    v2 = paths.v2_dir(root)
    parts = [FORMAT]
    names = list(LOGS) + sorted("records/" + p.name for p in paths.records_dir(root).glob("*.jsonl"))
    for name in names:
        try:
            st = os.stat(v2 / name)
            parts.append([name, st.st_size, st.st_ino])
        except FileNotFoundError:
            parts.append([name, None])
    index = open_index(root)
    parts.append(["index", index.generation(), index.count("SELECT COALESCE(MAX(seq), 0) FROM changes")])
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:16]


# --- reading the archive -----------------------------------------------------

def _text_reader(root, captures):
    """get(capture_id) -> the capture's text (read once; None when missing or unreadable)."""
    cache = {}

    def get(cid):
        if cid not in cache:
            try:
                doc = read_capture(root, captures[cid]["path"]) if cid in captures else {}
            except PuError:
                doc = {}
            cache[cid] = f"[attachment {doc.get('name')}]" if doc.get("kind") == "attachment" else doc.get("text")
        return cache[cid]
    return get


def _load(root):
    index = open_index(root)
    tomb = {r[0] for r in index.db.execute("SELECT id FROM tombstones")}
    recs = {}
    for (data,) in index.db.execute("SELECT data FROM records ORDER BY id"):
        rec = json.loads(data)
        if rec.get("id") not in tomb and rec.get("status") != "forgotten":
            recs[rec["id"]] = rec
    cols = ("id", "path", "sha256", "turn_id", "session_id", "captured_at", "occurred_at", "chars", "kind", "speaker",
            "source", "source_ref", "status", "reason", "finalized_at")
    caps = {}
    for row in index.db.execute(f"SELECT {', '.join(('capture_id',) + cols[1:])} FROM captures ORDER BY captured_at, capture_id"):
        cap = dict(zip(cols, row))
        if cap["status"] != "forgotten" and cap["id"] not in tomb:
            caps[cap["id"]] = cap
    refs = [r for r in index.db.execute("SELECT record_id, rel, target FROM record_refs ORDER BY record_id, rel, target")
            if r[0] in recs]
    fus = [json.loads(d) for (d,) in index.db.execute("SELECT data FROM followups ORDER BY id")]
    fus = [f for f in fus if f.get("id") not in tomb]
    return index, recs, caps, refs, fus


def _resolver(recs):
    def resolve(rid):
        seen = {rid}
        while rid in recs and recs[rid].get("redirect_to") and recs[rid]["redirect_to"] not in seen:
            rid = recs[rid]["redirect_to"]
            seen.add(rid)
        return rid
    return resolve


def _is_concept(rec):
    return rec.get("kind") == "entity" and rec.get("entity_type") == "concept"


def _cut(text, n):
    text = text or ""
    return text if len(text) <= n else text[:n - 1] + "…"


def _quotes(rec, texts, limit=5):
    """Spans of verbatim_refs; else a marked excerpt of each cited capture."""
    out = []
    for ref in rec.get("verbatim_refs") or ():
        if not isinstance(ref, dict) or not ref.get("capture_id"):
            continue
        quote = ref.get("quote")
        if quote is None and isinstance(ref.get("start"), int) and isinstance(ref.get("end"), int):
            text = texts(ref["capture_id"])
            quote = text[ref["start"]:ref["end"]] if text is not None else None
        if quote:
            out.append({"capture_id": ref["capture_id"], "quote": quote, "start": ref.get("start"), "end": ref.get("end")})
    if not out:
        cited = list(rec.get("capture_ids") or ())
        if rec.get("attachment_capture_id"):
            cited.append(rec["attachment_capture_id"])
        for cid in dict.fromkeys(c for c in cited if isinstance(c, str)):
            text = texts(cid)
            if text:
                out.append({"capture_id": cid, "quote": _cut(text, QUOTE_CHARS), "excerpt": True,
                            "omitted_chars": max(0, len(text) - QUOTE_CHARS + 1) if len(text) > QUOTE_CHARS else 0})
    return out[:limit]


def _label(rec):
    return {"title": rec.get("title"), "kind": "concept" if _is_concept(rec) else rec.get("kind"), "status": rec.get("status")}


def _day_number(date):
    """A partial date as a day ordinal (start of its period), or None."""
    try:
        parts = [int(p) for p in str(date).split("-")] + [1, 1]
        return dt.date(parts[0], parts[1], parts[2]).toordinal()
    except (ValueError, IndexError):
        return None


# --- the builder -------------------------------------------------------------

def build_data(root, now=None):
    """Everything the dashboard shows, as one dict (lists whole; write_data pages them)."""
    archive.require(root)
    moment = now or timeutil.now()
    fp = fingerprint(root)
    index, recs, caps, refs, fus = _load(root)
    resolve = _resolver(recs)
    texts = _text_reader(root, caps)
    live = {rid: r for rid, r in recs.items() if r.get("status") != "redirected"}

    referrers, cited_by = {}, {}
    for rid, rel, target in refs:
        if rel == "capture":
            cited_by.setdefault(target, []).append(rid)
        elif rel != "redirect":
            referrers.setdefault(target, []).append((rid, rel))
    mentions = {}
    for rid, rel, target in refs:
        if rel == "entity" and rid in live:
            mentions.setdefault(resolve(target), set()).add(rid)

    # time neighbours (as records.get_record computes them) and the life spine
    dated = sorted((r["date_start"], rid) for rid, r in live.items()
                   if r.get("kind") in TIMELINE and isinstance(r.get("date_start"), str) and r["date_start"])
    neighbours = {rid: (dated[i - 1][1] if i else None, dated[i + 1][1] if i + 1 < len(dated) else None)
                  for i, (_d, rid) in enumerate(dated)}
    timeline = [r for r in live.values() if r.get("kind") in TIMELINE]
    phase_start = {}
    for rec in timeline:
        phase = rec.get("phase") or ""
        start = rec.get("date_start") or "9999"
        phase_start[phase] = min(phase_start.get(phase, "9999"), start)
    phase_order = sorted(phase_start, key=lambda p: (p == "", phase_start[p], p))
    rank = {p: i for i, p in enumerate(phase_order)}
    timeline.sort(key=lambda r: (rank[r.get("phase") or ""], r.get("date_start") or "9999", r["id"]))

    tier_of = {cid: tier for cid, tier, _chars in tiers.assign(root, moment)}
    items_rec = {rid: _record_detail(rec, recs, caps, texts, referrers, neighbours, mentions, resolve)
                 for rid, rec in recs.items()}
    lists = {
        "timeline": [_timeline_row(r, items_rec[r["id"]]) for r in timeline],
        "entities": sorted(({"id": r["id"], "title": r.get("title"), "entity_type": r.get("entity_type"),
                             "aliases": (r.get("aliases") or [])[:6], "alias_count": len(r.get("aliases") or []),
                             "mentions": len(mentions.get(r["id"], ())), "status": r.get("status")}
                            for r in live.values() if r.get("kind") == "entity" and not _is_concept(r)),
                           key=lambda x: (-x["mentions"], x["title"] or "", x["id"])),
        "redirects": [{"id": r["id"], "title": r.get("title"), "redirect_to": resolve(r["id"]),
                       "canonical_title": (recs.get(resolve(r["id"])) or {}).get("title"),
                       "canonical_exists": resolve(r["id"]) in recs,
                       "merge_reason": r.get("merge_reason"), "merged_at": r.get("merged_at")}
                      for r in sorted(recs.values(), key=lambda r: (r.get("merged_at") or "", r["id"]))
                      if r.get("status") == "redirected"],
        "context": [{"id": r["id"], "title": r.get("title"), "summary": _cut(r.get("summary"), 240),
                     "entities": [[e, (recs.get(resolve(e)) or {}).get("title"), resolve(e) in recs]
                                  for e in (r.get("entity_refs") or [])[:8]], "status": r.get("status")}
                    for r in sorted(live.values(), key=lambda r: (r.get("title") or "", r["id"])) if r.get("kind") == "context"],
        "facets": _facets(root, recs),
        "knowledge": [{"id": r["id"], "kind": "concept" if _is_concept(r) else r["kind"], "title": r.get("title"),
                       "summary": _cut(r.get("summary"), 200), "status": r.get("status"), "domain": r.get("domain"),
                       "layer": r.get("layer"), "fidelity": r.get("fidelity"), "aliases": (r.get("aliases") or [])[:6]}
                      for r in sorted(live.values(), key=lambda r: (r["kind"], r.get("title") or "", r["id"]))
                      if r["kind"] in KNOWLEDGE or _is_concept(r)],
        "hypotheses": [{"id": r["id"], "kind": r["kind"], "title": r.get("title"), "claim": _cut(r.get("claim") or r.get("summary"), 300),
                        "status": r.get("status"), "confidence": r.get("confidence"), "supports": len(r.get("supports") or []),
                        "contradicts": len(r.get("contradicts") or []), "review_note": (r.get("review") or {}).get("note")}
                       for r in sorted(live.values(), key=lambda r: ({"candidate": 0, "confirmed": 1}.get(r.get("status"), 2),
                                                                      r.get("created_at") or "", r["id"]))
                       if r["kind"] in ("hypothesis", "intent")],
        "followups": [],
        "sources": [{"id": c["id"], "sha256": c["sha256"], "captured_at": c["captured_at"], "occurred_at": c["occurred_at"],
                     "speaker": c["speaker"], "kind": c["kind"], "tier": tier_of.get(c["id"]), "status": c["status"],
                     "records": len(cited_by.get(c["id"], ())), "turn_id": c["turn_id"]}
                    for c in sorted(caps.values(), key=lambda c: (c["captured_at"] or "", c["id"]), reverse=True)],
    }
    items_fu, lists["followups"], due = _followups(root, fus, caps, texts, moment)
    fus_by_capture = {}
    for item in fus:
        fus_by_capture.setdefault(item.get("capture_id"), []).append(item["id"])
    items_cap = {cid: _capture_detail(c, texts, cited_by, recs, tier_of, fus_by_capture) for cid, c in caps.items()}
    report = validate.validate(root, json=True)
    diagnostics = _diagnostics(root, recs, live, caps, report, timeline)
    tier_summary = tiers.summary(root, moment)
    overview = _overview(root, recs, live, caps, report, tier_summary, due, lists, diagnostics)
    domains = sorted({r.get("domain") for r in timeline if r.get("domain")})
    return {
        "format": FORMAT, "generated_at": timeutil.iso(moment), "fingerprint": fp,
        "archive": _paths(root), "overview": overview, "diagnostics": diagnostics,
        "graph": _graph(live, refs, resolve),
        "filters": {"timeline": {"domains": domains, "phases": [p for p in phase_order if p],
                                 "kinds": list(TIMELINE)},
                    "knowledge": {"kinds": sorted({x["kind"] for x in lists["knowledge"]})},
                    "entities": {"types": sorted({x["entity_type"] or "" for x in lists["entities"]})}},
        "lists": lists,
        "items": {"rec": items_rec, "cap": items_cap, "fu": items_fu},
    }


def _record_detail(rec, recs, caps, texts, referrers, neighbours, mentions, resolve):
    rid = rec["id"]
    out = {k: v for k, v in rec.items() if k != "verbatim_refs"}
    before, after = neighbours.get(rid, (None, None))
    if before or after or rec.get("before_ids") or rec.get("after_ids"):
        out["before_ids"] = sorted(set(rec.get("before_ids") or ()) | ({before} if before else set()))
        out["after_ids"] = sorted(set(rec.get("after_ids") or ()) | ({after} if after else set()))
    out["quotes"] = _quotes(rec, texts)
    incoming = referrers.get(rid, [])
    out["referrers"] = [[r, rel] for r, rel in incoming[:CAP]]
    out["referrers_total"] = len(incoming)
    linked = {x for field in REF_FIELDS + ("merged_from",) for x in out.get(field) or () if isinstance(x, str)}
    linked |= {rec[f] for f in ("superseded_by", "redirect_to") if isinstance(rec.get(f), str)}
    linked |= {r for r, _rel in out["referrers"]}
    if rec.get("kind") == "entity":
        out["page"] = page = _entity_page(rec, recs, mentions, texts)
        linked |= set(page["stories"]) | set(page["current_states"]) | set(page["context_cards"])
        linked |= {m["id"] for m in page["merged"]}
    if rec.get("status") == "redirected":
        out["canonical_id"] = resolve(rid)
        linked.add(out["canonical_id"])
    out["refs"] = {x: (_label(recs[x]) if x in recs else None) for x in sorted(linked)}
    review = rec.get("review") if isinstance(rec.get("review"), dict) else {}
    cited = list(rec.get("capture_ids") or ()) + [q["capture_id"] for q in out["quotes"]] + \
        [rec.get("attachment_capture_id"), review.get("capture_id")]
    out["capture_refs"] = {c: ({"captured_at": caps[c]["captured_at"], "status": caps[c]["status"]} if c in caps else None)
                           for c in dict.fromkeys(x for x in cited if isinstance(x, str))}
    return out


def _entity_page(rec, recs, mentions, texts):
    stories, states, cards, quotes, seen = [], [], [], [], set()
    for rid in sorted(mentions.get(rec["id"], ()), key=lambda x: (recs[x].get("date_start") or "9999", x)):
        other = recs[rid]
        if other["kind"] == "state" and other.get("status") == "current":
            states.append(rid)
        elif other["kind"] == "context":
            cards.append(rid)
        else:
            stories.append(rid)
            for q in _quotes(other, texts, 2) if len(quotes) < 30 else ():
                if (q["capture_id"], q["quote"]) not in seen:
                    seen.add((q["capture_id"], q["quote"]))
                    quotes.append(dict(q, record_id=rid))
    merged = [{"id": m, "title": recs[m].get("title"), "merge_reason": recs[m].get("merge_reason"),
               "merged_at": recs[m].get("merged_at")} for m in rec.get("merged_from") or () if m in recs]
    return {"stories": stories[:CAP], "total_stories": len(stories), "current_states": states[:CAP],
            "context_cards": cards[:CAP], "quotes": quotes[:30], "mentions": len(mentions.get(rec["id"], ())),
            "merged": merged}


def _timeline_row(rec, detail):
    quote = detail["quotes"][0] if detail["quotes"] else None
    return {"id": rec["id"], "kind": rec["kind"], "title": rec.get("title"), "date_start": rec.get("date_start"),
            "date_end": rec.get("date_end"), "date_precision": rec.get("date_precision"), "phase": rec.get("phase"),
            "salience": rec.get("salience"), "domain": rec.get("domain"), "status": rec.get("status"),
            "fidelity": rec.get("fidelity"),
            "quote": {"capture_id": quote["capture_id"], "text": _cut(quote["quote"], ROW_QUOTE_CHARS),
                      "excerpt": bool(quote.get("excerpt")) or len(quote["quote"]) > ROW_QUOTE_CHARS} if quote else None}


def _facets(root, recs, limit=CAP):
    """Entity pairs sharing at least two events (understanding.derived_facets: co-occurrence, never cause)."""
    def entity(e):
        return [e, (recs.get(e) or {}).get("title"), e in recs]
    rows = [{"id": "~".join(f["entities"]), "entities": [entity(e) for e in f["entities"]], "events": len(f["event_ids"]),
             "event_ids": f["event_ids"][:20], "event_titles": {e: (recs.get(e) or {}).get("title") for e in f["event_ids"][:20]}}
            for f in derived_facets(root)]
    rows.sort(key=lambda x: (-x["events"], x["id"]))
    return rows[:limit]


def _followups(root, fus, caps, texts, moment):
    due, upcoming, undated = due_followups(root, timeutil.iso(moment), horizon=3)
    bucket = {f["id"]: "due" for f in due}
    bucket.update({f["id"]: "upcoming" for f in upcoming})
    bucket.update({f["id"]: "undated" for f in undated})
    order = {"due": 0, "upcoming": 1, "later": 2, "undated": 3, "closed": 4}
    items, rows = {}, []
    for item in fus:
        b = bucket.get(item["id"]) or ("later" if item.get("status") == "open" else "closed")
        said = texts(item.get("capture_id")) if item.get("capture_id") in caps else None
        items[item["id"]] = dict(item, bucket=b, said=_cut(said, 300) if said else None,
                                 capture_exists=item.get("capture_id") in caps)
        rows.append({"id": item["id"], "question": item.get("question"), "bucket": b, "due_at": item.get("due_at"),
                     "status": item.get("status"), "capture_id": item.get("capture_id"),
                     "resolution": (item.get("resolution") or {}).get("channel"),
                     "note": (item.get("resolution") or {}).get("note")})
    rows.sort(key=lambda r: (order[r["bucket"]], r["due_at"] or "9999", r["id"]))
    return items, rows, [r for r in rows if r["bucket"] == "due"]


def _capture_detail(cap, texts, cited_by, recs, tier_of, fus_by_capture):
    text = texts(cap["id"])
    out = dict(cap, tier=tier_of.get(cap["id"]), records=sorted(cited_by.get(cap["id"], ())))
    out["refs"] = {r: (_label(recs[r]) if r in recs else None) for r in out["records"]}
    out["followups"] = fus_by_capture.get(cap["id"], [])
    if text is None:
        out["text"], out["missing"] = None, True
    else:
        out["text"] = text[:CAPTURE_TEXT_CHARS]
        out["omitted_chars"] = max(0, len(text) - CAPTURE_TEXT_CHARS)
    return out


def _diagnostics(root, recs, live, caps, report, timeline):
    known = set(recs)
    dangling = []
    for rid, rec in sorted(live.items()):
        for field in REF_FIELDS:
            for target in rec.get(field) or ():
                if isinstance(target, str) and target not in known:
                    dangling.append({"id": rid, "field": field, "target": target})
        for cid in rec.get("capture_ids") or ():
            if cid not in caps:
                dangling.append({"id": rid, "field": "capture_ids", "target": cid})
    unknown_dates = [{"id": r["id"], "title": r.get("title"), "kind": r["kind"], "date_precision": r.get("date_precision")}
                     for r in timeline if r["kind"] == "event" and (not r.get("date_start") or r.get("date_precision") == "unknown")]
    events = sorted((r for r in timeline if r["kind"] == "event" and r.get("date_start") and _day_number(r["date_start"])),
                    key=lambda r: (r["date_start"], r["id"]))
    gaps, reach = [], None
    for rec in events:
        start = _day_number(rec["date_start"])
        if reach is not None and start - reach[0] >= GAP_DAYS:
            gaps.append({"from": reach[1], "to": rec["date_start"], "days": start - reach[0],
                         "before_id": reach[2], "after_id": rec["id"]})
        end = _day_number(rec.get("date_end")) or start
        if reach is None or end >= reach[0]:
            reach = (end, rec.get("date_end") or rec["date_start"], rec["id"])
    gaps.sort(key=lambda g: -g["days"])
    debt = [{"id": r["id"], "title": r.get("title"), "kind": r["kind"]} for r in live.values() if r.get("fidelity") == "summary_only"]
    unresolved = [{"id": r["id"], "title": r.get("title"), "referents": r.get("unresolved_referents")}
                  for r in live.values() if r.get("unresolved_referents")]
    no_counter = [{"id": r["id"], "title": r.get("title"), "status": r.get("status")} for r in live.values()
                  if r["kind"] in ("hypothesis", "intent") and not r.get("contradicts")]
    details = report.get("problem_details") or []

    def bounded(rows):
        return {"total": len(rows), "items": rows[:CAP]}

    return {
        "paths": _paths(root, files=True),
        "validation": {k: report[k] for k in ("status", "errors", "warnings", "checked")} | {"problems": bounded(details)},
        "summary_debt": bounded(sorted(debt, key=lambda x: x["id"])), "unknown_dates": bounded(unknown_dates),
        "date_gaps": bounded(gaps), "gap_days": GAP_DAYS, "dangling": bounded(dangling),
        "unresolved_referents": bounded(sorted(unresolved, key=lambda x: x["id"])),
        "hypotheses_without_counter_evidence": bounded(sorted(no_counter, key=lambda x: x["id"])),
    }


def _paths(root, files=False):
    root = Path(root).resolve()
    out = {"root": root, "memory": paths.memory_dir(root), "sources": paths.sources_dir(root),
           "records": paths.records_dir(root), "receipts": paths.receipts_path(root), "ledger": paths.ledger_events_path(root),
           "followups": paths.followups_path(root), "traces": paths.traces_dir(root), "views": paths.views_dir(root),
           "index": paths.index_db_path(root), "backup_state": paths.backup_state_path(root),
           "dashboard": dashboard_dir(root) / "index.html", "data": data_path(root)}
    out = {k: str(v) for k, v in out.items()}
    if not files:
        return out
    listing = [paths.receipts_path(root), paths.ledger_events_path(root), paths.followups_path(root),
               paths.feedback_path(root), paths.forgotten_path(root), paths.ledger_projection_path(root),
               paths.backup_state_path(root), paths.config_path(root)]
    listing += sorted(paths.records_dir(root).glob("*.jsonl")) + sorted(paths.traces_dir(root).glob("*.jsonl"))[-5:]
    return {"dirs": [[k, v] for k, v in out.items()],
            "files": [{"path": str(p), "bytes": p.stat().st_size if p.exists() else None} for p in listing]}


def _overview(root, recs, live, caps, report, tier_summary, due, lists, diagnostics):
    def count(values):
        return dict(sorted(Counter(v or "(none)" for v in values).items()))

    try:
        backup = storage.read_json(paths.backup_state_path(root))
    except (FileNotFoundError, ValueError, UnicodeDecodeError):
        backup = None
    last = (backup or {}).get("last_backup_at")
    pending = [{"id": c["id"], "captured_at": c["captured_at"]} for c in caps.values() if c["status"] == "pending"]
    problems = diagnostics["validation"]["problems"]
    return {
        "counts": {"records": len(live), "redirected": len(recs) - len(live), "by_kind": count(r["kind"] for r in live.values()),
                   "by_layer": count(r.get("layer") for r in live.values()),
                   "by_status": count(r.get("status") for r in live.values()),
                   "captures": len(caps), "by_capture_status": count(c["status"] for c in caps.values()),
                   "followups": count(r["bucket"] for r in lists["followups"]),
                   "entities": len(lists["entities"]), "hypotheses": len(lists["hypotheses"])},
        "tiers": tier_summary,
        "validation": {"status": report["status"], "errors": report["errors"], "warnings": report["warnings"],
                       "problems": problems["items"][:50], "total_problems": problems["total"]},
        "backup": {"last_backup_at": last, "never": not last},
        "due_followups": due[:20], "due_total": len(due),
        "summary_debt": diagnostics["summary_debt"]["total"],
        "pending_captures": {"total": len(pending), "items": pending[:20]},
    }


def _graph(live, refs, resolve):
    def node_kind(rec):
        if _is_concept(rec):
            return "concept"
        return rec["kind"] if rec["kind"] in ("entity", "event", "context") else None

    nodes = {rid: node_kind(r) for rid, r in live.items() if node_kind(r)}
    edges = {}
    for rid, rel, target in refs:
        target = resolve(target)
        if rel in ("entity", "related", "supports", "contradicts", "supersedes") and rid in nodes and target in nodes \
                and rid != target:
            edges.setdefault(tuple(sorted((rid, target))), rel)
    degree = Counter(n for pair in edges for n in pair)
    order = sorted(nodes, key=lambda n: (-degree.get(n, 0), -(live[n].get("salience") or 0), n))
    if len(order) <= GRAPH_NODES:
        chosen = order
    else:  # the best-connected hubs, then the nodes most tied to them: a readable, connected excerpt
        chosen = order[:GRAPH_NODES // 8]
        hubs = set(chosen)
        ties = Counter(y for a, b in edges for x, y in ((a, b), (b, a)) if x in hubs and y not in hubs)
        chosen += sorted(ties, key=lambda n: (-ties[n], -degree.get(n, 0), n))[:GRAPH_NODES - len(chosen)]
        taken = set(chosen)
        chosen += [n for n in order if n not in taken][:GRAPH_NODES - len(chosen)]
    taken = set(chosen)
    linked = {n for a, b in edges if a in taken and b in taken for n in (a, b)}
    if linked:  # a node with no link inside the excerpt says nothing in a picture of links
        chosen = [n for n in chosen if n in linked]
    position = {n: i for i, n in enumerate(chosen)}
    kept = [[position[a], position[b], rel] for (a, b), rel in sorted(edges.items()) if a in position and b in position]
    return {"nodes": [{"id": n, "kind": nodes[n], "label": live[n].get("title"), "degree": degree.get(n, 0)} for n in chosen],
            "edges": kept[:GRAPH_EDGES], "total_nodes": len(nodes), "total_edges": len(edges),
            "shown_edges": min(len(kept), GRAPH_EDGES)}
