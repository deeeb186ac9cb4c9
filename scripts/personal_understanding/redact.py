"""What forgetting takes out of derived text. Pure: no files.

Derived text (a record's summary, a follow-up's question, a trace's query) may
repeat the forgotten words. A *quoted run* is a stretch of a derived string
that repeats the forgotten capture's text: at least 4 CJK characters in a row,
or 3 words, or a mix of the same weight (punctuation and spacing between them
do not break a run; case does not matter). A run that the record's remaining
sources also contain is kept: those words were said again, elsewhere. A derived
text that paraphrases without repeating is not detected here; the dry run lists
every record that cited the capture so the user can forget those too.
"""

import re

REDACTED = "[forgotten]"

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_UNIT = re.compile(rf"([{_CJK}])|[^\W_{_CJK}]+")
_CJK_WEIGHT, _WORD_WEIGHT, _RUN_WEIGHT = 3, 4, 12  # 4 CJK characters, or 3 words
QUERY_RUN_WEIGHT = 9  # a search is short: 3 CJK characters, or 3 words, of the forgotten words are enough
# Keys whose values are ids, hashes, codes or times: never words anyone said.
STRUCTURAL_KEYS = frozenset({
    "id", "kind", "version", "status", "capture_id", "capture_ids", "entity_refs", "related_ids", "supports",
    "contradicts", "supersedes", "superseded_by", "redirect_to", "turn_id", "session_id", "trace_id", "record_ids",
    "created_at", "updated_at", "at", "captured_at", "occurred_at", "due_at", "date_start", "date_end", "sha256",
    "utf8_sha256", "message_sha256", "layer", "fidelity", "sensitivity", "salience_basis", "type", "event",
    "disposition", "channel", "mode", "code", "selected", "ids", "seeds", "start", "end",
})


def _units(text):
    return [(m.group().casefold(), m.start(), m.end(), _CJK_WEIGHT if m.group(1) else _WORD_WEIGHT)
            for m in _UNIT.finditer(text)]


class Source:
    """The forgotten words, prepared for finding runs of them in other strings."""

    def __init__(self, text, keep=()):
        units = _units(text or "")
        self.words = [u[0] for u in units]
        self.at = {}
        for i, word in enumerate(self.words):
            self.at.setdefault(word, []).append(i)
        self.keep = ["\x00" + "\x00".join(u[0] for u in _units(k or "")) + "\x00" for k in keep]

    def with_keep(self, keep):
        """The same source, keeping runs that any of `keep` (texts still in the archive) also contains."""
        other = Source.__new__(Source)
        other.words, other.at = self.words, self.at
        other.keep = ["\x00" + "\x00".join(u[0] for u in _units(k or "")) + "\x00" for k in keep]
        return other

    def runs(self, text, least=_RUN_WEIGHT):
        """(start, end) character spans of `text` that quote the source (runs of at least `least`)."""
        if not self.words or not isinstance(text, str) or not text:
            return []
        units = _units(text)
        spans, i = [], 0
        while i < len(units):
            best = 0
            for j in self.at.get(units[i][0], ()):
                n = 0
                while i + n < len(units) and j + n < len(self.words) and units[i + n][0] == self.words[j + n]:
                    n += 1
                best = max(best, n)
            run = units[i:i + best]
            if best and sum(u[3] for u in run) >= least:
                joined = "\x00" + "\x00".join(u[0] for u in run) + "\x00"
                if not any(joined in kept for kept in self.keep):
                    spans.append((run[0][1], run[-1][2]))
                i += best
            else:
                i += 1
        return spans

    def redact(self, text):
        """(new text, [removed phrases]); the text unchanged when it quotes nothing."""
        spans = self.runs(text)
        if not spans:
            return text, []
        out, removed, last = [], [], 0
        for start, end in spans:
            out.append(text[last:start])
            out.append(REDACTED)
            removed.append(text[start:end])
            last = end
        out.append(text[last:])
        return "".join(out), removed


def scrub(value, source, removed=None, key=None):
    """A copy of a JSON value with every quoted run redacted (ids, hashes and times untouched)."""
    if isinstance(value, str):
        if key in STRUCTURAL_KEYS:
            return value
        new, gone = source.redact(value)
        if removed is not None:
            removed.extend(gone)
        return new
    if isinstance(value, list):
        return [scrub(v, source, removed, key) for v in value]
    if isinstance(value, dict):
        return {k: scrub(v, source, removed, k) for k, v in value.items()}
    return value


def phrases_in(text, phrases):
    """Does `text` contain any of the (casefolded) phrases?"""
    folded = text.casefold() if isinstance(text, str) else ""
    return any(p.casefold() in folded for p in phrases if p)


# --- the fixed redactions: items raised by the forgotten words ------------------

def receipt(obj):
    """A turn receipt without the snippets of its message."""
    obj = dict(obj)
    for key in ("reasons", "reasons_suppressed", "vetoed"):
        if isinstance(obj.get(key), list):
            obj[key] = [dict(r, evidence=REDACTED) if isinstance(r, dict) and r.get("evidence") not in (None, REDACTED)
                        else r for r in obj[key]]
    return obj


def followup(obj, raised, answered):
    """A follow-up without the forgotten words: all of its own when they raised it, the answer's note
    when they answered it. Dates, status and ids stay."""
    obj = dict(obj)
    if raised:
        for key in ("question", "context", "expectation"):
            if isinstance(obj.get(key), str):
                obj[key] = REDACTED
    res = obj.get("resolution")
    if answered and isinstance(res, dict):
        obj["resolution"] = dict(res, capture_id=None, note=REDACTED if isinstance(res.get("note"), str) else res.get("note"))
    return obj
