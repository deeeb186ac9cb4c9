"""Recall: probe channels, aliases, associations, thresholds, time, privacy, traces, deep reads."""

import datetime
import json
import os
import shutil

from tests.helpers import ArchiveTest, drop_index, stale_recall_index, write

from personal_understanding import capture, paths, receipts, records, timeutil
from personal_understanding.errors import PuError
from personal_understanding.retrieval import deep, probe as probe_mod
from personal_understanding.retrieval.index import open_recall


class RecallTest(ArchiveTest):
    def say(self, text, turn=None, day=None):
        turn = turn or f"t{len(os.listdir(os.path.join(self.root, 'memory', 'v2', 'records'))) }-{abs(hash(text)) % 10**8}"
        receipts.preflight(self.root, text, turn_id=turn, tier="full")
        cid = capture.capture_text(self.root, text, turn, now=timeutil.parse_instant(day) if day else None)["capture_id"]
        return cid

    def probe(self, query=None, **kwargs):
        kwargs.setdefault("maintenance", True)
        return probe_mod.probe(self.root, query, **kwargs)

    def top_ids(self, out):
        return [r["id"] for r in out["top"]]


class GateAndTraceTest(RecallTest):
    def test_reads_cite_a_capture_or_say_maintenance(self):
        cid = self.say("我家的猫叫年糕，三岁了")
        with self.assertRaises(PuError) as ctx:
            probe_mod.probe(self.root, "年糕")
        self.assertEqual(ctx.exception.code, "READ_GATE")
        with self.assertRaises(PuError) as ctx:
            probe_mod.probe(self.root, "年糕", capture_id="cap-nope")
        self.assertEqual(ctx.exception.code, "READ_GATE")
        out = probe_mod.probe(self.root, "年糕", capture_id=cid)
        self.assertEqual(out["mode"], "turn")

    def test_the_current_turns_own_words_are_not_recalled_to_it(self):
        old = self.say("我家的猫叫年糕，三岁了")
        now = self.say("年糕今天又打翻了水杯")
        ids = self.top_ids(probe_mod.probe(self.root, "年糕", capture_id=now))
        self.assertIn(old, ids)
        self.assertNotIn(now, ids)

    def test_a_read_writes_only_its_trace_line(self):
        self.say("我家的猫叫年糕，三岁了")
        open_recall(self.root)
        before = {k: v for k, v in self.snapshot().items() if "/traces/" not in k}
        out = self.probe("年糕")
        after = {k: v for k, v in self.snapshot().items() if "/traces/" not in k}
        self.assertEqual(before, after)
        day = timeutil.now().strftime("%Y-%m-%d")
        lines = [json.loads(x) for x in paths.trace_path(self.root, day).read_text(encoding="utf-8").splitlines()]
        trace = lines[-1]
        self.assertEqual(trace["trace_id"], out["trace_id"])
        self.assertEqual(trace["mode"], "maintenance")
        self.assertIn("年糕", [t["term"] for t in trace["tokens"]])
        self.assertEqual([s["id"] for s in trace["selected"]], self.top_ids(out))
        self.assertEqual([s["channel"] for s in trace["selected"]], [r["why"]["channel"] for r in out["top"]])
        for key in ("held_back", "channels", "associations"):
            self.assertIn(key, trace)


    def last_trace(self):
        day = paths.trace_path(self.root, timeutil.now().strftime("%Y-%m-%d"))
        return day.read_bytes().splitlines()[-1]

    def test_a_trace_stays_small_however_much_matches(self):
        cid = self.say("这些年和表哥一起去过很多地方爬山，每次都聊到很晚")
        for i in range(40):
            records.add_record(self.root, kind="event", title=f"和表哥第{i}次爬山", capture_ids=[cid], date_start="2020-05")
        out = self.probe("和表哥爬山的那些事 " * 8, per_episode=1)
        line = self.last_trace()
        trace = json.loads(line)
        self.assertLessEqual(len(line), 2048)
        self.assertGreaterEqual(trace["held"]["episode cap (1 per conversation)"], 30)  # every one counted ...
        self.assertLessEqual(len(trace["held_back"]), 5)  # ... a few listed
        self.assertEqual([s["id"] for s in trace["selected"]], self.top_ids(out))
        terms = [t["term"] for t in trace["tokens"]]
        self.assertIn("表哥", [terms[i] for i in trace["selected"][0]["matched"]])

    def test_old_day_files_of_traces_are_removed_when_a_new_day_starts(self):
        self.say("我家的猫叫年糕，三岁了")
        with open(paths.config_path(self.root), "w", encoding="utf-8") as handle:
            json.dump({"trace_retention_days": 30}, handle)
        today = timeutil.now()
        old, recent = ((today - datetime.timedelta(days=d)).strftime("%Y-%m-%d") for d in (31, 29))
        for day in (old, recent):
            write(str(paths.trace_path(self.root, day)), '{"trace_id": "tr-x"}\n')
        self.probe("年糕")
        self.assertFalse(paths.trace_path(self.root, old).exists())
        self.assertTrue(paths.trace_path(self.root, recent).exists())


