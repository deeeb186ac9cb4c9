#!/usr/bin/env python3
"""Capture latency by archive size, in-process and as a CLI process.

    python3 tests/perf/bench_capture.py                    # 1 000 and 10 000
    flock /work/bench.lock python3 tests/perf/bench_capture.py 1000 10000 100000

Each archive holds N closed turns and N records (see _bench.build_bulk). Goal: in-process
median <= 5 ms, flat with size (100 000 vs 1 000 within 1.5x). Figures are printed, not asserted.
"""

import sys
import time

import _bench
from personal_understanding import archive_index, capture, receipts

IN_PROCESS_RUNS = 200
CLI_RUNS = 15
FIGURES = _bench.Figures()


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


def per_size(size, tmp):
    root = f"{tmp}/a"
    _bench.build_bulk(root, size)
    archive_index.open_index(root)  # the index is built once, not inside the first capture
    (med, p95), (cmed, cp95) = measure(root, size)
    FIGURES.add("capture in-process median", size, med)
    FIGURES.add("capture CLI median", size, cmed)
    print(f"  {size:>6} turns  in-process median {_bench.ms(med)}  p95 {_bench.ms(p95)}   "
          f"CLI median {_bench.ms(cmed)}  p95 {_bench.ms(cp95)}   ({_bench.size_line(root)})")


def main():
    return _bench.run_sizes("capture", per_size, FIGURES, f"; {IN_PROCESS_RUNS} in-process and {CLI_RUNS} CLI captures per size",
                            cli=True)


if __name__ == "__main__":
    sys.exit(main())
