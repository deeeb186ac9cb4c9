"""Storage rules: atomic replace, one-line appends, write-once, the lock, tolerant reads."""

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from unittest import mock

from tests.helpers import SCRIPTS, ArchiveTest

from personal_understanding import paths, storage
from personal_understanding.errors import PuError


class AtomicWriteTest(ArchiveTest):
    def test_replace_leaves_no_temp_files(self):
        target = Path(self.root, "memory", "v2", "views", "x.json")
        with storage.archive_lock(self.root):
            storage.atomic_write(self.root, target, b"one")
            storage.atomic_write(self.root, target, b"two")
        self.assertEqual(target.read_bytes(), b"two")
        self.assertEqual([p.name for p in target.parent.iterdir() if p.name.endswith(".tmp")], [])

    def test_failed_replace_keeps_the_old_file(self):
        target = Path(self.root, "memory", "v2", "views", "x.json")
        with storage.archive_lock(self.root):
            storage.atomic_write(self.root, target, b"old")
            with mock.patch("os.replace", side_effect=OSError(28, "No space left on device")):
                with self.assertRaises(PuError) as ctx:
                    storage.atomic_write(self.root, target, b"new")
        self.assertEqual(ctx.exception.code, "DISK_FULL")
        self.assertEqual(target.read_bytes(), b"old")
        self.assertEqual([p.name for p in target.parent.iterdir() if p.name.endswith(".tmp")], [])

    def test_writes_need_the_lock(self):
        with self.assertRaises(PuError) as ctx:
            storage.atomic_write(self.root, Path(self.root, "memory", "x"), b"x")
        self.assertEqual(ctx.exception.code, "INTERNAL_NO_LOCK")


class WriteOnceTest(ArchiveTest):
    def test_existing_file_is_never_replaced(self):
        target = Path(self.root, "sources", "conversation", "a.json")
        with storage.archive_lock(self.root):
            storage.write_once(self.root, target, b"first")
            with self.assertRaises(PuError) as ctx:
                storage.write_once(self.root, target, b"second")
        self.assertEqual(ctx.exception.code, "ALREADY_EXISTS")
        self.assertEqual(target.read_bytes(), b"first")
        self.assertEqual(sorted(p.name for p in target.parent.iterdir()), ["a.json"])


    def test_a_run_of_files_through_folder_handles_keeps_the_same_rules(self):
        folder = Path(self.root, "sources", "conversation", "2026", "12")
        with storage.archive_lock(self.root), storage.Folders() as folders:
            for n in range(3):
                storage.write_once(self.root, folder / f"{n}.json", b"words %d" % n, sync=False, folders=folders)
            with self.assertRaises(PuError) as ctx:
                storage.write_once(self.root, folder / "1.json", b"other", sync=False, folders=folders)
        self.assertEqual(ctx.exception.code, "ALREADY_EXISTS")
        self.assertEqual(sorted(p.name for p in folder.iterdir()), ["0.json", "1.json", "2.json"])
        self.assertEqual((folder / "1.json").read_bytes(), b"words 1")
        if os.name != "nt":
            self.assertEqual(os.stat(folder / "0.json").st_mode & 0o777, 0o600)

    def test_folder_handles_refuse_a_folder_that_is_a_link(self):
        outside = Path(self.tmp, "elsewhere")
        outside.mkdir()
        Path(self.root, "sources", "conversation").mkdir(parents=True, exist_ok=True)
        os.symlink(outside, Path(self.root, "sources", "conversation", "2026"))
        with storage.archive_lock(self.root), storage.Folders() as folders:
            with self.assertRaises(PuError) as ctx:
                storage.write_once(self.root, Path(self.root, "sources", "conversation", "2026", "a.json"), b"x",
                                   sync=False, folders=folders)
        self.assertEqual(ctx.exception.code, storage.symlink_refused("x").code)
        self.assertEqual(list(outside.iterdir()), [])


