"""Recall: whose words answer a question (a speaker it names, the owner's own, or the other side's)."""

import json
import os

from tests.test_mcp_tools import Client
from tests.test_recall import RecallTest

from personal_understanding import history
from personal_understanding.retrieval import whose


class WhoseWordsTest(RecallTest):
    def chat(self, session, *lines):
        """Import (speaker, role, text) lines as one session; returns their capture ids in order."""
        path = os.path.join(self.tmp, f"{session}.jsonl")
        with open(path, "w", encoding="utf-8") as fh:
            for n, (speaker, role, text) in enumerate(lines):
                fh.write(json.dumps({"ref": f"{session}-{n}", "speaker": speaker, "role": role, "text": text,
                                     "occurred_at": "2026-05-02T10:00:00Z", "session_id": session}) + "\n")
        mapping = history.import_history(self.root, "jsonl", path)["mapping"]
        return [mapping[f"{session}-{n}"] for n in range(len(lines))]

    def test_a_first_person_question_is_answered_by_the_owners_words(self):
        _, adopted, advice = self.chat(
            "s1",
            ("assistant", "other", "Hi! What would you like to talk about today?"),
            ("user", "user", "We adopted Luna from the shelter about six months ago."),
            ("assistant", "other", "How lovely! A shelter cat settles in over months: give your cat a quiet corner, "
                                   "play with your cat every day, and a cat tree keeps a young cat busy for a long "
                                   "time. Most cats love it."))
        out = self.probe("How long have I had my cat Luna?")
        self.assertEqual(self.top_ids(out)[0], adopted)
        self.assertEqual(out["top"][0]["why"]["whose"], {"side": "owner"})
        out = self.probe("What did you suggest for my cat?")
        self.assertEqual(self.top_ids(out)[0], advice)
        self.assertEqual(out["top"][0]["why"]["whose"], {"side": "other"})

    def test_an_owner_called_me_is_not_a_name_the_question_says(self):
        mine, tip = self.chat(
            "s1", ("me", "user", "I need a hostel in Lisbon for the conference, near the river if possible."),
            ("Sam", "other", "In Lisbon try the hostel by the river in Alfama: I stayed there, cheap and quiet."))
        out = self.probe("Which hostel in Lisbon did you recommend to me?")
        self.assertEqual(self.top_ids(out)[0], tip)
        self.assertEqual(out["top"][0]["why"]["whose"], {"side": "other"})

    def test_an_archive_of_only_the_owners_words_says_nothing_about_whose(self):
        said = self.chat("s1", ("user", "user", "I adopted my cat Luna last spring."),
                         ("user", "user", "My cat Luna hates the vacuum cleaner."))
        out = self.probe("How long have I had my cat Luna?")
        self.assertEqual(set(self.top_ids(out)[:2]), set(said))
        self.assertFalse([row["id"] for row in out["top"] if "whose" in row["why"]])

    def test_a_named_speaker_is_preferred_but_never_buries_a_clearly_better_match(self):
        hers, his, _ = self.chat(
            "s1",
            ("Anna", "user", "The tomatoes in my garden are growing well. We had so much rain in May and June, "
                             "the soil stayed wet."),
            ("Ben", "other", "Anna, my tomatoes in the garden are growing well too!"),
            ("Cleo", "other", "Lovely."))
        tahoe = self.chat("s2", ("Anna", "user", "Here is the photo I took of the sunset at Lake Tahoe last summer."),
                          ("Ben", "other", "Great photo, I should take more photos."))[0]
        # Ben's short line matches the words a little better; the question is about what Anna said.
        out = self.probe("What did Anna say about the tomatoes in the garden?")
        self.assertEqual(self.top_ids(out)[:2], [hers, his])
        self.assertEqual(out["top"][0]["why"]["whose"], {"speaker": "anna"})
        self.assertNotIn("whose", out["top"][1]["why"])
        # Only Anna ever mentioned Lake Tahoe: a question that names Ben still finds her words first.
        out = self.probe("What did Ben take a photo of at Lake Tahoe?")
        self.assertEqual(self.top_ids(out)[0], tahoe)
        self.assertNotIn("whose", out["top"][0]["why"])

    def test_a_request_for_advice_brings_what_the_user_said_in_the_conversation_it_matched(self):
        slow, advice, _, _, mac, _ = self.chat(
            "s1",
            ("user", "user", "I'm a freelance graphic designer and my old computer is getting really slow."),
            ("assistant", "other", "For design work a laptop older than six years will struggle; before buying a new "
                                   "laptop, check the disk and the memory. A light laptop with 32 GB suits print work."),
            ("user", "user", "How often should I back up client files?"),
            ("assistant", "other", "Daily and automatically, to a drive and to the cloud."),
            ("user", "user", "I've always been on a Mac and I really don't want to relearn all my shortcuts."),
            ("assistant", "other", "Staying on macOS makes sense then: your fonts and licences carry over."))
        elsewhere = self.chat("s2", ("user", "user", "I hate long flights, my back hurts after three hours."),
                              ("assistant", "other", "Walk every hour and drink water."))[0]
        client = Client(self, "default")
        for ask in ("Can you suggest a laptop?", "Which laptop should I get?", "推荐一台laptop吧"):
            out = client.call("personal_recall", {"query": ask, "maintenance": True})
            found = {row["id"]: row["why"] for row in out["top"]}
            self.assertEqual(self.top_ids(out)[0], advice, ask)
            self.assertIn(slow, found)
            # The words the advice depends on share none with the request: they come after what matched.
            self.assertEqual(found.get(mac), {"channel": "conversation", "asked_for": "advice", "near": advice,
                                              "whose": {"side": "owner"}}, (ask, out["top"]))
            self.assertNotIn(elsewhere, found)  # a conversation the request did not match stays out
        # Asking what was said, or what the other side advised, is not a request for advice.
        for ask in ("Did I mention a laptop?", "Which laptop did you recommend?"):
            out = client.call("personal_recall", {"query": ask, "maintenance": True})
            self.assertNotIn(mac, self.top_ids(out), ask)

    def test_the_users_words_near_the_request_come_before_rows_that_only_brush_it(self):
        battery, reply, _, _, mac, _ = self.chat(
            "s1",
            ("user", "user", "My laptop is dying, the laptop battery lasts an hour at most."),
            ("assistant", "other", "A laptop battery wears out; a new laptop battery or a new laptop both help."),
            ("user", "user", "My budget is tight this month though."),
            ("assistant", "other", "Understood, a refurbished one could do."),
            ("user", "user", "I've always been on a Mac and I really don't want to relearn all my shortcuts."),
            ("assistant", "other", "Staying on macOS makes sense then."))
        brushed = self.chat("s2", ("user", "user", "Any tips for a rainy day?"),
                            ("assistant", "other", "Stay in with a film, bake bread, call a friend, sort old photos, "
                                                   "tidy the laptop desktop, read a novel, try a new soup, "
                                                   "write letters, and plan a trip for the spring."))[1]
        ids = self.top_ids(self.probe("Can you suggest a laptop?"))
        self.assertEqual(set(ids[:2]), {battery, reply})
        self.assertIn(brushed, ids)
        self.assertLess(ids.index(mac), ids.index(brushed))

    def test_a_request_matched_in_the_other_language_brings_the_conversations_own_words_too(self):
        allergy, _, dinner = self.chat("s1", ("user", "user", "我对海鲜过敏，一吃虾就起疹子。"),
                                       ("user", "user", "我老公不吃辣，我们家做菜基本不放辣椒。"),
                                       ("user", "user", "周末想请同事来家里吃饭，大概六个人。"))
        out = self.probe("any dinner ideas for my coworkers?")  # coworkers found 同事: a stand-in, not the words
        self.assertEqual(self.top_ids(out)[:1], [dinner])
        self.assertEqual(next(r for r in out["top"] if r["id"] == allergy)["why"].get("near"), dinner)

    def test_words_a_highly_private_record_cites_are_not_brought_near_a_request_for_advice(self):
        from personal_understanding import records
        _, private, dinner = self.chat("s1", ("user", "user", "我对海鲜过敏，一吃虾就起疹子。"),
                                       ("user", "user", "我在吃抗抑郁的药，不能喝酒。"),
                                       ("user", "user", "周末想请同事来家里吃饭，大概六个人。"))
        records.add_record(self.root, kind="fact", title="在服用抗抑郁药", capture_ids=[private],
                           sensitivity="highly-private")
        ids = self.top_ids(self.probe("any dinner ideas for my coworkers?"))
        self.assertEqual(ids[:1], [dinner])
        self.assertNotIn(private, ids)

    def test_pages_of_a_request_for_advice_hold_each_row_once(self):
        lines = []
        for n in range(14):
            lines += [("user", "user", f"note {n}: the laptop fan is loud again" if n % 3 == 0 else
                       f"note {n}: groceries and the dentist on day {n}"), ("assistant", "other", f"reply {n}")]
        self.chat("s1", *lines)
        ask = "Can you suggest a laptop?"
        whole = self.top_ids(self.probe(ask, limit=6))
        self.assertIn("conversation", [r["why"]["channel"] for r in self.probe(ask, limit=6)["top"]])
        pages = self.top_ids(self.probe(ask, limit=3)) + self.top_ids(self.probe(ask, limit=3, offset=3))
        self.assertEqual(pages, whole)

    def test_who_asks_for_advice_is_the_owner_even_without_saying_i(self):
        mine, _ = self.chat(
            "s1", ("user", "user", "The battery of this laptop barely lasts an hour now."),
            ("assistant", "other", "A laptop battery wears out after a few hundred cycles; a new laptop, or a new "
                                   "battery for the laptop, both help. Keep a laptop between 20 and 80 percent."))
        out = self.probe("Can you suggest a laptop?")
        self.assertEqual(self.top_ids(out)[0], mine)
        self.assertEqual(out["top"][0]["why"]["whose"], {"side": "owner"})

    def test_phrasings_that_ask_for_advice(self):
        from personal_understanding.retrieval.lexical import asks_advice
        asking = ["Any tips for my trip?", "What should I get my sister for her birthday?", "Should I call her?",
                  "Do you think it might be my living room?", "How can I sleep better?", "我该怎么办", "你觉得呢",
                  "周末去哪玩，有什么推荐吗？", "Help me pick a gift for Anna"]
        telling = ["What did you recommend for my trip?", "How did I get there?", "I think so",
                   "How many books do I have?", "What tips did my coach give me?", "你之前推荐过哪本书"]
        self.assertEqual([t for t in asking if not asks_advice(t, opinion=True)], [])
        self.assertEqual([t for t in telling if asks_advice(t, opinion=True)], [])

    def test_phrasings_that_say_whose_words_are_meant(self):
        cases = {
            "What was the name of the hostel you recommended?": 0,
            "你之前推荐的那本书叫什么": 0,
            "How long have I had my cat?": 1,
            "I mentioned a show I liked, do you remember it?": 1,
            "我上次跟你说的那家店叫什么": 1,
            "Can you remind me what the fifth bottle was?": None,
            "I was going through our previous chat about cocktails": None,
            "Which event happened first, the trip or the wedding?": None,
        }
        for text, side in cases.items():
            self.assertEqual(whose.side_asked(text), side, text)
        self.assertEqual(whose.speakers_named("What did Nate say?", {"nate", "joanna", "user"}), {"nate"})
        self.assertEqual(whose.speakers_named("Tell me about the Natewood trip", {"nate"}), set())
