"""references/commands.md, generated from the registry so docs and code cannot drift."""

from . import commands, paths
from .surface import Surface

HEADER = """# Commands

Generated from the command registry (`scripts/personal_understanding/commands.py`) by
`python3 scripts/generate_docs.py`; a test fails when this file is stale. Every command is both a
script (`python3 scripts/<name>.py ...`, one JSON object on stdout; exit 0 success, 1 refused or
failed, 2 usage) and an MCP tool with the same parameters. Every script takes `--root DIR`
(default: `$PU_HOME`, else the skill folder).

The MCP server offers one tool profile. `default` (no option) has the turn tools, made for an agent
mid-chat: {default}. `--tools all` adds every other command. Over MCP, hints and next steps name
tools and their arguments; on the command line, scripts and flags.
"""


def _flag(param):
    if param.text:
        extra = " / TEXT" if param.positional else ""
        return f"`{param.cli_flag}`{extra} / `--file` / `--stdin`"
    return f"`{param.cli_flag}`" if param.cli else "(MCP only)"


def render():
    text = Surface("doc", commands.COMMANDS).text
    default = {c.name for c in commands.profile("default")}
    header = HEADER.format(default=", ".join(f"`{c.tool}`" for c in commands.profile("default")))
    out = [header, "| Script | MCP tool | Profile | What it does |", "|---|---|---|---|"]
    for cmd in commands.COMMANDS:
        out.append(f"| [`{cmd.name}.py`](#{cmd.name}) | `{cmd.tool}` | {'default' if cmd.name in default else 'all'} "
                   f"| {text(cmd.summary)} |")
    for cmd in commands.COMMANDS:
        out += ["", f"## {cmd.name}", "", f"`scripts/{cmd.name}.py` — MCP tool `{cmd.tool}`", "", text(cmd.description), ""]
        if cmd.covers:
            out += ["Folds in: " + ", ".join(f"[`{c}`](#{c})" for c in cmd.covers) + ".", ""]
        traits = [t for t, on in (("read-only", cmd.read_only and not cmd.writes_trace),
                                  ("reads; appends a retrieval trace", cmd.read_only and cmd.writes_trace),
                                  ("destructive", cmd.destructive),
                                  ("idempotent", cmd.idempotent), ("takes `--json FILE|-`", cmd.json_input)) if on]
        if traits:
            out += ["Traits: " + ", ".join(traits) + ".", ""]
        if cmd.params:
            out += ["| Argument | Type | Required | CLI | Meaning |", "|---|---|---|---|---|"]
            for p in cmd.params:
                kind = p.type if p.type != "array" else f"array of {p.items}"
                if p.enum:
                    kind += " (" + " \\| ".join(map(str, p.enum)) + ")"
                meaning = text(p.help) + (f" Default: `{p.default}`." if p.default not in (None, False) else "")
                out.append(f"| `{p.name}` | {kind} | {'yes' if p.required else ''} | {_flag(p)} | {meaning} |")
            out.append("")
        out += ["Example:", "", "```", cmd.example, "```"]
    return "\n".join(out) + "\n"


def commands_md_path():
    return paths.SKILL_DIR / "references" / "commands.md"


def main(argv=None):
    import argparse
    import json

    parser = argparse.ArgumentParser(
        prog="generate_docs.py", description="Regenerate references/commands.md from the command registry.",
        epilog="Example:\n  python3 scripts/generate_docs.py\n\nPrints one JSON object.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.parse_args(argv)
    path = commands_md_path()
    text = render()
    changed = not path.exists() or path.read_text(encoding="utf-8") != text
    if changed:
        path.write_text(text, encoding="utf-8")  # a file of the skill itself, not of an archive
    print(json.dumps({"written": str(path), "changed": changed, "commands": len(commands.COMMANDS)}))
    return 0
