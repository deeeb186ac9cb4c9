"""Shared benchmark helpers: synthetic archives, timing, printing. Not a test module."""

import datetime as dt
import os
import contextlib
import random
import statistics
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "scripts"
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))

from personal_understanding import archive, archive_index, capture, ledger, paths, receipts, records, storage, timeutil  # noqa: E402
from personal_understanding.classifier import classify  # noqa: E402
from personal_understanding.textinput import sha256_hex  # noqa: E402
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


PEOPLE_ZH = ["妈妈", "爸爸", "小雨", "阿强", "老王", "外婆", "表哥", "室友", "同事小李", "大学同学"]
PEOPLE_EN = ["Anna", "my sister", "Tom", "grandpa", "my manager", "Lucy", "the neighbour", "coach Mike"]
PLACES = ["杭州", "成都", "公司", "健身房", "医院", "老家", "Lisbon", "the park", "the office", "Tokyo"]
THINGS_ZH = ["火锅", "咖啡", "羽毛球", "考研", "搬家", "面试", "体检", "猫", "吉他", "驾照", "婚礼", "旅行", "失眠", "加班"]
THINGS_EN = ["marathon", "piano", "job interview", "birthday", "camping", "visa", "tax return", "sourdough", "chess"]
ZH = ["今天和{p}在{l}聊到{t}，心情{f}。", "{p}说下个月要去{l}，我们顺便{t}。", "最近{t}的事让我{f}，{p}劝我别想太多。",
      "在{l}遇到{p}，一起{t}了一下午。"]
EN = ["Talked with {p} at {l} about {t}; felt {f}.", "{p} wants to go to {l} for the {t} next month.",
      "The {t} at {l} went better than expected, {p} was there.", "Still thinking about the {t} with {p}."]
FEEL_ZH = ["不错", "有点累", "很开心", "挺焦虑", "一般"]
FEEL_EN = ["great", "tired", "anxious", "relieved", "okay"]
YEARS = 10  # a bulk archive spans ten years of conversation


def sentence(rng):
    """One synthetic message, mixed Chinese (60%) and English, from a small vocabulary of people, places and things."""
    if rng.random() < 0.6:
        return rng.choice(ZH).format(p=rng.choice(PEOPLE_ZH), l=rng.choice(PLACES), t=rng.choice(THINGS_ZH),
                                     f=rng.choice(FEEL_ZH))
    return rng.choice(EN).format(p=rng.choice(PEOPLE_EN), l=rng.choice(PLACES), t=rng.choice(THINGS_EN),
                                 f=rng.choice(FEEL_EN))


