"""Record kinds and field rules (data in resources/schemas/records.json).

Pure: no writes. Used by the writers (refuse a bad record whole) and by
validate_memory (report records that no longer pass).
"""

import functools
from collections import Counter
import json
import re
import os
import unicodedata

from . import credentials, paths, timeutil

ID_RE = paths.ID_RE
ORGANIZING = ("entity", "context")
VERBATIM_FIDELITY = ("verbatim", "ocr", "transcript", "caption")
# What add_record fills in when a record does not say (records._defaults); the indexes leave these
# values out and read a missing one as this.
USUAL = {"sensitivity": "ordinary", "salience_basis": "explicit", "fidelity": "verbatim"}


@functools.lru_cache(maxsize=1)
def rules():
    with open(paths.resources_dir() / "schemas" / "records.json", "rb") as handle:
        return json.loads(handle.read().decode("utf-8"))


def kinds():
    return tuple(rules()["kinds"])


def field_names():
    return tuple(rules()["fields"])


def is_organizing(kind):
    return bool(rules()["kinds"].get(kind, {}).get("organizing"))


def needs_capture(kind):
    """Organizing cards and model guesses (whose evidence is other records) cite no capture of their own."""
    spec = rules()["kinds"].get(kind, {})
    return not (spec.get("organizing") or spec.get("evidence") == "supports")


def is_timeline(kind):
    return bool(rules()["kinds"].get(kind, {}).get("timeline"))


_TYPES = {"string": str, "integer": int, "number": (int, float), "array": list, "array:object": list}


# The fields that hold words (ids, dates and references cannot hold a credential's value).
FREE_TEXT = ("title", "summary", "what_happened", "felt_then", "user_interpretation", "impact", "meaning_now",
             "aliases", "tags", "unresolved_referents", "claim", "question", "expectation", "context", "note")


def check_record(rec):
    """Problems with one record version, as (field, message) pairs; empty means valid."""
    out = []
    rule = rules()
    for name, value in rec.items():
        spec = rule["fields"].get(name)
        if spec is None or value is None:
            continue
        expected = _TYPES[spec[0]]
        if isinstance(value, bool) or not isinstance(value, expected):
            out.append((name, f"must be {spec[0].replace('array:object', 'an array of objects')}"))
            continue
        if spec[0] == "array" and not all(isinstance(v, str) for v in value):
            out.append((name, "must be an array of strings"))
        if spec[0] == "array:object" and not all(isinstance(v, dict) for v in value):
            out.append((name, "must be an array of objects"))
    kind = rec.get("kind")
    if kind not in rule["kinds"]:
        out.append(("kind", f"unknown kind {kind!r}; one of {', '.join(rule['kinds'])}"))
    if not paths.is_id(rec.get("id")):
        out.append(("id", "must be 1-128 characters of lowercase a-z, 0-9, '.', '_' or '-'"))
    if not (rec.get("title") or "").strip():
        out.append(("title", "is required"))
    for name, allowed in rule["enums"].items():
        value = rec.get(name)
        if value is not None and isinstance(value, str) and value not in allowed:
            out.append((name, f"{value!r} is not one of {', '.join(allowed)}"))
    salience = rec.get("salience")
    if isinstance(salience, int) and not isinstance(salience, bool) and not 0 <= salience <= 3:
        out.append(("salience", "must be 0, 1, 2 or 3"))
    confidence = rec.get("confidence")
    if isinstance(confidence, (int, float)) and not isinstance(confidence, bool) and not 0 <= confidence <= 1:
        out.append(("confidence", "must be between 0 and 1"))
    domain = rec.get("domain")
    if isinstance(domain, str) and not paths.is_id(domain):
        out.append(("domain", "must be one of the life branches or a lowercase slug"))
    for name in ("date_start", "date_end"):
        value = rec.get(name)
        if isinstance(value, str) and not _valid_date(value):
            out.append((name, f"{value!r} is not YYYY, YYYY-MM or YYYY-MM-DD"))
    start, end = rec.get("date_start"), rec.get("date_end")
    if isinstance(start, str) and isinstance(end, str) and _valid_date(start) and _valid_date(end) and end[:len(start)] < start[:len(end)]:
        out.append(("date_end", "is before date_start"))
    for name in ("entity_refs", "related_ids", "supports", "contradicts", "supersedes", "capture_ids",
                 "before_ids", "after_ids"):
        for ref in rec.get(name) or ():
            if isinstance(ref, str) and not paths.is_id(ref):
                out.append((name, f"{ref!r} is not a valid id"))
        if isinstance(rec.get(name), list) and rec.get("id") in rec[name]:
            out.append((name, "a record cannot point at itself"))
    for ref in rec.get("verbatim_refs") or ():
        if isinstance(ref, dict):
            if not isinstance(ref.get("capture_id"), str):
                out.append(("verbatim_refs", "each span needs a capture_id"))
            start, end = ref.get("start"), ref.get("end")
            if start is not None or end is not None:
                if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end):
                    out.append(("verbatim_refs", "start/end must be character offsets with 0 <= start < end"))
    if kind == "entity" and rec.get("entity_type") is None:
        out.append(("entity_type", "is required for entities"))
    if kind != "entity" and rec.get("entity_type") is not None:
        out.append(("entity_type", "belongs on entities only"))
    for identity in rec.get("identities") or ():
        if isinstance(identity, dict):
            banned = {"password", "token", "secret", "api_key", "credential"} & {k.lower() for k in identity}
            if banned:
                out.append(("identities", f"never store credentials ({', '.join(sorted(banned))})"))
    for name in FREE_TEXT:
        value = rec.get(name)
        texts = value if isinstance(value, list) else [value]
        if any(isinstance(t, str) and credentials.find(t) for t in texts):
            out.append((name, "gives a password, PIN or key: credentials are never stored"))
    model_only = rule["kinds"].get(kind, {}).get("model_only")
    if model_only and rec.get("layer") not in (None, "model_hypothesis"):
        out.append(("layer", f"{kind} records are model_hypothesis"))
    if not model_only and rec.get("layer") == "model_hypothesis":
        out.append(("layer", "model guesses are hypotheses: use add_hypothesis, never a fact record"))
    fidelity = rec.get("fidelity")
    if fidelity in ("ocr", "transcript", "caption") and not rec.get("attachment_capture_id"):
        out.append(("attachment_capture_id", f"a {fidelity} fragment must name the attachment it was derived from"))
    return out


