"""Derived records: sources, duplicates, versions, state chains, entity merges, validation."""

import json
import os

from tests.helpers import ArchiveTest

from personal_understanding import capture, ledger, paths, receipts, records, validate
from personal_understanding.archive_index import forget_cached, open_index
from personal_understanding.errors import PuError

MSG = "我妹妹小雨下个月要在杭州结婚了，我有点舍不得。"
MSG2 = "我把 Switch 卖了，现在没有游戏机了。"


class RecordTest(ArchiveTest):
    def turn(self, text, turn):
        receipts.preflight(self.root, text, turn_id=turn, tier="full")
        return capture.capture_text(self.root, text, turn)["capture_id"]

    def setUp(self):
        super().setUp()
        self.cid = self.turn(MSG, "t1")
        self.sister = records.add_record(self.root, kind="entity", entity_type="person", title="小雨",
                                         aliases=["我妹妹", "my sister"], id="person-xiaoyu")["id"]

    def event(self, **extra):
        fields = dict(kind="event", title="妹妹小雨在杭州结婚", summary="小雨下个月在杭州结婚",
                      capture_ids=[self.cid], entity_refs=[self.sister], date_start="2026-12", date_precision="month")
        fields.update(extra)
        return records.add_record(self.root, **fields)


class SourcesTest(RecordTest):
    def test_record_links_both_ways_and_lets_the_capture_be_derived(self):
        out = self.event()
        self.assertEqual(out["links"]["capture_ids"], [self.cid])
        self.assertEqual(open_index(self.root).records_citing(self.cid), [out["id"]])
        self.assertEqual(ledger.finalize(self.root, self.cid, "derived")["record_ids"], [out["id"]])
        projection = ledger.repair(self.root)
        self.assertEqual(projection["remaining_findings"], [])
        data = json.loads(paths.ledger_projection_path(self.root).read_text(encoding="utf-8"))
        self.assertEqual(data["captures"][self.cid]["record_ids"], [out["id"]])
        self.assertEqual(data["records"][out["id"]], [self.cid])

    def test_a_claim_without_words_is_refused_unless_summary_only(self):
        self.refused("RECORD_NEEDS_SOURCE", records.add_record, self.root, kind="fact", title="住在杭州")
        out = records.add_record(self.root, kind="fact", title="住在杭州", fidelity="summary_only")
        self.assertEqual(out["record"]["fidelity"], "summary_only")
        report = validate.validate(self.root)
        self.assertEqual(report["status"], "warnings")
        self.assertIn("SUMMARY_DEBT", " ".join(report["problems"]))

    def test_organizing_cards_need_no_capture(self):
        out = records.add_record(self.root, kind="entity", entity_type="concept", title="书荒",
                                 aliases=["没书看", "不知道读什么"], related_ids=[self.sister])
        self.assertEqual(out["record"]["kind"], "entity")
        ctx = records.add_record(self.root, kind="context", title="家里 × 婚礼", entity_refs=[self.sister])
        self.assertEqual(ctx["record"]["status"], "current")

    def test_unknown_capture_and_bad_spans_are_refused(self):
        self.refused("RECORD_CAPTURE_UNKNOWN", records.add_record, self.root, kind="fact", title="x", capture_ids=["cap-nope"])
        self.refused("RECORD_SPAN_INVALID", records.add_record, self.root, kind="fact", title="x",
                     verbatim_refs=[{"capture_id": self.cid, "start": 0, "end": 999}])
        self.refused("RECORD_SPAN_INVALID", records.add_record, self.root, kind="fact", title="x",
                     verbatim_refs=[{"capture_id": self.cid, "start": 0, "end": 3, "quote": "我弟弟"}])
        out = records.add_record(self.root, kind="fact", title="妹妹要结婚",
                                 verbatim_refs=[{"capture_id": self.cid, "start": 0, "end": 7}])
        self.assertEqual(out["record"]["verbatim_refs"][0]["quote"], MSG[:7])

    def test_invalid_fields_refuse_the_whole_record(self):
        for bad in ({"salience": 5}, {"layer": "gossip"}, {"date_start": "2026-13"}, {"date_start": "last spring"},
                    {"domain": "Not A Slug"}, {"sensitivity": "secret"}, {"entity_refs": "person-xiaoyu"},
                    {"date_start": "2026-05", "date_end": "2025"}, {"confidence": 2}):
            err = self.refused("RECORD_INVALID", records.add_record, self.root, kind="fact", title="x",
                               capture_ids=[self.cid], **bad)
            self.assertIn(next(iter(bad)), err.message)
        self.refused("RECORD_INVALID", records.add_record, self.root, kind="fact", title="x", capture_ids=[self.cid],
                     layer="model_hypothesis")
        self.refused("RECORD_USE_ADD_HYPOTHESIS", records.add_record, self.root, kind="hypothesis", title="x")
        self.refused("RECORD_INVALID", records.add_record, self.root, kind="event", title="x", capture_ids=[self.cid],
                     id="Bad Id")
        self.refused("RECORD_INVALID", records.add_record, self.root, kind="entity", title="x")  # no entity_type

    def test_fragments_from_attachments_are_not_verbatim(self):
        receipts.preflight(self.root, MSG, turn_id="t1")
        path = os.path.join(self.tmp, "menu.png")
        with open(path, "wb") as handle:
            handle.write(b"image")
        att = capture.capture_attachment(self.root, path, "t1")["capture_id"]
        self.refused("RECORD_INVALID", records.add_record, self.root, kind="fragment", title="OCR", fidelity="ocr")
        out = records.add_record(self.root, kind="fragment", title="菜单 OCR", summary="红烧肉 38", fidelity="ocr",
                                 attachment_capture_id=att)
        self.assertEqual(out["record"]["fidelity"], "ocr")
        self.assertEqual(open_index(self.root).records_citing(att), [out["id"]])

    def test_dates_are_never_filled_in(self):
        out = records.add_record(self.root, kind="event", title="小时候学游泳", capture_ids=[self.cid], phase="childhood")
        self.assertNotIn("date_start", out["record"])


