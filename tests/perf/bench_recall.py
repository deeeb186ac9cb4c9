#!/usr/bin/env python3
"""Recall at scale: a deterministic synthetic archive (mixed Chinese and English).

    python3 tests/perf/bench_recall.py                # 1 000 and 10 000
    python3 tests/perf/bench_recall.py 1000 10000 100000

For each size N the archive holds N captures and N records. Printed: index build
time from scratch, probe p50/p95 in a warm process and as a CLI process, survey
bytes, incremental update time for one new capture and one new record, peak
memory. Goals: warm probe p50 <= 50 ms at 10 000 and <= 200 ms at 100 000; CLI
probe <= 400 ms at 10 000; incremental update <= 20 ms. Figures are printed,
not asserted. The archive's truth is written in bulk in the same formats the
product writes (building 100 000 items through the API would take an hour);
everything measured runs the product's own code.
"""

import json
import os
import random
import resource
import shutil
import sys
import tempfile
import time

import _bench
from personal_understanding import archive, archive_index, capture, paths, receipts, records, storage
from personal_understanding.retrieval import index as recall_index
from personal_understanding.retrieval.probe import probe
from personal_understanding.retrieval.survey import catalog
from personal_understanding.textinput import sha256_hex

PEOPLE_ZH = ["妈妈", "爸爸", "小雨", "阿强", "老王", "外婆", "表哥", "室友", "同事小李", "大学同学"]
PEOPLE_EN = ["Anna", "my sister", "Tom", "grandpa", "my manager", "Lucy", "the neighbour", "coach Mike"]
PLACES = ["杭州", "成都", "公司", "健身房", "医院", "老家", "Lisbon", "the park", "the office", "Tokyo"]
THINGS_ZH = ["火锅", "咖啡", "羽毛球", "考研", "搬家", "面试", "体检", "猫", "吉他", "驾照", "婚礼", "旅行", "失眠", "加班"]
THINGS_EN = ["marathon", "piano", "job interview", "birthday", "camping", "visa", "tax return", "sourdough", "chess"]
ZH = ["今天和{p}在{l}聊到{t}，心情{f}。", "{p}说下个月要去{l}，我们顺便{t}。", "最近{t}的事让我{f}，{p}劝我别想太多。",
      "在{l}遇到{p}，一起{t}了一下午。"]
EN = ["Talked with {p} at {l} about {t}; felt {f}.", "{p} wants to go to {l} for the {t} next month.",
      "The {t} at {l} went better than expected, {p} was there.", "Still thinking about the {t} with {p}."]
FEEL_ZH = ["不错", "有点累", "很开心", "挺焦虑", "一般"]
FEEL_EN = ["great", "tired", "anxious", "relieved", "okay"]
QUERIES = ["和妈妈吃火锅", "面试结果", "Lisbon visa", "marathon training", "外婆", "考研压力", "猫最近怎么样",
           "coach Mike piano", "上次去成都", "sourdough birthday", "失眠 加班", "Tom camping"]


def sentence(rng):
    if rng.random() < 0.6:
        return rng.choice(ZH).format(p=rng.choice(PEOPLE_ZH), l=rng.choice(PLACES), t=rng.choice(THINGS_ZH),
                                     f=rng.choice(FEEL_ZH))
    return rng.choice(EN).format(p=rng.choice(PEOPLE_EN), l=rng.choice(PLACES), t=rng.choice(THINGS_EN),
                                 f=rng.choice(FEEL_EN))


