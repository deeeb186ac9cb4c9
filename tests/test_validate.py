"""validate_memory: three states, every problem as path:line: code message."""

import json
import os
from pathlib import Path

from tests.helpers import ArchiveTest

from personal_understanding import capture, ledger, paths, receipts, validate

MSG = "我妹妹下个月要结婚了，我有点舍不得。"


class ValidateTest(ArchiveTest):
    def saved(self, turn="t1", text=MSG):
        receipts.preflight(self.root, text, turn_id=turn)
        out = capture.capture_text(self.root, text, turn)
        ledger.finalize(self.root, out["capture_id"], "no-derivation-needed", "mood only; nothing durable to derive")
        return out

    def codes(self, report):
        return sorted({line.split(": ")[1].split(" ")[0] for line in report["problems"]})

    def test_new_and_healthy_archives_are_clean(self):
        self.assertEqual(validate.validate(self.root)["status"], "clean")
        self.saved()
        report = validate.validate(self.root)
        self.assertEqual(report["status"], "clean", report["problems"])
        self.assertEqual(report["checked"]["captures"], 1)

    def test_edited_capture_fails_with_its_path(self):
        out = self.saved()
        target = Path(self.root, out["path"])
        target.write_text(target.read_text(encoding="utf-8").replace("舍不得", "很开心"), encoding="utf-8")
        code, report, stderr = self.cli("validate_memory")
        self.assertEqual(code, 1)
        self.assertEqual(report["status"], "failed")
        self.assertIn(f"{out['path']}: CAPTURE_HASH_MISMATCH", report["problems"][0])
        self.assertIn("CAPTURE_HASH_MISMATCH", stderr)

    def test_missing_capture_file_is_reported_from_ledger_and_receipt(self):
        out = self.saved()
        os.unlink(Path(self.root, out["path"]))
        report = validate.validate(self.root)
        self.assertEqual(report["status"], "failed")
        self.assertEqual(self.codes(report), ["LEDGER_CAPTURE_MISSING", "RECEIPT_CAPTURE_MISSING"])
        self.assertTrue(any(p.startswith("memory/v2/receipts.jsonl:1:") for p in report["problems"]))

    def test_torn_and_invalid_lines(self):
        self.saved()
        with open(paths.ledger_events_path(self.root), "ab") as handle:
            handle.write(b'{"event": "captured", "capture_id": "x"')  # killed mid-write
        report = validate.validate(self.root)
        self.assertEqual(report["status"], "warnings")
        self.assertEqual(self.codes(report), ["JSONL_INCOMPLETE_TAIL"])
        code, _, _ = self.cli("validate_memory", "--strict")
        self.assertEqual(code, 1)
        with open(paths.ledger_events_path(self.root), "ab") as handle:
            handle.write(b"\n")  # now the torn line sits between whole lines
        report = validate.validate(self.root)
        self.assertEqual(report["status"], "failed")
        self.assertIn("memory/v2/ledger.jsonl:3: JSONL_INVALID_LINE", report["problems"][0])

    def test_ledger_rules(self):
        out = self.saved()
        events = paths.ledger_events_path(self.root)
        with open(events, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"event": "captured", "capture_id": out["capture_id"], "path": out["path"],
                                     "utf8_sha256": out["utf8_sha256"], "turn_id": "t1"}) + "\n")
            handle.write(json.dumps({"event": "finalized", "capture_id": "ghost", "disposition": "derived"}) + "\n")
            handle.write(json.dumps({"event": "finalized", "capture_id": out["capture_id"], "disposition": "derived"}) + "\n")
        report = validate.validate(self.root, json=True)
        self.assertEqual(self.codes(report), ["DERIVED_WITHOUT_RECORD", "DUPLICATE_ID", "LEDGER_UNKNOWN_CAPTURE"])
        self.assertEqual({d["line"] for d in report["problem_details"]}, {3, 4, 5})
        with open(events, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"event": "finalized", "capture_id": out["capture_id"],
                                     "disposition": "no-derivation-needed", "reason": " "}) + "\n")
        self.assertIn("NO_DERIVATION_WITHOUT_REASON", self.codes(validate.validate(self.root)))

    def test_pending_captures_fail_only_when_required_closed(self):
        receipts.preflight(self.root, MSG, turn_id="t1")
        capture.capture_text(self.root, MSG, "t1")
        self.assertEqual(validate.validate(self.root)["status"], "clean")
        report = validate.validate(self.root, require_closed_captures=True)
        self.assertEqual(self.codes(report), ["CAPTURE_PENDING"])

    def test_symlink_inside_sources_fails(self):
        os.symlink("/etc", os.path.join(self.root, "sources", "conversation", "elsewhere"))
        self.assertEqual(self.codes(validate.validate(self.root)), ["SOURCES_SYMLINK"])
