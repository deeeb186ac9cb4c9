"""Recall that finds what the user means: neighbouring turns, time-only and causal
questions, verbatim phrases, whole words, and questions that share no word with
the answer (kinship, synonyms, two languages)."""

from tests.test_recall import RecallTest

from personal_understanding import capture, receipts


class ConversationTest(RecallTest):
    def turns(self, session, *texts):
        ids = []
        for n, text in enumerate(texts):
            turn = f"{session}-{n}"
            receipts.preflight(self.root, text, turn_id=turn, tier="full")
            ids.append(capture.capture_text(self.root, text, turn, session_id=session)["capture_id"])
        return ids


class NeighbourTurnTest(ConversationTest):
    def test_a_two_word_reply_never_outranks_the_turn_that_holds_the_words(self):
        said, reply = self.turns("s1", "Finally booked the ferry to Naxos for the whole family", "Nice one!")
        self.turns("s2", "The ferry was late again this morning", "Annoying.")
        out = self.probe("ferry to Naxos")
        ids = self.top_ids(out)
        self.assertEqual(ids[0], said)
        self.assertIn(reply, ids)
        self.assertLess(ids.index(said), ids.index(reply))
        why = out["top"][ids.index(reply)]["why"]
        self.assertEqual(why["matched"], {})
        self.assertEqual(why["context"]["relation"], "reply to")
        self.assertEqual(why["context"]["id"], said)

    def test_the_answer_to_a_question_is_found_through_the_question(self):
        asked, answer, _thanks = self.turns("s1", "你周末去哪儿爬山了？", "黄山，和表哥一起去的", "好羡慕")
        self.turns("s2", "今天加班到很晚", "早点休息")
        out = self.probe("周末去哪儿爬山")
        ids = self.top_ids(out)
        self.assertEqual(ids[:2], [asked, answer])
        self.assertEqual(out["top"][1]["why"]["context"], {"relation": "reply to", "id": asked,
                                                           "lift": out["top"][1]["why"]["context"]["lift"]})

    def test_a_turn_with_words_of_its_own_can_rise_above_what_it_answered(self):
        asked, answer = self.turns("s1", "What did you cook for the party?",
                                   "A huge paella for the party, with saffron from Valencia")
        out = self.probe("paella for the party")
        self.assertEqual(self.top_ids(out)[:2], [answer, asked])
