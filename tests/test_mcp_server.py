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
from pathlib import Path
from unittest import mock

from tests.helpers import REPO, SCRIPTS, ArchiveTest

from personal_understanding import __version__, archive_index, commands, mcp_server, validate
from personal_understanding.errors import PuError

PERSONAL = "我妹妹小雨下个月在杭州结婚，我有点舍不得。"


# --- a JSON Schema checker for the subset the registry uses ------------------------

_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def schema_errors(instance, schema, where="$"):
    """Problems of `instance` against `schema` (type, properties, required, items, enum, additionalProperties)."""
    out = []
    wanted = schema.get("type")
    if wanted is not None:
        kinds = wanted if isinstance(wanted, list) else [wanted]
        if not any(_is_type(instance, k) for k in kinds):
            return [f"{where}: expected {wanted}, got {type(instance).__name__}"]
    if "enum" in schema and instance not in schema["enum"]:
        out.append(f"{where}: {instance!r} not in {schema['enum']}")
    if isinstance(instance, dict):
        props = schema.get("properties", {})
        for name in schema.get("required", ()):
            if name not in instance:
                out.append(f"{where}: missing required {name!r}")
        for name, value in instance.items():
            if name in props:
                out += schema_errors(value, props[name], f"{where}.{name}")
            elif schema.get("additionalProperties") is False:
                out.append(f"{where}: unexpected property {name!r}")
            elif isinstance(schema.get("additionalProperties"), dict):
                out += schema_errors(value, schema["additionalProperties"], f"{where}.{name}")
    if isinstance(instance, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(instance):
            out += schema_errors(item, schema["items"], f"{where}[{i}]")
    return out


def _is_type(value, kind):
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _TYPES[kind])


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
    """In-process sessions: bytes in, bytes out, through `serve`."""

    def session(self, *messages):
        """Run `serve` over these lines; returns the parsed replies (every line must be strict JSON)."""
        out, log = io.BytesIO(), io.StringIO()
        code = mcp_server.serve(io.BytesIO(b"".join(line(m) for m in messages)), out, self.root, log=log)
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
        for word in ("personal_preflight_turn", "personal_capture_user_turn", "personal_finalize_capture",
                     "personal_session_check", "may_claim_saved"):
            self.assertIn(word, result["instructions"])

    def test_unknown_methods_get_32601_before_and_after_initialize(self):
        replies = self.session(req("probe", "server/discover"), req(1, "initialize", {"protocolVersion": "2025-06-18"}),
                               {"jsonrpc": "2.0", "method": "notifications/initialized"},
                               req(2, "prompts/list"), req(3, "no/such/method", {"x": 1}), req(4, "ping"))
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
    def test_tools_list_is_the_registry(self):
        tools = self.one(req(1, "tools/list"))["result"]["tools"]
        registry = [c for c in commands.COMMANDS if c.mcp]
        self.assertEqual([t["name"] for t in tools], [c.tool for c in registry])
        for tool, command in zip(tools, registry):
            self.assertEqual(tool["description"], command.description)
            self.assertTrue(tool["title"])
            self.assertEqual(tool["inputSchema"], command.input_schema())
            self.assertEqual(tool["outputSchema"], command.output_schema())
            self.assertEqual(portability_problems(tool["inputSchema"]), [], tool["name"])
            self.assertEqual(portability_problems(tool["outputSchema"], input_side=False), [], tool["name"])
            self.assertEqual(tool["annotations"]["readOnlyHint"], bool(command.read_only))
            self.assertEqual(tool["annotations"]["destructiveHint"], bool(command.destructive))
            self.assertEqual(tool["annotations"]["idempotentHint"], bool(command.idempotent))
            self.assertIs(tool["annotations"]["openWorldHint"], False)

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
                             proto, self.root)
        replies = [strict_json(x) for x in out.getvalue().splitlines()]
        self.assertEqual([r["id"] for r in replies], [1, 2])
        self.assertIn("noise from the library", err.getvalue())

    def test_unicode_and_lone_surrogates(self):
        out = io.BytesIO()
        mcp_server.serve(io.BytesIO(line(req(1, "tools/call", {"name": "personal_add_record", "arguments": {
            "kind": "entity", "entity_type": "object", "title": "年糕 🐱", "aliases": ["我的猫"]}}))),
            out, self.root, log=io.StringIO())
        self.assertIn("年糕 🐱".encode("utf-8"), out.getvalue())  # UTF-8 on the wire, not \u escapes
        self.assertEqual(strict_json(out.getvalue())["result"]["structuredContent"]["record"]["title"], "年糕 🐱")
        reply = self.one(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"personal_preflight_turn",'
                         b'"arguments":{"text":"bad \\ud800 half","turn_id":"u2"}}}\n')
        self.assertTrue(reply["result"]["isError"])

    def test_structured_content_matches_the_output_schema_across_a_realistic_session(self):
        server = mcp_server.Server(self.root, log=io.StringIO())
        schemas = {t["name"]: t for t in server.tool_definitions()}
        used = set()

        def call(tool, args):
            if tool not in schemas:
                return None
            self.assertEqual(schema_errors(args, schemas[tool]["inputSchema"]), [], tool)
            reply = server.handle(req(len(used) + 1, "tools/call", {"name": tool, "arguments": args}))
            result = reply["result"]
            self.assertFalse(result["isError"], f"{tool}: {result['content'][0]['text']}")
            structured = result["structuredContent"]
            self.assertEqual(schema_errors(structured, schemas[tool]["outputSchema"]), [], tool)
            self.assertEqual(json.loads(result["content"][0]["text"]), json.loads(json.dumps(structured, default=str)))
            used.add(tool)
            return structured

        attachment = Path(self.root, "imports", "photo.txt")  # over MCP, files come from the archive's drop folder
        attachment.parent.mkdir()
        attachment.write_bytes(b"not really a photo")
        call("personal_init_archive", {})
        call("personal_preflight_turn", {"text": PERSONAL, "turn_id": "t1", "session_id": "s1"})
        cid = call("personal_capture_user_turn", {"text": PERSONAL, "turn_id": "t1", "capture_id": "cap-t1"})["capture_id"]
        call("personal_capture_attachment", {"file": str(attachment), "turn_id": "t1", "capture_id": "cap-att"})
        call("personal_add_record", {"kind": "entity", "entity_type": "person", "title": "小雨", "id": "person-xiaoyu",
                                     "aliases": ["妹妹", "my sister"]})
        call("personal_add_record", {"kind": "entity", "entity_type": "person", "title": "雨雨", "id": "person-yuyu"})
        call("personal_merge_entities", {"from_id": "person-yuyu", "into": "person-xiaoyu", "reason": "user: 雨雨 is 小雨"})
        first = call("personal_add_record", {"kind": "event", "title": "小雨订婚", "capture_ids": [cid],
                                             "entity_refs": ["person-xiaoyu"], "date_start": "2026-05-01",
                                             "date_precision": "day"})["id"]
        second = call("personal_add_record", {"kind": "event", "title": "小雨在杭州结婚", "capture_ids": [cid],
                                              "entity_refs": ["person-xiaoyu"], "date_start": "2026-12",
                                              "date_precision": "month", "felt_then": "有点舍不得"})["id"]
        state = call("personal_add_record", {"kind": "state", "title": "有一台 Switch", "subject_key": "owns-switch",
                                             "capture_ids": [cid]})["id"]
        call("personal_update_state", {"id": state, "capture_ids": [cid], "summary": "已经卖掉了 Switch"})
        followup = call("personal_add_followup", {"question": "婚礼准备得怎么样了？", "capture_id": cid, "due_rule": "+3d"})["id"]
        call("personal_followup_check", {"as_of": "2030-01-01"})
        call("personal_resolve_followup", {"id": followup, "resolution": "declined", "note": "user would rather not say"})
        hypothesis = call("personal_add_hypothesis", {"claim": "Family milestones stir up homesickness",
                                                      "supports": [first, second]})["id"]
        call("personal_review_hypothesis", {"id": hypothesis, "status": "rejected", "note": "user: it is the distance, not milestones"})
        call("personal_retrieve", {"query": "小雨 结婚", "capture_id": cid})
        call("personal_catalog", {"view": "survey", "capture_id": cid})
        call("personal_verify_quote", {"capture_id": cid, "quote": "我有点舍不得"})
        call("personal_current_state", {})
        call("personal_conversation_starters", {"language": "zh"})
        call("personal_finalize_capture", {"capture_id": cid, "disposition": "derived"})
        call("personal_finalize_capture", {"capture_id": "cap-att", "disposition": "no-derivation-needed",
                                           "reason": "a test attachment with nothing personal in it"})
        call("personal_derivation_ledger", {})
        self.assertTrue(call("personal_session_check", {"turn_id": "t1"})["may_claim_saved"])
        call("personal_validate", {"json": True})
        self.assertEqual(sorted(set(schemas) & set(self.EXERCISED) - used), [])

    EXERCISED = (
        "personal_init_archive", "personal_preflight_turn", "personal_capture_user_turn", "personal_capture_attachment",
        "personal_add_record", "personal_merge_entities", "personal_update_state", "personal_add_followup",
        "personal_followup_check", "personal_resolve_followup", "personal_add_hypothesis", "personal_review_hypothesis",
        "personal_retrieve", "personal_catalog", "personal_verify_quote", "personal_current_state",
        "personal_conversation_starters", "personal_finalize_capture", "personal_derivation_ledger",
        "personal_session_check", "personal_validate")


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
        self.assertEqual(self.one(req(4, "resources/templates/list"))["result"], {"resourceTemplates": []})

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


