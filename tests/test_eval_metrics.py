"""The external evaluation's own arithmetic: metrics, the BM25 baseline, data helpers.

Tiny hand-written data only; the benchmarks themselves run with
tests/eval/run_external.py, outside the default test run.
"""

import math
import os
import sys
import unittest

import tests  # noqa: F401  (puts scripts/ on sys.path)

EVAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "eval")
if EVAL not in sys.path:
    sys.path.insert(0, EVAL)

import _bm25  # noqa: E402
import _datasets  # noqa: E402
import _metrics  # noqa: E402
import _porter  # noqa: E402


class MetricTest(unittest.TestCase):
    def test_recall_counts_gold_found_within_the_cut_off(self):
        ranked = ["x", "a", "y", "z", "w", "b"]
        self.assertEqual(_metrics.recall_at_k(ranked, {"a", "b"}, 5), 0.5)
        self.assertEqual(_metrics.recall_at_k(ranked, {"a", "b"}, 10), 1.0)
        self.assertEqual(_metrics.recall_at_k(ranked, {"a", "b"}, 1), 0.0)

    def test_repeated_ids_count_once_and_do_not_take_slots(self):
        ranked = ["a", "a", "a", "x", "y", "b"]
        self.assertEqual(_metrics.distinct(ranked), ["a", "x", "y", "b"])
        self.assertEqual(_metrics.recall_at_k(ranked, {"a", "b"}, 4), 1.0)
        self.assertEqual(_metrics.recall_at_k(["a", "a"], {"a", "b"}, 10), 0.5)

    def test_hit_is_any_gold_in_the_top_k(self):
        self.assertEqual(_metrics.hit_at_k(["x", "y", "a"], {"a", "b"}, 3), 1.0)
        self.assertEqual(_metrics.hit_at_k(["x", "y", "a"], {"a", "b"}, 2), 0.0)

    def test_short_or_empty_rankings_score_what_they_hold(self):
        self.assertEqual(_metrics.recall_at_k([], {"a"}, 10), 0.0)
        self.assertEqual(_metrics.ndcg_at_k([], {"a"}, 10), 0.0)
        self.assertEqual(_metrics.recall_at_k(["a"], {"a"}, 10), 1.0)

    def test_ndcg_binary_relevance(self):
        self.assertAlmostEqual(_metrics.ndcg_at_k(["a", "b", "x"], {"a", "b"}, 10), 1.0)
        self.assertAlmostEqual(_metrics.ndcg_at_k(["x", "a"], {"a"}, 10), 1 / math.log2(3))
        expected = (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
        self.assertAlmostEqual(_metrics.ndcg_at_k(["a", "x", "b"], {"a", "b"}, 10), expected)
        # The ideal ranking holds at most k gold items.
        gold = {f"g{i}" for i in range(12)}
        self.assertAlmostEqual(_metrics.ndcg_at_k(sorted(gold), gold, 10), 1.0)
        self.assertEqual(_metrics.ndcg_at_k(["x", "a"], {"a"}, 1), 0.0)

    def test_questions_without_gold_are_refused(self):
        with self.assertRaises(ValueError):
            _metrics.recall_at_k(["a"], set(), 5)

    def test_first_gold_rank(self):
        self.assertEqual(_metrics.first_gold_rank(["x", "x", "a"], {"a"}), 2)
        self.assertIsNone(_metrics.first_gold_rank(["x"], {"a"}))

    def test_score_and_means_by_category(self):
        rows = [dict(_metrics.score(["a"], {"a"}), category="one"),
                dict(_metrics.score(["x"], {"a"}), category="one"),
                dict(_metrics.score(["a", "b"], {"b"}), category="adv")]
        out = _metrics.mean_by(rows, overall_excludes=("adv",))
        self.assertEqual(out["one"]["n"], 2)
        self.assertEqual(out["one"]["r@10"], 0.5)
        self.assertEqual(out["adv"]["hit@5"], 1.0)
        self.assertAlmostEqual(out["adv"]["ndcg@10"], 1 / math.log2(3))
        self.assertEqual(out["overall"]["n"], 2)  # the excluded category stays out of overall
        self.assertEqual(out["overall"]["r@5"], 0.5)
        self.assertEqual(list(out)[-1], "overall")


class BM25Test(unittest.TestCase):
    def setUp(self):
        self.index = _bm25.BM25([("d1", ["apple", "banana"]), ("d2", ["apple", "apple", "cherry"]), ("d3", ["cherry"])])

    def test_idf_is_the_standard_smoothed_form(self):
        self.assertAlmostEqual(self.index.idf("banana"), math.log(1 + 2.5 / 1.5))
        self.assertAlmostEqual(self.index.idf("apple"), math.log(1 + 1.5 / 2.5))
        self.assertAlmostEqual(self.index.idf("kiwi"), math.log(1 + 3.5 / 0.5))

    def test_scores_by_hand(self):
        # avgdl = 2; d1 has length 2, so its length factor is 1 and tf 1 scores exactly idf.
        scores = self.index.scores(["banana"])
        self.assertEqual(set(scores), {"d1"})
        self.assertAlmostEqual(scores["d1"], math.log(1 + 2.5 / 1.5))
        scores = self.index.scores(["apple"])
        idf = math.log(1.6)
        self.assertAlmostEqual(scores["d1"], idf)
        tf_part = 2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 * 3 / 2))
        self.assertAlmostEqual(scores["d2"], idf * tf_part)

    def test_rank_order_repeats_and_unknown_terms(self):
        self.assertEqual(self.index.rank(["apple"]), ["d2", "d1"])
        self.assertEqual(self.index.scores(["apple", "apple"]), self.index.scores(["apple"]))
        self.assertEqual(self.index.rank(["kiwi"]), [])
        self.assertEqual(self.index.rank(["apple", "cherry", "banana"], k=2), self.index.rank(["apple", "cherry", "banana"])[:2])

    def test_ties_keep_haystack_order(self):
        index = _bm25.BM25([("b", ["x"]), ("a", ["x"]), ("c", ["y"])])
        self.assertEqual(index.rank(["x"]), ["b", "a"])

    def test_empty_haystack(self):
        self.assertEqual(_bm25.BM25([]).rank(["x"]), [])

    def test_character_bigrams(self):
        self.assertEqual(_bm25.cjk_bigrams("我爱北京"), ["我爱", "爱北", "北京"])
        self.assertEqual(_bm25.cjk_bigrams("好"), ["好"])
        self.assertEqual(_bm25.cjk_bigrams("看iPhone15发布会！"), ["看", "iphone15", "发布", "布会"])
        self.assertEqual(_bm25.cjk_bigrams(""), [])

    def test_plain_terms_keep_every_word_and_character(self):
        self.assertEqual(_bm25.plain_terms("The cats were running, Anna’s 我爱猫"),
                         ["the", "cats", "were", "running", "anna's", "我", "爱", "猫"])

    def test_strong_terms_drop_stopwords_stem_and_add_bigrams(self):
        terms = _bm25.strong_terms("The cats were running to Anna's 我爱猫")
        self.assertNotIn("the", terms)
        self.assertNotIn("to", terms)
        self.assertIn("cat", terms)
        self.assertIn("run", terms)
        self.assertIn("anna", terms)
        self.assertEqual([t for t in terms if ord(t[0]) > 0x2e7f], ["我", "爱", "猫", "我爱", "爱猫"])


