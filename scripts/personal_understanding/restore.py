"""Restore from a snapshot: verify first, show what would change, keep the present, never resurrect.

A dry run by default. With apply: the snapshot is verified against its
manifest (a corrupt or tampered snapshot is refused and nothing is touched),
the current state is snapshotted, the files are put back, the current
tombstones are kept and applied again so forgotten material never returns,
derived views are dropped, and the archive is validated.
"""

import hashlib
import zipfile
from pathlib import Path

from . import archive, backup, forget, paths, storage, timeutil, validate
from .errors import PuError


def _diff(root, manifest):
    current = {}
    for rel in backup.archive_files(root):
        current[rel] = hashlib.sha256((Path(root) / rel).read_bytes()).hexdigest()
    wanted = {f["path"]: f["sha256"] for f in manifest["files"]}
    keep_current = {"memory/v2/forgotten.jsonl", "memory/v2/backup-state.json"}
    added = sorted(p for p in wanted if p not in current)
    changed = sorted(p for p in wanted if p in current and current[p] != wanted[p] and p not in keep_current)
    removed = sorted(p for p in current if p not in wanted and p not in keep_current)
    return added, changed, removed


def restore_archive(root, snapshot, apply=False, now=None):
    archive.require(root)
    snapshot = Path(snapshot).expanduser()
    if not snapshot.is_file():
        raise PuError("RESTORE_NOT_FOUND", f"{snapshot} is not a file", "Pass the path of a snapshot zip (backup_archive.py prints it).")
    manifest, problems = backup.verify_snapshot(snapshot)
    if problems:
        raise PuError("RESTORE_SNAPSHOT_INVALID", f"{snapshot} failed verification: {problems[0]}",
                      "Nothing was touched. Use another snapshot (backup_archive.py --verify lists every problem).",
                      {"problems": problems})
    added, changed, removed = _diff(root, manifest)
    plan = {"snapshot": str(snapshot), "created_at": manifest.get("created_at"), "verified": True,
            "would_add": added, "would_change": changed, "would_remove": removed}
    if not apply:
        return dict(plan, dry_run=True, applied=False,
                    next="Nothing was changed. Run again with --apply to restore (the current state is snapshotted first).")
    moment = now or timeutil.now()
    with storage.archive_lock(root, "restore"):
        before = backup.create_snapshot(root, moment)
        with zipfile.ZipFile(snapshot) as zf:
            for rel in added + changed:
                target = paths.inside_root(root, rel)
                storage.atomic_write(root, target, zf.read(rel))
            tombstones = _merge_tombstones(root, zf)
        for rel in removed:
            storage.remove_file(root, paths.inside_root(root, rel))
        storage.atomic_write(root, paths.forgotten_path(root), tombstones)
        from .views import discard

        discard(root)
        redone = forget.reapply_tombstones(root, moment)
        storage.atomic_write_json(root, paths.backup_state_path(root), {
            "last_backup_at": before["created_at"], "snapshot": before["snapshot"], "mirror": None,
            "archive_sha256": before["archive_sha256"], "files": before["count"], "bytes": before["bytes"],
            "note": "snapshot taken just before a restore"})
    report = validate.validate(root)
    return dict(plan, dry_run=False, applied=True, pre_restore_snapshot=before["snapshot"],
                forgotten_again=redone, validate={"status": report["status"], "problems": report["problems"]})


def _merge_tombstones(root, zf):
    """Today's tombstones, plus any in the snapshot that today's file lacks: forgetting is never undone."""
    current = paths.forgotten_path(root).read_bytes() if paths.forgotten_path(root).exists() else b""
    lines = [line for line in current.split(b"\n") if line.strip()]
    try:
        old = zf.read("memory/v2/forgotten.jsonl")
    except KeyError:
        old = b""
    seen = set(lines)
    for line in old.split(b"\n"):
        if line.strip() and line not in seen:
            lines.append(line)
            seen.add(line)
    return b"".join(line + b"\n" for line in lines)