class LexicalTest(RecallTest):
    def test_channels_are_scored_separately_and_fused(self):
        cid = self.say("下个月妹妹在杭州结婚，我得请假回去")
        records.add_record(self.root, kind="event", title="妹妹在杭州结婚", capture_ids=[cid], date_start="2026-12")
        records.add_record(self.root, kind="fact", title="老家在杭州", capture_ids=[cid])
        out = self.probe("杭州")
        self.assertEqual(set(out["channels"]), {"timeline", "knowledge", "entities", "verbatim"})
        self.assertEqual(len(out["channels"]["timeline"]), 1)
        self.assertEqual(len(out["channels"]["knowledge"]), 1)
        self.assertEqual(out["channels"]["verbatim"][0]["id"], cid)
        self.assertEqual(len(out["top"]), 3)
        for row in out["top"]:
            self.assertIn("杭州", row["why"]["matched"])

    def test_archive_learns_names_no_dictionary_knows(self):
        a = self.say("我家阿呆呆今天又拆家了")
        b = self.say("阿呆呆最近胃口不好，带它去看了兽医")
        recall = open_recall(self.root)
        self.assertIn("阿呆呆", recall.archive_words())
        out = self.probe("阿呆呆")
        self.assertEqual(set(self.top_ids(out)[:2]), {a, b})
        self.assertIn("阿呆呆", out["top"][0]["why"]["matched"])

    def test_mixed_names_stay_whole_and_digits_are_not_content(self):
        game = self.say("鬼泣5的维吉尔太难打了")
        self.say("我5月5号去体检，结果还行")
        out = self.probe("鬼泣5")
        self.assertEqual(self.top_ids(out), [game])
        out = self.probe("5")
        self.assertEqual(out["top"], [])

    def test_rarest_term_beats_common_words(self):
        common = self.say("今天工作很忙，今天开会，今天加班，今天回家很晚，今天好累")
        rare = self.say("今天去看了牙医")
        out = self.probe("今天 牙医")
        self.assertEqual(self.top_ids(out)[0], rare)
        self.assertTrue(out["top"][0]["why"]["hits_rarest_term"])
        self.assertNotIn(common, self.top_ids(out)[:1])

    def test_a_general_word_finds_the_specific_one_but_not_the_reverse(self):
        pool = self.say("今天去游泳馆练了一小时")
        self.assertEqual(self.top_ids(self.probe("游泳")), [pool])
        self.say("我在杭州读的大学")
        out = self.probe("山东大学的录取通知书")
        self.assertEqual(out["status"], "below_threshold")

    def test_accidental_matches_are_held_back(self):
        game = self.say("鬼泣5的维吉尔太难打了")
        other = self.say("今天好难")
        out = self.probe("维吉尔难不难打")
        self.assertIn(game, self.top_ids(out))
        self.assertNotIn(other, self.top_ids(out))
        self.say("周末去爬山，风景很好")
        out = self.probe("大学录取通知书寄到了吗")
        self.assertIn(out["status"], ("no_match", "below_threshold"))
        self.assertEqual(out["top"], [])
        self.assertIn("never happened", out["note"])

    def test_no_match_and_empty_archive_are_told_apart(self):
        self.assertEqual(self.probe("随便")["status"], "empty_archive")
        self.say("我喜欢喝乌龙茶")
        out = self.probe("量子力学")
        self.assertEqual(out["status"], "no_match")
        self.assertIn("searched", out["scope"])


