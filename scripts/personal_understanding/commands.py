"""The command registry: one entry per operation, shared by the CLI and the MCP server.

Each entry names its script (scripts/<name>.py), its MCP tool, its parameters
(one list drives argparse and the tool's inputSchema), its description (the
CLI help and the tool description are the same text), the library function
that does the work, and the shape of its result.
"""

import importlib

from .importdates import FORMS_HELP as IMPORT_DATE_FORMS


class Param:
    """One argument: its JSON type, help, and how the CLI spells it."""

    def __init__(self, name, type, help, required=False, default=None, enum=None, items="string",
                 positional=False, text=False, flag=None, cli=True, mcp=True, const=None, minimum=None, path=None):
        self.name = name
        self.type = type  # string | integer | number | boolean | array | object
        self.help = help
        self.required = required
        self.default = default
        self.enum = enum
        self.items = items  # element type of arrays
        self.positional = positional  # CLI takes it as a bare argument too
        self.text = text  # CLI also reads it from --file PATH or --stdin
        self.flag = flag  # CLI flag when it differs from --name-with-dashes
        self.cli = cli
        self.mcp = mcp
        self.const = const  # CLI: the flag may be given without a value, meaning this
        self.minimum = minimum  # integers and numbers: the smallest value accepted (both faces)
        self.path = path  # "read" / "write": a file system path, confined over MCP (inputs.confine)

    @property
    def cli_flag(self):
        return self.flag or "--" + self.name.replace("_", "-")

    def schema(self):
        out = {"type": self.type, "description": self.help}
        if self.enum:
            out["enum"] = list(self.enum)
        if self.type == "array":
            out["items"] = {"type": self.items}
        if self.default is not None:
            out["default"] = self.default
        if self.minimum is not None:
            out["minimum"] = self.minimum
        return out


class Command:
    """One operation: its script, its tool, its parameters and its result."""

    def __init__(self, name, tool, summary, description, params, run, example, read_only=False, destructive=False,
                 idempotent=False, json_input=False, output=None, ok=None, stderr_lines=None, mcp=True):
        self.name = name  # script name, scripts/<name>.py
        self.tool = tool  # MCP tool name
        self.summary = summary  # one line
        self.description = description  # for a person and for a model
        self.params = tuple(params)
        self.run = run  # "module:function", imported on use so a CLI call loads only what it needs
        self.example = example
        self.read_only = read_only
        self.destructive = destructive
        self.idempotent = idempotent
        # Every write command takes its whole argument object as --json FILE|- (the MCP tool's arguments).
        self.json_input = json_input or (not read_only and bool(self.params))
        self.output = output or {}  # JSON Schema properties always present in the result
        self.ok = ok  # result -> bool; False makes the CLI exit 1
        self.stderr_lines = stderr_lines  # result -> lines a person reads on the CLI's stderr
        self.mcp = mcp

    def function(self):
        module, func = self.run.split(":")
        return getattr(importlib.import_module(f"personal_understanding.{module}"), func)

    def output_schema(self):
        return {"type": "object", "properties": self.output, "required": sorted(self.output),
                "additionalProperties": True}

    def input_schema(self):
        props = {p.name: p.schema() for p in self.params if p.mcp}
        required = [p.name for p in self.params if p.mcp and p.required]
        schema = {"type": "object", "properties": props, "additionalProperties": False}
        if required:
            schema["required"] = required
        return schema


S, I, B, A, O, N = "string", "integer", "boolean", "array", "object", "number"
VERDICT_ENUM = ("helpful", "missed", "corrected", "unclear")

_TURN = Param("turn_id", S, "The turn's id, as returned by preflight.", required=True)
_CAPTURE = Param("capture_id", S, "A capture id.", required=True)


def _obj(**props):
    return {k: {"type": v} if isinstance(v, str) else v for k, v in props.items()}


