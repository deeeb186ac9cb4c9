"""The command registry: one entry per operation, shared by the CLI and the MCP server.

Each entry names its script (scripts/<name>.py), its MCP tool, its parameters
(one list drives argparse and the tool's inputSchema), its description (the
CLI help and the tool description are the same text), the library function
that does the work, and the shape of its result.
"""

from .importdates import FORMS_HELP as IMPORT_DATE_FORMS
from .registry import A, B, I, N, O, S, Command, Param, array_of, check_arguments, nullable, obj, page  # noqa: F401

VERDICT_ENUM = ("helpful", "missed", "corrected", "unclear")

_TURN = Param("turn_id", S, "The turn's id, as returned by preflight.", required=True)
_CAPTURE = Param("capture_id", S, "A capture id.", required=True)


_obj = obj

_STRING_OR_OBJECT = {"anyOf": [{"type": S}, {"type": O}]}
_TRACE_ID = nullable(S)  # null when the archive could not be written (read-only copy, full disk): no trace, same read
_WARNINGS = {"type": A, "items": _STRING_OR_OBJECT}
_ROWS = {"type": A, "items": {"type": O, "properties": obj(id=S, kind=S, title=nullable(S), summary=S, snippet=S,
                                                             capture_ids=array_of(S), why=O),
                              "required": ["id", "kind", "why"]}}
_READ = {"type": O, "properties": dict(obj(status=S, scope=S, top=_ROWS, trace_id=_TRACE_ID), **page()),
         "required": ["status", "top", "total", "shown", "trace_id"]}
_DUE = {"type": A, "items": {"type": O, "properties": obj(id=S, question=S, prompt=S, due_at=nullable(S)),
                             "required": ["id", "question"]}}
_DUE_REF = {"$ref": "#/$defs/followups"}


# What a probe filters by: shared by recall and retrieve_v2.
_QUERY = Param("query", S, "What to look for, in the user's words or a clue.", positional=True)
_FILTERS = (
    Param("window", S, "Dates: YYYY[-MM[-DD]] or A:B (either side may be empty), or a time as said: last week, 上个月."),
    Param("phase", S, "Only this life phase (childhood, university, ...)."),
    Param("as_of", S, "Answer as of this date: states and decisions true then."),
    Param("expand", A, "Other phrasings to search too; they help find, never become facts."),
    Param("domain", S, "Only this life branch."),
)


def _items(required=(), **props):
    return {"type": O, "properties": obj(**props), "required": list(required)}


def _record_kinds():
    from .schema import rules

    return [k for k, v in rules()["kinds"].items() if not v.get("model_only")]


_SECTIONS = ("records", "updates", "hypotheses", "followups", "resolve_followups")  # of a remember batch

