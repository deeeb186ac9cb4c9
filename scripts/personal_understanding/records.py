"""Derived records: add, version chains, state updates, entity merges.

A record is a JSON object in memory/v2/records/<kind>.jsonl. A change appends
a new version of the same id; readers fold to the latest. Every record that
states something about the user cites the captures its words came from;
entity and context cards organize and need no capture of their own.
"""

from . import archive, paths, schema, storage, timeutil
from .archive_index import open_index, title_hash
from .capture import checked_text
from .errors import PuError
from .tiers import check_capacity

SYSTEM_FIELDS = ("version", "created_at", "updated_at", "superseded_by", "redirect_to", "merge_reason",
                 "merged_from", "merged_at", "review")
CLOSED_STATUSES = ("superseded", "archived", "redirected", "rejected", "expired", "forgotten")


def _defaults(rec):
    kind = rec.get("kind")
    model_only = schema.rules()["kinds"].get(kind, {}).get("model_only")
    rec.setdefault("status", "candidate" if model_only else "current")
    rec.setdefault("layer", "model_hypothesis" if model_only else "user_fact")
    rec.setdefault("sensitivity", schema.USUAL["sensitivity"])
    if not schema.is_organizing(kind):
        rec.setdefault("salience", 1)
        rec.setdefault("salience_basis", schema.USUAL["salience_basis"])
    if schema.has_source(rec):
        rec.setdefault("fidelity", schema.USUAL["fidelity"])
    return rec


def _refuse_invalid(rec):
    problems = schema.check_record(rec)
    if problems:
        raise PuError(
            "RECORD_INVALID",
            "record refused: " + "; ".join(f"{field} {msg}" for field, msg in problems),
            "Fix the listed fields; nothing was written.",
            {"problems": [{"field": f, "message": m} for f, m in problems]},
        )


def _check_sources(root, index, rec):
    """Cited captures must exist; spans must lie inside their capture's text."""
    for cid in rec.get("capture_ids") or ():
        row = index.capture(cid)
        if row is None or row["status"] == "forgotten":
            raise PuError("RECORD_CAPTURE_UNKNOWN", f"capture {cid} is not in the archive",
                          "Cite the capture id returned by {cmd:capture_user_update} for this turn.")
    attachment = rec.get("attachment_capture_id")
    if attachment:
        row = index.capture(attachment)
        if row is None or row.get("kind") != "attachment":
            raise PuError("RECORD_CAPTURE_UNKNOWN", f"{attachment} is not an attachment capture",
                          "ocr/transcript/caption fragments point at the attachment they were derived from.")
    spans = []
    for ref in rec.get("verbatim_refs") or ():
        cid = ref["capture_id"]
        row = index.capture(cid)
        if row is None or row["status"] == "forgotten":
            raise PuError("RECORD_CAPTURE_UNKNOWN", f"capture {cid} is not in the archive",
                          "Cite the capture id returned by capture_user_update for this turn.")
        ref = dict(ref)
        if ref.get("start") is not None:
            text = checked_text(root, row["path"], row.get("utf8_sha256"))  # a quote is taken only from intact words
            if ref["end"] > len(text):
                raise PuError("RECORD_SPAN_INVALID", f"span {ref['start']}:{ref['end']} is past the end of {cid} ({len(text)} characters)",
                              "Offsets are in characters of the capture text; check them with {cmd:verify_quote}.")
            quote = text[ref["start"]:ref["end"]]
            if ref.get("quote") is not None and ref["quote"] != quote:
                raise PuError("RECORD_SPAN_INVALID", f"quote does not match {cid}[{ref['start']}:{ref['end']}] ({quote!r})",
                              "Offsets are in characters of the capture text.")
            ref["quote"] = quote
        spans.append(ref)
    if spans:
        rec["verbatim_refs"] = spans


def _dangling(index, rec, pending=()):
    out = []
    for field in ("entity_refs", "related_ids", "supports", "contradicts", "supersedes", "before_ids", "after_ids"):
        for ref in rec.get(field) or ():
            if index.record(ref) is None and ref not in pending:
                out.append(f"{field}: {ref} does not exist (yet)")
    return out


