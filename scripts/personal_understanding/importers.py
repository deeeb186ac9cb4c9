"""Parsers that turn conversation-history files into one neutral list of `Message`.

Pure: each parser reads the one file it is given and writes nothing. A file that is
malformed anywhere is refused whole by default, naming the line (or sample, session,
message) and saying that nothing was imported; with skip_invalid the invalid lines
are left out and listed, and the rest is imported. A file whose overall shape is
wrong (not JSON, not a list) is always refused whole. Dates are read in the forms
importdates.py lists. Text is
kept exactly as the source has it; the only changes are the ones the format's own
encoding needs (JSON escapes, a UTF-8 byte-order mark, CRLF line ends in plain text).
"""

import dataclasses
import hashlib
import json
import os
import re

from . import inputs
from .errors import PuError, usage
# normalize_time and parse_locomo_datetime keep their old names here for callers of this module.
from .importdates import normalize_iso as normalize_time, parse_locomo as parse_locomo_datetime, parse_when  # noqa: F401
from .importdates import moment as moment_of

FORMATS = ("jsonl", "locomo", "chatgpt", "text", "whatsapp", "telegram")
DATE_ORDERS = ("dmy", "mdy")
ROLES = ("user", "other")


@dataclasses.dataclass(frozen=True)
class Message:
    ref: str
    speaker: str
    role: str
    text: str
    occurred_at: "str | None" = None
    session_id: "str | None" = None
    meta: dict = dataclasses.field(default_factory=dict)

    def to_dict(self):
        return dataclasses.asdict(self)


def parse(fmt, path, *, user_speaker=None, sample_ids=None, max_bytes=0, date_order=None):
    """Parse `path` as `fmt` (one of FORMATS) into a list of Message, in source order; refused whole if anything is invalid.

    `user_speaker` names the archive's owner (role "user"); every other speaker is "other".
    `sample_ids` (locomo only) keeps just those samples. A file over `max_bytes` (0: no cap) is refused.
    `date_order` (whatsapp only: dmy or mdy) reads numeric dates whose order the file does not tell.
    """
    return parse_report(fmt, path, user_speaker=user_speaker, sample_ids=sample_ids, max_bytes=max_bytes,
                        date_order=date_order)[0]


def parse_report(fmt, path, *, user_speaker=None, sample_ids=None, skip_invalid=False, max_bytes=0, date_order=None):
    """(messages, invalid): with skip_invalid, invalid lines are left out and listed as {line|where, why}."""
    if fmt not in FORMATS:
        raise PuError("IMPORT_BAD_FORMAT", f"unknown import format {fmt!r}", f"Use one of: {', '.join(FORMATS)}.")
    if user_speaker is not None and (not isinstance(user_speaker, str) or not user_speaker):
        raise usage("user_speaker must be a non-empty string")
    if sample_ids is not None and fmt != "locomo":
        raise usage(f"sample_ids applies only to the locomo format, not {fmt}")
    if date_order is not None and (fmt != "whatsapp" or date_order not in DATE_ORDERS):
        raise usage(f"date_order is dmy or mdy, for the whatsapp format only (got {date_order!r} for {fmt})")
    path = os.fspath(path)
    text = _read_utf8(path, max_bytes)
    skips = _Skips(skip_invalid)
    if fmt == "jsonl":
        out = _parse_jsonl(path, text, user_speaker, skips)
    elif fmt == "locomo":
        out = _parse_locomo(path, _load_json(path, text), user_speaker, sample_ids, skips)
    elif fmt == "chatgpt":
        # Roles come from the export's own author roles, so user_speaker has nothing to decide.
        out = _parse_chatgpt(path, _load_json(path, text), skips)
    elif fmt == "whatsapp":
        out = _parse_whatsapp(path, text, user_speaker, date_order, skips)
    elif fmt == "telegram":
        out = _parse_telegram(path, _load_json(path, text), user_speaker, skips)
    else:
        out = _parse_text(path, text, user_speaker, skips)
    return out, skips.invalid


# --- shared helpers ----------------------------------------------------------

