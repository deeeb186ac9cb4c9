#!/usr/bin/env python3
"""Crash proof: kill writers with SIGKILL at random moments, then check the archive.

    python3 tests/perf/stress_crash.py [KILLS]     # default 270

Writers loop over one operation each and print every acknowledged write:
capture, add_record, finalize, backup, forget (of a capture whose words carry a
unique marker, quoted by a two-source record and a follow-up), update_state,
import_history (a 300-line file), restore_archive (from a snapshot that still holds
forgotten words) and the MCP server (preflight, capture, finalize and forget calls
piped in). Restores and imports run on archives of their own, so a restore does
not roll back the other writers' acknowledged work.

After each kill: `derivation_ledger --repair` runs; validate must not be `failed`;
every acknowledged write must be present (a restore's: in the archive or in its
pre-restore snapshot); no file under the root (zip members, the sqlite index and
set-aside fragments included) may hold the words of a forget that was acknowledged
or whose tombstone is on disk; an interrupted import completes when re-run; and the
next writer (capture, finalize, session_check) must get through. Prints the counts.
"""

import base64
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

import _bench
from personal_understanding import (archive, archive_index, backup, capture, commands, forget, gate, history, ledger,
                                    paths, receipts, records, storage, validate)

WRITER = r"""
import sys
sys.path.insert(0, {scripts!r})
from personal_understanding import backup, capture, forget, followups, history, ledger, receipts, records, restore
from personal_understanding.archive_index import open_index
root, op, tag, extra = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]

def say(text, turn):
    receipts.preflight(root, text, turn_id=turn, tier="full")
    return capture.capture_text(root, text, turn)["capture_id"]

i = 0
while True:
    i += 1
    if op == "capture":
        print("capture", say(f"第{{i}}次想起那年夏天的海边 {{tag}}", f"{{tag}}-{{i}}"), flush=True)
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
            print("capture", say(f"又一个夏天 {{tag}} {{i}}", f"{{tag}}-{{i}}"), flush=True)
    elif op == "backup":
        print("backup", backup.backup_archive(root, keep=3)["snapshot"], flush=True)
    elif op == "forget":
        marker = f"q{{tag}}z{{i}}暗号"
        cid = say(f"我的秘密是{{marker}}千万别说", f"{{tag}}-{{i}}")
        seed = open_index(root).db.execute("SELECT capture_id FROM captures WHERE turn_id='seed'").fetchone()[0]
        records.add_record(root, kind="state", title="秘密", summary=f"秘密是{{marker}}", capture_ids=[cid, seed])
        followups.add_followup(root, "还记得吗？", cid, context=f"秘密是{{marker}}", due_rule="+3d")
        print("intent", cid, marker, flush=True)
        forget.forget(root, cid, confirm=True)
        print("forget", cid, marker, flush=True)
    elif op == "update_state":
        cid = say(f"最近的状态第{{i}}次变了 {{tag}}", f"{{tag}}-{{i}}")
        ledger.finalize(root, cid, "no-derivation-needed", "state change recorded on the state itself")
        current = next(r["id"] for r in open_index(root).records_where("kind='state' AND status='current'")
                       if r.get("title", "").startswith("状态"))
        out = records.update_state(root, id=current, capture_ids=[cid], title=f"状态 {{tag}} {{i}}")
        print("state", out["id"], flush=True)
    elif op == "import":
        out = history.import_history(root, "jsonl", extra)
        print("import", out["imported"] + out["already_present"], flush=True)
        import time; time.sleep(60)
    elif op == "restore":
        out = restore.restore_archive(root, extra, apply=True)
        print("restore", out["pre_restore_snapshot"], flush=True)
"""

OPS = ("capture", "record", "finalize", "backup", "forget", "update_state", "import", "restore", "mcp")
LANE = {"import": "import", "restore": "restore"}  # every other op works on the main archive
IMPORT_LINES = 300


def say(root, text, turn):
    receipts.preflight(root, text, turn_id=turn, tier="full")
    return capture.capture_text(root, text, turn)["capture_id"]


