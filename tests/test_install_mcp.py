"""install_mcp: registering the server in client configs without breaking or hijacking anything."""

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from unittest import mock

from tests.helpers import SCRIPTS, ArchiveTest, write

from personal_understanding import install_mcp, paths, tomlwriter

SERVER = str(SCRIPTS / "mcp_server.py")

MARKERS = {  # a folder each client creates when installed, relative to the fake home, per OS
    "linux": [".config/Claude", ".codex", ".cursor", ".config/Code/User/globalStorage/saoudrizwan.claude-dev",
              ".codeium/windsurf", ".agents"],
    "darwin": ["Library/Application Support/Claude", ".codex", ".cursor",
               "Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev", ".codeium/windsurf", ".agents"],
    "win32": ["AppData/Roaming/Claude", ".codex", ".cursor", "AppData/Roaming/Code/User/globalStorage/saoudrizwan.claude-dev",
              ".codeium/windsurf", ".agents"],
}

TOML_BEFORE = '''# Codex settings
model = "o3"   # trailing comment
notes = """
[mcp_servers.personal-understanding]
this is text inside a string, not a table
"""

[mcp_servers.other]
command = "npx"
args = ["-y", "other-server"]

  # a comment that belongs to the next table
[profiles.fast]
model = "o4-mini"
'''


class InstallTest(ArchiveTest):
    def setUp(self):
        super().setUp()
        self.home = Path(self.tmp, "home")
        self.home.mkdir()

    def environ(self, platform="linux"):
        env = {"HOME": str(self.home)}
        if platform == "win32":
            env = {"USERPROFILE": str(self.home), "APPDATA": str(self.home / "AppData" / "Roaming")}
        return env

    def install(self, *argv, platform="linux"):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = install_mcp.main(list(argv), environ=self.environ(platform), platform=platform)
        return code, json.loads(out.getvalue())

    def path(self, client, platform="linux"):
        return install_mcp.client_paths(self.environ(platform), platform)[client]

    def backups(self, path):
        return sorted(p.name for p in Path(path).parent.iterdir() if ".bak-" in p.name)

    def files(self):
        return {p.relative_to(self.home).as_posix(): p.read_bytes() for p in self.home.rglob("*") if p.is_file()}


