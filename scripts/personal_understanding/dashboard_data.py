"""The dashboard's data: one dict built from the archive (index, capture words, validation).

`build_data` gathers what every page shows (overview, timeline, state subjects,
entities, cards, hypotheses, follow-ups, sources, sessions, diagnostics, graph,
search text); `fingerprint` is a cheap digest of the logs and the index so stale
data is visible. dashboard.py splits the dict into files and writes them.
Records are placed in time by their dates; when they were said comes from the
captures they cite (dashboard_words).
"""

import datetime as dt
import hashlib
import json
import os
from collections import Counter
from pathlib import Path

from . import archive, paths, storage, tiers, timeutil, validate
from .archive_index import CAPTURE_PATH, CAPTURE_SHA, open_index
from .dashboard_graph import graph
from .dashboard_words import Words, cut, followup_search_doc, instant_key, record_search_doc
from .retrieval.lexicon import TRADITIONAL
from .followups import due_followups
from .understanding import derived_facets

FORMAT = 2
QUOTE_CHARS = 160  # excerpt of a cited capture when a record has no spans
ROW_QUOTE_CHARS = 140  # the quote shown in a list row
CAP = 500  # bounded lists (diagnostics, referrers, stories)
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
    """Cheap identity of the archive state: log sizes and inodes, the index generation and change
    sequence, and when pipeline pages (which the dashboard links to) were last written."""
    v2 = paths.v2_dir(root)
    parts = [FORMAT]
    names = list(LOGS) + sorted("records/" + p.name for p in paths.records_dir(root).glob("*.jsonl"))
    for name in names:
        try:
            st = os.stat(v2 / name)
            parts.append([name, st.st_size, st.st_ino])
        except FileNotFoundError:
            parts.append([name, None])
    try:
        parts.append(["pipeline", os.stat(paths.views_dir(root) / "pipeline").st_mtime_ns])
    except FileNotFoundError:
        parts.append(["pipeline", None])
    index = open_index(root)
    parts.append(["index", index.generation(), index.count("SELECT COALESCE(MAX(seq), 0) FROM changes")])
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:16]


# --- reading the archive -----------------------------------------------------

def _load(root):
    index = open_index(root)
    tomb = {r[0] for r in index.db.execute("SELECT id FROM tombstones")}
    recs = {}
    for rec in index.records_where("1 ORDER BY id"):
        if rec.get("id") not in tomb and rec.get("status") != "forgotten":
            recs[rec["id"]] = rec
    cols = ("id", "path", "sha256", "turn_id", "session_id", "captured_at", "occurred_at", "chars", "kind", "speaker",
            "source", "source_ref", "status", "reason", "finalized_at", "line")
    caps = {}
    columns = ", ".join(("capture_id", CAPTURE_PATH, CAPTURE_SHA) + cols[3:])
    for row in index.db.execute(f"SELECT {columns} FROM captures ORDER BY captured_at, capture_id"):
        cap = dict(zip(cols, row))
        if cap["status"] != "forgotten" and cap["id"] not in tomb:
            caps[cap["id"]] = cap
    refs = [r for r in index.db.execute("SELECT record_id, rel, target FROM record_refs ORDER BY record_id, rel, target")
            if r[0] in recs]
    fus = [json.loads(d) for (d,) in index.db.execute("SELECT data FROM followups ORDER BY id")]
    fus = [f for f in fus if f.get("id") not in tomb]
    return recs, caps, refs, fus


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


def _cited(rec):
    """Every capture a record cites, in the order it cites them."""
    cids = list(rec.get("capture_ids") or ()) + [r.get("capture_id") for r in rec.get("verbatim_refs") or () if isinstance(r, dict)]
    cids.append(rec.get("attachment_capture_id"))
    return list(dict.fromkeys(c for c in cids if isinstance(c, str)))