def build_bulk(root, count, seed=7):
    """N captures (closed) and N records citing them, written in the product's formats."""
    archive.init_archive(root)
    rng = random.Random(seed)
    stamp = "2026-01-15T10:00:00Z"
    ledger, recs = [], []
    with storage.archive_lock(root, "bench build"):
        for i in range(count):
            text = sentence(rng)
            cid = f"cap-bench-{i:06d}"
            data = text.encode("utf-8")
            doc = {"format": 1, "capture_id": cid, "kind": "text", "speaker": "user", "text": text,
                   "utf8_sha256": sha256_hex(data), "bytes": len(data), "chars": len(text), "captured_at": stamp,
                   "occurred_at": f"{2015 + i % 11}-{1 + i % 12:02d}-{1 + i % 28:02d}", "session_id": f"s{i // 20}",
                   "turn_id": None, "source": "import:bench", "source_ref": str(i)}
            rel = paths.capture_relpath(cid, stamp)
            storage.write_once(root, os.path.join(root, rel), json.dumps(doc, ensure_ascii=False).encode("utf-8"))
            ledger.append({"event": "captured", "capture_id": cid, "path": rel, "kind": "text",
                           "utf8_sha256": doc["utf8_sha256"], "turn_id": None, "session_id": doc["session_id"],
                           "captured_at": stamp, "occurred_at": doc["occurred_at"], "chars": len(text),
                           "speaker": "user", "source": "import:bench", "source_ref": str(i), "at": stamp})
            ledger.append({"event": "finalized", "capture_id": cid, "disposition": "derived", "reason": None,
                           "record_ids": [f"event-bench-{i:06d}"], "at": stamp})
            recs.append({"id": f"event-bench-{i:06d}", "kind": "event", "version": 1, "title": text[:24],
                         "summary": text, "capture_ids": [cid], "status": "current", "layer": "user_fact",
                         "sensitivity": "ordinary", "salience": i % 4, "salience_basis": "explicit",
                         "fidelity": "verbatim", "date_start": doc["occurred_at"][:7], "created_at": stamp,
                         "updated_at": stamp})
            if len(ledger) >= 4000:
                storage.append_jsonl(root, paths.ledger_events_path(root), ledger)
                storage.append_jsonl(root, paths.records_path(root, "event"), recs)
                ledger, recs = [], []
        if ledger:
            storage.append_jsonl(root, paths.ledger_events_path(root), ledger)
            storage.append_jsonl(root, paths.records_path(root, "event"), recs)


def peak_mb():
    usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return usage / 1024 if sys.platform != "darwin" else usage / 1e6


def measure(size):
    tmp = tempfile.mkdtemp(prefix="pu-bench-recall-")
    root = os.path.join(tmp, "a")
    try:
        started = time.perf_counter()
        build_bulk(root, size)
        written = time.perf_counter() - started
        archive_index.forget_cached()
        started = time.perf_counter()
        archive_index.open_index(root)
        core = time.perf_counter() - started
        started = time.perf_counter()
        recall_index.open_recall(root)
        recall_build = time.perf_counter() - started
        warm = []
        for _ in range(3):
            for q in QUERIES:
                t0 = time.perf_counter()
                probe(root, q, maintenance=True)
                warm.append(time.perf_counter() - t0)
        survey_bytes = catalog(root, maintenance=True)["bytes"]
        cli = []
        for q in QUERIES[:8]:
            elapsed, proc = _bench.run_cli("retrieve_v2", "--query", q, "--maintenance", root=root)
            if proc.returncode != 0:
                raise SystemExit(proc.stdout.decode() + proc.stderr.decode())
            cli.append(elapsed)
        text = "新来的同事小周居然也喜欢打羽毛球"
        receipts.preflight(root, text, turn_id="bench-new", tier="full")
        cid = capture.capture_text(root, text, "bench-new")["capture_id"]
        t0 = time.perf_counter()
        recall_index.open_recall(root)
        inc_capture = time.perf_counter() - t0
        records.add_record(root, kind="event", title="认识了同事小周", capture_ids=[cid])
        t0 = time.perf_counter()
        recall_index.open_recall(root)
        inc_record = time.perf_counter() - t0
        found = [r["id"] for r in probe(root, "小周 羽毛球", maintenance=True)["top"]]
        assert cid in found, found
        (wp50, wp95), (cp50, cp95) = _bench.median_p95(warm), _bench.median_p95(cli)
        print(f"  {size:>7} captures + {size} records   ({_bench.size_line(root)}, index {os.path.getsize(paths.index_db_path(root)) / 1e6:.1f} MB; bulk write {written:.1f} s)")
        print(f"           index build: core {core:.2f} s + recall {recall_build:.2f} s")
        print(f"           warm probe p50 {_bench.ms(wp50)}  p95 {_bench.ms(wp95)}   CLI probe p50 {_bench.ms(cp50)}  p95 {_bench.ms(cp95)}")
        print(f"           incremental update: new capture {_bench.ms(inc_capture)}, new record {_bench.ms(inc_record)}")
        print(f"           survey {survey_bytes} bytes   peak memory {peak_mb():.0f} MB")
    finally:
        archive_index.forget_cached()
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    sizes = _bench.sizes_from_argv([1000, 10000])
    print(f"recall benchmark ({_bench.disk_note()}); {len(QUERIES)} queries x 3 warm, 8 CLI runs")
    print(f"  bare interpreter start: {_bench.ms(_bench.interpreter_start())}")
    for size in sizes:
        measure(size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
