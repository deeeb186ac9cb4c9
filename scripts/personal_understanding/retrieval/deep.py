"""Deep reads: the user's own words behind selected items, and quote verification."""

from .. import archive, paths
from ..archive_index import open_index
from ..capture import checked_text, read_capture, tampered_note
from ..errors import PuError
from ..records import get_record
from . import rank, trace

MAX_CAPTURE_CHARS = 4000


def _capture_block(ai, capture_id, spans=None):
    row = ai.capture(capture_id)
    if row is None or row.get("status") == "forgotten":
        return {"capture_id": capture_id, "missing": True, "note": "not in the archive (never saved, or forgotten)"}
    doc = read_capture(ai.root, row["path"])
    block = {"capture_id": capture_id, "utf8_sha256": row.get("utf8_sha256"), "captured_at": row.get("captured_at"),
             "occurred_at": row.get("occurred_at"), "speaker": row.get("speaker"), "session_id": row.get("session_id"),
             "path": row["path"]}
    if doc.get("kind") == "attachment":
        block.update(kind="attachment", name=doc.get("name"), media_type=doc.get("media_type"), blob=doc.get("blob"),
                     bytes=doc.get("bytes"))
        return block
    try:
        text = checked_text(ai.root, row["path"], row.get("utf8_sha256"))
    except PuError as exc:
        if exc.code != "CAPTURE_TAMPERED":
            raise
        block.update(tampered_note(row["path"]))
        return block
    if spans:
        block["spans"] = [{"start": s["start"], "end": s["end"], "quote": text[s["start"]:s["end"]]} for s in spans]
        return block
    if len(text) > MAX_CAPTURE_CHARS:
        block.update(text=text[:MAX_CAPTURE_CHARS], partial=True, omitted_chars=len(text) - MAX_CAPTURE_CHARS,
                     hint="Read the rest with {cmd:verify_quote} or from the path above.")
    else:
        block["text"] = text
    return block


def deep(root, ids, mode, budget=4000, capture_id=None, turn_id=None):
    """The verbatim words (or exact spans) behind each id."""
    ai = open_index(root)
    items, used = [], 0
    for item_id in ids:
        paths.check_id(item_id, "id")
        if ai.capture(item_id) is not None:
            entry = {"id": item_id, "kind": "capture", "verbatim": [_capture_block(ai, item_id)]}
        else:
            rec = get_record(ai, item_id)
            if rec is None:
                entry = {"id": item_id, "missing": True}
            elif rec.get("fidelity") == "summary_only":
                entry = {"id": rec["id"], "kind": rec.get("kind"), "title": rec.get("title"), "verbatim": [],
                         "evidence_fidelity": "summary_only",
                         "note": "No verbatim source: this part comes from an old summary, not the user's words."}
            else:
                spans = {}
                for ref in rec.get("verbatim_refs") or ():
                    if ref.get("start") is not None:
                        spans.setdefault(ref["capture_id"], []).append(ref)
                cids = list(dict.fromkeys(list(spans) + list(rec.get("capture_ids") or ())
                                          + ([rec["attachment_capture_id"]] if rec.get("attachment_capture_id") else [])))
                entry = {"id": rec["id"], "kind": rec.get("kind"), "title": rec.get("title"),
                         "evidence_fidelity": rec.get("fidelity") or ("verbatim" if cids else "card"),
                         "verbatim": [_capture_block(ai, c, spans.get(c)) for c in cids]}
                if rec.get("fidelity") in ("ocr", "transcript", "caption"):
                    entry["note"] = f"Derived text ({rec['fidelity']}) of an attachment, not the user's own words."
        cost = sum(rank.estimate_tokens(b.get("text") or "") for b in entry.get("verbatim", ()))
        if items and used + cost > budget:
            entry = {"id": entry["id"], "omitted": True, "note": "over the budget: ask for this id on its own"}
        else:
            used += cost
        items.append(entry)
    trace_id = trace.write(root, {"kind": "deep", "mode": mode, "turn_id": turn_id, "capture_id": capture_id, "ids": list(ids),
                                  "captures": sorted({b["capture_id"] for e in items for b in e.get("verbatim", ())})})
    shown = sum(1 for e in items if not e.get("omitted") and not e.get("missing"))
    omitted = [e["id"] for e in items if e.get("omitted")]
    out = {"level": "deep", "status": "ok" if shown else "no_match", "items": items, "total": len(items), "shown": shown,
           "truncated": bool(omitted), "next_offset": None, "budget": {"tokens": budget, "used": used}, "trace_id": trace_id}
    if omitted:
        out["note"] = "Over the budget: read " + ", ".join(omitted) + " with another deep read."
    return out


def verify_quote(root, capture_id, quote):
    """Exact-substring check of a quotation against a capture, with every offset."""
    archive.require(root)
    paths.check_id(capture_id, "capture id")
    if not quote:
        raise PuError("BAD_ARGUMENT", "quote is empty", "Pass the exact words to look for in {arg:quote}.")
    ai = open_index(root)
    row = ai.capture(capture_id)
    if row is None or row.get("status") == "forgotten":
        raise PuError("CAPTURE_NOT_FOUND", f"no capture {capture_id}",
                      "Check the id: {cmd:retrieve_v2} rows name their capture_ids. A forgotten capture is gone.")
    try:
        text = checked_text(root, row["path"], row.get("utf8_sha256"))
    except PuError as exc:
        if exc.code != "CAPTURE_TAMPERED":
            raise
        return dict(tampered_note(row["path"]), capture_id=capture_id, found=False, offsets=[],
                    utf8_sha256=row.get("utf8_sha256"), captured_at=row.get("captured_at"),
                    occurred_at=row.get("occurred_at"))
    offsets, at = [], text.find(quote)
    while at >= 0:
        offsets.append([at, at + len(quote)])
        at = text.find(quote, at + 1)
    return {"capture_id": capture_id, "found": bool(offsets), "offsets": offsets, "utf8_sha256": row.get("utf8_sha256"),
            "captured_at": row.get("captured_at"), "occurred_at": row.get("occurred_at"),
            "note": "exact match" if offsets else "not found verbatim: do not present it as a quotation"}