# The turn tools: what an agent calls mid-chat. Each folds several fine-grained operations (covers) into one call.
TURN_COMMANDS = [
    Command(
        name="turn", tool="personal_turn",
        summary="Start every user turn here: the receipt, the verbatim save when the message is personal, and what "
                "the memory holds about it.",
        description="Pass the user's complete message exactly as received, before answering. Returns the receipt "
                    "(tier full: personal, saved as capture_id; skip: nothing to save), due_followups (weave each "
                    "ready prompt in once), memories (what the archive holds about this message; for a plain "
                    "question, only when something matches; each row says why it came up) and, when the message "
                    "asks the memory (read_turn), recall: the answer material. "
                    "Retries return the same turn. After a personal turn, call {cmd:remember}.",
        params=(
            Param("text", S, "The user's complete message, exactly as received (no trimming, no fixes).", required=True,
                  positional=True, text=True),
            Param("turn_id", S, "Id for this turn (generated when absent); pass it to the other calls of the turn."),
            Param("session_id", S, "Conversation id."),
            Param("tier", S, "auto (default), full (you see personal material the receipt missed) or skip (the user "
                             "asked not to remember this).", default="auto", enum=("auto", "full", "skip")),
            Param("limit", I, "Rows of memories (default 5) or recall (default 10).", minimum=1),
        ),
        run="turn:turn", writes_trace=True, idempotent=True, covers=("preflight_context", "capture_user_update"),
        example='python3 scripts/turn.py "我妹妹下个月结婚，我有点舍不得" --turn-id t1',
        output=obj(turn_id=S, receipt=_items(("tier", "signal"), tier=S, signal=S, reasons=array_of(S),
                                             low_information=B),
                   read_turn=B, captured=B, capture_id=nullable(S), due_followups=_DUE, next=S),
        optional=obj(memories={"$ref": "#/$defs/read"}, recall={"$ref": "#/$defs/read"}, repeated=B, utf8_sha256=S,
                     read_error=O, backup_reminder=O, warnings=_WARNINGS),
        defs={"read": _READ},
    ),
    Command(
        name="remember", tool="personal_remember",
        summary="Save what a turn's message adds, all or nothing, close the turn and say whether it is saved.",
        description="Call once per personal turn, after {cmd:turn}. All items are checked first: one refused item "
                    "refuses the batch (details.problems lists each) and nothing changes. Records cite the turn's "
                    "message by default; give an item an id to point at it from others (entity_refs, supports). "
                    "Never invent dates. With nothing to add, pass a specific {arg:reason} (e.g. 'already covered by "
                    "event-...'). Say it is saved only when may_claim_saved is true.",
        params=(
            Param("turn_id", S, "The turn, as returned by the turn call.", required=True),
            Param("records", A, "New records: entities (kind entity, entity_type, aliases), events, facts, states "
                                "(with subject_key), preferences, decisions. Other record fields (derivation "
                                "reference) work too.", items=O,
                  item_schema=_items(("kind", "title"), kind={"type": S, "enum": _record_kinds()}, id=S, title=S,
                                     summary=S, entity_type=S, aliases=array_of(S), entity_refs=array_of(S),
                                     date_start=S, date_precision=S, subject_key=S, felt_then=S)),
            Param("updates", A, "Changes to a current state or decision (the old version stays readable); "
                                 "restate the title when it no longer holds.", items=O,
                  item_schema=_items(("id",), id=S, title=S, summary=S)),
            Param("hypotheses", A, "Your guesses, never facts: supports are two or more records from different "
                                   "dates; add contradicts, alternatives.", items=O,
                  item_schema=_items(("claim", "supports"), claim=S, supports=array_of(S))),
            Param("followups", A, "Things to ask about later; due_rule +3d, +2w, +1m (or due_at).", items=O,
                  item_schema=_items(("question",), question=S, due_rule=S, expectation=S)),
            Param("resolve_followups", A, "Due follow-ups this message answers.", items=O,
                  item_schema=_items(("id", "resolution", "note"), id=S,
                                     resolution={"type": S, "enum": ["answered", "declined", "resolved"]}, note=S)),
            Param("reason", S, "Why nothing new is derived, when no record cites the message (specific)."),
            Param("capture_id", S, "Another capture of this turn to cite (an attachment); default: the message."),
            Param("allow_warnings", B, "Let structure warnings pass the gate.", default=False),
        ),
        run="remember:remember", json_input=True,
        covers=("add_record", "update_state", "add_hypothesis", "add_followup", "resolve_followup", "finalize_capture",
                "session_check"),
        example="python3 scripts/remember.py --json batch.json",
        output=obj(turn_id=S, capture_id=nullable(S),
                   written=_items(_SECTIONS, **{k: array_of(S) for k in _SECTIONS}),
                   items=array_of(O), ledger=_items(("status",), status=nullable(S), changed=B, record_ids=array_of(S)),
                   may_claim_saved=B, gate=_items(("obligations_met",), obligations_met=B, gates=O,
                                                  pending_capture_ids=array_of(S)),
                   next=array_of(S)),
        optional=obj(warnings=_WARNINGS),  # a backup reminder came with this turn's personal_turn already
        ok=lambda r: r["may_claim_saved"] or r["gate"]["obligations_met"],
    ),
    Command(
        name="recall", tool="personal_recall",
        summary="Read the memory: probe a question, read the user's words behind ids, or survey the archive.",
        description="mode probe: what the archive holds about a query; each row says why it came up (matched "
                    "words, alias, association path) and whether it rests on the user's words. {arg:window} and "
                    "{arg:phase} browse a period, {arg:as_of} answers what was true then, {arg:expand} adds "
                    "phrasings (never facts). mode deep with {arg:ids}: the verbatim words; read them before quoting "
                    "the user. mode survey: the archive map. Cite the turn ({arg:turn_id}); outside a turn pass "
                    "{arg:maintenance=true}. Nothing found is about what is saved, not proof it did not happen.",
        params=(
            _QUERY,
            Param("mode", S, "probe, deep or survey.", default="probe", enum=("probe", "deep", "survey")),
            Param("ids", A, "deep: the record or capture ids to read; probe: fetch these rows."),
        ) + _FILTERS + (
            Param("limit", I, "Rows (default 10).", default=10, minimum=1),
            Param("offset", I, "Skip this many rows (paging: pass next_offset).", default=0, minimum=0),
            Param("turn_id", S, "The current turn (from the turn call)."),
            Param("maintenance", B, "A read outside a user turn (audits); traced as maintenance.", default=False),
        ),
        run="reads:recall", read_only=True, writes_trace=True, idempotent=True,
        covers=("retrieve_v2", "catalog_context"),
        example="python3 scripts/recall.py '妹妹的婚礼' --turn-id t1",
        output=obj(mode=S, status=S, read_as=S, trace_id=_TRACE_ID),
        optional=dict(page(), **obj(top=_ROWS, items=array_of(O), associations=array_of(O), scope=S, query=nullable(S),
                                   time=array_of(O), note=S, missing=array_of(S), life_spine=O,
                                   current_state=O, entity_directory=O, due_followups=array_of(O))),
    ),
]

