"""The dashboard data builder, its files, its fingerprint and open_dashboard."""

import json
import os
import re
from pathlib import Path
from unittest import mock

from tests.helpers import ArchiveTest

from personal_understanding import (capture, dashboard, dashboard_data, dashboard_graph, dashboard_words, followups, history,
                                    hypotheses, ledger, paths, pipeline, receipts, records, timeutil)
from personal_understanding.archive_index import open_index

WEDDING = "我妹妹小雨下个月在杭州结婚，我有点舍不得，也在纠结要不要请一周假回去帮忙。"
THESIS = "Last summer I finally handed in my thesis <b>& felt free</b>; my advisor said \"well done\"."
SCHOOL = "高三那年我转学到了北京，刚开始一个朋友都没有，他也不理我。"
JOB = "我现在在一家做地图的公司上班。"
JOB2 = "上个月辞职了，现在在家休息。"
PENDING = "今天有点累，还没想好要说什么。"
HOME1 = "我住在杭州，离公司很近。"
HOME2 = "换工作的事我没跟爸妈说，下周先搬到上海。"  # 爸妈 appears in no record: only in these words
HOME3 = "上海住不惯，又搬回杭州了。"
PHOTO = "这是我们家的猫，叫团子。"
CHAT = [{"ref": "m1", "speaker": "me", "role": "user", "text": "我哥说周末一起去爬山。", "session_id": "chat-1",
         "occurred_at": "2026-01-10T09:00:00+08:00"},
        {"ref": "m2", "speaker": "Feng", "role": "other", "text": "Bring water, the trail is long.", "session_id": "chat-1",
         "occurred_at": "2026-01-10T09:05:00+08:00"},
        {"ref": "m3", "speaker": "me", "role": "user", "text": "好，我带两瓶。", "session_id": "chat-1",
         "occurred_at": "2026-01-10T09:07:00+08:00"}]
# a 1x1 PNG
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360f8cfc0f01f0005010101a1d6f2b80000000049454e44ae426082")


def at(day):
    return timeutil.parse_instant(day)


def say(root, text, turn, day, occurred_at=None):
    receipts.preflight(root, text, turn_id=turn, tier="full", now=at(day))
    return capture.capture_text(root, text, turn, occurred_at=occurred_at, now=at(day))["capture_id"]


def build_fixture(root):
    """A small archive with every feature the dashboard shows. Returns the ids the tests look for."""
    c1 = say(root, WEDDING, "t-wedding", "2026-03-02T10:00:00Z")
    c2 = say(root, THESIS, "t-thesis", "2026-03-03T10:00:00Z")
    c3 = say(root, SCHOOL, "t-school", "2026-03-04T10:00:00Z")
    c4 = say(root, JOB, "t-job", "2026-03-05T10:00:00Z")
    c5 = say(root, JOB2, "t-job2", "2026-03-06T10:00:00Z")
    c6 = say(root, PENDING, "t-pending", "2026-03-07T10:00:00Z")
    add = records.add_record
    add(root, kind="entity", entity_type="person", title="小雨", id="person-xiaoyu", aliases=["妹妹"], domain="family-home")
    add(root, kind="entity", entity_type="person", title="我妹", id="person-sister-dup", aliases=["my sister"])
    add(root, kind="entity", entity_type="place", title="杭州", id="place-hangzhou")
    add(root, kind="entity", entity_type="concept", title="离家的牵挂", id="concept-homesick", aliases=["舍不得", "想家"],
        related_ids=["person-xiaoyu"])
    add(root, kind="event", id="event-wedding", title="小雨在杭州结婚", summary="妹妹小雨下个月在杭州结婚。",
        entity_refs=["person-sister-dup", "place-hangzhou", "concept-homesick"], domain="family-home", salience=3,
        date_start="2026-04", date_precision="month", date_basis="source", phase="working years",
        felt_then="有点舍不得", meaning_now="家里的大事，我想在场",
        verbatim_refs=[{"capture_id": c1, "start": 0, "end": WEDDING.index("，")}])
    add(root, kind="event", id="event-thesis", title="Handed in the thesis", summary="Finished the thesis last summer.",
        capture_ids=[c2], domain="education-career", salience=2, date_start="2025-07", date_precision="approximate",
        phase="university", what_happened="Handed in the thesis <b>after two years</b>", entity_refs=["person-xiaoyu"])
    add(root, kind="event", id="event-school", title="高三转学到北京", capture_ids=[c3], domain="education-career",
        salience=3, date_start="2012", date_precision="year", phase="high school", unresolved_referents=["他"],
        entity_refs=["person-xiaoyu", "place-hangzhou"],
        verbatim_refs=[{"capture_id": c3, "start": 0, "end": SCHOOL.index("，")}])
    add(root, kind="event", id="event-old-note", title="小时候搬过一次家", summary="旧笔记：小时候搬过家。",
        fidelity="summary_only", domain="family-home", salience=1, date_precision="unknown",
        related_ids=["event-does-not-exist"], entity_refs=["person-xiaoyu", "place-hangzhou"])
    add(root, kind="state", id="state-job", title="在地图公司上班", capture_ids=[c4], subject_key="job",
        domain="education-career", date_start="2024")
    records.update_state(root, "state-job", [c5], title="辞职在家休息", date_start="2026-02")
    add(root, kind="decision", id="decision-leave", title="要不要请一周假回去帮忙", capture_ids=[c1], status="uncertain",
        subject_key="leave-for-wedding", entity_refs=["person-xiaoyu"], domain="education-career")
    add(root, kind="preference", id="pref-quiet", title="喜欢安静的周末", capture_ids=[c4], domain="health-life")
    add(root, kind="fact", id="fact-lives-hangzhou", title="Sister lives in Hangzhou", capture_ids=[c1],
        entity_refs=["person-xiaoyu"])
    add(root, kind="context", id="context-family-hangzhou", title="杭州的家人", summary="小雨和杭州连在一起的事。",
        entity_refs=["person-xiaoyu", "place-hangzhou"])
    records.merge_entities(root, "person-sister-dup", "person-xiaoyu", "user: 我妹 and 小雨 are the same person")
    hypotheses.add_hypothesis(root, "Big family events make the user homesick", ["event-wedding", "event-school"],
                              id="hyp-homesick", contradicts=["event-thesis"], confidence=0.5)
    hypotheses.add_hypothesis(root, "Changes of place are hard at first", ["event-school", "event-wedding"],
                              id="hyp-moves", confidence=0.4)
    hypotheses.review_hypothesis(root, "hyp-moves", "rejected", "user said moving was exciting, not hard")
    for cid in (c1, c2, c3, c4, c5):
        ledger.finalize(root, cid, "derived")
    due = followups.add_followup(root, "婚礼准备得怎么样了？", c1, due_at="2026-03-10", id="fu-wedding")["id"]
    later = followups.add_followup(root, "Did the advisor reply?", c2, due_at="2099-01-01", id="fu-advisor")["id"]
    undated = followups.add_followup(root, "还想回北京吗？", c3, id="fu-beijing")["id"]
    closed = followups.add_followup(root, "新工作找得怎么样？", c5, due_at="2026-03-20", id="fu-job")["id"]
    followups.resolve_followup(root, closed, "resolved", "user decided to rest for a few months first")
    extra = build_home_and_family(root)
    return {"captures": [c1, c2, c3, c4, c5, c6], "pending": c6, "followups": [due, later, undated, closed], **extra}


