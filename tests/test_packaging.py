"""pyproject.toml: `pip install .` gives working commands that find their data outside the checkout."""

import importlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import unittest
import zipfile
from pathlib import Path

from tests import test_mcp_server as mcp_tests
from tests.helpers import REPO, ArchiveTest

from personal_understanding import __version__, tomlwriter

PYPROJECT = tomlwriter.parse((REPO / "pyproject.toml").read_text(encoding="utf-8"))
SHARE = "share/personal-understanding"


class PyprojectTest(unittest.TestCase):
    def test_metadata(self):
        project = PYPROJECT["project"]
        self.assertEqual(project["requires-python"], ">=3.10")
        self.assertEqual(project["dependencies"], [])
        self.assertEqual(PYPROJECT["build-system"]["build-backend"], "setuptools.build_meta")
        self.assertEqual(PYPROJECT["tool"]["setuptools"]["package-dir"], {"": "scripts"})
        self.assertEqual(PYPROJECT["tool"]["setuptools"]["dynamic"]["version"]["attr"], "personal_understanding.__version__")
        self.assertTrue(__version__)

    def test_console_commands_point_at_main_functions(self):
        scripts = PYPROJECT["project"]["scripts"]
        self.assertEqual(sorted(scripts), ["personal-understanding", "personal-understanding-install",
                                           "personal-understanding-mcp"])
        for target in scripts.values():
            module, function = target.split(":")
            self.assertTrue(callable(getattr(importlib.import_module(module), function)), target)

    def test_data_files_cover_every_data_folder(self):
        data_files = PYPROJECT["tool"]["setuptools"]["data-files"]
        self.assertIn("SKILL.md", data_files[SHARE])
        self.assertEqual(data_files[f"{SHARE}/references"], ["references/*.md"])
        shipped = [p for top in ("resources", "dashboard") for p in (REPO / top).rglob("*") if p.is_file()]
        for folder in sorted({p.parent for p in shipped}):
            rel = folder.relative_to(REPO).as_posix()
            self.assertEqual(data_files.get(f"{SHARE}/{rel}"), [f"{rel}/*"],
                             f"{rel}/ is not installed: add it to [tool.setuptools.data-files] in pyproject.toml")

    def test_build_outputs_are_ignored(self):
        ignored = (REPO / ".gitignore").read_text(encoding="utf-8").splitlines()
        for pattern in ("/build/", "/dist/", "*.egg-info/"):
            self.assertIn(pattern, ignored)


def _build_tooling_problem(python):
    """Why an offline, no-isolation build cannot run with `python`, or None."""
    probe = ("import importlib.util as u, sys\n"
             "missing = [m for m in ('pip', 'setuptools') if u.find_spec(m) is None]\n"
             "if missing: sys.exit('missing ' + ', '.join(missing))\n"
             "import setuptools\n"
             "if not (u.find_spec('setuptools.command.bdist_wheel') or u.find_spec('wheel')):\n"
             "    sys.exit(f'setuptools {setuptools.__version__} cannot build wheels without the wheel package')\n")
    proc = subprocess.run([python, "-c", probe], capture_output=True, text=True)
    return None if proc.returncode == 0 else (proc.stderr.strip().splitlines() or ["unknown"])[-1]


