#!/usr/bin/env python3
"""A server's start as the agent meets it: the first call after launch, and a turn during a rebuild.

    python3 tests/perf/bench_mcp_start.py                  (default: 10 000)
    flock /work/bench.lock python3 tests/perf/bench_mcp_start.py 10000 100000

At each archive size (N closed turns and N records, see _bench.build_bulk), over stdio, a
server launched the way a client launches one:
- on a current index: the first personal_turn (a question) 2 s after initialize, and the second;
- on an index that must be rebuilt (as after an update that re-indexes words): a personal
  message sent 1.5 s after initialize; how long until its capture is in the ledger, and until
  the turn is answered (with read_error INDEX_BUILDING while the build goes on), then how long
  the whole build took (the server's own log line).
Medians of RUNS launches each. Figures are printed, not asserted.
"""

import json
import os
import sqlite3
import statistics
import subprocess
import sys
import threading
import time

import _bench
from personal_understanding import paths

RUNS = 3
FIGURES = _bench.Figures()
QUESTION = "你还记得我和妈妈吃火锅是什么时候吗？"
MESSAGE = "我今天又梦见外婆了，醒来有点难过 ({n})"


class Server:
    def __init__(self, root):
        env = dict(_bench.CLI_ENV, PU_HOME=str(root))
        self.proc = subprocess.Popen([sys.executable, str(_bench.SCRIPTS / "mcp_server.py")], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.log = []
        threading.Thread(target=lambda: self.log.extend(self.proc.stderr), daemon=True).start()
        self.n = 0
        self.ask("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "bench", "version": "0"}})

    def send(self, method, params):
        self.n += 1
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params},
                                         ensure_ascii=False).encode() + b"\n")
        self.proc.stdin.flush()

    def answer(self):
        reply = json.loads(self.proc.stdout.readline())
        if "result" not in reply:
            raise SystemExit(f"the server refused a call: {reply}")
        return reply["result"]

    def ask(self, method, params):
        self.send(method, params)
        return self.answer()

    def turn(self, text, turn_id):
        return self.ask("tools/call", {"name": "personal_turn", "arguments": {"text": text, "turn_id": turn_id}})

    def close(self):
        """Wait for the start-up work, then end the session; returns the build time the server logged (s)."""
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and not any(b"indexes ready" in l or b"warm-up stopped" in l for l in self.log):
            time.sleep(0.05)
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
        line = next((l.decode() for l in self.log if b"indexes ready in" in l), "")
        return float(line.rsplit("in ", 1)[1].split()[0]) if line else float("nan")


def needs_rebuild(root):
    with sqlite3.connect(str(paths.index_db_path(root))) as con:
        con.execute("DELETE FROM meta WHERE key LIKE 'recall_%'")


def measure(size, tmp):
    root = os.path.join(tmp, "a")
    _bench.build_bulk(root, size)
    from personal_understanding.retrieval.index import open_recall
    open_recall(root)
    print(f"  {size} turns + {size} records ({_bench.size_line(root)})")
    first, second = [], []
    for run in range(RUNS):
        server = Server(root)
        time.sleep(2)
        t0 = time.perf_counter()
        server.turn(QUESTION, f"start-q-{size}-{run}")
        first.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        server.turn(QUESTION, f"start-q2-{size}-{run}")
        second.append(time.perf_counter() - t0)
        server.close()
    saved, answered, builds, errors = [], [], [], set()
    ledger = paths.ledger_events_path(root)
    for run in range(RUNS):
        needs_rebuild(root)
        server = Server(root)
        time.sleep(1.5)
        before = os.path.getsize(ledger)
        t0 = time.perf_counter()
        server.send("tools/call", {"name": "personal_turn", "arguments": {"text": MESSAGE.format(n=run),
                                                                          "turn_id": f"start-m-{size}-{run}"}})
        while os.path.getsize(ledger) == before and time.perf_counter() - t0 < 600:
            time.sleep(0.005)
        saved.append(time.perf_counter() - t0)
        result = server.answer()
        answered.append(time.perf_counter() - t0)
        content = result.get("structuredContent") or {}
        if result.get("isError") or not content.get("captured"):
            raise SystemExit(f"the message was not saved: {result}")
        errors.add((content.get("read_error") or {}).get("code"))
        builds.append(server.close())
    rows = [("first call (current index)", first), ("second call", second),
            ("saved, during a rebuild", saved), ("answered, during a rebuild", answered)]
    for label, samples in rows:
        med = statistics.median(samples)
        print(f"    {label:<30} median {_bench.ms(med)}  (runs: {', '.join(f'{s * 1000:.0f}' for s in samples)} ms)")
        FIGURES.add(label, size, med)
    build = statistics.median(builds)
    print(f"    {'rebuild at start':<30} median {build:8.1f} s   read_error while it ran: "
          f"{', '.join(sorted(str(e) for e in errors))}")
    FIGURES.add("rebuild at start", size, build, "s")


def main():
    print(f"MCP server start benchmark ({_bench.disk_note()}); {RUNS} launches per figure")
    print(_bench.folder_note())
    for size in _bench.sizes_from_argv([10000]):
        with _bench.scratch() as tmp:
            measure(size, tmp)
    FIGURES.print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
