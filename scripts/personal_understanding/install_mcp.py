"""Register the MCP server with the user's MCP clients (Claude, Codex, Cursor, VS Code, ...).

Rules: a registration that already runs this skill is left byte-for-byte alone;
one that runs something else under the same name is not taken over without
--force; a config file that does not parse is refused and never rewritten;
every change is preceded by a timestamped backup beside the file and written
atomically; everything else in the file is kept.

Prints one JSON object. Exit 0 success, 1 refused (some client's config was
left alone), 2 usage.
"""

import argparse
import datetime as dt
import difflib
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from . import paths, tomlwriter
from .errors import PuError

DEFAULT_NAME = "personal-understanding"
_NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")


class Client:
    def __init__(self, name, label, fmt, key, typed=False, marker="parent"):
        self.name = name
        self.label = label
        self.fmt = fmt  # json | toml
        self.key = key  # the table that holds servers
        self.typed = typed  # entries carry "type": "stdio"
        self.marker = marker  # what shows the client is installed: its "file", its "parent" folder, or path.parents[N]


CLIENTS = {c.name: c for c in (
    Client("claude-desktop", "Claude Desktop", "json", "mcpServers"),
    Client("claude-code", "Claude Code", "json", "mcpServers", typed=True, marker="file"),
    Client("codex", "Codex", "toml", "mcp_servers"),
    Client("cursor", "Cursor", "json", "mcpServers"),
    Client("vscode", "VS Code (user mcp.json)", "json", "servers", typed=True),
    Client("windsurf", "Windsurf", "json", "mcpServers"),
    Client("cline", "Cline (VS Code extension)", "json", "mcpServers", marker=1),
    Client("agents", "Generic .agents (~/.agents/mcp.json)", "json", "mcpServers"),
)}


def client_paths(environ=None, platform=None):
    """Each client's user-level config file on this OS. HOME/USERPROFILE, APPDATA, XDG_CONFIG_HOME, CODEX_HOME count."""
    environ = os.environ if environ is None else environ
    platform = platform or sys.platform
    if platform == "win32":
        home = Path(environ.get("USERPROFILE") or environ.get("HOME") or Path.home())
        appdata = Path(environ.get("APPDATA") or home / "AppData" / "Roaming")
        code_user, claude_dir = appdata / "Code" / "User", appdata / "Claude"
    elif platform == "darwin":
        home = Path(environ.get("HOME") or Path.home())
        support = home / "Library" / "Application Support"
        code_user, claude_dir = support / "Code" / "User", support / "Claude"
    else:
        home = Path(environ.get("HOME") or Path.home())
        config = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
        code_user, claude_dir = config / "Code" / "User", config / "Claude"
    codex_home = Path(environ["CODEX_HOME"]) if environ.get("CODEX_HOME") else home / ".codex"
    return {
        "claude-desktop": claude_dir / "claude_desktop_config.json",
        "claude-code": home / ".claude.json",
        "codex": codex_home / "config.toml",
        "cursor": home / ".cursor" / "mcp.json",
        "vscode": code_user / "mcp.json",
        "windsurf": home / ".codeium" / "windsurf" / "mcp_config.json",
        "cline": code_user / "globalStorage" / "saoudrizwan.claude-dev" / "settings" / "cline_mcp_settings.json",
        "agents": home / ".agents" / "mcp.json",
    }


def detected(client, path):
    """Installed clients show their config file or the folder the client keeps it in."""
    if path.is_file():
        return True
    if client.marker == "file":
        return False
    return path.parents[0 if client.marker == "parent" else client.marker].is_dir()


# --- the entry ------------------------------------------------------------------

def server_command(root=None, tools="default", allow_dirs=()):
    """(command, args, env) that start this copy of the server."""
    script = paths.SKILL_DIR / "scripts" / "mcp_server.py"
    if paths.is_skill_folder(paths.SKILL_DIR) and script.is_file():
        args = [str(script)]
    else:  # installed as a package: no skill folder to point at
        args = ["-m", "personal_understanding.mcp_server"]
    if tools != "default":
        args += ["--tools", tools]
    for folder in dict.fromkeys(allow_dirs):
        args += ["--allow-dir", folder]
    env = {"PU_HOME": str(Path(root).expanduser().resolve())} if root else {}
    return sys.executable, args, env


def desired_entry(client, command, args, env):
    entry = {"type": "stdio"} if client.typed else {}
    entry.update(command=command, args=list(args))
    if env:
        entry["env"] = dict(env)
    return entry


