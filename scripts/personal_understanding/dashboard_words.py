"""The dashboard's side of the words: captures as they were said, sources, sessions, search text.

Every capture's words are read through `capture.checked_text`, which serves them only
while they still match their registered SHA-256 (an attachment's bytes through `verify_capture`). A capture is placed in time by
when it was said (`occurred_at`, in the offset it was given in; else the moment
it was saved, `captured_at`); "saved" always means `captured_at`.
"""

import os

from . import paths, timeutil
from .capture import checked_text, read_capture, verify_capture
from .errors import PuError

WORDS_CHARS = 50_000  # the words of one capture kept for its page and for search
SNIPPET_CHARS = 240  # the words shown in a list row
NEIGHBOUR_CHARS = 80  # the words of the previous and next message on a capture's page
SESSION_ROWS = 2000  # rows in one session's page
SEARCH_CHUNK_CHARS = 250_000  # text per search file (CJK: about 750 kB)
PREVIEW_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp", "image/avif")
# Record fields searched, in the order a match is reported.
RECORD_FIELDS = ("title", "aliases", "summary", "claim", "question", "what_happened", "felt_then", "user_interpretation",
                 "impact", "meaning_now", "mechanism", "alternatives", "scope", "tags")
FIELD_SEP, DOC_SEP = "\u001f", "\u001e"


def cut(text, n):
    text = text or ""
    return text if len(text) <= n else text[:n - 1] + "…"


def said_of(cap):
    return cap.get("occurred_at") or cap.get("captured_at")


def instant_key(stamp):
    """A time as sortable UTC text ('' when absent or unreadable)."""
    if not stamp:
        return ""
    try:
        return timeutil.iso(timeutil.parse_instant(stamp))
    except PuError:
        return str(stamp)