WHOLE_FILE_HINT = "Fix the file and import again; nothing was imported."
UNIT_HINT = ("Nothing was imported. Fix it and import again, or pass {arg:skip_invalid=true} to import the rest "
             "and list what was left out.")


def _invalid(path, where, what, hint=UNIT_HINT):
    loc = f"{path}:{where}" if isinstance(where, int) else (f"{path} ({where})" if where else path)
    details = {"file": path}
    details["line" if isinstance(where, int) else "where"] = where
    return PuError("IMPORT_INVALID", f"{loc}: {what}", hint, details)


class _Skips:
    """Invalid lines: the import is refused whole (the default) or they are left out and listed."""

    def __init__(self, skip):
        self.skip = skip
        self.invalid = []

    def take(self, exc):
        if not self.skip or exc.code != "IMPORT_INVALID":
            raise exc
        where = {k: v for k, v in exc.details.items() if k in ("line", "where")}
        self.invalid.append(dict(where, why=exc.message.split(": ", 1)[-1]))


def _read_utf8(path, max_bytes):
    raw = inputs.read_file(path, max_bytes, "import", unreadable="IMPORT_UNREADABLE", too_large="IMPORT_TOO_LARGE")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise _invalid(path, line, f"not UTF-8 (byte offset {exc.start})", "Re-save the file as UTF-8.") from None
    return text[1:] if text.startswith("\ufeff") else text


def _load_json(path, text):
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _invalid(path, exc.lineno, f"not valid JSON: {exc.msg} (column {exc.colno})", WHOLE_FILE_HINT) from None


_SAFE_SLUG = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")


def session_slug(raw):
    """A session id made safe for file names: lowercase [a-z0-9._-].

    Ids already safe pass unchanged; any other id gets a cleaned prefix plus a short hash
    of the original, so "Work Chat" and "work-chat" stay two sessions.
    """
    raw = str(raw)
    if _SAFE_SLUG.fullmatch(raw):
        return raw
    base = re.sub(r"[^a-z0-9._-]+", "-", raw.lower()).strip("-._")[:48].rstrip("-._")
    digest = hashlib.sha256(raw.encode("utf-8")).hexdigest()[:8]
    return f"{base}-{digest}" if base else f"s-{digest}"


def _check_owner(user_speaker, speakers, path, scope=""):
    if user_speaker is not None and speakers and user_speaker not in speakers:
        known = ", ".join(sorted(speakers)[:10]) or "none"
        raise usage(f"user_speaker {user_speaker!r} never speaks in {path}{scope}", f"Speakers found: {known}.")


# --- jsonl -----------------------------------------------------------------------

_JSONL_KEYS = frozenset({"ref", "speaker", "text", "occurred_at", "session_id", "role", "meta"})


