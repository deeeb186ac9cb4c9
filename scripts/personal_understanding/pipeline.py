"""Pipeline pages: one read-only HTML page per turn, from receipt to retrievals.

`pipeline_view` writes memory/v2/views/pipeline/<turn_id>.html: the receipt's
decision, the capture(s) with their SHA-256 (re-hashed now), the records derived
from each capture, the ledger closure, and every retrieval traced with the
turn's capture id (tokens with weights, selected and held-back items, association
paths). The page is self-contained (inline style, no script, no network),
every piece of the user's text is HTML-escaped, words that no longer match
their SHA-256 are withheld, and its records, captures, sessions and
follow-ups link into the dashboard beside it (which links back to this page).
"""

import html
import os
from pathlib import Path

from . import archive, paths, storage, timeutil
from .archive_index import open_index
from .capture import checked_text, read_capture
from .errors import PuError
from .textinput import sha256_hex

MAX_LATEST = 500
DASHBOARD = "../dashboard/index.html"  # the dashboard page, from a pipeline page beside it
STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,"Noto Sans","Noto Sans CJK SC","PingFang SC",
"Hiragino Sans GB","Microsoft YaHei","WenQuanYi Micro Hei",sans-serif;color:#1d2327;background:#f6f7f9;margin:0;line-height:1.5}
main{max-width:1100px;margin:0 auto;padding:1rem}
h1{font-size:1.4rem;margin:.3rem 0}h2{font-size:1.1rem;margin:1.6rem 0 .4rem;border-bottom:1px solid #dde2e6;padding-bottom:.2rem}
h3{font-size:.98rem;margin:1rem 0 .3rem}
code{font-family:ui-monospace,Menlo,Consolas,"Liberation Mono",monospace;font-size:.86em;word-break:break-all}
table{border-collapse:collapse;width:100%;background:#fff;margin:.3rem 0}
th,td{text-align:left;vertical-align:top;padding:.25rem .5rem;border-bottom:1px solid #dde2e6}
th{background:#eef1f4;font-weight:600}table.kv th{width:13rem;background:none;color:#5f6b73;font-weight:500}
.words{white-space:pre-wrap;background:#f3efe6;border-left:3px solid #c9b88f;padding:.6rem .8rem;border-radius:4px}
.ok{color:#1e7b34;font-weight:600}.bad{color:#b3261e;font-weight:600}.muted{color:#5f6b73}
.box{background:#fff;border:1px solid #dde2e6;border-radius:8px;padding:.6rem .9rem;margin:.5rem 0}
.step{display:inline-block;background:#1f5fa8;color:#fff;border-radius:999px;padding:0 .55rem;margin-right:.4rem;font-size:.85rem}
a{color:#1f5fa8}
"""


def e(value):
    """HTML-escape anything (the user's words included)."""
    return html.escape("" if value is None else str(value), quote=True)


def _yes(value):
    return "yes" if value else "no"


def _kv(rows):
    cells = "".join(f"<tr><th>{e(k)}</th><td>{v}</td></tr>" for k, v in rows if v not in (None, ""))
    return f'<table class="kv">{cells}</table>'


def _table(heads, rows, empty="none"):
    if not rows:
        return f'<p class="muted">{e(empty)}</p>'
    head = "".join(f"<th>{e(h)}</th>" for h in heads)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _record_link(rid, index):
    rec = index.record(rid)
    title = (rec or {}).get("title") or rid
    kind = (rec or {}).get("kind", "missing")
    href = DASHBOARD + "#record/" + e(rid)
    return f'<a href="{href}">{e(title)}</a> <code>{e(rid)}</code> <span class="muted">{e(kind)}</span>'


def _receipt_section(receipt):
    if receipt is None:
        return ('<h2 id="receipt"><span class="step">1</span>Receipt</h2>'
                '<p class="muted">No receipt for this turn (material imported from history carries none).</p>')
    reasons = _table(["code", "evidence"], [[e(r.get("code")), e(r.get("evidence"))] for r in receipt.get("reasons") or ()],
                     "no personal reasons found")
    suppressed = _table(["code", "evidence"], [[e(r.get("code")), e(r.get("evidence"))]
                                               for r in receipt.get("reasons_suppressed") or ()], "none suppressed")
    decision = "full: capture, read, derive or close, gate" if receipt.get("tier") == "full" else "skip: nothing to save"
    rows = [("tier", f"<b>{e(receipt.get('tier'))}</b> ({e(decision)}); requested {e(receipt.get('tier_requested'))}"),
            ("signal", e(receipt.get("signal"))),
            ("requires personal understanding", _yes(receipt.get("requires_personal_understanding"))),
            ("low information", _yes(receipt.get("low_information"))),
            ("required actions", e(", ".join(receipt.get("required_actions") or ()) or "none")),
            ("vetoed feeling words", e(", ".join(str(v) for v in receipt.get("vetoed") or ()))),
            ("message SHA-256", f"<code>{e(receipt.get('message_sha256'))}</code>"),
            ("message characters", e(receipt.get("message_chars"))),
            ("created", e(receipt.get("created_at"))), ("session", e(receipt.get("session_id"))),
            ("receipt version", e(receipt.get("version")) + (f" (upgraded from {e(receipt['upgraded_from'])})"
                                                              if receipt.get("upgraded_from") else "")),
            ("classifier", e(receipt.get("classifier_version"))), ("language", e(receipt.get("language")))]
    return (f'<h2 id="receipt"><span class="step">1</span>Receipt: the decision</h2>{_kv(rows)}'
            f"<h3>Reasons</h3>{reasons}<h3>Suppressed reasons</h3>{suppressed}")


def _dashboard(fragment, text):
    return f'<a href="{DASHBOARD}#{e(fragment)}">{e(text)}</a>'


def _hash_now(root, doc):
    """The SHA-256 of a capture's stored bytes as they are now (shown beside the registered one)."""
    if doc.get("kind") == "attachment":
        blob = paths.inside_root(root, doc.get("blob") or "")
        return sha256_hex(blob.read_bytes()) if blob.is_file() else None
    return sha256_hex((doc.get("text") or "").encode("utf-8", "surrogatepass"))


def _capture_section(root, index, cid, receipt):
    row = index.capture(cid) or {}
    path = row.get("path") or ""
    recorded = row.get("utf8_sha256") or row.get("sha256")
    words, note = None, "The capture file is missing."
    try:
        if row.get("status") == "forgotten":  # its tombstone is honoured even while its file is still on disk
            raise PuError("CAPTURE_FORGOTTEN", "forgotten on request", "Nothing to show: the words are gone.")
        doc = read_capture(root, path)
        now_hash = _hash_now(root, doc)
        if doc.get("kind") == "attachment":
            words = f"[attachment {doc.get('name')}, {doc.get('bytes')} bytes, {doc.get('media_type')}]"
        else:
            words = checked_text(root, path, recorded)
    except PuError as exc:
        if exc.code == "CAPTURE_TAMPERED":
            note = "The words are withheld: the file no longer matches its SHA-256."
        elif exc.code == "CAPTURE_FORGOTTEN":
            note, now_hash = "Forgotten on request: the words are gone.", None
        else:
            now_hash = f"unreadable: {exc.message}"
    verified = now_hash == recorded
    same_as_receipt = receipt is not None and recorded == receipt.get("message_sha256")
    said = row.get("occurred_at") or row.get("captured_at")
    rows = [("capture id", f"<code>{e(cid)}</code> {_dashboard('capture/' + cid, 'open in the dashboard')}"),
            ("file", f"<code>{e(os.path.join(str(Path(root).resolve()), path))}</code>"),
            ("SHA-256 (registered)", f"<code>{e(recorded)}</code>"),
            ("SHA-256 (file now)", f"<code>{e(now_hash)}</code> " + ('<span class="ok">matches</span>' if verified
                                                                      else '<span class="bad">DOES NOT MATCH</span>')),
            ("same bytes as preflighted", ('<span class="ok">yes</span>' if same_as_receipt else
                                           '<span class="muted">no receipt hash to compare</span>' if receipt is None
                                           else '<span class="muted">no (an attachment or a different message)</span>')),
            ("said", e(said) + ("" if row.get("occurred_at") else ' <span class="muted">(when saved: no other time given)</span>')),
            ("saved", e(row.get("captured_at"))),
            ("session", _dashboard("session/" + row["session_id"], row["session_id"]) if row.get("session_id") else None),
            ("speaker", e(row.get("speaker"))), ("source", e(row.get("source"))), ("characters", e(row.get("chars")))]
    text = f'<div class="words">{e(words)}</div>' if words is not None else f'<p class="bad">{e(note)}</p>'
    return f'<div class="box capture" id="capture-{e(cid)}">{_kv(rows)}<h3>The words</h3>{text}</div>'


def _records_section(index, cid):
    rids = [r for r in index.records_citing(cid) if (index.record(r) or {}).get("status") != "forgotten"]
    items = "".join(f"<li>{_record_link(r, index)}</li>" for r in rids)
    fus = [obj for obj in (index.followup(f) for (f,) in index.db.execute(
        "SELECT id FROM followups WHERE json_extract(data,'$.capture_id')=? ORDER BY id", (cid,))) if obj]
    fu_items = "".join(f"<li>{_dashboard('followup/' + f['id'], f.get('question'))} <code>{e(f['id'])}</code> "
                       f"<span class=\"muted\">{e(f.get('status'))}, due {e(f.get('due_at') or 'undated')}</span></li>" for f in fus)
    out = f"<h3>From capture <code>{e(cid)}</code></h3>"
    out += f"<ul>{items}</ul>" if items else '<p class="muted">No record cites this capture.</p>'
    if fu_items:
        out += f"<h3>Follow-ups raised</h3><ul>{fu_items}</ul>"
    return out


def _closure_section(index, cid):
    row = index.capture(cid) or {}
    status = row.get("status")
    mark = "ok" if status in ("derived", "no-derivation-needed") else "bad"
    return _kv([("capture", f"<code>{e(cid)}</code>"), ("status", f'<span class="{mark}">{e(status)}</span>'),
                ("reason", e(row.get("reason"))), ("closed at", e(row.get("finalized_at"))),
                ("records", e(", ".join(index.records_citing(cid))))])


def _via(path):
    return " → ".join(f"<code>{e(p)}</code>" for p in path or ())


def _selected(item, index, tokens):
    """A selected id (older traces) or {id, channel, score, matched, via, ...}: the item and why it came up."""
    why = dict(item) if isinstance(item, dict) else {}
    rid = why.pop("id", None) if why else item
    if isinstance(why.get("matched"), list):  # places in the trace's tokens
        why["matched"] = [tokens[i].get("term") for i in why["matched"] if isinstance(i, int) and 0 <= i < len(tokens)]
    link = _record_link(rid, index) if index.record(rid) else f"<code>{e(rid)}</code> (capture)"
    detail = ", ".join(f"{k} {e(', '.join(map(str, v)) if isinstance(v, list) else v)}" for k, v in why.items())
    return link + (f" <span class=muted>{detail}</span>" if detail else "")


def _trace_block(trace, index):
    tokens = _table(["term", "weight", "df", "idf"], [[e(t.get("term")), e(t.get("weight")), e(t.get("df")), e(t.get("idf"))]
                                                     for t in trace.get("tokens") or ()], "no tokens")
    selected = "".join(f"<li>{_selected(s, index, trace.get('tokens') or [])}</li>" for s in trace.get("selected") or ())
    held = _table(["id", "channel", "why"], [[f"<code>{e(h.get('id'))}</code>", e(h.get("channel")), e(h.get("why"))]
                                             for h in trace.get("held_back") or ()], "nothing held back")
    assoc = _table(["id", "title", "via", "spread score"],
                   [[f"<code>{e(a.get('id'))}</code>", e(a.get("title")), _via(a.get("via")), e(a.get("spread_score"))]
                    for a in trace.get("associations") or ()], "no associations")
    routes = "; ".join(f"{e(k)} ← {e(', '.join(v))}" for k, v in (trace.get("routes") or {}).items())
    times = "; ".join(f"{e(t.get('expression'))}: {e(t.get('from'))} … {e(t.get('to'))}" for t in trace.get("time") or ())
    channels = "".join(f"<li>{e(ch)}: {e(', '.join(ids[:10]))}{' …' if len(ids) > 10 else ''}</li>"
                       for ch, ids in (trace.get("channels") or {}).items() if ids)
    head = _kv([("trace", f"<code>{e(trace.get('trace_id'))}</code>"), ("at", e(trace.get("at"))),
                ("kind / mode", e(f"{trace.get('kind')} / {trace.get('mode')}")), ("query", e(trace.get("query"))),
                ("alternative phrasings", e(", ".join(trace.get("expand") or ()))), ("status", e(trace.get("status"))),
                ("found / shown", e(f"{trace.get('total')} / {trace.get('shown')}")), ("time words", times),
                ("alias routes", routes), ("seeds", e(", ".join(trace.get("seeds") or ())))])
    return (f'<div class="box trace" id="trace-{e(trace.get("trace_id"))}">{head}<h3>Tokens (with weights)</h3>{tokens}'
            f"<h3>Selected</h3>{'<ol>' + selected + '</ol>' if selected else '<p class=muted>nothing selected</p>'}"
            f"<h3>Held back</h3>{held}<h3>Associations (via paths)</h3>{assoc}"
            f"{'<h3>Channel candidates</h3><ul>' + channels + '</ul>' if channels else ''}</div>")


def _traces_by_capture(root):
    """{capture_id or "turn:" + turn_id: [trace lines]} over every trace file (reads only)."""
    out = {}
    tdir = paths.traces_dir(root)
    names = sorted(n for n in os.listdir(tdir) if n.endswith(".jsonl")) if tdir.is_dir() else []
    for name in names:
        entries, _problems, _end, _next = storage.read_jsonl(tdir / name)
        for _line, _off, obj in entries:
            if obj.get("capture_id"):
                out.setdefault(obj["capture_id"], []).append(obj)
            elif obj.get("turn_id"):  # a read turn: nothing captured, the read cites the turn
                out.setdefault("turn:" + obj["turn_id"], []).append(obj)
    for traces in out.values():
        traces.sort(key=lambda t: (t.get("at") or "", t.get("trace_id") or ""))
    return out


def render_turn(root, index, turn_id, traces, generated_at):
    receipt = index.receipt(turn_id)
    cids = index.turn_capture_ids(turn_id)
    parts = [_receipt_section(receipt)]
    parts.append('<h2 id="captures"><span class="step">2</span>Capture</h2>')
    if cids:
        parts += [_capture_section(root, index, c, receipt) for c in cids]
    elif receipt is not None and receipt.get("requires_personal_understanding"):
        parts.append('<p class="bad">The receipt requires a capture and there is none yet.</p>')
    else:
        parts.append('<p class="muted">No capture: the receipt did not call for one.</p>')
    parts.append('<h2 id="records"><span class="step">3</span>Records derived</h2>')
    parts += [_records_section(index, c) for c in cids] or ['<p class="muted">none</p>']
    parts.append('<h2 id="closure"><span class="step">4</span>Ledger closure</h2>')
    parts += [_closure_section(index, c) for c in cids] or ['<p class="muted">nothing to close</p>']
    parts.append('<h2 id="retrievals"><span class="step">5</span>Retrievals</h2>')
    if any((index.capture(c) or {}).get("status") == "forgotten" for c in cids):
        parts.append('<p class="muted">This turn\'s words were forgotten on request, and its reads with them.</p>')
    else:
        found = [t for c in cids for t in traces.get(c, ())] + list(traces.get("turn:" + turn_id, ()))
        parts += [_trace_block(t, index) for t in found] or ['<p class="muted">No read was traced for this turn.</p>']
    body = "\n".join(parts)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f"<title>Turn {e(turn_id)}: pipeline</title><style>{STYLE}</style></head><body><main>"
            f"<h1>Turn <code>{e(turn_id)}</code></h1>"
            f"<p class=\"muted\">Read-only view generated {e(generated_at)} from the archive at <code>{e(root)}</code>. "
            f"Links open the {_dashboard('overview', 'dashboard')} (python3 scripts/open_dashboard.py writes it).</p>"
            f"{body}</main></body></html>\n")


def _turns(index, turn_id, latest):
    if (turn_id is None) == (latest is None):
        raise PuError("BAD_ARGUMENT", "give exactly one of turn_id or latest",
                      "Use {arg:turn_id} for one turn, or {arg:latest} N for the most recent N turns.")
    if turn_id is not None:
        paths.check_id(turn_id, "turn id")
        if index.receipt(turn_id) is None and not index.turn_capture_ids(turn_id):
            raise PuError("TURN_NOT_FOUND", f"no receipt or capture for turn {turn_id}",
                          "Check the turn id ({cmd:preflight_context} returns it), or use {arg:latest} N.")
        return [turn_id]
    if isinstance(latest, bool) or not isinstance(latest, int) or not 1 <= latest <= MAX_LATEST:
        raise PuError("BAD_ARGUMENT", f"latest must be a whole number from 1 to {MAX_LATEST}", "For example {arg:latest=3}.")
    rows = index.db.execute("SELECT turn_id FROM receipts ORDER BY line DESC LIMIT ?", (latest,)).fetchall()
    if not rows:
        raise PuError("TURN_NOT_FOUND", "the archive has no turns yet", "Run {cmd:preflight_context} for a message first.")
    return [r[0] for r in rows]


def pipeline_view(root, turn_id=None, latest=None, now=None):
    """Write one page per turn; returns {"pages": [absolute paths]}."""
    archive.require(root)
    index = open_index(root)
    turns = _turns(index, turn_id, latest)
    traces = _traces_by_capture(root)
    stamp = timeutil.iso(now or timeutil.now())
    out_dir = paths.views_dir(root) / "pipeline"
    pages = []
    with storage.archive_lock(root, "pipeline_view"):
        from .views import make_room

        make_room(root, out_dir)
        for turn in turns:
            paths.check_id(turn, "turn id")
            target = out_dir / f"{turn}.html"
            storage.atomic_write(root, target, render_turn(root, index, turn, traces, stamp).encode("utf-8"))
            pages.append(str(target.resolve()))
    return {"pages": pages}
