"""Backup and restore, explicit forgetting, tiers and caps, review loops, rebuilt views."""

import contextlib
import datetime
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from tests.helpers import SCRIPTS, ArchiveTest, write

from personal_understanding import (archive, backup, capture, followups, forget, gate, history, ledger, paths, receipts, records,
                                    restore, review, storage, tiers, timeutil, validate, views)
from personal_understanding.archive_index import forget_cached, open_index
from personal_understanding.errors import PuError
from personal_understanding.retrieval import ahead, index
from personal_understanding.retrieval.index import open_recall
from personal_understanding.retrieval.probe import probe


def holding(root, phrase):
    """Files under the root whose bytes hold `phrase`: zip members opened, the sqlite index included."""
    found = []
    for path in Path(root).rglob("*"):
        if not path.is_file():
            continue
        data = path.read_bytes()
        if phrase.encode("utf-8") in data:
            found.append(path.relative_to(root).as_posix())
        if path.suffix == ".zip":
            with zipfile.ZipFile(path) as zf:
                found += [f"{path.name}/{n}" for n in zf.namelist() if phrase.encode("utf-8") in zf.read(n)]
    return found


class Base(ArchiveTest):
    def say(self, text, turn, day=None):
        receipts.preflight(self.root, text, turn_id=turn, tier="full")
        return capture.capture_text(self.root, text, turn, now=timeutil.parse_instant(day) if day else None)["capture_id"]

    def sources_bytes(self):
        return {k: v for k, v in self.snapshot().items() if k.startswith("sources/")}


class BackupTest(Base):
    def test_round_trip_restores_byte_identical_captures(self):
        cid = self.say("我家猫叫年糕，今年三岁", "t1")
        records.add_record(self.root, kind="fact", title="猫叫年糕", capture_ids=[cid])
        ledger.finalize(self.root, cid, "derived")
        before = self.sources_bytes()
        out = backup.backup_archive(self.root)
        self.assertTrue(out["verified"])
        self.assertTrue(Path(out["snapshot"]).is_file())
        manifest = json.loads(Path(out["manifest"]).read_text(encoding="utf-8"))
        self.assertEqual(len(manifest["archive_sha256"]), 64)
        self.assertIn(open_index(self.root).capture(cid)["path"], {f["path"] for f in manifest["files"]})
        # damage: delete a capture, edit the ledger
        victim = next(p for p in before if p.endswith(".json") and "conversation" in p)
        os.unlink(Path(self.root, victim))
        with open(paths.ledger_events_path(self.root), "ab") as handle:
            handle.write(b"garbage\n")
        self.assertEqual(validate.validate(self.root)["status"], "failed")
        dry = restore.restore_archive(self.root, out["snapshot"])
        self.assertTrue(dry["dry_run"])
        self.assertIn(victim, dry["would_add"])
        self.assertIn("memory/v2/ledger.jsonl", dry["would_change"])
        self.assertFalse(Path(self.root, victim).exists())  # a dry run touches nothing
        done = restore.restore_archive(self.root, out["snapshot"], apply=True)
        self.assertEqual(done["validate"]["status"], "clean", done["validate"]["problems"])
        self.assertEqual(self.sources_bytes(), before)
        self.assertTrue(Path(done["pre_restore_snapshot"]).is_file())
        self.assertIn(cid, [r["id"] for r in probe(self.root, "年糕", maintenance=True)["top"]])

    def test_tampered_or_corrupt_snapshot_is_refused_untouched(self):
        self.say("今天去爬了香山", "t1")
        snap = backup.backup_archive(self.root)["snapshot"]
        tampered = os.path.join(self.tmp, "tampered.zip")
        with zipfile.ZipFile(snap) as src, zipfile.ZipFile(tampered, "w") as dst:
            for item in src.infolist():
                data = src.read(item.filename)
                if item.filename.startswith("sources/conversation/"):
                    data = data.replace("香山".encode(), "泰山".encode())
                dst.writestr(item, data)
        verify = backup.backup_archive(self.root, verify=tampered)
        self.assertFalse(verify["verified"])
        self.assertIn("does not match the manifest", verify["problems"][0])
        code, out, _ = self.cli("backup_archive", "--verify", tampered)
        self.assertEqual(code, 1)
        before = self.snapshot()
        with self.assertRaises(PuError) as ctx:
            restore.restore_archive(self.root, tampered, apply=True)
        self.assertEqual(ctx.exception.code, "RESTORE_SNAPSHOT_INVALID")
        corrupt = write(os.path.join(self.tmp, "corrupt.zip"), "not a zip")
        with self.assertRaises(PuError):
            restore.restore_archive(self.root, corrupt, apply=True)
        self.assertUnchanged(before)

    def test_mirror_rotation_state_and_reminders(self):
        first = receipts.preflight(self.root, "今天去爬了香山", turn_id="t1", tier="full")
        self.assertEqual(first["backup_reminder"]["code"], "BACKUP_MISSING")
        # Once a day: the next turns of a long chat do not repeat it; tomorrow's first turn does.
        self.assertNotIn("backup_reminder", receipts.preflight(self.root, "今天又去爬山了", turn_id="t2", tier="full"))
        tomorrow = timeutil.parse_instant(first["receipt"]["created_at"]) + datetime.timedelta(days=1)
        self.assertEqual(receipts.preflight(self.root, "又去了", turn_id="t3", tier="full", now=tomorrow)
                         ["backup_reminder"]["code"], "BACKUP_MISSING")
        capture.capture_text(self.root, "今天去爬了香山", "t1")
        mirror = os.path.join(self.tmp, "usb")
        for _ in range(3):
            out = backup.backup_archive(self.root, also_to=mirror, keep=2)
        self.assertEqual(len(list(backup.backups_dir(self.root).glob("snapshot-*.zip"))), 2)
        self.assertTrue(Path(out["mirror"]).is_file())
        self.assertTrue(backup.backup_archive(self.root, verify=out["mirror"])["verified"])
        self.assertNotIn("backup_reminder", gate.session_check(self.root, "t1"))
        late = timeutil.parse_instant("2099-01-01")
        self.assertEqual(backup.reminder(self.root, now=late)["code"], "BACKUP_OLD")
        code, result, stderr = self.cli("backup_archive", "--verify")
        self.assertEqual((code, result["verified"]), (0, True))
        self.assertEqual(len(stderr.strip().splitlines()), 1)  # one log line for cron