def _same_path(a, b):
    return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))


def entry_target(entry):
    """What a registration runs: ("skill", folder), ("package", interpreter) or ("other", command line)."""
    if not isinstance(entry, dict):
        return "other", json.dumps(entry)
    command = entry.get("command") if isinstance(entry.get("command"), str) else ""
    args = [a for a in entry.get("args") or () if isinstance(a, str)] if isinstance(entry.get("args"), list) else []
    for arg in args:
        script = Path(arg.replace("\\", "/"))
        if script.name == "mcp_server.py" and script.parent.name == "scripts":
            script = Path(entry["cwd"]) / script if isinstance(entry.get("cwd"), str) else script
            return "skill", str(script.parent.parent)
    # An installed package is known by its environment: the folder holding its interpreter or its command.
    if args[:2] == ["-m", "personal_understanding.mcp_server"] or \
            os.path.basename(command).startswith("personal-understanding-mcp"):
        return "package", str(Path(shutil.which(command) or command).parent)
    return "other", " ".join([command] + args).strip() or "(no command)"


def is_ours(entry, mine):
    kind, where = entry_target(entry)
    return kind == mine[0] and kind != "other" and _same_path(where, mine[1])


def usable(command):
    """The registered program still exists (judged with this process's PATH)."""
    if not isinstance(command, str) or not command:
        return False
    return Path(command).is_file() if os.path.isabs(command) else shutil.which(command) is not None


def _strings(args):
    return [a for a in args or () if isinstance(a, str)] if isinstance(args, list) else []


def _profile(args):
    args = _strings(args)
    return args[args.index("--tools") + 1] if "--tools" in args[:-1] else "default"


def _allowed(args):
    """The folders an entry's --allow-dir options name, in order."""
    args = _strings(args)
    return [args[i + 1] for i in range(len(args) - 1) if args[i] == "--allow-dir"]


def _with_allowed(args, folders):
    args, out, i = list(args), [], 0
    while i < len(args):
        if args[i] == "--allow-dir" and i + 1 < len(args):
            i += 2
            continue
        out.append(args[i])
        i += 1
    for folder in folders:
        out += ["--allow-dir", folder]
    return out


def own_entry_update(entry, wanted, force=False):
    """What an entry that already runs this skill needs, or None when it is fine as it is.

    Only what is needed changes: a missing interpreter, a new --root, another
    tool profile, other --allow-dir folders, a wrong type. A working entry is left alone even when it
    names another interpreter or spells the script's path differently; --force rewrites it as this run
    would create it. The user's own keys (disabled, autoApprove, other env
    variables, extra args) stay, and so do the folders it allows when this run names none.
    """
    asked = _allowed(wanted["args"])
    allowed = asked or _allowed(entry.get("args"))
    wanted = {**wanted, "args": _with_allowed(wanted["args"], allowed)}
    changes = {}
    if force and (entry.get("command") != wanted["command"] or entry.get("args") != wanted["args"]):
        changes.update(command=wanted["command"], args=wanted["args"])
    elif not usable(entry.get("command")):
        changes["command"] = wanted["command"]
    if "args" not in changes and (_profile(entry.get("args")) != _profile(wanted["args"])
                                  or _allowed(entry.get("args")) != allowed):
        changes["args"] = wanted["args"]  # the tool profile and folders asked for this time
    if "type" in wanted and entry.get("type", "stdio") != "stdio":
        changes["type"] = "stdio"
    env = entry.get("env") if isinstance(entry.get("env"), dict) else {}
    if any(env.get(k) != v for k, v in wanted.get("env", {}).items()):
        changes["env"] = {**env, **wanted["env"]}
    return {**entry, **changes} if changes else None


# --- config files ----------------------------------------------------------------

def _refuse(code, message, hint):
    raise PuError(code, message, hint)