def _valid_date(value):
    if not timeutil.is_partial_date(value):
        return False
    parts = value.split("-")
    try:
        if len(parts) >= 2 and not 1 <= int(parts[1]) <= 12:
            return False
        if len(parts) == 3:
            timeutil.parse_instant(value)
    except Exception:
        return False
    return True


def cited_captures(rec):
    """Capture ids a record rests on (direct ids, verbatim spans, the attachment of a fragment)."""
    cited = {c for c in rec.get("capture_ids") or () if isinstance(c, str)}
    cited |= {r["capture_id"] for r in rec.get("verbatim_refs") or ()
              if isinstance(r, dict) and isinstance(r.get("capture_id"), str)}
    if isinstance(rec.get("attachment_capture_id"), str):
        cited.add(rec["attachment_capture_id"])
    return cited


def has_source(rec):
    """Does the record point at verbatim words (or admit it does not)?"""
    return bool(rec.get("capture_ids") or rec.get("verbatim_refs") or rec.get("attachment_capture_id"))


def normalized(text):
    """Comparison key: case, width and punctuation folded."""
    text = unicodedata.normalize("NFKC", text or "").casefold()
    return re.sub(r"[\W_]+", "", text)


def similarity(a, b, floor=0.0):
    """Character-bigram Dice coefficient of two normalized strings (0..1, 1 only when equal).

    Below `floor` the exact value does not matter: 0.0 is returned as soon as the
    lengths alone rule the floor out.
    """
    a, b = normalized(a), normalized(b)
    if not a or not b:
        return 0.0
    if a == b:
        return 1.0
    la, lb = max(1, len(a) - 1), max(1, len(b) - 1)
    if 2 * min(la, lb) / (la + lb) < floor:
        return 0.0
    grams_a = Counter(a[i:i + 2] for i in range(la))
    grams_b = Counter(b[i:i + 2] for i in range(lb))
    shared = sum((grams_a & grams_b).values())
    return min(0.99, 2 * shared / (la + lb))


def new_record_id(kind, moment):
    """kind-YYYYMMDD-xxxxxxxx: no words of the record, so its id in a tombstone or the ledger keeps none after forgetting."""
    return f"{kind}-{moment.strftime('%Y%m%d')}-{os.urandom(4).hex()}"
