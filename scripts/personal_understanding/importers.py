"""Parsers that turn conversation-history files into one neutral list of `Message`.

Pure: each parser reads the one file it is given and writes nothing. A file that is
malformed anywhere is refused whole, so an import never lands half a history. Text is
kept exactly as the source has it; the only changes are the ones the format's own
encoding needs (JSON escapes, a UTF-8 byte-order mark, CRLF line ends in plain text).
"""

import dataclasses
import datetime as _dt
import hashlib
import json
import os
import re

from . import inputs
from .errors import PuError, usage

FORMATS = ("jsonl", "locomo", "chatgpt", "text")
ROLES = ("user", "other")
UTC = _dt.timezone.utc


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


def parse(fmt, path, *, user_speaker=None, sample_ids=None, max_bytes=0):
    """Parse `path` as `fmt` (one of FORMATS) into a list of Message, in source order.

    `user_speaker` names the archive's owner (role "user"); every other speaker is "other".
    `sample_ids` (locomo only) keeps just those samples. A file over `max_bytes` (0: no cap) is refused.
    """
    if fmt not in FORMATS:
        raise PuError("IMPORT_BAD_FORMAT", f"unknown import format {fmt!r}", f"Use one of: {', '.join(FORMATS)}.")
    if user_speaker is not None and (not isinstance(user_speaker, str) or not user_speaker):
        raise usage("user_speaker must be a non-empty string")
    if sample_ids is not None and fmt != "locomo":
        raise usage(f"sample_ids applies only to the locomo format, not {fmt}")
    path = os.fspath(path)
    text = _read_utf8(path, max_bytes)
    if fmt == "jsonl":
        return _parse_jsonl(path, text, user_speaker)
    if fmt == "locomo":
        return _parse_locomo(path, _load_json(path, text), user_speaker, sample_ids)
    if fmt == "chatgpt":
        # Roles come from the export's own author roles, so user_speaker has nothing to decide.
        return _parse_chatgpt(path, _load_json(path, text))
    return _parse_text(path, text, user_speaker)


# --- shared helpers ----------------------------------------------------------

def _invalid(path, where, what, hint="Fix the file and import again; nothing was imported."):
    loc = f"{path}:{where}" if isinstance(where, int) else (f"{path} ({where})" if where else path)
    details = {"file": path}
    details["line" if isinstance(where, int) else "where"] = where
    return PuError("IMPORT_INVALID", f"{loc}: {what}", hint, details)


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
        raise _invalid(path, exc.lineno, f"not valid JSON: {exc.msg} (column {exc.colno})") from None


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


def _iso_utc(moment):
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# A fixed grammar rather than fromisoformat, whose accepted forms differ between 3.10 and 3.11.
_ISO_TIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?(Z|z|[+-]\d{2}:?\d{2})?)?", re.ASCII)


def normalize_time(value):
    """ISO date -> "YYYY-MM-DD"; ISO date-time -> "YYYY-MM-DDTHH:MM:SSZ" (naive taken as UTC).

    Raises ValueError for anything else, including impossible dates.
    """
    m = _ISO_TIME.fullmatch(value) if isinstance(value, str) else None
    if not m:
        raise ValueError(f"{value!r} is not an ISO date or date-time")
    year, month, day = int(m[1]), int(m[2]), int(m[3])
    if m[4] is None:
        return _dt.date(year, month, day).isoformat()
    zone, offset = m[7], 0
    if zone and zone not in ("Z", "z"):
        offset = (1 if zone[0] == "+" else -1) * (int(zone[1:3]) * 60 + int(zone[-2:]))
    tz = _dt.timezone(_dt.timedelta(minutes=offset))
    try:
        return _iso_utc(_dt.datetime(year, month, day, int(m[4]), int(m[5]), int(m[6] or 0), tzinfo=tz))
    except OverflowError:  # an offset pushing year 9999 past the calendar's end
        raise ValueError(f"{value!r} is outside the representable range") from None


def _check_owner(user_speaker, speakers, path, scope=""):
    if user_speaker is not None and speakers and user_speaker not in speakers:
        known = ", ".join(sorted(speakers)[:10]) or "none"
        raise usage(f"user_speaker {user_speaker!r} never speaks in {path}{scope}", f"Speakers found: {known}.")


# --- jsonl -----------------------------------------------------------------------

_JSONL_KEYS = frozenset({"ref", "speaker", "text", "occurred_at", "session_id", "role", "meta"})