def read_text(path):
    """(text or None when absent, had_bom)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None, False
    except OSError as exc:
        _refuse("CONFIG_UNREADABLE", f"cannot read {path}: {exc.strerror}", "Check the file's permissions.")
    bom = data.startswith(b"\xef\xbb\xbf")
    try:
        return data[3 if bom else 0:].decode("utf-8"), bom
    except UnicodeDecodeError as exc:
        _refuse("CONFIG_UNPARSEABLE", f"{path} is not UTF-8 text (byte {exc.start})", "Fix the file, or add the entry by hand.")


def load_json(path, text):
    if text is None or not text.strip():
        return {}
    try:
        doc = json.loads(text)
    except ValueError as exc:
        _refuse("CONFIG_UNPARSEABLE", f"{path} is not valid JSON ({exc}); it was left untouched",
                "Fix the file (comments and trailing commas are not JSON), or add the entry by hand: "
                "see references/mcp-clients.md or use --export-dir.")
    if not isinstance(doc, dict):
        _refuse("CONFIG_UNEXPECTED_SHAPE", f"{path} holds a JSON {type(doc).__name__}, not an object; it was left untouched",
                "Add the entry by hand; see references/mcp-clients.md.")
    return doc


def plan_json(client, path, text, name, wanted, mine, force):
    """(status, new text or None, existing entry)."""
    doc = load_json(path, text)
    servers = doc.get(client.key)
    if servers is not None and not isinstance(servers, dict):
        _refuse("CONFIG_UNEXPECTED_SHAPE", f"{path}: {client.key!r} is not an object; the file was left untouched",
                f"Fix {client.key!r} by hand, or add the entry by hand.")
    existing = (servers or {}).get(name)
    status, entry = decide(path, name, existing, wanted, mine, force)
    if entry is None:
        return status, None, existing
    if doc.get(client.key) is None:
        doc[client.key] = {}
    doc[client.key][name] = entry
    newline = "\r\n" if text and "\r\n" in text else "\n"
    return status, json.dumps(doc, indent=2, ensure_ascii=False).replace("\n", newline) + newline, existing


def plan_toml(client, path, text, name, wanted, mine, force):
    text = text or ""
    try:
        doc = tomlwriter.parse(text)
    except ValueError as exc:
        _refuse("CONFIG_UNPARSEABLE", f"{path} is not valid TOML ({exc}); it was left untouched",
                "Fix the file, or add the table by hand: see references/mcp-clients.md or use --export-dir.")
    servers = doc.get(client.key, {})
    if not isinstance(servers, dict):
        _refuse("CONFIG_UNEXPECTED_SHAPE", f"{path}: {client.key} is not a table; the file was left untouched", "Fix it by hand.")
    existing = servers.get(name)
    table_path = (client.key, name)
    span = tomlwriter.find_table(text, table_path)
    if existing is not None and (span is None or tomlwriter.defined_outside(text, table_path)):
        _refuse("CONFIG_DEFINED_ELSEWHERE",
                f"{path} defines {client.key}.{name} without its own [{client.key}.{name}] section; it was left untouched",
                f"Edit that definition by hand, or move it into a [{client.key}.{name}] table and run again.")
    status, entry = decide(path, name, existing, wanted, mine, force)
    if entry is None:
        return status, None, existing
    newline = "\r\n" if "\r\n" in text else "\n"
    new_text = tomlwriter.replace_table(text, span, tomlwriter.render_table(table_path, entry, newline))
    try:  # the edit touched one table's text; make sure the file as a whole still says what we meant
        check = tomlwriter.parse(new_text).get(client.key, {}).get(name)
    except ValueError:
        check = None
    if check is None or {k: check.get(k) for k in ("command", "args", "env")} != {k: entry.get(k) for k in ("command", "args", "env")}:
        _refuse("CONFIG_DEFINED_ELSEWHERE",
                f"{path}: parts of [{client.key}.{name}] are defined apart from its section; it was left untouched",
                f"Gather [{client.key}.{name}] and its sub-tables in one place, or edit it by hand.")
    return status, new_text, existing


def decide(path, name, existing, wanted, mine, force):
    """(status, entry to write or None)."""
    if existing is None:
        return "added", wanted
    if is_ours(existing, mine):
        updated = own_entry_update(existing, wanted, force)
        return ("unchanged", None) if updated is None else ("updated", updated)
    kind, where = entry_target(existing)
    if not force:
        now = f"the skill folder {where}" if kind == "skill" else f"an installed package ({where})" if kind == "package" else where
        raise PuError("NAME_TAKEN", f"{path}: the name {name!r} is registered to {now}, not to this copy",
                      f"Pass --force to point {name!r} here, or --name OTHER to register beside it.",
                      {"registered_now": where, "kind": kind})
    return "replaced", wanted


# --- writing -----------------------------------------------------------------------

def backup(path, moment):
    stamp = moment.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.bak-{stamp}")
    n = 2
    while target.exists():
        target = path.with_name(f"{path.name}.bak-{stamp}-{n}")
        n += 1
    shutil.copy2(path, target)
    return target


def atomic_write(path, data):
    """Temp file beside the target, fsync, replace: a crash leaves the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def unified(path, before, after):
    return "".join(difflib.unified_diff((before or "").splitlines(keepends=True), after.splitlines(keepends=True),
                                        fromfile=str(path) if before is not None else "/dev/null", tofile=str(path)))


