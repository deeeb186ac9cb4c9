"""Completing what an interrupted writer left: a forget whose tombstone is on disk, a
restore whose journal is on disk, staging areas nothing will use any more.

`finish(root)` runs whenever a process takes an archive's lock (storage.LOCK_HOOKS,
registered in archive.py) and from `derivation_ledger --repair`. When nothing is
unfinished it costs two stat calls.
"""

import os

from . import paths

REPAIR = "derivation_ledger repair"  # finishes them itself, and reports what it finished
_quiet = {}  # root -> signature of forgotten.jsonl when it was last seen with nothing pending


def _signature(path):
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def finish(root):
    """Finish interrupted forgets and restores; the caller holds the lock. Returns what was finished."""
    key = os.fspath(root)  # as given: another spelling of the same root only costs one more check
    stones = paths.forgotten_path(root)
    sig = _signature(stones)
    staging = os.path.isdir(paths.staging_dir(root))
    if not staging and (sig is None or not sig[1] or _quiet.get(key) == sig):  # no tombstone, or none new
        return {}
    out = {}
    if staging:
        from . import restore

        out["restores"] = restore.finish_pending(root)
    if sig is not None:
        from . import forget

        out["forgets"] = forget.finish_pending(root)
    _quiet[key] = _signature(stones)
    return {k: v for k, v in out.items() if v}


def on_lock(root, operation):
    if operation != REPAIR:
        finish(root)
