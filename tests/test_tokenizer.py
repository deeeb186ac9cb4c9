"""Tokenizer and lexicon for recall: segmentation, mixed names, weights, normalisation."""

import os
import subprocess
import sys
import unittest
from unittest import mock

import tests  # noqa: F401  (puts scripts/ on sys.path)
from personal_understanding.retrieval import lexicon as lexmod
from personal_understanding.retrieval.lexicon import Lexicon, base_lexicon, cjk_ngrams, normalize
from personal_understanding.retrieval.tokenizer import (
    OOV_WEIGHT,
    WORD_WEIGHT,
    Token,
    content_terms,
    content_tokens,
    stem,
    tokenize,
)


def texts(text, lexicon=None):
    return [t.text for t in tokenize(text, lexicon)]


def terms(text, lexicon=None):
    return [term for term, _ in content_terms(text, lexicon)]


class SegmentationTest(unittest.TestCase):
    def test_ordinary_sentence_keeps_dictionary_words_whole(self):
        toks = texts("我今天去北京大学看朋友")
        self.assertIn("北京大学", toks)
        self.assertIn("朋友", toks)
        self.assertIn("今天", toks)
        self.assertNotIn("北京", toks)

    def test_known_words_tile_the_sentence(self):
        text = "我今天去北京大学看朋友"
        toks = tokenize(text)
        self.assertEqual("".join(t.text for t in toks), text)
        for a, b in zip(toks, toks[1:]):
            self.assertEqual(a.end, b.start)
        self.assertFalse(any(t.oov for t in toks))

    def test_a_classifier_and_its_noun_in_one_dictionary_word_is_the_noun(self):
        self.assertEqual(texts("推荐本书"), ["推荐", "书"])
        self.assertEqual(texts("写了封信"), ["写", "了", "信"])
        # the classifier left out joins no unknown pair across the gap
        self.assertEqual(texts("一本书"), ["一", "书"])
        self.assertEqual(texts("这部手机"), ["这", "部", "手机"])  # a longer noun keeps its classifier token

    def test_a_word_kept_whole_wins_alone_and_beside_most_words_not_over_a_common_one(self):
        self.assertIn("前女友", terms("我前女友昨天来了"))
        self.assertIn("卡罗拉", terms("我家那辆老卡罗拉开了十二年了"))  # not 卡罗 | 拉开
        self.assertEqual(texts("这个税交了吗")[:2], ["这个", "税"])  # 个税 does not take 这个's 个

    def test_function_words_are_not_content(self):
        got = terms("我今天去北京大学看朋友")
        for stop in ("我", "去"):
            self.assertNotIn(stop, got)
        self.assertIn("北京大学", got)

    def test_unknown_stretch_gives_singles_and_oov_bigrams(self):
        toks = tokenize("我和阿呆呆去玩")
        bigrams = [t for t in toks if len(t.text) == 2]
        self.assertIn("阿呆", [t.text for t in bigrams])
        self.assertIn("呆呆", [t.text for t in bigrams])
        self.assertTrue(all(t.oov for t in bigrams if t.text in ("阿呆", "呆呆")))
        # Stopwords break the stretch: no slice reaches into 和 or 去.
        self.assertNotIn("和阿", texts("我和阿呆呆去玩"))

    def test_token_kinds(self):
        kinds = {t.text: t.kind for t in tokenize("我用Python写了2048个程序，在B站发了")}
        self.assertEqual(kinds["python"], "latin")
        self.assertEqual(kinds["2048"], "num")
        self.assertEqual(kinds["b站"], "mixed")
        self.assertEqual(kinds["程序"], "cjk")

    def test_every_script_of_a_run_is_split_alike_whichever_way_the_run_is_read(self):
        # A run of basic Han skips the CJK pattern; kana, Hangul, rarer Han and Latin beside them still meet it.
        from personal_understanding.retrieval import tokenizer
        for run in ("钢琴课", "ラーメン屋", "김치찌개", "𠮷野家", "〇〇后", "iphone15手机", "café咖啡", "学c++"):
            norm = normalize(run)
            pieces = tokenizer._pieces(norm, 0, len(norm))
            for cjk, a, b in pieces:  # each piece is all CJK or none of it, as the pattern reads a character
                self.assertEqual({bool(lexmod.CJK_RUN_RE.fullmatch(c)) for c in norm[a:b]}, {cjk}, run)
            self.assertTrue(all(x[0] != y[0] for x, y in zip(pieces, pieces[1:])), run)  # and no two alike meet
            self.assertEqual("".join(norm[a:b] for _cjk, a, b in pieces), norm, run)


