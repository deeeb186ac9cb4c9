"""How recalled items are shown: compact rows that end at the user's own words."""

import re

from ..capture import checked_text, tampered_note
from ..errors import PuError
from .knowledge import WORK_TITLE
from .tokenizer import stem

SUMMARY_CHARS = 200
SNIPPET_CHARS = 160


def _short(text, limit):
    text = text or ""
    return text if len(text) <= limit else text[:limit - 1] + "…"


def fidelity_of(rec):
    if rec.get("fidelity") == "summary_only":
        return "summary_only"
    if rec.get("capture_ids") or rec.get("verbatim_refs") or rec.get("attachment_capture_id"):
        return rec.get("fidelity") or "verbatim"
    return "card"


def build_row(ai, rec):
    """A record as a recall row: what it says, when, how sure, and which words back it."""
    row = {
        "id": rec["id"], "kind": rec.get("kind"), "title": rec.get("title"),
        "summary": _short(rec.get("summary"), SUMMARY_CHARS), "status": rec.get("status"),
        "layer": rec.get("layer"), "salience": rec.get("salience"), "domain": rec.get("domain"),
        "date": {k: rec[k] for k in ("date_start", "date_end", "date_precision", "phase") if rec.get(k)},
        "capture_ids": sorted(set(rec.get("capture_ids") or ()) | {r.get("capture_id") for r in rec.get("verbatim_refs") or ()}),
        "evidence_fidelity": fidelity_of(rec),
    }
    if rec.get("kind") == "entity":
        row["entity_type"] = rec.get("entity_type")
        row["aliases"] = rec.get("aliases") or []
    if rec.get("redirected_from"):
        row["redirected_from"] = rec["redirected_from"]
    if row["evidence_fidelity"] == "summary_only":
        row["note"] = "This comes from an old summary, not the user's words."
    quotes = [r.get("quote") for r in rec.get("verbatim_refs") or () if r.get("quote")]
    if quotes:
        row["quotes"] = [_short(q, SNIPPET_CHARS) for q in quotes[:3]]
    if rec.get("status") == "superseded" and rec.get("superseded_by"):
        successor = ai.record(rec["superseded_by"]) or {}
        row["successor"] = {"id": successor.get("id"), "title": successor.get("title"), "status": successor.get("status"),
                            "date_start": successor.get("date_start")}
    links = {k: rec[k] for k in ("supports", "contradicts", "supersedes", "before_ids", "after_ids") if rec.get(k)}
    if links:
        row["links"] = links  # where to walk next: evidence chains and time neighbours
    return row


def hypothesis_stub(rec):
    """Hypotheses the query did not hit show only that they exist."""
    return {"id": rec["id"], "kind": rec.get("kind"), "status": rec.get("status"), "confidence": rec.get("confidence"),
            "stub": True, "evidence_fidelity": "model_hypothesis", "title": None, "summary": None}


def snippet(text, terms, limit=SNIPPET_CHARS):
    """A window of the capture around the longest matched term, else its start."""
    text = text or ""
    if len(text) <= limit:
        return text
    lower = text.casefold()
    words = said_as(lower, terms)  # an English term as a whole word: "eat" is not in "threatened"
    at = -1
    for term in sorted(terms or (), key=len, reverse=True):
        needle = "《" if term == WORK_TITLE else term  # a title in 《》: where the first one opens
        at = words[term][0] if term in words else -1 if term.isascii() else lower.find(needle)
        if at >= 0:
            break
    start = max(0, min(at - limit // 3, len(text) - limit)) if at >= 0 else 0
    piece = text[start:start + limit]
    return ("…" if start else "") + piece + ("…" if start + limit < len(text) else "")


_LATIN_WORD = re.compile(r"[a-z][a-z']*")


def said_as(text, terms):
    """{term: (offset, word)}: for each English index term, the first word of the text that stems to it
    (bought for buy, retirement for retir), as the text has it, case-folded and without a possessive 's."""
    latin = {t for t in terms or () if t.isascii()}
    found = {}
    if latin:
        for m in _LATIN_WORD.finditer(text.casefold()):
            term = stem(m.group())
            if term in latin and term not in found:
                word = m.group()
                found[term] = (m.start(), word[:-2] if word.endswith("'s") else word)
                if len(found) == len(latin):
                    break
    return found


def capture_row(ai, capture_id, terms=()):
    row = ai.capture(capture_id) or {}
    fidelity, extra = "verbatim", {}
    try:
        text = checked_text(ai.root, row["path"], row.get("utf8_sha256"))
    except PuError as exc:
        text = ""
        if exc.code == "CAPTURE_TAMPERED":
            fidelity, extra = "tampered", tampered_note(row["path"])
        elif exc.code == "CAPTURE_NOT_TEXT":
            fidelity = "attachment"
    except KeyError:
        text = ""
    out = {
        "id": capture_id, "kind": "capture", "title": None, "snippet": snippet(text, terms),
        "speaker": row.get("speaker"), "occurred_at": row.get("occurred_at"), "captured_at": row.get("captured_at"),
        "session_id": row.get("session_id"), "source": row.get("source"), "source_ref": row.get("source_ref"),
        "capture_ids": [capture_id], "evidence_fidelity": fidelity, "utf8_sha256": row.get("utf8_sha256"),
        "derived_records": ai.records_citing(capture_id)[:10],
    }
    if extra:
        out.update(path=extra["path"], note=extra["note"])
    return out