COMMANDS = TURN_COMMANDS + [
    Command(
        name="init_archive", tool="personal_init_archive",
        summary="Create the archive layout (idempotent).",
        description="Create memory/ and sources/ under the archive root. A second run changes nothing and says so. "
                    "A new archive is empty: nothing about anyone is pre-seeded.",
        params=(), run="archive:init_archive", idempotent=True,
        example="python3 scripts/init_archive.py --root ~/my-memory",
        output=_obj(root=S, created=array_of(S), changed=B, message=S),
    ),
    Command(
        name="preflight_context", tool="personal_preflight_turn",
        summary="Classify a user message and write the turn's receipt (call first, every turn).",
        description="Call before answering each user message. Classifies the exact message (personal, technical or "
                    "non-personal; Chinese and English), writes an append-only turn receipt with its tier, reasons and "
                    "required actions, and returns them. {arg:tier=full} declares the turn personal (upgrades an earlier "
                    "receipt); {arg:tier=skip} records any personal reasons it overrides. The same turn id with a different "
                    "message is refused.",
        params=(
            Param("text", S, "The user's complete message, exactly as received.", required=True, positional=True, text=True),
            Param("turn_id", S, "Id for this turn (generated when absent); reuse it for capture and session_check."),
            Param("session_id", S, "Conversation/session id."),
            Param("tier", S, "auto (classifier decides), full (treat as personal) or skip.", default="auto",
                  enum=("auto", "full", "skip")),
        ),
        run="receipts:preflight",
        example='python3 scripts/preflight_context.py "我最近压力好大" --turn-id t1',
        output=_obj(receipt=O, turn_id=S, repeated=B, due_followups=_DUE, next=S),
        optional=obj(context=O, backup_reminder=O, warnings=_WARNINGS),
    ),
    Command(
        name="capture_user_update", tool="personal_capture_user_turn",
        summary="Save the user's message verbatim for a turn whose receipt requires it.",
        description="Saves the complete message once, as UTF-8 with its SHA-256, and reads it back to verify. "
                    "Refused (nothing written) when the turn has no receipt, the receipt does not call for a capture, "
                    "the text's hash differs from the receipt's, the capture id exists, or the text is empty, invalid "
                    "UTF-8 or over the size cap. The new capture is `pending` in the derivation ledger until finalized.",
        params=(
            Param("text", S, "The complete message, byte-identical to what was preflighted.", required=True, text=True),
            _TURN,
            Param("capture_id", S, "Explicit capture id (lowercase a-z0-9._-); generated when absent."),
            Param("session_id", S, "Conversation/session id (defaults to the receipt's)."),
            Param("occurred_at", S, "When the words were said, if not now (ISO date or date-time)."),
            Param("source", S, "Where the words came from (chat, voice, ...).", default="chat"),
        ),
        run="capture:capture_text",
        example="python3 scripts/capture_user_update.py --text '我最近压力好大' --turn-id t1",
        output=_obj(captured=B, verified=B, capture_id=S, path=S, utf8_sha256=S, bytes=I, chars=I, turn_id=S,
                    ledger_status=S, next=S),
        optional=obj(warnings=_WARNINGS),
    ),
    Command(
        name="capture_attachment", tool="personal_capture_attachment",
        summary="Keep an attachment's original bytes (SHA-256 addressed) as a capture of the turn.",
        description="Stores the file's bytes under sources/attachments by SHA-256 (an identical file reuses the stored "
                    "bytes) and registers a capture of its own for the turn. The name must be a bare file name.",
        params=(
            Param("file", S, "Path of the file to keep.", required=True, path="read"),
            _TURN,
            Param("name", S, "File name to record (defaults to the file's own name)."),
            Param("capture_id", S, "Explicit capture id; generated when absent."),
        ),
        run="capture:capture_attachment",
        example="python3 scripts/capture_attachment.py --file photo.jpg --turn-id t1",
        output=_obj(captured=B, verified=B, capture_id=S, path=S, sha256=S, blob=S, bytes=I, name=S, turn_id=S,
                    reused_existing_bytes=B, ledger_status=S),
        optional=obj(warnings=_WARNINGS),
    ),
    Command(
        name="finalize_capture", tool="personal_finalize_capture",
        summary="Close a capture in the ledger: derived, or no-derivation-needed with a reason.",
        description="Every capture is pending until closed. `derived` needs at least one record citing the capture; "
                    "`no-derivation-needed` needs a specific reason (e.g. 'already covered by rec-...').",
        params=(
            _CAPTURE,
            Param("disposition", S, "derived or no-derivation-needed.", required=True,
                  enum=("derived", "no-derivation-needed")),
            Param("reason", S, "Why nothing is derived (required for no-derivation-needed)."),
        ),
        run="ledger:finalize",
        example="python3 scripts/finalize_capture.py --capture-id cap-... --disposition no-derivation-needed --reason 'greeting only'",
        output=_obj(capture_id=S, status=S, reason=nullable(S), record_ids=array_of(S), changed=B, turn_id=nullable(S),
                    next=S),
        optional=obj(warnings=_WARNINGS),
    ),
    Command(
        name="derivation_ledger", tool="personal_derivation_ledger",
        summary="Audit the derivation ledger against captures and records; repair rebuilds it.",
        description="Lists captures that are unregistered, missing, derived without records or closed without a "
                    "reason. With {arg:repair_ledger=true}, appends the events that make the ledger agree and rewrites the "
                    "projection memory/derivation-ledger.json.",
        params=(Param("repair_ledger", B, "Repair and rewrite the projection.", flag="--repair", default=False),),
        run="ledger:derivation_ledger",
        example="python3 scripts/derivation_ledger.py --repair",
        output=_obj(captures=I, by_status=O),
        optional=obj(consistent=B, findings=array_of(O), repaired=I, events=array_of(S), remaining_findings=array_of(O),
                     stray_temp_files_removed=I, projection=S),
    ),
    Command(
        name="session_check", tool="personal_session_check",
        summary="The turn gate: may the agent tell the user it is saved?",
        description="Checks the turn's obligations: receipt present, message captured and closed when required, no "
                    "capture pending anywhere, and the archive structure not failed (only what changed, unless "
                    "{arg:full=true}). Only when may_claim_saved is true (CLI exit 0) may the agent say it saved anything.",
        params=(
            _TURN,
            Param("allow_warnings", B, "Let structure warnings pass.", default=False),
            Param("full", B, "Validate the whole archive instead of what changed.", default=False),
            Param("from_scratch", B, "With {arg:full}: re-read every log and re-hash every capture.", default=False),
        ),
        run="gate:session_check", read_only=True, idempotent=True,
        example="python3 scripts/session_check.py --turn-id t1",
        output=_obj(turn_id=S, may_claim_saved=B, obligations_met=B, gates=O, pending_capture_ids=array_of(S),
                    next=array_of(S)),
        optional=obj(backup_reminder=O),
        ok=lambda r: r["obligations_met"],
    ),
    Command(
        name="validate_memory", tool="personal_validate",
        summary="Validate the whole archive: clean, warnings or failed.",
        description="Checks every log and capture: torn or invalid lines, hash mismatches, missing "
                    "files, duplicate ids, ledger and receipt inconsistencies, record rules. Reads what the logs gained "
                    "and hashes what changed since its last run ({arg:from_scratch=true}: everything). Every problem is "
                    "reported as `path:line: code message`. {arg:strict=true} makes warnings fail.",
        params=(
            Param("strict", B, "Treat warnings as failure.", default=False),
            Param("require_closed_captures", B, "Report pending captures as errors.", default=False),
            Param("json", B, "Include structured problem details.", default=False),
            Param("from_scratch", B, "Re-read every log and re-hash every capture, not only what changed since the "
                                     "last run.", default=False),
        ),
        run="validate:validate", read_only=True, idempotent=True,
        example="python3 scripts/validate_memory.py --strict",
        output=_obj(status={"type": S, "enum": ["clean", "warnings", "failed"]}, ok=B, strict=B, errors=I, warnings=I,
                    problems=array_of(S), checked=O),
        optional=obj(problem_details=array_of(O)),
        ok=lambda r: r["ok"], stderr_lines=lambda r: [] if "problem_details" in r else r["problems"],
    ),
]