class ForgetTest(Base):
    def setUp(self):
        super().setUp()
        self.secret = self.say("其实我去年偷偷去看过心理医生，别告诉别人", "t1")
        self.other = self.say("我最近睡得不太好", "t2")
        self.only = records.add_record(self.root, kind="event", title="去看心理医生", capture_ids=[self.secret],
                                       verbatim_refs=[{"capture_id": self.secret, "start": 2, "end": 10}])["id"]
        self.shared = records.add_record(self.root, kind="state", title="睡眠不好",
                                         capture_ids=[self.secret, self.other])["id"]
        self.fu = followups.add_followup(self.root, "后来还去看吗？", self.secret, due_rule="+7d")["id"]
        ledger.finalize(self.root, self.secret, "derived")
        ledger.finalize(self.root, self.other, "derived")
        probe(self.root, "心理医生", capture_id=self.secret)

    def test_dry_run_lists_everything_and_changes_nothing(self):
        before = self.snapshot()
        out = forget.forget(self.root, self.secret)
        self.assertTrue(out["dry_run"])
        self.assertEqual(out["records_removed"], [self.only])
        self.assertEqual(out["records_edited"], [self.shared])
        self.assertEqual(out["followups_closed"], [self.fu])
        self.assertUnchanged(before)

    def test_confirm_cascades_and_leaves_only_a_tombstone(self):
        path = open_index(self.root).capture(self.secret)["path"]
        out = forget.forget(self.root, self.secret, confirm=True)
        self.assertTrue(out["applied"])
        self.assertFalse(Path(self.root, path).exists())
        everything = b"".join(p.read_bytes() for p in Path(self.root).rglob("*") if p.is_file()
                              and "views" not in p.parts and "backups" not in p.parts)
        self.assertNotIn("心理医生".encode(), everything)
        index = open_index(self.root)
        self.assertIsNone(index.record(self.only))
        self.assertEqual(index.record(self.shared)["capture_ids"], [self.other])
        self.assertEqual(index.followup(self.fu)["status"], "resolved")
        stone = json.loads(paths.forgotten_path(self.root).read_text(encoding="utf-8").splitlines()[0])
        self.assertEqual(stone["id"], self.secret)
        self.assertEqual(len(stone["sha256"]), 64)
        self.assertEqual(validate.validate(self.root)["status"], "clean", validate.validate(self.root)["problems"])
        self.assertEqual(probe(self.root, "心理医生", maintenance=True)["top"], [])
        self.assertTrue(gate.session_check(self.root, "t2")["obligations_met"])

    def test_restore_cannot_resurrect_forgotten_material(self):
        snap = backup.backup_archive(self.root)["snapshot"]
        outside = os.path.join(self.tmp, "usb-copy.zip")  # a copy forgetting cannot reach
        Path(outside).write_bytes(Path(snap).read_bytes())
        forget.forget(self.root, self.secret, confirm=True)
        dry = restore.restore_archive(self.root, outside)
        self.assertEqual(dry["stays_forgotten"], [self.secret])
        self.assertFalse(any(self.secret in p for p in dry["would_add"]))
        out = restore.restore_archive(self.root, outside, apply=True)
        self.assertIn(self.secret, out["forgotten_again"])
        self.assertEqual(out["validate"]["status"], "clean", out["validate"]["problems"])
        self.assertIsNone(open_index(self.root).record(self.only))
        self.assertEqual(open_index(self.root).capture(self.secret)["status"], "forgotten")
        self.assertEqual(holding(self.root, "心理医生"), [])
        self.assertEqual(probe(self.root, "心理医生", maintenance=True)["top"], [])
        self.assertFalse(paths.staging_dir(self.root).exists() and os.listdir(paths.staging_dir(self.root)))

    def test_a_forgotten_attachment_stays_forgotten_through_a_restore_and_the_dry_run_says_so(self):
        scan = Path(self.tmp, "scan.txt")
        scan.write_bytes(b"biopsy report: benign")
        att = capture.capture_attachment(self.root, scan, "t1")
        outside = Path(self.tmp, "usb-copy.zip")
        outside.write_bytes(Path(backup.backup_archive(self.root)["snapshot"]).read_bytes())
        forget.forget(self.root, att["capture_id"], confirm=True)
        dry = restore.restore_archive(self.root, outside)
        self.assertEqual(dry["stays_forgotten"], [att["capture_id"]])
        self.assertNotIn(att["blob"], dry["would_add"], "the dry run promises bytes the restore will not bring back")
        out = restore.restore_archive(self.root, outside, apply=True)
        self.assertIn(att["capture_id"], out["forgotten_again"])
        self.assertEqual(holding(self.root, "biopsy report"), [])
        self.assertEqual(out["validate"]["status"], "clean", out["validate"]["problems"])

    def test_forgetting_a_record_recloses_its_capture(self):
        cid = self.say("我把吉他卖了", "t3")
        rid = records.add_record(self.root, kind="event", title="卖了吉他", capture_ids=[cid])["id"]
        ledger.finalize(self.root, cid, "derived")
        out = forget.forget(self.root, rid, confirm=True)
        self.assertEqual(out["captures_reclosed"], [cid])
        self.assertEqual(open_index(self.root).capture(cid)["status"], "no-derivation-needed")
        self.assertEqual(validate.validate(self.root)["status"], "clean")

    def test_unknown_and_repeated_ids_are_refused(self):
        for bad, code in (("cap-none", "FORGET_UNKNOWN"), ("../x", "BAD_ID")):
            with self.assertRaises(PuError) as ctx:
                forget.forget(self.root, bad, confirm=True)
            self.assertEqual(ctx.exception.code, code)
        forget.forget(self.root, self.only, confirm=True)
        with self.assertRaises(PuError) as ctx:
            forget.forget(self.root, self.only, confirm=True)
        self.assertEqual(ctx.exception.code, "FORGET_ALREADY")