def install_one(client, path, name, command, args, env, force=False, dry_run=False, moment=None):
    """Register with one client. Returns its report; raises PuError when it must refuse."""
    wanted = desired_entry(client, command, args, env)
    mine = entry_target(wanted)
    text, bom = read_text(path)
    planner = plan_toml if client.fmt == "toml" else plan_json
    status, new_text, existing = planner(client, path, text, name, wanted, mine, force)
    report = {"client": client.name, "label": client.label, "path": str(path), "status": status}
    if isinstance(existing, dict) and not env and isinstance(existing.get("env"), dict) and "PU_HOME" in existing["env"]:
        report["kept_pu_home"] = existing["env"]["PU_HOME"]
    if new_text is None:
        return report
    report["diff"] = unified(path, text, new_text)
    if dry_run:
        report["status"] = "would-be-" + status
        return report
    if text is not None:
        report["backup"] = str(backup(path, moment or dt.datetime.now()))
    try:
        atomic_write(path, (b"\xef\xbb\xbf" if bom else b"") + new_text.encode("utf-8"))
    except OSError as exc:
        raise PuError("WRITE_FAILED", f"cannot write {path}: {exc}", "Check the folder's permissions; the old file is unchanged.") from None
    return report


def snippet(client, name, command, args, env):
    """A ready, complete config document holding just this server."""
    entry = desired_entry(client, command, args, env)
    if client.fmt == "toml":
        return tomlwriter.render_table((client.key, name), entry)
    return json.dumps({client.key: {name: entry}}, indent=2, ensure_ascii=False) + "\n"


def export(directory, clients, name, command, args, env, dry_run=False):
    out = []
    for client in clients:
        target = Path(directory) / f"{client.name}.{client.fmt}"
        text = snippet(client, name, command, args, env)
        item = {"client": client.name, "label": client.label, "path": str(target),
                "status": "would-be-exported" if dry_run else "exported"}
        if dry_run:
            item["content"] = text
        else:
            try:
                atomic_write(target, text.encode("utf-8"))
            except OSError as exc:
                raise PuError("WRITE_FAILED", f"cannot write {target}: {exc}", "Choose a writable --export-dir.") from None
        out.append(item)
    return out


# --- command line --------------------------------------------------------------------

class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _UsageError(message)


def build_parser():
    parser = _Parser(
        prog="install_mcp.py",
        description="Register the Personal Understanding MCP server with your MCP clients. Existing entries for "
                    "this skill are left alone, other entries under the same name are not taken over without "
                    "--force, unparseable configs are refused untouched, and every change is backed up first.",
        epilog="Examples:\n  python3 scripts/install_mcp.py --auto --dry-run\n"
               "  python3 scripts/install_mcp.py --client codex --root ~/my-memory\n"
               "  python3 scripts/install_mcp.py --export-dir ./mcp-snippets\n\n"
               f"Clients: {', '.join(CLIENTS)}.\nPrints one JSON object. Exit 0 success, 1 refused, 2 usage.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--auto", action="store_true", help="Register with every client whose config is found.")
    which.add_argument("--client", action="append", choices=list(CLIENTS), metavar="NAME",
                       help=f"Register with this client (repeatable): {', '.join(CLIENTS)}.")
    parser.add_argument("--export-dir", metavar="DIR", help="Write ready config snippets to DIR instead of editing configs.")
    parser.add_argument("--name", default=DEFAULT_NAME, help=f"Server name in the client's config (default {DEFAULT_NAME}).")
    parser.add_argument("--root", help="Archive root the server uses (recorded as PU_HOME in the entry).")
    parser.add_argument("--tools", choices=("default", "all"), default="default",
                        help="Tool profile the server offers: default (the turn tools, for chat) or all (every command).")
    parser.add_argument("--allow-dir", action="append", default=[], metavar="DIR",
                        help="A folder whose files the server's tools may read (imports, attachments, snapshots). "
                             "Repeatable; replaces the folders an existing entry allows (without it they stay).")
    parser.add_argument("--force", action="store_true", help="Re-point an entry of the same name that runs something else.")
    parser.add_argument("--dry-run", action="store_true", help="Show the exact change (a unified diff) and write nothing.")
    return parser