def _quotes(rec, words, limit=5):
    """Spans of verbatim_refs; else a marked excerpt of each cited capture."""
    out = []
    for ref in rec.get("verbatim_refs") or ():
        if not isinstance(ref, dict) or not ref.get("capture_id"):
            continue
        text = words.text(ref["capture_id"])
        if text is None:  # forgotten, missing or changed: no quote is served from it
            continue
        quote = ref.get("quote")
        if isinstance(ref.get("start"), int) and isinstance(ref.get("end"), int):
            quote = text[ref["start"]:ref["end"]]
        if quote:
            out.append({"capture_id": ref["capture_id"], "quote": quote, "start": ref.get("start"), "end": ref.get("end"),
                        "said": words.said(ref["capture_id"])})
    if not out:
        for cid in _cited(rec):
            text = words.text(cid)
            if text:
                out.append({"capture_id": cid, "quote": cut(text, QUOTE_CHARS), "excerpt": True, "said": words.said(cid),
                            "omitted_chars": max(0, len(text) - QUOTE_CHARS + 1) if len(text) > QUOTE_CHARS else 0})
    return out[:limit]


def _label(rec):
    return {"title": rec.get("title"), "kind": "concept" if _is_concept(rec) else rec.get("kind"), "status": rec.get("status")}


def _day_number(date):
    """A partial date as a day ordinal (start of its period), or None."""
    try:
        parts = [int(p) for p in str(date)[:10].split("-")] + [1, 1]
        return dt.date(parts[0], parts[1], parts[2]).toordinal()
    except (ValueError, IndexError):
        return None


def _row_quote(quotes):
    q = quotes[0] if quotes else None
    return {"capture_id": q["capture_id"], "text": cut(q["quote"], ROW_QUOTE_CHARS),
            "excerpt": bool(q.get("excerpt")) or len(q["quote"]) > ROW_QUOTE_CHARS} if q else None


# --- the builder -------------------------------------------------------------

class _Archive:
    """What every part of the builder looks at, read once."""

    def __init__(self, root, moment):
        self.root, self.moment = root, moment
        self.recs, self.caps, self.refs, self.fus = _load(root)
        self.resolve = _resolver(self.recs)
        self.words = Words(root, self.caps)
        self.sessions = self.words.sessions()
        self.live = {rid: r for rid, r in self.recs.items() if r.get("status") != "redirected"}
        self.referrers, self.cited_by, self.mentions = {}, {}, {}
        for rid, rel, target in self.refs:
            if rel == "capture":
                self.cited_by.setdefault(target, []).append(rid)
            elif rel != "redirect":
                self.referrers.setdefault(target, []).append((rid, rel))
            if rel == "entity" and rid in self.live:
                self.mentions.setdefault(self.resolve(target), set()).add(rid)
        # when a record's words were said (None when it cites none); ordering falls back on when it was recorded
        self.cited = {rid: _cited(r) for rid, r in self.recs.items()}
        self.said = {rid: self.words.latest_said(self.cited[rid]) for rid in self.recs}
        self.said_key = {rid: instant_key(s or self.recs[rid].get("created_at")) for rid, s in self.said.items()}
        self.quotes = {rid: _quotes(r, self.words) for rid, r in self.recs.items()}


