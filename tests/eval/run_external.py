#!/usr/bin/env python3
"""Recall on external benchmarks: the product's probe next to plain and strong BM25.

    python3 tests/eval/run_external.py [--dataset locomo|longmemeval|madial|all] [--split dev|test|all]
                                        [--limit N] [--json OUT] [--diagnose] [--unbounded] [--data DIR]

Every conversation (or question haystack, or memory bank) is imported into its
own temporary archive, one capture per message; each question is then asked
of its own archive only. Every set is split by haystack into a dev part (tune
on it) and a test part (report it); --split picks one (default dev). Turn-level
figures (R@1, R@5, R@10, hit@k, NDCG@10; see tests/eval/_metrics.py), per split
and per category, are computed for:

- product            probe() with its defaults (limit 10, budget 2000 tokens, 3 per episode)
- product-unbounded  (--unbounded) probe(per_episode=0, budget=100000): what the bounding costs
- bm25               plain BM25 over the same captures: lower-cased words, CJK characters
- bm25-strong        BM25 with stopwords and Porter stemming, CJK characters plus bigrams
- ref:<name>         (MADial) published retrievers' rankings, scored with the same code

Progress goes to stderr, tables to stdout; --json writes every figure (no
dataset text). --diagnose adds examples where one side found the gold and the
other did not, and sorts every product loss by its cause. Standard library only.
The data folder defaults to $PU_BENCH_DATA, else ../shared/bench-data next to
the checkout; see tests/eval/README.md.
"""

import argparse
import datetime as _dt
import json
import os
import platform
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
for _path in (os.path.join(REPO, "scripts"), HERE):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from personal_understanding import archive, archive_index, history  # noqa: E402
from personal_understanding.errors import PuError  # noqa: E402
from personal_understanding.retrieval import probe as probe_mod  # noqa: E402
from personal_understanding.retrieval.index import open_recall, weighted_terms  # noqa: E402

import _bm25  # noqa: E402
import _datasets  # noqa: E402
import _metrics  # noqa: E402
import _report  # noqa: E402

DATASETS = ("locomo", "longmemeval", "madial")
PRODUCT = "product"
UNBOUNDED = "product-unbounded"
BM25 = "bm25"
STRONG = "bm25-strong"
BASELINES = {BM25: _bm25.plain_terms, STRONG: _bm25.strong_terms}
UNBOUNDED_ARGS = {"per_episode": 0, "budget": 100000}
TOP = 10
DIAG_DEPTH = 30  # probe ranks at most this many captures per channel


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def find_data_dir(explicit):
    candidates = [explicit] if explicit else [os.environ.get("PU_BENCH_DATA"),
                                              os.path.join(os.path.dirname(REPO), "shared", "bench-data")]
    for path in candidates:
        if path and os.path.isdir(path):
            return os.path.abspath(path)
    raise SystemExit("benchmark data not found: pass --data DIR or set PU_BENCH_DATA "
                     "(a folder holding locomo/, longmemeval/oracle/ and madial-bench/)")


# --- one haystack --------------------------------------------------------------------

def ranked_ids(result, known):
    """Distinct capture ids of a probe's top rows, in order (records give the captures they cite)."""
    ids = []
    for row in result.get("top", []):
        ids.extend(row.get("capture_ids") or [row["id"]])
    return _metrics.distinct(i for i in ids if i in known)


def run_probe(root, text, as_of, **extra):
    started = time.perf_counter()
    try:
        result = probe_mod.probe(root, text, maintenance=True, as_of=as_of, **extra)
    except PuError as exc:
        result = {"top": [], "error": exc.code}
    return result, (time.perf_counter() - started) * 1000.0


def import_haystack(root, hs, workdir):
    if hs.locomo:
        path, sample = hs.locomo
        return history.import_history(root, "locomo", path, sample_ids=[sample])
    path = os.path.join(workdir, "haystack.jsonl")
    with open(path, "w", encoding="utf-8") as fh:
        for msg in hs.messages:
            line = {"ref": msg["ref"], "speaker": msg["speaker"], "role": msg["role"], "text": msg["text"]}
            if msg.get("occurred_at"):
                line["occurred_at"] = msg["occurred_at"]
            if msg.get("session_id"):
                line["session_id"] = msg["session_id"]
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")
    return history.import_history(root, "jsonl", path)