_HYPOTHESIS_FIELDS = ("claim", "mechanism", "alternatives", "scope", "expires_at")


def _record_params(skip=(), required=()):
    """Parameters for record fields, straight from resources/schemas/records.json."""
    from .schema import rules

    out = []
    for name, (kind, help_text) in rules()["fields"].items():
        if name in skip or name in _HYPOTHESIS_FIELDS:
            continue
        ptype, items = (A, O) if kind == "array:object" else (kind, S)
        enum = tuple(k for k, v in rules()["kinds"].items() if not v.get("model_only")) if name == "kind" else tuple(rules()["enums"][name]) if name in rules()["enums"] else None
        out.append(Param(name, ptype, help_text, required=name in required, items=items, enum=enum))
    return tuple(out)


_RECORD_OUT = _obj(id=S, record=_items(("id", "kind", "title"), id=S, kind=S, title=S, version=I),
                   possible_duplicates=array_of(O), warnings=_WARNINGS, links=O, superseded=array_of(S))
_RECORD_OPTIONAL = obj(conflict=O)

COMMANDS += [
    Command(
        name="add_record", tool="personal_add_record",
        summary="Add a derived record (event, fact, state, entity, ...) that cites the words it came from.",
        description="Adds one record. Records that state something about the user must cite their capture "
                    "({arg:capture_ids} or {arg:verbatim_refs} spans); entity and context cards organize and need none; legacy "
                    "material without words is accepted only with {arg:fidelity=summary_only} (summary debt). Returns "
                    "possible_duplicates (same kind, shared entities, near-identical title or summary); an exact "
                    "duplicate is refused unless {arg:allow_duplicate=true}. A state that contradicts a current state about the "
                    "same {arg:subject_key} is kept as uncertain and returned in a conflict block to ask about. Never "
                    "invent dates: an unknown date stays unknown.",
        params=_record_params(required=("kind", "title")) + (
            Param("allow_duplicate", B, "Write even when an exact duplicate exists.", default=False),),
        run="records:add_record", json_input=True,
        example="python3 scripts/add_record.py --kind event --title '妹妹订婚' --capture-ids cap-... --entity-refs person-sister",
        output=_RECORD_OUT, optional=_RECORD_OPTIONAL,
    ),
    Command(
        name="update_state", tool="personal_update_state",
        summary="Supersede a current state or decision with a new version citing the new words.",
        description="Creates a new record that supersedes the given state/decision; the old one becomes superseded "
                    "and stays readable. When the claim changes, a conflict block shows both claims with dates and "
                    "sources so the agent can ask whether it changed or was wrong. Words about an earlier time than "
                    "the current state never replace it: both are kept and the new one is uncertain. Without a "
                    "date_start the new version starts on the day its words were said, never on the old one's date.",
        params=(Param("id", S, "The current state or decision to update.", required=True),
                Param("capture_ids", A, "Captures of the words that changed it.", required=True))
        + _record_params(skip=("id", "kind", "capture_ids", "supersedes", "status")),
        run="records:update_state", json_input=True,
        example="python3 scripts/update_state.py --id state-... --summary '已经卖掉了 Switch' --capture-ids cap-...",
        output=_RECORD_OUT, optional=_RECORD_OPTIONAL,
    ),
    Command(
        name="merge_entities", tool="personal_merge_entities",
        summary="Merge a duplicate entity into its canonical one (a redirect with a reason).",
        description="The old entity becomes a redirect to the canonical one; every reference to the old id resolves "
                    "to the canonical id, its names become aliases, and the old id stays visible with the reason.",
        params=(Param("from_id", S, "The duplicate entity id.", required=True, flag="--from"),
                Param("into", S, "The canonical entity id.", required=True),
                Param("reason", S, "Why they are the same.", required=True),
                Param("capture_ids", A, "Captures where the user said so, if any.")),
        run="records:merge_entities", json_input=True,
        example="python3 scripts/merge_entities.py --from person-laoma --into person-mom --reason 'user: 老妈 is my mom'",
        output=_obj(**{"from": S, "into": S, "reason": S, "aliases": array_of(S), "references_resolved": I, "redirect": O}),
        optional=obj(warnings=_WARNINGS),
    ),
    Command(
        name="add_followup", tool="personal_add_followup",
        summary="Remember to ask about something later, tied to the words that raised it.",
        description="Stores a follow-up question with its context and source capture, due at a date or by a rule "
                    "(+3d, +2w, +1m). Due follow-ups come back in preflight with a ready, contextual prompt.",
        params=(Param("question", S, "What to ask when it is due.", required=True),
                Param("capture_id", S, "The capture of the words that raised it.", required=True),
                Param("context", S, "What was said, and when."),
                Param("expectation", S, "What was expected to happen."),
                Param("due_at", S, "Due date or date-time (ISO)."),
                Param("due_rule", S, "Relative due rule: +Nd, +Nw or +Nm."),
                Param("id", S, "Explicit id; generated when absent.")),
        run="followups:add_followup", json_input=True,
        example="python3 scripts/add_followup.py --question '面试怎么样了？' --capture-id cap-... --due-rule +3d",
        output=_obj(id=S, followup=O),
        optional=obj(warnings=_WARNINGS),
    ),
    Command(
        name="followup_check", tool="personal_followup_check",
        summary="List due, upcoming and undated follow-ups (due ones come with a ready prompt).",
        description="Lists open follow-ups: due (with a contextual prompt quoting what the user said), upcoming within "
                    "the {arg:horizon} (default 3 days) and undated. Marks the due ones as checked.",
        params=(Param("as_of", S, "Check as of this date (default now)."),
                Param("horizon", I, "Days ahead counted as upcoming.", default=3, minimum=0)),
        run="followups:followup_check",
        example="python3 scripts/followup_check.py --as-of 2026-12-01",
        output=_obj(as_of=S, horizon_days=I, due=_DUE_REF, upcoming=_DUE_REF, undated=_DUE_REF), defs={"followups": _DUE},
    ),
    Command(
        name="resolve_followup", tool="personal_resolve_followup",
        summary="Close a follow-up: answered, declined or resolved, with a specific note.",
        description="Closes an open follow-up through one channel: answered (optionally bound to the capture of the "
                    "user's answer), declined (the user would rather not say) or resolved (superseded or obsolete). "
                    "Rows are never deleted.",
        params=(Param("id", S, "The follow-up id.", required=True),
                Param("resolution", S, "answered, declined or resolved.", required=True, enum=("answered", "declined", "resolved")),
                Param("note", S, "What happened (specific).", required=True),
                Param("capture_id", S, "Capture of the user's answer.")),
        run="followups:resolve_followup", json_input=True,
        example="python3 scripts/resolve_followup.py --id fu-... --resolution answered --note '拿到 offer 了' --capture-id cap-...",
        output=_obj(id=S, status=S, resolution=O),
    ),
    Command(
        name="add_hypothesis", tool="personal_add_hypothesis",
        summary="Propose a hypothesis (or intent guess) backed by at least two records from different dates.",
        description="Stores a model guess as a candidate hypothesis (layer model_hypothesis), never as a fact. It needs "
                    "at least two independent supporting records from different dates; list counter-evidence in "
                    "{arg:contradicts} and other explanations in {arg:alternatives}. {arg:kind=intent} makes a short-lived intent guess "
                    "that expires (default 7 days).",
        params=(Param("claim", S, "The guess, stated as a guess.", required=True),
                Param("supports", A, "Ids of supporting records (two or more, different dates).", required=True),
                Param("id", S, "Explicit id."), Param("title", S, "Short title (defaults to the claim)."),
                Param("mechanism", S, "How it would work."), Param("contradicts", A, "Records that speak against it."),
                Param("alternatives", A, "Other explanations."), Param("scope", S, "Where it is meant to hold."),
                Param("confidence", N, "0..1.", minimum=0),
                Param("kind", S, "hypothesis or intent.", default="hypothesis", enum=("hypothesis", "intent")),
                Param("expires_at", S, "Intent only: when the guess expires."),
                Param("domain", S, "Life branch."), Param("entity_refs", A, "Entities it is about."),
                Param("sensitivity", S, "ordinary, private or highly-private.", enum=("ordinary", "private", "highly-private"))),
        run="hypotheses:add_hypothesis", json_input=True,
        example="python3 scripts/add_hypothesis.py --claim 'Sunday evenings bring work dread' --supports event-a event-b",
        output=_RECORD_OUT, optional=_RECORD_OPTIONAL,
    ),
    Command(
        name="review_hypothesis", tool="personal_review_hypothesis",
        summary="Confirm (with the user's words) or reject a candidate hypothesis.",
        description="confirmed needs the capture of the user's explicit confirmation; rejected keeps the row with its "
                    "note. A reviewed hypothesis keeps its verdict.",
        params=(Param("id", S, "The hypothesis id.", required=True),
                Param("status", S, "confirmed or rejected.", required=True, enum=("confirmed", "rejected")),
                Param("note", S, "Why (specific).", required=True),
                Param("capture_id", S, "The user's confirmation (required to confirm).")),
        run="hypotheses:review_hypothesis", json_input=True,
        example="python3 scripts/review_hypothesis.py --id hypothesis-... --status rejected --note 'user: it is the commute, not work'",
        output=_obj(id=S, status=S, review=O),
    ),
    Command(
        name="current_state", tool="personal_current_state",
        summary="The current-state view: core, reality, load, tensions, next (1-3 items each).",
        description="Computed from records, each item linking to its record: core (values, rules, preferences), "
                    "reality (ongoing facts), load (feelings, energy, stress), tensions (open decisions, conflicts), "
                    "next (due follow-ups, deadlines). Highly-private records are left out.",
        params=(Param("as_of", S, "As of this date (default now)."),),
        run="understanding:current_state", read_only=True, idempotent=True,
        example="python3 scripts/current_state.py",
        output=_obj(as_of=S, core=array_of(O), reality=array_of(O), load=array_of(O), tensions=array_of(O),
                    next=array_of(O), counts=O),
    ),
    Command(
        name="conversation_starters", tool="personal_conversation_starters",
        summary="One conversation starter at a time, citing the gap it came from.",
        description="Suggests one thing to ask: due follow-ups first, then the emptiest life branches, then states "
                    "not updated for a long time. Each suggestion cites its gap; pass {arg:skip} for the next one.",
        params=(Param("skip", I, "How many suggestions to skip.", default=0, minimum=0),
                Param("as_of", S, "As of this date (default now)."),
                Param("language", S, "en or zh.", default="en", enum=("en", "zh"))),
        run="understanding:conversation_starters", read_only=True, idempotent=True,
        example="python3 scripts/conversation_starters.py --language zh",
        output=_obj(suggestion=nullable(O, "The suggestion and its gap; null when there is nothing to suggest."),
                    remaining=I, position=I, next_skip=nullable(I)),
    ),
]