class AliasAndAssociationTest(RecallTest):
    def setUp(self):
        super().setUp()
        self.c1 = self.say("我妈上周住院了，做了个小手术")
        self.mom = records.add_record(self.root, kind="entity", entity_type="person", title="妈妈", aliases=["妈", "老妈", "my mom"])["id"]
        self.ev = records.add_record(self.root, kind="event", title="住院做小手术", capture_ids=[self.c1], entity_refs=[self.mom])["id"]

    def test_alias_routes_to_the_entitys_records(self):
        out = self.probe("老妈最近身体怎么样")
        self.assertIn(self.ev, self.top_ids(out))
        row = next(r for r in out["top"] if r["id"] == self.ev)
        self.assertEqual(row["why"]["alias_route"]["entity"], self.mom)
        out = self.probe("how is my mom doing")
        self.assertIn(self.ev, self.top_ids(out))

    def test_single_character_family_alias_routes_only_as_a_word(self):
        out = self.probe("妈最近还好吗")
        self.assertIn(self.ev, self.top_ids(out))
        self.say("哥伦比亚的咖啡挺好喝")
        records.add_record(self.root, kind="entity", entity_type="person", title="哥哥", aliases=["哥"])
        out = self.probe("哥伦比亚")
        self.assertFalse([r for r in out["top"] if r.get("why", {}).get("alias_route")])

    def test_zero_overlap_recall_through_a_concept_card(self):
        cid = self.say("我更喜欢浅烘的豆子，深烘的我喝不惯")
        pref = records.add_record(self.root, kind="preference", title="偏好浅烘的豆子", capture_ids=[cid])["id"]
        records.add_record(self.root, kind="entity", entity_type="concept", title="咖啡口味",
                           aliases=["焦糊味", "烘焙", "苦味"], related_ids=[pref])
        out = self.probe("这咖啡一股焦糊味")
        assoc = {a["id"]: a for a in out["associations"]}
        self.assertIn(pref, assoc)
        self.assertEqual(assoc[pref]["via"][-1], pref)
        self.assertGreater(len(assoc[pref]["via"]), 1)
        self.assertIn(pref, self.top_ids(out))

    def test_highly_private_records_only_on_a_direct_hit(self):
        secret = records.add_record(self.root, kind="fact", title="手术是因为肿瘤", capture_ids=[self.c1],
                                    entity_refs=[self.mom], sensitivity="highly-private")["id"]
        out = self.probe("老妈")
        self.assertNotIn(secret, self.top_ids(out) + [a["id"] for a in out["associations"]])
        out = self.probe("肿瘤")
        self.assertIn(secret, self.top_ids(out))


class StatesAndHypothesesTest(RecallTest):
    def test_superseded_state_comes_with_its_successor_and_as_of(self):
        c1 = self.say("我有一台 Switch", day="2025-01-10")
        old = records.add_record(self.root, kind="state", title="有一台 Switch", capture_ids=[c1], date_start="2024",
                                 subject_key="owns-switch")["id"]
        c2 = self.say("Switch 已经卖掉了")
        new = records.update_state(self.root, id=old, capture_ids=[c2], title="Switch 卖掉了", date_start="2026-10")["id"]
        out = self.probe("Switch")
        ids = self.top_ids(out)
        self.assertLess(ids.index(new), ids.index(old))
        row = next(r for r in out["top"] if r["id"] == old)
        self.assertEqual(row["successor"]["id"], new)
        then = self.probe("Switch", as_of="2025-06-01")
        self.assertIn(old, self.top_ids(then))
        self.assertNotIn(new, self.top_ids(then))

    def test_hypotheses_are_stubs_unless_the_query_hits_them(self):
        from personal_understanding import hypotheses
        c1 = self.say("周日晚上又焦虑上班", day="2026-10-04")
        c2 = self.say("周日晚上心里发慌", day="2026-10-11")
        e1 = records.add_record(self.root, kind="event", title="周日晚上焦虑", capture_ids=[c1], date_start="2026-10-04")["id"]
        e2 = records.add_record(self.root, kind="event", title="周日晚上心慌", capture_ids=[c2], date_start="2026-10-11")["id"]
        hyp = hypotheses.add_hypothesis(self.root, "例会让周日晚上焦虑", [e1, e2])["id"]
        out = self.probe("例会")
        row = next(r for r in out["top"] if r["id"] == hyp)
        self.assertFalse(row.get("stub"))
        survey = __import__("personal_understanding.retrieval.survey", fromlist=["catalog"]).catalog(
            self.root, maintenance=True)
        stub = next(h for h in survey["hypotheses"] if h["id"] == hyp)
        self.assertNotIn("claim", stub)


class BoundsAndFidelityTest(RecallTest):
    def test_paging_and_budget(self):
        for i in range(15):
            self.say(f"第{i}次去游泳馆练自由泳")
        out = self.probe("游泳", limit=5)
        self.assertEqual((out["shown"], out["total"], out["truncated"], out["next_offset"]), (5, 15, True, 5))
        page2 = self.probe("游泳", limit=5, offset=5)
        self.assertFalse(set(self.top_ids(out)) & set(self.top_ids(page2)))
        small = self.probe("游泳", limit=50, budget=100)
        self.assertLess(small["shown"], 15)
        self.assertTrue(small["truncated"])

    def test_episode_cap_keeps_one_capture_from_filling_the_list(self):
        cid = self.say("大学的时候参加了辩论队、合唱团、登山社和志愿者协会，大学生活很丰富")
        for club in ("辩论队", "合唱团", "登山社", "志愿者协会"):
            records.add_record(self.root, kind="event", title=f"大学参加{club}", capture_ids=[cid])
        out = self.probe("大学", per_episode=2)
        self.assertEqual(len(out["top"]), 2)
        self.assertTrue(any("episode cap" in h["why"] for h in json.loads(
            paths.trace_path(self.root, timeutil.now().strftime("%Y-%m-%d")).read_text(encoding="utf-8").splitlines()[-1])["held_back"]))

    def test_summary_only_rows_are_flagged(self):
        rid = records.add_record(self.root, kind="fact", title="以前在深圳工作过", fidelity="summary_only")["id"]
        out = self.probe("深圳")
        self.assertEqual(out["top"][0]["id"], rid)
        self.assertEqual(out["top"][0]["evidence_fidelity"], "summary_only")
        self.assertEqual(out["evidence_fidelity"], {"verbatim": 0, "summary_only": 1})
        words = deep.deep(self.root, [rid], "maintenance")
        self.assertEqual(words["items"][0]["verbatim"], [])
        self.assertIn("summary", words["items"][0]["note"])


