"""Bad input over both faces: every refusal has a stable code, a message and a hint, and leaves the archive byte-identical.

The MCP cases go through the server's JSON-RPC line handler as a client's
bytes would; the CLI cases through the entry point in-process (argv in, JSON
out, exit code); a few of each run in real subprocesses. One archive holding
something of every kind is built per surface and must not change at all.
"""

import ast
import contextlib
import io
import json
import os
import sys
from pathlib import Path

from tests.helpers import REPO, SCRIPTS, ArchiveTest, write
from tests.test_disk_errors import busy_archive
from tests.test_mcp_server import McpProcess, minimal_env, req

from personal_understanding import capture, cli, forget, ledger, mcp_server, receipts

FORGOTTEN = "这句后来被忘掉了"


def mcp_cases(ids):
    """(tool, arguments, expected code)."""
    cid, pending, imports, state = ids["cid"], ids["pending"], ids["imports"], ids["state"]
    span = lambda start, end, **extra: [dict({"capture_id": cid, "start": start, "end": end}, **extra)]  # noqa: E731
    return [
        ("personal_preflight_turn", {"turn_id": "t9"}, "BAD_ARGUMENT"),
        ("personal_preflight_turn", {"text": 42, "turn_id": "t9"}, "BAD_ARGUMENT"),
        ("personal_preflight_turn", {"text": "你好", "turn_id": "t9", "mood": "x"}, "BAD_ARGUMENT"),
        ("personal_preflight_turn", {"text": "你好", "turn_id": "t9", "tier": "maybe"}, "BAD_ARGUMENT"),
        ("personal_preflight_turn", {"text": "你好", "turn_id": "t9\n"}, "BAD_ID"),
        ("personal_preflight_turn", {"text": "你好", "turn_id": "../t9"}, "BAD_ID"),
        ("personal_preflight_turn", {"text": "   ", "turn_id": "t9"}, "EMPTY_MESSAGE"),
        ("personal_preflight_turn", {"text": "bad \ud800 surrogate", "turn_id": "t9"}, "INVALID_UTF8"),
        ("personal_preflight_turn", {"text": "另一句话", "turn_id": "t1"}, "TURN_MESSAGE_MISMATCH"),
        ("personal_preflight_turn", {"text": "长" * 300000, "turn_id": "t9", "tier": "full"}, "MESSAGE_TOO_LARGE"),
        ("personal_capture_user_turn", {"text": "你好", "turn_id": "t-none"}, "CAPTURE_NO_RECEIPT"),
        ("personal_capture_user_turn", {"text": "不是那句", "turn_id": "t3"}, "CAPTURE_HASH_MISMATCH"),
        ("personal_capture_user_turn", {"text": ids["first_message"], "turn_id": "t1"}, "CAPTURE_ALREADY_SAVED"),
        ("personal_capture_user_turn", {"text": "再说一句", "turn_id": "t3", "capture_id": "cap-nl\n"}, "BAD_ID"),
        ("personal_capture_user_turn", {"text": "再说一句", "turn_id": "t3", "capture_id": cid}, "CAPTURE_ID_EXISTS"),
        ("personal_capture_user_turn", {"text": "再说一句", "turn_id": "t3", "occurred_at": "soon"}, "BAD_DATE"),
        ("personal_capture_attachment", {"file": "/etc/hostname", "turn_id": "t3"}, "PATH_NOT_ALLOWED"),
        ("personal_capture_attachment", {"file": f"{imports}/photo.jpg", "turn_id": "t3", "name": "../x.jpg"}, "ATTACHMENT_BAD_NAME"),
        ("personal_capture_attachment", {"file": f"{imports}/missing.jpg", "turn_id": "t3"}, "ATTACHMENT_NOT_FOUND"),
        ("personal_capture_attachment", {"file": imports, "turn_id": "t3"}, "ATTACHMENT_NOT_FOUND"),
        ("personal_finalize_capture", {"capture_id": "cap-nope", "disposition": "derived"}, "CAPTURE_NOT_FOUND"),
        ("personal_finalize_capture", {"capture_id": pending, "disposition": "derived"}, "LEDGER_NO_RECORDS"),
        ("personal_finalize_capture", {"capture_id": pending, "disposition": "no-derivation-needed"}, "LEDGER_REASON_REQUIRED"),
        ("personal_finalize_capture", {"capture_id": pending, "disposition": "maybe"}, "BAD_ARGUMENT"),
        ("personal_finalize_capture", {"capture_id": ids["forgotten"], "disposition": "no-derivation-needed",
                                       "reason": "nothing personal in it"}, "CAPTURE_FORGOTTEN"),
        ("personal_session_check", {"turn_id": "T1"}, "BAD_ID"),
        ("personal_add_record", {"title": "x", "capture_ids": [cid]}, "BAD_ARGUMENT"),
        ("personal_add_record", {"kind": "gossip", "title": "x", "capture_ids": [cid]}, "BAD_ARGUMENT"),
        ("personal_add_record", {"kind": "event", "title": "x", "capture_ids": ["cap-nope"]}, "RECORD_CAPTURE_UNKNOWN"),
        ("personal_add_record", {"kind": "event", "title": "x", "verbatim_refs": span(0, 999)}, "RECORD_SPAN_INVALID"),
        ("personal_add_record", {"kind": "event", "title": "x", "verbatim_refs": span(0, 2, quote="不对")}, "RECORD_SPAN_INVALID"),
        ("personal_add_record", {"kind": "state", "title": "x"}, "RECORD_NEEDS_SOURCE"),
        ("personal_add_record", {"kind": "event", "title": "x", "capture_ids": [cid], "salience": 9}, "RECORD_INVALID"),
        ("personal_add_record", {"kind": "event", "title": "x", "capture_ids": [cid], "date_start": "soon"}, "RECORD_INVALID"),
        ("personal_update_state", {"id": "state-nope", "capture_ids": [cid]}, "STATE_NOT_FOUND"),
        ("personal_update_state", {"id": state}, "BAD_ARGUMENT"),
        ("personal_merge_entities", {"from_id": "person-meimei", "into": "person-meimei", "reason": "same"}, "MERGE_CYCLE"),
        ("personal_merge_entities", {"from_id": "person-meimei", "into": state, "reason": "same"}, "ENTITY_NOT_FOUND"),
        ("personal_merge_entities", {"from_id": "person-meimei", "into": "person-xiaoyu", "reason": " "}, "MERGE_REASON_REQUIRED"),
        ("personal_add_followup", {"question": "q", "capture_id": cid, "due_rule": "tomorrow"}, "BAD_DUE_RULE"),
        ("personal_add_followup", {"question": "q", "capture_id": "cap-nope", "due_rule": "+1d"}, "FOLLOWUP_CAPTURE_UNKNOWN"),
        ("personal_add_followup", {"question": " ", "capture_id": cid, "due_rule": "+1d"}, "BAD_ARGUMENT"),
        ("personal_add_followup", {"question": "q", "capture_id": cid, "due_rule": "+1d", "id": ids["fu"]}, "FOLLOWUP_ID_EXISTS"),
        ("personal_resolve_followup", {"id": ids["fu"], "resolution": "gone", "note": "x"}, "BAD_ARGUMENT"),
        ("personal_add_hypothesis", {"claim": "c", "supports": [state]}, "HYPOTHESIS_NEEDS_SUPPORT"),
        ("personal_add_hypothesis", {"claim": "c", "supports": ["event-a", "event-b"]}, "HYPOTHESIS_SUPPORT_UNKNOWN"),
        ("personal_review_hypothesis", {"id": state, "status": "rejected", "note": "the user said it is the commute"},
         "HYPOTHESIS_NOT_FOUND"),
        ("personal_retrieve", {"query": "妹妹"}, "READ_GATE"),
        ("personal_retrieve", {"query": "妹妹", "capture_id": "cap-nope"}, "READ_GATE"),
        ("personal_retrieve", {"query": "妹妹", "maintenance": True, "limit": -1}, "BAD_ARGUMENT"),
        ("personal_retrieve", {"query": "妹妹", "maintenance": True, "limit": 0}, "BAD_ARGUMENT"),
        ("personal_retrieve", {"query": "妹妹", "maintenance": True, "offset": -1}, "BAD_ARGUMENT"),
        ("personal_retrieve", {"query": "妹妹", "maintenance": True, "budget": 5}, "BAD_ARGUMENT"),
        ("personal_retrieve", {"query": "妹妹", "maintenance": True, "per_episode": -2}, "BAD_ARGUMENT"),
        ("personal_retrieve", {"query": "妹妹", "maintenance": True, "window": "last week-ish"}, "BAD_WINDOW"),
        ("personal_retrieve", {"query": "妹妹", "maintenance": True, "limit": 2.5}, "BAD_ARGUMENT"),
        ("personal_retrieve", {"query": "妹妹", "maintenance": True, "limit": True}, "BAD_ARGUMENT"),
        ("personal_retrieve", {"level": "deep", "maintenance": True}, "BAD_ARGUMENT"),
        ("personal_retrieve", {"level": "deep", "ids": ["Bad Id"], "maintenance": True}, "BAD_ID"),
        ("personal_retrieve", {"maintenance": True}, "BAD_ARGUMENT"),
        ("personal_catalog", {"maintenance": True, "limit": -1}, "BAD_ARGUMENT"),
        ("personal_catalog", {"maintenance": True, "offset": -5}, "BAD_ARGUMENT"),
        ("personal_catalog", {"maintenance": True, "view": "everything"}, "BAD_ARGUMENT"),
        ("personal_catalog", {}, "READ_GATE"),
        ("personal_verify_quote", {"capture_id": cid, "quote": ""}, "BAD_ARGUMENT"),
        ("personal_verify_quote", {"capture_id": "cap-nope", "quote": "x"}, "CAPTURE_NOT_FOUND"),
        ("personal_verify_quote", {"capture_id": ids["forgotten"], "quote": "忘掉"}, "CAPTURE_NOT_FOUND"),
        ("personal_current_state", {"as_of": "garbage"}, "BAD_DATE"),
        ("personal_conversation_starters", {"skip": -1}, "BAD_ARGUMENT"),
        ("personal_conversation_starters", {"language": "fr"}, "BAD_ARGUMENT"),
        ("personal_followup_check", {"horizon": -1}, "BAD_ARGUMENT"),
        ("personal_followup_check", {"as_of": "x"}, "BAD_DATE"),
        ("personal_import_history", {"file": f"{imports}/chat.txt", "format": "signal"}, "BAD_ARGUMENT"),
        ("personal_import_history", {"file": "/etc/passwd", "format": "text"}, "PATH_NOT_ALLOWED"),
        ("personal_import_history", {"file": f"{imports}/photo.jpg", "format": "jsonl"}, "IMPORT_INVALID"),
        ("personal_import_history", {"file": f"{imports}/broken.jsonl", "format": "jsonl"}, "IMPORT_INVALID"),
        ("personal_import_history", {"file": f"{imports}/chat.txt", "format": "text", "sample_ids": ["a"]}, "BAD_ARGUMENT"),
        ("personal_import_history", {"file": f"{imports}/nope.txt", "format": "text"}, "IMPORT_UNREADABLE"),
        ("personal_backup_archive", {"keep": 0}, "BAD_ARGUMENT"),
        ("personal_backup_archive", {"keep": -3}, "BAD_ARGUMENT"),
        ("personal_backup_archive", {"also_to": "/tmp"}, "PATH_NOT_ALLOWED"),
        ("personal_restore_archive", {"snapshot": f"{ids['backups']}/nope.zip"}, "RESTORE_NOT_FOUND"),
        ("personal_restore_archive", {"snapshot": f"{ids['backups']}/not-a-zip.zip"}, "RESTORE_SNAPSHOT_INVALID"),
        ("personal_restore_archive", {"snapshot": "/etc/passwd"}, "PATH_NOT_ALLOWED"),
        ("personal_restore_archive", {"snapshot": f"{ids['backups']}/a\x00.zip"}, "BAD_ARGUMENT"),
        ("personal_backup_archive", {"also_to": "/tmp/x\x00"}, "BAD_ARGUMENT"),
        ("personal_forget", {"id": "cap-nope"}, "FORGET_UNKNOWN"),
        ("personal_forget", {"id": ids["forgotten"], "confirm": True}, "FORGET_ALREADY"),
        ("personal_forget", {"id": "cap\n"}, "BAD_ID"),
        ("personal_forget", {"id": "cap-" + "x" * 5000}, "BAD_ID"),
        ("personal_record_feedback", {"capture_id": cid, "verdict": "meh"}, "BAD_ARGUMENT"),
        ("personal_record_feedback", {"capture_id": cid, "verdict": "missed"}, "BAD_ARGUMENT"),
        ("personal_salience_review", {"min_age_days": -1}, "BAD_ARGUMENT"),
        ("personal_review", {"limit": 0}, "BAD_ARGUMENT"),
        ("personal_pipeline_view", {"latest": 0}, "BAD_ARGUMENT"),
        ("personal_pipeline_view", {"turn_id": "t-none"}, "TURN_NOT_FOUND"),
        ("personal_validate", [1, 2], "BAD_ARGUMENT"),
        ("personal_validate", "strict", "BAD_ARGUMENT"),
    ]


