"""Importers: each conversation-history format becomes the same neutral message stream."""

import dataclasses
import json
import os
import re
import shutil
import tempfile
import unittest
from pathlib import Path

from personal_understanding import importers
from personal_understanding.errors import PuError
from personal_understanding.importers import Message, parse

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "import"
JSONL = FIXTURES / "history.jsonl"
LOCOMO = FIXTURES / "locomo_sample.json"
CHATGPT = FIXTURES / "chatgpt_conversations.json"
TEXT = FIXTURES / "transcript.txt"
WHATSAPP = FIXTURES / "whatsapp_chat.txt"
TELEGRAM = FIXTURES / "telegram_result.json"
BENCH_LOCOMO = REPO.parent / "shared" / "bench-data" / "locomo" / "locomo10.json"

SAFE_SESSION = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
TIME_FORM = re.compile(r"^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}(Z|[+-]\d{2}:\d{2}))?$")


class ImportTestCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="pu-import-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write(self, name, content):
        path = os.path.join(self.tmp, name)
        data = content if isinstance(content, bytes) else content.encode("utf-8")
        with open(path, "wb") as fh:
            fh.write(data)
        return path

    def write_json(self, name, obj):
        return self.write(name, json.dumps(obj, ensure_ascii=False))

    def refused(self, code, fmt, path, **kwargs):
        with self.assertRaises(PuError) as ctx:
            parse(fmt, path, **kwargs)
        self.assertEqual(ctx.exception.code, code, ctx.exception.message)
        self.assertTrue(ctx.exception.hint)
        return ctx.exception

    def assertWellFormed(self, messages):
        refs = [m.ref for m in messages]
        self.assertEqual(len(refs), len(set(refs)))
        for m in messages:
            self.assertIsInstance(m, Message)
            self.assertIn(m.role, ("user", "other"))
            self.assertTrue(m.text.strip())
            if m.occurred_at is not None:
                self.assertRegex(m.occurred_at, TIME_FORM)
            if m.session_id is not None:
                self.assertRegex(m.session_id, SAFE_SESSION)
            self.assertIsInstance(m.meta, dict)


class CommonTest(ImportTestCase):
    FIXTURE_OF = {"jsonl": JSONL, "locomo": LOCOMO, "chatgpt": CHATGPT, "text": TEXT, "whatsapp": WHATSAPP,
                  "telegram": TELEGRAM}

    def test_every_format_has_a_fixture_and_parses_it_well_formed(self):
        self.assertEqual(set(importers.FORMATS), set(self.FIXTURE_OF))
        for fmt, path in self.FIXTURE_OF.items():
            with self.subTest(fmt=fmt):
                messages = parse(fmt, path)
                self.assertGreater(len(messages), 3)
                self.assertWellFormed(messages)

    def test_two_parses_give_the_same_refs_and_messages(self):
        for fmt, path in self.FIXTURE_OF.items():
            with self.subTest(fmt=fmt):
                first, second = parse(fmt, path), parse(fmt, str(path))
                self.assertEqual([m.ref for m in first], [m.ref for m in second])
                self.assertEqual(first, second)

    def test_unknown_format_is_refused(self):
        err = self.refused("IMPORT_BAD_FORMAT", "signal", JSONL)
        self.assertIn("jsonl", err.hint)

    def test_missing_file_is_unreadable_in_every_format(self):
        missing = os.path.join(self.tmp, "nope.json")
        for fmt in importers.FORMATS:
            with self.subTest(fmt=fmt):
                self.refused("IMPORT_UNREADABLE", fmt, missing)

    def test_a_directory_is_unreadable(self):
        self.refused("IMPORT_UNREADABLE", "text", self.tmp)

    def test_non_utf8_is_refused_with_its_line(self):
        path = self.write("latin1.txt", "Ana: hola\nBen: ma\xf1ana\n".encode("latin-1"))
        for fmt in importers.FORMATS:
            with self.subTest(fmt=fmt):
                err = self.refused("IMPORT_INVALID", fmt, path)
                self.assertIn("UTF-8", err.message)
                self.assertEqual(err.details["line"], 2)

    def test_a_utf8_byte_order_mark_is_not_part_of_the_text(self):
        path = self.write("bom.txt", b"\xef\xbb\xbfAna: hola\n")
        self.assertEqual([(m.speaker, m.text) for m in parse("text", path)], [("Ana", "hola")])

    def test_sample_ids_only_apply_to_locomo_and_user_speaker_must_be_text(self):
        self.refused("BAD_ARGUMENT", "jsonl", JSONL, sample_ids=["x"])
        self.refused("BAD_ARGUMENT", "text", TEXT, user_speaker="")

    def test_messages_are_immutable(self):
        message = parse("text", TEXT)[0]
        with self.assertRaises(dataclasses.FrozenInstanceError):
            message.text = "changed"
        self.assertEqual(message.to_dict()["ref"], "line-1")

    def test_session_slug_keeps_safe_ids_and_separates_unsafe_ones(self):
        slug = importers.session_slug
        self.assertEqual(slug("conv-26-s1"), "conv-26-s1")
        self.assertNotEqual(slug("Work Chat"), slug("work-chat"))
        self.assertTrue(slug("Work Chat").startswith("work-chat-"))
        self.assertEqual(slug("Work Chat"), slug("Work Chat"))
        for raw in ("会话一", "..", "-x", "A/B\\C", "x" * 200):
            with self.subTest(raw=raw):
                self.assertRegex(slug(raw), SAFE_SESSION)
                self.assertLessEqual(len(slug(raw)), 64)

    def test_normalize_time(self):
        norm = importers.normalize_time
        self.assertEqual(norm("2024-05-08"), "2024-05-08")
        self.assertEqual(norm("2024-05-08T09:15:00Z"), "2024-05-08T09:15:00Z")
        self.assertEqual(norm("2024-05-08T09:15:00.750+02:00"), "2024-05-08T09:15:00+02:00")  # the offset lived in is kept
        self.assertEqual(norm("2024-05-08 23:30"), "2024-05-08T23:30:00Z")
        self.assertEqual(norm("2024-05-08T23:30:00-0130"), "2024-05-08T23:30:00-01:30")
        self.assertEqual(norm("2024-05-08T09:15:00+00:00"), "2024-05-08T09:15:00Z")
        for bad in ("2024-02-30", "2024-05", "08/05/2024", "2024-05-08T25:00", "2024-05-08T10:00+25:00",
                    "9999-12-31T23:00:00-05:00", "yesterday", "", 20240508):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                norm(bad)


