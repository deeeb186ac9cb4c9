"""Archive layout. Every path the code uses is built here.

The archive root holds `memory/` (derived side) and `sources/` (verbatim side).
Library functions receive `root`; only entry points resolve it (see `resolve_root`).
"""

import os
import re
import sys
from pathlib import Path

from .errors import PuError

PACKAGE_DIR = Path(__file__).resolve().parent
SKILL_DIR = PACKAGE_DIR.parents[1]
HOME_FALLBACK = Path.home() / ".personal-understanding"

ID_RE = re.compile(r"[a-z0-9][a-z0-9._-]{0,127}")  # whole string only: see is_id


def is_skill_folder(path):
    return (Path(path) / "SKILL.md").is_file() and (Path(path) / "scripts").is_dir()


def default_root():
    """The skill folder when running from one, else a folder in the user's home."""
    return SKILL_DIR if is_skill_folder(SKILL_DIR) else HOME_FALLBACK


def resolve_root(arg=None, environ=None):
    """--root beats PU_HOME beats the default. Entry points only."""
    environ = os.environ if environ is None else environ
    chosen = arg or environ.get("PU_HOME") or default_root()
    return Path(chosen).expanduser().resolve()


def shipped_dir(name):
    """A folder that ships with the code (resources, dashboard): in the skill folder, else where pip put it."""
    import site

    share = Path("share") / "personal-understanding" / name
    candidates = [SKILL_DIR / name, Path(sys.prefix) / share, Path(site.USER_BASE or "~") / share]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    return candidates[0]


def resources_dir():
    """Read-only data shipped with the code (word lists, lexicon, schemas)."""
    return shipped_dir("resources")


# --- ids -------------------------------------------------------------------

def is_id(value):
    """A well-formed id. fullmatch: `$` would accept a trailing newline, making a look-alike file name."""
    return isinstance(value, str) and ID_RE.fullmatch(value) is not None and ".." not in value


def check_id(value, what="id"):
    """Validate an id before any path is built from it."""
    if not is_id(value):
        raise PuError(
            "BAD_ID",
            f"{what} {value!r} is not a valid id",
            "Ids are 1-128 characters of lowercase a-z, 0-9, '.', '_' or '-', starting with a letter or digit.",
        )
    return value


def new_id(prefix, moment):
    """Readable and sortable: prefix-YYYYMMDD-HHMMSS-xxxxxxxx."""
    return f"{prefix}-{moment.strftime('%Y%m%d-%H%M%S')}-{os.urandom(4).hex()}"


def fresh_id(make, taken):
    """A generated id that is not taken yet (random parts can collide; never reuse one)."""
    for _ in range(50):
        candidate = make()
        if not taken(candidate):
            return candidate
    raise PuError("ID_EXHAUSTED", "could not generate an unused id", "Pass an explicit id.")


# --- layout ----------------------------------------------------------------

def memory_dir(root):
    return Path(root) / "memory"


def sources_dir(root):
    return Path(root) / "sources"


def v2_dir(root):
    return memory_dir(root) / "v2"


def lock_path(root):
    return memory_dir(root) / "archive.lock"


def config_path(root):
    return v2_dir(root) / "config.json"


def receipts_path(root):
    return v2_dir(root) / "receipts.jsonl"


def ledger_events_path(root):
    return v2_dir(root) / "ledger.jsonl"


def ledger_projection_path(root):
    return memory_dir(root) / "derivation-ledger.json"


def records_dir(root):
    return v2_dir(root) / "records"


def records_path(root, kind):
    return records_dir(root) / f"{kind}.jsonl"


def followups_path(root):
    return v2_dir(root) / "followups.jsonl"


def feedback_path(root):
    return v2_dir(root) / "feedback.jsonl"


def forgotten_path(root):
    return v2_dir(root) / "forgotten.jsonl"


def traces_dir(root):
    return v2_dir(root) / "traces"


def trace_path(root, day):
    return traces_dir(root) / f"{day}.jsonl"


def backup_state_path(root):
    return v2_dir(root) / "backup-state.json"


def views_dir(root):
    return v2_dir(root) / "views"


def staging_dir(root):
    """Work areas of restores and backup rewrites: inside the root, outside what backups and validation read."""
    return memory_dir(root) / "staging"


def index_db_path(root):
    return views_dir(root) / "index.sqlite"


def recall_build_lock_path(root):
    """Held by whoever builds the recall index from nothing (retrieval/index.py)."""
    return views_dir(root) / "recall-build.lock"


def verified_db_path(root):
    return views_dir(root) / "verified.sqlite"


def conversation_dir(root):
    return sources_dir(root) / "conversation"


def capture_relpath(capture_id, captured_at):
    """sources/conversation/YYYY/MM/<capture_id>.json, relative to the root."""
    check_id(capture_id, "capture id")
    return f"sources/conversation/{captured_at[:4]}/{captured_at[5:7]}/{capture_id}.json"


# capture_relpath as an SQL expression over a row's capture_id and captured_at (archive_index).
CAPTURE_RELPATH_SQL = ("'sources/conversation/' || substr(captured_at, 1, 4) || '/' || substr(captured_at, 6, 2) "
                       "|| '/' || capture_id || '.json'")


def attachments_dir(root):
    return sources_dir(root) / "attachments"


def attachment_relpath(sha256):
    if not re.fullmatch(r"[0-9a-f]{64}", sha256 or ""):
        raise PuError("BAD_HASH", f"{sha256!r} is not a SHA-256 hex digest", "A SHA-256 is 64 lowercase hex characters.")
    return f"sources/attachments/{sha256[:2]}/{sha256}"


def inside_root(root, relpath):
    """Resolve a stored relative path, refusing anything that leaves the archive.

    Worked on strings (Path.resolve is os.path.realpath too): every read of a capture asks it."""
    base = os.path.realpath(root)
    target = os.path.realpath(os.path.join(base, relpath))
    if not within(target, base):
        if within(os.path.normpath(os.path.join(base, relpath)), base):  # inside by name, outside through a link
            raise symlink_refused(relpath)
        raise PuError("PATH_ESCAPE", f"{relpath!r} points outside the archive", "Stored paths are relative to the archive root.")
    return Path(target)


def within(path, base):
    """Is `path` the folder `base` or under it (both absolute and normalised)?"""
    if os.name == "nt":  # names differ only by case there
        path, base = os.path.normcase(path), os.path.normcase(base)
    return path == base or path.startswith(base if base.endswith(os.sep) else base + os.sep)


def symlink_refused(path):
    return PuError("ARCHIVE_SYMLINK", f"{path} is or goes through a symbolic link inside the archive; nothing is read, "
                   "written or deleted through it",
                   "Put a real folder or file in its place (move what the link points at back into the archive), "
                   "then retry; {cmd:validate_memory} lists every link.", {"path": str(path)})


def rel(root, path):
    return Path(path).resolve().relative_to(Path(root).resolve()).as_posix()


# Files that always exist in an initialised archive (created empty by init).
LOG_FILES = ("receipts.jsonl", "ledger.jsonl", "followups.jsonl", "feedback.jsonl", "forgotten.jsonl")
DIRECTORIES = (
    "memory/v2/records",
    "memory/v2/traces",
    "memory/v2/views",
    "sources/conversation",
    "sources/attachments",
)
