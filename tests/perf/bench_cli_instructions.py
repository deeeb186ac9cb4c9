#!/usr/bin/env python3
"""Instructions a CLI read executes, counted by valgrind's callgrind: a figure a shared machine
does not move, to compare two commits where wall-clock times move by half within an hour.

    python3 tests/perf/bench_cli_instructions.py              # 1 000 and 10 000
    python3 tests/perf/bench_cli_instructions.py 10000

Needs valgrind (Debian: apt-get install -y valgrind); without it, says so and exits 0. Runs it
under `setarch -R` where there is one (no address randomisation): the counts then repeat. For an
archive of N turns and N records (bench_recall's), each of bench_recall's eight CLI questions runs
once under callgrind (some fifty times slower than natively). Prints the instructions of a bare
interpreter start, of the imports a read makes, and of each read with their mean. Instructions
leave out what the machine adds (page faults, the disk, other guests): a read of 285 M
instructions took 55 to 110 ms here in one evening.
"""

import os
import platform
import re
import shutil
import statistics
import subprocess
import sys

import _bench
from bench_recall import QUERIES
from personal_understanding import archive_index
from personal_understanding.retrieval import index as recall_index

FIGURES = _bench.Figures()
# The same hash seed every run: set and dict orders, and so the instructions, repeat exactly.
ENV = dict(_bench.CLI_ENV, PYTHONHASHSEED="0")
IMPORTS = ("import sys; sys.path.insert(0, sys.argv[1]); from personal_understanding import cli; "
           "from personal_understanding.retrieval import probe")


# Without address randomisation too (where setarch is): dict and set orders of objects hashed by
# address then repeat, and so do the counts (they moved by up to 4% between identical runs).
FIXED = ["setarch", platform.machine(), "-R"] if shutil.which("setarch") else []


def instructions(*argv):
    """Instructions one process executes (callgrind's count, everything from exec to exit)."""
    proc = subprocess.run([*FIXED, "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
                          capture_output=True, text=True, env=ENV)
    found = re.search(r"Collected : (\d+)", proc.stderr)
    if proc.returncode != 0 or not found:
        raise SystemExit(f"valgrind run failed ({proc.returncode}): {' '.join(argv)}\n{proc.stderr[-2000:]}")
    return int(found.group(1))


def read(root, query):
    return instructions(sys.executable, str(_bench.SCRIPTS / "retrieve_v2.py"), "--query", query, "--maintenance",
                        "--root", root)


def measure(size, tmp):
    root = os.path.join(tmp, "a")
    _bench.build_bulk(root, size, progress=False)
    archive_index.forget_cached()
    recall_index.forget_cached()
    recall_index.open_recall(root)  # built here: the reads below find it current
    _bench.run_cli("retrieve_v2", "--query", QUERIES[0], "--maintenance", root=root)  # bytecode and thesaurus copy kept
    bare = instructions(sys.executable, "-c", "pass")
    imports = instructions(sys.executable, "-c", IMPORTS, str(_bench.SCRIPTS))
    reads = [read(root, q) for q in QUERIES[:8]]
    mean = statistics.mean(reads)
    print(f"  {size:>6} turns + {size} records")
    print(f"           bare interpreter start {bare / 1e6:8.1f} M instructions")
    print(f"           imports of a CLI read  {imports / 1e6:8.1f} M ({(imports - bare) / 1e6:.1f} M over the bare start)")
    print(f"           retrieve_v2, mean      {mean / 1e6:8.1f} M ({' '.join(f'{r / 1e6:.0f}' for r in reads)})")
    FIGURES.add("imports of a CLI read", size, imports / 1e6, "M")
    FIGURES.add("retrieve_v2 (mean of 8 questions)", size, mean / 1e6, "M")


def main():
    if not shutil.which("valgrind"):
        print("bench_cli_instructions: valgrind is not installed (Debian: apt-get install -y valgrind); nothing measured")
        return 0
    return _bench.run_sizes("CLI instructions", measure, FIGURES, "; callgrind, PYTHONHASHSEED=0")


if __name__ == "__main__":
    sys.exit(main())
