#!/usr/bin/env python3
"""Concurrency proof: 4 MCP server processes and 4 CLI writers on one archive at once.

    python3 tests/perf/stress_concurrency.py [TURNS_PER_WRITER]     # default 40

Each MCP client drives its own server through whole turns (preflight, capture,
add_record, finalize); each CLI writer runs the same turn as four script calls.
Afterwards every acknowledged capture and record must be present, the ledger
must agree with the captures and records, the shared index must pass SQLite's
integrity check, and validation must be clean or warnings. Prints the counts
and the time taken.
"""

import json
import os
import subprocess
import sys
import tempfile
import threading
import time

import _bench
from personal_understanding import archive, archive_index, ledger, validate

SERVERS = 4
CLI_WRITERS = 4


class Server:
    def __init__(self, root):
        env = dict(os.environ, PU_HOME=root)
        self.proc = subprocess.Popen([sys.executable, str(_bench.SCRIPTS / "mcp_server.py"), "--tools", "all"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.n = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "stress", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message):
        self.proc.stdin.write(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def request(self, method, params):
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        reply = json.loads(self.proc.stdout.readline())
        assert reply["id"] == self.n, reply
        return reply

    def call(self, tool, args):
        result = self.request("tools/call", {"name": tool, "arguments": args})["result"]
        if result.get("isError"):
            raise RuntimeError(result["content"][0]["text"])
        return result["structuredContent"]

    def close(self):
        self.proc.stdin.close()
        return self.proc.wait(timeout=30)


def mcp_worker(root, worker, turns, acks, errors):
    server = Server(root)
    try:
        for i in range(turns):
            text = f"MCP {worker} 第{i}轮：今天和朋友去爬了山，腿有点酸"
            turn = f"m{worker}-{i}"
            try:
                server.call("personal_preflight_turn", {"text": text, "turn_id": turn, "tier": "full"})
                cid = server.call("personal_capture_user_turn", {"text": text, "turn_id": turn})["capture_id"]
                acks["capture"].append(cid)
                rid = server.call("personal_add_record", {"kind": "event", "title": f"爬山 {worker}-{i}", "capture_ids": [cid]})["id"]
                acks["record"].append(rid)
                server.call("personal_finalize_capture", {"capture_id": cid, "disposition": "derived"})
            except Exception as exc:  # counted, not hidden
                errors.append(f"mcp {worker}/{i}: {exc}")
    finally:
        server.close()


def cli(root, script, *args):
    proc = subprocess.run([sys.executable, str(_bench.SCRIPTS / f"{script}.py"), *args, "--root", root], capture_output=True)
    out = json.loads(proc.stdout or b"{}")
    if proc.returncode != 0:
        raise RuntimeError(json.dumps(out.get("error", out), ensure_ascii=False))
    return out


def cli_worker(root, worker, turns, acks, errors):
    for i in range(turns):
        text = f"CLI {worker} 第{i}轮：晚上做了番茄炒蛋"
        turn = f"c{worker}-{i}"
        try:
            cli(root, "preflight_context", text, "--turn-id", turn, "--tier", "full")
            cid = cli(root, "capture_user_update", "--text", text, "--turn-id", turn)["capture_id"]
            acks["capture"].append(cid)
            rid = cli(root, "add_record", "--kind", "event", "--title", f"做饭 {worker}-{i}", "--capture-ids", cid)["id"]
            acks["record"].append(rid)
            cli(root, "finalize_capture", "--capture-id", cid, "--disposition", "derived")
        except Exception as exc:
            errors.append(f"cli {worker}/{i}: {exc}")


def main():
    turns = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 40
    root = os.path.join(tempfile.mkdtemp(prefix="pu-conc-"), "archive")
    archive.init_archive(root)
    acks = {"capture": [], "record": []}
    errors = []
    threads = [threading.Thread(target=mcp_worker, args=(root, w, turns, acks, errors)) for w in range(SERVERS)]
    threads += [threading.Thread(target=cli_worker, args=(root, w, turns, acks, errors)) for w in range(CLI_WRITERS)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    archive_index.forget_cached()
    index = archive_index.open_index(root)
    missing = [c for c in acks["capture"] if index.capture(c) is None] + [r for r in acks["record"] if index.record(r) is None]
    sound = index.db.execute("PRAGMA integrity_check").fetchone()[0]  # the shared SQLite file itself
    audit = ledger.audit(root)
    report = validate.validate(root)
    operations = 4 * turns * (SERVERS + CLI_WRITERS)
    print(f"concurrency stress: {SERVERS} MCP servers + {CLI_WRITERS} CLI writers, {operations} operations in {elapsed:.0f} s "
          f"({_bench.disk_note()})")
    print(f"  acknowledged: {len(acks['capture'])} captures, {len(acks['record'])} records; missing afterwards: {len(missing)}")
    print(f"  refused or failed operations: {len(errors)}" + (f" (first: {errors[0]})" if errors else ""))
    print(f"  ledger consistent: {audit['consistent']} ({audit['by_status']})")
    print(f"  validate: {report['status']} ({report['errors']} errors, {report['warnings']} warnings)")
    print(f"  index integrity: {sound}")
    ok = not missing and not errors and audit["consistent"] and report["status"] in ("clean", "warnings") and sound == "ok"
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