class JsonlTest(ImportTestCase):
    def test_fixture(self):
        messages = parse("jsonl", JSONL)
        self.assertEqual([m.ref for m in messages], ["m1", "m2", "m3", "m4", "m5"])
        self.assertEqual([m.speaker for m in messages], ["Ines", "Rafael", "Ines", "Rafael", "Bot"])
        self.assertEqual([m.role for m in messages], ["user", "other", "user", "other", "other"])
        self.assertEqual(messages[0].text, "Booked the ferry to the island for Saturday 🚢")
        self.assertEqual(messages[1].text, "Nice! Bring the blue tent,\nthe green one leaks.")
        self.assertEqual(messages[2].text, "  我把旧相机卖了，换了一台新的。 ")
        self.assertEqual([m.occurred_at for m in messages],
                         ["2024-05-08T09:15:00Z", "2024-05-08T11:20:05+02:00", "2024-05-09", "2024-05-09T18:00:00Z", None])
        self.assertEqual(messages[0].session_id, "trip-2024")
        self.assertRegex(messages[2].session_id, r"^work-chat-[0-9a-f]{8}$")
        self.assertEqual(messages[2].session_id, messages[3].session_id)
        self.assertIsNone(messages[4].session_id)
        self.assertEqual(messages[3].meta, {"channel": "sms"})

    def test_user_speaker_chooses_the_owner_but_an_explicit_role_stands(self):
        messages = parse("jsonl", JSONL, user_speaker="Rafael")
        self.assertEqual([m.role for m in messages], ["other", "user", "other", "user", "other"])
        self.refused("BAD_ARGUMENT", "jsonl", JSONL, user_speaker="Nobody")

    def test_a_line_marked_user_sets_the_default_owner(self):
        path = self.write("roles.jsonl", "\n".join([
            json.dumps({"ref": "a", "speaker": "Bot", "text": "hi"}),
            json.dumps({"ref": "b", "speaker": "Kim", "text": "hello", "role": "user"}),
            json.dumps({"ref": "c", "speaker": "Kim", "text": "again"}),
        ]))
        self.assertEqual([m.role for m in parse("jsonl", path)], ["other", "user", "user"])

    def test_crlf_and_blank_lines_are_fine_and_an_empty_file_is_empty(self):
        path = self.write("crlf.jsonl", '{"ref": "a", "speaker": "Kim", "text": "one"}\r\n\r\n   \r\n')
        self.assertEqual([m.text for m in parse("jsonl", path)], ["one"])
        self.assertEqual(parse("jsonl", self.write("empty.jsonl", "")), [])

    def invalid(self, lines, line_no, fragment):
        path = self.write("bad.jsonl", "\n".join(lines) + "\n")
        err = self.refused("IMPORT_INVALID", "jsonl", path)
        self.assertEqual(err.details["line"], line_no)
        self.assertEqual(err.details["file"], path)
        self.assertIn(fragment, err.message)
        self.assertIn(f"{path}:{line_no}", err.message)

    def test_errors_name_the_line_and_the_problem(self):
        ok = json.dumps({"ref": "a", "speaker": "Kim", "text": "fine"})
        self.invalid([ok, "", '{"ref": "b", "speaker": "Kim", "text": '], 3, "not valid JSON")
        self.invalid([ok, '["not", "an", "object"]'], 2, "one JSON object")
        self.invalid([ok, json.dumps({"ref": "b", "speaker": "Kim"})], 2, "missing text")
        self.invalid([ok, json.dumps({"ref": "b", "speaker": "Kim", "text": "  \n"})], 2, "missing text")
        self.invalid([ok, json.dumps({"ref": "b", "text": "x"})], 2, "missing speaker")
        self.invalid([json.dumps({"ref": 7, "speaker": "Kim", "text": "x"})], 1, "missing ref")
        self.invalid([ok, json.dumps({"ref": "b", "speaker": "Kim", "text": "x", "occurred_at": "2024-13-01"})], 2, "bad date")
        self.invalid([ok, json.dumps({"ref": "b", "speaker": "Kim", "text": "x", "occurred_at": "last week"})], 2, "bad date")
        self.invalid([ok, ok], 2, "duplicate ref 'a' (first used on line 1)")
        self.invalid([ok, json.dumps({"ref": "b", "speaker": "Kim", "text": "x", "role": "assistant"})], 2, "role")
        self.invalid([ok, json.dumps({"ref": "b", "speaker": "Kim", "text": "x", "occured_at": "2024-01-01"})], 2, "occured_at")
        self.invalid([ok, json.dumps({"ref": "b", "speaker": "Kim", "text": "x", "session_id": 3})], 2, "session_id")
        self.invalid([ok, json.dumps({"ref": "b", "speaker": "Kim", "text": "x", "meta": [1]})], 2, "meta")