class JournalledForgetTest(Base):
    """A forget cut short by a failed write is honoured at once and finished by whoever writes next."""

    def setUp(self):
        super().setUp()
        self.secret = self.say("我其实一直在吃抗焦虑的药，药名叫舍曲林", "t1")
        self.other = self.say("最近工作压力很大", "t2")
        self.shared = records.add_record(self.root, kind="state", title="压力大", summary="药名叫舍曲林，压力大",
                                         capture_ids=[self.secret, self.other])["id"]
        ledger.finalize(self.root, self.secret, "derived")
        ledger.finalize(self.root, self.other, "derived")
        self.path = open_index(self.root).capture(self.secret)["path"]

    def fail_on(self, name):
        from unittest import mock

        real = getattr(storage, name)

        def broken(root, path, *args, **kwargs):
            if Path(path).name.startswith(self.secret):
                raise PuError("WRITE_FAILED", f"{path}: I/O error", "retry")
            return real(root, path, *args, **kwargs)
        return mock.patch.object(storage, name, broken)

    def test_a_failed_last_step_is_never_served_and_the_next_writer_finishes_it(self):
        with self.fail_on("remove_file"), self.assertRaises(PuError):
            forget.forget(self.root, self.secret, confirm=True)
        self.assertTrue(Path(self.root, self.path).exists())  # the bytes are still on disk...
        forget_cached()
        from unittest import mock

        with mock.patch.object(storage, "LOCK_HOOKS", []):  # reads alone: nobody finishes the forget yet
            deep = probe_deep(self.root, [self.secret, self.shared])
            self.assertNotIn("舍曲林", json.dumps(deep, ensure_ascii=False))  # ...but nothing serves them
            self.assertEqual(probe(self.root, "舍曲林", maintenance=True)["top"], [])
            self.refused("CAPTURE_NOT_FOUND", deep_verify, self.root, self.secret, "舍曲林")
            self.assertNotEqual(validate.validate(self.root)["status"], "failed")
        self.say("今天下雨了", "t3")  # any later writer completes the forget
        self.assertFalse(Path(self.root, self.path).exists())
        self.assertEqual(holding(self.root, "舍曲林"), [])
        self.assertEqual(validate.validate(self.root)["status"], "clean", validate.validate(self.root)["problems"])

    def test_repair_finishes_a_forget_whose_intent_is_on_disk(self):
        from unittest import mock

        real = storage.append_jsonl
        calls = []

        def dies_after_the_intent(root, path, objs, *args, **kwargs):
            calls.append(path)
            if len(calls) > 1:
                raise KeyboardInterrupt  # the process is killed here
            return real(root, path, objs, *args, **kwargs)

        with mock.patch.object(storage, "LOCK_HOOKS", []), mock.patch.object(storage, "append_jsonl", dies_after_the_intent):
            with self.assertRaises(KeyboardInterrupt):
                forget.forget(self.root, self.secret, confirm=True)
        forget_cached()
        self.assertNotIn("DERIVED_WITHOUT_RECORD", json.dumps(validate.validate(self.root)))
        out = ledger.repair(self.root)
        self.assertEqual(out["finished"], {"forgets": [self.secret]})
        self.assertEqual(holding(self.root, "舍曲林"), [])
        self.assertEqual(validate.validate(self.root)["status"], "clean")
        self.refused("FORGET_ALREADY", forget.forget, self.root, self.secret, confirm=True)


def probe_deep(root, ids):
    from personal_understanding.retrieval.probe import retrieve

    return retrieve(root, level="deep", ids=ids, maintenance=True)


def deep_verify(root, capture_id, quote):
    from personal_understanding.retrieval.deep import verify_quote

    return verify_quote(root, capture_id, quote)


