#!/usr/bin/env python3
"""Tokenizer benchmark: cold start, dictionary size, warm tokenize speed.

Run from the repository root: python3 tests/perf/bench_tokenizer.py [--runs 5]

Cold start is measured in fresh subprocesses (wall clock, median of --runs):
the bare interpreter, then the interpreter plus import + dictionary load +
the first tokenize of a Chinese sentence. Inside the second process the three
phases are also timed with time.perf_counter. Warm figures are medians of
repeated calls after the dictionary buckets for the text have been parsed.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPTS = os.path.join(ROOT, "scripts")
sys.path.insert(0, SCRIPTS)

SHORT_ZH = "周末和阿呆呆去吃了火锅，然后在B站看鬼泣5的通关视频。"
LONG_ZH = (
    "今天早上八点起床，先跑了三公里，回来洗澡吃早饭。上午在公司开周会，"
    "老板说下个季度要把推荐系统重构一遍，我负责召回这一块，感觉压力不小。"
    "中午和同事去楼下新开的那家面馆，牛肉面味道一般但是分量很足。"
    "下午继续写代码，修了两个线上问题，其中一个是缓存过期时间配错了。"
    "晚上回家给小黑喂了猫粮，它最近胃口特别好，体重涨了不少。"
    "睡前看了一会儿书，讲的是怎么做长期记忆的整理和回顾，觉得很有启发。"
)
SHORT_EN = "Booked the dentist for Tuesday; remember to bring the insurance card."
LONG_EN = (
    "Spent most of the afternoon debugging the sync job. The retries were hiding a timeout in the "
    "upload step, so every failed batch looked like a success in the dashboard. After adding logging "
    "around the client calls I found that large attachments were being read twice. Fixed it, wrote a "
    "regression test, and left a note for the team about checking the queue depth before deploying "
    "on Fridays. Also ordered new running shoes."
)
MIXED = (
    "周五晚上和阿呆呆在B站直播打鬼泣5，用的是新买的4K屏，iPhone15 录屏的效果也不错。"
    "Then we talked about the trip to Kyoto in April: 机票大概三千块，酒店订在京都站附近。"
    "小黑趴在键盘上睡着了，差点把 stream 关掉。下次要记得提前把 OBS 的场景设置好，别再手忙脚乱。"
)

CHILD = r"""
import sys, time
t0 = time.perf_counter()
sys.path.insert(0, {scripts!r})
from personal_understanding.retrieval.tokenizer import tokenize
from personal_understanding.retrieval import lexicon
t1 = time.perf_counter()
lexicon.load_base()
t2 = time.perf_counter()
tokenize({text!r})
t3 = time.perf_counter()
print(f"{{(t1 - t0) * 1e3:.2f}} {{(t2 - t1) * 1e3:.2f}} {{(t3 - t2) * 1e3:.2f}}")
"""


def wall(cmd, env=None):
    t = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    return (time.perf_counter() - t) * 1e3, out


def cold_start(runs, env=None):
    """Median wall ms: bare interpreter, interpreter + import/load/first tokenize; median phases."""
    bare, full, phases, importtime = [], [], [], []
    child = CHILD.format(scripts=SCRIPTS, text=SHORT_ZH)
    probe = f"import sys; sys.path.insert(0, {SCRIPTS!r}); import personal_understanding.retrieval.tokenizer"
    wall([sys.executable, "-c", child], env)  # prime caches (page cache, bytecode if enabled)
    for _ in range(runs):
        bare.append(wall([sys.executable, "-c", "pass"], env)[0])
        ms, out = wall([sys.executable, "-c", child], env)
        full.append(ms)
        phases.append([float(x) for x in out.stdout.split()])
        err = wall([sys.executable, "-X", "importtime", "-c", probe], env)[1].stderr
        # Cumulative column of the tokenizer module: it includes lexicon and the packages.
        importtime.append(sum(int(line.split("|")[1]) for line in err.splitlines()
                              if line.split("|")[-1].strip() == "personal_understanding.retrieval.tokenizer") / 1e3)
    med = [statistics.median(p[i] for p in phases) for i in range(3)]
    return statistics.median(bare), statistics.median(full), med, statistics.median(importtime)


def warm(fn, text, loops=200, repeats=7):
    fn(text)
    samples = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(loops):
            fn(text)
        samples.append((time.perf_counter() - t) / loops * 1e6)
    return statistics.median(samples)


def main(argv=None):
    ap = argparse.ArgumentParser(description="tokenizer benchmark")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = ap.parse_args(argv)

    from personal_understanding.retrieval import lexicon
    from personal_understanding.retrieval.tokenizer import content_terms, tokenize

    cold = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = cache  # keeps .pyc files out of the checkout
        cold["cached"] = cold_start(args.runs, env)
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        env = dict(os.environ)
        cold["no_pyc"] = cold_start(args.runs, env)
    path = lexicon.resources_path(lexicon.BASE_FILE)
    base = lexicon.load_base()
    result = {
        "python": sys.version.split()[0],
        "dictionary_words": base.size,
        "dictionary_bytes": os.path.getsize(path),
        "dictionary_buckets": base.data.count(b"\n", base.body),
    }
    for mode, (bare, full, (imp, load, first), imptime) in cold.items():
        result[f"cold_{mode}"] = {
            "bare_ms": round(bare, 1), "with_tokenize_ms": round(full, 1), "overhead_ms": round(full - bare, 1),
            "import_ms": imp, "load_ms": load, "first_tokenize_ms": first, "importtime_ms": round(imptime, 2),
        }
    texts = {"short_zh": SHORT_ZH, "long_zh": LONG_ZH, "short_en": SHORT_EN, "long_en": LONG_EN, "mixed": MIXED}
    for name, text in texts.items():
        result[f"tokenize_{name}_us"] = round(warm(tokenize, text), 1)
        result[f"content_terms_{name}_us"] = round(warm(content_terms, text), 1)
        result[f"{name}_chars"] = len(text)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return 0
    print(f"python {result['python']}, cold start: median of {args.runs} fresh processes")
    labels = {"cached": "bytecode cached", "no_pyc": "PYTHONDONTWRITEBYTECODE set (sources compiled each start)"}
    for mode, c in ((m, result[f"cold_{m}"]) for m in cold):
        print(f"  {labels[mode]}:")
        print(f"    bare interpreter {c['bare_ms']:.1f} ms; + import, load, first tokenize {c['with_tokenize_ms']:.1f} ms "
              f"(overhead {c['overhead_ms']:.1f} ms)")
        print(f"    in process: import {c['import_ms']:.1f} ms, load {c['load_ms']:.1f} ms, "
              f"first tokenize {c['first_tokenize_ms']:.1f} ms; -X importtime cumulative {c['importtime_ms']:.1f} ms")
    print(f"dictionary: {base.size} words, {result['dictionary_bytes']} bytes, "
          f"{result['dictionary_buckets']} first-char buckets")
    print("warm (median µs per call):")
    for name, text in texts.items():
        print(f"  {name:9s} {len(text):4d} chars  tokenize {result[f'tokenize_{name}_us']:8.1f}  "
              f"content_terms {result[f'content_terms_{name}_us']:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
