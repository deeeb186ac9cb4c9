#!/usr/bin/env python3
"""add_record latency by archive size (goal: <= 10 ms in-process, flat: 100 000 vs 1 000 within 1.5x).

    python3 tests/perf/bench_add_record.py                 # 1 000 and 10 000
    flock /work/bench.lock python3 tests/perf/bench_add_record.py 1000 10000 100000

Each archive holds N closed turns and N records (see _bench.build_bulk) and 50 people.
"""

import sys
import time

import _bench
from personal_understanding import records

RUNS = 200
PEOPLE = [f"person-p{i}" for i in range(50)]
FIGURES = _bench.Figures()


def build(root, count):
    """N turns and records, 50 people; returns a capture id to cite."""
    ids = _bench.build_bulk(root, count)
    for pid in PEOPLE:
        records.add_record(root, kind="entity", entity_type="person", title=pid, id=pid)
    return ids[-1]


def per_size(size, tmp):
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
    FIGURES.add("add_record median", size, med)
    FIGURES.add("add_record p95", size, p95)
    print(f"  {size:>6} records  median {_bench.ms(med)}  p95 {_bench.ms(p95)}   "
          f"(built in {built:.1f} s, {_bench.size_line(root)})")


def main():
    return _bench.run_sizes("add_record", per_size, FIGURES, f"; median of {RUNS} adds per size")


if __name__ == "__main__":
    sys.exit(main())