def build_home_and_family(root):
    """A home that moved twice (three versions, dated only by when each was said, one said in +08:00),
    a brother known by an alias, an imported chat with another speaker, and a photo."""
    h1 = say(root, HOME1, "t-home1", "2026-01-05T08:00:00Z")
    h2 = say(root, HOME2, "t-home2", "2026-02-15T02:00:00Z", occurred_at="2026-02-15T01:10+08:00")
    h3 = say(root, HOME3, "t-home3", "2026-03-08T12:00:00Z")
    first = records.add_record(root, kind="state", id="state-home", title="住在杭州", capture_ids=[h1], subject_key="home",
                               date_start="2025-09", domain="family-home")["id"]
    second = records.update_state(root, first, [h2], title="搬到上海", now=at("2026-02-15T02:00:00Z"))["id"]
    third = records.update_state(root, second, [h3], title="搬回杭州", now=at("2026-03-08T12:00:00Z"))["id"]
    records.add_record(root, kind="entity", entity_type="person", title="哥哥", id="person-brother", aliases=["brother", "Feng"])
    chat = Path(root).parent / "chat.jsonl"
    chat.write_text("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in CHAT), "utf-8")
    mapping = history.import_history(root, "jsonl", str(chat), user_speaker="me")["mapping"]
    records.add_record(root, kind="event", id="event-hike", title="和哥哥去爬山", capture_ids=[mapping["m1"]],
                       entity_refs=["person-brother"], date_start="2026-01-17", date_precision="day", domain="relationships")
    photo = Path(root).parent / "cat.png"
    photo.write_bytes(PNG)
    c7 = say(root, PHOTO, "t-photo", "2026-03-09T09:00:00Z")
    att = capture.capture_attachment(root, str(photo), "t-photo", now=at("2026-03-09T09:00:01Z"))["capture_id"]
    for cid in (h1, h2, h3):
        ledger.finalize(root, cid, "derived")
    for cid in (c7, att):
        ledger.finalize(root, cid, "no-derivation-needed", "a photo of the cat, nothing to derive")
    return {"home": [first, second, third], "home_captures": [h1, h2, h3], "chat": [mapping[m["ref"]] for m in CHAT],
            "attachment": att, "photo_text": c7}


def read_chunks(root):
    """Every data file the page loads, parsed back into Python: (main, {chunk name: payload})."""
    ddir = dashboard.data_dir(root)
    main_text = (ddir / "dashboard_data.js").read_text("utf-8")
    assert main_text.startswith("window.PU_DATA = ")
    main = json.loads(main_text[len("window.PU_DATA = "):].rstrip().rstrip(";"))
    chunks = {}
    for path in sorted((ddir / "chunks").glob("*.js")):
        text = path.read_text("utf-8")
        match = re.match(r"PU_CHUNK\((\"[^\"]+\"),", text)
        name = json.loads(match.group(1))
        decoder = json.JSONDecoder()
        build, end = decoder.raw_decode(text, match.end())
        assert text[end] == ","
        payload, end = decoder.raw_decode(text, end + 1)
        assert text[end:] == ");\n", text[end:]
        chunks[name] = (build, payload)
    return main, chunks


class DashboardDataTest(ArchiveTest):
    def setUp(self):
        super().setUp()
        self.ids = build_fixture(self.root)

    def test_every_id_is_present(self):
        data = dashboard.build_data(self.root)
        index = open_index(self.root)
        all_records = {r[0] for r in index.db.execute("SELECT id FROM records")}
        all_captures = {r[0] for r in index.db.execute("SELECT capture_id FROM captures")}
        self.assertEqual(set(data["items"]["rec"]), all_records)
        self.assertEqual(set(data["items"]["cap"]), all_captures)
        self.assertEqual(set(data["items"]["fu"]), set(self.ids["followups"]))
        lists = data["lists"]
        listed = set()
        for name in ("timeline", "undated", "entities", "context", "knowledge", "hypotheses", "redirects"):
            listed |= {row["id"] for row in lists[name]}
        self.assertEqual(listed, all_records, "every record appears in one list")
        self.assertEqual({r["id"] for r in lists["sources"]}, all_captures)
        self.assertEqual({r["id"] for r in lists["followups"]}, set(self.ids["followups"]))
        for name, rows in lists.items():
            self.assertEqual(len(rows), len({r["id"] for r in rows}), f"{name}: two rows share an id")

    def test_timeline_is_in_date_order_with_undated_apart(self):
        data = dashboard.build_data(self.root)
        rows = data["lists"]["timeline"]
        starts = [r["date_start"] for r in rows]
        self.assertEqual(starts, sorted(starts), "date order, not phase order")
        self.assertEqual((rows[0]["id"], rows[-1]["id"]), ("event-school", "event-wedding"))
        self.assertTrue(all(r["date_start"] for r in rows))
        self.assertEqual({r["id"] for r in data["lists"]["undated"]}, {"decision-leave", "event-old-note"})
        self.assertEqual(data["filters"]["timeline"]["phases"], ["high school", "university", "working years"])
        wedding = next(r for r in rows if r["id"] == "event-wedding")
        self.assertEqual(wedding["quote"], {"capture_id": self.ids["captures"][0], "text": "我妹妹小雨下个月在杭州结婚", "excerpt": False})
        self.assertEqual(wedding["said"], "2026-03-02T10:00:00Z")
        rec = data["items"]["rec"]
        self.assertEqual(rec["event-wedding"]["felt_then"], "有点舍不得")
        self.assertEqual(rec["event-wedding"]["meaning_now"], "家里的大事，我想在场")
        thesis_quote = rec["event-thesis"]["quotes"][0]
        self.assertTrue(thesis_quote["excerpt"], "a capture cited without spans is shown as a marked excerpt")
        self.assertTrue(THESIS.startswith(thesis_quote["quote"].rstrip("…")))
        self.assertEqual(rec["event-old-note"]["quotes"], [])
        self.assertIsNone(rec["event-old-note"]["said"], "no words, so no time they were said")
        self.assertEqual(rec["event-school"]["before_ids"], [])
        self.assertIn("state-job", rec["event-school"]["after_ids"])
        self.assertEqual(rec["state-job"]["status"], "superseded")
        self.assertIn(rec["state-job"]["superseded_by"], rec["state-job"]["refs"])

    def test_a_subject_lists_every_version_in_said_order_with_said_dates(self):
        data = dashboard.build_data(self.root)
        first, second, third = self.ids["home"]
        versions = data["items"]["rec"][third]["versions"]
        self.assertEqual([v["id"] for v in versions], [first, second, third])
        self.assertEqual([v["said"] for v in versions], ["2026-01-05T08:00:00Z", "2026-02-15T01:10:00+08:00", "2026-03-08T12:00:00Z"])
        self.assertEqual([v["date_start"] for v in versions], ["2025-09", "2026-02-15", "2026-03-08"],
                         "an update without a date is dated by when it was said, in the zone it was said in")
        self.assertEqual([v["status"] for v in versions], ["superseded", "superseded", "current"])
        self.assertEqual(versions[1]["quote"]["text"], HOME2)
        self.assertIs(data["items"]["rec"][first]["versions"], versions, "every version shows the same list")
        subject = next(r for r in data["lists"]["subjects"] if r["subject_key"] == "home")
        self.assertEqual((subject["id"], subject["versions"], subject["title"]), (third, 3, "搬回杭州"))

    def test_entities_redirects_and_entity_page(self):
        data = dashboard.build_data(self.root)
        redirect = data["lists"]["redirects"][0]
        self.assertEqual((redirect["id"], redirect["redirect_to"]), ("person-sister-dup", "person-xiaoyu"))
        self.assertEqual(redirect["merge_reason"], "user: 我妹 and 小雨 are the same person")
        ids = [r["id"] for r in data["lists"]["entities"]]
        self.assertEqual(ids[0], "person-xiaoyu", "most mentioned first")
        self.assertNotIn("person-sister-dup", ids)
        self.assertNotIn("concept-homesick", ids, "concept cards are knowledge")
        page = data["items"]["rec"]["person-xiaoyu"]["page"]
        stories = [s["id"] for s in page["stories"]]
        self.assertIn("event-wedding", stories, "a reference to the merged id resolves to the canonical entity")
        self.assertEqual(len(stories), len(set(stories)), "each story once")
        self.assertNotIn("quotes", page, "quotes come with their story, not in a second list")
        dated = [s["date_start"] for s in page["stories"] if s["date_start"]]
        self.assertEqual(dated, sorted(dated, reverse=True), "newest first by date")
        self.assertEqual(page["stories"][0]["quote"]["text"], "我妹妹小雨下个月在杭州结婚")
        self.assertFalse(page["stories"][-1]["date_start"], "undated stories come last")
        self.assertIn("context-family-hangzhou", page["context_cards"])
        self.assertEqual(page["merged"][0]["id"], "person-sister-dup")
        old = data["items"]["rec"]["person-sister-dup"]
        self.assertEqual(old["canonical_id"], "person-xiaoyu")
        facets = data["lists"]["facets"]
        self.assertEqual(facets[0]["id"], "person-xiaoyu~place-hangzhou")
        self.assertEqual(facets[0]["events"], 3)

    def test_knowledge_hypotheses_and_followups(self):
        data = dashboard.build_data(self.root, now=at("2026-03-15T12:00:00Z"))
        kinds = {r["id"]: r["kind"] for r in data["lists"]["knowledge"]}
        self.assertEqual(kinds, {"pref-quiet": "preference", "fact-lives-hangzhou": "fact", "concept-homesick": "concept"})
        hyps = {r["id"]: r for r in data["lists"]["hypotheses"]}
        self.assertEqual(hyps["hyp-homesick"]["status"], "candidate")
        self.assertEqual(hyps["hyp-homesick"]["contradicts"], 1)
        self.assertEqual(hyps["hyp-moves"]["review_note"], "user said moving was exciting, not hard")
        evidence = data["items"]["rec"]["hyp-homesick"]["evidence"]
        self.assertEqual([e["id"] for e in evidence["supports"]], ["event-wedding", "event-school"])
        school = evidence["supports"][1]
        self.assertEqual((school["date_start"], school["said"], school["quote"]["text"]),
                         ("2012", "2026-03-04T10:00:00Z", "高三那年我转学到了北京"))
        self.assertEqual(evidence["contradicts"][0]["date_start"], "2025-07")
        self.assertTrue(evidence["contradicts"][0]["quote"]["text"].startswith("Last summer"))
        rows = {r["id"]: r for r in data["lists"]["followups"]}
        self.assertEqual({k: r["bucket"] for k, r in rows.items()},
                         {"fu-wedding": "overdue", "fu-advisor": "later", "fu-beijing": "undated", "fu-job": "closed"})
        self.assertEqual(rows["fu-wedding"]["days_late"], 5)
        self.assertEqual(rows["fu-wedding"]["words"], WEDDING, "the words that raised it")
        self.assertEqual(data["items"]["fu"]["fu-job"]["resolution"]["note"], "user decided to rest for a few months first")
        self.assertEqual(data["overview"]["due_followups"][0]["id"], "fu-wedding")
        same_day = dashboard.build_data(self.root, now=at("2026-03-10T18:00:00Z"))
        self.assertEqual(next(r for r in same_day["lists"]["followups"] if r["id"] == "fu-wedding")["bucket"], "due")

    def test_sources_are_words_newest_first_by_when_said(self):
        data = dashboard.build_data(self.root)
        rows = data["lists"]["sources"]
        keys = [dashboard_data.instant_key(r["said"]) for r in rows]
        self.assertEqual(keys, sorted(keys, reverse=True), "newest first by when said, not when saved")
        chat = [r for r in rows if r["id"] in self.ids["chat"]]
        self.assertEqual([r["speaker"] for r in chat], ["me", "Feng", "me"])
        self.assertEqual([r["role"] for r in chat], ["user", "other", "user"])
        self.assertEqual(chat[1]["words"], CHAT[1]["text"])
        self.assertNotEqual(chat[0]["said"], chat[0]["saved"], "imported: said then, saved at import")
        c1 = next(r for r in rows if r["id"] == self.ids["captures"][0])
        self.assertEqual((c1["records"], c1["words"], c1["status"]), (3, WEDDING, "derived"))
        self.assertEqual(data["overview"]["words"], {"user": {"captures": 12, "chars": data["overview"]["words"]["user"]["chars"]},
                                                     "other": {"captures": 1, "chars": len(CHAT[1]["text"])},
                                                     "attachments": 1, "withheld": 0})
        m1, m2, m3 = self.ids["chat"]
        middle = data["items"]["cap"][m2]
        self.assertEqual((middle["position"]["scope"], middle["position"]["index"], middle["position"]["total"]), ("session", 2, 3))
        self.assertEqual((middle["position"]["previous"]["id"], middle["position"]["next"]["id"]), (m1, m3))
        self.assertEqual([c["id"] for c in data["items"]["ses"]["chat-1"]["captures"]], [m1, m2, m3])
        alone = data["items"]["cap"][self.ids["captures"][1]]["position"]
        self.assertEqual(alone["scope"], "archive")
        self.assertEqual(alone["previous"]["id"], self.ids["captures"][0])
        self.assertEqual(data["items"]["cap"][self.ids["captures"][0]]["text"], WEDDING)
        self.assertIn("fu-wedding", data["items"]["cap"][self.ids["captures"][0]]["followups"])

    def test_an_attachment_shows_its_type_size_and_bytes(self):
        dashboard.write_data(self.root)
        _main, chunks = read_chunks(self.root)
        caps = {k: v for n, (_b, p) in chunks.items() if n.startswith("item-cap-") for k, v in p.items()}
        att = caps[self.ids["attachment"]]["attachment"]
        self.assertEqual((att["name"], att["media_type"], att["bytes"], att["preview"]), ("cat.png", "image/png", len(PNG), True))
        target = (dashboard.dashboard_dir(self.root) / att["href"]).resolve()
        self.assertEqual(target.read_bytes(), PNG, "the link reaches the stored bytes from the page")

    def test_search_text_holds_the_words_titles_and_aliases(self):
        docs = dashboard.build_data(self.root)["search"]
        by_id = {head[1]: (head, values) for head, values in docs}
        home2 = self.ids["home_captures"][1]
        self.assertEqual(by_id[home2][1], [HOME2], "a capture's whole text")
        self.assertEqual(by_id[home2][0][4], "2026-02-15T01:10:00+08:00")
        head, values = by_id["person-brother"]
        self.assertIn("brother · Feng", values)
        self.assertEqual(head[5], ["title", "aliases"])
        self.assertIn("person-brother", by_id["event-hike"][0][6], "a record links the entities it is about")
        self.assertIn(self.ids["chat"][0], by_id["event-hike"][0][6], "and the words it cites")
        self.assertEqual(by_id[self.ids["chat"][1]][0][7], "other")
        self.assertEqual(by_id["fu-wedding"][1][0], "婚礼准备得怎么样了？")
        self.assertNotIn("person-sister-dup", by_id, "a merged id is found through its canonical entity")
        chunks = dashboard_words.search_chunks(docs)
        self.assertEqual(sum(len(c["docs"]) for c in chunks), len(docs))
        self.assertEqual(chunks[0]["text"].count(dashboard_words.DOC_SEP) + 1, len(chunks[0]["docs"]))

    def test_changed_words_are_withheld(self):
        target = Path(self.root) / open_index(self.root).capture(self.ids["home_captures"][1])["path"]
        target.write_text(target.read_text("utf-8").replace("上海", "北京"), "utf-8")
        data = dashboard.build_data(self.root)
        cid = self.ids["home_captures"][1]
        self.assertEqual((data["items"]["cap"][cid]["text"], data["items"]["cap"][cid]["withheld"]), (None, "CAPTURE_TAMPERED"))
        self.assertNotIn(cid, {head[1] for head, _v in data["search"]})
        self.assertEqual(data["items"]["rec"][self.ids["home"][1]]["quotes"], [], "no quote is served from changed words")
        self.assertEqual(data["diagnostics"]["withheld_words"]["items"][0]["id"], cid)
        self.assertEqual(data["overview"]["words"]["withheld"], 1)
        self.assertNotIn("北京，", json.dumps(data, ensure_ascii=False).replace("高三那年我转学到了北京，", ""))

    def test_capture_pages_link_to_their_pipeline_page(self):
        cid = self.ids["captures"][0]
        self.assertNotIn("pipeline", dashboard.build_data(self.root)["items"]["cap"][cid])
        before = dashboard.fingerprint(self.root)
        pipeline.pipeline_view(self.root, turn_id="t-wedding")
        self.assertNotEqual(dashboard.fingerprint(self.root), before, "a new pipeline page makes the dashboard stale")
        link = dashboard.build_data(self.root)["items"]["cap"][cid]["pipeline"]
        self.assertEqual(link, "../pipeline/t-wedding.html")
        self.assertTrue((dashboard.dashboard_dir(self.root) / link).resolve().is_file())

    def test_overview_and_diagnostics(self):
        data = dashboard.build_data(self.root)
        o = data["overview"]
        self.assertEqual(o["validation"]["status"], "warnings")
        self.assertEqual(o["backup"], {"last_backup_at": None, "never": True})
        self.assertEqual(o["summary_debt"], 1)
        self.assertEqual(o["pending_captures"]["total"], 1)
        self.assertEqual([f["id"] for f in o["due_followups"]], ["fu-wedding"])
        self.assertEqual(o["counts"]["by_layer"]["model_hypothesis"], 2)
        d = data["diagnostics"]
        codes = {p["code"] for p in d["validation"]["problems"]["items"]}
        self.assertTrue({"DANGLING_REFERENCE", "SUMMARY_DEBT"} <= codes, codes)
        self.assertIn({"id": "event-old-note", "field": "related_ids", "target": "event-does-not-exist"}, d["dangling"]["items"])
        self.assertEqual([x["id"] for x in d["summary_debt"]["items"]], ["event-old-note"])
        self.assertEqual([x["id"] for x in d["unknown_dates"]["items"]], ["event-old-note"])
        self.assertEqual(d["unresolved_referents"]["items"][0]["referents"], ["他"])
        self.assertEqual([x["id"] for x in d["hypotheses_without_counter_evidence"]["items"]], ["hyp-moves"])
        gap = d["date_gaps"]["items"][0]
        self.assertEqual((gap["before_id"], gap["after_id"]), ("event-school", "event-thesis"))
        self.assertEqual(dict(d["paths"]["dirs"])["root"], str(Path(self.root).resolve()))
        kinds = {n["kind"] for n in data["graph"]["nodes"]}
        self.assertTrue({"entity", "concept", "event", "state", "decision", "hypothesis", "followup", "knowledge"} <= kinds, kinds)
        self.assertIn(["fu-wedding", "raised"], [[data["graph"]["nodes"][a]["id"], rel] for a, _b, rel in data["graph"]["edges"]]
                      + [[data["graph"]["nodes"][b]["id"], rel] for _a, b, rel in data["graph"]["edges"]])

    def test_backup_age_comes_from_backup_state(self):
        from personal_understanding import storage
        with storage.archive_lock(self.root):
            storage.atomic_write_json(self.root, paths.backup_state_path(self.root), {"last_backup_at": "2026-03-01T00:00:00Z"})
        self.assertEqual(dashboard.build_data(self.root)["overview"]["backup"], {"last_backup_at": "2026-03-01T00:00:00Z", "never": False})

    def test_written_files_links_resolve(self):
        dashboard.write_data(self.root)
        main, chunks = read_chunks(self.root)
        builds = {json.dumps(b, sort_keys=True) for b, _p in chunks.values()}
        self.assertEqual(builds, {json.dumps(main["build"], sort_keys=True)}, "one build across every file")
        items = {family: {} for family in main["shards"]}
        for name, (_b, payload) in chunks.items():
            if name.startswith("item-"):
                family, n = name.split("-")[1], int(name.split("-")[2])
                for item_id, item in payload.items():
                    self.assertEqual(dashboard.shard_of(item_id, main["shards"][family]), n, f"{item_id} in the wrong shard")
                    items[family][item_id] = item
        rec, cap, fu = items["rec"], items["cap"], items["fu"]
        targets = []  # (family, id) of every link the page draws
        lists = {name: [] for name in main["lists"]}
        for name, meta in main["lists"].items():
            for n in range(meta["chunks"]):
                lists[name] += chunks[f"list-{name}-{n}"][1]
            self.assertEqual(len(lists[name]), meta["total"])
        family_of = {"timeline": "rec", "entities": "rec", "redirects": "rec", "context": "rec", "knowledge": "rec",
                     "hypotheses": "rec", "followups": "fu", "sources": "cap"}
        for name, family in family_of.items():
            targets += [(family, row["id"]) for row in lists[name]]
        for row in lists["timeline"]:
            if row["quote"]:
                targets.append(("cap", row["quote"]["capture_id"]))
        for row in lists["context"] + lists["facets"]:
            targets += [("rec", e[0]) for e in row["entities"] if e[2]]
        for row in lists["facets"]:
            targets += [("rec", e) for e in row["event_ids"]]
        for item in rec.values():
            targets += [("rec", x) for x, label in item["refs"].items() if label is not None]
            targets += [("cap", x) for x, label in item["capture_refs"].items() if label is not None]
            for field in ("entity_refs", "related_ids", "supports", "contradicts", "supersedes", "before_ids", "after_ids"):
                for x in item.get(field) or ():
                    self.assertIn(x, item["refs"], f"{item['id']}.{field} has no label")
                    if item["refs"][x] is None:
                        self.assertNotIn(x, rec, "a missing label means a missing record")
        for item in cap.values():
            targets += [("rec", r) for r in item["records"]] + [("fu", f) for f in item["followups"]]
        targets += [("fu" if n["kind"] == "followup" else "rec", n["id"]) for n in chunks["graph"][1]["nodes"]]
        o = main["overview"]
        targets += [("fu", f["id"]) for f in o["due_followups"]] + [("cap", p["id"]) for p in o["pending_captures"]["items"]]
        diag = chunks["diagnostics"][1]
        for key in ("summary_debt", "unknown_dates", "dangling", "unresolved_referents", "hypotheses_without_counter_evidence"):
            targets += [("rec", x["id"]) for x in diag[key]["items"]]
        for family, item_id in targets:
            self.assertIn(item_id, {"rec": rec, "cap": cap, "fu": fu}[family], f"link to {family}/{item_id} does not resolve")
        self.assertGreater(len(targets), 80)
        self.assertIsNone(rec["event-old-note"]["refs"]["event-does-not-exist"], "the dangling id is shown as missing")

    def test_paging_and_stale_chunks_removed(self):
        with mock.patch.object(dashboard, "PAGE_ROWS", 2), mock.patch.object(dashboard, "SHARD_ITEMS", 3):
            out = dashboard.write_data(self.root)
            main, chunks = read_chunks(self.root)
        data = dashboard.build_data(self.root)
        for name, rows in data["lists"].items():
            meta = main["lists"][name]
            self.assertEqual(meta["chunks"], max(1, -(-len(rows) // 2)), name)
            joined = []
            for n in range(meta["chunks"]):
                part = chunks[f"list-{name}-{n}"][1]
                self.assertLessEqual(len(part), 2)
                joined += part
            self.assertEqual([r["id"] for r in joined], [r["id"] for r in rows], f"{name}: pages keep the order")
        self.assertEqual(main["shards"]["rec"], -(-len(data["items"]["rec"]) // 3))
        many = len(list((dashboard.data_dir(self.root) / "chunks").glob("*.js")))
        self.assertEqual(out["files"], many + 3)
        out = dashboard.write_data(self.root)
        left = sorted(p.stem for p in (dashboard.data_dir(self.root) / "chunks").glob("*.js"))
        self.assertLess(len(left), many)
        self.assertGreater(out["removed"], 0)
        self.assertFalse([n for n in left if n.startswith("list-timeline-") and n != "list-timeline-0"])

    def test_main_file_is_bounded(self):
        for i in range(30):
            records.add_record(self.root, kind="event", title=f"第{i}件事", capture_ids=[self.ids["captures"][1]],
                               date_start=f"{2000 + i}")
        out = dashboard.write_data(self.root)
        main, _chunks = read_chunks(self.root)
        self.assertEqual(main["lists"]["timeline"], {"total": 39, "chunk_rows": dashboard.PAGE_ROWS, "chunks": 1})
        self.assertNotIn("items", main)
        self.assertLess(out["main_bytes"], 20000)


class FingerprintAndOpenTest(ArchiveTest):
    def setUp(self):
        super().setUp()
        self.ids = build_fixture(self.root)

    def test_fingerprint_follows_the_archive(self):
        first = dashboard.fingerprint(self.root)
        self.assertEqual(first, dashboard.fingerprint(self.root))
        records.add_record(self.root, kind="fact", title="A new fact", capture_ids=[self.ids["captures"][0]])
        second = dashboard.fingerprint(self.root)
        self.assertNotEqual(first, second)
        followups.add_followup(self.root, "还好吗？", self.ids["captures"][0], due_rule="+3d")
        third = dashboard.fingerprint(self.root)
        self.assertNotEqual(second, third)
        ledger.finalize(self.root, self.ids["pending"], "no-derivation-needed", "tired, nothing specific to keep")
        self.assertNotEqual(third, dashboard.fingerprint(self.root))

    def test_open_dashboard_rebuilds_only_when_stale(self):
        out = dashboard.open_dashboard(self.root, no_open=True)
        root = Path(self.root).resolve()
        self.assertEqual(out["page"], str(root / "memory/v2/views/dashboard/index.html"))
        self.assertTrue(Path(out["page"]).is_file())
        self.assertTrue(Path(out["data"]).is_file())
        self.assertTrue(Path(out["data"]).resolve().is_relative_to(root))
        self.assertEqual((out["rebuilt"], out["opened"]), (True, False))
        for name in dashboard.APP_FILES:
            self.assertEqual((root / "memory/v2/views/dashboard" / name).read_bytes(),
                             (dashboard.app_source_dir() / name).read_bytes())
        data_bytes = Path(out["data"]).read_bytes()
        again = dashboard.open_dashboard(self.root, no_open=True)
        self.assertFalse(again["rebuilt"])
        self.assertEqual(again["fingerprint"], out["fingerprint"])
        self.assertEqual(Path(out["data"]).read_bytes(), data_bytes, "not rewritten")
        records.add_record(self.root, kind="fact", title="Another fact", capture_ids=[self.ids["captures"][0]])
        third = dashboard.open_dashboard(self.root, no_open=True)
        self.assertEqual((third["rebuilt"], third["reason"]), (True, "archive changed"))
        self.assertNotEqual(third["fingerprint"], out["fingerprint"])
        later = dashboard.open_dashboard(self.root, no_open=True, now=timeutil.now() + __import__("datetime").timedelta(days=2))
        self.assertTrue(later["rebuilt"])
        self.assertIn("earlier day", later["reason"])

    def test_open_dashboard_opens_a_browser_unless_no_open(self):
        browser = mock.Mock()
        browser.open.return_value = True
        with mock.patch.object(dashboard.webbrowser, "get", return_value=browser):
            out = dashboard.open_dashboard(self.root)
            self.assertTrue(out["opened"])
            browser.open.assert_called_once()
            self.assertTrue(browser.open.call_args[0][0].startswith("file://"))
            browser.open.reset_mock()
            self.assertFalse(dashboard.open_dashboard(self.root, no_open=True)["opened"])
            browser.open.assert_not_called()
        console = dashboard.webbrowser.GenericBrowser("lynx")
        with mock.patch.object(dashboard.webbrowser, "get", return_value=console), \
                mock.patch.object(console, "open") as console_open:
            out = dashboard.open_dashboard(self.root)
        console_open.assert_not_called()
        self.assertFalse(out["opened"])
        self.assertIn(out["page"], out["hint"])

    def test_deleted_data_is_rebuilt_and_rebuild_views_writes_it(self):
        from personal_understanding import views
        dashboard.open_dashboard(self.root, no_open=True)
        views.rebuild_views(self.root)
        self.assertTrue(dashboard.data_path(self.root).is_file())
        self.assertTrue((dashboard.dashboard_dir(self.root) / "index.html").is_file(), "the app comes with the data")
        os.unlink(dashboard.data_path(self.root))
        self.assertTrue(dashboard.open_dashboard(self.root, no_open=True)["rebuilt"])

    def test_cli_entry(self):
        code, out, err = self.cli("open_dashboard", "--no-open")
        self.assertEqual(code, 0, err)
        self.assertTrue(out["page"].startswith(str(Path(self.root).resolve())))
        self.assertFalse(out["opened"])


class TimesAsLivedTest(ArchiveTest):
    def test_when_it_was_said_keeps_the_offset_it_was_given_in(self):
        said = {}
        for turn, given in (("t1", "2026-02-15T01:10+08:00"), ("t2", "2026-02-15T01:10:00Z"), ("t3", "2026-02-15T01:10"),
                            ("t4", "2026-02-15T01:10:30.5-05:30")):
            text = f"{turn}: 我那天很晚才睡。"
            receipts.preflight(self.root, text, turn_id=turn, tier="full")
            said[turn] = capture.capture_text(self.root, text, turn, occurred_at=given)
        doc = json.loads((Path(self.root) / said["t1"]["path"]).read_text("utf-8"))
        self.assertEqual(doc["occurred_at"], "2026-02-15T01:10:00+08:00", "the offset stays on disk")
        self.assertTrue(doc["captured_at"].endswith("Z"), "saved: always UTC")
        index = open_index(self.root)
        self.assertEqual([index.capture(said[t]["capture_id"])["occurred_at"] for t in ("t1", "t2", "t3", "t4")],
                         ["2026-02-15T01:10:00+08:00", "2026-02-15T01:10:00Z", "2026-02-15T01:10:00Z", "2026-02-15T01:10:30-05:30"])
        receipts.preflight(self.root, "又一句。", turn_id="t5", tier="full")
        self.refused("BAD_DATE", capture.capture_text, self.root, "又一句。", "t5", occurred_at="2026-02-30T01:10+08:00")

    def test_a_time_reads_the_same_on_every_supported_python(self):
        # Python 3.10's fromisoformat refuses what 3.11's reads: fractions of other than 3 or 6 digits
        # (.NET writes 7), a comma before them, an offset without its colon.
        for given, read in (("2026-02-15T01:10:30.5-05:30", "2026-02-15T01:10:30.500000-05:30"),
                            ("2026-02-15T01:10:30.1234567Z", "2026-02-15T01:10:30.123456+00:00"),
                            ("2026-02-15 01:10:30,12Z", "2026-02-15T01:10:30.120000+00:00"),
                            ("2026-02-15T01:10+0530", "2026-02-15T01:10:00+05:30"),
                            ("2026-02-15T01:10:30-05", "2026-02-15T01:10:30-05:00"),
                            ("2026-02-15", "2026-02-15T00:00:00+00:00")):
            self.assertEqual(timeutil.parse_instant(given, keep_offset=True).isoformat(), read, given)
        for bad in ("2026-02-15T25:10:30Z", "2026-02-15T01:10:30.5x", "15/02/2026"):
            self.refused("BAD_DATE", timeutil.parse_instant, bad)


class StaticAppTest(ArchiveTest):
    def test_shard_hash_is_fnv1a(self):
        # FNV-1a 32-bit of "a" is 0xE40C292C; the page computes the same with charCodeAt.
        self.assertEqual(dashboard.shard_of("a", 2 ** 32), 0xE40C292C)
        self.assertEqual(dashboard.shard_of("", 2 ** 32), 0x811C9DC5)

    def test_app_uses_no_network_and_never_writes(self):
        for name in dashboard.APP_FILES:
            text = (dashboard.app_source_dir() / name).read_text("utf-8")
            urls = set(re.findall(r"https?://[^\s\"')]+", text)) - {"http://www.w3.org/2000/svg"}
            self.assertEqual(urls, set(), f"{name} names a network address")
            for call in ("fetch(", "XMLHttpRequest", "localStorage", "sessionStorage", "indexedDB", "WebSocket", "innerHTML",
                         "@import", "url("):
                self.assertNotIn(call, text, f"{name} uses {call}")
        css = (dashboard.app_source_dir() / "style.css").read_text("utf-8")
        for font in ("Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei"):
            self.assertIn(font, css)

    def test_no_data_page_says_what_to_run(self):
        text = (dashboard.app_source_dir() / "app.js").read_text("utf-8")
        self.assertIn("python3 scripts/open_dashboard.py", text)


def synthetic_archive(root, records=10000, captures=2000, followups_count=200, sentences=1):
    """An archive of `records` records written as JSONL in the product's format (fast: one append per file).

    Each capture is `sentences` sample sentences long; every seventh is another speaker's, in a session.
    """
    from personal_understanding import storage
    from personal_understanding.textinput import sha256_hex

    phrases = ["今天和{n}号同事吃饭，聊到小时候在外婆家过暑假。", "I went hiking with friend {n}; my knee hurt on the way down.",
               "最近第{n}次失眠了，一直在想搬家的事。", "My sister called about plan {n} for mom's birthday."]
    phases = ["childhood", "middle school", "high school", "university", "working years", None]
    domains = ["family-home", "relationships", "education-career", "health-life", "learning-interests"]
    stamp = "2026-03-01T00:00:00Z"
    caps, ledger_lines, texts = [], [], {}
    with storage.archive_lock(root, "synthetic"):
        for i in range(captures):
            cid = f"cap-syn-{i:05d}"
            text = "".join(phrases[(i + k) % 4].format(n=i + k) for k in range(sentences))
            day = f"2026-0{1 + i % 3}-{1 + i % 28:02d}T09:00:00Z"
            said = f"{2015 + i % 11}-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:00:00+08:00"
            speaker, role, session = ("Ana", "other", f"syn-{i // 20}") if i % 7 == 3 else ("user", "user", f"syn-{i // 20}")
            rel = f"sources/conversation/{day[:4]}/{day[5:7]}/{cid}.json"
            digest = sha256_hex(text.encode("utf-8"))
            doc = {"format": 1, "capture_id": cid, "kind": "text", "speaker": speaker, "role": role, "text": text,
                   "utf8_sha256": digest, "bytes": len(text.encode("utf-8")), "chars": len(text), "captured_at": day,
                   "occurred_at": said, "session_id": session, "turn_id": None, "source": "import:synthetic", "source_ref": None}
            storage.write_once(root, Path(root) / rel, (json.dumps(doc, ensure_ascii=False) + "\n").encode("utf-8"))
            ledger_lines.append({"event": "captured", "capture_id": cid, "path": rel, "kind": "text", "utf8_sha256": digest,
                                 "turn_id": None, "session_id": session, "captured_at": day, "occurred_at": said,
                                 "chars": len(text), "speaker": speaker, "source": "import:synthetic", "source_ref": None, "at": day})
            caps.append(cid)
            texts[cid] = text
        by_kind = {}

        def rec(kind, i, **fields):
            base = {"id": f"{kind}-syn-{i:05d}", "kind": kind, "version": 1, "status": "current", "layer": "user_fact",
                    "sensitivity": "ordinary", "created_at": stamp, "updated_at": stamp}
            base.update(fields)
            by_kind.setdefault(kind, []).append(base)
            return base["id"]

        people = [rec("entity", i, title=f"朋友{i}", entity_type="person" if i % 5 else "concept", aliases=[f"老{i}", f"friend {i}"])
                  for i in range(300)]
        cited = {}
        n = len(people)
        kinds = ["event"] * 6 + ["state", "fact", "preference", "decision"]
        i = 0
        while n < records:
            kind = "context" if i % 97 == 0 else "hypothesis" if i % 199 == 0 else kinds[i % len(kinds)]
            cid = caps[i % len(caps)]
            fields = {"title": f"第{i}件事 thing {i}", "summary": f"和{people[i % 300]}有关的第{i}件事。" * 2,
                      "domain": domains[i % 5], "salience": i % 4, "entity_refs": [people[i % 300], people[(i * 7) % 300]]}
            if kind == "context":
                fields.pop("salience")
            elif kind == "hypothesis":
                fields.update(layer="model_hypothesis", status="candidate", claim=f"pattern {i}",
                              supports=[by_kind["event"][0]["id"], by_kind["event"][1]["id"]])
            elif i % 53 == 0:
                fields.update(fidelity="summary_only")
            else:
                fields.update(capture_ids=[cid], verbatim_refs=[{"capture_id": cid, "start": 0, "end": 6, "quote": texts[cid][:6]}])
                cited.setdefault(cid, []).append(i)
            if kind in ("event", "state", "decision"):
                fields.update(date_start=f"{1990 + i % 36}-{1 + i % 12:02d}", date_precision="month", phase=phases[i % 6],
                              felt_then="有点紧张" if i % 3 == 0 else None, meaning_now="现在想来还好" if i % 5 == 0 else None)
                fields = {k: v for k, v in fields.items() if v is not None}
            rec(kind, i, **fields)
            n += 1
            i += 1
        for kind, rows in by_kind.items():
            storage.append_jsonl(root, paths.records_path(root, kind), rows)
        ledger_lines += [{"event": "finalized", "capture_id": c, "disposition": "derived" if c in cited else "no-derivation-needed",
                          "reason": None if c in cited else "synthetic filler without records", "record_ids": [], "at": stamp}
                         for c in caps]
        storage.append_jsonl(root, paths.ledger_events_path(root), ledger_lines)
        storage.append_jsonl(root, paths.followups_path(root), [
            {"id": f"fu-syn-{k:04d}", "version": 1, "question": f"第{k}件事后来怎么样了？", "capture_id": caps[k],
             "due_at": f"2026-{1 + k % 12:02d}-15T00:00:00Z" if k % 4 else None, "status": "open", "created_at": stamp,
             "updated_at": stamp, "said_at": stamp, "resolution": None} for k in range(followups_count)])
    return n


class ScaleTest(ArchiveTest):
    """10 000 records: the data stays paged and bounded (figures printed with PU_PRINT_FIGURES=1)."""

    def test_ten_thousand_records(self):
        import sys
        import time

        count = synthetic_archive(self.root, records=10000, captures=1000, followups_count=100)
        open_index(self.root)
        started = time.perf_counter()
        out = dashboard.write_data(self.root)
        elapsed = time.perf_counter() - started
        main, chunks = read_chunks(self.root)
        self.assertEqual(out["records"], count)
        self.assertLess(out["main_bytes"], 64 * 1024, "the file every page loads stays small")
        sizes = [p.stat().st_size for p in (dashboard.data_dir(self.root) / "chunks").glob("*.js")]
        self.assertLess(max(sizes), 1024 * 1024, "no chunk file over 1 MiB")
        self.assertEqual(sum(len(p) for n, (_b, p) in chunks.items() if n.startswith("item-rec-")), count)
        for name, meta in main["lists"].items():
            rows = [r for n in range(meta["chunks"]) for r in chunks[f"list-{name}-{n}"][1]]
            self.assertEqual(len(rows), meta["total"], name)
            self.assertTrue(all(len(chunks[f"list-{name}-{n}"][1]) <= dashboard.PAGE_ROWS for n in range(meta["chunks"])))
        self.assertGreater(main["lists"]["timeline"]["chunks"], 10)
        graph = chunks["graph"][1]
        self.assertLessEqual(len(graph["nodes"]), dashboard_graph.GRAPH_NODES)
        self.assertLessEqual(len(graph["edges"]), dashboard_graph.GRAPH_EDGES)
        self.assertLessEqual(len(chunks["diagnostics"][1]["validation"]["problems"]["items"]), dashboard_data.CAP)
        if os.environ.get("PU_PRINT_FIGURES"):
            print(f"\n  dashboard at {count} records: write_data {elapsed:.2f} s, {out['files']} files, "
                  f"{out['bytes'] / 1e6:.1f} MB, main file {out['main_bytes'] / 1e3:.1f} kB, "
                  f"largest chunk {max(sizes) / 1e3:.0f} kB", file=sys.stderr)