class InstallIntoVenvTest(ArchiveTest):
    """Builds a wheel offline (no index, no build isolation) with the running interpreter's pip and setuptools
    when it can; otherwise pip builds in isolation from the package index, and the test skips when that is
    unreachable. The wheel is installed into a fresh venv and used from a folder that is not the checkout."""

    def copy_sources(self, target):
        for name in ("pyproject.toml", "README.md", "LICENSE", "SKILL.md"):
            shutil.copy2(REPO / name, target / name)
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        shutil.copytree(REPO / "scripts" / "personal_understanding", target / "scripts" / "personal_understanding", ignore=ignore)
        for folder in ("resources", "references", "dashboard"):
            shutil.copytree(REPO / folder, target / folder, ignore=ignore)

    def make_venv(self, where):
        proc = subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], capture_output=True, text=True)
        if proc.returncode != 0:
            self.skipTest(f"python -m venv is unavailable here: {proc.stderr.strip()[-200:]}")
        bindir = where / ("Scripts" if os.name == "nt" else "bin")
        python = bindir / ("python.exe" if os.name == "nt" else "python")
        purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 capture_output=True, text=True, check=True).stdout.strip()
        # The new venv sees this interpreter's pip/setuptools/wheel (after its own site-packages): no network needed.
        host = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
        Path(purelib, "_host_build_tools.pth").write_text("\n".join(host) + "\n", encoding="utf-8")
        return bindir, python

    def build_wheel(self, python, src, out, cwd):
        problem = _build_tooling_problem(str(python))
        command = [str(python), "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "--no-input",
                   "-w", str(out), str(src)]
        if problem is None:
            command[4:4] = ["--no-build-isolation", "--no-index"]  # offline, with the host's build tools
        proc = subprocess.run(command, capture_output=True, text=True, cwd=str(cwd), timeout=300)
        if proc.returncode != 0 and problem is not None and any(
                sign in proc.stdout + proc.stderr for sign in
                ("No matching distribution", "Could not find a version", "NewConnectionError", "Temporary failure",
                 "Network is unreachable", "Failed to establish")):
            self.skipTest(f"offline build tooling unavailable ({problem}) and the package index is unreachable")
        self.assertEqual(proc.returncode, 0, proc.stdout[-2000:] + proc.stderr[-2000:])
        wheels = list(out.glob("*.whl"))
        self.assertEqual(len(wheels), 1, wheels)
        return wheels[0]

    def test_the_wheel_carries_what_the_code_needs_and_works_from_anywhere(self):
        work = Path(tempfile.mkdtemp(prefix="pu-pkg-", dir=self.tmp))
        src, venv, foreign = work / "src", work / "venv", work / "elsewhere"
        src.mkdir()
        foreign.mkdir()
        self.copy_sources(src)
        bindir, python = self.make_venv(venv)
        wheel = self.build_wheel(python, src, work / "dist", work)
        with zipfile.ZipFile(wheel) as zf:
            names = set(zf.namelist())
        data = f"personal_understanding-{__version__}.data/data/{SHARE}"
        for needed in [f"{data}/SKILL.md", f"{data}/dashboard/index.html", f"{data}/dashboard/app.js",
                       f"{data}/dashboard/style.css", f"{data}/resources/schemas/records.json",
                       f"{data}/references/commands.md", "personal_understanding/turn.py",
                       "personal_understanding/retrieval/probe.py"]:
            self.assertIn(needed, names)
        proc = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", "--disable-pip-version-check",
                               str(wheel)], capture_output=True, text=True, cwd=str(work), timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stdout[-2000:] + proc.stderr[-2000:])

        env = mcp_tests.minimal_env(HOME=str(work))
        where = subprocess.run([str(python), "-c", "import personal_understanding as p, personal_understanding.paths as q; "
                                                   "print(p.__file__); print(q.resources_dir()); print(q.default_root())"],
                               capture_output=True, text=True, cwd=str(foreign), env=env)
        module_file, resources, default_root = where.stdout.splitlines()
        self.assertTrue(Path(module_file).resolve().is_relative_to(venv.resolve()), module_file)
        self.assertEqual(Path(resources).resolve(), (venv / SHARE / "resources").resolve())
        self.assertEqual(Path(default_root), work / ".personal-understanding")

        archive = Path(self.tmp, "pkg-archive")
        exe = bindir / ("personal-understanding-mcp.exe" if os.name == "nt" else "personal-understanding-mcp")
        server = mcp_tests.McpProcess([str(exe)], mcp_tests.minimal_env(PU_HOME=str(archive)), str(foreign))
        try:
            self.assertEqual(server.initialize()["serverInfo"]["version"], __version__)
            tools = server.request("tools/list")["result"]["tools"]
            self.assertIn("personal_turn", [t["name"] for t in tools])
            turn = server.call("personal_turn", {"text": mcp_tests.PERSONAL, "turn_id": "t1"})
            self.assertFalse(turn["isError"], turn)
            self.assertEqual(turn["structuredContent"]["receipt"]["tier"], "full")  # the classifier found its word lists
            done = server.call("personal_remember", {"turn_id": "t1", "records": [
                {"kind": "event", "title": "小雨在杭州结婚", "date_precision": "month"}]})
            self.assertTrue(done["structuredContent"]["may_claim_saved"], done)
            skill = server.request("resources/read", {"uri": "personal://skill"})["result"]["contents"][0]["text"]
            self.assertEqual(skill, (REPO / "SKILL.md").read_text(encoding="utf-8"))
        finally:
            code = server.close()
        self.assertEqual(code, 0, server.stderr_text())

        console = bindir / ("personal-understanding.exe" if os.name == "nt" else "personal-understanding")
        proc = subprocess.run([str(console), "open_dashboard", "--no-open"], capture_output=True, text=True,
                              cwd=str(foreign), env=mcp_tests.minimal_env(PU_HOME=str(archive)), timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        page = Path(json.loads(proc.stdout)["page"])
        self.assertTrue(page.is_file())
        for name in ("app.js", "style.css"):
            self.assertTrue((page.parent / name).is_file(), name)
        proc = subprocess.run([str(console), "backup_archive", "--verify"], capture_output=True, text=True,
                              cwd=str(foreign), env=mcp_tests.minimal_env(PU_HOME=str(archive)), timeout=120)
        self.assertEqual(json.loads(proc.stdout)["error"]["code"], "BACKUP_NONE")
        self.assertIn("personal-understanding backup_archive", json.loads(proc.stdout)["error"]["hint"])
        self.assertEqual(os.listdir(foreign), [])

        installer = bindir / ("personal-understanding-install.exe" if os.name == "nt" else "personal-understanding-install")
        proc = subprocess.run([str(installer), "--export-dir", str(work / "snippets"), "--client", "cursor"],
                              capture_output=True, text=True, cwd=str(foreign), env=mcp_tests.minimal_env(HOME=str(work)))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        entry = json.loads((work / "snippets" / "cursor.json").read_text())["mcpServers"]["personal-understanding"]
        self.assertEqual(entry["args"], ["-m", "personal_understanding.mcp_server"])
        self.assertEqual(Path(entry["command"]).parent.resolve(), bindir.resolve())
