"""MCP face of the registry: JSON-RPC 2.0 over stdio, one message per line.

The server offers one tool profile (commands.PROFILES): `default`, made for
chat turns, or `all`, every registry command. Each tool has the same
parameters and description as its script; hints and next steps are rendered
for this surface (tools and their arguments, never scripts and flags).
Resources, templates and prompts are in mcp_resources.py.

Protocol rules this module keeps:
- stdout carries protocol messages only; logs and tracebacks go to stderr, and
  library code that prints cannot reach the protocol stream.
- No input, however malformed, stops the server; only end of input does (exit 0).
- Tool failures the model can act on (bad arguments, refusals, bugs) are tool
  results with `isError: true`; malformed requests are JSON-RPC errors.
- An `isError` result carries no `structuredContent`: clients check structured
  content against the tool's outputSchema, which describes success only. The
  error (code, message, hint) is the JSON text content, the same object the
  CLI prints.
"""

import argparse
import contextlib
import datetime
import io
import json
import os
import sys
import threading
import time
import traceback

from . import __version__, archive, commands, inputs, mcp_resources, paths
from .errors import PuError
from .surface import Surface

SERVER_NAME = "personal-understanding"
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_PROTOCOL = PROTOCOL_VERSIONS[-1]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# Every protocol version this server speaks (up to 2025-11-25) names -32002 for
# an unknown resource; SEP-2164 moves it to -32602 only from 2026-07-28 on.
RESOURCE_NOT_FOUND = -32002

# A capture is capped at 256 KiB of UTF-8; even fully \u-escaped that is far
# below this. Longer lines are discarded unread rather than held in memory.
MAX_LINE_BYTES = 16 * 1024 * 1024

INSTRUCTIONS = (
    "Every user message: call personal_turn with the exact message before answering. When it saved the message "
    "(captured true), answer, then call personal_remember once with the turn_id and what the message adds (records, "
    "state changes, follow-ups), or a specific reason why nothing is new. Never tell the user anything was saved "
    "unless personal_remember returned may_claim_saved true. For questions to the memory, answer from the turn's "
    "recall or call personal_recall with the turn_id; read the words (mode deep) before quoting the user."
)

SURVEY_COMMAND = "catalog_context"
SURVEY_ARGUMENTS = {"view": "survey", "maintenance": True}
SKILL_URI = mcp_resources.SKILL_URI
SURVEY_URI = mcp_resources.SURVEY_URI
REFERENCE_PREFIX = mcp_resources.REFERENCE_PREFIX


class RpcError(Exception):
    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def error_response(msg_id, code, message, data=None):
    error = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": msg_id, "error": error}


def encode(message):
    """One protocol line (without the newline) as UTF-8 bytes."""
    try:
        return json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str).encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates in a string: escape them rather than emit invalid UTF-8
        return json.dumps(message, ensure_ascii=True, separators=(",", ":"), allow_nan=False, default=str).encode("ascii")


def _valid_id(value):
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def _title(command):
    name = command.tool[len("personal_"):] if command.tool.startswith("personal_") else command.tool
    return name.replace("_", " ").capitalize()


def instructions():
    return INSTRUCTIONS


doc_dir = mcp_resources.doc_dir


def _find_command(predicate):
    # Read the registry at call time, not import time, so nothing here goes stale against commands.COMMANDS.
    for command in commands.COMMANDS:
        if predicate(command):
            return command
    return None


def tool_result(data):
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, default=str)
    return {"content": [{"type": "text", "text": text}], "structuredContent": data, "isError": False}


def tool_error(error):
    text = json.dumps({"error": error}, ensure_ascii=False, default=str)
    return {"content": [{"type": "text", "text": text}], "isError": True}


