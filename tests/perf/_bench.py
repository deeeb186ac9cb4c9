"""Shared benchmark helpers: synthetic archives, timing, printing. Not a test module."""

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "scripts"
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))

from personal_understanding import archive, capture, ledger, receipts  # noqa: E402
from personal_understanding.tiers import archive_bytes  # noqa: E402

SAMPLES = [
    "我今天和{n}号同事吃了顿饭，聊到小时候在外婆家过暑假的事。",
    "I went hiking with friend {n} and my knee started hurting again on the way down.",
    "最近第{n}次失眠了，脑子里一直在想搬家的事情。",
    "My sister called about plan {n} for mom's birthday; I still haven't decided what to buy.",
]


def text_for(i):
    return SAMPLES[i % len(SAMPLES)].format(n=i)


def build(root, count, closed=True, progress=True):
    """An archive with `count` captured (and, by default, closed) turns."""
    archive.init_archive(root)
    started = time.perf_counter()
    for i in range(count):
        text = text_for(i)
        turn = f"bulk-{i}"
        receipts.preflight(root, text, turn_id=turn, tier="full")
        cid = capture.capture_text(root, text, turn)["capture_id"]
        if closed:
            ledger.finalize(root, cid, "no-derivation-needed", "synthetic benchmark turn")
        if progress and i and i % 2000 == 0:
            print(f"    built {i} turns ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    return root


def median_p95(samples):
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return statistics.median(ordered), p95


def ms(seconds):
    return f"{seconds * 1000:8.2f} ms"


def run_cli(script, *args, root):
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, str(SCRIPTS / f"{script}.py"), *args, "--root", str(root)],
                          capture_output=True)
    elapsed = time.perf_counter() - started
    return elapsed, proc


def interpreter_start(runs=7):
    """Median wall time of `python3 -c pass` here: the floor under every CLI figure."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def size_line(root):
    return f"{archive_bytes(root) / 1e6:.1f} MB on disk"


def sizes_from_argv(default):
    args = [a for a in sys.argv[1:] if a.isdigit()]
    return [int(a) for a in args] or default


def disk_note():
    return f"python {sys.version.split()[0]} on {os.cpu_count()} cores"