def cli_cases(ids, tmp):
    """(script, argv, expected code, stdin bytes or None)."""
    cid = ids["cid"]
    bad_json = write(Path(tmp, "list.json"), "[1, 2]")
    nested = write(Path(tmp, "nested.json"), "[" * 100000 + "]" * 100000)
    broken = write(Path(tmp, "broken.json"), '{"turn_id": ')
    nul_path = write(Path(tmp, "nul.json"), '{"also_to": "/tmp/mirror\\u0000"}')
    a_file = write(Path(tmp, "a-file"), "not a folder")
    latin1 = Path(tmp, "latin1.txt")
    latin1.write_bytes("caf\xe9".encode("latin-1"))
    return [
        ("capture_user_update", ["--json", bad_json], "BAD_ARGUMENT", None),
        ("capture_user_update", ["--json", nested], "BAD_ARGUMENT", None),
        ("capture_user_update", ["--json", broken], "BAD_ARGUMENT", None),
        ("capture_user_update", ["--json", "-"], "BAD_ARGUMENT", b'"just a string"'),
        ("capture_user_update", ["--json", str(Path(tmp, "missing.json"))], "FILE_UNREADABLE", None),
        ("capture_user_update", ["--file", str(latin1), "--turn-id", "t3"], "INVALID_UTF8", None),
        ("capture_user_update", ["--file", str(Path(tmp, "missing.txt")), "--turn-id", "t3"], "FILE_UNREADABLE", None),
        ("add_record", ["--json", nested], "BAD_ARGUMENT", None),
        ("catalog_context", ["--maintenance", "--limit", "-1"], "BAD_ARGUMENT", None),
        ("catalog_context", ["--maintenance", "--view", "full", "--offset", "-1"], "BAD_ARGUMENT", None),
        ("retrieve_v2", ["妹妹", "--maintenance", "--limit", "-1"], "BAD_ARGUMENT", None),
        ("retrieve_v2", ["妹妹", "--maintenance", "--offset", "-4"], "BAD_ARGUMENT", None),
        ("retrieve_v2", ["妹妹", "--maintenance", "--limit", "many"], "USAGE", None),
        ("retrieve_v2", ["妹妹", "--maintenance", "--bogus"], "USAGE", None),
        ("backup_archive", ["--keep", "0"], "BAD_ARGUMENT", None),
        ("backup_archive", ["--json", nul_path], "BAD_ARGUMENT", None),
        ("backup_archive", ["--also-to", a_file], "BACKUP_MIRROR_NOT_A_FOLDER", None),
        ("backup_archive", ["--also-to", os.path.join(ids["root"], "memory", "mirror")], "BACKUP_MIRROR_INSIDE", None),
        ("import_history", ["/dev/null", "--format", "text"], "IMPORT_UNREADABLE", None),
        ("import_history", [tmp, "--format", "text"], "IMPORT_UNREADABLE", None),
        ("import_history", [str(latin1), "--format", "text"], "IMPORT_INVALID", None),
        ("merge_entities", ["--from", "person-meimei", "--into", "person-meimei", "--reason", "same"], "MERGE_CYCLE", None),
        ("merge_entities", ["--from", "person-meimei", "--into", ids["state"], "--reason", "same"], "ENTITY_NOT_FOUND", None),
        ("forget", [ids["forgotten"], "--confirm"], "FORGET_ALREADY", None),
        ("add_record", ["--kind", "event", "--title", "x", "--verbatim-refs",
                        json.dumps([{"capture_id": cid, "start": 0, "end": 999}])], "RECORD_SPAN_INVALID", None),
        ("session_check", ["--turn-id", "t1\n"], "BAD_ID", None),
        ("conversation_starters", ["--skip", "-1"], "BAD_ARGUMENT", None),
        ("review_v2", ["--limit", "-1"], "BAD_ARGUMENT", None),
        ("followup_check", ["--horizon", "-2"], "BAD_ARGUMENT", None),
        ("salience_review", ["--min-age-days", "-1"], "BAD_ARGUMENT", None),
        ("pipeline_view", ["--latest", "0"], "BAD_ARGUMENT", None),
        ("verify_quote", ["--capture-id", cid, "--quote", ""], "BAD_ARGUMENT", None),
    ]