class DuplicateTest(RecordTest):
    def test_exact_duplicate_is_refused_and_near_ones_are_reported(self):
        first = self.event()
        err = self.refused("RECORD_DUPLICATE", self.event)
        self.assertEqual(err.details["duplicate_of"], first["id"])
        near = self.event(summary="下个月小雨在杭州办婚礼", title="妹妹小雨杭州结婚")
        self.assertEqual(near["possible_duplicates"][0]["id"], first["id"])
        again = self.event(allow_duplicate=True)
        self.assertTrue(again["possible_duplicates"][0]["exact"])

    def test_explicit_ids_must_be_unique(self):
        self.event(id="event-wedding")
        self.refused("RECORD_ID_EXISTS", self.event, id="event-wedding", title="别的")


class StateTest(RecordTest):
    def test_update_supersedes_and_keeps_the_old_state_readable(self):
        owns = records.add_record(self.root, kind="state", title="有一台 Switch", capture_ids=[self.cid],
                                  subject_key="owns-switch", date_start="2024")
        cid2 = self.turn(MSG2, "t2")
        out = records.update_state(self.root, id=owns["id"], capture_ids=[cid2], title="没有 Switch 了",
                                   summary="把 Switch 卖了", date_start="2026-11")
        self.assertEqual(out["superseded"], [owns["id"]])
        self.assertEqual(out["record"]["supersedes"], [owns["id"]])
        self.assertIn("conflict", out)
        self.assertEqual(out["conflict"]["previous"]["capture_ids"], [self.cid])
        index = open_index(self.root)
        old = index.record(owns["id"])
        self.assertEqual((old["status"], old["superseded_by"], old["version"]), ("superseded", out["id"], 2))
        err = self.refused("STATE_NOT_CURRENT", records.update_state, self.root, id=owns["id"], capture_ids=[cid2], title="x")
        self.assertEqual(err.details["current_id"], out["id"])

    def test_contradicting_state_is_kept_uncertain_with_a_conflict(self):
        owns = records.add_record(self.root, kind="state", title="有一台 Switch", capture_ids=[self.cid], subject_key="owns-switch")
        cid2 = self.turn(MSG2, "t2")
        out = records.add_record(self.root, kind="state", title="没有游戏机", capture_ids=[cid2], subject_key="owns-switch")
        self.assertEqual(out["record"]["status"], "uncertain")
        self.assertEqual(out["record"]["contradicts"], [owns["id"]])
        self.assertEqual(out["conflict"]["current"][0]["id"], owns["id"])
        self.assertEqual(open_index(self.root).record(owns["id"])["status"], "current")  # nothing overwritten

    def test_an_update_without_a_date_is_dated_when_its_words_were_said(self):
        owns = records.add_record(self.root, kind="state", title="有一台 Switch", capture_ids=[self.cid],
                                  subject_key="owns-switch", date_start="2024-03", date_end="2026", date_precision="month")
        receipts.preflight(self.root, MSG2, turn_id="t2", tier="full")
        cid2 = capture.capture_text(self.root, MSG2, "t2", occurred_at="2026-10-21T01:10+08:00")["capture_id"]
        new = records.update_state(self.root, id=owns["id"], capture_ids=[cid2], title="没有 Switch 了")["record"]
        self.assertEqual((new["date_start"], new["date_precision"], new["date_basis"]), ("2026-10-21", "day", "source"),
                         "the day it was said, where it was said (in UTC it was still the 20th)")
        self.assertNotIn("date_end", new, "nothing of the old version's dates")
        self.assertEqual(new["status"], "current")
        given = records.update_state(self.root, id=new["id"], capture_ids=[self.turn("我又买了一台 Switch。", "t3")],
                                     title="又有 Switch 了", date_start="2026-11")["record"]
        self.assertEqual((given["date_start"], given.get("date_precision")), ("2026-11", None), "a date given wins whole")

    def test_words_about_an_earlier_time_do_not_replace_the_current_state(self):
        now = records.add_record(self.root, kind="state", title="在杭州工作", capture_ids=[self.cid], subject_key="job", date_start="2025")
        cid2 = self.turn(MSG2, "t2")
        out = records.update_state(self.root, id=now["id"], capture_ids=[cid2], title="在上海工作", date_start="2019")
        self.assertEqual(out["record"]["status"], "uncertain")
        self.assertFalse(out["conflict"]["superseded"])
        self.assertEqual(open_index(self.root).record(now["id"])["status"], "current")


