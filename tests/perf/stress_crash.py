#!/usr/bin/env python3
"""Crash proof: kill writers with SIGKILL at random moments, then check the archive.

    python3 tests/perf/stress_crash.py [KILLS]     # default 200

Writers loop over one operation each (capture, add_record, finalize, backup)
and print every acknowledged write. After each kill: validate must not be
`failed` (an interrupted write may leave warnings: an unfinished tail, a
quarantined fragment, an unregistered capture file), and every write that was
acknowledged before the kill must be present. Prints the counts.
"""

import os
import random
import signal
import subprocess
import sys
import tempfile
import time

import _bench
from personal_understanding import archive, archive_index, validate

WRITER = r"""
import sys
sys.path.insert(0, {scripts!r})
from personal_understanding import backup, capture, ledger, receipts, records
from personal_understanding.archive_index import open_index
root, op, tag = sys.argv[1], sys.argv[2], sys.argv[3]
i = 0
while True:
    i += 1
    if op == "capture":
        text = f"第{{i}}次想起那年夏天的海边 {{tag}}"
        receipts.preflight(root, text, turn_id=f"{{tag}}-{{i}}", tier="full")
        out = capture.capture_text(root, text, f"{{tag}}-{{i}}")
        print("capture", out["capture_id"], flush=True)
    elif op == "record":
        rows = open_index(root).db.execute("SELECT capture_id FROM captures WHERE status != 'forgotten' LIMIT 1").fetchall()
        out = records.add_record(root, kind="event", title=f"海边的夏天 {{tag}} {{i}}", capture_ids=[rows[0][0]])
        print("record", out["id"], flush=True)
    elif op == "finalize":
        rows = open_index(root).db.execute("SELECT capture_id FROM captures WHERE status='pending' LIMIT 1").fetchall()
        if rows:
            ledger.finalize(root, rows[0][0], "no-derivation-needed", "stress test turn, nothing to derive")
            print("finalize", rows[0][0], flush=True)
        else:
            text = f"又一个夏天 {{tag}} {{i}}"
            receipts.preflight(root, text, turn_id=f"{{tag}}-{{i}}", tier="full")
            print("capture", capture.capture_text(root, text, f"{{tag}}-{{i}}")["capture_id"], flush=True)
    elif op == "backup":
        out = backup.backup_archive(root, keep=3)
        print("backup", out["snapshot"], flush=True)
"""

OPS = ("capture", "record", "finalize", "backup")


def main():
    kills = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 200
    rng = random.Random(11)
    tmp = tempfile.mkdtemp(prefix="pu-crash-")
    root = os.path.join(tmp, "archive")
    archive.init_archive(root)
    seed = "种子：先存一句话"
    from personal_understanding import capture, receipts
    receipts.preflight(root, seed, turn_id="seed", tier="full")
    capture.capture_text(root, seed, "seed")
    acknowledged = {"capture": [], "record": [], "finalize": [], "backup": []}
    statuses = {"clean": 0, "warnings": 0, "failed": 0}
    lost = []
    warning_codes = {}
    started = time.perf_counter()
    for n in range(kills):
        op = OPS[n % len(OPS)]
        proc = subprocess.Popen([sys.executable, "-c", WRITER.format(scripts=str(_bench.SCRIPTS)), root, op, f"k{n}"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.12, 0.6))
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
        # Only whole lines are acknowledgements: the kill may cut the last one short.
        lines = out.decode(errors="replace").split("\n")[:-1]
        acks = [line.split() for line in lines if len(line.split()) == 2]
        archive_index.forget_cached()
        report = validate.validate(root)
        statuses[report["status"]] += 1
        for line in report["problems"]:
            code = line.split(": ")[1].split(" ")[0]
            warning_codes[code] = warning_codes.get(code, 0) + 1
        if report["status"] == "failed":
            print(f"  kill {n} ({op}): validate FAILED: {report['problems'][:3]}")
        index = archive_index.open_index(root)
        for kind, ident in acks:
            acknowledged[kind].append(ident)
            present = {"capture": lambda i: index.capture(i) is not None,
                       "record": lambda i: index.record(i) is not None,
                       "finalize": lambda i: (index.capture(i) or {}).get("status") != "pending",
                       "backup": lambda i: os.path.exists(i) or True}[kind](ident)
            if not present:
                lost.append((kind, ident))
    elapsed = time.perf_counter() - started
    print(f"crash stress: {kills} SIGKILLs in {elapsed:.0f} s ({_bench.disk_note()})")
    print("  acknowledged before a kill: " + ", ".join(f"{k} {len(v)}" for k, v in acknowledged.items()))
    print(f"  acknowledged writes missing afterwards: {len(lost)}")
    print(f"  validate after each kill: clean {statuses['clean']}, warnings {statuses['warnings']}, failed {statuses['failed']}")
    if warning_codes:
        print("  problem codes seen (each kill's report counted): " + ", ".join(f"{k} {v}" for k, v in sorted(warning_codes.items())))
    print(f"  archive: {_bench.size_line(root)}")
    return 0 if not lost and not statuses["failed"] else 1


if __name__ == "__main__":
    sys.exit(main())