def _parse_jsonl(path, text, user_speaker):
    rows, first_line = [], {}
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
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
        first_line[ref] = n
        occurred = obj.get("occurred_at")
        if occurred is not None:
            try:
                occurred = normalize_time(occurred)
            except ValueError as exc:
                raise _invalid(path, n, f"bad date in occurred_at: {exc}") from None
        session, role, meta = obj.get("session_id"), obj.get("role"), obj.get("meta")
        if session is not None and (not isinstance(session, str) or not session):
            raise _invalid(path, n, "session_id must be a non-empty string")
        if role is not None and role not in ROLES:
            raise _invalid(path, n, f"role must be one of {', '.join(ROLES)}, not {role!r}")
        if meta is not None and not isinstance(meta, dict):
            raise _invalid(path, n, "meta must be a JSON object")
        session = None if session is None else session_slug(session)
        rows.append((ref, obj["speaker"], role, obj["text"], occurred, session, dict(meta or {})))
    speakers = [row[1] for row in rows]
    _check_owner(user_speaker, set(speakers), path)
    # Lines may carry their own role; for the rest the owner is user_speaker, else whoever a
    # line marks as "user", else the first speaker (the same default as plain text).
    owner = user_speaker or next((row[1] for row in rows if row[2] == "user"), speakers[0] if speakers else None)
    return [Message(ref, speaker, role or ("user" if speaker == owner else "other"), body, occurred, session, meta)
            for ref, speaker, role, body, occurred, session, meta in rows]


# --- LoCoMo ------------------------------------------------------------------------

_MONTHS = ("january", "february", "march", "april", "may", "june", "july",
           "august", "september", "october", "november", "december")
_LOCOMO_TIME = re.compile(
    r"\s*(?:(\d{1,2}):(\d{2})\s*([ap])\.?\s*m\.?\s+on\s+)?"
    r"(\d{1,2})\s+([a-z]+)\.?\s*,?\s*(\d{4})\s*", re.IGNORECASE | re.ASCII)


def parse_locomo_datetime(text):
    """Parse "1:56 pm on 8 May, 2023" -> "2023-05-08T13:56:00Z" (the source gives no zone: UTC).

    Also takes abbreviated months ("8 Aug 2023"), no comma, "a.m."/"p.m.", and a bare date
    ("8 May, 2023" -> "2023-05-08"). Raises ValueError otherwise.
    """
    m = _LOCOMO_TIME.fullmatch(text) if isinstance(text, str) else None
    if not m:
        raise ValueError(f"{text!r} is not a LoCoMo date-time like '1:56 pm on 8 May, 2023'")
    name = m[5].lower()
    months = [i for i, full in enumerate(_MONTHS, 1) if full == name or (len(name) >= 3 and full.startswith(name))]
    if len(months) != 1:
        raise ValueError(f"{text!r}: unknown month {m[5]!r}")
    day = _dt.date(int(m[6]), months[0], int(m[4]))
    if m[1] is None:
        return day.isoformat()
    hour, minute = int(m[1]), int(m[2])
    if not 1 <= hour <= 12:
        raise ValueError(f"{text!r}: hour {hour} is not on a 12-hour clock")
    hour = hour % 12 + (12 if m[3].lower() == "p" else 0)
    return _iso_utc(_dt.datetime(day.year, day.month, day.day, hour, minute, tzinfo=UTC))


def _parse_locomo(path, data, user_speaker, sample_ids):
    if not isinstance(data, list):
        raise _invalid(path, None, "a LoCoMo file is a JSON list of samples")
    wanted = None
    if sample_ids is not None:
        wanted = {sample_ids} if isinstance(sample_ids, str) else {str(s) for s in sample_ids}
    out, seen, found = [], set(), set()
    # Every sample is checked, even ones the filter drops: a malformed file is refused whole.
    for i, sample in enumerate(data):
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
        sessions = sorted((int(m[1]), key) for key in conv for m in [re.fullmatch(r"session_(\d+)", key)] if m)
        for number, key in sessions:
            turns, raw_time = conv[key], conv.get(f"{key}_date_time")
            if not isinstance(turns, list):
                raise _invalid(path, f"{where} {key}", "a session must be a list of turns")
            occurred = None
            if raw_time is not None:
                try:
                    occurred = parse_locomo_datetime(raw_time)
                except ValueError as exc:
                    raise _invalid(path, f"{where} {key}_date_time", f"bad date: {exc}") from None
            session = session_slug(f"{sid}-s{number}")
            for j, turn in enumerate(turns):
                at = f"{where} {key} turn #{j}"
                if not isinstance(turn, dict):
                    raise _invalid(path, at, "a turn must be an object")
                for field in ("speaker", "dia_id", "text"):
                    if not isinstance(turn.get(field), str) or not turn[field].strip():
                        raise _invalid(path, at, f"missing {field}")
                ref = f"{sid}:{turn['dia_id']}"
                if ref in seen:
                    raise _invalid(path, at, f"duplicate dia_id {turn['dia_id']!r}")
                seen.add(ref)
                if not keep:
                    continue
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
                out.append(Message(ref, turn["speaker"], role, turn["text"], occurred, session, meta))
    if wanted is not None and wanted - found:
        raise usage(f"sample id(s) not in {path}: {', '.join(sorted(wanted - found))}",
                    "Pass sample ids as they appear in the file's sample_id fields.")
    return out


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


