"""Follow-ups, hypotheses, the current-state view and conversation starters."""

import datetime as dt

from tests.helpers import ArchiveTest

from personal_understanding import capture, followups, hypotheses, receipts, records, timeutil, understanding, validate
from personal_understanding.archive_index import open_index
from personal_understanding.errors import PuError


def at(day):
    return timeutil.parse_instant(day)


class Base(ArchiveTest):
    def turn(self, text, turn, day=None):
        receipts.preflight(self.root, text, turn_id=turn, tier="full")
        return capture.capture_text(self.root, text, turn, now=at(day) if day else None)["capture_id"]


class FollowupTest(Base):
    def setUp(self):
        super().setUp()
        self.cid = self.turn("周五要去面试了，好紧张，希望能过。", "t1", "2026-11-02")

    def test_due_upcoming_undated_and_the_ready_prompt(self):
        due = followups.add_followup(self.root, "面试怎么样了？", self.cid, expectation="周五面试能过",
                                     due_rule="+3d", now=at("2026-11-02"))["id"]
        later = followups.add_followup(self.root, "offer 结果出来了吗？", self.cid, due_at="2026-11-07")["id"]
        undated = followups.add_followup(self.root, "之后还想换城市吗？", self.cid)
        self.assertIn("undated", undated["warnings"][0])
        out = followups.followup_check(self.root, as_of="2026-11-05T12:00:00Z")
        self.assertEqual([d["id"] for d in out["due"]], [due])
        self.assertEqual([u["id"] for u in out["upcoming"]], [later])
        self.assertEqual([u["id"] for u in out["undated"]], [undated["id"]])
        prompt = out["due"][0]["prompt"]
        self.assertIn("2026-11-02", prompt)
        self.assertIn("周五要去面试了", prompt)
        self.assertIn("周五面试能过", prompt)
        self.assertIn("面试怎么样了？", prompt)
        self.assertIsNotNone(open_index(self.root).followup(due)["last_checked_at"])

    def test_preflight_carries_due_followups(self):
        followups.add_followup(self.root, "面试怎么样了？", self.cid, due_at="2026-11-03")
        out = receipts.preflight(self.root, "今天好累啊", turn_id="t9")
        self.assertEqual(len(out["due_followups"]), 1)
        self.assertIn("面试怎么样了？", out["due_followups"][0]["prompt"])

    def test_english_prompt(self):
        cid = self.turn("My driving test is on Monday and I'm nervous.", "t2", "2026-11-02")
        followups.add_followup(self.root, "How did the driving test go?", cid, due_at="2026-11-03")
        prompt = followups.followup_check(self.root, as_of="2026-11-04")["due"][0]["prompt"]
        self.assertTrue(prompt.startswith("On 2026-11-02 you said"))
        self.assertIn("It is now time to check", prompt)

    def test_resolution_channels(self):
        fid = followups.add_followup(self.root, "面试怎么样了？", self.cid, due_rule="+3d")["id"]
        with self.assertRaises(PuError) as ctx:
            followups.resolve_followup(self.root, fid, "answered", "ok")
        self.assertEqual(ctx.exception.code, "FOLLOWUP_NOTE_REQUIRED")
        answer = self.turn("面试过了！下周入职。", "t3")
        out = followups.resolve_followup(self.root, fid, "answered", "过了，下周入职", capture_id=answer)
        self.assertEqual(out["resolution"]["capture_id"], answer)
        with self.assertRaises(PuError) as ctx:
            followups.resolve_followup(self.root, fid, "declined", "user would rather not say")
        self.assertEqual(ctx.exception.code, "FOLLOWUP_CLOSED")
        self.assertEqual(open_index(self.root).followup(fid)["version"], 2)  # rows are never deleted

    def test_bad_rules_and_sources(self):
        for kwargs, code in (({"due_rule": "soon"}, "BAD_DUE_RULE"), ({"due_at": "next friday"}, "BAD_DATE")):
            with self.assertRaises(PuError) as ctx:
                followups.add_followup(self.root, "q?", self.cid, **kwargs)
            self.assertEqual(ctx.exception.code, code)
        with self.assertRaises(PuError) as ctx:
            followups.add_followup(self.root, "q?", "cap-missing")
        self.assertEqual(ctx.exception.code, "FOLLOWUP_CAPTURE_UNKNOWN")

    def test_validate_warns_about_open_past_due(self):
        followups.add_followup(self.root, "面试怎么样了？", self.cid, due_at="2020-01-01")
        report = validate.validate(self.root)
        self.assertIn("FOLLOWUP_PAST_DUE", " ".join(report["problems"]))