class DeepTest(RecallTest):
    def test_deep_returns_words_and_spans_and_quotes_verify(self):
        text = "我妹妹小雨下个月在杭州结婚，我有点舍不得。"
        cid = self.say(text)
        rid = records.add_record(self.root, kind="event", title="小雨结婚", capture_ids=[cid],
                                 verbatim_refs=[{"capture_id": cid, "start": 0, "end": 13}])["id"]
        out = probe_mod.retrieve(self.root, level="deep", ids=[rid, cid], maintenance=True)
        spans = out["items"][0]["verbatim"][0]["spans"]
        self.assertEqual(spans[0]["quote"], text[:13])
        self.assertEqual(out["items"][1]["verbatim"][0]["text"], text)
        self.assertEqual(len(out["items"][1]["verbatim"][0]["utf8_sha256"]), 64)
        ok = deep.verify_quote(self.root, cid, "有点舍不得")
        self.assertEqual((ok["found"], ok["offsets"]), (True, [[15, 20]]))
        self.assertFalse(deep.verify_quote(self.root, cid, "很舍不得")["found"])


class TimeTest(RecallTest):
    def test_window_filters_and_browses(self):
        c = self.say("记录一些往事")
        old = records.add_record(self.root, kind="event", title="高考", capture_ids=[c], date_start="2015-06",
                                 phase="high school", salience=3)["id"]
        mid = records.add_record(self.root, kind="event", title="大学毕业", capture_ids=[c], date_start="2019-06",
                                 phase="university", salience=3)["id"]
        out = self.probe(window="2019")
        self.assertEqual(self.top_ids(out), [mid])
        out = self.probe("高考", window="2018:2020")
        self.assertNotIn(old, self.top_ids(out))
        out = self.probe(phase="high school")
        self.assertEqual(self.top_ids(out), [old])

    def test_relative_time_in_the_query_boosts_and_is_traced(self):
        c = self.say("和朋友去吃火锅")
        recent = records.add_record(self.root, kind="event", title="和朋友吃火锅", capture_ids=[c], date_start="2026-11-20")["id"]
        older = records.add_record(self.root, kind="event", title="和同事吃火锅", capture_ids=[c], date_start="2026-03-02")["id"]
        out = self.probe("上周吃火锅", as_of="2026-11-27")
        self.assertEqual(out["time"][0]["expression"], "上周")
        self.assertEqual(self.top_ids(out)[0], recent)
        self.assertIn(older, self.top_ids(out))