def setup(tmp):
    roots = {}
    for lane in ("main", "import", "restore"):
        root = os.path.join(tmp, lane)
        archive.init_archive(root)
        say(root, "种子：先存一句话", "seed")
        roots[lane] = root
    main = roots["main"]
    seed = archive_index.open_index(main).turn_capture_ids("seed")[0]
    cid = say(main, "最近的状态很平稳", "state-0")
    records.add_record(main, kind="state", title="状态 初始", capture_ids=[cid])
    ledger.finalize(main, cid, "derived")
    ledger.finalize(main, seed, "no-derivation-needed", "the seed line of the stress archive")
    # The restore lane: a snapshot taken before a forget, kept outside the archive (forgetting cannot reach it).
    rroot = roots["restore"]
    old = say(rroot, "那件旧事的暗号是r0z0暗号，别再提", "old")
    ledger.finalize(rroot, old, "no-derivation-needed", "an old secret, forgotten below")
    snap = backup.backup_archive(rroot)["snapshot"]
    outside = os.path.join(tmp, "outside-snapshot.zip")
    Path(outside).write_bytes(Path(snap).read_bytes())
    forget.forget(rroot, old, confirm=True)
    archive_index.forget_cached()
    return roots, outside, {"restore": ["r0z0暗号"]}


def all_bytes(root):
    """Every file's bytes under the root, zip members opened, set-aside fragments decoded."""
    for path in Path(root).rglob("*"):
        try:
            data = path.read_bytes() if path.is_file() else None
        except OSError:
            continue
        if data is None:
            continue
        yield path, data
        if path.suffix == ".zip":
            try:
                with zipfile.ZipFile(path) as zf:
                    for name in zf.namelist():
                        yield path / name, zf.read(name)
            except (zipfile.BadZipFile, OSError):
                pass
        if path.name == "quarantine.jsonl":
            for line in data.splitlines():
                try:
                    yield path, base64.b64decode(json.loads(line)["base64"])
                except (ValueError, KeyError, TypeError):
                    pass


def tombstoned(root, cid):
    entries, _p, _e, _n = storage.read_jsonl(paths.forgotten_path(root))
    return any(obj.get("id") == cid for _l, _o, obj in entries)


class McpWriter:
    """The MCP server as the writer: a pipe full of tool calls, killed part-way."""

    def __init__(self, root, tag):
        self.acks = []
        env = dict(os.environ, PU_HOME=str(root))
        self.proc = subprocess.Popen([sys.executable, str(_bench.SCRIPTS / "mcp_server.py"), "--tools", "all"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=tempfile.gettempdir())
        self.calls = {}
        lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}}}]
        n = 0
        self.secrets = []  # (capture id, marker) of the captures this server is asked to forget
        for i in range(40):
            text, turn, cid = f"通过工具说的第{i}句话 {tag}", f"{tag}-m{i}", f"{tag}-c{i}"
            last = ("finalize_capture", {"capture_id": cid, "disposition": "no-derivation-needed",
                                         "reason": "a stress line over MCP, nothing to derive"}, ("finalize", cid))
            if i % 5 == 4:
                marker = f"m{tag}y{i}暗号"
                text = f"这句要忘掉：{marker}"
                self.secrets.append((cid, marker))
                last = ("forget", {"id": cid, "confirm": True}, ("forget", cid, marker))
            for name, args, ack in (
                    ("preflight_context", {"text": text, "turn_id": turn, "tier": "full"}, None),
                    ("capture_user_update", {"text": text, "turn_id": turn, "capture_id": cid}, ("capture", cid)),
                    last):
                n += 1
                self.calls[n] = ack
                lines.append({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                              "params": {"name": commands.get(name).tool, "arguments": args}})
        payload = b"".join(json.dumps(x, ensure_ascii=False).encode("utf-8") + b"\n" for x in lines)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        threading.Thread(target=self._write, args=(payload,), daemon=True).start()

    def _write(self, payload):
        try:
            self.proc.stdin.write(payload)
            self.proc.stdin.flush()
        except OSError:
            pass

    def _read(self):
        for line in self.proc.stdout:
            try:
                reply = json.loads(line)
            except ValueError:
                break  # the kill cut the last reply short: not an acknowledgement
            ack = self.calls.get(reply.get("id"))
            if ack and "result" in reply and not reply["result"].get("isError"):
                self.acks.append(list(ack))

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.reader.join(timeout=10)
        return self.acks


