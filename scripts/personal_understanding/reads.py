"""recall: every way of reading the archive behind one call, shaped for an agent mid-chat.

mode=probe finds what a query (or a window, phase or as-of date) touches;
mode=deep returns the user's words behind ids; mode=survey is the archive map.
Every mode returns the same frame (mode, status, total, shown, truncated,
next_offset, trace_id) and cites the current turn, or says it is maintenance.
"""

from .errors import PuError
from .retrieval import probe as probing
from .retrieval.rows import said_as

MODES = ("probe", "deep", "survey")
QUERY_CHARS = 2000  # a pasted document is not a question: the probe reads its beginning
_ROW_DROP = ("fused_score", "rank", "layer", "salience", "session_id", "source_ref", "utf8_sha256")


def compact_row(row):
    """A recall row without scoring internals or empty fields; `why` keeps what matched and how."""
    out = {k: v for k, v in row.items() if k not in _ROW_DROP and v not in (None, [], {}, "")}
    why = row.get("why") or {}
    slim = {"channel": why.get("channel")}
    # The row's own words, as said (bought, retirement), not the index terms they were found by (buy, retir).
    said = said_as(" ".join(str(row.get(k) or "") for k in ("snippet", "title", "summary")), why.get("matched"))

    def as_said(term):
        return said[term][1] if term in said else term

    if why.get("matched"):
        slim["matched"] = [as_said(t) for t in sorted(why["matched"], key=lambda w: -why["matched"][w])]
    if why.get("alias_route"):
        slim["alias"] = why["alias_route"].get("aliases")
    if why.get("via"):
        slim["via"] = why["via"]
    # How a row was found when it was not by the user's own words alone: these labels stay, so an answer
    # never presents an expansion, a stand-in word or a neighbouring turn as what the user said.
    for key in _HOW_FOUND:
        if why.get(key) not in (None, [], {}, ""):
            slim[key] = why[key]
    if said and isinstance(slim.get("stands_for"), dict):
        slim["stands_for"] = {as_said(t): how for t, how in slim["stands_for"].items()}
    out["why"] = slim
    return out


_HOW_FOUND = ("expand", "stands_for", "context", "verbatim_phrase", "expression", "from", "to",
              "supports_reached", "contradicts_reached", "in_range", "whose", "asked_for", "near", "apart")


def probe_view(result):
    """The parts of a probe an agent answers from."""
    out = {"mode": "probe", "read_as": result.get("mode"), "status": result["status"], "scope": result.get("scope"),
           "top": [compact_row(r) for r in result["top"]], "total": result["total"], "shown": result["shown"],
           "truncated": result["truncated"], "next_offset": result["next_offset"], "trace_id": result["trace_id"]}
    for key in ("query", "time", "recent_first", "note", "missing"):
        if result.get(key):
            out[key] = result[key]
    if result.get("associations"):
        out["associations"] = [{k: a[k] for k in ("id", "kind", "title", "via")} for a in result["associations"]]
    return out


def probe_message(root, text, turn_id, limit, words_if_found=False, wordless=False):
    """What the archive already holds about a message (a turn read, traced; see probe's words_if_found
    and wordless)."""
    return probe_view(probing.probe(root, text[:QUERY_CHARS], turn_id=turn_id, limit=limit,
                                    words_if_found=words_if_found, wordless=wordless))


def recall(root, query=None, mode="probe", ids=None, window=None, phase=None, as_of=None, limit=10, offset=0,
           expand=None, domain=None, turn_id=None, maintenance=False):
    if mode not in MODES:
        raise PuError("BAD_ARGUMENT", f"mode must be one of {', '.join(MODES)}",
                      "probe finds what a query touches, deep reads the words behind {arg:ids}, survey maps the archive.")
    if mode == "deep":
        if not ids:
            raise PuError("BAD_ARGUMENT", "a deep read needs ids",
                          "Probe first, then pass the {arg:ids} of the rows whose words you want to read.")
        result = probing.retrieve(root, level="deep", ids=ids, turn_id=turn_id, maintenance=maintenance)
        result["mode"] = "deep"
        result["read_as"] = "maintenance" if maintenance and not turn_id else "turn"
        result.pop("level", None)
        return result
    if mode == "survey":
        from .retrieval.survey import catalog

        body = catalog(root, view="survey", query=query, offset=offset, turn_id=turn_id, maintenance=maintenance)
        body.pop("view", None)
        return dict(body, mode="survey", status="ok", read_as="maintenance" if maintenance and not turn_id else "turn")
    result = probing.probe(root, query=(query or "")[:QUERY_CHARS] or None, ids=ids, window=window, phase=phase,
                           as_of=as_of, limit=limit, offset=offset, expand=expand, domain=domain, turn_id=turn_id,
                           maintenance=maintenance)
    return probe_view(result)