_GATE = (Param("turn_id", S, "The current turn (interactive reads cite it, or its capture)."),
         Param("capture_id", S, "The current turn's capture id."),
         Param("maintenance", B, "A read outside a user turn (audits, tools); traced as maintenance.", default=False))

COMMANDS += [
    Command(
        name="retrieve_v2", tool="personal_retrieve",
        summary="Recall: probe the archive for a query (or read the words behind ids with a deep read).",
        description="Finds what the user needs even when the words differ. Channels are scored separately "
                    "(timeline, knowledge, entities, verbatim captures) and fused into `top`; entity aliases route to "
                    "the records about that person; `associations` spread over the entity/concept graph from what the "
                    "query hit, each with its `via` path. Time words in the query (上周, 去年夏天, last March) are "
                    "resolved against {arg:as_of} and boost matching rows; {arg:window} filters by date overlap; {arg:as_of} answers "
                    "what was true then. Output is bounded (total/shown/truncated/next_offset) and every row says why "
                    "it came up and whether it rests on the user's words. {arg:level=deep} with {arg:ids} returns the verbatim "
                    "text or exact spans. A read cites the turn ({arg:turn_id} or {arg:capture_id}), or says {arg:maintenance=true}. 'Nothing "
                    "found' is about what is saved, never proof that something did not happen.",
        params=(_QUERY,
                Param("level", S, "probe (default) or deep.", default="probe", enum=("probe", "deep")),
                Param("ids", A, "Record or capture ids: fetch them (probe) or read their words (deep)."))
        + _FILTERS + (
                Param("limit", I, "Rows in top.", default=10, minimum=1),
                Param("offset", I, "Skip this many fused rows (paging).", default=0, minimum=0),
                Param("budget", I, "Approximate tokens of material to return (default 2000; deep 4000).", minimum=100),
                Param("per_episode", I, "At most this many rows from one conversation (0: no cap).", default=3, minimum=0))
        + _GATE,
        run="retrieval.probe:retrieve", read_only=True, writes_trace=True,
        example="python3 scripts/retrieve_v2.py --query '妹妹的婚礼' --capture-id cap-...",
        output=dict(page(), **obj(status=S, trace_id=_TRACE_ID, budget=O)),
        optional=obj(top=array_of(O), items=array_of(O), query=nullable(S), mode=S, level=S, scope=S, tokens=array_of(O),
                     time=array_of(O), channels=O, associations=array_of(O), evidence_fidelity=O, missing=array_of(S),
                     note=S),
    ),
    Command(
        name="catalog_context", tool="personal_catalog",
        summary="A compact map of the archive: life spine, current state, who is who, cards, due follow-ups.",
        description="{arg:view=survey} (default): life spine (pivotal and key events by phase), current state, entity "
                    "directory (top by mentions, paged), context cards, due follow-ups, hypothesis stubs (the claim "
                    "only when the query hits it), summary debt and audit counts; bounded in size whatever the "
                    "archive size. {arg:view=routing} groups records by life branch ranked against the query. {arg:view=full} "
                    "pages through every record (total/shown/truncated/next_offset).",
        params=(Param("view", S, "survey, routing or full.", default="survey", enum=("survey", "routing", "full")),
                Param("query", S, "Optional query to rank against."),
                Param("offset", I, "Paging offset (entity directory, full view).", default=0, minimum=0),
                Param("limit", I, "Page size for the full view.", default=100, minimum=1)) + _GATE,
        run="retrieval.survey:catalog", read_only=True, writes_trace=True,
        example="python3 scripts/catalog_context.py --view survey --maintenance",
        output=_obj(view=S, query=nullable(S), bytes=I, trace_id=_TRACE_ID),
        optional=dict(page(), **obj(items=array_of(O), offset=I, domains=array_of(O), life_spine=O, life_spine_total=I,
                                   current_state=O, entity_directory=O, context_cards=array_of(O), derived_facets=I,
                                   due_followups=array_of(O), hypotheses=array_of(O), audit=O)),
    ),
    Command(
        name="verify_quote", tool="personal_verify_quote",
        summary="Check that a quotation is exactly in a capture, with its offsets.",
        description="Exact-substring check of a quote against one capture's text. Use it before presenting "
                    "anything as the user's own words; a quote that is not found must not be shown as a quotation.",
        params=(Param("capture_id", S, "The capture to check against.", required=True),
                Param("quote", S, "The exact quotation.", required=True)),
        run="retrieval.deep:verify_quote", read_only=True, idempotent=True,
        example="python3 scripts/verify_quote.py --capture-id cap-... --quote '有点舍不得'",
        output=_obj(capture_id=S, found=B, offsets=array_of(A), utf8_sha256=S, captured_at=S, occurred_at=nullable(S),
                    note=S),
    ),
    Command(
        name="import_history", tool="personal_import_history",
        summary="Import conversation history (jsonl, locomo, chatgpt, text, whatsapp, telegram) as verbatim captures.",
        description="Every message becomes a capture with its speaker, its side (the user's or the other party's) "
                    "and its event time (occurred_at) kept apart from the save time. The jsonl format is one message "
                    "per line {ref, speaker, text, occurred_at, session_id}; text is 'Speaker: words' lines, with "
                    "optional date headers ('# 2023-05-08') or a leading '[time]'; whatsapp is the app's 'Export chat' "
                    "text (its notices are left out, the dates' day-month order is read from the file); telegram is "
                    "the app's JSON export (result.json) of one chat or of the whole account. "
                    "Dates: " + IMPORT_DATE_FORMS + ". "
                    "The output maps every ref to its capture id. Re-importing the same file or a renamed copy adds "
                    "nothing; re-running an interrupted import completes it. An invalid line refuses the whole file "
                    "(nothing imported) unless {arg:skip_invalid=true}. Imported captures are closed as no-derivation-needed "
                    "(kept verbatim for recall; derive on demand).",
        params=(Param("file", S, "The file to import.", required=True, positional=True, path="read"),
                Param("format", S, "jsonl, locomo, chatgpt, text, whatsapp or telegram.", required=True,
                      enum=("jsonl", "locomo", "chatgpt", "text", "whatsapp", "telegram")),
                Param("user_speaker", S, "Which speaker is the archive's owner (default: per format)."),
                Param("sample_ids", A, "locomo only: import just these samples."),
                Param("skip_invalid", B, "Leave invalid lines out (they are listed under invalid) and import the rest.",
                      default=False),
                Param("date_order", S, "whatsapp only, when the file's dates cannot tell: dmy (21/03/2024) or mdy (3/21/24).",
                      enum=("dmy", "mdy"))),
        run="history:import_history", idempotent=True,
        example="python3 scripts/import_history.py chats.jsonl --format jsonl",
        output=_obj(file=S, format=S, messages=I, imported=I, already_present=I, skipped=array_of(O), mapping=O),
    ),
]