COMMANDS = [
    Command(
        name="init_archive", tool="personal_init_archive",
        summary="Create the archive layout (idempotent).",
        description="Create memory/ and sources/ under the archive root. A second run changes nothing and says so. "
                    "A new archive is empty: nothing about anyone is pre-seeded.",
        params=(), run="archive:init_archive", idempotent=True,
        example="python3 scripts/init_archive.py --root ~/my-memory",
        output=_obj(root=S, created=A, changed=B, message=S),
    ),
    Command(
        name="preflight_context", tool="personal_preflight_turn",
        summary="Classify a user message and write the turn's receipt (call first, every turn).",
        description="Call before answering each user message. Classifies the exact message (personal, technical or "
                    "non-personal; Chinese and English), writes an append-only turn receipt with its tier, reasons and "
                    "required actions, and returns them. tier=full declares the turn personal (upgrades an earlier "
                    "receipt); tier=skip records any personal reasons it overrides. The same turn id with a different "
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
        output=_obj(receipt=O, turn_id=S, repeated=B, next=S),
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
        output=_obj(captured=B, verified=B, capture_id=S, path=S, utf8_sha256=S, ledger_status=S),
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
        output=_obj(captured=B, capture_id=S, sha256=S, blob=S, reused_existing_bytes=B),
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
        output=_obj(capture_id=S, status=S, record_ids=A, changed=B),
    ),
    Command(
        name="derivation_ledger", tool="personal_derivation_ledger",
        summary="Audit the derivation ledger against captures and records; --repair rebuilds it.",
        description="Lists captures that are unregistered, missing, derived without records or closed without a "
                    "reason. With repair=true, appends the events that make the ledger agree and rewrites the "
                    "projection memory/derivation-ledger.json.",
        params=(Param("repair_ledger", B, "Repair and rewrite the projection.", flag="--repair", default=False),),
        run="ledger:derivation_ledger",
        example="python3 scripts/derivation_ledger.py --repair",
        output={},
    ),
    Command(
        name="session_check", tool="personal_session_check",
        summary="The turn gate: may the agent tell the user it is saved?",
        description="Checks the turn's obligations: receipt present, message captured and closed when required, no "
                    "capture pending anywhere, and the archive structure not failed (only what changed, unless "
                    "full=true). Only when may_claim_saved is true (CLI exit 0) may the agent say it saved anything.",
        params=(
            _TURN,
            Param("allow_warnings", B, "Let structure warnings pass.", default=False),
            Param("full", B, "Validate the whole archive instead of what changed.", default=False),
        ),
        run="gate:session_check", read_only=True, idempotent=True,
        example="python3 scripts/session_check.py --turn-id t1",
        output=_obj(turn_id=S, may_claim_saved=B, obligations_met=B, gates=O, pending_capture_ids=A),
        ok=lambda r: r["obligations_met"],
    ),
    Command(
        name="validate_memory", tool="personal_validate",
        summary="Validate the whole archive: clean, warnings or failed.",
        description="Re-hashes every capture and reads every log: torn or invalid lines, hash mismatches, missing "
                    "files, duplicate ids, ledger and receipt inconsistencies, record rules. Every problem is reported "
                    "as `path:line: code message`. strict=true makes warnings fail.",
        params=(
            Param("strict", B, "Treat warnings as failure.", default=False),
            Param("require_closed_captures", B, "Report pending captures as errors.", default=False),
            Param("json", B, "Include structured problem details.", default=False),
        ),
        run="validate:validate", read_only=True, idempotent=True,
        example="python3 scripts/validate_memory.py --strict",
        output=_obj(status=S, ok=B, errors=I, warnings=I, problems=A),
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


_RECORD_OUT = _obj(id=S, record=O, possible_duplicates=A, warnings=A, links=O, superseded=A)

COMMANDS += [
    Command(
        name="add_record", tool="personal_add_record",
        summary="Add a derived record (event, fact, state, entity, ...) that cites the words it came from.",
        description="Adds one record. Records that state something about the user must cite their capture "
                    "(capture_ids or verbatim_refs spans); entity and context cards organize and need none; legacy "
                    "material without words is accepted only as fidelity=summary_only (summary debt). Returns "
                    "possible_duplicates (same kind, shared entities, near-identical title or summary); an exact "
                    "duplicate is refused unless allow_duplicate. A state that contradicts a current state about the "
                    "same subject_key is kept as uncertain and returned in a conflict block to ask about. Never "
                    "invent dates: an unknown date stays unknown.",
        params=_record_params(required=("kind", "title")) + (
            Param("allow_duplicate", B, "Write even when an exact duplicate exists.", default=False),),
        run="records:add_record", json_input=True,
        example="python3 scripts/add_record.py --kind event --title '妹妹订婚' --capture-ids cap-... --entity-refs person-sister",
        output=_RECORD_OUT,
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
        output=_RECORD_OUT,
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
        output=_obj(**{"from": S, "into": S, "reason": S, "redirect": O}),
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
    ),
    Command(
        name="followup_check", tool="personal_followup_check",
        summary="List due, upcoming and undated follow-ups (due ones come with a ready prompt).",
        description="Lists open follow-ups: due (with a contextual prompt quoting what the user said), upcoming within "
                    "the horizon (default 3 days) and undated. Marks the due ones as checked.",
        params=(Param("as_of", S, "Check as of this date (default now)."),
                Param("horizon", I, "Days ahead counted as upcoming.", default=3, minimum=0)),
        run="followups:followup_check",
        example="python3 scripts/followup_check.py --as-of 2026-12-01",
        output=_obj(due=A, upcoming=A, undated=A),
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
                    "contradicts and other explanations in alternatives. kind=intent makes a short-lived intent guess "
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
        output=_RECORD_OUT,
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
        description="A compact picture of now, computed from records: core (values, rules, preferences), reality "
                    "(ongoing life facts), load (stated feelings, energy, stress), tensions (open decisions, "
                    "conflicts), next (due follow-ups, deadlines). Every item links to its record. Highly-private "
                    "records are left out.",
        params=(Param("as_of", S, "As of this date (default now)."),),
        run="understanding:current_state", read_only=True, idempotent=True,
        example="python3 scripts/current_state.py",
        output=_obj(core=A, reality=A, load=A, tensions=A, next=A),
    ),
    Command(
        name="conversation_starters", tool="personal_conversation_starters",
        summary="One conversation starter at a time, citing the gap it came from.",
        description="Suggests one thing to ask: due follow-ups first, then the emptiest life branches, then states "
                    "not updated for a long time. Each suggestion cites its gap; pass skip for the next one.",
        params=(Param("skip", I, "How many suggestions to skip.", default=0, minimum=0),
                Param("as_of", S, "As of this date (default now)."),
                Param("language", S, "en or zh.", default="en", enum=("en", "zh"))),
        run="understanding:conversation_starters", read_only=True, idempotent=True,
        example="python3 scripts/conversation_starters.py --language zh",
        output=_obj(suggestion={"description": "The suggestion and its gap; null when there is nothing to suggest."},
                    remaining=I),
    ),
]

_TRACE_ID = {"description": "The retrieval trace's id; null when the archive could not be written (a read-only "
                             "copy or a full disk): the read is complete, only its trace is missing."}
_GATE = (Param("capture_id", S, "The current turn's capture id (interactive reads cite it)."),
         Param("maintenance", B, "A read outside a user turn (audits, tools); traced as maintenance.", default=False))

COMMANDS += [
    Command(
        name="retrieve_v2", tool="personal_retrieve",
        summary="Recall: probe the archive for a query (or read the words behind ids with level=deep).",
        description="Finds what the user needs even when the words differ. Channels are scored separately "
                    "(timeline, knowledge, entities, verbatim captures) and fused into `top`; entity aliases route to "
                    "the records about that person; `associations` spread over the entity/concept graph from what the "
                    "query hit, each with its `via` path. Time words in the query (上周, 去年夏天, last March) are "
                    "resolved against as_of and boost matching rows; window filters by date overlap; as_of answers "
                    "what was true then. Output is bounded (total/shown/truncated/next_offset) and every row says why "
                    "it came up and whether it rests on the user's words. level=deep with ids returns the verbatim "
                    "text or exact spans. A read cites the turn's capture_id, or says maintenance=true. 'Nothing "
                    "found' is about what is saved, never proof that something did not happen.",
        params=(Param("query", S, "What to look for, in the user's words or a clue.", positional=True),
                Param("level", S, "probe (default) or deep.", default="probe", enum=("probe", "deep")),
                Param("ids", A, "Record or capture ids: fetch them (probe) or read their words (deep)."),
                Param("window", S, "Date window YYYY[-MM[-DD]] or A:B (either side may be empty)."),
                Param("phase", S, "Only records of this life phase (childhood, university, ...)."),
                Param("as_of", S, "Answer as of this date: states and decisions true then."),
                Param("limit", I, "Rows in top.", default=10, minimum=1),
                Param("offset", I, "Skip this many fused rows (paging).", default=0, minimum=0),
                Param("expand", A, "Alternative phrasings to search too; they never become facts."),
                Param("domain", S, "Only this life branch."),
                Param("budget", I, "Approximate tokens of material to return (default 2000; deep 4000).", minimum=100),
                Param("per_episode", I, "At most this many rows from one conversation (0: no cap).", default=3, minimum=0))
        + _GATE,
        run="retrieval.probe:retrieve", read_only=True,
        example="python3 scripts/retrieve_v2.py --query '妹妹的婚礼' --capture-id cap-...",
        output=_obj(status=S, top=A, total=I, shown=I, truncated=B, trace_id=_TRACE_ID),
    ),
    Command(
        name="catalog_context", tool="personal_catalog",
        summary="A compact map of the archive: life spine, current state, who is who, cards, due follow-ups.",
        description="view=survey (default): life spine (pivotal and key events by phase), current state, entity "
                    "directory (top by mentions, paged), context cards, due follow-ups, hypothesis stubs (the claim "
                    "only when the query hits it), summary debt and audit counts; bounded in size whatever the "
                    "archive size. view=routing groups records by life branch ranked against the query. view=full "
                    "pages through every record (total/shown/next_offset).",
        params=(Param("view", S, "survey, routing or full.", default="survey", enum=("survey", "routing", "full")),
                Param("query", S, "Optional query to rank against."),
                Param("offset", I, "Paging offset (entity directory, full view).", default=0, minimum=0),
                Param("limit", I, "Page size for the full view.", default=100, minimum=1)) + _GATE,
        run="retrieval.survey:catalog", read_only=True,
        example="python3 scripts/catalog_context.py --view survey --maintenance",
        output=_obj(view=S, bytes=I, trace_id=_TRACE_ID),
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
        output=_obj(capture_id=S, found=B, offsets=A),
    ),
    Command(
        name="import_history", tool="personal_import_history",
        summary="Import conversation history (jsonl, locomo, chatgpt, text) as verbatim captures.",
        description="Every message becomes a capture with its speaker, its side (the user's or the other party's) "
                    "and its event time (occurred_at) kept apart from the save time. The jsonl format is one message "
                    "per line {ref, speaker, text, occurred_at, session_id}; text is 'Speaker: words' lines, with "
                    "optional date headers ('# 2023-05-08') or a leading '[time]'. Dates: " + IMPORT_DATE_FORMS + ". "
                    "The output maps every ref to its capture id. Re-importing the same file or a renamed copy adds "
                    "nothing; re-running an interrupted import completes it. An invalid line refuses the whole file "
                    "(nothing imported) unless skip_invalid. Imported captures are closed as no-derivation-needed "
                    "(kept verbatim for recall; derive on demand).",
        params=(Param("file", S, "The file to import.", required=True, positional=True, path="read"),
                Param("format", S, "jsonl, locomo, chatgpt or text.", required=True,
                      enum=("jsonl", "locomo", "chatgpt", "text")),
                Param("user_speaker", S, "Which speaker is the archive's owner (default: per format)."),
                Param("sample_ids", A, "locomo only: import just these samples."),
                Param("skip_invalid", B, "Leave invalid lines out (they are listed under invalid) and import the rest.",
                      default=False)),
        run="history:import_history", idempotent=True,
        example="python3 scripts/import_history.py chats.jsonl --format jsonl",
        output=_obj(imported=I, already_present=I, mapping=O),
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
        output=_obj(rebuilt=A, generated_at=S),
    ),
    Command(
        name="open_dashboard", tool="personal_open_dashboard",
        summary="Write the audit dashboard for this archive (rebuilding its data if stale) and open it.",
        description="Rebuilds the dashboard data when the archive changed since it was written, writes the static "
                    "dashboard page for this archive under memory/v2/views/dashboard/, prints {\"page\": PATH} and "
                    "opens it in the default browser unless no_open. The page works from disk with no server and "
                    "never writes.",
        params=(Param("no_open", B, "Only write and print the page; do not open a browser.", default=False),),
        run="dashboard:open_dashboard", idempotent=True,
        example="python3 scripts/open_dashboard.py --no-open",
        output=_obj(page=S),
    ),
    Command(
        name="pipeline_view", tool="personal_pipeline_view",
        summary="Write a read-only HTML page per turn: receipt, capture, records, closure, retrievals.",
        description="For one turn (turn_id) or the latest N turns, writes an HTML page showing the receipt decision, "
                    "the capture and its hash, the records derived from it, the ledger closure and each retrieval "
                    "with its tokens, selected and held-back items and association paths. Prints the paths written.",
        params=(Param("turn_id", S, "The turn to show."),
                Param("latest", I, "Show the latest N turns instead.", minimum=1)),
        run="pipeline:pipeline_view", idempotent=True,
        example="python3 scripts/pipeline_view.py --latest 3",
        output=_obj(pages=A),
    ),
]

COMMANDS += [
    Command(
        name="backup_archive", tool="personal_backup_archive",
        summary="Snapshot memory/ and sources/ into a zip with a SHA-256 manifest; verify snapshots.",
        description="Writes backups/snapshot-YYYYMMDD-HHMMSS.zip under the archive root with a manifest of every "
                    "file's SHA-256 and of the archive as a whole, verifies it, optionally mirrors it to a second "
                    "folder (also_to) and keeps only the newest N snapshots (keep). Records the last backup time; "
                    "preflight and session_check remind when it is older than 7 days. verify re-hashes a snapshot "
                    "(the latest when empty) against its manifest and lists every mismatch. Suited to cron: no "
                    "prompts, exit codes, one log line on stderr.",
        params=(Param("also_to", S, "A second folder to mirror the snapshot into.", path="write"),
                Param("verify", S, "Verify this snapshot instead of backing up (CLI: --verify alone checks the latest; MCP: an empty string).",
                      const="", path="read"),
                Param("keep", I, "Keep only this many newest snapshots.", minimum=1)),
        run="backup:backup_archive",
        example="python3 scripts/backup_archive.py --also-to /mnt/usb/pu --keep 14",
        output=_obj(),
        ok=lambda r: r.get("verified", True),
        stderr_lines=lambda r: [__import__("personal_understanding.backup", fromlist=["log_line"]).log_line(r)],
    ),
    Command(
        name="restore_archive", tool="personal_restore_archive",
        summary="Restore from a snapshot: verified first, dry run by default, forgotten material stays forgotten.",
        description="Verifies the snapshot against its manifest (a corrupt or tampered one is refused and nothing is "
                    "touched) and lists what would be added, changed and removed. With apply: snapshots the current "
                    "state first, puts the files back, applies today's tombstones again so forgotten material never "
                    "returns, drops derived views and ends with validation.",
        params=(Param("snapshot", S, "The snapshot zip to restore.", required=True, positional=True, path="read"),
                Param("apply", B, "Really restore (default: dry run).", default=False)),
        run="restore:restore_archive", destructive=True,
        example="python3 scripts/restore_archive.py backups/snapshot-20261130-080000.zip --apply",
        output=_obj(verified=B, dry_run=B, applied=B),
    ),
    Command(
        name="forget", tool="personal_forget",
        summary="Forget a capture or a record permanently, only when the user asks (dry run without confirm).",
        description="Without confirm, lists everything that would be removed or changed. With confirm: removes the "
                    "capture's bytes; removes records that rested only on it; records with other sources lose only "
                    "the parts that cited it; follow-ups it raised close as resolved; receipts and traces lose its "
                    "words; derived views are rebuilt. A tombstone keeps ids and hashes (never content) so restores "
                    "and re-imports cannot bring it back. Use only on the user's explicit request.",
        params=(Param("id", S, "The capture or record id to forget.", required=True, positional=True),
                Param("confirm", B, "Apply (default: dry run).", default=False)),
        run="forget:forget", destructive=True,
        example="python3 scripts/forget.py cap-20261130-080000-1a2b3c4d --confirm",
        output=_obj(id=S, dry_run=B, applied=B, records_removed=A, records_edited=A),
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
                    "(no helpful feedback) within min_age_days; with apply, appends versions with salience 0. Demoted "
                    "records stay reachable by keyword, entity and window.",
        params=(Param("min_age_days", I, "Only records older than this many days.", default=180, minimum=0),
                Param("apply", B, "Apply the demotion (default: dry run).", default=False)),
        run="review:salience_review",
        example="python3 scripts/salience_review.py --min-age-days 180 --apply",
        output=_obj(dry_run=B),
    ),
    Command(
        name="review_v2", tool="personal_review",
        summary="A review package: risky items to re-check against the user's words (never rewrites anything).",
        description="Lists attribution doubts, time-order doubts, facts worded as guesses, summary debt, hypotheses "
                    "without counter-evidence, feedback miss streaks and due follow-ups, each with its id and (deep) "
                    "the quoted words, for the agent to re-check and correct with update_state or add_record.",
        params=(Param("deep", B, "Include the quoted words for each item.", default=False),
                Param("json", B, "Accepted for scripts that pass --json; the output is always one JSON object.", default=True),
                Param("limit", I, "At most this many items.", default=50, minimum=1)),
        run="review:review_v2", read_only=True, idempotent=True,
        example="python3 scripts/review_v2.py --deep --json",
        output=_obj(items=A, total=I, counts=O),
    ),
]

BY_NAME = {c.name: c for c in COMMANDS}
BY_TOOL = {c.tool: c for c in COMMANDS if c.mcp}


def get(name):
    return BY_NAME[name]


_PY_TYPES = {"string": str, "integer": int, "number": (int, float), "boolean": bool, "array": list, "object": dict}


def check_arguments(command, args, surface="mcp"):
    """Validate an argument object against the command's parameters.

    Returns a clean dict (defaults filled). Raises PuError(BAD_ARGUMENT) with a
    message naming the parameter; the same rules serve the CLI's --json input
    and MCP tool calls.
    """
    from .errors import PuError

    if not isinstance(args, dict):
        raise PuError("BAD_ARGUMENT", "arguments must be a JSON object", f"See the {command.tool} input schema.")
    known = {p.name: p for p in command.params if getattr(p, surface)}
    unknown = sorted(set(args) - set(known))
    if unknown:
        raise PuError("BAD_ARGUMENT", f"unknown argument(s) {', '.join(unknown)} for {command.name}",
                      f"Known: {', '.join(sorted(known)) or 'none'}.")
    clean = {}
    for name, param in known.items():
        if name not in args or args[name] is None:
            if param.required:
                raise PuError("BAD_ARGUMENT", f"missing required argument {name!r} for {command.name}",
                              f"{name}: {param.help}")
            if param.default is not None:
                clean[name] = param.default
            continue
        value = args[name]
        expected = _PY_TYPES[param.type]
        if (isinstance(value, bool) and param.type != "boolean") or not isinstance(value, expected):
            raise PuError("BAD_ARGUMENT", f"argument {name!r} must be a {param.type}, not {type(value).__name__}",
                          f"{name}: {param.help}")
        if param.type == "array":
            item_type = _PY_TYPES[param.items]
            if not all(isinstance(v, item_type) and not (isinstance(v, bool) and param.items != "boolean") for v in value):
                raise PuError("BAD_ARGUMENT", f"argument {name!r} must be an array of {param.items}s", f"{name}: {param.help}")
        if param.minimum is not None and param.type in ("integer", "number") and value < param.minimum:
            raise PuError("BAD_ARGUMENT", f"argument {name!r} must be {param.minimum} or more, not {value}",
                          f"{name}: {param.help}")
        if param.enum and value not in param.enum:
            raise PuError("BAD_ARGUMENT", f"argument {name!r} must be one of {', '.join(map(str, param.enum))}, not {value!r}",
                          f"{name}: {param.help}")
        clean[name] = value
    return clean