class HypothesisTest(Base):
    def setUp(self):
        super().setUp()
        c1 = self.turn("周日晚上又开始焦虑明天上班。", "t1", "2026-10-04")
        c2 = self.turn("又是周日晚上，心里发慌。", "t2", "2026-10-11")
        self.e1 = records.add_record(self.root, kind="event", title="周日晚上焦虑上班", capture_ids=[c1])["id"]
        self.e2 = records.add_record(self.root, kind="event", title="周日晚上心慌", capture_ids=[c2])["id"]

    def test_one_event_or_one_day_is_not_a_pattern(self):
        for supports in ([self.e1], [self.e1, self.e1]):
            with self.assertRaises(PuError) as ctx:
                hypotheses.add_hypothesis(self.root, "周日晚上的焦虑来自工作", supports)
            self.assertEqual(ctx.exception.code, "HYPOTHESIS_NEEDS_SUPPORT")

    def test_candidate_then_confirmation_needs_the_users_words(self):
        out = hypotheses.add_hypothesis(self.root, "周日晚上的焦虑来自对周一工作的预期", [self.e1, self.e2],
                                        alternatives=["周末睡眠不规律"])
        rec = out["record"]
        self.assertEqual((rec["kind"], rec["layer"], rec["status"]), ("hypothesis", "model_hypothesis", "candidate"))
        self.assertIn("counter-evidence", out["warnings"][-1])
        with self.assertRaises(PuError) as ctx:
            hypotheses.review_hypothesis(self.root, rec["id"], "confirmed", "the user agreed in chat")
        self.assertEqual(ctx.exception.code, "HYPOTHESIS_NEEDS_CONFIRMATION")
        yes = self.turn("对，就是一想到周一的例会就难受。", "t3")
        done = hypotheses.review_hypothesis(self.root, rec["id"], "confirmed", "用户确认：周一例会", capture_id=yes)
        self.assertEqual(done["status"], "confirmed")
        self.assertIn(yes, open_index(self.root).record(rec["id"])["capture_ids"])

    def test_rejected_keeps_the_row_and_intent_expires(self):
        rec = hypotheses.add_hypothesis(self.root, "周日焦虑是因为通勤", [self.e1, self.e2])["record"]
        hypotheses.review_hypothesis(self.root, rec["id"], "rejected", "用户说和通勤无关")
        self.assertEqual(open_index(self.root).record(rec["id"])["status"], "rejected")
        intent = hypotheses.add_hypothesis(self.root, "可能想换工作", [self.e1, self.e2], kind="intent",
                                           now=at("2026-11-01"))["record"]
        self.assertEqual(intent["expires_at"], "2026-11-08T00:00:00Z")


class ViewsTest(Base):
    def test_current_state_blocks_and_starters(self):
        cid = self.turn("我最近很累，但我一直觉得家人最重要。我还在纠结要不要换工作。", "t1")
        records.add_record(self.root, kind="value", title="家人最重要", capture_ids=[cid], salience=3, domain="family-home")
        records.add_record(self.root, kind="state", title="最近很累", capture_ids=[cid], aspect="load", domain="health-life")
        records.add_record(self.root, kind="state", title="在杭州上班", capture_ids=[cid], domain="education-career")
        records.add_record(self.root, kind="decision", title="要不要换工作", capture_ids=[cid], status="uncertain")
        records.add_record(self.root, kind="fact", title="日记", capture_ids=[cid], sensitivity="highly-private")
        followups.add_followup(self.root, "换工作的事想好了吗？", cid, due_at="2020-01-01")
        view = understanding.current_state(self.root)
        self.assertEqual([i["title"] for i in view["core"]], ["家人最重要"])
        self.assertEqual([i["title"] for i in view["load"]], ["最近很累"])
        self.assertEqual([i["title"] for i in view["reality"]], ["在杭州上班"])
        self.assertEqual([i["title"] for i in view["tensions"]], ["要不要换工作"])
        self.assertEqual(view["next"][0]["why"], "due")
        for block in ("core", "reality", "load", "tensions", "next"):
            self.assertLessEqual(len(view[block]), 3)

        first = understanding.conversation_starters(self.root, language="zh")
        self.assertEqual(first["suggestion"]["gap"]["type"], "due_followup")
        second = understanding.conversation_starters(self.root, skip=first["next_skip"], language="zh")
        self.assertEqual(second["suggestion"]["gap"]["type"], "empty_domain")
        self.assertEqual(second["suggestion"]["gap"]["records"], 0)

    def test_stale_states_are_suggested(self):
        cid = self.turn("我在学日语。", "t1")
        old = at("2026-01-01")
        records.add_record(self.root, kind="state", title="在学日语", capture_ids=[cid], now=old)
        seen = []
        skip = 0
        while skip is not None:
            out = understanding.conversation_starters(self.root, skip=skip)
            seen.append(out["suggestion"]["gap"]["type"])
            skip = out["next_skip"]
        self.assertIn("stale_state", seen)
        self.assertEqual(seen[0], "empty_domain")

    def test_derived_facets_need_two_shared_events(self):
        cid = self.turn("高中的时候我和阿强天天踢球。", "t1")
        school = records.add_record(self.root, kind="entity", entity_type="school_or_organization", title="一中")["id"]
        qiang = records.add_record(self.root, kind="entity", entity_type="person", title="阿强")["id"]
        records.add_record(self.root, kind="event", title="和阿强在一中踢球", capture_ids=[cid], entity_refs=[school, qiang])
        self.assertEqual(understanding.derived_facets(self.root), [])
        records.add_record(self.root, kind="event", title="一中球赛阿强进球", capture_ids=[cid], entity_refs=[school, qiang])
        facets = understanding.derived_facets(self.root)
        self.assertEqual(len(facets), 1)
        self.assertEqual(facets[0]["relation"], "co-occurs")