def possible_duplicates(index, rec, limit=30):
    """Current records of the same kind that already say the same thing.

    Candidates share the normalized title or an entity (the most recent few per
    entity), so the cost does not grow with the archive.
    """
    kind, title = rec.get("kind"), rec.get("title", "")
    key = schema.normalized(title)
    summary_key = schema.normalized(rec.get("summary"))
    ids = [r[0] for r in index.db.execute("SELECT id FROM records WHERE kind=? AND title_hash=? LIMIT ?",
                                          (kind, title_hash(title), limit))]
    for ent in rec.get("entity_refs") or ():
        ids += [r[0] for r in index.db.execute(
            "SELECT r.id FROM record_refs f JOIN records r ON r.id=f.record_id "
            "WHERE f.target=? AND f.rel='entity' AND r.kind=? ORDER BY r.updated_at DESC LIMIT ?", (ent, kind, limit))]
    ids = sorted(set(ids) - {rec.get("id")})
    out = []
    for other in index.records_where(f"id IN ({','.join('?' * len(ids))}) ORDER BY id", ids) if ids else ():
        rid, status, other_summary, other_title = other["id"], other.get("status"), other.get("summary"), other.get("title")
        other_key = schema.normalized(other_title if isinstance(other_title, str) else "")
        if status in CLOSED_STATUSES:
            continue
        other_summary = other_summary if isinstance(other_summary, str) else None
        title_sim = 1.0 if other_key == key else schema.similarity(key, other_key, floor=0.8)
        summary_sim = schema.similarity(summary_key, other_summary, floor=0.85) if summary_key and other_summary else 0.0
        # The same words on other dates are another occurrence (a dentist visit in May and one in June).
        exact = (other_key == key and summary_key == schema.normalized(other_summary)
                 and all(rec.get(f) == other.get(f) for f in ("date_start", "date_end")))
        if exact or title_sim >= 0.8 or summary_sim >= 0.85:
            out.append({"id": rid, "kind": kind, "title": other_title, "title_similarity": round(min(title_sim, 1.0), 2),
                        "summary_similarity": round(summary_sim, 2), "exact": exact})
    out.sort(key=lambda d: (-d["exact"], -d["title_similarity"]))
    return out


def _state_conflicts(index, rec):
    """Current states/decisions about the same subject that this one would contradict."""
    if rec["kind"] not in ("state", "decision") or not rec.get("subject_key") or rec.get("supersedes"):
        return []
    mine = set(rec.get("entity_refs") or ())
    out = []
    for other in index.records_where("kind=? AND subject_key=? AND status IN ('current','uncertain')",
                                     (rec["kind"], rec["subject_key"])):
        if set(other.get("entity_refs") or ()) == mine and schema.normalized(other.get("summary") or other["title"]) != \
                schema.normalized(rec.get("summary") or rec["title"]):
            out.append(other)
    return out


def claim(rec):
    """A record as evidence: the claim, its dates and its sources."""
    return {"id": rec["id"], "title": rec.get("title"), "summary": rec.get("summary"),
            "date_start": rec.get("date_start"), "date_end": rec.get("date_end"),
            "recorded_at": rec.get("created_at"), "capture_ids": rec.get("capture_ids") or [],
            "verbatim_refs": [{"capture_id": r.get("capture_id"), "quote": r.get("quote")} for r in rec.get("verbatim_refs") or ()]}


def new_version(old, moment, **changes):
    rec = dict(old)
    rec.update(changes)
    rec["version"] = old["version"] + 1
    rec["updated_at"] = moment
    return rec


def append_versions(root, versions):
    """Append record versions, grouped per kind file. Caller holds the lock."""
    check_capacity(root, sum(len(storage.dumps_line(v).encode("utf-8")) + 1 for v in versions))
    by_kind = {}
    for rec in versions:
        by_kind.setdefault(rec["kind"], []).append(rec)
    for kind, recs in by_kind.items():
        storage.append_jsonl(root, paths.records_path(root, kind), recs)


