"""A private archive: owner-only files, no symlink followed for writing or deleting, ids checked whole."""

import os
import shutil
import stat
from pathlib import Path

from tests.helpers import ArchiveTest, write

from personal_understanding import backup, capture, forget, ledger, paths, receipts, records, storage, validate, views
from personal_understanding.archive_index import forget_cached, open_index
from personal_understanding.errors import PuError
from personal_understanding.retrieval.probe import probe

MSG = "我妹妹小雨下个月在杭州结婚，我有点舍不得。"


class Base(ArchiveTest):
    def say(self, text=MSG, turn="t1"):
        receipts.preflight(self.root, text, turn_id=turn, tier="full")
        return capture.capture_text(self.root, text, turn)["capture_id"]

    def busy_archive(self):
        """An archive that has been through every kind of write: captures, records, reads, views, a backup."""
        cid = self.say()
        records.add_record(self.root, kind="event", title="妹妹结婚", capture_ids=[cid])
        ledger.finalize(self.root, cid, "derived")
        probe(self.root, "妹妹", maintenance=True)
        views.rebuild_views(self.root)
        backup.backup_archive(self.root)
        return cid

    def outside(self, name="outside"):
        """A folder beside the archive, with a file in it that must survive."""
        folder = Path(self.tmp, name)
        write(folder / "keep.txt", "not the archive's")
        return folder

    def assertOutsideIntact(self, folder):
        self.assertEqual(sorted(p.name for p in folder.iterdir()), ["keep.txt"])
        self.assertEqual((folder / "keep.txt").read_text(encoding="utf-8"), "not the archive's")


class PermissionsTest(Base):
    def test_everything_the_archive_creates_is_owner_only(self):
        old = os.umask(0o022)  # a usual umask: what the archive creates must not depend on it
        try:
            fresh = os.path.join(self.tmp, "fresh")
            os.environ["PU_HOME"] = fresh
            self.root = fresh
            from personal_understanding import archive
            archive.init_archive(fresh)
            self.busy_archive()
        finally:
            os.umask(old)
        seen = 0
        for dirpath, dirnames, filenames in os.walk(fresh):
            for name in dirnames + filenames:
                full = os.path.join(dirpath, name)
                mode = stat.S_IMODE(os.lstat(full).st_mode)
                self.assertEqual(mode & 0o077, 0, f"{os.path.relpath(full, fresh)} is {oct(mode)}")
                seen += 1
        self.assertEqual(stat.S_IMODE(os.stat(fresh).st_mode) & 0o077, 0)
        self.assertTrue(paths.index_db_path(fresh).is_file())  # the sqlite index holds the words too
        self.assertGreater(seen, 15)

    def test_an_index_left_world_readable_by_an_older_version_is_made_private(self):
        self.say()
        db = paths.index_db_path(self.root)
        forget_cached()
        os.chmod(db, 0o644)
        open_index(self.root)
        self.assertEqual(stat.S_IMODE(os.stat(db).st_mode), 0o600)

    def test_validate_warns_about_files_others_can_read(self):
        self.say()
        ledger_file = paths.ledger_events_path(self.root)
        os.chmod(ledger_file, 0o644)
        report = validate.validate(self.root)
        self.assertIn("ARCHIVE_NOT_PRIVATE", " ".join(report["problems"]))
        self.assertEqual(report["status"], "warnings")


