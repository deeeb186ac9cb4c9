"""Every script speaks the same way; the docs name exactly the commands that exist."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO, SCRIPTS, ArchiveTest

from personal_understanding import commands, docs

EXTRA_SCRIPTS = {"demo.py", "generate_docs.py", "mcp_server.py", "install_mcp.py"}


class ScriptsTest(ArchiveTest):
    def test_every_command_has_an_entry_script_and_help_with_an_example(self):
        for cmd in commands.COMMANDS:
            script = SCRIPTS / f"{cmd.name}.py"
            self.assertTrue(script.is_file(), f"missing {script}")
            self.assertIn(f'run("{cmd.name}")', script.read_text(encoding="utf-8"))
        for cmd in commands.COMMANDS[:3] + commands.COMMANDS[-2:]:
            proc = subprocess.run([sys.executable, str(SCRIPTS / f"{cmd.name}.py"), "--help"], capture_output=True)
            self.assertEqual(proc.returncode, 0)
            self.assertIn("Example:", proc.stdout.decode())

    def test_help_fits_the_terminal_width(self):
        # $COLUMNS is the width help is wrapped to, as argparse itself reads it
        for columns in (60, 160):
            env = dict(os.environ, COLUMNS=str(columns))
            proc = subprocess.run([sys.executable, str(SCRIPTS / "retrieve_v2.py"), "--help"],
                                  capture_output=True, env=env, check=True)
            usage = proc.stdout.decode().split("\n\n")[0].splitlines()
            self.assertLessEqual(max(map(len, usage)), columns)
            self.assertGreater(max(map(len, usage)), columns * 0.6)

    def test_the_cli_leaves_the_real_gettext_and_urllib_parse_behind(self):
        # cli imports argparse and pathlib beside stand-ins for these two; a later import must find the
        # real ones, Path.as_uri must still work, and argparse must still say its words (untranslated).
        code = ("import sys; sys.path.insert(0, sys.argv[1]); from personal_understanding import cli; "
                "loaded_early = sorted({'gettext', 'urllib.parse', 'ipaddress'} & set(sys.modules)); "
                "import argparse, gettext, pathlib, urllib.parse; "
                "print(loaded_early, pathlib.Path('/a b/c').as_uri(), urllib.parse.urlsplit('https://x/y').path, "
                "callable(gettext.translation), sep='|'); argparse.ArgumentParser(prog='p').parse_args(['--z'])")
        # -S: no site-packages, whose start-up files may import pathlib before cli does
        proc = subprocess.run([sys.executable, "-S", "-c", code, str(SCRIPTS)], capture_output=True, text=True)
        self.assertEqual(proc.stdout.strip(), "[]|file:///a%20b/c|/y|True")
        self.assertIn("error: unrecognized arguments: --z", proc.stderr)
        self.assertEqual(proc.returncode, 2)

    def test_no_stray_scripts(self):
        names = {f"{c.name}.py" for c in commands.COMMANDS} | EXTRA_SCRIPTS
        present = {p.name for p in SCRIPTS.glob("*.py")}
        self.assertEqual(sorted(present - names), [])

    def test_root_comes_from_flag_then_pu_home(self):
        other = os.path.join(self.tmp, "other")
        code, out, _ = self.cli("init_archive", root=other)
        self.assertEqual((code, out["changed"]), (0, True))
        code, out, _ = self.cli("init_archive", root=False)  # no --root: PU_HOME (set by the test base)
        self.assertEqual((code, out["root"], out["changed"]), (0, str(Path(self.root).resolve()), False))

    def test_errors_are_json_with_code_message_hint(self):
        code, out, _ = self.cli("session_check", "--turn-id", "t1", root=os.path.join(self.tmp, "none"))
        self.assertEqual(code, 1)
        self.assertEqual(out["error"]["code"], "NO_ARCHIVE")
        self.assertTrue(out["error"]["hint"])
        code, out, stderr = self.cli("validate_memory", "--no-such-flag")
        self.assertEqual(code, 2)
        self.assertEqual(out["error"]["code"], "USAGE")
        self.assertIn("usage:", stderr)

    def test_json_argument_object_matches_the_tool_arguments(self):
        self.cli("preflight_context", "我养了一只猫叫年糕", "--turn-id", "t1", "--tier", "full")
        code, cap, _ = self.cli("capture_user_update", "--text", "我养了一只猫叫年糕", "--turn-id", "t1")
        args = {"kind": "entity", "entity_type": "object", "title": "年糕", "aliases": ["我的猫"]}
        code, out, _ = self.cli("add_record", "--json", "-", stdin=json.dumps(args, ensure_ascii=False).encode())
        self.assertEqual(code, 0, out)
        self.assertEqual(out["record"]["aliases"], ["我的猫"])
        code, out, _ = self.cli("add_record", "--json", "-", stdin=b'{"kind": "fact", "title": "x", "bogus": 1}')
        self.assertEqual(code, 2)
        self.assertIn("bogus", out["error"]["message"])
        code, out, _ = self.cli("add_record", "--kind", "fact", "--title", "养猫", "--capture-ids", cap["capture_id"],
                                "--verbatim-refs", json.dumps([{"capture_id": cap["capture_id"], "start": 0, "end": 4}]))
        self.assertEqual(code, 0, out)
        self.assertEqual(out["record"]["verbatim_refs"][0]["quote"], "我养了一")


class DocsTest(ArchiveTest):
    def test_commands_reference_is_fresh(self):
        current = (REPO / "references" / "commands.md").read_text(encoding="utf-8")
        self.assertEqual(current, docs.render(), "references/commands.md is stale: run python3 scripts/generate_docs.py")

    def test_every_tool_and_parameter_is_described(self):
        for cmd in commands.COMMANDS:
            self.assertGreater(len(cmd.description), 40, cmd.name)
            self.assertTrue(cmd.summary and cmd.example.startswith("python3 scripts/"), cmd.name)
            self.assertTrue(cmd.tool.startswith("personal_"), cmd.name)
            for param in cmd.params:
                self.assertTrue(param.help, f"{cmd.name}.{param.name}")

    def test_skill_and_readme_name_only_real_commands(self):
        known = {c.name for c in commands.COMMANDS} | {n[:-3] for n in EXTRA_SCRIPTS}
        tools = {c.tool for c in commands.COMMANDS}
        for doc in ("SKILL.md", "README.md"):
            text = (REPO / doc).read_text(encoding="utf-8")
            for prefix, name in re.findall(r"(?<![\w/])((?:tests|scripts)/[\w/]*?)?([a-z_]+)\.py\b", text):
                if prefix and not prefix.startswith("scripts/"):
                    self.assertTrue((REPO / f"{prefix}{name}.py").is_file(), f"{doc} names {prefix}{name}.py, which does not exist")
                elif name not in ("commands",):
                    self.assertIn(name, known, f"{doc} names {name}.py, which does not exist")
            for tool in re.findall(r"\b(personal_[a-z_]+)\b", text):
                self.assertIn(tool, tools, f"{doc} names tool {tool}, which does not exist")
        skill = (REPO / "SKILL.md").read_text(encoding="utf-8")
        self.assertTrue(skill.startswith("---\nname: "))
        for link in re.findall(r"\]\((references/[^)]+)\)", skill):
            self.assertTrue((REPO / link).is_file(), link)

    def test_readme_gives_the_two_commands_and_ci_runs_the_test_one(self):
        readme = (REPO / "README.md").read_text(encoding="utf-8")
        self.assertIn("python3 scripts/demo.py", readme)
        self.assertIn("python3 tests/run.py", readme)
        self.assertIn("python3 tests/run.py", (REPO / ".ci" / "run").read_text(encoding="utf-8"))


def run_demo(*args):
    proc = subprocess.run([sys.executable, str(SCRIPTS / "demo.py"), *args], capture_output=True, timeout=300)
    return proc.returncode, json.loads(proc.stdout.decode("utf-8")), proc.stderr.decode("utf-8", "replace")


class DemoTest(ArchiveTest):
    """The demo runs the agent's path and never writes into someone's archive unasked."""

    @classmethod
    def setUpClass(cls):
        import tempfile

        cls.demo_root = os.path.join(tempfile.mkdtemp(prefix="pu-demo-"), "archive")
        cls.first = run_demo("--root", cls.demo_root)

    def test_the_demo_proves_the_turn_path(self):
        code, proof, stderr = self.first
        self.assertEqual(code, 0, stderr)
        self.assertNotIn("Traceback", stderr)
        first = proof["turns"][0]
        self.assertTrue(first["gate"]["may_claim_saved"])
        self.assertEqual(first["ledger"]["status"], "derived")
        self.assertTrue(all(t["calls"] <= 2 for t in proof["turns"] + [proof["recall"]]))
        self.assertIn("妹妹", proof["recall"]["query"])  # the question is about the sister the archive knows
        self.assertEqual((proof["recall"]["read_turn"], proof["recall"]["calls"]), (True, 1))
        wedding = [r for r in first["records"] if r.startswith("event-")]
        self.assertIn(wedding[0], [r["id"] for r in proof["recall"]["top"]])
        self.assertEqual(proof["validate"]["status"], "clean")

    def test_no_borrowed_word_outranks_the_turn_that_says_it(self):
        # The reply 嗯 comes right after the wedding turn; it must not rank above the words that name the wedding.
        self.assertTrue(self.first[1]["recall"]["first_row_is_the_wedding"], self.first[1]["recall"]["top"])

    def test_a_second_run_on_the_same_archive_is_refused_unless_forced(self):
        before = self.snapshot(self.demo_root)
        code, out, stderr = run_demo("--root", self.demo_root)
        self.assertEqual((code, out["error"]["code"]), (1, "DEMO_ARCHIVE_NOT_EMPTY"))
        self.assertIn("--force", out["error"]["hint"])
        self.assertNotIn("Traceback", stderr)
        self.assertUnchanged(before, self.demo_root)
        code, proof, stderr = run_demo("--root", self.demo_root, "--force")
        self.assertEqual(code, 0, stderr)
        self.assertTrue(proof["turns"][0]["gate"]["may_claim_saved"])
