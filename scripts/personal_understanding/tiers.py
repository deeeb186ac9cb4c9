"""Capture tiers and archive size.

Tiers are computed, never moved: a capture's id, bytes, speaker and source
stay where they are. Short-term is the newest material (the last few days, at
most so many characters): the per-turn context reads only that. Long-term is
the next stretch of active text; everything older is the archive tier. Search
reaches every tier.
"""

import datetime as dt
import os

from . import config, paths, timeutil
from .archive_index import open_index

TIERS = ("short_term", "long_term", "archive")


def assign(root, now=None):
    """[(capture_id, tier, chars)] newest first."""
    settings = config.load(root)
    moment = now or timeutil.now()
    cutoff = timeutil.iso(moment - dt.timedelta(days=settings["short_term_days"]))
    rows = open_index(root).db.execute(
        "SELECT capture_id, captured_at, COALESCE(chars, 0) FROM captures WHERE status != 'forgotten' "
        "ORDER BY captured_at DESC, capture_id DESC").fetchall()
    out, short, long_ = [], 0, 0
    for capture_id, captured_at, chars in rows:
        if captured_at and captured_at >= cutoff and short + chars <= settings["short_term_chars"]:
            short += chars
            tier = "short_term"
        elif long_ + chars <= settings["long_term_chars"]:
            long_ += chars
            tier = "long_term"
        else:
            tier = "archive"
        out.append((capture_id, tier, chars))
    return out


def summary(root, now=None):
    """Counts and characters per tier, and bytes on disk."""
    counts = {t: {"captures": 0, "chars": 0} for t in TIERS}
    for _cid, tier, chars in assign(root, now):
        counts[tier]["captures"] += 1
        counts[tier]["chars"] += chars
    counts["bytes_on_disk"] = archive_bytes(root)
    return counts


def check_capacity(root, adding):
    """Refuse a write that would take the archive past max_archive_bytes (0: no cap). Nothing is deleted to make room."""
    limit = config.load(root)["max_archive_bytes"]
    if not limit:
        return
    used = archive_bytes(root)
    if used + adding > limit:
        from .errors import PuError

        raise PuError("ARCHIVE_FULL", f"the archive holds {used} bytes; adding {adding} would pass its cap of {limit}",
                      "Raise max_archive_bytes in memory/v2/config.json or forget material explicitly; nothing is deleted automatically.")


def archive_bytes(root):
    """Bytes on disk under memory/ and sources/ (views excluded: they are disposable)."""
    total = 0
    views = os.fspath(paths.views_dir(root))
    for top in (paths.memory_dir(root), paths.sources_dir(root)):
        for dirpath, dirnames, filenames in os.walk(top):
            if dirpath == views:
                dirnames[:] = []
                continue
            for name in filenames:
                try:
                    total += os.lstat(os.path.join(dirpath, name)).st_size
                except FileNotFoundError:
                    pass
    return total