class ImportAndCatalogTest(RecallTest):
    def test_import_jsonl_is_verbatim_idempotent_and_mapped(self):
        lines = [{"ref": "m1", "speaker": "Ana", "text": "I adopted a greyhound named Pixel!", "occurred_at": "2023-05-08T13:56:00Z", "session_id": "s1"},
                 {"ref": "m2", "speaker": "Ben", "text": "Pixel is a great name for a dog.", "occurred_at": "2023-05-08T13:57:00Z", "session_id": "s1"}]
        path = write(os.path.join(self.tmp, "h.jsonl"), "\n".join(json.dumps(x) for x in lines) + "\n")
        from personal_understanding import history
        out = history.import_history(self.root, "jsonl", path, user_speaker="Ana")
        self.assertEqual((out["imported"], sorted(out["mapping"])), (2, ["m1", "m2"]))
        again = history.import_history(self.root, "jsonl", path, user_speaker="Ana")
        self.assertEqual((again["imported"], again["already_present"]), (0, 2))
        self.assertEqual(again["mapping"], out["mapping"])
        res = self.probe("greyhound")
        row = res["top"][0]
        self.assertEqual((row["id"], row["speaker"], row["occurred_at"]), (out["mapping"]["m1"], "Ana", "2023-05-08T13:56:00Z"))
        self.assertEqual(row["source_ref"], "m1")
        from personal_understanding import validate, gate
        self.assertEqual(validate.validate(self.root)["status"], "clean")
        receipts.preflight(self.root, "thanks", turn_id="x", tier="skip")
        self.assertEqual(gate.session_check(self.root, "x")["pending_capture_ids"], [])

    def test_survey_routing_and_full(self):
        from personal_understanding.retrieval.survey import catalog
        c = self.say("我在杭州读的大学，学的是建筑")
        uni = records.add_record(self.root, kind="event", title="在杭州读大学", capture_ids=[c], salience=3,
                                 phase="university", domain="education-career")["id"]
        ent = records.add_record(self.root, kind="entity", entity_type="place", title="杭州")["id"]
        records.add_record(self.root, kind="fact", title="学建筑", capture_ids=[c], entity_refs=[ent], domain="education-career")
        out = catalog(self.root, maintenance=True)
        self.assertEqual(out["life_spine"]["university"][0]["id"], uni)
        self.assertEqual(out["entity_directory"]["items"][0]["id"], ent)
        self.assertLess(out["bytes"], 40_000)
        routing = catalog(self.root, view="routing", query="建筑", maintenance=True)
        self.assertEqual(routing["domains"][0]["domain"], "education-career")
        page = catalog(self.root, view="full", limit=2, maintenance=True)
        self.assertEqual((page["total"], page["shown"], page["next_offset"]), (3, 2, 2))

    def test_preflight_carries_a_bounded_context(self):
        self.say("我最近在准备考研，压力很大" * 60)
        out = receipts.preflight(self.root, "今天又复习到很晚", turn_id="t-new", tier="full")
        ctx = out["context"]
        self.assertEqual(len(ctx["recent_captures"]), 1)
        self.assertTrue(ctx["recent_captures"][0]["partial"])
        self.assertGreater(ctx["recent_captures"][0]["omitted_chars"], 0)
        self.assertLessEqual(ctx["used_chars"], ctx["budget_chars"])


