#!/usr/bin/env python3
"""session_check latency at 0, 1 000 and 10 000 captures (goal: <= 100 ms as a CLI process at 10 000).

    python3 tests/perf/bench_gate.py [sizes...]
"""

import shutil
import sys
import tempfile
import time

import _bench
from personal_understanding import capture, gate, ledger, receipts

RUNS = 15


def main():
    sizes = _bench.sizes_from_argv([0, 1000, 10000])
    print(f"session_check benchmark ({_bench.disk_note()}); median of {RUNS} runs")
    print(f"  bare interpreter start: {_bench.ms(_bench.interpreter_start())}")
    for size in sizes:
        tmp = tempfile.mkdtemp(prefix="pu-bench-")
        try:
            root = _bench.build(f"{tmp}/a", size)
            text = "我今天终于把搬家的事定下来了。"
            receipts.preflight(root, text, turn_id="gate-turn", tier="full")
            cid = capture.capture_text(root, text, "gate-turn")["capture_id"]
            ledger.finalize(root, cid, "no-derivation-needed", "benchmark turn, nothing to derive")
            inproc = []
            for _ in range(RUNS * 4):
                started = time.perf_counter()
                out = gate.session_check(root, "gate-turn")
                inproc.append(time.perf_counter() - started)
            assert out["may_claim_saved"], out
            cli = []
            for _ in range(RUNS):
                elapsed, proc = _bench.run_cli("session_check", "--turn-id", "gate-turn", root=root)
                if proc.returncode != 0:
                    raise SystemExit(proc.stdout.decode())
                cli.append(elapsed)
            full = []
            for _ in range(3):
                started = time.perf_counter()
                gate.session_check(root, "gate-turn", full=True)
                full.append(time.perf_counter() - started)
            (m, p), (cm, cp) = _bench.median_p95(inproc), _bench.median_p95(cli)
            print(f"  {size:>6} captures  in-process median {_bench.ms(m)}  p95 {_bench.ms(p)}   "
                  f"CLI median {_bench.ms(cm)}  p95 {_bench.ms(cp)}   --full {_bench.ms(_bench.median_p95(full)[0])}   "
                  f"({_bench.size_line(root)})")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
