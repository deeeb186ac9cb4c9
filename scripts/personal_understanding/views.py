"""Derived views: everything under memory/v2/views, disposable and rebuildable.

`rebuild_views` drops them and regenerates them from the sources of truth
(captures, logs, records); the result equals what incremental updates had
produced. `discard` is used after a log is rewritten (forget, restore).
"""

import os
from pathlib import Path

from . import archive, ledger, paths, storage, timeutil
from .archive_index import forget_cached, open_index
from .errors import PuError


def discard(root):
    """Remove the derived files; the next read rebuilds them. Caller holds the lock."""
    forget_cached(root)
    from .retrieval import index as recall_index

    recall_index.forget_cached()
    views = paths.views_dir(root)
    if not views.is_dir():
        return []
    removed = []
    for dirpath, _dirs, files in os.walk(views, topdown=False):
        for name in files:
            storage.remove_file(root, os.path.join(dirpath, name))
            removed.append(name)
    return removed


def make_room(root, folder):
    """Before writing under views/: a plain file where one of its folders belongs is derived debris; remove it.

    Caller holds the lock. Links are left alone (they are refused where they are followed).
    """
    views = paths.views_dir(root)
    current = views
    for part in (Path(folder).relative_to(views).parts if Path(folder) != views else ()):
        current = current / part
        if os.path.lexists(current) and not current.is_dir() and not current.is_symlink():
            storage.remove_file(root, current)
            break


def rebuild_views(root, now=None):
    archive.require(root)
    moment = now or timeutil.now()
    with storage.archive_lock(root, "rebuild_views"):
        from .retrieval.index import build_under_way, open_recall

        if build_under_way(root):  # that build makes what this would: deleting its file under it wastes it
            raise PuError("INDEX_BUILDING", "the recall index is being built by another process (a server's start-up)",
                          "That build makes what this command would; wait for it to end (about a minute at 100 000 "
                          "messages), then run this again if it is still needed.")
        discard(root)
        index = open_index(root)
        recall = open_recall(root)
        ledger.write_projection(root, timeutil.iso(moment))
        rebuilt = ["index.sqlite (archive index)", "index.sqlite (recall index and archive lexicon)",
                   "memory/derivation-ledger.json"]
        try:
            from . import dashboard
        except ImportError:
            dashboard = None
        if dashboard is not None:
            dashboard.write_data(root)
            rebuilt.append("dashboard data")
    return {"rebuilt": rebuilt, "generated_at": timeutil.iso(moment),
            "records": index.count("SELECT COUNT(*) FROM records"), "captures": index.count("SELECT COUNT(*) FROM captures"),
            "recall_documents": recall.total_docs(), "archive_words": len(recall.archive_words())}