def build_data(root, now=None):
    """Everything the dashboard shows, as one dict (lists whole; write_data pages them)."""
    archive.require(root)
    moment = now or timeutil.now()
    fp = fingerprint(root)
    a = _Archive(root, moment)
    live, recs = a.live, a.recs

    # time neighbours (as records.get_record computes them) and the life spine in date order
    spine = sorted((r["date_start"], rid) for rid, r in live.items()
                   if r.get("kind") in TIMELINE and isinstance(r.get("date_start"), str) and r["date_start"])
    neighbours = {rid: (spine[i - 1][1] if i else None, spine[i + 1][1] if i + 1 < len(spine) else None)
                  for i, (_d, rid) in enumerate(spine)}
    timeline = [r for r in live.values() if r.get("kind") in TIMELINE]
    dated = sorted((r for r in timeline if r.get("date_start")), key=lambda r: (r["date_start"], a.said_key[r["id"]], r["id"]))
    undated = sorted((r for r in timeline if not r.get("date_start")), key=lambda r: (a.said_key[r["id"]], r["id"]))
    phase_start = {}
    for rec in dated:
        phase_start.setdefault(rec.get("phase") or "", rec["date_start"])
    phases = sorted({r.get("phase") for r in timeline if r.get("phase")}, key=lambda p: (phase_start.get(p, "9999"), p))

    subjects = _subjects(a)
    tier_of = {cid: tier for cid, tier, _chars in tiers.assign(root, moment)}
    items_rec = {rid: _record_detail(a, rec, neighbours, subjects) for rid, rec in recs.items()}
    lists = {
        "timeline": [_timeline_row(a, r) for r in dated],
        "undated": [_timeline_row(a, r) for r in undated],
        "subjects": _subject_rows(a, subjects),
        "entities": sorted(({"id": r["id"], "title": r.get("title"), "entity_type": r.get("entity_type"),
                             "aliases": (r.get("aliases") or [])[:6], "alias_count": len(r.get("aliases") or []),
                             "mentions": len(a.mentions.get(r["id"], ())), "status": r.get("status")}
                            for r in live.values() if r.get("kind") == "entity" and not _is_concept(r)),
                           key=lambda x: (-x["mentions"], x["title"] or "", x["id"])),
        "redirects": [{"id": r["id"], "title": r.get("title"), "redirect_to": a.resolve(r["id"]),
                       "canonical_title": (recs.get(a.resolve(r["id"])) or {}).get("title"),
                       "canonical_exists": a.resolve(r["id"]) in recs,
                       "merge_reason": r.get("merge_reason"), "merged_at": r.get("merged_at")}
                      for r in sorted(recs.values(), key=lambda r: (r.get("merged_at") or "", r["id"]))
                      if r.get("status") == "redirected"],
        "context": [{"id": r["id"], "title": r.get("title"), "summary": cut(r.get("summary"), 240),
                     "entities": [[e, (recs.get(a.resolve(e)) or {}).get("title"), a.resolve(e) in recs]
                                  for e in (r.get("entity_refs") or [])[:8]], "status": r.get("status")}
                    for r in sorted(live.values(), key=lambda r: (r.get("title") or "", r["id"])) if r.get("kind") == "context"],
        "facets": _facets(root, recs),
        "knowledge": [{"id": r["id"], "kind": "concept" if _is_concept(r) else r["kind"], "title": r.get("title"),
                       "summary": cut(r.get("summary"), 200), "status": r.get("status"), "domain": r.get("domain"),
                       "layer": r.get("layer"), "fidelity": r.get("fidelity"), "aliases": (r.get("aliases") or [])[:6],
                       "said": a.said[r["id"]]}
                      for r in sorted(live.values(), key=lambda r: (r["kind"], r.get("title") or "", r["id"]))
                      if r["kind"] in KNOWLEDGE or _is_concept(r)],
        "hypotheses": [{"id": r["id"], "kind": r["kind"], "title": r.get("title"), "claim": cut(r.get("claim") or r.get("summary"), 300),
                        "status": r.get("status"), "confidence": r.get("confidence"), "supports": len(r.get("supports") or []),
                        "contradicts": len(r.get("contradicts") or []), "review_note": (r.get("review") or {}).get("note")}
                       for r in sorted(live.values(), key=lambda r: ({"candidate": 0, "confirmed": 1}.get(r.get("status"), 2),
                                                                      r.get("created_at") or "", r["id"]))
                       if r["kind"] in ("hypothesis", "intent")],
        "sources": a.words.source_rows(tier_of, a.cited_by),
        "sessions": a.words.session_rows(a.sessions),
    }
    items_fu, lists["followups"], due = _followups(a)
    fus_by_capture = {}
    for item in a.fus:
        fus_by_capture.setdefault(item.get("capture_id"), []).append(item["id"])
    items_cap = {cid: a.words.capture_item(cid, a.sessions, tier_of, a.cited_by, recs, fus_by_capture, _label) for cid in a.caps}
    items_ses = {sid: a.words.session_item(sid, cids) for sid, cids in a.sessions.items()}
    report = validate.validate(root, json=True)
    diagnostics = _diagnostics(a, report, timeline)
    overview = _overview(a, report, tiers.summary(root, moment), due, lists, diagnostics)
    speakers = Counter(r["speaker"] or "" for r in lists["sources"])
    return {
        "format": FORMAT, "generated_at": timeutil.iso(moment), "fingerprint": fp,
        "archive": _paths(root), "overview": overview, "diagnostics": diagnostics,
        "graph": graph(a.live, a.refs, a.resolve, a.fus, a.cited_by),
        "filters": {"timeline": {"domains": sorted({r.get("domain") for r in timeline if r.get("domain")}), "phases": phases,
                                 "kinds": list(TIMELINE)},
                    "knowledge": {"kinds": sorted({x["kind"] for x in lists["knowledge"]})},
                    "entities": {"types": sorted({x["entity_type"] or "" for x in lists["entities"]})},
                    "sources": {"speakers": [s for s, _n in speakers.most_common(50) if s]}},
        "lists": lists,
        "items": {"rec": items_rec, "cap": items_cap, "fu": items_fu, "ses": items_ses},
        "search": _search_docs(a, items_fu),
        # traditional and simplified characters, in pairs: search folds them as recall does (媽 finds 妈)
        "fold_zh": "".join(chr(t) + chr(s) for t, s in sorted(TRADITIONAL.items())),
    }