def run(ns, environ=None, platform=None, moment=None):
    """The whole operation for parsed arguments. Returns (exit code, report)."""
    if not _NAME_RE.match(ns.name):
        raise _UsageError(f"--name {ns.name!r}: use 1-64 letters, digits, '-' or '_'")
    if not (ns.auto or ns.client or ns.export_dir):
        raise _UsageError("choose --auto, --client NAME or --export-dir DIR")
    if ns.auto and ns.export_dir:
        raise _UsageError("--auto edits configs and --export-dir writes snippets instead; choose one")
    allow_dirs = []
    for folder in getattr(ns, "allow_dir", None) or ():
        resolved = os.path.realpath(os.path.expanduser(folder))
        if not os.path.isdir(resolved):
            raise _UsageError(f"--allow-dir {folder}: no such folder")
        allow_dirs.append(resolved)
    command, args, env = server_command(ns.root, getattr(ns, "tools", "default"), allow_dirs)
    report = {"name": ns.name, "server": {"command": command, "args": args, "env": env},
              "skill_dir": str(paths.SKILL_DIR) if args[0] != "-m" else None, "dry_run": bool(ns.dry_run),
              "clients": [], "changed": [], "backups": [], "warnings": []}
    if not env:
        report["warnings"].append("no --root: the server will use PU_HOME from the client's environment if set, "
                                  f"else {paths.default_root()}")
    if ns.export_dir:
        chosen = [CLIENTS[n] for n in dict.fromkeys(ns.client)] if ns.client else list(CLIENTS.values())
        report["clients"] = export(ns.export_dir, chosen, ns.name, command, args, env, ns.dry_run)
        report["changed"] = [c["path"] for c in report["clients"] if c["status"] == "exported"]
        return 0, report
    locations = client_paths(environ, platform)
    if ns.auto:
        checked = [{"client": n, "path": str(p), "found": detected(CLIENTS[n], p)} for n, p in locations.items()]
        report = {**{k: v for k, v in report.items() if k != "clients"}, "checked": checked, **report}
        chosen = [CLIENTS[c["client"]] for c in checked if c["found"]]
        if not chosen:
            report["error"] = {"code": "NO_CLIENT_FOUND", "message": "no supported MCP client configuration was found",
                               "hint": f"Name one with --client ({', '.join(CLIENTS)}), or use --export-dir DIR for manual setup."}
            return 1, report
    else:
        chosen = [CLIENTS[n] for n in dict.fromkeys(ns.client)]
    failed = None
    for client in chosen:
        path = locations[client.name]
        try:
            item = install_one(client, path, ns.name, command, args, env, ns.force, ns.dry_run, moment)
        except PuError as exc:
            item = {"client": client.name, "label": client.label, "path": str(path), "status": "refused", "error": exc.to_dict()}
            failed = failed or exc
        report["clients"].append(item)
        if item["status"] in ("added", "updated", "replaced"):
            report["changed"].append(item["path"])
        if item.get("backup"):
            report["backups"].append(item["backup"])
        if item.get("kept_pu_home"):
            report["warnings"].append(f"{client.name}: kept the entry's PU_HOME={item['kept_pu_home']} (pass --root to change it)")
    if report["changed"]:
        labels = ", ".join(c["label"] for c in report["clients"] if c["path"] in report["changed"])
        report["next"] = f"Restart {labels} to load the server."
    if failed:
        report["error"] = failed.to_dict()
        return 1, report
    return 0, report


def _emit(obj):
    text = json.dumps(obj, ensure_ascii=False, indent=2)
    try:
        sys.stdout.write(text + "\n")
    except UnicodeEncodeError:
        sys.stdout.write(json.dumps(obj, ensure_ascii=True, indent=2) + "\n")
    sys.stdout.flush()


def main(argv=None, environ=None, platform=None):
    parser = build_parser()
    try:
        ns = parser.parse_args(argv)
        code, report = run(ns, environ, platform)
    except _UsageError as exc:
        parser.print_usage(sys.stderr)
        _emit({"error": {"code": "USAGE", "message": str(exc), "hint": "Run install_mcp.py --help."}})
        return 2
    except PuError as exc:
        _emit({"error": exc.to_dict()})
        return 1
    _emit(report)
    return code


if __name__ == "__main__":
    sys.exit(main())