def prepare(root, index, fields, moment, allow_duplicate=False, pending=()):
    """Validate and complete a new record. Returns (record, extra versions, report). Writes nothing.

    `pending`: ids of records about to be written in the same batch (references to them are not dangling).
    """
    rec = {k: v for k, v in fields.items() if v is not None and k not in SYSTEM_FIELDS}
    if not rec.get("kind"):
        raise PuError("RECORD_INVALID", "record refused: kind is required", f"One of {', '.join(schema.kinds())}.")
    if rec.get("id") is None and rec.get("kind") in schema.kinds():
        rec["id"] = paths.fresh_id(lambda: schema.new_record_id(rec["kind"], moment),
                                   lambda rid: index.record(rid) is not None or index.tombstoned(rid))
    _defaults(rec)
    _refuse_invalid(rec)
    if schema.needs_capture(rec["kind"]) and not schema.has_source(rec) and rec.get("fidelity") != "summary_only":
        raise PuError(
            "RECORD_NEEDS_SOURCE",
            f"a {rec['kind']} record must cite the capture its words came from",
            "Pass {arg:capture_ids} (or {arg:verbatim_refs} spans). Only legacy material without words may be stored as "
            "fidelity summary_only, and it is counted as summary debt.",
        )
    if index.record(rec["id"]) is not None or index.tombstoned(rec["id"]):
        raise PuError("RECORD_ID_EXISTS", f"record id {rec['id']} is already used", "Pick another id, or omit it to have one generated.")
    _check_sources(root, index, rec)
    report = {"possible_duplicates": possible_duplicates(index, rec), "warnings": _dangling(index, rec, pending)}
    replaced = set(rec.get("supersedes") or ())  # a correction says the same as the record it replaces
    exact = [d for d in report["possible_duplicates"] if d["exact"] and d["id"] not in replaced]
    if exact and not allow_duplicate:
        raise PuError(
            "RECORD_DUPLICATE",
            f"{exact[0]['id']} already records exactly this ({exact[0]['title']!r})",
            f"Close the capture with no-derivation-needed, reason 'already covered by {exact[0]['id']}', or pass {{arg:allow_duplicate=true}}.",
            {"duplicate_of": exact[0]["id"]},
        )
    extra = []
    conflicts = _state_conflicts(index, rec)
    if conflicts:
        rec["status"] = "uncertain"
        rec["contradicts"] = sorted(set(rec.get("contradicts") or ()) | {c["id"] for c in conflicts})
        report["conflict"] = {
            "new": claim(rec), "current": [claim(c) for c in conflicts],
            "hint": "Both claims are kept. Ask the user which holds now (quote both with their dates); then "
                    "change the one that changed with {cmd:update_state}.",
        }
    stamp = timeutil.iso(moment)
    rec.update(version=1, created_at=stamp, updated_at=stamp)
    for old_id in rec.get("supersedes") or ():
        old = index.record(old_id)
        if old is not None and old.get("status") not in ("superseded",):
            extra.append(new_version(old, stamp, status="superseded", superseded_by=rec["id"]))
    return rec, extra, report


def _result(index, rec, extra, report, notice):
    out = {"id": rec["id"], "record": rec, "possible_duplicates": report["possible_duplicates"],
           "warnings": report["warnings"],
           "links": {"capture_ids": sorted(set(rec.get("capture_ids") or ()) |
                                           {r["capture_id"] for r in rec.get("verbatim_refs") or ()})},
           "superseded": [e["id"] for e in extra if e.get("status") == "superseded"]}
    out["links"]["ledger"] = {cid: (index.capture(cid) or {}).get("status") for cid in out["links"]["capture_ids"]}
    if "conflict" in report:
        out["conflict"] = report["conflict"]
    if notice:
        out["warnings"] = out["warnings"] + [notice["message"]]
    return out