class ClientFormatsTest(InstallTest):
    def test_auto_finds_every_client_on_every_os_and_writes_its_format(self):
        for platform in ("linux", "darwin", "win32"):
            with self.subTest(platform=platform):
                self.home = Path(self.tmp, f"home-{platform}")
                for marker in MARKERS[platform]:
                    (self.home / marker).mkdir(parents=True)
                (self.home / ("AppData/Roaming" if platform == "win32" else
                              "Library/Application Support" if platform == "darwin" else ".config") / "Code" / "User").mkdir(
                    parents=True, exist_ok=True)
                write(self.home / ".claude.json", '{"numStartups": 3, "projects": {}}')
                code, report = self.install("--auto", "--root", self.root, platform=platform)
                self.assertEqual(code, 0, report)
                self.assertEqual(sorted(c["client"] for c in report["clients"]), sorted(install_mcp.CLIENTS))
                self.assertTrue(all(c["status"] == "added" for c in report["clients"]), report)
                for name, client in install_mcp.CLIENTS.items():
                    path = self.path(name, platform)
                    self.assertTrue(str(path).startswith(str(self.home)), path)
                    text = path.read_text(encoding="utf-8")
                    doc = tomlwriter.parse(text) if client.fmt == "toml" else json.loads(text)
                    entry = doc[client.key]["personal-understanding"]
                    self.assertEqual(entry["command"], sys.executable)
                    self.assertEqual(entry["args"], [SERVER])
                    self.assertEqual(entry["env"], {"PU_HOME": str(Path(self.root).resolve())})
                    self.assertEqual(entry.get("type"), "stdio" if client.typed else None)
                self.assertEqual(json.loads(self.path("claude-code", platform).read_text())["numStartups"], 3)

    def test_known_locations(self):
        linux = install_mcp.client_paths({"HOME": "/h", "XDG_CONFIG_HOME": "/x"}, "linux")
        self.assertEqual(linux["vscode"], Path("/x/Code/User/mcp.json"))
        self.assertEqual(linux["claude-desktop"], Path("/x/Claude/claude_desktop_config.json"))
        self.assertEqual(linux["codex"], Path("/h/.codex/config.toml"))
        self.assertEqual(install_mcp.client_paths({"HOME": "/h", "CODEX_HOME": "/c"}, "linux")["codex"], Path("/c/config.toml"))
        mac = install_mcp.client_paths({"HOME": "/h"}, "darwin")
        self.assertEqual(mac["claude-desktop"], Path("/h/Library/Application Support/Claude/claude_desktop_config.json"))
        self.assertEqual(mac["cline"], Path("/h/Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev/"
                                            "settings/cline_mcp_settings.json"))
        win = install_mcp.client_paths({"USERPROFILE": "C:/Users/u", "APPDATA": "C:/Users/u/AppData/Roaming"}, "win32")
        self.assertEqual(win["claude-desktop"], Path("C:/Users/u/AppData/Roaming/Claude/claude_desktop_config.json"))
        self.assertEqual(win["cursor"], Path("C:/Users/u/.cursor/mcp.json"))
        self.assertEqual(win["windsurf"], Path("C:/Users/u/.codeium/windsurf/mcp_config.json"))
        self.assertEqual(win["claude-code"], Path("C:/Users/u/.claude.json"))

    def test_nothing_found_and_usage_errors(self):
        code, report = self.install("--auto")
        self.assertEqual((code, report["error"]["code"]), (1, "NO_CLIENT_FOUND"))
        self.assertEqual(self.files(), {})
        for argv in ([], ["--client", "nope"], ["--client", "cursor", "--name", "bad name!"], ["--auto", "--export-dir", "x"],
                     ["--auto", "--client", "cursor"]):
            code, report = self.install(*argv)
            self.assertEqual((code, report["error"]["code"]), (2, "USAGE"), argv)

    def test_the_entry_script_writes_a_working_registration(self):
        env = {k: os.environ[k] for k in ("PATH", "SYSTEMROOT") if k in os.environ}
        env["HOME"] = str(self.home)
        proc = subprocess.run([sys.executable, str(SCRIPTS / "install_mcp.py"), "--client", "cursor", "--root", self.root],
                              capture_output=True, env=env, cwd=self.tmp, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr.decode())
        self.assertEqual(json.loads(proc.stdout)["clients"][0]["status"], "added")
        entry = json.loads(self.path("cursor").read_text())["mcpServers"]["personal-understanding"]
        message = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}\n'
        server = subprocess.run([entry["command"], *entry["args"]], input=message, capture_output=True, timeout=60,
                                env={**{k: os.environ[k] for k in ("PATH", "SYSTEMROOT") if k in os.environ}, **entry["env"]},
                                cwd=self.home)
        self.assertEqual(server.returncode, 0, server.stderr.decode())
        self.assertEqual(json.loads(server.stdout)["result"]["serverInfo"]["name"], "personal-understanding")

    def test_installed_package_entry_uses_the_module(self):
        with mock.patch.object(paths, "is_skill_folder", return_value=False):
            command, args, env = install_mcp.server_command()
        self.assertEqual((command, args, env), (sys.executable, ["-m", "personal_understanding.mcp_server"], {}))
        mine = install_mcp.entry_target({"command": command, "args": args})
        self.assertEqual(mine, ("package", str(Path(sys.executable).parent)))
        console = {"command": str(Path(sys.executable).parent / "personal-understanding-mcp")}
        self.assertTrue(install_mcp.is_ours(console, mine))  # the same environment's console command
        self.assertEqual(install_mcp.entry_target({"command": "python3", "args": ["/s/k/scripts/mcp_server.py"]}),
                         ("skill", str(Path("/s/k"))))
        self.assertEqual(install_mcp.entry_target({"command": "python3", "args": ["/proj/mcp_server.py"]}),
                         ("other", "python3 /proj/mcp_server.py"))