class ForgetReachTest(Base):
    """Forgetting reaches every copy of the words: quoted summaries, follow-ups, traces, the index, backups."""

    def test_every_place_that_holds_the_words_is_listed_then_cleaned(self):
        secret = self.say("我打算跟老板提辞职，下家是星河科技", "t1")
        other = self.say("这周一直在加班", "t2")
        state = records.add_record(self.root, kind="state", title="工作不顺", summary="下家是星河科技；一直在加班",
                                   capture_ids=[secret, other])["id"]
        entity = records.add_record(self.root, kind="entity", entity_type="school_or_organization", title="星河科技")["id"]
        event = records.add_record(self.root, kind="event", title="打算辞职", capture_ids=[secret], entity_refs=[entity])["id"]
        fu = followups.add_followup(self.root, "跟老板谈了吗？", secret, context="下家是星河科技", due_rule="+3d")["id"]
        ledger.finalize(self.root, secret, "derived")
        ledger.finalize(self.root, other, "derived")
        probe(self.root, "星河科技", capture_id=secret)
        snap = backup.backup_archive(self.root)["snapshot"]
        before = self.snapshot()
        dry = forget.forget(self.root, secret)
        self.assertUnchanged(before)
        self.assertEqual(sorted(dry["records_removed"]), sorted([event, entity]))  # the entity only it named
        self.assertEqual(dry["records_edited"], [state])
        places = "\n".join(dry["places"])
        for where in ("memory/v2/records/state.jsonl", "memory/v2/records/event.jsonl", "memory/v2/records/entity.jsonl",
                      "memory/v2/followups.jsonl", "memory/v2/receipts.jsonl", "memory/v2/traces/",
                      Path(snap).name, "(deleted)"):
            self.assertIn(where, places)
        forget.forget(self.root, secret, confirm=True)
        probe(self.root, "加班", maintenance=True)  # the index is rebuilt and used again
        self.assertEqual(holding(self.root, "星河"), [])
        index = open_index(self.root)
        self.assertEqual(index.record(state)["summary"], "[forgotten]；一直在加班")
        self.assertEqual(index.record(state)["capture_ids"], [other])
        self.assertEqual(index.followup(fu)["context"], "[forgotten]")
        self.assertTrue(backup.backup_archive(self.root, verify=snap)["verified"])
        with zipfile.ZipFile(snap) as zf:
            self.assertNotIn(open_index(self.root).capture(secret)["path"], zf.namelist())
        self.assertEqual(validate.validate(self.root)["status"], "clean", validate.validate(self.root)["problems"])

    def test_a_later_question_that_was_answered_by_the_forgotten_words_goes_with_them(self):
        secret = self.say("My therapist Dr. Quimby thinks my insomnia is from the custody fight with Rebeccah", "t1")
        kept = self.say("Went for a long walk by the river this morning", "t2")
        for turn, question in (("t3", "who is Quimby?"), ("t4", "please forget what I said about Rebeccah"),
                               ("t5", "where did I walk?")):
            receipts.preflight(self.root, question, turn_id=turn, tier="skip")
            probe(self.root, question, turn_id=turn)
        forget.forget(self.root, secret, confirm=True)
        for word in ("Quimby", "Rebeccah"):
            self.assertEqual(holding(self.root, word), [], word)
        # a read that did not serve it keeps its question, and the walk is still found
        self.assertTrue(holding(self.root, "where did I walk"))
        self.assertIn(kept, [r["id"] for r in probe(self.root, "walk by the river", maintenance=True)["top"]])

    def test_records_in_latin_letters_leave_no_words_in_the_ids_that_outlive_them(self):
        secret = self.say("My sister Annie is pregnant, nobody else knows yet", "t1")
        annie = records.add_record(self.root, kind="entity", entity_type="person", title="Annie")["id"]
        event = records.add_record(self.root, kind="event", title="Annie is pregnant", capture_ids=[secret],
                                   entity_refs=[annie])["id"]
        ledger.finalize(self.root, secret, "derived")  # the ledger line names the records derived from it
        out = forget.forget(self.root, secret, confirm=True)
        self.assertEqual(sorted(out["records_removed"]), sorted([event, annie]))
        for word in ("Annie", "annie", "pregnant"):
            self.assertEqual(holding(self.root, word), [], word)
        self.assertEqual(validate.validate(self.root)["status"], "clean")

    def test_a_renamed_copy_of_a_transcript_does_not_bring_forgotten_lines_back(self):
        first = write(os.path.join(self.tmp, "chat-export.txt"), "me: 我借了表哥五万块\nAnna: 什么时候还？\nme: 年底吧\n")
        out = history.import_history(self.root, "text", first)
        forget.forget(self.root, out["mapping"]["line-1"], confirm=True)
        copy = write(os.path.join(self.tmp, "chat-export (1).txt"), Path(first).read_text(encoding="utf-8") + "Anna: 好的\n")
        again = history.import_history(self.root, "text", copy)
        self.assertEqual(again["imported"], 1)  # only the new last line
        self.assertEqual(again["already_present"], 2)
        self.assertEqual([s["ref"] for s in again["skipped"]], ["line-1"])
        self.assertEqual(holding(self.root, "五万块"), [])

    def test_an_imported_message_that_gives_a_password_is_left_out_and_said_to_be(self):
        chat = write(os.path.join(self.tmp, "chat.txt"),
                     "me: 家里wifi密码是tplink8899，你来了直接连\nAnna: 好的，周六见\nme: 周六我做红烧肉\n")
        out = history.import_history(self.root, "text", chat)
        self.assertEqual(out["imported"], 2)
        self.assertEqual(out["skipped"], [{"ref": "line-1", "why": history.CREDENTIAL_SKIPPED}])
        self.assertEqual(holding(self.root, "tplink8899"), [])
        self.assertTrue(holding(self.root, "红烧肉"))


    def test_a_whatsapp_export_and_a_later_one_of_the_same_chat_add_each_message_once(self):
        lines = ["[14/03/2024, 09:12:40] Sam: \u200eMessages and calls are end-to-end encrypted.",
                 "[14/03/2024, 09:15:02] Lin: the scan was clear, follow-up in six months"]
        first = write(os.path.join(self.tmp, "WhatsApp Chat - Sam.txt"), "\n".join(lines) + "\n")
        out = history.import_history(self.root, "whatsapp", first, user_speaker="Lin")
        self.assertEqual((out["imported"], [s["ref"] for s in out["skipped"]]), (1, ["line-1"]))
        self.assertEqual(holding(self.root, "end-to-end"), [])  # the app's notice is nobody's words
        later = write(os.path.join(self.tmp, "later.txt"), "\n".join(lines + ["[16/03/2024, 19:40:05] Sam: dinner saturday?"]) + "\n")
        again = history.import_history(self.root, "whatsapp", later, user_speaker="Lin")
        self.assertEqual((again["imported"], again["already_present"]), (1, 1))
        top = probe(self.root, "what did the scan show", maintenance=True)["top"][0]
        self.assertEqual((top["id"], top["occurred_at"]), (out["mapping"]["line-2"], "2024-03-14T09:15:02Z"))
        # a day of the chat is a session: the reply, which shares no word with the question, sits next to it
        asked = write(os.path.join(self.tmp, "asked.txt"), "[20/03/2024, 10:00:00] Lin: did the lab call about the biopsy?\n"
                      "[20/03/2024, 10:01:00] Sam: yes!! benign, nothing to worry about\n")
        reply = history.import_history(self.root, "whatsapp", asked, user_speaker="Lin")["mapping"]["line-2"]
        self.assertIn(reply, [r["id"] for r in probe(self.root, "what did the lab say about the biopsy?",
                                                     maintenance=True)["top"]])


    def test_a_telegram_export_is_imported_once_and_a_forwarded_text_is_not_the_owners(self):
        fixture = Path(__file__).resolve().parent / "fixtures" / "import" / "telegram_result.json"
        out = history.import_history(self.root, "telegram", str(fixture))
        self.assertEqual((out["imported"], [s["ref"] for s in out["skipped"]]), (4, ["4410021:101"]))
        again = history.import_history(self.root, "telegram", str(fixture))
        self.assertEqual((again["imported"], again["already_present"]), (0, 4))
        top = probe(self.root, "what did Ruth say about the letter", maintenance=True)["top"][0]
        self.assertEqual(top["id"], out["mapping"]["4410021:106"])
        row = open_index(self.root).capture(out["mapping"]["4410021:105"])
        union = json.loads(Path(self.root, row["path"]).read_text("utf-8"))
        self.assertEqual((union["speaker"], union["role"]), ("Tenants Union", "other"))


def full_disk_after(n):
    """storage.write_once refusing with DISK_FULL once n files are written (a patch, used with `with`)."""
    from unittest import mock

    real = storage.write_once
    written = []

    def write_once(root, target, data, **kwargs):
        written.append(target)
        if len(written) > n:
            raise PuError("DISK_FULL", "no space left", "free some")
        return real(root, target, data, **kwargs)

    return mock.patch.object(storage, "write_once", write_once)