class Server:
    """The protocol state of one client connection. Not thread-safe: one message at a time."""

    def __init__(self, root, log=None, allowed_dirs=(), tools="default"):
        self.root = root
        self.allowed_dirs = tuple(allowed_dirs)  # folders path arguments may reach (inputs.confine)
        self.profile = tools
        commands.profile(tools)  # an unknown profile fails here, before any client connects
        self.protocol_version = None
        self.client_info = None
        self.initialized = False
        self._log_stream = log
        self._methods = {
            "initialize": self._initialize,
            "ping": lambda params: {},
            "tools/list": self._list_tools,
            "tools/call": self._call_tool,
            "resources/list": self._list_resources,
            "resources/templates/list": lambda params: {"resourceTemplates": list(mcp_resources.TEMPLATES)},
            "resources/read": self._read_resource,
            "prompts/list": lambda params: {"prompts": mcp_resources.list_prompts()},
            "prompts/get": self._get_prompt,
        }

    def log(self, text):
        stream = self._log_stream or sys.stderr
        try:
            stream.write(f"personal-understanding-mcp: {text}\n")
            stream.flush()
        except (OSError, ValueError, UnicodeEncodeError):
            pass

    # --- messages ---------------------------------------------------------

    def handle_line(self, raw):
        """One input line (bytes) -> one reply (bytes, no newline) or None."""
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogatepass")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return encode(error_response(None, PARSE_ERROR, f"parse error: the line is not valid UTF-8 (byte {exc.start})"))
        text = text.strip(" \t\r\n\ufeff")
        if not text:
            return None
        try:
            message = json.loads(text)
        except (ValueError, RecursionError) as exc:
            return encode(error_response(None, PARSE_ERROR, f"parse error: {exc}"))
        reply = self.handle(message)
        if reply is None:
            return None
        try:
            return encode(reply)
        except (TypeError, ValueError) as exc:  # e.g. NaN in a result: say so instead of writing invalid JSON
            self.log(f"cannot encode the reply to id {reply.get('id')!r}: {exc}")
            return encode(error_response(reply.get("id"), INTERNAL_ERROR, f"internal error: the reply could not be encoded ({exc})"))

    def handle(self, message):
        """One decoded message -> a reply dict, or None for notifications and responses."""
        if isinstance(message, list):
            return error_response(None, INVALID_REQUEST, "invalid request: batches are not supported; send one JSON-RPC object per line")
        if not isinstance(message, dict):
            return error_response(None, INVALID_REQUEST, "invalid request: a message must be a JSON object")
        has_id = "id" in message
        msg_id = message.get("id")
        reply_id = msg_id if _valid_id(msg_id) else None
        if "method" not in message and ("result" in message or "error" in message):
            return None  # a response, yet this server sends no requests: nothing to answer
        if message.get("jsonrpc") != "2.0":
            return error_response(reply_id, INVALID_REQUEST, 'invalid request: "jsonrpc" must be "2.0"')
        method = message.get("method")
        if not isinstance(method, str) or not method:
            return error_response(reply_id, INVALID_REQUEST, 'invalid request: "method" must be a non-empty string')
        if has_id and not _valid_id(msg_id):
            return error_response(None, INVALID_REQUEST, 'invalid request: "id" must be a string or a number')
        params = message.get("params")
        if params is None:
            params = {}
        if not isinstance(params, (dict, list)):
            return error_response(reply_id, INVALID_REQUEST, 'invalid request: "params" must be an object')
        if not has_id:
            self._notification(method, params)
            return None
        handler = self._methods.get(method)
        if handler is None:
            return error_response(msg_id, METHOD_NOT_FOUND, f"method not found: {method}")
        if not isinstance(params, dict):
            return error_response(msg_id, INVALID_PARAMS, f'invalid params: {method} takes an object as "params"')
        try:
            result = handler(params)
        except RpcError as exc:
            return error_response(msg_id, exc.code, exc.message, exc.data)
        except Exception as exc:  # a bug in this module: keep serving
            self.log(f"{method} failed:\n{traceback.format_exc()}")
            return error_response(msg_id, INTERNAL_ERROR, f"internal error: {type(exc).__name__}: {exc}")
        return {"jsonrpc": "2.0", "id": msg_id, "result": result}

    def _notification(self, method, params):
        if method == "notifications/initialized":
            self.initialized = True
        # Everything else (cancelled, progress, roots changed, unknown) needs no action: requests
        # are answered one at a time, so a cancelled one has already been answered.

    # --- lifecycle --------------------------------------------------------

    def _initialize(self, params):
        requested = params.get("protocolVersion")
        self.protocol_version = requested if requested in PROTOCOL_VERSIONS else LATEST_PROTOCOL
        self.client_info = params.get("clientInfo") if isinstance(params.get("clientInfo"), dict) else None
        who = (self.client_info or {}).get("name", "a client")
        self.log(f"initialize from {who}: protocol {requested!r} -> {self.protocol_version}")
        return {
            "protocolVersion": self.protocol_version,
            "capabilities": {"tools": {"listChanged": False}, "resources": {"subscribe": False, "listChanged": False},
                             "prompts": {"listChanged": False}},
            "serverInfo": {"name": SERVER_NAME, "title": "Personal Understanding", "version": __version__},
            "instructions": instructions(),
        }

    # --- tools ------------------------------------------------------------

    def offered(self):
        """The commands of this server's tool profile (read at call time: tests swap the registry)."""
        return commands.profile(self.profile)

    def surface(self):
        return Surface("mcp", commands.COMMANDS, offered=self.offered())

    def tool_definitions(self):
        surface = self.surface()
        tools = []
        for command in self.offered():
            tools.append({
                "name": command.tool,
                "title": _title(command),
                "description": surface.text(f"{command.summary} {command.description}"),
                "inputSchema": command.input_schema(render=surface.text),
                "outputSchema": command.output_schema(),
                "annotations": {
                    "readOnlyHint": not command.modifies,
                    "destructiveHint": bool(command.destructive),
                    "idempotentHint": bool(command.idempotent),
                    "openWorldHint": False,
                },
            })
        return tools

    def _list_tools(self, params):
        return {"tools": self.tool_definitions()}

    def _call_tool(self, params):
        name = params.get("name")
        if not isinstance(name, str) or not name:
            raise RpcError(INVALID_PARAMS, 'invalid params: tools/call needs the tool\'s "name"')
        command = next((c for c in self.offered() if c.tool == name), None)
        if command is None:
            elsewhere = _find_command(lambda c: getattr(c, "mcp", True) and c.tool == name)
            raise RpcError(INVALID_PARAMS, f"unknown tool: {name}" + (
                f" (this server offers the {self.profile} tool profile; {name} is in the full profile)" if elsewhere else ""))
        arguments = params.get("arguments")
        return self.run_command(command, {} if arguments is None else arguments)

    def run_command(self, command, arguments):
        """Validate, run, and shape the result; every failure becomes an isError result."""
        try:
            args = commands.check_arguments(command, arguments, surface="mcp")
            args = inputs.confine(command, args, self.root, self.allowed_dirs)
            function = command.function()
            with contextlib.redirect_stdout(sys.stderr):
                result = function(self.root, **args)
        except PuError as exc:
            return tool_error(self.surface().fields(exc.to_dict()))
        except (Exception, SystemExit) as exc:  # a bug: the model gets a plain message, the maintainer the traceback
            self.log(f"{command.tool} raised:\n{traceback.format_exc()}")
            return tool_error(self.surface().fields({
                "code": "INTERNAL_ERROR", "message": f"{type(exc).__name__}: {exc}",
                "hint": "This is a bug in the server, not in your call; the traceback is in the server's log. "
                        "Check the archive with {cmd:validate_memory}."}))
        if not isinstance(result, dict):
            result = {"result": result}
        try:
            return tool_result(self.surface().fields(result))
        except (TypeError, ValueError) as exc:
            self.log(f"{command.tool} returned a result that is not JSON: {exc}")
            return tool_error({"code": "INTERNAL_ERROR", "message": f"the result could not be encoded as JSON: {exc}",
                               "hint": "This is a bug in the server; the operation itself may have completed."})

    # --- resources and prompts --------------------------------------------

    def _list_resources(self, params):
        return {"resources": mcp_resources.list_resources()}

    def _read_resource(self, params):
        uri = params.get("uri")
        if not isinstance(uri, str) or not uri:
            raise RpcError(INVALID_PARAMS, 'invalid params: resources/read needs a "uri"')
        if uri == SURVEY_URI:
            return self._contents(uri, "application/json", self.survey_text())
        try:
            item = mcp_resources.read_item(self.root, uri)
        except mcp_resources.NotFound:
            raise RpcError(RESOURCE_NOT_FOUND, f"resource not found: {uri}", {"uri": uri}) from None
        except mcp_resources.BadRequest as exc:
            raise RpcError(INTERNAL_ERROR, f"cannot serve {uri}: {exc}", {"uri": uri}) from None
        except PuError as exc:
            raise RpcError(INTERNAL_ERROR, self.surface().text(f"cannot serve {uri}: {exc.code}: {exc.message}"),
                           {"uri": uri}) from None
        if item is not None:
            return self._contents(uri, "application/json", item)
        text = mcp_resources.read_document(uri)
        if text is None:
            raise RpcError(RESOURCE_NOT_FOUND, f"resource not found: {uri}", {"uri": uri})
        return self._contents(uri, "text/markdown", text)

    def _get_prompt(self, params):
        name = params.get("name")
        if not isinstance(name, str) or not name:
            raise RpcError(INVALID_PARAMS, 'invalid params: prompts/get needs the prompt\'s "name"')
        arguments = params.get("arguments")
        try:
            return mcp_resources.get_prompt(name, {} if arguments is None else arguments)
        except mcp_resources.NotFound:
            raise RpcError(INVALID_PARAMS, f"unknown prompt: {name}") from None
        except mcp_resources.BadRequest as exc:
            raise RpcError(INVALID_PARAMS, f"invalid params: {exc}") from None

    @staticmethod
    def _contents(uri, mime, text):
        return {"contents": [{"uri": uri, "mimeType": mime, "text": text}]}

    def survey_text(self):
        command = _find_command(lambda c: c.name == SURVEY_COMMAND)
        if command is None:
            return json.dumps({"available": False,
                               "note": "The archive survey is not available in this version (no catalog_context command). "
                                       "Read personal://skill for the turn order."}, ensure_ascii=False)
        try:
            args = commands.check_arguments(command, dict(SURVEY_ARGUMENTS), surface="mcp")
            with contextlib.redirect_stdout(sys.stderr):
                result = command.function()(self.root, **args)
        except PuError as exc:
            raise RpcError(INTERNAL_ERROR, f"the survey failed: {exc.code}: {exc.message}", exc.to_dict()) from None
        return json.dumps(result, ensure_ascii=False, default=str)


