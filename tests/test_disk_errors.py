"""Full disks, read-only archives and denied writes: DISK_FULL / WRITE_DENIED with a hint, reads keep working.

Each case runs every registry command the way the MCP server does, once with
the archive read-only, once with writes denied, once with the disk full
(simulated in-process by making the OS calls fail), and checks that writes are
refused with the mapped code and a hint, never INTERNAL_ERROR, that reads still
answer, and that the archive is byte-identical afterwards. A real full and
read-only file system (a small tmpfs in a private mount namespace) checks the
same against SQLite and the kernel, where that is available.
"""

import contextlib
import errno
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from unittest import mock

from tests.helpers import REPO, SCRIPTS, ArchiveTest, write

from personal_understanding import (archive_index, backup, capture, followups, ledger, mcp_server, receipts, records,
                                    storage, validate)
from personal_understanding.retrieval import index as recall_index

MSG = "我妹妹小雨下个月在杭州结婚，我有点舍不得。"
LATER = "我决定下周去成都看她。"
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def busy_archive(root):
    """One archive with something of every kind, returning the ids the command table needs."""
    receipts.preflight(root, MSG, turn_id="t1", tier="full")
    cid = capture.capture_text(root, MSG, "t1")["capture_id"]
    state = records.add_record(root, kind="state", title="担心妹妹", subject_key="sister-worry", capture_ids=[cid])["id"]
    records.add_record(root, kind="entity", title="小雨", id="person-xiaoyu", entity_type="person")
    records.add_record(root, kind="entity", title="妹妹", id="person-meimei", entity_type="person")
    ledger.finalize(root, cid, "derived")
    fu = followups.add_followup(root, question="婚礼怎么样了？", capture_id=cid, due_rule="+3d")["id"]
    receipts.preflight(root, LATER, turn_id="t2", tier="full")
    pending = capture.capture_text(root, LATER, "t2")["capture_id"]
    receipts.preflight(root, "再说一句", turn_id="t3", tier="full")
    snap = backup.backup_archive(root)["snapshot"]
    imports = Path(root, "imports")
    imports.mkdir()
    write(imports / "chat.txt", "Ana: 明天见\n")
    (imports / "photo.jpg").write_bytes(b"\xff\xd8 jpeg")
    return {"cid": cid, "state": state, "fu": fu, "pending": pending, "snapshot": snap, "imports": str(imports)}


def command_table(ids):
    """(tool, arguments, writes): a valid call of every tool. writes=True: it must write to succeed; False: a read,
    which must answer; None: it has nothing to change here, so either answer is right."""
    cid, imports = ids["cid"], ids["imports"]
    return [
        ("personal_init_archive", {}, None),  # already initialised
        ("personal_preflight_turn", {"text": "今天好累", "turn_id": "t9"}, True),
        ("personal_capture_user_turn", {"text": "再说一句", "turn_id": "t3"}, True),
        ("personal_capture_attachment", {"file": f"{imports}/photo.jpg", "turn_id": "t3"}, True),
        ("personal_finalize_capture", {"capture_id": ids["pending"], "disposition": "no-derivation-needed",
                                       "reason": "a plan already covered by the state record"}, True),
        ("personal_derivation_ledger", {"repair_ledger": True}, True),
        ("personal_add_record", {"kind": "event", "title": "妹妹结婚", "capture_ids": [cid]}, True),
        ("personal_update_state", {"id": ids["state"], "capture_ids": [ids["pending"]], "summary": "决定去看她"}, True),
        ("personal_merge_entities", {"from_id": "person-meimei", "into": "person-xiaoyu", "reason": "user: 妹妹就是小雨"}, True),
        ("personal_add_followup", {"question": "成都之行如何？", "capture_id": ids["pending"], "due_rule": "+1w"}, True),
        ("personal_resolve_followup", {"id": ids["fu"], "resolution": "resolved", "note": "no longer relevant"}, True),
        ("personal_record_feedback", {"capture_id": cid, "verdict": "unclear", "note": "answer was vague"}, True),
        ("personal_import_history", {"file": f"{imports}/chat.txt", "format": "text"}, True),
        ("personal_rebuild_views", {}, True),
        ("personal_open_dashboard", {"no_open": True}, True),
        ("personal_pipeline_view", {"latest": 1}, True),
        ("personal_backup_archive", {}, True),
        ("personal_forget", {"id": cid, "confirm": True}, True),
        ("personal_restore_archive", {"snapshot": ids["snapshot"], "apply": True}, True),
        ("personal_salience_review", {"apply": True}, None),  # nothing to demote
        ("personal_salience_review", {}, False),
        ("personal_followup_check", {}, None),  # nothing due yet: nothing to mark
        ("personal_session_check", {"turn_id": "t1"}, False),
        ("personal_validate", {}, False),
        ("personal_current_state", {}, False),
        ("personal_conversation_starters", {}, False),
        ("personal_retrieve", {"query": "妹妹 结婚", "capture_id": cid}, False),
        ("personal_retrieve", {"level": "deep", "ids": [cid], "maintenance": True}, False),
        ("personal_catalog", {"maintenance": True}, False),
        ("personal_verify_quote", {"capture_id": cid, "quote": "舍不得"}, False),
        ("personal_review", {"deep": True}, False),
        ("personal_backup_archive", {"verify": ""}, False),
        ("personal_restore_archive", {"snapshot": ids["snapshot"]}, False),
        ("personal_forget", {"id": cid}, False),
    ]