def _search_docs(a, items_fu):
    docs = a.words.search_docs()
    for rid, rec in sorted(a.live.items(), key=lambda kv: (a.said_key[kv[0]], kv[0]), reverse=True):
        kind = "concept" if _is_concept(rec) else rec.get("kind")
        when = rec.get("date_start") if rec.get("kind") in TIMELINE and rec.get("date_start") else a.said[rid]
        links = a.cited[rid] + sorted({a.resolve(e) for e in rec.get("entity_refs") or () if isinstance(e, str)})
        doc = record_search_doc(rec, kind, when, links)
        if doc:
            doc[0][7] = rec.get("status")
            docs.append(doc)
    for fid, item in sorted(items_fu.items()):
        doc = followup_search_doc(item, item["bucket"])
        if doc:
            docs.append(doc)
    return docs


def _subjects(a):
    """States and decisions grouped by subject (same kind and subject_key, or a supersedes chain):
    {record id: rows of every version in the order they were said}."""
    parent = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    chained = [r for r in a.recs.values() if r.get("kind") in ("state", "decision")]
    for rec in chained:
        find(rec["id"])
        if rec.get("subject_key"):
            parent[find(rec["id"])] = find(("subject", rec["kind"], rec["subject_key"]))
        for other in list(rec.get("supersedes") or ()) + [rec.get("superseded_by")]:
            if isinstance(other, str) and other in a.recs:
                parent[find(rec["id"])] = find(other)
    groups = {}
    for rec in chained:
        groups.setdefault(find(rec["id"]), []).append(rec)
    out = {}
    for members in groups.values():
        members.sort(key=lambda r: (a.said_key[r["id"]], r.get("created_at") or "", r["id"]))
        rows = [{"id": r["id"], "n": i + 1, "title": r.get("title"), "summary": cut(r.get("summary"), 240),
                 "status": r.get("status"), "date_start": r.get("date_start"), "date_precision": r.get("date_precision"),
                 "said": a.said[r["id"]], "quote": _row_quote(a.quotes[r["id"]])} for i, r in enumerate(members)]
        for r in members:
            out[r["id"]] = rows
    return out