class SafetyTest(InstallTest):
    def test_other_content_is_kept_and_a_second_run_changes_nothing(self):
        config = self.path("cursor")
        original = {"zeta": 1, "mcpServers": {"other": {"command": "npx", "args": ["-y", "x"], "env": {"K": "v"}}},
                    "alpha": {"nested": [1, 2.5, None, True]}, "ünïcode": "ok"}
        write(config, json.dumps(original, indent=4, ensure_ascii=False))
        code, report = self.install("--client", "cursor")
        self.assertEqual((code, report["clients"][0]["status"]), (0, "added"), report)
        after = json.loads(config.read_text(encoding="utf-8"))
        self.assertEqual(list(after), ["zeta", "mcpServers", "alpha", "ünïcode"])
        self.assertEqual(list(after["mcpServers"]), ["other", "personal-understanding"])
        self.assertEqual(after["mcpServers"]["other"], original["mcpServers"]["other"])
        self.assertEqual(after["alpha"], original["alpha"])
        self.assertIn('\n  "zeta": 1,', config.read_text(encoding="utf-8"))  # 2-space indent
        self.assertEqual(len(self.backups(config)), 1)
        backup = config.parent / self.backups(config)[0]
        self.assertEqual(json.loads(backup.read_text(encoding="utf-8")), original)
        self.assertEqual(report["backups"], [str(backup)])
        before = self.files()
        code, report = self.install("--client", "cursor")
        self.assertEqual((code, report["clients"][0]["status"], report["changed"], report["backups"]), (0, "unchanged", [], []))
        self.assertEqual(self.files(), before)  # byte for byte, and no new backup

    def test_a_registration_of_another_folder_is_not_taken_over_without_force(self):
        config = self.path("claude-desktop")
        foreign = {"mcpServers": {"personal-understanding": {"command": "python3", "args": ["/elsewhere/skill/scripts/mcp_server.py"]}}}
        write(config, json.dumps(foreign))
        before = self.files()
        code, report = self.install("--client", "claude-desktop")
        self.assertEqual(code, 1)
        self.assertEqual(report["error"]["code"], "NAME_TAKEN")
        self.assertIn(str(Path("/elsewhere/skill")), report["error"]["message"])
        self.assertIn("--force", report["error"]["hint"])
        self.assertEqual(report["clients"][0]["status"], "refused")
        self.assertEqual(self.files(), before)
        code, report = self.install("--client", "claude-desktop", "--force")
        self.assertEqual((code, report["clients"][0]["status"]), (0, "replaced"))
        self.assertEqual(json.loads(config.read_text())["mcpServers"]["personal-understanding"]["args"], [SERVER])
        self.assertEqual(len(self.backups(config)), 1)
        code, report = self.install("--client", "claude-desktop", "--name", "pu-second")  # beside it: fine
        self.assertEqual(code, 0)

    def test_own_entry_is_updated_keeping_user_keys_and_pu_home(self):
        config = self.path("cline")
        mine = {"command": "/old/python", "args": [SERVER], "disabled": False, "autoApprove": ["personal_validate"],
                "env": {"PU_HOME": "/my/archive", "OTHER": "1"}}
        write(config, json.dumps({"mcpServers": {"personal-understanding": mine}}))
        code, report = self.install("--client", "cline")
        self.assertEqual((code, report["clients"][0]["status"]), (0, "updated"))
        entry = json.loads(config.read_text())["mcpServers"]["personal-understanding"]
        self.assertEqual(entry["command"], sys.executable)
        self.assertEqual(entry["autoApprove"], ["personal_validate"])
        self.assertEqual(entry["env"], {"PU_HOME": "/my/archive", "OTHER": "1"})
        self.assertTrue(any("PU_HOME=/my/archive" in w for w in report["warnings"]))
        code, report = self.install("--client", "cline", "--root", self.root)
        self.assertEqual(report["clients"][0]["status"], "updated")
        self.assertEqual(json.loads(config.read_text())["mcpServers"]["personal-understanding"]["env"]["PU_HOME"],
                         str(Path(self.root).resolve()))

    def test_a_working_own_entry_is_left_alone_even_with_another_interpreter(self):
        other_python = write(Path(self.tmp, "bin", "python3.99"), "#!/bin/sh\n")
        config = self.path("agents")
        write(config, json.dumps({"mcpServers": {"personal-understanding": {"command": other_python, "args": [SERVER],
                                                                            "env": {"PU_HOME": "/kept"}}}}))
        before = self.files()
        code, report = self.install("--client", "agents")
        self.assertEqual((code, report["clients"][0]["status"]), (0, "unchanged"))
        self.assertEqual(self.files(), before)
        code, report = self.install("--client", "agents", "--force")  # --force rewrites it as this run would
        self.assertEqual(report["clients"][0]["status"], "updated")
        entry = json.loads(config.read_text())["mcpServers"]["personal-understanding"]
        self.assertEqual((entry["command"], entry["env"]), (sys.executable, {"PU_HOME": "/kept"}))

    def test_the_tool_profile_is_part_of_the_registration(self):
        config = self.path("cursor")
        code, report = self.install("--client", "cursor", "--tools", "all")
        self.assertEqual(code, 0, report)
        entry = json.loads(config.read_text())["mcpServers"]["personal-understanding"]
        self.assertEqual(entry["args"][-2:], ["--tools", "all"])
        code, report = self.install("--client", "cursor")  # back to the default profile: the flag goes
        self.assertEqual(report["clients"][0]["status"], "updated")
        self.assertEqual(json.loads(config.read_text())["mcpServers"]["personal-understanding"]["args"], [SERVER])
        code, report = self.install("--client", "cursor")
        self.assertEqual(report["clients"][0]["status"], "unchanged")

    def test_folders_the_server_may_read_are_part_of_the_registration(self):
        config = self.path("cursor")
        exports, photos = Path(self.tmp, "exports"), Path(self.tmp, "photos")
        exports.mkdir()
        photos.mkdir()
        entry = lambda: json.loads(config.read_text())["mcpServers"]["personal-understanding"]
        code, report = self.install("--client", "cursor", "--allow-dir", str(exports))
        self.assertEqual(code, 0, report)
        self.assertEqual(entry()["args"], [SERVER, "--allow-dir", os.path.realpath(exports)])
        code, report = self.install("--client", "cursor", "--tools", "all")  # named no folder: the allowed one stays
        self.assertEqual(entry()["args"], [SERVER, "--tools", "all", "--allow-dir", os.path.realpath(exports)])
        code, report = self.install("--client", "cursor", "--tools", "all")
        self.assertEqual(report["clients"][0]["status"], "unchanged")
        code, report = self.install("--client", "cursor", "--tools", "all", "--allow-dir", str(photos))
        self.assertEqual(report["clients"][0]["status"], "updated")
        self.assertEqual(entry()["args"], [SERVER, "--tools", "all", "--allow-dir", os.path.realpath(photos)])
        before = self.files()
        code, report = self.install("--client", "cursor", "--allow-dir", str(Path(self.tmp, "nowhere")))
        self.assertEqual((code, report["error"]["code"]), (2, "USAGE"))
        self.assertIn("no such folder", report["error"]["message"])
        self.assertEqual(self.files(), before)

    def test_a_null_servers_table_is_filled_in(self):
        config = self.path("windsurf")
        write(config, '{"mcpServers": null, "other": 1}')
        self.assertEqual(self.install("--client", "windsurf")[0], 0)
        self.assertEqual(list(json.loads(config.read_text())["mcpServers"]), ["personal-understanding"])

    def test_dry_run_writes_nothing_and_shows_the_diff(self):
        write(self.path("windsurf"), '{"mcpServers": {}}\n')
        (self.home / ".cursor").mkdir()
        before = self.files()
        code, report = self.install("--auto", "--dry-run")
        self.assertEqual(code, 0, report)
        self.assertEqual(self.files(), before)
        self.assertFalse(self.path("cursor").exists())
        statuses = {c["client"]: c["status"] for c in report["clients"]}
        self.assertEqual(statuses, {"windsurf": "would-be-added", "cursor": "would-be-added"})
        diff = next(c["diff"] for c in report["clients"] if c["client"] == "windsurf")
        self.assertIn('+    "personal-understanding": {', diff)
        self.assertIn(f'"{SERVER}"', diff)

    def test_configs_that_do_not_parse_are_refused_untouched(self):
        cases = {
            "cursor": b'{\n  // a comment\n  "mcpServers": {},\n}\n',
            "vscode": b'["not", "an", "object"]',
            "agents": b'{"mcpServers": ["wrong"]}',
            "windsurf": b'\xff\xfe{"mcpServers": {}}',
            "codex": b'[mcp_servers.other\ncommand = "x"\n',
        }
        for client, data in cases.items():
            path = self.path(client)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        before = self.files()
        for client in cases:
            code, report = self.install("--client", client)
            self.assertEqual(code, 1, client)
            self.assertIn(report["error"]["code"], ("CONFIG_UNPARSEABLE", "CONFIG_UNEXPECTED_SHAPE"), client)
            self.assertTrue(report["error"]["hint"])
        self.assertEqual(self.files(), before)

    def test_export_dir_writes_ready_snippets(self):
        out = Path(self.tmp, "snippets")
        code, report = self.install("--export-dir", str(out), "--dry-run")
        self.assertEqual(code, 0)
        self.assertFalse(out.exists())
        code, report = self.install("--export-dir", str(out), "--root", self.root)
        self.assertEqual(code, 0)
        self.assertEqual(sorted(p.name for p in out.iterdir()),
                         sorted(f"{c.name}.{c.fmt}" for c in install_mcp.CLIENTS.values()))
        self.assertEqual(json.loads((out / "vscode.json").read_text())["servers"]["personal-understanding"]["type"], "stdio")
        codex = tomlwriter.parse((out / "codex.toml").read_text())
        self.assertEqual(codex["mcp_servers"]["personal-understanding"]["args"], [SERVER])
        self.assertEqual(self.files(), {})


