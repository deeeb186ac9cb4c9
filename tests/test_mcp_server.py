"""The MCP server: protocol rules, tool results, resources, a real subprocess turn, parallel writers."""

import contextlib
import io
import json
import os
import queue
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from unittest import mock

from tests.helpers import REPO, SCRIPTS, ArchiveTest, drop_index
from tests.schema_check import schema_errors

from personal_understanding import __version__, archive_index, commands, mcp_server, validate
from personal_understanding.errors import PuError

PERSONAL = "我妹妹小雨下个月在杭州结婚，我有点舍不得。"


def portability_problems(schema, where="$", input_side=True):
    """What some clients reject: type unions, remote $ref, a non-object root, (inputs) arrays without items."""
    out = []
    if where == "$" and schema.get("type") != "object":
        out.append("$: the root must be type object")
    if isinstance(schema.get("type"), list):
        out.append(f"{where}: type union {schema['type']}")
    ref = schema.get("$ref")
    if isinstance(ref, str) and not ref.startswith("#"):
        out.append(f"{where}: remote $ref {ref}")
    if input_side and schema.get("type") == "array" and not isinstance(schema.get("items"), dict):
        out.append(f"{where}: array without items")
    for name, sub in (schema.get("properties") or {}).items():
        out += portability_problems(sub, f"{where}.{name}", input_side)
    if isinstance(schema.get("items"), dict):
        out += portability_problems(schema["items"], f"{where}[]", input_side)
    return out


def strict_json(line):
    def refuse(token):
        raise ValueError(f"non-standard JSON constant {token}")
    return json.loads(line.decode("utf-8"), parse_constant=refuse)


def req(msg_id, method, params=None):
    out = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        out["params"] = params
    return out


def line(obj):
    return obj if isinstance(obj, bytes) else json.dumps(obj, ensure_ascii=False).encode("utf-8") + b"\n"


class ServerTest(ArchiveTest):
    """In-process sessions: bytes in, bytes out, through `serve` (the full tool profile unless said otherwise)."""

    TOOLS = "all"

    def session(self, *messages):
        """Run `serve` over these lines; returns the parsed replies (every line must be strict JSON)."""
        out, log = io.BytesIO(), io.StringIO()
        code = mcp_server.serve(io.BytesIO(b"".join(line(m) for m in messages)), out, self.root, log=log,
                                tools=self.TOOLS)
        self.assertEqual(code, 0)
        self.log = log.getvalue()
        raw = out.getvalue()
        self.assertTrue(raw == b"" or raw.endswith(b"\n"))
        return [strict_json(x) for x in raw.splitlines()]

    def one(self, message):
        replies = self.session(message)
        self.assertEqual(len(replies), 1, replies)
        return replies[0]

    def call(self, tool, arguments=None, msg_id=1):
        params = {"name": tool} if arguments is None else {"name": tool, "arguments": arguments}
        reply = self.one(req(msg_id, "tools/call", params))
        self.assertEqual(reply["id"], msg_id)
        self.assertIn("result", reply, reply)
        return reply["result"]

    def error_of(self, result):
        self.assertTrue(result["isError"])
        self.assertNotIn("structuredContent", result)
        return json.loads(result["content"][0]["text"])["error"]


