"""The turn tools behind the default MCP profile: turn, remember (all or nothing), recall; and the
surface-aware wording every hint goes through."""

import json
from pathlib import Path

from tests.helpers import ArchiveTest
from tests.test_mcp_tools import RECALL_ZH

from personal_understanding import commands, paths, receipts
from personal_understanding.archive_index import open_index
from personal_understanding.reads import recall
from personal_understanding.remember import remember
from personal_understanding.surface import Surface
from personal_understanding.turn import turn

PERSONAL = "我妹妹小雨下个月在杭州结婚，我有点舍不得。"
SISTER = {"kind": "entity", "entity_type": "person", "id": "person-xiaoyu", "title": "小雨", "aliases": ["妹妹"]}
WEDDING = {"kind": "event", "id": "event-wedding", "title": "小雨在杭州结婚", "entity_refs": ["person-xiaoyu"],
           "date_start": "2027-01", "date_precision": "month"}


def traces(root):
    out = []
    for path in sorted(paths.traces_dir(root).glob("*.jsonl")):
        out += [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    return out


class TurnTest(ArchiveTest):
    def test_a_personal_turn_saves_the_words_and_reads_citing_the_turn(self):
        out = turn(self.root, PERSONAL, turn_id="t1")
        self.assertTrue(out["captured"])
        row = open_index(self.root).capture(out["capture_id"])
        self.assertEqual(json.loads(Path(self.root, row["path"]).read_text("utf-8"))["text"], PERSONAL)
        self.assertEqual(out["memories"]["read_as"], "turn")
        self.assertEqual(traces(self.root)[-1]["turn_id"], "t1")
        again = turn(self.root, PERSONAL, turn_id="t1")
        self.assertEqual((again["repeated"], again["capture_id"]), (True, out["capture_id"]))
        self.assertEqual(len(open_index(self.root).turn_capture_ids("t1")), 1)

    def test_a_reminder_to_keep_and_a_boss_yelling_over_a_deploy_are_saved(self):
        for n, text in enumerate(("remind me that my passport expires in March",
                                  "my boss yelled at me because the deploy failed")):
            with self.subTest(text=text):
                out = turn(self.root, text, turn_id=f"k{n}")
                self.assertTrue(out["captured"], out["receipt"])
                self.assertFalse(out["read_turn"])

    def test_a_skip_turn_saves_and_reads_nothing(self):
        out = turn(self.root, "how do I reverse a list in python", turn_id="t1")
        self.assertEqual((out["captured"], out["capture_id"], out["read_turn"]), (False, None, False))
        self.assertNotIn("memories", out)
        self.assertEqual(traces(self.root), [])

    def test_a_skip_turn_upgraded_to_full_is_saved(self):
        text = "how do I reverse a list in python"
        turn(self.root, text, turn_id="t1")
        out = turn(self.root, text, turn_id="t1", tier="full")
        self.assertEqual((out["receipt"]["tier"], out["receipt"]["version"], out["captured"]), ("full", 2, True))
        self.refused("TIER_DOWNGRADE_REFUSED", turn, self.root, text, turn_id="t1", tier="skip")

    def test_a_turn_left_open_is_named_by_the_next_turn_and_by_the_gate(self):
        turn(self.root, PERSONAL, turn_id="t1")
        out = turn(self.root, "My dog Rex turned 10 today", turn_id="t2")
        self.assertEqual([w["message"] for w in out["warnings"] if w["code"] == "TURNS_NOT_CLOSED"],
                         ["the words of turn t1 are saved but not yet closed"])
        done = remember(self.root, "t1", records=[SISTER, WEDDING])
        self.assertFalse(done["may_claim_saved"])  # the gate holds every open capture
        self.assertIn("(turn t2)", " ".join(done["next"]))
        self.assertTrue(remember(self.root, "t2", reason="a birthday of the dog, kept verbatim only")["may_claim_saved"])
        self.assertNotIn("warnings", turn(self.root, "how do I reverse a list in python", turn_id="t3"))

    def test_skip_asked_for_a_personal_message_says_its_words_were_not_saved(self):
        out = turn(self.root, PERSONAL, turn_id="t1", tier="skip")
        self.assertFalse(out["captured"])
        warning = next(w for w in out["warnings"] if w["code"] == "PERSONAL_NOT_SAVED")
        self.assertIn("relationship-mention", warning["message"])
        kept = turn(self.root, PERSONAL, turn_id="t1", tier="full")  # what the hint says keeps it
        self.assertTrue(kept["captured"])
        technical = turn(self.root, "how do I reverse a list in python", turn_id="t2", tier="skip")
        self.assertNotIn("PERSONAL_NOT_SAVED", [w["code"] for w in technical.get("warnings", [])])

    def test_a_read_turn_is_answered_in_the_same_call(self):
        first = turn(self.root, PERSONAL, turn_id="t1")
        remember(self.root, "t1", records=[SISTER, WEDDING])
        out = turn(self.root, RECALL_ZH, turn_id="t2")
        self.assertTrue(out["read_turn"])
        self.assertFalse(out["captured"])
        self.assertEqual(out["receipt"]["required_actions"], ["recall"])
        self.assertIn(first["capture_id"], [r["id"] for r in out["recall"]["top"]])
        self.assertEqual((traces(self.root)[-1]["turn_id"], traces(self.root)[-1]["mode"]), ("t2", "turn"))
        later = recall(self.root, "杭州", turn_id="t2")  # a read turn reads as itself, not as maintenance
        self.assertEqual(later["read_as"], "turn")
        from personal_understanding.pipeline import pipeline_view

        page = Path(pipeline_view(self.root, turn_id="t2")["pages"][0]).read_text("utf-8")
        self.assertIn(out["recall"]["trace_id"], page)  # the turn's page shows the reads that cited it

    def test_an_order_to_forget_is_not_saved_and_points_at_what_to_forget(self):
        said = turn(self.root, "我跟表哥借了五万块，年底还", turn_id="t1")
        out = turn(self.root, "把我跟表哥借钱那件事删掉", turn_id="t2")
        self.assertEqual((out["captured"], out["read_turn"]), (False, True))
        self.assertEqual(out["recall"]["top"][0]["id"], said["capture_id"])
        self.assertIn("personal_forget", Surface("mcp", commands.COMMANDS).text(out["next"]))
        self.assertEqual(open_index(self.root).turn_capture_ids("t2"), [])
        # the request names what is to go: its receipt and its read's trace keep none of those words
        logged = paths.receipts_path(self.root).read_text("utf-8").splitlines()[-1] + json.dumps(traces(self.root)[-1],
                                                                                                ensure_ascii=False)
        self.assertNotIn("表哥", logged)

    def test_the_turns_own_saved_words_do_not_hide_another_reading_of_them(self):
        plan = turn(self.root, "国庆打算带爸妈去云南玩", turn_id="t1")["capture_id"]
        out = turn(self.root, "我国庆去哪", turn_id="t2")  # read 我国|庆 first; saved, it must not hold 我国 for itself
        self.assertEqual([r["id"] for r in (out.get("recall") or out["memories"])["top"]][:1], [plan])

    def test_a_saved_question_about_what_lies_ahead_lists_it(self):
        plan = turn(self.root, "我下个月要去日本出差", turn_id="t1")["capture_id"]
        out = turn(self.root, "接下来一个月我要干嘛", turn_id="t2")  # personal, so saved first: its words are not content
        self.assertIn(plan, [r["id"] for r in (out.get("recall") or out["memories"])["top"]])

    def test_a_plain_question_about_someone_brings_what_the_archive_holds(self):
        told = turn(self.root, "和老同学王磊吃了顿饭，他刚辞职去创业做咖啡。", turn_id="t1")
        for n, question in enumerate(("王磊现在做什么", "what is 王磊 doing now")):
            out = turn(self.root, question, turn_id=f"q{n}")
            self.assertEqual((out["receipt"]["signal"], out["read_turn"], out["captured"]), ("non-personal", False, False))
            self.assertEqual([r["id"] for r in out["memories"]["top"]][:1], [told["capture_id"]], question)
            self.assertIn("memories", out["next"])
            self.assertEqual(traces(self.root)[-1]["turn_id"], f"q{n}")
        asked = turn(self.root, "给我讲讲王磊的事", turn_id="q5")  # a short request about someone known
        self.assertEqual([r["id"] for r in asked["memories"]["top"]][:1], [told["capture_id"]])
        pasted = turn(self.root, "请帮我总结这篇文章：" + "咖啡是一种常见的饮料，起源于埃塞俄比亚，后来传到世界各地。" * 4,
                      turn_id="q6")
        self.assertNotIn("memories", pasted)  # a long request carries text to work on, not a question
        general = turn(self.root, "why is the sky blue", turn_id="q9")  # nothing in the archive: nothing shown
        self.assertNotIn("memories", general)
        self.assertNotIn("memories", general["next"])
        last = traces(self.root)[-1]  # the read is traced, but a skip turn's words are not kept for nothing
        self.assertEqual((last["turn_id"], last["query"]), ("q9", None))
        self.assertNotIn("sky", json.dumps(last))
        kept = [t["query"] for t in traces(self.root) if t["turn_id"] == "q5"]
        self.assertEqual(kept, ["给我讲讲王磊的事"])  # a read that found rows keeps its words
        self.assertFalse([t for t in traces(self.root) if t["turn_id"] == "q6"])  # the long request was not read

    def test_a_request_for_advice_in_technical_words_reads_what_the_user_said_about_themselves(self):
        said = [turn(self.root, text, turn_id=f"t{n}", session_id="chat-1")["capture_id"] for n, text in enumerate((
            "My old laptop is so slow that I can't work on client files anymore, I'm a freelance designer.",
            "I've always been on a Mac and I really don't want to relearn all my shortcuts.",
            "I travel to clients twice a week so it can't be heavy."))]
        self.assertTrue(all(said))
        out = turn(self.root, "Can you suggest a laptop?", turn_id="q1", session_id="chat-2")
        self.assertEqual((out["receipt"]["signal"], out["captured"]), ("technical", False))
        rows = {r["id"]: r["why"] for r in out["memories"]["top"]}
        self.assertEqual(list(rows)[:1], said[:1])
        self.assertEqual(set(rows), set(said))  # the Mac and the travel: no word of the request, yet the advice's
        self.assertEqual(rows[said[2]].get("asked_for"), "advice")
        self.assertIn("memories", out["next"])
        coding = turn(self.root, "how do I reverse a list in python", turn_id="q2", session_id="chat-2")
        self.assertNotIn("memories", coding)  # a technical question that asks no advice reads nothing
        self.assertFalse([t for t in traces(self.root) if t["turn_id"] == "q2"])

    def test_the_message_said_just_before_a_saved_question_is_not_brought_for_being_next_to_it(self):
        said = turn(self.root, "My sister-in-law Priya had her baby girl, they named her Asha.", turn_id="t1",
                    session_id="chat-1")["capture_id"]
        asked = turn(self.root, "Did I save money on anything this month? I feel broke.", turn_id="t2",
                     session_id="chat-1")
        self.assertTrue(asked["captured"])
        read = asked.get("recall") or asked.get("memories") or {}
        self.assertNotIn(said, [r["id"] for r in read.get("top", [])])

    def test_a_saved_question_still_reaches_what_was_said_in_other_words(self):
        rent = turn(self.root, "Our landlord is raising the rent by 15% in March", turn_id="t1")["capture_id"]
        out = turn(self.root, "房租涨了吗", turn_id="t2")  # saved: its own 房租 is now in the archive
        self.assertTrue(out["captured"])
        self.assertEqual([r["id"] for r in out["memories"]["top"]][:1], [rent])

    def test_a_question_asked_again_finds_the_answer_not_itself(self):
        """The same question, saved each time it was asked, holds nothing the question does not say."""
        for n, (told, question) in enumerate((
                ("我女儿小满下个月就要上小学了，我在纠结要不要换个离学校近点的房子", "What do I know about my kid?"),
                ("Had a long call with my sister Priya, she wants to leave the bank and open a bakery",
                 "What's going on with my sibling's career?"),
                ("Bought a used Peloton, trying to ride 4 times a week", "What exercise equipment do I own?"),
                ("今天面试了字节跳动的产品经理岗位，二面的时候被问懵了", "我找工作的事怎么样了"))):
            said = turn(self.root, told, turn_id=f"t{n}")["capture_id"]
            first = turn(self.root, question, turn_id=f"t{n}-a")
            again = turn(self.root, question, turn_id=f"t{n}-b")
            self.assertTrue(first["captured"] and again["captured"], question)  # asked about their own life: saved
            rows = again["memories"]["top"]
            self.assertEqual(rows[0]["id"], said, question)
            self.assertIn(first["capture_id"], [r["id"] for r in rows])  # still there, after the answer

    def test_rows_found_through_other_words_say_so_in_the_compact_view(self):
        brother = {"kind": "entity", "entity_type": "person", "id": "person-brother", "title": "哥哥",
                   "aliases": ["我哥", "哥"]}
        turn(self.root, "我哥借了两千块还没还", turn_id="t1")
        remember(self.root, "t1", records=[brother, {"kind": "event", "title": "哥哥借了两千块还没还",
                                                      "entity_refs": ["person-brother"]}])
        out = turn(self.root, "家里谁欠我钱", turn_id="t2")  # shares no word with what it finds
        top = out["recall"]["top"]
        self.assertTrue(top)
        for row in top:
            self.assertIn("stands_for", row["why"], row)  # a built-in stand-in, never the user's own word
        expanded = recall(self.root, "钱", expand=["借钱"], turn_id="t2")["top"]
        self.assertTrue(any(r["why"].get("expand") == "借钱" for r in expanded), expanded)

    def test_reads_of_a_personal_turn_wait_for_its_words(self):
        receipts.preflight(self.root, PERSONAL, turn_id="t1")
        self.refused("READ_GATE", recall, self.root, "结婚", turn_id="t1")
        self.refused("READ_GATE", recall, self.root, "结婚", turn_id="never")
        self.refused("READ_GATE", recall, self.root, "结婚")


class RememberTest(ArchiveTest):
    def setUp(self):
        super().setUp()
        self.capture_id = turn(self.root, PERSONAL, turn_id="t1")["capture_id"]

    def test_a_batch_can_point_at_its_own_items_and_closes_the_turn(self):
        later = dict(WEDDING, id="event-visit", title="去杭州帮忙", date_start="2027-02")
        out = remember(self.root, "t1", records=[WEDDING, SISTER, later],
                       hypotheses=[{"claim": "家里的大事让我想家", "supports": ["event-wedding", "event-visit"]}],
                       followups=[{"question": "婚礼准备得怎么样了？", "due_rule": "+3d"}])
        self.assertTrue(out["may_claim_saved"], out)
        self.assertEqual(out["ledger"]["status"], "derived")
        self.assertEqual(out["written"]["records"], ["event-wedding", "person-xiaoyu", "event-visit"])
        self.assertEqual(len(out["written"]["hypotheses"]), 1)
        said = json.dumps(out["items"], ensure_ascii=False)
        self.assertNotIn("does not exist", said)  # in-batch references are not dangling
        index = open_index(self.root)
        self.assertEqual(index.record("event-wedding")["capture_ids"], [self.capture_id])  # cites the turn by default
        self.assertNotIn("capture_ids", index.record("person-xiaoyu"))  # cards cite nothing of their own
        self.assertEqual(index.followup(out["written"]["followups"][0])["capture_id"], self.capture_id)

    def test_one_refused_item_refuses_the_batch_and_lists_every_problem(self):
        error = self.refused("RECORD_CAPTURE_UNKNOWN", remember, self.root, "t1",
                             records=[SISTER, {"kind": "fact", "title": "旧笔记", "capture_ids": ["cap-none"]},
                                      dict(SISTER, title="雨")],
                             followups=[{"question": "x", "due_rule": "someday"}])
        problems = [(p["item"], p["code"]) for p in error.details["problems"]]
        self.assertEqual(problems, [("records[1]", "RECORD_CAPTURE_UNKNOWN"), ("records[2]", "RECORD_ID_EXISTS"),
                                    ("followups[0]", "BAD_DUE_RULE")])
        self.assertIn("(and 2 more)", error.message)

    def test_nothing_to_add_needs_a_reason(self):
        self.refused("LEDGER_REASON_REQUIRED", remember, self.root, "t1")
        self.refused("LEDGER_REASON_REQUIRED", remember, self.root, "t1", reason="ok")
        out = remember(self.root, "t1", reason="a greeting, nothing of the user's life")
        self.assertEqual((out["ledger"]["status"], out["may_claim_saved"]), ("no-derivation-needed", True))

    def test_a_hypothesis_alone_does_not_cite_the_message_and_the_refusal_says_what_does(self):
        remember(self.root, "t1", records=[WEDDING, dict(WEDDING, id="event-visit", title="去杭州帮忙", date_start="2027-02")])
        turn(self.root, "我觉得是因为要去杭州帮忙，我才这么想家", turn_id="t2")
        guess = {"claim": "去杭州帮忙让我想家", "supports": ["event-wedding", "event-visit"]}
        error = self.refused("LEDGER_REASON_REQUIRED", remember, self.root, "t2", hypotheses=[guess])
        self.assertIn("hypothesis never cites the message", error.hint)
        out = remember(self.root, "t2", records=[{"kind": "fact", "title": "觉得想家是因为要去杭州帮忙"}], hypotheses=[guess])
        self.assertTrue(out["may_claim_saved"], out)

    def test_state_changes_and_followup_answers(self):
        state = {"kind": "state", "id": "state-leave", "title": "还没决定请不请假", "subject_key": "wedding-leave"}
        first = remember(self.root, "t1", records=[state], followups=[{"question": "请假的事定了吗？", "due_rule": "+1d"}])
        text = "定了，请五天假回去帮忙。"
        turn(self.root, text, turn_id="t2", tier="full")
        fid = first["written"]["followups"][0]
        refused = self.refused("FOLLOWUP_CLOSED", remember, self.root, "t2", resolve_followups=[
            {"id": fid, "resolution": "answered", "note": "请五天假回去"}, {"id": fid, "resolution": "answered", "note": "again and again"}])
        self.assertIn("twice", refused.message)
        out = remember(self.root, "t2", updates=[{"id": "state-leave", "summary": "请五天假"}],
                       resolve_followups=[{"id": fid, "resolution": "answered", "note": "请五天假回去帮忙"}])
        self.assertTrue(out["may_claim_saved"], out)
        index = open_index(self.root)
        self.assertEqual(index.record("state-leave")["status"], "superseded")
        self.assertEqual(index.followup(fid)["status"], "answered")

    def test_an_event_is_corrected_by_a_new_record_that_supersedes_it_and_a_repeat_on_another_day_is_its_own(self):
        remember(self.root, "t1", records=[WEDDING])
        turn(self.root, "婚礼改到二月了，不是一月。", turn_id="t2", tier="full")
        refused = self.refused("STATE_NOT_FOUND", remember, self.root, "t2",
                               updates=[{"id": "event-wedding", "date_start": "2027-02"}])
        self.assertIn("supersedes", Surface("mcp", commands.COMMANDS, offered=commands.profile("default")).text(refused.hint))
        moved = dict(WEDDING, id="event-wedding-feb", date_start="2027-02", supersedes=["event-wedding"])
        out = remember(self.root, "t2", records=[moved])  # the same words as the record it corrects
        self.assertTrue(out["may_claim_saved"], out)
        index = open_index(self.root)
        self.assertEqual(index.record("event-wedding")["status"], "superseded")
        turn(self.root, "又去小雨那儿了，她三月办第二场（回门宴）。", turn_id="t3", tier="full")
        again = dict(WEDDING, id="event-wedding-march", date_start="2027-03")  # same title, another month
        self.assertTrue(remember(self.root, "t3", records=[again])["may_claim_saved"])
        self.assertEqual(index.record("event-wedding-feb")["status"], "current")

    def test_a_turn_without_saved_words_takes_no_items(self):
        remember(self.root, "t1", reason="closed here: this test is about another turn")
        turn(self.root, "how do I reverse a list in python", turn_id="t2")
        self.refused("REMEMBER_NOT_PERSONAL", remember, self.root, "t2", records=[SISTER])
        self.assertTrue(remember(self.root, "t2")["gate"]["obligations_met"])
        self.refused("TURN_NO_RECEIPT", remember, self.root, "t3")


class SurfaceTest(ArchiveTest):
    def test_one_text_two_faces(self):
        text = "Run {cmd:capture_user_update} with {arg:capture_id}, {arg:confirm=true}, {arg:tier=full} or {arg:repair_ledger}."
        cli = Surface("cli", commands.COMMANDS).text(text)
        self.assertEqual(cli, "Run capture_user_update.py with --capture-id, --confirm, --tier full or --repair.")
        full = Surface("mcp", commands.COMMANDS, offered=commands.profile("all")).text(text)
        self.assertEqual(full, 'Run personal_capture_user_turn with capture_id, confirm: true, tier: "full" or repair_ledger.')
        default = Surface("mcp", commands.COMMANDS, offered=commands.profile("default")).text("{cmd:capture_user_update} {cmd:validate_memory}")
        self.assertEqual(default, "personal_turn personal_validate (full tool profile)")
        console = Surface("cli", commands.COMMANDS, cli_command="personal-understanding").text("{cmd:backup_archive}")
        self.assertEqual(console, "personal-understanding backup_archive")

    def test_the_users_words_are_never_rendered(self):
        surface = Surface("mcp", commands.COMMANDS, offered=commands.profile("default"))
        result = {"text": "我写了 {cmd:forget}", "hint": "see {cmd:forget}", "top": [{"snippet": "{arg:confirm=true}"}],
                  "warnings": ["{arg:turn_id}"]}
        self.assertEqual(surface.fields(result), {"text": "我写了 {cmd:forget}", "hint": "see personal_forget",
                                                  "top": [{"snippet": "{arg:confirm=true}"}], "warnings": ["turn_id"]})

    def test_the_cli_speaks_scripts_and_flags(self):
        code, out, _ = self.cli("turn", PERSONAL, "--turn-id", "t1")
        self.assertEqual(code, 0, out)
        self.assertIn("remember.py", out["next"])
        self.assertIn("--turn-id", out["next"])
        batch = json.dumps({"turn_id": "t1", "records": [SISTER, WEDDING]}, ensure_ascii=False).encode("utf-8")
        code, out, _ = self.cli("remember", "--json", "-", stdin=batch)
        self.assertEqual((code, out["may_claim_saved"]), (0, True))
        code, out, _ = self.cli("recall", "结婚", "--mode", "deep")
        self.assertEqual(code, 1)
        self.assertIn("--ids", out["error"]["hint"])
