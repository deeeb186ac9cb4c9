"""Archive settings: documented defaults, overridable in memory/v2/config.json."""

import json

from . import paths
from .errors import PuError

DEFAULTS = {
    # One message may hold at most this many UTF-8 bytes (a long letter fits; a book does not).
    "max_message_bytes": 256 * 1024,
    "max_attachment_bytes": 50 * 1024 * 1024,
    # A history file to import is read whole: a year of heavy chat exports fits, /dev/zero does not.
    "max_import_bytes": 128 * 1024 * 1024,
    # Hard cap on memory/ + sources/ together; 0 means no cap. Writes over it are refused.
    "max_archive_bytes": 0,
    "short_term_days": 3,
    "short_term_chars": 100_000,
    "long_term_chars": 1_000_000,
    "backup_reminder_days": 7,
    # Retrieval traces (memory/v2/traces/, one file per day) older than this are removed; 0 keeps them all.
    "trace_retention_days": 365,
}


def load(root):
    """Defaults overlaid with the archive's config.json (unknown keys are refused)."""
    settings = dict(DEFAULTS)
    path = paths.config_path(root)
    try:
        with open(path, "rb") as handle:
            data = json.loads(handle.read().decode("utf-8"))
    except FileNotFoundError:
        return settings
    except (ValueError, UnicodeDecodeError) as exc:
        raise PuError("CONFIG_INVALID", f"{path} is not valid JSON: {exc}", "Fix or remove the file; defaults apply without it.") from None
    unknown = sorted(set(data) - set(DEFAULTS))
    if unknown or not isinstance(data, dict):
        raise PuError("CONFIG_INVALID", f"{path} has unknown settings {unknown}", f"Known settings: {', '.join(sorted(DEFAULTS))}.")
    for key, value in data.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise PuError("CONFIG_INVALID", f"{path}: {key} must be a non-negative integer", "Set it to a whole number of 0 or more (0 switches a cap off), or remove it to use the default.")
        settings[key] = value
    return settings
