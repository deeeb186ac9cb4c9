"""Crash points: every storage write of forget, restore and import fails in turn.

The failure is injected in-process: the Nth write raises and every later write
raises too, as if the process had died there (a replace leaves its temp file, an
append leaves half a line). After each crash point:
- readers never serve forgotten words once the forget's intent is on disk;
- `derivation_ledger --repair` finishes what was started, validate is not
  `failed`, and no file under the root (zip members and the sqlite index
  included) holds the forgotten words;
- nothing acknowledged before the crash is lost, and the next writer is not blocked.
"""

import base64
import io
import json
import os
import shutil
import tempfile
import unittest
import zipfile
from contextlib import ExitStack
from pathlib import Path
from unittest import mock

from personal_understanding import (archive, backup, capture, commands, followups, forget, gate, history, ledger,
                                    paths, receipts, records, restore, storage, validate)
from personal_understanding.archive_index import forget_cached, open_index
from personal_understanding.errors import PuError
from personal_understanding.retrieval import index as recall_index

SECRET = "顾青山"  # only the forgotten capture says it
WRITERS = ("atomic_write", "append_jsonl", "write_once", "remove_file", "remove_tree", "ensure_dir", "create_empty",
           "set_aside_tail")


class Crash(BaseException):
    """The process died here (BaseException: no `except Exception` swallows it)."""


class Injector:
    """Counts storage writes; from the Nth on, every write dies."""

    def __init__(self, fail_at=None):
        self.fail_at = fail_at
        self.count = 0
        self.dead = False

    def patches(self):
        return [mock.patch.object(storage, name, self._wrap(name, getattr(storage, name)))
                for name in WRITERS if hasattr(storage, name)]

    def _wrap(self, name, real):
        def write(root, path, *args, **kwargs):
            if self.dead:
                raise Crash(name)
            self.count += 1
            if self.count == self.fail_at:
                self.dead = True
                _debris(name, path, args)
                raise Crash(name)
            return real(root, path, *args, **kwargs)
        return write