def _subject_rows(a, subjects):
    """One row per subject, led by its latest version still holding; the subject said last first."""
    groups = {id(versions): versions for versions in subjects.values()}
    latest = [([v for v in vs if v["status"] in ("current", "uncertain")] or vs)[-1] for vs in groups.values()]
    rows = []
    for last, versions in sorted(zip(latest, groups.values()), key=lambda lv: (a.said_key[lv[0]["id"]], lv[0]["id"]), reverse=True):
        rec = a.recs[last["id"]]
        rows.append({"id": last["id"], "kind": rec["kind"], "subject_key": rec.get("subject_key"), "title": last["title"],
                     "status": last["status"], "versions": len(versions), "said": last["said"],
                     "first_said": versions[0]["said"], "domain": rec.get("domain")})
    return rows


def _record_detail(a, rec, neighbours, subjects):
    rid, recs = rec["id"], a.recs
    out = {k: v for k, v in rec.items() if k != "verbatim_refs"}
    before, after = neighbours.get(rid, (None, None))
    if before or after or rec.get("before_ids") or rec.get("after_ids"):
        out["before_ids"] = sorted(set(rec.get("before_ids") or ()) | ({before} if before else set()))
        out["after_ids"] = sorted(set(rec.get("after_ids") or ()) | ({after} if after else set()))
    out["quotes"] = a.quotes[rid]
    out["said"] = a.said[rid]
    incoming = a.referrers.get(rid, [])
    out["referrers"] = [[r, rel] for r, rel in incoming[:CAP]]
    out["referrers_total"] = len(incoming)
    linked = {x for field in REF_FIELDS + ("merged_from",) for x in out.get(field) or () if isinstance(x, str)}
    linked |= {rec[f] for f in ("superseded_by", "redirect_to") if isinstance(rec.get(f), str)}
    linked |= {r for r, _rel in out["referrers"]}
    if rid in subjects:
        out["versions"] = subjects[rid]
        linked |= {v["id"] for v in subjects[rid]}
    if rec.get("kind") in ("hypothesis", "intent"):
        out["evidence"] = {field: [_evidence(a, x) for x in rec.get(field) or () if isinstance(x, str)]
                           for field in ("supports", "contradicts")}
    if rec.get("kind") == "entity":
        out["page"] = page = _entity_page(a, rec)
        linked |= {s["id"] for s in page["stories"]} | set(page["current_states"]) | set(page["context_cards"])
        linked |= {m["id"] for m in page["merged"]}
    if rec.get("status") == "redirected":
        out["canonical_id"] = a.resolve(rid)
        linked.add(out["canonical_id"])
    out["refs"] = {x: (_label(recs[x]) if x in recs else None) for x in sorted(linked)}
    review = rec.get("review") if isinstance(rec.get("review"), dict) else {}
    cited = a.cited[rid] + [q["capture_id"] for q in out["quotes"]] + [review.get("capture_id")]
    out["capture_refs"] = {c: ({"said": a.words.said(c), "saved": a.caps[c]["captured_at"], "status": a.caps[c]["status"],
                                "speaker": a.caps[c]["speaker"], "role": a.words.role(c)} if c in a.caps else None)
                           for c in dict.fromkeys(x for x in cited if isinstance(x, str))}
    return out


def _evidence(a, rid):
    rec = a.recs.get(a.resolve(rid))
    if rec is None:
        return {"id": rid, "exists": False}
    return {"id": rid, "exists": True, "title": rec.get("title"), "kind": rec.get("kind"), "status": rec.get("status"),
            "date_start": rec.get("date_start"), "date_precision": rec.get("date_precision"), "said": a.said[rec["id"]],
            "quote": _row_quote(a.quotes[rec["id"]])}


