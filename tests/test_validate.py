"""validate_memory: three states, every problem as path:line: code message."""

import json
import os
import shutil
from pathlib import Path
from unittest import mock

from tests.helpers import ArchiveTest

from personal_understanding import archive_index, capture, ledger, paths, receipts, validate

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


class IncrementalValidateTest(ArchiveTest):
    """A run reads what the logs gained since the last run and hashes what changed, with a full read's result."""

    def setUp(self):
        super().setUp()
        self.turns = 0

    def saved(self, text=None):
        self.turns += 1
        text = text or f"第{self.turns}次和外婆打电话，她说腿好多了。"
        turn = f"t{self.turns}"
        receipts.preflight(self.root, text, turn_id=turn, tier="full")
        out = capture.capture_text(self.root, text, turn)
        ledger.finalize(self.root, out["capture_id"], "no-derivation-needed", "a call, nothing durable to derive")
        return out

    codes = ValidateTest.codes

    def same_as_a_full_read(self):
        """This run's report equals a from-scratch run on a copy (which leaves this archive's watermark alone)."""
        report = validate.validate(self.root, json=True)
        copy = os.path.join(self.tmp, "copy")
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(self.root, copy, symlinks=True, ignore=shutil.ignore_patterns("views"))
        full = validate.validate(copy, json=True, from_scratch=True)
        self.assertEqual(report["problems"], full["problems"])
        self.assertEqual({k: v for k, v in report["checked"].items() if k not in ("rehashed", "from_scratch")},
                         {k: v for k, v in full["checked"].items() if k not in ("rehashed", "from_scratch")})
        return report

    def append(self, path, *lines):
        with open(path, "ab") as handle:
            for line in lines:
                handle.write((json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8"))

    def test_each_change_gives_the_full_reads_result(self):
        from personal_understanding import records, verified

        with mock.patch.object(verified, "RACY_SECONDS", 0):  # files count as settled at once: cached hashes are used
            first = self.saved()
            self.assertTrue(self.same_as_a_full_read()["checked"]["from_scratch"])
            second = self.saved()
            report = self.same_as_a_full_read()
            self.assertFalse(report["checked"]["from_scratch"])
            self.assertEqual(report["checked"]["rehashed"], 1)  # only the new capture
            rec = records.add_record(self.root, kind="event", title="外婆腿好多了", capture_ids=[first["capture_id"]],
                                     entity_refs=["person-nobody"])["record"]
            self.same_as_a_full_read()
            events = paths.records_path(self.root, "event")
            self.append(events, dict(rec, version=3), dict(rec, id="event-loop-a", supersedes=["event-loop-b"]),
                        dict(rec, id="event-loop-b", supersedes=["event-loop-a"], capture_ids=["cap-ghost"]))
            self.append(paths.ledger_events_path(self.root), {"event": "finalized", "capture_id": "ghost"},
                        {"event": "captured", "capture_id": "bad id\n", "path": "sources/x.json"})
            self.append(paths.receipts_path(self.root), {"type": "receipt", "turn_id": "t-lost",
                                                         "requires_personal_understanding": True})
            with open(paths.receipts_path(self.root), "ab") as handle:
                handle.write(b'{"type": "receipt"')  # an unfinished line
            codes = self.codes(self.same_as_a_full_read())
            for code in ("DANGLING_REFERENCE", "RECORD_VERSION_GAP", "SUPERSEDE_CYCLE", "RECORD_CITES_MISSING_CAPTURE",
                         "LEDGER_UNKNOWN_CAPTURE", "MALFORMED_ID", "TURN_NOT_CAPTURED", "JSONL_INCOMPLETE_TAIL"):
                self.assertIn(code, codes)
            os.unlink(Path(self.root, second["path"]))
            os.chmod(Path(self.root, first["path"]), 0o644)
            self.append(paths.forgotten_path(self.root), {"id": "event-loop-b", "kind": "record"})
            self.append(paths.records_path(self.root, "fact"), dict(rec, kind="fact", version=4))  # one id, two files
            report = self.same_as_a_full_read()
            self.assertTrue(report["checked"]["from_scratch"])
            self.assertIn("RECEIPT_CAPTURE_MISSING", self.codes(report))
            self.assertIn("ARCHIVE_NOT_PRIVATE", self.codes(report))

    def test_later_lines_settle_what_earlier_ones_left_open(self):
        from personal_understanding import verified

        with mock.patch.object(verified, "RACY_SECONDS", 0):
            first = self.saved()
            ledger_file, events = paths.ledger_events_path(self.root), paths.records_path(self.root, "event")
            base = {"kind": "event", "version": 1, "title": "和外婆通电话", "status": "current", "layer": "user_fact",
                    "sensitivity": "ordinary", "salience": 1, "salience_basis": "explicit", "fidelity": "verbatim"}
            self.append(events, dict(base, id="event-a", capture_ids=["cap-late"], related_ids=["event-b"]))
            self.append(ledger_file, {"event": "captured", "capture_id": "cap-early", "path": "sources/none.json",
                                      "turn_id": "t-later", "source": "chat"},
                        {"event": "finalized", "capture_id": first["capture_id"], "disposition": "derived"})
            codes = self.codes(self.same_as_a_full_read())
            for code in ("DANGLING_REFERENCE", "RECORD_CITES_MISSING_CAPTURE", "CAPTURE_WITHOUT_RECEIPT",
                         "DERIVED_WITHOUT_RECORD"):
                self.assertIn(code, codes)
            self.append(events, dict(base, id="event-b", capture_ids=[first["capture_id"]]))
            self.append(ledger_file, {"event": "captured", "capture_id": "cap-late", "path": first["path"]})
            self.append(paths.receipts_path(self.root), {"type": "receipt", "turn_id": "t-later"})
            codes = self.codes(self.same_as_a_full_read())
            for code in ("DANGLING_REFERENCE", "RECORD_CITES_MISSING_CAPTURE", "CAPTURE_WITHOUT_RECEIPT",
                         "DERIVED_WITHOUT_RECORD"):
                self.assertNotIn(code, codes)
            self.append(events, dict(base, id="event-b", version=2, status="forgotten", capture_ids=[first["capture_id"]]))
            self.assertIn("DERIVED_WITHOUT_RECORD", self.codes(self.same_as_a_full_read()))
            self.append(paths.forgotten_path(self.root), {"id": first["capture_id"], "kind": "capture"})
            self.assertNotIn("DERIVED_WITHOUT_RECORD", self.codes(self.same_as_a_full_read()))

    def test_a_log_changed_before_its_watermark_is_read_again(self):
        self.saved()
        validate.validate(self.root)
        ledger_file = paths.ledger_events_path(self.root)
        data = ledger_file.read_bytes()
        ledger_file.write_bytes(data.replace(b'"pending"', b'"pendinG"', 1) if b'"pending"' in data
                                else data.replace(b'"event":"captured"', b'"event":"captureD"', 1))
        report = validate.validate(self.root)
        self.assertTrue(report["checked"]["from_scratch"])
        self.assertIn("LEDGER_INVALID", self.codes(report))

    def test_an_edited_capture_is_found_on_the_next_run(self):
        out = self.saved()
        self.assertEqual(validate.validate(self.root)["status"], "clean")
        target = Path(self.root, out["path"])
        target.write_text(target.read_text(encoding="utf-8").replace("外婆", "奶奶"), encoding="utf-8")  # same size
        report = validate.validate(self.root)
        self.assertFalse(report["checked"]["from_scratch"])
        self.assertEqual(self.codes(report), ["CAPTURE_HASH_MISMATCH"])

    def test_from_scratch_hashes_everything_and_the_watermark_is_derived(self):
        for _ in range(3):
            self.saved()
        validate.validate(self.root)
        report = validate.validate(self.root, from_scratch=True)
        self.assertEqual((report["checked"]["rehashed"], report["checked"]["from_scratch"]), (3, True))
        code, out, _ = self.cli("session_check", "--turn-id", "t3", "--full", "--from-scratch")
        self.assertEqual(code, 0, out)
        self.assertEqual(out["gates"]["structure"]["scope"], "full")
        kept = paths.verified_db_path(self.root)
        self.assertEqual(os.stat(kept).st_mode & 0o777, 0o600)
        os.unlink(kept)  # derived: losing it only costs a full read
        self.assertTrue(validate.validate(self.root)["checked"]["from_scratch"])


class CapturePathTest(ArchiveTest):
    """The index keeps a capture's path only where the ledger names an unusual one; every reader gets the ledger's path."""

    def test_path_read_back_as_the_ledger_names_it(self):
        from personal_understanding import storage
        receipts.preflight(self.root, "周末去外婆家包饺子", turn_id="t1", tier="full")
        cid = capture.capture_text(self.root, "周末去外婆家包饺子", "t1")["capture_id"]
        lines = [json.loads(l) for l in open(paths.ledger_events_path(self.root), encoding="utf-8")]
        line = next(l for l in lines if l.get("event") == "captured")
        # An archive whose ledger names a capture file elsewhere (as an older layout did): that path is kept.
        odd = dict(line, capture_id="cap-odd-1", path="sources/conversation/old/cap-odd-1.json", turn_id="t9")
        with storage.archive_lock(self.root, "test"):
            storage.append_jsonl(self.root, paths.ledger_events_path(self.root), [odd])
        index = archive_index.open_index(self.root)
        stored = dict(index.db.execute("SELECT capture_id, path FROM captures"))
        self.assertIsNone(stored[cid])  # the usual place costs no bytes
        self.assertEqual(stored["cap-odd-1"], odd["path"])
        self.assertEqual(index.capture(cid)["path"], line["path"])
        self.assertEqual(index.capture("cap-odd-1")["path"], odd["path"])
        self.assertTrue(os.path.isfile(os.path.join(self.root, index.capture(cid)["path"])))
