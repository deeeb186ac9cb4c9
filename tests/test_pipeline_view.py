"""Pipeline pages: one read-only HTML page per turn, from receipt to retrievals."""

import html
import os
from pathlib import Path

from tests.helpers import ArchiveTest

from personal_understanding import capture, ledger, pipeline, receipts, records, timeutil
from personal_understanding.errors import PuError
from personal_understanding.retrieval.probe import probe

TEXT = '我妹妹<script>alert("x")</script>下个月结婚 & 我有点舍不得 <b>真的</b>'


class PipelineViewTest(ArchiveTest):
    def setUp(self):
        super().setUp()
        receipts.preflight(self.root, TEXT, turn_id="t1", now=timeutil.parse_instant("2026-03-02T10:00:00Z"))
        cap = capture.capture_text(self.root, TEXT, "t1", now=timeutil.parse_instant("2026-03-02T10:00:00Z"))
        self.cid, self.sha = cap["capture_id"], cap["utf8_sha256"]
        self.path = cap["path"]
        add = records.add_record
        add(self.root, kind="entity", entity_type="person", title="小雨", id="person-xiaoyu", aliases=["妹妹"],
            domain="family-home")
        add(self.root, kind="entity", entity_type="concept", title="离家的牵挂", id="concept-homesick", aliases=["舍不得"],
            related_ids=["person-xiaoyu"])
        add(self.root, kind="event", id="event-wedding", title="妹妹<i>结婚</i>", capture_ids=[self.cid],
            entity_refs=["person-xiaoyu"], domain="family-home")
        add(self.root, kind="preference", id="pref-home", title="喜欢回家过年", capture_ids=[self.cid],
            related_ids=["concept-homesick"], domain="family-home")
        ledger.finalize(self.root, self.cid, "derived")
        self.traced = probe(self.root, "妹妹结婚", capture_id=self.cid)
        self.held = probe(self.root, "妹妹结婚", capture_id=self.cid, domain="health-life")
        receipts.preflight(self.root, "how do I turn a python list into a set?", turn_id="t2")

    def page(self, turn="t1"):
        out = pipeline.pipeline_view(self.root, turn_id=turn)
        self.assertEqual(len(out["pages"]), 1)
        path = Path(out["pages"][0])
        self.assertTrue(path.is_absolute())
        self.assertEqual(path, (Path(self.root) / "memory/v2/views/pipeline" / f"{turn}.html").resolve())
        return path.read_text("utf-8")

    def test_turn_page_shows_every_step(self):
        text = self.page()
        receipt_at = text.index('id="receipt"')
        capture_at = text.index('id="captures"')
        records_at = text.index('id="records"')
        closure_at = text.index('id="closure"')
        retrievals_at = text.index('id="retrievals"')
        self.assertLess(receipt_at, capture_at)
        self.assertLess(capture_at, records_at)
        self.assertLess(records_at, closure_at)
        self.assertLess(closure_at, retrievals_at)
        receipt, captured, derived = text[receipt_at:capture_at], text[capture_at:records_at], text[records_at:closure_at]
        closure, retrievals = text[closure_at:retrievals_at], text[retrievals_at:]
        self.assertIn("<b>full</b>", receipt)
        self.assertIn("personal", receipt)
        self.assertIn("relationship-mention", receipt)
        self.assertIn("capture, read, derive_or_close, session_check", receipt)
        self.assertIn(self.sha, captured)
        self.assertIn('<span class="ok">matches</span>', captured)
        self.assertIn(os.path.join(str(Path(self.root).resolve()), self.path), captured)
        self.assertIn("event-wedding", derived)
        self.assertIn("../dashboard/index.html#record/pref-home", derived)
        self.assertIn('<span class="ok">derived</span>', closure)
        self.assertIn(self.traced["trace_id"], retrievals)
        self.assertIn(self.held["trace_id"], retrievals)
        self.assertIn("<td>妹妹</td>", retrievals, "tokens are listed")
        token = self.traced["tokens"][0]
        self.assertIn(f"<td>{token['term']}</td><td>{token['weight']}</td><td>{token['df']}</td>", retrievals, "with weights")
        self.assertIn("outside domain", retrievals, "held-back items say why")
        self.assertIn("<code>person-xiaoyu</code> → <code>concept-homesick</code>", retrievals, "association via paths")

    def test_user_text_is_escaped(self):
        text = self.page()
        self.assertNotIn("<script>", text)
        self.assertNotIn("<b>真的</b>", text)
        self.assertNotIn("<i>结婚</i>", text)
        self.assertIn(html.escape(TEXT, quote=True), text)
        self.assertIn("妹妹&lt;i&gt;结婚&lt;/i&gt;", text)
        self.assertNotIn("<script", text.lower().replace("&lt;script", ""))

    def test_tampered_capture_is_shown_and_its_words_withheld(self):
        target = Path(self.root) / self.path
        target.write_text(target.read_text("utf-8").replace("结婚", "离婚"), "utf-8")
        text = self.page()
        self.assertIn("DOES NOT MATCH", text)
        self.assertIn("The words are withheld", text)
        self.assertNotIn("离婚", text, "changed words are never served as the user's")

    def test_the_page_links_into_the_dashboard(self):
        text = self.page()
        self.assertIn(f'href="../dashboard/index.html#capture/{self.cid}"', text)
        self.assertIn('href="../dashboard/index.html#overview"', text)
        self.assertIn("said", text)
        self.assertIn("saved", text)

    def test_skip_turn_and_latest(self):
        text = self.page("t2")
        self.assertIn("skip: nothing to save", text)
        self.assertIn("No capture: the receipt did not call for one.", text)
        pages = pipeline.pipeline_view(self.root, latest=2)["pages"]
        self.assertEqual([Path(p).stem for p in pages], ["t2", "t1"], "most recent first")
        self.assertEqual(len(pipeline.pipeline_view(self.root, latest=50)["pages"]), 2)

    def test_bad_arguments_are_refused(self):
        for kwargs in ({}, {"turn_id": "t1", "latest": 1}, {"latest": 0}, {"latest": "3"}, {"latest": True}):
            with self.assertRaises(PuError) as ctx:
                pipeline.pipeline_view(self.root, **kwargs)
            self.assertEqual(ctx.exception.code, "BAD_ARGUMENT", kwargs)
            self.assertTrue(ctx.exception.hint)
        with self.assertRaises(PuError) as ctx:
            pipeline.pipeline_view(self.root, turn_id="no-such-turn")
        self.assertEqual(ctx.exception.code, "TURN_NOT_FOUND")
        with self.assertRaises(PuError) as ctx:
            pipeline.pipeline_view(self.root, turn_id="../../etc")
        self.assertEqual(ctx.exception.code, "BAD_ID")
        self.assertFalse((Path(self.root) / "memory/v2/views/pipeline").exists(), "nothing written on refusal")

    def test_cli(self):
        code, out, err = self.cli("pipeline_view", "--turn-id", "t1")
        self.assertEqual(code, 0, err)
        self.assertTrue(out["pages"][0].endswith("t1.html"))
        code, out, _err = self.cli("pipeline_view")
        self.assertNotEqual(code, 0)
        self.assertEqual(out["error"]["code"], "BAD_ARGUMENT")
        code, out, _err = self.cli("pipeline_view", "--turn-id", "nope")
        self.assertEqual((code, out["error"]["code"]), (1, "TURN_NOT_FOUND"))