def _epoch(path, where, value):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _invalid(path, where, f"create_time must be epoch seconds, not {value!r}")
    try:
        return _iso_utc(_dt.datetime.fromtimestamp(value, UTC))
    except (OverflowError, OSError, ValueError):
        raise _invalid(path, where, f"bad date: create_time {value!r} is out of range") from None


def _parse_chatgpt(path, data):
    if isinstance(data, dict) and "mapping" in data:
        data = [data]
    if not isinstance(data, list):
        raise _invalid(path, None, "a ChatGPT export is a JSON list of conversations")
    out, seen = [], set()
    for i, conv in enumerate(data):
        if not isinstance(conv, dict):
            raise _invalid(path, f"conversation #{i}", "a conversation must be an object")
        cid = conv.get("conversation_id") or conv.get("id")
        if not isinstance(cid, str) or not cid:
            raise _invalid(path, f"conversation #{i}", "missing conversation id")
        mapping = conv.get("mapping")
        if not isinstance(mapping, dict):
            raise _invalid(path, f"conversation {cid}", "missing mapping")
        session = session_slug(cid)
        for node_id in _current_branch(path, f"conversation {cid}", mapping, conv.get("current_node")):
            msg, at = mapping[node_id].get("message"), f"conversation {cid} node {node_id}"
            if msg is None:
                continue
            if not isinstance(msg, dict):
                raise _invalid(path, at, "message must be an object")
            author, meta_in, content = (msg.get(key) if isinstance(msg.get(key), dict) else {}
                                        for key in ("author", "metadata", "content"))
            speaker = author.get("role")
            if speaker not in ("user", "assistant"):
                continue
            # Hidden context, and assistant turns addressed to a tool, are plumbing, not conversation.
            if meta_in.get("is_visually_hidden_from_conversation") or msg.get("recipient") not in (None, "all"):
                continue
            parts = content.get("parts")
            if parts is None:
                continue
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
                continue
            mid = msg.get("id") if isinstance(msg.get("id"), str) and msg.get("id") else node_id
            ref = f"{cid}:{mid}"
            if ref in seen:
                raise _invalid(path, at, f"duplicate message ref {ref!r}")
            seen.add(ref)
            meta = {"conversation_id": cid, "message_id": mid, "title": conv.get("title"),
                    "content_type": content.get("content_type"), "model": meta_in.get("model_slug"),
                    "skipped_parts": skipped}
            meta = {key: value for key, value in meta.items() if value}
            role = "user" if speaker == "user" else "other"
            out.append(Message(ref, speaker, role, body, _epoch(path, at, msg.get("create_time")), session, meta))
    return out


# --- plain-text transcript -------------------------------------------------------------

_DATE_HEADER = re.compile(r"(?:#{1,6}[ \t]*(\d{4}-\d{2}-\d{2})|-{3,}[ \t]*(\d{4}-\d{2}-\d{2})[ \t]*-{3,})[ \t]*", re.ASCII)
# A speaker name: starts at column 0, at most 40 characters and 4 words, contains a letter,
# no colon, not a list bullet or quote. Indent a line to keep "Note: ..." inside the previous message.
_SPEAKER_LINE = re.compile(r"([^\s:：#>*-][^:：\x00-\x1f\x7f-\x9f\u2028\u2029]{0,39}?)[ \t]*[:：][ \t]*(.*)")


def _speaker_of(line):
    m = _SPEAKER_LINE.fullmatch(line)
    if not m or len(m[1].split()) > 4 or not any(ch.isalpha() for ch in m[1]):
        return None
    if line[m.end(1):].lstrip(" \t").startswith(":/"):
        return None  # a URL such as https://..., not a speaker
    return m[1], m[2]


def _parse_text(path, text, user_speaker):
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

    for n, line in enumerate(text.split("\n"), 1):
        if line.endswith("\r"):
            line = line[:-1]
        header = _DATE_HEADER.fullmatch(line)
        if header:
            close()
            current = None
            try:
                date = _dt.date.fromisoformat(header[1] or header[2]).isoformat()
            except ValueError:
                raise _invalid(path, n, f"bad date in header {line!r}") from None
            continue
        said = _speaker_of(line)
        if said:
            close()
            current = {"line": n, "speaker": said[0], "lines": [said[1]], "date": date}
        elif current is not None:
            current["lines"].append(line)
        elif line.strip():
            raise _invalid(path, n, "text before the first 'Speaker: message' line")
    close()
    speakers = [speaker for _, speaker, _, _ in out]
    _check_owner(user_speaker, set(speakers), path)
    owner = user_speaker or (speakers[0] if speakers else None)
    return [Message(f"line-{n}", speaker, "user" if speaker == owner else "other", body, date, None, {})
            for n, speaker, body, date in out]