class ArchiveWordsTest(unittest.TestCase):
    def test_archive_word_beats_dictionary_split(self):
        # The base dictionary knows 王者 and 荣耀 but not the game's name.
        self.assertIn("王者", texts("周末一起打王者荣耀吧"))
        lex = Lexicon(extra_words=["王者荣耀"])
        toks = tokenize("周末一起打王者荣耀吧", lex)
        self.assertIn("王者荣耀", [t.text for t in toks])
        self.assertNotIn("王者", [t.text for t in toks])
        self.assertFalse(next(t for t in toks if t.text == "王者荣耀").oov)

    def test_archive_nickname_replaces_oov_slices(self):
        lex = Lexicon(["阿呆呆"])
        toks = texts("我和阿呆呆去玩", lex)
        self.assertIn("阿呆呆", toks)
        self.assertNotIn("阿呆", toks)
        self.assertNotIn("呆呆", toks)
        self.assertIn(("阿呆呆", WORD_WEIGHT), content_terms("我和阿呆呆去玩", lex))

    def test_mixed_archive_word(self):
        lex = Lexicon()
        self.assertEqual(lex.add_words(["鬼泣5", "小黑", "x"]), 1)  # 小黑 is already a base word
        toks = tokenize("昨晚通关了鬼泣5，小黑在旁边睡觉", lex)
        by_text = {t.text: t for t in toks}
        self.assertEqual(by_text["鬼泣5"].kind, "mixed")
        self.assertFalse(by_text["鬼泣5"].oov)
        self.assertIn("小黑", by_text)

    def test_wrongly_learned_cross_word_string_does_not_break_words(self):
        # 天去 recurs in "今天去", "明天去": a bad candidate must not split 今天.
        lex = Lexicon(["天去"])
        self.assertIn("今天", texts("我今天去公园", lex))
        self.assertIn("天去", texts("天去", lex))

    def test_lexicon_api(self):
        base = base_lexicon()
        self.assertIs(base, base_lexicon())
        self.assertTrue(base.contains("北京"))
        self.assertIn("北京", base)
        self.assertTrue(base.contains("Ｂ超"))  # full-width, upper case
        self.assertGreater(base.freq("北京"), base.freq("北京大学"))
        self.assertEqual(base.freq("阿呆呆"), 0)
        self.assertGreaterEqual(base.max_word_len, 4)
        self.assertGreater(len(base), 50000)
        lex = Lexicon(extra_words=["阿呆呆", "final fantasy"])
        self.assertTrue(lex.contains("阿呆呆"))
        self.assertTrue(lex.is_archive_word("阿呆呆"))
        self.assertFalse(lex.contains("final fantasy"))
        self.assertGreater(lex.freq("阿呆呆"), 0)
        self.assertFalse(base.contains("阿呆呆"))  # the shared lexicon is untouched
        self.assertEqual(lex.add_words(["阿呆呆"]), 0)
        lex.add_words(["超级无敌长的宠物名字呀"])
        self.assertEqual(lex.max_word_len, len("超级无敌长的宠物名字呀"))

    def test_cjk_ngrams(self):
        grams = cjk_ngrams("我和阿呆呆去玩，Boss叫魔王2")
        for want in ("阿呆", "呆呆", "阿呆呆", "魔王"):
            self.assertIn(want, grams)
        self.assertTrue(all(2 <= len(g) <= 4 for g in grams))
        self.assertFalse(any(ch in g for g in grams for ch in "我和去"))
        self.assertFalse(any(c.isascii() for g in grams for c in g))
        self.assertNotIn("魔王", cjk_ngrams("Boss叫魔王", lexicon=base_lexicon()))
        self.assertEqual(cjk_ngrams(""), set())
        self.assertEqual(cjk_ngrams("abc 123"), set())
        self.assertEqual(cjk_ngrams("阿呆呆", n_min=3, n_max=3), {"阿呆呆"})