def build_bulk(root, count, with_records=True, seed=7, progress=True):
    """An archive of `count` closed personal turns over ten years, and one record citing each turn.

    Every turn has its receipt (classified), its capture file and its ledger lines; every record
    is what add_record stores (defaults filled, schema-checked). They are written in bulk, in the
    product's own formats and through its storage layer (building 100 000 turns one call at a
    time would take hours); everything measured afterwards runs the product's own code.
    Returns the capture ids in order. The disk is flushed at the end: what is measured next is not
    billed for writing back the build (after 100 000 turns an fsync took half as long again).
    """
    archive.init_archive(root)
    rng = random.Random(seed)
    start = dt.datetime(2016, 1, 1, 9, tzinfo=dt.timezone.utc)
    step = dt.timedelta(days=365.25 * YEARS) / max(1, count)
    receipts_out, ledger_out, records_out, ids = [], [], [], []
    started = time.perf_counter()

    def flush():
        storage.append_jsonl(root, paths.receipts_path(root), receipts_out)
        storage.append_jsonl(root, paths.ledger_events_path(root), ledger_out)
        if records_out:
            storage.append_jsonl(root, paths.records_path(root, "event"), records_out)
        for batch in (receipts_out, ledger_out, records_out):
            batch.clear()

    with storage.archive_lock(root, "bench build"):
        for i in range(count):
            moment = start + i * step
            stamp = timeutil.iso(moment)
            text = sentence(rng)
            data = text.encode("utf-8")
            digest = sha256_hex(data)
            turn, session = f"turn-{i:06d}", f"s-{i // 20:05d}"
            found = classify(text)
            receipts_out.append(receipts._receipt(turn, session, digest, len(text), moment, found, "full", True,
                                                  list(found["reasons"]), [], 1))
            cid = f"cap-{moment.strftime('%Y%m%d-%H%M%S')}-{i:08x}"
            doc = {"format": capture.CAPTURE_FORMAT, "capture_id": cid, "kind": "text", "speaker": "user", "text": text,
                   "utf8_sha256": digest, "bytes": len(data), "chars": len(text), "captured_at": stamp,
                   "occurred_at": None, "session_id": session, "turn_id": turn, "source": "chat"}
            rel = paths.capture_relpath(cid, stamp)
            storage.write_once(root, paths.inside_root(root, rel), capture.capture_payload(doc))
            ledger_out.append(capture.captured_event(doc, rel))
            if with_records:
                rid = f"event-{moment.strftime('%Y%m%d')}-{i:08x}"
                rec = records._defaults({"id": rid, "kind": "event", "title": text[:24], "summary": text,
                                         "capture_ids": [cid], "salience": i % 4, "date_start": stamp[:10],
                                         "date_precision": "day"})
                rec.update(version=1, created_at=stamp, updated_at=stamp)
                records_out.append(rec)
                ledger_out.append({"event": "finalized", "capture_id": cid, "disposition": "derived", "reason": None,
                                   "record_ids": [rid], "at": stamp})
            else:
                ledger_out.append({"event": "finalized", "capture_id": cid, "disposition": "no-derivation-needed",
                                   "reason": "synthetic benchmark turn", "record_ids": [], "at": stamp})
            ids.append(cid)
            if len(ledger_out) >= 4000:
                flush()
            if progress and i and i % 20000 == 0:
                print(f"    wrote {i} turns ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
        flush()
    quiet_disk()
    return ids


def quiet_disk():
    """Flush what earlier steps wrote (a build, an export, the last size's removal): the next
    measure is not billed for it."""
    if hasattr(os, "sync"):
        os.sync()


def scratch_base():
    """Where archives are built: $PU_BENCH_DIR, else beside the checkout, on the disk the default archive
    uses (the system's temporary folder may be memory, which would flatter every write). What a new file
    costs there is printed with the figures: on the machine the README's figures come from it went from
    10 to 450 us and back within an hour, in every folder, and an import makes a file for each message."""
    base = os.environ.get("PU_BENCH_DIR") or str(REPO / "tests" / "perf" / ".scratch")
    os.makedirs(base, exist_ok=True)
    return base


@contextlib.contextmanager
def scratch(prefix="pu-bench-"):
    """A temporary folder for one archive size; afterwards it is removed and no process cache names it."""
    from personal_understanding.retrieval import index as recall_index

    base = scratch_base()
    tmp = tempfile.mkdtemp(prefix=prefix, dir=base)
    try:
        yield tmp
    finally:
        archive_index.forget_cached()
        recall_index.forget_cached()
        shutil.rmtree(tmp, ignore_errors=True)
        if not os.environ.get("PU_BENCH_DIR"):
            with contextlib.suppress(OSError):
                os.rmdir(base)  # the folder beside the checkout goes too, once no run uses it


def file_cost(folder, count=200):
    """Median microseconds to make, write and close a small file in `folder` (what a capture costs the disk)."""
    tmp = tempfile.mkdtemp(prefix="pu-disk-", dir=folder)
    times = []
    try:
        for i in range(count):
            started = time.perf_counter()
            fd = os.open(os.path.join(tmp, f"{i}.json"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.write(fd, b"x" * 300)
            os.close(fd)
            times.append(time.perf_counter() - started)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return statistics.median(times) * 1e6


def median_p95(samples):
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return statistics.median(ordered), p95


def ms(seconds):
    return f"{seconds * 1000:8.2f} ms"


# CLI processes run as installed code does: with compiled bytecode cached (an environment that
# turns the cache off would have every run compile every module from source).
CLI_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run_cli(script, *args, root):
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, str(SCRIPTS / f"{script}.py"), *args, "--root", str(root)],
                          capture_output=True, env=CLI_ENV)
    elapsed = time.perf_counter() - started
    return elapsed, proc


def interpreter_start(runs=7):
    """Median wall time of `python3 -c pass` here: the floor under every CLI figure."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True, env=CLI_ENV)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def machine_speed(figures, size, before, after, first, then):
    """The line that says how fast the machine ran around a measurement (cpu_gauge `before` it, `first`,
    and `after` it, `then`); the mean of the two goes into `figures` for the table by size."""
    figures.add("fixed loop (machine speed)", size, (before + after) / 2)
    return f"machine speed: a fixed loop took {ms(before)} {first}, {ms(after)} {then}"


def cpu_gauge(runs=5):
    """Median time of a fixed pure-Python loop: how fast this machine runs Python just now. A shared
    virtual machine runs the same work up to twice as slowly within minutes, and reports none of it
    as stolen time; beside a figure, this tells a slow spell from a slower build. It times Python's
    own work only: starting a process and its page faults are the kernel's, which can be slow apart."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        total = 0
        for i in range(GAUGE_LOOP):
            total += i * i
        times.append(time.perf_counter() - started)
    return statistics.median(times)


GAUGE_LOOP = 300_000


def size_line(root):
    return f"{archive_bytes(root) / 1e6:.1f} MB on disk"


def import_ms(script, *args, root):
    """(total, ours) milliseconds of imports in one CLI run of `script`, from `python3 -X importtime`."""
    proc = subprocess.run([sys.executable, "-X", "importtime", str(SCRIPTS / f"{script}.py"), *args, "--root", str(root)],
                          capture_output=True, env=CLI_ENV)
    total = ours = 0
    for line in proc.stderr.decode("utf-8", "replace").splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _self, cumulative, name = line[len("import time:"):].split("|")
        if cumulative.strip().isdigit() and not name.startswith("  ") and name.strip():
            total += int(cumulative)  # top-level imports only: their cumulative time holds their children
            ours += int(cumulative) * name.strip().startswith("personal_understanding")
    return total / 1000, ours / 1000


class Figures:
    """Figures per archive size, printed at the end with the ratio largest vs smallest size."""

    def __init__(self):
        self.rows = {}

    def add(self, label, size, value, unit="ms"):
        """value in seconds when unit is ms, else in the unit given."""
        self.rows.setdefault(label, (unit, {}))[1][size] = value * 1000 if unit == "ms" else value

    def print(self):
        if not self.rows:
            return
        print("  per size (ratio: largest vs smallest size)")
        for label, (unit, by_size) in self.rows.items():
            sizes = sorted(by_size)
            cells = "  ".join(f"{n:>6}: {by_size[n]:8.2f} {unit}" for n in sizes)
            ratio = f"   ratio {by_size[sizes[-1]] / by_size[sizes[0]]:.2f}" if len(sizes) > 1 and by_size[sizes[0]] else ""
            print(f"    {label:<30} {cells}{ratio}")


def sizes():
    """The archive sizes a size-based benchmark runs at: those on its command line, else 1 000 and 10 000."""
    return sizes_from_argv([1000, 10000])


def sizes_from_argv(default):
    args = [a for a in sys.argv[1:] if a.isdigit()]
    return [int(a) for a in args] or default


def run_sizes(name, per_size, figures, detail="", cli=False):
    """A benchmark's run: its title, the interpreter floor (when it times CLI calls), per_size(size, tmp) for
    each size asked for (default 1 000 and 10 000) in a scratch folder of its own, then the table by size."""
    print(f"{name} benchmark ({disk_note()}){detail}")
    print(folder_note())
    if cli:
        print(f"  bare interpreter start: {ms(interpreter_start())}")
    for size in sizes():
        with scratch() as tmp:
            per_size(size, tmp)
    figures.print()
    return 0


def disk_note():
    return f"python {sys.version.split()[0]} on {os.cpu_count()} cores"


def folder_note():
    """Where the archives are, and what making a file costs there and in the system's temporary folder."""
    base = scratch_base()
    system = tempfile.gettempdir()
    note = f"  archives in {base} (a new file: {file_cost(base):.0f} us"
    if os.path.realpath(system) != os.path.realpath(base):
        note += f"; in {system}: {file_cost(system):.0f} us"
    return note + ")"
