#!/usr/bin/env python3
"""Recall at scale: a deterministic synthetic archive (mixed Chinese and English) over ten years.

    python3 tests/perf/bench_recall.py                # 1 000 and 10 000
    flock /work/bench.lock python3 tests/perf/bench_recall.py 1000 10000 100000

For each size N the archive holds N closed turns (receipt, capture) and N records citing
them (see _bench.build_bulk). Printed: index build time from scratch, warm probe p50/p95 (in
one process, as the MCP server runs), CLI probe p50/p95 and its import time, incremental
update for one new capture and one new record, survey bytes, bytes of trace per probe, the
index on disk and the peak memory of a process that opens the index and probes, and how long a
fixed loop took before and after the timings (the machine's speed just then). Then each
figure per size with the ratio largest vs smallest size. Goals at 100 000: warm probe
p50 <= 40 ms and p95 <= 80 ms, index <= 120 MB, probe peak memory <= 150 MB, trace <= 2 KB
per probe; CLI retrieve_v2 <= 60 ms at 10 000. Figures are printed, not asserted.
"""

import os
import subprocess
import sys
import time

import _bench
from personal_understanding import archive_index, capture, paths, receipts, records
from personal_understanding.retrieval import index as recall_index
from personal_understanding.retrieval.probe import probe
from personal_understanding.retrieval.survey import catalog

QUERIES = ["和妈妈吃火锅", "面试结果", "Lisbon visa", "marathon training", "外婆", "考研压力", "猫最近怎么样",
           "coach Mike piano", "上次去成都", "sourdough birthday", "失眠 加班", "Tom camping"]
FIGURES = _bench.Figures()
CLI_ROUNDS = 3

# A process that opens the index and probes every query, as a server would: its own peak memory.
# On Linux that is VmHWM, which starts afresh at exec; ru_maxrss keeps the high-water mark of the
# forked parent (this benchmark, holding a whole bulk archive's ids) and would report that instead.
PROBE_PROCESS = """
import resource, sys
sys.path.insert(0, sys.argv[1])
from personal_understanding.retrieval.probe import probe
for q in sys.argv[3:]:
    probe(sys.argv[2], q, maintenance=True)
try:
    with open("/proc/self/status") as fh:
        print(next(int(l.split()[1]) for l in fh if l.startswith("VmHWM:")) / 1024)
except OSError:
    usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(usage / 1024 if sys.platform != "darwin" else usage / 1e6)
"""


def trace_bytes(root):
    tdir = paths.traces_dir(root)
    return sum(os.path.getsize(tdir / n) for n in os.listdir(tdir)) if tdir.is_dir() else 0


def index_bytes(root):
    base = str(paths.index_db_path(root))
    return sum(os.path.getsize(base + s) for s in ("", "-wal") if os.path.exists(base + s))


def measure(size, tmp):
    root = os.path.join(tmp, "a")
    started = time.perf_counter()
    _bench.build_bulk(root, size)
    written = time.perf_counter() - started
    archive_index.forget_cached()
    recall_index.forget_cached()
    started = time.perf_counter()
    archive_index.open_index(root)
    core = time.perf_counter() - started
    started = time.perf_counter()
    recall_index.open_recall(root)
    recall_build = time.perf_counter() - started
    before = trace_bytes(root)
    gauge_before = _bench.cpu_gauge()
    warm = []
    for _ in range(3):
        for q in QUERIES:
            t0 = time.perf_counter()
            probe(root, q, maintenance=True)
            warm.append(time.perf_counter() - t0)
    per_trace = (trace_bytes(root) - before) / len(warm)
    survey_bytes = catalog(root, maintenance=True)["bytes"]
    cli = []
    for _ in range(CLI_ROUNDS):  # a process's time varies by some ms from run to run: a median of few is noise
        for q in QUERIES[:8]:
            elapsed, proc = _bench.run_cli("retrieve_v2", "--query", q, "--maintenance", root=root)
            if proc.returncode != 0:
                raise SystemExit(proc.stdout.decode() + proc.stderr.decode())
            cli.append(elapsed)
    gauge_after = _bench.cpu_gauge()
    imports = [_bench.import_ms("retrieve_v2", "--query", q, "--maintenance", root=root) for q in QUERIES[:3]]
    imports_total, imports_ours = sorted(imports)[1]
    peak = float(subprocess.run([sys.executable, "-c", PROBE_PROCESS, str(_bench.SCRIPTS), root, *QUERIES],
                                capture_output=True, check=True, env=_bench.CLI_ENV).stdout)
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
    disk = index_bytes(root)
    print(f"  {size:>7} turns + {size} records   ({_bench.size_line(root)}, index {disk / 1e6:.1f} MB; bulk write {written:.1f} s)")
    print(f"           index build: core {core:.2f} s + recall {recall_build:.2f} s")
    print(f"           warm probe p50 {_bench.ms(wp50)}  p95 {_bench.ms(wp95)}   CLI probe p50 {_bench.ms(cp50)}  p95 {_bench.ms(cp95)}")
    print(f"           CLI imports {imports_total:.1f} ms (of which personal_understanding {imports_ours:.1f} ms)")
    print("           " + _bench.machine_speed(FIGURES, size, gauge_before, gauge_after,
                                                 "before the warm probes", "after the CLI runs"))
    print(f"           incremental update: new capture {_bench.ms(inc_capture)}, new record {_bench.ms(inc_record)}")
    print(f"           survey {survey_bytes} bytes   trace {per_trace:.0f} bytes per probe   probe process peak memory {peak:.0f} MB")
    for label, value in (("warm probe p50", wp50), ("warm probe p95", wp95), ("CLI probe p50", cp50),
                         ("CLI imports", imports_total / 1000), ("index build (core + recall)", core + recall_build),
                         ("incremental: new capture", inc_capture), ("incremental: new record", inc_record)):
        FIGURES.add(label, size, value)
    FIGURES.add("index on disk", size, disk / 1e6, "MB")
    FIGURES.add("probe process peak memory", size, peak, "MB")
    FIGURES.add("trace per probe", size, per_trace / 1e3, "KB")


def main():
    return _bench.run_sizes("recall", measure, FIGURES, f"; {len(QUERIES)} queries x 3 warm, 8 x {CLI_ROUNDS} CLI runs", cli=True)


if __name__ == "__main__":
    sys.exit(main())