def battery_archive(root):
    ids = busy_archive(root)
    receipts.preflight(root, FORGOTTEN, turn_id="t4", tier="full")
    gone = capture.capture_text(root, FORGOTTEN, "t4")["capture_id"]
    ledger.finalize(root, gone, "no-derivation-needed", reason="said in passing, nothing to keep")
    forget.forget(root, gone, confirm=True)
    write(Path(ids["imports"], "broken.jsonl"), '{"ref": "1", "speaker": "Ana", "text": "hi"}\nnot json\n')
    Path(root, "backups", "not-a-zip.zip").write_bytes(b"PK\x03\x04 truncated")
    ids.update(forgotten=gone, root=root, backups=str(Path(root, "backups")),
               first_message="我妹妹小雨下个月在杭州结婚，我有点舍不得。")
    return ids


class BadInputBattery(ArchiveTest):
    def setUp(self):
        super().setUp()
        self.ids = battery_archive(self.root)
        self.before = self.snapshot()

    def check_error(self, error, code, where):
        self.assertIsInstance(error, dict, where)
        self.assertEqual(error.get("code"), code, f"{where}: {error}")
        self.assertTrue(error.get("message"), where)
        self.assertTrue(isinstance(error.get("hint"), str) and error["hint"].strip(), f"{where}: empty hint")
        self.assertLess(len(error["message"]), 400, f"{where}: the refusal repeats its input")  # a client pays for it

    def test_mcp(self):
        server = mcp_server.Server(self.root, log=io.StringIO(), tools="all")
        cases = mcp_cases(self.ids)
        for n, (tool, arguments, code) in enumerate(cases):
            with self.subTest(tool=tool, arguments=str(arguments)[:80]):
                raw = json.dumps(req(n, "tools/call", {"name": tool, "arguments": arguments})).encode("utf-8")
                reply = json.loads(server.handle_line(raw))
                result = reply["result"]
                self.assertTrue(result["isError"], result)
                self.check_error(json.loads(result["content"][0]["text"])["error"], code, tool)
                self.assertUnchanged(self.before)
        self.assertGreaterEqual(len(cases), 60)

    def test_cli(self):
        cases = cli_cases(self.ids, self.tmp)
        for script, argv, code, stdin in cases:
            with self.subTest(script=script, argv=" ".join(argv)[:80]):
                out, err = io.StringIO(), io.StringIO()
                fake_in = io.TextIOWrapper(io.BytesIO(stdin or b""), encoding="utf-8")
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                        mock_stdin(fake_in):
                    exit_code = cli.main(script, argv + ["--root", self.root])
                self.assertIn(exit_code, (1, 2), out.getvalue())
                self.assertNotIn("Traceback", err.getvalue())
                self.check_error(json.loads(out.getvalue())["error"], code, f"{script} {argv}")
                self.assertUnchanged(self.before)
        self.assertGreaterEqual(len(cases), 30)

    def test_real_processes(self):
        """The same refusals through real entry points: three CLI scripts and a server over stdio."""
        for script, args, code in [("catalog_context", ["--maintenance", "--limit", "-1"], "BAD_ARGUMENT"),
                                   ("backup_archive", ["--keep", "0"], "BAD_ARGUMENT"),
                                   ("merge_entities", ["--from", "person-meimei", "--into", "person-meimei",
                                                       "--reason", "same"], "MERGE_CYCLE")]:
            exit_code, data, stderr = self.cli(script, *args)
            self.assertNotEqual(exit_code, 0)
            self.check_error(data["error"], code, script)
        server = McpProcess([sys.executable, str(SCRIPTS / "mcp_server.py"), "--tools", "all"], minimal_env(PU_HOME=self.root), self.tmp)
        try:
            server.initialize()
            for tool, arguments, code in [("personal_forget", {"id": self.ids["forgotten"], "confirm": True}, "FORGET_ALREADY"),
                                          ("personal_catalog", {"maintenance": True, "limit": -1}, "BAD_ARGUMENT"),
                                          ("personal_import_history", {"file": "/etc/passwd", "format": "text"}, "PATH_NOT_ALLOWED")]:
                result = server.call(tool, arguments)
                self.assertTrue(result["isError"])
                self.check_error(json.loads(result["content"][0]["text"])["error"], code, tool)
        finally:
            self.assertEqual(server.close(), 0)
        self.assertUnchanged(self.before)


@contextlib.contextmanager
def mock_stdin(stream):
    old = sys.stdin
    sys.stdin = stream
    try:
        yield
    finally:
        sys.stdin = old


class EveryRefusalHasAHint(ArchiveTest):
    def test_no_error_in_the_code_is_raised_without_a_hint(self):
        """A guard over the source: every PuError(...) written in the library passes a non-empty hint."""
        missing = []
        for path in sorted((REPO / "scripts" / "personal_understanding").rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "PuError":
                    hint = node.args[2] if len(node.args) >= 3 else next((k.value for k in node.keywords if k.arg == "hint"), None)
                    if hint is None or (isinstance(hint, ast.Constant) and not str(hint.value).strip()):
                        missing.append(f"{path.relative_to(REPO)}:{node.lineno}")
        self.assertEqual(missing, [])