class TomlTest(InstallTest):
    def test_codex_round_trip_leaves_every_other_byte_alone(self):
        config = self.path("codex")
        write(config, TOML_BEFORE)
        code, report = self.install("--client", "codex", "--root", self.root)
        self.assertEqual((code, report["clients"][0]["status"]), (0, "added"), report)
        after = config.read_text(encoding="utf-8")
        self.assertTrue(after.startswith(TOML_BEFORE))
        doc = tomlwriter.parse(after)
        self.assertEqual(doc["mcp_servers"]["other"], {"command": "npx", "args": ["-y", "other-server"]})
        self.assertEqual(doc["mcp_servers"]["personal-understanding"]["env"], {"PU_HOME": str(Path(self.root).resolve())})
        self.assertIn("[mcp_servers.personal-understanding]", doc["notes"])
        before = self.files()
        self.assertEqual(self.install("--client", "codex", "--root", self.root)[1]["clients"][0]["status"], "unchanged")
        self.assertEqual(self.files(), before)

    def test_replacing_a_table_in_the_middle_keeps_what_surrounds_it(self):
        head = 'model = "o3"\n\n'
        tail = "\n# about profiles\n[profiles.fast]\nmodel = \"o4-mini\"\n"
        ours = ('[mcp_servers.personal-understanding]\ncommand = "python3"\nargs = [\n  "/elsewhere/scripts/mcp_server.py",\n]\n'
                'startup_timeout_sec = 20\n\n[mcp_servers.personal-understanding.env]\nPU_HOME = "/a"\n')
        config = self.path("codex")
        write(config, head + ours + tail)
        code, report = self.install("--client", "codex")
        self.assertEqual((code, report["error"]["code"]), (1, "NAME_TAKEN"))
        code, report = self.install("--client", "codex", "--force")
        self.assertEqual((code, report["clients"][0]["status"]), (0, "replaced"), report)
        after = config.read_text(encoding="utf-8")
        self.assertTrue(after.startswith(head))
        self.assertTrue(after.endswith(tail))
        entry = tomlwriter.parse(after)["mcp_servers"]["personal-understanding"]
        self.assertEqual((entry["command"], entry["args"]), (sys.executable, [SERVER]))
        self.assertNotIn("env", entry)
        self.install("--client", "codex", "--root", self.root)  # now ours: updated in place, extra keys kept
        entry = tomlwriter.parse(config.read_text(encoding="utf-8"))["mcp_servers"]["personal-understanding"]
        self.assertEqual(entry["env"], {"PU_HOME": str(Path(self.root).resolve())})
        self.assertTrue(config.read_text(encoding="utf-8").endswith(tail))

    def test_an_entry_defined_by_dotted_keys_is_refused(self):
        config = self.path("codex")
        write(config, '[mcp_servers]\npersonal-understanding = { command = "python3", args = ["x/scripts/mcp_server.py"] }\n')
        before = self.files()
        code, report = self.install("--client", "codex", "--force")
        self.assertEqual((code, report["error"]["code"]), (1, "CONFIG_DEFINED_ELSEWHERE"))
        self.assertEqual(self.files(), before)

    def test_a_sub_table_kept_apart_from_its_table_is_refused(self):
        config = self.path("codex")
        write(config, '[mcp_servers.personal-understanding]\ncommand = "python3"\nargs = ["/old/scripts/mcp_server.py"]\n\n'
                      '[profiles.x]\nmodel = "m"\n\n[mcp_servers.personal-understanding.env]\nPU_HOME = "/a"\n')
        before = self.files()
        code, report = self.install("--client", "codex", "--force")
        self.assertEqual((code, report["error"]["code"]), (1, "CONFIG_DEFINED_ELSEWHERE"))
        self.assertEqual(self.files(), before)

    def test_crlf_files_stay_crlf(self):
        config = self.path("codex")
        config.parent.mkdir(parents=True)
        config.write_bytes(b'model = "o3"\r\n')
        self.install("--client", "codex")
        data = config.read_bytes()
        self.assertTrue(data.startswith(b'model = "o3"\r\n\r\n[mcp_servers.personal-understanding]\r\n'))
        self.assertNotIn(b"\n", data.replace(b"\r\n", b""))