def _debris(name, path, args):
    """What a kill in the middle of this write leaves behind."""
    path = Path(path)
    if not path.parent.is_dir():
        return
    if name in ("atomic_write", "write_once") and args and isinstance(args[0], bytes):
        (path.parent / f".{path.name}.{os.urandom(6).hex()}.tmp").write_bytes(args[0])
    elif name == "append_jsonl" and args:
        objs = [args[0]] if isinstance(args[0], dict) else args[0]
        data = "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs).encode("utf-8")
        with open(path, "ab") as handle:
            handle.write(data[:max(1, len(data) // 2)])


def run_dead(fn, fail_at):
    """Run fn with the fail_at-th write failing. Returns (writes counted, crashed)."""
    inj = Injector(fail_at)
    with ExitStack() as stack:
        for patch in inj.patches():
            stack.enter_context(patch)
        try:
            fn()
        except Crash:
            pass
    forget_cached()
    recall_index.forget_cached()
    return inj.count, inj.dead


def say(root, text, turn):
    receipts.preflight(root, text, turn_id=turn, tier="full")
    return capture.capture_text(root, text, turn)["capture_id"]


def all_bytes(root):
    """Every file under the root, zip members opened, quarantined fragments decoded."""
    out = []
    for path in Path(root).rglob("*"):
        if not path.is_file():
            continue
        data = path.read_bytes()
        out.append((path, data))
        if path.suffix == ".zip":
            try:
                with zipfile.ZipFile(io.BytesIO(data)) as zf:
                    out.extend((path / name, zf.read(name)) for name in zf.namelist())
            except zipfile.BadZipFile:
                pass
        if path.name == "quarantine.jsonl":
            for line in data.splitlines():
                try:
                    out.append((path, base64.b64decode(json.loads(line)["base64"])))
                except (ValueError, KeyError):
                    pass
    return out


def holding_secret(root):
    return sorted(str(p.relative_to(root)) if str(p).startswith(str(root)) else str(p)
                  for p, data in all_bytes(root) if SECRET.encode("utf-8") in data)


def served(root, fixture):
    """What the readers return, as one JSON text (refusals included as their codes)."""
    a, only, shared = fixture["A"], fixture["only"], fixture["shared"]
    calls = [
        ("retrieve_v2", {"query": "顾 青山", "maintenance": True}),
        ("retrieve_v2", {"query": "心理医生 睡不好", "maintenance": True}),
        ("retrieve_v2", {"level": "deep", "ids": [a, only, shared, fixture["B"]], "maintenance": True}),
        ("verify_quote", {"capture_id": a, "quote": "青山"}),
        ("catalog_context", {"view": "full", "maintenance": True}),
        ("catalog_context", {"view": "survey", "query": "顾 青山", "maintenance": True}),
        ("current_state", {}),
        ("conversation_starters", {}),
        ("followup_check", {"as_of": "2099-01-01"}),
        ("review_v2", {"deep": True}),
        ("session_check", {"turn_id": "t1"}),
        ("pipeline_view", {"turn_id": "t1"}),
        ("open_dashboard", {"no_open": True}),
    ]
    out = []
    for name, args in calls:
        try:
            result = commands.get(name).function()(root, **args)
        except PuError as exc:
            result = {"refused": exc.code}
        out.append(json.dumps(result, ensure_ascii=False))
    pages = list(Path(paths.views_dir(root)).rglob("*.html")) + list(Path(paths.views_dir(root)).rglob("*.js"))
    out.extend(p.read_text(encoding="utf-8", errors="replace") for p in pages)
    return "\n".join(out)


def build_fixture(root, outside):
    archive.init_archive(root)
    a = say(root, "其实我去年偷偷去看过心理医生，医生叫顾青山，别告诉别人", "t1")
    b = say(root, "我最近睡得不太好，老是半夜醒", "t2")
    start = "其实我去年偷偷去看过心理医生，医生叫顾青山".index("顾青山")
    only = records.add_record(root, kind="event", title="去看心理医生", capture_ids=[a],
                              verbatim_refs=[{"capture_id": a, "start": start, "end": start + 3}])["id"]
    shared = records.add_record(root, kind="state", title="医生叫顾青山：睡眠不好", summary="医生叫顾青山，说我睡不好是焦虑",
                                capture_ids=[a, b])["id"]
    fu = followups.add_followup(root, "后来还去找医生吗？", a, context="医生叫顾青山", due_rule="+7d")["id"]
    ledger.finalize(root, a, "derived")
    ledger.finalize(root, b, "derived")
    commands.get("retrieve_v2").function()(root, query=SECRET, capture_id=a)
    commands.get("retrieve_v2").function()(root, query="医生叫顾青山", maintenance=True)
    snap = backup.backup_archive(root)["snapshot"]
    shutil.copy(snap, os.path.join(outside, "old-snapshot.zip"))
    c = say(root, "今天去游泳了，游了一千米", "t3")
    ledger.finalize(root, c, "no-derivation-needed", "a swim, nothing durable to derive")
    lines = [{"ref": f"m{i}", "speaker": "me" if i % 2 else "Anna", "text": f"第{i}条聊天记录：周末去爬山"} for i in range(4)]
    lines[1]["occurred_at"] = "2023-05-08T13:56:00Z"
    with open(os.path.join(outside, "chat.jsonl"), "w", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines))
    forget_cached()
    shutil.rmtree(paths.views_dir(root))
    os.makedirs(paths.views_dir(root))
    return {"A": a, "B": b, "C": c, "only": only, "shared": shared, "fu": fu, "snapshot": snap,
            "old": os.path.join(outside, "old-snapshot.zip"), "chat": os.path.join(outside, "chat.jsonl")}


class CrashPointTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Durability against power loss is not what this test measures (the crash is at the storage
        # primitive), so fsync is skipped: the sweep runs a few hundred archives.
        cls._no_fsync = mock.patch("os.fsync", lambda fd: None)
        cls._no_fsync.start()
        shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
        cls.base = tempfile.mkdtemp(prefix="pu-crash-points-", dir=shm)  # a few hundred small archives: memory is quicker
        cls.outside = os.path.join(cls.base, "outside")
        os.makedirs(cls.outside)
        cls.template = os.path.join(cls.base, "template")
        cls.fixture = build_fixture(cls.template, cls.outside)
        # The same archive with the secret already forgotten: the starting point for restore.
        cls.forgotten = os.path.join(cls.base, "forgotten")
        shutil.copytree(cls.template, cls.forgotten)
        forget.forget(cls.forgotten, cls.fixture["A"], confirm=True)
        forget_cached()

    @classmethod
    def tearDownClass(cls):
        cls._no_fsync.stop()
        forget_cached()
        shutil.rmtree(cls.base, ignore_errors=True)

    def fresh(self, source):
        root = os.path.join(self.base, "run")
        forget_cached()
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(source, root)
        return root

    def intent_on_disk(self, root):
        entries, _p, _e, _n = storage.read_jsonl(paths.forgotten_path(root))
        return any(obj.get("id") == self.fixture["A"] for _l, _o, obj in entries)

    def readers_hold_back(self, root, where):
        with mock.patch.object(storage, "LOCK_HOOKS", []):  # no later writer finishes the forget for them
            text = served(root, self.fixture)
        forget_cached()
        at = text.find(SECRET)
        self.assertEqual(at, -1, f"{where}: a reader served the forgotten words: ...{text[max(0, at - 300):at + 50]}")

    def after_repair(self, root, where):
        ledger.repair(root)
        forget_cached()
        report = validate.validate(root)
        self.assertNotEqual(report["status"], "failed", f"{where}: {report['problems']}")
        # The next writer is not blocked and its turn passes the gate.
        cid = say(root, "晚上和朋友吃了饭", "next")
        ledger.finalize(root, cid, "no-derivation-needed", "a dinner, nothing durable to derive")
        check = gate.session_check(root, "next", allow_warnings=True)
        self.assertTrue(check["obligations_met"], f"{where}: {check}")
        index = open_index(root)
        self.assertIsNotNone(index.capture(self.fixture["B"]), where)
        self.assertTrue(Path(root, index.capture(self.fixture["B"])["path"]).is_file(), where)
        self.assertIsNotNone(index.record(self.fixture["shared"]), where)

    def sweep(self, source, op, name):
        points = 0
        for n in range(1, 500):
            root = self.fresh(source)
            count, crashed = run_dead(lambda: op(root), n)
            where = f"{name}, write {n} of {count if not crashed else '?'}"
            yield root, where, crashed
            points += 1
            if not crashed:
                break
        self.assertGreater(points, 3, f"{name} made only {points - 1} writes")

    def test_forget_at_every_write(self):
        a = self.fixture["A"]
        for root, where, crashed in self.sweep(self.template, lambda r: forget.forget(r, a, confirm=True), "forget"):
            intent = self.intent_on_disk(root)
            self.assertTrue(intent or where.endswith("write 1 of ?"), f"{where}: the intent is not the first write")
            if intent:
                self.readers_hold_back(root, where)
            self.after_repair(root, where)
            if not intent:
                forget.forget(root, a, confirm=True)
            self.assertEqual(holding_secret(root), [], where)
            self.assertIsNotNone(open_index(root).capture(self.fixture["C"]), where)

    def test_restore_at_every_write(self):
        old = self.fixture["old"]
        for root, where, crashed in self.sweep(self.forgotten, lambda r: restore.restore_archive(r, old, apply=True),
                                               "restore"):
            self.readers_hold_back(root, where)
            self.after_repair(root, where)
            self.assertEqual(holding_secret(root), [], where)
            # The state before the restore is never lost: still live, or in the pre-restore snapshot.
            c = open_index(root).capture(self.fixture["C"])
            if c is None:
                snaps = sorted(backup.backups_dir(root).glob("snapshot-*.zip"))
                names = set()
                for snap in snaps:
                    with zipfile.ZipFile(snap) as zf:
                        names |= set(zf.namelist())
                self.assertTrue(any(n.endswith(self.fixture["C"] + ".json") for n in names), where)

    def test_import_at_every_write(self):
        chat = self.fixture["chat"]
        for root, where, crashed in self.sweep(self.forgotten, lambda r: history.import_history(r, "jsonl", chat),
                                               "import"):
            self.after_repair(root, where)
            again = history.import_history(root, "jsonl", chat)
            self.assertEqual(again["imported"] + again["already_present"], 4, f"{where}: {again}")
            self.assertEqual(len(set(again["mapping"].values())), 4, where)
            forget_cached()
            self.assertTrue(gate.session_check(root, "next", allow_warnings=True)["obligations_met"], where)
            self.assertNotEqual(validate.validate(root)["status"], "failed", where)
            self.assertEqual(holding_secret(root), [], where)


if __name__ == "__main__":
    unittest.main()