class MixedNamesTest(unittest.TestCase):
    def test_required_names_stay_whole(self):
        for text, name in (("我在玩鬼泣5", "鬼泣5"), ("在B站看视频", "b站"), ("买了个4K屏", "4k屏"),
                           ("新的iPhone15很好用", "iphone15"), ("小米14发布了", "小米14")):
            with self.subTest(text=text):
                self.assertIn(name, texts(text))

    def test_lexicon_mixed_words(self):
        self.assertIn("ip地址", texts("我的IP地址是多少"))
        self.assertIn("t恤", texts("买了三件T恤"))

    def test_numbers_with_units_or_times_are_not_glued(self):
        for text, bad in (("今天5点开会", "今天5"), ("开会3小时", "开会3"), ("下午3去", "下午3")):
            with self.subTest(text=text):
                self.assertNotIn(bad, texts(text))

    def test_long_latin_words_split_from_chinese(self):
        toks = texts("用Python写爬虫")
        self.assertIn("python", toks)
        self.assertIn("爬虫", toks)

    def test_programming_languages(self):
        self.assertEqual(texts("学C++和C#"), ["学", "c++", "和", "c#"])


class ContentTermsTest(unittest.TestCase):
    def test_lone_ascii_char_or_digit_is_never_content(self):
        got = terms("鬼泣5 a 5 B 7 x")
        self.assertIn("鬼泣5", got)
        for lone in ("5", "a", "b", "7", "x"):
            self.assertNotIn(lone, got)
        self.assertIn("5", texts("第 5 关"))  # still a token, just not a term
        self.assertNotIn("5", terms("第 5 关"))

    def test_oov_weight(self):
        got = content_tokens("周末和阿呆呆去吃火锅")
        self.assertTrue(any(tok.oov for tok, _, _ in got))
        for tok, _, weight in got:
            self.assertEqual(weight, OOV_WEIGHT if tok.oov else WORD_WEIGHT)
        weights = dict(content_terms("周末和阿呆呆去吃火锅"))
        self.assertEqual(weights["阿呆"], 0.4)
        self.assertEqual(weights["火锅"], 1.0)
        self.assertEqual(weights["周末"], 1.0)

    def test_english_stopwords_and_stemming(self):
        got = terms("The cats were running quickly to the parties")
        self.assertEqual(got, [stem("cat"), stem("run"), stem("quick"), stem("party")])
        for stop in ("the", "were", "to"):
            self.assertNotIn(stop, got)
        self.assertEqual(terms("I don’t know what it's about"), ["know"])

    def test_a_function_words_contraction_is_a_function_word(self):
        # "how's my training going?" asks about training, not about "how"; a name's or a relative's 's stays
        self.assertEqual(terms("how's my training going?"), ["train", "go"])
        self.assertEqual(terms("where'd you put it, and when's the party?"), ["put", "parti"])
        self.assertEqual(terms("my mom's birthday, Anna's car"), ["mom", "birthday", "anna", "car"])

    def test_a_relation_by_marriage_with_spaces_or_hyphens_is_one_word(self):
        for text in ("my mother in law", "my mother-in-law", "My Mother In Law"):
            self.assertEqual(terms(text), ["motherinlaw", "inlaw"], text)
        self.assertEqual(terms("my brother in law's wedding"), ["brotherinlaw", "inlaw", "wed"])
        self.assertEqual(terms("my in laws are coming"), ["inlaw", "come"])
        self.assertEqual(terms("my sister in law school"), ["sister", "law", "school"])
        self.assertEqual(terms("a degree in law"), ["degree", "law"])

    def test_stemming_conflates_inflections(self):
        groups = [
            ("run", "runs", "running"), ("cat", "cats"), ("play", "plays", "played", "playing"),
            ("make", "makes", "making"), ("study", "studies", "studied", "studying"),
            ("quick", "quickly"), ("movie", "movies"), ("box", "boxes"), ("stop", "stopped", "stopping"),
            ("complete", "completed", "completely"), ("meeting", "meetings", "meet"), ("use", "used", "using"),
            ("hope", "hoped", "hoping"), ("time", "times", "timing"), ("care", "cared", "caring"), ("plane", "planes"),
            ("plan", "planned", "planning"), ("hop", "hopped", "hopping"), ("late", "lately"), ("share", "sharing"),
        ]
        for group in groups:
            with self.subTest(group=group):
                self.assertEqual(len({stem(w) for w in group}), 1, [stem(w) for w in group])
        for word in ("analysis", "class", "bus", "family", "sing", "need"):
            with self.subTest(word=word):
                self.assertTrue(stem(word).startswith(word[:3]))
        self.assertEqual(stem("family"), stem("families"))
        self.assertEqual(stem("alice's"), stem("alice"))
        self.assertEqual(stem("café"), "café")
        self.assertNotEqual(stem("news"), stem("new"))  # an s that makes no plural stays
        self.assertNotEqual(stem("lens"), stem("len"))

    def test_a_count_and_its_classifier_are_no_content_word(self):
        def terms(text):
            return [t for _tok, t, _w in content_tokens(text, None)]
        self.assertEqual(terms("买了一件外套"), ["买", "外套"])
        self.assertEqual(terms("这款手机"), ["手机"])
        self.assertEqual(terms("一只猫两只狗"), ["猫", "狗"])
        for word in ("条件", "台风", "部门", "存款"):  # a classifier character starting a word of its own
            with self.subTest(word=word):
                self.assertIn(word, terms(word + "很重要"))

    def test_a_final_e_on_one_short_syllable_keeps_words_apart(self):
        # care is not car, nor a plane a plan, wine a win, time the name Tim, James jam
        for one, other in (("care", "car"), ("plane", "plan"), ("wine", "win"), ("time", "tim"), ("hope", "hop"),
                           ("james", "jam"), ("bite", "bit"), ("rate", "rat"), ("site", "sit"), ("hoping", "hopping")):
            with self.subTest(pair=(one, other)):
                self.assertNotEqual(stem(one), stem(other))

    def test_a_phrasal_verb_is_also_the_word_it_means(self):
        lex = None
        self.assertIn(stem("breakup"), [t for _tok, t, _w in content_tokens("we broke up last week", lex)])
        self.assertIn(stem("die"), [t for _tok, t, _w in content_tokens("Grandma passed away", lex)])
        self.assertIn(stem("burnout"), [t for _tok, t, _w in content_tokens("I'm burnt out", lex)])
        # the verb still counts as itself, and only the verb and particle side by side make the word
        self.assertIn(stem("break"), [t for _tok, t, _w in content_tokens("we broke up", lex)])
        self.assertNotIn(stem("breakup"), [t for _tok, t, _w in content_tokens("they broke it up", lex)])
        self.assertNotIn(stem("breakup"), [t for _tok, t, _w in content_tokens("it broke. Up next", lex)])

    def test_a_split_chinese_verb_is_also_the_whole_word(self):
        def terms(text):
            return [t for _tok, t, _w in content_tokens(text, None)]
        self.assertIn("加班", terms("这个月加了五天班，调休都没批"))
        self.assertIn("结婚", terms("他们去年结了婚"))
        self.assertEqual(terms("昨天加班到很晚").count("加班"), 1)  # side by side it is the word, once
        self.assertNotIn("加班", terms("加了一个班长"))  # 班长 is a word of its own, not the verb's rest
        self.assertNotIn("加班", terms("加。班"))  # not across punctuation
        self.assertNotIn("加班", terms("加了好多好多好多班"))  # nor more than four characters apart

    def test_irregular_forms_meet_their_base(self):
        groups = [("buy", "bought", "buying"), ("run", "ran", "running"), ("eat", "ate", "eaten"), ("go", "went", "gone"),
                  ("go", "goes", "going", "went"), ("lose", "lost", "losing"), ("pay", "paid"), ("feel", "felt", "feeling"), ("child", "children", "children's"),
                  ("wife", "wives"), ("tooth", "teeth"), ("die", "died", "dying"), ("lie", "lied", "lying"),
                  ("tie", "tied", "tying")]
        for group in groups:
            with self.subTest(group=group):
                self.assertEqual(len({stem(w) for w in group}), 1, [stem(w) for w in group])
        self.assertNotEqual(stem("ate"), stem("at"))  # before: "ate" lost its e and became the preposition
        self.assertEqual({stem(w) for w in ("tired", "tiring", "tiredness")}, {stem("tired")})
        self.assertNotEqual(stem("tired"), stem("tires"))  # so tired is not about the car's tires

    def test_a_noun_made_from_a_word_meets_that_word(self):
        groups = [("retirement", "retired", "retire"), ("happiness", "happy"), ("loneliness", "lonely"),
                  ("renovation", "renovated", "renovating"), ("depression", "depressed"), ("engagement", "engaged"),
                  ("sadness", "sad"), ("graduation", "graduated"), ("tiredness", "tired"), ("friendliness", "friendly"),
                  ("proposal", "proposals", "propose", "proposed"), ("arrival", "arrived"), ("rental", "rented"),
                  ("denial", "denied"), ("withdrawal", "withdraw")]
        for group in groups:
            with self.subTest(group=group):
                self.assertEqual(len({stem(w) for w in group}), 1, [stem(w) for w in group])
        for word in ("animal", "final", "hospital", "signal", "festival"):  # no verb's noun: the -al stays
            self.assertTrue(stem(word).endswith("al"), word)
        # A short stem, or a noun with a sense of its own, keeps its suffix.
        for word, other in (("station", "state"), ("mission", "miss"), ("moment", "mom"), ("business", "busy"),
                            ("apartment", "apart"), ("nation", "nate"), ("payment", "pay"), ("fitness", "fit")):
            with self.subTest(word=word):
                self.assertNotEqual(stem(word), stem(other))
        for word, other in (("rose", "rise"), ("wound", "wind"), ("lay", "lie")):  # more often another word: left alone
            with self.subTest(word=word):
                self.assertNotEqual(stem(word), stem(other))

    def test_duplicates_are_kept_for_term_frequency(self):
        self.assertEqual(terms("cat, cats and one more cat"), ["cat", "cat", "cat"])
        self.assertEqual(terms("火锅火锅").count("火锅"), 2)