class LocomoTest(ImportTestCase):
    def test_fixture(self):
        messages = parse("locomo", LOCOMO)
        self.assertEqual([m.ref for m in messages], [
            "demo-1:D1:1", "demo-1:D1:2", "demo-1:D1:3", "demo-1:D2:1", "demo-1:D2:2", "demo-1:D10:1",
            "demo-2:D1:1", "demo-2:D1:2"])
        self.assertEqual([m.role for m in messages], ["user", "other", "user", "other", "user", "user", "user", "other"])
        self.assertEqual([m.session_id for m in messages], [
            "demo-1-s1", "demo-1-s1", "demo-1-s1", "demo-1-s2", "demo-1-s2", "demo-1-s10", "demo-2-s1", "demo-2-s1"])
        self.assertEqual(messages[0].occurred_at, "2023-03-03T09:05:00Z")
        self.assertEqual(messages[3].occurred_at, "2023-03-17T12:40:00Z")
        self.assertEqual(messages[5].occurred_at, "2023-04-02T00:10:00Z")
        self.assertEqual(messages[6].occurred_at, "2022-12-01T19:30:00Z")
        self.assertEqual(messages[1].text, " That is great — did the screws fit this time?")
        self.assertEqual(messages[3].text, "My cousin visits from Kraków next week 🎉")
        self.assertEqual(messages[4].text, "Take her to the river walk!\nIt is lovely in spring.")
        self.assertEqual(messages[0].meta, {"sample_id": "demo-1", "dia_id": "D1:1", "session": 1})

    def test_image_turns_keep_text_and_put_the_caption_in_meta(self):
        image = {m.ref: m for m in parse("locomo", LOCOMO)}["demo-1:D1:3"]
        self.assertEqual(image.text, "Here it is, all oak.")
        self.assertEqual(image.meta["image_caption"], "a photo of a wooden shelf against a white wall")
        self.assertEqual(image.meta["image_url"], ["https://example.invalid/shelf.jpg"])
        self.assertNotIn("shelf against", image.text)

    def test_user_speaker_and_sample_filter(self):
        messages = parse("locomo", LOCOMO, user_speaker="Tomas", sample_ids=["demo-1"])
        self.assertEqual({m.meta["sample_id"] for m in messages}, {"demo-1"})
        self.assertEqual([m.role for m in messages], ["other", "user", "other", "user", "other", "other"])
        self.assertEqual(len(parse("locomo", LOCOMO, sample_ids="demo-2")), 2)
        self.assertEqual(parse("locomo", LOCOMO, sample_ids=[]), [])

    def test_user_speaker_must_speak_in_every_chosen_sample(self):
        self.refused("BAD_ARGUMENT", "locomo", LOCOMO, user_speaker="Tomas")
        self.refused("BAD_ARGUMENT", "locomo", LOCOMO, user_speaker="Tomas", sample_ids=["demo-2"])

    def test_unknown_sample_id_is_refused(self):
        err = self.refused("BAD_ARGUMENT", "locomo", LOCOMO, sample_ids=["demo-1", "demo-9"])
        self.assertIn("demo-9", err.message)

    def sample(self, **conversation):
        base = {"speaker_a": "Ana", "speaker_b": "Ben", "session_1_date_time": "1:00 pm on 2 June, 2023",
                "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "hi"}]}
        base.update(conversation)
        return [{"sample_id": "s-1", "conversation": base}]

    def test_malformed_files_are_refused_whole(self):
        cases = {
            "bad date": self.sample(session_1_date_time="sometime in June"),
            "missing text": self.sample(session_1=[{"speaker": "Ana", "dia_id": "D1:1"}]),
            "missing dia_id": self.sample(session_1=[{"speaker": "Ana", "text": "hi"}]),
            "duplicate dia_id": self.sample(session_1=[{"speaker": "Ana", "dia_id": "D1:1", "text": "a"},
                                                       {"speaker": "Ben", "dia_id": "D1:1", "text": "b"}]),
            "speaker_a": self.sample(speaker_a=None),
            "list of samples": {"sample_id": "s-1"},
            "sample_id": [{"conversation": {}}],
        }
        for fragment, data in cases.items():
            with self.subTest(fragment=fragment):
                err = self.refused("IMPORT_INVALID", "locomo", self.write_json("bad.json", data))
                self.assertIn(fragment, err.message)
        # A broken sample is refused even when the filter would skip it.
        data = self.sample() + [{"sample_id": "s-2", "conversation": {"speaker_a": "X"}}]
        self.refused("IMPORT_INVALID", "locomo", self.write_json("bad.json", data), sample_ids=["s-1"])

    def test_invalid_json_names_line_and_column(self):
        err = self.refused("IMPORT_INVALID", "locomo", self.write("bad.json", '[\n  {"sample_id": "x",}\n]'))
        self.assertEqual(err.details["line"], 2)

    def test_a_session_without_date_has_no_time(self):
        data = self.sample()
        del data[0]["conversation"]["session_1_date_time"]
        self.assertIsNone(parse("locomo", self.write_json("nodate.json", data))[0].occurred_at)

    def test_date_parser_forms(self):
        p = importers.parse_locomo_datetime
        self.assertEqual(p("1:56 pm on 8 May, 2023"), "2023-05-08T13:56:00Z")
        self.assertEqual(p("10:04 am on 19 December, 2023"), "2023-12-19T10:04:00Z")
        self.assertEqual(p("12:06 am on 11 November, 2022"), "2022-11-11T00:06:00Z")
        self.assertEqual(p("12:30 pm on 1 January, 2024"), "2024-01-01T12:30:00Z")
        self.assertEqual(p("7:05 PM on 3 Sept 2023"), "2023-09-03T19:05:00Z")
        self.assertEqual(p("9:00 a.m. on 29 Feb, 2024"), "2024-02-29T09:00:00Z")
        self.assertEqual(p("8 May, 2023"), "2023-05-08")
        for bad in ("13:00 pm on 8 May, 2023", "1:56 pm on 30 February, 2023", "1:56 pm on 8 Ma, 2023",
                    "1:56 on 8 May, 2023", "2023-05-08", "", None):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                p(bad)

    @unittest.skipUnless(BENCH_LOCOMO.is_file(), "LoCoMo benchmark data not present")
    def test_the_benchmark_file_parses_plausibly(self):
        messages = parse("locomo", BENCH_LOCOMO)
        samples = {m.meta["sample_id"] for m in messages}
        self.assertEqual(len(samples), 10)
        self.assertGreater(len(messages), 4000)
        self.assertLess(len(messages), 10000)
        self.assertWellFormed(messages)
        self.assertTrue(all(m.occurred_at for m in messages))
        sessions = {m.session_id for m in messages}
        self.assertGreater(len(sessions), 100)
        self.assertTrue(any("image_caption" in m.meta for m in messages))
        for sid in samples:
            roles = {m.role for m in messages if m.meta["sample_id"] == sid}
            self.assertEqual(roles, {"user", "other"})
        self.assertEqual(parse("locomo", BENCH_LOCOMO), messages)


class ChatgptTest(ImportTestCase):
    A = "6f1c2b7e-0000-4000-8000-00000000000a"
    B = "7a2d3c8f-0000-4000-8000-00000000000b"

    def test_fixture_walks_the_current_branch_only(self):
        messages = parse("chatgpt", CHATGPT)
        self.assertEqual([m.ref for m in messages], [
            f"{self.A}:n-u1", f"{self.A}:n-a1", f"{self.A}:n-u2", f"{self.A}:n-a2", f"{self.B}:v-u1", f"{self.B}:v-a1"])
        texts = [m.text for m in messages]
        self.assertNotIn("Try tomatoes, they love sun.", texts)  # regenerated away on a side branch
        self.assertNotIn("Sure.", texts)
        self.assertEqual([m.speaker for m in messages], ["user", "assistant"] * 3)
        self.assertEqual([m.role for m in messages], ["user", "other"] * 3)
        self.assertEqual(texts[0], "What should I plant on a north-facing balcony? 🌿")
        self.assertEqual(texts[1], "Ferns and mint do well in shade.\n\nHostas too.")
        self.assertEqual(texts[2], "这是我的阳台，早上有太阳。")
        self.assertEqual(texts[3], "Morning light is enough for mint,\nand basil may manage too.")
        self.assertEqual(texts[4], "Remind me to call grandma on Sunday.")
        self.assertEqual([m.session_id for m in messages], [self.A] * 4 + [self.B] * 2)

    def test_times_come_from_each_message_and_are_never_invented(self):
        messages = parse("chatgpt", CHATGPT)
        self.assertEqual([m.occurred_at for m in messages], [
            "2024-05-08T09:15:00Z", "2024-05-08T09:15:25Z", "2024-05-08T09:16:40Z", None,
            "2024-01-01T00:01:00Z", "2024-01-01T00:01:10Z"])

    def test_system_tool_hidden_and_tool_call_messages_are_skipped(self):
        ids = {m.meta["message_id"] for m in parse("chatgpt", CHATGPT)}
        self.assertTrue(ids.isdisjoint({"n-root", "n-sys", "n-ctx", "n-a2-code", "n-tool", "n-a1-old", "v-a1-old"}))

    def test_without_current_node_the_newest_child_branch_is_taken(self):
        data = json.loads(CHATGPT.read_text(encoding="utf-8"))
        self.assertNotIn("current_node", data[1])
        self.assertIn("current_node", data[0])
        del data[0]["current_node"]
        texts = [m.text for m in parse("chatgpt", self.write_json("old.json", data))]
        self.assertIn("Ferns and mint do well in shade.\n\nHostas too.", texts)
        self.assertNotIn("Try tomatoes, they love sun.", texts)
        self.assertEqual(len(texts), 6)

    def test_non_text_parts_are_noted_in_meta(self):
        messages = {m.ref: m for m in parse("chatgpt", CHATGPT)}
        self.assertEqual(messages[f"{self.A}:n-u2"].meta["skipped_parts"], ["image_asset_pointer"])
        self.assertEqual(messages[f"{self.B}:v-u1"].meta["skipped_parts"], ["audio_asset_pointer"])
        self.assertNotIn("skipped_parts", messages[f"{self.A}:n-u1"].meta)
        self.assertEqual(messages[f"{self.A}:n-a1"].meta["title"], "Balcony garden")
        self.assertEqual(messages[f"{self.A}:n-a1"].meta["model"], "gpt-4o")

    def conversation(self, mapping, current="c", cid="Conv One"):
        return [{"title": "t", "conversation_id": cid, "current_node": current, "mapping": mapping}]

    @staticmethod
    def node(parent, role="user", text="hello", children=(), created=1700000000):
        message = {"author": {"role": role}, "content": {"content_type": "text", "parts": [text]},
                   "create_time": created}
        return {"parent": parent, "children": list(children), "message": message}

    def test_unsafe_conversation_ids_become_slugs_and_refs_keep_the_id(self):
        data = self.conversation({"r": {"parent": None, "children": ["c"], "message": None}, "c": self.node("r")})
        (message,) = parse("chatgpt", self.write_json("c.json", data))
        self.assertEqual(message.ref, "Conv One:c")
        self.assertRegex(message.session_id, r"^conv-one-[0-9a-f]{8}$")
        self.assertEqual(message.occurred_at, "2023-11-14T22:13:20Z")

    def test_empty_messages_are_skipped(self):
        data = self.conversation({"r": {"parent": None, "children": ["e"], "message": None},
                                  "e": self.node("r", text="  ", children=["c"]),
                                  "c": self.node("e", role="assistant", text="answer")})
        self.assertEqual([m.text for m in parse("chatgpt", self.write_json("c.json", data))], ["answer"])

    def test_broken_trees_and_bad_times_are_refused(self):
        cases = {
            "missing": self.conversation({"c": self.node("gone")}),
            "loop": self.conversation({"a": self.node("c"), "c": self.node("a")}),
            "referenced but missing": self.conversation({"c": self.node(None)}, current="zzz"),
            "create_time": self.conversation({"c": self.node(None, created="yesterday")}),
            "out of range": self.conversation({"c": self.node(None, created=1e20)}),
            "conversation id": [{"mapping": {}}],
            "mapping": [{"id": "x"}],
            "parts": self.conversation({"c": {"parent": None, "message": {
                "author": {"role": "user"}, "content": {"content_type": "text", "parts": "hi"}}}}),
        }
        for fragment, data in cases.items():
            with self.subTest(fragment=fragment):
                err = self.refused("IMPORT_INVALID", "chatgpt", self.write_json("bad.json", data))
                self.assertIn(fragment, err.message)

    def test_duplicate_conversations_are_refused(self):
        data = json.loads(CHATGPT.read_text(encoding="utf-8"))
        err = self.refused("IMPORT_INVALID", "chatgpt", self.write_json("dup.json", data + data[:1]))
        self.assertIn("duplicate", err.message)


class DateFormsAndInvalidLinesTest(ImportTestCase):
    """The date forms exports really use are read; an invalid line refuses the file, or is left out and listed."""

    def test_jsonl_dates_in_the_forms_exports_use(self):
        forms = {"1:56 pm on 8 May, 2023": "2023-05-08T13:56:00Z", "8 May 2023": "2023-05-08",
                 "May 8, 2023 1:56 PM": "2023-05-08T13:56:00Z", "Mon, 08 May 2023 13:56:00 +0200": "2023-05-08T13:56:00+02:00",
                 "2023/05/08 13:56": "2023-05-08T13:56:00Z", "2023年5月8日 下午1:56": "2023-05-08T13:56:00Z",
                 1683554160: "2023-05-08T13:56:00Z", "2023-05-08T13:56:00+00:00": "2023-05-08T13:56:00Z"}
        path = self.write("dates.jsonl", "".join(json.dumps({"ref": f"r{i}", "speaker": "Kim", "text": "hi", "occurred_at": v}) + "\n"
                                                 for i, v in enumerate(forms)))
        self.assertEqual([m.occurred_at for m in parse("jsonl", path)], list(forms.values()))
        for bad in ("08/05/2023", "yesterday", "31 February 2023", "13:00 pm on 8 May, 2023"):
            with self.subTest(bad=bad):
                err = self.refused("IMPORT_INVALID", "jsonl", self.write("bad.jsonl", json.dumps(
                    {"ref": "a", "speaker": "Kim", "text": "hi", "occurred_at": bad}) + "\n"))
                self.assertIn("bad date", err.message)

    def test_an_invalid_line_refuses_the_file_or_is_left_out_and_listed(self):
        ok = [json.dumps({"ref": f"m{i}", "speaker": "Kim", "text": f"line {i}"}) for i in range(4)]
        lines = ok[:2] + ['{"ref": "m9", "speaker": "Kim", "text": '] + ok[2:] + [json.dumps({"ref": "m0", "speaker": "Kim", "text": "again"})]
        path = self.write("mixed.jsonl", "\n".join(lines) + "\n")
        err = self.refused("IMPORT_INVALID", "jsonl", path)
        self.assertIn(f"{path}:3", err.message)
        self.assertIn("Nothing was imported", err.hint)
        self.assertIn("{arg:skip_invalid=true}", err.hint)
        messages, invalid = importers.parse_report("jsonl", path, skip_invalid=True)
        self.assertEqual([m.ref for m in messages], ["m0", "m1", "m2", "m3"])
        self.assertEqual([(i["line"], i["why"][:20]) for i in invalid],
                         [(3, "not valid JSON: Expe"), (6, "duplicate ref 'm0' (")])

    def test_text_headers_and_line_times_in_many_forms(self):
        body = ("--- May 8, 2023 ---\nAna: morning\n# 2023年5月9日\nBen：好\n[2023-05-10 09:15] Ana: early\n"
                "[laughs] Ben: ha\n# Notes for later\nAna: done\n")
        messages = parse("text", self.write("t.txt", body))
        self.assertEqual([(m.speaker, m.occurred_at) for m in messages],
                         [("Ana", "2023-05-08"), ("Ben", "2023-05-09"), ("Ana", "2023-05-10T09:15:00Z"),
                          ("[laughs] Ben", "2023-05-09"), ("Ana", "2023-05-09")])
        self.assertEqual(messages[3].text, "ha\n# Notes for later")  # not a date: an ordinary line of the message
        messages, invalid = importers.parse_report("text", self.write("bad.txt", "Ana: hi\n# 31 February 2023\nBen: yo\n"),
                                                   skip_invalid=True)
        self.assertEqual([(m.speaker, m.occurred_at) for m in messages], [("Ana", None), ("Ben", None)])
        self.assertEqual(invalid[0]["line"], 2)

    def test_json_formats_skip_the_invalid_message_only(self):
        data = json.loads(CHATGPT.read_text(encoding="utf-8"))
        strict = parse("chatgpt", CHATGPT)
        first = strict[0].meta["message_id"]
        node = next(n for c in data for n in c["mapping"].values() if (n.get("message") or {}).get("id") == first)
        node["message"]["create_time"] = "last tuesday"
        path = self.write_json("c.json", data)
        self.refused("IMPORT_INVALID", "chatgpt", path)
        messages, invalid = importers.parse_report("chatgpt", path, skip_invalid=True)
        self.assertEqual(len(messages), len(strict) - 1)
        self.assertIn("create_time", invalid[0]["why"])
        sample = json.loads(LOCOMO.read_text(encoding="utf-8"))
        sample[0]["conversation"]["session_1"][0] = {"speaker": "x"}
        messages, invalid = importers.parse_report("locomo", self.write_json("l.json", sample), skip_invalid=True)
        self.assertEqual(len(messages), len(parse("locomo", LOCOMO)) - 1)
        self.assertIn("turn #0", invalid[0]["where"])


class WhatsappTest(ImportTestCase):
    def test_fixture(self):
        messages = parse("whatsapp", WHATSAPP, user_speaker="Lin")
        words = [m for m in messages if not m.meta.get(importers.NOTICE)]
        self.assertEqual([m.ref for m in words], ["line-2", "line-3", "line-6", "line-7"])
        self.assertEqual([(m.speaker, m.role) for m in words],
                         [("Sam", "other"), ("Lin", "user"), ("Sam", "other"), ("Lin", "user")])
        self.assertEqual(words[1].text, "yes, the scan was clear\nthey want a follow-up in six months though")
        self.assertEqual([m.occurred_at for m in words], ["2024-03-14T09:12:40Z", "2024-03-14T09:15:02Z",
                                                          "2024-03-14T09:16:11Z", "2024-03-16T19:40:05Z"])
        # the app's own lines (the encryption notice, a photo) are marked, not taken for Sam's words
        self.assertEqual([m.ref for m in messages if m.meta.get(importers.NOTICE)], ["line-1", "line-5"])
        # a day of the chat is a session (a reply sits next to what it answers); the id holds no names
        self.assertEqual(len({m.session_id for m in words}), 2)
        self.assertTrue(all(m.session_id.endswith(m.occurred_at[:10]) and "sam" not in m.session_id for m in words))

    def test_android_lines_and_the_day_month_order_the_file_tells(self):
        us = self.write("us.txt", "3/21/24, 9:45\u202fPM - Ana: how was it?\n3/21/24, 9:46 PM - Me: great\n"
                                  "3/21/24, 9:47 PM - Ana added Ben\n")
        messages = parse("whatsapp", us, user_speaker="Me")
        self.assertEqual([(m.speaker, m.occurred_at) for m in messages if not m.meta],
                         [("Ana", "2024-03-21T21:45:00Z"), ("Me", "2024-03-21T21:46:00Z")])
        self.assertEqual([m.text for m in messages if m.meta], ["Ana added Ben"])
        dots = self.write("de.txt", "12.03.24, 21:45 - Ana: hallo\n01.04.24, 08:00 - Me: guten Morgen\n")
        # no number passes 12, but only day-first runs forward (12 March, 1 April; not 3 December, 4 January)
        self.assertEqual([m.occurred_at for m in parse("whatsapp", dots)], ["2024-03-12T21:45:00Z", "2024-04-01T08:00:00Z"])

    def test_an_order_nothing_tells_is_refused_until_date_order_says_it(self):
        path = self.write("same.txt", "3/4/24, 9:45 PM - Ana: hi\n3/4/24, 9:46 PM - Me: hello\n")
        err = self.refused("IMPORT_INVALID", "whatsapp", path)
        self.assertIn("date_order", err.hint)
        self.assertEqual([m.occurred_at[:10] for m in parse("whatsapp", path, date_order="mdy")], ["2024-03-04"] * 2)
        self.assertEqual([m.occurred_at[:10] for m in parse("whatsapp", path, date_order="dmy")], ["2024-04-03"] * 2)
        self.refused("BAD_ARGUMENT", "text", TEXT, date_order="dmy")

    def test_a_file_mixing_orders_names_the_line_and_a_text_import_points_at_whatsapp(self):
        path = self.write("mixed.txt", "21/03/2024, 21:45 - Ana: hi\n3/22/24, 8:02 AM - Ana: yay\n")
        self.assertEqual(self.refused("IMPORT_INVALID", "whatsapp", path).details["line"], 2)
        self.assertIn("whatsapp", self.refused("IMPORT_INVALID", "text", path).message)


class TelegramTest(ImportTestCase):
    def test_fixture(self):
        messages = parse("telegram", TELEGRAM)
        words = [m for m in messages if not m.meta.get(importers.NOTICE)]
        # a chat with one person is named after them: the other speaker is the one who exported it
        self.assertEqual([(m.ref, m.speaker, m.role) for m in words],
                         [("4410021:102", "Wen", "other"), ("4410021:103", "Ruth", "user"),
                          ("4410021:105", "Tenants Union", "other"), ("4410021:106", "Ruth", "user")])
        self.assertEqual(words[1].text, "not yet, he says next Tuesday again")  # bold text is text
        self.assertEqual(words[0].occurred_at, "2024-05-02T20:01:13Z")
        self.assertEqual(words[2].meta["forwarded_by"], "Ruth")  # passed on: the union's words, not Ruth's
        self.assertEqual([m.ref for m in messages if m.meta.get(importers.NOTICE)], ["4410021:101"])
        self.assertEqual({m.session_id for m in words}, {"4410021-2024-05-02", "4410021-2024-05-03"})  # a day a session

    def test_a_whole_account_export_knows_its_owner_and_a_group_needs_to_be_told(self):
        chat = {"name": "Climbing crew", "type": "private_group", "id": 9, "messages": [
            {"id": 1, "type": "message", "date": "2024-06-01T10:00:00", "from": "Ana", "from_id": "user5", "text": "Sunday?"},
            {"id": 2, "type": "message", "date": "2024-06-01T10:02:00", "from": "Li", "from_id": "user8", "text": "in!"}]}
        account = self.write_json("result.json", {"personal_information": {"user_id": 8}, "chats": {"list": [chat]}})
        self.assertEqual([(m.speaker, m.role) for m in parse("telegram", account)], [("Ana", "other"), ("Li", "user")])
        group = self.write_json("group.json", chat)
        err = self.refused("BAD_ARGUMENT", "telegram", group)
        self.assertIn("Ana, Li", err.hint)
        self.assertEqual([m.role for m in parse("telegram", group, user_speaker="Ana")], ["user", "other"])
        self.refused("BAD_ARGUMENT", "telegram", group, user_speaker="Nobody")

    def test_malformed_exports_are_refused_or_their_bad_messages_listed(self):
        self.refused("IMPORT_INVALID", "telegram", self.write_json("list.json", [1, 2]))
        bad = {"name": "Wen", "type": "personal_chat", "id": 1, "messages": [
            {"id": 1, "type": "message", "date": "yesterday", "from": "Wen", "from_id": "user1", "text": "hi"},
            {"id": 2, "type": "message", "date": "2024-06-01T10:00:00", "from": "Me", "from_id": "user2", "text": "hello"}]}
        path = self.write_json("bad.json", bad)
        self.assertIn("message #0", self.refused("IMPORT_INVALID", "telegram", path).message)
        messages, invalid = importers.parse_report("telegram", path, skip_invalid=True)
        self.assertEqual(([m.text for m in messages], len(invalid)), (["hello"], 1))


class TextTest(ImportTestCase):
    def test_fixture(self):
        messages = parse("text", TEXT)
        self.assertEqual([m.ref for m in messages], ["line-1", "line-4", "line-8", "line-12", "line-13"])
        self.assertEqual([m.speaker for m in messages], ["Ines", "Ines", "Rafael", "小林", "Ines"])
        self.assertEqual([m.role for m in messages], ["user", "user", "other", "other", "user"])
        self.assertEqual([m.occurred_at for m in messages], [None, "2024-05-08", "2024-05-08", "2024-05-09", "2024-05-09"])
        self.assertEqual(messages[1].text, "Booked the ferry for Saturday 🚢\nIt leaves at 7, so no sleeping in.\n\nBring snacks.")
        self.assertEqual(messages[2].text, "OK — see https://example.org/ferry for the timetable\n"
                                           "  Note: the indented line stays with Rafael.")
        self.assertEqual(messages[3].text, "明天在杭州见面吧。")
        self.assertEqual(messages[4].text, "Sounds good 👍")
        self.assertTrue(all(m.session_id is None and m.meta == {} for m in messages))

    def test_user_speaker(self):
        messages = parse("text", TEXT, user_speaker="小林")
        self.assertEqual([m.role for m in messages], ["other", "other", "other", "user", "other"])
        self.refused("BAD_ARGUMENT", "text", TEXT, user_speaker="Nobody")

    def test_crlf_line_ends_and_continuations(self):
        path = self.write("crlf.txt", "Ana: one\r\n  two\r\nthree  \r\nBen：四\r\n")
        messages = parse("text", path)
        self.assertEqual([(m.ref, m.speaker, m.text) for m in messages],
                         [("line-1", "Ana", "one\n  two\nthree  "), ("line-4", "Ben", "四")])

    def test_a_name_alone_on_its_line_starts_a_message_below(self):
        messages = parse("text", self.write("t.txt", "Ana:\nfirst line\nsecond line\n"))
        self.assertEqual([(m.ref, m.text) for m in messages], [("line-1", "first line\nsecond line")])

    def test_lines_that_only_look_like_speakers_continue_the_message(self):
        body = "Ana: plan\nsee http://example.org/a\n10:30 at the station\nthis is a long sentence that ends: here\n"
        (message,) = parse("text", self.write("t.txt", body))
        self.assertEqual(message.text, "plan\nsee http://example.org/a\n10:30 at the station\n"
                                       "this is a long sentence that ends: here")

    def test_malformed_transcripts_are_refused(self):
        cases = {
            ("before the first", 1): "just some words\nAna: hi\n",
            ("bad date", 2): "Ana: hi\n# 2024-02-30\nBen: yo\n",
            ("missing text", 2): "Ana: hi\nBen:   \n\nAna: again\n",
        }
        for (fragment, line), body in cases.items():
            with self.subTest(fragment=fragment):
                err = self.refused("IMPORT_INVALID", "text", self.write("bad.txt", body))
                self.assertIn(fragment, err.message)
                self.assertEqual(err.details["line"], line)

    def test_an_empty_transcript_has_no_messages(self):
        self.assertEqual(parse("text", self.write("empty.txt", "\n\n")), [])


if __name__ == "__main__":
    unittest.main()
