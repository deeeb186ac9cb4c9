"""Every tool, in every mode, as a client sees it: results match their outputSchema, errors carry
code/message/hint, and nothing that reaches MCP speaks CLI (flags, scripts)."""

import io
import json
import re
from pathlib import Path

from tests.helpers import REPO, ArchiveTest
from tests.schema_check import bare_fields, schema_errors

from personal_understanding import commands, mcp_server

CLI_WORDING = re.compile(r"(?<![\w-])--[a-z][a-z-]*|scripts/|\b[a-z_]+\.py\b")
PERSONAL = "我妹妹小雨下个月在杭州结婚，我有点舍不得。"
PERSONAL_EN = "My sister Anna got into Oxford today, I am so proud of her."
RECALL_ZH = "你还记得我妹妹什么时候结婚吗？"
RECALL_EN = "What do you remember about Anna and Oxford?"


class Client:
    """An in-process MCP session that checks every reply the way a strict host does."""

    def __init__(self, test, tools):
        self.test = test
        self.server = mcp_server.Server(test.root, log=io.StringIO(), tools=tools)
        listed = self.request("tools/list")["tools"]
        self.tools = {t["name"]: t for t in listed}
        self.replies = [json.dumps(listed, ensure_ascii=False)]
        self.modes = {}  # tool -> labels of the calls that passed

    def request(self, method, params=None):
        reply = self.server.handle({"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}})
        self.test.assertIn("result", reply, reply)
        return reply["result"]

    def call(self, tool, args, label="ok", error=None):
        self.test.assertIn(tool, self.tools, f"{tool} is not offered")
        self.test.assertEqual(schema_errors(args, self.tools[tool]["inputSchema"]), [], (tool, label))
        result = self.request("tools/call", {"name": tool, "arguments": args})
        self.replies.append(json.dumps(result, ensure_ascii=False))
        text = json.loads(result["content"][0]["text"])
        if error is not None:
            self.test.assertTrue(result["isError"], (tool, label, text))
            self.test.assertNotIn("structuredContent", result)
            problem = text["error"]
            self.test.assertEqual(problem["code"], error, (tool, label, problem))
            self.test.assertTrue(problem["message"] and problem["hint"], (tool, label, problem))
            self.modes.setdefault(tool, []).append(f"error:{label}")
            return problem
        self.test.assertFalse(result["isError"], (tool, label, text))
        data = result["structuredContent"]
        self.test.assertEqual(text, data)
        problems = schema_errors(data, self.tools[tool]["outputSchema"])
        self.test.assertEqual(problems, [], f"{tool} ({label}) violates its outputSchema")
        self.modes.setdefault(tool, []).append(label)
        return data

    def cli_wording(self):
        return sorted({m for reply in self.replies for m in CLI_WORDING.findall(reply)})


class DefaultProfileTest(ArchiveTest):
    def test_every_default_tool_in_every_mode(self):
        client = Client(self, "default")
        self.assertLessEqual(len(client.tools), 10)
        call = client.call
        t1 = call("personal_turn", {"text": PERSONAL, "turn_id": "t1", "session_id": "s1"}, "personal")
        self.assertTrue(t1["captured"])
        self.assertEqual(call("personal_turn", {"text": PERSONAL, "turn_id": "t1"}, "repeated")["capture_id"], t1["capture_id"])
        call("personal_turn", {"text": PERSONAL + "!", "turn_id": "t1"}, "other message, same turn",
             error="TURN_MESSAGE_MISMATCH")
        call("personal_remember", {"turn_id": "t1", "records": [{"kind": "event", "title": "x", "bogus": 1}]},
             "unknown field", error="BAD_ARGUMENT")
        call("personal_remember", {"turn_id": "t1"}, "no reason", error="LEDGER_REASON_REQUIRED")
        saved = call("personal_remember", {"turn_id": "t1", "records": [
            {"kind": "entity", "entity_type": "person", "id": "person-xiaoyu", "title": "小雨", "aliases": ["妹妹"]},
            {"kind": "event", "id": "event-wedding", "title": "小雨在杭州结婚", "entity_refs": ["person-xiaoyu"],
             "date_start": "2027-01", "date_precision": "month", "felt_then": "有点舍不得"},
            {"kind": "state", "id": "state-leave", "title": "还没决定请不请假", "subject_key": "wedding-leave"}],
            "followups": [{"question": "婚礼准备得怎么样了？", "due_rule": "+3d"}]}, "batch")
        self.assertTrue(saved["may_claim_saved"], saved)
        # Never backed up: the turn says so once; its remember does not repeat it.
        self.assertEqual(t1["backup_reminder"]["code"], "BACKUP_MISSING")
        self.assertNotIn("backup_reminder", saved)
        call("personal_turn", {"text": "how do I reverse a list in python", "turn_id": "t2"}, "skip")
        call("personal_remember", {"turn_id": "t2"}, "skip turn: gate only")
        call("personal_remember", {"turn_id": "t2", "records": [{"kind": "fact", "title": "x"}]}, "skip turn, items",
             error="REMEMBER_NOT_PERSONAL")
        call("personal_remember", {"turn_id": "nope"}, "unknown turn", error="TURN_NO_RECEIPT")
        t3 = call("personal_turn", {"text": "下周还要去杭州一趟，先把请假的事定下来了：请五天。", "turn_id": "t3"}, "personal again")
        fid = saved["written"]["followups"][0]
        call("personal_remember", {"turn_id": "t3", "updates": [{"id": "state-leave", "summary": "请五天假"}],
                                   "resolve_followups": [{"id": fid, "resolution": "answered", "note": "决定请五天假回去"}],
                                   "hypotheses": [{"claim": "x", "supports": ["event-wedding"]}]},
             "one bad hypothesis", error="HYPOTHESIS_NEEDS_SUPPORT")
        call("personal_remember", {"turn_id": "t3", "updates": [{"id": "state-leave", "summary": "请五天假"}],
                                   "resolve_followups": [{"id": fid, "resolution": "answered", "note": "决定请五天假回去"}]},
             "update and resolution")
        read = call("personal_turn", {"text": RECALL_ZH, "turn_id": "t4"}, "read turn")
        self.assertTrue(read["read_turn"])
        self.assertFalse(read["captured"])
        call("personal_recall", {"query": "结婚", "turn_id": "t4"}, "probe")
        call("personal_recall", {"mode": "deep", "ids": ["event-wedding", t1["capture_id"], "nothing-here"],
                                 "turn_id": "t4"}, "deep")
        call("personal_recall", {"mode": "survey", "turn_id": "t4"}, "survey")
        call("personal_recall", {"window": "2027", "turn_id": "t4"}, "window")
        call("personal_recall", {"query": "请假", "as_of": "2026-01-01", "maintenance": True}, "as_of, maintenance")
        call("personal_recall", {"query": "妹妹", "expand": ["sister"], "limit": 1, "offset": 1, "turn_id": "t4"}, "paged")
        call("personal_recall", {"ids": ["event-wedding"], "turn_id": "t4"}, "ids")
        call("personal_recall", {"query": "从来没说过的事", "turn_id": "t4"}, "nothing found")
        call("personal_recall", {"query": "结婚"}, "no gate", error="READ_GATE")
        call("personal_recall", {"mode": "deep", "turn_id": "t4"}, "deep without ids", error="BAD_ARGUMENT")
        call("personal_verify_quote", {"capture_id": t1["capture_id"], "quote": "有点舍不得"}, "found")
        call("personal_verify_quote", {"capture_id": t1["capture_id"], "quote": "很开心"}, "not found")
        call("personal_verify_quote", {"capture_id": "cap-nothing", "quote": "x"}, "unknown", error="CAPTURE_NOT_FOUND")
        call("personal_current_state", {}, "now")
        call("personal_followup_check", {"as_of": "2030-01-01"}, "check")
        call("personal_forget", {"id": t3["capture_id"]}, "dry run")
        call("personal_forget", {"id": t3["capture_id"], "confirm": True}, "confirm")
        call("personal_forget", {"id": "no-such-thing"}, "unknown", error="FORGET_UNKNOWN")
        self.assertEqual(sorted(client.tools), sorted(client.modes), "a tool was never called")
        self.assertEqual(client.cli_wording(), [], "MCP replies name CLI flags or scripts")



    def test_a_state_update_can_say_what_now_holds(self):
        """A move: the update restates the title, so the current state no longer says the old city."""
        client = Client(self, "default")
        call = client.call
        update = client.tools["personal_remember"]["inputSchema"]["properties"]["updates"]["items"]
        self.assertIn("title", update["properties"])  # offered, so an agent knows it may restate it
        t1 = call("personal_turn", {"text": "I live in Portland now, moved here for the job.", "turn_id": "t1"})
        call("personal_remember", {"turn_id": "t1", "records": [
            {"kind": "state", "id": "home", "title": "Lives in Portland", "subject_key": "home-city"}]})
        call("personal_turn", {"text": "Big news: we moved to Seattle last weekend!", "turn_id": "t2"})
        saved = call("personal_remember", {"turn_id": "t2", "updates": [
            {"id": "home", "title": "Lives in Seattle", "summary": "Moved from Portland"}]})
        self.assertTrue(saved["may_claim_saved"], saved)
        state = call("personal_current_state", {})
        self.assertEqual([r["title"] for r in state["reality"]], ["Lives in Seattle"])
        rows = call("personal_turn", {"text": "where do I live?", "turn_id": "t3"})["recall"]["top"]
        old = next(r for r in rows if r["id"] == "home")
        self.assertEqual(old["status"], "superseded")
        self.assertIn(t1["capture_id"], [r["id"] for r in rows])

    def test_a_pet_is_an_entity_of_its_own_kind_and_its_name_finds_it(self):
        # The client checks each call's arguments against the listed schema, so the type must be offered too.
        call = Client(self, "default").call
        said = call("personal_turn", {"text": "I adopted a rescue dog named Biscuit yesterday", "turn_id": "t1"})
        saved = call("personal_remember", {"turn_id": "t1", "records": [
            {"kind": "entity", "entity_type": "pet", "id": "pet-biscuit", "title": "Biscuit", "aliases": ["my dog"]},
            {"kind": "event", "title": "Adopted the rescue dog Biscuit", "entity_refs": ["pet-biscuit"]}]})
        self.assertTrue(saved["may_claim_saved"], saved)
        asked = call("personal_turn", {"text": "how is Biscuit settling in?", "turn_id": "t2"})
        found = asked.get("recall") or asked.get("memories") or {}
        self.assertIn("pet-biscuit", [row["id"] for row in found.get("top", [])])
        self.assertIn(said["capture_id"], [row["id"] for row in found.get("top", [])])


class FullProfileTest(ArchiveTest):
    def test_every_tool_in_every_mode(self):
        client = Client(self, "all")
        call = client.call
        drop = Path(self.root, "imports")  # over MCP, files come from the archive's drop folder
        drop.mkdir()
        attachment = drop / "photo.txt"
        attachment.write_bytes(b"not really a photo")
        history = drop / "history.jsonl"
        history.write_text(json.dumps({"ref": "m1", "speaker": "me", "text": "去年夏天搬到了杭州", "occurred_at": "2025-07-01"},
                                      ensure_ascii=False) + "\n", encoding="utf-8")
        call("personal_init_archive", {})
        call("personal_preflight_turn", {"text": PERSONAL_EN, "turn_id": "t1"})
        call("personal_preflight_turn", {"text": PERSONAL_EN, "turn_id": "t1", "tier": "skip"}, "downgrade",
             error="TIER_DOWNGRADE_REFUSED")
        call("personal_capture_user_turn", {"text": PERSONAL_EN, "turn_id": "t2"}, "no receipt", error="CAPTURE_NO_RECEIPT")
        cid = call("personal_capture_user_turn", {"text": PERSONAL_EN, "turn_id": "t1"})["capture_id"]
        call("personal_capture_attachment", {"file": str(attachment), "turn_id": "t1", "capture_id": "att-1"})
        call("personal_retrieve", {"query": "Anna", "capture_id": cid}, "probe")
        call("personal_retrieve", {"level": "deep", "ids": [cid, "att-1"], "capture_id": cid}, "deep")
        call("personal_retrieve", {"ids": [cid], "maintenance": True}, "ids")
        call("personal_retrieve", {"window": "2020:", "turn_id": "t1"}, "window")
        call("personal_retrieve", {"query": "Anna"}, "no gate", error="READ_GATE")
        for view in ("survey", "routing", "full"):
            call("personal_catalog", {"view": view, "maintenance": True}, view)
        anna = call("personal_add_record", {"kind": "entity", "entity_type": "person", "title": "Anna",
                                            "aliases": ["my sister"]})["id"]
        call("personal_add_record", {"kind": "entity", "entity_type": "person", "title": "Annie", "id": "person-annie"})
        call("personal_merge_entities", {"from_id": "person-annie", "into": anna, "reason": "user: Annie is Anna"})
        first = call("personal_add_record", {"kind": "event", "title": "Anna got into Oxford", "capture_ids": [cid],
                                             "entity_refs": [anna], "date_start": "2026-12-01"})["id"]
        call("personal_add_record", {"kind": "event", "title": "Anna got into Oxford", "capture_ids": [cid],
                                     "entity_refs": [anna], "date_start": "2026-12-01"}, "duplicate", error="RECORD_DUPLICATE")
        call("personal_add_record", {"kind": "fact", "title": "no words"}, "no source", error="RECORD_NEEDS_SOURCE")
        second = call("personal_add_record", {"kind": "event", "title": "Anna's first term", "capture_ids": [cid],
                                              "date_start": "2027-10"})["id"]
        state = call("personal_add_record", {"kind": "state", "title": "proud of Anna", "subject_key": "anna-feeling",
                                             "capture_ids": [cid]})["id"]
        call("personal_add_record", {"kind": "state", "title": "worried about Anna", "subject_key": "anna-feeling",
                                     "capture_ids": [cid]}, "conflict")
        call("personal_update_state", {"id": state, "capture_ids": [cid], "summary": "still proud"})
        call("personal_update_state", {"id": first, "capture_ids": [cid]}, "not a state", error="STATE_NOT_FOUND")
        fid = call("personal_add_followup", {"question": "How is Anna settling in?", "capture_id": cid, "due_rule": "+3d"})["id"]
        call("personal_add_followup", {"question": "Undated?", "capture_id": cid}, "undated")
        call("personal_followup_check", {"as_of": "2030-01-01"})
        call("personal_resolve_followup", {"id": fid, "resolution": "declined", "note": "user would rather not say"})
        hyp = call("personal_add_hypothesis", {"claim": "Family news lifts the user's mood", "supports": [first, second]})["id"]
        call("personal_review_hypothesis", {"id": hyp, "status": "rejected", "note": "user: it was just good news"})
        call("personal_current_state", {})
        call("personal_conversation_starters", {"language": "zh"})
        call("personal_conversation_starters", {"skip": 99}, "nothing left")
        call("personal_verify_quote", {"capture_id": cid, "quote": "so proud"})
        call("personal_import_history", {"file": str(history), "format": "jsonl"})
        call("personal_import_history", {"file": str(history), "format": "jsonl"}, "again")
        call("personal_finalize_capture", {"capture_id": cid, "disposition": "derived"})
        call("personal_finalize_capture", {"capture_id": "att-1", "disposition": "no-derivation-needed"}, "no reason",
             error="LEDGER_REASON_REQUIRED")
        call("personal_finalize_capture", {"capture_id": "att-1", "disposition": "no-derivation-needed",
                                           "reason": "a test attachment, nothing personal in it"})
        call("personal_derivation_ledger", {}, "audit")
        call("personal_derivation_ledger", {"repair_ledger": True}, "repair")
        call("personal_session_check", {"turn_id": "t1"})
        call("personal_session_check", {"turn_id": "t1", "full": True}, "full")
        call("personal_session_check", {"turn_id": "never"}, "no receipt")
        call("personal_validate", {})
        call("personal_validate", {"json": True, "strict": True}, "json")
        call("personal_record_feedback", {"capture_id": cid, "verdict": "helpful", "record_ids": [first]})
        call("personal_record_feedback", {"capture_id": "cap-none", "verdict": "helpful"}, "no words",
             error="FEEDBACK_NEEDS_WORDS")
        call("personal_salience_review", {})
        call("personal_salience_review", {"apply": True}, "apply")
        call("personal_review", {"deep": True, "limit": 1})
        call("personal_rebuild_views", {})
        call("personal_open_dashboard", {"no_open": True})
        call("personal_pipeline_view", {"latest": 2})
        call("personal_pipeline_view", {}, "nothing chosen", error="BAD_ARGUMENT")
        call("personal_backup_archive", {"verify": ""}, "nothing to verify", error="BACKUP_NONE")
        snapshot = call("personal_backup_archive", {"keep": 3})
        call("personal_backup_archive", {"verify": ""}, "verify")
        call("personal_restore_archive", {"snapshot": snapshot["snapshot"]}, "dry run")
        call("personal_restore_archive", {"snapshot": str(attachment)}, "not a snapshot", error="RESTORE_SNAPSHOT_INVALID")
        call("personal_import_history", {"file": "/etc/hostname", "format": "text"}, "outside", error="PATH_NOT_ALLOWED")
        call("personal_forget", {"id": second})
        call("personal_turn", {"text": RECALL_EN, "turn_id": "t5"}, "read turn")
        call("personal_recall", {"query": "Oxford", "turn_id": "t5"})
        call("personal_remember", {"turn_id": "t5"}, "gate only")
        missing = sorted(set(client.tools) - set(client.modes))
        self.assertEqual(missing, [], "tools never called")
        self.assertEqual(client.cli_wording(), [], "MCP replies name CLI flags or scripts")

    def test_forgetting_attachments_keeps_shared_bytes_until_the_last_goes(self):
        client = Client(self, "all")
        call = client.call
        drop = Path(self.root, "imports")
        drop.mkdir()
        (drop / "scan.txt").write_bytes(b"lab results 2026: all clear")
        (drop / "copy.txt").write_bytes(b"lab results 2026: all clear")
        call("personal_init_archive", {})
        call("personal_preflight_turn", {"text": PERSONAL_EN, "turn_id": "t1"})
        first = call("personal_capture_attachment", {"file": str(drop / "scan.txt"), "turn_id": "t1"})["capture_id"]
        second = call("personal_capture_attachment", {"file": str(drop / "copy.txt"), "turn_id": "t1"})["capture_id"]
        blobs = [p for p in Path(self.root, "sources", "attachments").rglob("*") if p.is_file()]
        self.assertEqual(len(blobs), 1, "the same bytes are kept once")

        dry = call("personal_forget", {"id": first}, "dry run")
        self.assertNotIn("attachment_bytes", dry, "the other attachment still needs the bytes")
        call("personal_forget", {"id": first, "confirm": True}, "first")
        self.assertTrue(blobs[0].exists(), "bytes another attachment holds were deleted")
        call("personal_verify_quote", {"capture_id": second, "quote": "all clear"}, "bytes are not words",
             error="CAPTURE_NOT_TEXT")
        kept = call("personal_retrieve", {"level": "deep", "ids": [second], "maintenance": True}, "survivor")
        self.assertEqual(kept["items"][0]["verbatim"][0]["blob"], blobs[0].relative_to(self.root).as_posix())

        gone = call("personal_forget", {"id": second, "confirm": True}, "last")
        self.assertEqual(gone["attachment_bytes"], blobs[0].relative_to(self.root).as_posix())
        self.assertFalse(blobs[0].exists())
        held = [p for p in Path(self.root).rglob("*") if p.is_file() and b"lab results 2026" in p.read_bytes()
                and "imports" not in p.parts]
        self.assertEqual(held, [])
        call("personal_validate", {}, "clean after")

    def test_schemas_describe_real_fields(self):
        server = mcp_server.Server(self.root, log=io.StringIO(), tools="all")
        for tool in server.tool_definitions():
            self.assertEqual(bare_fields(tool["outputSchema"]), [], tool["name"])
            self.assertEqual(schema_errors({}, {"type": "object"}), [])


class WordingTest(ArchiveTest):
    def test_placeholders_name_real_commands_and_parameters(self):
        params = {p.name for c in commands.COMMANDS for p in c.params}
        names = set(commands.BY_NAME)
        library = REPO / "scripts" / "personal_understanding"
        for path in sorted(library.rglob("*.py")):
            for kind, name, _value in re.findall(r"\{(cmd|arg):([a-z][a-z0-9_]*)(?:=([^{}]*))?\}", path.read_text("utf-8")):
                if path.name == "surface.py":
                    continue
                self.assertIn(name, names if kind == "cmd" else params, f"{path.name} names unknown {kind} {name}")

    def test_descriptions_name_only_their_own_parameters(self):
        for command in commands.COMMANDS:
            own = {p.name for p in command.params}
            text = f"{command.summary} {command.description}"
            for kind, name, _value in re.findall(r"\{(cmd|arg):([a-z][a-z0-9_]*)(?:=([^{}]*))?\}", text):
                if kind == "arg":
                    self.assertIn(name, own, f"{command.name}'s description names {name}, not one of its parameters")
            bare = [m for m in re.findall(r"\b([a-z_]+)=", re.sub(r"\{arg:[^}]*\}", "", text))]
            self.assertEqual(bare, [], f"{command.name}: write parameters as {{arg:NAME=VALUE}}")