class NormalisationTest(unittest.TestCase):
    def test_full_width_and_case(self):
        self.assertEqual(texts("ＡＢＣ１２３"), ["abc123"])
        self.assertEqual(texts("Ｈｅｌｌｏ　Ｗｏｒｌｄ"), ["hello", "world"])
        self.assertIn("b站", texts("在Ｂ站"))
        self.assertEqual(texts("２０２４"), ["2024"])
        self.assertEqual(normalize("ＡＢＣ"), "abc")

    def test_empty_and_symbol_only_input(self):
        self.assertEqual(tokenize(""), [])
        self.assertEqual(content_terms(""), [])
        self.assertEqual(tokenize("，。！？ ... --- ✨🎉"), [])
        self.assertEqual(content_terms("的了吗"), [])

    def test_offsets_map_back_to_original(self):
        text = "周五和阿呆呆在Ｂ站看鬼泣5，iPhone15 录屏；Don’t forget the 4K屏! café straße"
        toks = tokenize(text)
        self.assertTrue(toks)
        for tok in toks:
            with self.subTest(tok=tok):
                self.assertTrue(0 <= tok.start < tok.end <= len(text))
                self.assertEqual(normalize(text[tok.start:tok.end]).casefold(), tok.text)
        starts = [t.start for t in toks]
        self.assertEqual(starts, sorted(starts))

    def test_token_is_immutable(self):
        tok = tokenize("北京")[0]
        self.assertIsInstance(tok, Token)
        with self.assertRaises(AttributeError):
            tok.text = "x"
        text, kind, oov, start, end = tok
        self.assertEqual((text, kind, oov, start, end), ("北京", "cjk", False, 0, 2))

    def test_deterministic(self):
        text = "周末和阿呆呆去吃了火锅，然后在B站看鬼泣5的通关视频。Running late again!"
        first = tokenize(text)
        self.assertEqual(first, tokenize(text))
        self.assertEqual(first, tokenize(text, Lexicon()))
        self.assertEqual(content_terms(text), content_terms(text))


