"""The turn pipeline: preflight receipts, verbatim capture, ledger closure, the gate."""

import json
import os
from pathlib import Path

from tests.helpers import ArchiveTest, write

from personal_understanding import capture, gate, ledger, paths, receipts, storage
from personal_understanding.errors import PuError

PERSONAL = "我最近压力好大，每天加班到很晚，跟我妈打电话都没精神。"
PERSONAL_EN = "I've been dreading going home for the holidays since my dad and I argued."
TECHNICAL = "how do I reverse a list in python"


def receipt_lines(root):
    return [json.loads(x) for x in paths.receipts_path(root).read_text(encoding="utf-8").splitlines()]


class PreflightTest(ArchiveTest):
    def test_personal_message_requires_capture_with_reasons(self):
        out = receipts.preflight(self.root, PERSONAL, turn_id="t1")
        rec = out["receipt"]
        self.assertTrue(rec["requires_personal_understanding"])
        self.assertEqual((rec["signal"], rec["tier"]), ("personal", "full"))
        self.assertTrue(rec["reasons"])
        self.assertIn("capture", rec["required_actions"])
        self.assertEqual(len(rec["message_sha256"]), 64)
        for key in ("turn_id", "message_sha256", "requires_personal_understanding", "signal", "tier", "reasons",
                    "reasons_suppressed", "required_actions"):
            self.assertIn(key, rec)
        self.assertEqual(receipt_lines(self.root), [rec])

    def test_technical_message_is_skipped(self):
        rec = receipts.preflight(self.root, TECHNICAL, turn_id="t1")["receipt"]
        self.assertFalse(rec["requires_personal_understanding"])
        self.assertEqual(rec["tier"], "skip")
        self.assertEqual(rec["required_actions"], [])

    def test_skip_records_what_it_suppresses(self):
        rec = receipts.preflight(self.root, PERSONAL_EN, turn_id="t1", tier="skip")["receipt"]
        self.assertFalse(rec["requires_personal_understanding"])
        self.assertTrue(rec["reasons_suppressed"])
        self.assertEqual(rec["reasons"], [])

    def test_same_turn_different_message_is_refused(self):
        receipts.preflight(self.root, PERSONAL, turn_id="t1")
        before = self.snapshot()
        with self.assertRaises(PuError) as ctx:
            receipts.preflight(self.root, PERSONAL + "!", turn_id="t1")
        self.assertEqual(ctx.exception.code, "TURN_MESSAGE_MISMATCH")
        self.assertUnchanged(before)

    def test_same_turn_same_message_is_idempotent(self):
        receipts.preflight(self.root, PERSONAL, turn_id="t1")
        before = self.snapshot()
        out = receipts.preflight(self.root, PERSONAL, turn_id="t1")
        self.assertTrue(out["repeated"])
        self.assertUnchanged(before)

    def test_full_upgrades_and_downgrade_is_refused(self):
        receipts.preflight(self.root, TECHNICAL, turn_id="t1")
        up = receipts.preflight(self.root, TECHNICAL, turn_id="t1", tier="full")["receipt"]
        self.assertTrue(up["requires_personal_understanding"])
        self.assertEqual((up["version"], up["upgraded_from"]), (2, "skip"))
        before = self.snapshot()
        with self.assertRaises(PuError) as ctx:
            receipts.preflight(self.root, TECHNICAL, turn_id="t1", tier="skip")
        self.assertEqual(ctx.exception.code, "TIER_DOWNGRADE_REFUSED")
        self.assertUnchanged(before)

    def test_low_information_message_takes_the_fast_path(self):
        rec = receipts.preflight(self.root, "唉", turn_id="t1")["receipt"]
        self.assertTrue(rec["low_information"])
        self.assertIn("light_read", rec["required_actions"])

    def test_cli_reads_text_from_positional_file_and_stdin(self):
        code, out, _ = self.cli("preflight_context", PERSONAL, "--turn-id", "a1")
        self.assertEqual(code, 0)
        f = write(os.path.join(self.tmp, "m.txt"), PERSONAL)
        code, out2, _ = self.cli("preflight_context", "--file", f, "--turn-id", "a2")
        code3, out3, _ = self.cli("preflight_context", "--stdin", "--turn-id", "a3", stdin=PERSONAL.encode())
        self.assertEqual((code, code3), (0, 0))
        self.assertEqual(out["receipt"]["message_sha256"], out2["receipt"]["message_sha256"])
        self.assertEqual(out["receipt"]["message_sha256"], out3["receipt"]["message_sha256"])