def evaluate_haystack(hs, state, diagnose):
    workdir = tempfile.mkdtemp(prefix="pu-eval-")
    root = os.path.join(workdir, "archive")
    try:
        started = time.perf_counter()
        archive.init_archive(root)
        report = import_haystack(root, hs, workdir)
        state["import_s"].append(time.perf_counter() - started)
        started = time.perf_counter()
        open_recall(root)  # the recall index is built on first read; time it apart from the probes
        state["index_s"].append(time.perf_counter() - started)
        mapping = report["mapping"]
        text_of = {mapping[m["ref"]]: m["text"] for m in hs.messages if m["ref"] in mapping}
        state["skipped_messages"] += len(report.get("skipped") or [])
        state["captures"].append(len(text_of))

        started = time.perf_counter()
        order = [mapping[m["ref"]] for m in hs.messages if m["ref"] in mapping]
        baselines = {name: (_bm25.BM25([(cid, terms(text_of[cid])) for cid in order]), terms)
                     for name, terms in BASELINES.items()}
        state["bm25_build_s"].append(time.perf_counter() - started)
        ctx = {"text_of": text_of, "ref_of": {cid: ref for ref, cid in mapping.items()},
               "when_of": {mapping[m["ref"]]: m.get("occurred_at") for m in hs.messages if m["ref"] in mapping}}

        for q in hs.questions:
            gold = {mapping[r] for r in q["gold_refs"] if r in mapping}
            if not gold:
                state["gold_not_imported"] += 1
                continue
            row = {"qid": q["qid"], "split": hs.split, "category": q["category"], "n_gold": len(gold), "methods": {}}
            runs = {}
            res, ms = run_probe(root, q["text"], q["as_of"])
            runs[PRODUCT] = (ranked_ids(res, text_of), ms, res)
            if state["unbounded"]:
                res_u, ms_u = run_probe(root, q["text"], q["as_of"], **UNBOUNDED_ARGS)
                runs[UNBOUNDED] = (ranked_ids(res_u, text_of), ms_u, res_u)
            for name, (index, tokenize) in baselines.items():
                started = time.perf_counter()
                ranked = index.rank(tokenize(q["text"]), TOP)
                runs[name] = (ranked, (time.perf_counter() - started) * 1000.0, None)
            for name, ranking in state["references"].items():
                refs = ranking.get(q["qid"])
                if refs is not None:
                    runs[name] = ([mapping[r] for r in refs if r in mapping], None, None)
            for name, (ranked, ms, res) in runs.items():
                figures = _metrics.score(ranked, gold)
                figures["returned"] = min(len(ranked), TOP)
                figures["first_gold_rank"] = _metrics.first_gold_rank(ranked[:TOP], gold)
                if res is not None and res.get("error"):
                    state["errors"][name] = state["errors"].get(name, 0) + 1
                row["methods"][name] = figures
                if ms is not None:
                    state["ms"].setdefault(name, []).append(ms)
            state["rows"].append(row)
            if diagnose:
                diagnose_question(root, hs, q, gold, runs, ctx, state)
    finally:
        archive_index.forget_cached(root)
        shutil.rmtree(workdir, ignore_errors=True)


# --- diagnosis -------------------------------------------------------------------------

def read_trace(root, trace_id):
    from personal_understanding import paths
    folder = paths.traces_dir(root)
    for name in sorted(os.listdir(folder), reverse=True):
        with open(os.path.join(folder, name), encoding="utf-8") as fh:
            lines = fh.read().splitlines()
        for line in reversed(lines):
            if trace_id in line:
                entry = json.loads(line)
                if entry.get("trace_id") == trace_id:
                    return entry
    return {}


def _time_ranges(result):
    return [(t["from"], t["to"]) for t in result.get("time", [])]


def _boosted(day, ranges):
    return bool(day) and any(lo <= day[:10] <= hi for lo, hi in ranges)


def _anchor(result):
    """The query term with the most evidence weight (query weight x idf): the probe's anchor."""
    best, best_strength = None, 0.0
    for tok in result.get("tokens", []):
        if tok.get("idf") is not None and tok["weight"] * tok["idf"] > best_strength:
            best, best_strength = tok["term"], tok["weight"] * tok["idf"]
    return best


def _terms_of(root, text):
    return set(weighted_terms(text, open_recall(root).lexicon()))