COMMANDS += [
    Command(
        name="rebuild_views", tool="personal_rebuild_views",
        summary="Regenerate every derived view (indexes, ledger projection, dashboard data) from the sources of truth.",
        description="Drops and rebuilds everything under memory/v2/views (the archive and recall indexes, the "
                    "archive lexicon, dashboard data) and the ledger projection from captures, logs and records. The "
                    "result is the same as what incremental updates produced; nothing in the sources is touched.",
        params=(), run="views:rebuild_views", idempotent=True,
        example="python3 scripts/rebuild_views.py",
        output=_obj(rebuilt=array_of(S), generated_at=S, captures=I, records=I, recall_documents=I, archive_words=I),
    ),
    Command(
        name="open_dashboard", tool="personal_open_dashboard",
        summary="Write the audit dashboard for this archive (rebuilding its data if stale) and open it.",
        description="Rebuilds the dashboard data when the archive changed since it was written, writes the static "
                    "dashboard page for this archive under memory/v2/views/dashboard/, prints {\"page\": PATH} and "
                    "opens it in the default browser unless {arg:no_open=true}. The page works from disk with no server and "
                    "never writes.",
        params=(Param("no_open", B, "Only write and print the page; do not open a browser.", default=False),),
        run="dashboard:open_dashboard", idempotent=True,
        example="python3 scripts/open_dashboard.py --no-open",
        output=_obj(page=S, data=S, rebuilt=B, opened=B, fingerprint=S, generated_at=S),
    ),
    Command(
        name="pipeline_view", tool="personal_pipeline_view",
        summary="Write a read-only HTML page per turn: receipt, capture, records, closure, retrievals.",
        description="For one turn ({arg:turn_id}) or the {arg:latest} N turns, writes an HTML page showing the receipt decision, "
                    "the capture and its hash, the records derived from it, the ledger closure and each retrieval "
                    "with its tokens, selected and held-back items and association paths. Prints the paths written.",
        params=(Param("turn_id", S, "The turn to show."),
                Param("latest", I, "Show the latest N turns instead.", minimum=1)),
        run="pipeline:pipeline_view", idempotent=True,
        example="python3 scripts/pipeline_view.py --latest 3",
        output=_obj(pages=array_of(S)),
    ),
]

