#!/usr/bin/env python3
"""Capture latency at 0, 1 000 and 10 000 captures, in-process and as a CLI process.

    python3 tests/perf/bench_capture.py            # 0 1000 10000
    python3 tests/perf/bench_capture.py 0 2000     # chosen sizes

Goal: in-process median <= 5 ms and the ratio 10 000 vs 0 <= 1.3 (capture cost
does not grow with the archive). Figures are printed, not asserted.
"""

import shutil
import sys
import tempfile
import time

import _bench
from personal_understanding import capture, receipts

IN_PROCESS_RUNS = 200
CLI_RUNS = 15


def measure(root, label):
    times = []
    for i in range(IN_PROCESS_RUNS):
        text = _bench.text_for(i) + f" (measure {label} {i})"
        turn = f"m-{label}-{i}"
        receipts.preflight(root, text, turn_id=turn, tier="full")
        started = time.perf_counter()
        capture.capture_text(root, text, turn)
        times.append(time.perf_counter() - started)
    cli = []
    for i in range(CLI_RUNS):
        text = _bench.text_for(i) + f" (cli {label} {i})"
        turn = f"c-{label}-{i}"
        receipts.preflight(root, text, turn_id=turn, tier="full")
        elapsed, proc = _bench.run_cli("capture_user_update", "--text", text, "--turn-id", turn, root=root)
        if proc.returncode != 0:
            raise SystemExit(proc.stdout.decode() + proc.stderr.decode())
        cli.append(elapsed)
    return _bench.median_p95(times), _bench.median_p95(cli)


def main():
    sizes = _bench.sizes_from_argv([0, 1000, 10000])
    print(f"capture benchmark ({_bench.disk_note()}); {IN_PROCESS_RUNS} in-process and {CLI_RUNS} CLI captures per size")
    print(f"  bare interpreter start: {_bench.ms(_bench.interpreter_start())}")
    medians = {}
    for size in sizes:
        tmp = tempfile.mkdtemp(prefix="pu-bench-")
        try:
            root = _bench.build(f"{tmp}/a", size)
            (med, p95), (cmed, cp95) = measure(root, size)
            medians[size] = med
            print(f"  {size:>6} captures  in-process median {_bench.ms(med)}  p95 {_bench.ms(p95)}   "
                  f"CLI median {_bench.ms(cmed)}  p95 {_bench.ms(cp95)}   ({_bench.size_line(root)})")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    if len(medians) > 1:
        low, high = min(medians), max(medians)
        print(f"  ratio {high} vs {low}: {medians[high] / medians[low]:.2f} (goal <= 1.3)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
