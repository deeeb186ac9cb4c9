#!/usr/bin/env python3
"""Accuracy and speed of the turn classifier.

    python3 tests/perf/bench_classifier.py [--only labelled|heldout|testset] [--misses]

Three sets in tests/fixtures/classifier: labelled.jsonl (the dev set, tuned on),
heldout.jsonl (an older held-out set, never tuned on) and testset.jsonl (the frozen
test set, never tuned on). For each it prints aggregate figures only: precision and
recall per label and per language, the false-positive rate, how many recall
questions were recognised, and the confusion matrix of the four labels against the
three outcomes (full = capture, recall = a read turn with nothing to save, skip).
`--misses` lists the dev set's misclassified messages; the other two sets never
print individual messages, so their figures keep measuring generalisation.

Last, the in-process time of one classify() call and of one preflight (classify
plus the receipt write on a fresh temporary archive), median and p95.

Goals on the test set: personal recall >= 0.97, false-positive rate on
technical/non-personal <= 0.10, recall questions recognised >= 0.90; preflight
under 5 ms.
"""

import json
import os
import shutil
import sys
import tempfile
import time

import _bench
from personal_understanding import archive, receipts
from personal_understanding.classifier import CLASSIFIER_VERSION, classify

FIXTURES = os.path.join(_bench.REPO, "tests", "fixtures", "classifier")
SETS = {"labelled": "dev, tuned on", "heldout": "older held-out, never tuned on",
        "testset": "frozen test set, never tuned on"}
LABELS = ("personal", "recall", "technical", "non-personal")
OUTCOMES = ("full", "recall", "skip")
EXPECTED = {"personal": "full", "recall": "recall", "technical": "skip", "non-personal": "skip"}
LANGS = ("zh", "en", "mixed")


def load(name):
    with open(os.path.join(FIXTURES, name + ".jsonl"), encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def outcome(result):
    if result["requires_personal_understanding"]:
        return "full"
    return "recall" if result.get("signal") == "recall" else "skip"


def ratio(num, den):
    return f"{num / den:.3f} ({num}/{den})" if den else "   -  (0/0)"


def figures(rows, results):
    """Goal figures for a list of (row, result) pairs."""
    got = [(r["label"], outcome(x), bool(x.get("recall"))) for r, x in zip(rows, results)]
    personal = [o for lab, o, _ in got if lab == "personal"]
    other = [o for lab, o, _ in got if lab in ("technical", "non-personal")]
    recall_rows = [(o, flag) for lab, o, flag in got if lab == "recall"]
    full = [lab for lab, o, _ in got if o == "full"]
    return {
        "personal recall (full)": ratio(personal.count("full"), len(personal)),
        "personal precision (full)": ratio(full.count("personal"), len(full)),
        "false-positive rate (technical/non-personal -> full)": ratio(other.count("full"), len(other)),
        "recall questions recognised (recall flag)": ratio(sum(f for _, f in recall_rows), len(recall_rows)),
        "recall questions as pure read turn (-> recall)": ratio(sum(o == "recall" for o, _ in recall_rows),
                                                                len(recall_rows)),
    }


def report(name, show_misses):
    rows = load(name)
    results = [classify(r["text"]) for r in rows]
    print(f"== {name} ({SETS[name]}): {len(rows)} messages, classifier {CLASSIFIER_VERSION}")
    for key, value in figures(rows, results).items():
        print(f"  {key:<52} {value}")
    asking = [x for r, x in zip(rows, results) if r["label"] == "personal" and r.get("asks_memory")]
    if asking:
        print(f"  {'personal lines that also ask the memory: recall flag':<52} "
              f"{ratio(sum(bool(x.get('recall')) for x in asking), len(asking))}")
    print("  per label (recall = share with the expected outcome; precision = share of that outcome with this label):")
    preds = [outcome(x) for x in results]
    for lab in LABELS:
        mine = [p for r, p in zip(rows, preds) if r["label"] == lab]
        if not mine:
            continue
        exp = EXPECTED[lab]
        same_out = [r["label"] for r, p in zip(rows, preds) if p == exp]
        ok = mine.count(exp)
        prec = sum(EXPECTED[x] == exp for x in same_out)
        print(f"    {lab:<13} -> {exp:<6} recall={ratio(ok, len(mine)):<18} "
              f"precision={ratio(prec, len(same_out))}")
    print("  per language:")
    for lang in LANGS:
        pairs = [(r, x) for r, x in zip(rows, results) if r["lang"] == lang]
        if pairs:
            f = figures(*zip(*pairs))
            print(f"    [{lang:>5}] n={len(pairs):<4} personal recall={f['personal recall (full)']:<18} "
                  f"precision={f['personal precision (full)']:<18} "
                  f"FP rate={f['false-positive rate (technical/non-personal -> full)']:<18} "
                  f"recall recognised={f['recall questions recognised (recall flag)']}")
    print("  confusion (rows = label, columns = outcome):")
    print("  " + " " * 14 + "".join(f"{o:>8}" for o in OUTCOMES))
    for lab in LABELS:
        counts = [sum(1 for r, p in zip(rows, preds) if r["label"] == lab and p == o) for o in OUTCOMES]
        print(f"  {lab:>14}" + "".join(f"{c:>8}" for c in counts))
    if show_misses and name == "labelled":
        misses = [(r, p) for r, p in zip(rows, preds) if EXPECTED[r["label"]] != p]
        print(f"  misclassified: {len(misses)}")
        for r, p in misses:
            print(f"    expected={EXPECTED[r['label']]:<6} got={p:<6} {r['text'][:100]}")
    print()
    return [r["text"] for r in rows]


def classify_times(texts, rounds=5):
    samples = []
    for _ in range(rounds):
        for t in texts:
            started = time.perf_counter()
            classify(t)
            samples.append(time.perf_counter() - started)
    return _bench.median_p95(samples)


def preflight_times(texts):
    root = tempfile.mkdtemp(prefix="pu-bench-classifier-")
    try:
        archive.init_archive(root)
        samples = []
        for i, text in enumerate(texts):
            started = time.perf_counter()
            receipts.preflight(root, text, turn_id=f"bench-{i}")
            samples.append(time.perf_counter() - started)
        return _bench.median_p95(samples)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv):
    names = list(SETS)
    if "--only" in argv:
        names = [argv[argv.index("--only") + 1]]
        if names[0] not in SETS:
            print(f"unknown set {names[0]!r}; one of {', '.join(SETS)}", file=sys.stderr)
            return 2
    texts = []
    for name in names:
        texts += report(name, "--misses" in argv)
    classify("warm up")
    med, p95 = classify_times(texts)
    print(f"classify(): median {med * 1e6:.0f} us, p95 {p95 * 1e6:.0f} us over {len(texts)} messages x 5")
    med, p95 = preflight_times(texts)
    print(f"preflight (classify + receipt, fresh archive): median{_bench.ms(med)}, p95{_bench.ms(p95)} "
          f"over {len(texts)} turns; {_bench.disk_note()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
