"""Parallel writers lose nothing; a killed writer leaves nothing a reader mistakes for data."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

from tests.helpers import SCRIPTS, ArchiveTest, drop_index

from personal_understanding import archive_index, paths, storage, validate

WRITER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {scripts!r})
    from personal_understanding import capture, receipts
    root, worker, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    for i in range(count):
        text = f"我今天第{{i}}次想起外婆做的红烧肉，worker {{worker}}"
        turn = f"w{{worker}}-t{{i}}"
        receipts.preflight(root, text, turn_id=turn, tier="full")
        out = capture.capture_text(root, text, turn)
        print(out["capture_id"], flush=True)
""")


def spawn(root, worker, count):
    return subprocess.Popen([sys.executable, "-c", WRITER.format(scripts=str(SCRIPTS)), root, str(worker), str(count)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


class ParallelCaptureTest(ArchiveTest):
    def test_four_processes_fifty_captures_each(self):
        procs = [spawn(self.root, w, 50) for w in range(4)]
        acknowledged = []
        for proc in procs:
            out, err = proc.communicate(timeout=240)
            self.assertEqual(proc.returncode, 0, err.decode())
            acknowledged += out.decode().split()
        self.assertEqual(len(acknowledged), 200)
        ledger_lines = [json.loads(x) for x in paths.ledger_events_path(self.root).read_text(encoding="utf-8").splitlines()]
        self.assertEqual(sorted(e["capture_id"] for e in ledger_lines), sorted(acknowledged))
        files = list((paths.conversation_dir(self.root)).rglob("*.json"))
        self.assertEqual(len(files), 200)
        report = validate.validate(self.root)
        self.assertEqual(report["status"], "clean", report["problems"])
        index = archive_index.open_index(self.root)
        self.assertEqual(len(index.pending_capture_ids()), 200)


class KilledWriterTest(ArchiveTest):
    def test_sigkill_mid_run_loses_no_acknowledged_capture(self):
        for attempt in range(4):
            proc = spawn(self.root, attempt, 1000)
            time.sleep(0.4 + 0.15 * attempt)
            proc.send_signal(signal.SIGKILL)
            out, _ = proc.communicate()
            acknowledged = out.decode().split()
            report = validate.validate(self.root)
            self.assertNotEqual(report["status"], "failed", report["problems"])
            index = archive_index.open_index(self.root)
            for cid in acknowledged:
                self.assertIsNotNone(index.capture(cid), f"acknowledged capture {cid} is missing")

    def test_torn_ledger_line_is_not_read_as_a_capture(self):
        with open(paths.ledger_events_path(self.root), "ab") as handle:
            handle.write(b'{"event":"captured","capture_id":"half","path":"sources/x.json"')
        index = archive_index.open_index(self.root)
        self.assertIsNone(index.capture("half"))
        self.assertEqual([p.code for p in index.problems()], ["JSONL_INCOMPLETE_TAIL"])
        with storage.archive_lock(self.root):  # the next writer moves the fragment aside
            storage.append_jsonl(self.root, paths.ledger_events_path(self.root), {"event": "reopened", "capture_id": "x"})
        self.assertTrue(paths.ledger_events_path(self.root).read_bytes().startswith(b'{"event":"reopened"'))
        self.assertTrue((paths.v2_dir(self.root) / "quarantine.jsonl").exists())

    def test_index_survives_deletion_and_corruption(self):
        from personal_understanding import capture, receipts
        receipts.preflight(self.root, "我养的猫叫年糕", turn_id="t1", tier="full")
        cid = capture.capture_text(self.root, "我养的猫叫年糕", "t1")["capture_id"]
        archive_index.forget_cached()
        db = paths.index_db_path(self.root)
        db.write_bytes(b"this is not a database")
        for suffix in ("-wal", "-shm"):
            try:
                os.unlink(str(db) + suffix)
            except FileNotFoundError:
                pass
        self.assertEqual(archive_index.open_index(self.root).capture(cid)["status"], "pending")
        archive_index.forget_cached()
        for p in paths.views_dir(self.root).iterdir():
            p.unlink()
        self.assertEqual(archive_index.open_index(self.root).receipt("t1")["turn_id"], "t1")


class IndexBusyTest(ArchiveTest):
    """A long write by another process is not a broken index: the call waits, then says so, and keeps the file."""

    def setUp(self):
        super().setUp()
        from unittest import mock
        patch = mock.patch.object(archive_index, "BUSY_SECONDS", 0.2)
        patch.start()
        self.addCleanup(patch.stop)
        self.addCleanup(archive_index.forget_cached)

    def test_capture_under_another_writer_is_refused_busy_then_goes_through(self):
        import sqlite3
        from personal_understanding import capture, receipts
        from personal_understanding.errors import PuError
        receipts.preflight(self.root, "我养的猫叫年糕", turn_id="t1", tier="full")
        first = capture.capture_text(self.root, "我养的猫叫年糕", "t1")["capture_id"]
        db = drop_index(self.root)
        other = sqlite3.connect(str(db), isolation_level=None)
        other.execute("PRAGMA journal_mode=WAL")
        other.execute("BEGIN IMMEDIATE")  # another process building the index afresh, for longer than we wait
        inode = os.stat(db).st_ino
        try:
            with self.assertRaises(PuError) as caught:
                receipts.preflight(self.root, "年糕今天打了疫苗", turn_id="t2", tier="full")
        finally:
            other.execute("ROLLBACK")
            other.close()
        self.assertEqual(caught.exception.code, "INDEX_BUSY")
        self.assertIn("retry", caught.exception.hint.lower())
        self.assertEqual(os.stat(db).st_ino, inode)  # not deleted and started again under the other writer
        receipts.preflight(self.root, "年糕今天打了疫苗", turn_id="t2", tier="full")
        second = capture.capture_text(self.root, "年糕今天打了疫苗", "t2")["capture_id"]
        index = archive_index.open_index(self.root)
        self.assertEqual({index.capture(first)["status"], index.capture(second)["status"]}, {"pending"})

    def test_a_new_index_file_being_created_elsewhere_is_waited_for(self):
        """Switching a new file to WAL is refused at once (no busy wait) while another connection creates it."""
        import sqlite3
        import threading
        db = drop_index(self.root)
        other = sqlite3.connect(str(db), isolation_level=None, check_same_thread=False)
        other.execute("BEGIN IMMEDIATE")
        other.execute("CREATE TABLE being_made (x)")  # another connection's first writes, not yet in WAL mode
        done = threading.Timer(0.15, lambda: (other.execute("COMMIT"), other.close()))
        done.start()
        try:
            con = archive_index.connect(self.root, db)
            self.assertEqual(con.execute("PRAGMA journal_mode").fetchone()[0], "wal")
            con.close()
        finally:
            done.join()


class SecondConnectionTest(ArchiveTest):
    """Opening the index again in one process must keep the first connection's locks (a server has two threads)."""

    def test_a_second_connection_does_not_let_another_process_delete_the_write_ahead_log(self):
        db = paths.index_db_path(self.root)
        first = archive_index.connect(self.root, db)
        first.execute("CREATE TABLE IF NOT EXISTS t (x)")
        first.execute("INSERT INTO t VALUES (1)")  # a write-ahead log in use, and this process's lock on the file
        second = archive_index.connect(self.root, db)  # another thread's connection, as in the MCP server
        try:
            # Another process opens and closes the index: it deletes the log only if it is the last user.
            subprocess.run([sys.executable, "-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
                            "c.execute('SELECT COUNT(*) FROM t').fetchone(); c.close()", str(db)], check=True)
            self.assertTrue(os.path.exists(str(db) + "-wal"), "the log was deleted under a live connection")
            self.assertEqual(first.execute("SELECT COUNT(*) FROM t").fetchone()[0], 1)
        finally:
            second.close()
            first.close()