class MergeTest(RecordTest):
    def test_merge_redirects_and_resolves_references(self):
        dup = records.add_record(self.root, kind="entity", entity_type="person", title="我妹", id="person-wo-mei")["id"]
        ev = self.event(entity_refs=[dup])
        out = records.merge_entities(self.root, from_id=dup, into=self.sister, reason="user: 我妹 就是小雨")
        self.assertEqual(out["redirect"], {"old_id": dup, "canonical_id": self.sister})
        index = open_index(self.root)
        self.assertEqual(index.resolve(dup), self.sister)
        self.assertEqual(records.get_record(index, dup)["id"], self.sister)
        self.assertIn("我妹", index.record(self.sister)["aliases"])
        old = index.record(dup)
        self.assertEqual((old["status"], old["merge_reason"]), ("redirected", "user: 我妹 就是小雨"))
        from personal_understanding.understanding import entity_page
        self.assertIn(ev["id"], [s["id"] for s in entity_page(self.root, self.sister)["stories"]])
        self.refused("MERGE_CYCLE", records.merge_entities, self.root, from_id=self.sister, into=dup, reason="oops")
        self.assertEqual(validate.validate(self.root)["status"], "clean")


class ValidationTest(RecordTest):
    def append_raw(self, kind, obj):
        fd = os.open(paths.records_path(self.root, kind), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)  # as the archive makes them
        with open(fd, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(obj, ensure_ascii=False) + "\n")

    def codes(self):
        report = validate.validate(self.root)
        return report["status"], sorted({p.split(": ")[1].split(" ")[0] for p in report["problems"]})

    def test_record_rules_in_validate(self):
        base = {"kind": "fact", "title": "x", "version": 1, "status": "current", "capture_ids": [self.cid]}
        self.append_raw("fact", dict(base, id="fact-a", related_ids=["nowhere"]))
        self.assertEqual(self.codes(), ("warnings", ["DANGLING_REFERENCE"]))
        self.append_raw("fact", dict(base, id="fact-a"))
        self.append_raw("fact", dict(base, id="fact-b", capture_ids=[], layer="gossip"))
        self.append_raw("state", dict(base, kind="state", id="state-a", supersedes=["state-b"]))
        self.append_raw("state", dict(base, kind="state", id="state-b", supersedes=["state-a"]))
        status, codes = self.codes()
        self.assertEqual(status, "failed")
        for code in ("DUPLICATE_ID", "RECORD_INVALID", "RECORD_WITHOUT_CAPTURE", "SUPERSEDE_CYCLE"):
            self.assertIn(code, codes)

    def test_weak_hypotheses_and_unsourced_followups_are_warnings(self):
        self.append_raw("hypothesis", {"kind": "hypothesis", "id": "hypothesis-a", "version": 1, "title": "x",
                                       "status": "candidate", "layer": "model_hypothesis", "supports": []})
        with open(paths.followups_path(self.root), "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"id": "fu-a", "version": 1, "question": "q?", "status": "open"}) + "\n")
        self.assertEqual(self.codes(), ("warnings", ["FOLLOWUP_NO_DUE", "FOLLOWUP_NO_SOURCE", "HYPOTHESIS_WEAK_SUPPORT"]))


class ReadBackTest(RecordTest):
    """The index points at record lines in the logs; it holds no copy of their words."""

    def test_the_index_keeps_the_place_not_the_words(self):
        rid = self.event(summary="在西湖边的小教堂办婚礼")["id"]
        index = open_index(self.root)
        self.assertEqual(index.record(rid)["summary"], "在西湖边的小教堂办婚礼")
        rows = index.db.execute("SELECT * FROM records").fetchall() + index.db.execute("SELECT * FROM receipts").fetchall()
        self.assertFalse([r for r in rows if "西湖边的小教堂" in json.dumps(r, ensure_ascii=False)])

    def test_a_log_replaced_under_an_open_index_is_read_anew(self):
        rid = self.event(summary="在西湖边的小教堂办婚礼")["id"]
        index = open_index(self.root)
        self.assertEqual(index.record(rid)["version"], 1)  # the log is open now
        log = paths.records_path(self.root, "event")
        lines = log.read_text(encoding="utf-8").splitlines()
        changed = [json.loads(x) for x in lines]
        changed[-1]["summary"] = "改在湖对面的草坪上"
        replacement = log.with_name("swap.tmp")
        replacement.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in changed), encoding="utf-8")
        os.replace(replacement, log)  # what a restore does: another file, other bytes at the same place
        self.assertIs(open_index(self.root), index)  # the same connection, its descriptor on the old file dropped
        self.assertEqual(index.record(rid)["summary"], "改在湖对面的草坪上")

    def test_a_log_replaced_under_every_read_is_reported_never_read_as_missing(self):
        rid = self.event(summary="在西湖边的小教堂办婚礼")["id"]
        forget_cached(self.root)
        index = open_index(self.root)  # a reader that has not opened the log yet
        log = paths.records_path(self.root, "event")
        catch_up = index.refresh

        def refresh_then_replace():  # a restore running again each time the index has caught up
            changed = catch_up()
            replacement = log.with_name("swap.tmp")
            replacement.write_bytes(b"\n" + log.read_bytes())  # the same records, one line further down
            os.replace(replacement, log)
            return changed

        index.refresh = refresh_then_replace
        replacement = log.with_name("swap.tmp")
        replacement.write_bytes(b"\n" + log.read_bytes())
        os.replace(replacement, log)
        try:
            with self.assertRaises(PuError) as ctx:
                index.record(rid)
        finally:
            index.refresh = catch_up
        self.assertEqual(ctx.exception.code, "ARCHIVE_BUSY")
        self.assertEqual(index.record(rid)["summary"], "在西湖边的小教堂办婚礼")  # once it holds still, read as ever

    def test_a_line_changed_in_place_is_an_error_never_another_record(self):
        rid = self.event(summary="在西湖边的小教堂办婚礼")["id"]
        index = open_index(self.root)
        log = paths.records_path(self.root, "event")
        data = log.read_bytes()
        log.write_bytes(data.replace(rid.encode(), rid[:-1].encode() + (b"x" if rid[-1] != "x" else b"y")))  # same size
        with self.assertRaises(PuError) as ctx:
            index.record(rid)
        self.assertEqual(ctx.exception.code, "INDEX_STALE")
        self.assertIn("rebuild_views", ctx.exception.hint)

    def test_a_log_replaced_during_an_index_write_reads_as_absent_until_caught_up(self):
        rid = self.event(summary="在西湖边的小教堂办婚礼")["id"]
        index = open_index(self.root)
        index._drop_logs()
        log = paths.records_path(self.root, "event")
        replacement = log.with_name("swap.tmp")
        replacement.write_bytes(log.read_bytes().replace("小教堂".encode(), "大草坪".encode()))
        os.replace(replacement, log)
        index.db.execute("BEGIN")  # as the recall index does while it catches up
        try:
            self.assertIsNone(index.record(rid))  # never the words of a file the index did not read
        finally:
            index.db.execute("ROLLBACK")
        self.assertEqual(open_index(self.root).record(rid)["summary"], "在西湖边的大草坪办婚礼")
