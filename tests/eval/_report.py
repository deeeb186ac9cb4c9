"""Printing the external evaluation: Markdown tables, one block per split.

Each split gets an overall table (R@1, R@5, R@10, NDCG@10, hit@10, rows
returned, n, median milliseconds) and, where a set has categories, one table
per metric with the category's n in its header. The tables paste as they are
into tests/eval/README.md.
"""

DIAG_EXAMPLES = 10
OVERALL = (("r@1", "R@1"), ("r@5", "R@5"), ("r@10", "R@10"), ("ndcg@10", "NDCG@10"), ("hit@10", "hit@10"))
BY_CATEGORY = (("r@1", "R@1"), ("r@5", "R@5"), ("r@10", "R@10"), ("ndcg@10", "NDCG@10"))


def _fmt(value, digits=3):
    return "-" if value is None else f"{value:.{digits}f}"


def table(headers, rows):
    """A Markdown table; the first column left-aligned, the rest right-aligned."""
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(headers)]

    def line(cells):
        return "| " + " | ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                                 for i, (c, w) in enumerate(zip(cells, widths))) + " |"
    rule = "|" + "|".join(("-" * (w + 2)) if i == 0 else ("-" * (w + 1) + ":") for i, w in enumerate(widths)) + "|"
    return "\n".join([line(headers), rule] + [line(r) for r in rows])


def print_split(rep, split, results):
    ms = rep["timings"]["query_ms_median"]
    rows = []
    for method, summary in results.items():
        o = summary["overall"]
        rows.append([method] + [_fmt(o[m]) for m, _label in OVERALL] + [_fmt(o["returned"], 1), o["n"],
                                                                        _fmt(ms.get(method), 2)])
    print(f"\n### {rep['dataset']}, {split} part: overall\n")
    print(table(["method"] + [label for _m, label in OVERALL] + ["returned", "n", "median ms"], rows))
    first = next(iter(results.values()))
    cats = [c for c in first if c != "overall"]
    if len(cats) < 2:
        return
    heads = [f"{c} ({first[c]['n']})" for c in cats] + [f"overall ({first['overall']['n']})"]
    for metric, label in BY_CATEGORY:
        rows = [[method] + [_fmt(summary.get(c, {}).get(metric)) for c in cats] + [_fmt(summary["overall"][metric])]
                for method, summary in results.items()]
        print(f"\n{rep['dataset']}, {split} part: {label} by category (n)\n")
        print(table(["method"] + heads, rows))


def print_dataset(rep):
    hs = rep["haystacks"]
    tm = rep["timings"]
    print(f"\n## {rep['dataset']}\n")
    parts = {}
    for name, split in rep["splits"].items():
        parts.setdefault(split, []).append(name)
    print(f"haystacks {hs['count']} ({', '.join(f'{s} {len(v)}' for s, v in sorted(parts.items()))}), "
          f"captures {hs['captures_total']} (per haystack min {hs['captures_min']}, median {hs['captures_median']}, "
          f"max {hs['captures_max']}); questions scored {rep['questions_scored']}")
    if hs["count"] <= 12:
        print("haystacks by split: " + "; ".join(f"{s}: {' '.join(sorted(v))}" for s, v in sorted(parts.items())))
    print(f"import {tm['import_s_total']:.1f}s total ({tm['import_s_median']:.3f}s median per haystack), "
          f"recall index {tm['index_s_total']:.1f}s, bm25 index {tm['bm25_build_s_total']:.1f}s, wall {tm['wall_s']:.1f}s")
    if rep["overall_excludes"]:
        print(f"overall leaves out: {', '.join(rep['overall_excludes'])}")
    for split, results in rep["results"].items():
        print_split(rep, split, results)
    notes = rep["notes"]
    print()
    if "evidence" in notes:
        ev = notes["evidence"]
        print(f"evidence ids {ev['evidence_ids']}: ok {ev['ok']}, repaired {ev['repaired']}, missing {ev['missing']}, "
              f"malformed {ev['malformed']}; questions dropped (no valid gold): {notes['questions_dropped_no_valid_gold']}")
    for key in ("abstention_excluded", "abstention_with_marked_turns", "empty_turns_skipped", "gold_turns_lost_as_empty"):
        if key in notes:
            print(f"{key.replace('_', ' ')}: {notes[key]}")
    if rep["questions_gold_not_imported"]:
        print(f"questions whose gold was not imported: {rep['questions_gold_not_imported']}")
    if rep["probe_errors"]:
        print(f"probe errors: {rep['probe_errors']}")
    if "diagnosis" in rep:
        print_diagnosis(rep)


def _short(text, limit):
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def print_diagnosis(rep):
    diag = rep["diagnosis"]
    print(f"\n-- diagnosis ({rep['dataset']}, product against bm25-strong) --")
    print(f"hit@10 disagreements: {diag['counts']}")
    if diag["turn_loss_causes"]:
        print("gold turns in bm25-strong's top 10 but not the product's, by cause:")
        for cause, n in sorted(diag["turn_loss_causes"].items(), key=lambda kv: -kv[1]):
            print(f"  {n:4d}  {cause}")
    if diag["loss_causes"]:
        print("questions where bm25-strong hit@10 and the product did not, by cause (of its best gold turn):")
        for cause, n in sorted(diag["loss_causes"].items(), key=lambda kv: -kv[1]):
            print(f"  {n:4d}  {cause}")
    if diag["win_causes"]:
        print("questions where the product hit@10 and bm25-strong did not, by cause:")
        for cause, n in sorted(diag["win_causes"].items(), key=lambda kv: -kv[1]):
            print(f"  {n:4d}  {cause}")
    if rep["dataset"] == "longmemeval":
        return
    for kind, title in (("bm25_wins", "bm25-strong found the gold, the product did not"),
                        ("product_wins", "the product found the gold, bm25-strong did not")):
        examples = _spread(diag["examples"].get(kind, []), DIAG_EXAMPLES)
        if not examples:
            continue
        print(f"\n{title} ({len(examples)} of {len(diag['examples'].get(kind, []))}):")
        for ex in examples:
            print(f"\n  [{ex['qid']}] ({ex['category']}) Q: {_short(ex['question'], 200)}")
            print(f"    gold: {' | '.join(ex['gold'])}")
            print(f"    bm25 gold rank {ex['bm25_gold_rank']}, product gold rank {ex['product_gold_rank']}, "
                  f"product returned {ex['product_returned']}; anchor {ex['anchor']!r}; "
                  f"query terms {_short(' '.join(ex['query_terms']), 160)}"
                  + (f"; time {ex['time_expressions']}" if ex["time_expressions"] else ""))
            if ex["cause"]:
                print(f"    cause: {ex['cause']} {ex['detail'] or ''}")
            for n, snip in enumerate(ex["product_top3"], 1):
                print(f"    product #{n}: {snip}")


def _spread(items, n):
    """n items spread evenly over the list (so one conversation does not fill the examples)."""
    if len(items) <= n:
        return items
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]
