#!/usr/bin/env python3
"""The agent's path over MCP: what tools/list costs, and server time per call and per turn.

    python3 tests/perf/bench_mcp.py                        (default: 1 000 and 10 000)
    flock /work/bench.lock python3 tests/perf/bench_mcp.py 1000 10000 100000

Prints tools/list bytes per tool profile, then, at each archive size (N closed turns and N
records, see _bench.build_bulk), the median and p95 server time (the request handled
in-process, JSON in and out, no pipe) of personal_turn (a personal message), personal_remember
(5 items), personal_recall, a skip turn, personal_current_state, and a whole personal turn
(turn + remember). Goals: <= 30 ms server time per personal turn, recall p50 <= 30 ms and
current_state <= 10 ms at 100 000. A subprocess ping gives the stdio floor a client adds on top.
"""

import io
import json
import subprocess
import sys
import time

import _bench
from personal_understanding import mcp_server

RUNS = 40
FIGURES = _bench.Figures()
MESSAGES = ["我和第{n}号朋友去爬山，膝盖又疼了，有点担心。", "My sister called about plan {n} for mom's birthday; I am nervous.",
            "最近第{n}次失眠，一直在想搬家的事情。", "I finally finished book {n} my dad gave me, and I cried at the end."]
QUERIES = ["爬山 膝盖", "mom's birthday", "搬家", "和朋友一起做的事", "第12件事"]


def tools_list_bytes(root):
    out = {}
    for profile in ("default", "all"):
        server = mcp_server.Server(root, log=io.StringIO(), tools=profile)
        reply = server.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        out[profile] = (len(reply["result"]["tools"]), len(mcp_server.encode(reply)))
    return out


def timed(server, tool, arguments):
    message = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}},
                         ensure_ascii=False).encode("utf-8")
    started = time.perf_counter()
    reply = json.loads(server.handle_line(message))
    elapsed = time.perf_counter() - started
    result = reply["result"]
    if result.get("isError"):
        raise SystemExit(f"{tool}: {result['content'][0]['text']}")
    return elapsed, result["structuredContent"]


def batch(n):
    person = f"person-bench-{n}"
    return {"records": [{"kind": "entity", "entity_type": "person", "id": person, "title": f"朋友{n}号"},
                        {"kind": "event", "title": f"和朋友{n}号去爬山", "entity_refs": [person]},
                        {"kind": "state", "title": f"膝盖第{n}次疼", "subject_key": f"knee-{n}"},
                        {"kind": "preference", "title": f"喜欢第{n}条山路"}],
            "followups": [{"question": "膝盖好点了吗？", "due_rule": "+3d"}]}


def line(label, samples, size):
    med, p95 = _bench.median_p95(samples)
    print(f"    {label:<30} median {_bench.ms(med)}  p95 {_bench.ms(p95)}")
    FIGURES.add(label, size, med)
    return med


def stdio_floor(root):
    proc = subprocess.Popen([sys.executable, str(_bench.SCRIPTS / "mcp_server.py"), "--root", str(root)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for raw in proc.stderr:  # the server's start-up work runs in a thread: time the floor after it
        if b"indexes ready" in raw or b"warm-up stopped" in raw:
            break
    times = []
    for i in range(RUNS):
        started = time.perf_counter()
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": "ping"}).encode() + b"\n")
        proc.stdin.flush()
        proc.stdout.readline()
        times.append(time.perf_counter() - started)
    proc.stdin.close()
    proc.stderr.read()
    proc.wait(timeout=60)
    return _bench.median_p95(times)[0]


def per_size(size, tmp):
    root = f"{tmp}/a"
    started = time.perf_counter()
    _bench.build_bulk(root, size)
    built = time.perf_counter() - started
    if size == _bench.sizes()[0]:  # once, on the first archive
        for profile, (count, size_bytes) in tools_list_bytes(root).items():
            print(f"  tools/list, {profile} profile: {count} tools, {size_bytes} bytes")
    print(f"  {size} turns + {size} records (built in {built:.0f} s, {_bench.size_line(root)})")
    server = mcp_server.Server(root, log=io.StringIO())
    timed(server, "personal_recall", {"query": "warm up", "maintenance": True})  # opens the indexes
    turns, remembers, whole, recalls, skips, states = [], [], [], [], [], []
    for n in range(RUNS):
        t_turn, out = timed(server, "personal_turn", {"text": MESSAGES[n % len(MESSAGES)].format(n=n),
                                                      "turn_id": f"bench-{n}"})
        t_rem, done = timed(server, "personal_remember", dict(batch(n), turn_id=out["turn_id"]))
        if not done["may_claim_saved"]:
            raise SystemExit(f"turn {n} did not pass the gate: {done['next']}")
        turns.append(t_turn)
        remembers.append(t_rem)
        whole.append(t_turn + t_rem)
        recalls.append(timed(server, "personal_recall", {"query": QUERIES[n % len(QUERIES)], "turn_id": out["turn_id"]})[0])
        skips.append(timed(server, "personal_turn", {"text": f"how do I sort a list in python ({n})",
                                                     "turn_id": f"skip-{n}"})[0])
        states.append(timed(server, "personal_current_state", {})[0])
    line("personal_turn (personal)", turns, size)
    line("personal_remember (5 items)", remembers, size)
    line("personal_recall (probe)", recalls, size)
    line("personal_turn (skip)", skips, size)
    line("personal_current_state", states, size)
    med = line("whole personal turn (2 calls)", whole, size)
    print(f"    goal <= 30 ms per personal turn: {'met' if med <= 0.030 else 'NOT met'} (median)")
    print(f"    stdio round trip floor (ping)  median {_bench.ms(stdio_floor(root))}")


def main():
    return _bench.run_sizes("MCP agent-path", per_size, FIGURES, f"; median and p95 of {RUNS} calls, server time in-process")


if __name__ == "__main__":
    sys.exit(main())