def add_record(root, allow_duplicate=False, now=None, **fields):
    """Add one derived record (refused whole when any rule fails)."""
    archive.require(root)
    if schema.rules()["kinds"].get(fields.get("kind"), {}).get("model_only"):
        raise PuError("RECORD_USE_ADD_HYPOTHESIS", f"{fields['kind']} records are model guesses",
                      "Use {cmd:add_hypothesis}: it checks the supporting evidence and keeps the guess apart from facts.")
    moment = now or timeutil.now()
    with storage.archive_lock(root, "add_record") as notice:
        index = open_index(root)
        rec, extra, report = prepare(root, index, fields, moment, allow_duplicate)
        append_versions(root, [rec] + extra)
        index.refresh()
        return _result(index, rec, extra, report, notice)


DATE_FIELDS = ("date_start", "date_end", "date_precision", "date_basis")


def _said_date(index, capture_ids):
    """Date fields for a change said in these captures: the day the latest of them was said (as lived)."""
    said = []
    for cid in capture_ids if isinstance(capture_ids, list) else ():
        row = (index.capture(cid) if isinstance(cid, str) else None) or {}
        stamp = row.get("occurred_at") or row.get("captured_at")
        if stamp:
            said.append((timeutil.parse_instant(stamp), stamp))
    if not said:
        return {}
    return {"date_start": max(said)[1][:10], "date_precision": "day", "date_basis": "source"}


def update_state(root, id, capture_ids, now=None, **changes):
    """Supersede a current state or decision with a new version that cites the new words.

    Without a date_start the new version is dated by when its words were said, never by the old version.
    """
    archive.require(root)
    paths.check_id(id, "record id")
    moment = now or timeutil.now()
    with storage.archive_lock(root, "update_state") as notice:
        index = open_index(root)
        rec, extra, report = prepare_update(root, index, id, capture_ids, moment, changes)
        append_versions(root, [rec] + extra)
        index.refresh()
        return _result(index, rec, extra, report, notice)


def prepare_update(root, index, id, capture_ids, moment, changes, pending=()):
    """Validate and build the superseding version of a state or decision. Writes nothing."""
    if not capture_ids:
        raise PuError("RECORD_NEEDS_SOURCE", "an update needs the capture of the words that changed it", "Pass {arg:capture_ids}.")
    old = index.record(id)
    if old is None or old.get("kind") not in ("state", "decision"):
        raise PuError("STATE_NOT_FOUND", f"{id} is not a state or decision record",
                      "{cmd:update_state} changes states and decisions in place; to correct another kind of record, "
                      "add a new record that names it in {arg:supersedes} ({cmd:add_record}).")
    if old.get("status") not in ("current", "uncertain"):
        successor = old.get("superseded_by")
        raise PuError("STATE_NOT_CURRENT", f"{id} is {old.get('status')}" + (f"; its current version is {successor}" if successor else ""),
                      "Update the current record of the chain.", {"current_id": successor})
    fields = {k: v for k, v in old.items() if k not in SYSTEM_FIELDS + ("id", "status", "capture_ids", "verbatim_refs",
                                                                       "supersedes", "contradicts", "fidelity")
              + DATE_FIELDS}
    if not any(changes.get(k) for k in DATE_FIELDS):  # never the old version's dates
        fields.update(_said_date(index, capture_ids))
    fields.update({k: v for k, v in changes.items() if v is not None})
    fields.update(capture_ids=capture_ids, supersedes=[id], status="current")
    rec, extra, report = prepare(root, index, fields, moment, allow_duplicate=True, pending=pending)
    older = (rec.get("date_start") and old.get("date_start") and
             rec["date_start"][:len(old["date_start"])] < old["date_start"][:len(rec["date_start"])])
    if older:  # words about an earlier time do not replace what is known to be true later
        rec.update(status="uncertain", supersedes=[], contradicts=[id])
        extra = []
    changed = schema.normalized((rec.get("title") or "") + (rec.get("summary") or "")) != \
        schema.normalized((old.get("title") or "") + (old.get("summary") or ""))
    if changed or older:
        report["conflict"] = {
            "previous": claim(old), "new": claim(rec), "superseded": not older,
            "hint": ("The new words describe an earlier time than the current state; both are kept, nothing replaced. Ask the user."
                     if older else
                     "The earlier claim stays readable as superseded. If the user did not say it changed, ask: "
                     "'earlier (date, source) you said X; now Y: did it change, or was the earlier note wrong?'"),
        }
    return rec, extra, report