class SymlinkTest(Base):
    def link(self, inside, target):
        """Replace a folder or file of the archive by a symbolic link to `target`."""
        inside = Path(inside)
        if inside.is_dir() and not inside.is_symlink():
            shutil.rmtree(inside)
        elif inside.exists() or inside.is_symlink():
            inside.unlink()
        os.symlink(target, inside)

    def test_a_linked_views_folder_is_not_emptied_by_rebuild_or_forget(self):
        cid = self.say()
        forget_cached()
        out = self.outside()
        self.link(paths.views_dir(self.root), out)
        for call in (lambda: views.rebuild_views(self.root), lambda: forget.forget(self.root, cid, confirm=True)):
            with self.assertRaises(PuError) as ctx:
                call()
            self.assertEqual(ctx.exception.code, "ARCHIVE_SYMLINK")
            self.assertTrue(ctx.exception.hint)
            self.assertOutsideIntact(out)

    def test_a_linked_lock_file_is_not_truncated(self):
        out = self.outside()
        self.link(paths.lock_path(self.root), out / "keep.txt")
        before = self.snapshot()
        with self.assertRaises(PuError) as ctx:
            receipts.preflight(self.root, MSG, turn_id="t1", tier="full")
        self.assertEqual(ctx.exception.code, "ARCHIVE_SYMLINK")
        self.assertOutsideIntact(out)
        self.assertUnchanged(before)

    def test_a_linked_records_folder_gets_no_appends_and_no_silent_backup(self):
        cid = self.say()
        out = self.outside()
        self.link(paths.records_dir(self.root), out)
        with self.assertRaises(PuError) as ctx:
            records.add_record(self.root, kind="event", title="妹妹结婚", capture_ids=[cid])
        self.assertEqual(ctx.exception.code, "ARCHIVE_SYMLINK")
        self.assertOutsideIntact(out)
        with self.assertRaises(PuError) as ctx:
            backup.backup_archive(self.root)
        self.assertIn(ctx.exception.code, ("ARCHIVE_SYMLINK", "BACKUP_SYMLINK"))
        self.assertFalse(list(backup.backups_dir(self.root).glob("*.zip")), "a backup that omits records was written")

    def test_a_linked_log_or_capture_file_is_neither_written_nor_deleted(self):
        cid = self.say()
        out = self.outside()
        self.link(paths.feedback_path(self.root), out / "keep.txt")
        with storage.archive_lock(self.root):
            with self.assertRaises(PuError) as ctx:
                storage.append_jsonl(self.root, paths.feedback_path(self.root), {"a": 1})
            self.assertEqual(ctx.exception.code, "ARCHIVE_SYMLINK")
            with self.assertRaises(PuError) as ctx:
                storage.atomic_write(self.root, paths.feedback_path(self.root), b"")
            self.assertEqual(ctx.exception.code, "ARCHIVE_SYMLINK")
        self.assertOutsideIntact(out)
        relpath = open_index(self.root).capture(cid)["path"]
        capture_file = Path(self.root, relpath)
        (out / "cap.json").write_bytes(capture_file.read_bytes())
        capture_file.unlink()
        os.symlink(out / "cap.json", capture_file)
        with self.assertRaises(PuError) as ctx:
            forget.forget(self.root, cid, confirm=True)
        self.assertEqual(ctx.exception.code, "ARCHIVE_SYMLINK")
        self.assertEqual(sorted(p.name for p in out.iterdir()), ["cap.json", "keep.txt"])
        self.assertTrue(capture_file.is_symlink())

    def test_writes_outside_the_root_are_refused(self):
        with storage.archive_lock(self.root):
            with self.assertRaises(PuError) as ctx:
                storage.atomic_write(self.root, Path(self.tmp, "elsewhere.json"), b"{}")
        self.assertEqual(ctx.exception.code, "PATH_ESCAPE")
        self.assertFalse(Path(self.tmp, "elsewhere.json").exists())

    def test_validate_reports_every_link_in_the_archive(self):
        self.say()
        out = self.outside()
        os.symlink(out, paths.v2_dir(self.root) / "extra")
        os.symlink(out / "keep.txt", paths.records_dir(self.root) / "event.jsonl")
        report = validate.validate(self.root)
        self.assertEqual(report["status"], "failed")
        text = "\n".join(report["problems"])
        self.assertIn("memory/v2/extra: ARCHIVE_SYMLINK", text)
        self.assertIn("memory/v2/records/event.jsonl: ARCHIVE_SYMLINK", text)