@contextlib.contextmanager
def failing_disk(root, number, spare_lock=False):
    """Make every OS call that would change a file under `root` fail with `number` (EROFS, EACCES, ENOSPC).

    ENOSPC fails the writes themselves (files still open); the others fail at the
    open, as a read-only or foreign-owned folder does. spare_lock lets the lock
    file through, so a full disk is met by the write behind it.
    """
    base = os.path.realpath(root)
    lock = os.path.realpath(storage.paths.lock_path(root))
    real = {name: getattr(os, name) for name in ("open", "mkdir", "replace", "link", "unlink", "rename", "write", "ftruncate")}
    opened = set()

    def where(path, dir_fd=None):
        path = os.fspath(path)
        if dir_fd is not None:  # a name relative to an open folder
            path = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), path)
        return path

    def inside(path, dir_fd=None):
        try:
            full = os.path.realpath(where(path, dir_fd))
        except (TypeError, OSError):
            return False
        return full == base or full.startswith(base + os.sep)

    def fail(path=None):
        raise OSError(number, os.strerror(number), path)

    def fake_open(path, flags, mode=0o777, *, dir_fd=None):
        if flags & _WRITE_FLAGS and inside(path, dir_fd) and not (spare_lock and os.path.realpath(path) == lock):
            if number != errno.ENOSPC or not os.path.exists(where(path, dir_fd)):
                fail(path)
            fd = real["open"](path, flags, mode, dir_fd=dir_fd)
            opened.add(fd)
            return fd
        return real["open"](path, flags, mode, dir_fd=dir_fd)

    def fake_write(fd, data):
        if fd in opened:
            fail()
        return real["write"](fd, data)

    def path_call(name):
        def call(*args, **kwargs):
            folders = [kwargs.get("src_dir_fd", kwargs.get("dir_fd")), kwargs.get("dst_dir_fd")]
            if any(inside(a, fd) for a, fd in zip(args[:2], folders) if isinstance(a, (str, bytes, os.PathLike))):
                fail(args[0])
            return real[name](*args, **kwargs)
        return call

    patches = [mock.patch("os.open", fake_open), mock.patch("os.write", fake_write)]
    patches += [mock.patch(f"os.{name}", path_call(name)) for name in ("mkdir", "replace", "link", "unlink", "rename")]
    with contextlib.ExitStack() as stack:
        for p in patches:
            stack.enter_context(p)
        yield


class FailingDiskTest(ArchiveTest):
    def setUp(self):
        super().setUp()
        self.ids = busy_archive(self.root)
        self.server = mcp_server.Server(self.root, log=open(os.devnull, "w"), tools="all")
        self.addCleanup(self.server._log_stream.close)

    def fresh_process(self):
        """What a new server process sees: no cached index connection."""
        archive_index.forget_cached()
        recall_index.forget_cached()

    def run_table(self, number, expected_code, spare_lock=False):
        failures = []
        for tool, arguments, writes in command_table(self.ids):
            self.fresh_process()
            before = self.snapshot()
            with failing_disk(self.root, number, spare_lock):
                result = self.server.run_command(mcp_server._find_command(lambda c, t=tool: c.tool == t), arguments)
            text = result["content"][0]["text"]
            error = json.loads(text).get("error") if result["isError"] else None
            if (writes or error) and (not error or error["code"] != expected_code or not error.get("hint")):
                failures.append(f"{tool} {arguments}: {text[:300]}")
            if writes is False and error:
                failures.append(f"{tool} (a read) failed: {text[:300]}")
            if self.snapshot() != before:
                failures.append(f"{tool}: the archive changed")
        self.assertEqual(failures, [], "\n".join(failures))

    def test_read_only_archive(self):
        self.run_table(errno.EROFS, "WRITE_DENIED")

    def test_permission_denied(self):
        self.run_table(errno.EACCES, "WRITE_DENIED")

    def test_full_disk(self):
        self.run_table(errno.ENOSPC, "DISK_FULL", spare_lock=True)

    def test_full_disk_at_the_lock_file(self):
        self.run_table(errno.ENOSPC, "DISK_FULL")

    def test_reads_on_a_read_only_copy_say_the_trace_was_not_written(self):
        self.fresh_process()
        with failing_disk(self.root, errno.EROFS):
            out = self.server.run_command(mcp_server._find_command(lambda c: c.tool == "personal_retrieve"),
                                          {"query": "妹妹", "maintenance": True})
        data = json.loads(out["content"][0]["text"])
        self.assertIsNone(data["trace_id"])
        self.assertIn(self.ids["cid"], [r["id"] for r in data["top"]])