class IndexLifecycleTest(RecallTest):
    def test_new_material_is_searchable_at_once_and_views_rebuild(self):
        self.say("第一次学做蛋挞")
        self.probe("蛋挞")
        cid = self.say("蛋挞第二次就成功了")
        self.assertIn(cid, self.top_ids(self.probe("蛋挞")))
        from personal_understanding import archive_index
        archive_index.forget_cached()
        for p in paths.views_dir(self.root).iterdir():
            p.unlink()
        self.assertIn(cid, self.top_ids(self.probe("蛋挞")))

    def test_each_posting_is_kept_once_and_matches_its_documents_row(self):
        def postings_agree(recall):
            rows = recall.db.execute("SELECT t.term, p.doc, p.tf FROM rpost p JOIN rterms t ON t.id = p.term").fetchall()
            docs = [d for (d,) in recall.db.execute("SELECT doc FROM rdocs")]
            self.assertEqual(sorted(rows, key=lambda r: (r[1], r[0])), recall.doc_terms(docs))
            return rows, docs

        # A title counts twice and a sub-word half: weights other than 1 go through the row's packed list too.
        cid = self.say("周末去游泳馆游泳")
        sid = records.add_record(self.root, kind="state", title="游泳馆年卡", summary="在游泳馆办了年卡",
                                 capture_ids=[cid])["id"]
        recall = open_recall(self.root)
        rows, docs = postings_agree(recall)
        self.assertTrue(any(tf != 1.0 for _t, _d, tf in rows))
        self.assertEqual(recall.postings(["游泳"])["游泳"], recall.postings(["游泳"], within=set(docs))["游泳"])
        dense = recall.densest("游泳", 5)  # densest first: where 游泳 weighs most for its length
        lengths = {doc: row["length"] for doc, row in recall.docs([d for d, _tf in dense]).items()}
        weights = [tf / max(lengths[d], 1) for d, tf in dense]
        self.assertEqual(weights, sorted(weights, reverse=True))
        # Re-indexed after its stored length was changed under it, a document still leaves no posting behind.
        recall.db.execute("UPDATE rdocs SET length = length + 3 WHERE doc=?", (recall.doc_for_key("r:" + sid)["doc"],))
        recall.db.commit()
        records.update_state(self.root, id=sid, capture_ids=[self.say("游泳馆的年卡退掉了")], title="退了游泳馆年卡")
        postings_agree(open_recall(self.root))
        self.assertIn(sid, self.top_ids(self.probe("退了游泳馆年卡")))

    def test_a_record_keeps_one_document_through_its_versions(self):
        sid = records.add_record(self.root, kind="state", title="在学游泳", capture_ids=[self.say("开始学游泳")])["id"]
        doc = open_recall(self.root).doc_for_key("r:" + sid)["doc"]
        records.update_state(self.root, id=sid, capture_ids=[self.say("能游一百米了")], title="能游一百米")
        recall = open_recall(self.root)  # the first state's second version says it was superseded
        row = recall.doc_for_key("r:" + sid)
        self.assertEqual((row["doc"], row["status"]), (doc, "superseded"))
        self.assertEqual([r["key"] for r in recall.docs_where("1")].count("r:" + sid), 1)
        self.assertEqual(self.top_ids(self.probe("在学游泳")).count(sid), 1)

    def test_a_reader_behind_an_archive_rebuild_finds_nothing_rather_than_another_row(self):
        from personal_understanding import archive_index
        cid = self.say("周末去游泳馆游泳")
        # Records of two kinds in turn: a rebuild reads them log by log, so they come back in another order.
        for kind, title in (("event", "去游泳"), ("fact", "会游泳"), ("event", "游了一千米")):
            records.add_record(self.root, kind=kind, title=title, capture_ids=[cid])
        recall = open_recall(self.root)
        before = {r["doc"]: r["key"] for r in recall.docs_where("1")}
        self.assertEqual(len(before), 4)
        # Another connection rebuilds the archive index: a log replaced under it by other bytes, as a forget
        # or a restore does (here a blank line first, which moves every line).
        log = paths.v2_dir(self.root) / "receipts.jsonl"
        log.with_name(log.name + ".new").write_bytes(b"\n" + log.read_bytes())
        os.replace(log.with_name(log.name + ".new"), log)
        other = archive_index.ArchiveIndex(self.root)
        generation = other.generation()
        self.assertTrue(other.refresh())
        self.assertEqual(other.generation(), generation + 1)
        other.close()
        stale = {r["doc"]: r["key"] for r in recall.docs_where("1")}  # this reader has not caught up yet
        self.assertEqual({d: k for d, k in stale.items() if before.get(d) != k}, {})
        self.assertIn(cid, self.top_ids(self.probe("游泳")))  # and once it has, everything is found again
        self.assertEqual(len(open_recall(self.root).docs_where("1")), 4)

    def test_a_copied_archive_reads_on_from_its_index_and_a_copy_with_other_bytes_is_rebuilt(self):
        from personal_understanding import archive_index
        cid = self.say("周末去游泳馆游泳")
        sid = records.add_record(self.root, kind="event", title="去游泳馆", capture_ids=[cid])["id"]
        self.assertIn(sid, self.top_ids(self.probe("游泳馆")))  # both indexes are current
        copy = os.path.join(self.tmp, "copy")
        shutil.copytree(self.root, copy)  # other files with the same bytes: another disk, a new laptop

        def generation(root):
            index = archive_index.ArchiveIndex(root)
            try:
                index.refresh()
                return index.generation()
            finally:
                index.close()

        before = generation(self.root)
        self.assertEqual(generation(copy), before, "the copy's index reads on; nothing is built again")
        self.assertIn(sid, self.top_ids(probe_mod.probe(copy, "游泳馆", maintenance=True)))
        # Within what the index read, a changed byte is a changed log, even at the same size.
        log = next(paths.records_dir(copy).glob("*.jsonl"))
        data = log.read_bytes()
        self.assertIn("去游泳馆".encode(), data)
        log.with_name(log.name + ".new").write_bytes(data.replace("去游泳馆".encode(), "去健身房".encode()))
        os.replace(log.with_name(log.name + ".new"), log)
        self.assertEqual(generation(copy), before + 1)
        self.assertEqual(self.top_ids(probe_mod.probe(copy, "健身房", maintenance=True))[:1], [sid])
        self.assertEqual(generation(self.root), before)
        self.assertNotIn(sid, self.top_ids(self.probe("健身房")))

    def test_an_index_of_an_older_layout_is_rebuilt_on_open(self):
        # The postings layout before RECALL_VERSION 11: by term and document, with a separate index by weight.
        cid = self.say("周末去游泳馆游泳")
        db = open_recall(self.root).db
        db.executescript("DROP TABLE rpost;"
                         "CREATE TABLE rpost (term INTEGER, doc INTEGER, tf REAL, density REAL, PRIMARY KEY (term, doc)) WITHOUT ROWID;"
                         "CREATE INDEX rpost_density ON rpost(term, density DESC, doc);")
        from personal_understanding import archive_index
        from personal_understanding.retrieval import index as recall_index
        archive_index.forget_cached()
        recall_index.forget_cached()
        self.assertIn(cid, self.top_ids(self.probe("游泳馆")))
        db = open_recall(self.root).db
        self.assertIn("density DESC, doc", db.execute("SELECT sql FROM sqlite_master WHERE name='rpost'").fetchone()[0])
        self.assertIsNone(db.execute("SELECT name FROM sqlite_master WHERE name='rpost_density'").fetchone())


