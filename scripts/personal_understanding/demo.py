"""The demo: the whole turn pipeline on a short sample conversation.

Runs on a temporary archive (or --root), prints a readable account on stderr
and the proof as one JSON object on stdout.
"""

import argparse
import json
import sys
import tempfile

from . import archive, capture, followups, gate, ledger, receipts, records, validate
from .archive_index import open_index
from .dashboard import open_dashboard
from .pipeline import pipeline_view
from .retrieval.deep import deep
from .retrieval.probe import probe

CONVERSATION = [
    "我妹妹小雨下个月在杭州结婚，我有点舍不得，也在纠结要不要请一周假回去帮忙。",
    "how do I turn a python list into a set?",
    "嗯",
]


def _say(text=""):
    print(text, file=sys.stderr)


def run(root):
    archive.init_archive(root)
    proof = {"root": str(root), "turns": []}

    # Turn 1: personal. Preflight, capture, derive, finalize, gate.
    text = CONVERSATION[0]
    pre = receipts.preflight(root, text, turn_id="demo-t1", session_id="demo")
    rec = pre["receipt"]
    _say(f"turn demo-t1  user: {text}")
    _say(f"  receipt   tier={rec['tier']} signal={rec['signal']} reasons={[r['code'] for r in rec['reasons']]}")
    cap = capture.capture_text(root, text, "demo-t1")
    cid = cap["capture_id"]
    _say(f"  capture   {cid}  sha256={cap['utf8_sha256']}  verified={cap['verified']}")
    sister = records.add_record(root, kind="entity", entity_type="person", title="小雨", id="person-xiaoyu",
                                aliases=["妹妹", "我妹妹", "my sister"], domain="family-home")["id"]
    concept = records.add_record(root, kind="entity", entity_type="concept", title="离家的牵挂", id="concept-missing-family",
                                 aliases=["舍不得", "想家", "放心不下"], related_ids=[sister])["id"]
    event = records.add_record(
        root, kind="event", title="小雨在杭州结婚", summary="妹妹小雨下个月在杭州结婚。",
        capture_ids=[cid], entity_refs=[sister, concept], domain="family-home", salience=2,
        date_start="2026-12", date_precision="month", date_basis="source", felt_then="有点舍不得",
        verbatim_refs=[{"capture_id": cid, "start": 0, "end": text.index("，")}])["id"]
    decision = records.add_record(
        root, kind="decision", title="要不要请一周假回去帮忙", capture_ids=[cid], entity_refs=[sister],
        status="uncertain", subject_key="leave-for-wedding", domain="education-career")["id"]
    follow = followups.add_followup(root, "婚礼准备得怎么样了？请假的事定了吗？", cid,
                                    expectation="下个月妹妹结婚，考虑请一周假", due_rule="+7d")["id"]
    _say(f"  derived   {event} (event), {sister} (entity, aliases 妹妹/我妹妹), {concept} (concept card), "
         f"{decision} (open decision), follow-up {follow}")
    fin = ledger.finalize(root, cid, "derived")
    index = open_index(root)
    _say(f"  ledger    {cid} -> {fin['status']}: {', '.join(fin['record_ids'])}")
    _say(f"            {event} cites {', '.join(index.record(event)['capture_ids'])}")
    check = gate.session_check(root, "demo-t1")
    _say(f"  gate      may_claim_saved={check['may_claim_saved']}")
    proof["turns"].append({"turn_id": "demo-t1", "receipt": {k: rec[k] for k in ("tier", "signal", "reasons", "message_sha256")},
                           "capture": {"capture_id": cid, "utf8_sha256": cap["utf8_sha256"], "path": cap["path"]},
                           "records": fin["record_ids"] + [sister, concept], "followup": follow,
                           "ledger": {"status": fin["status"], "record_ids": fin["record_ids"],
                                      "record_to_capture": {rid: index.record(rid).get("capture_ids", []) for rid in fin["record_ids"]}},
                           "gate": {"may_claim_saved": check["may_claim_saved"], "gates": {k: v["ok"] for k, v in check["gates"].items()}}})

    # Turn 2: technical. The receipt says skip; nothing is saved and nothing may be claimed.
    text = CONVERSATION[1]
    rec = receipts.preflight(root, text, turn_id="demo-t2", session_id="demo")["receipt"]
    check = gate.session_check(root, "demo-t2")
    _say(f"turn demo-t2  user: {text}")
    _say(f"  receipt   tier={rec['tier']} signal={rec['signal']}  ->  nothing to save; gate obligations_met={check['obligations_met']}, may_claim_saved={check['may_claim_saved']}")
    proof["turns"].append({"turn_id": "demo-t2", "receipt": {"tier": rec["tier"], "signal": rec["signal"]},
                           "gate": {"obligations_met": check["obligations_met"], "may_claim_saved": check["may_claim_saved"]}})

    # Turn 3: almost no content. Fast path: capture, close with a reason.
    text = CONVERSATION[2]
    rec = receipts.preflight(root, text, turn_id="demo-t3", session_id="demo")["receipt"]
    cap = capture.capture_text(root, text, "demo-t3")
    ledger.finalize(root, cap["capture_id"], "no-derivation-needed", "acknowledgement only, nothing new to derive")
    check = gate.session_check(root, "demo-t3")
    _say(f"turn demo-t3  user: {text}")
    _say(f"  receipt   tier={rec['tier']} low_information={rec['low_information']}  capture {cap['capture_id']} closed; may_claim_saved={check['may_claim_saved']}")
    proof["turns"].append({"turn_id": "demo-t3", "receipt": {"tier": rec["tier"], "low_information": rec["low_information"]},
                           "capture": {"capture_id": cap["capture_id"], "utf8_sha256": cap["utf8_sha256"]},
                           "gate": {"may_claim_saved": check["may_claim_saved"]}})

    # Recall: a later turn asks in other words. A read turn: nothing new to save, the answer comes
    # with its evidence path.
    text = "我姐那边婚礼的事定了吗？"
    rec = receipts.preflight(root, text, turn_id="demo-t4", session_id="demo")["receipt"]
    found = probe(root, "妹妹 婚礼", maintenance=True)
    zero = probe(root, "想家了", maintenance=True)
    _say(f"turn demo-t4  user: {text}")
    _say(f"  receipt   tier={rec['tier']} signal={rec['signal']} read_turn={rec['read_turn']} "
         f"required_actions={rec['required_actions']}")
    for row in found["top"][:3]:
        why = row["why"]
        how = why.get("alias_route", {}).get("aliases") or list(why.get("matched", {})) or why.get("via")
        _say(f"  recall    {row['id']} ({row['kind']}) via {how}")
    for assoc in zero["associations"][:2]:
        _say(f"  associate 想家了 -> {assoc['id']} along {' -> '.join(assoc['via'])}")
    words = deep(root, [event], "turn")["items"][0]["verbatim"][0]
    _say(f"  words     {words['capture_id']}: {words['spans'][0]['quote']!r} (sha256 {words['utf8_sha256'][:16]}…)")
    proof["turns"].append({"turn_id": "demo-t4", "receipt": {k: rec[k] for k in ("tier", "signal", "read_turn",
                                                                                  "required_actions")}})
    proof["recall"] = {"query": "妹妹 婚礼", "trace_id": found["trace_id"],
                       "top": [{"id": r["id"], "why": r["why"]} for r in found["top"][:3]],
                       "associations_for_想家了": zero["associations"][:2], "verbatim": words}

    report = validate.validate(root)
    _say(f"validate  {report['status']} ({report['checked']['captures']} captures, {report['checked']['records']} records)")
    proof["validate"] = {"status": report["status"], "problems": report["problems"]}
    board = open_dashboard(root, no_open=True)
    pages = pipeline_view(root, latest=4)["pages"]
    _say(f"dashboard {board['page']}")
    _say(f"pipeline  {pages[0]}" + (f" (+{len(pages) - 1} more)" if len(pages) > 1 else ""))
    proof["dashboard"] = board["page"]
    proof["pipeline_pages"] = pages
    return proof


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="demo.py", description="Run the full pipeline on a sample conversation and print the proof.",
        epilog="Example:\n  python3 scripts/demo.py                 # a new temporary archive\n"
               "  python3 scripts/demo.py --root /tmp/pu   # an archive of your choice\n\n"
               "Prints the proof as one JSON object on stdout and a readable account on stderr.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", help="Archive to use (default: a new temporary folder).")
    args = parser.parse_args(argv)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(encoding="utf-8")
        except (AttributeError, ValueError):
            pass
    root = args.root or tempfile.mkdtemp(prefix="personal-understanding-demo-")
    _say(f"archive: {root}\n")
    proof = run(root)
    print(json.dumps(proof, ensure_ascii=False, indent=2))
    ok = proof["validate"]["status"] != "failed" and proof["turns"][0]["gate"]["may_claim_saved"]
    return 0 if ok else 1
