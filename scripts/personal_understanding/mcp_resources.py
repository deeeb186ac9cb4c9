"""What the MCP server offers besides tools: resources, resource templates and prompts.

Resources: the agent contract (SKILL.md), the policies under references/, an
archive survey, and two templates, personal://record/{id} (a record, latest
version) and personal://capture/{id} (a capture's words, served only while
they still match their SHA-256). Resource reads come from the host, not from a
user turn: they are traced as maintenance.

Prompts are user-chosen starting messages (slash commands in most hosts). They
carry only the question itself: the turn tools then save and answer it like
any other message.
"""

import json
import sys
from pathlib import Path

from . import paths

SKILL_URI = "personal://skill"
SURVEY_URI = "personal://survey"
REFERENCE_PREFIX = "personal://references/"
RECORD_PREFIX = "personal://record/"
CAPTURE_PREFIX = "personal://capture/"

TEMPLATES = [
    {"uriTemplate": RECORD_PREFIX + "{id}", "name": "record", "title": "A record",
     "description": "One derived record (event, fact, state, entity, ...) as JSON, latest version, merges followed.",
     "mimeType": "application/json"},
    {"uriTemplate": CAPTURE_PREFIX + "{id}", "name": "capture", "title": "A capture's words",
     "description": "The user's verbatim words of one capture with its SHA-256, checked before they are served.",
     "mimeType": "application/json"},
]

PROMPTS = {
    "recall_about": {
        "title": "What do you remember about ...",
        "description": "Ask the memory about a person, a place or a topic; the answer cites the user's words.",
        "arguments": [{"name": "topic", "description": "Who or what to recall (a name, a place, a topic).", "required": True},
                      {"name": "language", "description": "en (default) or zh.", "required": False}],
        "text": {"en": "What do you remember about {topic}?", "zh": "你还记得关于{topic}的哪些事？"},
    },
    "review_week": {
        "title": "Review my week",
        "description": "Look back over the last seven days: what happened, how it felt, what is still open.",
        "arguments": [{"name": "language", "description": "en (default) or zh.", "required": False}],
        "text": {"en": "Review my week: what happened, how did I feel, and what is still open?",
                 "zh": "帮我回顾一下这一周：发生了什么，我感觉怎么样，还有什么没解决？"},
    },
}


class NotFound(Exception):
    pass


class BadRequest(Exception):
    pass


def doc_dir():
    """Where SKILL.md and references/ are: the skill folder, else the installed data folder."""
    if paths.is_skill_folder(paths.SKILL_DIR):
        return paths.SKILL_DIR
    return Path(sys.prefix) / "share" / "personal-understanding"


def references():
    folder = doc_dir() / "references"
    try:
        return sorted(p for p in folder.iterdir() if p.suffix == ".md" and p.is_file())
    except OSError:
        return []


def list_resources():
    out = [
        {"uri": SKILL_URI, "name": "skill", "title": "The agent contract (SKILL.md)",
         "description": "When to call which tool, in which order, and when the agent may say it saved something.",
         "mimeType": "text/markdown"},
        {"uri": SURVEY_URI, "name": "survey", "title": "Archive survey",
         "description": "A bounded overview of what the archive holds (read as maintenance, traced).",
         "mimeType": "application/json"},
    ]
    for path in references():
        out.append({"uri": REFERENCE_PREFIX + path.stem, "name": f"references/{path.name}",
                    "title": f"Policy: {path.stem}", "mimeType": "text/markdown"})
    return out


def read_document(uri):
    """SKILL.md or a reference (text), or None when the uri names neither."""
    if uri == SKILL_URI:
        path = doc_dir() / "SKILL.md"
    elif uri.startswith(REFERENCE_PREFIX):
        path = next((p for p in references() if p.stem == uri[len(REFERENCE_PREFIX):]), None)
    else:
        return None
    try:
        return path.read_text(encoding="utf-8") if path is not None else None
    except OSError:
        return None


def read_item(root, uri):
    """A record or a capture by template uri, as JSON text; None when the uri is no template's."""
    from .archive_index import open_index
    from .errors import PuError

    for prefix, kind in ((RECORD_PREFIX, "record"), (CAPTURE_PREFIX, "capture")):
        if uri.startswith(prefix):
            item_id = uri[len(prefix):]
            break
    else:
        return None
    try:
        paths.check_id(item_id, f"{kind} id")
    except PuError:
        raise NotFound(uri) from None
    index = open_index(root)
    if kind == "record":
        from .records import get_record

        rec = get_record(index, item_id)
        if rec is None or rec.get("status") == "forgotten":
            raise NotFound(uri)
        return json.dumps(rec, ensure_ascii=False)
    return json.dumps(_capture(root, index, item_id, uri), ensure_ascii=False)


def _capture(root, index, capture_id, uri):
    from .capture import verify_capture
    from .errors import PuError
    from .retrieval import deep, trace

    row = index.capture(capture_id)
    if row is None or row.get("status") == "forgotten":
        raise NotFound(uri)
    try:
        intact = verify_capture(root, row["path"], row["utf8_sha256"])
    except PuError as exc:
        raise BadRequest(f"{exc.code}: {exc.message}") from None
    if not intact:
        raise BadRequest(f"capture {capture_id} no longer matches its SHA-256: its words are not served as verbatim")
    block = deep._capture_block(index, capture_id)
    block["trace_id"] = trace.write(root, {"kind": "resource", "mode": "maintenance", "uri": uri, "ids": [capture_id]})
    return block


def list_prompts():
    return [{"name": name, "title": p["title"], "description": p["description"], "arguments": p["arguments"]}
            for name, p in PROMPTS.items()]


def get_prompt(name, arguments):
    prompt = PROMPTS.get(name)
    if prompt is None:
        raise NotFound(name)
    if not isinstance(arguments, dict) or not all(isinstance(v, str) for v in arguments.values()):
        raise BadRequest("prompt arguments must be an object of strings")
    known = {a["name"] for a in prompt["arguments"]}
    unknown = sorted(set(arguments) - known)
    if unknown:
        raise BadRequest(f"unknown argument(s) {', '.join(unknown)} for prompt {name}")
    for arg in prompt["arguments"]:
        if arg["required"] and not (arguments.get(arg["name"]) or "").strip():
            raise BadRequest(f"prompt {name} needs the argument {arg['name']}")
    language = arguments.get("language") or "en"
    if language not in prompt["text"]:
        raise BadRequest(f"language must be one of {', '.join(prompt['text'])}")
    text = prompt["text"][language].format(**{k: v.strip() for k, v in arguments.items()})
    return {"description": prompt["description"], "messages": [{"role": "user", "content": {"type": "text", "text": text}}]}