class ChunkedBuildTest(RecallTest):
    """A build from nothing commits chunk by chunk, and whoever opens the index next carries it on."""

    def dump(self, root):
        from personal_understanding.retrieval import index
        db = open_recall(root).db
        names = dict(db.execute("SELECT id, term FROM rterms"))
        docs = {}
        for row in open_recall(root).docs_where("1"):
            docs[row["key"]] = (sorted((names[t], w) for t, w in index._unpack_terms(row["terms"])), row["length"])
        return docs, sorted(db.execute("SELECT term, df FROM rterms")), sorted(db.execute("SELECT word FROM rwords"))

    def test_while_this_process_has_a_builder_a_read_in_another_thread_does_not_take_the_build_on(self):
        """A tool call during a server's start-up answers INDEX_BUILDING; it builds only once no builder is left."""
        import threading
        from unittest import mock
        from personal_understanding import archive_index
        from personal_understanding.retrieval import index
        said = self.say("我养的猫叫年糕")
        stale_recall_index(self.root)
        inside, leave = threading.Event(), threading.Event()

        def start_up():
            with index.builder_thread():
                inside.set()
                leave.wait(30)

        host = threading.Thread(target=start_up)
        host.start()
        try:
            self.assertTrue(inside.wait(10))
            with mock.patch.object(index, "BUILD_WAIT", 0.1), self.assertRaises(PuError) as caught:
                open_recall(self.root)
            self.assertEqual(caught.exception.code, "INDEX_BUILDING")
            self.assertIsNone(archive_index.open_index(self.root).db.execute(
                "SELECT value FROM meta WHERE key='recall_version'").fetchone())  # nothing claimed, nothing built
        finally:
            leave.set()
            host.join()
        self.assertIn(said, self.top_ids(self.probe("年糕")))

    older_version_meanwhile = False

    def test_a_build_cut_short_is_carried_on_and_ends_as_a_build_in_one_go(self):
        import shutil
        from unittest import mock
        from personal_understanding import archive_index, forget
        from personal_understanding.retrieval import index
        said = [self.say(t) for t in ("我养的猫叫年糕", "年糕今天打了疫苗", "Ran my first 10k with Anna",
                                      "周末和表哥去爬山", "The landlord raised the rent again", "我哥借了两千块还没还")]
        records.add_record(self.root, kind="event", title="年糕打疫苗", capture_ids=[said[1]])
        index.forget_cached()
        drop_index(self.root)
        calls = []
        real = index.RecallIndex._reindex

        def crash_in_second_chunk(self_, key, learn=True, doc=None):
            calls.append(key)
            if len(calls) == 3:
                raise KeyboardInterrupt("the process was stopped")
            return real(self_, key, learn, doc)

        with mock.patch.object(index, "BUILD_CHUNK", 2), \
                mock.patch.object(index.RecallIndex, "_reindex", crash_in_second_chunk):
            with self.assertRaises(KeyboardInterrupt):
                open_recall(self.root)
        index.forget_cached()
        recall = archive_index.open_index(self.root)
        built = recall.db.execute("SELECT COUNT(*) FROM rdocs").fetchone()[0]
        self.assertEqual(built, 2)  # the first chunk stayed; the second was rolled back
        self.assertIsNotNone(recall.db.execute("SELECT value FROM meta WHERE key='recall_build'").fetchone())
        if self.older_version_meanwhile:  # an older version opened the archive and built the index its own way
            recall.db.execute("INSERT INTO rdocs (doc, channel) VALUES (99998, 'verbatim')")  # no capture of ours
            recall.db.execute("UPDATE meta SET value='11' WHERE key='recall_version'")
        # Meanwhile the archive changes: a new message, and an indexed one forgotten.
        late = self.say("年糕学会了开门")
        if not self.older_version_meanwhile:  # (a forget rewrites the logs: the build starts over anyway)
            forget.forget(self.root, said[0], confirm=True)  # indexed in the first chunk
            forget.forget(self.root, said[4], confirm=True)  # still to come in the build's list
        with mock.patch.object(index, "BUILD_CHUNK", 2):
            ids = self.top_ids(self.probe("年糕"))
            self.assertEqual(self.top_ids(self.probe("landlord rent")) == [], not self.older_version_meanwhile)
        self.assertIn(late, ids)
        self.assertEqual(said[0] in ids, self.older_version_meanwhile)
        self.assertIsNone(open_recall(self.root).db.execute("SELECT value FROM meta WHERE key='recall_build'").fetchone())
        fresh = os.path.join(self.tmp, "fresh")
        shutil.copytree(self.root, fresh, ignore=shutil.ignore_patterns("index.sqlite*"))
        index.forget_cached()
        self.assertEqual(self.dump(self.root), self.dump(fresh))

    def test_a_read_during_another_build_says_so_and_the_words_are_still_saved(self):
        from personal_understanding import storage, turn
        cid = self.say("我养的猫叫年糕")
        stale_recall_index(self.root)  # an update: the recall index must be built again
        other = storage.try_file_lock(self.root, paths.recall_build_lock_path(self.root))  # another process building it
        try:
            with self.assertRaises(PuError) as caught:
                self.probe("年糕")
            self.assertEqual(caught.exception.code, "INDEX_BUILDING")
            out = turn.turn(self.root, "年糕今天第一次自己开了门，我吓了一跳", turn_id="t-during")
            self.assertTrue(out["captured"])
            self.assertEqual(out["read_error"]["code"], "INDEX_BUILDING")
        finally:
            storage.release_file_lock(other)
        ids = self.top_ids(self.probe("年糕"))
        self.assertIn(cid, ids)
        self.assertIn(out["capture_id"], ids)

    def test_a_build_from_nothing_leaves_no_freed_pages_in_the_index_file(self):
        """A build that listed its work, or logged every line as a change, left that list as free space."""
        import sqlite3
        from unittest import mock
        from personal_understanding import history
        from personal_understanding.retrieval import index
        chat = os.path.join(self.tmp, "chat.jsonl")
        with open(chat, "w", encoding="utf-8") as fh:
            for n in range(600):  # enough for the lists of work to span many pages
                fh.write(json.dumps({"ref": f"m{n}", "text": f"第{n}天和表哥去爬山, day {n} of the hike with my cousin",
                                     "occurred_at": "2026-05-01T10:00:00Z", "speaker": "user"}) + "\n")
        history.import_history(self.root, "jsonl", chat)
        index.forget_cached()
        drop_index(self.root)
        with mock.patch.object(index, "BUILD_CHUNK", 50):
            self.assertTrue(self.top_ids(self.probe("第5天 爬山")))
        index.forget_cached()
        db = sqlite3.connect(paths.index_db_path(self.root))
        try:
            self.assertEqual(db.execute("PRAGMA freelist_count").fetchone()[0], 0)
        finally:
            db.close()

    def test_an_import_leaves_at_most_a_megabyte_of_write_ahead_log(self):
        """The log is checkpointed every WAL_PAGES pages and cut back then: it never holds a whole import."""
        from personal_understanding import archive_index, history
        chat = os.path.join(self.tmp, "chat.jsonl")
        with open(chat, "w", encoding="utf-8") as fh:
            for n in range(1500):
                fh.write(json.dumps({"ref": f"m{n}", "text": f"第{n}天和表哥去爬山, day {n} of the hike with my cousin",
                                     "occurred_at": "2026-05-01T10:00:00Z", "speaker": "user"}) + "\n")
        history.import_history(self.root, "jsonl", chat)
        self.assertTrue(self.top_ids(self.probe("第5天 爬山")))
        wal = str(paths.index_db_path(self.root)) + "-wal"
        self.assertLessEqual(os.path.getsize(wal) if os.path.exists(wal) else 0, archive_index.WAL_LIMIT)
        self.assertLessEqual(archive_index.WAL_LIMIT, 1 << 20)

    def test_a_build_cut_short_and_rebuilt_by_another_version_starts_over(self):
        self.older_version_meanwhile = True
        self.test_a_build_cut_short_is_carried_on_and_ends_as_a_build_in_one_go()

    def test_a_read_waits_out_a_short_build_by_another(self):
        import threading
        from personal_understanding import storage
        cid = self.say("我养的猫叫年糕")
        stale_recall_index(self.root)  # an update: the recall index must be built again
        other = storage.try_file_lock(self.root, paths.recall_build_lock_path(self.root))  # a build of a small archive
        ends = threading.Timer(0.25, storage.release_file_lock, (other,))  # within index.BUILD_WAIT
        ends.start()
        try:
            self.assertIn(cid, self.top_ids(self.probe("年糕")))
        finally:
            ends.join()

    def test_rebuild_views_leaves_a_build_under_way_alone(self):
        from personal_understanding import storage, views
        cid = self.say("我养的猫叫年糕")
        db = paths.index_db_path(self.root)
        inode = os.stat(db).st_ino
        other = storage.try_file_lock(self.root, paths.recall_build_lock_path(self.root))  # a server building
        try:
            self.refused("INDEX_BUILDING", views.rebuild_views, self.root)
            self.assertEqual(os.stat(db).st_ino, inode)
        finally:
            storage.release_file_lock(other)
        views.rebuild_views(self.root)
        self.assertIn(cid, self.top_ids(self.probe("年糕")))