class LoadingTest(unittest.TestCase):
    def test_dictionary_loads_lazily_and_once(self):
        code = (
            "import sys; sys.path.insert(0, %r)\n"
            "from personal_understanding.retrieval import lexicon, tokenizer\n"
            "assert lexicon._base is None, 'loaded at import'\n"
            "tokenizer.tokenize('北京大学')\n"
            "base = lexicon._base\n"
            "assert base is not None\n"
            "tokenizer.tokenize('朋友')\n"
            "assert lexicon._base is base\n"
            "print('ok')\n" % os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts")
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.strip(), "ok")

    def test_every_bucket_is_reachable(self):
        base = lexmod.load_base()
        body = base.data[base.body:].decode("utf-8").split("\n")
        firsts = [line.split("\t", 1)[0] for line in body if line]
        self.assertEqual(firsts, sorted(firsts))
        for ch in firsts[:: max(1, len(firsts) // 400)] + firsts[-3:]:
            self.assertIsNotNone(base._line(ch), ch)
        self.assertIsNone(base._line("\u0001"))
        self.assertIsNone(base._line("\U0010fffd"))

    def test_a_bucket_read_word_by_word_answers_as_the_whole_line_read(self):
        # A process that asks few words of a bucket finds them in its line; one asked often reads the
        # line into a dict. Either way every word has its frequency and no other string has one.
        base = lexmod._Base(lexmod.load_base().data)  # its own cache: the shared one keeps the data's whole words
        body = base.data[base.body:].decode("utf-8").split("\n")
        checked = 0
        for line in body[::5]:
            if not line:
                continue
            ch, _, rest = line.partition("\t")
            words, _longest = base._parse(ch, rest)
            by_word = lexmod._Line(base, ch, rest)
            asked = list(words)[:lexmod._Line.PARSE_AFTER] + [ch, ch + "\u0001", ch + ":", ch + "0"]
            for word in (asked * lexmod._Line.PARSE_AFTER)[:lexmod._Line.PARSE_AFTER + 2]:
                self.assertEqual(by_word.get(word), words.get(word), word)
                checked += 1
            self.assertIsNotNone(by_word.words)  # asked past PARSE_AFTER: read whole, and kept for later callers
            self.assertIs(base.cache[ch][0], by_word.words)
            self.assertEqual({w: by_word.get(w) for w in words}, words)
        self.assertGreater(checked, 10000)
        # a whole word of the data (scored above its splits) is found in a bucket not read whole too
        fresh = lexmod._Base(base.data, {"马": ["马拉松训练"]})
        got, _longest = fresh.bucket("马")
        self.assertIsInstance(got, lexmod._Line)
        self.assertIsNotNone(got.get("马拉松训练"))
        self.assertIn("马拉松", got)
        # and in one read whole while its whole words were being scored (the splits asked it often)
        with mock.patch.object(lexmod._Line, "PARSE_AFTER", 0):
            fresh = lexmod._Base(base.data, {"马": ["马拉松训练", "马拉松训练营"]})
            got, longest = fresh.bucket("马")
        self.assertIsInstance(got, dict)
        self.assertEqual(got.get("马拉松训练"), fresh.bucket("马")[0].get("马拉松训练"))
        self.assertIn("马拉松训练营", got)
        self.assertGreaterEqual(longest, 6)


if __name__ == "__main__":
    unittest.main()