def _entity_page(a, rec):
    """Stories about an entity, newest first by date (undated after, by when said), each with its first quote."""
    stories, states, cards = [], [], []
    for rid in a.mentions.get(rec["id"], ()):
        other = a.recs[rid]
        if other["kind"] == "state" and other.get("status") == "current":
            states.append(rid)
        elif other["kind"] == "context":
            cards.append(rid)
        else:
            stories.append(rid)
    stories.sort(key=lambda x: (bool(a.recs[x].get("date_start")), a.recs[x].get("date_start") or "", a.said_key[x], x),
                 reverse=True)
    rows = [{"id": x, "title": a.recs[x].get("title"), "kind": a.recs[x]["kind"], "status": a.recs[x].get("status"),
             "date_start": a.recs[x].get("date_start"), "date_end": a.recs[x].get("date_end"),
             "date_precision": a.recs[x].get("date_precision"), "said": a.said[x], "quote": _row_quote(a.quotes[x])}
            for x in stories[:CAP]]
    merged = [{"id": m, "title": a.recs[m].get("title"), "merge_reason": a.recs[m].get("merge_reason"),
               "merged_at": a.recs[m].get("merged_at")} for m in rec.get("merged_from") or () if m in a.recs]
    return {"stories": rows, "total_stories": len(stories), "current_states": sorted(states)[:CAP],
            "context_cards": sorted(cards)[:CAP], "mentions": len(a.mentions.get(rec["id"], ())), "merged": merged}


def _timeline_row(a, rec):
    return {"id": rec["id"], "kind": rec["kind"], "title": rec.get("title"), "date_start": rec.get("date_start"),
            "date_end": rec.get("date_end"), "date_precision": rec.get("date_precision"), "phase": rec.get("phase"),
            "salience": rec.get("salience"), "domain": rec.get("domain"), "status": rec.get("status"),
            "fidelity": rec.get("fidelity"), "said": a.said[rec["id"]], "quote": _row_quote(a.quotes[rec["id"]])}


def _facets(root, recs, limit=CAP):
    """Entity pairs sharing at least two events (understanding.derived_facets: co-occurrence, never cause)."""
    def entity(e):
        return [e, (recs.get(e) or {}).get("title"), e in recs]
    rows = [{"id": "~".join(f["entities"]), "entities": [entity(e) for e in f["entities"]], "events": len(f["event_ids"]),
             "event_ids": f["event_ids"][:20], "event_titles": {e: (recs.get(e) or {}).get("title") for e in f["event_ids"][:20]}}
            for f in derived_facets(root)]
    rows.sort(key=lambda x: (-x["events"], x["id"]))
    return rows[:limit]


def _followups(a):
    """Follow-ups in buckets: overdue (with the days late), due today, upcoming, later, undated, closed."""
    due, upcoming, undated = due_followups(a.root, timeutil.iso(a.moment), horizon=3)
    bucket = {f["id"]: "due" for f in due}
    bucket.update({f["id"]: "upcoming" for f in upcoming})
    bucket.update({f["id"]: "undated" for f in undated})
    order = {"overdue": 0, "due": 1, "upcoming": 2, "later": 3, "undated": 4, "closed": 5}
    items, rows = {}, []
    for item in a.fus:
        b = bucket.get(item["id"]) or ("later" if item.get("status") == "open" else "closed")
        late = None
        if b == "due":
            late = (a.moment - timeutil.parse_instant(item["due_at"])).days
            b = "overdue" if late >= 1 else "due"
        cid = item.get("capture_id")
        said = a.words.text(cid) if cid in a.caps else None
        items[item["id"]] = dict(item, bucket=b, days_late=late, words=cut(said, 600) if said else None,
                                 said=a.words.said(cid) if cid in a.caps else None, capture_exists=cid in a.caps)
        rows.append({"id": item["id"], "question": item.get("question"), "bucket": b, "due_at": item.get("due_at"),
                     "days_late": late, "status": item.get("status"), "capture_id": cid,
                     "words": cut(said, ROW_QUOTE_CHARS) if said else None, "said": items[item["id"]]["said"],
                     "resolution": (item.get("resolution") or {}).get("channel"),
                     "note": (item.get("resolution") or {}).get("note")})
    rows.sort(key=lambda r: (order[r["bucket"]], -(r["days_late"] or 0), r["due_at"] or "9999", r["id"]))
    return items, rows, [r for r in rows if r["bucket"] in ("overdue", "due")]