class CaptureTest(ArchiveTest):
    def setUp(self):
        super().setUp()
        receipts.preflight(self.root, PERSONAL, turn_id="t1")

    def test_capture_saves_exact_bytes_and_verifies(self):
        out = capture.capture_text(self.root, PERSONAL, "t1")
        self.assertTrue(out["captured"] and out["verified"])
        doc = json.loads(Path(self.root, out["path"]).read_text(encoding="utf-8"))
        self.assertEqual(doc["text"], PERSONAL)
        self.assertEqual(doc["utf8_sha256"], out["utf8_sha256"])
        self.assertRegex(out["path"], r"^sources/conversation/\d{4}/\d{2}/cap-")
        self.assertTrue(doc["captured_at"].endswith("Z"))
        self.assertEqual(doc["turn_id"], "t1")

    def test_refusals_leave_the_archive_unchanged(self):
        self.refused("CAPTURE_NO_RECEIPT", capture.capture_text, self.root, PERSONAL, "t-none")
        self.refused("CAPTURE_HASH_MISMATCH", capture.capture_text, self.root, PERSONAL[:-1], "t1")
        self.refused("EMPTY_MESSAGE", capture.capture_text, self.root, "  \n", "t1")
        self.refused("INVALID_UTF8", capture.capture_text, self.root, "bad \udc80 text", "t1")
        self.refused("BAD_ID", capture.capture_text, self.root, PERSONAL, "t1", capture_id="../evil")
        receipts.preflight(self.root, TECHNICAL, turn_id="t2")
        self.refused("CAPTURE_NOT_REQUIRED", capture.capture_text, self.root, TECHNICAL, "t2")

    def test_existing_capture_id_and_repeat_capture_are_refused(self):
        capture.capture_text(self.root, PERSONAL, "t1", capture_id="c-1")
        receipts.preflight(self.root, PERSONAL_EN, turn_id="t3")
        self.refused("CAPTURE_ID_EXISTS", capture.capture_text, self.root, PERSONAL_EN, "t3", capture_id="c-1")
        err = self.refused("CAPTURE_ALREADY_SAVED", capture.capture_text, self.root, PERSONAL, "t1")
        self.assertEqual(err.details["capture_id"], "c-1")

    def test_size_cap_is_enforced(self):
        storage_path = paths.config_path(self.root)
        with storage.archive_lock(self.root):
            storage.atomic_write_json(self.root, storage_path, {"max_message_bytes": 20})
        self.refused("MESSAGE_TOO_LARGE", capture.capture_text, self.root, PERSONAL, "t1")

    def test_cli_invalid_utf8_file_is_refused(self):
        bad = os.path.join(self.tmp, "bad.txt")
        Path(bad).write_bytes(b"\xff\xfe not utf-8")
        before = self.snapshot()
        code, out, _ = self.cli("capture_user_update", "--file", bad, "--turn-id", "t1")
        self.assertEqual(code, 1)
        self.assertEqual(out["error"]["code"], "INVALID_UTF8")
        self.assertUnchanged(before)

    def test_cli_failure_says_failed_and_leaves_nothing(self):
        before = self.snapshot()
        real_append = storage.append_jsonl

        def failing_append(root, path, objs):
            if str(path).endswith("ledger.jsonl"):
                raise OSError(28, "No space left on device")
            return real_append(root, path, objs)

        from unittest import mock
        with mock.patch.object(storage, "append_jsonl", failing_append):
            with self.assertRaises(PuError) as ctx:
                capture.capture_text(self.root, PERSONAL, "t1")
        self.assertIn("capture FAILED", ctx.exception.message)
        self.assertUnchanged(before)

    def test_usage_errors_exit_2(self):
        code, out, _ = self.cli("capture_user_update", "--text", PERSONAL)
        self.assertEqual(code, 2)
        self.assertIn("--turn-id", out["error"]["message"])  # the CLI names its flags
        code, out, _ = self.cli("finalize_capture", "--capture-id", "x", "--disposition", "maybe")
        self.assertEqual(code, 2)