class TomlWriterTest(InstallTest):
    def test_strings_round_trip(self):
        for text in ["plain", 'quote " and \\ backslash', "C:\\Users\\me\\scripts\\mcp_server.py", "tab\tnew\nline",
                     "ctrl \x01 \x7f", "中文 🎉", "'single'", ""]:
            doc = 'k = ' + tomlwriter.quote(text) + "\n"
            self.assertEqual(tomlwriter.mini_parse(doc)["k"], text)
            if tomlwriter._tomllib:
                self.assertEqual(tomlwriter._tomllib.loads(doc)["k"], text)

    def test_render_table_parses_back(self):
        values = {"command": "py", "args": ["a b", 'c"d'], "env": {"PU_HOME": "/x y", "weird key": "v"}, "on": True, "n": 3}
        text = tomlwriter.render_table(("mcp_servers", "name.with.dots"), values)
        for parse in filter(None, (tomlwriter.mini_parse, getattr(tomlwriter._tomllib, "loads", None))):
            self.assertEqual(parse(text)["mcp_servers"]["name.with.dots"], values)

    def test_fallback_parser_agrees_with_tomllib_where_it_matters(self):
        doc = TOML_BEFORE + textwrap_block()
        mini = tomlwriter.mini_parse(doc)
        self.assertEqual(mini["mcp_servers"]["other"], {"command": "npx", "args": ["-y", "other-server"]})
        self.assertEqual(mini["tool"]["x"]["multi"], "line one\nline two\n")
        self.assertEqual(mini["tool"]["x"]["literal"], "C:\\raw\\path")
        self.assertEqual(mini["tool"]["x"]["list"], [1, 2, 3])
        self.assertEqual(str(mini["tool"]["x"]["when"]), "1979-05-27T07:32:00Z")
        self.assertEqual(mini["servers"][1], {"name": "second"})
        if tomlwriter._tomllib:
            real = tomlwriter._tomllib.loads(doc)
            for key in ("model", "notes", "mcp_servers", "profiles"):
                self.assertEqual(mini[key], real[key])
        for broken in ('a = "unterminated\n', "[table\n", "a = [1, 2\n", "= 3\n", 'a = """never closed\n', "a = 1\na = 2\n"):
            with self.assertRaises(ValueError, msg=broken):
                tomlwriter.mini_parse(broken)

    def test_find_table_spans(self):
        text = '[a]\nx = 1\n[mcp_servers.n]\ncommand = "c"\n[mcp_servers.n.env]\nK = "v"\n\n# next\n[b]\n'
        start, end = tomlwriter.find_table(text, ("mcp_servers", "n"))
        self.assertEqual(text[start:end], '[mcp_servers.n]\ncommand = "c"\n[mcp_servers.n.env]\nK = "v"\n')
        self.assertIsNone(tomlwriter.find_table(text, ("mcp_servers", "m")))
        self.assertEqual(tomlwriter.find_table('[ mcp_servers . "n" ] # c\nk = 1', ("mcp_servers", "n")), (0, 31))
        self.assertTrue(tomlwriter.defined_outside('mcp_servers.n.command = "x"\n', ("mcp_servers", "n")))
        self.assertFalse(tomlwriter.defined_outside(text, ("mcp_servers", "n")))


def textwrap_block():
    return ('\n[tool.x]\nmulti = """\nline one\nline two\n"""\nliteral = \'C:\\raw\\path\'\nlist = [\n  1,\n  2, # two\n  3,\n]\n'
            'when = 1979-05-27T07:32:00Z\n\n[[servers]]\nname = "first"\n[[servers]]\nname = "second"\n')