# --- the stdio loop ----------------------------------------------------------

_TOO_LONG = object()


def _lines(source, limit):
    """Raw lines from a binary stream, bytes, or an iterable of bytes/str chunks."""
    if isinstance(source, (bytes, bytearray)):
        source = io.BytesIO(bytes(source))
    if not hasattr(source, "readline"):
        for chunk in source:
            if isinstance(chunk, str):
                chunk = chunk.encode("utf-8", "surrogatepass")
            yield from chunk.split(b"\n")
        return
    while True:
        line = source.readline(limit + 1)
        if not line:
            return
        if isinstance(line, str):
            line = line.encode("utf-8", "surrogatepass")
        if len(line) > limit and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):  # skip the rest of the oversized line
                line = source.readline(limit)
                if isinstance(line, str):
                    line = line.encode("utf-8", "surrogatepass")
            yield _TOO_LONG
            continue
        yield line


def _writer(stream):
    binary = not isinstance(stream, io.TextIOBase)
    if not binary and hasattr(stream, "buffer"):
        stream, binary = stream.buffer, True

    def write(data):
        if binary:
            stream.write(data + b"\n")
        else:
            stream.write(data.decode("utf-8") + "\n")
        stream.flush()
    return write


def serve(stdin, stdout, root, log=None, allowed_dirs=(), tools="default"):
    """Answer messages from `stdin` on `stdout` until end of input. Returns the exit code (0)."""
    server = Server(root, log=log, allowed_dirs=allowed_dirs, tools=tools)
    write = _writer(stdout)
    try:
        for raw in _lines(stdin, MAX_LINE_BYTES):
            if raw is _TOO_LONG:
                reply = encode(error_response(None, INVALID_REQUEST, f"invalid request: line longer than {MAX_LINE_BYTES} bytes; discarded"))
            else:
                reply = server.handle_line(raw)
            if reply is not None:
                write(reply)
    except OSError as exc:  # the client went away mid-write: nobody is left to answer
        server.log(f"the client closed the connection ({exc})")
    return 0