COMMANDS += [
    Command(
        name="backup_archive", tool="personal_backup_archive",
        summary="Snapshot memory/ and sources/ into a zip with a SHA-256 manifest; verify snapshots.",
        description="Writes backups/snapshot-YYYYMMDD-HHMMSS.zip under the archive root with a manifest of every "
                    "file's SHA-256 and of the archive as a whole, verifies it, optionally mirrors it to a second "
                    "folder ({arg:also_to}) and keeps only the newest N snapshots ({arg:keep}). Records the last backup time; "
                    "{cmd:preflight_context} and {cmd:session_check} remind when it is older than 7 days. {arg:verify} re-hashes a snapshot "
                    "(the latest when empty) against its manifest and lists every mismatch. Suited to cron: no "
                    "prompts, exit codes, one log line on stderr.",
        params=(Param("also_to", S, "A second folder to mirror the snapshot into.", path="write"),
                Param("verify", S, "Verify this snapshot instead of backing up (empty: the latest).",
                      const="", path="read"),
                Param("keep", I, "Keep only this many newest snapshots.", minimum=1)),
        run="backup:backup_archive",
        example="python3 scripts/backup_archive.py --also-to /mnt/usb/pu --keep 14",
        output=_obj(snapshot=S, verified=B, files=I, archive_sha256=S),
        optional=obj(created_at=S, bytes=I, manifest=S, mirror=nullable(S), rotated_out=array_of(S), problems=array_of(S)),
        ok=lambda r: r.get("verified", True),
        stderr_lines=lambda r: [__import__("personal_understanding.backup", fromlist=["log_line"]).log_line(r)],
    ),
    Command(
        name="restore_archive", tool="personal_restore_archive",
        summary="Restore from a snapshot: verified first, dry run by default, forgotten material stays forgotten.",
        description="Verifies the snapshot against its manifest (a corrupt or tampered one is refused and nothing is "
                    "touched) and lists what would be added, changed and removed. With {arg:apply=true}: snapshots the current "
                    "state first, puts the files back, applies today's tombstones again so forgotten material never "
                    "returns, drops derived views and ends with validation.",
        params=(Param("snapshot", S, "The snapshot zip to restore.", required=True, positional=True, path="read"),
                Param("apply", B, "Really restore (default: dry run).", default=False)),
        run="restore:restore_archive", destructive=True,
        example="python3 scripts/restore_archive.py backups/snapshot-20261130-080000.zip --apply",
        output=_obj(snapshot=S, verified=B, dry_run=B, applied=B),
        optional=obj(created_at=S, would_add=array_of(S), would_change=array_of(S), would_remove=array_of(S), next=S),
    ),
    Command(
        name="forget", tool="personal_forget",
        summary="Forget a capture or a record permanently, only when the user asks (a dry run unless confirmed).",
        description="Without {arg:confirm=true}, lists everything that would be removed or changed. With it: the "
                    "capture's bytes go; records resting only on it go, others lose the parts citing it; its "
                    "follow-ups close; receipts and traces lose its words; views are rebuilt. A tombstone (ids and "
                    "hashes, never content) keeps restores and re-imports from bringing it back. Only on the user's "
                    "explicit request.",
        params=(Param("id", S, "The capture or record id to forget.", required=True, positional=True),
                Param("confirm", B, "Apply (default: dry run).", default=False)),
        run="forget:forget", destructive=True,
        example="python3 scripts/forget.py cap-20261130-080000-1a2b3c4d --confirm",
        output=_obj(id=S, kind=S, dry_run=B, applied=B, records_removed=array_of(S), records_edited=array_of(S),
                    followups_closed=array_of(S), captures_reclosed=array_of(S)),
        optional=obj(capture_file=S, next=S, note=S),
    ),
    Command(
        name="record_feedback", tool="personal_record_feedback",
        summary="Record the user's verdict on memories an answer used (helpful, missed, corrected, unclear).",
        description="Only with the capture of the user's own words about the answer: silence is not feedback. "
                    "Misses and corrections feed the review package.",
        params=(Param("capture_id", S, "The capture of what the user said about the answer.", required=True),
                Param("verdict", S, "helpful, missed, corrected or unclear.", required=True, enum=VERDICT_ENUM),
                Param("record_ids", A, "The records the answer used."),
                Param("trace_id", S, "The retrieval trace the answer came from."),
                Param("note", S, "What was missed or corrected.")),
        run="review:record_feedback", json_input=True,
        example="python3 scripts/record_feedback.py --capture-id cap-... --verdict corrected --record-ids event-... --note '是表姐不是堂姐'",
        output=_obj(saved=B, feedback=O),
    ),
    Command(
        name="salience_review", tool="personal_salience_review",
        summary="Demote imported-heuristic weights nobody confirmed in N days to 0 (dry run by default).",
        description="Lists records whose salience came from an import heuristic, is above 0, and was not confirmed "
                    "(no helpful feedback) within {arg:min_age_days}; with {arg:apply=true}, appends versions with salience 0. Demoted "
                    "records stay reachable by keyword, entity and window.",
        params=(Param("min_age_days", I, "Only records older than this many days.", default=180, minimum=0),
                Param("apply", B, "Apply the demotion (default: dry run).", default=False)),
        run="review:salience_review",
        example="python3 scripts/salience_review.py --min-age-days 180 --apply",
        output=_obj(dry_run=B),
        optional=obj(would_demote=array_of(O), kept_by_feedback=array_of(S), demoted=array_of(S), next=S),
    ),
    Command(
        name="review_v2", tool="personal_review",
        summary="A review package: risky items to re-check against the user's words (never rewrites anything).",
        description="Lists attribution doubts, time-order doubts, facts worded as guesses, summary debt, hypotheses "
                    "without counter-evidence, feedback miss streaks and due follow-ups, each with its id and ({arg:deep=true}) "
                    "the quoted words, for the agent to re-check and correct with {cmd:update_state} or {cmd:add_record}.",
        params=(Param("deep", B, "Include the quoted words for each item.", default=False),
                Param("json", B, "Accepted for compatibility; the output is always one JSON object.", default=True),
                Param("offset", I, "Skip this many items (paging: pass next_offset).", default=0, minimum=0),
                Param("limit", I, "At most this many items.", default=50, minimum=1)),
        run="review:review_v2", read_only=True, idempotent=True,
        example="python3 scripts/review_v2.py --deep --json",
        output=dict(page(), **obj(generated_at=S, items=array_of(O), counts=O, due_followups=_DUE, note=S)),
    ),
]

BY_NAME = {c.name: c for c in COMMANDS}
BY_TOOL = {c.tool: c for c in COMMANDS if c.mcp}


def get(name):
    return BY_NAME[name]


# Tool profiles: what an MCP server offers. `default` is made for chat turns (a personal turn is two calls:
# turn, remember; a question to the memory is one); `all` adds every fine-grained and maintenance operation.
PROFILES = {
    "default": ("turn", "remember", "recall", "verify_quote", "current_state", "followup_check", "forget"),
    "all": None,
}


def profile(name="default"):
    """The commands a tool profile offers, in registry order."""
    from .errors import PuError

    if name not in PROFILES:
        raise PuError("BAD_ARGUMENT", f"unknown tool profile {name!r}", f"One of {', '.join(PROFILES)}.")
    names = PROFILES[name]
    return [c for c in COMMANDS if c.mcp and (names is None or c.name in names)]