def loss_cause(root, q, gid, runs, ctx, cache):
    """Why the product's default probe missed gold turn `gid` that strong BM25 had in its top 10.

    Checked in order: the bounding (the turn is in the unbounded probe's top 10:
    episode cap or token budget), then a deeper unbounded probe (top 30) and
    its trace: the turn was held back (content threshold, as_of), ranked 11-30
    (time-boosted turns passed it, it lacks the query's anchor term, or other
    term weighting), or not ranked at all.
    """
    res = runs[PRODUCT][2]
    if res.get("error"):
        return "probe error", {}
    if gid in runs[UNBOUNDED][0][:TOP]:
        if "held" not in cache:
            cache["held"] = read_trace(root, res.get("trace_id", "")).get("held_back", [])
        if any(h["id"] == gid and h["why"].startswith("episode cap") for h in cache["held"]):
            return "bounding: episode cap", {}
        if res.get("truncated") and res.get("shown", TOP) < TOP:
            return "bounding: token budget", {}
        return "bounding: other", {}
    if "deep" not in cache:
        deep, _ms = run_probe(root, q["text"], q["as_of"], limit=DIAG_DEPTH, **UNBOUNDED_ARGS)
        cache["deep"] = deep
        cache["deep_ranked"] = ranked_ids(deep, ctx["text_of"])
        cache["deep_held"] = read_trace(root, deep.get("trace_id", "")).get("held_back", [])
    deep, ranked = cache["deep"], cache["deep_ranked"]
    reasons = {h["why"] for h in cache["deep_held"] if h["id"] == gid}
    ranges = _time_ranges(deep)
    detail = {"time": [t["expression"] for t in deep.get("time", [])]}
    anchor = _anchor(deep)
    if gid in ranked:
        rank = ranked.index(gid) + 1
        detail["rank"] = rank
        if ranges and not _boosted(ctx["when_of"].get(gid), ranges) \
                and any(_boosted(ctx["when_of"].get(c), ranges) for c in ranked[:rank - 1]):
            return "ranked 11-30: time-boosted turns passed it", detail
        if anchor and anchor not in _terms_of(root, ctx["text_of"][gid]):
            detail["anchor"] = anchor
            return "ranked 11-30: lacks the query's anchor term (damped)", detail
        return "ranked 11-30: term weighting", detail
    if "said after as_of" in reasons:
        return "held: said after as_of", detail
    if "below content threshold" in reasons:
        detail["anchor"] = anchor
        return "held: below content threshold", detail
    if reasons:
        return "held: " + sorted(reasons)[0], detail
    # Neither ranked in the first DIAG_DEPTH nor held back: ranked deeper, or the product's
    # own query terms (time words stripped) never meet the turn's terms.
    query_terms = {t["term"] for t in deep.get("tokens", [])}
    if not query_terms & _terms_of(root, ctx["text_of"][gid]):
        return ("no shared term once time words are stripped" if detail["time"] else "no shared term"), detail
    return f"ranked below {DIAG_DEPTH}", detail


def win_cause(root, q, gold, runs, ctx):
    """Why the product found gold that strong BM25 missed in its top 10."""
    res = runs[PRODUCT][2]
    plain_query = set(_bm25.strong_terms(q["text"]))
    if not any(plain_query & set(_bm25.strong_terms(ctx["text_of"][g])) for g in gold):
        return "term expansion (sub-words, mixed names, learned words)"
    ranges = _time_ranges(res)
    if ranges and any(_boosted(ctx["when_of"].get(g), ranges) for g in gold):
        return "time boost on the gold"
    anchor = _anchor(res)
    if anchor and any(anchor in _terms_of(root, ctx["text_of"][g]) for g in gold):
        return "gold holds the anchor term; others were damped"
    return "term weighting"


