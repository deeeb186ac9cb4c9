"""Surface-aware wording: one text for the CLI and for MCP.

Hints, `next` steps and messages name operations and parameters with
placeholders, rendered where the text leaves the program (cli.py output,
mcp_server.py results and errors):

    {cmd:NAME}        an operation (registry name)   CLI: capture_user_update.py   MCP: personal_turn
    {arg:NAME}        a parameter                    CLI: --capture-id             MCP: capture_id
    {arg:NAME=VALUE}  a parameter with a value       CLI: --confirm, --tier full   MCP: confirm: true, tier: "full"

Over MCP an operation renders as the tool that offers it in the server's tool
profile: a fine-grained operation folded into a turn tool names that tool.
Only strings under the keys in RENDERED_KEYS are rendered, so the user's own
words (text, quote, snippet, title...) are never touched.
"""

import json
import re

PLACEHOLDER = re.compile(r"\{(cmd|arg):([a-z][a-z0-9_]*)(?:=([^{}]*))?\}")
RENDERED_KEYS = frozenset({"hint", "next", "message", "note", "warnings", "problems", "problem_details", "detail"})


def _value(text):
    try:
        return json.loads(text)
    except ValueError:
        return text


class Surface:
    """How one face of the program spells operations and parameters."""

    def __init__(self, kind, commands, offered=None, cli_command=None):
        self.kind = kind  # "cli", "mcp", or "doc" (references: the registry names, in backticks)
        self.commands = {c.name: c for c in commands}
        self.flags = {}
        for command in commands:
            for param in command.params:
                self.flags.setdefault(param.name, param.cli_flag)
        self.cli_command = cli_command  # e.g. "personal-understanding": `personal-understanding NAME` instead of NAME.py
        # MCP: registry name -> the tool offered for it (itself, or the turn tool that covers it)
        self.offered = {}
        if offered is not None:
            self.offered = {c.name: c.tool for c in offered}
            for command in offered:
                for covered in command.covers:
                    self.offered.setdefault(covered, command.tool)

    def command(self, name):
        command = self.commands.get(name)
        if command is None:
            return None
        if self.kind == "doc":
            return f"`{name}`"
        if self.kind == "cli":
            return f"{self.cli_command} {name}" if self.cli_command else f"{name}.py"
        if name in self.offered:
            return self.offered[name]
        return f"{command.tool} (full tool profile)"

    def arg(self, name, value=None):
        if self.kind == "doc":
            return f"`{name}`" if value is None else f"`{name}: {value}`"
        if self.kind == "cli":
            flag = self.flags.get(name, "--" + name.replace("_", "-"))
            if value is None:
                return flag
            parsed = _value(value)
            if parsed is True:
                return flag
            return f"{flag} {value}"
        if value is None:
            return name
        return f"{name}: {json.dumps(_value(value), ensure_ascii=False)}"

    def text(self, text):
        if "{" not in text:
            return text

        def one(match):
            kind, name, value = match.groups()
            out = self.command(name) if kind == "cmd" else self.arg(name, value)
            return match.group(0) if out is None else out
        return PLACEHOLDER.sub(one, text)

    def fields(self, obj, rendering=False):
        """A copy of a result or error with its wording rendered (only under RENDERED_KEYS)."""
        if isinstance(obj, dict):
            return {k: self.fields(v, rendering or k in RENDERED_KEYS) for k, v in obj.items()}
        if isinstance(obj, list):
            return [self.fields(v, rendering) for v in obj]
        if rendering and isinstance(obj, str):
            return self.text(obj)
        return obj


def placeholders(text):
    """(kind, name, value) of every placeholder in a text."""
    return PLACEHOLDER.findall(text or "")
