"""Backups: a zip snapshot of memory/ and sources/ with a manifest of hashes.

The manifest lists every file with its SHA-256 and size, and a digest of the
whole archive (the SHA-256 of the sorted "path sha256" lines), so a snapshot
can be verified file by file before anything is restored from it. Derived
views, the lock file and staging areas are not backed up: they are rebuilt.

Forgetting reaches the snapshots under backups/: a snapshot that holds forgotten
material is unpacked into a staging area inside the archive, today's tombstones
are applied to it there, and it is replaced by a snapshot of the result with a
new manifest (its created_at kept, rewritten_at added). Copies outside the
archive (--also-to) cannot be reached; forgetting names them.
"""

import hashlib
import io
import json
import os
import re
import stat
import zipfile
from pathlib import Path

from . import archive, paths, storage, timeutil
from .errors import PuError

SNAPSHOT_RE = re.compile(r"^snapshot-\d{8}-\d{6}(-\d+)?\.zip$")
MANIFEST = "manifest.json"


def backups_dir(root):
    return Path(root) / "backups"


def archive_files(root):
    """Relative paths of every file that belongs in a snapshot, sorted."""
    out = []
    skipped = (paths.views_dir(root), paths.staging_dir(root))
    for top in (paths.memory_dir(root), paths.sources_dir(root)):
        for dirpath, dirnames, filenames in os.walk(top):
            if Path(dirpath) in skipped:
                dirnames[:] = []
                continue
            dirnames.sort()
            for name in dirnames:  # os.walk would skip a linked folder silently: its files would be missing
                if (Path(dirpath) / name).is_symlink():
                    raise storage.symlink_refused((Path(dirpath) / name).relative_to(root).as_posix())
            for name in sorted(filenames):
                full = Path(dirpath) / name
                rel = full.relative_to(root).as_posix()
                if rel == "memory/archive.lock" or (name.startswith(".") and name.endswith(".tmp")):
                    continue
                if full.is_symlink():
                    raise PuError("BACKUP_SYMLINK", f"{rel} is a symbolic link", "Stored material must be real files; check the archive with {cmd:validate_memory}.")
                out.append(rel)
    return sorted(out)