def diagnose_question(root, hs, q, gold, runs, ctx, state):
    diag = state["diag"]
    bm25_top, product_top = runs[STRONG][0][:TOP], runs[PRODUCT][0][:TOP]
    cache = {}
    # Turn level: every gold turn in BM25's top 10 that the product's top 10 lacks.
    for gid in [g for g in bm25_top if g in gold and g not in product_top]:
        cause, _detail = loss_cause(root, q, gid, runs, ctx, cache)
        diag["turn_loss_causes"][cause] = diag["turn_loss_causes"].get(cause, 0) + 1
    bm25_hit, product_hit = bool(gold & set(bm25_top)), bool(gold & set(product_top))
    if bm25_hit and not product_hit:
        first = next(g for g in bm25_top if g in gold)
        cause, detail = loss_cause(root, q, first, runs, ctx, cache)
        diag["loss_causes"][cause] = diag["loss_causes"].get(cause, 0) + 1
        kind = "bm25_wins"
    elif product_hit and not bm25_hit:
        cause, detail = win_cause(root, q, gold, runs, ctx), {}
        diag["win_causes"][cause] = diag["win_causes"].get(cause, 0) + 1
        kind = "product_wins"
    else:
        return
    diag["counts"][kind] = diag["counts"].get(kind, 0) + 1
    if state["dataset"] == "longmemeval":
        return  # examples are kept for LoCoMo and MADial only
    res = runs[PRODUCT][2]
    text_of, ref_of = ctx["text_of"], ctx["ref_of"]
    example = {
        "qid": q["qid"], "category": q["category"], "question": q["text"],
        "gold": [_report._short(text_of[g], 80) for g in sorted(gold, key=lambda g: ref_of.get(g, g))][:3],
        "gold_refs": sorted(ref_of.get(g) for g in gold),
        "product_top3": [_report._short(text_of[c], 80) for c in runs[PRODUCT][0][:3]],
        "product_returned": len(runs[PRODUCT][0]),
        "bm25_gold_rank": _metrics.first_gold_rank(runs[STRONG][0], gold),
        "product_gold_rank": _metrics.first_gold_rank(runs[PRODUCT][0], gold),
        "time_expressions": [t["expression"] for t in res.get("time", [])],
        "anchor": _anchor(res),
        "query_terms": [t["term"] for t in res.get("tokens", [])],
        "cause": cause, "detail": detail,
    }
    diag["examples"].setdefault(kind, []).append(example)


# --- one dataset -------------------------------------------------------------------------

def evaluate_dataset(name, data_dir, split, limit, diagnose, unbounded):
    started = time.perf_counter()
    loaded = _datasets.select(_datasets.LOADERS[name](data_dir), split, limit)
    load_s = time.perf_counter() - started
    state = {"dataset": name, "unbounded": unbounded or diagnose, "rows": [], "ms": {}, "import_s": [], "index_s": [], "bm25_build_s": [], "captures": [],
             "skipped_messages": 0, "gold_not_imported": 0, "errors": {},
             "references": {f"ref:{k}": v for k, v in loaded.references.items()},
             "diag": {"counts": {}, "loss_causes": {}, "turn_loss_causes": {}, "win_causes": {},
                      "examples": {}}}
    total = len(loaded.haystacks)
    for n, hs in enumerate(loaded.haystacks, 1):
        t0 = time.perf_counter()
        evaluate_haystack(hs, state, diagnose)
        if total <= 20 or n % 25 == 0 or n == total:
            log(f"[{name}] {n}/{total} {hs.name}: {len(hs.messages)} messages, {len(hs.questions)} questions, "
                f"{time.perf_counter() - t0:.1f}s")
    methods = [PRODUCT, UNBOUNDED, BM25, STRONG] + sorted(state["references"])
    results = {}
    for part in sorted({r["split"] for r in state["rows"]}):
        results[part] = {}
        for method in methods:
            rows = [dict(r["methods"][method], category=r["category"]) for r in state["rows"]
                    if method in r["methods"] and r["split"] == part]
            if not rows:
                continue
            summary = _metrics.mean_by(rows, overall_excludes=loaded.overall_excludes)
            for cat, figures in summary.items():
                sel = [r for r in rows if cat == "overall" and r["category"] not in loaded.overall_excludes
                       or r["category"] == cat]
                figures["returned"] = (sum(r["returned"] for r in sel) / len(sel)) if sel else None
            results[part][method] = summary
    caps = state["captures"]
    out = {
        "dataset": name,
        "files": loaded.files,
        "notes": loaded.notes,
        "overall_excludes": list(loaded.overall_excludes),
        "splits": {hs.name: hs.split for hs in loaded.haystacks},
        "haystacks": {"count": len(caps), "captures_total": sum(caps), "captures_min": min(caps) if caps else 0,
                      "captures_median": _metrics.median(caps), "captures_max": max(caps) if caps else 0,
                      "messages_skipped_by_import": state["skipped_messages"]},
        "questions_scored": len(state["rows"]),
        "questions_gold_not_imported": state["gold_not_imported"],
        "probe_errors": state["errors"],
        "timings": {"load_s": round(load_s, 3), "import_s_total": round(sum(state["import_s"]), 3),
                    "import_s_median": _round(_metrics.median(state["import_s"]), 4),
                    "index_s_total": round(sum(state["index_s"]), 3),
                    "bm25_build_s_total": round(sum(state["bm25_build_s"]), 3),
                    "query_ms_median": {m: _round(_metrics.median(v), 3) for m, v in state["ms"].items()},
                    "wall_s": round(time.perf_counter() - started, 2)},
        "results": results,
        "per_question": state["rows"],
    }
    if diagnose:
        out["diagnosis"] = state["diag"]
    return out