class AttachmentTest(ArchiveTest):
    def setUp(self):
        super().setUp()
        receipts.preflight(self.root, PERSONAL, turn_id="t1")
        self.file = os.path.join(self.tmp, "photo.jpg")
        Path(self.file).write_bytes(b"\x89PNG fake bytes")

    def test_duplicate_bytes_are_stored_once_but_registered_twice(self):
        a = capture.capture_attachment(self.root, self.file, "t1")
        b = capture.capture_attachment(self.root, self.file, "t1", name="again.jpg")
        self.assertNotEqual(a["capture_id"], b["capture_id"])
        self.assertEqual(a["blob"], b["blob"])
        self.assertTrue(b["reused_existing_bytes"])
        self.assertEqual(Path(self.root, a["blob"]).read_bytes(), b"\x89PNG fake bytes")

    def test_names_cannot_escape(self):
        for name in ("../evil.jpg", "/etc/passwd", "a/b.jpg", "..", "a\\b", "x\x00y"):
            before = self.snapshot()
            with self.assertRaises(PuError) as ctx:
                capture.capture_attachment(self.root, self.file, "t1", name=name)
            self.assertEqual(ctx.exception.code, "ATTACHMENT_BAD_NAME", name)
            self.assertUnchanged(before)

    def test_links_are_refused(self):
        link = os.path.join(self.tmp, "link.jpg")
        os.symlink(self.file, link)
        with self.assertRaises(PuError) as ctx:
            capture.capture_attachment(self.root, link, "t1")
        self.assertEqual(ctx.exception.code, "ATTACHMENT_SYMLINK")
        # a link planted inside sources/ must not carry bytes out of the archive
        import hashlib
        digest = hashlib.sha256(b"\x89PNG fake bytes").hexdigest()
        outside = os.path.join(self.tmp, "outside")
        os.makedirs(outside)
        os.symlink(outside, os.path.join(self.root, "sources", "attachments", digest[:2]))
        before = self.snapshot()
        with self.assertRaises(PuError) as ctx:
            capture.capture_attachment(self.root, self.file, "t1")
        self.assertEqual(ctx.exception.code, "ARCHIVE_SYMLINK")
        self.assertEqual(os.listdir(outside), [])
        self.assertUnchanged(before)


class LedgerTest(ArchiveTest):
    def setUp(self):
        super().setUp()
        receipts.preflight(self.root, PERSONAL, turn_id="t1")
        self.cid = capture.capture_text(self.root, PERSONAL, "t1")["capture_id"]

    def test_derived_needs_a_record(self):
        before = self.snapshot()
        with self.assertRaises(PuError) as ctx:
            ledger.finalize(self.root, self.cid, "derived")
        self.assertEqual(ctx.exception.code, "LEDGER_NO_RECORDS")
        self.assertUnchanged(before)

    def test_no_derivation_needs_a_specific_reason(self):
        for reason in (None, "", "n/a", "none", "无", "ok"):
            with self.assertRaises(PuError) as ctx:
                ledger.finalize(self.root, self.cid, "no-derivation-needed", reason)
            self.assertEqual(ctx.exception.code, "LEDGER_REASON_REQUIRED")
        out = ledger.finalize(self.root, self.cid, "no-derivation-needed", "venting only; nothing new about her life")
        self.assertEqual(out["status"], "no-derivation-needed")

    def test_repair_registers_a_capture_file_missing_from_the_ledger(self):
        events = paths.ledger_events_path(self.root)
        lines = events.read_text(encoding="utf-8").splitlines()
        with storage.archive_lock(self.root):
            storage.atomic_write(self.root, events, b"")  # simulate a crash before the ledger line
        audit = ledger.audit(self.root)
        self.assertEqual([f["code"] for f in audit["findings"]], ["CAPTURE_UNREGISTERED"])
        repaired = ledger.repair(self.root)
        self.assertEqual(repaired["repaired"], 1)
        self.assertEqual(ledger.audit(self.root)["findings"], [])
        projection = json.loads(paths.ledger_projection_path(self.root).read_text(encoding="utf-8"))
        self.assertEqual(projection["captures"][self.cid]["status"], "pending")
        self.assertEqual(len(lines), 1)

    def test_repair_removes_temp_files_left_by_killed_writers(self):
        stray = Path(self.root, "sources", "conversation", ".cap-x.json.1a2b.tmp")
        stray.write_bytes(b'{"half": ')
        from personal_understanding import validate
        self.assertIn("STRAY_TEMP_FILE", " ".join(validate.validate(self.root)["problems"]))
        self.assertEqual(ledger.repair(self.root)["stray_temp_files_removed"], 1)
        self.assertFalse(stray.exists())
        self.assertEqual(validate.validate(self.root)["status"], "clean")