class SubprocessTest(ArchiveTest):
    def test_a_full_turn_from_a_foreign_working_directory(self):
        foreign = tempfile.mkdtemp(prefix="pu-cwd-", dir=self.tmp)
        fresh_root = Path(self.tmp, "not-yet-created")
        server = server_process(fresh_root, foreign)
        try:
            self.assertEqual(server.initialize()["serverInfo"]["version"], __version__)
            names = [t["name"] for t in server.request("tools/list")["result"]["tools"]]
            self.assertIn("personal_preflight_turn", names)
            pre = server.call("personal_preflight_turn", {"text": PERSONAL, "turn_id": "t1"})
            self.assertEqual(pre["structuredContent"]["receipt"]["tier"], "full", pre)
            cap = server.call("personal_capture_user_turn", {"text": PERSONAL, "turn_id": "t1"})
            self.assertFalse(cap["isError"], cap)
            cid = cap["structuredContent"]["capture_id"]
            early = server.call("personal_session_check", {"turn_id": "t1"})
            self.assertFalse(early["isError"])
            self.assertFalse(early["structuredContent"]["may_claim_saved"])
            fin = server.call("personal_finalize_capture", {"capture_id": cid, "disposition": "no-derivation-needed",
                                                           "reason": "test turn: the wedding is already known"})
            self.assertFalse(fin["isError"], fin)
            gate = server.call("personal_session_check", {"turn_id": "t1"})
            self.assertTrue(gate["structuredContent"]["may_claim_saved"], gate)
        finally:
            code = server.close()
        self.assertEqual(code, 0, server.stderr_text())
        self.assertIn("created a new, empty archive", server.stderr_text())
        self.assertIsNotNone(archive_index.open_index(fresh_root).capture(cid))
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
            sys.exit(mcp_server.main())
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
                    pre = server.call("personal_preflight_turn", {"text": text, "turn_id": f"mcp{n}-t{i}", "tier": "full"})
                    cap = server.call("personal_capture_user_turn", {"text": text, "turn_id": f"mcp{n}-t{i}"})
                    if pre["isError"] or cap["isError"]:
                        failures.append((pre, cap))
                    else:
                        acknowledged.append(cap["structuredContent"]["capture_id"])
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
