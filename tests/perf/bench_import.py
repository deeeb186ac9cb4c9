#!/usr/bin/env python3
"""Importing conversation history by size, and the first read after it.

    python3 tests/perf/bench_import.py                     # 1 000 and 10 000 messages
    flock /work/bench.lock python3 tests/perf/bench_import.py 1000 10000 100000

For each N: a JSONL export of N messages (two speakers, sessions of 20, ten years) is imported
into a new archive (in-process, timed: messages per second); then the first read, as a CLI
retrieve_v2 process and in-process, and a follow-up import of 1 000 new messages into the
archive that now holds N. CPU is this process's (with the thread that makes files where that is
slow) and the helper process's that reads messages ahead (retrieval/ahead.py, from its
MIN_MESSAGES on). A fixed loop timed before and after the import says how fast the machine ran
just then (_bench.cpu_gauge). Goals: import >= 2 000 messages/s; the first read after importing
10 000 messages <= 0.5 s. Figures are printed, not asserted.
"""

import datetime as dt
import json
import os
import random
import sys
import time
from unittest import mock

import _bench
from personal_understanding import archive, archive_index, history
from personal_understanding.retrieval import index as recall_index
from personal_understanding.retrieval.probe import probe

FIGURES = _bench.Figures()
FOLLOW_UP = 1000


def export(path, count, first=0, seed=11):
    rng = random.Random(seed + first)
    start = dt.datetime(2016, 1, 1, 9, tzinfo=dt.timezone.utc)
    step = dt.timedelta(days=365.25 * _bench.YEARS) / max(1, count)
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(first, first + count):
            speaker = "me" if i % 3 else "Anna"
            when = (start + (i - first) * step).strftime("%Y-%m-%dT%H:%M:%SZ")
            handle.write(json.dumps({"ref": f"m{i}", "speaker": speaker, "text": _bench.sentence(rng) + f" #{i}",
                                     "occurred_at": when, "session_id": f"chat-{i // 20}"}, ensure_ascii=False) + "\n")


def measure(size, tmp):
    root = os.path.join(tmp, "a")
    archive.init_archive(root)
    path = os.path.join(tmp, "export.jsonl")
    export(path, size)
    _bench.quiet_disk()
    writes = []

    class Watched(history._Writes):  # to tell whether a thread made the files (where making one was slow)
        def __init__(self, *args):
            super().__init__(*args)
            writes.append(self)

    gauge_before = _bench.cpu_gauge()
    started, cpu, before = time.perf_counter(), time.process_time(), os.times()
    with mock.patch.object(history, "_Writes", Watched):
        out = history.import_history(root, "jsonl", path, user_speaker="me")
    took, cpu, after = time.perf_counter() - started, time.process_time() - cpu, os.times()
    gauge_after = _bench.cpu_gauge()
    threaded = any(w._thread is not None for w in writes)
    helper = (after.children_user + after.children_system) - (before.children_user + before.children_system)
    assert out["imported"] == size, out
    archive_index.forget_cached()
    recall_index.forget_cached()
    first_cli, proc = _bench.run_cli("retrieve_v2", "--query", "和妈妈吃火锅", "--maintenance", root=root)
    if proc.returncode != 0:
        raise SystemExit(proc.stdout.decode() + proc.stderr.decode())
    again_cli, _proc = _bench.run_cli("retrieve_v2", "--query", "Lisbon visa", "--maintenance", root=root)
    started = time.perf_counter()
    probe(root, "外婆 羽毛球", maintenance=True)
    first_in = time.perf_counter() - started
    export(path, FOLLOW_UP, first=size)
    _bench.quiet_disk()
    started = time.perf_counter()
    more = history.import_history(root, "jsonl", path, user_speaker="me")
    follow = time.perf_counter() - started
    assert more["imported"] == FOLLOW_UP, more
    started = time.perf_counter()
    probe(root, "Tom camping", maintenance=True)
    after_follow = time.perf_counter() - started
    print(f"  {size:>6} messages  import {took:.2f} s ({size / took:.0f} messages/s, CPU {cpu * 1e6 / size:.0f} us each"
          f" + {helper * 1e6 / size:.0f} us in the helper process; files made by a thread: {'yes' if threaded else 'no'})"
          f"   first read: CLI {_bench.ms(first_cli)}"
          f" (next CLI {_bench.ms(again_cli)}), in-process {_bench.ms(first_in)}")
    print(f"                  {FOLLOW_UP} more into it: {follow:.2f} s ({FOLLOW_UP / follow:.0f} messages/s), "
          f"first read after {_bench.ms(after_follow)}   ({_bench.size_line(root)})")
    print("                  " + _bench.machine_speed(FIGURES, size, gauge_before, gauge_after, "before the import", "after it"))
    FIGURES.add("import (messages/s)", size, size / took, "msg/s")
    FIGURES.add("import CPU per message", size, cpu / size * 1e6, "us")
    FIGURES.add("import CPU per message, helper process", size, helper / size * 1e6, "us")
    FIGURES.add("first read after import (CLI)", size, first_cli)
    FIGURES.add("first read after import (in-process)", size, first_in)
    FIGURES.add(f"import {FOLLOW_UP} more (messages/s)", size, FOLLOW_UP / follow, "msg/s")


def main():
    return _bench.run_sizes("import", measure, FIGURES, cli=True)


if __name__ == "__main__":
    sys.exit(main())