def merge_entities(root, from_id, into, reason, capture_ids=None, now=None):
    """Redirect one entity to its canonical twin; every reference then resolves to it."""
    archive.require(root)
    paths.check_id(from_id, "entity id")
    paths.check_id(into, "entity id")
    if not (reason or "").strip():
        raise PuError("MERGE_REASON_REQUIRED", "a merge needs a reason", "Say why these are the same, e.g. 'user: 老妈 and 妈妈 are the same person'.")
    stamp = timeutil.iso(now or timeutil.now())
    with storage.archive_lock(root, "merge_entities") as notice:
        index = open_index(root)
        old, target = index.record(from_id), index.record(into)
        for rid, rec in ((from_id, old), (into, target)):
            if rec is None or rec.get("kind") != "entity":
                raise PuError("ENTITY_NOT_FOUND", f"{rid} is not an entity", "Both ids must name entity records ({cmd:catalog_context} lists who is who); nothing was merged.")
        if old.get("status") == "redirected":
            raise PuError("ENTITY_ALREADY_MERGED", f"{from_id} already redirects to {old.get('redirect_to')}", "It was merged before; merge its canonical entity instead, if that is what you mean.")
        canonical = index.resolve(into)
        if canonical == from_id or from_id == into:
            raise PuError("MERGE_CYCLE", f"merging {from_id} into {into} would make a redirect cycle", "The target already redirects (directly or through others) to the entity being merged; merge the other way round.")
        target = index.record(canonical)
        aliases = list(dict.fromkeys((target.get("aliases") or []) + [old.get("title")] + (old.get("aliases") or [])))
        aliases = [a for a in aliases if a and a != target.get("title")]
        versions = [
            new_version(old, stamp, status="redirected", redirect_to=canonical, merge_reason=reason.strip(),
                        merged_at=stamp, **({"merge_capture_ids": capture_ids} if capture_ids else {})),
            new_version(target, stamp, aliases=aliases, merged_from=sorted(set((target.get("merged_from") or []) + [from_id]))),
        ]
        append_versions(root, versions)
        index.refresh()
        referrers = index.referrers(from_id, "entity")
    out = {"from": from_id, "into": canonical, "reason": reason.strip(), "aliases": aliases,
           "references_resolved": len(referrers), "redirect": {"old_id": from_id, "canonical_id": canonical}}
    if notice:
        out["warnings"] = [notice["message"]]
    return out


def get_record(index, record_id):
    """The latest version, following redirects, with computed time neighbours."""
    canonical = index.resolve(record_id)
    rec = index.record(canonical)
    if rec is None or rec.get("status") == "forgotten":  # forgotten, or withheld while its forgetting finishes
        return None
    rec = dict(rec)
    if canonical != record_id:
        rec["redirected_from"] = record_id
    if schema.is_timeline(rec.get("kind")) and rec.get("date_start"):
        # Row values let SQLite walk the (date_start, id) index from this record outwards.
        spine = "kind IN ('event','state','decision') AND status NOT IN ('redirected','forgotten')"
        before = index.db.execute(
            f"SELECT id FROM records INDEXED BY records_date WHERE date_start IS NOT NULL AND (date_start, id) < (?, ?) AND {spine} "
            "ORDER BY date_start DESC, id DESC LIMIT 1", (rec["date_start"], rec["id"])).fetchone()
        after = index.db.execute(
            f"SELECT id FROM records INDEXED BY records_date WHERE date_start IS NOT NULL AND (date_start, id) > (?, ?) AND {spine} "
            "ORDER BY date_start, id LIMIT 1", (rec["date_start"], rec["id"])).fetchone()
        rec["before_ids"] = sorted(set(rec.get("before_ids") or ()) | ({before[0]} if before else set()))
        rec["after_ids"] = sorted(set(rec.get("after_ids") or ()) | ({after[0]} if after else set()))
    return rec
