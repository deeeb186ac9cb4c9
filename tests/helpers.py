"""Shared test scaffolding: temporary archives, CLI runs, byte snapshots."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "scripts"

from personal_understanding import archive, archive_index, paths  # noqa: E402


class ArchiveTest(unittest.TestCase):
    """Each test gets a fresh, empty archive in a temp dir; PU_HOME points at it."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="pu-test-")
        self.root = os.path.join(self.tmp, "archive")
        self._old_home = os.environ.get("PU_HOME")
        os.environ["PU_HOME"] = self.root
        archive.init_archive(self.root)

    def tearDown(self):
        archive_index.forget_cached()
        if self._old_home is None:
            os.environ.pop("PU_HOME", None)
        else:
            os.environ["PU_HOME"] = self._old_home
        shutil.rmtree(self.tmp, ignore_errors=True)

    # --- helpers ---------------------------------------------------------
    def cli(self, script, *args, stdin=None, root=None, cwd=None):
        """Run scripts/<script>.py; returns (exit code, parsed stdout JSON, stderr)."""
        cmd = [sys.executable, str(SCRIPTS / f"{script}.py"), *args]
        if root is not False:
            cmd += ["--root", root or self.root]
        proc = subprocess.run(cmd, input=stdin, capture_output=True, cwd=cwd or self.tmp, timeout=120)
        out = proc.stdout.decode("utf-8")
        try:
            data = json.loads(out) if out.strip() else None
        except ValueError:
            self.fail(f"{script} printed non-JSON stdout: {out!r}\nstderr: {proc.stderr.decode()}")
        return proc.returncode, data, proc.stderr.decode("utf-8", "replace")

    def snapshot(self, root=None):
        """Every file's bytes in the archive's truth (derived views and the lock file excluded).

        Directories are not compared: an empty YYYY/MM folder left by a refused
        write holds no data.
        """
        base = Path(root or self.root)
        files = {}
        for path in sorted(base.rglob("*")):
            rel = path.relative_to(base).as_posix()
            if rel.startswith("memory/v2/views") or rel == "memory/archive.lock":
                continue
            if path.is_file() or path.is_symlink():
                files[rel] = path.read_bytes() if path.is_file() else "<link>"
        return files

    def refused(self, code, fn, *args, **kwargs):
        """Call fn expecting PuError(code); the archive must be byte-for-byte as it was."""
        from personal_understanding.errors import PuError

        before = self.snapshot()
        with self.assertRaises(PuError) as ctx:
            fn(*args, **kwargs)
        self.assertEqual(ctx.exception.code, code, ctx.exception.message)
        self.assertUnchanged(before)
        return ctx.exception

    def assertUnchanged(self, before, root=None):
        after = self.snapshot(root)
        self.assertEqual(sorted(before), sorted(after), "files were added or removed")
        for rel in before:
            self.assertEqual(before[rel], after[rel], f"{rel} changed")


def write(path, text):
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(text, encoding="utf-8")
    return str(path)


def drop_index(root):
    """Delete the index file (and its -wal, -shm), as a copy of the archive or a lost views/ would leave it."""
    archive_index.forget_cached()
    db = paths.index_db_path(root)
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(str(db) + suffix):
            os.unlink(str(db) + suffix)
    return db


def stale_recall_index(root):
    """Mark the recall index as built by an older version (an update that re-indexes words): it is rebuilt."""
    import sqlite3
    from personal_understanding.retrieval import index

    archive_index.forget_cached()
    index.forget_cached()
    with sqlite3.connect(str(paths.index_db_path(root))) as con:
        con.execute("DELETE FROM meta WHERE key LIKE 'recall_%'")
