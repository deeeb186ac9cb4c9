#!/usr/bin/env python3
"""add_record latency at 1 000 and 10 000 records (goal: <= 10 ms in-process, independent of size).

    python3 tests/perf/bench_add_record.py [sizes...]
"""

import shutil
import sys
import tempfile
import time

import _bench
from personal_understanding import archive, capture, receipts, records

RUNS = 200
PEOPLE = [f"person-p{i}" for i in range(50)]


def build(root, count):
    archive.init_archive(root)
    text = "我和朋友们这些年的很多事。"
    receipts.preflight(root, text, turn_id="seed", tier="full")
    cid = capture.capture_text(root, text, "seed")["capture_id"]
    for pid in PEOPLE:
        records.add_record(root, kind="entity", entity_type="person", title=pid, id=pid)
    for i in range(count):
        records.add_record(root, kind="event", title=f"第{i}件事 event {i}", summary=f"和朋友一起做的第{i}件事",
                           capture_ids=[cid], entity_refs=[PEOPLE[i % len(PEOPLE)]],
                           date_start=f"{2000 + i % 25}-{1 + i % 12:02d}")
    return cid


def main():
    sizes = _bench.sizes_from_argv([1000, 10000])
    print(f"add_record benchmark ({_bench.disk_note()}); median of {RUNS} adds per size")
    medians = {}
    for size in sizes:
        tmp = tempfile.mkdtemp(prefix="pu-bench-")
        try:
            root = f"{tmp}/a"
            started = time.perf_counter()
            cid = build(root, size)
            built = time.perf_counter() - started
            times = []
            for i in range(RUNS):
                t0 = time.perf_counter()
                records.add_record(root, kind="event", title=f"measured {size} {i}", summary="新的一件事",
                                   capture_ids=[cid], entity_refs=[PEOPLE[i % len(PEOPLE)]], date_start="2026-11")
                times.append(time.perf_counter() - t0)
            med, p95 = _bench.median_p95(times)
            medians[size] = med
            print(f"  {size:>6} records  median {_bench.ms(med)}  p95 {_bench.ms(p95)}   "
                  f"(built in {built:.1f} s, {_bench.size_line(root)})")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    if len(medians) > 1:
        low, high = min(medians), max(medians)
        print(f"  ratio {high} vs {low}: {medians[high] / medians[low]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
