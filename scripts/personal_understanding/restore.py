"""Restore from a snapshot: verify first, show what would change, keep the present, never resurrect.

A dry run by default. With apply: the snapshot is verified against its
manifest (a corrupt or tampered snapshot is refused and nothing is touched),
the current state is snapshotted, and the snapshot is unpacked into a staging
area inside the archive where today's tombstones are applied to it. Only then
is a journal written (memory/staging/restore.json, the commit point) and the
cleaned files are put in place, tombstones first. Forgotten material is never
visible: it exists only in the staging area, which no reader looks at. A crash
before the journal leaves the archive as it was (the staging area is removed by
the next writer); a crash after it is completed by the next writer or by
`derivation_ledger --repair`. Derived views are dropped and the archive is validated.
"""

import hashlib
import json
import os
import zipfile
from pathlib import Path

from . import archive, backup, paths, storage, timeutil, validate
from .errors import PuError

KEEP_CURRENT = {"memory/v2/backup-state.json"}


def journal_path(root):
    return paths.staging_dir(root) / "restore.json"


def _hashes(base, files):
    return {rel: hashlib.sha256((Path(base) / rel).read_bytes()).hexdigest() for rel in files}


def _tombstoned_captures(root, zf):
    """Capture ids and attachment bytes a tombstone (today's or the snapshot's) names: they will not come back."""
    ids, blobs = set(), set()
    for line in backup.merged_tombstones(root, zf).split(b"\n"):
        try:
            stone = json.loads(line)
        except ValueError:
            continue
        if isinstance(stone, dict) and stone.get("kind") == "capture":
            ids.add(stone.get("id"))
            if isinstance(stone.get("blob"), str):
                blobs.add(stone["blob"])
    return ids, blobs


def _dry_diff(root, snapshot, manifest):
    current = _hashes(root, backup.archive_files(root))
    wanted = {f["path"]: f["sha256"] for f in manifest["files"]}
    with zipfile.ZipFile(snapshot) as zf:
        stones, blobs = _tombstoned_captures(root, zf)
    again = sorted(p for p in wanted if p.startswith("sources/conversation/") and Path(p).stem in stones)
    keep = KEEP_CURRENT | {"memory/v2/forgotten.jsonl"}
    added = sorted(p for p in wanted if p not in current and p not in again and p not in blobs)
    changed = sorted(p for p in wanted if p in current and current[p] != wanted[p] and p not in keep)
    removed = sorted(p for p in current if p not in wanted and p not in keep)
    return added, changed, removed, [Path(p).stem for p in again]


def restore_archive(root, snapshot, apply=False, now=None):
    archive.require(root)
    snapshot = Path(snapshot).expanduser()
    if not snapshot.is_file():
        raise PuError("RESTORE_NOT_FOUND", f"{snapshot} is not a file", "Pass the path of a snapshot zip ({cmd:backup_archive} prints it).")
    manifest, problems = backup.verify_snapshot(snapshot)
    if problems:
        raise PuError("RESTORE_SNAPSHOT_INVALID", f"{snapshot} failed verification: {problems[0]}",
                      "Nothing was touched. Use another snapshot ({cmd:backup_archive} with {arg:verify} lists every problem).",
                      {"problems": problems})
    added, changed, removed, again = _dry_diff(root, snapshot, manifest)
    plan = {"snapshot": str(snapshot), "created_at": manifest.get("created_at"), "verified": True,
            "would_add": added, "would_change": changed, "would_remove": removed, "stays_forgotten": again}
    if not apply:
        return dict(plan, dry_run=True, applied=False,
                    next="Nothing was changed. Run again with {arg:apply=true} to restore (the current state is snapshotted first).")
    moment = now or timeutil.now()
    with storage.archive_lock(root, "restore"):
        before = backup.create_snapshot(root, moment)
        stage = paths.staging_dir(root) / f"restore-{moment.strftime('%Y%m%d-%H%M%S')}-{os.urandom(3).hex()}"
        _manifest, redone = backup.clean_stage(root, snapshot, stage, moment)
        staged = _hashes(stage, backup.archive_files(stage))
        live = _hashes(root, backup.archive_files(root))
        writes = sorted((p for p in staged if live.get(p) != staged[p] and p not in KEEP_CURRENT),
                        key=lambda p: p != "memory/v2/forgotten.jsonl")  # tombstones first
        journal = {"stage": paths.rel(root, stage), "snapshot": str(snapshot), "writes": writes,
                   "removes": sorted(p for p in live if p not in staged and p not in KEEP_CURRENT),
                   "forgotten_again": redone,
                   "backup_state": {"last_backup_at": before["created_at"], "snapshot": before["snapshot"], "mirror": None,
                                    "archive_sha256": before["archive_sha256"], "files": before["count"],
                                    "bytes": before["bytes"], "note": "snapshot taken just before a restore"}}
        storage.atomic_write_json(root, journal_path(root), journal)
        _swap(root, journal)
    report = validate.validate(root)
    return dict(plan, dry_run=False, applied=True, pre_restore_snapshot=before["snapshot"],
                forgotten_again=redone, validate={"status": report["status"], "problems": report["problems"]})


def _swap(root, journal):
    """Put the cleaned staged files in place. Idempotent: a crash in here is completed by running it again."""
    from .views import discard

    stage = paths.inside_root(root, journal["stage"])
    for rel in journal["writes"]:
        source = stage / rel
        if source.is_file():
            storage.atomic_write(root, paths.inside_root(root, rel), source.read_bytes())
    for rel in journal["removes"]:
        storage.remove_file(root, paths.inside_root(root, rel))
    storage.atomic_write_json(root, paths.backup_state_path(root), journal["backup_state"])
    discard(root)
    storage.remove_file(root, journal_path(root))
    storage.remove_tree(root, stage)


def finish_pending(root):
    """Complete a restore whose journal is on disk; drop staging areas nothing will use. Caller holds the lock."""
    finished = []
    try:
        journal = storage.read_json(journal_path(root))
    except FileNotFoundError:
        journal = None
    except (OSError, ValueError):
        journal = None  # a journal is written atomically: an unreadable one was never committed
        storage.remove_file(root, journal_path(root))
    if journal:
        _swap(root, journal)
        finished.append(journal.get("snapshot"))
    staging = paths.staging_dir(root)
    for name in sorted(os.listdir(staging)) if staging.is_dir() else ():
        storage.remove_tree(root, staging / name)
    return finished