class GateTest(ArchiveTest):
    def gate(self, turn, *extra):
        return self.cli("session_check", "--turn-id", turn, *extra)

    def test_exit_codes_follow_the_obligations(self):
        code, out, _ = self.gate("t1")
        self.assertEqual(code, 1)
        self.assertFalse(out["gates"]["turn_receipt"]["ok"])

        receipts.preflight(self.root, TECHNICAL, turn_id="tech")
        code, out, _ = self.gate("tech")
        self.assertEqual(code, 0)
        self.assertFalse(out["may_claim_saved"])  # nothing was saved, nothing may be claimed

        receipts.preflight(self.root, PERSONAL, turn_id="t1")
        code, out, _ = self.gate("t1")
        self.assertEqual((code, out["gates"]["captured"]["ok"]), (1, False))

        cid = capture.capture_text(self.root, PERSONAL, "t1")["capture_id"]
        code, out, _ = self.gate("t1")
        self.assertEqual((code, out["gates"]["closed"]["ok"], out["pending_capture_ids"]), (1, False, [cid]))

        ledger.finalize(self.root, cid, "no-derivation-needed", "small talk about the weather")
        code, out, _ = self.gate("t1")
        self.assertEqual(code, 0, out)
        self.assertTrue(out["may_claim_saved"])
        self.assertEqual(set(out["gates"]), {"turn_receipt", "captured", "closed", "structure"})

    def test_any_pending_capture_fails_the_gate(self):
        receipts.preflight(self.root, PERSONAL, turn_id="t1")
        other = capture.capture_text(self.root, PERSONAL, "t1")["capture_id"]
        receipts.preflight(self.root, PERSONAL_EN, turn_id="t2")
        cid = capture.capture_text(self.root, PERSONAL_EN, "t2")["capture_id"]
        ledger.finalize(self.root, cid, "no-derivation-needed", "already said the same thing yesterday")
        code, out, _ = self.gate("t2")
        self.assertEqual(code, 1)
        self.assertEqual(out["pending_capture_ids"], [other])

    def test_broken_structure_and_edited_capture_fail_the_gate(self):
        receipts.preflight(self.root, PERSONAL, turn_id="t1")
        out = capture.capture_text(self.root, PERSONAL, "t1")
        ledger.finalize(self.root, out["capture_id"], "no-derivation-needed", "small talk about the weather")
        self.assertEqual(self.gate("t1")[0], 0)
        target = Path(self.root, out["path"])
        os.chmod(target, 0o644)
        target.write_text(target.read_text(encoding="utf-8").replace("压力", "动力"), encoding="utf-8")
        code, res, _ = self.gate("t1")
        self.assertEqual(code, 1)
        self.assertEqual(res["gates"]["structure"]["status"], "failed")
        self.assertIn(out["path"], " ".join(res["gates"]["structure"]["problems"]))

    def test_invalid_log_line_fails_the_gate(self):
        receipts.preflight(self.root, TECHNICAL, turn_id="tech")
        with open(paths.receipts_path(self.root), "ab") as handle:
            handle.write(b"garbage\n")
        code, out, _ = self.gate("tech")
        self.assertEqual(code, 1)
        self.assertIn("memory/v2/receipts.jsonl:2: JSONL_INVALID_LINE", " ".join(out["gates"]["structure"]["problems"]))
        code, out, _ = self.gate("tech", "--full")
        self.assertEqual((code, out["gates"]["structure"]["scope"]), (1, "full"))
