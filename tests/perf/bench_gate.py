#!/usr/bin/env python3
"""session_check and validate by archive size.

    python3 tests/perf/bench_gate.py                       # 1 000 and 10 000
    flock /work/bench.lock python3 tests/perf/bench_gate.py 1000 10000 100000

Each archive holds N closed turns and N records (see _bench.build_bulk). Printed: session_check
in-process and as a CLI process (goal <= 100 ms CLI at 10 000); `session_check --full` and
validate (in-process and over MCP) after one new turn since the last check (goal <= 1 s at
100 000), and validate from scratch (every capture re-hashed).
"""

import inspect
import io
import json
import sys
import time

import _bench
from personal_understanding import capture, gate, ledger, mcp_server, receipts, validate

RUNS = 15
FIGURES = _bench.Figures()
INCREMENTAL = "from_scratch" in inspect.signature(validate.validate).parameters


def new_turn(root, n):
    text = f"我今天终于把搬家的事定下来了（第{n}次）。"
    turn = f"gate-turn-{n}"
    receipts.preflight(root, text, turn_id=turn, tier="full")
    cid = capture.capture_text(root, text, turn)["capture_id"]
    ledger.finalize(root, cid, "no-derivation-needed", "benchmark turn, nothing to derive")
    return turn


def mcp_validate(server):
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "personal_validate", "arguments": {}}}).encode()
    started = time.perf_counter()
    reply = json.loads(server.handle_line(line))
    elapsed = time.perf_counter() - started
    if reply["result"].get("isError") or reply["result"]["structuredContent"]["status"] != "clean":
        raise SystemExit(f"validate: {reply['result']['content'][0]['text'][:400]}")
    return elapsed


def timed(fn, runs):
    out = []
    for n in range(runs):
        out.append(fn(n))
    return _bench.median_p95(out)[0]


def measure(root, size):
    turn = new_turn(root, 0)
    inproc = []
    for _ in range(RUNS * 4):
        started = time.perf_counter()
        out = gate.session_check(root, turn)
        inproc.append(time.perf_counter() - started)
    assert out["may_claim_saved"], out
    cli = []
    for _ in range(RUNS):
        elapsed, proc = _bench.run_cli("session_check", "--turn-id", turn, root=root)
        if proc.returncode != 0:
            raise SystemExit(proc.stdout.decode())
        cli.append(elapsed)
    validate.validate(root)  # the first check after the bulk build: from nothing

    def full_after_new_turn(n):
        t = new_turn(root, 100 + n)
        started = time.perf_counter()
        result = gate.session_check(root, t, full=True)
        elapsed = time.perf_counter() - started
        assert result["may_claim_saved"], result["gates"]["structure"]
        return elapsed

    def validate_after_new_turn(n):
        new_turn(root, 200 + n)
        started = time.perf_counter()
        assert validate.validate(root)["status"] == "clean"
        return time.perf_counter() - started

    server = mcp_server.Server(root, log=io.StringIO(), tools="all")

    def mcp_after_new_turn(n):
        new_turn(root, 300 + n)
        return mcp_validate(server)

    def from_scratch(_n):
        started = time.perf_counter()
        assert (validate.validate(root, from_scratch=True) if INCREMENTAL else validate.validate(root))["status"] == "clean"
        return time.perf_counter() - started

    full = timed(full_after_new_turn, 3)
    valid = timed(validate_after_new_turn, 3)
    over_mcp = timed(mcp_after_new_turn, 3)
    scratch = timed(from_scratch, 3)
    (m, p), (cm, cp) = _bench.median_p95(inproc), _bench.median_p95(cli)
    print(f"  {size:>6} turns  session_check in-process median {_bench.ms(m)}  p95 {_bench.ms(p)}   "
          f"CLI median {_bench.ms(cm)}  p95 {_bench.ms(cp)}   ({_bench.size_line(root)})")
    print(f"          after one new turn: --full {_bench.ms(full)}   validate {_bench.ms(valid)}   "
          f"validate over MCP {_bench.ms(over_mcp)};   validate from scratch {_bench.ms(scratch)}")
    for label, value in (("session_check in-process", m), ("session_check CLI", cm), ("session_check --full", full),
                         ("validate", valid), ("validate over MCP", over_mcp), ("validate from scratch", scratch)):
        FIGURES.add(label, size, value)


def per_size(size, tmp):
    root = f"{tmp}/a"
    _bench.build_bulk(root, size)
    measure(root, size)


def main():
    return _bench.run_sizes("session_check / validate", per_size, FIGURES,
                            f"; median of {RUNS} runs (3 for whole-archive checks)", cli=True)


if __name__ == "__main__":
    sys.exit(main())