class ConsistentValidateTest(ArchiveTest):
    def test_validate_during_a_write_sees_it_whole_or_not_at_all(self):
        """A writer that slips between validate's reads of receipts and of the ledger must wait for it."""
        receipts.preflight(self.root, MSG, turn_id="t0", tier="full")
        real_read = storage.parse_jsonl
        started, finished = threading.Event(), threading.Event()

        def writer():
            started.set()
            receipts.preflight(self.root, LATER, turn_id="t-new", tier="full")
            capture.capture_text(self.root, LATER, "t-new")
            finished.set()

        def read_then_let_a_writer_in(data, start, first_line, display):
            out = real_read(data, start, first_line, display)
            if display.endswith("receipts.jsonl") and not started.is_set():
                thread = threading.Thread(target=writer)
                thread.start()
                finished.wait(1.0)  # without the shared lock the writer finishes here, between two reads
                self.addCleanup(thread.join)
            return out

        with mock.patch.object(storage, "parse_jsonl", read_then_let_a_writer_in):
            report = validate.validate(self.root)
        self.assertNotEqual(report["status"], "failed", report["problems"])
        self.assertTrue(finished.wait(30))
        self.assertEqual(validate.validate(self.root)["checked"]["captures"], 1)


def _namespace_tmpfs_available():
    if not sys.platform.startswith("linux") or not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /tmp && echo ok"],
                           capture_output=True, timeout=30)
    return probe.stdout.strip() == b"ok"


REAL_DISK_DRIVER = r"""
import json, os, subprocess, sys
sys.path.insert(0, sys.argv[1])
mount, mode = sys.argv[2], sys.argv[3]
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", mount], check=True)
os.environ["PU_LOCK_TIMEOUT"] = "5"
from tests.test_disk_errors import busy_archive, command_table
from personal_understanding import archive, archive_index, mcp_server
from personal_understanding.retrieval import index as recall_index
root = os.path.join(mount, "archive")
archive.init_archive(root)
ids = busy_archive(root)
if mode == "full":
    with open(os.path.join(mount, "filler"), "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass
else:
    archive_index.forget_cached()  # no file left open for writing, or the remount is refused as busy
    recall_index.forget_cached()
    subprocess.run(["mount", "-o", "remount,ro", mount], check=True)
server = mcp_server.Server(root, log=sys.stderr, tools="all")
out = []
for tool, arguments, writes in command_table(ids):
    archive_index.forget_cached()
    recall_index.forget_cached()
    result = server.run_command(mcp_server._find_command(lambda c: c.tool == tool), arguments)
    out.append({"tool": tool, "writes": writes, "error": json.loads(result["content"][0]["text"]).get("error") if result["isError"] else None})
print(json.dumps(out))
"""


class RealDiskTest(ArchiveTest):
    """A real 3 MB tmpfs, filled up or remounted read-only, in a private mount namespace (vanishes with the process)."""

    def run_driver(self, mode):
        if not _namespace_tmpfs_available():
            self.skipTest("needs Linux with unprivileged mount namespaces (unshare -rm) to mount a small tmpfs")
        mount = os.path.join(self.tmp, "mnt")
        os.mkdir(mount)
        proc = subprocess.run(["unshare", "-rm", sys.executable, "-c", REAL_DISK_DRIVER, str(REPO), mount, mode],
                              capture_output=True, timeout=240, cwd=str(REPO), env=dict(os.environ, PYTHONPATH=str(SCRIPTS)))
        self.assertEqual(proc.returncode, 0, proc.stderr.decode("utf-8", "replace")[-3000:])
        return json.loads(proc.stdout.decode("utf-8").strip().splitlines()[-1])

    def check(self, rows, expected):
        wrong = []
        for row in rows:
            error = row["error"]
            if (row["writes"] or error) and (not error or error["code"] != expected or not error["hint"]):
                wrong.append(f"{row['tool']}: {error}")
            if row["writes"] is False and error:
                wrong.append(f"{row['tool']} (a read) failed: {error}")
        self.assertEqual(wrong, [], "\n".join(wrong))

    def test_a_real_read_only_file_system(self):
        self.check(self.run_driver("ro"), "WRITE_DENIED")

    def test_a_real_full_disk(self):
        rows = self.run_driver("full")
        # Writes that need no new space (an append into a block already allocated) may still succeed on a
        # full disk; what must never happen is an INTERNAL_ERROR or a failed read.
        wrong = [f"{r['tool']}: {r['error']}" for r in rows
                 if (r["error"] and (r["error"]["code"] not in ("DISK_FULL",) or not r["error"]["hint"]))
                 or (r["writes"] is False and r["error"])]
        self.assertEqual(wrong, [], "\n".join(wrong))
        self.assertTrue(any(r["error"] for r in rows), "nothing was refused on a full disk")