class ProtocolTest(ServerTest):
    def test_initialize_echoes_a_supported_version_else_offers_the_latest(self):
        for version in mcp_server.PROTOCOL_VERSIONS:
            reply = self.one(req(1, "initialize", {"protocolVersion": version, "capabilities": {},
                                                   "clientInfo": {"name": "test", "version": "1"}}))
            self.assertEqual(reply["result"]["protocolVersion"], version)
        for requested in ("1999-01-01", None, 7):
            params = {} if requested is None else {"protocolVersion": requested}
            self.assertEqual(self.one(req(2, "initialize", params))["result"]["protocolVersion"], "2025-11-25")
        result = self.one(req(3, "initialize", {"protocolVersion": "2025-06-18"}))["result"]
        self.assertEqual(result["serverInfo"]["version"], __version__)
        self.assertEqual(result["serverInfo"]["name"], "personal-understanding")
        self.assertIn("tools", result["capabilities"])
        self.assertIn("resources", result["capabilities"])
        self.assertIn("prompts", result["capabilities"])
        for word in ("personal_turn", "personal_remember", "personal_recall", "may_claim_saved"):
            self.assertIn(word, result["instructions"])

    def test_unknown_methods_get_32601_before_and_after_initialize(self):
        replies = self.session(req("probe", "server/discover"), req(1, "initialize", {"protocolVersion": "2025-06-18"}),
                               {"jsonrpc": "2.0", "method": "notifications/initialized"},
                               req(2, "sampling/createMessage"), req(3, "no/such/method", {"x": 1}), req(4, "ping"))
        self.assertEqual([r["id"] for r in replies], ["probe", 1, 2, 3, 4])
        self.assertEqual(replies[0]["error"]["code"], -32601)
        self.assertEqual(replies[2]["error"]["code"], -32601)
        self.assertEqual(replies[3]["error"]["code"], -32601)
        self.assertEqual(replies[4]["result"], {})

    def test_notifications_never_get_a_reply(self):
        replies = self.session({"jsonrpc": "2.0", "method": "notifications/initialized"},
                               {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
                               {"jsonrpc": "2.0", "method": "notifications/whatever"},
                               {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "nope"}},
                               {"jsonrpc": "2.0", "id": 99, "result": {}},  # a response: nothing to answer either
                               req(5, "ping"))
        self.assertEqual(replies, [{"jsonrpc": "2.0", "id": 5, "result": {}}])

    def test_batches_non_objects_and_bad_envelopes_are_invalid_requests(self):
        cases = [
            ([req(1, "ping")], None), ([], None), (42, None), ("ping", None), (None, None),
            ({"id": 1, "method": "ping"}, 1),
            ({"jsonrpc": "1.0", "id": 2, "method": "ping"}, 2),
            ({"jsonrpc": "2.0", "id": 3}, 3),
            ({"jsonrpc": "2.0", "id": 4, "method": 17}, 4),
            ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}, None),
            ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None),
            ({"jsonrpc": "2.0", "id": 5, "method": "ping", "params": "x"}, 5),
            ({"jsonrpc": "2.0", "method": 5}, None),
        ]
        for message, expected_id in cases:
            reply = self.one(message)
            self.assertEqual(reply["error"]["code"], -32600, message)
            self.assertEqual(reply["id"], expected_id, message)
        reply = self.one(req(6, "tools/list", [1, 2]))
        self.assertEqual((reply["id"], reply["error"]["code"]), (6, -32602))

    def test_garbage_never_stops_the_server(self):
        garbage = [
            b"this is not json\n",
            b"\xff\xfe\xc3\x28 invalid utf-8\n",
            b'{"jsonrpc":"2.0","id":1,"method":"pi\x00ng"}\n',
            b"\x00\x00\x00\n",
            b"x" * (1024 * 1024) + b"\n",
            b'{"jsonrpc":"2.0","id":7,"meth\n',
            b"[" * 100000 + b"\n",
            b"   \r\n",
            b"\n",
        ]
        replies = self.session(*garbage, req("alive", "ping"))
        self.assertEqual(len(replies), 8, replies)
        for reply in replies[:7]:
            self.assertEqual(reply["error"]["code"], -32700, reply)
            self.assertIsNone(reply["id"])
        self.assertEqual(replies[-1], {"jsonrpc": "2.0", "id": "alive", "result": {}})

    def test_an_oversized_line_is_discarded_and_the_next_one_served(self):
        with mock.patch.object(mcp_server, "MAX_LINE_BYTES", 1000):
            replies = self.session(b'{"jsonrpc":"2.0","id":1,"method":"ping","pad":"' + b"y" * 5000 + b'"}\n',
                                   req(2, "ping"), b"z" * 999 + b"\n", req(3, "ping"))
        self.assertEqual([r.get("id") for r in replies], [None, 2, None, 3])
        self.assertEqual(replies[0]["error"]["code"], -32600)
        self.assertEqual(replies[2]["error"]["code"], -32700)

    def test_crlf_bom_and_end_of_input(self):
        self.assertEqual(self.session(), [])
        replies = self.session(b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n', b'{"jsonrpc":"2.0","id":2,"method":"ping"}')
        self.assertEqual([r["id"] for r in replies], [1, 2])

    def test_serve_accepts_an_iterable_of_lines_and_a_text_stream(self):
        out = io.StringIO()
        mcp_server.serve([line(req(1, "ping")), json.dumps(req(2, "ping"))], out, self.root, log=io.StringIO())
        self.assertEqual([json.loads(x)["id"] for x in out.getvalue().splitlines()], [1, 2])


class ToolsTest(ServerTest):
    def test_tools_list_is_the_profile(self):
        for profile in ("default", "all"):
            server = mcp_server.Server(self.root, log=io.StringIO(), tools=profile)
            tools = server.handle(req(1, "tools/list"))["result"]["tools"]
            registry = commands.profile(profile)
            self.assertEqual([t["name"] for t in tools], [c.tool for c in registry])
            for tool, command in zip(tools, registry):
                self.assertTrue(tool["description"].startswith(command.summary.split("{")[0]), tool["name"])
                self.assertNotIn("{cmd:", tool["description"] + json.dumps(tool["inputSchema"]))
                self.assertNotIn("{arg:", tool["description"] + json.dumps(tool["inputSchema"]))
                self.assertTrue(tool["title"])
                self.assertEqual(set(tool["inputSchema"]["properties"]), {p.name for p in command.params if p.mcp})
                self.assertEqual(tool["outputSchema"], command.output_schema())
                self.assertEqual(portability_problems(tool["inputSchema"]), [], tool["name"])
                self.assertEqual(portability_problems(tool["outputSchema"], input_side=False), [], tool["name"])
                self.assertEqual(tool["annotations"]["readOnlyHint"], command.read_only and not command.writes_trace)
                self.assertEqual(tool["annotations"]["destructiveHint"], bool(command.destructive))
                self.assertEqual(tool["annotations"]["idempotentHint"], bool(command.idempotent))
                self.assertIs(tool["annotations"]["openWorldHint"], False)
        default = [c.name for c in commands.profile("default")]
        self.assertLessEqual(len(default), 10)
        size = len(json.dumps({"tools": mcp_server.Server(self.root, tools="default").tool_definitions()},
                              ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
        self.assertLessEqual(size, 16 * 1024, "the default tools/list must stay within 16 KB")

    def test_a_recalled_row_names_its_words_as_they_were_said(self):
        turn = self.call("personal_turn", {"text": "Dad's retirement party was lovely, we bought him a watch", "turn_id": "t1"})
        self.assertTrue(turn["structuredContent"]["captured"])
        found = self.call("personal_recall", {"query": "what did we buy when dad retired", "maintenance": True})
        why = found["structuredContent"]["top"][0]["why"]
        self.assertEqual(sorted(why["matched"]), ["bought", "dad", "retirement"])  # not the index terms buy, retir

    def test_reads_that_trace_are_not_read_only(self):
        tools = {t["name"]: t for t in mcp_server.Server(self.root, tools="all").tool_definitions()}
        for name in ("personal_recall", "personal_retrieve", "personal_catalog", "personal_turn"):
            self.assertFalse(tools[name]["annotations"]["readOnlyHint"], name)
        self.assertTrue(tools["personal_current_state"]["annotations"]["readOnlyHint"])

    def test_a_full_profile_tool_is_named_when_the_default_profile_lacks_it(self):
        server = mcp_server.Server(self.root, log=io.StringIO())
        reply = server.handle(req(1, "tools/call", {"name": "personal_validate", "arguments": {}}))
        self.assertEqual(reply["error"]["code"], -32602)
        self.assertIn("full profile", reply["error"]["message"])

    def test_unknown_tool_or_missing_name_is_32602(self):
        for params in ({"name": "personal_nothing"}, {}, {"name": 3}, {"arguments": {}}):
            reply = self.one(req(1, "tools/call", params))
            self.assertEqual(reply["error"]["code"], -32602, params)
        self.assertEqual(self.one(req(2, "tools/call"))["error"]["code"], -32602)

    def test_bad_arguments_are_tool_errors_the_model_can_act_on(self):
        cases = [
            ("personal_session_check", {}, "turn_id"),
            ("personal_session_check", {"turn_id": 5}, "turn_id"),
            ("personal_session_check", {"turn_id": "t1", "bogus": True}, "bogus"),
            ("personal_preflight_turn", {"text": "x", "tier": "sometimes"}, "tier"),
            ("personal_validate", [1, 2], "object"),
        ]
        for tool, args, word in cases:
            error = self.error_of(self.call(tool, args))
            self.assertEqual(error["code"], "BAD_ARGUMENT", (tool, args))
            self.assertIn(word, error["message"] + error["hint"])
            self.assertIn("hint", error)

    def test_refusals_are_tool_errors_with_code_message_hint(self):
        error = self.error_of(self.call("personal_capture_user_turn", {"text": PERSONAL, "turn_id": "never-preflighted"}))
        self.assertTrue(error["code"] and error["message"] and error["hint"], error)
        self.assertFalse(list(Path(self.root, "sources", "conversation").rglob("*.json")))

    def test_a_password_told_in_a_turn_is_never_written_and_the_agent_is_told(self):
        secret = "hunter2"
        result = self.call("personal_turn", {"text": f"my password for the gym app is {secret}", "turn_id": "t1"})
        out = result["structuredContent"]
        self.assertEqual((out["captured"], out["receipt"]["signal"], out["receipt"]["required_actions"]),
                         (False, "credential", []))
        self.assertIn("never saved", out["next"])
        error = self.error_of(self.call("personal_turn", {"text": f"my password for the gym app is {secret}",
                                                          "turn_id": "t1", "tier": "full"}))
        self.assertEqual(error["code"], "CREDENTIAL_NOT_SAVED")
        error = self.error_of(self.call("personal_capture_user_turn", {"text": f"my password for the gym app is {secret}",
                                                                     "turn_id": "t1"}))
        self.assertEqual(error["code"], "CREDENTIAL_NOT_SAVED")  # not 'preflight it again with tier full'
        gate = self.call("personal_session_check", {"turn_id": "t1"})["structuredContent"]
        self.assertEqual((gate["obligations_met"], gate["may_claim_saved"]), (True, False), gate)  # nothing owed, nothing saved
        for path in Path(self.root).rglob("*"):
            if path.is_file():
                self.assertNotIn(secret.encode(), path.read_bytes(), path)
        said = self.call("personal_turn", {"text": "I forgot my password again, locked out of the gym app", "turn_id": "t2"})
        self.assertTrue(said["structuredContent"]["captured"])

    def test_a_record_that_gives_a_password_is_refused_and_nothing_is_written(self):
        said = self.call("personal_turn", {"text": "Switched gyms, I'm at Planet Fitness now", "turn_id": "t1"})
        self.assertTrue(said["structuredContent"]["captured"])
        before = self.snapshot()
        error = self.error_of(self.call("personal_remember", {"turn_id": "t1", "records": [
            {"kind": "state", "title": "Goes to Planet Fitness"},
            {"kind": "state", "title": "Gym app login", "summary": "password is hunter2"}]}))
        self.assertIn("credentials are never stored", json.dumps(error))
        self.assertEqual(self.snapshot(), before)

    def test_a_failing_gate_is_information_not_an_error(self):
        result = self.call("personal_session_check", {"turn_id": "t-unknown"})
        self.assertFalse(result["isError"])
        self.assertFalse(result["structuredContent"]["may_claim_saved"])
        self.assertEqual(json.loads(result["content"][0]["text"]), result["structuredContent"])

    def test_an_unexpected_exception_is_reported_and_the_server_keeps_serving(self):
        command = commands.BY_TOOL["personal_validate"]

        def boom(root, **kwargs):
            raise ZeroDivisionError("injected")

        for failure in (boom, lambda root, **kw: sys.exit(3)):
            with mock.patch.object(command, "function", return_value=failure):
                replies = self.session(req(1, "tools/call", {"name": "personal_validate", "arguments": {}}), req(2, "ping"))
            error = self.error_of(replies[0]["result"])
            self.assertEqual(error["code"], "INTERNAL_ERROR")
            self.assertIn("Traceback", self.log)
            self.assertEqual(replies[1]["result"], {})
        self.assertIn("ZeroDivisionError", self.error_of(self.call_patched(boom))["message"])

    def call_patched(self, function):
        with mock.patch.object(commands.BY_TOOL["personal_validate"], "function", return_value=function):
            return self.call("personal_validate", {})

    def test_results_that_are_not_json_become_errors_not_invalid_lines(self):
        error = self.error_of(self.call_patched(lambda root, **kw: {"x": float("nan")}))
        self.assertEqual(error["code"], "INTERNAL_ERROR")
        result = self.call_patched(lambda root, **kw: {"when": Path("/p"), "ok": True})
        self.assertEqual(result["structuredContent"]["when"], str(Path("/p")))

    def test_library_output_on_stdout_does_not_reach_the_protocol_stream(self):
        def noisy(root, **kwargs):
            print("noise from the library")
            sys.stdout.write("more noise\n")
            return {"status": "clean", "ok": True, "errors": 0, "warnings": 0, "problems": []}

        out = io.BytesIO()
        proto = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
        err = io.StringIO()
        with mock.patch.object(commands.BY_TOOL["personal_validate"], "function", return_value=noisy), \
                contextlib.redirect_stdout(proto), contextlib.redirect_stderr(err):
            mcp_server.serve(io.BytesIO(line(req(1, "tools/call", {"name": "personal_validate"})) + line(req(2, "ping"))),
                             proto, self.root, tools="all")
        replies = [strict_json(x) for x in out.getvalue().splitlines()]
        self.assertEqual([r["id"] for r in replies], [1, 2])
        self.assertIn("noise from the library", err.getvalue())

    def test_unicode_and_lone_surrogates(self):
        out = io.BytesIO()
        mcp_server.serve(io.BytesIO(line(req(1, "tools/call", {"name": "personal_add_record", "arguments": {
            "kind": "entity", "entity_type": "object", "title": "年糕 🐱", "aliases": ["我的猫"]}}))),
            out, self.root, log=io.StringIO(), tools="all")
        self.assertIn("年糕 🐱".encode("utf-8"), out.getvalue())  # UTF-8 on the wire, not \u escapes
        self.assertEqual(strict_json(out.getvalue())["result"]["structuredContent"]["record"]["title"], "年糕 🐱")
        reply = self.one(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"personal_preflight_turn",'
                         b'"arguments":{"text":"bad \\ud800 half","turn_id":"u2"}}}\n')
        self.assertTrue(reply["result"]["isError"])

class ResourcesTest(ServerTest):
    def test_list_and_read_the_skill(self):
        resources = self.one(req(1, "resources/list"))["result"]["resources"]
        uris = [r["uri"] for r in resources]
        self.assertEqual(uris[:2], ["personal://skill", "personal://survey"])
        self.assertIn("personal://references/capture", uris)
        contents = self.one(req(2, "resources/read", {"uri": "personal://skill"}))["result"]["contents"]
        self.assertEqual(contents[0]["mimeType"], "text/markdown")
        self.assertEqual(contents[0]["text"], (REPO / "SKILL.md").read_text(encoding="utf-8"))
        text = self.one(req(3, "resources/read", {"uri": "personal://references/capture"}))["result"]["contents"][0]["text"]
        self.assertEqual(text, (REPO / "references" / "capture.md").read_text(encoding="utf-8"))
        templates = self.one(req(4, "resources/templates/list"))["result"]["resourceTemplates"]
        self.assertEqual([t["uriTemplate"] for t in templates], ["personal://record/{id}", "personal://capture/{id}"])

    def test_record_and_capture_templates(self):
        from personal_understanding import capture, receipts, records

        receipts.preflight(self.root, PERSONAL, turn_id="t1")
        cid = capture.capture_text(self.root, PERSONAL, "t1")["capture_id"]
        records.add_record(self.root, kind="entity", entity_type="person", id="person-xiaoyu", title="小雨")
        records.add_record(self.root, kind="entity", entity_type="person", id="person-yuyu", title="雨雨")
        records.merge_entities(self.root, "person-yuyu", "person-xiaoyu", "user: 雨雨 is 小雨")
        reply = self.one(req(1, "resources/read", {"uri": "personal://record/person-yuyu"}))["result"]["contents"][0]
        self.assertEqual((reply["mimeType"], json.loads(reply["text"])["id"]), ("application/json", "person-xiaoyu"))
        words = json.loads(self.one(req(2, "resources/read", {"uri": f"personal://capture/{cid}"}))["result"]["contents"][0]["text"])
        self.assertEqual(words["text"], PERSONAL)
        self.assertTrue(words["trace_id"])
        for uri in ("personal://record/nothing", "personal://capture/cap-none", "personal://record/../x"):
            self.assertEqual(self.one(req(3, "resources/read", {"uri": uri}))["error"]["code"], mcp_server.RESOURCE_NOT_FOUND, uri)
        path = Path(self.root, archive_index.open_index(self.root).capture(cid)["path"])
        path.chmod(0o600)
        path.write_text(path.read_text("utf-8").replace("舍不得", "开心的"), encoding="utf-8")
        tampered = self.one(req(4, "resources/read", {"uri": f"personal://capture/{cid}"}))
        self.assertIn("SHA-256", tampered["error"]["message"])
        self.assertNotIn("开心的", json.dumps(tampered, ensure_ascii=False))

    def test_prompts(self):
        prompts = self.one(req(1, "prompts/list"))["result"]["prompts"]
        self.assertEqual([p["name"] for p in prompts], ["recall_about", "review_week"])
        got = self.one(req(2, "prompts/get", {"name": "recall_about", "arguments": {"topic": "妹妹", "language": "zh"}}))
        message = got["result"]["messages"][0]
        self.assertEqual((message["role"], message["content"]["type"]), ("user", "text"))
        self.assertIn("妹妹", message["content"]["text"])
        self.assertIn("week", self.one(req(3, "prompts/get", {"name": "review_week"}))["result"]["messages"][0]["content"]["text"])
        for params in ({"name": "nope"}, {"name": "recall_about"}, {"name": "recall_about", "arguments": {"topic": "x", "bad": "y"}},
                       {"name": "review_week", "arguments": {"language": "fr"}}, {}):
            self.assertEqual(self.one(req(4, "prompts/get", params))["error"]["code"], -32602, params)

    def test_unknown_resource_and_missing_uri(self):
        reply = self.one(req(1, "resources/read", {"uri": "personal://nothing"}))
        self.assertEqual(reply["error"]["code"], mcp_server.RESOURCE_NOT_FOUND)
        self.assertEqual(reply["error"]["data"], {"uri": "personal://nothing"})
        self.assertEqual(self.one(req(2, "resources/read", {"uri": "personal://references/../SKILL"}))["error"]["code"], -32002)
        self.assertEqual(self.one(req(3, "resources/read", {}))["error"]["code"], -32602)

    def test_survey_comes_from_catalog_context_when_the_registry_has_it(self):
        survey = json.loads(self.one(req(1, "resources/read", {"uri": "personal://survey"}))["result"]["contents"][0]["text"])
        if not any(c.name == "catalog_context" for c in commands.COMMANDS):
            self.assertFalse(survey["available"])
        seen = {}

        def fake(root, view=None, maintenance=False):
            seen.update(view=view, maintenance=maintenance)
            return {"view": view, "sections": []}

        stand_in = commands.Command(
            name="catalog_context", tool="personal_catalog", summary="s", description="d" * 50,
            params=(commands.Param("view", "string", "v"), commands.Param("maintenance", "boolean", "m")),
            run="x:y", example="python3 scripts/catalog_context.py", read_only=True)
        others = [c for c in commands.COMMANDS if c.name != "catalog_context"]
        with mock.patch.object(commands, "COMMANDS", others + [stand_in]), \
                mock.patch.object(stand_in, "function", return_value=fake):
            reply = self.one(req(2, "resources/read", {"uri": "personal://survey"}))
            self.assertEqual(json.loads(reply["result"]["contents"][0]["text"]), {"view": "survey", "sections": []})
            self.assertEqual(seen, {"view": "survey", "maintenance": True})

            def refusing(root, **kwargs):
                raise PuError("NO_ARCHIVE", "no archive here", "init it")
            stand_in.function.return_value = refusing
            reply = self.one(req(3, "resources/read", {"uri": "personal://survey"}))
            self.assertEqual(reply["error"]["code"], -32603)
            self.assertEqual(reply["error"]["data"]["code"], "NO_ARCHIVE")


# --- real processes ------------------------------------------------------------------

def minimal_env(**extra):
    """What MCP clients give a server: hardly anything."""
    env = {k: os.environ[k] for k in ("PATH", "SYSTEMROOT", "LANG") if k in os.environ}
    env.update(extra)
    return env


class McpProcess:
    """A server subprocess driven line by line, with a timeout on every answer."""

    def __init__(self, argv, env, cwd):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=env, cwd=cwd)
        self.replies = queue.Queue()
        self.stderr = []
        self.stdout_lines = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.append(self.proc.stderr.read()), daemon=True).start()
        self.next_id = 0

    def _read(self):
        for raw in self.proc.stdout:
            self.stdout_lines.append(raw)
            self.replies.put(raw)
        self.replies.put(None)

    def send(self, message):
        self.proc.stdin.write(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def request(self, method, params=None, timeout=60):
        self.next_id += 1
        self.send(req(self.next_id, method, params))
        raw = self.replies.get(timeout=timeout)
        if raw is None:
            raise AssertionError(f"server exited: {self.proc.wait()} {self.stderr}")
        reply = strict_json(raw)
        assert reply.get("id") == self.next_id, reply
        return reply

    def call(self, tool, arguments):
        return self.request("tools/call", {"name": tool, "arguments": arguments})["result"]

    def initialize(self):
        reply = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                            "clientInfo": {"name": "tests", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply["result"]

    def close(self, timeout=60):
        self.proc.stdin.close()
        code = self.proc.wait(timeout=timeout)
        self.proc.stdout.close()
        self.proc.stderr.close()
        return code

    def stderr_text(self):
        return b"".join(self.stderr).decode("utf-8", "replace")


def server_process(root, cwd, argv=None):
    return McpProcess(argv or [sys.executable, str(SCRIPTS / "mcp_server.py")], minimal_env(PU_HOME=str(root)), cwd)


EN_PERSONAL = "My sister Anna got into Oxford today, I am so proud of her."
# Questions that share no word with what they recall (办喜事 for 结婚, university and sibling for Oxford and sister).
RECALL_ZH = "你还记得我家里谁要办喜事吗？"
RECALL_EN = "Do you remember which university accepted my sibling?"


class WarmStartTest(ArchiveTest):
    def test_the_server_builds_the_recall_index_before_the_first_call(self):
        """A server started on an archive whose index is gone (an update, a copy) rebuilds it before it is asked."""
        import sqlite3
        from personal_understanding import capture, receipts
        receipts.preflight(self.root, "我养的猫叫年糕，今天带它打了疫苗", turn_id="t1", tier="full")
        cid = capture.capture_text(self.root, "我养的猫叫年糕，今天带它打了疫苗", "t1")["capture_id"]
        db = drop_index(self.root)
        server = server_process(self.root, self.tmp)
        try:
            server.initialize()
            deadline, built = time.monotonic() + 60, None
            while built is None and time.monotonic() < deadline:
                time.sleep(0.05)
                if db.exists():
                    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
                        with contextlib.suppress(sqlite3.Error):
                            built = con.execute("SELECT value FROM meta WHERE key='recall_version'").fetchone()
            self.assertIsNotNone(built, "no recall index was built without a call")
            result = server.call("personal_turn", {"text": "你还记得我的猫年糕打过疫苗吗？", "turn_id": "t2"})
            self.assertFalse(result["isError"], result)
            self.assertIn(cid, [r["id"] for r in result["structuredContent"]["recall"]["top"]])
        finally:
            self.assertEqual(server.close(), 0)
        self.assertIn("indexes ready", server.stderr_text())


class SubprocessTest(ArchiveTest):
    def test_an_agent_turn_costs_two_calls_and_a_question_one(self):
        """The agent's path end to end, over stdio, in the default profile, from a foreign working directory."""
        foreign = tempfile.mkdtemp(prefix="pu-cwd-", dir=self.tmp)
        fresh_root = Path(self.tmp, "not-yet-created")
        server = server_process(fresh_root, foreign)
        calls = []

        def call(tool, arguments):
            calls.append(tool)
            result = server.call(tool, arguments)
            self.assertFalse(result["isError"], result)
            self.assertEqual(schema_errors(result["structuredContent"], tools[tool]["outputSchema"]), [], tool)
            return result["structuredContent"]

        saved = {}
        try:
            self.assertEqual(server.initialize()["serverInfo"]["version"], __version__)
            tools = {t["name"]: t for t in server.request("tools/list")["result"]["tools"]}
            self.assertLessEqual(len(tools), 10)
            for turn_id, text, records in (
                    ("zh-1", PERSONAL, [{"kind": "entity", "entity_type": "person", "id": "person-xiaoyu", "title": "小雨",
                                         "aliases": ["妹妹", "我妹妹"]},
                                        {"kind": "event", "title": "小雨在杭州结婚", "entity_refs": ["person-xiaoyu"],
                                         "date_precision": "month", "felt_then": "有点舍不得"}]),
                    ("en-1", EN_PERSONAL, [{"kind": "entity", "entity_type": "person", "id": "person-anna", "title": "Anna",
                                            "aliases": ["my sister"]},
                                           {"kind": "event", "title": "Anna got into Oxford", "entity_refs": ["person-anna"],
                                            "felt_then": "so proud of her"}])):
                before = len(calls)
                turn = call("personal_turn", {"text": text, "turn_id": turn_id})
                self.assertTrue(turn["captured"], turn)
                done = call("personal_remember", {"turn_id": turn_id, "records": records})
                self.assertTrue(done["may_claim_saved"], done)
                self.assertEqual(len(calls) - before, 2)
                saved[turn_id] = turn["capture_id"]
            for turn_id, question, words in (("zh-2", RECALL_ZH, PERSONAL), ("en-2", RECALL_EN, EN_PERSONAL)):
                before = len(calls)
                answer = call("personal_turn", {"text": question, "turn_id": turn_id})
                self.assertEqual(len(calls) - before, 1)
                self.assertTrue(answer["read_turn"])
                self.assertFalse(answer["captured"])
                rows = answer["recall"]["top"]
                self.assertIn(words, [r.get("snippet") for r in rows], f"{question}: the capture's words are not recalled")
        finally:
            code = server.close()
        self.assertEqual(code, 0, server.stderr_text())
        self.assertIn("created a new, empty archive", server.stderr_text())
        index = archive_index.open_index(fresh_root)
        for turn_id, text in (("zh-1", PERSONAL), ("en-1", EN_PERSONAL)):
            row = index.capture(saved[turn_id])
            self.assertEqual(json.loads(Path(fresh_root, row["path"]).read_text("utf-8"))["text"], text)
        self.assertEqual(os.listdir(foreign), [])  # nothing written to the working directory

    def test_stdout_stays_protocol_only_even_for_raw_fd_writes_and_child_processes(self):
        program = textwrap.dedent(f"""
            import os, subprocess, sys
            sys.path.insert(0, {str(SCRIPTS)!r})
            from personal_understanding import commands, mcp_server
            def noisy(root, **kwargs):
                print("print noise")
                os.write(1, b"raw fd noise\\n")
                subprocess.run([sys.executable, "-c", "print('child noise')"])
                leaked = sys.stdin.read()
                return {{"status": "clean", "ok": True, "errors": 0, "warnings": 0, "problems": [], "stdin": leaked}}
            commands.BY_TOOL["personal_validate"].function = lambda: noisy
            sys.exit(mcp_server.main(["--tools", "all"]))
        """)
        server = server_process(self.root, self.tmp, [sys.executable, "-c", program])
        server.initialize()
        result = server.call("personal_validate", {})
        self.assertEqual(result["structuredContent"]["stdin"], "")  # library code cannot eat protocol input
        self.assertEqual(server.request("ping")["result"], {})
        self.assertEqual(server.close(), 0)
        for raw in server.stdout_lines:
            strict_json(raw)
        for noise in ("print noise", "raw fd noise", "child noise"):
            self.assertIn(noise, server.stderr_text())


WRITER = textwrap.dedent("""
    import contextlib, io, json, sys
    sys.path.insert(0, {scripts!r})
    from personal_understanding import cli
    root, worker, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    for i in range(count):
        text = f"我今天第{{i}}次想起外婆做的红烧肉 (cli {{worker}})"
        turn = f"cli{{worker}}-t{{i}}"
        for name, argv in (("preflight_context", [text, "--turn-id", turn, "--tier", "full", "--root", root]),
                           ("capture_user_update", ["--text", text, "--turn-id", turn, "--root", root])):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                code = cli.main(name, argv)
            if code != 0:
                sys.exit(f"{{name}} failed: {{out.getvalue()}}")
        print(json.loads(out.getvalue())["capture_id"], flush=True)
""")


class ConcurrencyTest(ArchiveTest):
    TURNS = 25

    def test_two_servers_and_two_cli_writers_lose_nothing(self):
        writers = [subprocess.Popen([sys.executable, "-c", WRITER.format(scripts=str(SCRIPTS)), self.root, str(w),
                                     str(self.TURNS)], stdout=subprocess.PIPE, stderr=subprocess.PIPE) for w in range(2)]
        servers = [server_process(self.root, self.tmp) for _ in range(2)]
        acknowledged, failures = [], []

        def drive(server, n):
            try:
                server.initialize()
                for i in range(self.TURNS):
                    text = f"我今天第{i}次想起外婆做的红烧肉 (mcp {n})"
                    turn = server.call("personal_turn", {"text": text, "turn_id": f"mcp{n}-t{i}", "tier": "full"})
                    if turn["isError"]:
                        failures.append(turn)
                    else:
                        acknowledged.append(turn["structuredContent"]["capture_id"])
            except Exception as exc:  # reported below; a thread must not die silently
                failures.append(repr(exc))

        threads = [threading.Thread(target=drive, args=(s, n)) for n, s in enumerate(servers)]
        for thread in threads:
            thread.start()
        for writer in writers:
            out, err = writer.communicate(timeout=240)
            self.assertEqual(writer.returncode, 0, err.decode("utf-8", "replace"))
            acknowledged += out.decode().split()
        for thread in threads:
            thread.join(timeout=240)
        for server in servers:
            self.assertEqual(server.close(), 0, server.stderr_text())
        self.assertEqual(failures, [])
        self.assertEqual(len(acknowledged), 4 * self.TURNS)
        self.assertEqual(len(set(acknowledged)), 4 * self.TURNS)
        archive_index.forget_cached()
        index = archive_index.open_index(self.root)
        for cid in acknowledged:
            self.assertIsNotNone(index.capture(cid), f"acknowledged capture {cid} is missing")
        report = validate.validate(self.root)
        self.assertNotEqual(report["status"], "failed", report["problems"])