class Words:
    """The archive's captures, their words read once and verified, placed in said-order."""

    def __init__(self, root, caps):
        self.root, self.caps, self._docs, self.problems = root, caps, {}, {}
        self.key = {cid: instant_key(said_of(c)) for cid, c in caps.items()}
        # messages said at the same moment (an import's session) keep the order they were registered in
        self.order = sorted(caps, key=lambda c: (self.key[c], caps[c].get("line") or 0, c))
        try:
            self.pipeline_pages = {n[:-5] for n in os.listdir(paths.views_dir(root) / "pipeline") if n.endswith(".html")}
        except OSError:
            self.pipeline_pages = set()

    def doc(self, cid):
        """The capture's document with its words checked (None when missing, unreadable or changed)."""
        if cid not in self._docs:
            cap, doc = self.caps.get(cid), None
            try:
                if cap and cap["kind"] == "attachment":
                    doc = read_capture(self.root, cap["path"])
                    if not verify_capture(self.root, cap["path"], cap["sha256"]):
                        doc, self.problems[cid] = None, "CAPTURE_TAMPERED"
                elif cap:
                    # the words come only from checked_text, the one read that checks them against their SHA-256
                    doc = dict(read_capture(self.root, cap["path"]), text=checked_text(self.root, cap["path"], cap["sha256"]))
            except PuError as exc:
                doc, self.problems[cid] = None, exc.code
            self._docs[cid] = doc
        return self._docs[cid]

    def text(self, cid):
        """The words (an attachment as its name), or None when missing, unreadable or changed."""
        doc = self.doc(cid)
        if doc is None:
            return None
        return f"[attachment {doc.get('name')}]" if doc.get("kind") == "attachment" else doc.get("text")

    def role(self, cid):
        doc, cap = self.doc(cid) or {}, self.caps.get(cid) or {}
        return doc.get("role") or ("user" if (cap.get("speaker") or "user") == "user" else "other")

    def said(self, cid):
        return said_of(self.caps[cid]) if cid in self.caps else None

    def latest_said(self, cids):
        """When the last of these captures was said (None when none is in the archive)."""
        known = [c for c in cids if c in self.caps]
        return self.said(max(known, key=lambda c: self.key[c])) if known else None

    # --- rows and pages --------------------------------------------------------------

    def _brief(self, cid, chars=SNIPPET_CHARS):
        cap = self.caps[cid]
        return {"id": cid, "said": self.said(cid), "speaker": cap["speaker"], "role": self.role(cid),
                "words": cut(self.text(cid), chars)}

    def source_rows(self, tier_of, cited_by):
        """Every capture, newest first by when it was said."""
        rows = []
        for cid in reversed(self.order):
            cap, doc = self.caps[cid], self.doc(cid) or {}
            row = dict(self._brief(cid), saved=cap["captured_at"], kind=cap["kind"], tier=tier_of.get(cid),
                       status=cap["status"], records=len(cited_by.get(cid, ())), session_id=cap["session_id"],
                       turn_id=cap["turn_id"], withheld=self.problems.get(cid))
            if cap["kind"] == "attachment":
                row.update(name=doc.get("name"), media_type=doc.get("media_type"), bytes=doc.get("bytes"))
            rows.append(row)
        return rows

    def sessions(self):
        """{session id: [capture ids in said-order]}; sets each capture's place in its session (else the archive)."""
        out = {}
        for cid in self.order:
            if self.caps[cid]["session_id"]:
                out.setdefault(self.caps[cid]["session_id"], []).append(cid)
        self.place = {cid: i for i, cid in enumerate(self.order)}
        for cids in out.values():
            self.place.update((cid, i) for i, cid in enumerate(cids))
        return out

    def session_rows(self, sessions):
        """Sessions, the one said last first."""
        rows = []
        for sid, cids in sorted(sessions.items(), key=lambda kv: (self.key[kv[1][-1]], kv[0]), reverse=True):
            roles = [self.role(c) for c in cids]
            rows.append({"id": sid, "first_said": self.said(cids[0]), "last_said": self.said(cids[-1]),
                         "captures": len(cids), "user": roles.count("user"), "other": roles.count("other"),
                         "speakers": sorted({self.caps[c]["speaker"] or "" for c in cids})[:8]})
        return rows

    def session_item(self, sid, cids):
        return {"id": sid, "total": len(cids), "captures": [self._brief(c) for c in cids[:SESSION_ROWS]]}

    def capture_item(self, cid, sessions, tier_of, cited_by, recs, fus_by_capture, label):
        cap = self.caps[cid]
        doc = self.doc(cid) or {}
        out = {k: v for k, v in cap.items() if k != "line"}
        out.update(said=self.said(cid), saved=cap["captured_at"], role=self.role(cid), tier=tier_of.get(cid),
                   records=sorted(cited_by.get(cid, ())))
        out["refs"] = {r: (label(recs[r]) if r in recs else None) for r in out["records"]}
        out["followups"] = fus_by_capture.get(cid, [])
        if cid in self.problems:
            out.update(text=None, missing=True, withheld=self.problems[cid])
        elif cap["kind"] == "attachment":
            blob = paths.inside_root(self.root, doc["blob"])
            media = doc.get("media_type") or "application/octet-stream"
            out["attachment"] = {"name": doc.get("name"), "media_type": media, "bytes": doc.get("bytes"),
                                 "href": os.path.relpath(blob, paths.views_dir(self.root) / "dashboard").replace(os.sep, "/"),
                                 "preview": media in PREVIEW_TYPES}
            out["text"] = None
        else:
            text = doc.get("text") or ""
            out["text"] = text[:WORDS_CHARS]
            out["omitted_chars"] = max(0, len(text) - WORDS_CHARS)
        sid = cap["session_id"]
        scope = sessions.get(sid) if sid else self.order
        at = self.place[cid]
        out["position"] = {"scope": "session" if sid else "archive", "index": at + 1, "total": len(scope),
                           "previous": self._brief(scope[at - 1], NEIGHBOUR_CHARS) if at else None,
                           "next": self._brief(scope[at + 1], NEIGHBOUR_CHARS) if at + 1 < len(scope) else None}
        if cap["turn_id"] and cap["turn_id"] in self.pipeline_pages:
            out["pipeline"] = f"../pipeline/{cap['turn_id']}.html"
        return out

    def counts(self):
        """Captures and characters of the user's own words apart from other speakers'."""
        out = {"user": {"captures": 0, "chars": 0}, "other": {"captures": 0, "chars": 0}, "attachments": 0, "withheld": 0}
        for cid, cap in self.caps.items():
            if cap["kind"] == "attachment":
                out["attachments"] += 1
                continue
            side = out[self.role(cid)]
            side["captures"] += 1
            side["chars"] += cap["chars"] or 0
        out["withheld"] = len(self.problems)
        return out

    # --- search text -------------------------------------------------------------------

    def search_docs(self):
        docs = []
        for cid in reversed(self.order):
            text = self.text(cid)
            if text:
                docs.append((["c", cid, self.caps[cid]["kind"], self.caps[cid]["speaker"], self.said(cid), ["words"], [],
                              self.role(cid)], [text[:WORDS_CHARS]]))
        return docs


def record_search_doc(rec, kind, when, links):
    fields, values = [], []
    for name in RECORD_FIELDS:
        value = rec.get(name)
        if isinstance(value, list):
            value = " · ".join(str(v) for v in value if isinstance(v, str))
        if isinstance(value, str) and value.strip():
            fields.append(name)
            values.append(value)
    return (["r", rec["id"], kind, rec.get("title"), when, fields, links, None], values) if values else None


def followup_search_doc(item, bucket):
    fields, values = [], []
    for name, value in (("question", item.get("question")), ("context", item.get("context")),
                        ("expectation", item.get("expectation")), ("resolution", (item.get("resolution") or {}).get("note"))):
        if isinstance(value, str) and value.strip():
            fields.append(name)
            values.append(value)
    return (["f", item["id"], bucket, item.get("question"), item.get("due_at"), fields,
             [item["capture_id"]] if item.get("capture_id") else [], None], values) if values else None


def search_chunks(docs):
    """Docs as files of about SEARCH_CHUNK_CHARS: {docs, text}; the page scans the text as one string.

    A doc's fields are joined by FIELD_SEP and docs by DOC_SEP (neither can occur in a query).
    """
    chunks, current, parts, size = [], [], [], 0
    for head, values in docs:
        body = FIELD_SEP.join(v.replace(FIELD_SEP, " ").replace(DOC_SEP, " ") for v in values)
        if current and size + len(body) > SEARCH_CHUNK_CHARS:
            chunks.append((current, parts))
            current, parts, size = [], [], 0
        current.append(head)
        parts.append(body)
        size += len(body) + 1
    if current:
        chunks.append((current, parts))
    return [{"docs": heads, "text": DOC_SEP.join(bodies)} for heads, bodies in chunks]
