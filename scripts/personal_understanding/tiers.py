"""Capture tiers and archive size."""

import os

from . import paths


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