def _jsonl_row(path, n, line, first_line):
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise _invalid(path, n, f"not valid JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(obj, dict):
        raise _invalid(path, n, "each line must be one JSON object")
    # Unknown keys are refused so a misspelt "occured_at" cannot silently drop a date.
    unknown = sorted(set(obj) - _JSONL_KEYS)
    if unknown:
        raise _invalid(path, n, f"unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_JSONL_KEYS))}")
    for key in ("ref", "speaker", "text"):
        if not isinstance(obj.get(key), str) or not obj[key].strip():
            raise _invalid(path, n, f"missing {key} (a non-empty string is required)")
    ref = obj["ref"]
    if ref in first_line:
        raise _invalid(path, n, f"duplicate ref {ref!r} (first used on line {first_line[ref]})")
    occurred = obj.get("occurred_at")
    if occurred is not None:
        try:
            occurred = parse_when(occurred)
        except ValueError as exc:
            raise _invalid(path, n, f"bad date in occurred_at: {exc}") from None
    session, role, meta = obj.get("session_id"), obj.get("role"), obj.get("meta")
    if session is not None and (not isinstance(session, str) or not session):
        raise _invalid(path, n, "session_id must be a non-empty string")
    if role is not None and role not in ROLES:
        raise _invalid(path, n, f"role must be one of {', '.join(ROLES)}, not {role!r}")
    if meta is not None and not isinstance(meta, dict):
        raise _invalid(path, n, "meta must be a JSON object")
    first_line[ref] = n
    session = None if session is None else session_slug(session)
    return ref, obj["speaker"], role, obj["text"], occurred, session, dict(meta or {})


def _parse_jsonl(path, text, user_speaker, skips):
    rows, first_line = [], {}
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            rows.append(_jsonl_row(path, n, line, first_line))
        except PuError as exc:
            skips.take(exc)
    speakers = [row[1] for row in rows]
    _check_owner(user_speaker, set(speakers), path)
    # Lines may carry their own role; for the rest the owner is user_speaker, else whoever a
    # line marks as "user", else the first speaker (the same default as plain text).
    owner = user_speaker or next((row[1] for row in rows if row[2] == "user"), speakers[0] if speakers else None)
    return [Message(ref, speaker, role or ("user" if speaker == owner else "other"), body, occurred, session, meta)
            for ref, speaker, role, body, occurred, session, meta in rows]


# --- LoCoMo ------------------------------------------------------------------------

def _parse_locomo(path, data, user_speaker, sample_ids, skips):
    if not isinstance(data, list):
        raise _invalid(path, None, "a LoCoMo file is a JSON list of samples", WHOLE_FILE_HINT)
    wanted = None
    if sample_ids is not None:
        wanted = {sample_ids} if isinstance(sample_ids, str) else {str(s) for s in sample_ids}
    out, seen, found = [], set(), set()
    # Every sample is checked, even ones the filter drops: a malformed file is refused whole.
    for i, sample in enumerate(data):
        try:
            out += _locomo_sample(path, i, sample, user_speaker, wanted, seen, found, skips)
        except PuError as exc:
            skips.take(exc)
    if wanted is not None and wanted - found:
        raise usage(f"sample id(s) not in {path}: {', '.join(sorted(wanted - found))}",
                    "Pass sample ids as they appear in the file's sample_id fields.")
    return out


def _locomo_sample(path, i, sample, user_speaker, wanted, seen, found, skips):
    where = f"sample #{i}"
    if not isinstance(sample, dict) or not isinstance(sample.get("sample_id"), str) or not sample["sample_id"]:
        raise _invalid(path, where, "each sample needs a string sample_id")
    sid = sample["sample_id"]
    where = f"sample {sid}"
    conv = sample.get("conversation")
    if not isinstance(conv, dict):
        raise _invalid(path, where, "missing conversation object")
    pair = (conv.get("speaker_a"), conv.get("speaker_b"))
    if not all(isinstance(s, str) and s for s in pair):
        raise _invalid(path, where, "conversation needs speaker_a and speaker_b")
    keep = wanted is None or sid in wanted
    if keep:
        found.add(sid)
        _check_owner(user_speaker, set(pair), path, f" sample {sid}")
    owner = user_speaker or pair[0]
    out = []
    sessions = sorted((int(m[1]), key) for key in conv for m in [re.fullmatch(r"session_(\d+)", key)] if m)
    for number, key in sessions:
        turns, raw_time = conv[key], conv.get(f"{key}_date_time")
        try:
            if not isinstance(turns, list):
                raise _invalid(path, f"{where} {key}", "a session must be a list of turns")
            occurred = None
            if raw_time is not None:
                try:
                    occurred = parse_when(raw_time)
                except ValueError as exc:
                    raise _invalid(path, f"{where} {key}_date_time", f"bad date: {exc}") from None
        except PuError as exc:
            skips.take(exc)
            continue
        session = session_slug(f"{sid}-s{number}")
        for j, turn in enumerate(turns):
            try:
                message = _locomo_turn(path, f"{where} {key} turn #{j}", turn, sid, number, owner, occurred, session, seen)
            except PuError as exc:
                skips.take(exc)
                continue
            if keep:
                out.append(message)
    return out


def _locomo_turn(path, at, turn, sid, number, owner, occurred, session, seen):
    if not isinstance(turn, dict):
        raise _invalid(path, at, "a turn must be an object")
    for field in ("speaker", "dia_id", "text"):
        if not isinstance(turn.get(field), str) or not turn[field].strip():
            raise _invalid(path, at, f"missing {field}")
    ref = f"{sid}:{turn['dia_id']}"
    if ref in seen:
        raise _invalid(path, at, f"duplicate dia_id {turn['dia_id']!r}")
    seen.add(ref)
    meta = {"sample_id": sid, "dia_id": turn["dia_id"], "session": number}
    # Image turns: the caption is a model's description, not words anyone said,
    # so it stays out of text.
    caption, urls = turn.get("blip_caption"), turn.get("img_url")
    urls = [urls] if isinstance(urls, str) else urls if isinstance(urls, list) else []
    if isinstance(caption, str) and caption:
        meta["image_caption"] = caption
    if any(isinstance(url, str) for url in urls):
        meta["image_url"] = [url for url in urls if isinstance(url, str)]
    role = "user" if turn["speaker"] == owner else "other"
    return Message(ref, turn["speaker"], role, turn["text"], occurred, session, meta)


# --- ChatGPT export ------------------------------------------------------------------

def _current_branch(path, where, mapping, current):
    """Node ids from the root to the shown reply, so regenerated or edited side branches drop out."""
    if current is None:
        # Older exports lack current_node; ChatGPT appends a regeneration as the last child,
        # so following last children reaches the branch that was on screen.
        roots = [key for key, node in mapping.items() if isinstance(node, dict) and not node.get("parent")]
        if len(roots) != 1:
            raise _invalid(path, where, f"no current_node and {len(roots)} root nodes")
        node = roots[0]
    else:
        node = current

    def step(key):
        if current is not None:
            return mapping[key].get("parent")
        children = mapping[key].get("children")
        return children[-1] if isinstance(children, list) and children else None

    chain, seen = [], set()
    while node is not None:
        if isinstance(node, str) and node in seen:
            raise _invalid(path, where, f"tree links loop at node {node!r}")
        if not isinstance(node, str) or not isinstance(mapping.get(node), dict):
            raise _invalid(path, where, f"node {node!r} is referenced but missing")
        seen.add(node)
        chain.append(node)
        node = step(node)
    return chain if current is None else chain[::-1]


def _when(path, where, value):
    """A message's create_time: epoch seconds in ChatGPT exports (any accepted date form is read too)."""
    if value is None:
        return None
    try:
        return parse_when(value)
    except ValueError as exc:
        raise _invalid(path, where, f"bad date in create_time: {exc}") from None


def _parse_chatgpt(path, data, skips):
    if isinstance(data, dict) and "mapping" in data:
        data = [data]
    if not isinstance(data, list):
        raise _invalid(path, None, "a ChatGPT export is a JSON list of conversations", WHOLE_FILE_HINT)
    out, seen = [], set()
    for i, conv in enumerate(data):
        try:
            if not isinstance(conv, dict):
                raise _invalid(path, f"conversation #{i}", "a conversation must be an object")
            cid = conv.get("conversation_id") or conv.get("id")
            if not isinstance(cid, str) or not cid:
                raise _invalid(path, f"conversation #{i}", "missing conversation id")
            mapping = conv.get("mapping")
            if not isinstance(mapping, dict):
                raise _invalid(path, f"conversation {cid}", "missing mapping")
            branch = _current_branch(path, f"conversation {cid}", mapping, conv.get("current_node"))
        except PuError as exc:
            skips.take(exc)
            continue
        for node_id in branch:
            try:
                message = _chatgpt_message(path, conv, cid, node_id, mapping[node_id].get("message"), seen)
            except PuError as exc:
                skips.take(exc)
                continue
            if message is not None:
                out.append(message)
    return out


def _chatgpt_message(path, conv, cid, node_id, msg, seen):
    """One node's message, or None for plumbing (system, tools, hidden context, empty parts)."""
    at = f"conversation {cid} node {node_id}"
    if msg is None:
        return None
    if not isinstance(msg, dict):
        raise _invalid(path, at, "message must be an object")
    author, meta_in, content = (msg.get(key) if isinstance(msg.get(key), dict) else {}
                                for key in ("author", "metadata", "content"))
    speaker = author.get("role")
    if speaker not in ("user", "assistant"):
        return None
    # Hidden context, and assistant turns addressed to a tool, are plumbing, not conversation.
    if meta_in.get("is_visually_hidden_from_conversation") or msg.get("recipient") not in (None, "all"):
        return None
    parts = content.get("parts")
    if parts is None:
        return None
    if not isinstance(parts, list):
        raise _invalid(path, at, "content.parts must be a list")
    texts, skipped = [], []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and part.get("content_type") == "audio_transcription" \
                and isinstance(part.get("text"), str):
            texts.append(part["text"])  # voice chat: the transcript is what was said
        else:
            skipped.append(part.get("content_type", "object") if isinstance(part, dict) else type(part).__name__)
    body = "\n".join(t for t in texts if t)
    if not body.strip():
        return None
    mid = msg.get("id") if isinstance(msg.get("id"), str) and msg.get("id") else node_id
    ref = f"{cid}:{mid}"
    if ref in seen:
        raise _invalid(path, at, f"duplicate message ref {ref!r}")
    occurred = _when(path, at, msg.get("create_time"))
    seen.add(ref)
    meta = {"conversation_id": cid, "message_id": mid, "title": conv.get("title"),
            "content_type": content.get("content_type"), "model": meta_in.get("model_slug"),
            "skipped_parts": skipped}
    meta = {key: value for key, value in meta.items() if value}
    role = "user" if speaker == "user" else "other"
    return Message(ref, speaker, role, body, occurred, session_slug(cid), meta)


# --- plain-text transcript -------------------------------------------------------------

# A date header: "# <date>" or "--- <date> ---", the date in any form importdates reads.
_DATE_HEADER = re.compile(r"(?:#{1,6}[ \t]*(.+?)|-{3,}[ \t]*(.+?)[ \t]*-{3,})[ \t]*")
# A speaker line may start with its own time: "[2024-05-08 09:15] Ana: ..." or "[May 8, 2023 1:56 PM] Ana: ...".
_STAMPED = re.compile(r"\[([^\]\n]{6,40})\][ \t]*(.*)")
_DATE_LIKE = re.compile(r"(?:\d{4}[-/.年]|\d{1,2}\s+[a-z]{3}|[a-z]{3,9}\.?,?\s+\d{1,2}|\d{1,2}:\d{2}\s*[ap]?\.?m?\.?\s+on\s)",
                        re.IGNORECASE)
# A speaker name: starts at column 0, at most 40 characters and 4 words, contains a letter,
# no colon, not a list bullet or quote. Indent a line to keep "Note: ..." inside the previous message.
_SPEAKER_LINE = re.compile(r"([^\s:：#>*-][^:：\x00-\x1f\x7f-\x9f\u2028\u2029]{0,39}?)[ \t]*[:：][ \t]*(.*)")


def _looks_like_date(text):
    return bool(_DATE_LIKE.match(text.strip()) and re.search(r"\d{4}", text))


def _speaker_of(line):
    m = _SPEAKER_LINE.fullmatch(line)
    if not m or len(m[1].split()) > 4 or not any(ch.isalpha() for ch in m[1]):
        return None
    if line[m.end(1):].lstrip(" \t").startswith(":/"):
        return None  # a URL such as https://..., not a speaker
    return m[1], m[2]


def _stamped(path, n, line):
    """(time, speaker, first words) for "[time] Speaker: ..."; None when the line is not one."""
    m = _STAMPED.fullmatch(line)
    if not m or not _looks_like_date(m[1]):
        return None
    said = _speaker_of(m[2])
    if said is None:
        return None
    try:
        return parse_when(m[1]), said[0], said[1]
    except ValueError as exc:
        raise _invalid(path, n, f"bad time in {m[0][:60]!r}: {exc}") from None


def _parse_text(path, text, user_speaker, skips):
    out, current, date = [], None, None

    def close():
        if current is None:
            return
        lines = current["lines"]
        # Blank lines around a message separate messages; blank lines inside it are kept.
        while lines and not lines[-1].strip():
            lines.pop()
        while lines and not lines[0].strip():
            lines.pop(0)
        if not lines:
            raise _invalid(path, current["line"], f"missing text after {current['speaker']!r}")
        out.append((current["line"], current["speaker"], "\n".join(lines), current["date"]))

    def next_message():
        nonlocal current
        try:
            close()
        except PuError as exc:
            skips.take(exc)
        current = None

    for n, line in enumerate(text.split("\n"), 1):
        if line.endswith("\r"):
            line = line[:-1]
        try:
            header = _DATE_HEADER.fullmatch(line)
            if header and _looks_like_date(header[1] or header[2]):
                next_message()
                try:
                    date = None  # a header that cannot be read leaves the day unknown, never the previous one
                    date = parse_when(header[1] or header[2])
                except ValueError as exc:
                    raise _invalid(path, n, f"bad date in header {line!r}: {exc}") from None
                continue
            stamped = _stamped(path, n, line)
            said = stamped[1:] if stamped else _speaker_of(line)
            if said:
                next_message()
                current = {"line": n, "speaker": said[0], "lines": [said[1]], "date": stamped[0] if stamped else date}
            elif current is not None:
                current["lines"].append(line)
            elif line.strip():
                raise _invalid(path, n, "text before the first 'Speaker: message' line"
                               + (" (a WhatsApp export: import it with format whatsapp)" if _WA_LINE.fullmatch(line) else ""))
        except PuError as exc:
            skips.take(exc)
    next_message()
    speakers = [speaker for _, speaker, _, _ in out]
    _check_owner(user_speaker, set(speakers), path)
    owner = user_speaker or (speakers[0] if speakers else None)
    return [Message(f"line-{n}", speaker, "user" if speaker == owner else "other", body, date, None, {})
            for n, speaker, body, date in out]


# --- WhatsApp "Export chat" ------------------------------------------------------------

# "[21/03/2024, 21:45:12] Ana: ..." (iPhone) or "21/03/2024, 21:45 - Ana: ..." (Android); the
# date's order follows the phone's locale (3/21/24, 9:45 PM; 21.03.24, 21:45), so the file tells it.
_WA_LINE = re.compile(r"[\u200e\u200f]?(\[)?(\d{1,4})[/.-](\d{1,2})[/.-](\d{2,4}),?[ \t]+"
                      r"(\d{1,2})[:.](\d{2})(?:[:.](\d{2}))?(?:[ \t\u202f\u00a0]*([AaPp])\.?[ \u202f]?[Mm]\.?)?"
                      r"(?(1)\][ \t]*|[ \t]+[-\u2013][ \t]+)(.*)")
NOTICE = "notice"  # meta key of a line the app wrote (encryption notice, "Ana added Ben"): no one's words


def _wa_ymd(a, b, y, order):
    """(year, month, day) of a date's three numbers read in `order` (a two-digit year is this century's)."""
    if order == "ymd":
        return int(a), int(b), int(y)
    year = int(y) + 2000 if len(y) == 2 else int(y)
    return (year, int(b), int(a)) if order == "dmy" else (year, int(a), int(b))


def _wa_order(stamps, date_order):
    """'ymd', 'dmy' or 'mdy' for a file's numeric dates [(a, b, year)], or None when nothing tells."""
    if stamps and all(len(a) == 4 for a, _b, _y in stamps):
        return "ymd"
    if date_order:
        return date_order
    firsts, seconds = [int(a) for a, _b, _y in stamps], [int(b) for _a, b, _y in stamps]
    if any(x > 12 for x in firsts) and not any(x > 12 for x in seconds):
        return "dmy"
    if any(x > 12 for x in seconds) and not any(x > 12 for x in firsts):
        return "mdy"
    if all(a == b for a, b in zip(firsts, seconds)):
        return "dmy"  # every day equals its month: either order reads the same
    forward = []
    for order in DATE_ORDERS:  # a chat runs forward in time: only one order may
        days = [_wa_ymd(a, b, y, order) for a, b, y in stamps]
        if all(x <= y for x, y in zip(days, days[1:])):
            forward.append(order)
    return forward[0] if len(forward) == 1 else None


def _wa_when(m, order):
    """The line's moment (no zone: UTC, as importdates reads a time without one)."""
    stamp = f"{m[2]}/{m[3]}/{m[4]} {m[5]}:{m[6]}"
    return moment_of(stamp, *_wa_ymd(m[2], m[3], m[4], order), (m[5], m[6], m[7], m[8]))


def _parse_whatsapp(path, text, user_speaker, date_order, skips):
    lines = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
    matches = [_WA_LINE.fullmatch(line) for line in lines]
    order = _wa_order([(m[2], m[3], m[4]) for m in matches if m], date_order)
    if order is None and any(matches):
        raise PuError("IMPORT_INVALID", f"{path}: the dates' day and month order cannot be told (every day and month is "
                      "12 or less and both orders run forward)", "Nothing was imported. Import again with "
                      "{arg:date_order=dmy} (day first, as 21/03/2024) or {arg:date_order=mdy} (month first, as 3/21/24).",
                      {"file": path})
    out, current = [], None
    for n, (line, m) in enumerate(zip(lines, matches), 1):
        try:
            if m is None:
                if current is not None:
                    current[3].append(line)
                elif line.strip():
                    raise _invalid(path, n, "text before the first dated line of the export")
                continue
            try:
                when = _wa_when(m, order)
            except ValueError as exc:
                current = None
                raise _invalid(path, n, f"bad date or time in {line[:40]!r}: {exc}") from None
            said = _speaker_of(m[9])
            if said and said[1].startswith("\u200e"):  # iPhone marks the app's own words under a name: "‎image omitted"
                said = None
            current = [n, said[0] if said else None, when, [said[1] if said else m[9]]]
            out.append(current)
        except PuError as exc:
            skips.take(exc)
    speakers = {c[1] for c in out if c[1] is not None}
    _check_owner(user_speaker, speakers, path)
    owner = user_speaker or next((c[1] for c in out if c[1] is not None), None)
    # A day of one chat is a session: a reply sits next to what it answers (named by who talks, hashed:
    # an id keeps no words, and a later export of the same chat gets the same sessions).
    chat = hashlib.sha256("\x00".join(sorted(speakers)).encode("utf-8")).hexdigest()[:8]
    messages = []
    for n, speaker, when, body in out:
        body = "\n".join(body).rstrip()
        session = f"wa-{chat}-{when[:10]}"
        if speaker is None:  # the app's own line: kept out of the archive, and said to be
            messages.append(Message(f"line-{n}", "", "other", body, when, session, {NOTICE: True}))
        else:
            messages.append(Message(f"line-{n}", speaker, "user" if speaker == owner else "other", body, when, session, {}))
    return messages


# --- Telegram "Export chat history" (JSON) ----------------------------------------------

def _telegram_chats(path, data):
    """(chats, owner id or None): one chat's export, or the whole account's (chats.list)."""
    if not isinstance(data, dict):
        raise _invalid(path, None, "a Telegram export is a JSON object (result.json)", WHOLE_FILE_HINT)
    if isinstance(data.get("messages"), list):
        return [data], None
    chats = (data.get("chats") or {}).get("list") if isinstance(data.get("chats"), dict) else None
    if not isinstance(chats, list):
        raise _invalid(path, None, "a Telegram export holds messages, or chats.list", WHOLE_FILE_HINT)
    me = data.get("personal_information") if isinstance(data.get("personal_information"), dict) else {}
    return chats, (f"user{me['user_id']}" if me.get("user_id") is not None else None)


def _telegram_text(value):
    """A message's text: a string, or a list of strings and {type, text} pieces (links, bold, mentions)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(p if isinstance(p, str) else str(p.get("text", "")) if isinstance(p, dict) else "" for p in value)
    return ""


def _telegram_owner(path, chat, owner_id, user_speaker, cid):
    """Who the archive's owner is in one chat: user_speaker, the account's own id, or, in a chat
    with one person (named after them), whoever else speaks."""
    speakers = {m.get("from") for m in chat["messages"] if isinstance(m, dict) and m.get("type") == "message"
                and isinstance(m.get("from"), str)}
    if user_speaker is not None:
        return ("name", user_speaker)
    if owner_id is not None:
        return ("id", owner_id)
    others = speakers - {chat.get("name")}
    if chat.get("type") == "personal_chat" and len(others) == 1:
        return ("name", others.pop())
    raise usage(f"{path} (chat {cid}): cannot tell which speaker is the archive's owner",
                "Pass {arg:user_speaker} with your name as the chat shows it. Speakers found: "
                + (", ".join(sorted(speakers)[:10]) or "none") + ".")


def _parse_telegram(path, data, user_speaker, skips):
    chats, owner_id = _telegram_chats(path, data)
    out, seen, spoke = [], set(), set()
    for i, chat in enumerate(chats):
        if not isinstance(chat, dict) or not isinstance(chat.get("messages"), list):
            skips.take(_invalid(path, f"chat #{i}", "a chat must be an object with a messages list"))
            continue
        cid = str(chat.get("id", i))
        owner = _telegram_owner(path, chat, owner_id, user_speaker, cid)
        for n, msg in enumerate(chat["messages"]):
            at = f"chat {cid} message #{n}"
            try:
                message = _telegram_message(path, at, cid, chat, msg, owner, seen)
            except PuError as exc:
                skips.take(exc)
                continue
            if message is not None:
                out.append(message)
                spoke.add(message.speaker)
    if user_speaker is not None:
        _check_owner(user_speaker, spoke, path)
    return out


def _telegram_message(path, at, cid, chat, msg, owner, seen):
    """One message, a notice (a service line: calls, pins, members), or None (a photo with no words)."""
    if not isinstance(msg, dict):
        raise _invalid(path, at, "a message must be an object")
    mid = msg.get("id")
    if isinstance(mid, bool) or not isinstance(mid, (int, str)) or mid == "":
        raise _invalid(path, at, "missing message id")
    ref = f"{cid}:{mid}"
    if ref in seen:
        raise _invalid(path, at, f"duplicate message ref {ref!r}")
    seen.add(ref)
    stamp = msg.get("date_unixtime")
    try:
        occurred = parse_when(int(stamp)) if isinstance(stamp, str) and stamp.isdigit() else \
            parse_when(msg.get("date")) if msg.get("date") is not None else None
    except ValueError as exc:
        raise _invalid(path, at, f"bad date: {exc}") from None
    body = _telegram_text(msg.get("text"))
    if msg.get("type") == "service":
        said = " ".join(str(msg.get(k)) for k in ("actor", "action") if msg.get(k))
        return Message(ref, "", "other", said or "service message", occurred, None, {NOTICE: True})
    if msg.get("type") != "message":
        raise _invalid(path, at, f"unknown message type {msg.get('type')!r}")
    if not body.strip():
        return None  # a sticker, photo or voice note without words: nothing was said in text
    speaker = msg.get("from") if isinstance(msg.get("from"), str) and msg.get("from") else str(msg.get("from_id") or "")
    mine = (owner[1] == msg.get("from_id")) if owner[0] == "id" else (owner[1] == speaker)
    meta = {"chat": chat.get("name"), "message_id": mid}
    if msg.get("forwarded_from"):  # someone else's words, passed on: theirs, not the owner's
        meta["forwarded_by"] = speaker
        speaker, mine = str(msg["forwarded_from"]), False
    if not speaker:
        raise _invalid(path, at, "a message without a sender")
    meta = {k: v for k, v in meta.items() if v not in (None, "")}
    day = f"-{occurred[:10]}" if occurred else ""  # a day of the chat is a session, as in whatsapp
    return Message(ref, speaker, "user" if mine else "other", body, occurred, session_slug(cid + day), meta)