def main():
    kills = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 270
    rng = random.Random(11)
    tmp = tempfile.mkdtemp(prefix="pu-crash-")
    roots, outside, secrets = setup(tmp)
    acked = {k: [] for k in ("capture", "record", "finalize", "backup", "forget", "state", "import", "restore")}
    lost, leaks, blocked, import_incomplete = [], [], 0, 0
    statuses_before = {"clean": 0, "warnings": 0, "failed": 0}
    statuses_after = dict(statuses_before)
    kills_per_op = {op: 0 for op in OPS}
    repaired_codes, warning_codes = {}, {}
    mcp_acks = 0
    started = time.perf_counter()
    for n in range(kills):
        op = OPS[n % len(OPS)]
        lane = LANE.get(op, "main")
        root = roots[lane]
        tag = f"k{n}"
        extra = "-"
        if op == "import":
            extra = os.path.join(tmp, f"import-{tag}.jsonl")
            with open(extra, "w", encoding="utf-8") as handle:
                for i in range(IMPORT_LINES):
                    handle.write(json.dumps({"ref": f"{tag}-{i}", "speaker": "me" if i % 2 else "Kai",
                                             "text": f"导入的第{i}句 {tag}", "occurred_at": "1:56 pm on 8 May, 2023"},
                                            ensure_ascii=False) + "\n")
        if op == "restore":
            extra = outside
            acked["capture"].append((lane, say(root, f"恢复之前说的话 {tag}", f"{tag}-before")))
        if op == "mcp":
            writer = McpWriter(root, tag)
            time.sleep(rng.uniform(0.3, 1.2))
            acks = writer.kill()
            mcp_acks += len(acks)
            acks = [a for a in acks if a[0] != "capture" or a[1] not in dict(writer.secrets)]  # forgotten on purpose
            acks += [["intent", cid, marker] for cid, marker in writer.secrets]
        else:
            proc = subprocess.Popen([sys.executable, "-c", WRITER.format(scripts=str(_bench.SCRIPTS)), root, op, tag, extra],
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0.12, 0.6) * {"import": 3, "restore": 3, "forget": 2, "update_state": 2}.get(op, 1))
            proc.send_signal(signal.SIGKILL)
            out, _ = proc.communicate()
            # Only whole lines are acknowledgements: the kill may cut the last one short.
            acks = [line.split() for line in out.decode(errors="replace").split("\n")[:-1]]
        kills_per_op[op] += 1
        archive_index.forget_cached()
        statuses_before[validate.validate(root)["status"]] += 1
        fixed = ledger.repair(root)
        for event in fixed["events"]:
            repaired_codes[event.split()[0]] = repaired_codes.get(event.split()[0], 0) + 1
        for warning in fixed.get("warnings", ()):
            repaired_codes[warning["code"]] = repaired_codes.get(warning["code"], 0) + 1
        archive_index.forget_cached()
        report = validate.validate(root)
        statuses_after[report["status"]] += 1
        for line in report["problems"]:
            code = line.split(": ")[1].split(" ")[0]
            warning_codes[code] = warning_codes.get(code, 0) + 1
        if report["status"] == "failed":
            print(f"  kill {n} ({op}): validate FAILED after repair: {report['problems'][:3]}")
        index = archive_index.open_index(root)
        for ack in acks:
            kind, ident = ack[0], ack[1] if len(ack) > 1 else None
            if kind == "intent":
                if tombstoned(root, ident):
                    secrets.setdefault(lane, []).append(ack[2])
                continue
            if kind == "forget":
                acked["forget"].append((lane, ident))
                if ack[2] not in secrets.setdefault(lane, []):
                    secrets[lane].append(ack[2])
                continue
            if kind in acked:
                acked[kind].append((lane, ident))
        if op == "import":
            again = history.import_history(root, "jsonl", extra)
            if again["imported"] + again["already_present"] != IMPORT_LINES:
                import_incomplete += 1
                print(f"  kill {n} (import): re-run gave {again['imported']} + {again['already_present']}")
        # The next writer is not blocked, and its turn passes the gate.
        try:
            cid = say(root, f"杀掉之后的下一句 {tag}", f"{tag}-next")
            ledger.finalize(root, cid, "no-derivation-needed", "the line after a kill, nothing to derive")
            check = gate.session_check(root, f"{tag}-next", allow_warnings=True)
            # Other writers' captures may be pending (acknowledged, awaiting finalize); imported ones never are.
            if not all(g["ok"] for g in check["gates"].values()) or any(c.startswith("imp-") for c in check["pending_capture_ids"]):
                blocked += 1
                print(f"  kill {n} ({op}): the next turn's gate failed: {check['gates']}")
        except Exception as exc:  # noqa: BLE001  (a benchmark reports, it does not stop)
            blocked += 1
            print(f"  kill {n} ({op}): the next writer failed: {exc}")
        archive_index.forget_cached()
        index = archive_index.open_index(root)
        for kind, items in acked.items():
            for item_lane, ident in items:
                if item_lane != lane:
                    continue
                present = {"capture": lambda i: index.capture(i) is not None or in_pre_restore(root, i),
                           "record": lambda i: index.record(i) is not None,
                           "finalize": lambda i: (index.capture(i) or {}).get("status") != "pending",
                           "backup": lambda i: True,
                           "forget": lambda i: (index.capture(i) or {}).get("status") == "forgotten",
                           "state": lambda i: index.record(i) is not None,
                           "import": lambda i: True,
                           "restore": lambda i: True}[kind](ident)
                if not present and (kind, ident) not in lost:
                    lost.append((kind, ident))
        words = [m.encode("utf-8") for m in secrets.get(lane, ())]
        if words:
            for path, data in all_bytes(root):
                for word in words:
                    if word in data:
                        leaks.append((n, op, str(path), word.decode()))
    elapsed = time.perf_counter() - started
    print(f"crash stress: {kills} SIGKILLs in {elapsed:.0f} s ({_bench.disk_note()})")
    print("  kills per writer: " + ", ".join(f"{k} {v}" for k, v in kills_per_op.items()))
    print("  acknowledged before a kill: " + ", ".join(f"{k} {len(v)}" for k, v in acked.items())
          + f" (of which MCP tool calls: {mcp_acks})")
    print(f"  acknowledged writes missing afterwards: {len(lost)}" + (f" {lost[:5]}" if lost else ""))
    print(f"  forgotten words found under the root afterwards: {len(leaks)} (checked {sum(len(v) for v in secrets.values())} "
          f"forgotten markers, every file, zip members and the sqlite index included)" + (f" {leaks[:3]}" if leaks else ""))
    print(f"  next writer blocked or its gate failing: {blocked}; interrupted imports not completed by a re-run: {import_incomplete}")
    print(f"  validate before repair: clean {statuses_before['clean']}, warnings {statuses_before['warnings']}, "
          f"failed {statuses_before['failed']}")
    print(f"  validate after repair:  clean {statuses_after['clean']}, warnings {statuses_after['warnings']}, "
          f"failed {statuses_after['failed']}")
    if warning_codes:
        print("  problems after repair (each kill's report counted): "
              + ", ".join(f"{k} {v}" for k, v in sorted(warning_codes.items())))
    if repaired_codes:
        print("  what repair did (summed over kills): " + ", ".join(f"{k} {v}" for k, v in sorted(repaired_codes.items())))
    print("  archives: " + ", ".join(f"{lane} {_bench.size_line(root)}" for lane, root in roots.items()))
    # A writer that never got a write acknowledged proves nothing about its kills: it is failing, not crashing.
    silent = [op for op, writes in acked.items()
              if not writes and kills_per_op.get(op if op != "state" else "update_state", 0) >= 3]
    if silent:
        print(f"  writers that never acknowledged a write (broken, not proven): {', '.join(silent)}")
    ok = not lost and not leaks and not blocked and not import_incomplete and not statuses_after["failed"] and not silent
    if ok:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print(f"  the archives are kept for a look: {tmp}")
    return 0 if ok else 1


def in_pre_restore(root, capture_id):
    """A capture a restore rolled back is kept in the snapshot taken just before it."""
    for snap in backup.backups_dir(root).glob("snapshot-*.zip"):
        try:
            with zipfile.ZipFile(snap) as zf:
                if any(name.endswith(f"/{capture_id}.json") for name in zf.namelist()):
                    return True
        except zipfile.BadZipFile:
            continue
    return False


if __name__ == "__main__":
    sys.exit(main())