def _diagnostics(a, report, timeline):
    known = set(a.recs)
    dangling = []
    for rid, rec in sorted(a.live.items()):
        for field in REF_FIELDS:
            for target in rec.get(field) or ():
                if isinstance(target, str) and target not in known:
                    dangling.append({"id": rid, "field": field, "target": target})
        for cid in rec.get("capture_ids") or ():
            if cid not in a.caps:
                dangling.append({"id": rid, "field": "capture_ids", "target": cid})
    unknown_dates = [{"id": r["id"], "title": r.get("title"), "kind": r["kind"], "date_precision": r.get("date_precision")}
                     for r in sorted(timeline, key=lambda r: r["id"])
                     if r["kind"] == "event" and (not r.get("date_start") or r.get("date_precision") == "unknown")]
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
    debt = [{"id": r["id"], "title": r.get("title"), "kind": r["kind"]} for r in a.live.values() if r.get("fidelity") == "summary_only"]
    unresolved = [{"id": r["id"], "title": r.get("title"), "referents": r.get("unresolved_referents")}
                  for r in a.live.values() if r.get("unresolved_referents")]
    no_counter = [{"id": r["id"], "title": r.get("title"), "status": r.get("status")} for r in a.live.values()
                  if r["kind"] in ("hypothesis", "intent") and not r.get("contradicts")]
    withheld = [{"id": cid, "code": code, "path": a.caps[cid]["path"]} for cid, code in sorted(a.words.problems.items())]
    details = report.get("problem_details") or []

    def bounded(rows):
        return {"total": len(rows), "items": rows[:CAP]}

    return {
        "paths": _paths(a.root, files=True),
        "validation": {k: report[k] for k in ("status", "errors", "warnings", "checked")} | {"problems": bounded(details)},
        "summary_debt": bounded(sorted(debt, key=lambda x: x["id"])), "unknown_dates": bounded(unknown_dates),
        "date_gaps": bounded(gaps), "gap_days": GAP_DAYS, "dangling": bounded(dangling),
        "unresolved_referents": bounded(sorted(unresolved, key=lambda x: x["id"])),
        "hypotheses_without_counter_evidence": bounded(sorted(no_counter, key=lambda x: x["id"])),
        "withheld_words": bounded(withheld),
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


def _overview(a, report, tier_summary, due, lists, diagnostics):
    live = a.live

    def count(values):
        return dict(sorted(Counter(v or "(none)" for v in values).items()))

    try:
        backup = storage.read_json(paths.backup_state_path(a.root))
    except (FileNotFoundError, ValueError, UnicodeDecodeError):
        backup = None
    last = (backup or {}).get("last_backup_at")
    pending = [{"id": c["id"], "captured_at": c["captured_at"]} for c in a.caps.values() if c["status"] == "pending"]
    problems = diagnostics["validation"]["problems"]
    return {
        "counts": {"records": len(live), "redirected": len(a.recs) - len(live), "by_kind": count(r["kind"] for r in live.values()),
                   "by_layer": count(r.get("layer") for r in live.values()),
                   "by_status": count(r.get("status") for r in live.values()),
                   "captures": len(a.caps), "by_capture_status": count(c["status"] for c in a.caps.values()),
                   "followups": count(r["bucket"] for r in lists["followups"]),
                   "entities": len(lists["entities"]), "hypotheses": len(lists["hypotheses"]),
                   "subjects": len(lists["subjects"]), "sessions": len(lists["sessions"])},
        "words": a.words.counts(),
        "tiers": tier_summary,
        "validation": {"status": report["status"], "errors": report["errors"], "warnings": report["warnings"],
                       "problems": problems["items"][:50], "total_problems": problems["total"]},
        "backup": {"last_backup_at": last, "never": not last},
        "due_followups": due[:20], "due_total": len(due),
        "summary_debt": diagnostics["summary_debt"]["total"],
        "pending_captures": {"total": len(pending), "items": pending[:20]},
    }
