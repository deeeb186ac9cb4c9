"""The shape of a registry entry: parameters, commands, argument checks.

commands.py holds the entries themselves (one per operation); this module
holds what they are made of, so the list of operations stays readable.
"""

import importlib

S, I, B, A, O, N = "string", "integer", "boolean", "array", "object", "number"


class Param:
    """One argument: its JSON type, help, and how the CLI spells it."""

    def __init__(self, name, type, help, required=False, default=None, enum=None, items="string",
                 positional=False, text=False, flag=None, cli=True, mcp=True, const=None, item_schema=None,
                 minimum=None, path=None):
        self.name = name
        self.type = type  # string | integer | number | boolean | array | object
        self.help = help
        self.required = required
        self.default = default
        self.enum = enum
        self.items = items  # element type of arrays
        self.item_schema = item_schema  # arrays of objects: the fields an element usually has
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

    def schema(self, render=str):
        out = {"type": self.type, "description": render(self.help)}
        if self.enum:
            out["enum"] = list(self.enum)
        if self.type == "array":
            out["items"] = dict(self.item_schema) if self.item_schema else {"type": self.items}
        if self.default is not None:
            out["default"] = self.default
        if self.minimum is not None:
            out["minimum"] = self.minimum
        return out


class Command:
    """One operation: its script, its tool, its parameters and its result."""

    def __init__(self, name, tool, summary, description, params, run, example, read_only=False, destructive=False,
                 idempotent=False, json_input=False, output=None, optional=None, ok=None, stderr_lines=None, mcp=True,
                 writes_trace=False, covers=(), defs=None):
        self.name = name  # script name, scripts/<name>.py
        self.tool = tool  # MCP tool name
        self.summary = summary  # one line
        self.description = description  # for a person and for a model
        self.params = tuple(params)
        self.run = run  # "module:function", imported on use so a CLI call loads only what it needs
        self.example = example
        self.read_only = read_only  # changes nothing in the archive's truth
        self.writes_trace = writes_trace  # ... except the audit trace every read appends
        self.destructive = destructive
        self.idempotent = idempotent
        # Every write command takes its whole argument object as --json FILE|- (the MCP tool's arguments).
        self.json_input = json_input or (not read_only and bool(self.params))
        self.output = output or {}  # JSON Schema properties always present in the result
        self.optional = optional or {}  # ... and those present in some results only
        self.ok = ok  # result -> bool; False makes the CLI exit 1
        self.stderr_lines = stderr_lines  # result -> lines a person reads on the CLI's stderr
        self.mcp = mcp
        self.covers = tuple(covers)  # fine-grained operations this one folds in (turn tools)
        self.defs = defs or {}  # output schema parts used more than once ({"$ref": "#/$defs/NAME"})

    def function(self):
        module, func = self.run.split(":")
        return getattr(importlib.import_module(f"personal_understanding.{module}"), func)

    @property
    def modifies(self):
        """Does a call change anything on disk that is not a disposable cache? (MCP readOnlyHint is its negation.)"""
        return not self.read_only or self.writes_trace

    def output_schema(self):
        props = dict(self.optional)
        props.update(self.output)
        schema = {"type": "object", "properties": props, "required": sorted(self.output)}
        if self.defs:
            schema["$defs"] = dict(self.defs)
        return schema

    def input_schema(self, render=str):
        props = {p.name: p.schema(render) for p in self.params if p.mcp}
        required = [p.name for p in self.params if p.mcp and p.required]
        schema = {"type": "object", "properties": props, "additionalProperties": False}
        if required:
            schema["required"] = required
        return schema


def obj(**props):
    """JSON Schema properties from {name: type or schema}."""
    return {k: {"type": v} if isinstance(v, str) else v for k, v in props.items()}


def nullable(kind, description=None):
    out = {"anyOf": [{"type": kind}, {"type": "null"}]}
    if description:
        out["description"] = description
    return out


def array_of(kind="object", **props):
    items = {"type": kind}
    if props:
        items["properties"] = obj(**props)
    return {"type": "array", "items": items}


def page(**props):
    """The four fields every paged list carries, plus the list's own fields."""
    return obj(total=I, shown=I, truncated=B, next_offset=nullable(I), **props)


_PY_TYPES = {"string": str, "integer": int, "number": (int, float), "boolean": bool, "array": list, "object": dict}


def check_arguments(command, args, surface="mcp"):
    """Validate an argument object against the command's parameters.

    Returns a clean dict (defaults filled). Raises PuError(BAD_ARGUMENT) with a
    message naming the parameter; the same rules serve the CLI's --json input
    and MCP tool calls.
    """
    from .errors import PuError

    if not isinstance(args, dict):
        raise PuError("BAD_ARGUMENT", "arguments must be a JSON object", f"See the input schema of {{cmd:{command.name}}}.")
    known = {p.name: p for p in command.params if getattr(p, surface)}
    unknown = sorted(set(args) - set(known))
    if unknown:
        raise PuError("BAD_ARGUMENT", f"unknown argument(s) {', '.join(unknown)} for {{cmd:{command.name}}}",
                      f"Known: {', '.join(f'{{arg:{k}}}' for k in sorted(known)) or 'none'}.")
    clean = {}
    for name, param in known.items():
        where = f"{{arg:{name}}}"
        if name not in args or args[name] is None:
            if param.required:
                raise PuError("BAD_ARGUMENT", f"missing required argument {where} for {{cmd:{command.name}}}",
                              f"{where}: {param.help}")
            if param.default is not None:
                clean[name] = param.default
            continue
        value = args[name]
        expected = _PY_TYPES[param.type]
        if (isinstance(value, bool) and param.type != "boolean") or not isinstance(value, expected):
            raise PuError("BAD_ARGUMENT", f"argument {where} must be a {param.type}, not {type(value).__name__}",
                          f"{where}: {param.help}")
        if param.type == "array":
            item_type = _PY_TYPES[param.items]
            if not all(isinstance(v, item_type) and not (isinstance(v, bool) and param.items != "boolean") for v in value):
                raise PuError("BAD_ARGUMENT", f"argument {where} must be an array of {param.items}s", f"{where}: {param.help}")
        if param.minimum is not None and param.type in ("integer", "number") and value < param.minimum:
            raise PuError("BAD_ARGUMENT", f"argument {where} must be {param.minimum} or more, not {value}",
                          f"{where}: {param.help}")
        if getattr(param, "path", None) and "\x00" in value:
            raise PuError("BAD_ARGUMENT", f"argument {where} holds a NUL character, which no file name can",
                          "Pass the path as plain text; nothing was read or written.")
        if param.enum and value not in param.enum:
            raise PuError("BAD_ARGUMENT", f"argument {where} must be one of {', '.join(map(str, param.enum))}, not {value!r}",
                          f"{where}: {param.help}")
        clean[name] = value
    return clean
