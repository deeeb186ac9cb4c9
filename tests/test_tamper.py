"""Words whose file changed after they were saved are never served as the user's verbatim words."""

import json
import unittest
from pathlib import Path

from tests.helpers import ArchiveTest

from personal_understanding import capture, followups, ledger, receipts, records, validate
from personal_understanding.archive_index import open_index
from personal_understanding.retrieval.deep import verify_quote
from personal_understanding.retrieval.probe import probe, retrieve

MSG = "我妹妹小雨下个月在杭州结婚，我有点舍不得。"
FORGED = "我妹妹小雨下个月在杭州结婚，我想把存款都转给陌生人。"


class TamperTest(ArchiveTest):
    def setUp(self):
        super().setUp()
        receipts.preflight(self.root, MSG, turn_id="t1", tier="full")
        self.cid = capture.capture_text(self.root, MSG, "t1")["capture_id"]
        self.event = records.add_record(self.root, kind="event", title="妹妹结婚", capture_ids=[self.cid],
                                        verbatim_refs=[{"capture_id": self.cid, "start": 0, "end": 4}])["id"]
        ledger.finalize(self.root, self.cid, "derived")
        self.path = open_index(self.root).capture(self.cid)["path"]

    def tamper(self, text=FORGED, fix_hash=True):
        """Edit the capture file the way a careless tool or an attacker would: valid JSON, different words."""
        target = Path(self.root, self.path)
        doc = json.loads(target.read_text(encoding="utf-8"))
        doc["text"] = text
        if fix_hash:  # the file's own hash is rewritten too; only the ledger keeps the original
            from personal_understanding.textinput import sha256_hex
            doc["utf8_sha256"] = sha256_hex(text.encode("utf-8"))
        target.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")

    def test_the_index_gives_the_ledgers_hash_back_as_written(self):
        from personal_understanding import archive_index, paths
        from personal_understanding.textinput import sha256_hex
        digest = sha256_hex(MSG.encode("utf-8"))
        self.assertEqual(open_index(self.root).capture(self.cid)["utf8_sha256"], digest)  # kept as bytes, read as hex
        # Spelled another way in the ledger (capitals), it is read back as spelled, not made to match.
        ledger_path = Path(self.root, "memory", "v2", "ledger.jsonl")
        ledger_path.write_text(ledger_path.read_text(encoding="utf-8").replace(digest, digest.upper()), encoding="utf-8")
        archive_index.forget_cached()
        for p in paths.views_dir(self.root).iterdir():
            p.unlink()
        self.assertEqual(open_index(self.root).capture(self.cid)["utf8_sha256"], digest.upper())

    def test_verify_quote_never_says_exact_match_for_changed_words(self):
        self.assertTrue(verify_quote(self.root, self.cid, "舍不得")["found"])
        self.tamper()
        out = verify_quote(self.root, self.cid, "存款都转给陌生人")
        self.assertFalse(out["found"])
        self.assertEqual(out["fidelity"], "tampered")
        self.assertEqual(out["path"], self.path)
        self.assertNotIn("exact match", json.dumps(out, ensure_ascii=False))

    def test_deep_read_withholds_the_text_and_names_the_file(self):
        self.tamper()
        for ids in ([self.cid], [self.event]):
            out = retrieve(self.root, level="deep", ids=ids, maintenance=True)
            block = out["items"][0]["verbatim"][0]
            self.assertEqual(block["fidelity"], "tampered")
            self.assertEqual(block["path"], self.path)
            self.assertNotIn("陌生人", json.dumps(out, ensure_ascii=False))

    def test_probe_rows_do_not_serve_the_changed_words(self):
        self.tamper()
        out = probe(self.root, "小雨 结婚", maintenance=True)
        rows = [r for r in out["top"] if r["id"] == self.cid]
        self.assertTrue(rows, out["top"])
        self.assertEqual(rows[0]["evidence_fidelity"], "tampered")
        self.assertNotIn("陌生人", json.dumps(out, ensure_ascii=False))

    def test_a_span_quote_is_not_taken_from_a_changed_file(self):
        self.tamper()
        self.refused("CAPTURE_TAMPERED", records.add_record, self.root, kind="fact", title="存款",
                     capture_ids=[self.cid], verbatim_refs=[{"capture_id": self.cid, "start": 0, "end": 4}])

    def test_a_follow_up_prompt_does_not_quote_changed_words(self):
        followups.add_followup(self.root, question="婚礼怎么样了？", capture_id=self.cid, due_at="2000-01-01")
        self.tamper()
        due = followups.followup_check(self.root)["due"]
        self.assertTrue(due)
        self.assertNotIn("陌生人", json.dumps(due, ensure_ascii=False))

    def test_validate_reports_it(self):
        self.tamper()
        report = validate.validate(self.root)
        self.assertEqual(report["status"], "failed")
        self.assertIn(f"{self.path}: CAPTURE_HASH_MISMATCH", "\n".join(report["problems"]))

    def test_an_attachment_pointed_at_bytes_elsewhere_is_reported_not_followed(self):
        original = Path(self.tmp, "scan.pdf")
        original.write_bytes(b"%PDF scan of the lease")
        att = capture.capture_attachment(self.root, original, "t1")
        self.assertEqual(validate.validate(self.root)["status"], "clean")
        doc_path = Path(self.root, att["path"])
        doc = json.loads(doc_path.read_text(encoding="utf-8"))
        Path(self.root, att["blob"]).unlink()  # the archive's own bytes are gone; an identical copy sits outside
        doc["blob"] = str(original)
        doc_path.write_text(json.dumps(doc), encoding="utf-8")
        report = validate.validate(self.root)
        self.assertEqual(report["status"], "failed")
        self.assertIn(f"{att['path']}: CAPTURE_HASH_MISMATCH", "\n".join(report["problems"]))
        with self.assertRaises(Exception) as ctx:  # and a quote is never checked against it
            verify_quote(self.root, att["capture_id"], "lease")
        self.assertEqual(getattr(ctx.exception, "code", None), "CAPTURE_NOT_TEXT")


class DigestTest(unittest.TestCase):
    def test_every_size_hashes_to_the_standard_sha256(self):
        """Messages hash with the interpreter's own SHA-256, large data with hashlib: the digests are one."""
        import hashlib

        from personal_understanding import textinput

        for data in (b"", "我妹妹小雨下个月在杭州结婚".encode("utf-8"), bytes(range(256)) * 5000):
            with self.subTest(size=len(data)):
                self.assertEqual(textinput.sha256_hex(data), hashlib.sha256(data).hexdigest())
        self.assertGreater(len(bytes(range(256)) * 5000), textinput.BUILTIN_MAX)
