#!/usr/bin/env python3
"""MCP server round trips through a real server process (goals: read tools <= 50 ms median at 10 000 records;
>= 200 sequential read calls per second on a small archive).

    python3 tests/perf/bench_mcp.py [sizes...]        (default: 100 and 10000 records)

Read tools measured: personal_retrieve {"query", "maintenance": true} when the registry has it, and
personal_current_state, personal_session_check, personal_validate.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import _bench
from bench_add_record import build as build_records
from personal_understanding import commands, ledger

RUNS = 60
QUERIES = ["第12件事", "event 7 朋友", "和朋友一起做的事", "person-p3", "第999件事 event"]


class Server:
    def __init__(self, root):
        started = time.perf_counter()
        env = dict(os.environ, PU_HOME=str(root))
        self.proc = subprocess.Popen([sys.executable, str(_bench.SCRIPTS / "mcp_server.py")], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=tempfile.gettempdir())
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
        self.startup = time.perf_counter() - started

    def request(self, method, params=None):
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        self.proc.stdin.write(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        if "error" in reply:
            raise SystemExit(f"{method}: {reply['error']}")
        return reply["result"]

    def call(self, tool, arguments):
        started = time.perf_counter()
        result = self.request("tools/call", {"name": tool, "arguments": arguments})
        elapsed = time.perf_counter() - started
        if result.get("isError"):
            raise SystemExit(f"{tool}: {result['content'][0]['text']}")
        return elapsed, result

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def read_calls():
    """(label, tool, arguments-maker) for the read tools this registry has."""
    tools = {c.tool for c in commands.COMMANDS if c.mcp}
    out = []
    if "personal_retrieve" in tools:
        out.append(("retrieve", "personal_retrieve", lambda i: {"query": QUERIES[i % len(QUERIES)], "maintenance": True}))
    out += [("current_state", "personal_current_state", lambda i: {}),
            ("session_check", "personal_session_check", lambda i: {"turn_id": "seed"})]
    return out


def main():
    sizes = _bench.sizes_from_argv([100, 10000])
    print(f"MCP server benchmark ({_bench.disk_note()}); one server process per size, median of {RUNS} calls")
    print(f"  bare interpreter start: {_bench.ms(_bench.interpreter_start())}")
    for size in sizes:
        tmp = tempfile.mkdtemp(prefix="pu-bench-")
        try:
            root = f"{tmp}/a"
            started = time.perf_counter()
            cid = build_records(root, size)
            ledger.finalize(root, cid, "derived")
            built = time.perf_counter() - started
            server = Server(root)
            print(f"  {size:>6} records (built in {built:.1f} s, {_bench.size_line(root)}); "
                  f"server start to initialize reply {_bench.ms(server.startup)}")
            for label, tool, make in read_calls():
                server.call(tool, make(0))  # first call warms the index and caches
                times = [server.call(tool, make(i))[0] for i in range(RUNS)]
                med, p95 = _bench.median_p95(times)
                count, t0 = 0, time.perf_counter()
                while time.perf_counter() - t0 < 1.0:
                    server.call(tool, make(count))
                    count += 1
                rate = count / (time.perf_counter() - t0)
                print(f"    {label:<14} median {_bench.ms(med)}  p95 {_bench.ms(p95)}   {rate:7.0f} sequential calls/s")
            times = [server.call("personal_validate", {})[0] for _ in range(5)]
            print(f"    {'validate':<14} median {_bench.ms(_bench.median_p95(times)[0])}  (whole archive, 5 calls)")
            times = []
            for _ in range(RUNS):
                t0 = time.perf_counter()
                server.request("ping")
                times.append(time.perf_counter() - t0)
            print(f"    {'ping':<14} median {_bench.ms(_bench.median_p95(times)[0])}  (protocol floor)")
            server.close()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