class JsonlTest(ArchiveTest):
    def path(self):
        return paths.v2_dir(self.root) / "feedback.jsonl"

    def test_append_is_one_line_per_object(self):
        with storage.archive_lock(self.root):
            storage.append_jsonl(self.root, self.path(), {"a": "多行\n文本"})
            storage.append_jsonl(self.root, self.path(), [{"b": 1}, {"c": 2}])
        lines = self.path().read_bytes().split(b"\n")
        self.assertEqual(lines[-1], b"")
        self.assertEqual([json.loads(x) for x in lines[:-1]], [{"a": "多行\n文本"}, {"b": 1}, {"c": 2}])

    def test_reader_reports_invalid_line_with_its_number(self):
        self.path().write_bytes(b'{"a":1}\nnot json\n{"b":2}\n')
        entries, problems, _end, _next = storage.read_jsonl(self.path(), display="f.jsonl")
        self.assertEqual([e[2] for e in entries], [{"a": 1}, {"b": 2}])
        self.assertEqual([str(p).split(" ")[0] for p in problems], ["f.jsonl:2:"])
        self.assertEqual(problems[0].code, "JSONL_INVALID_LINE")
        self.assertEqual(problems[0].severity, "error")

    def test_unfinished_tail_is_reported_not_read_and_not_dropped(self):
        raw = b'{"a":1}\n{"b":'
        self.path().write_bytes(raw)
        entries, problems, end, _next = storage.read_jsonl(self.path())
        self.assertEqual([e[2] for e in entries], [{"a": 1}])
        self.assertEqual([p.code for p in problems], ["JSONL_INCOMPLETE_TAIL"])
        self.assertEqual(problems[0].severity, "warning")
        self.assertEqual(end, 8)
        self.assertEqual(self.path().read_bytes(), raw)  # the reader changed nothing

    def test_next_append_moves_an_unfinished_tail_aside(self):
        self.path().write_bytes(b'{"a":1}\n{"b":')
        with storage.archive_lock(self.root):
            storage.append_jsonl(self.root, self.path(), {"c": 3})
        self.assertEqual(self.path().read_bytes(), b'{"a":1}\n{"c":3}\n')
        moved = [json.loads(x) for x in (paths.v2_dir(self.root) / "quarantine.jsonl").read_text().splitlines()]
        self.assertEqual(len(moved), 1)
        self.assertEqual(moved[0]["file"], "memory/v2/feedback.jsonl")
        self.assertEqual(moved[0]["offset"], 8)

    def test_failed_append_leaves_no_partial_line(self):
        with storage.archive_lock(self.root):
            storage.append_jsonl(self.root, self.path(), {"a": 1})
            with mock.patch("os.fsync", side_effect=OSError(28, "No space left on device")):
                with self.assertRaises(PuError) as ctx:
                    storage.append_jsonl(self.root, self.path(), {"b": 2})
        self.assertEqual(ctx.exception.code, "DISK_FULL")
        self.assertEqual(self.path().read_bytes(), b'{"a":1}\n')


class LockTest(ArchiveTest):
    def test_busy_lock_times_out_naming_the_lock_file(self):
        holder = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(f"""
                import sys, time
                sys.path.insert(0, {str(SCRIPTS)!r})
                from personal_understanding import storage
                with storage.archive_lock({self.root!r}, "test holder"):
                    print("held", flush=True)
                    time.sleep(30)
            """)],
            stdout=subprocess.PIPE,
        )
        try:
            self.assertEqual(holder.stdout.readline().strip(), b"held")
            started = time.monotonic()
            with self.assertRaises(PuError) as ctx:
                with storage.archive_lock(self.root, timeout=0.3):
                    pass
            self.assertLess(time.monotonic() - started, 10)
            self.assertEqual(ctx.exception.code, "ARCHIVE_LOCKED")
            self.assertIn(str(paths.lock_path(self.root)), ctx.exception.message)
            self.assertIn("test holder", ctx.exception.message)
        finally:
            holder.kill()
            holder.wait()
        with storage.archive_lock(self.root, timeout=5):  # released by the OS when the holder died
            pass

    def test_a_dead_holder_is_reported_not_passed_over(self):
        paths.lock_path(self.root).write_text(json.dumps({"pid": 999999999, "operation": "capture", "since": "x"}))
        with storage.archive_lock(self.root) as notice:
            self.assertEqual(notice["code"], "PREVIOUS_WRITER_DIED")
            self.assertIn("capture", notice["message"])
        with storage.archive_lock(self.root) as notice:
            self.assertIsNone(notice)  # a clean release leaves no note behind

    def test_lock_is_reentrant_in_one_thread(self):
        with storage.archive_lock(self.root):
            with storage.archive_lock(self.root):
                storage.append_jsonl(self.root, paths.feedback_path(self.root), {"x": 1})
            self.assertTrue(storage.lock_held(self.root))
        self.assertFalse(storage.lock_held(self.root))

    def test_missing_archive_is_a_clear_error(self):
        with self.assertRaises(PuError) as ctx:
            with storage.archive_lock(os.path.join(self.tmp, "nowhere")):
                pass
        self.assertEqual(ctx.exception.code, "NO_ARCHIVE")
