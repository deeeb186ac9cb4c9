#!/usr/bin/env python3
"""Accuracy and speed of the preflight content classifier.

    python3 tests/perf/bench_classifier.py [--only labelled|heldout]

For labelled.jsonl (tuned against) and heldout.jsonl (never tuned against)
it prints precision/recall/F1 of `personal` overall and per language, a
confusion matrix over the three labels, every misclassified message, and
the median time of one classify() call in microseconds.
"""

import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from personal_understanding.classifier import CLASSIFIER_VERSION, classify  # noqa: E402

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "classifier")
LABELS = ("personal", "technical", "non-personal")


def load(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def prf(rows, preds):
    tp = sum(1 for r, p in zip(rows, preds) if r["label"] == "personal" and p == "personal")
    fp = sum(1 for r, p in zip(rows, preds) if r["label"] != "personal" and p == "personal")
    fn = sum(1 for r, p in zip(rows, preds) if r["label"] == "personal" and p != "personal")
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1, len(rows)


def evaluate(rows):
    """Predicted signals for rows (also used by the unit tests)."""
    return [classify(r["text"])["signal"] for r in rows]


def median_us(texts, rounds=5):
    times = []
    for _ in range(rounds):
        for t in texts:
            start = time.perf_counter()
            classify(t)
            times.append((time.perf_counter() - start) * 1e6)
    return statistics.median(times)


def report(name):
    rows = load(name)
    preds = evaluate(rows)
    print(f"== {name}: {len(rows)} messages (classifier {CLASSIFIER_VERSION})")
    for lang in (None, "zh", "en"):
        sub = [(r, p) for r, p in zip(rows, preds) if lang is None or r["lang"] == lang]
        p, r, f, n = prf([x for x, _ in sub], [y for _, y in sub])
        print(f"  personal [{lang or 'all':>3}] precision={p:.3f} recall={r:.3f} f1={f:.3f} n={n}")
    accuracy = sum(r["label"] == p for r, p in zip(rows, preds)) / len(rows)
    print(f"  three-way accuracy={accuracy:.3f}")
    print("  confusion (rows=expected, cols=got):")
    print("  " + " " * 14 + "".join(f"{lab:>14}" for lab in LABELS))
    for exp in LABELS:
        counts = [sum(1 for r, p in zip(rows, preds) if r["label"] == exp and p == got) for got in LABELS]
        print(f"  {exp:>14}" + "".join(f"{c:>14}" for c in counts))
    low_rows = [r for r in rows if "low_information" in r]
    if low_rows:
        ok = sum(classify(r["text"])["low_information"] == r["low_information"] for r in low_rows)
        print(f"  low_information flag correct: {ok}/{len(low_rows)}")
    misses = [(r, p) for r, p in zip(rows, preds) if r["label"] != p]
    print(f"  misclassified: {len(misses)}")
    for r, p in misses:
        print(f"    expected={r['label']:<12} got={p:<12} {r['text'][:90]}")
    print(f"  median classify time: {median_us([r['text'] for r in rows]):.1f} us")
    print()


def main(argv):
    names = ["labelled.jsonl", "heldout.jsonl"]
    if len(argv) == 2 and argv[0] == "--only":
        names = [argv[1] + ".jsonl"]
    for name in names:
        report(name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