def _round(value, digits):
    return None if value is None else round(value, digits)


def product_version():
    """Which product code produced the figures: HEAD plus a hash of the code, lexicon and thesaurus actually read.

    The working tree may hold uncommitted changes, so the source hash is what identifies a run.
    """
    import hashlib
    import subprocess
    digest = hashlib.sha256()
    for base in (os.path.join(REPO, "scripts", "personal_understanding"), os.path.join(REPO, "resources", "lexicon"),
                 os.path.join(REPO, "resources", "thesaurus")):
        for folder, dirs, files in sorted(os.walk(base)):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith((".py", ".txt")):
                    path = os.path.join(folder, name)
                    with open(path, "rb") as fh:
                        digest.update(os.path.relpath(path, REPO).encode() + b"\0" + fh.read() + b"\0")
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        head = None
    return {"git_head": head, "source_sha256": digest.hexdigest()[:16]}


def machine():
    info = {"platform": platform.platform(), "python": platform.python_version(), "cpu_count": os.cpu_count(),
            "processor": platform.processor() or platform.machine()}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return info


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", choices=DATASETS + ("all",), default="all")
    parser.add_argument("--split", choices=_datasets.SPLITS + ("all",), default="dev",
                        help="dev (tune on it; the default), test (report it, never tune on it) or all")
    parser.add_argument("--limit", type=int, default=None,
                        help="within the split: LoCoMo, the first N conversations; LongMemEval, a fixed-seed sample "
                             "of N questions; MADial, of N dialogues")
    parser.add_argument("--json", metavar="OUT", help="write every figure to OUT (no dataset text unless --diagnose)")
    parser.add_argument("--diagnose", action="store_true",
                        help="examples and causes where product and strong bm25 disagree (implies --unbounded)")
    parser.add_argument("--unbounded", action="store_true", help="also run the probe without episode cap and budget")
    parser.add_argument("--data", metavar="DIR", help="benchmark folder (default $PU_BENCH_DATA or ../shared/bench-data)")
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be at least 1")
    data_dir = find_data_dir(args.data)
    names = DATASETS if args.dataset == "all" else (args.dataset,)
    report = {"generated_at": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "machine": machine(),
              "product": product_version(),
              "settings": {"split": args.split, "split_seed": _datasets.SPLIT_SEED, "limit": args.limit, "top": TOP, "product": {"limit": probe_mod.DEFAULT_LIMIT,
                           "budget": probe_mod.DEFAULT_BUDGET, "per_episode": 3},
                           "product_unbounded": dict(UNBOUNDED_ARGS, limit=probe_mod.DEFAULT_LIMIT),
                           "bm25": {"k1": _bm25.K1, "b": _bm25.B}, "bm25_strong_stopwords": sorted(_bm25.EN_STOPWORDS)},
              "datasets": {}}
    log(f"data: {data_dir}")
    print(f"{report['generated_at']}  product {report['product']['git_head']} (sources {report['product']['source_sha256']})"
          f"  {report['machine'].get('cpu', report['machine']['processor'])}, {report['machine']['cpu_count']} cpu, "
          f"Python {report['machine']['python']}")
    for name in names:
        try:
            rep = evaluate_dataset(name, data_dir, args.split, args.limit, args.diagnose, args.unbounded)
        except FileNotFoundError as exc:
            if args.dataset != "all":
                raise SystemExit(f"{name}: {exc}")
            log(f"[{name}] skipped: {exc}")
            report["datasets"][name] = {"skipped": str(exc)}
            continue
        report["datasets"][name] = rep
        _report.print_dataset(rep)
        sys.stdout.flush()
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(report, fh, ensure_ascii=False, indent=1)
        log(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