def _claim_stdio():
    """Keep the real stdin/stdout for the protocol; point fds 0 and 1 elsewhere.

    Anything else that reads stdin or writes stdout (library code, a child
    process) then touches /dev/null and stderr, never the protocol stream.
    """
    try:
        proto_in = os.fdopen(os.dup(sys.stdin.fileno()), "rb")
        proto_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
        sys.stdout.flush()
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, sys.stdin.fileno())
        os.close(null)
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):  # no real descriptors (embedded, tests)
        proto_in = getattr(sys.stdin, "buffer", None) or io.BytesIO()
        proto_out = getattr(sys.stdout, "buffer", None) or io.BytesIO()
    sys.stdout = sys.stderr
    return proto_in, proto_out


def ensure_archive(root, log):
    """Clients start servers with a bare environment and no chance to run init first."""
    try:
        if not archive.exists(root):
            archive.init_archive(root)
            log(f"created a new, empty archive at {root}")
    except (PuError, OSError) as exc:
        log(f"cannot create the archive at {root}: {exc}; tools will report the problem")


def warm(root, log, tools="default"):
    """Catch the indexes up and load what a first call needs, while the client has not asked yet.

    After an update that re-indexes the archive this is the rebuild (a minute at 100 000
    messages); otherwise the catch-up of what other processes wrote and the start-up work
    of a turn (the tools' modules, the classifier's cues, the dictionary, the built-in
    thesaurus, the time rules). A call meanwhile writes between two chunks of the build; its
    read waits up to a second, then answers INDEX_BUILDING (retrieval/index.py).
    """
    started = time.perf_counter()
    try:
        from .retrieval import index

        with index.builder_thread():  # a call meanwhile never takes the build on itself
            for command in commands.profile(tools):
                command.function()
            from .classifier import classify
            from .retrieval import knowledge, timeexpr
            classify("今天和妈妈吃了火锅，谢谢你 I had a great day, thanks!")
            if archive.exists(root):
                recall = index.open_recall(root)
                recall.lexicon()
                recall.thesaurus()
            else:
                knowledge.load()
            timeexpr.resolve("昨天 last week 2024-08-01", datetime.date.today())
    except Exception as exc:  # derived work only: the first call does it, and reports what stops it
        log(f"warm-up stopped: {type(exc).__name__}: {exc}")
        return
    log(f"indexes ready in {time.perf_counter() - started:.1f} s")


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="mcp_server.py",
        description="Personal Understanding MCP server (stdio, JSON-RPC 2.0, one message per line). "
                    "Clients start it; it answers on stdout and logs on stderr.")
    parser.add_argument("--root", help="Archive root (default: $PU_HOME, else the skill folder or ~/.personal-understanding).")
    parser.add_argument("--allow-dir", action="append", default=[], metavar="DIR",
                        help="A folder whose files tools may read (imports, attachments, snapshots) and where a backup "
                             "may be mirrored. Repeatable. Without it only the archive's imports/ and backups/ are reachable.")
    parser.add_argument("--tools", choices=sorted(commands.PROFILES), default="default",
                        help="Tool profile: default (the turn tools, made for chat: a few KB of tools/list) or all "
                             "(every command, fine-grained and maintenance).")
    parser.add_argument("--version", action="version", version=f"personal-understanding {__version__}")
    args = parser.parse_args(argv)
    try:
        sys.stderr.reconfigure(encoding="utf-8", errors="backslashreplace")
    except (AttributeError, ValueError):
        pass
    proto_in, proto_out = _claim_stdio()
    server_log = Server(None).log
    root = paths.resolve_root(args.root)
    ensure_archive(root, server_log)
    server_log(f"{__version__} serving archive {root} with the {args.tools} tool profile (protocol up to {LATEST_PROTOCOL})")
    for folder in args.allow_dir:
        server_log(f"path arguments may reach {os.path.realpath(os.path.expanduser(folder))}")
    threading.Thread(target=warm, args=(root, server_log, args.tools), name="warm-up", daemon=True).start()
    try:
        return serve(proto_in, proto_out, root, allowed_dirs=args.allow_dir, tools=args.tools)
    except KeyboardInterrupt:
        return 0
    finally:
        with contextlib.suppress(OSError, ValueError):
            proto_out.close()


if __name__ == "__main__":
    sys.exit(main())
