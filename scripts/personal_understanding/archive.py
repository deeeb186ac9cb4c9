"""Creating an archive and checking that one exists."""

import os

from . import paths, storage
from .errors import PuError

MEMORY_README = """# memory/

The derived side of a Personal Understanding archive: turn receipts, the
derivation ledger, derived records (append-only versions), follow-ups,
feedback, tombstones and retrieval traces, all plain JSON / JSONL.
`v2/views/` holds derived, disposable files (indexes, dashboard data):
deleting it loses nothing.
"""

SOURCES_README = """# sources/

The verbatim side of a Personal Understanding archive: every captured message
as one write-once JSON file under `conversation/YYYY/MM/`, and attachments'
original bytes under `attachments/`, addressed by SHA-256. Nothing here is
ever edited in place.
"""


def _finish_interrupted(root, operation):
    from .recovery import on_lock

    on_lock(root, operation)


storage.LOCK_HOOKS.append(_finish_interrupted)


def exists(root):
    return paths.v2_dir(root).is_dir()


def require(root):
    if not exists(root):
        raise PuError(
            "NO_ARCHIVE",
            f"no archive at {root} (memory/v2 is missing)",
            f"Create it with {{cmd:init_archive}} (archive root {root}).",
        )


def init_archive(root):
    """Create the layout. Idempotent: a second run changes nothing and says so."""
    root = os.fspath(root)
    try:
        if not os.path.isdir(root):
            os.makedirs(root, mode=storage.DIR_MODE)  # a new archive is the owner's alone
        storage.checked_path(root, paths.memory_dir(root), leaf_dir=True)  # the lock file lives here
    except OSError as exc:
        raise storage.io_error(exc, paths.memory_dir(root), "creating") from None
    created = []
    with storage.archive_lock(root, "init_archive"):
        for rel in paths.DIRECTORIES:
            target = os.path.join(root, rel)
            if not os.path.isdir(target):
                storage.ensure_dir(root, target)
                created.append(rel + "/")
        for name in paths.LOG_FILES:
            if storage.create_empty(root, paths.v2_dir(root) / name):
                created.append(f"memory/v2/{name}")
        for rel, text in (("memory/README.md", MEMORY_README), ("sources/README.md", SOURCES_README)):
            target = os.path.join(root, rel)
            if not os.path.exists(target):
                storage.atomic_write(root, target, text.encode("utf-8"))
                created.append(rel)
    return {
        "root": str(root),
        "created": created,
        "changed": bool(created),
        "message": "archive created" if created else "archive already initialised; nothing changed",
    }