def archive_digest(entries):
    """One SHA-256 over the sorted (path, sha256) list: the archive's own fingerprint."""
    lines = "".join(f"{p} {h}\n" for p, h in sorted(entries))
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def _sha(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _snapshot_name(root, moment):
    base = f"snapshot-{moment.strftime('%Y%m%d-%H%M%S')}"
    name, n = base, 1
    while (backups_dir(root) / f"{name}.zip").exists():
        n += 1
        name = f"{base}-{n}"
    return name + ".zip"


def _pack(base, files, manifest):
    """Zip `files` (relative to `base`) with `manifest` completed and stored inside; returns the bytes."""
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for rel in files:
            content = (Path(base) / rel).read_bytes()
            manifest["files"].append({"path": rel, "sha256": hashlib.sha256(content).hexdigest(), "bytes": len(content)})
            zf.writestr(rel, content)
        manifest["archive_sha256"] = archive_digest((f["path"], f["sha256"]) for f in manifest["files"])
        manifest["count"] = len(manifest["files"])
        manifest["bytes"] = sum(f["bytes"] for f in manifest["files"])
        zf.writestr(MANIFEST, json.dumps(manifest, ensure_ascii=False, indent=1, sort_keys=True))
    return data.getvalue()


def create_snapshot(root, moment):
    """Write a snapshot zip and its manifest; the caller holds the lock. Returns the manifest."""
    manifest = {"created_at": timeutil.iso(moment), "root": str(root), "files": []}
    storage.ensure_dir(root, backups_dir(root))
    target = backups_dir(root) / _snapshot_name(root, moment)
    data = _pack(root, archive_files(root), manifest)
    storage.write_once(root, target, data)
    manifest["snapshot"] = str(target)
    manifest["snapshot_sha256"] = hashlib.sha256(data).hexdigest()
    storage.atomic_write_json(root, target.with_suffix(".manifest.json"), manifest)
    return manifest


# --- snapshots and forgetting ---------------------------------------------------

def _settled(lines):
    """Ids whose forgetting a tombstone file shows as complete (older tombstones have no state)."""
    out = set()
    for line in lines.split(b"\n"):
        try:
            stone = json.loads(line)
        except ValueError:
            continue
        if isinstance(stone, dict) and stone.get("state") != "intent":
            out.add(stone.get("id"))
    return out


def snapshots_holding(root, ids):
    """Snapshots under backups/ that still hold something of `ids`."""
    out = []
    for snap in sorted(p for p in backups_dir(root).glob("snapshot-*.zip") if SNAPSHOT_RE.match(p.name)):
        try:
            with zipfile.ZipFile(snap) as zf:
                names = [n for n in zf.namelist() if n != MANIFEST]
                stones = zf.read("memory/v2/forgotten.jsonl") if "memory/v2/forgotten.jsonl" in names else b""
                open_ids = [i.encode("utf-8") for i in set(ids) - _settled(stones)]
                for name in names if open_ids else ():
                    if name != "memory/v2/forgotten.jsonl" and any(i in zf.read(name) for i in open_ids):
                        out.append(snap)
                        break
        except (OSError, zipfile.BadZipFile, KeyError):
            continue  # an unreadable snapshot is verify's business, not forgetting's
    return out


def merged_tombstones(root, zf):
    """Today's tombstone lines, plus any in the snapshot that today's file lacks: forgetting is never undone."""
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


def clean_stage(root, snapshot, stage, moment):
    """Unpack a verified snapshot into `stage` (inside the root) and apply today's tombstones there.

    The caller holds the root's lock. Returns (manifest, ids forgotten again in the stage).
    """
    from . import forget

    storage.remove_tree(root, stage)  # the leftovers of an interrupted run
    with zipfile.ZipFile(snapshot) as zf:
        manifest = json.loads(zf.read(MANIFEST).decode("utf-8"))
        for entry in manifest["files"]:
            if entry["path"] != "memory/v2/forgotten.jsonl":
                storage.write_once(root, paths.inside_root(stage, entry["path"]), zf.read(entry["path"]))
        storage.write_once(root, paths.forgotten_path(stage), merged_tombstones(root, zf))
    for rel in paths.DIRECTORIES:
        storage.ensure_dir(root, Path(stage) / rel)
    with storage.archive_lock(stage, "clean staged snapshot"):
        redone = forget.reapply(stage, moment)
    return manifest, redone


def rewrite_snapshots(root, ids, moment):
    """Replace every snapshot under backups/ that holds something of `ids` (forgotten) by a cleaned one.

    Caller holds the lock. A snapshot that fails verification is left alone and returned in `unverified`.
    """
    rewritten, unverified = [], []
    for snap in snapshots_holding(root, ids):
        if verify_snapshot(snap)[1]:
            unverified.append(str(snap))
            continue
        stage = paths.staging_dir(root) / f"backup-{snap.stem}"
        old, redone = clean_stage(root, snap, stage, moment)
        manifest = {"created_at": old.get("created_at"), "root": old.get("root"), "files": [],
                    "rewritten_at": timeutil.iso(moment), "forgotten_again": redone,
                    "note": "rewritten without material forgotten on request"}
        data = _pack(stage, archive_files(stage), manifest)
        storage.atomic_write(root, snap, data)
        manifest.update(snapshot=str(snap), snapshot_sha256=hashlib.sha256(data).hexdigest())
        storage.atomic_write_json(root, snap.with_suffix(".manifest.json"), manifest)
        storage.remove_tree(root, stage)
        rewritten.append(str(snap))
    return rewritten, unverified


def verify_snapshot(snapshot):
    """Re-hash every file of a snapshot against its manifest. Returns (manifest, problems)."""
    problems = []
    try:
        if not stat.S_ISREG(os.stat(snapshot).st_mode):  # a pipe or device would hang or stream forever
            return None, [f"{snapshot}: not a regular file"]
        zf = zipfile.ZipFile(snapshot)
    except (OSError, zipfile.BadZipFile) as exc:
        return None, [f"{snapshot}: not a readable zip ({exc})"]
    with zf:
        try:
            manifest = json.loads(zf.read(MANIFEST).decode("utf-8"))
        except (KeyError, ValueError, UnicodeDecodeError):
            return None, [f"{snapshot}: no readable {MANIFEST}"]
        listed = {f["path"]: f for f in manifest.get("files", [])}
        names = set(zf.namelist()) - {MANIFEST}
        for extra in sorted(names - set(listed)):
            problems.append(f"{extra}: in the snapshot but not in the manifest")
        for rel, entry in sorted(listed.items()):
            if rel not in names:
                problems.append(f"{rel}: listed in the manifest but missing from the snapshot")
                continue
            try:
                content = zf.read(rel)
            except (zipfile.BadZipFile, OSError, ValueError) as exc:
                problems.append(f"{rel}: unreadable ({exc})")
                continue
            actual = hashlib.sha256(content).hexdigest()
            if actual != entry.get("sha256"):
                problems.append(f"{rel}: SHA-256 {actual[:12]}… does not match the manifest's {str(entry.get('sha256'))[:12]}…")
            if rel.startswith("/") or ".." in rel.split("/") or not (rel.startswith("memory/") or rel.startswith("sources/")):
                problems.append(f"{rel}: path outside memory/ and sources/")
        if manifest.get("archive_sha256") != archive_digest((p, e.get("sha256")) for p, e in listed.items()):
            problems.append("manifest: archive_sha256 does not match the listed files")
    return manifest, problems


def latest_snapshot(root):
    found = sorted(p for p in backups_dir(root).glob("snapshot-*.zip") if SNAPSHOT_RE.match(p.name))
    return found[-1] if found else None


def _rotate(root, keep):
    snaps = sorted(p for p in backups_dir(root).glob("snapshot-*.zip") if SNAPSHOT_RE.match(p.name))
    removed = []
    for old in snaps[:-keep] if keep else []:
        for path in (old, old.with_suffix(".manifest.json")):
            if path.exists():
                storage.remove_file(root, path)
        removed.append(str(old))
    return removed


def _mirror_dir(root, also_to):
    """The mirror folder, checked before anything is written: a folder (made if missing) outside memory/ and sources/."""
    folder = Path(also_to).expanduser()
    if folder.exists() and not folder.is_dir():
        raise PuError("BACKUP_MIRROR_NOT_A_FOLDER", f"{also_to} exists and is not a folder",
                      "Pass a folder for {arg:also_to}: the snapshot and its manifest are copied into it.")
    real = os.path.realpath(folder)
    for inside in (paths.memory_dir(root), paths.sources_dir(root)):
        if paths.within(real, os.path.realpath(inside)):
            raise PuError("BACKUP_MIRROR_INSIDE", f"{also_to} is inside the archive's {inside.name}/",
                          "A mirror is a second copy somewhere else: pass a folder outside the archive (another disk is best).")
    try:
        folder.mkdir(mode=storage.DIR_MODE, parents=True, exist_ok=True)
    except OSError as exc:
        raise storage.io_error(exc, folder, "creating the mirror folder") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise storage.io_error(OSError(13, "Permission denied"), folder, "writing to the mirror folder")
    return folder


def backup_archive(root, also_to=None, verify=None, keep=None, now=None):
    """Snapshot the archive (or, with verify, check a snapshot) and record the backup state."""
    archive.require(root)
    if verify is not None:
        snapshot = Path(verify) if verify else latest_snapshot(root)
        if snapshot is None:
            raise PuError("BACKUP_NONE", "there is no snapshot to verify", "Make one with {cmd:backup_archive} first.")
        manifest, problems = verify_snapshot(snapshot)
        return {"verified": not problems, "snapshot": str(snapshot), "problems": problems,
                "files": len((manifest or {}).get("files", [])), "archive_sha256": (manifest or {}).get("archive_sha256")}
    if keep is not None and keep < 1:
        raise PuError("BAD_ARGUMENT", "keep must be 1 or more",
                      "{arg:keep} is how many of the newest snapshots to keep; leave it out to keep them all.")
    mirror_dir = _mirror_dir(root, also_to) if also_to else None
    moment = now or timeutil.now()
    with storage.archive_lock(root, "backup"):
        manifest = create_snapshot(root, moment)
        snapshot = Path(manifest["snapshot"])
        _m, problems = verify_snapshot(snapshot)
        if problems:
            raise PuError("BACKUP_VERIFY_FAILED", f"the new snapshot did not verify: {problems[0]}", "Check the disk; the archive itself is unchanged.")
        mirrored = None
        if mirror_dir is not None:
            mirrored = mirror_dir / snapshot.name
            try:
                storage.copy_out(snapshot, mirrored)
                storage.copy_out(snapshot.with_suffix(".manifest.json"), mirrored.with_suffix(".manifest.json"))
            except PuError as exc:
                raise PuError("BACKUP_MIRROR_FAILED", f"copy to {also_to} failed: {exc.message}",
                              f"The snapshot itself is saved at {snapshot}.") from None
            _m, mirror_problems = verify_snapshot(mirrored)
            if mirror_problems:
                raise PuError("BACKUP_MIRROR_FAILED", f"the mirror copy did not verify: {mirror_problems[0]}", f"The snapshot is at {snapshot}.")
        removed = _rotate(root, keep) if keep else []
        state = {"last_backup_at": manifest["created_at"], "snapshot": str(snapshot), "mirror": str(mirrored) if mirrored else None,
                 "archive_sha256": manifest["archive_sha256"], "files": manifest["count"], "bytes": manifest["bytes"]}
        storage.atomic_write_json(root, paths.backup_state_path(root), state)
    return {"snapshot": str(snapshot), "manifest": str(snapshot.with_suffix(".manifest.json")), "mirror": state["mirror"],
            "files": manifest["count"], "bytes": manifest["bytes"], "archive_sha256": manifest["archive_sha256"],
            "rotated_out": removed, "verified": True, "created_at": manifest["created_at"]}


def log_line(result):
    """The one line cron keeps."""
    if "verified" in result and "created_at" not in result:
        state = "ok" if result["verified"] else f"FAILED ({len(result['problems'])} problems)"
        return f"{timeutil.now_iso()} verify {state} {result['snapshot']}"
    return (f"{result['created_at']} backup ok {result['snapshot']} files={result['files']} bytes={result['bytes']} "
            f"sha256={result['archive_sha256']}")


def reminder(root, now=None, days=None, once_a_day=False):
    """A note when the last backup is missing or older than the reminder period (None when fine).

    once_a_day (a turn's preflight, under the archive lock): only the first turn of a day carries
    it, so an agent is told once, not on every message of a long chat."""
    from . import config

    days = config.load(root)["backup_reminder_days"] if days is None else days
    now = now or timeutil.now()
    try:
        state = storage.read_json(paths.backup_state_path(root))
    except (OSError, ValueError):
        note = {"code": "BACKUP_MISSING", "message": "this archive has never been backed up",
                "hint": "Make a snapshot with {cmd:backup_archive}; {arg:also_to} adds a second copy."}
    else:
        last = timeutil.parse_instant(state.get("last_backup_at") or "1970-01-01")
        age = (now - last).days
        if age < days:
            return None
        note = {"code": "BACKUP_OLD", "message": f"the last backup is {age} days old ({state.get('last_backup_at')})",
                "hint": "Make a snapshot with {cmd:backup_archive}."}
    if once_a_day and not _first_today(root, now.date().isoformat()):
        return None
    return note


def _first_today(root, today):
    """Is this the day's first reminder? Marks the day as reminded (views/backup-reminded.json, derived:
    losing it only shows the reminder again; a full or read-only disk never fails the turn)."""
    marker = paths.views_dir(root) / "backup-reminded.json"
    try:
        if storage.read_json(marker).get("on") == today:
            return False
    except (OSError, ValueError, AttributeError):
        pass
    try:
        storage.atomic_write_json(root, marker, {"on": today})
    except (OSError, PuError):
        pass
    return True
