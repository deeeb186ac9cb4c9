"""The audit dashboard: data for the static page under memory/v2/views/dashboard/.

`build_data` reads the archive (index, capture files for quotes, validation) and
returns one dict. `write_data` splits it into script files the page loads from
disk with no server: `data/dashboard_data.js` (bounded: overview, manifests) and
`data/chunks/*.js` loaded on demand: list pages of PAGE_ROWS rows, detail
shards keyed by a hash of the id, so any `#record/<id>` finds its shard without
an index, and the search text (`search-<n>.js`), scanned in the page.
`open_dashboard` rebuilds only when `fingerprint` changed (or the data is from
an earlier day: due dates and backup age move with the clock), copies the
static app beside the data and opens it. Everything here is derived and
disposable; the page itself never writes.
"""

import json
import os
import webbrowser
from pathlib import Path

from . import archive, paths, storage, timeutil
from .dashboard_data import FORMAT, build_data, dashboard_dir, data_path, fingerprint  # noqa: F401 (the module's API)
from .dashboard_words import search_chunks
from .errors import PuError

PAGE_ROWS = 500  # rows per list chunk file
SHARD_ITEMS = 200  # items per detail shard (on average)
APP_FILES = ("index.html", "style.css", "app.js", "search.js", "pages.js", "records.js", "graph.js")

# --- locations ---------------------------------------------------------------

def data_dir(root):
    return dashboard_dir(root) / "data"


def meta_path(root):
    return data_dir(root) / "meta.json"


def app_source_dir():
    return paths.shipped_dir("dashboard")


def shard_of(item_id, shards):
    """FNV-1a over UTF-16 code units (what the page computes with charCodeAt)."""
    h = 0x811C9DC5
    raw = item_id.encode("utf-16-le")
    for i in range(0, len(raw), 2):
        h ^= raw[i] | (raw[i + 1] << 8)
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h % shards


# --- writing -----------------------------------------------------------------

def _js(payload):
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _chunk(name, build, payload):
    return f"PU_CHUNK({_js(name)},{_js(build)},{_js(payload)});\n".encode("utf-8")


def write_data(root, now=None):
    """Build the data and write it (with the static app) under memory/v2/views/dashboard/."""
    data = build_data(root, now)
    build = {"fingerprint": data["fingerprint"], "generated_at": data["generated_at"],
             "build_id": f"{data['generated_at']}-{os.urandom(4).hex()}"}
    files = {}
    manifest = {}
    for name, rows in data["lists"].items():
        chunks = [rows[i:i + PAGE_ROWS] for i in range(0, len(rows), PAGE_ROWS)] or [[]]
        manifest[name] = {"total": len(rows), "chunk_rows": PAGE_ROWS, "chunks": len(chunks)}
        for n, part in enumerate(chunks):
            files[f"list-{name}-{n}"] = part
    shards = {}
    for family, items in data["items"].items():
        count = max(1, -(-len(items) // SHARD_ITEMS))
        shards[family] = count
        parts = [{} for _ in range(count)]
        for item_id, item in items.items():
            parts[shard_of(item_id, count)][item_id] = item
        for n, part in enumerate(parts):
            files[f"item-{family}-{n}"] = part
    search = search_chunks(data["search"])
    for n, part in enumerate(search):
        files[f"search-{n}"] = part
    files["fold-zh"] = data["fold_zh"]  # read with the search chunks: 媽 finds 妈
    files["graph"] = data["graph"]
    files["diagnostics"] = data["diagnostics"]
    main = {k: data[k] for k in ("format", "generated_at", "fingerprint", "archive", "overview", "filters")}
    main.update(build=build, lists=manifest, shards=shards,
                search={"chunks": len(search), "docs": len(data["search"]), "chars": sum(len(p["text"]) for p in search)})
    out_dir, chunk_dir = data_dir(root), data_dir(root) / "chunks"
    written, total = 0, 0
    with storage.archive_lock(root, "dashboard"):
        from .views import make_room

        make_room(root, chunk_dir)
        install_app(root)
        for name, payload in files.items():
            blob = _chunk(name, build, payload)
            storage.atomic_write(root, chunk_dir / f"{name}.js", blob)
            written, total = written + 1, total + len(blob)
        blob = f"window.PU_DATA = {_js(main)};\n".encode("utf-8")
        storage.atomic_write(root, data_path(root), blob)
        storage.atomic_write(root, out_dir / "stamp.js", f"PU_STAMP({_js(build)});\n".encode("utf-8"))
        storage.atomic_write_json(root, meta_path(root), dict(build, format=FORMAT))
        removed = 0
        for stale in sorted(chunk_dir.glob("*.js")):
            if stale.stem not in files:  # pages of an earlier, larger build (may hold forgotten words)
                storage.remove_file(root, stale)
                removed += 1
    return {"data": str(data_path(root)), "page": str(dashboard_dir(root) / "index.html"),
            "fingerprint": data["fingerprint"], "generated_at": data["generated_at"], "files": written + 3,
            "bytes": total + len(blob), "main_bytes": len(blob), "removed": removed,
            "records": data["overview"]["counts"]["records"], "captures": data["overview"]["counts"]["captures"]}


def install_app(root):
    """Copy the static app beside this archive's data (only files whose bytes differ). Caller holds the lock."""
    source = app_source_dir()
    copied = []
    for name in APP_FILES:
        try:
            blob = (source / name).read_bytes()
        except FileNotFoundError:
            raise PuError("DASHBOARD_APP_MISSING", f"{source / name} is missing",
                          "Reinstall: the dashboard/ folder ships with the skill and with the package.") from None
        target = dashboard_dir(root) / name
        if not target.is_file() or target.read_bytes() != blob:
            storage.atomic_write(root, target, blob)
            copied.append(name)
    return copied


def _stale_reason(root, fp, today):
    try:
        meta = storage.read_json(meta_path(root))
    except (OSError, ValueError, UnicodeDecodeError):  # missing, garbage, or a file where its folder belongs
        return "no dashboard data yet"
    if not data_path(root).is_file():
        return "data file missing"
    if meta.get("format") != FORMAT:
        return "data format changed"
    if meta.get("fingerprint") != fp:
        return "archive changed"
    if (meta.get("generated_at") or "")[:10] != today:
        return "data is from an earlier day (due dates and backup age moved)"
    return None


def _open_in_browser(uri):
    """Open in a graphical browser; never a console one (it would take over this terminal or the MCP pipe)."""
    try:
        browser = webbrowser.get()
        return type(browser) is not webbrowser.GenericBrowser and bool(browser.open(uri))
    except webbrowser.Error:
        return False


def open_dashboard(root, no_open=False, now=None):
    """Write (when stale) and open this archive's dashboard; returns the page and data paths."""
    archive.require(root)
    moment = now or timeutil.now()
    fp = fingerprint(root)
    reason = _stale_reason(root, fp, timeutil.iso(moment)[:10])
    out = {"page": str(dashboard_dir(root) / "index.html"), "data": str(data_path(root))}
    if reason:
        written = write_data(root, now=moment)
        fp = written["fingerprint"]
        out.update(rebuilt=True, reason=reason, generated_at=written["generated_at"], bytes=written["bytes"])
    else:
        with storage.archive_lock(root, "dashboard"):
            install_app(root)
        out.update(rebuilt=False, generated_at=storage.read_json(meta_path(root)).get("generated_at"))
    out["fingerprint"] = fp
    out["opened"] = False if no_open else _open_in_browser(Path(out["page"]).resolve().as_uri())
    if not no_open and not out["opened"]:
        out["hint"] = f"No browser could be started here; open {out['page']} yourself."
    return out