class InsideRootTest(Base):
    def test_a_stored_path_resolves_only_inside_the_archive(self):
        out = self.outside()
        root = Path(self.root).resolve()
        self.assertEqual(paths.inside_root(self.root, "sources/conversation/2024/05/x.json"),
                         root / "sources/conversation/2024/05/x.json")
        self.assertEqual(paths.inside_root(self.root, ""), root)
        alias = Path(self.tmp, "alias")  # the archive named through a link to it: still itself
        os.symlink(self.root, alias)
        self.assertEqual(paths.inside_root(alias, "memory"), root / "memory")
        for escape in ("../outside/keep.txt", str(out / "keep.txt"), "sources/../../outside", "..", "/"):
            with self.assertRaises(PuError, msg=escape) as ctx:
                paths.inside_root(self.root, escape)
            self.assertEqual(ctx.exception.code, "PATH_ESCAPE", escape)
        os.symlink(out, Path(self.root, "sources", "elsewhere"))  # inside by name, outside through a link
        os.symlink(out / "keep.txt", Path(self.root, "sources", "note.json"))
        for linked in ("sources/elsewhere/keep.txt", "sources/elsewhere", "sources/note.json"):
            with self.assertRaises(PuError, msg=linked) as ctx:
                paths.inside_root(self.root, linked)
            self.assertEqual(ctx.exception.code, "ARCHIVE_SYMLINK", linked)
        os.symlink(Path(self.root, "memory"), Path(self.root, "sources", "inner"))  # a link that stays inside
        self.assertEqual(paths.inside_root(self.root, "sources/inner/v2"), root / "memory" / "v2")
        sibling = Path(self.tmp, Path(self.root).name + "-other")  # a folder whose name begins with the root's
        sibling.mkdir()
        with self.assertRaises(PuError) as ctx:
            paths.inside_root(self.root, f"../{sibling.name}/x")
        self.assertEqual(ctx.exception.code, "PATH_ESCAPE")


class IdTest(Base):
    def test_an_id_with_a_trailing_newline_is_refused(self):
        for bad in ("cap-nl\n", "cap\n", "a\nb", "x" * 129, "", "Cap", "../x", ".x", "a/b"):
            with self.assertRaises(PuError, msg=repr(bad)) as ctx:
                paths.check_id(bad)
            self.assertEqual(ctx.exception.code, "BAD_ID")
        for good in ("cap-1", "a", "x" * 128, "imp-0f.a_b"):
            self.assertEqual(paths.check_id(good), good)

    def test_a_capture_id_with_a_newline_never_becomes_a_file(self):
        receipts.preflight(self.root, MSG, turn_id="t1", tier="full")
        self.refused("BAD_ID", capture.capture_text, self.root, MSG, "t1", capture_id="cap-nl\n")
        self.refused("BAD_ID", capture.capture_text, self.root, MSG, "t1\n")

    def test_validate_reports_malformed_ids_already_on_disk(self):
        cid = self.say()
        ledger_file = paths.ledger_events_path(self.root)
        lines = ledger_file.read_bytes().decode("utf-8").splitlines()
        bad = [line.replace(f'"{cid}"', '"cap-nl\\n"') for line in lines]
        ledger_file.write_text("\n".join(bad) + "\n", encoding="utf-8")
        with open(paths.followups_path(self.root), "a", encoding="utf-8") as handle:
            handle.write('{"id":"fu-x\\n","version":1,"status":"open","question":"q","capture_id":"%s"}\n' % cid)
        report = validate.validate(self.root)
        text = "\n".join(report["problems"])
        self.assertIn("MALFORMED_ID capture id 'cap-nl\\n'", text)
        self.assertIn("MALFORMED_ID follow-up id 'fu-x\\n'", text)
        self.assertEqual(report["status"], "failed")