class ResumableImportTest(Base):
    LINES = [{"ref": f"m{i}", "speaker": "me", "text": f"第{i}句：那年夏天在海边"} for i in range(5)]

    def history_file(self):
        return write(os.path.join(self.tmp, "h.jsonl"), "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in self.LINES))

    def test_a_killed_import_is_completed_by_running_it_again(self):
        from unittest import mock

        path = self.history_file()
        real = storage.write_once
        written = []

        def killed_after_three(root, target, data, **kwargs):
            if len(written) == 3:
                raise KeyboardInterrupt  # SIGKILL: no cleanup, no ledger lines
            written.append(target)
            return real(root, target, data, **kwargs)

        with mock.patch.object(storage, "write_once", killed_after_three), \
                mock.patch.object(storage, "append_jsonl", side_effect=KeyboardInterrupt):
            with self.assertRaises(KeyboardInterrupt):
                history.import_history(self.root, "jsonl", path)
        forget_cached()
        self.say("今天天气不错", "t1")
        cid = open_index(self.root).turn_capture_ids("t1")[0]
        ledger.finalize(self.root, cid, "no-derivation-needed", "weather small talk, nothing to keep")
        again = history.import_history(self.root, "jsonl", path)
        self.assertEqual((again["imported"], again.get("resumed")), (5, 3))
        self.assertEqual(len(set(again["mapping"].values())), 5)
        self.assertTrue(gate.session_check(self.root, "t1")["obligations_met"])
        self.assertEqual(validate.validate(self.root)["status"], "clean", validate.validate(self.root)["problems"])

    def test_repair_closes_the_files_of_a_killed_import(self):
        from unittest import mock

        with mock.patch.object(storage, "append_jsonl", side_effect=KeyboardInterrupt):
            with self.assertRaises(KeyboardInterrupt):
                history.import_history(self.root, "jsonl", self.history_file())
        forget_cached()
        ledger.repair(self.root)
        self.assertEqual(open_index(self.root).pending_capture_ids(), [])
        self.say("今天天气不错", "t1")
        cid = open_index(self.root).turn_capture_ids("t1")[0]
        ledger.finalize(self.root, cid, "no-derivation-needed", "weather small talk, nothing to keep")
        self.assertTrue(gate.session_check(self.root, "t1")["obligations_met"])

    def test_a_full_disk_part_way_is_finished_by_the_next_run(self):
        path = self.history_file()
        with full_disk_after(2):
            with self.assertRaises(PuError):
                history.import_history(self.root, "jsonl", path)
        self.assertEqual(len(open_index(self.root).db.execute("SELECT * FROM captures").fetchall()), 2)
        again = history.import_history(self.root, "jsonl", path)
        self.assertEqual((again["imported"], again["already_present"]), (3, 2))
        self.assertEqual(open_index(self.root).pending_capture_ids(), [])

    def test_a_full_disk_in_a_later_batch_keeps_every_file_written_before_it(self):
        from unittest import mock

        path = self.history_file()
        # batches of two: the first is registered, then the second fails at its second file
        with mock.patch.object(history, "BATCH", 2), full_disk_after(3):
            with self.assertRaises(PuError) as ctx:
                history.import_history(self.root, "jsonl", path)
        self.assertEqual(ctx.exception.code, "DISK_FULL")
        forget_cached()
        self.assertEqual(len(open_index(self.root).db.execute("SELECT * FROM captures").fetchall()), 3)
        self.assertEqual(open_index(self.root).pending_capture_ids(), [])
        on_disk = sorted(p.name for p in Path(self.root, "sources", "conversation").rglob("*.json"))
        self.assertEqual(len(on_disk), 3)  # nothing written that the ledger does not name
        with mock.patch.object(history, "BATCH", 2):
            again = history.import_history(self.root, "jsonl", path)
        self.assertEqual((again["imported"], again["already_present"]), (2, 3))
        self.assertEqual(validate.validate(self.root)["status"], "clean", validate.validate(self.root)["problems"])


class ResumableImportWriteAheadTest(ResumableImportTest):
    """The same imports with the capture files made by the writer thread after the first one
    (as on a disk where making a file is slow): a write error or an interrupt in that thread leaves
    no file unregistered, and the next run finishes the import."""

    def setUp(self):
        super().setUp()
        from unittest import mock

        for name, value in (("threaded", True), ("PROBE", 1), ("HANDED", 2)):
            patch = mock.patch.object(history._Writes, name, value)
            patch.start()
            self.addCleanup(patch.stop)

    def test_an_interrupt_while_indexing_registers_the_files_the_thread_made_meanwhile(self):
        from unittest import mock

        path = self.history_file()
        real_write, real_register = storage.write_once, history._register
        made, calls = [], []

        def write_once(root, target, data, **kwargs):
            made.append(target)
            return real_write(root, target, data, **kwargs)

        def register(*args, **kwargs):
            calls.append(len(args[1]))
            if len(calls) == 2:  # Ctrl-C while the thread's first file is indexed, once it made every file
                for _ in range(500):
                    if len(made) == len(self.LINES):
                        break
                    time.sleep(0.01)
                raise KeyboardInterrupt
            return real_register(*args, **kwargs)

        with mock.patch.object(history, "BATCH", 1), mock.patch.object(storage, "write_once", write_once), \
                mock.patch.object(history, "_register", register):
            with self.assertRaises(KeyboardInterrupt):
                history.import_history(self.root, "jsonl", path)
        self.assertEqual(calls, [1, 1, 4])  # the finally registers that file with the three the thread made after it
        forget_cached()
        on_disk = list(Path(self.root, "sources", "conversation").rglob("*.json"))
        self.assertEqual(len(open_index(self.root).db.execute("SELECT * FROM captures").fetchall()), len(on_disk))
        self.assertEqual(open_index(self.root).pending_capture_ids(), [])
        again = history.import_history(self.root, "jsonl", path)
        self.assertEqual((again["imported"], again["already_present"]), (0, 5))

    def test_the_thread_is_used_only_where_making_a_file_is_slow(self):
        from unittest import mock

        for slow_file, used in ((3600.0, False), (0.0, True)):
            started = []
            real = history._Writes._write
            with mock.patch.object(history._Writes, "threaded", None), \
                    mock.patch.object(history._Writes, "SLOW_FILE", slow_file), \
                    mock.patch.object(history._Writes, "_write", lambda me, planned: started.append(1) or real(me, planned)):
                lines = [{"ref": f"s{slow_file}-{i}", "speaker": "me", "text": f"slow {slow_file} {i}"} for i in range(4)]
                path = write(os.path.join(self.tmp, f"{used}.jsonl"), "".join(json.dumps(x) + "\n" for x in lines))
                self.assertEqual(history.import_history(self.root, "jsonl", path)["imported"], 4)
            self.assertEqual(bool(started), used)

    def test_the_writer_thread_makes_the_same_archive(self):
        from unittest import mock

        lines = [{"ref": f"m{i}", "speaker": "me" if i % 2 else "Ann", "text": f"第{i}次去海边 swim #{i}",
                  "occurred_at": f"2024-05-{1 + i % 28:02d}T10:00:00Z"} for i in range(40)]
        path = write(os.path.join(self.tmp, "many.jsonl"), "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines))
        other = os.path.join(self.tmp, "other")
        shutil.copytree(self.root, other)
        now = timeutil.parse_instant("2026-01-02T03:04:05Z")
        with mock.patch.object(history, "BATCH", 7):
            ahead = history.import_history(self.root, "jsonl", path, now=now)
            with mock.patch.object(history._Writes, "threaded", False):
                inline = history.import_history(other, "jsonl", path, now=now)
        self.assertEqual(ahead, dict(inline, file=ahead["file"]))
        self.assertEqual(ahead["imported"], 40)
        made = self.snapshot()
        self.assertEqual(len([k for k in made if k.startswith("sources/conversation/")]), 40)
        self.assertEqual(self.snapshot(other), made)  # the same files, ledger lines and bytes
        forget_cached()
        self.assertEqual(validate.validate(self.root)["status"], "clean", validate.validate(self.root)["problems"])
        top = probe(self.root, "第17次去海边", maintenance=True)["top"][0]
        self.assertEqual(top["id"], ahead["mapping"]["m17"])


class ImportHelperTest(Base):
    """A large import has a helper process read its messages' time expressions a chunk ahead
    (retrieval/ahead.py): the index holds what this process would have read, with the helper,
    without it, and when it stops part-way."""

    LINES = [{"ref": f"h{i}", "speaker": "me" if i % 3 else "Ann", "occurred_at": f"2024-03-{1 + i % 28:02d}T09:00:00Z",
              "text": ["昨天和外婆去了公园", "what did you do last weekend?", "下周三要去看牙医", "今天好累",
                       "we met two days ago at the lake", "明天考试吗"][i % 6] + f" #{i}"} for i in range(23)]

    def setUp(self):
        super().setUp()
        from unittest import mock

        for name, value in (("MIN_MESSAGES", 1), ("CHUNK", 4)):
            patch = mock.patch.object(ahead, name, value)
            patch.start()
            self.addCleanup(patch.stop)
        self.path = write(os.path.join(self.tmp, "h.jsonl"),
                          "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in self.LINES))

    def rdocs(self, root):
        forget_cached()
        return open_recall(root).db.execute(
            "SELECT doc, asks, dated, told_from, told_to, terms FROM rdocs ORDER BY doc").fetchall()

    def imported(self, root, **patches):
        from unittest import mock

        with mock.patch.object(history, "BATCH", 3), mock.patch.multiple(ahead.Readings, **patches) if patches \
                else contextlib.nullcontext():
            out = history.import_history(root, "jsonl", self.path)
        self.assertEqual(out["imported"], len(self.LINES))
        return self.rdocs(root)

    def test_the_helper_reads_what_this_process_would(self):
        from unittest import mock

        alone = os.path.join(self.tmp, "alone")
        archive.init_archive(alone)
        asked = []
        real = ahead.Readings.take

        def take(me, ids):
            found = real(me, ids)
            asked.append((len(ids), len(found)))
            return found

        with mock.patch.object(index, "capture_reading", wraps=index.capture_reading) as here, \
                mock.patch.object(index, "tokenize", wraps=index.tokenize) as tokenized:
            helped = self.imported(self.root, take=take)
        # every reading after the first chunk (indexed before the helper could have read it) came from
        # the helper, and most texts' words too (one that made a new archive word is read again here)
        self.assertEqual(here.call_count, ahead.CHUNK)
        self.assertLess(tokenized.call_count, len(self.LINES) / 2)
        with mock.patch.object(ahead, "MIN_MESSAGES", 10 ** 6):
            self.assertEqual(self.imported(alone), helped)
        self.assertEqual((sum(n for n, _f in asked), sum(f for _n, f in asked)), (len(self.LINES), len(self.LINES) - 4))
        told = [r for r in helped if r[3]]
        self.assertTrue(told and any(r[1] for r in helped))  # days told and questions were read

    def test_a_helper_that_stops_part_way_leaves_the_rest_to_this_process(self):
        alone = os.path.join(self.tmp, "alone")
        archive.init_archive(alone)
        real = ahead.Readings.take
        calls = []

        def take(me, ids):
            calls.append(1)
            if len(calls) == 2:
                me._proc.kill()  # gone without a word, part-way through the import
            return real(me, ids)

        helped = self.imported(self.root, take=take)
        self.assertEqual(helped, self.imported(alone, take=lambda me, ids: {}))
        self.assertEqual(validate.validate(self.root)["status"], "clean")

    def test_no_helper_is_started_by_an_application_that_embeds_python(self):
        from unittest import mock

        with mock.patch.object(sys, "executable", "/Applications/Notes.app/Contents/MacOS/Notes"), \
                mock.patch.object(subprocess, "Popen") as popen:
            readings = ahead.Readings([(f"c{i}", "今天好累", "2024-03-01") for i in range(10)])
            self.assertEqual(readings.take(["c7"]), {})
            readings.close()
        popen.assert_not_called()

    def test_a_reading_for_another_text_or_day_is_worked_out_again(self):
        say = "我们下周三去看牙医"
        cid = "cap-ahead-1"
        doc = {"capture_id": cid, "text": say, "occurred_at": "2024-03-04T09:00:00Z", "captured_at": "2024-03-04T09:00:00Z"}
        wrong = (1, 1, "1999-01-01", "1999-01-01")
        self.assertEqual(index.capture_reading(say, "2024-03-04")[2:], ("2024-03-13", "2024-03-13"))
        self.assertEqual(self.reading_indexed(doc, {cid: (say, "2024-03-04", wrong, None)}), wrong)  # taken as sent
        for text, day in ((say + "!", "2024-03-04"), (say, "2024-03-05")):
            self.assertEqual(self.reading_indexed(doc, {cid: (text, day, wrong, None)}), (0, 1, "2024-03-13", "2024-03-13"))

    def test_terms_read_with_other_archive_words_are_taken_only_when_the_text_holds_the_same_ones(self):
        from personal_understanding.retrieval.lexicon import Lexicon

        helper = Lexicon(["阿福猫", "小雨点"])  # what the helper held
        here = Lexicon(["阿福猫", "小雨点", "豆豆酱", "k歌房"])  # two words learned since
        for text in ("阿福猫今天又去找小雨点玩了", "周末去唱歌，k歌房很吵", "豆豆酱拌面", "nothing in common"):
            theirs, mine = index.text_terms(text, helper), index.text_terms(text, here)
            if theirs[2] == mine[2]:
                self.assertEqual(theirs[1:], mine[1:])  # the same archive words in it: the same terms
            else:
                self.assertIn(text, ("周末去唱歌，k歌房很吵", "豆豆酱拌面"))
                self.assertNotEqual(theirs[4], mine[4])  # and taking them would have been wrong

    def test_words_the_archive_learned_before_and_during_the_import_are_read_alike(self):
        alone = os.path.join(self.tmp, "alone")
        archive.init_archive(alone)
        names = ["阿福猫", "豆豆酱", "喵小咪", "团团圆"]
        before = write(os.path.join(self.tmp, "before.jsonl"), "".join(
            json.dumps({"ref": f"b{i}", "speaker": "me", "text": f"{names[i % 2]}今天很乖 {i}"}, ensure_ascii=False) + "\n"
            for i in range(4)))
        self.LINES = [dict(line, text=f"{names[i % 4]}和{names[(i + 1) % 4]}{line['text']}") for i, line in enumerate(self.LINES)]
        self.path = write(os.path.join(self.tmp, "h2.jsonl"),
                          "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in self.LINES))
        for root in (self.root, alone):
            history.import_history(root, "jsonl", before)
        self.assertIn("阿福猫", open_recall(alone).archive_words())
        helped = self.imported(self.root)
        self.assertEqual(self.imported(alone, take=lambda me, ids: {}), helped)
        self.assertIn("喵小咪", open_recall(self.root).archive_words())

    def reading_indexed(self, doc, known):
        """Index one capture with `known` readings offered; its (asks, dated, told_from, told_to) as kept."""
        from unittest import mock

        recall = open_recall(self.root)
        row = {"capture_id": doc["capture_id"], "occurred_at": doc["occurred_at"], "speaker": "me"}
        recall.known_readings = known
        with mock.patch.object(recall, "_add", lambda key, doc_no, parts, meta, learn, channel, ahead: self.kept.append(meta)):
            self.kept = []
            recall._add_capture(row, doc, 1, True)
        meta = self.kept[0]
        return meta[13], meta[14], meta[5], meta[6]


class ImportCliTest(Base):
    def test_a_bad_line_refuses_the_file_unless_skip_invalid_and_help_names_the_date_forms(self):
        lines = [{"ref": "a", "speaker": "Mel", "text": "we met at the lake", "occurred_at": "1:56 pm on 8 May, 2023"},
                 {"ref": "b", "speaker": "Mel", "text": "and again", "occurred_at": "sometime in May"},
                 {"ref": "c", "speaker": "Mel", "text": "then at home", "occurred_at": "May 9, 2023"}]
        path = write(os.path.join(self.tmp, "h.jsonl"), "".join(json.dumps(x) + "\n" for x in lines))
        before = self.snapshot()
        code, out, _ = self.cli("import_history", path, "--format", "jsonl")
        self.assertEqual((code, out["error"]["code"]), (1, "IMPORT_INVALID"))
        self.assertIn(f"{path}:2", out["error"]["message"])
        self.assertIn("Nothing was imported", out["error"]["hint"])
        self.assertUnchanged(before)
        code, out, _ = self.cli("import_history", path, "--format", "jsonl", "--skip-invalid")
        self.assertEqual((code, out["imported"]), (0, 2))
        self.assertEqual([i["line"] for i in out["invalid"]], [2])
        self.assertEqual(open_index(self.root).capture(out["mapping"]["a"])["occurred_at"], "2023-05-08T13:56:00Z")
        help_text = subprocess.run([sys.executable, str(SCRIPTS / "import_history.py"), "--help"],
                                   capture_output=True, text=True, timeout=60).stdout
        self.assertIn("1:56 pm on 8 May, 2023", help_text)
        self.assertIn("--skip-invalid", help_text)


class RepairTest(Base):
    def test_a_torn_record_tail_is_set_aside_and_unblocks_the_gate(self):
        cid = self.say("我开始学游泳了", "t1")
        records.add_record(self.root, kind="event", title="开始学游泳", capture_ids=[cid])
        ledger.finalize(self.root, cid, "derived")
        with open(paths.records_path(self.root, "event"), "ab") as handle:
            handle.write(b'{"id": "event-x", "kind": "ev')  # killed mid-append
        self.assertFalse(gate.session_check(self.root, "t1")["obligations_met"])
        out = ledger.repair(self.root)
        self.assertEqual([w["code"] for w in out["warnings"]], ["TORN_TAIL_SET_ASIDE"])
        torn = Path(str(paths.records_path(self.root, "event")) + ".torn")
        self.assertEqual(torn.read_bytes(), b'{"id": "event-x", "kind": "ev\n')
        self.assertTrue(gate.session_check(self.root, "t1")["obligations_met"])
        report = validate.validate(self.root)
        self.assertEqual((report["status"], report["problems"][0].split(": ")[1].split(" ")[0]),
                         ("warnings", "TORN_TAIL_SET_ASIDE"))

    def test_views_replaced_by_a_file_or_holding_garbage_are_rebuilt(self):
        self.say("我开始学游泳了", "t1")
        self.cli("open_dashboard", "--no-open")
        views = paths.views_dir(self.root)
        for damage in ("garbage files", "views is a file", "dashboard is a file"):
            if damage == "garbage files":
                for path in views.rglob("*"):
                    if path.is_file():
                        path.write_bytes(b"\x00garbage")
            elif damage == "views is a file":
                shutil.rmtree(views)
                views.write_bytes(b"not a folder")
            else:
                shutil.rmtree(views / "dashboard")
                (views / "dashboard").write_bytes(b"not a folder")
            forget_cached()
            for script, *args in (("retrieve_v2", "--maintenance", "游泳"), ("session_check", "--turn-id", "t1"),
                                  ("open_dashboard", "--no-open"), ("rebuild_views",), ("pipeline_view", "--turn-id", "t1")):
                code, out, err = self.cli(script, *args)
                self.assertNotEqual((out or {}).get("error", {}).get("code"), "INTERNAL_ERROR", f"{damage}: {script}: {out}")
            self.assertIn("t1", probe(self.root, "游泳", maintenance=True)["top"][0]["id"] + "t1")


class ReimportTest(Base):
    def test_reimport_cannot_resurrect(self):
        path = write(os.path.join(self.tmp, "h.jsonl"), json.dumps(
            {"ref": "m1", "speaker": "me", "text": "secret plan", "occurred_at": "2024-01-01"}) + "\n")
        cid = history.import_history(self.root, "jsonl", path)["mapping"]["m1"]
        forget.forget(self.root, cid, confirm=True)
        again = history.import_history(self.root, "jsonl", path)
        self.assertEqual(again["imported"], 0)
        self.assertIn("forgotten", again["skipped"][0]["why"])


class TiersAndCapsTest(Base):
    def test_tiers_are_computed_and_caps_refuse_whole(self):
        self.say("很久以前的一句话", "t1", day="2026-01-01")
        self.say("刚刚说的话", "t2")
        summary = tiers.summary(self.root)
        self.assertEqual(summary["short_term"]["captures"], 1)
        self.assertEqual(summary["long_term"]["captures"], 1)
        self.assertGreater(summary["bytes_on_disk"], 0)
        used = tiers.archive_bytes(self.root)
        with storage.archive_lock(self.root):
            storage.atomic_write_json(self.root, paths.config_path(self.root), {"max_archive_bytes": used + 200})
        receipts.preflight(self.root, "再说一句很长的话" * 40, turn_id="t3", tier="full")
        before = self.snapshot()
        with self.assertRaises(PuError) as ctx:
            capture.capture_text(self.root, "再说一句很长的话" * 40, "t3")
        self.assertEqual(ctx.exception.code, "ARCHIVE_FULL")
        self.assertUnchanged(before)


    def test_an_import_over_the_cap_writes_nothing(self):
        lines = [json.dumps({"ref": f"m{i}", "speaker": "me", "text": "很长的一段往事" * 30}) for i in range(5)]
        path = write(os.path.join(self.tmp, "h.jsonl"), "\n".join(lines) + "\n")
        with storage.archive_lock(self.root):
            storage.atomic_write_json(self.root, paths.config_path(self.root),
                                      {"max_archive_bytes": tiers.archive_bytes(self.root) + 2000})
        self.refused("ARCHIVE_FULL", history.import_history, self.root, "jsonl", path)


class ReviewTest(Base):
    def test_feedback_needs_words_and_review_lists_risky_items(self):
        cid = self.say("我表姐下个月可能要来杭州", "t1")
        rid = records.add_record(self.root, kind="fact", title="表姐可能要来杭州", capture_ids=[cid],
                                 unresolved_referents=["她"])["id"]
        with self.assertRaises(PuError) as ctx:
            review.record_feedback(self.root, "cap-none", "missed", [rid])
        self.assertEqual(ctx.exception.code, "FEEDBACK_NEEDS_WORDS")
        fb = self.say("不对，是堂姐", "t2")
        review.record_feedback(self.root, fb, "corrected", [rid], note="堂姐不是表姐")
        review.record_feedback(self.root, fb, "missed", [rid])
        before = self.snapshot()
        out = review.review_v2(self.root, deep=True)
        self.assertUnchanged(before)
        checks = {(i["check"], i["id"]) for i in out["items"]}
        for check in ("attribution", "layer_mixing", "feedback_miss_streak"):
            self.assertIn((check, rid), checks)
        item = next(i for i in out["items"] if i["check"] == "layer_mixing")
        self.assertEqual(item["words"]["capture_id"], cid)

    def test_salience_review_demotes_only_unconfirmed_imports(self):
        old = timeutil.parse_instant("2025-01-01")
        a = records.add_record(self.root, kind="fact", title="以前的总结 A", fidelity="summary_only", salience=2,
                               salience_basis="imported-heuristic", now=old)["id"]
        b = records.add_record(self.root, kind="fact", title="以前的总结 B", fidelity="summary_only", salience=2,
                               salience_basis="imported-heuristic", now=old)["id"]
        fb = self.say("B 这个记得没错", "t1")
        review.record_feedback(self.root, fb, "helpful", [b])
        dry = review.salience_review(self.root)
        self.assertEqual([d["id"] for d in dry["would_demote"]], [a])
        self.assertEqual(open_index(self.root).record(a)["salience"], 2)
        done = review.salience_review(self.root, apply=True)
        self.assertEqual(done["demoted"], [a])
        self.assertEqual(open_index(self.root).record(a)["salience"], 0)
        self.assertIn(a, [r["id"] for r in probe(self.root, "总结 A", maintenance=True)["top"]])


class RebuildTest(Base):
    def dump(self):
        db = open_index(self.root).db
        probe(self.root, "火锅", maintenance=True)  # brings the recall index up to date
        out = {}
        for table, cols in (("receipts", "turn_id, at, size, redacted"),
                            ("captures", "capture_id, status, reason, path, sha256, turn_id, extra"),
                            ("records", "id, version, status, at, size, withheld, data"), ("record_refs", "record_id, rel, target"),
                            ("followups", "id, version, data"), ("tombstones", "id, data"),
                            ("rwords", "word"), ("raliases", "alias, entity"), ("rngrams", "ngram, df"),
                            ("rterms", "term, df"), ("rstats", "channel, n, round(total, 6)")):
            out[table] = sorted(db.execute(f"SELECT {cols} FROM {table}").fetchall())
        rows = open_recall(self.root).docs_where("1")
        out["rdocs"] = sorted((r["key"], r["channel"], r["kind"], r["status"], round(r["length"], 6), r["date_from"], r["title"])
                              for r in rows)
        key_of = {r["doc"]: r["key"] for r in rows}
        out["rpost"] = sorted((key_of[doc], term, round(tf, 6)) for doc, term, tf in db.execute(
            "SELECT p.doc, t.term, p.tf FROM rpost p JOIN rterms t ON t.id = p.term"))
        index = open_index(self.root)
        out["read back"] = sorted(json.dumps(r, sort_keys=True) for r in index.records_where("1"))
        out["read back"] += sorted(json.dumps(index.receipt(t), sort_keys=True) for (t,) in db.execute("SELECT turn_id FROM receipts"))
        return out

    def test_rebuild_equals_incremental(self):
        a = self.say("和阿呆呆去吃火锅", "t1")
        b = self.say("阿呆呆说火锅太辣", "t2")
        ent = records.add_record(self.root, kind="entity", entity_type="person", title="阿呆呆", aliases=["呆呆"])["id"]
        rid = records.add_record(self.root, kind="event", title="吃火锅", capture_ids=[a, b], entity_refs=[ent])["id"]
        records.update_state(self.root, id=records.add_record(self.root, kind="state", title="爱吃辣", capture_ids=[a])["id"],
                             capture_ids=[b], title="不太能吃辣")
        followups.add_followup(self.root, "下次还去吗？", a)
        forget.forget(self.root, rid, confirm=True)
        incremental = self.dump()
        out = views.rebuild_views(self.root)
        self.assertIn("memory/derivation-ledger.json", out["rebuilt"])
        forget_cached()
        self.assertEqual(self.dump(), incremental)


class BadInputTest(Base):
    def test_symlinked_folder_inside_sources_is_refused(self):
        outside = os.path.join(self.tmp, "outside")
        os.makedirs(outside)
        year = timeutil.now().strftime("%Y")
        os.symlink(outside, os.path.join(self.root, "sources", "conversation", year))
        receipts.preflight(self.root, "我今天很开心", turn_id="t1", tier="full")
        before = self.snapshot()
        with self.assertRaises(PuError) as ctx:
            capture.capture_text(self.root, "我今天很开心", "t1")
        self.assertEqual(ctx.exception.code, "ARCHIVE_SYMLINK")
        self.assertEqual(os.listdir(outside), [])
        self.assertUnchanged(before)

    def test_full_disk_during_capture_leaves_nothing(self):
        from unittest import mock
        real_write = os.write

        def full(fd, data):
            if len(data) > 100:
                raise OSError(28, "No space left on device")
            return real_write(fd, data)

        receipts.preflight(self.root, "我今天很开心" * 20, turn_id="t2", tier="full")
        before = self.snapshot()
        with mock.patch("os.write", side_effect=full):
            with self.assertRaises(PuError) as ctx:
                capture.capture_text(self.root, "我今天很开心" * 20, "t2")
        self.assertEqual(ctx.exception.code, "DISK_FULL")
        self.assertIn("capture FAILED", ctx.exception.message)
        self.assertUnchanged(before)