class PorterTest(unittest.TestCase):
    def test_examples_from_the_published_algorithm(self):
        cases = {"caresses": "caress", "ponies": "poni", "agreed": "agre", "plastered": "plaster",
                 "motoring": "motor", "sing": "sing", "conflated": "conflat", "hopping": "hop", "falling": "fall",
                 "filing": "file", "happy": "happi", "relational": "relat", "digitizer": "digit",
                 "hopefulness": "hope", "electrical": "electr", "adjustment": "adjust", "adoption": "adopt",
                 "generalizations": "gener", "controll": "control", "roll": "roll"}
        for word, stem in cases.items():
            self.assertEqual(_porter.stem(word), stem, word)

    def test_short_and_non_ascii_words_pass_unchanged(self):
        for word in ("is", "café", "北京", "C3PO"):
            self.assertEqual(_porter.stem(word), word)


class DatasetHelperTest(unittest.TestCase):
    def test_evidence_ids_are_repaired_or_counted(self):
        valid = {"D1:2", "D2:4", "D5:11", "D7:12", "D12:3"}
        resolve = _datasets.resolve_evidence
        self.assertEqual(resolve("D1:2", valid), (["D1:2"], "ok"))
        self.assertEqual(resolve("D2:4; D5:11", valid), (["D2:4", "D5:11"], "repaired"))
        self.assertEqual(resolve("D2:4 D5:11 D9:9", valid), (["D2:4", "D5:11"], "repaired"))
        self.assertEqual(resolve("D:7:12", valid), (["D7:12"], "repaired"))
        self.assertEqual(resolve("D12:03", valid), (["D12:3"], "repaired"))
        self.assertEqual(resolve("D3:40", valid), ([], "missing"))
        self.assertEqual(resolve("D", valid), ([], "malformed"))
        self.assertEqual(resolve(None, valid), ([], "malformed"))

    def test_longmemeval_dates(self):
        self.assertEqual(_datasets.lme_time("2023/05/21 (Sun) 19:50"), "2023-05-21T19:50:00Z")
        self.assertEqual(_datasets.lme_time("2023/5/2"), "2023-05-02")
        with self.assertRaises(ValueError):
            _datasets.lme_time("May 21")

    def test_madial_query_is_the_dialogue_before_the_test_turn(self):
        dialogue = ["<BOD>\n", '<Ann>:"我们去公园吧"\n', ' <Assistant>:"好呀"\n', '<Ann>:"带上风筝"\n',
                    '<Assistant>:"你记得上次放风筝吗？"\n', "<EOD>\n"]
        self.assertEqual(_datasets.madial_turn('<Ann>:"带上风筝"\n'), ("Ann", "带上风筝"))
        self.assertIsNone(_datasets.madial_turn("<BOD>\n"))
        self.assertEqual(_datasets.madial_query(dialogue, [4]), "我们去公园吧\n好呀\n带上风筝")

    def test_limit_samples_are_deterministic_and_ordered(self):
        items = list(range(100))
        first = _datasets._sample(items, 10)
        self.assertEqual(first, _datasets._sample(items, 10))
        self.assertEqual(first, sorted(first))
        self.assertEqual(len(first), 10)
        self.assertEqual(_datasets._sample(items, None), items)

    def _loaded(self, names, strata=None):
        haystacks = [_datasets.Haystack(name=n, messages=[], questions=[{"qid": f"{n}#0"}],
                                        stratum=(strata or {}).get(n, "")) for n in names]
        return _datasets.Loaded("demo", haystacks, {}, {})

    def test_split_is_by_haystack_half_and_half_and_fixed(self):
        names = [f"h{i}" for i in range(10)]
        parts = _datasets.split_of(self._loaded(names))
        self.assertEqual(sorted(parts.values()).count("dev"), 5)
        self.assertEqual(parts, _datasets.split_of(self._loaded(list(reversed(names)))))  # order does not matter
        strata = {n: "a" if i < 4 else "b" for i, n in enumerate(names)}
        parts = _datasets.split_of(self._loaded(names, strata))
        self.assertEqual([parts[n] for n in names[:4]].count("dev"), 2)
        self.assertEqual([parts[n] for n in names[4:]].count("dev"), 3)

    def test_select_keeps_one_split_and_tags_it(self):
        names = [f"h{i}" for i in range(6)]
        parts = _datasets.split_of(self._loaded(names))
        dev = _datasets.select(self._loaded(names), "dev")
        self.assertEqual({hs.name for hs in dev.haystacks}, {n for n in names if parts[n] == "dev"})
        self.assertEqual({hs.split for hs in dev.haystacks}, {"dev"})
        self.assertEqual(len(_datasets.select(self._loaded(names), "all").haystacks), 6)
        self.assertEqual(len(_datasets.select(self._loaded(names), "test", limit=2).haystacks), 2)


if __name__ == "__main__":
    unittest.main()
